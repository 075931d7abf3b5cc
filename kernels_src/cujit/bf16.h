/*
** cujit/bf16.h -- the __nv_bfloat16 type (bfloat16: float's sign and 8-bit exponent with 7 bits of
** mantissa) with conversions to and from float, for kernels over bf16 arrays; the twin of
** cujit/half.h. On a GPU, when the toolkit's include directory is on the include path, the real
** cuda_bf16.h is used (with its bfloat16 arithmetic); otherwise a minimal stand-in of our own
** defines __nv_bfloat16 as 16 bits that convert to and from float (round to nearest even), so
** arithmetic on it happens in float. On the CPU device (__CUJIT_CPU__) the stand-in is always used,
** with the common scalar arithmetic of cuda_bf16.h rounded as the GPU rounds it. Both spell the
** conversions __float2bfloat16 / __bfloat162float, and cujit::to_float / cujit::from_float work
** with either. __nv_bfloat162 is the toolkit's only (the CPU device refuses it, saying so).
*/
#pragma once
#include <cujit/float_conv.h>

#if !defined(__CUDA_BF16_H__) && defined(__has_include) && !defined(__CUJIT_CPU__)
#if __has_include(<cuda_bf16.h>)
#include <cuda_bf16.h>
#endif
#endif

#if !defined(__CUDA_BF16_H__) && !defined(CUJIT_BF16_FALLBACK)
#define CUJIT_BF16_FALLBACK 1

/* bfloat16 is float with its low 16 bits cut off: rounding to nearest even adds 0x7fff, plus one
** when the kept part is odd, before cutting. A NaN becomes 0x7fff as the GPU's cvt.rn.bf16.f32
** makes it (a NaN whose payload lies only in the low bits would otherwise become infinity). */
static __device__ __forceinline__ unsigned short cj_float_to_bf16_bits(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

struct __align__(2) __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __device__ __forceinline__ __nv_bfloat16(float f) : __x(cj_float_to_bf16_bits(f)) {}
  __device__ __forceinline__ __nv_bfloat16(double d) : __nv_bfloat16(cujit::to_float_odd(d)) {}
  __device__ __forceinline__ operator float() const {
    return __uint_as_float((unsigned)__x << 16);
  }
};

__device__ __forceinline__ __nv_bfloat16 __float2bfloat16(float f) {
  return __nv_bfloat16(f);
}
__device__ __forceinline__ float __bfloat162float(__nv_bfloat16 h) {
  return (float)h;
}

#if defined(__CUJIT_CPU__)
/* On the CPU device, the part of the toolkit's cuda_bf16.h that kernels use most: __hadd ...
** __hmin computed in float and rounded once (float_conv.h), as the GPU's bfloat16 arithmetic. */
CJ_CPU_FLOAT16_OPS(__nv_bfloat16)
/* a*b + c rounded once, as the GPU's fma.rn.bf16: a*b is exact in float, and the float sum's
** rounding error (TwoSum) decides a sum that falls exactly halfway between two bfloat16 values
** (its low 16 bits 0x8000), which the second rounding would otherwise send to the even one. */
static inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  float p = (float)a * (float)b, fc = (float)c, s = p + fc;
  float bv = s - p, e = (p - (s - bv)) + (fc - bv);
  if (e != 0.0f && isfinite(s) && (__float_as_uint(s) & 0xffffu) == 0x8000u)
    s = nextafterf(s, e > 0.0f ? INFINITY : -INFINITY);
  return __nv_bfloat16(s);
}
CJ_CPU_FLOAT16_CONVERSIONS(__nv_bfloat16, __float2bfloat16_rn, __int2bfloat16_rn, __bfloat162int_rz,
                           __bfloat16_as_ushort, __ushort_as_bfloat16)
static inline __nv_bfloat16 __double2bfloat16(double d) {
  return __nv_bfloat16(d);
}
#endif
/* cuda_bf16.h's short name, which samples write. */
typedef __nv_bfloat16 nv_bfloat16;
#endif

namespace cujit {
__device__ __forceinline__ float to_float(__nv_bfloat16 h) {
  return __bfloat162float(h);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float f) {
  return __float2bfloat16(f);
}
} // namespace cujit
