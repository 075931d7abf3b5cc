/*
** kept.c -- the files a line table names (kept.h). NVRTC writes into the line table the file
** names of the #line directives (and the program's name, made absolute from the working
** directory), so cujit makes every name one of a real file: the user's own file when the text came
** from one, else a copy kept on disk, in the cache directory beside the entries (removed with
** them by cujit_cache_clear) or, with the disk cache off, in a private directory of the engine.
** The kept copies are for people and their tools: nothing reads them back to compile.
*/
#include "kept.h"
#include "base/files.h"
#include "cache.h"
#include "cxx_pch.h"
#include "source.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory of our own: made 0700, or already there as a directory (not a link to one). */
static int own_dir(const char *path) {
  struct stat st;
  if (mkdir(path, 0700) == 0) return 1;
  return errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The root of the kept copies, made on first use: <cache dir>/sources, else a private
** directory under $TMPDIR (or /tmp) that cj_kept_close removes. */
static cujit_status kept_root(cujit_engine *engine, char *root, size_t len) {
  const char *cache = cj_cache_dir_path(engine->cache); /* before `lock`: it may warn */
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&engine->lock);
  if (!engine->kept_dir) {
    char path[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    int private_dir = !*cache;
    if (!private_dir) { /* a shared cache's sources/, made by another user, is not ours to fill */
      snprintf(path, sizeof path, "%s/sources", cache);
      private_dir = !own_dir(path) || access(path, W_OK) != 0;
    }
    if (private_dir)
      snprintf(path, sizeof path, "%s/cujit-sources-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (private_dir ? !mkdtemp(path) : !own_dir(path))
      st = cj_fail(engine, CUJIT_ERROR_IO,
                   "line info: cannot make '%s' to keep the sources the line table names (%s); "
                   "set CUJIT_CACHE_DIR or TMPDIR to a directory of your own",
                   path, errno ? strerror(errno) : "not a directory");
    else if (!(engine->kept_dir = cj_strdup(path)))
      st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    engine->kept_private = private_dir;
  }
  if (st == CUJIT_OK) snprintf(root, len, "%s", engine->kept_dir);
  int again = st == CUJIT_OK && !engine->kept_private;
  pthread_mutex_unlock(&engine->lock);
  if (again && !own_dir(root)) /* made again after cujit_cache_clear removed it */
    st = cj_fail(engine, CUJIT_ERROR_IO,
                 "line info: cannot make '%s' to keep the sources the line table names (%s)", root,
                 strerror(errno));
  return st;
}

/* dir/file holds `len` bytes of `text`, written (through cj_file_write: a temporary file renamed)
** unless it already does. */
static cujit_status keep(cujit_engine *engine, const char *dir, const char *file, const char *text,
                         size_t len) {
  char path[2 * PATH_MAX]; /* dir and a file name, whole */
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (cj_file_holds(path, text, len)) return CUJIT_OK;
  return cj_file_write(engine, "line info", path, text, len);
}

/* A file name for a #line directive and a directory entry: the last part of `name`, with the
** bytes a #line string or a file name cannot hold replaced. */
static void file_name(const char *name, char *out, size_t len) {
  const char *slash = strrchr(name, '/');
  snprintf(out, len, "%s", slash ? slash + 1 : name);
  for (char *p = out; *p; p++)
    if (*p == '"' || *p == '\\' || (unsigned char)*p < ' ') *p = '_';
  if (!*out || strcmp(out, ".") == 0 || strcmp(out, "..") == 0 || strcmp(out, "unit.cu") == 0)
    snprintf(out, len, "source.cu");
}

/* The directory for this text: root/<hash of name and text>, so that texts never share a copy
** and the same text always names the same files (the unit, and so the cache key, stays). */
static cujit_status text_dir(cujit_engine *engine, const char *source, const char *name, char *dir,
                             size_t len) {
  char root[PATH_MAX];
  cujit_status st = kept_root(engine, root, sizeof root);
  if (st != CUJIT_OK) return st;
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "cujit kept source");
  cj_key_add_str(kb, name);
  cj_key_add_str(kb, source);
  cj_cache_key key = cj_key_end(kb);
  int at = snprintf(dir, len, "%s/", root);
  for (size_t i = 0; i < sizeof key.bytes && at > 0 && (size_t)at + 3 < len; i++)
    at += snprintf(dir + at, len - (size_t)at, "%02x", key.bytes[i]);
  if (!own_dir(dir))
    return cj_fail(engine, CUJIT_ERROR_IO,
                   "line info: cannot make '%s' to keep the sources the line table names (%s)", dir,
                   strerror(errno));
  return CUJIT_OK;
}

/* The part of kernel `name` a #line file name (f, f_len bytes) names, or -1. */
static int part_of(const char *f, size_t f_len, const char *name) {
  size_t nl = strlen(name);
  for (size_t i = 0; i < cj_source_part_count; i++) {
    size_t sl = strlen(cj_source_parts[i].suffix);
    if (f_len == nl + sl && memcmp(f, name, nl) == 0 &&
        memcmp(f + nl, cj_source_parts[i].suffix, sl) == 0)
      return (int)i;
  }
  return -1;
}

/* A kernel's unit with each part's #line naming its kept copy, each copy written with the lines
** of its part. The brace cujit closes the body with is not the user's: it is named as line 2 of
** the signature's copy, which ends with it, so the body's copy is the body as given. */
static cujit_status kernel_unit(cujit_engine *engine, const char *source, const char *name,
                                const char *dir, cj_buf *out) {
  static const char mark[] = "#line 1 \"";
  const size_t ml = sizeof mark - 1;
  cujit_status st = CUJIT_OK;
  const char *p = source, *signature = NULL;
  size_t signature_len = 0;
  int closed = 0;
  while (st == CUJIT_OK && *p) {
    const char *line_end = strchr(p, '\n');
    size_t n = line_end ? (size_t)(line_end - p) + 1 : strlen(p);
    const char *close =
        n > ml + 1 && strncmp(p, mark, ml) == 0 ? memchr(p + ml, '"', n - ml) : NULL;
    int part = close ? part_of(p + ml, (size_t)(close - p - ml), name) : -1;
    if (part < 0) {
      cj_buf_add(out, p, n);
      p += n;
      continue;
    }
    char file[256], sig[256];
    snprintf(file, sizeof file, "%s%s", name, cj_source_parts[part].kept);
    snprintf(sig, sizeof sig, "%s%s", name, cj_source_parts[2].kept);
    cj_buf_printf(out, "#line 1 \"%s/%s\"\n", dir, file);
    p += n;
    const char *end = p; /* the part runs to the next #line at a line's start, or the end */
    while (*end && strncmp(end, "#line ", 6) != 0) {
      const char *e = strchr(end, '\n');
      end = e ? e + 1 : end + strlen(end);
    }
    size_t len = (size_t)(end - p);
    if (part == 2) signature = p, signature_len = len;
    int brace = part == 0 && !*end && signature_len && len >= 2 && !strcmp(end - 2, "}\n");
    cj_buf_add(out, p, len - (brace ? 2 : 0));
    if (brace) cj_buf_printf(out, "#line 2 \"%s/%s\"\n}\n", dir, sig), closed = 1;
    if (part != 2) st = keep(engine, dir, file, p, len - (brace ? 2 : 0));
    p = end;
  }
  if (st != CUJIT_OK || !signature) return st;
  cj_buf text = {0}; /* the signature's copy, written once it is known whether it ends the body */
  cj_buf_add(&text, signature, signature_len);
  if (closed) cj_buf_puts(&text, "}\n");
  char sig[256];
  snprintf(sig, sizeof sig, "%s%s", name, cj_source_parts[2].kept);
  st = text.failed ? cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory")
                   : keep(engine, dir, sig, text.data, text.len);
  cj_buf_free(&text);
  return st;
}

cujit_status cj_kept_source(cujit_engine *engine, const char *source, const char *name, int kernel,
                            char **out) {
  *out = NULL;
  cj_buf b = {0};
  char real[PATH_MAX], dir[PATH_MAX + 40], file[256];
  cujit_status st = CUJIT_OK;
  char *on_disk = NULL; /* the text is that file's when its bytes are the source's */
  if (!kernel && realpath(name, real) && !strpbrk(real, "\"\\\n") &&
      cj_file_read(NULL, real, strlen(source) + 2, &on_disk) == CUJIT_OK &&
      strcmp(on_disk, source) == 0) {
    cj_buf_printf(&b, "#line 1 \"%s\"\n%s", real, source);
  } else if ((st = text_dir(engine, source, name, dir, sizeof dir)) != CUJIT_OK) {
  } else if (kernel) {
    st = kernel_unit(engine, source, name, dir, &b);
    if (st == CUJIT_OK && !b.failed) st = keep(engine, dir, "unit.cu", b.data, b.len);
  } else {
    file_name(name, file, sizeof file);
    cj_buf_printf(&b, "#line 1 \"%s/%s\"\n%s", dir, file, source);
    st = keep(engine, dir, file, source, strlen(source));
  }
  free(on_disk);
  if (st == CUJIT_OK && (b.failed || !b.data))
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (st != CUJIT_OK) {
    cj_buf_free(&b);
    return st;
  }
  *out = b.data;
  return CUJIT_OK;
}

cujit_status cj_kept_header(cujit_engine *engine, const char *name, const char *text, char **out) {
  *out = NULL;
  if (name[0] == '/' || strstr(name, "..") || strpbrk(name, "\"\\\n")) return CUJIT_OK;
  char dir[PATH_MAX + 40], path[PATH_MAX + 300];
  cujit_status st = text_dir(engine, text, name, dir, sizeof dir);
  if (st != CUJIT_OK) return st;
  /* the header's own directories under the hash: "cujit/random.h" is <hash>/cujit/random.h */
  snprintf(path, sizeof path, "%s/%s", dir, name);
  for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    int made = own_dir(path);
    *slash = '/';
    if (!made)
      return cj_fail(engine, CUJIT_ERROR_IO, "line info: cannot make the directories of '%s' (%s)",
                     path, strerror(errno));
  }
  if ((st = keep(engine, dir, name, text, strlen(text))) != CUJIT_OK) return st;
  cj_buf b = {0};
  cj_buf_printf(&b, "#line 1 \"%s\"\n", path);
  cj_buf_puts(&b, text);
  if (b.failed) {
    cj_buf_free(&b);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  *out = b.data;
  return CUJIT_OK;
}

cujit_status cj_kept_headers(cujit_engine *engine, const cj_includes *inc, int line_info,
                             char ***out) {
  *out = NULL;
  if (!line_info || !inc->header_count) return CUJIT_OK;
  char **texts = calloc(inc->header_count, sizeof *texts);
  if (!texts) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  cujit_status st = CUJIT_OK;
  for (size_t i = 0; i < inc->header_count && st == CUJIT_OK; i++) {
    st = cj_kept_header(engine, inc->header_names[i], inc->header_sources[i], &texts[i]);
    if (!texts[i]) texts[i] = inc->header_sources[i];
  }
  if (st != CUJIT_OK) {
    for (size_t i = 0; i < inc->header_count; i++)
      if (texts[i] && texts[i] != inc->header_sources[i]) free(texts[i]);
    free(texts);
    return st;
  }
  *out = texts;
  return CUJIT_OK;
}

void cj_kept_close(cujit_engine *engine) {
  if (engine->kept_dir && engine->kept_private) cj_remove_tree(engine->kept_dir);
  free(engine->kept_dir);
  engine->kept_dir = NULL;
}

cujit_status cujit_cache_clear(cujit_engine *engine) {
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_status st = cj_cache_clear(engine->cache);
  const char *cache = cj_cache_dir_path(engine->cache); /* the kept copies go with the entries */
  char path[PATH_MAX];
  if (st == CUJIT_OK && *cache && snprintf(path, sizeof path, "%s/sources", cache) < PATH_MAX)
    cj_remove_tree(path);
  if (st == CUJIT_OK) cj_cxx_pch_clear(cache); /* and the CPU device's precompiled preludes */
  return st;
}
