/*
** cpu_source.h -- the C++ translation unit g++ compiles for the CPU device. Internal.
*/
#ifndef CUJIT_CPU_SOURCE_H
#define CUJIT_CPU_SOURCE_H

#include <stddef.h>

/* The C++ translation unit g++ compiles for the CPU device: the prelude, then `source` (the same
** translation unit NVRTC gets, with its #line directives), with `extern __shared__` declarations
** rewritten, and one exported entry `cjk_<name>` per kernel plus cj_cpu_abi_version and
** cj_cpu_worker_release. `check`: build for AddressSanitizer/UBSan reports. Malloc'd, or NULL with
** a message in err. */
char *cj_cpu_translation_unit(const char *source, const char *const *kernel_names, size_t nkernels,
                              int check, char *err, size_t err_len);

#endif
