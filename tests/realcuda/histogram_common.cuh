// Shared by the histogram's host and device code in the samples' layout: types and sizes.
#ifndef HISTOGRAM_COMMON_CUH
#define HISTOGRAM_COMMON_CUH
typedef unsigned int uint;
typedef unsigned char uchar;
#define HISTOGRAM256_BIN_COUNT 256

// The merge kernel lives in the header, as library code often does: cujit finds it there.
__global__ void mergeHistogram256Kernel(uint *d_Histogram, const uint *d_PartialHistograms,
                                        uint histogramCount) {
  uint bin = blockIdx.x * blockDim.x + threadIdx.x;
  if (bin >= HISTOGRAM256_BIN_COUNT) return;
  uint sum = 0;
  for (uint i = 0; i < histogramCount; i++) sum += d_PartialHistograms[i * HISTOGRAM256_BIN_COUNT + bin];
  d_Histogram[bin] = sum;
}
#endif
