/*
** test_math_defs.c -- the math functions CUDA has beyond C++ (sinpi, cospi, sincospi, normcdf,
** rsqrt, rcbrt, __saturatef), float and double, against their definitions within the error the
** CUDA Math API documents for each (its table of maximum ulp errors), and exact where the
** function's value is exact: sinpi of an integer and cospi of a half-integer are 0, sinpi of a
** half-integer is +-1, whatever the argument's size (x is reduced exactly before pi multiplies
** it). The references are computed here in long double from the exactly reduced argument. On a GPU
** when there is one, else on the CPU device (kernels_src/cujit/cpu_math.h).
*/
#include <criterion/criterion.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(math_defs, .init = cj_fixture_open, .fini = cj_fixture_close);

static const long double pi_l = 3.141592653589793238462643383279502884L;

/* sin(pi x) and cos(pi x) from x mod 2, which fmodl computes exactly. */
static long double ref_sinpi(long double x) {
  return sinl(pi_l * fmodl(x, 2.0L));
}
static long double ref_cospi(long double x) {
  return cosl(pi_l * fmodl(x, 2.0L));
}

/* How many units in the last place of a float (bits 24) or double (53) `got` is from `want`;
** a zero wanted is met only by a zero. */
static double ulps(long double got, long double want, int bits) {
  if (want == 0) return got == 0 ? 0 : INFINITY;
  int e;
  frexpl(want, &e);
  return (double)(fabsl(got - want) / ldexpl(1.0L, e - bits));
}

/* Whether `got` is sinpi(x) (cospi(x) when `cos`) within `bound` ulp of a float (bits 24) or
** double (53), exactly 0 where the value is (sin at integers, cos at half-integers: there the
** reference's last bits are pi's rounding), NaN for an infinite x; else says why. */
static int within(const char *fn, const char *suffix, long double x, long double got, int cos,
                  int bits, double bound) {
  static int said;
  long double want = cos ? ref_cospi(x) : ref_sinpi(x), twice = 2 * x;
  int ok;
  if (isinf(x)) {
    ok = isnan(got);
  } else {
    if (cos ? twice == floorl(twice) && x != floorl(x) : x == floorl(x)) want = 0;
    ok = ulps(got, want, bits) <= bound;
  }
  if (!ok && said++ < 30)
    cr_log_error("%s%s(%.17Lg) = %.17Lg, want %.17Lg (%g ulp; the Math API's bound %g)", fn, suffix,
                 x, got, want, ulps(got, want, bits), bound);
  return ok;
}

enum { N = 40 };

/* Integers, half-integers, quarters, near-integers; small, near 2^23 (floats' last
** fraction bit) and, for doubles, past 2^30 and near 2^52. */
static const double args[N] = {0.0,
                               -0.0,
                               1.0,
                               -1.0,
                               2.0,
                               3.0,
                               -7.0,
                               0.5,
                               -0.5,
                               1.5,
                               2.5,
                               -3.5,
                               0.25,
                               0.75,
                               -1.25,
                               1.75,
                               1e-3,
                               0.999,
                               1.001,
                               1.0 / 3,
                               100.0,
                               1000.5,
                               12345.25,
                               8388607.5,
                               8388608.0,
                               4194303.75,
                               -65537.5,
                               16777215.0,
                               1073741825.0,
                               1073741824.25,
                               -1073741824.5,
                               4503599627370495.5,
                               4503599627370496.0,
                               9007199254740991.0,
                               1e300,
                               -1e18,
                               0x1.fffffffffffffp+51,
                               33.333,
                               -0.125,
                               6.5};

/* sinpi, cospi, sincospi's two, for float (f) and double (d), 8 a value. */
static const char kernel_body[] = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "if (i >= n) return;\n"
                                  "float xf = (float)x[i]; double xd = x[i];\n"
                                  "f[4 * i] = sinpif(xf); f[4 * i + 1] = cospif(xf);\n"
                                  "sincospif(xf, &f[4 * i + 2], &f[4 * i + 3]);\n"
                                  "d[4 * i] = sinpi(xd); d[4 * i + 1] = cospi(xd);\n"
                                  "sincospi(xd, &d[4 * i + 2], &d[4 * i + 3]);";

Test(math_defs, sinpi_and_cospi_are_exact_at_integers_and_halves_at_any_size) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "pi_fns(const double *x, float *f, double *d, int n)",
                                kernel_body, NULL, NULL, &k));
  cujit_buffer *dx = cj_test_upload(args, sizeof args, CUJIT_F64);
  cujit_buffer *df = cj_test_upload(NULL, 4 * N * sizeof(float), CUJIT_F32);
  cujit_buffer *dd = cj_test_upload(NULL, 4 * N * sizeof(double), CUJIT_F64);
  cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {N, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(df), CUJIT_ARG_BUF(dd), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &c, a, 4));
  float f[4 * N];
  double d[4 * N];
  cj_test_download(f, df, sizeof f);
  cj_test_download(d, dd, sizeof d);
  static const char *const name[] = {"sinpi", "cospi", "sincospi's sin", "sincospi's cos"};
  int wrong = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < 4; j++) {
      wrong += !within(name[j], "f", (float)args[i], f[4 * i + j], j % 2, 24, 1);
      wrong += !within(name[j], "", args[i], d[4 * i + j], j % 2, 53, 2);
    }
  cr_expect_eq(wrong, 0,
               "%d values outside the Math API's bounds (the first 30 above; the Math API's "
               "bounds: 1 ulp for the float forms, 2 for the double)",
               wrong);
  /* sinpi(-0) keeps the sign, as sin(-0) does */
  cr_expect(signbit(f[4]) && signbit(d[4]), "sinpi(-0) = %g, %g: want -0", f[4], d[4]);
  cujit_buffer_free(dx);
  cujit_buffer_free(df);
  cujit_buffer_free(dd);
  cujit_kernel_free(k);
}

/* normcdf through erfc, whose relative error is its argument's times about 2t^2: the rounding of
** -x/sqrt(2) must not reach the result (5 ulp, the Math API's bound for both widths), far into the
** tail; rsqrt and rcbrt at their special values; __saturatef's clamp, NaN to 0. */
Test(math_defs, normcdf_rsqrt_rcbrt_saturate) {
  CJ_NEED_DEVICE(engine);
  static const float xs[] = {-12.0f, -10.0f, -7.5f, -5.0f, -3.3f, -1.0f, -0.1f,  0.0f,
                             0.5f,   1.7f,   3.0f,  5.5f,  9.0f,  -9.0f, -11.0f, -6.25f};
  static const double xd[] = {-37.0, -30.0, -25.3, -20.0, -12.7,      -8.0,  -3.0,  -1e-3,
                              0.0,   2.0,   6.0,   9.0,   -30.000001, -26.5, -15.0, -5.5};
  enum { M = sizeof xs / sizeof xs[0] };
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine, "tail(const float *x, float *o, const double *xd, double *od, int n)",
      "int i = threadIdx.x; if (i < n) o[i] = normcdff(x[i]), od[i] = normcdf(xd[i]);", NULL, NULL,
      &k));
  cujit_buffer *dx = cj_test_upload(xs, sizeof xs, CUJIT_F32);
  cujit_buffer *dout = cj_test_upload(NULL, sizeof xs, CUJIT_F32);
  cujit_buffer *dxd = cj_test_upload(xd, sizeof xd, CUJIT_F64);
  cujit_buffer *doutd = cj_test_upload(NULL, sizeof xd, CUJIT_F64);
  cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {M, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dout), CUJIT_ARG_BUF(dxd), CUJIT_ARG_BUF(doutd),
                   CUJIT_ARG_I(M)};
  EXPECT_OK(cujit_launch(k, &c, a, 5));
  float got[M];
  double gotd[M];
  cj_test_download(got, dout, sizeof got);
  cj_test_download(gotd, doutd, sizeof gotd);
  for (int i = 0; i < M; i++) {
    long double want = 0.5L * erfcl(-(long double)xs[i] / sqrtl(2.0L));
    cr_expect(ulps(got[i], want, 24) <= 5, "normcdff(%g) = %.9g, want %.9Lg (%g ulp)", xs[i],
              got[i], want, ulps(got[i], want, 24));
    want = 0.5L * erfcl(-(long double)xd[i] / sqrtl(2.0L));
    cr_expect(ulps(gotd[i], want, 53) <= 5, "normcdf(%.17g) = %.17g, want %.17Lg (%g ulp)", xd[i],
              gotd[i], want, ulps(gotd[i], want, 53));
  }
  cujit_buffer_free(dxd);
  cujit_buffer_free(doutd);
  cujit_kernel_free(k);
  /* the special values, exact */
  EXPECT_OK(cujit_kernel_define(
      engine, "specials(float *o)",
      "const float z = 0.0f, inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);\n"
      "o[0] = rsqrtf(z); o[1] = rsqrtf(-z); o[2] = rsqrtf(inf); o[3] = rcbrtf(z);\n"
      "o[4] = rcbrtf(-z); o[5] = rcbrtf(-inf); o[6] = __saturatef(nan); o[7] = __saturatef(2.5f);\n"
      "o[8] = __saturatef(-3.0f); o[9] = __saturatef(0.25f); o[10] = __saturatef(inf);\n"
      "o[11] = __saturatef(-inf);",
      NULL, NULL, &k));
  float o[12];
  cujit_buffer *dsp = cj_test_upload(NULL, sizeof o, CUJIT_F32);
  cujit_launch_config one = {.size = sizeof one, .grid = {1, 1, 1}, .block = {1, 1, 1}};
  cujit_arg sa[] = {CUJIT_ARG_BUF(dsp)};
  EXPECT_OK(cujit_launch(k, &one, sa, 1));
  cj_test_download(o, dsp, sizeof o);
  const float want[12] = {INFINITY, -INFINITY, 0, INFINITY, -INFINITY, -0.0f, 0, 1, 0, 0.25f, 1, 0};
  for (int i = 0; i < 12; i++)
    cr_expect(memcmp(&o[i], &want[i], sizeof(float)) == 0, "specials[%d] = %g, want %g", i, o[i],
              want[i]);
  cujit_buffer_free(dsp);
  cujit_buffer_free(dx);
  cujit_buffer_free(dout);
  cujit_kernel_free(k);
}

/* __frsqrt_rn is 1/sqrt(x) rounded once, to nearest even (the Math API: "in round-to-nearest-even
** mode"; 0 ulp): 1.0f / sqrtf(x) rounds twice. Floats of every exponent, from the wide reference
** in long double rounded to float (64 bits then 24: it could differ only for a value within
** 2^-64 of a float's midpoint). */
Test(math_defs, frsqrt_rn_rounds_once) {
  CJ_NEED_DEVICE(engine);
  enum { R = 1 << 16 };
  static float x[R], got[R];
  for (int i = 0; i < R; i++) { /* exponents -126..127, the mantissa's bits mixed */
    uint32_t bits = (uint32_t)(1 + i % 254) << 23 | ((uint32_t)i * 2654435761u >> 9);
    memcpy(&x[i], &bits, sizeof bits);
  }
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "frsqrt(const float *x, float *o, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) o[i] = __frsqrt_rn(x[i]);",
                                NULL, NULL, &k));
  cujit_buffer *dx = cj_test_upload(x, sizeof x, CUJIT_F32);
  cujit_buffer *dout = cj_test_upload(NULL, sizeof got, CUJIT_F32);
  cujit_launch_config c = {.size = sizeof c, .grid = {R / 256, 1, 1}, .block = {256, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dout), CUJIT_ARG_I(R)};
  EXPECT_OK(cujit_launch(k, &c, a, 3));
  cj_test_download(got, dout, sizeof got);
  int wrong = 0;
  for (int i = 0; i < R; i++) {
    float want = (float)(1.0L / sqrtl((long double)x[i]));
    if (got[i] != want && wrong++ < 10)
      cr_log_error("__frsqrt_rn(%a) = %a, rounded once %a", (double)x[i], (double)got[i],
                   (double)want);
  }
  cr_expect_eq(wrong, 0, "%d of %d not rounded once (the first 10 above)", wrong, R);
  cujit_buffer_free(dx);
  cujit_buffer_free(dout);
  cujit_kernel_free(k);
}

/* --- the directed roundings -------------------------------------------------------------------
** __fadd_rz, _ru, _rd and the other operations (sub, mul, div, fma; float and double) round as
** IEEE 754's mode of that name: the expected values are the host's own operations under
** fesetround (volatile operands and result, so that each runs between the mode's changes). */

enum { OPS = 5, MODES = 4, DR = 24 };
static const int modes[MODES] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
static const char *const mode_name[MODES] = {"rn", "rz", "ru", "rd"};
static const char *const op_name[OPS] = {"add", "sub", "mul", "div", "fma"};

static float host_f(int op, int mode, float a, float b, float c) {
  volatile float va = a, vb = b, vc = c, r;
  fesetround(modes[mode]);
  switch (op) {
  case 0:
    r = va + vb;
    break;
  case 1:
    r = va - vb;
    break;
  case 2:
    r = va * vb;
    break;
  case 3:
    r = va / vb;
    break;
  default:
    r = fmaf(va, vb, vc);
  }
  fesetround(FE_TONEAREST);
  return r;
}

static double host_d(int op, int mode, double a, double b, double c) {
  volatile double va = a, vb = b, vc = c, r;
  fesetround(modes[mode]);
  switch (op) {
  case 0:
    r = va + vb;
    break;
  case 1:
    r = va - vb;
    break;
  case 2:
    r = va * vb;
    break;
  case 3:
    r = va / vb;
    break;
  default:
    r = fma(va, vb, vc);
  }
  fesetround(FE_TONEAREST);
  return r;
}

#define DR_ROW(s, i)                                                                               \
  "f[" #i " * 5 + 0] = __fadd_" s "(a, b); f[" #i " * 5 + 1] = __fsub_" s "(a, b);\n"              \
  "f[" #i " * 5 + 2] = __fmul_" s "(a, b); f[" #i " * 5 + 3] = __fdiv_" s "(a, b);\n"              \
  "f[" #i " * 5 + 4] = __fmaf_" s "(a, b, c);\n"                                                   \
  "d[" #i " * 5 + 0] = __dadd_" s "(x, y); d[" #i " * 5 + 1] = __dsub_" s "(x, y);\n"              \
  "d[" #i " * 5 + 2] = __dmul_" s "(x, y); d[" #i " * 5 + 3] = __ddiv_" s "(x, y);\n"              \
  "d[" #i " * 5 + 4] = __fma_" s "(x, y, z);\n"

Test(math_defs, directed_roundings_round_as_their_mode) {
  CJ_NEED_DEVICE(engine);
  /* exact and inexact results of both signs, x - x (rd gives -0), overflow (rz and the mode
  ** toward zero give the largest finite value), subnormal results, then random values */
  static float fa[DR] = {1, 1, -1, 3, 0.1f, 5, -5, FLT_MAX, -FLT_MAX, 1e-30f, 1.5f, -0.0f},
               fb[DR] = {0x1p-30f, -0x1p-30f, 0x1p-30f, 7, 3, 5, 0.3f, FLT_MAX, 3, 1e-10f, 1.5f, 0},
               fc[DR] = {1, -1, 0x1p-40f, -21, 1e-9f, -25, 1.5f, -FLT_MAX, 0, 0, -2.25f, 0};
  static double da[DR] = {1, 1, -1, 3, 0.1, 5, -5, DBL_MAX, -DBL_MAX, 1e-200, 1.5, -0.0},
                db[DR] = {0x1p-60, -0x1p-60, 0x1p-60, 7, 3, 5, 0.3, DBL_MAX, 3, 1e-160, 1.5, 0},
                dc[DR] = {1, -1, 0x1p-80, -21, 1e-19, -25, 1.5, -DBL_MAX, 0, 0, -2.25, 0};
  for (int i = 12; i < DR; i++) {
    uint64_t r = cj_test_rand64(), q = cj_test_rand64();
    fa[i] = (float)(int32_t)r / 3.0f, fb[i] = (float)(int32_t)(r >> 32) / 7e5f;
    fc[i] = (float)(int32_t)q * 1e-3f;
    da[i] = (double)(int64_t)q / 3.0, db[i] = (double)(int64_t)r / 7e12, dc[i] = (double)r;
  }
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine,
      "directed(const float *fa, const float *fb, const float *fc, const double *da, "
      "const double *db, const double *dc, float *fo, double *dout)",
      "int i = threadIdx.x;\n"
      "float a = fa[i], b = fb[i], c = fc[i]; double x = da[i], y = db[i], z = dc[i];\n"
      "float *f = fo + i * 20; double *d = dout + i * 20;\n" DR_ROW("rn", 0) DR_ROW("rz", 1)
          DR_ROW("ru", 2) DR_ROW("rd", 3),
      NULL, NULL, &k));
  cujit_buffer *b[6] = {
      cj_test_upload(fa, sizeof fa, CUJIT_F32), cj_test_upload(fb, sizeof fb, CUJIT_F32),
      cj_test_upload(fc, sizeof fc, CUJIT_F32), cj_test_upload(da, sizeof da, CUJIT_F64),
      cj_test_upload(db, sizeof db, CUJIT_F64), cj_test_upload(dc, sizeof dc, CUJIT_F64)};
  static float fo[DR][MODES][OPS];
  static double dout[DR][MODES][OPS];
  cujit_buffer *bfo = cj_test_upload(NULL, sizeof fo, CUJIT_F32);
  cujit_buffer *bdo = cj_test_upload(NULL, sizeof dout, CUJIT_F64);
  cujit_launch_config cfg = {.size = sizeof cfg, .grid = {1, 1, 1}, .block = {DR, 1, 1}};
  cujit_arg args[] = {CUJIT_ARG_BUF(b[0]), CUJIT_ARG_BUF(b[1]), CUJIT_ARG_BUF(b[2]),
                      CUJIT_ARG_BUF(b[3]), CUJIT_ARG_BUF(b[4]), CUJIT_ARG_BUF(b[5]),
                      CUJIT_ARG_BUF(bfo),  CUJIT_ARG_BUF(bdo)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 8));
  cj_test_download(fo, bfo, sizeof fo);
  cj_test_download(dout, bdo, sizeof dout);
  int wrong = 0, inexact = 0;
  for (int i = 0; i < DR; i++)
    for (int m = 0; m < MODES; m++)
      for (int op = 0; op < OPS; op++) {
        float wf = host_f(op, m, fa[i], fb[i], fc[i]);
        double wd = host_d(op, m, da[i], db[i], dc[i]);
        /* compared as bits: the sign of a zero is the mode's too; a NaN is any NaN (a GPU's
        ** is its canonical one, whatever the sign of the host's) */
        const int fnan = isnan(fo[i][m][op]) && isnan(wf),
                  dnan = isnan(dout[i][m][op]) && isnan(wd);
        if (!fnan && memcmp(&fo[i][m][op], &wf, sizeof wf) && wrong++ < 20)
          cr_log_error("__f%s_%s(%a, %a, %a) = %a, want %a", op_name[op], mode_name[m],
                       (double)fa[i], (double)fb[i], (double)fc[i], (double)fo[i][m][op],
                       (double)wf);
        if (!dnan && memcmp(&dout[i][m][op], &wd, sizeof wd) && wrong++ < 20)
          cr_log_error("__d%s_%s(%a, %a, %a) = %a, want %a", op_name[op], mode_name[m], da[i],
                       db[i], dc[i], dout[i][m][op], wd);
        inexact += m && (wf != host_f(op, 0, fa[i], fb[i], fc[i]));
      }
  cr_expect_eq(wrong, 0, "%d results not rounded as their mode (the first 20 above)", wrong);
  cr_expect_gt(inexact, 100, "the inputs test the modes: %d results differ from rn's", inexact);
  for (int i = 0; i < 6; i++) cujit_buffer_free(b[i]);
  cujit_buffer_free(bfo);
  cujit_buffer_free(bdo);
  cujit_kernel_free(k);
}

/* v (exact in long double) rounded to float or double in mode m (0 rn, 1 rz, 2 ru, 3 rd): the
** two neighbours around it, from the nearest one the host's conversion gives. */
static float round_f(long double v, int m) {
  float f = (float)v;
  if ((long double)f == v) return f;
  float lo = (long double)f < v ? f : nextafterf(f, -INFINITY);
  float hi = (long double)f > v ? f : nextafterf(f, INFINITY);
  return m == 0 ? f : m == 1 ? (v > 0 ? lo : hi) : m == 2 ? hi : lo;
}
static double round_d(long double v, int m) {
  double d = (double)v;
  if ((long double)d == v) return d;
  double lo = (long double)d < v ? d : nextafter(d, -INFINITY);
  double hi = (long double)d > v ? d : nextafter(d, INFINITY);
  return m == 0 ? d : m == 1 ? (v > 0 ? lo : hi) : m == 2 ? hi : lo;
}

#define CV_ROW(s, i)                                                                               \
  "f[" #i "] = __int2float_" s "((int)v); f[4 + " #i "] = __uint2float_" s "((unsigned)v);\n"      \
  "f[8 + " #i "] = __ll2float_" s "(v); f[12 + " #i "] = __ull2float_" s "(u);\n"                  \
  "f[16 + " #i "] = __double2float_" s "(x);\n"                                                    \
  "d[" #i "] = __ll2double_" s "(v); d[4 + " #i "] = __ull2double_" s "(u);\n"

/* The conversions that round, in each mode: integers of 25 to 64 bits (past float's 24 and
** double's 53), halfway and not, of both signs; doubles past float's range and below its least
** subnormal, of both signs. */
Test(math_defs, conversions_round_as_their_mode) {
  CJ_NEED_DEVICE(engine);
  enum { CN = 32 };
  static long long iv[CN] = {0,
                             1,
                             -1,
                             (1 << 24) + 1,
                             -((1 << 24) + 1),
                             (1 << 24) + 3,
                             0x7fffffff,
                             INT32_MIN,
                             -0x7ffffffb,
                             (1ll << 53) + 1,
                             -(1ll << 53) - 1,
                             (1ll << 53) + 3,
                             INT64_MAX,
                             INT64_MIN,
                             -(1ll << 40) - 1};
  static double xv[CN] = {0,        1e-50,         -1e-50,         DBL_MAX,
                          -DBL_MAX, 0x1.000001p0,  -0x1.000001p0,  0.1,
                          -0.1,     0x1.0000018p0, 0x1p-149 * 1.5, -0x1p-149 * 0.5,
                          3.4e38,   -3.4028235e38, 1.0 / 3};
  for (int i = 15; i < CN; i++) {
    uint64_t r = cj_test_rand64();
    iv[i] = (long long)(r >> (i % 40));
    xv[i] = (double)(int64_t)r * 0x1p-40;
  }
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine, "convert(const long long *iv, const double *xv, float *fo, double *dout)",
      "int i = threadIdx.x; long long v = iv[i]; unsigned long long u = (unsigned long long)v;\n"
      "double x = xv[i]; float *f = fo + 20 * i; double *d = dout + 8 * i;\n" CV_ROW("rn", 0)
          CV_ROW("rz", 1) CV_ROW("ru", 2) CV_ROW("rd", 3),
      NULL, NULL, &k));
  cujit_buffer *bi = cj_test_upload(iv, sizeof iv, CUJIT_I64);
  cujit_buffer *bx = cj_test_upload(xv, sizeof xv, CUJIT_F64);
  static float fo[CN][5][4];
  static double dout[CN][2][4];
  cujit_buffer *bf = cj_test_upload(NULL, sizeof fo, CUJIT_F32);
  cujit_buffer *bd = cj_test_upload(NULL, sizeof dout, CUJIT_F64);
  cujit_launch_config cfg = {.size = sizeof cfg, .grid = {1, 1, 1}, .block = {CN, 1, 1}};
  cujit_arg args[] = {CUJIT_ARG_BUF(bi), CUJIT_ARG_BUF(bx), CUJIT_ARG_BUF(bf), CUJIT_ARG_BUF(bd)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 4));
  cj_test_download(fo, bf, sizeof fo);
  cj_test_download(dout, bd, sizeof dout);
  static const char *const fname[5] = {"__int2float", "__uint2float", "__ll2float", "__ull2float",
                                       "__double2float"};
  int wrong = 0;
  for (int i = 0; i < CN; i++) {
    long long v = iv[i];
    const long double src[5] = {(int)v, (unsigned)v, v, (unsigned long long)v, xv[i]};
    for (int m = 0; m < MODES; m++) {
      for (int j = 0; j < 5; j++) {
        float want = round_f(src[j], m);
        if (memcmp(&fo[i][j][m], &want, sizeof want) && wrong++ < 20)
          cr_log_error("%s_%s(%.21Lg) = %a, want %a", fname[j], mode_name[m], src[j],
                       (double)fo[i][j][m], (double)want);
      }
      for (int j = 0; j < 2; j++) {
        double want = round_d(src[2 + j], m);
        if (memcmp(&dout[i][j][m], &want, sizeof want) && wrong++ < 20)
          cr_log_error("%s_%s(%.21Lg) = %a, want %a", j ? "__ull2double" : "__ll2double",
                       mode_name[m], src[2 + j], dout[i][j][m], want);
      }
    }
  }
  cr_expect_eq(wrong, 0, "%d conversions not rounded as their mode (the first 20 above)", wrong);
  cujit_buffer_free(bi);
  cujit_buffer_free(bx);
  cujit_buffer_free(bf);
  cujit_buffer_free(bd);
  cujit_kernel_free(k);
}

/* __fdividef's special range (the Math API): 0 for 2^126 < |y| < 2^128 and a finite x, NaN for an
** infinite one; at 2^126 itself and elsewhere the quotient (within the intrinsic's 2 ulp). */
Test(math_defs, fdividef_gives_zero_past_2_to_the_126) {
  CJ_NEED_DEVICE(engine);
  static const float x[] = {1, -3, 1e30f, INFINITY, 1, 6, -1, 1e-30f};
  static const float y[] = {0x1p127f, 3e38f, 0x1.000002p126f, 0x1p127f, 0x1p126f, 3, -0x1p125f, 7};
  enum { M = sizeof x / sizeof x[0] };
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "fdiv(const float *x, const float *y, float *o, int n)",
                                "int i = threadIdx.x; if (i < n) o[i] = __fdividef(x[i], y[i]);",
                                NULL, NULL, &k));
  cujit_buffer *bx = cj_test_upload(x, sizeof x, CUJIT_F32);
  cujit_buffer *by = cj_test_upload(y, sizeof y, CUJIT_F32);
  cujit_buffer *bo = cj_test_upload(NULL, sizeof x, CUJIT_F32);
  cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {M, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(bx), CUJIT_ARG_BUF(by), CUJIT_ARG_BUF(bo), CUJIT_ARG_I(M)};
  EXPECT_OK(cujit_launch(k, &c, a, 4));
  float got[M];
  cj_test_download(got, bo, sizeof got);
  for (int i = 0; i < M; i++) {
    int special = fabsf(y[i]) > 0x1p126f;
    long double want = special ? (isinf(x[i]) ? NAN : 0) : (long double)x[i] / y[i];
    int ok = isnan(want) ? isnan(got[i]) : ulps(got[i], want, 24) <= 2;
    cr_expect(ok, "__fdividef(%a, %a) = %a, want %La", (double)x[i], (double)y[i], (double)got[i],
              want);
  }
  cujit_buffer_free(bx), cujit_buffer_free(by), cujit_buffer_free(bo);
  cujit_kernel_free(k);
}

/* --- the inverses of erf, erfc and normcdf -----------------------------------------------------
** References by bisection in long double on erfl or erfcl (whichever is well conditioned at the
** root: erfl near 0, erfcl in the tails), bounds the Math API's: erfinvf 2 ulp, erfcinvf 4,
** normcdfinvf 5; erfinv 5, erfcinv 6, normcdfinv 8. */

/* The x with erfc(x) = q (0 < q < 2), or erf(x) = 1 - q where that is better conditioned. */
static long double ref_erfcinv(long double q) {
  if (q > 1.5L) return -ref_erfcinv(2 - q); /* 2 - q exact: erfcl near 2 would lose its tail */
  int by_erf = q >= 0.5L && q <= 1.5L;
  long double lo = -30, hi = 30;
  for (int i = 0; i < 200; i++) {
    long double mid = (lo + hi) / 2;
    /* erfc falls as x grows; erf rises */
    int root_above = by_erf ? erfl(mid) < 1 - q : erfcl(mid) > q;
    if (root_above)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

Test(math_defs, erfinv_erfcinv_normcdfinv_within_their_bounds) {
  CJ_NEED_DEVICE(engine);
  enum { IN = 40 };
  static double q[IN] = {1e-300, 1e-100, 1e-40,   1e-20,     1e-10,  1e-5,   0.001,
                         0.1,    0.3,    0.4999,  0.5,       0.5001, 0.7,    0.9,
                         0.99,   1,      1.01,    1.3,       1.5,    1.5001, 1.7,
                         1.9,    1.999,  1.99999, 2 - 1e-12, 3e-8,   2e-38,  1.2e-45};
  for (int i = 28; i < IN; i++) q[i] = (double)(cj_test_rand64() >> 11) * 0x1p-52;
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine, "inverses(const double *q, float *f, double *d, int n)",
      "int i = threadIdx.x; if (i >= n) return;\n"
      "double x = q[i]; float xf = (float)x;\n"
      "f[3 * i] = erfcinvf(xf); f[3 * i + 1] = erfinvf(1.0f - xf);\n"
      "f[3 * i + 2] = normcdfinvf(0.5f * xf);\n"
      "d[3 * i] = erfcinv(x); d[3 * i + 1] = erfinv(1.0 - x); d[3 * i + 2] = normcdfinv(0.5 * x);",
      NULL, NULL, &k));
  cujit_buffer *bq = cj_test_upload(q, sizeof q, CUJIT_F64);
  static float f[3 * IN];
  static double d[3 * IN];
  cujit_buffer *bf = cj_test_upload(NULL, sizeof f, CUJIT_F32);
  cujit_buffer *bd = cj_test_upload(NULL, sizeof d, CUJIT_F64);
  cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {IN, 1, 1}};
  cujit_arg a[] = {CUJIT_ARG_BUF(bq), CUJIT_ARG_BUF(bf), CUJIT_ARG_BUF(bd), CUJIT_ARG_I(IN)};
  EXPECT_OK(cujit_launch(k, &c, a, 4));
  cj_test_download(f, bf, sizeof f);
  cj_test_download(d, bd, sizeof d);
  static const char *const name[3] = {"erfcinv", "erfinv", "normcdfinv"};
  static const double bound_f[3] = {4, 2, 5}, bound_d[3] = {6, 5, 8};
  int wrong = 0;
  for (int i = 0; i < IN; i++) {
    long double qf = (float)q[i], qd = q[i];
    /* each function's argument as the kernel rounded it, turned into the erfc argument of the
    ** same root: q for erfcinv, 1 - (1 - q) for erfinv, 2 (q / 2) for normcdfinv, whose root is
    ** -sqrt(2) times erfcinv's; 0 and 2 give infinities */
    long double in_f[3] = {qf, 1 - (long double)(float)(1.0f - (float)qf),
                           2 * (long double)(0.5f * (float)qf)};
    long double in_d[3] = {qd, 1 - (long double)(1.0 - q[i]), 2 * (long double)(0.5 * q[i])};
    for (int j = 0; j < 3; j++) {
      long double wf = ref_erfcinv(in_f[j]), wd = ref_erfcinv(in_d[j]);
      if (j == 2) wf *= -sqrtl(2), wd *= -sqrtl(2);
      /* the function's own argument, for the messages */
      long double arg_f = j == 2 ? in_f[j] / 2 : j == 1 ? 1 - in_f[j] : in_f[j];
      long double arg_d = j == 2 ? in_d[j] / 2 : j == 1 ? 1 - in_d[j] : in_d[j];
      if (in_f[j] == 1) wf = 0; /* the roots at 0: bisection leaves 2^-200 */
      if (in_d[j] == 1) wd = 0;
      int ok_f = in_f[j] == 0 || in_f[j] == 2 ? isinf(f[3 * i + j])
                                              : ulps(f[3 * i + j], wf, 24) <= bound_f[j];
      int ok_d = in_d[j] == 0 || in_d[j] == 2 ? isinf(d[3 * i + j])
                                              : ulps(d[3 * i + j], wd, 53) <= bound_d[j];
      if (!ok_f && wrong++ < 20)
        cr_log_error("%sf of %.9Lg: %.9g, want %.9Lg (%g ulp)", name[j], arg_f,
                     (double)f[3 * i + j], wf, ulps(f[3 * i + j], wf, 24));
      if (!ok_d && wrong++ < 20)
        cr_log_error("%s of %.17Lg: %.17g, want %.17Lg (%g ulp)", name[j], arg_d, d[3 * i + j], wd,
                     ulps(d[3 * i + j], wd, 53));
    }
  }
  cr_expect_eq(wrong, 0, "%d values outside the Math API's bounds (the first 20 above)", wrong);
  cujit_buffer_free(bq), cujit_buffer_free(bf), cujit_buffer_free(bd);
  cujit_kernel_free(k);
}
