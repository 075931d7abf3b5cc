/*
** cpu_entries.h -- the fixed parts of the CPU device's translation unit (cpu_source.c writes it):
** CUDA's names for namespace __cj, and the exported entries. Internal.
*/
#ifndef CUJIT_CPU_ENTRIES_H
#define CUJIT_CPU_ENTRIES_H

#include "base/base.h"

#include <stddef.h>

/* `using ::name;` for each of CUDA's functions a program may overload, to be written inside
** namespace __cj (cpu_entries.c says why). */
extern const char cj_cpu_cuda_api[];

/* Whether kernel k is an extern "C" one: its name an identifier, its linkage not C++'s (cxx[k];
** cxx NULL: none has C++ linkage). */
int cj_cpu_c_kernel(const char *name, const int *cxx, size_t k);

/* After the user's code: per kernel its entry cjk_<name>, its parameters' layout cjp_<name>
** (defined[k]: extern "C" kernel k is defined as __cj_k_<name>) and, when cluster[k] holds the
** text of its __cluster_dims__ arguments, those as unsigned cjc_<name>[3]; then
** cj_cpu_abi_version, cj_cpu_worker_release and cj_cpu_where. */
void cj_cpu_write_entries(cj_buf *out, const char *const *kernel_names, const int *cxx,
                          const unsigned char *defined, char *const *cluster, size_t nkernels);

#endif
