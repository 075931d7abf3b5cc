// helper_style.cu -- a whole file in the samples' layout: the runtime first, then a helper header
// full of host code, the kernel, and main. The kernel sums the two halves of each half2.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include "helper_style.cuh"

__global__ void pairSums(const half2 *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = halfSum(in[i]);
}

int main(int argc, char **argv) {
  int n = 1024, dev = 0;
  if (argc > 1 && sameFlag(argv[1], "--small")) n = 64;
  printf("%s: compute mode %d\n", machineName(), computeModeOf(dev));
  half2 *d_in;
  float *d_out;
  checkStatus(cudaMalloc(&d_in, n * sizeof(half2)));
  checkStatus(cudaMalloc(&d_out, n * sizeof(float)));
  pairSums<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
  checkStatus(cudaDeviceSynchronize());
  checkStatus(cudaFree(d_in));
  checkStatus(cudaFree(d_out));
  return 0;
}
