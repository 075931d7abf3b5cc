/*
** cxx.h -- the host C++ compiler the CPU device builds kernels with: found at run time
** (CUJIT_CXX, default g++), its identity for the cache key, and the compile of a translation unit
** into a shared object whose diagnostics are mapped back to the user's lines. Internal.
*/
#ifndef CUJIT_CXX_H
#define CUJIT_CXX_H

#include "cache.h"
#include "includes.h"
#include "base/base.h"
#include "lang/signature.h"

/* What identifies the compiler and how cujit runs it, for the cache key: the first line of
** `CXX --version` and the flags that do not depend on the program ("g++ (Debian 12.2.0) 12.2.0
** | -O2 ..."). Asked of the compiler once per compiler name and kept; fails with a message that
** says what to install or set when there is no compiler. The string lives until the process
** ends. */
cujit_status cj_cxx_identity(cujit_engine *engine, int check, const char **identity);

/* Compiles `source` (the translation unit NVRTC would get, holding the __global__ kernels listed
** in `kernels`; cxx[i] says kernel i has C++ linkage, NULL that none has) for the CPU device: the
** shared object's bytes go to out->cubin, the compiler's output to out->log, out->ptx is "". A
** compile error is CUJIT_ERROR_COMPILE with the first error placed at the user's line ("kernel
** 'k' failed to compile: line 3 of its body: error: ..."), then the compiler's whole output. */
cujit_status cj_cxx_compile(cujit_engine *engine, const char *source, const char *name,
                            const cujit_compile_options *options, const cj_signature *kernels,
                            const int *cxx, size_t nkernels, cj_cache_entry *out);
/* The same from the include resolver's result (NULL: as cj_cxx_compile): the user's headers are
** rewritten as the source is (cpu_source.h), those of the toolkit (found under toolkit_dir)
** mapped to the CPU device's stand-ins, whatever file includes them. */
cujit_status cj_cxx_compile_resolved(cujit_engine *engine, const char *source, const char *name,
                                     const cujit_compile_options *options,
                                     const cj_signature *kernels, const int *cxx, size_t nkernels,
                                     const cj_includes *inc, const char *toolkit_dir,
                                     cj_cache_entry *out);

#endif
