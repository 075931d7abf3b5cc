/*
** cujit/half.h -- the __half type (IEEE binary16) with conversions to and from float, for
** kernels over f16 arrays. NVRTC 13 does not carry cuda_fp16.h as a built-in header: when the
** toolkit's include directory is on the include path the real cuda_fp16.h is used (with its
** half-precision arithmetic); otherwise a minimal stand-in of our own defines __half as 16 bits
** that convert to and from float (round to nearest even) through single PTX instructions, so
** arithmetic on it happens in float. Both spell the conversions __float2half / __half2float, and
** cujit::to_float / cujit::from_float work with either. On the CPU device (__CUJIT_CPU__) the
** stand-in is always used, its conversions written in C++ with the same rounding as the GPU's.
*/
#pragma once

#if !defined(__CUDA_FP16_H__) && defined(__has_include) && !defined(__CUJIT_CPU__)
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#endif

#if !defined(__CUDA_FP16_H__) && !defined(CUJIT_HALF_FALLBACK)
#define CUJIT_HALF_FALLBACK 1

#if defined(__CUJIT_CPU__)
/* Round to nearest even (F. Giesen's float_to_half_fast3_rtne); NaN becomes 0x7fff as with PTX. */
static inline unsigned short cj_cpu_float_to_half(float f) {
  unsigned u, sign;
  memcpy(&u, &f, 4);
  sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x47800000u) return (unsigned short)(sign | (u > 0x7f800000u ? 0x7fffu : 0x7c00u));
  if (u < 0x38800000u) { /* subnormal half: let the float adder round */
    float a, magic = 0.5f;
    unsigned m;
    memcpy(&a, &u, 4);
    a += magic;
    memcpy(&m, &a, 4);
    return (unsigned short)(sign | (m - 0x3f000000u));
  }
  u += 0xc8000fffu + ((u >> 13) & 1u);
  return (unsigned short)(sign | (u >> 13));
}
static inline float cj_cpu_half_to_float(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  float f;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    f = (float)m * 5.9604644775390625e-8f;
    memcpy(&u, &f, 4);
    u |= sign;
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  memcpy(&f, &u, 4);
  return f;
}
#endif

struct __align__(2) __half {
  unsigned short __x;
  __half() = default;
  __device__ __forceinline__ __half(float f) {
#if defined(__CUJIT_CPU__)
    __x = cj_cpu_float_to_half(f);
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(__x) : "f"(f));
#endif
  }
  __device__ __forceinline__ __half(double d) : __half((float)d) {}
  __device__ __forceinline__ operator float() const {
#if defined(__CUJIT_CPU__)
    return cj_cpu_half_to_float(__x);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(__x));
    return f;
#endif
  }
};

__device__ __forceinline__ __half __float2half(float f) {
  return __half(f);
}
__device__ __forceinline__ float __half2float(__half h) {
  return (float)h;
}
#endif

namespace cujit {
__device__ __forceinline__ float to_float(__half h) {
  return __half2float(h);
}
__device__ __forceinline__ float to_float(float f) {
  return f;
}
__device__ __forceinline__ double to_float(double d) {
  return d;
}
template <class T> __device__ __forceinline__ T from_float(float f) {
  return (T)f;
}
template <> __device__ __forceinline__ __half from_float<__half>(float f) {
  return __float2half(f);
}
} // namespace cujit
