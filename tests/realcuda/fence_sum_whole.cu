// fence_sum_whole.cu -- a whole sample-style file whose header (fence_sum.cuh) holds a kernel
// template and a host wrapper of the same name: the wrapper and the helper only it calls are
// host code and go, the template stays. Written for cujit's tests (test_hostcode.lua).
#include <stdio.h>
#include <stdlib.h>
#include "fence_sum.cuh"

int main(int argc, char **argv) {
  const int n = 1 << 20, threads = 256, blocks = 64;
  float *h_in = (float *)malloc(n * sizeof(float)), *d_in, *d_partial;
  for (int i = 0; i < n; i++) h_in[i] = (float)(rand() & 0xff) / 256.0f;
  cudaMalloc((void **)&d_in, n * sizeof(float));
  cudaMalloc((void **)&d_partial, blocks * sizeof(float));
  cudaMemcpy(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice);
  fenceSum(n, threads, blocks, d_in, d_partial);
  cudaDeviceSynchronize();
  free(h_in);
  return 0;
}
