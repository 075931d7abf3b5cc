// runtime.cu -- kernels of a project whose helper header includes the CUDA runtime's headers and
// whose kernels are compiled only for CUDART_VERSION >= 11000 (an empty stand-in drops them).
#include <stdio.h>
#include "runtime_util.cuh"

#if CUDART_VERSION >= 11000
extern "C" __global__ void shift_points(const float3 *pts, float3 shift, float s, float *out,
                                        float4 *moved, int n) {
  unsigned i = global_index();
  if (i >= (unsigned)n) return;
  float3 p = s * pts[i] + shift;
  moved[i] = make_point4(p, 1.0f);
  out[i] = dot(p, p);
}
#endif

#ifdef __CUDACC__
extern "C" __global__ void runtime_facts(int *facts) {
  if (global_index() != 0) return;
  facts[0] = CUDART_VERSION;
  facts[1] = (int)cudaSuccess;
  facts[2] = (int)cudaMemcpyHostToDevice;
  facts[3] = (int)sizeof(cudaStream_t) == (int)sizeof(void *);
  facts[4] = (int)cudaErrorInvalidValue;
  facts[5] = (int)cudaErrorMemoryAllocation;
  facts[6] = __CUDACC_VER_MAJOR__;
}
#endif
