// stencil_whole.cu -- a whole sample as shipped: the host's standard headers, the runtime's, a
// helper header, a 1D stencil kernel with shared memory, and main. test_hostcode.lua loads it
// with cuda.load as it is. Its host headers need cujit's stand-ins under NVRTC (issue 22, part
// 1); the CPU device compiles them as they are.
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <cuda_runtime.h>
#include "stencil_helpers.h"

#define BLOCK 128
#define CUDA_CHECK(call) fail_if((call) != cudaSuccess, #call, __LINE__)

static std::vector<float> g_reference;  // a host global with a constructor
static HostClock g_clock;

__global__ void stencil_1d(const float *in, float *out, const StencilParams *p) {
  __shared__ float tile[BLOCK + 2 * RADIUS];
  int g = blockIdx.x * blockDim.x + threadIdx.x, l = threadIdx.x + RADIUS, n = p->n;
  tile[l] = g < n ? in[g] : 0.0f;
  if (threadIdx.x < RADIUS) {
    int left = g - RADIUS, right = g + BLOCK;
    tile[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
    tile[l + BLOCK] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();
  if (g >= n) return;
  float sum = 0.0f;
  for (int k = -RADIUS; k <= RADIUS; k++) sum += stencil_weight(k) * tile[l + k];
  out[g] = p->scale * sum;
}

static void host_stencil(const std::vector<float> &in, std::vector<float> &out, float scale) {
  int n = (int)in.size();
  for (int i = 0; i < n; i++) {
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++)
      if (i + k >= 0 && i + k < n) sum += stencil_weight(k) * in[i + k];
    out[i] = scale * sum;
  }
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
  std::vector<float> h_in(n), h_out(n);
  for (int i = 0; i < n; i++) h_in[i] = (float)(rand() % 100) / 10.0f;
  g_reference.resize(n);
  StencilParams params = {n, 0.5f}, *d_params;
  float *d_in, *d_out;
  CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_params, sizeof params));
  CUDA_CHECK(cudaMemcpy(d_in, h_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_params, &params, sizeof params, cudaMemcpyHostToDevice));
  g_clock.start();
  stencil_1d<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(d_in, d_out, d_params);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(h_out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  host_stencil(h_in, g_reference, params.scale);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += fabsf(h_out[i] - g_reference[i]) > 1e-4f;
  printf("%d mismatches, %.3f s\n", bad, g_clock.seconds());
  cudaFree(d_in), cudaFree(d_out), cudaFree(d_params);
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
