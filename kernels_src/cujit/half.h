/*
** cujit/half.h -- the __half type (IEEE binary16) with conversions to and from float, for
** kernels over f16 arrays. NVRTC 13 does not carry cuda_fp16.h as a built-in header: when the
** toolkit's include directory is on the include path the real cuda_fp16.h is used (with its
** half-precision arithmetic); otherwise a minimal stand-in of our own defines __half as 16 bits
** that convert to and from float (round to nearest even) through single PTX instructions, so
** arithmetic on it happens in float. Both spell the conversions __float2half / __half2float, and
** cujit::to_float / cujit::from_float work with either. On the CPU device (__CUJIT_CPU__) the
** stand-in is always used, its conversions written in C++ with the same rounding as the GPU's,
** with the common half and __half2 arithmetic of cuda_fp16.h rounded as the GPU rounds it.
*/
#pragma once
#include <cujit/float_conv.h>

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
  __device__ __forceinline__ __half(double d) : __half(cujit::to_float_odd(d)) {}
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
__device__ __forceinline__ __half __double2half(double d) {
  return __half(d);
}
__device__ __forceinline__ float __half2float(__half h) {
  return (float)h;
}

#if defined(__CUJIT_CPU__)
/* On the CPU device, the part of the toolkit's cuda_fp16.h that kernels use most: __hadd ...
** __hmin computed in float and rounded once (float_conv.h), as the GPU's half arithmetic. */
CJ_CPU_FLOAT16_OPS(__half)
/* a*b + c rounded once, as the GPU's fma.rn.f16: a*b is exact in float, and the sum's rounding
** error (TwoSum) decides a float sum that falls on a tie between two halves. */
static inline __half __hfma(__half a, __half b, __half c) {
  float p = (float)a * (float)b, fc = (float)c, s = p + fc;
  float bv = s - p, e = (p - (s - bv)) + (fc - bv);
  __half r(s);
  float m = fabsf(s), f1 = fabsf((float)r);
  if (e != 0.0f && m != f1 && m < 65504.0f) {
    __half n;
    n.__x = (unsigned short)((r.__x & 0x7fffu) + (m > f1 ? 1 : -1)); /* the other neighbour */
    if (2.0f * m == f1 + (float)n) r = __half(nextafterf(s, e > 0.0f ? INFINITY : -INFINITY));
  }
  return r;
}
CJ_CPU_FLOAT16_CONVERSIONS(__half, __float2half_rn, __int2half_rn, __half2int_rz, __half_as_ushort,
                           __ushort_as_half)

/* __half2: two halves in 32 bits, each lane rounded as the __half operation above rounds it. */
struct __align__(4) __half2 {
  __half x, y;
  __half2() = default;
  __half2(__half a, __half b) : x(a), y(b) {}
};
#define CJ_HALF2_OP(name, op)                                                                      \
  static inline __half2 name(__half2 a, __half2 b) {                                               \
    return __half2(op(a.x, b.x), op(a.y, b.y));                                                    \
  }
CJ_HALF2_OP(__hadd2, __hadd)
CJ_HALF2_OP(__hsub2, __hsub)
CJ_HALF2_OP(__hmul2, __hmul)
CJ_HALF2_OP(__h2div, __hdiv)
CJ_HALF2_OP(__hmax2, __hmax)
CJ_HALF2_OP(__hmin2, __hmin)
#undef CJ_HALF2_OP
static inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
static inline __half2 __hneg2(__half2 a) {
  return __half2(__hneg(a.x), __hneg(a.y));
}
static inline __half2 __habs2(__half2 a) {
  return __half2(__habs(a.x), __habs(a.y));
}
static inline __half2 __halves2half2(__half a, __half b) {
  return __half2(a, b);
}
static inline __half2 make_half2(__half a, __half b) {
  return __half2(a, b);
}
static inline __half2 __half2half2(__half a) {
  return __half2(a, a);
}
static inline __half2 __float2half2_rn(float f) {
  return __half2(__half(f), __half(f));
}
static inline __half2 __floats2half2_rn(float a, float b) {
  return __half2(__half(a), __half(b));
}
static inline __half2 __float22half2_rn(float2 f) {
  return __half2(__half(f.x), __half(f.y));
}
static inline float2 __half22float2(__half2 h) {
  return make_float2((float)h.x, (float)h.y);
}
static inline __half __low2half(__half2 h) {
  return h.x;
}
static inline __half __high2half(__half2 h) {
  return h.y;
}
static inline float __low2float(__half2 h) {
  return (float)h.x;
}
static inline float __high2float(__half2 h) {
  return (float)h.y;
}
static inline __half2 __low2half2(__half2 h) {
  return __half2(h.x, h.x);
}
static inline __half2 __high2half2(__half2 h) {
  return __half2(h.y, h.y);
}
static inline __half2 __lows2half2(__half2 a, __half2 b) {
  return __half2(a.x, b.x);
}
static inline __half2 __highs2half2(__half2 a, __half2 b) {
  return __half2(a.y, b.y);
}
static inline __half2 __lowhigh2highlow(__half2 h) {
  return __half2(h.y, h.x);
}
/* Comparisons: 1.0 or 0.0 per lane (__heq2...), or whether both lanes hold (__hbeq2...). */
#define CJ_HALF2_CMP(name, bname, op)                                                              \
  static inline __half2 name(__half2 a, __half2 b) {                                               \
    return __half2(__half(op(a.x, b.x) ? 1.0f : 0.0f), __half(op(a.y, b.y) ? 1.0f : 0.0f));        \
  }                                                                                                \
  static inline bool bname(__half2 a, __half2 b) {                                                 \
    return op(a.x, b.x) && op(a.y, b.y);                                                           \
  }
CJ_HALF2_CMP(__heq2, __hbeq2, __heq)
CJ_HALF2_CMP(__hne2, __hbne2, __hne)
CJ_HALF2_CMP(__hlt2, __hblt2, __hlt)
CJ_HALF2_CMP(__hle2, __hble2, __hle)
CJ_HALF2_CMP(__hgt2, __hbgt2, __hgt)
CJ_HALF2_CMP(__hge2, __hbge2, __hge)
#undef CJ_HALF2_CMP
static inline __half2 operator+(__half2 a, __half2 b) {
  return __hadd2(a, b);
}
static inline __half2 operator-(__half2 a, __half2 b) {
  return __hsub2(a, b);
}
static inline __half2 operator*(__half2 a, __half2 b) {
  return __hmul2(a, b);
}
static inline __half2 operator/(__half2 a, __half2 b) {
  return __h2div(a, b);
}
static inline __half2 operator-(__half2 a) {
  return __hneg2(a);
}
static inline __half2 operator+(__half2 a) {
  return a;
}
static inline __half2 &operator+=(__half2 &a, __half2 b) {
  return a = __hadd2(a, b);
}
static inline __half2 &operator-=(__half2 &a, __half2 b) {
  return a = __hsub2(a, b);
}
static inline __half2 &operator*=(__half2 &a, __half2 b) {
  return a = __hmul2(a, b);
}
static inline __half2 &operator/=(__half2 &a, __half2 b) {
  return a = __h2div(a, b);
}
static inline bool operator==(__half2 a, __half2 b) {
  return __hbeq2(a, b);
}
static inline bool operator!=(__half2 a, __half2 b) {
  return !__hbeq2(a, b);
}
/* cuda_fp16.h's short names (unless CUDA_NO_HALF), which samples write. */
#if !defined(CUDA_NO_HALF)
typedef __half half;
typedef __half2 half2;
#endif
#endif
#endif

namespace cujit {
__device__ __forceinline__ float to_float(__half h) {
  return __half2float(h);
}
template <> __device__ __forceinline__ __half from_float<__half>(float f) {
  return __float2half(f);
}
} // namespace cujit
