// blend_whole.cu -- a whole sample-style file that declares, before including its kernel header,
// the parameter types the header's kernel takes: they stay though only the header names them.
// Written for cujit's tests (test_hostcode.lua).
#include <stdio.h>
#include <stdlib.h>

typedef float real_t;
enum BlendMode { BLEND_ADD, BLEND_MUL };
struct BlendParams {
  int n;
  BlendMode mode;
  real_t wa, wb;
};
struct RunLog { // host only: goes
  double ms;
  void print() const { printf("%f ms\n", ms); }
};

#include "blend_kernels.cuh"

int main() {
  const int n = 4096;
  real_t *a, *b, *out;
  cudaMalloc(&a, n * sizeof(real_t));
  cudaMalloc(&b, n * sizeof(real_t));
  cudaMalloc(&out, n * sizeof(real_t));
  BlendParams p = {n, BLEND_ADD, 0.25f, 0.75f};
  blend<<<(n + 255) / 256, 256>>>(p, a, b, out);
  RunLog log = {0};
  log.print();
  return cudaDeviceSynchronize();
}
