// fence_sum.cuh -- a one-pass block sum in the style of a shipped sample's kernel header: the
// kernel template and, below it, a host wrapper of the same name (C linkage, another parameter
// list) that picks the instance and launches it, with a host helper only the wrapper uses.
// Written for cujit's tests (test_hostcode.lua); host code and all, as such headers come.
#ifndef FENCE_SUM_CUH
#define FENCE_SUM_CUH

#include <stdio.h>

template <unsigned blockSize, bool nIsPow2>
__global__ void fenceSum(const float *g_in, float *g_partial, unsigned n) {
  __shared__ float sdata[blockSize];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockSize * 2 + threadIdx.x;
  unsigned stride = blockSize * 2 * gridDim.x;
  float sum = 0.0f;
  while (i < n) { // each thread adds its elements first, in a fixed order
    sum += g_in[i];
    if (nIsPow2 || i + blockSize < n) sum += g_in[i + blockSize];
    i += stride;
  }
  sdata[tid] = sum;
  __syncthreads();
  for (unsigned s = blockSize / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) g_partial[blockIdx.x] = sdata[0];
}

bool isPow2(unsigned x) { return (x & (x - 1)) == 0; }

extern "C" void fenceSum(int size, int threads, int blocks, float *d_in, float *d_partial) {
  dim3 grid(blocks, 1, 1), block(threads, 1, 1);
  if (isPow2(size)) {
    switch (threads) {
      case 256: fenceSum<256, true><<<grid, block>>>(d_in, d_partial, size); break;
      case 128: fenceSum<128, true><<<grid, block>>>(d_in, d_partial, size); break;
    }
  } else {
    switch (threads) {
      case 256: fenceSum<256, false><<<grid, block>>>(d_in, d_partial, size); break;
      case 128: fenceSum<128, false><<<grid, block>>>(d_in, d_partial, size); break;
    }
  }
  if (cudaGetLastError() != cudaSuccess) printf("fenceSum: launch failed\n");
}

#endif
