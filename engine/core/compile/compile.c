/*
** compile.c -- from a translation unit to a compiled program: the cache key over everything that
** reaches the compiler (NVRTC's option list, made by the option table: options.h), the cache
** lookup (a hit never opens NVRTC) and the NVRTC compile itself; the target arch is read in
** arch.c. Loading and the public cujit_program_* functions are the program layer's (program.c).
*/
#include "compile.h"
#include "host_code.h"
#include "includes.h"
#include "kept.h"
#include "link.h"
#include "cxx.h"
#include "options.h"
#include "pch.h"
#include "remote.h"
#include "verify.h"
#include "scan.h"
#include "base/env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the key ---------------------------------------------------------------------------------- */

/* -default-device makes functions without an execution space device code: no host code to elide
** (host_code.h). */
static int default_device(const cj_option_list *o) {
  for (size_t i = 0; i < o->n; i++)
    if (strstr(o->v[i], "default-device")) return 1;
  return 0;
}

/* Whether NVRTC's list asks for line info (-lineinfo, or -G which has it too). Then the headers
** it is given in memory are named by kept copies (cj_kept_headers), which the keys say: entries of
** cujit versions that named them otherwise are not taken. */
static int line_info_in(const cj_option_list *o) {
  return cj_option_list_has(o, "-lineinfo") || cj_option_list_has(o, "-G");
}

/* The source key: what the caller gave, before any header is read. It names the include
** manifest, which holds the full key (and the working directory when it resolved a relative
** name such as "k.cu" or "-I inc": checked only then, so most hits make no getcwd). */
static cj_cache_key source_key(const char *source, const char *name, const char *arch,
                               const cj_option_list *o, const char *toolkit) {
  cj_key_builder *kb = cj_key_begin();
  uint32_t schema = CJ_CACHE_SCHEMA;
  cj_key_add_str(kb, "cujit manifest");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add_str(kb, source);
  cj_key_add_str(kb, name);
  cj_key_add_str(kb, arch);
  cj_key_add(kb, &o->n, sizeof o->n);
  for (size_t i = 0; i < o->n; i++) cj_key_add_str(kb, o->v[i]);
  cj_key_add_str(kb, cj_embedded_headers_hash);
  cj_key_add_str(kb, toolkit);
  cj_key_add_str(kb, CJ_HOST_CODE_RULES); /* a header's manifest stands for its elided text */
  if (line_info_in(o)) cj_key_add_str(kb, "headers named by kept copies");
  return cj_key_end(kb); /* all zero when out of memory: a key nothing is stored under twice */
}

/* The full key: exactly what NVRTC is given (the rewritten source, every header's bytes). */
static cj_cache_key full_key(const cj_includes *inc, const char *name, const char *arch,
                             const cj_option_list *o) {
  cj_key_builder *kb = cj_key_begin();
  uint32_t schema = CJ_CACHE_SCHEMA;
  int number, cubin = 0;
  cj_parse_arch(arch, &number, &cubin);
  cj_key_add_str(kb, "cujit program");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add(kb, inc->digest, sizeof inc->digest);
  cj_key_add_str(kb, name);
  cj_key_add_str(kb, arch);
  cj_key_add_str(kb, cubin ? "ptx+cubin" : "ptx");
  cj_key_add(kb, &o->n, sizeof o->n);
  for (size_t i = 0; i < o->n; i++) cj_key_add_str(kb, o->v[i]);
  if (line_info_in(o)) cj_key_add_str(kb, "headers named by kept copies");
  return cj_key_end(kb);
}

/* --- NVRTC ------------------------------------------------------------------------------------ */

/* The toolkit's include directory (cuda_fp16.h, ...), which NVRTC 13 does not carry inside itself,
** and its cccl directory (below). Found once per process: every compile and every cache hit needs
** them, and three stat calls were most of what defining an already-defined kernel cost. The
** toolkit does not move while a process runs; CUDA_HOME/CUDA_PATH are read at the first compile. */
static char toolkit_dir[PATH_MAX], toolkit_cccl[PATH_MAX + 8];
static pthread_once_t toolkit_once = PTHREAD_ONCE_INIT;

static void find_toolkit(void) {
  static const char *const envs[] = {"CUDA_HOME", "CUDA_PATH"};
  char found[PATH_MAX];
  struct stat st;
  for (size_t i = 0; i < 2 && !toolkit_dir[0]; i++) {
    const char *v = getenv(envs[i]);
    if (v && *v && snprintf(found, PATH_MAX, "%s/include/cuda_fp16.h", v) < PATH_MAX &&
        stat(found, &st) == 0)
      snprintf(toolkit_dir, sizeof toolkit_dir, "%s/include", v);
  }
  if (!toolkit_dir[0] && stat("/usr/local/cuda/include/cuda_fp16.h", &st) == 0)
    strcpy(toolkit_dir, "/usr/local/cuda/include");
  /* CUDA 13 keeps libcu++ (<cuda/std/...>, which <cooperative_groups.h> and <curand_kernel.h>
  ** include) under the toolkit's include/cccl, as nvcc's own -I does. */
  if (toolkit_dir[0] &&
      snprintf(toolkit_cccl, sizeof toolkit_cccl, "%s/cccl", toolkit_dir) <
          (int)sizeof toolkit_cccl &&
      !(stat(toolkit_cccl, &st) == 0 && S_ISDIR(st.st_mode)))
    toolkit_cccl[0] = '\0';
}

static const char *toolkit_include(void) {
  pthread_once(&toolkit_once, find_toolkit);
  return toolkit_dir[0] ? toolkit_dir : NULL;
}

/* The cccl directory, searched before the toolkit's include directory. Part of the options, so
** of the key. */
static void add_cccl(cj_option_list *o) {
  pthread_once(&toolkit_once, find_toolkit);
  if (toolkit_cccl[0]) cj_option_list_add(o, "--include-path=", toolkit_cccl);
}

static cujit_status nvrtc_status(cujit_engine *engine, cj_nvrtc *nv, nvrtcResult r,
                                 const char *what) {
  return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC failed in %s: %s", what,
                 nv->nvrtcGetErrorString(r));
}

/* A compile of this much text (the source and its headers in memory; <cooperative_groups.h>
** brings about 600 KiB) takes NVRTC's front end a good part of a second: enough to wait for a
** worker process to start (remote.h), which a small program is not. */
#define HEAVY_BYTES ((size_t)256 << 10)

static size_t text_bytes(const cj_nvrtc_job *job) {
  size_t n = strlen(job->source);
  for (int i = 0; i < job->header_count; i++) n += strlen(job->header_sources[i]);
  return n;
}

/* The status for a step of a job that failed (nvrtc_job.h). */
static cujit_status step_status(cujit_engine *engine, cj_nvrtc *nv, const cj_nvrtc_step *failed) {
  if (!strcmp(failed->call, "malloc"))
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (!strcmp(failed->call, "empty CUBIN"))
    return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC made an empty CUBIN");
  return nvrtc_status(engine, nv, failed->result, failed->call);
}

/* The status for nvrtcCompileProgram's result, with the log in the message. */
static cujit_status compile_status(cujit_engine *engine, cj_nvrtc *nv, nvrtcResult cr,
                                   const char *name, const char *source, const cj_option_list *o,
                                   const char *log) {
  if (cr == NVRTC_ERROR_COMPILATION) {
    char *msg = cj_compile_error_message(name, source, log);
    cujit_status st = cj_fail(engine, CUJIT_ERROR_COMPILE, "%s", msg ? msg : log);
    free(msg);
    return st;
  }
  if (cr == NVRTC_ERROR_INVALID_OPTION) {
    cj_buf b = {0};
    for (size_t i = 0; i < o->n; i++) cj_buf_printf(&b, " %s", o->v[i]);
    cujit_status st =
        cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                "NVRTC refused an option compiling '%s'; check extra_flags, std and arch. The "
                "options were:%s\n\n%s",
                name, b.data ? b.data : "", log);
    cj_buf_free(&b);
    return st;
  }
  return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC failed compiling '%s': %s\n\n%s", name,
                 nv->nvrtcGetErrorString(cr), log);
}

/* Compiles `inc` when its includes were resolved (NVRTC then reads no file: every header is
** given in memory), else the source as it is, NVRTC finding its headers itself. While another
** compile runs in this process's NVRTC, which runs one at a time, in a worker process
** (remote.h) when one can be had: the same job, the same bytes. */
static cujit_status run_nvrtc(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc,
                              const cj_scan *scan, const char *name, const char *arch,
                              cj_option_list *o, cj_cache_entry *e) {
  const char *source = scan->text;
  int number, cubin;
  cj_parse_arch(arch, &number, &cubin);
  for (size_t i = 0; inc->cacheable && i < o->n && i < inc->flag_count; i++)
    if (strcmp(o->v[i], inc->flags[i]) != 0) { /* inc was resolved from o: a --pre-include */
      free(o->v[i]);
      if (!(o->v[i] = cj_strdup(inc->flags[i]))) o->failed = 1;
    }
  const char *tk = toolkit_include();
  if (tk) cj_option_list_add(o, "--include-path=", tk);
  if (nv->version >= CJ_NO_CACHE_VERSION &&
      cj_options_ptxas_verbose((const char *const *)o->v, o->n) &&
      !cj_option_list_has(o, "--no-cache")) /* ptxas's report asked: none from NVRTC's cache */
    cj_option_list_add(o, "--no-cache", NULL);
  if (o->failed) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char **lined = NULL; /* with line info, the in-memory headers named by their kept copies */
  cujit_status st =
      inc->cacheable ? cj_kept_headers(engine, inc, line_info_in(o), &lined) : CUJIT_OK;
  if (st != CUJIT_OK) return st;
  cj_buf exprs = {0}; /* "&NAME\0" of each C++-linkage kernel */
  for (size_t i = 0; i < scan->count; i++)
    if (scan->kernels[i].cxx) {
      cj_buf_printf(&exprs, "&%s", scan->kernels[i].sig.name);
      cj_buf_add(&exprs, "", 1);
    }
  /* messages quote `source`, the user's text; NVRTC gets the resolved one */
  cj_nvrtc_job job = {
      .source = inc->cacheable ? inc->source : source,
      .name = name,
      .header_count = inc->cacheable ? (int)inc->header_count : (int)cj_embedded_header_count,
      .header_sources = inc->cacheable ? (const char *const *)(lined ? lined : inc->header_sources)
                                       : cj_embedded_header_sources,
      .header_names =
          inc->cacheable ? (const char *const *)inc->header_names : cj_embedded_header_names,
      .options = o,
      .exprs = exprs.data,
      .exprs_len = exprs.len,
      .want_cubin = cubin,
      .pch = cj_pch_wanted(engine, nv, inc, o, tk) ? inc : NULL,
      .link = cj_link_lto_list(o)};
  job.heavy = job.pch || text_bytes(&job) > HEAVY_BYTES;
  nvrtcResult cr = NVRTC_SUCCESS;
  cj_nvrtc_step failed = {NULL, NVRTC_SUCCESS};
  if (exprs.failed) {
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  } else if (job.link || !cj_remote_compile(engine, nv, &job, e, &cr, &failed)) {
    st = cj_nvrtc_job_run(engine, nv, &job, e, &cr, &failed); /* here, as a worker would */
    if (!job.link) cj_remote_done(engine);
  }
  for (size_t i = 0; lined && i < inc->header_count; i++)
    if (lined[i] != inc->header_sources[i]) free(lined[i]);
  free(lined);
  cj_buf_free(&exprs);
  if (st == CUJIT_OK && cr != NVRTC_SUCCESS)
    st = compile_status(engine, nv, cr, name, source, o, e->log ? e->log : "");
  else if (st == CUJIT_OK && failed.call)
    st = step_status(engine, nv, &failed);
  e->nvrtc_version = nv->version;
  return st;
}

/* --- compiling -------------------------------------------------------------------------------- */

/* An entry from the cache, 1 when found; to a profiler, a range with a mark saying where it was
** found (trace.h). */
static int fetch(cujit_engine *engine, const cj_cache_key *key, cj_cache_entry *e) {
  cj_trace_push("cujit: cache lookup");
  int where = cj_cache_get(engine->cache, key, e);
  if (where) cj_trace_mark("cujit: cache hit (%s)", where == 2 ? "disk" : "memory");
  cj_trace_pop();
  return where != 0;
}

/* An entry from the cache, unless NVRTC is open and of another version than the one that built
** it (then the entry is stale and is rebuilt). */
static int lookup(cujit_engine *engine, const cj_cache_key *key, cj_cache_entry *e) {
  if (!fetch(engine, key, e)) return 0;
  cj_nvrtc *nv = cj_nvrtc_if_open(engine);
  if (nv && e->nvrtc_version != nv->version) {
    cj_cache_entry_free(e);
    return 0;
  }
  return 1;
}

/* Up to this size a source that names no header is resolved (a copy and a hash, about a
** nanosecond a byte) rather than looked up through its manifest (a file more to open and read:
** several microseconds), so that the first hit of a new process opens one file. */
#define DIRECT_MAX_BYTES ((size_t)16 << 10)

/* The cache lookup by the include rule (docs/ARCHITECTURE.md), first half: the manifest under
** the source key gives the full key while every header it lists is unchanged (a stat each).
** *key_ok is 1 when it did (the entry may still be missing), *pure when it lists no file. */
static int manifest_lookup(cujit_engine *engine, const char *source, const char *name,
                           const char *arch, const cj_option_list *o, cj_cache_key *key,
                           int *key_ok, int *pure, cj_cache_entry *e) {
  const char *tk = toolkit_include();
  cj_cache_key skey = source_key(source, name, arch, o, tk ? tk : "");
  size_t len = 0;
  char *manifest = cj_cache_get_text(engine->cache, &skey, &len);
  *key_ok = manifest && cj_includes_manifest_check(manifest, len, key->bytes);
  *pure = *key_ok && cj_includes_manifest_empty(manifest, len);
  free(manifest);
  return *key_ok && lookup(engine, key, e);
}

/* Second half: resolves the includes (once; inc is kept for the compile), makes the full key,
** looks it up when `look`, and writes the manifest (with `look` 2, on a miss only: the source
** reads no file, cj_includes_none, and its hits never read the manifest). A program whose
** includes cannot be resolved is not cacheable: *key_ok 0, and one warning saying where. */
static cujit_status resolve_lookup(cujit_engine *engine, const char *source, const char *name,
                                   const char *arch, const cj_option_list *o, cj_includes *inc,
                                   int look, cj_cache_key *key, int *key_ok, cj_cache_entry *e,
                                   int *hit) {
  const char *tk = toolkit_include();
  if (!inc->source) {
    cj_include_request rq = {.source = source,
                             .name = name,
                             .system_dir = tk,
                             .elide_host_code = !default_device(o),
                             .flags = (const char *const *)o->v,
                             .flag_count = o->n,
                             .builtin_names = cj_embedded_header_names,
                             .builtin_sources = cj_embedded_header_sources,
                             .builtin_count = cj_embedded_header_count};
    if (cj_compiler_for(arch)->standins) { /* NVRTC's: g++ has the host's own headers */
      rq.standin_names = cj_std_header_names;
      rq.standin_sources = cj_std_header_sources;
      rq.standin_count = cj_std_header_count;
    }
    if (!cj_includes_resolve(&rq, inc))
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    if (!inc->cacheable)
      cj_warn(engine,
              "'%s' is compiled without the cache: %s. cujit hashes every header it includes and "
              "must know each file by name; write the #include with a literal file name",
              name, inc->why);
  }
  if (!(*key_ok = inc->cacheable)) { /* never looked up nor stored: only names the record */
    *key = source_key(source, name, arch, o, tk ? tk : "");
    return CUJIT_OK;
  }
  *key = full_key(inc, name, arch, o);
  if (look) *hit = lookup(engine, key, e);
  if (look == 2 && *hit) return CUJIT_OK;
  cj_cache_key skey = source_key(source, name, arch, o, tk ? tk : "");
  char *text = cj_includes_manifest(inc, key->bytes);
  if (text) cj_cache_put_text(engine->cache, &skey, text);
  free(text);
  return CUJIT_OK;
}

/* g++ compiles a copy of the source in a scratch directory: the source's own directory (the
** program name's, or the working directory's for a name without one), where NVRTC looks for its
** quoted includes first, is made the first -I, unless -no-source-include says otherwise. */
static cujit_status compile_cxx_in_dir(cujit_engine *engine, const char *source, const char *name,
                                       const cujit_compile_options *options,
                                       const cj_signature *kernels, const int *cxx, size_t n,
                                       const cj_includes *inc, cj_cache_entry *e) {
  cujit_compile_options o = options ? *options : (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  for (size_t i = 0; i < o.extra_flag_count; i++)
    if (o.extra_flags[i] && strstr(o.extra_flags[i], "no-source-include"))
      return cj_cxx_compile_resolved(engine, source, name, options, kernels, cxx, n, inc,
                                     toolkit_include(), e);
  char dir[PATH_MAX];
  const char *slash = strrchr(name, '/');
  if (slash)
    snprintf(dir, sizeof dir, "%.*s", slash == name ? 1 : (int)(slash - name), name);
  else if (!getcwd(dir, sizeof dir))
    return cj_cxx_compile_resolved(engine, source, name, options, kernels, cxx, n, inc,
                                   toolkit_include(), e);
  const char **dirs = malloc((o.include_dir_count + 1) * sizeof *dirs);
  if (!dirs) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  dirs[0] = dir;
  for (size_t i = 0; i < o.include_dir_count; i++) dirs[i + 1] = o.include_dirs[i];
  o.include_dirs = dirs, o.include_dir_count++;
  cujit_status st =
      cj_cxx_compile_resolved(engine, source, name, &o, kernels, cxx, n, inc, toolkit_include(), e);
  free(dirs);
  return st;
}

/* The CPU device's arch "cpu": the host C++ compiler (cxx.h) through the same options, key and
** cache, the compiler's identity joining the key; the shared object goes in entry.cubin. The
** entry carries no NVRTC version, so none is checked. */
static cujit_status compile_cpu(cujit_engine *engine, const cj_scan *scan, const char *name,
                                const cujit_compile_options *options, const char *arch,
                                cj_compiled *out) {
  (void)arch; /* "cpu" */
  const char *source = scan->text;
  const char *identity;
  cj_option_list o = {0};
  cj_cache_entry *e = &out->entry;
  int hit = 0;
  cj_includes inc = {0};
  int key_ok = 0;
  cujit_status st = cj_cxx_identity(engine, cj_env_cpu_check(), &identity);
  if (st == CUJIT_OK) st = cj_options_nvrtc(engine, options, "cpu", &o);
  /* The include rule holds here too: every header the source can include is hashed (g++ then
  ** reads the same files), and the compiler's identity joins the key. */
  if (st == CUJIT_OK)
    st = resolve_lookup(engine, source, name, "cpu", &o, &inc, 0, &out->key, &key_ok, e, &hit);
  out->keyed = key_ok, out->pure = key_ok && inc.file_count == 0;
  cj_option_list_free(&o); /* inc is kept: the CPU unit is written from the resolved includes */
  if (st == CUJIT_OK) {
    cj_key_builder *kb = cj_key_begin();
    cj_key_add(kb, out->key.bytes, sizeof out->key.bytes);
    cj_key_add_str(kb, identity);
    cj_key_add_str(kb, cj_cpu_writer_hash); /* what wraps the source for g++ (cmake/embed.cmake) */
    /* The prelude every unit includes (<cujit/cpu_*.h>): the full key holds only the headers the
    ** source itself includes, and a hit by it would load an object built on an older prelude. */
    cj_key_add_str(kb, cj_embedded_headers_hash);
    out->key = cj_key_end(kb);
    if (key_ok) hit = fetch(engine, &out->key, e);
  }
  if (st == CUJIT_OK && !hit) {
    cj_signature *kernels = NULL;
    int *cxx = NULL;
    size_t n = 0; /* one entry per name: the scan's checks redeclare each kernel (scan.h) */
    st = cj_scan_copy_kernels(scan, &kernels, &cxx, &n);
    if (st != CUJIT_OK)
      cj_fail(engine, st, "out of memory");
    else if (n == 0) {
      char err[1024];
      cj_scan_none_message(scan->templates, scan->mangled, scan->macros, err, sizeof err);
      st = cj_fail(engine, CUJIT_ERROR_NOT_FOUND, "'%s': %s", name, err);
    } else {
      cj_trace_push("cujit: compile %s (C++ compiler, cpu)", name);
      st = compile_cxx_in_dir(engine, source, name, options, kernels, cxx, n, &inc, e);
      cj_trace_pop();
    }
    for (size_t i = 0; i < n; i++) cj_signature_free(&kernels[i]);
    free(kernels);
    free(cxx);
    if (st == CUJIT_OK && key_ok && !(out->direct && out->pure))
      cj_cache_put(engine->cache, &out->key, e);
  }
  cj_includes_free(&inc);
  if (st != CUJIT_OK) {
    cj_cache_entry_free(e);
    return st;
  }
  out->from_cache = hit;
  snprintf(out->arch, sizeof out->arch, "cpu");
  return CUJIT_OK;
}

/* NVRTC's compile: the options, the cache lookup by manifest or resolved includes, the arch
** capped at NVRTC's highest when the device's is newer, then NVRTC itself. */
static cujit_status compile_nvrtc(cujit_engine *engine, const cj_scan *scan, const char *name,
                                  const cujit_compile_options *options, const char *target,
                                  cj_compiled *out) {
  const char *source = scan->text;
  char arch[32];
  snprintf(arch, sizeof arch, "%s", target);
  cujit_status st = CUJIT_OK;
  cj_option_list o = {0};
  cj_cache_key key;
  cj_cache_entry *e = &out->entry;
  cj_includes inc = {0};
  int hit = 0, key_ok = 0, manifest_pure = 0;
  st = cj_options_nvrtc(engine, options, arch, &o);
  add_cccl(&o);
  if (st == CUJIT_OK && strlen(source) <= DIRECT_MAX_BYTES &&
      cj_includes_none(source, (const char *const *)o.v, o.n))
    st = resolve_lookup(engine, source, name, arch, &o, &inc, 2, &key, &key_ok, e, &hit);
  else if (st == CUJIT_OK)
    hit = manifest_lookup(engine, source, name, arch, &o, &key, &key_ok, &manifest_pure, e);
  if (st == CUJIT_OK && !key_ok)
    st = resolve_lookup(engine, source, name, arch, &o, &inc, 1, &key, &key_ok, e, &hit);
  if (st == CUJIT_OK && !hit) {
    cj_driver_start(engine); /* a miss: the driver starts meanwhile on its own thread (base.h) */
    cj_nvrtc *nv;
    char fitted[32];
    snprintf(fitted, sizeof fitted, "%s", arch);
    st = cj_need_nvrtc(engine, &nv);
    if (st == CUJIT_OK)
      st = cj_nvrtc_fit_arch(engine, nv, options && options->arch, fitted, sizeof fitted);
    if (st == CUJIT_OK && strcmp(fitted, arch) != 0) { /* capped: another key */
      snprintf(arch, sizeof arch, "%s", fitted);
      cj_option_list_free(&o);
      st = cj_options_nvrtc(engine, options, arch, &o);
      add_cccl(&o);
      cj_includes_free(&inc); /* resolved with the old options */
      if (st == CUJIT_OK)
        st = resolve_lookup(engine, source, name, arch, &o, &inc, 1, &key, &key_ok, e, &hit);
    }
    if (st == CUJIT_OK && !hit && !inc.source) /* the manifest held, its entry is gone */
      st = resolve_lookup(engine, source, name, arch, &o, &inc, 0, &key, &key_ok, e, &hit);
    if (st == CUJIT_OK && !hit) {
      int minimal = cj_minimal_add(engine, nv->version, &inc, &o, &st); /* minimal.h */
      cj_trace_push("cujit: compile %s (NVRTC, %s)", name, arch);
      if (st == CUJIT_OK) st = run_nvrtc(engine, nv, &inc, scan, name, arch, &o, e);
      if (st == CUJIT_ERROR_COMPILE && minimal && cj_minimal_retry(&o, &e->log))
        st = run_nvrtc(engine, nv, &inc, scan, name, arch, &o, e);
      cj_trace_pop();
      int pure = key_ok && (inc.source ? inc.file_count == 0 : manifest_pure);
      if (st == CUJIT_OK && key_ok && !(out->direct && pure)) cj_cache_put(engine->cache, &key, e);
    }
  }
  out->keyed = key_ok, out->pure = key_ok && (inc.source ? inc.file_count == 0 : manifest_pure);
  cj_option_list_free(&o);
  cj_includes_free(&inc);
  if (st != CUJIT_OK) {
    cj_cache_entry_free(e);
    return st;
  }
  out->key = key;
  out->from_cache = hit;
  snprintf(out->arch, sizeof out->arch, "%.15s", arch);
  return CUJIT_OK;
}

/* --- the memo key ----------------------------------------------------------------------------- */

int cj_compile_memo_key(cujit_engine *engine, const char *source, const char *name,
                        const cujit_compile_options *options, const char *arch, cj_cache_key *out) {
  const char *identity = ""; /* CUJIT_CXX and CUJIT_CPU_CHECK may change between builds */
  if (cj_compiler_for(arch)->identity(engine, &identity) != CUJIT_OK) return 0;
  uint32_t schema = CJ_CACHE_SCHEMA;
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "cujit memo");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add_str(kb, source);
  cj_key_add_str(kb, name);
  cj_key_add_str(kb, arch);
  cj_key_add_str(kb, identity);
  int ok = cj_options_memo(kb, options); /* every option as given; the arch as resolved */
  *out = cj_key_end(kb);
  static const cj_cache_key zero; /* what cj_key_end gives when out of memory */
  return ok && memcmp(out->bytes, zero.bytes, sizeof zero.bytes) != 0;
}

/* The toolkit enters as the variables that choose it, not as the directories found (two stat
** calls, a good part of a hit): a pure build reads no file of it, and NVRTC is given every header
** in memory, so the code does not depend on where the toolkit is. */
cj_cache_key cj_compile_direct_key(const cj_cache_key *memo_key) {
  uint32_t schema = CJ_CACHE_SCHEMA;
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "cujit direct");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add(kb, memo_key->bytes, sizeof memo_key->bytes);
  cj_key_add_str(kb, cj_embedded_headers_hash);
  cj_key_add_str(kb, getenv("CUDA_HOME"));
  cj_key_add_str(kb, getenv("CUDA_PATH"));
  cj_key_add_str(kb, CJ_HOST_CODE_RULES);
  cj_key_add_str(kb, cj_reader_hash);
  cj_key_add_str(kb, cj_cpu_writer_hash); /* the CPU device's full key has it */
  return cj_key_end(kb); /* all zero when out of memory: never stored under (program.c) */
}

/* --- the compilers ---------------------------------------------------------------------------- */

cujit_status cj_compile(cujit_engine *engine, const cj_scan *scan, const char *name,
                        const cujit_compile_options *options, const char *target,
                        cj_compiled *out) {
  int direct = out->direct;
  memset(out, 0, sizeof *out);
  out->direct = direct && !cj_link_wanted(options);
  if (cj_link_wanted(options)) return cj_link_compile(engine, scan, name, options, target, out);
  return cj_compiler_for(target)->compile(engine, scan, name, options, target, out);
}

static cujit_status nvrtc_fit_arch(cujit_engine *engine, int explicit_arch, char *arch,
                                   size_t len) {
  cj_nvrtc *nv = cj_nvrtc_if_open(engine); /* opening it costs 5-140 ms: a hit must not */
  return nv ? cj_nvrtc_fit_arch(engine, nv, explicit_arch, arch, len) : CUJIT_OK;
}

static cujit_status nvrtc_identity(cujit_engine *engine, const char **identity) {
  (void)engine;
  *identity = "";
  return CUJIT_OK;
}

static cujit_status nvrtc_verify(cj_scan *scan, const char *ptx, const void *binary,
                                 size_t binary_len, cj_signature **kernels, size_t *count,
                                 char *err, size_t err_len) {
  (void)binary, (void)binary_len;
  return cj_verify_ptx(scan, ptx, kernels, count, err, err_len);
}

static int nvrtc_current(cujit_engine *engine, int built) {
  cj_nvrtc *nv = cj_nvrtc_if_open(engine);
  return !nv || nv->version == built;
}

static cujit_status cxx_identity(cujit_engine *engine, const char **identity) {
  return cj_cxx_identity(engine, cj_env_cpu_check(), identity);
}

static cujit_status cxx_verify(cj_scan *scan, const char *ptx, const void *binary,
                               size_t binary_len, cj_signature **kernels, size_t *count, char *err,
                               size_t err_len) {
  (void)ptx;
  return cj_verify_object(scan, binary, binary_len, kernels, count, err, err_len);
}

static int cxx_current(cujit_engine *engine, int built) {
  (void)engine, (void)built; /* its identity is in every key */
  return 1;
}

static const cj_compiler nvrtc_compiler = {.name = "NVRTC",
                                           .standins = 1,
                                           .fit_arch = nvrtc_fit_arch,
                                           .compile = compile_nvrtc,
                                           .identity = nvrtc_identity,
                                           .verify = nvrtc_verify,
                                           .current = nvrtc_current};

static const cj_compiler cxx_compiler = {.name = "the host C++ compiler",
                                         .standins = 0,
                                         .fit_arch = NULL,
                                         .compile = compile_cpu,
                                         .identity = cxx_identity,
                                         .verify = cxx_verify,
                                         .current = cxx_current};

/* THE COMPILER DISPATCH POINT: the arch names the compiler, as the device table names backends. */
const cj_compiler *cj_compiler_for(const char *arch) {
  return arch && strcmp(arch, "cpu") == 0 ? &cxx_compiler : &nvrtc_compiler;
}
