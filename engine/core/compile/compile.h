/*
** compile.h -- from a translation unit to a compiled program: the target arch, the compiler's
** options, the cache key over everything that reaches the compiler, the cache lookup (a hit never
** opens NVRTC) and the NVRTC compile itself. Knows no device: the caller names the device's arch.
** Internal.
*/
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include "cache.h"
#include "minimal.h" /* NVRTC's -minimal, which compile.c adds where it fits */
#include "scan.h"
#include "lang/signature.h"
#include "source.h"

/* What a compile gives: the bytes for `key`, and whether the cache had them. */
typedef struct cj_compiled {
  cj_cache_key key;
  char arch[16]; /* the arch compiled for (capped at NVRTC's highest when the device's is newer) */
  cj_cache_entry entry;
  int from_cache;
  int keyed;  /* `key` is over the bytes compiled (cached); 0: it only names a program compiled
               ** without the cache (includes it could not resolve) */
  int pure;   /* the compiler read no file and probed none: the bytes follow from
               *cj_compile_memo_key's
               ** inputs alone (the key and the cache's input rule, docs/ARCHITECTURE.md) */
  int direct; /* in (kept by cj_compile): the caller keeps a pure result under its own key
              ** (program.c's direct entries), so it is not stored under `key` */
} cj_compiled;

/* A compiler of the compile stack, as a device is a backend of the run stack: the arch names one
** (cj_compiler_for): NVRTC for "sm_NN", "sm_NNa" and "compute_NN", the host's C++ compiler (cxx.h)
** for the CPU device's "cpu". Everything that differs between the two is an entry here, so that
** nothing above branches on the arch. */
typedef struct cj_compiler {
  const char *name; /* "NVRTC", "the host C++ compiler" */
  int standins;     /* lacks the host's standard headers: cujit's stand-ins answer (includes.h) */
  /* With what costs nothing (NVRTC already open): an explicit arch it lacks refused, the device's
  ** capped at its highest. NULL: any arch it is named for is its own. */
  cujit_status (*fit_arch)(cujit_engine *engine, int explicit_arch, char *arch, size_t len);
  /* cj_compile's work for this compiler. */
  cujit_status (*compile)(cujit_engine *engine, const cj_scan *scan, const char *name,
                          const cujit_compile_options *options, const char *arch, cj_compiled *out);
  /* What of the compiler joins the memo key beyond the options (the host compiler's identity,
  ** which CUJIT_CXX and CUJIT_CPU_CHECK change); "" for NVRTC, whose version `current` checks. */
  cujit_status (*identity)(cujit_engine *engine, const char **identity);
  /* The kernels of a scan confirmed against what was compiled (verify.h): the PTX, or the CPU
  ** device's shared object. */
  cujit_status (*verify)(cj_scan *scan, const char *ptx, const void *binary, size_t binary_len,
                         cj_signature **kernels, size_t *count, char *err, size_t err_len);
  /* Whether bytes this compiler built at version `built` may be handed out again in this process
  ** (NVRTC: the one open now built them, when one is open). */
  int (*current)(cujit_engine *engine, int built);
} cj_compiler;

/* The compiler for an arch (from cj_compile_arch); never NULL. */
const cj_compiler *cj_compiler_for(const char *arch);

/* The arch to compile for: options->arch when given ("sm_NN", "sm_NNa", "compute_NN"; checked),
** else `device_arch` (the current device's, which the caller found). Checking against, and
** capping at, NVRTC's highest arch happens here only when NVRTC is already open: opening it costs
** 5-140 ms and a cache hit must not need it. cj_compile does both before any real compile. */
cujit_status cj_compile_arch(cujit_engine *engine, const cujit_compile_options *options,
                             const char *device_arch, char *arch, size_t len);

/* The device's arch made arch-specific ("sm_90" -> "sm_90a") for a source that uses what only
** that target has: the instructions wgmma, setmaxnreg and tcgen05 (written as inline PTX), or a
** test of the feature macros (__CUDA_ARCH_FEAT_SM..., __CUDA_ARCH_SPECIFIC__). Only for an arch
** taken from the device (an explicit one is compiled as given) of sm_90 or later without a
** suffix; an sm_90a CUBIN runs on sm_90 devices only, which is the device it was taken from.
** Returns 1 when it changed `arch`. */
int cj_arch_make_specific(const char *source, char *arch, size_t len);

/* arch.c: "sm_90", "sm_90a", "sm_100f", "compute_90" read as its number and whether it gives a
** CUBIN (0: not an arch). With NVRTC open, an explicit arch it lacks refused naming the ones it
*has,
** the device's (explicit_arch 0) capped at its highest. */
int cj_parse_arch(const char *arch, int *number, int *cubin);
cujit_status cj_nvrtc_fit_arch(cujit_engine *engine, cj_nvrtc *nv, int explicit_arch, char *arch,
                               size_t len);

/* Compiles (or fetches from the cache) the translation unit of a scan (scan->text) for `arch`
** (from cj_compile_arch); NVRTC gets the name expression "&NAME" of each C++-linkage kernel and
** out->entry.names keeps the lowered names it answers, so a hit needs no NVRTC. `name` names it in
*messages. Compile errors come back as CUJIT_ERROR_COMPILE
** with a message naming the source and the user's line, then the compiler's log. On success the
** caller frees out->entry (cj_cache_entry_free) or takes its parts. */
cujit_status cj_compile(cujit_engine *engine, const cj_scan *scan, const char *name,
                        const cujit_compile_options *options, const char *arch, cj_compiled *out);

/* The memo key of a build: a hash of what the caller gave, before the scan rewrote the source:
** the source, its name, the arch (from cj_compile_arch), every compile option, and for arch "cpu"
** the C++ compiler's identity. Together with the process's constants (the embedded headers, the
** toolkit's directory) it decides the cache key of a compile that came out `pure`, so the program
** layer may remember that key under it. 1 and *out, or 0 when the options are ones the compile
** would refuse (it then says why) or out of memory. */
int cj_compile_memo_key(cujit_engine *engine, const char *source, const char *name,
                        const cujit_compile_options *options, const char *arch, cj_cache_key *out);

/* The direct key of a build (program.c's direct entries): its memo key joined by what the memo
** key leaves to the process because it cannot change while one runs, and which a new process may
** see changed: the cache's schema, the embedded headers and stand-ins, CUDA_HOME and CUDA_PATH,
** the host code rules, the reader of kernels (cj_reader_hash) and the CPU device's writer. */
cj_cache_key cj_compile_direct_key(const cj_cache_key *memo_key);

#endif
