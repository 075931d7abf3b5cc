/*
** compile.h -- from source to a program: generating the translation unit for a signature + body
** kernel, running NVRTC with the embedded <cujit/...> headers, mapping its log to the user's lines,
** and going through the cache first. Internal.
*/
#ifndef CUJIT_COMPILE_H
#define CUJIT_COMPILE_H

#include "engine.h"
#include "signature.h"

struct cujit_program {
  cj_link link;
  cujit_engine *engine;
  _Atomic int refs; /* the user's handle + one per kernel got from it */
  char *name;       /* for messages: "saxpy.cu", "<source>", the kernel name */
  char *source;     /* the full translation unit given to NVRTC */
  char arch[16];    /* "sm_90" / "compute_90" */
  char *ptx;        /* NUL-terminated */
  size_t ptx_len;
  void *cubin; /* NULL for compute_XX */
  size_t cubin_len;
  char *log; /* "" when none */
  int from_cache;
  double ms;
  cj_signature *kernels; /* the extern "C" __global__ kernels, source order */
  size_t nkernels;
  void *library; /* CUlibrary, loaded on first launch by the kernel layer */
  pthread_mutex_t load_lock;
};

/* The embedded device headers from kernels_src/ ("cujit/grid.h" -> its text), and one hash over
** all of them, made at build time. */
extern const char *const cj_embedded_header_names[];
extern const char *const cj_embedded_header_sources[];
extern const size_t cj_embedded_header_count;
extern const char cj_embedded_headers_hash[]; /* hex */

/* The arch to compile for: options->arch when given ("sm_NN", "sm_NNa", "compute_NN"; checked),
** else the current device's. Checking against, and capping at, NVRTC's highest arch happens here
** only when NVRTC is already open: opening it costs 5-140 ms and a cache hit must not need it.
** cj_program_build does both before any real compile. Writes "sm_90" into arch. */
cujit_status cj_compile_arch(cujit_engine *engine, const cujit_compile_options *options, char *arch,
                             size_t len);

/* Builds the translation unit of a signature + body kernel, with #line directives so NVRTC's
** diagnostics point into `body` (as "<kernel name>", line N) and `preamble`. type_values, when
** the signature is generic, are the C types bound to its type variables ("float", ...).
** Returns a malloc'd string or NULL (out of memory). */
char *cj_source_for_kernel(const cj_signature *sig, const char *body, const char *preamble,
                           const char *const *type_values);

/* 1 if `source` was made by cj_source_for_kernel for a kernel called `name`. */
int cj_source_is_kernel(const char *source, const char *name);

/* The message for a failed compile of the program `name`: the first error placed in the user's
** terms ("kernel 'saxpy' failed to compile: line 3 of its body: error: ..."; "'a.cu' failed to
** compile: a.cu:7: error: ..."), a blank line, then NVRTC's whole log. Malloc'd, or NULL. */
char *cj_compile_error_message(const char *name, const char *source, const char *log);

/* Compiles (or fetches from the cache) a full translation unit. `name` names it in messages.
** The result has refs == 1 and its kernel signatures scanned. Compile errors come back as
** CUJIT_ERROR_COMPILE with a message naming the source and the user's line, then NVRTC's log. */
cujit_status cj_program_build(cujit_engine *engine, const char *source, const char *name,
                              const cujit_compile_options *options, cujit_program **out);

/* Drops one reference; the last frees the program (unloading its library if loaded). */
void cj_program_release(cujit_program *program);
void cj_program_retain(cujit_program *program);

/* Unloads the CUlibrary; set by the kernel layer, which owns loading. */
extern void (*cj_program_unload_hook)(cujit_program *program);

#endif
