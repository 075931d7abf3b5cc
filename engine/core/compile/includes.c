/*
** includes.c -- resolving #include by the compiler's own search order (the including file's
** directory for quoted names, then each -I directory in order, then the system directory; the
** in-memory built-in headers before all of them, as NVRTC does), reading each file once, and
** rewriting each directive to the file's real path so that the compiler takes those very bytes
** from memory. Directives are found textually, active or not: a spurious dependency costs a
** cache miss, a missed one would cost a stale hit. Also the manifest text and its check.
*/
#include "includes.h"
#include "base/base.h"
#include "host_code.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define MAX_FILES 4096
#define MAX_FILE_BYTES ((size_t)64 << 20)
#define MAX_TOTAL_BYTES ((uint64_t)512 << 20)
#define RECENT_SECONDS 2 /* an mtime this fresh may still change within its tick: hash always */

typedef struct resolver {
  const cj_include_request *rq;
  cj_includes *out;
  const char **dirs; /* -I directories in order, then the system one */
  size_t ndirs;
  size_t system_at;           /* the system directory's index in dirs, ndirs when there is none */
  char system_real[PATH_MAX]; /* its real path, "" when none: files under it get no stand-in and
                               ** keep their host code (system_real: found on first need) */
  int system_real_known;
  int no_source_dir; /* -no-source-include */
  uint64_t total_bytes;
  size_t header_cap, file_cap;
  size_t *elide; /* the headers whose host code is elided (elide_headers) */
  size_t elide_count, elide_cap;
  int failed; /* out of memory */
} resolver;

/* The system directory's real path ("" when none), remembered for the last directory asked: it is
** the toolkit's, the same for every compile, and realpath costs a readlink per component (7 on a
** toolkit reached through /usr/local/cuda), which a warm cache hit would otherwise pay each time.
*/
static void realpath_of(const char *dir, char out[PATH_MAX]) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char asked[PATH_MAX], real[PATH_MAX];
  out[0] = '\0';
  if (!dir || strlen(dir) >= PATH_MAX) return;
  pthread_mutex_lock(&lock);
  if (strcmp(asked, dir) != 0) {
    if (!realpath(dir, real)) real[0] = '\0';
    snprintf(asked, sizeof asked, "%s", dir);
  }
  memcpy(out, real, PATH_MAX);
  pthread_mutex_unlock(&lock);
}

/* The resolver's system directory, real, found on first need: a source that includes nothing
** (a warm cache hit's usual case) never asks. */
static const char *system_real(resolver *r) {
  if (!r->system_real_known) realpath_of(r->rq->system_dir, r->system_real);
  r->system_real_known = 1;
  return r->system_real;
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n), d[n] = '\0';
  return d;
}

static void uncacheable(resolver *r, const char *fmt, const char *a, size_t line, const char *b) {
  if (!r->out->cacheable) return; /* the first reason is the one reported */
  r->out->cacheable = 0;
  snprintf(r->out->why, sizeof r->out->why, fmt, a, line, b);
}

/* --- the records ------------------------------------------------------------------------------ */

static int grow(void **v, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 1;
  size_t c = *cap ? 2 * *cap : 16;
  void *nv = realloc(*v, c * size);
  if (!nv) return 0;
  *v = nv, *cap = c;
  return 1;
}

static cj_include_file *add_record(resolver *r) {
  cj_includes *o = r->out;
  if (!grow((void **)&o->files, &r->file_cap, o->file_count, sizeof *o->files)) {
    r->failed = 1;
    return NULL;
  }
  cj_include_file *f = &o->files[o->file_count++];
  memset(f, 0, sizeof *f);
  return f;
}

static int add_header(resolver *r, const char *name, char *source) {
  cj_includes *o = r->out;
  size_t cap = r->header_cap;
  char *nm = dup_n(name, strlen(name));
  if (!source || !nm || !grow((void **)&o->header_names, &cap, o->header_count, sizeof(char *)) ||
      !grow((void **)&o->header_sources, &r->header_cap, o->header_count, sizeof(char *))) {
    free(nm);
    free(source);
    r->failed = 1;
    return 0;
  }
  o->header_names[o->header_count] = nm;
  o->header_sources[o->header_count++] = source;
  return 1;
}

static int header_index(const cj_includes *o, const char *name) {
  for (size_t i = 0; i < o->header_count; i++)
    if (strcmp(o->header_names[i], name) == 0) return (int)i;
  return -1;
}

/* --- probing ---------------------------------------------------------------------------------- */

/* The whole file and its stat; NULL with errno on failure. Never blocks on a FIFO. */
static char *read_file(const char *path, size_t *len, struct stat *st) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return NULL;
  char *buf = NULL;
  if (fstat(fd, st) != 0) {
    /* errno says why */
  } else if (!S_ISREG(st->st_mode) || (size_t)st->st_size > MAX_FILE_BYTES) {
    errno = S_ISREG(st->st_mode) ? EFBIG : EINVAL;
  } else if ((buf = malloc((size_t)st->st_size + 1)) != NULL) {
    size_t got = 0;
    ssize_t n;
    while (got < (size_t)st->st_size &&
           ((n = read(fd, buf + got, (size_t)st->st_size - got)) > 0 || (n < 0 && errno == EINTR)))
      if (n > 0) got += (size_t)n;
    buf[got] = '\0';
    *len = got;
  }
  close(fd);
  return buf;
}

static int safe_name(const char *s) {
  return strpbrk(s, "\"<>\\\n\r\t") == NULL;
}

/* A file found at `path`: recorded, and read into a new header the first time its real path is
** seen. Returns the header's name (its real path), or NULL when it cannot be used. */
static const char *take_file(resolver *r, const char *path, const char *where, size_t line) {
  char canon[PATH_MAX];
  if (!realpath(path, canon)) {
    uncacheable(r, "%s:%zu: cannot resolve '%s'", where, line, path);
    return NULL;
  }
  int idx = header_index(r->out, canon);
  cj_include_file *seen = NULL;
  size_t seen_at = 0;
  for (size_t i = 0; i < r->out->file_count && idx >= 0; i++)
    if (r->out->files[i].path && strcmp(r->out->files[i].canonical, canon) == 0)
      seen = &r->out->files[i], seen_at = i;
  if (idx >= 0 && !seen) return r->out->header_names[idx]; /* a built-in of that name */
  if (seen && strcmp(seen->path, path) == 0) return seen->canonical;
  size_t len = 0;
  struct stat st;
  char *bytes = seen ? NULL : read_file(path, &len, &st);
  if (!seen && !bytes) {
    if (errno == ENOMEM) r->failed = 1;
    uncacheable(r, "%s:%zu: cannot read '%s'", where, line, path);
    return NULL;
  }
  if (!seen && (memchr(bytes, '\0', len) || !safe_name(canon) || !safe_name(path))) {
    free(bytes);
    uncacheable(r, "%s:%zu: '%s' holds NUL bytes or its path has quotes, '<', '>' or '\\'", where,
                line, path);
    return NULL;
  }
  r->total_bytes += len;
  if (r->out->header_count >= MAX_FILES || r->total_bytes > MAX_TOTAL_BYTES) {
    free(bytes);
    uncacheable(r, "%s:%zu: more than %s includes", where, line, "4096 files or 512 MiB of");
    return NULL;
  }
  cj_include_file *f = add_record(r);
  if (!f || !(f->path = dup_n(path, strlen(path))) ||
      !(f->canonical = dup_n(canon, strlen(canon)))) {
    free(bytes);
    r->failed = 1;
    return NULL;
  }
  if (seen) { /* the same file by another path: recorded for the manifest, read once */
    const cj_include_file *first = &r->out->files[seen_at]; /* add_record may have moved it */
    f->size = first->size, f->mtime_sec = first->mtime_sec, f->mtime_nsec = first->mtime_nsec;
    f->device = first->device, f->inode = first->inode, f->hash = first->hash;
    return first->canonical;
  }
  f->size = (int64_t)len;
  f->hash = XXH64(bytes, len, 0);
  int fresh = time(NULL) - st.st_mtim.tv_sec < RECENT_SECONDS;
  f->mtime_sec = (int64_t)len != (int64_t)st.st_size || fresh ? -1 : (int64_t)st.st_mtim.tv_sec;
  f->mtime_nsec = st.st_mtim.tv_nsec;
  f->device = (int64_t)st.st_dev, f->inode = (int64_t)st.st_ino;
  const char *sys = system_real(r);
  size_t sn = strlen(sys);
  if (!add_header(r, canon, bytes)) return NULL;
  if (r->rq->elide_host_code && !(sn && !strncmp(canon, sys, sn) && canon[sn] == '/')) {
    if (!grow((void **)&r->elide, &r->elide_cap, r->elide_count, sizeof *r->elide)) {
      r->failed = 1;
      return NULL;
    }
    r->elide[r->elide_count++] = r->out->header_count - 1; /* once the unit is read */
  }
  return f->canonical;
}

static void record_absent(resolver *r, const char *path) {
  if (strpbrk(path, "\t\n")) {
    uncacheable(r, "%s:%zu: the include path '%s' holds a tab", "a header", 0, path);
    return;
  }
  for (size_t i = 0; i < r->out->file_count; i++)
    if (!r->out->files[i].path && strcmp(r->out->files[i].canonical, path) == 0) return;
  cj_include_file *f = add_record(r);
  if (f && !(f->canonical = dup_n(path, strlen(path)))) r->failed = 1;
}

/* dir/name is a regular file: 1. Else records it as probed absent. */
static int probe(resolver *r, const char *dir, const char *name, char *path, size_t size) {
  struct stat st;
  if (r->failed) return 0; /* out of memory: a record may be half made; the resolve fails whole */
  int n = dir ? snprintf(path, size, "%s/%s", dir, name) : snprintf(path, size, "%s", name);
  if (n < 0 || (size_t)n >= size) return 0;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
  record_absent(r, path);
  return 0;
}

/* The stand-in `prefix``spec` (kernels_src/std/), handed over as "cujit/std/<its name>" the first
** time it is reached: the name the directive is rewritten to. NULL when there is none. The
** compiler never sees a stand-in under the name the user wrote, so one can never answer an
** #include or __has_include that a file of that name should (NVRTC finds in-memory headers first).
*/
static const char *standin(resolver *r, const char *prefix, const char *spec) {
  const cj_include_request *rq = r->rq;
  size_t pl = strlen(prefix);
  for (size_t i = 0; i < rq->standin_count; i++) {
    const char *nm = rq->standin_names[i];
    if (strncmp(nm, prefix, pl) != 0 || strcmp(nm + pl, spec) != 0 ||
        (!pl && (strncmp(nm, "toolkit/", 8) == 0 || strncmp(nm, "host/", 5) == 0)))
      continue;
    char internal[PATH_MAX];
    snprintf(internal, sizeof internal, "cujit/std/%s", nm);
    int idx = header_index(r->out, internal);
    if (idx < 0) {
      if (!add_header(r, internal, dup_n(rq->standin_sources[i], strlen(rq->standin_sources[i]))))
        return NULL;
      idx = (int)r->out->header_count - 1;
    }
    return r->out->header_names[idx];
  }
  return NULL;
}

/* The name the compiler should be given for an #include of `spec`, or NULL when it is a built-in
** (unchanged) or found nowhere (left to the compiler, which will fail or use its own). Stand-ins
** come last, "toolkit/" ones just before the system directory (`standins` 1), and the "host/"
** ones (host-only headers, declaring nothing device code can use) too with `standins` 2: for an
** #include, never a __has_include. */
static const char *resolve(resolver *r, const char *spec, int quoted, int standins,
                           const char *from_dir, const char *where, size_t line) {
  char path[PATH_MAX];
  const char *s;
  if (r->failed || header_index(r->out, spec) >= 0) return NULL;
  for (size_t i = 0; i < r->rq->builtin_count; i++) /* a built-in: handed over when reached */
    if (strcmp(r->rq->builtin_names[i], spec) == 0) {
      const char *b = r->rq->builtin_sources[i];
      add_header(r, spec, dup_n(b, strlen(b)));
      return NULL;
    }
  if (spec[0] == '/')
    return probe(r, NULL, spec, path, sizeof path) ? take_file(r, path, where, line) : NULL;
  if (quoted && from_dir && probe(r, from_dir, spec, path, sizeof path))
    return take_file(r, path, where, line);
  for (size_t i = 0; i < r->ndirs; i++) {
    if (standins && i == r->system_at && (s = standin(r, "toolkit/", spec)) != NULL) return s;
    if (probe(r, r->dirs[i], spec, path, sizeof path)) return take_file(r, path, where, line);
  }
  if (!standins || r->failed) return NULL;
  if (r->system_at == r->ndirs && (s = standin(r, "toolkit/", spec)) != NULL) return s;
  if ((s = standin(r, "", spec)) != NULL) return s;
  return standins == 2 ? standin(r, "host/", spec) : NULL;
}

/* --- scanning directives ---------------------------------------------------------------------- */

/* Skips blanks, line continuations and block comments within a line. */
static const char *skip_blank(const char *p) {
  for (;;) {
    if (*p == ' ' || *p == '\t' || *p == '\f' || *p == '\v' || *p == '\r')
      p++;
    else if (p[0] == '\\' && p[1] == '\n')
      p += 2;
    else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      p = e ? e + 2 : p + strlen(p);
    } else
      return p;
  }
}

static size_t ident_len(const char *p) {
  size_t n = 0;
  while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
         (p[n] >= '0' && p[n] <= '9') || p[n] == '_')
    n++;
  return n;
}

/* At a header name ("x.h" or <x.h>): resolves it (`standins` as resolve takes it) and writes the
** directive up to its end into out, the name replaced by its real path. Returns where scanning
** goes on. */
static const char *header_name(resolver *r, const char *p, int standins, const char *from_dir,
                               const char *where, size_t line, cj_buf *out) {
  char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
  const char *end = close ? strchr(p + 1, close) : NULL;
  const char *nl = strchr(p, '\n');
  if (!close || !end || (nl && end > nl) || end == p + 1) {
    uncacheable(r, "%s:%zu: an #include whose file cujit cannot tell (a name made by a macro?)%s",
                where, line, "");
    return p;
  }
  char *spec = dup_n(p + 1, (size_t)(end - p - 1));
  if (!spec) {
    r->failed = 1;
    return p;
  }
  const char *name = resolve(r, spec, close == '"', standins, from_dir, where, line);
  free(spec);
  cj_buf_add(out, p, 1);
  if (name)
    cj_buf_add(out, name, strlen(name));
  else
    cj_buf_add(out, p + 1, (size_t)(end - p - 1));
  return end; /* the closing delimiter is copied by the caller */
}

/* The end of the logical line at p: its newline not escaped by a backslash, or its NUL. */
static const char *line_end(const char *p) {
  for (;; p++) {
    p += strcspn(p, "\n");
    if (*p != '\\' || !p[1]) return *p ? p : p + strlen(p);
    if (p[1] == '\n') p++;
  }
}

/* Copies `src` into out, resolving and rewriting every #include, #include_next and
** __has_include in it; `from_dir` is where its quoted names are looked for first. */
static void scan(resolver *r, const char *src, const char *from_dir, const char *where,
                 cj_buf *out) {
  /* The toolkit's headers (libcu++'s among them) are written for NVRTC: a standard header they
  ** name sits in a branch NVRTC skips, and a stand-in for it would only drag libcu++ into every
  ** key and manifest (cuda_fp16.h: 16 files would become 257). */
  const char *sys = system_real(r);
  size_t sl = strlen(sys);
  int std_ok = r->rq->standin_count && !(sl && strncmp(where, sys, sl) == 0 && where[sl] == '/');
  const char *p = src, *copied = src;
  const char *has = strstr(src, "__has_include"); /* the next one; searched again only past it, */
  size_t line = 1;                                /* so a text of many directives stays linear */
  while (*p && !r->failed && r->out->cacheable) {
    const char *q = skip_blank(p);
    const char *eol = line_end(q); /* q may be past a comment that spans lines */
    if (*q == '#') {
      q = skip_blank(q + 1);
      size_t n = ident_len(q);
      if ((n == 7 && strncmp(q, "include", 7) == 0) ||
          (n == 12 && strncmp(q, "include_next", 12) == 0) ||
          (n == 6 && strncmp(q, "import", 6) == 0)) {
        q = skip_blank(q + n);
        cj_buf_add(out, copied, (size_t)(q - copied));
        copied = header_name(r, q, std_ok ? 2 : 0, from_dir, where, line, out);
      } else {
        for (const char *h = q;;) {
          if (has && has < h) has = strstr(h, "__has_include");
          if (!has || has >= eol) break;
          h = has + strlen("__has_include");
          if (strncmp(h, "_next", 5) == 0) h += 5;
          const char *a = skip_blank(h);
          if (*a != '(') continue;
          a = skip_blank(a + 1);
          /* A macro that wraps it (libcu++'s _CCCL_HAS_INCLUDE(_X)): tests nothing here. */
          if (n == 6 && strncmp(q, "define", 6) == 0 && *a != '"' && *a != '<') continue;
          cj_buf_add(out, copied, (size_t)(a - copied));
          h = copied = header_name(r, a, std_ok, from_dir, where, line, out);
        }
      }
      if (copied > eol) eol = line_end(copied); /* a name that ran past: never scan back */
    }
    for (const char *c = p; c < eol; c++) line += *c == '\n';
    if (!*eol) break;
    p = eol + 1;
    line++;
  }
  cj_buf_add(out, copied, strlen(copied));
  if (out->failed) r->failed = 1;
}

/* -I/--include-path directories and --pre-include/-include names from the flags, in order. */
static void read_flags(resolver *r) {
  const cj_include_request *rq = r->rq;
  for (size_t i = 0; i < rq->flag_count; i++) {
    const char *f = rq->flags[i], *dir = NULL;
    if (strncmp(f, "--include-path=", 15) == 0)
      dir = f + 15;
    else if (strncmp(f, "-I", 2) == 0 && f[2])
      dir = f + 2;
    else if ((strcmp(f, "-I") == 0 || strcmp(f, "--include-path") == 0) && i + 1 < rq->flag_count)
      dir = rq->flags[++i];
    else if (strcmp(f, "-no-source-include") == 0 || strcmp(f, "--no-source-include") == 0)
      r->no_source_dir = 1;
    if (dir) r->dirs[r->ndirs++] = dir;
  }
  r->system_at = r->ndirs;
  if (rq->system_dir) r->dirs[r->ndirs++] = rq->system_dir;
}

/* A --pre-include is found like a quoted #include of the main file; the flag names its real path.
 */
static void pre_includes(resolver *r, const char *main_dir) {
  cj_includes *o = r->out;
  for (size_t i = 0; i < o->flag_count && !r->failed && o->cacheable; i++) {
    const char *f = o->flags[i], *spec = NULL, *prefix = "";
    if (strncmp(f, "--pre-include=", 14) == 0)
      spec = f + 14, prefix = "--pre-include=";
    else if ((strcmp(f, "--pre-include") == 0 || strcmp(f, "-include") == 0) &&
             i + 1 < o->flag_count)
      spec = o->flags[++i];
    if (!spec) continue;
    const char *name = resolve(r, spec, 1, 2, main_dir, "the option", 0);
    if (!name) continue;
    size_t n = strlen(prefix) + strlen(name) + 1;
    char *nf = malloc(n);
    if (!nf) {
      r->failed = 1;
      return;
    }
    snprintf(nf, n, "%s%s", prefix, name);
    free(o->flags[i]);
    o->flags[i] = nf;
  }
}

/* Host code elided from the user's headers (host_code.h), all together once the whole unit is
** read: a header's type that a kernel of the main file takes stays. Each text is the file as read,
** its #includes rewritten. */
static void elide_headers(resolver *r) {
  char **texts = malloc(r->elide_count * sizeof *texts);
  for (size_t i = 0; texts && i < r->elide_count; i++)
    texts[i] = r->out->header_sources[r->elide[i]];
  if (!texts || !cj_host_code_elide_unit(r->out->source, texts, r->elide_count)) r->failed = 1;
  for (size_t i = 0; texts && i < r->elide_count; i++)
    r->out->header_sources[r->elide[i]] = texts[i];
  free(texts);
}

static void make_digest(cj_includes *o) {
  XXH3_state_t *st = XXH3_createState();
  if (!st) return;
  XXH3_128bits_reset(st);
  uint64_t n = o->header_count;
  XXH3_128bits_update(st, o->source, strlen(o->source) + 1);
  XXH3_128bits_update(st, &n, sizeof n);
  for (size_t i = 0; i < o->header_count; i++) {
    XXH3_128bits_update(st, o->header_names[i], strlen(o->header_names[i]) + 1);
    XXH3_128bits_update(st, o->header_sources[i], strlen(o->header_sources[i]) + 1);
  }
  n = o->flag_count;
  XXH3_128bits_update(st, &n, sizeof n);
  for (size_t i = 0; i < o->flag_count; i++)
    XXH3_128bits_update(st, o->flags[i], strlen(o->flags[i]) + 1);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
  memcpy(o->digest, c.digest, sizeof o->digest);
  XXH3_freeState(st);
}

/* The directory of a file's name, "." when it has none. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return dup_n(".", 1);
  return dup_n(path, slash == path ? 1 : (size_t)(slash - path));
}

int cj_includes_resolve(const cj_include_request *rq, cj_includes *out) {
  memset(out, 0, sizeof *out);
  out->cacheable = 1;
  resolver r = {.rq = rq, .out = out};
  r.dirs = malloc((rq->flag_count + 1) * sizeof *r.dirs);
  out->flags = calloc(rq->flag_count + 1, sizeof *out->flags);
  char *main_dir = dir_of(rq->name ? rq->name : "");
  if (!r.dirs || !out->flags || !main_dir) r.failed = 1;
  for (size_t i = 0; !r.failed && i < rq->flag_count; i++)
    if (!(out->flags[out->flag_count++] = dup_n(rq->flags[i], strlen(rq->flags[i])))) r.failed = 1;
  if (!r.failed) read_flags(&r);
  const char *source_dir = r.no_source_dir ? NULL : main_dir;
  cj_buf main = {0};
  if (!r.failed && cj_includes_none(rq->source, NULL, 0)) /* nothing to rewrite: a copy */
    r.failed = !(main.data = dup_n(rq->source, strlen(rq->source)));
  else if (!r.failed)
    scan(&r, rq->source, source_dir, rq->name ? rq->name : "<source>", &main);
  if (!r.failed) pre_includes(&r, source_dir);
  out->source = main.data;
  /* each header in turn, the files found while scanning being appended behind */
  for (size_t i = 0; i < out->header_count && !r.failed && out->cacheable; i++) {
    int builtin = out->header_names[i][0] != '/'; /* files go by their real, absolute, path */
    char *dir = builtin ? NULL : dir_of(out->header_names[i]);
    cj_buf t = {0};
    if (builtin || dir) scan(&r, out->header_sources[i], dir, out->header_names[i], &t);
    free(dir);
    if (t.failed || (!builtin && !dir)) r.failed = 1;
    free(out->header_sources[i]);
    out->header_sources[i] = t.data ? t.data : dup_n("", 0);
    if (!out->header_sources[i]) r.failed = 1;
  }
  if (!r.failed && out->cacheable && r.elide_count) elide_headers(&r);
  free(main_dir);
  free(r.dirs);
  free(r.elide);
  if (r.failed || !out->source) {
    cj_includes_free(out);
    return 0;
  }
  make_digest(out);
  return 1;
}

int cj_includes_none(const char *source, const char *const *flags, size_t flag_count) {
  if (strstr(source, "include") || strstr(source, "import")) return 0;
  for (size_t i = 0; i < flag_count; i++) /* --pre-include, -include (read_flags, pre_includes) */
    if (strstr(flags[i], "pre-include") || strncmp(flags[i], "-include", 8) == 0) return 0;
  return 1;
}

void cj_includes_free(cj_includes *inc) {
  if (!inc) return;
  for (size_t i = 0; i < inc->header_count; i++) {
    free(inc->header_names[i]);
    free(inc->header_sources[i]);
  }
  for (size_t i = 0; i < inc->flag_count; i++) free(inc->flags[i]);
  for (size_t i = 0; i < inc->file_count; i++) {
    free(inc->files[i].path);
    free(inc->files[i].canonical);
  }
  free(inc->source);
  free(inc->header_names);
  free(inc->header_sources);
  free(inc->flags);
  free(inc->files);
  memset(inc, 0, sizeof *inc);
}

/* --- the manifest ----------------------------------------------------------------------------- */

/* Lines: "K <32 hex>", "D <working directory>" when a path is relative, then per file "F <size>
 *<mtime s> <mtime ns> <device> <inode> <16 hex>
 ** <path>\t<real path>" and per path probed absent "A <path>". Paths with a tab or newline are
 ** not cacheable. */
char *cj_includes_manifest(const cj_includes *inc, const uint8_t key[16]) {
  cj_buf t = {0};
  char line[160];
  snprintf(line, sizeof line, "K ");
  for (int i = 0; i < 16; i++) snprintf(line + 2 + 2 * i, 3, "%02x", key[i]);
  cj_buf_add(&t, line, strlen(line));
  cj_buf_add(&t, "\n", 1);
  int relative = 0;
  for (size_t i = 0; i < inc->file_count; i++)
    relative |= (inc->files[i].path ? inc->files[i].path : inc->files[i].canonical)[0] != '/';
  char cwd[PATH_MAX];
  if (relative && !getcwd(cwd, sizeof cwd)) t.failed = 1; /* cannot say where they were */
  if (relative && !t.failed) cj_buf_printf(&t, "D %s\n", cwd);
  for (size_t i = 0; i < inc->file_count; i++) {
    const cj_include_file *f = &inc->files[i];
    if (f->path)
      snprintf(line, sizeof line, "F %lld %lld %lld %lld %lld %016llx ", (long long)f->size,
               (long long)f->mtime_sec, (long long)f->mtime_nsec, (long long)f->device,
               (long long)f->inode, (unsigned long long)f->hash);
    else
      snprintf(line, sizeof line, "A ");
    cj_buf_add(&t, line, strlen(line));
    if (f->path) {
      cj_buf_add(&t, f->path, strlen(f->path));
      cj_buf_add(&t, "\t", 1);
    }
    cj_buf_add(&t, f->canonical, strlen(f->canonical));
    cj_buf_add(&t, "\n", 1);
  }
  if (t.failed) free(t.data);
  return t.failed ? NULL : t.data;
}

static int hex_value(const char *s, int digits, uint64_t *v) {
  *v = 0;
  for (int i = 0; i < digits; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return 0;
    *v = *v << 4 | (uint64_t)d;
  }
  return 1;
}

/* A decimal number and the space after it, within [*p, end); *p moves past them. */
static int number(const char **p, const char *end, long long *v) {
  const char *s = *p;
  int neg = s < end && *s == '-';
  s += neg;
  if (s >= end || *s < '0' || *s > '9') return 0;
  long long n = 0;
  for (; s < end && *s >= '0' && *s <= '9'; s++) {
    if (n > (LLONG_MAX - 9) / 10) return 0;
    n = n * 10 + (*s - '0');
  }
  if (s >= end || *s != ' ') return 0;
  *v = neg ? -n : n;
  *p = s + 1;
  return 1;
}

/* One "F" line's path names the same file still, holding what was hashed. */
static int file_unchanged(const char *path, const long long v[5], uint64_t hash) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (long long)st.st_size != v[0] ||
      (long long)st.st_dev != v[3] || (long long)st.st_ino != v[4])
    return 0;
  if (v[1] >= 0 && (long long)st.st_mtim.tv_sec == v[1] && (long long)st.st_mtim.tv_nsec == v[2])
    return 1;
  size_t len = 0;
  char *bytes = read_file(path, &len, &st);
  int same = bytes && (long long)len == v[0] && XXH64(bytes, len, 0) == hash;
  free(bytes);
  return same;
}

int cj_includes_manifest_check(const char *t, size_t len, uint8_t key[16]) {
  const char *end = t + len;
  if (len < 35 || strncmp(t, "K ", 2) != 0 || t[34] != '\n') return 0;
  for (int i = 0; i < 16; i++) {
    uint64_t v;
    if (!hex_value(t + 2 + 2 * i, 2, &v)) return 0;
    key[i] = (uint8_t)v;
  }
  char path[PATH_MAX];
  for (const char *p = t + 35; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || nl - p < 3 || p[1] != ' ') return 0;
    if (p[0] == 'D') { /* relative paths below were resolved from this directory */
      char cwd[PATH_MAX];
      if (!getcwd(cwd, sizeof cwd) || strlen(cwd) != (size_t)(nl - p - 2) ||
          memcmp(cwd, p + 2, (size_t)(nl - p - 2)) != 0)
        return 0;
    } else if (p[0] == 'A') {
      struct stat st;
      if ((size_t)(nl - p - 2) >= sizeof path) return 0;
      memcpy(path, p + 2, (size_t)(nl - p - 2));
      path[nl - p - 2] = '\0';
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return 0; /* it appeared */
    } else if (p[0] == 'F') {
      long long v[5]; /* size, mtime s, mtime ns, device, inode */
      uint64_t hash;
      const char *a = p + 2;
      for (int i = 0; i < 5; i++)
        if (!number(&a, nl, &v[i])) return 0;
      if (nl - a < 18 || !hex_value(a, 16, &hash) || a[16] != ' ') return 0;
      a += 17;
      const char *tab = memchr(a, '\t', (size_t)(nl - a));
      if (!tab || (size_t)(tab - a) >= sizeof path)
        return 0; /* the real path after it: for people */
      memcpy(path, a, (size_t)(tab - a));
      path[tab - a] = '\0';
      if (!file_unchanged(path, v, hash)) return 0;
    } else {
      return 0;
    }
    p = nl + 1;
  }
  return 1;
}

int cj_includes_manifest_empty(const char *text, size_t len) {
  return text && len == 35 && strncmp(text, "K ", 2) == 0 && text[34] == '\n'; /* "K <key>\n" */
}
