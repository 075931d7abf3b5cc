/*
** test_cpu_semantics.c -- the CPU device computes what a GPU computes where C++ on the host
** would not: fast math belongs to one kernel (the host and other kernels keep denormals), integer
** division by zero and INT_MIN / -1 give the GPU's values instead of SIGFPE, C++ exceptions are
** device faults, the conversion intrinsics saturate, and static shared memory past a GPU's limit
** is refused. The values expected are those an H200 gave (CUDA 13, sm_90). Needs only g++: runs
** on CI. The names NVRTC takes that the host's headers also declare: test_cpu_names.c.
*/
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case_engine.h"
#include "cujit.h"
#include "expect.h"
#include "scratch.h"

static cujit_device *device(void) {
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  return dev;
}

/* --- fast math ---------------------------------------------------------------------------------
 */

/* The host thread's control register, where flush-to-zero lives, without the sticky exception
** flags (0 elsewhere). */
static unsigned host_fp_control(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_stmxcsr() & ~0x3fu;
#else
  return 0;
#endif
}

/* Whether this thread's arithmetic keeps denormals, float and double. */
static int host_keeps_denormals(void) {
  volatile float f = FLT_MIN;
  volatile double d = DBL_MIN;
  float hf = f * 0.5f;
  double hd = d * 0.5;
  volatile float df = FLT_MIN / 4; /* a denormal input, which DAZ would read as 0 */
  return hf > 0 && hd > 0 && df * 2.0f > 0;
}

enum { FM_BLOCKS = 64, FM_THREADS = 32, FM_N = FM_BLOCKS * FM_THREADS };

/* Runs k(o, d, FLT_MIN, DBL_MIN, 0) over every worker and returns how many of o and of d are 0. */
static void halve(cujit_kernel *k, cujit_buffer *o, cujit_buffer *d, int *zf, int *zd) {
  static float ho[FM_N];
  static double hd[FM_N];
  cujit_launch_config cfg = launch_1d(FM_BLOCKS, FM_THREADS);
  cujit_arg args[] = {CUJIT_ARG_BUF(o), CUJIT_ARG_BUF(d), CUJIT_ARG_F(FLT_MIN),
                      CUJIT_ARG_F(DBL_MIN), CUJIT_ARG_I(0)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 5));
  EXPECT_OK(cujit_memcpy_dtoh(ho, o, 0, sizeof ho, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(hd, d, 0, sizeof hd, NULL));
  *zf = *zd = 0;
  for (int i = 0; i < FM_N; i++) *zf += ho[i] == 0, *zd += hd[i] == 0;
}

static const char halve_body[] = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "o[i] = a * 0.5f; d[i] = b * 0.5;\n"
                                 "if (crash) *(volatile int *)0 = 1;";

/* g++ links crtfastmath.o into a -ffast-math object, and its constructor set flush-to-zero for
** the thread that loaded it: the host's, and so every later kernel's run on that thread. */
Test(fast_math, belongs_to_its_kernel, .init = open_cpu, .fini = close_engine) {
  unsigned control = host_fp_control();
  cr_assert(host_keeps_denormals());
  cujit_compile_options fast = CUJIT_COMPILE_OPTIONS_INIT;
  fast.fast_math = 1;
  cujit_kernel *plain = NULL, *fastk = NULL;
  const char *sig = "halve(float *o, double *d, float a, double b, int crash)";
  EXPECT_OK(cujit_kernel_define(engine, sig, halve_body, NULL, NULL, &plain));
  EXPECT_OK(cujit_kernel_define(engine,
                                "fasthalve(float *o, double *d, float a, double b, "
                                "int crash)",
                                halve_body, NULL, &fast, &fastk));
  cujit_buffer *o = NULL, *d = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, FM_N * sizeof(float), CUJIT_F32, &o));
  EXPECT_OK(cujit_buffer_alloc(engine, FM_N * sizeof(double), CUJIT_F64, &d));
  int zf, zd;
  halve(plain, o, d, &zf, &zd);
  cr_expect(zf == 0 && zd == 0, "plain kernel before: %d float and %d double zeros", zf, zd);
  halve(fastk, o, d, &zf, &zd);
  /* A GPU's fast math flushes float denormals (-ftz=true); the host's register flushes doubles
  ** too, as docs/cpu.md says. */
  cr_expect_eq(zf, FM_N, "fast kernel: %d of %d float results flushed", zf, FM_N);
  cr_expect_eq(zd, FM_N, "fast kernel: %d of %d double results flushed", zd, FM_N);
  halve(plain, o, d, &zf, &zd);
  cr_expect(zf == 0 && zd == 0, "plain kernel after: %d float and %d double zeros", zf, zd);
  cr_expect(host_keeps_denormals(), "the host flushes denormals after a fast-math kernel");
  cr_expect_eq(host_fp_control(), control, "host control register %#x, was %#x", host_fp_control(),
               control);
  /* A fast-math kernel that crashes leaves its worker by a jump past its own restore. */
  cujit_launch_config cfg = launch_1d(FM_BLOCKS, FM_THREADS);
  cujit_arg args[] = {CUJIT_ARG_BUF(o), CUJIT_ARG_BUF(d), CUJIT_ARG_F(FLT_MIN),
                      CUJIT_ARG_F(DBL_MIN), CUJIT_ARG_I(1)};
  EXPECT_OK(cujit_launch(fastk, &cfg, args, 5));
  EXPECT_FAIL(cujit_device_synchronize(device()), CUJIT_ERROR_DEVICE_FAULT, "fasthalve");
  EXPECT_OK(cujit_device_reset(device())); /* which lost the buffers */
  EXPECT_OK(cujit_buffer_alloc(engine, FM_N * sizeof(float), CUJIT_F32, &o));
  EXPECT_OK(cujit_buffer_alloc(engine, FM_N * sizeof(double), CUJIT_F64, &d));
  halve(plain, o, d, &zf, &zd);
  cr_expect(zf == 0 && zd == 0, "plain kernel after a crash: %d float and %d double zeros", zf, zd);
  cr_expect(host_keeps_denormals());
  cr_expect_eq(host_fp_control(), control);
  cujit_buffer_free(o);
  cujit_buffer_free(d);
  cujit_kernel_free(plain);
  cujit_kernel_free(fastk);
}

/* --- integer division ----------------------------------------------------------------------- */

/* Each pair at every width: what an H200 computed for this kernel (the 32-bit results stored
** zero-extended). Division by zero and MIN / -1 faulted the CPU device with SIGFPE. */
Test(integer_division, gives_the_gpu_values, .init = open_cpu, .fini = close_engine) {
  static const long long in[] = {0,         7,         -7, 1ll << 32, (1ll << 32) - 1, INT32_MIN,
                                 INT64_MIN, 1ll << 40, 5,  0,         INT32_MIN,       INT64_MIN};
  static const long long den[] = {0, 0, 0, 0, 0, 0, 0, 0, 1ll << 32, 1ll << 32, -1, -1};
  static const unsigned long long want[][8] = {
      {0xffffffff, 0, 0xffffffff, 0, 0xffffffff, 0, 0xffffffff, 0},
      {0xffffffff, 7, 0xffffffff, 7, 0xffffffff, 7, 0xffffffff, 7},
      {0xffffffff, 0xfffffff9, 0xffffffff, 0xfffffff9, ~0ull, ~6ull, ~0ull, ~6ull},
      {0xffffffff, 0, 0xffffffff, 0, ~0ull, 1ull << 32, ~0ull, 1ull << 32},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
       0xffffffff},
      {0xffffffff, 0x80000000, 0xffffffff, 0x80000000, ~0ull, 0xffffffff80000000ull, ~0ull,
       0xffffffff80000000ull},
      {0xffffffff, 0, 0xffffffff, 0, ~0ull, 1ull << 63, ~0ull, 1ull << 63},
      {0xffffffff, 0, 0xffffffff, 0, ~0ull, 1ull << 40, ~0ull, 1ull << 40},
      {0xffffffff, 5, 0xffffffff, 5, 0, 5, 0, 5},
      {0xffffffff, 0, 0xffffffff, 0, 0, 0, 0, 0},
      {0x80000000, 0, 0, 0x80000000, 0x80000000, 0, 0, 0xffffffff80000000ull},
      {0, 0, 0, 0, 1ull << 63, 0, 0, 1ull << 63},
  };
  enum { N = sizeof in / sizeof in[0] };
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(
      engine, "divide(const long long *in, const long long *den, unsigned long long *o, int n)",
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "if (i >= n) return;\n"
      "long long a = in[i], b = den[i];\n"
      "unsigned long long *r = o + 8 * i;\n"
      "r[0] = (unsigned)((int)a / (int)b); r[1] = (unsigned)((int)a % (int)b);\n"
      "r[2] = (unsigned)a / (unsigned)b; r[3] = (unsigned)a % (unsigned)b;\n"
      "r[4] = a / b; r[5] = a % b;\n"
      "r[6] = (unsigned long long)a / (unsigned long long)b;\n"
      "r[7] = (unsigned long long)a % (unsigned long long)b;",
      NULL, NULL, &k));
  cujit_buffer *din = NULL, *dden = NULL, *dout = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof in, CUJIT_I64, &din));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof den, CUJIT_I64, &dden));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof want, CUJIT_U64, &dout));
  EXPECT_OK(cujit_memcpy_htod(din, 0, in, sizeof in, NULL));
  EXPECT_OK(cujit_memcpy_htod(dden, 0, den, sizeof den, NULL));
  cujit_launch_config cfg = launch_1d(3, 4); /* three blocks: more than one worker */
  cujit_arg args[] = {CUJIT_ARG_BUF(din), CUJIT_ARG_BUF(dden), CUJIT_ARG_BUF(dout), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 4));
  unsigned long long got[N][8];
  EXPECT_OK(cujit_memcpy_dtoh(got, dout, 0, sizeof got, NULL));
  static const char *const what[] = {"int /",       "int %",       "unsigned /", "unsigned %",
                                     "long long /", "long long %", "ull /",      "ull %"};
  for (int i = 0; i < N; i++)
    for (int j = 0; j < 8; j++)
      cr_expect_eq(got[i][j], want[i][j], "%lld %s %lld = %#llx, the GPU gives %#llx", in[i],
                   what[j], den[i], got[i][j], want[i][j]);
  EXPECT_OK(cujit_device_synchronize(device()));
  cujit_buffer_free(din);
  cujit_buffer_free(dden);
  cujit_buffer_free(dout);
  cujit_kernel_free(k);
}

/* 8- and 16-bit operands divide as int (C's promotions), then are stored narrow. */
Test(integer_division, narrow_types, .init = open_cpu, .fini = close_engine) {
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(
      engine, "narrow(signed char *c, unsigned char *uc, short *s, unsigned short *us, int z)",
      /* every operand from z: g++ rewrites a constant dividend's -7 / b as -(7 / b) */
      "signed char c7 = z + 7, cm = z - 7, cmin = z - 128, c0 = z, cm1 = z - 1;\n"
      "c[0] = c7 / c0; c[1] = c7 % c0; c[2] = cm / c0; c[3] = cm % c0;\n"
      "c[4] = cmin / cm1; c[5] = cmin % cm1;\n"
      "unsigned char u7 = z + 7, u255 = z + 255, u0 = z;\n"
      "uc[0] = u7 / u0; uc[1] = u7 % u0; uc[2] = u255 / u0; uc[3] = u255 % u0;\n"
      "short s7 = z + 7, smin = z - 32768, s0 = z, sm1 = z - 1;\n"
      "s[0] = s7 / s0; s[1] = s7 % s0; s[2] = smin / sm1; s[3] = smin % sm1;\n"
      "unsigned short w7 = z + 7, w0 = z;\n"
      "us[0] = w7 / w0; us[1] = w7 % w0;",
      NULL, NULL, &k));
  cujit_buffer *c = NULL, *uc = NULL, *s = NULL, *us = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 6, CUJIT_I8, &c));
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_U8, &uc));
  EXPECT_OK(cujit_buffer_alloc(engine, 8, CUJIT_I16, &s));
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_U16, &us));
  cujit_launch_config cfg = launch_1d(1, 1);
  cujit_arg args[] = {CUJIT_ARG_BUF(c), CUJIT_ARG_BUF(uc), CUJIT_ARG_BUF(s), CUJIT_ARG_BUF(us),
                      CUJIT_ARG_I(0)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 5));
  signed char hc[6];
  unsigned char huc[4];
  short hs[4];
  unsigned short hus[2];
  EXPECT_OK(cujit_memcpy_dtoh(hc, c, 0, sizeof hc, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(huc, uc, 0, sizeof huc, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(hs, s, 0, sizeof hs, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(hus, us, 0, sizeof hus, NULL));
  static const signed char want_c[6] = {-1, 7, -1, -7, -128, 0};
  static const unsigned char want_uc[4] = {255, 7, 255, 255};
  static const short want_s[4] = {-1, 7, -32768, 0};
  static const unsigned short want_us[2] = {65535, 7};
  for (int i = 0; i < 6; i++) cr_expect_eq(hc[i], want_c[i], "signed char [%d] = %d", i, hc[i]);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(huc[i], want_uc[i], "unsigned char [%d] = %d", i, huc[i]);
  for (int i = 0; i < 4; i++) cr_expect_eq(hs[i], want_s[i], "short [%d] = %d", i, hs[i]);
  for (int i = 0; i < 2; i++) cr_expect_eq(hus[i], want_us[i], "ushort [%d] = %d", i, hus[i]);
  cujit_buffer_free(c);
  cujit_buffer_free(uc);
  cujit_buffer_free(s);
  cujit_buffer_free(us);
  cujit_kernel_free(k);
}

/* --- C++ exceptions ----------------------------------------------------------------------------
 */

/* std::terminate aborted the process (exit 134) when an exception left a kernel. */
Test(exceptions, a_throw_in_a_kernel_is_a_device_fault, .init = open_cpu, .fini = close_engine) {
  const char *dir = cj_scratch_make("throw");
  cj_scratch_write("boom.h",
                   "struct boom { int code; };\ninline void go_boom(int n) { if (n > 2) throw "
                   "boom{n}; }\n");
  cujit_compile_options op = CUJIT_COMPILE_OPTIONS_INIT;
  const char *dirs[] = {dir};
  op.include_dirs = dirs, op.include_dir_count = 1;
  cujit_kernel *at = NULL, *barrier = NULL, *other = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "at(float *o, int n)",
                                "std::vector<float> v(4); o[threadIdx.x] = v.at(n);",
                                "#include <vector>", NULL, &at));
  /* with a barrier the threads run as fibers, each on a stack of its own */
  EXPECT_OK(cujit_kernel_define(engine, "barrier_at(float *o, int n)",
                                "__shared__ float s[64]; s[threadIdx.x] = 1; __syncthreads();\n"
                                "std::vector<float> v(4); o[threadIdx.x] = s[0] + "
                                "v.at(threadIdx.x == 5 ? n : 0);",
                                "#include <vector>", NULL, &barrier));
  EXPECT_OK(cujit_kernel_define(engine, "other(float *o, int n)", "go_boom(n); o[0] = 1;",
                                "#include <boom.h>", &op, &other));
  cj_scratch_remove();
  cujit_buffer *o = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 64 * sizeof(float), CUJIT_F32, &o));
  cujit_launch_config cfg = launch_1d(4, 64);
  EXPECT_OK(cujit_launch(at, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(1)}, 2));
  EXPECT_OK(cujit_device_synchronize(device())); /* in range: nothing thrown */
  EXPECT_OK(cujit_launch(at, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(10)}, 2));
  EXPECT_FAIL(cujit_device_synchronize(device()), CUJIT_ERROR_DEVICE_FAULT, "kernel 'at': block (");
  cr_expect(strstr(cujit_errmsg(engine), "threw a C++ exception: vector::_M_range_check"), "%s",
            cujit_errmsg(engine));
  EXPECT_OK(cujit_device_reset(device()));
  EXPECT_OK(cujit_buffer_alloc(engine, 64 * sizeof(float), CUJIT_F32, &o));
  EXPECT_OK(cujit_launch(barrier, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(10)}, 2));
  EXPECT_FAIL(cujit_device_synchronize(device()), CUJIT_ERROR_DEVICE_FAULT, "thread (5,0,0)");
  cr_expect(strstr(cujit_errmsg(engine), "kernel 'barrier_at'") &&
                strstr(cujit_errmsg(engine), "threw a C++ exception: vector::_M_range_check"),
            "%s", cujit_errmsg(engine));
  EXPECT_OK(cujit_device_reset(device()));
  EXPECT_OK(cujit_buffer_alloc(engine, 64 * sizeof(float), CUJIT_F32, &o));
  EXPECT_OK(cujit_launch(other, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(3)}, 2));
  EXPECT_FAIL(cujit_device_synchronize(device()), CUJIT_ERROR_DEVICE_FAULT,
              "threw a C++ exception: an exception of type 'boom'");
  EXPECT_OK(cujit_device_reset(device()));
  /* the device works after the reset, the same kernels too */
  EXPECT_OK(cujit_buffer_alloc(engine, 64 * sizeof(float), CUJIT_F32, &o));
  EXPECT_OK(cujit_launch(barrier, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(2)}, 2));
  EXPECT_OK(cujit_launch(other, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(0)}, 2));
  float h[64];
  EXPECT_OK(cujit_memcpy_dtoh(h, o, 0, sizeof h, NULL));
  cr_expect_eq(h[0], 1.0f);
  cr_expect_eq(h[1], 1.0f, "%g", h[1]);
  cujit_buffer_free(o);
  cujit_kernel_free(at);
  cujit_kernel_free(barrier);
  cujit_kernel_free(other);
}

/* What NVRTC refuses, the CPU device refuses too, with NVRTC's reason. */
Test(exceptions, handling_them_is_refused_as_nvrtc_does, .init = open_cpu, .fini = close_engine) {
  static const struct {
    const char *body, *preamble, *part;
  } cases[] = {
      {"if (n > 3) throw 1; o[0] = 1;", NULL, "exception handling (throw) (line 1 of its body)"},
      {"try { o[0] = n; } catch (...) {}", NULL, "exception handling (try)"},
      {"o[0] = f(n);", "__device__ float f(int n) {\n  if (n) throw n;\n  return 0;\n}",
       "exception handling (throw) (line 2 of its preamble)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cujit_kernel *k = NULL;
    EXPECT_FAIL(cujit_kernel_define(engine, "thrower(float *o, int n)", cases[i].body,
                                    cases[i].preamble, NULL, &k),
                CUJIT_ERROR_COMPILE, cases[i].part);
    cr_expect(strstr(cujit_errmsg(engine), "which a GPU refuses (NVRTC: \"device code does not "
                                           "support exception handling\")"),
              "%s", cujit_errmsg(engine));
    cr_expect(strstr(cujit_errmsg(engine), "kernel 'thrower'"), "%s", cujit_errmsg(engine));
  }
  /* in comments, strings and branches the CPU device does not compile, nothing is refused */
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "quiet(float *o, int n)",
                                "// throw\n/* try */ const char *s = \"catch\"; (void)s;\n"
                                "#ifndef __CUJIT_CPU__\nthrow;\n#endif\no[0] = n;",
                                NULL, NULL, &k));
  cujit_kernel_free(k);
  /* nor in the #else or #elif of a test of __CUJIT_CPU__, with other directives between and
  ** around (each directive is followed: an #else is no new #if) */
  static const char *const branches[] = {
      "#ifdef __CUJIT_CPU__\no[0] = n;\n#else\nthrow;\n#endif",
      "#if defined(__CUJIT_CPU__)\n#define V n\no[0] = V;\n#elif 1\nthrow;\n#endif",
      "#ifdef NOT_DEFINED_HERE\n#else\n#ifdef __CUJIT_CPU__\n#pragma unroll 1\nfor (int i = 0; i < "
      "1; i++) o[i] = n;\n#else\nthrow;\n#endif\n#endif",
  };
  for (size_t i = 0; i < sizeof branches / sizeof *branches; i++) {
    k = NULL;
    EXPECT_OK(cujit_kernel_define(engine, "quiet(float *o, int n)", branches[i], NULL, NULL, &k));
    cujit_kernel_free(k);
  }
}

/* --- float to integer conversions ------------------------------------------------------------
 */

/* The conversion intrinsics saturate and give NaN's value as an H200 does. Columns: the eight rz
** conversions (float, then double, to int, unsigned, long long, unsigned long long: the GPU's C
** casts, cvt.rzi), then __float2int_rn/rz/ru/rd, __float2uint_rn/rz, __float2ll_rn,
** __float2ull_rn, __double2int_rn, __double2uint_rz, __double2ll_rz, __double2ull_rz; unsigned
** results zero-extended. NaN gave 0 for every one before. */
Test(conversions, intrinsics_saturate_as_the_gpu, .init = open_cpu, .fini = close_engine) {
  static const float fv[] = {NAN,  INFINITY, -INFINITY,     3e9f,    -3e9f,    1e20f, -1e20f, -1.5f,
                             2.5f, -0.5f,    4294967296.0f, 70000.f, -70000.f, 300.f, -300.f};
  static const double dv[] = {NAN, INFINITY, -INFINITY,    3e9,    -3e9,    1e20, -1e20, -1.5,
                              2.5, -0.5,     4294967296.0, 70000., -70000., 300., -300.};
  static const long long want[][20] = {
      {0, 0, INT64_MIN, INT64_MIN, -2147483648, 2147483648,  INT64_MIN,  INT64_MIN, 0,        0, 0,
       0, 0, 0,         INT64_MIN, INT64_MIN,   -2147483648, 2147483648, INT64_MIN, INT64_MIN},
      {2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       2147483647,
       2147483647,
       2147483647,
       4294967295ll,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1},
      {-2147483648, 0,           INT64_MIN,   0,           -2147483648, 0, INT64_MIN,
       0,           -2147483648, -2147483648, -2147483648, -2147483648, 0, 0,
       INT64_MIN,   0,           -2147483648, 0,           INT64_MIN,   0},
      {2147483647,   3000000000ll, 3000000000ll, 3000000000ll, 2147483647,
       3000000000ll, 3000000000ll, 3000000000ll, 2147483647,   2147483647,
       2147483647,   2147483647,   3000000000ll, 3000000000ll, 3000000000ll,
       3000000000ll, 2147483647,   3000000000ll, 3000000000ll, 3000000000ll},
      {-2147483648, 0,           -3000000000ll, 0,
       -2147483648, 0,           -3000000000ll, 0,
       -2147483648, -2147483648, -2147483648,   -2147483648,
       0,           0,           -3000000000ll, 0,
       -2147483648, 0,           -3000000000ll, 0},
      {2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       2147483647,
       2147483647,
       2147483647,
       4294967295ll,
       4294967295ll,
       9223372036854775807ll,
       -1,
       2147483647,
       4294967295ll,
       9223372036854775807ll,
       -1},
      {-2147483648, 0,           INT64_MIN,   0,           -2147483648, 0, INT64_MIN,
       0,           -2147483648, -2147483648, -2147483648, -2147483648, 0, 0,
       INT64_MIN,   0,           -2147483648, 0,           INT64_MIN,   0},
      {-1, 0, -1, 0, -1, 0, -1, 0, -2, -1, -1, -2, 0, 0, -2, 0, -2, 0, -1, 0},
      {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0},
      {2147483647,   4294967295ll, 4294967296ll, 4294967296ll, 2147483647,
       4294967295ll, 4294967296ll, 4294967296ll, 2147483647,   2147483647,
       2147483647,   2147483647,   4294967295ll, 4294967295ll, 4294967296ll,
       4294967296ll, 2147483647,   4294967295ll, 4294967296ll, 4294967296ll},
      {70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000,
       70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000},
      {-70000, 0,      -70000, 0, -70000, 0, -70000, 0, -70000, -70000,
       -70000, -70000, 0,      0, -70000, 0, -70000, 0, -70000, 0},
      {300, 300, 300, 300, 300, 300, 300, 300, 300, 300,
       300, 300, 300, 300, 300, 300, 300, 300, 300, 300},
      {-300, 0, -300, 0, -300, 0, -300, 0, -300, -300, -300, -300, 0, 0, -300, 0, -300, 0, -300, 0},
  };
  enum { N = sizeof fv / sizeof fv[0], C = 20 };
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(
      engine, "conv(long long *o, const float *fv, const double *dv, int n)",
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "if (i >= n) return;\n"
      "float f = fv[i]; double d = dv[i]; long long *r = o + 20 * i;\n"
      "r[0] = __float2int_rz(f); r[1] = __float2uint_rz(f); r[2] = __float2ll_rz(f);\n"
      "r[3] = (long long)__float2ull_rz(f); r[4] = __double2int_rz(d);\n"
      "r[5] = __double2uint_rz(d); r[6] = __double2ll_rz(d); r[7] = (long "
      "long)__double2ull_rz(d);\n"
      "r[8] = __float2int_rn(f); r[9] = __float2int_rz(f); r[10] = __float2int_ru(f);\n"
      "r[11] = __float2int_rd(f); r[12] = __float2uint_rn(f); r[13] = __float2uint_rz(f);\n"
      "r[14] = __float2ll_rn(f); r[15] = (long long)__float2ull_rn(f);\n"
      "r[16] = __double2int_rn(d); r[17] = __double2uint_rz(d); r[18] = __double2ll_rz(d);\n"
      "r[19] = (long long)__double2ull_rz(d);",
      NULL, NULL, &k));
  cujit_buffer *o = NULL, *df = NULL, *dd = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof want, CUJIT_I64, &o));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof fv, CUJIT_F32, &df));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof dv, CUJIT_F64, &dd));
  EXPECT_OK(cujit_memcpy_htod(df, 0, fv, sizeof fv, NULL));
  EXPECT_OK(cujit_memcpy_htod(dd, 0, dv, sizeof dv, NULL));
  cujit_launch_config cfg = launch_1d(1, 32);
  cujit_arg args[] = {CUJIT_ARG_BUF(o), CUJIT_ARG_BUF(df), CUJIT_ARG_BUF(dd), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 4));
  long long got[N][C];
  EXPECT_OK(cujit_memcpy_dtoh(got, o, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < C; j++)
      cr_expect_eq(got[i][j], want[i][j], "%g, column %d: %lld, the GPU gives %lld", fv[i], j,
                   got[i][j], want[i][j]);
  cujit_buffer_free(o);
  cujit_buffer_free(df);
  cujit_buffer_free(dd);
  cujit_kernel_free(k);
}

/* --- static shared memory ------------------------------------------------------------------- */

/* ptxas refuses a kernel with more than 48 KiB of static __shared__ memory; the CPU device ran
** up to 1 GiB of it. */
Test(static_shared, over_a_gpu_limit_is_refused, .init = open_cpu, .fini = close_engine) {
  cujit_kernel *k = NULL;
  EXPECT_FAIL(cujit_kernel_define(engine, "big(float *o, int n)",
                                  "__shared__ float s[20000]; s[n] = 1; __syncthreads(); "
                                  "o[0] = s[0];",
                                  NULL, NULL, &k),
              CUJIT_ERROR_COMPILE,
              "kernel 'big' uses too much shared data for a GPU: 80000 bytes of static "
              "__shared__ memory, of at most 49152 (ptxas: \"Entry function 'big' uses too much "
              "shared data (0x13880 bytes, 0xc000 max)\")");
  /* one byte more than 48 KiB, in two variables */
  EXPECT_FAIL(cujit_kernel_define(engine, "edge(float *o, int n)",
                                  "__shared__ float s[12288]; __shared__ char c; c = (char)n;\n"
                                  "s[n] = 1; __syncthreads(); o[0] = s[0] + c;",
                                  NULL, NULL, &k),
              CUJIT_ERROR_COMPILE, "49153 bytes");
  /* exactly 48 KiB compiles and runs */
  EXPECT_OK(cujit_kernel_define(engine, "full(float *o, int n)",
                                "__shared__ float s[12288]; s[threadIdx.x] = n; __syncthreads(); "
                                "o[threadIdx.x] = s[threadIdx.x];",
                                NULL, NULL, &k));
  cujit_kernel_free(k);
  /* the limit is each kernel's: two of 40000 bytes in one program */
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(
      engine,
      "extern \"C\" __global__ void a(float *o, int n) { __shared__ float s[10000]; s[n] = 1; "
      "__syncthreads(); o[0] = s[0]; }\n"
      "extern \"C\" __global__ void b(float *o, int n) { __shared__ float s[10000]; s[n] = 2; "
      "__syncthreads(); o[0] = s[0]; }\n",
      "two.cu", NULL, &p));
  cujit_program_free(p);
  /* file scope counts for a program's only kernel */
  EXPECT_FAIL(cujit_program_compile(engine,
                                    "__shared__ float g[7500];\n"
                                    "extern \"C\" __global__ void c(float *o, int n) { __shared__ "
                                    "float s[7500]; s[n] = 1; g[n] = 2; __syncthreads(); o[0] = "
                                    "s[0] + g[0]; }\n",
                                    "file.cu", NULL, &p),
              CUJIT_ERROR_COMPILE, "kernel 'c' uses too much shared data for a GPU: 60000 bytes");
}
