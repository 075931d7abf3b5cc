/*
** test_gemm_tc.c -- cujit_gemm's tensor-core path (kernels_src/cujit/gemm_tc.h: wgmma fed by TMA,
** sm_90): its programs compiled for sm_90a (and refused for plain sm_90) on any machine,
** CUJIT_GEMM's refusals on any device, each reason the path gives for a shape or alignment it
** cannot take, and on an sm_90 GPU, forced with CUJIT_GEMM=tensor, every layout, epilogue and
** output dtype on shapes that are one tile, ragged, deep enough to wrap the pipeline's stages and
** more tiles than multiprocessors, against test_gemm.c's host reference (gemm_reference.h).
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gemm_reference.h"
#include "gpu.h"
#include "program/library.h"

TestSuite(gemm_tc, .init = cj_fixture_open, .fini = cj_fixture_close);

/* --- the tensor-core path ----------------------------------------------------------------------
 */

static void force_path(const char *path) {
  cr_assert_eq(setenv("CUJIT_GEMM", path, 1), 0);
}

/* Whether the device `buf` lives on is sm_90, the tensor path's. */
static int on_sm90(const cujit_buffer *buf) {
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(cujit_buffer_device(buf), &info));
  return info.cc_major == 9 && info.cc_minor == 0;
}

static const char *const tc_prefix =
    "cujit_gemm: CUJIT_GEMM=tensor, but the tensor-core path cannot run this product: ";
static const char *const tc_suffix = " (unset CUJIT_GEMM to fall back to the SIMT path)";

/* The tensor programs (tiles 256 and 128 wide) compile for sm_90a on any machine, one kernel per
** operand layout; for plain sm_90 the header stops the compile, saying why. Five whole compiles
** by NVRTC and ptxas: under the sanitizer build on CI's 2 shared cores they took past 240 s. */
Test(gemm_tc, tensor_program_compiles_for_sm_90a_only, .timeout = 480) {
  static const cujit_dtype ins[] = {CUJIT_F16, CUJIT_F16, CUJIT_F16, CUJIT_BF16, CUJIT_BF16};
  static const cujit_dtype outs[] = {CUJIT_F16, CUJIT_F32, CUJIT_F32, CUJIT_BF16, CUJIT_F32};
  static const int widths[] = {256, 256, 128, 256, 128};
  cujit_compile_options sm90a = sm90;
  sm90a.arch = "sm_90a";
  for (size_t p = 0; p < 5; p++) {
    char *src = cj_gemm_tc_source(ins[p], outs[p], widths[p]);
    cr_assert(src);
    cujit_program *prog;
    EXPECT_OK(cujit_program_compile(engine, src, "gemm tc", &sm90a, &prog));
    for (int layout = 0; layout < 4; layout++) {
      char name[16];
      snprintf(name, sizeof name, "cj_gemm_tc%d", layout);
      cujit_kernel *k;
      EXPECT_OK(cujit_program_kernel(prog, name, &k));
      cujit_kernel_free(k);
    }
    cujit_program_free(prog);
    if (p == 0) {
      cr_expect_neq(cujit_program_compile(engine, src, "gemm tc", &sm90, &prog), CUJIT_OK);
      cr_expect(strstr(cujit_errmsg(engine), "needs the arch-specific target sm_90a"),
                "compiling the tensor program for sm_90 said: %s", cujit_errmsg(engine));
    }
    free(src);
  }
}

/* CUJIT_GEMM: a value it does not know, and "tensor" where the tensor path cannot run (each
** reason), refused with the message; "simt" and "auto" run. On whatever device is current. */
Test(gemm_tc, path_choice_refusals) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *f = cj_test_upload(NULL, 4 * 4, CUJIT_F32),
               *h = cj_test_upload(NULL, 4 * 2, CUJIT_F16);
  cujit_buffer *c = cj_test_upload(NULL, 4 * 4, CUJIT_F32);
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = o.n = o.k = 2;
  force_path("fast");
  EXPECT_REFUSED(cujit_gemm(f, f, c, &o, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm: CUJIT_GEMM='fast' is not understood: it takes auto, simt or tensor");
  force_path("tensor");
  const char *prefix = tc_prefix, *suffix = tc_suffix;
  char want[512];
  if (!on_sm90(h)) {
    snprintf(want, sizeof want, "%sit runs on sm_90 GPUs only (wgmma)%s", prefix, suffix);
    EXPECT_REFUSED(cujit_gemm(h, h, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  } else {
    snprintf(want, sizeof want, "%sit takes f16 or bf16 inputs only%s", prefix, suffix);
    EXPECT_REFUSED(cujit_gemm(f, f, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
    snprintf(want, sizeof want, "%sit needs m >= 128, n >= 128 and k >= 64%s", prefix, suffix);
    EXPECT_REFUSED(cujit_gemm(h, h, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  }
  force_path("simt");
  EXPECT_OK(cujit_gemm(h, h, c, &o, NULL));
  force_path("auto");
  EXPECT_OK(cujit_gemm(h, h, c, &o, NULL));
  force_path(""); /* set but empty: as unset, auto (cujit's rule for every variable) */
  EXPECT_OK(cujit_gemm(h, h, c, &o, NULL));
  unsetenv("CUJIT_GEMM");
  cujit_buffer_free(f), cujit_buffer_free(h), cujit_buffer_free(c);
}

/* cujit_gemm_kernel_for: the kernel cujit_gemm would run, on whatever device is current (the
** stand-in driver's sm_90 GPU in c.test_gemm_tc.stub_driver: its answers there are the real
** path choice, as nothing runs). Each rule of the fit turns the answer, CUJIT_GEMM forces it,
** and its refusals are cujit_gemm's. */
Test(gemm_tc, kernel_for_names_the_kernel_each_product_takes) {
  CJ_NEED_DEVICE(engine);
  enum { M = 136, N = 264, K = 72 };
  cujit_buffer *a = cj_test_upload(NULL, (M * K + 8) * 2, CUJIT_F16),
               *b = cj_test_upload(NULL, (K * N + 8) * 2, CUJIT_F16),
               *bh = cj_test_upload(NULL, (K * N + 8) * 2, CUJIT_BF16),
               *f = cj_test_upload(NULL, (M * K + 8) * 4, CUJIT_F32),
               *g = cj_test_upload(NULL, (K * N + 8) * 4, CUJIT_F32),
               *c = cj_test_upload(NULL, M * N * 4, CUJIT_F32), *a1;
  EXPECT_OK(cujit_buffer_view(a, 2, M * K * 2, CUJIT_F16, &a1)); /* 2 bytes past 16 */
  const int sm90 = on_sm90(a);
  const cujit_gemm_kernel tensor = sm90 ? CUJIT_GEMM_KERNEL_TENSOR : CUJIT_GEMM_KERNEL_SIMT,
                          simt = CUJIT_GEMM_KERNEL_SIMT;
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  cujit_gemm_kernel got = 0;
#define KERNEL_IS(A, B, want, why)                                                                 \
  do {                                                                                             \
    got = 0;                                                                                       \
    EXPECT_OK(cujit_gemm_kernel_for((A), (B), c, &o, NULL, &got));                                 \
    cr_expect_eq(got, (want), "%s: got %d, want %d (m %lld n %lld k %lld ta %d tb %d)", (why),     \
                 (int)got, (int)(want), (long long)o.m, (long long)o.n, (long long)o.k, o.trans_a, \
                 o.trans_b);                                                                       \
  } while (0)
  unsetenv("CUJIT_GEMM");
  o.m = M, o.n = N, o.k = K;
  KERNEL_IS(a, b, tensor, "f16, every size and row a multiple of 8");
  o.m = 128, o.n = 128, o.k = 64;
  KERNEL_IS(a, b, tensor, "the smallest product it takes");
  o.m = 127;
  KERNEL_IS(a, b, simt, "m below 128");
  o.m = 128, o.n = 127;
  KERNEL_IS(a, b, simt, "n below 128");
  o.n = 128, o.k = 63;
  KERNEL_IS(a, b, simt, "k below 64");
  o.m = M, o.n = N, o.k = K - 1;
  KERNEL_IS(a, b, simt, "a's rows (k) not a multiple of 8");
  o.k = K, o.n = N - 1;
  KERNEL_IS(a, b, simt, "b's rows (n) not a multiple of 8");
  o.trans_b = 1, o.n = N - 1;
  KERNEL_IS(a, b, tensor, "b transposed: its rows are k long, n may be odd");
  o.trans_b = 0, o.n = N, o.trans_a = 1, o.m = M - 1;
  KERNEL_IS(a, b, simt, "a transposed: its rows are m long, m odd");
  o.m = M;
  KERNEL_IS(a, b, tensor, "a transposed, m a multiple of 8");
  o.trans_a = 0;
  KERNEL_IS(a1, b, simt, "a misaligned by 2 bytes");
  KERNEL_IS(f, g, simt, "f32 inputs");
  force_path("simt");
  KERNEL_IS(a, b, simt, "CUJIT_GEMM=simt");
  force_path("auto");
  KERNEL_IS(a, b, tensor, "CUJIT_GEMM=auto");
  force_path("tensor");
  if (sm90) {
    KERNEL_IS(a, b, CUJIT_GEMM_KERNEL_TENSOR, "CUJIT_GEMM=tensor where it fits");
    EXPECT_FAIL(cujit_gemm_kernel_for(f, g, c, &o, NULL, &got), CUJIT_ERROR_UNSUPPORTED,
                "cujit_gemm: CUJIT_GEMM=tensor, but the tensor-core path cannot run this "
                "product: it takes f16 or bf16 inputs only");
  } else {
    EXPECT_FAIL(cujit_gemm_kernel_for(a, b, c, &o, NULL, &got), CUJIT_ERROR_UNSUPPORTED,
                "it runs on sm_90 GPUs only (wgmma)");
  }
  force_path("fast");
  EXPECT_REFUSED(cujit_gemm_kernel_for(a, b, c, &o, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm: CUJIT_GEMM='fast' is not understood: it takes auto, simt or tensor");
  unsetenv("CUJIT_GEMM");
  /* cujit_gemm's refusals, in its words, and the answer's own */
  EXPECT_REFUSED(cujit_gemm_kernel_for(a, b, c, &o, NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm_kernel_for needs somewhere to put the answer (kernel is NULL)");
  EXPECT_REFUSED(cujit_gemm_kernel_for(NULL, b, c, &o, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm needs buffers a, b and c (a is NULL)");
  EXPECT_REFUSED(cujit_gemm_kernel_for(a, b, c, NULL, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm needs options giving m, n and k (CUJIT_GEMM_OPTIONS_INIT)");
  EXPECT_REFUSED(cujit_gemm_kernel_for(a, bh, c, &o, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm: a holds f16 but b holds bf16; they must match");
  o.k = K + 1;
  EXPECT_FAIL(cujit_gemm_kernel_for(a, b, c, &o, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_gemm: a holds 9800 elements but needs 9928");
  o.k = 0;
  EXPECT_REFUSED(cujit_gemm_kernel_for(a, b, c, &o, NULL, &got), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm: k (the columns of op(A), the rows of op(B)) is 0; it must be "
                 "between 1 and 2147483647");
#undef KERNEL_IS
  cujit_buffer_free(a1);
  cujit_buffer_free(a), cujit_buffer_free(b), cujit_buffer_free(bh), cujit_buffer_free(f);
  cujit_buffer_free(g), cujit_buffer_free(c);
}

/* On an sm_90 GPU, the tensor path where it fits (size and alignment), each reason refused. */
Test(gemm_tc, tensor_path_fit_refusals) {
  CJ_NEED_GPU(engine);
  enum { M = 136, N = 264, K = 72 };
  cujit_buffer *a = cj_test_upload(NULL, (M * K + 8) * 2, CUJIT_F16),
               *b = cj_test_upload(NULL, (K * N + 8) * 2, CUJIT_F16);
  if (!on_sm90(a)) cr_skip_test("the tensor path is sm_90's");
  cujit_buffer *c = cj_test_upload(NULL, M * N * 4, CUJIT_F32), *a1;
  EXPECT_OK(cujit_buffer_view(a, 2, M * K * 2, CUJIT_F16, &a1)); /* 2 bytes past 16 */
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = M, o.n = N, o.k = K;
  force_path("tensor");
  EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  const char *prefix = tc_prefix, *suffix = tc_suffix;
  char want[512];
  snprintf(want, sizeof want, "%sa and b must start on 16-byte boundaries%s", prefix, suffix);
  EXPECT_REFUSED(cujit_gemm(a1, b, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  snprintf(want, sizeof want,
           "%sthe contiguous dimension of a and of b (k, m when a is transposed, n when b is "
           "not) must be a multiple of 8%s",
           prefix, suffix);
  o.k = K - 1; /* a's rows of 71 */
  EXPECT_REFUSED(cujit_gemm(a, b, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  o.k = K, o.n = N - 8; /* b's rows of 256: fine */
  EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  o.n = N - 1;
  EXPECT_REFUSED(cujit_gemm(a, b, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  o.n = N, o.trans_a = 1, o.m = M - 1; /* a transposed: its rows are m long */
  EXPECT_REFUSED(cujit_gemm(a, b, c, &o, NULL), CUJIT_ERROR_UNSUPPORTED, want);
  unsetenv("CUJIT_GEMM");
  o.k = K - 1, o.trans_a = 0, o.m = M; /* auto: the SIMT path takes what the tensor path cannot */
  EXPECT_OK(cujit_gemm(a, b, c, &o, NULL));
  cujit_buffer_free(a1);
  cujit_buffer_free(a), cujit_buffer_free(b), cujit_buffer_free(c);
}

/* The tensor path against the reference: one exact tile; a ragged shape (edges inside the tile
** and inside the k slice); a deep k (16 slices through 4 stages: each stage reused 4 times) on
** several tiles; n between 128 and 256; all of these on tiles 128 wide (fewer tiles of 256 than
** multiprocessors); more tiles than multiprocessors on tiles 256 wide; every operand layout, both
*output dtypes, every epilogue with alpha and beta.
** Hopper's tensor cores accumulate in f32 without promising IEEE rounding: the bound is 4 times
** the SIMT one (still far below a wrong element, a term's size). */
Test(gemm_tc, tensor_path_matches_the_reference, .timeout = 300) {
  CJ_NEED_GPU(engine);
  cujit_buffer *probe = cj_test_upload(NULL, 16, CUJIT_F16);
  int sm90 = on_sm90(probe);
  cujit_buffer_free(probe);
  if (!sm90) cr_skip_test("the tensor path is sm_90's");
  force_path("tensor");
  static const int shapes[][3] = {{128, 256, 64}, {136, 264, 72}, {264, 520, 1024}, {136, 200, 72}};
  for (size_t sh = 0; sh < 4; sh++)
    for (int tr = 0; tr < 4; tr++) {
      gemm_case t = {CUJIT_F16,
                     sh == 1 ? CUJIT_F16 : CUJIT_F32,
                     shapes[sh][0],
                     shapes[sh][1],
                     shapes[sh][2],
                     tr & 1,
                     tr >> 1,
                     0,
                     0,
                     0,
                     1.0,
                     0.0,
                     4.0};
      check_case(&t);
    }
  /* bf16 inputs, into bf16 and f32, every layout, on both widths (n 264 and 200), and on more
  ** tiles than multiprocessors */
  for (int tr = 0; tr < 8; tr++) {
    gemm_case t = {CUJIT_BF16,
                   tr & 4 ? CUJIT_BF16 : CUJIT_F32,
                   136,
                   tr & 4 ? 264 : 200,
                   72,
                   tr & 1,
                   (tr >> 1) & 1,
                   tr & 1,
                   0,
                   0,
                   1.0,
                   0.0,
                   4.0};
    check_case(&t);
  }
  gemm_case wide = {CUJIT_BF16, CUJIT_F32, 2048, 2304, 264, 0, 0, 0, 1, 0, 1.0, 0.0, 4.0};
  check_case(&wide);
  /* an odd n (B transposed: its rows are k long): C's rows are not pairs of elements */
  for (int tr = 2; tr < 4; tr++) {
    gemm_case t = {
        CUJIT_F16, tr == 2 ? CUJIT_F16 : CUJIT_F32, 136, 261, 72, tr & 1, 1, 1, 0, 0, 1.0, 0.5,
        4.0};
    check_case(&t);
  }
  /* more tiles (16 x 9) than an H200 has multiprocessors (132): persistent blocks take a second
  ** tile, their stages and phases running on from the first (5 slices a tile through 4 stages) */
  for (int tr = 0; tr < 4; tr++) {
    gemm_case t = {CUJIT_F16, CUJIT_F32, 2048, 2304, 264, tr & 1, tr >> 1, 0, 0, 0, 1.0, 0.0, 4.0};
    check_case(&t);
  }
  for (int epi = 1; epi < 8; epi += 3) { /* epilogues and an f16 C on tiles 256 wide */
    gemm_case t = {CUJIT_F16,
                   epi == 4 ? CUJIT_F16 : CUJIT_F32,
                   2048,
                   2304,
                   72,
                   epi & 1,
                   0,
                   epi & 1,
                   (epi >> 1) & 1,
                   epi >> 2,
                   0.5,
                   -1.5,
                   4.0};
    check_case(&t);
  }
  for (int epi = 0; epi < 8; epi++) {
    gemm_case t = {CUJIT_F16,
                   epi & 1 ? CUJIT_F16 : CUJIT_F32,
                   200,
                   264,
                   136,
                   epi & 1,
                   !(epi & 2),
                   epi & 1,
                   (epi >> 1) & 1,
                   epi >> 2,
                   0.5,
                   epi ? -1.5 : 0.0,
                   4.0};
    check_case(&t);
  }
  unsetenv("CUJIT_GEMM");
}
