/*
** cpu_source.h -- the C++ translation unit that the system compiler builds into a CPU-device
** shared object: cujit's kernel source made to compile on the host. Internal.
*/
#ifndef CUJIT_CPU_SOURCE_H
#define CUJIT_CPU_SOURCE_H

#include <stddef.h>

/* The C++ translation unit g++ compiles for the CPU device: the prelude, then `source` (the same
** translation unit NVRTC gets, with its #line directives) inside namespace __cj (headers it
** includes at file scope outside), with `extern __shared__` declarations rewritten, and one
** exported entry `cjk_<name>` per kernel plus cj_cpu_abi_version, cj_cpu_worker_release and
** cj_cpu_where (cpu_abi.h). cxx[k] says kernel k has C++ linkage (cj_scan_kernel's cxx; NULL:
** none has): an extern "C" kernel is named __cj_k_<name> in the object and referenced weakly, so
** one the preprocessor removed still links (and is then left out), a C++ one strongly. `check`:
*build for
** AddressSanitizer/UBSan reports. Malloc'd, or NULL with a message in err ("kernel 'k' uses X,
** which is not supported on the CPU device"). */
char *cj_cpu_translation_unit(const char *source, const char *const *kernel_names, const int *cxx,
                              size_t nkernels, int check, char *err, size_t err_len);

/* The headers the source includes, as the include resolver found them (includes.h): the unit
** writer rewrites the user's own as it rewrites the source, so that a CUDA header one of them
** includes gets the same stand-in or refusal, and its `extern __shared__` arrays are rewritten. */
typedef struct cj_cpu_headers {
  const char *const *names;         /* each header's real path (absolute; a built-in's is not) */
  const char *const *sources;       /* its text, each #include in it naming the real path */
  const char *const *toolkit_names; /* a toolkit header's name under its include directory
                                    ** ("cuda_runtime.h"), else NULL */
  size_t count;
  char **rewritten; /* out: [h] the rewritten text of a user's header the unit includes, to be
                    ** written as include/__cj_h/<h>.h; NULL for the others. Malloc'd */
} cj_cpu_headers;

/* The same, `source` being the resolver's text (each #include naming a real path) and `headers`
** its headers (NULL: as cj_cpu_translation_unit, #includes left to g++ but CUDA's). */
char *cj_cpu_translation_unit_with(const char *source, const char *const *kernel_names,
                                   const int *cxx, size_t nkernels, int check,
                                   cj_cpu_headers *headers, char *err, size_t err_len);

#endif
