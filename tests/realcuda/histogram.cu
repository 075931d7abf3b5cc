// 256-bin histogram: a per-block histogram in shared memory with atomics, then a merge of the
// per-block histograms. Style of the samples' histogram (histogram256). C++ linkage, typedef'd
// parameter types from the shared header.
#include "histogram_common.cuh"

__global__ void histogram256Kernel(uint *d_PartialHistograms, const uchar *d_Data, uint dataCount) {
  __shared__ uint s_Hist[HISTOGRAM256_BIN_COUNT];
  for (uint i = threadIdx.x; i < HISTOGRAM256_BIN_COUNT; i += blockDim.x) s_Hist[i] = 0;
  __syncthreads();
  for (uint pos = blockIdx.x * blockDim.x + threadIdx.x; pos < dataCount; pos += blockDim.x * gridDim.x)
    atomicAdd(&s_Hist[d_Data[pos]], 1u);
  __syncthreads();
  for (uint bin = threadIdx.x; bin < HISTOGRAM256_BIN_COUNT; bin += blockDim.x)
    d_PartialHistograms[blockIdx.x * HISTOGRAM256_BIN_COUNT + bin] = s_Hist[bin];
}
