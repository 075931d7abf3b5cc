/*
** cpu_source.c -- STAND-IN, to be replaced at merge by the kernel side's cpu_source.c (branch
** cpurt). It exists so that the engine side of the CPU device (cxx.c, backend_cpu.c) can be
** tested end to end: a tiny inline prelude that runs each thread of a block as a plain call (no
** barriers, warps or extern __shared__), __trap() as a launch error, and one entry per kernel.
*/
#include "cpu_source.h"
#include "base.h"

#include <stdio.h>
#include <string.h>

static const char prelude[] =
    "#include <cujit/cpu_abi.h>\n"
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <stdio.h>\n"
    "#include <utility>\n"
    "#include <type_traits>\n"
    "struct dim3 { unsigned x = 1, y = 1, z = 1; };\n"
    "typedef dim3 uint3;\n"
    "static thread_local uint3 threadIdx, blockIdx;\n"
    "static thread_local dim3 blockDim, gridDim;\n"
    "static thread_local cj_cpu_launch *cj_launch_;\n"
    "static const int warpSize = 32;\n"
    "#define __global__\n"
    "#define __device__\n"
    "#define __host__\n"
    "#define __forceinline__ inline\n"
    "#define __restrict__ __restrict\n"
    "#define __shared__ static thread_local\n"
    "struct cj_trapped_ {};\n"
    "static void __trap() {\n"
    "  int zero = 0;\n"
    "  if (__atomic_compare_exchange_n(&cj_launch_->error_set, &zero, 1, 0, __ATOMIC_ACQ_REL,\n"
    "                                  __ATOMIC_ACQUIRE))\n"
    "    snprintf(cj_launch_->error, sizeof cj_launch_->error,\n"
    "             \"kernel '%s': block (%u,%u,%u) thread (%u,%u,%u): __trap() was called\",\n"
    "             cj_launch_->kernel, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,\n"
    "             threadIdx.y, threadIdx.z);\n"
    "  throw cj_trapped_();\n"
    "}\n"
    "template <class... P, size_t... I>\n"
    "static inline void cj_call_(void (*f)(P...), void **a, std::index_sequence<I...>) {\n"
    "  f(*(typename std::remove_reference<P>::type *)a[I]...);\n"
    "}\n"
    "template <class... P> static void cj_run(void (*f)(P...), cj_cpu_launch *L) {\n"
    "  cj_launch_ = L;\n"
    "  gridDim = {L->grid[0], L->grid[1], L->grid[2]};\n"
    "  blockDim = {L->block[0], L->block[1], L->block[2]};\n"
    "  try {\n"
    "    for (;;) {\n"
    "      unsigned long long b = __atomic_fetch_add(&L->next_block, 1, __ATOMIC_RELAXED);\n"
    "      if (b >= L->total_blocks || __atomic_load_n(&L->error_set, __ATOMIC_ACQUIRE)) return;\n"
    "      blockIdx = {unsigned(b % L->grid[0]), unsigned(b / L->grid[0] % L->grid[1]),\n"
    "                  unsigned(b / L->grid[0] / L->grid[1])};\n"
    "      for (unsigned z = 0; z < L->block[2]; z++)\n"
    "        for (unsigned y = 0; y < L->block[1]; y++)\n"
    "          for (unsigned x = 0; x < L->block[0]; x++) {\n"
    "            threadIdx = {x, y, z};\n"
    "            cj_call_(f, L->args, std::index_sequence_for<P...>{});\n"
    "          }\n"
    "    }\n"
    "  } catch (cj_trapped_ &) {\n"
    "  }\n"
    "}\n";

char *cj_cpu_translation_unit(const char *source, const char *const *kernel_names, size_t nkernels,
                              int check, char *err, size_t err_len) {
  (void)check;
  if (!source || (nkernels && !kernel_names)) {
    snprintf(err, err_len, "no source or no kernel names");
    return NULL;
  }
  cj_buf b = {0};
  cj_buf_puts(&b, prelude);
  cj_buf_puts(&b, source);
  cj_buf_puts(&b, "\n#line 1 \"cujit:cpu-entries\"\n");
  for (size_t i = 0; i < nkernels; i++)
    cj_buf_printf(
        &b, "extern \"C\" void cjk_%s(cj_cpu_launch *L, cj_cpu_worker *) { cj_run(%s, L); }\n",
        kernel_names[i], kernel_names[i]);
  cj_buf_puts(&b, "extern \"C\" int cj_cpu_where(char *buf, size_t len) {\n"
                  "  if (!cj_launch_) return 0;\n"
                  "  snprintf(buf, len, \"block (%u,%u,%u) thread (%u,%u,%u)\", blockIdx.x,\n"
                  "           blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);\n"
                  "  return 1;\n"
                  "}\n");
  cj_buf_puts(&b, "extern \"C\" int cj_cpu_abi_version(void) { return CJ_CPU_ABI_VERSION; }\n"
                  "extern \"C\" void cj_cpu_worker_release(cj_cpu_worker *w) { w->state = 0; }\n");
  if (b.failed) {
    cj_buf_free(&b);
    snprintf(err, err_len, "out of memory");
    return NULL;
  }
  return b.data;
}
