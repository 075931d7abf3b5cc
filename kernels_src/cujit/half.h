/*
** cujit/half.h -- the __half type (IEEE binary16) with conversions to and from float, for
** kernels over f16 arrays. NVRTC 13 does not carry cuda_fp16.h as a built-in header: when the
** toolkit's include directory is on the include path the real cuda_fp16.h is used (with its
** half-precision arithmetic); otherwise a minimal stand-in of our own defines __half as 16 bits
** that convert to and from float (round to nearest even) through single PTX instructions, so
** arithmetic on it happens in float. Both spell the conversions __float2half / __half2float, and
** cujit::to_float / cujit::from_float work with either.
*/
#pragma once

#if !defined(__CUDA_FP16_H__) && defined(__has_include)
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#endif
#endif

#if !defined(__CUDA_FP16_H__) && !defined(CUJIT_HALF_FALLBACK)
#define CUJIT_HALF_FALLBACK 1

struct __align__(2) __half {
  unsigned short __x;
  __half() = default;
  __device__ __forceinline__ __half(float f) {
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(__x) : "f"(f));
  }
  __device__ __forceinline__ __half(double d) : __half((float)d) {}
  __device__ __forceinline__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(__x));
    return f;
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
