/*
** cujit/random.h -- a counter-based random generator: Philox4x32-10 (Salmon et al., "Parallel
** random numbers: as easy as 1, 2, 3", SC'11). Every number is a pure function of (seed, index,
** stream), so there is no per-thread state to set up or carry: a thread asks for the numbers it
** needs by their index. This is what makes it cheap to compile and free to start, where
** curand_kernel.h costs about a second of NVRTC time and its state setup dominates small runs.
**
** Streams of numbers. For a given (seed, stream) there is one stream of floats and one of doubles:
**   - uniform_float(seed, i, stream) is element i of the float stream, in (0, 1], 24 random bits;
**   - uniform_double(seed, i, stream) is element i of the double stream, in (0, 1], 53 bits;
**   - normal_float / normal_double are the same elements through Box-Muller, N(0, 1).
** Element i of the float stream is word i % 4 of Philox block i / 4; of the double stream, words
** 2(i % 2) and 2(i % 2) + 1 of block i / 2 (low word first). The *4 / *2 forms return a whole
** block at once, which is four times (twice) cheaper than four (two) scalar calls. The host fills
** cujit_random_uniform / cujit_random_normal use stream 0 and produce exactly these streams, so
** element k of a buffer filled with offset o equals uniform_float(seed, o + k, 0).
**
** The Philox counter is (block low, block high, stream low, stream high); the key is the seed
** (low, high). Uniforms never return 0, so log(u) is always finite.
*/
#pragma once

namespace cujit {

/* One Philox4x32 round and its constants, from the paper. */
__device__ __forceinline__ uint4 philox_round_(uint4 c, uint2 k) {
  const unsigned m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  unsigned hi0 = __umulhi(m0, c.x), lo0 = m0 * c.x;
  unsigned hi1 = __umulhi(m1, c.z), lo1 = m1 * c.z;
  return make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
}

/* Philox4x32-10: four random 32-bit words from a 128-bit counter and a 64-bit key. */
__device__ __forceinline__ uint4 philox4x32_10(uint4 counter, uint2 key) {
  const unsigned w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
#pragma unroll
  for (int r = 0; r < 10; r++) {
    if (r > 0) key.x += w0, key.y += w1;
    counter = philox_round_(counter, key);
  }
  return counter;
}

/* Block `block` of stream `stream` under `seed`. */
__device__ __forceinline__ uint4 random_block(unsigned long long seed, unsigned long long block,
                                              unsigned long long stream = 0) {
  uint4 c = make_uint4((unsigned)block, (unsigned)(block >> 32), (unsigned)stream,
                       (unsigned)(stream >> 32));
  return philox4x32_10(c, make_uint2((unsigned)seed, (unsigned)(seed >> 32)));
}

/* 32 random bits to a float in (0, 1]: the top 24 bits, plus one, times 2^-24. Exact. */
__device__ __forceinline__ float bits_to_uniform_float(unsigned x) {
  return (float)((x >> 8) + 1u) * 5.9604644775390625e-8f;
}

/* 64 random bits (lo, hi) to a double in (0, 1]: the top 53 bits, plus one, times 2^-53. */
__device__ __forceinline__ double bits_to_uniform_double(unsigned lo, unsigned hi) {
  unsigned long long x = ((unsigned long long)hi << 32 | lo) >> 11;
  return (double)(x + 1ull) * 1.1102230246251565e-16;
}

/* Box-Muller: two independent N(0, 1) from two uniforms in (0, 1]. */
__device__ __forceinline__ float2 box_muller_float(float u1, float u2) {
  float r = sqrtf(-2.0f * logf(u1)), s, c;
  sincospif(2.0f * u2, &s, &c);
  return make_float2(r * c, r * s);
}
__device__ __forceinline__ double2 box_muller_double(double u1, double u2) {
  double r = sqrt(-2.0 * log(u1)), s, c;
  sincospi(2.0 * u2, &s, &c);
  return make_double2(r * c, r * s);
}

/* Elements 4 block .. 4 block + 3 of the float stream. */
__device__ __forceinline__ float4 uniform_float4(unsigned long long seed, unsigned long long block,
                                                 unsigned long long stream = 0) {
  uint4 b = random_block(seed, block, stream);
  return make_float4(bits_to_uniform_float(b.x), bits_to_uniform_float(b.y),
                     bits_to_uniform_float(b.z), bits_to_uniform_float(b.w));
}

/* Elements 2 block and 2 block + 1 of the double stream. */
__device__ __forceinline__ double2 uniform_double2(unsigned long long seed,
                                                   unsigned long long block,
                                                   unsigned long long stream = 0) {
  uint4 b = random_block(seed, block, stream);
  return make_double2(bits_to_uniform_double(b.x, b.y), bits_to_uniform_double(b.z, b.w));
}

/* Normals: element pairs (0, 1) and (2, 3) of a float block are Box-Muller pairs; the two
** doubles of a double block are one pair. */
__device__ __forceinline__ float4 normal_float4(unsigned long long seed, unsigned long long block,
                                                unsigned long long stream = 0) {
  float4 u = uniform_float4(seed, block, stream);
  float2 a = box_muller_float(u.x, u.y), b = box_muller_float(u.z, u.w);
  return make_float4(a.x, a.y, b.x, b.y);
}
__device__ __forceinline__ double2 normal_double2(unsigned long long seed, unsigned long long block,
                                                  unsigned long long stream = 0) {
  double2 u = uniform_double2(seed, block, stream);
  return box_muller_double(u.x, u.y);
}

/* Word i of a block, for the scalar forms; a switch so it stays in registers. */
__device__ __forceinline__ float float4_at_(float4 v, unsigned i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/* Element `index` of a stream, one at a time. */
__device__ __forceinline__ float uniform_float(unsigned long long seed, unsigned long long index,
                                               unsigned long long stream = 0) {
  return float4_at_(uniform_float4(seed, index >> 2, stream), (unsigned)index & 3u);
}
__device__ __forceinline__ double uniform_double(unsigned long long seed, unsigned long long index,
                                                 unsigned long long stream = 0) {
  double2 v = uniform_double2(seed, index >> 1, stream);
  return (index & 1ull) ? v.y : v.x;
}
__device__ __forceinline__ float normal_float(unsigned long long seed, unsigned long long index,
                                              unsigned long long stream = 0) {
  return float4_at_(normal_float4(seed, index >> 2, stream), (unsigned)index & 3u);
}
__device__ __forceinline__ double normal_double(unsigned long long seed, unsigned long long index,
                                                unsigned long long stream = 0) {
  double2 v = normal_double2(seed, index >> 1, stream);
  return (index & 1ull) ? v.y : v.x;
}

} // namespace cujit
