/*
** test_gemm.c -- cujit_gemm (engine/core/program/gemm.c, kernels_src/cujit/gemm.h), its SIMT path:
** products against a host reference in double (gemm_reference.h) for shapes that are and are not
** multiples of the kernel's tiles (64 x 64 x 16 and 128 x 128 x 8; each size on either side of
** the multiprocessor count that picks it), its vector and scalar loads (aligned or not), every
** transpose, every epilogue, alpha and beta, f32, f16 and bf16 inputs with f32 and their own
** outputs, C guarded past its end; every refusal with its message; one compile per dtype pair; a
** product captured into a graph; gemm.h called from a user kernel whose blocks loop over row
** tiles. Runs on a GPU, or on the CPU device without one (CJ_NEED_DEVICE); the GEMM program text
** is compiled by NVRTC for sm_90 even without a GPU. The tensor-core path is test_gemm_tc.c's.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"
#include "program/library.h"

TestSuite(gemm, .init = cj_fixture_open, .fini = cj_fixture_close);

#include "gemm_reference.h"

/* 1x1x1, exact tiles, one past and one short of them, thin and long shapes: with every
** transpose. */
Test(gemm, f32_shapes_and_transposes_match_the_reference) {
  CJ_NEED_DEVICE(engine);
  static const int shapes[][3] = {{1, 1, 1},   {17, 33, 65}, {64, 64, 16}, {65, 63, 17},
                                  {3, 130, 5}, {130, 3, 33}, {128, 64, 48}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (int tr = 0; tr < 4; tr++) {
      gemm_case t = {
          CUJIT_F32, CUJIT_F32, shapes[s][0], shapes[s][1], shapes[s][2], tr & 1, tr >> 1, 0,
          0,         0,         1.0,          0.0,          1.0};
      check_case(&t);
    }
}

/* Every epilogue (bias, relu, mask, and their combinations) with alpha and beta, for each dtype
** pair; on a shape that is no multiple of the tile, transposed and not. */
Test(gemm, epilogues_alpha_beta_and_dtypes_match_the_reference) {
  CJ_NEED_DEVICE(engine);
  static const cujit_dtype pairs[][2] = {{CUJIT_F32, CUJIT_F32},
                                         {CUJIT_F16, CUJIT_F16},
                                         {CUJIT_F16, CUJIT_F32},
                                         {CUJIT_BF16, CUJIT_BF16},
                                         {CUJIT_BF16, CUJIT_F32}};
  for (size_t p = 0; p < 5; p++)
    for (int epi = 0; epi < 8; epi++) {
      gemm_case t = {pairs[p][0], pairs[p][1], 17,
                     70,          33,          epi & 1,
                     !(epi & 1),  epi & 1,     (epi >> 1) & 1,
                     epi >> 2,    0.5,         epi ? -1.5 : 0.0,
                     1.0};
      check_case(&t);
    }
  gemm_case alpha_only = {CUJIT_F32, CUJIT_F32, 5, 7, 9, 0, 0, 0, 0, 0, -2.0, 1.0, 1.0};
  check_case(&alpha_only);
}

/* The multiprocessors of the device the tests run on (on the CPU device, its worker threads):
** cujit_gemm takes tiles of 128 for a product that has at least that many of them, else tiles of
** 64. */
static int device_multiprocessors(void) {
  cujit_buffer *probe = cj_test_upload(NULL, 16, CUJIT_F32);
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(cujit_buffer_device(probe), &info));
  cujit_buffer_free(probe);
  return info.multiprocessors;
}

/* Runs `t` with every transpose, A and B `offset` elements into their buffers. */
static void check_transposes_at(gemm_case t, size_t offset) {
  for (int tr = 0; tr < 4; tr++) {
    t.trans_a = tr & 1, t.trans_b = tr >> 1;
    check_case_at(&t, offset);
  }
}

static void check_transposes(gemm_case t) {
  check_transposes_at(t, 0);
}

/* Shapes about multiples of 128 (interior and edge tiles in m and n; k of 1, short of a step of 8
** or 16, one past it, whole steps), every transpose. Tiles of 128 run them where they make at
** least a tile per multiprocessor (on a CPU device of a few threads, all of them); on a larger GPU
** tiles of 64 do, and the next test's product takes tiles of 128 on any device. */
Test(gemm, shapes_about_the_wide_tile_match_the_reference) {
  CJ_NEED_DEVICE(engine);
  static const int shapes[][3] = {{129, 255, 1},  {255, 129, 7},  {257, 257, 9},
                                  {129, 257, 17}, {256, 255, 16}, {255, 256, 8}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    gemm_case t = {CUJIT_F32, CUJIT_F32, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, 0,
                   0,         0,         1.0,          0.0,          1.0};
    check_transposes(t);
  }
}

/* Both tile sizes on the device the tests run on: a product of at least as many tiles of 128 as
** it has multiprocessors (ragged in m, n and k; then whole and aligned, so loaded 16 or 8 bytes
** at a time; each epilogue, f16 and bf16) takes tiles of 128, one of fewer tiles of 64. */
Test(gemm, both_tile_sizes_either_side_of_the_multiprocessor_count) {
  CJ_NEED_DEVICE(engine);
  int p = device_multiprocessors(), q = 1;
  while (q * q < p) q++; /* q x (q + 1) tiles of 128 below: at least p */
  const int m = 128 * q - 3, n = 128 * q + 5;
  gemm_case t = {CUJIT_F32, CUJIT_F32, m, n, 9, 0, 0, 0, 0, 0, 1.0, 0.0, 1.0};
  check_transposes(t);
  t.m = 128 * q, t.n = 128 * q + 4, t.k = 20;
  check_transposes(t);
  for (int epi = 1; epi < 8; epi++) {
    gemm_case e = {CUJIT_F32, CUJIT_F32,      m,        n,   33,   epi & 1, 0,
                   epi & 1,   (epi >> 1) & 1, epi >> 2, 0.5, -1.5, 1.0};
    check_case(&e);
  }
  static const cujit_dtype halves[][2] = {
      {CUJIT_F16, CUJIT_F16}, {CUJIT_F16, CUJIT_F32}, {CUJIT_BF16, CUJIT_BF16}};
  for (size_t h = 0; h < 3; h++) {
    gemm_case e = {halves[h][0], halves[h][1], m, n, 17, (int)h & 1, 1, 1, 1, 0, 1.0, 0.0, 1.0};
    check_case(&e);
    e.m = 128 * q, e.n = 128 * q + 4, e.k = 24; /* 8-byte loads */
    check_case(&e);
  }
  if (p > 1) { /* one tile of 128: fewer than the multiprocessors */
    gemm_case small = {CUJIT_F32, CUJIT_F32, 100, 120, 33, 0, 0, 0, 0, 0, 1.0, 0.0, 1.0};
    check_transposes(small);
  }
}

/* The 16-byte (f32) and 8-byte (f16, bf16) loads where both operands allow them, and scalar ones
** where they do not: A and B one element off alignment (views into larger buffers), and
** contiguous dimensions that are not multiples of 4 (a row of a quad would run into the next);
** every transpose, every input dtype, a product of one tile and one of several (tiles of 64 and
** of 128 on the CPU device). */
Test(gemm, vector_and_scalar_loads_match_the_reference) {
  CJ_NEED_DEVICE(engine);
  static const cujit_dtype ins[] = {CUJIT_F32, CUJIT_F16, CUJIT_BF16};
  static const struct {
    int m, n, k;
    size_t offset;
  } cases[] = {{100, 120, 20, 0}, {100, 120, 20, 1}, {102, 118, 22, 0}, {260, 132, 20, 0},
               {260, 132, 20, 1}, {262, 130, 22, 0}, {260, 132, 21, 0}, {261, 132, 20, 0}};
  for (size_t d = 0; d < 3; d++)
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
      gemm_case t = {ins[d], CUJIT_F32, cases[c].m, cases[c].n, cases[c].k, 0,  0,
                     0,      0,         0,          1.0,        0.0,        1.0};
      check_transposes_at(t, cases[c].offset);
    }
}

/* With beta 0, C is not read: NaN there does not show, as in BLAS. */
Test(gemm, beta_zero_does_not_read_c) {
  CJ_NEED_DEVICE(engine);
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4], want[4] = {4, 5, 10, 11};
  for (int i = 0; i < 4; i++) c[i] = NAN;
  cujit_buffer *da = cj_test_upload(a, sizeof a, CUJIT_F32),
               *db = cj_test_upload(b, sizeof b, CUJIT_F32);
  cujit_buffer *dc = cj_test_upload(c, sizeof c, CUJIT_F32);
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = 2, o.n = 2, o.k = 3;
  EXPECT_OK(cujit_gemm(da, db, dc, &o, NULL));
  cj_test_download(c, dc, sizeof c);
  for (int i = 0; i < 4; i++) cr_expect_eq(c[i], want[i], "C[%d] is %g, want %g", i, c[i], want[i]);
  cujit_buffer_free(da), cujit_buffer_free(db), cujit_buffer_free(dc);
}

/* The GEMM programs compile for a GPU (NVRTC, sm_90) on any machine. */
Test(gemm, programs_compile_for_sm_90) {
  static const cujit_dtype pairs[][2] = {
      {CUJIT_F32, CUJIT_F32}, {CUJIT_F16, CUJIT_F16}, {CUJIT_F16, CUJIT_F32}};
  for (size_t p = 0; p < 3; p++) {
    char *src = cj_gemm_source(pairs[p][0], pairs[p][1]);
    cr_assert(src);
    cujit_program *prog;
    EXPECT_OK(cujit_program_compile(engine, src, "gemm", &sm90, &prog));
    cujit_kernel *k;
    EXPECT_OK(cujit_program_kernel(prog, "cj_gemm_e7", &k)); /* tiles of 64 */
    cujit_kernel_free(k);
    EXPECT_OK(cujit_program_kernel(prog, "cj_gemm_w7", &k)); /* tiles of 128 */
    cujit_kernel_free(k);
    cujit_program_free(prog);
    free(src);
  }
}

/* Every refusal, with its message; nothing is launched. */
Test(gemm, refusals_say_what_is_wrong) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *a = cj_test_upload(NULL, 6 * 4, CUJIT_F32),
               *b = cj_test_upload(NULL, 12 * 4, CUJIT_F32);
  cujit_buffer *c = cj_test_upload(NULL, 8 * 4, CUJIT_F32),
               *h = cj_test_upload(NULL, 12 * 2, CUJIT_F16);
  cujit_buffer *i32 = cj_test_upload(NULL, 12 * 4, CUJIT_I32);
  cujit_buffer *v3 = cj_test_upload(NULL, 3 * 4, CUJIT_F32);
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT; /* a 2 x 3 times 3 x 4 into 2 x 4 */
  o.m = 2, o.n = 4, o.k = 3;
  EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  const cujit_status inval = CUJIT_ERROR_INVALID_ARGUMENT;
  EXPECT_REFUSED(cujit_gemm(NULL, b, c, &o, NULL), inval,
                 "cujit_gemm needs buffers a, b and c (a is NULL)");
  EXPECT_REFUSED(cujit_gemm(a, b, NULL, &o, NULL), inval,
                 "cujit_gemm needs buffers a, b and c (c is NULL)");
  EXPECT_REFUSED(cujit_gemm(a, b, c, NULL, NULL), inval,
                 "cujit_gemm needs options giving m, n and k (CUJIT_GEMM_OPTIONS_INIT)");
  cujit_gemm_options bad = o;
  bad.size = 0;
  EXPECT_FAIL(cujit_gemm(a, b, c, &bad, NULL), inval, "CUJIT_GEMM_OPTIONS_INIT");
  bad = o, bad.m = 0;
  EXPECT_REFUSED(cujit_gemm(a, b, c, &bad, NULL), inval,
                 "cujit_gemm: m (the rows of op(A) and C) is 0; it must be between 1 and "
                 "2147483647");
  bad = o, bad.n = -4;
  EXPECT_FAIL(cujit_gemm(a, b, c, &bad, NULL), inval, "n (the columns of op(B) and C) is -4;");
  bad = o, bad.k = (int64_t)1 << 31;
  EXPECT_FAIL(cujit_gemm(a, b, c, &bad, NULL), inval,
              "k (the columns of op(A), the rows of op(B)) is 2147483648;");
  bad = o, bad.beta = NAN;
  EXPECT_REFUSED(cujit_gemm(a, b, c, &bad, NULL), inval,
                 "cujit_gemm: alpha 1 and beta nan must both be finite");
  EXPECT_REFUSED(cujit_gemm(i32, b, c, &o, NULL), inval,
                 "cujit_gemm: a holds i32; gemm takes f32, f16 or bf16 inputs");
  EXPECT_REFUSED(cujit_gemm(a, h, c, &o, NULL), inval,
                 "cujit_gemm: a holds f32 but b holds f16; they must match");
  EXPECT_REFUSED(cujit_gemm(a, b, h, &o, NULL), inval,
                 "cujit_gemm: c holds f16; with f32 inputs it must hold f32");
  /* options that do not fit the buffers: each from o with a few fields changed */
  const struct {
    int64_t m, n, k;
    int trans_b;
    cujit_buffer *bias, *mask;
    const char *message;
  } misfits[] = {
      {2, 4, 3, 0, h, NULL, "cujit_gemm: bias holds f16; it must hold c's dtype, f32"},
      {2, 4, 3, 0, NULL, i32, "cujit_gemm: relu_mask holds i32; it must hold c's dtype, f32"},
      {2, 4, 4, 0, NULL, NULL,
       "cujit_gemm: a holds 6 elements but needs 8 (m x k with m 2, n 4, k 4)"},
      {2, 5, 3, 1, NULL, NULL,
       "cujit_gemm: b holds 12 elements but needs 15 (n x k with m 2, n 5, k 3)"},
      {3, 4, 2, 0, NULL, NULL,
       "cujit_gemm: c holds 8 elements but needs 12 (m x n with m 3, n 4, k 2)"},
      {2, 4, 3, 0, v3, NULL,
       "cujit_gemm: bias holds 3 elements but needs 4 (n with m 2, n 4, k 3)"},
      {2, 4, 3, 0, NULL, a,
       "cujit_gemm: relu_mask holds 6 elements but needs 8 (m x n with m 2, n 4, k 3)"},
  };
  for (size_t i = 0; i < sizeof misfits / sizeof *misfits; i++) {
    bad = o, bad.m = misfits[i].m, bad.n = misfits[i].n, bad.k = misfits[i].k;
    bad.trans_b = misfits[i].trans_b, bad.bias = misfits[i].bias, bad.relu_mask = misfits[i].mask;
    EXPECT_REFUSED(cujit_gemm(a, b, c, &bad, NULL), inval, misfits[i].message);
  }
  bad = o, bad.m = 1;
  EXPECT_REFUSED(cujit_gemm(a, b, b, &bad, NULL), inval,
                 "cujit_gemm: c shares memory with b, which the kernel reads while it writes c; "
                 "give c a buffer of its own");
  cujit_buffer *tail;
  EXPECT_OK(cujit_buffer_view(c, 4 * 4, 4 * 4, CUJIT_F32, &tail));
  bad = o, bad.m = 1, bad.bias = tail;
  EXPECT_FAIL(cujit_gemm(a, b, c, &bad, NULL), inval, "c shares memory with bias,");
  cujit_engine *other;
  cujit_buffer *theirs;
  cr_assert_eq(cujit_open(&other), CUJIT_OK);
  cr_assert_eq(cujit_set_device(other, CUJIT_DEVICE_CPU), CUJIT_OK);
  cr_assert_eq(cujit_buffer_alloc(other, 12 * 4, CUJIT_F32, &theirs), CUJIT_OK);
  EXPECT_FAIL(cujit_gemm(a, theirs, c, &o, NULL), inval, "cujit_gemm (b): the buffer lives on ");
  cujit_buffer_free(theirs);
  cujit_close(other);
  cujit_buffer *all[] = {tail, a, b, c, h, i32, v3};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) cujit_buffer_free(all[i]);
}

static uint64_t cache_lookups(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  return s.memory_hits + s.disk_hits + s.misses;
}

/* One compile per dtype pair and engine: other epilogues, transposes and shapes of the pair are
** kernels the engine keeps, and look nothing up in the cache. */
Test(gemm, compiled_once_per_dtype_pair) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *a = cj_test_upload(NULL, 16 * 4, CUJIT_F32),
               *b = cj_test_upload(NULL, 16 * 4, CUJIT_F32);
  cujit_buffer *c = cj_test_upload(NULL, 16 * 4, CUJIT_F32),
               *v = cj_test_upload(NULL, 4 * 4, CUJIT_F32);
  cujit_buffer *h = cj_test_upload(NULL, 16 * 2, CUJIT_F16);
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = 4, o.n = 4, o.k = 4;
  uint64_t before = cache_lookups();
  EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  uint64_t first = cache_lookups();
  cr_expect_gt(first, before, "the first product compiles its program");
  for (int epi = 0; epi < 8; epi++) {
    o.trans_a = epi & 1, o.bias = epi & 1 ? v : NULL, o.relu = epi & 2;
    o.relu_mask = epi & 4 ? b : NULL, o.m = 1 + epi % 4;
    EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  }
  cr_expect_eq(cache_lookups(), first, "later f32 products compiled again");
  o = (cujit_gemm_options)CUJIT_GEMM_OPTIONS_INIT;
  o.m = 4, o.n = 4, o.k = 4;
  EXPECT_OK(cujit_gemm(h, h, c, &o, NULL));
  cr_expect_gt(cache_lookups(), first, "f16 inputs are a program of their own");
  cujit_buffer *all[] = {a, b, c, v, h};
  for (size_t i = 0; i < 5; i++) cujit_buffer_free(all[i]);
}

typedef struct capture_setup {
  cujit_buffer *a, *b, *c, *h;
  cujit_stream *s;
  cujit_graph *g;
} capture_setup;

static const float cap_a[4] = {1, 2, 3, 4}, cap_b[4] = {1, 1, 0, 1};

/* A 2 x 2 product captured on a stream of its own; any epilogue of a dtype pair a call has used
** on the device may be captured, and a pair not used yet is refused in cujit_gemm's terms
** (compiling or loading cannot be recorded), leaving the capture as it was. */
static capture_setup capture_product(void) {
  capture_setup u = {cj_test_upload(cap_a, sizeof cap_a, CUJIT_F32),
                     cj_test_upload(cap_b, sizeof cap_b, CUJIT_F32),
                     cj_test_upload(NULL, 4 * 4, CUJIT_F32),
                     cj_test_upload(NULL, 4 * 2, CUJIT_F16),
                     NULL,
                     NULL};
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = o.n = o.k = 2;
  EXPECT_OK(cujit_stream_create(engine, &u.s));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED)); /* nothing compiled yet */
  EXPECT_FAIL(cujit_gemm(u.a, u.b, u.c, &o, u.s), CUJIT_ERROR_UNSUPPORTED,
              "cujit_gemm: its SIMT kernel for f32 inputs into f32 is not loaded on ");
  EXPECT_FAIL(cujit_gemm(u.a, u.b, u.c, &o, u.s), CUJIT_ERROR_UNSUPPORTED,
              " yet, and compiling or loading cannot be captured into a graph; call cujit_gemm "
              "once with these dtypes on that device before cujit_capture_begin");
  EXPECT_OK(cujit_capture_end(u.s, NULL));
  o.relu = 1;
  EXPECT_OK(cujit_gemm(u.a, u.b, u.c, &o, NULL)); /* compiles the pair, loads every epilogue */
  o.relu = 0;
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_gemm(u.a, u.b, u.c, &o, u.s)); /* another epilogue than the call's */
  EXPECT_FAIL(cujit_gemm(u.h, u.h, u.c, &o, u.s), CUJIT_ERROR_UNSUPPORTED,
              "for f16 inputs into f32");
  EXPECT_OK(cujit_capture_end(u.s, &u.g));
  cr_expect_eq(cujit_graph_node_count(u.g, CUJIT_GRAPH_NODE_KERNEL), 1);
  return u;
}

static void capture_free(capture_setup *u) {
  cujit_graph_free(u->g);
  cujit_stream_free(u->s);
  cujit_buffer_free(u->a), cujit_buffer_free(u->b), cujit_buffer_free(u->c),
      cujit_buffer_free(u->h);
}

/* What may be captured (also run against the stand-in driver: c.test_gemm.stub_driver). */
Test(gemm, capture_needs_a_call_first) {
  CJ_NEED_DEVICE(engine);
  capture_setup u = capture_product();
  capture_free(&u);
}

/* The captured product runs on each replay, reading the inputs as they are then. */
Test(gemm, captured_into_a_graph_and_replayed) {
  CJ_NEED_DEVICE(engine);
  capture_setup u = capture_product();
  for (int round = 1; round <= 2; round++) {
    float scaled[4], c[4];
    for (int i = 0; i < 4; i++) scaled[i] = cap_a[i] * (float)round;
    EXPECT_OK(cujit_memcpy_htod(u.a, 0, scaled, sizeof scaled, NULL));
    EXPECT_OK(cujit_memset(u.c, 0, 0, sizeof c, NULL));
    EXPECT_OK(cujit_graph_launch(u.g, u.s));
    EXPECT_OK(cujit_stream_synchronize(u.s));
    cj_test_download(c, u.c, sizeof c);
    float want[4] = {1.0f * round, 3.0f * round, 3.0f * round,
                     7.0f * round}; /* [[1 2][3 4]] [[1 1][0 1]] */
    for (int i = 0; i < 4; i++)
      cr_expect_eq(c[i], want[i], "replay %d: C[%d] is %g, want %g", round, i, c[i], want[i]);
  }
  capture_free(&u);
}

/* gemm.h from a user's kernel, on a grid of one block row: the blocks loop over the row tiles
** (what cujit_gemm relies on past 65535 of them), here 4 tiles of 64 and a part; and with TILE
** 128, 3 tiles of it and a part, on 2 block columns (n past 128). */
Test(gemm, header_kernel_loops_over_row_tiles) {
  CJ_NEED_DEVICE(engine);
  enum { M = 400, N = 131, K = 2 };
  static float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < K * N; i++) b[i] = (float)(i % 11) + 1.0f;
  cujit_buffer *da = cj_test_upload(a, sizeof a, CUJIT_F32),
               *db = cj_test_upload(b, sizeof b, CUJIT_F32);
  cujit_buffer *dc = cj_test_upload(NULL, sizeof c, CUJIT_F32);
  for (int tile = 64; tile <= 128; tile *= 2) {
    char body[160];
    snprintf(body, sizeof body,
             "cujit::gemm_simt<float, float, 0, %d>(a, b, c, nullptr, nullptr, m, n, k, 0, 0, "
             "1.0f, 0.0f);",
             tile);
    cujit_kernel *k;
    EXPECT_OK(cujit_kernel_define(
        engine, "mm(const float *a, const float *b, float *c, int m, int n, int k)", body,
        "#include <cujit/gemm.h>", NULL, &k));
    cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
    cfg.grid[0] = (N + tile - 1) / tile, cfg.grid[1] = cfg.grid[2] = 1;
    cfg.block[0] = 256, cfg.block[1] = cfg.block[2] = 1;
    cujit_arg args[] = {CUJIT_ARG_BUF(da), CUJIT_ARG_BUF(db), CUJIT_ARG_BUF(dc),
                        CUJIT_ARG_I(M),    CUJIT_ARG_I(N),    CUJIT_ARG_I(K)};
    EXPECT_OK(cujit_memset(dc, 0, 0, sizeof c, NULL));
    EXPECT_OK(cujit_launch(k, &cfg, args, 6));
    cj_test_download(c, dc, sizeof c);
    int bad = 0;
    for (int i = 0; i < M && bad < 5; i++)
      for (int j = 0; j < N && bad < 5; j++) {
        float want = a[i * K] * b[j] + a[i * K + 1] * b[N + j]; /* small integers: exact */
        if (c[i * N + j] != want) {
          bad++;
          cr_expect_fail("tile %d: C[%d][%d] is %g, want %g", tile, i, j, c[i * N + j], want);
        }
      }
    cujit_kernel_free(k);
  }
  cujit_buffer_free(da), cujit_buffer_free(db), cujit_buffer_free(dc);
}
