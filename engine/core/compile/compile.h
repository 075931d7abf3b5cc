/*
** compile.h -- from a translation unit to a compiled program: the target arch, the compiler's
** options, the cache key over everything that reaches the compiler, the cache lookup (a hit never
** opens NVRTC) and the NVRTC compile itself. Knows no device: the caller names the device's arch.
** Internal.
*/
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include "cache.h"
#include "scan.h"
#include "lang/signature.h"
#include "source.h"

/* A compiled translation unit as its users and the backends see it. Declared here, below the
** backend seam, because backends load it (backend.h); made and owned by the program layer
** (program.c), which shares the heavy parts between the programs of one cache key: the fields up
** to `kernels` point into that shared record and live as long as the program. */
struct cujit_program {
  char *name;    /* for messages: "saxpy.cu", "<source>", the kernel name */
  char *source;  /* the full translation unit given to the compiler */
  char arch[16]; /* "sm_90" / "compute_90" */
  char *ptx;     /* NUL-terminated */
  size_t ptx_len;
  void *cubin; /* NULL for compute_XX */
  size_t cubin_len;
  cj_signature *kernels; /* the extern "C" __global__ kernels, source order */
  size_t nkernels;

  /* This program's own. */
  char *log; /* "" when none or from the cache */
  int from_cache;
  double ms;

  /* The program layer's. */
  cj_link link; /* in the live list while the user holds the handle */
  cujit_engine *engine;
  _Atomic int refs;     /* the user's handle + one per kernel got from it */
  struct cj_code *code; /* the shared record: bytes, kernels, modules on devices */
  char **nonnull;       /* the compile options' nonnull names (one allocation), for its kernels */
  size_t nnonnull;
};

/* What a compile gives: the bytes for `key`, and whether the cache had them. */
typedef struct cj_compiled {
  cj_cache_key key;
  char arch[16]; /* the arch compiled for (capped at NVRTC's highest when the device's is newer) */
  cj_cache_entry entry;
  int from_cache;
  int pure; /* the compiler read no file and probed none: the bytes follow from
             *cj_compile_memo_key's
             ** inputs alone (the key and the cache's input rule, docs/ARCHITECTURE.md) */
} cj_compiled;

/* The arch to compile for: options->arch when given ("sm_NN", "sm_NNa", "compute_NN"; checked),
** else `device_arch` (the current device's, which the caller found). Checking against, and
** capping at, NVRTC's highest arch happens here only when NVRTC is already open: opening it costs
** 5-140 ms and a cache hit must not need it. cj_compile does both before any real compile. */
cujit_status cj_compile_arch(cujit_engine *engine, const cujit_compile_options *options,
                             const char *device_arch, char *arch, size_t len);

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

#endif
