/*
** cujit/cpu_math.h -- the CUDA math library and intrinsics on the host, for the CPU device
** (included by cpu_prelude.h). The standard functions (sinf, expf, ...) come from <cmath> with
** their float overloads; this adds what CUDA has beyond them: the fast intrinsics (__expf,
** __fdividef: here the exact functions, which are within the intrinsics' error bounds), the
** bit operations (__popc, __clz, __ffs, __brev), reinterpretations, rounding conversions,
** integer helpers and CUDA's min/max overloads.
*/
#pragma once

/* The constants of the toolkit's math_constants.h that kernels use most (the CPU device maps
** #include <math_constants.h> to nothing). */
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_SQRT_2PI_F 2.506628275f
#define CUDART_INF_F __builtin_inff()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_INF __builtin_inf()
#define CUDART_NAN __builtin_nan("")
#define CUDART_MAX_NORMAL_F 3.40282347e+38f
#define CUDART_MIN_DENORM_F 1.40129846e-45f

/* --- fast math's flush to zero --------------------------------------------------------------
** NVRTC's --use_fast_math implies -ftz=true: single-precision denormal inputs and results are
** flushed to zero, doubles keep theirs. The host flushes through its control register for the
** time a fast-math kernel runs on a worker (the entry holds one of these); the register is the
** thread's, so the host thread and other kernels keep denormals. The host's register covers both
** widths: on the CPU device a fast-math kernel flushes double denormals too (docs/cpu.md). */
namespace cj_cpu {
struct ftz_scope {
#if defined(__x86_64__) || defined(__i386__)
  unsigned saved = __builtin_ia32_stmxcsr();
  ftz_scope() {
    __builtin_ia32_ldmxcsr(saved | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) */
  }
  ~ftz_scope() {
    __builtin_ia32_ldmxcsr(saved);
  }
#elif defined(__aarch64__)
  unsigned long saved = __builtin_aarch64_get_fpcr64();
  ftz_scope() {
    __builtin_aarch64_set_fpcr64(saved | (1ul << 24)); /* FZ */
  }
  ~ftz_scope() {
    __builtin_aarch64_set_fpcr64(saved);
  }
#endif
};
} // namespace cj_cpu

/* --- float and double functions CUDA has and C++ does not ------------------------------------ */
static inline float rsqrtf(float x) {
  return 1.0f / sqrtf(x);
}
static inline double rsqrt(double x) {
  return 1.0 / sqrt(x);
}
static inline float rcbrtf(float x) {
  return 1.0f / cbrtf(x);
}
static inline double rcbrt(double x) {
  return 1.0 / cbrt(x);
}
#ifndef __USE_GNU /* glibc declares these four with _GNU_SOURCE, which g++ defines */
static inline void sincosf(float x, float *s, float *c) {
  *s = sinf(x), *c = cosf(x);
}
static inline void sincos(double x, double *s, double *c) {
  *s = sin(x), *c = cos(x);
}
static inline float exp10f(float x) {
  return powf(10.0f, x);
}
static inline double exp10(double x) {
  return pow(10.0, x);
}
#endif
#if !(defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 41)) /* C23's sinpi and cospi */
/* x is reduced mod 2 exactly (remainder) and folded to an argument of at most 1/4 before pi
** multiplies it: sin(M_PI * x) itself would give 1.2e-16 for sinpi(1), where CUDA gives 0, and
** lose every digit for large x (M_PI's own error times x). Integers give a zero of x's sign. */
static inline double cj_sinpi_(double x) {
  double r = remainder(x, 2.0), a = fabs(r), s; /* r in [-1, 1], exact; NaN for inf or NaN */
  if (r == 0 || a == 1) return copysign(0.0, x);
  if (a <= 0.25)
    s = sin(M_PI * a);
  else if (a < 0.75)
    s = cos(M_PI * (0.5 - a)); /* 0.5 - a and 1 - a are exact (Sterbenz) */
  else
    s = sin(M_PI * (1.0 - a));
  return copysign(s, r);
}
/* cos is even: the same folding, with cospi(n + 1/2) = +0. */
static inline double cj_cospi_(double x) {
  double a = fabs(remainder(x, 2.0));
  if (a <= 0.25) return cos(M_PI * a);
  if (a < 0.75) return sin(M_PI * (0.5 - a));
  return -cos(M_PI * (1.0 - a));
}
static inline float sinpif(float x) {
  return (float)cj_sinpi_(x);
}
static inline float cospif(float x) {
  return (float)cj_cospi_(x);
}
static inline double sinpi(double x) {
  return cj_sinpi_(x);
}
static inline double cospi(double x) {
  return cj_cospi_(x);
}
#endif
static inline void sincospif(float x, float *s, float *c) {
  *s = sinpif(x), *c = cospif(x);
}
static inline void sincospi(double x, double *s, double *c) {
  *s = sinpi(x), *c = cospi(x);
}
/* In double: erfc's relative error is its argument's times about 2t^2, so a float argument's
** rounding alone put normcdff(-10) 40 ulp off (the Math API's bound is 5). */
static inline float normcdff(float x) {
  return (float)(0.5 * erfc(-(double)x * M_SQRT1_2));
}
/* The argument -x/sqrt(2) carried to twice double's precision (the product's rounding by fma,
** M_SQRT1_2's own error by its next 53 bits), the low part applied through erfc's derivative:
** with the rounded argument alone normcdf(-30) was 150 ulp off (the Math API's bound is 5). */
static inline double normcdf(double x) {
  const double lo_sqrt1_2 = -4.833646656726457e-17; /* 1/sqrt(2) - M_SQRT1_2 */
  double t = -x * M_SQRT1_2, t_lo = fma(-x, M_SQRT1_2, -t) + -x * lo_sqrt1_2;
  return 0.5 * (erfc(t) - M_2_SQRTPI * exp(-t * t) * t_lo);
}
/* The inverses of erf, erfc and normcdf: Newton's method in double on the form that is well
** conditioned where the root lies, so that double's rounding of the function does not reach the
** root: erf(x) = y for |x| up to about 0.48 (|y| <= 1/2), erfc(x) = q beyond (q = 1 - |y|, exact
** there). Each starts below the root's size (erf's tangent, erfc's asymptote) and closes on it. */
namespace cj_cpu {
static inline double erfinv_small_(double y) { /* |y| <= 1/2 */
  double x = y * 0.88622692545275801;          /* sqrt(pi) / 2: erf(x) <= 2x / sqrt(pi) */
  for (int i = 0; i < 40; i++) {
    double dx = (erf(x) - y) / (M_2_SQRTPI * exp(-x * x));
    x -= dx;
    if (fabs(dx) <= 1e-17 * fabs(x)) break;
  }
  return x;
}
static inline double erfcinv_tail_(double q) { /* 0 < q <= 1/2: the x > 0 with erfc(x) = q */
  double x = sqrt(-log(q));
  x = sqrt(fmax(-log(q * x * 1.7724538509055160), 0.25)); /* erfc(x) ~ exp(-x^2) / (x sqrt(pi)) */
  for (int i = 0; i < 60; i++) {
    double dx = (erfc(x) - q) / (M_2_SQRTPI * exp(-x * x));
    x += dx;
    if (fabs(dx) <= 1e-17 * x) break;
  }
  return x;
}
static inline double erfinv_(double y) {
  if (!(fabs(y) <= 1)) return NAN;
  if (fabs(y) == 1) return copysign(INFINITY, y);
  if (fabs(y) <= 0.5) return erfinv_small_(y);
  return copysign(erfcinv_tail_(1 - fabs(y)), y);
}
static inline double erfcinv_(double q) {
  if (!(q >= 0 && q <= 2)) return NAN;
  if (q == 0) return INFINITY;
  if (q == 2) return -INFINITY;
  if (q >= 0.5 && q <= 1.5) return erfinv_small_(1 - q); /* 1 - q exact */
  return q < 0.5 ? erfcinv_tail_(q) : -erfcinv_tail_(2 - q);
}
} // namespace cj_cpu
static inline float erfinvf(float y) {
  return (float)cj_cpu::erfinv_(y);
}
static inline double erfinv(double y) {
  return cj_cpu::erfinv_(y);
}
static inline float erfcinvf(float q) {
  return (float)cj_cpu::erfcinv_(q);
}
static inline double erfcinv(double q) {
  return cj_cpu::erfcinv_(q);
}
/* normcdfinv(p) = -sqrt(2) erfcinv(2p): 2p is exact */
static inline float normcdfinvf(float p) {
  return (float)(-M_SQRT2 * cj_cpu::erfcinv_(2.0 * p));
}
static inline double normcdfinv(double p) {
  return -M_SQRT2 * cj_cpu::erfcinv_(2 * p);
}
static inline float fdividef(float a, float b) {
  return a / b;
}
static inline float saturatef_(float x) {
  return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}

/* --- intrinsics: the exact function stands in for the fast one ------------------------------
** glibc declares __expf, __sinf, ... (C linkage, unexported): these hidden definitions match. */
#define CJ_FAST1(name, exact)                                                                      \
  extern "C" __attribute__((visibility("hidden"))) float name(float x) noexcept {                  \
    return exact(x);                                                                               \
  }
CJ_FAST1(__expf, expf)
CJ_FAST1(__exp10f, exp10f)
CJ_FAST1(__logf, logf)
CJ_FAST1(__log2f, log2f)
CJ_FAST1(__log10f, log10f)
CJ_FAST1(__sinf, sinf)
CJ_FAST1(__cosf, cosf)
CJ_FAST1(__tanf, tanf)
#undef CJ_FAST1
extern "C" __attribute__((visibility("hidden"))) void __sincosf(float x, float *s,
                                                                float *c) noexcept {
  *s = sinf(x), *c = cosf(x);
}
extern "C" __attribute__((visibility("hidden"))) float __powf(float x, float y) noexcept {
  return powf(x, y);
}
/* The GPU multiplies by a reciprocal that is flushed to zero for 2^126 < |b| < 2^128: the Math API
** gives 0 there, and NaN for an infinite a (which a * 0 gives); elsewhere the exact quotient. */
static inline float __fdividef(float a, float b) {
  float m = fabsf(b);
  if (m > 0x1p126f && m <= FLT_MAX) return a * copysignf(0.0f, b);
  return a / b;
}
static inline float __saturatef(float x) {
  return saturatef_(x);
}
static inline float __frcp_rn(float x) {
  return 1.0f / x;
}
static inline float __fsqrt_rn(float x) {
  return sqrtf(x);
}
/* Rounded once, as the GPU's: through double, whose 1/sqrt is within 2^-52 of the value (a float
** within that of a rounding midpoint is the only case left); 1.0f / sqrtf(x) misrounded a quarter
** of all floats. */
static inline float __frsqrt_rn(float x) {
  return (float)(1.0 / sqrt((double)x));
}
static inline double __drcp_rn(double x) {
  return 1.0 / x;
}
static inline double __dsqrt_rn(double x) {
  return sqrt(x);
}
/* The round-to-nearest arithmetic is the host's default. A directed rounding (rz, ru, rd) runs
** its one operation with the thread's rounding mode set for it (the host and the other workers
** keep theirs). The compiler assumes round to nearest (no -frounding-math) and could move the
** operation across the mode's changes: the empty asm statements, which claim to change the
** operands and to read the result, keep it between them. */
#define CJ_ROUNDED(mode, T, expr)                                                                  \
  int saved_ = fegetround();                                                                       \
  fesetround(mode);                                                                                \
  __asm__ volatile("" : "+m"(a), "+m"(b), "+m"(c)::"memory");                                      \
  T r_ = expr;                                                                                     \
  __asm__ volatile("" : "+m"(r_)::"memory");                                                       \
  fesetround(saved_);                                                                              \
  return r_;
#define CJ_OP(name, T, op, mode)                                                                   \
  static inline T name(T a, T b) {                                                                 \
    T c = 0;                                                                                       \
    CJ_ROUNDED(mode, T, a op b)                                                                    \
  }
#define CJ_ARITH(s, mode)                                                                          \
  CJ_OP(__fadd_##s, float, +, mode)                                                                \
  CJ_OP(__fsub_##s, float, -, mode)                                                                \
  CJ_OP(__fmul_##s, float, *, mode)                                                                \
  CJ_OP(__fdiv_##s, float, /, mode)                                                                \
  CJ_OP(__dadd_##s, double, +, mode)                                                               \
  CJ_OP(__dsub_##s, double, -, mode)                                                               \
  CJ_OP(__dmul_##s, double, *, mode)                                                               \
  CJ_OP(__ddiv_##s, double, /, mode)                                                               \
  static inline float __fmaf_##s(float a, float b, float c) {                                      \
    CJ_ROUNDED(mode, float, fmaf(a, b, c))                                                         \
  }                                                                                                \
  static inline double __fma_##s(double a, double b, double c) {                                   \
    CJ_ROUNDED(mode, double, fma(a, b, c))                                                         \
  }
CJ_ARITH(rz, FE_TOWARDZERO)
CJ_ARITH(ru, FE_UPWARD)
CJ_ARITH(rd, FE_DOWNWARD)
#undef CJ_ARITH
#undef CJ_OP
/* The conversions that can round (to float from int, unsigned, long long, unsigned long long or
** double; to double from the 64-bit integers) in each mode, the same way; the rn ones below. */
#define CJ_CVT(name, From, To, mode)                                                               \
  static inline To name(From v) {                                                                  \
    From a = v, b = 0, c = 0;                                                                      \
    CJ_ROUNDED(mode, To, (To)a)                                                                    \
  }
#define CJ_CVTS(s, mode)                                                                           \
  CJ_CVT(__int2float_##s, int, float, mode)                                                        \
  CJ_CVT(__uint2float_##s, unsigned, float, mode)                                                  \
  CJ_CVT(__ll2float_##s, long long, float, mode)                                                   \
  CJ_CVT(__ull2float_##s, unsigned long long, float, mode)                                         \
  CJ_CVT(__double2float_##s, double, float, mode)                                                  \
  CJ_CVT(__ll2double_##s, long long, double, mode)                                                 \
  CJ_CVT(__ull2double_##s, unsigned long long, double, mode)
CJ_CVTS(rz, FE_TOWARDZERO)
CJ_CVTS(ru, FE_UPWARD)
CJ_CVTS(rd, FE_DOWNWARD)
#undef CJ_CVTS
#undef CJ_CVT
#undef CJ_ROUNDED
/* rn: the host's own operators, in its default mode */
#define CJ_OP(name, T, op)                                                                         \
  static inline T name(T a, T b) {                                                                 \
    return a op b;                                                                                 \
  }
CJ_OP(__fadd_rn, float, +)
CJ_OP(__fsub_rn, float, -)
CJ_OP(__fmul_rn, float, *)
CJ_OP(__fdiv_rn, float, /)
CJ_OP(__dadd_rn, double, +)
CJ_OP(__dsub_rn, double, -)
CJ_OP(__dmul_rn, double, *)
CJ_OP(__ddiv_rn, double, /)
#undef CJ_OP
static inline float __fmaf_rn(float a, float b, float c) {
  return fmaf(a, b, c);
}
static inline double __fma_rn(double a, double b, double c) {
  return fma(a, b, c);
}

/* --- reinterpretations and conversions ------------------------------------------------------- */
template <class To, class From> static inline To cj_bits_(From f) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  memcpy(&t, &f, sizeof t);
  return t;
}
static inline float __int_as_float(int x) {
  return cj_bits_<float>(x);
}
static inline float __uint_as_float(unsigned x) {
  return cj_bits_<float>(x);
}
static inline int __float_as_int(float x) {
  return cj_bits_<int>(x);
}
static inline unsigned __float_as_uint(float x) {
  return cj_bits_<unsigned>(x);
}
static inline double __longlong_as_double(long long x) {
  return cj_bits_<double>(x);
}
static inline long long __double_as_longlong(double x) {
  return cj_bits_<long long>(x);
}
static inline int __double2hiint(double x) {
  return (int)(cj_bits_<unsigned long long>(x) >> 32);
}
static inline int __double2loint(double x) {
  return (int)cj_bits_<unsigned long long>(x);
}
static inline double __hiloint2double(int hi, int lo) {
  return cj_bits_<double>((unsigned long long)(unsigned)hi << 32 | (unsigned)lo);
}
/* Rounding conversions: rn is nearest-even (rint under the default mode), rz truncation, ru/rd
** ceil/floor. Out-of-range values saturate as the GPU's do; NaN gives what an H200 gives: 0 from a
** float to 32 bits, else the bit pattern 0x80...0 (INT_MIN, 0x80000000u, LLONG_MIN, 1ull << 63). */
template <class I> static inline I cj_to_int_(double v, I nan) {
  if (v != v) return nan;
  if (v <= (double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (v >= (double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)v;
}
#define CJ_CONV(from, T, to, I, nan)                                                               \
  static inline I __##from##2##to##_rn(T v) {                                                      \
    return cj_to_int_<I>(rint(v), nan);                                                            \
  }                                                                                                \
  static inline I __##from##2##to##_rz(T v) {                                                      \
    return cj_to_int_<I>(trunc(v), nan);                                                           \
  }                                                                                                \
  static inline I __##from##2##to##_ru(T v) {                                                      \
    return cj_to_int_<I>(ceil(v), nan);                                                            \
  }                                                                                                \
  static inline I __##from##2##to##_rd(T v) {                                                      \
    return cj_to_int_<I>(floor(v), nan);                                                           \
  }
CJ_CONV(float, float, int, int, 0)
CJ_CONV(float, float, uint, unsigned, 0u)
CJ_CONV(float, float, ll, long long, LLONG_MIN)
CJ_CONV(float, float, ull, unsigned long long, 1ull << 63)
CJ_CONV(double, double, int, int, INT_MIN)
CJ_CONV(double, double, uint, unsigned, 0x80000000u)
CJ_CONV(double, double, ll, long long, LLONG_MIN)
CJ_CONV(double, double, ull, unsigned long long, 1ull << 63)
#undef CJ_CONV
static inline float __int2float_rn(int v) {
  return (float)v;
}
static inline float __uint2float_rn(unsigned v) {
  return (float)v;
}
static inline float __ll2float_rn(long long v) {
  return (float)v;
}
static inline float __ull2float_rn(unsigned long long v) {
  return (float)v;
}
static inline double __uint2double_rn(unsigned v) {
  return (double)v;
}
static inline double __ull2double_rn(unsigned long long v) {
  return (double)v;
}
static inline double __int2double_rn(int v) {
  return (double)v;
}
static inline double __ll2double_rn(long long v) {
  return (double)v;
}
static inline float __double2float_rn(double v) {
  return (float)v;
}

/* --- integer intrinsics ---------------------------------------------------------------------- */
static inline int __popc(unsigned x) {
  return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
static inline int __clz(int x) {
  return x ? __builtin_clz((unsigned)x) : 32;
}
static inline int __clzll(long long x) {
  return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x) {
  return __builtin_ffs(x);
}
static inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
static inline unsigned __brev(unsigned x) {
  x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
  x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
  x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
  return (unsigned long long)__brev((unsigned)x) << 32 | __brev((unsigned)(x >> 32));
}
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = (unsigned long long)y << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)(v >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
  return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (s & 31));
}
/* The clamped forms shift by min(s, 32): a shift of 32 or more leaves lo (left) or hi (right)
** whole, where the unclamped forms, which take s & 31, would not shift at all. */
static inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  return s >= 32 ? lo : __funnelshift_l(lo, hi, s);
}
static inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  return s >= 32 ? hi : __funnelshift_r(lo, hi, s);
}
/* PTX's fns: the position of the |offset|-th set bit of mask met going from bit `base` itself
** upward (offset > 0) or downward (offset < 0); offset 0 asks whether bit base is set; none
** found: 0xffffffff. (A base past 31 is undefined in CUDA: here nothing is found.) */
static inline unsigned __fns(unsigned mask, unsigned base, int offset) {
  if (offset == 0) return base < 32 && (mask >> base & 1) ? base : 0xffffffffu;
  long long left = offset > 0 ? offset : -(long long)offset;
  for (int pos = base < 32 ? (int)base : 32, step = offset > 0 ? 1 : -1; pos >= 0 && pos < 32;
       pos += step)
    if ((mask >> pos & 1) && --left == 0) return (unsigned)pos;
  return 0xffffffffu;
}
static inline int __mulhi(int a, int b) {
  return (int)(((long long)a * b) >> 32);
}
static inline unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline long long __mul64hi(long long a, long long b) {
  return (long long)(((__int128)a * b) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __mul24(int a, int b) {
  return (int)((unsigned)(a << 8 >> 8) * (unsigned)(b << 8 >> 8));
}
static inline unsigned __umul24(unsigned a, unsigned b) {
  return (a & 0xffffffu) * (b & 0xffffffu);
}
static inline int __hadd(int a, int b) {
  return (int)(((long long)a + b) >> 1);
}
static inline int __rhadd(int a, int b) {
  return (int)(((long long)a + b + 1) >> 1);
}
static inline unsigned __uhadd(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a + b) >> 1);
}
static inline unsigned __urhadd(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a + b + 1) >> 1);
}
static inline unsigned __sad(int a, int b, unsigned c) {
  return (a > b ? (unsigned)a - (unsigned)b : (unsigned)b - (unsigned)a) + c;
}
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) {
  return (a > b ? a - b : b - a) + c;
}

/* --- CUDA's min and max: one overload set over the arithmetic types, with C's conversions
** (an int and an unsigned compare as unsigned, as CUDA's mixed overloads do); floating types
** follow fminf/fmaxf, which return the other operand when one is NaN. */
template <class A, class B>
static inline typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value,
                                      typename std::common_type<A, B>::type>::type
min(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  if (std::is_floating_point<C>::value) return (C)fmin((C)a, (C)b);
  return (C)a < (C)b ? (C)a : (C)b;
}
template <class A, class B>
static inline typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value,
                                      typename std::common_type<A, B>::type>::type
max(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  if (std::is_floating_point<C>::value) return (C)fmax((C)a, (C)b);
  return (C)a > (C)b ? (C)a : (C)b;
}
static inline unsigned umin(unsigned a, unsigned b) {
  return a < b ? a : b;
}
static inline unsigned umax(unsigned a, unsigned b) {
  return a > b ? a : b;
}
static inline long long llmin(long long a, long long b) {
  return a < b ? a : b;
}
static inline long long llmax(long long a, long long b) {
  return a > b ? a : b;
}
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}
