// runtime_util.cuh -- a helper header as CUDA projects write them: it includes the runtime's
// headers itself, declares host API wrappers next to device helpers, and gates code on
// CUDART_VERSION. Included by runtime.cu (tests/lua/test_cpu_gaps.lua).
#ifndef RUNTIME_UTIL_CUH
#define RUNTIME_UTIL_CUH

#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <cuda_profiler_api.h>
#include <device_launch_parameters.h>
#include "vec_ops.cuh"

#if !defined(CUDART_VERSION) || CUDART_VERSION < 11000
#error "runtime_util.cuh needs CUDA 11 or newer"
#endif

#define CHECK_CUDA(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) return err_;                                       \
  } while (0)

typedef void(CUDART_CB *completion_fn)(cudaStream_t stream, cudaError_t status, void *data);

// Host wrappers: declared here, defined in the project's host code (not compiled by cujit).
cudaError_t upload_points(float3 *dst, const float3 *src, size_t n, cudaStream_t stream);
cudaError_t time_kernel(cudaEvent_t start, cudaEvent_t stop, float *ms);
cudaMemcpyKind default_direction(void);

__device__ __forceinline__ unsigned global_index() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}

#endif
