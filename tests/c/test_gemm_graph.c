/*
** test_gemm_graph.c -- cujit_gemm's tensor-core path inside CUDA graphs (sm_90 GPUs): a product
** captured and replayed with new inputs each time (its tensor maps are arguments recorded by
** value, so a replay reads the buffers the capture named, as they are then), with an epilogue, and
** the capture refused, naming the kernel, when only the SIMT kernel of the same dtypes was loaded
** (an earlier call of a smaller product). The SIMT path's capture is test_gemm.c's.
** The inputs are small integers, exact in bf16, whose products and sums are exact in f32: every
** element is compared exactly.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(gemm_graph, .init = cj_fixture_open, .fini = cj_fixture_close);

enum { M = 256, N = 256, K = 128 }; /* one product the tensor path takes, tiles 128 wide */

/* bf16 holds the top half of an f32: exact for the small integers used here */
static uint16_t bf16_of(int v) {
  float f = (float)v;
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return (uint16_t)(bits >> 16);
}

/* Element i of A (M x K) and B (K x N) in round r: integers in -3 .. 3 that change with r. */
static int a_at(int i, int r) {
  return (i * 7 + r * 5) % 7 - 3;
}
static int b_at(int i) {
  return (i * 3 + 1) % 5 - 2;
}

static int on_sm90(cujit_buffer *buf) {
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(cujit_buffer_device(buf), &info));
  return info.cc_major == 9 && info.cc_minor == 0;
}

typedef struct operands {
  cujit_buffer *a, *b, *c, *bias;
  uint16_t *host_a;
} operands;

static void put_a(operands *o, int round) {
  for (int i = 0; i < M * K; i++) o->host_a[i] = bf16_of(a_at(i, round));
  EXPECT_OK(cujit_memcpy_htod(o->a, 0, o->host_a, (size_t)M * K * 2, NULL));
}

static operands make_operands(void) {
  operands o = {cj_test_upload(NULL, (size_t)M * K * 2, CUJIT_BF16),
                cj_test_upload(NULL, (size_t)K * N * 2, CUJIT_BF16),
                cj_test_upload(NULL, (size_t)M * N * 4, CUJIT_F32),
                cj_test_upload(NULL, (size_t)N * 4, CUJIT_F32), malloc((size_t)M * K * 2)};
  cr_assert(o.host_a);
  uint16_t *hb = malloc((size_t)K * N * 2);
  float bias[N];
  cr_assert(hb);
  for (int i = 0; i < K * N; i++) hb[i] = bf16_of(b_at(i));
  for (int j = 0; j < N; j++) bias[j] = (float)(j % 9) - 4.0f;
  EXPECT_OK(cujit_memcpy_htod(o.b, 0, hb, (size_t)K * N * 2, NULL));
  EXPECT_OK(cujit_memcpy_htod(o.bias, 0, bias, sizeof bias, NULL));
  free(hb);
  put_a(&o, 0);
  return o;
}

static void free_operands(operands *o) {
  cujit_buffer_free(o->a), cujit_buffer_free(o->b), cujit_buffer_free(o->c);
  cujit_buffer_free(o->bias);
  free(o->host_a);
}

/* C against relu(A B + bias) for round r, exactly; returns the count of wrong elements. */
static int check_c(const operands *o, int round) {
  float *c = malloc((size_t)M * N * 4);
  cr_assert(c);
  cj_test_download(c, o->c, (size_t)M * N * 4);
  int wrong = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int s = j % 9 - 4;
      for (int l = 0; l < K; l++) s += a_at(i * K + l, round) * b_at(l * N + j);
      float want = s > 0 ? (float)s : 0.0f, got = c[i * N + j];
      if (got != want && wrong++ < 5)
        cr_log_error("round %d: C[%d,%d] is %g, want %g", round, i, j, got, want);
    }
  free(c);
  return wrong;
}

static cujit_gemm_options product_options(const operands *o) {
  cujit_gemm_options opts = CUJIT_GEMM_OPTIONS_INIT;
  opts.m = M, opts.n = N, opts.k = K, opts.bias = o->bias, opts.relu = 1;
  return opts;
}

/* Captured once, replayed for three rounds of A: each replay computes with A as it is then. */
Test(gemm_graph, tensor_product_captured_and_replayed, .timeout = 240) {
  CJ_NEED_GPU(engine);
  operands o = make_operands();
  if (!on_sm90(o.a)) {
    free_operands(&o);
    cr_skip_test("the tensor path is sm_90's");
  }
  setenv("CUJIT_GEMM", "tensor", 1); /* a refusal, not a quiet fallback, if it cannot run */
  cujit_gemm_options opts = product_options(&o);
  EXPECT_OK(cujit_gemm(o.a, o.b, o.c, &opts, NULL)); /* compiles and loads the tensor kernels */
  EXPECT_OK(cujit_device_synchronize(cujit_buffer_device(o.a)));
  cr_expect_eq(check_c(&o, 0), 0, "the call outside the capture");
  cujit_stream *s = NULL;
  cujit_graph *g = NULL;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_gemm(o.a, o.b, o.c, &opts, s));
  EXPECT_OK(cujit_capture_end(s, &g));
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 1);
  for (int round = 1; round <= 3; round++) {
    put_a(&o, round);
    EXPECT_OK(cujit_memset(o.c, 0, 0xff, (size_t)M * N * 4, NULL)); /* NaN until written */
    EXPECT_OK(cujit_device_synchronize(cujit_buffer_device(o.a)));
    EXPECT_OK(cujit_graph_launch(g, s));
    EXPECT_OK(cujit_stream_synchronize(s));
    cr_expect_eq(check_c(&o, round), 0, "replay %d", round);
  }
  unsetenv("CUJIT_GEMM");
  cujit_graph_free(g);
  cujit_stream_free(s);
  free_operands(&o);
}

/* A smaller product of the same dtypes ran on the SIMT kernel; capturing one the tensor path runs
** is refused, naming that kernel, and the capture is left as it was. */
Test(gemm_graph, tensor_capture_needs_a_tensor_call_first, .timeout = 240) {
  CJ_NEED_GPU(engine);
  operands o = make_operands();
  if (!on_sm90(o.a)) {
    free_operands(&o);
    cr_skip_test("the tensor path is sm_90's");
  }
  cujit_gemm_options small = product_options(&o);
  small.m = small.n = 64; /* below the tensor path's 128: SIMT */
  EXPECT_OK(cujit_gemm(o.a, o.b, o.c, &small, NULL));
  cujit_stream *s = NULL;
  cujit_graph *g = NULL;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_gemm(o.a, o.b, o.c, &small, s)); /* the SIMT kernel is there */
  cujit_gemm_options big = product_options(&o);
  EXPECT_FAIL(cujit_gemm(o.a, o.b, o.c, &big, s), CUJIT_ERROR_UNSUPPORTED,
              "cujit_gemm: its tensor-core (tiles 128 wide) kernel for bf16 inputs into f32 is "
              "not loaded on ");
  EXPECT_FAIL(cujit_gemm(o.a, o.b, o.c, &big, s), CUJIT_ERROR_UNSUPPORTED,
              "call cujit_gemm once with these dtypes and a product of this size on that device "
              "before cujit_capture_begin");
  EXPECT_OK(cujit_capture_end(s, &g));
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 1, "the SIMT product only");
  cujit_graph_free(g);
  cujit_stream_free(s);
  free_operands(&o);
}
