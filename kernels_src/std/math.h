/* <math.h> for NVRTC (cujit stand-in). NVRTC already declares the device math functions (sinf,
** sqrt, fabs, isnan, signbit, ... with their C++ float overloads); this adds the C header's
** macros: INFINITY, NAN, HUGE_VAL*, the FP_* classes and POSIX's M_* constants. */
#ifndef CUJIT_STD_MATH_H
#define CUJIT_STD_MATH_H
/* Bit patterns, so that they are constant expressions (NVRTC has no __builtin_huge_valf). */
#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#endif
#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#endif
#ifndef HUGE_VALL
#define HUGE_VALL HUGE_VAL
#endif
#ifndef MAXFLOAT
#define MAXFLOAT 3.40282346638528859812e+38F
#endif
#ifndef FP_NAN
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#endif
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
#endif
