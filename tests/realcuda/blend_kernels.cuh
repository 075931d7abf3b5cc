// blend_kernels.cuh -- a kernel header that takes the types its includer declares first, as a
// sample's main .cu sometimes does (struct, enum and typedef above its #include of the kernels).
// Written for cujit's tests (test_hostcode.lua).
#pragma once

__device__ inline real_t blend_one(const BlendParams &p, real_t a, real_t b) {
  return p.mode == BLEND_ADD ? p.wa * a + p.wb * b : (p.wa * a) * (p.wb * b);
}

__global__ void blend(const BlendParams p, const real_t *a, const real_t *b, real_t *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) out[i] = blend_one(p, a[i], b[i]);
}
