/*
** compile.c -- from a translation unit to a compiled program: the target arch, NVRTC's option
** list, the cache key over everything that reaches the compiler, the cache lookup (a hit never
** opens NVRTC) and the NVRTC compile itself. Loading and the public cujit_program_* functions
** are the program layer's (program.c).
*/
#include "compile.h"
#include "cxx.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_INCLUDE_FILES 4096
#define MAX_INCLUDE_BYTES ((uint64_t)64 << 20)
#define MAX_INCLUDE_DEPTH 16

/* --- the arch --------------------------------------------------------------------------------- */

/* "sm_90", "sm_90a", "sm_100f", "compute_90": the number, and whether it gives a CUBIN. */
static int parse_arch(const char *arch, int *number, int *cubin) {
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0)
    p = arch + 3, *cubin = 1;
  else if (strncmp(arch, "compute_", 8) == 0)
    p = arch + 8, *cubin = 0;
  else
    return 0;
  if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1])) return 0;
  char *end;
  long n = strtol(p, &end, 10);
  if (n < 10 || n > 999 || (*end && !((*end == 'a' || *end == 'f') && end[1] == '\0'))) return 0;
  *number = (int)n;
  return 1;
}

static void supported_list(cj_nvrtc *nv, char *buf, size_t len) {
  int n = 0, archs[256];
  buf[0] = '\0';
  if (nv->nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256 ||
      nv->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
    return;
  size_t used = 0;
  for (int i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%ssm_%d", i ? ", " : "", archs[i]);
}

static int arch_supported(cj_nvrtc *nv, int number) {
  int n = 0, archs[256];
  if (nv->nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256 ||
      nv->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
    return 1; /* cannot tell: let NVRTC judge */
  for (int i = 0; i < n; i++)
    if (archs[i] == number) return 1;
  return 0;
}

/* With NVRTC open: refuses an explicit arch it lacks, caps the device's at its highest. */
static cujit_status fit_arch(cujit_engine *engine, cj_nvrtc *nv, int explicit_arch, char *arch,
                             size_t len) {
  int number, cubin;
  if (!parse_arch(arch, &number, &cubin)) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (arch_supported(nv, number)) return CUJIT_OK;
  if (!explicit_arch && nv->max_arch > 0 && number > nv->max_arch) {
    snprintf(arch, len, "sm_%d", nv->max_arch);
    return CUJIT_OK;
  }
  char list[1024];
  supported_list(nv, list, sizeof list);
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "arch '%s' is not supported by NVRTC %d.%d (%s); it supports: %s", arch,
                 nv->version / 1000, nv->version % 1000 / 10, nv->path, list);
}

cujit_status cj_compile_arch(cujit_engine *engine, const cujit_compile_options *options,
                             const char *device_arch, char *arch, size_t len) {
  if (!engine || !arch || len < 16)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "no room for the arch");
  arch[0] = '\0';
  int number, cubin;
  if (options && options->arch && strcmp(options->arch, "cpu") != 0) {
    if (!parse_arch(options->arch, &number, &cubin))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "arch '%s' is not an arch: write sm_NN (such as sm_90) for a CUBIN and PTX, "
                     "compute_NN for PTX only, or cpu for the CPU device",
                     options->arch);
    snprintf(arch, len, "%s", options->arch);
  } else {
    snprintf(arch, len, "%s",
             options && options->arch ? options->arch
             : device_arch            ? device_arch
                                      : "");
  }
  cj_nvrtc *nv = cj_nvrtc_if_open(engine);
  if (nv && strcmp(arch, "cpu") != 0)
    return fit_arch(engine, nv, options && options->arch, arch, len);
  return CUJIT_OK;
}

/* --- options ---------------------------------------------------------------------------------- */

typedef struct opt_list {
  char **v;
  size_t n, cap;
  int failed;
} opt_list;

static void opt_add(opt_list *o, const char *fmt, const char *a, const char *b) {
  if (o->failed) return;
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 16;
    char **nv = realloc(o->v, cap * sizeof *nv);
    if (!nv) {
      o->failed = 1;
      return;
    }
    o->v = nv, o->cap = cap;
  }
  size_t need = strlen(fmt) + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 1;
  char *s = malloc(need);
  if (!s) {
    o->failed = 1;
    return;
  }
  snprintf(s, need, fmt, a ? a : "", b ? b : "");
  o->v[o->n++] = s;
}

static void opt_free(opt_list *o) {
  for (size_t i = 0; i < o->n; i++) free(o->v[i]);
  free(o->v);
  memset(o, 0, sizeof *o);
}

static int valid_define(const char *d) {
  if (!d || !(isalpha((unsigned char)*d) || *d == '_')) return 0;
  while (*d && *d != '=')
    if (!(isalnum((unsigned char)*d) || *d == '_'))
      return 0;
    else
      d++;
  return 1;
}

static int valid_std(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '+')) return 0;
  return 1;
}

/* Checks the options and writes the list NVRTC gets (the toolkit include path comes later: it
** depends on the machine, not on the program). */
static cujit_status build_options(cujit_engine *engine, const cujit_compile_options *op,
                                  const char *arch, opt_list *o) {
  opt_add(o, "-arch=%s%s", arch, NULL);
  const char *std = op && op->std ? op->std : "c++17";
  if (!valid_std(std))
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "std '%s' is not a language standard: write c++17, c++20, ...", std);
  opt_add(o, "-std=%s%s", std, NULL);
  if (op && op->fast_math) opt_add(o, "--use_fast_math%s%s", NULL, NULL);
  if (op && op->line_info) opt_add(o, "-lineinfo%s%s", NULL, NULL);
  if (op && op->debug) opt_add(o, "-G%s%s", NULL, NULL);
  if (op && op->define_count && !op->defines)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "define_count is %zu but defines is NULL",
                   op->define_count);
  for (size_t i = 0; op && i < op->define_count; i++) {
    if (!valid_define(op->defines[i]))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "define %zu ('%s') is not NAME or NAME=VALUE with NAME a C identifier", i,
                     op->defines[i] ? op->defines[i] : "(NULL)");
    opt_add(o, "-D%s%s", op->defines[i], NULL);
  }
  if (op && op->include_dir_count && !op->include_dirs)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "include_dir_count is %zu but include_dirs is NULL", op->include_dir_count);
  for (size_t i = 0; op && i < op->include_dir_count; i++) {
    const char *dir = op->include_dirs[i];
    struct stat st;
    if (!dir || !*dir)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "include dir %zu is NULL or empty", i);
    if (stat(dir, &st) != 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "include dir '%s' cannot be used: %s",
                     dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "include dir '%s' is not a directory",
                     dir);
    opt_add(o, "--include-path=%s%s", dir, NULL);
  }
  if (op && op->extra_flag_count && !op->extra_flags)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "extra_flag_count is %zu but extra_flags is NULL", op->extra_flag_count);
  for (size_t i = 0; op && i < op->extra_flag_count; i++) {
    if (!op->extra_flags[i] || !*op->extra_flags[i])
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "extra flag %zu is NULL or empty", i);
    opt_add(o, "%s%s", op->extra_flags[i], NULL);
  }
  if (o->failed) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  return CUJIT_OK;
}

/* --- the key ---------------------------------------------------------------------------------- */

typedef struct file_list {
  char **paths;
  size_t n, cap;
  uint64_t bytes;
  int over; /* past the bounds: hash sizes and mtimes instead of contents */
} file_list;

static void list_files(file_list *fl, const char *dir, int depth) {
  if (depth > MAX_INCLUDE_DEPTH) return;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
    struct stat lst, st;
    if (lstat(path, &lst) != 0) continue;
    if (S_ISDIR(lst.st_mode)) { /* real directories only: a symlink loop cannot trap us */
      list_files(fl, path, depth + 1);
      continue;
    }
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (fl->n == fl->cap) {
      size_t cap = fl->cap ? 2 * fl->cap : 64;
      char **np = realloc(fl->paths, cap * sizeof *np);
      if (!np) break;
      fl->paths = np, fl->cap = cap;
    }
    if (!(fl->paths[fl->n] = cj_strdup(path))) break;
    fl->n++;
    fl->bytes += (uint64_t)st.st_size;
    if (fl->n > MAX_INCLUDE_FILES || fl->bytes > MAX_INCLUDE_BYTES) fl->over = 1;
  }
  closedir(d);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void hash_file(cj_key_builder *kb, const char *path, int contents) {
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (!contents) {
    int64_t meta[3] = {(int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec,
                       (int64_t)st.st_mtim.tv_nsec};
    cj_key_add(kb, meta, sizeof meta);
    return;
  }
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char *buf = malloc((size_t)st.st_size + 1);
  size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
  fclose(f);
  cj_key_add(kb, buf ? buf : "", n);
  free(buf);
}

/* Every file a user include dir holds, since any of them may be #included. */
static void hash_include_dir(cujit_engine *engine, cj_key_builder *kb, const char *dir) {
  file_list fl = {0};
  list_files(&fl, dir, 0);
  qsort(fl.paths, fl.n, sizeof *fl.paths, by_name);
  if (fl.over)
    cj_warn(engine,
            "include dir '%s' holds more than %d files or %d MiB; the cache key uses their sizes "
            "and times instead of their contents. Point include_dirs at a smaller directory",
            dir, MAX_INCLUDE_FILES, (int)(MAX_INCLUDE_BYTES >> 20));
  cj_key_add(kb, &fl.n, sizeof fl.n);
  for (size_t i = 0; i < fl.n; i++) {
    cj_key_add_str(kb, fl.paths[i] + strlen(dir));
    hash_file(kb, fl.paths[i], !fl.over);
    free(fl.paths[i]);
  }
  free(fl.paths);
}

static cujit_status make_key(cujit_engine *engine, const char *source, const char *name,
                             const cujit_compile_options *op, const char *arch, const opt_list *o,
                             const char *compiler, cj_cache_key *key) {
  cj_key_builder *kb = cj_key_begin();
  if (!kb) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  uint32_t schema = CJ_CACHE_SCHEMA;
  int number, cubin = 0;
  parse_arch(arch, &number, &cubin);
  cj_key_add_str(kb, "cujit program");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add_str(kb, source);
  cj_key_add_str(kb, name);
  cj_key_add_str(kb, arch);
  cj_key_add_str(kb, cubin ? "ptx+cubin" : "ptx");
  cj_key_add(kb, &o->n, sizeof o->n);
  for (size_t i = 0; i < o->n; i++) cj_key_add_str(kb, o->v[i]);
  cj_key_add_str(kb, cj_embedded_headers_hash);
  if (compiler) cj_key_add_str(kb, compiler); /* the host C++ compiler's identity (cxx.h) */
  for (size_t i = 0; op && i < op->include_dir_count; i++)
    hash_include_dir(engine, kb, op->include_dirs[i]);
  *key = cj_key_end(kb);
  return CUJIT_OK;
}

/* --- NVRTC ------------------------------------------------------------------------------------ */

/* The toolkit's headers (cuda_fp16.h, ...), which NVRTC 13 does not carry inside itself. Written
** into the caller's `found` (PATH_MAX bytes): compiles run on many threads at once. */
static const char *toolkit_include(char *found) {
  static const char *const envs[] = {"CUDA_HOME", "CUDA_PATH"};
  struct stat st;
  for (size_t i = 0; i < 2; i++) {
    const char *v = getenv(envs[i]);
    if (v && *v && snprintf(found, PATH_MAX, "%s/include/cuda_fp16.h", v) < PATH_MAX &&
        stat(found, &st) == 0) {
      found[strlen(found) - strlen("/cuda_fp16.h")] = '\0';
      return found;
    }
  }
  if (stat("/usr/local/cuda/include/cuda_fp16.h", &st) == 0) return "/usr/local/cuda/include";
  return NULL;
}

static cujit_status nvrtc_status(cujit_engine *engine, cj_nvrtc *nv, nvrtcResult r,
                                 const char *what) {
  return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC failed in %s: %s", what,
                 nv->nvrtcGetErrorString(r));
}

static cujit_status get_outputs(cujit_engine *engine, cj_nvrtc *nv, nvrtcProgram prog, int cubin,
                                cj_cache_entry *e) {
  size_t n = 0;
  nvrtcResult r = nv->nvrtcGetPTXSize(prog, &n);
  if (r != NVRTC_SUCCESS) return nvrtc_status(engine, nv, r, "nvrtcGetPTXSize");
  if (!(e->ptx = malloc(n + 1)))
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if ((r = nv->nvrtcGetPTX(prog, e->ptx)) != NVRTC_SUCCESS)
    return nvrtc_status(engine, nv, r, "nvrtcGetPTX");
  e->ptx[n] = '\0';
  e->ptx_len = strlen(e->ptx);
  if (!cubin) return CUJIT_OK;
  if ((r = nv->nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS)
    return nvrtc_status(engine, nv, r, "nvrtcGetCUBINSize");
  if (n == 0) return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC made an empty CUBIN");
  if (!(e->cubin = malloc(n)))
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if ((r = nv->nvrtcGetCUBIN(prog, e->cubin)) != NVRTC_SUCCESS)
    return nvrtc_status(engine, nv, r, "nvrtcGetCUBIN");
  e->cubin_len = n;
  return CUJIT_OK;
}

static cujit_status run_nvrtc(cujit_engine *engine, cj_nvrtc *nv, const char *source,
                              const char *name, const char *arch, opt_list *o, cj_cache_entry *e) {
  int number, cubin;
  parse_arch(arch, &number, &cubin);
  char found[PATH_MAX];
  const char *tk = toolkit_include(found);
  if (tk) opt_add(o, "--include-path=%s%s", tk, NULL);
  if (o->failed) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  nvrtcProgram prog;
  nvrtcResult r = nv->nvrtcCreateProgram(&prog, source, name, (int)cj_embedded_header_count,
                                         cj_embedded_header_sources, cj_embedded_header_names);
  if (r != NVRTC_SUCCESS) return nvrtc_status(engine, nv, r, "nvrtcCreateProgram");
  nvrtcResult cr = nv->nvrtcCompileProgram(prog, (int)o->n, (const char *const *)o->v);
  size_t log_len = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &log_len) != NVRTC_SUCCESS) log_len = 0;
  e->log = calloc(log_len + 1, 1);
  if (e->log && log_len) nv->nvrtcGetProgramLog(prog, e->log);
  cujit_status st = CUJIT_OK;
  if (!e->log) {
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  } else if (cr == NVRTC_ERROR_COMPILATION) {
    char *msg = cj_compile_error_message(name, source, e->log);
    st = cj_fail(engine, CUJIT_ERROR_COMPILE, "%s", msg ? msg : e->log);
    free(msg);
  } else if (cr == NVRTC_ERROR_INVALID_OPTION) {
    cj_buf b = {0};
    for (size_t i = 0; i < o->n; i++) cj_buf_printf(&b, " %s", o->v[i]);
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "NVRTC refused an option compiling '%s'; check extra_flags, std and arch. The "
                 "options were:%s\n\n%s",
                 name, b.data ? b.data : "", e->log);
    cj_buf_free(&b);
  } else if (cr != NVRTC_SUCCESS) {
    st = cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC failed compiling '%s': %s\n\n%s", name,
                 nv->nvrtcGetErrorString(cr), e->log);
  } else {
    st = get_outputs(engine, nv, prog, cubin, e);
  }
  nv->nvrtcDestroyProgram(&prog);
  e->nvrtc_version = nv->version;
  return st;
}

/* --- compiling -------------------------------------------------------------------------------- */

/* An entry from the cache, unless NVRTC is open and of another version than the one that built
** it (then the entry is stale and is rebuilt). */
static int lookup(cujit_engine *engine, const cj_cache_key *key, cj_cache_entry *e) {
  if (!cj_cache_get(engine->cache, key, e)) return 0;
  cj_nvrtc *nv = cj_nvrtc_if_open(engine);
  if (nv && e->nvrtc_version != nv->version) {
    cj_cache_entry_free(e);
    return 0;
  }
  return 1;
}

/* The CPU device's arch "cpu": the host C++ compiler (cxx.h) through the same options, key and
** cache, the compiler's identity joining the key; the shared object goes in entry.cubin. The
** entry carries no NVRTC version, so none is checked. */
static cujit_status compile_cpu(cujit_engine *engine, const char *source, const char *name,
                                const cujit_compile_options *options, cj_compiled *out) {
  const char *identity;
  opt_list o = {0};
  cj_cache_entry *e = &out->entry;
  int hit = 0;
  cujit_status st = cj_cxx_identity(engine, cj_cxx_check(), &identity);
  if (st == CUJIT_OK) st = build_options(engine, options, "cpu", &o);
  if (st == CUJIT_OK) st = make_key(engine, source, name, options, "cpu", &o, identity, &out->key);
  opt_free(&o);
  if (st == CUJIT_OK) hit = cj_cache_get(engine->cache, &out->key, e);
  if (st == CUJIT_OK && !hit) {
    cj_signature *kernels = NULL;
    size_t n = 0;
    char err[1024];
    st = cj_signature_scan(source, &kernels, &n, err, sizeof err);
    if (st != CUJIT_OK)
      cj_fail(engine, st, "'%s': %s", name, err);
    else
      st = cj_cxx_compile(engine, source, name, options, kernels, n, e);
    for (size_t i = 0; i < n; i++) cj_signature_free(&kernels[i]);
    free(kernels);
    if (st == CUJIT_OK) cj_cache_put(engine->cache, &out->key, e);
  }
  if (st != CUJIT_OK) {
    cj_cache_entry_free(e);
    return st;
  }
  out->from_cache = hit;
  snprintf(out->arch, sizeof out->arch, "cpu");
  return CUJIT_OK;
}

cujit_status cj_compile(cujit_engine *engine, const char *source, const char *name,
                        const cujit_compile_options *options, const char *target,
                        cj_compiled *out) {
  memset(out, 0, sizeof *out);
  /* THE COMPILER DISPATCH POINT: the arch names the compiler. */
  if (strcmp(target, "cpu") == 0) return compile_cpu(engine, source, name, options, out);
  char arch[32];
  snprintf(arch, sizeof arch, "%s", target);
  cujit_status st = CUJIT_OK;
  opt_list o = {0};
  cj_cache_key key;
  cj_cache_entry *e = &out->entry;
  int hit = 0;
  st = build_options(engine, options, arch, &o);
  if (st == CUJIT_OK) st = make_key(engine, source, name, options, arch, &o, NULL, &key);
  if (st == CUJIT_OK) hit = lookup(engine, &key, e);
  if (st == CUJIT_OK && !hit) {
    cj_nvrtc *nv;
    char fitted[32];
    snprintf(fitted, sizeof fitted, "%s", arch);
    st = cj_need_nvrtc(engine, &nv);
    if (st == CUJIT_OK) st = fit_arch(engine, nv, options && options->arch, fitted, sizeof fitted);
    if (st == CUJIT_OK && strcmp(fitted, arch) != 0) { /* capped: another key */
      snprintf(arch, sizeof arch, "%s", fitted);
      opt_free(&o);
      st = build_options(engine, options, arch, &o);
      if (st == CUJIT_OK) st = make_key(engine, source, name, options, arch, &o, NULL, &key);
      if (st == CUJIT_OK) hit = lookup(engine, &key, e);
    }
    if (st == CUJIT_OK && !hit) {
      st = run_nvrtc(engine, nv, source, name, arch, &o, e);
      if (st == CUJIT_OK) cj_cache_put(engine->cache, &key, e);
    }
  }
  opt_free(&o);
  if (st != CUJIT_OK) {
    cj_cache_entry_free(e);
    return st;
  }
  out->key = key;
  out->from_cache = hit;
  snprintf(out->arch, sizeof out->arch, "%.15s", arch);
  return CUJIT_OK;
}
