/*
** test_bf16.c -- the bf16 dtype (bfloat16, __nv_bfloat16) end to end: its name, C type, size and
** place at the end of cujit_dtype; kernel parameters read as bf16; a double argument rounded to it
** at the boundaries (ties to even, the largest value, what would become infinity refused,
** infinities, NaN, -0, subnormals); the units NVRTC compiles with the toolkit's cuda_bf16.h; a
** kernel over bf16 arrays on a device (a GPU when there is one, else the CPU device) checked
** against the host's own rounding, written here independently of cujit's; and what is refused
** for bf16, in cujit's words.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"
#include "program/launch.h"

TestSuite(bf16, .init = cj_fixture_open, .fini = cj_fixture_close, .timeout = 300);

/* The bfloat16 nearest to v (ties to even), by scaling in double: the host's reference. */
static uint16_t ref_bf16(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v), q;
  if (isnan(v)) return 0x7fc0;
  if (isinf(v)) return sign | 0x7f80;
  if (a < 0x1p-126) { /* subnormal: a multiple of 2^-133 */
    q = rint(a * 0x1p133) * 0x1p-133;
  } else { /* 8 significant bits */
    int e = ilogb(a);
    q = ldexp(rint(ldexp(a, 7 - e)), e - 7);
  }
  if (q >= 0x1p128) return sign | 0x7f80;
  float f = (float)q; /* exact: q has 8 significant bits */
  uint32_t u;
  memcpy(&u, &f, 4);
  return sign | (uint16_t)(u >> 16);
}

static double ref_double(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int is_nan_bits(uint16_t b) {
  return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
}

Test(bf16, named_sized_and_numbered_after_the_others) {
  cr_expect_str_eq(cujit_dtype_name(CUJIT_BF16), "bf16");
  cr_expect_str_eq(cujit_dtype_ctype(CUJIT_BF16), "__nv_bfloat16");
  cr_expect_eq(cujit_dtype_size(CUJIT_BF16), 2);
  cr_expect_eq(cujit_dtype_from_name("bf16"), CUJIT_BF16);
  cr_expect_eq(cujit_dtype_from_name("__nv_bfloat16"), CUJIT_BF16);
  cr_expect_eq(cujit_dtype_from_name("f16"), CUJIT_F16, "f16 is still f16");
  /* Added last: the values compiled into callers stay what they were. */
  cr_expect_eq((int)CUJIT_F16, 1);
  cr_expect_eq((int)CUJIT_U64, 11);
  cr_expect_eq((int)CUJIT_BF16, 12);
  cr_expect_eq((int)CUJIT_DTYPE_COUNT_, 13);
}

/* The whole table, written here from the header's words: each dtype by either spelling, and a
** value that is no dtype ("?", size 0) read nowhere past the table's end. */
Test(bf16, every_dtype_by_either_name_and_no_dtype_past_the_end) {
  static const struct {
    cujit_dtype d;
    const char *name, *ctype;
    size_t size;
  } want[] = {{CUJIT_F16, "f16", "__half", 2},
              {CUJIT_F32, "f32", "float", 4},
              {CUJIT_F64, "f64", "double", 8},
              {CUJIT_I8, "i8", "signed char", 1},
              {CUJIT_I16, "i16", "short", 2},
              {CUJIT_I32, "i32", "int", 4},
              {CUJIT_I64, "i64", "long long", 8},
              {CUJIT_U8, "u8", "unsigned char", 1},
              {CUJIT_U16, "u16", "unsigned short", 2},
              {CUJIT_U32, "u32", "unsigned int", 4},
              {CUJIT_U64, "u64", "unsigned long long", 8},
              {CUJIT_BF16, "bf16", "__nv_bfloat16", 2}};
  cr_assert_eq(sizeof want / sizeof *want, (size_t)CUJIT_DTYPE_COUNT_ - 1, "every dtype listed");
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    cr_expect_str_eq(cujit_dtype_name(want[i].d), want[i].name);
    cr_expect_str_eq(cujit_dtype_ctype(want[i].d), want[i].ctype, "%s", want[i].name);
    cr_expect_eq(cujit_dtype_size(want[i].d), want[i].size, "%s", want[i].name);
    cr_expect_eq(cujit_dtype_from_name(want[i].name), want[i].d, "%s", want[i].name);
    cr_expect_eq(cujit_dtype_from_name(want[i].ctype), want[i].d, "%s", want[i].ctype);
  }
  cr_expect_str_eq(cujit_dtype_name(CUJIT_DTYPE_NONE), "bytes");
  cr_expect_eq(cujit_dtype_size(CUJIT_DTYPE_NONE), 1);
  const int none[] = {CUJIT_DTYPE_COUNT_, CUJIT_DTYPE_COUNT_ + 1, 1000, -1, -1000};
  for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
    cr_expect_str_eq(cujit_dtype_name((cujit_dtype)none[i]), "?", "dtype %d", none[i]);
    cr_expect_str_eq(cujit_dtype_ctype((cujit_dtype)none[i]), "?", "dtype %d", none[i]);
    cr_expect_eq(cujit_dtype_size((cujit_dtype)none[i]), 0, "dtype %d", none[i]);
  }
  const char *unknown[] = {NULL, "", "f128", "F32", "float ", "bytes"};
  for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
    cr_expect_eq(cujit_dtype_from_name(unknown[i]), CUJIT_DTYPE_NONE, "%s",
                 unknown[i] ? unknown[i] : "NULL");
}

/* Packs a double for parameter 0 of `k` (no device needed). */
static cujit_status pack(cujit_kernel *k, double v, uint16_t *bits) {
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  cujit_arg args[2] = {CUJIT_ARG_F(v), {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0}};
  void *pointers[CJ_MAX_PARAMS];
  memset(params, 0xee, 16);
  cujit_status st = cj_launch_pack(k, args, 2, NULL, params, pointers);
  memcpy(bits, params, 2);
  return st;
}

Test(bf16, a_double_argument_rounds_to_nearest_even) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "bk(__nv_bfloat16 v, __nv_bfloat16 *out)", "out[0] = v;",
                                NULL, &sm90, &k));
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  EXPECT_OK(cujit_kernel_param(k, 0, &info));
  cr_expect(info.dtype == CUJIT_BF16 && info.size == 2 && info.kind == CUJIT_PARAM_SCALAR,
            "the scalar reads as %s of %zu bytes", cujit_dtype_name(info.dtype), info.size);
  EXPECT_OK(cujit_kernel_param(k, 1, &info));
  cr_expect(info.dtype == CUJIT_BF16 && info.kind == CUJIT_PARAM_POINTER,
            "the pointer points to %s", cujit_dtype_name(info.dtype));
  static const struct {
    double v;
    uint16_t want;
    const char *what;
  } cases[] = {
      {1.0, 0x3f80, "one"},
      {1.0 + 0x1p-8, 0x3f80, "a tie rounds to even (down)"},
      {1.0 + 3 * 0x1p-8, 0x3f82, "a tie from odd rounds up"},
      {1.0 + 0x1p-8 + 0x1p-40, 0x3f81, "just past a tie rounds up (no double rounding)"},
      {1.0 + 0x1p-8 - 0x1p-40, 0x3f80, "just below a tie rounds down"},
      {65504.0, 0x4780, "half's largest is 65536 in bfloat16"},
      {65520.0, 0x4780, "and so is half's overflow threshold"},
      {0x1.fep127, 0x7f7f, "the largest, 2^128 - 2^120 (3.3895e38)"},
      {-0x1.fep127, 0xff7f, "its negative"},
      {0x1.fefffffffffffp127, 0x7f7f, "just under half an ulp past the largest"},
      {0x1p-126, 0x0080, "the smallest normal"},
      {0x1p-133, 0x0001, "the smallest subnormal"},
      {0x1p-134, 0x0000, "half of it: a tie to zero"},
      {0x1.8p-133, 0x0002, "one and a half of it: a tie to even (up)"},
      {0x1.fep-127, 0x0080, "the largest subnormal's tie with the smallest normal"},
      {-0.0, 0x8000, "-0"},
      {1.0 / 3, 0x3eab, "a third"},
      {INFINITY, 0x7f80, "infinity passed as such"},
      {-INFINITY, 0xff80, "and its negative"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint16_t got;
    EXPECT_OK(pack(k, cases[i].v, &got));
    cr_expect_eq(got, cases[i].want, "%s: %a packed as 0x%04x, want 0x%04x", cases[i].what,
                 cases[i].v, got, cases[i].want);
    cr_expect_eq(got, ref_bf16(cases[i].v), "%s: the reference disagrees", cases[i].what);
  }
  uint16_t got;
  EXPECT_OK(pack(k, NAN, &got));
  cr_expect(is_nan_bits(got), "NaN stays NaN: 0x%04x", got);
  const double refused[] = {0x1.ffp127, -0x1.ffp127, 1e39, 0x1p128};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    EXPECT_FAIL(pack(k, refused[i], &got), CUJIT_ERROR_ARGUMENT,
                "is out of range for bf16 (it would become infinity; the largest is "
                "3.38953139e+38)");
  cujit_kernel_free(k);
}

/* The GPU's unit: the signature's __nv_bfloat16 brings in the toolkit's <cuda_bf16.h>, as __half
** brings <cuda_fp16.h>, and a source that includes it itself resolves it the same way. */
Test(bf16, nvrtc_compiles_kernels_over_bf16) {
  cujit_kernel *k;
  cujit_status st = cujit_kernel_define(
      engine, "bfma(const __nv_bfloat16 *x, __nv_bfloat16 s, __nv_bfloat16 *y, int n)",
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "if (i < n) y[i] = __hfma(s, x[i], y[i]) + __float2bfloat16(__bfloat162float(x[i]));",
      NULL, &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  EXPECT_OK(st);
  size_t len;
  const char *ptx = cujit_program_ptx(cujit_kernel_program(k), &len);
  cr_assert_not_null(ptx);
  cr_expect(strstr(ptx, ".entry bfma(") != NULL, "%s", ptx);
  cr_expect(strstr(ptx, ".align 2 .b8 bfma_param_1[2]") != NULL, "s is 2 bytes: %s", ptx);
  cujit_kernel_free(k);
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine,
                                  "#include <cuda_bf16.h>\n"
                                  "extern \"C\" __global__ void half_it(__nv_bfloat16 *x) {\n"
                                  "  x[threadIdx.x] = __hmul(x[threadIdx.x], "
                                  "__float2bfloat16(0.5f));\n}\n",
                                  "bf16.cu", &sm90, &p));
  cr_expect(strstr(cujit_program_ptx(p, &len), ".entry half_it(") != NULL);
  cujit_program_free(p);
}

/* Random bfloat16 values of exponent -8..8: their products and sums are exact in double, so the
** host rounds each result once, as the device must. */
static uint16_t random_bf16(void) {
  uint64_t r = cj_test_rand64();
  double m = 1.0 + (double)(r & 127) / 128, v = ldexp(m, (int)((r >> 8) % 17) - 8);
  return ref_bf16(r >> 16 & 1 ? -v : v);
}

/* On a GPU the toolkit's __hadd, __hmul and the compound operators may be contracted into one
** fma (cuda_bf16.h says so; __hadd_rn and the like are the exceptions): the kernel is compiled
** with -fmad=false there, so that each operation rounds once, as the host reference does. The
** CPU device never contracts them. */
Test(bf16, a_kernel_over_bf16_arrays_matches_the_host) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cujit_buffer *probe = cj_test_upload(NULL, 16, CUJIT_BF16);
  char arch[16];
  EXPECT_OK(cujit_device_arch(cujit_buffer_device(probe), arch, sizeof arch));
  cujit_buffer_free(probe);
  static const char *const no_fma[] = {"-fmad=false"};
  cujit_compile_options gpu = CUJIT_COMPILE_OPTIONS_INIT;
  gpu.extra_flags = no_fma, gpu.extra_flag_count = 1;
  EXPECT_OK(cujit_kernel_define(
      engine,
      "bops(const __nv_bfloat16 *x, const __nv_bfloat16 *y, __nv_bfloat16 s, __nv_bfloat16 *fma, "
      "__nv_bfloat16 *sum, __nv_bfloat16 *comp, float *widened, const float *f, "
      "unsigned short *bits, int n)",
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "if (i >= n) return;\n"
      "fma[i] = __hfma(s, x[i], y[i]);\n"
      "sum[i] = __hadd(__hmul(x[i], y[i]), s);\n"
      "__nv_bfloat16 c = x[i];\n"
      "c += y[i]; c *= s; c -= x[i]; c /= s;\n"
      "comp[i] = c;\n"
      "widened[i] = __bfloat162float(x[i]) + (float)y[i];\n"
      "bits[i] = __bfloat16_as_ushort(__float2bfloat16(f[i]));",
      NULL, strcmp(arch, "cpu") ? &gpu : NULL, &k));
  enum { N = 1000 };
  static uint16_t x[N], y[N], fma[N], sum[N], comp[N], bits[N];
  static float widened[N], f[N];
  for (int i = 0; i < N; i++) {
    x[i] = random_bf16(), y[i] = random_bf16();
    uint32_t u = (uint32_t)cj_test_rand64();
    memcpy(&f[i], &u, 4); /* any float: NaNs and infinities among them */
  }
  const float special[] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 0x1p-133f, 0x1p-134f, 0x1.fep127f,
                           0x1.ffp127f,    3.4028235e38f,      -0.0f,     INFINITY,  NAN,
                           65504.0f,       0x1.fep-127f};
  memcpy(f, special, sizeof special);
  double s = 1.0 + 0x1p-8 + 0x1p-20; /* just past a tie: 1 + 2^-7 */
  cujit_buffer *bx = cj_test_upload(x, sizeof x, CUJIT_BF16),
               *by = cj_test_upload(y, sizeof y, CUJIT_BF16);
  cujit_buffer *bfma = cj_test_upload(NULL, sizeof fma, CUJIT_BF16),
               *bsum = cj_test_upload(NULL, sizeof sum, CUJIT_BF16),
               *bcomp = cj_test_upload(NULL, sizeof comp, CUJIT_BF16),
               *bw = cj_test_upload(NULL, sizeof widened, CUJIT_F32),
               *bf = cj_test_upload(f, sizeof f, CUJIT_F32),
               *bbits = cj_test_upload(NULL, sizeof bits, CUJIT_U16);
  cujit_arg args[] = {CUJIT_ARG_BUF(bx),   CUJIT_ARG_BUF(by),   CUJIT_ARG_F(s),
                      CUJIT_ARG_BUF(bfma), CUJIT_ARG_BUF(bsum), CUJIT_ARG_BUF(bcomp),
                      CUJIT_ARG_BUF(bw),   CUJIT_ARG_BUF(bf),   CUJIT_ARG_BUF(bbits),
                      CUJIT_ARG_I(N)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  EXPECT_OK(cujit_launch(k, &cfg, args, 10));
  cj_test_download(fma, bfma, sizeof fma);
  cj_test_download(sum, bsum, sizeof sum);
  cj_test_download(comp, bcomp, sizeof comp);
  cj_test_download(widened, bw, sizeof widened);
  cj_test_download(bits, bbits, sizeof bits);
  double sv = ref_double(ref_bf16(s));
  cr_expect_eq(ref_bf16(s), 0x3f81);
  int bad_fma = 0, bad_sum = 0, bad_comp = 0, bad_wide = 0, bad_bits = 0;
  for (int i = 0; i < N; i++) {
    double xv = ref_double(x[i]), yv = ref_double(y[i]);
    bad_fma += fma[i] != ref_bf16(sv * xv + yv);
    bad_sum += sum[i] != ref_bf16(ref_double(ref_bf16(xv * yv)) + sv);
    double c = ref_double(ref_bf16(xv + yv)); /* each compound assignment rounds */
    c = ref_double(ref_bf16(c * sv)), c = ref_double(ref_bf16(c - xv));
    bad_comp += comp[i] != ref_bf16(c / sv);
    bad_wide += widened[i] != (float)xv + (float)yv;
    uint16_t want = ref_bf16(f[i]);
    if (bad_bits < 5 && (isnan(f[i]) ? !is_nan_bits(bits[i]) : bits[i] != want))
      cr_log_error("element %d: %a became 0x%04x, want 0x%04x", i, f[i], bits[i], want);
    bad_bits += isnan(f[i]) ? !is_nan_bits(bits[i]) : bits[i] != want;
  }
  cr_expect_eq(bad_fma, 0, "__hfma: %d of %d differ from the host's rounding", bad_fma, N);
  cr_expect_eq(bad_sum, 0, "__hadd(__hmul): %d of %d differ", bad_sum, N);
  cr_expect_eq(bad_comp, 0, "+= *= -= /=: %d of %d differ", bad_comp, N);
  cr_expect_eq(bad_wide, 0, "__bfloat162float and (float): %d of %d differ", bad_wide, N);
  cr_expect_eq(bad_bits, 0, "__float2bfloat16: %d of %d differ", bad_bits, N);
  cujit_buffer_free(bx), cujit_buffer_free(by), cujit_buffer_free(bfma), cujit_buffer_free(bsum);
  cujit_buffer_free(bcomp);
  cujit_buffer_free(bw), cujit_buffer_free(bf), cujit_buffer_free(bbits);
  cujit_kernel_free(k);
}

/* The binary16 nearest to v (ties to even), by scaling in double as ref_bf16 does. */
static uint16_t ref_half(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v), q;
  if (isnan(v)) return 0x7e00;
  if (a < 0x1p-14) { /* subnormal: a multiple of 2^-24 */
    q = rint(a * 0x1p24) * 0x1p-24;
  } else { /* 11 significant bits */
    int e = ilogb(a);
    q = ldexp(rint(ldexp(a, 10 - e)), e - 10);
  }
  if (q >= 0x1p16) return sign | 0x7c00;
  if (q < 0x1p-14) return sign | (uint16_t)(q * 0x1p24);
  int e = ilogb(q);
  return sign | (uint16_t)((e + 15) << 10 | ((uint16_t)ldexp(q, 10 - e) & 0x3ff));
}

/* A double converted in a kernel (__double2bfloat16, __double2half, the types' constructors) is
** rounded once, as the GPU's cvt.rn.bf16.f64 / cvt.rn.f16.f64: a value just past a tie of the
** 16-bit type, which float's rounding alone would put on the tie (then rounded to even), goes up;
** also just below a tie, on the tie itself, past either type's largest value, in the subnormals,
** below the least subnormal, and random doubles with bits past float's. */
Test(bf16, a_double_in_a_kernel_rounds_once) {
  CJ_NEED_DEVICE(engine);
  enum { N = 64 };
  static double d[N] = {1 + 0x1p-8 + 0x1p-30,
                        1 + 0x1p-8 - 0x1p-30,
                        1 + 0x1p-8,
                        -(1 + 0x1p-8 + 0x1p-40),
                        1 + 0x1p-11 + 0x1p-30,
                        1 + 0x1p-11 - 0x1p-30,
                        1 + 0x1p-11,
                        -(1 + 0x1p-11 + 0x1p-40),
                        0x1.ff8p127 + 0x1p90,
                        65520.0 - 0x1p-20,
                        65520.0,
                        0x1p-134 + 0x1p-160,
                        0x1p-25 + 0x1p-60,
                        0x1p-25,
                        1e-300,
                        -1e-300,
                        0x1.0000010000001p-3,
                        3 * (1 + 0x1p-9) + 0x1p-35};
  for (int i = 18; i < N; i++) { /* past float's bits, and around the 16-bit types' ties */
    uint64_t r = cj_test_rand64();
    d[i] = ldexp((double)(r >> 11) * 0x1p-53 + 1, (int)(r % 40) - 20) * (r & 1 ? -1 : 1);
  }
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(
      engine, "dround(const double *d, unsigned short *b, unsigned short *h, int n)",
      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "if (i >= n) return;\n"
      "b[2 * i] = __bfloat16_as_ushort(__double2bfloat16(d[i]));\n"
      "__nv_bfloat16 bc = d[i]; b[2 * i + 1] = __bfloat16_as_ushort(bc);\n"
      "h[2 * i] = __half_as_ushort(__double2half(d[i]));\n"
      "__half hc = d[i]; h[2 * i + 1] = __half_as_ushort(hc);",
      "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n", NULL, &k));
  cujit_buffer *bd = cj_test_upload(d, sizeof d, CUJIT_F64);
  static uint16_t b[2 * N], h[2 * N];
  cujit_buffer *bb = cj_test_upload(NULL, sizeof b, CUJIT_U16);
  cujit_buffer *bh = cj_test_upload(NULL, sizeof h, CUJIT_U16);
  cujit_arg args[] = {CUJIT_ARG_BUF(bd), CUJIT_ARG_BUF(bb), CUJIT_ARG_BUF(bh), CUJIT_ARG_I(N)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = N;
  EXPECT_OK(cujit_launch(k, &cfg, args, 4));
  cj_test_download(b, bb, sizeof b);
  cj_test_download(h, bh, sizeof h);
  cr_expect_eq(ref_bf16(d[0]), 0x3f81, "the reference: 1 + 2^-8 + 2^-30 is bfloat16's 1 + 2^-7");
  cr_expect_eq(ref_half(d[4]), 0x3c01, "the reference: 1 + 2^-11 + 2^-30 is binary16's 1 + 2^-10");
  int wrong = 0;
  for (int i = 0; i < 2 * N; i++) {
    uint16_t wb = ref_bf16(d[i / 2]), wh = ref_half(d[i / 2]);
    const char *how = i % 2 ? "the constructor" : "__double2";
    if (b[i] != wb && wrong++ < 10)
      cr_log_error("%s bf16 of %a: 0x%04x, rounded once 0x%04x", how, d[i / 2], b[i], wb);
    if (h[i] != wh && wrong++ < 10)
      cr_log_error("%s half of %a: 0x%04x, rounded once 0x%04x", how, d[i / 2], h[i], wh);
  }
  cr_expect_eq(wrong, 0, "%d conversions rounded twice (the first 10 above)", wrong);
  cujit_buffer_free(bd), cujit_buffer_free(bb), cujit_buffer_free(bh);
  cujit_kernel_free(k);
}

/* What f16 is refused, bf16 is refused too, saying what to do. */
Test(bf16, refusals_name_bf16) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *h = cj_test_upload(NULL, 16, CUJIT_F16), *b = cj_test_upload(NULL, 16, CUJIT_BF16);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "takes(__nv_bfloat16 *x)", "x[0] = x[1];", NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_BUF(h)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  EXPECT_FAIL(cujit_launch(k, &cfg, args, 1), CUJIT_ERROR_ARGUMENT,
              "the buffer holds f16 but the parameter points to bf16");
  cujit_kernel_free(k);
  EXPECT_FAIL(cujit_random_uniform(b, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "the buffer holds bf16; random fills need an f32 or f64 buffer");
  cujit_buffer_free(h), cujit_buffer_free(b);
}

/* The CPU device has scalar __nv_bfloat16 (<cuda_bf16.h> is cujit/bf16.h there) but, as for
** __half, no atomicAdd on it and no __nv_bfloat162 pairs: both refused at the user's line. */
Test(bf16, the_cpu_device_refuses_bf16_atomics_and_pairs) {
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) != CUJIT_OK)
    cr_skip_test("no CPU device: %s", cujit_errmsg(engine));
  cujit_kernel *k;
  EXPECT_FAIL(cujit_kernel_define(engine, "ab(__nv_bfloat16 *o)",
                                  "int unused = 0; (void)unused;\n"
                                  "atomicAdd(o, __float2bfloat16(1.0f));",
                                  NULL, NULL, &k),
              CUJIT_ERROR_COMPILE, "atomicAdd on this type (__half, __half2, __nv_bfloat16");
  cr_expect(strstr(cujit_errmsg(engine), "kernel 'ab' failed to compile: line 2 of its body"), "%s",
            cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "is not supported on the CPU device"), "%s",
            cujit_errmsg(engine));
  EXPECT_FAIL(cujit_kernel_define(engine, "pairs(__nv_bfloat16 *o)",
                                  "__nv_bfloat162 p; p.x = o[0]; p.y = o[1]; o[2] = p.x;", NULL,
                                  NULL, &k),
              CUJIT_ERROR_COMPILE,
              "kernel 'pairs' uses __nv_bfloat162 pairs (line 1 of its body), which is not "
              "supported on the CPU device");
}
