/*
** cujit/float_conv.h -- what cujit/half.h (__half) and cujit/bf16.h (__nv_bfloat16) share:
** cujit::to_float and cujit::from_float<T> for float and double, to which each adds its type's
** overloads, so that a kernel generic in its storage type converts any of them the same way; and
** on the CPU device the scalar operations that cuda_fp16.h and cuda_bf16.h both name.
*/
#pragma once

namespace cujit {
__device__ __forceinline__ float to_float(float f) {
  return f;
}
__device__ __forceinline__ double to_float(double d) {
  return d;
}
template <class T> __device__ __forceinline__ T from_float(float f) {
  return (T)f;
}
/* d rounded to float toward zero, its last bit then set if that lost anything (rounding to odd).
** Rounding this float to nearest in a type of at most 22 significant bits gives what rounding d
** once would; (float)d would round twice: a d just past a tie of the 16-bit type, rounded to the
** tie in float, then went to the even side (1 + 2^-8 + 2^-30 became bfloat16's 1, not 1 + 2^-7). */
__device__ __forceinline__ float to_float_odd(double d) {
  float f = (float)d;
  if ((double)f != d && f - f == 0.0f) { /* inexact and finite: NaN and infinities stay */
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    f = __uint_as_float(__float_as_uint(f) | 1u);
  }
  return f;
}
} // namespace cujit

#if defined(__CUJIT_CPU__)
/* __hadd ... __hmin and the compound assignments (+= -= *= /=) for a 16-bit float type T that
** converts to and from float. Each computes in float and rounds once to T, which gives the
** correctly rounded result for + - * / (float has more than 2 p + 2 bits, p being 11 for binary16
** and 8 for bfloat16), as the GPU's arithmetic does. (A plain a + b of two T converts both to
** float and gives a float, rounded when stored.) */
#define CJ_CPU_FLOAT16_OP(T, name, op)                                                             \
  static inline T name(T a, T b) {                                                                 \
    return T((float)a op(float) b);                                                                \
  }
#define CJ_CPU_FLOAT16_CMP(T, name, op)                                                            \
  static inline bool name(T a, T b) {                                                              \
    return (float)a op(float) b;                                                                   \
  }
#define CJ_CPU_FLOAT16_ASSIGN(T, op)                                                               \
  static inline T &operator op##=(T &a, T b) {                                                     \
    return a = T((float)a op(float) b);                                                            \
  }
#define CJ_CPU_FLOAT16_OPS(T)                                                                      \
  CJ_CPU_FLOAT16_ASSIGN(T, +)                                                                      \
  CJ_CPU_FLOAT16_ASSIGN(T, -)                                                                      \
  CJ_CPU_FLOAT16_ASSIGN(T, *)                                                                      \
  CJ_CPU_FLOAT16_ASSIGN(T, /)                                                                      \
  CJ_CPU_FLOAT16_OP(T, __hadd, +)                                                                  \
  CJ_CPU_FLOAT16_OP(T, __hsub, -)                                                                  \
  CJ_CPU_FLOAT16_OP(T, __hmul, *)                                                                  \
  CJ_CPU_FLOAT16_OP(T, __hdiv, /)                                                                  \
  CJ_CPU_FLOAT16_CMP(T, __heq, ==)                                                                 \
  CJ_CPU_FLOAT16_CMP(T, __hne, !=)                                                                 \
  CJ_CPU_FLOAT16_CMP(T, __hlt, <)                                                                  \
  CJ_CPU_FLOAT16_CMP(T, __hle, <=)                                                                 \
  CJ_CPU_FLOAT16_CMP(T, __hgt, >)                                                                  \
  CJ_CPU_FLOAT16_CMP(T, __hge, >=)                                                                 \
  static inline T __hneg(T a) {                                                                    \
    return T(-(float)a);                                                                           \
  }                                                                                                \
  static inline T __habs(T a) {                                                                    \
    return T(fabsf((float)a));                                                                     \
  }                                                                                                \
  static inline T __hmax(T a, T b) {                                                               \
    return T(fmaxf((float)a, (float)b));                                                           \
  }                                                                                                \
  static inline T __hmin(T a, T b) {                                                               \
    return T(fminf((float)a, (float)b));                                                           \
  }
/* The conversions both headers have, each under its header's names: from float and from int
** (rounded to nearest even), to int (toward zero), and the bits as an unsigned short and back. */
#define CJ_CPU_FLOAT16_CONVERSIONS(T, from_float_rn, from_int_rn, to_int_rz, as_ushort, ushort_as) \
  static inline T from_float_rn(float f) {                                                         \
    return T(f);                                                                                   \
  }                                                                                                \
  static inline T from_int_rn(int i) {                                                             \
    return T((float)i);                                                                            \
  }                                                                                                \
  static inline int to_int_rz(T h) {                                                               \
    return (int)(float)h;                                                                          \
  }                                                                                                \
  static inline unsigned short as_ushort(T h) {                                                    \
    return h.__x;                                                                                  \
  }                                                                                                \
  static inline T ushort_as(unsigned short x) {                                                    \
    T h;                                                                                           \
    h.__x = x;                                                                                     \
    return h;                                                                                      \
  }
#endif
