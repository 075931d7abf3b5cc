/*
** test_cpu_semantics.c -- the CPU device computes what a GPU computes where C++ on the host
** would not: fast math belongs to one kernel (the host and other kernels keep denormals), integer
** division by zero and INT_MIN / -1 give the GPU's values instead of SIGFPE, C++ exceptions are
** device faults, the conversion intrinsics saturate, and every name NVRTC takes works. The values
** expected are those an H200 gave (CUDA 13, sm_90). Needs only g++: runs on CI.
*/
#include <criterion/criterion.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "expect.h"

static cujit_engine *engine;

static void open_cpu(void) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
}

static cujit_launch_config launch_1d(unsigned blocks, unsigned threads) {
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = blocks, cfg.block[0] = threads;
  cfg.grid[1] = cfg.grid[2] = cfg.block[1] = cfg.block[2] = 1;
  return cfg;
}

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
