/* with_cuda.c -- cujit.h in one translation unit with the CUDA toolkit's <cuda.h> and
** <cuda_runtime.h>, as a host program that already uses CUDA has it: no name of one clashes with
** the other's, in either order (CUJIT_FIRST puts cujit's headers first), as C11 and as C++11 to
** C++20 (tests/sh/test_cxx.sh compiles it each way, warnings as errors). The function hands a
** runtime allocation and a driver address to cujit's argument helpers, as such a program would;
** it is compiled, not run. */
#ifdef CUJIT_FIRST
#include "cujit.h"
#include "cujit_lua.h"
#endif
#include <cuda.h>
#include <cuda_runtime.h>
#ifndef CUJIT_FIRST
#include "cujit.h"
#include "cujit_lua.h"
#endif

#include <stdint.h>

int with_cuda(cujit_kernel *k, cudaStream_t stream, CUdeviceptr driver_ptr);
int with_cuda(cujit_kernel *k, cudaStream_t stream, CUdeviceptr driver_ptr) {
  void *runtime_ptr = 0;
  if (cudaMalloc(&runtime_ptr, 256) != cudaSuccess) return 1;
  cujit_arg args[] = {CUJIT_ARG_PTR((uintptr_t)runtime_ptr), CUJIT_ARG_PTR(driver_ptr),
                      CUJIT_ARG_I(64)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 64;
  cujit_status s = cujit_launch(k, &cfg, args, 3);
  CUresult r = cuStreamSynchronize((CUstream)stream); /* a cudaStream_t is a CUstream */
  cudaFree(runtime_ptr);
  return s != CUJIT_OK || r != CUDA_SUCCESS;
}
