/*
** test_cpu_struct_args.c -- structs passed by value through the C API on the CPU device: their
** sizes, alignments and offsets come from g++ (each entry exports them), a launch passes the
** host struct's bytes with CUJIT_ARG_BYTES, and the results match the host's. The same source
** compiled for sm_90 (NVRTC, no GPU needed) lays the parameters out the same way.
*/
#include <criterion/criterion.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "case_engine.h"
#include "expect.h"

/* A particle and a clamp window, as a simulation's host code declares them for its kernels. */
static const char *src =
    "struct Particle { double mass; float pos[3]; char kind; };\n"
    "struct __align__(16) Window { float lo, hi; int bins; };\n"
    "extern \"C\" __global__ void weigh(Particle p, Window w, const float *x, float *out,\n"
    "                                   int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = x[i] * (float)p.mass + p.pos[i % 3] + p.kind;\n"
    "  out[i] = v < w.lo ? w.lo : v > w.hi ? w.hi : v;\n"
    "  if (i == 0) out[n] = (float)w.bins;\n"
    "}\n";

struct particle {
  double mass;
  float pos[3];
  char kind;
};
struct window {
  alignas(16) float lo;
  float hi;
  int bins;
};

static void expect_layout(cujit_kernel *k) {
  static const size_t size[] = {sizeof(struct particle), sizeof(struct window), 8, 8, 4};
  static const size_t align[] = {alignof(struct particle), alignof(struct window), 8, 8, 4};
  static const size_t offset[] = {0, 32, 48, 56, 64};
  cr_assert_eq(cujit_kernel_param_count(k), 5);
  for (size_t i = 0; i < 5; i++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    EXPECT_OK(cujit_kernel_param(k, i, &info));
    cr_expect_eq(info.size, size[i], "parameter %zu size %zu", i, info.size);
    cr_expect_eq(info.align, align[i], "parameter %zu align %zu", i, info.align);
    cr_expect_eq(info.offset, offset[i], "parameter %zu offset %zu", i, info.offset);
  }
}

Test(cpu_struct_args, sized_by_gxx_and_passed_as_bytes, .init = open_cpu, .fini = close_engine) {
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(engine, src, "weigh.cu", NULL, &p));
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_program_kernel(p, "weigh", &k));
  expect_layout(k);
  enum { N = 1000 };
  float *x = malloc(N * sizeof *x), *out = malloc((N + 1) * sizeof *out);
  for (int i = 0; i < N; i++) x[i] = (float)((rand() % 2001) - 1000) / 100.0f;
  struct particle pa = {.mass = 1.75, .pos = {0.5f, -2.0f, 3.25f}, .kind = 3};
  struct window w = {.lo = -6.0f, .hi = 9.5f, .bins = 77};
  cujit_buffer *dx = NULL, *dout = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof *x, CUJIT_F32, &dx));
  EXPECT_OK(cujit_buffer_alloc(engine, (N + 1) * sizeof *out, CUJIT_F32, &dout));
  EXPECT_OK(cujit_memcpy_htod(dx, 0, x, N * sizeof *x, NULL));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  cujit_arg args[] = {{.kind = CUJIT_ARG_BYTES, .v.bytes = &pa},
                      {.kind = CUJIT_ARG_BYTES, .v.bytes = &w},
                      CUJIT_ARG_BUF(dx),
                      CUJIT_ARG_BUF(dout),
                      CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 5));
  EXPECT_OK(cujit_memcpy_dtoh(out, dout, 0, (N + 1) * sizeof *out, NULL));
  for (int i = 0; i < N; i++) {
    volatile float v = x[i] * (float)pa.mass;
    v = v + pa.pos[i % 3];
    v = v + (float)pa.kind;
    float want = v < w.lo ? w.lo : v > w.hi ? w.hi : v;
    cr_expect_eq(out[i], want, "out[%d] = %g, want %g", i, out[i], want);
  }
  cr_expect_eq(out[N], 77.0f);
  cujit_buffer_free(dx);
  cujit_buffer_free(dout);
  cujit_kernel_free(k);
  cujit_program_free(p);
  free(x);
  free(out);
}

Test(cpu_struct_args, nvrtc_lays_them_out_the_same, .init = open_cpu, .fini = close_engine) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "weigh.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_program_kernel(p, "weigh", &k));
  expect_layout(k);
  cujit_kernel_free(k);
  cujit_program_free(p);
}
