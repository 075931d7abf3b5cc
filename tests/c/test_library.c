/*
** test_library.c -- the device library (kernels_src/cujit) and its C API: every header compiled
** by NVRTC for sm_90, Philox4x32-10 against Random123's known answers, the elementwise builder's
** (all on CI); and on the GPU, the random fills (statistics, determinism, offsets, equality with
** the host reference), reductions and dot products against host results on random data of awkward
** lengths, and device-side warp and block reductions. The elementwise builder: test_elementwise.c.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "gpu.h"
#include "program/library.h"

TestSuite(library, .init = cj_fixture_open, .fini = cj_fixture_close);

/* --- host reference of Philox4x32-10 and the streams built on it ------------------------------ */

static void philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    if (r > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * x[0], p1 = (uint64_t)0xCD9E8D57u * x[2];
    uint32_t y[4] = {(uint32_t)(p1 >> 32) ^ x[1] ^ k0, (uint32_t)p1,
                     (uint32_t)(p0 >> 32) ^ x[3] ^ k1, (uint32_t)p0};
    memcpy(x, y, sizeof x);
  }
  memcpy(out, x, sizeof x);
}

static void block_words(uint64_t seed, uint64_t block, uint64_t stream, uint32_t w[4]) {
  uint32_t c[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)stream,
                   (uint32_t)(stream >> 32)};
  uint32_t k[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  philox(c, k, w);
}

static float ref_uniform_f32(uint64_t seed, uint64_t index, uint64_t stream) {
  uint32_t w[4];
  block_words(seed, index / 4, stream, w);
  return (float)((w[index % 4] >> 8) + 1u) * 0x1p-24f;
}

static double ref_uniform_f64(uint64_t seed, uint64_t index, uint64_t stream) {
  uint32_t w[4];
  block_words(seed, index / 2, stream, w);
  unsigned j = 2 * (unsigned)(index % 2);
  uint64_t bits = ((uint64_t)w[j + 1] << 32 | w[j]) >> 11;
  return (double)(bits + 1) * 0x1p-53;
}

/* Box-Muller in double on the host: pairs (0,1), (2,3) of a float block, the two of a double. */
static double ref_normal_f32(uint64_t seed, uint64_t index, uint64_t stream) {
  uint64_t pair = index & ~(uint64_t)1;
  double u1 = ref_uniform_f32(seed, pair, stream), u2 = ref_uniform_f32(seed, pair + 1, stream);
  double r = sqrt(-2.0 * log(u1));
  return (index & 1) ? r * sin(2 * M_PI * u2) : r * cos(2 * M_PI * u2);
}

static double ref_normal_f64(uint64_t seed, uint64_t index, uint64_t stream) {
  uint64_t pair = index & ~(uint64_t)1;
  double u1 = ref_uniform_f64(seed, pair, stream), u2 = ref_uniform_f64(seed, pair + 1, stream);
  double r = sqrt(-2.0 * log(u1));
  return (index & 1) ? r * sin(2 * M_PI * u2) : r * cos(2 * M_PI * u2);
}

/* Known answers for philox4x32 with 10 rounds: Random123's tests/kat_vectors (counter, key,
** expected). */
Test(library, philox_reference_matches_random123_known_answers) {
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1},
  };
  for (int t = 0; t < 3; t++) {
    uint32_t out[4];
    philox(kat[t], kat[t] + 4, out);
    for (int i = 0; i < 4; i++)
      cr_expect_eq(out[i], kat[t][6 + i], "vector %d word %d: %08x, expected %08x", t, i, out[i],
                   kat[t][6 + i]);
  }
}

Test(library, uniform_conversion_is_in_half_open_unit_interval) {
  /* The extremes of the conversion: 0 bits give the smallest value, all ones give exactly 1. */
  cr_assert_eq((float)((0u >> 8) + 1u) * 0x1p-24f, 0x1p-24f);
  cr_assert_eq((float)((0xffffffffu >> 8) + 1u) * 0x1p-24f, 1.0f);
  for (uint64_t i = 0; i < 4096; i++) {
    float f = ref_uniform_f32(42, i, 0);
    double d = ref_uniform_f64(42, i, 7);
    cr_assert(f > 0 && f <= 1 && d > 0 && d <= 1);
  }
}

/* --- every header through NVRTC --------------------------------------------------------------- */

static cujit_status compile_timed(const char *src, const char *name, cujit_program **p) {
  double t0 = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  cujit_status st = cujit_program_compile(engine, src, name, &sm90, p);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  if (st == CUJIT_OK)
    printf("compile %-28s %7.1f ms (%s)\n", name, ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 - t0,
           cujit_program_from_cache(*p) ? "cache" : "NVRTC");
  return st;
}

static const char all_headers_source[] =
    "#include <cujit/prelude.h>\n"
    "#include <cujit/grid.h>\n"
    "#include <cujit/random.h>\n"
    "#include <cujit/reduce.h>\n"
    "#include <cujit/half.h>\n"
    "#include <cujit/bf16.h>\n"
    "extern \"C\" __global__ void use_all(float *f, double *d, long long *l, unsigned *u,\n"
    "                                     __half *h, __nv_bfloat16 *bh,\n"
    "                                     unsigned long long seed) {\n"
    "  long long i = cujit::grid1(), s = cujit::gridsize1();\n"
    "  cujit::index2 i2 = cujit::grid2(), s2 = cujit::gridsize2();\n"
    "  cujit::index3 i3 = cujit::grid3(), s3 = cujit::gridsize3();\n"
    "  l[0] = i + s + i2.x + s2.y + i3.z + s3.x + cujit::block_rank() + cujit::block_threads();\n"
    "  for (long long j : cujit::grid_stride(100)) l[j] = j;\n"
    "  uint4 w = cujit::philox4x32_10(make_uint4(1, 2, 3, 4), make_uint2(5, 6));\n"
    "  u[0] = w.x ^ cujit::random_block(seed, i, 2).y;\n"
    "  float4 a = cujit::uniform_float4(seed, i), b = cujit::normal_float4(seed, i, 1);\n"
    "  double2 c = cujit::uniform_double2(seed, i), e = cujit::normal_double2(seed, i);\n"
    "  f[i] = a.x + b.y + cujit::uniform_float(seed, i) + cujit::normal_float(seed, i, 3);\n"
    "  d[i] = c.x + e.y + cujit::uniform_double(seed, i) + cujit::normal_double(seed, i);\n"
    "  f[1] = cujit::warp_sum(f[i]) + cujit::warp_min(f[i]) + cujit::warp_max(f[i]);\n"
    "  f[2] = cujit::block_sum(f[i]) + cujit::block_min(f[i]) + cujit::block_max(f[i]);\n"
    "  d[1] = cujit::block_sum(d[i]) + cujit::block_min(d[i]) + cujit::block_max(d[i]);\n"
    "  l[1] = cujit::block_sum(l[i]) + cujit::block_min(l[i]) + cujit::block_max(l[i]);\n"
    "  u[1] = cujit::block_sum(u[i]) + cujit::block_min(u[i]) + cujit::block_max(u[i]);\n"
    "  int k = cujit::block_sum((int)i) + cujit::warp_max((int)i);\n"
    "  unsigned long long q = cujit::block_max((unsigned long long)i);\n"
    "  h[i] = cujit::from_float<__half>(cujit::to_float(h[i]) + (float)k + (float)q);\n"
    "  f[3] = __half2float(__float2half(f[3]));\n"
    "  bh[i] = cujit::from_float<__nv_bfloat16>(cujit::to_float(bh[i]) + (float)k);\n"
    "  f[4] = __bfloat162float(__float2bfloat16(f[4]));\n"
    "}\n";

Test(library, every_header_compiles_for_sm90) {
  cujit_program *p;
  cujit_status st = compile_timed(all_headers_source, "all headers", &p);
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  size_t len;
  cr_assert(strstr(cujit_program_ptx(p, &len), ".entry use_all") != NULL);
  cujit_program_free(p);
  /* Each header alone, with nothing used: what including it costs. */
  static const char *const headers[] = {"prelude", "grid", "random", "reduce", "half", "bf16"};
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
    char src[256], name[64];
    snprintf(src, sizeof src,
             "#include <cujit/%s.h>\nextern \"C\" __global__ void k(float *x) { x[0] = 1; }\n",
             headers[i]);
    snprintf(name, sizeof name, "<cujit/%s.h> alone", headers[i]);
    cr_assert_eq(compile_timed(src, name, &p), CUJIT_OK, "%s", cujit_errmsg(engine));
    cujit_program_free(p);
  }
}

/* The library's own programs, exactly as library.c builds them, for every element type. */
Test(library, library_kernels_compile_for_sm90, .timeout = 300) {
  cujit_program *p;
  char *src = cj_library_source(1, CUJIT_F32);
  cr_assert_not_null(src);
  cr_assert_eq(compile_timed(src, "random fills", &p), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel_count(p), 2);
  cujit_program_free(p);
  free(src);
  for (int d = CUJIT_F16; d < CUJIT_DTYPE_COUNT_; d++) {
    char name[64];
    snprintf(name, sizeof name, "reduce %s", cujit_dtype_name((cujit_dtype)d));
    cr_assert_not_null(src = cj_library_source(0, (cujit_dtype)d));
    cr_assert_eq(compile_timed(src, name, &p), CUJIT_OK, "%s", cujit_errmsg(engine));
    cr_assert_eq(cujit_program_kernel_count(p), 7);
    cujit_program_free(p);
    free(src);
  }
}

Test(library, null_arguments_are_refused) {
  cujit_scalar r = CUJIT_SCALAR_INIT;
  cr_expect_eq(cujit_reduce(NULL, CUJIT_REDUCE_SUM, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_dot(NULL, NULL, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_uniform(NULL, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_normal(NULL, 1, 0, 0, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_elementwise_launch(NULL, 1, NULL, NULL, 0), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_scalar s = {.size = sizeof s, .dtype = CUJIT_I64, .v.i = -5};
  cr_expect_eq(cujit_scalar_to_double(&s), -5.0);
}

/* --- GPU helpers ------------------------------------------------------------------------------ */

static cujit_buffer *fill(cujit_dtype dtype, size_t n, uint64_t seed, uint64_t offset, int normal,
                          double mean, double std) {
  cujit_buffer *b = cj_test_upload(NULL, n * cujit_dtype_size(dtype), dtype);
  cr_assert_eq(cujit_memset(b, 0, 0xff, n * cujit_dtype_size(dtype), NULL), CUJIT_OK); /* NaN */
  cujit_status st = normal ? cujit_random_normal(b, seed, offset, mean, std, NULL)
                           : cujit_random_uniform(b, seed, offset, NULL);
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  return b;
}

/* Samples as doubles, whichever the dtype. */
static double *fill_host(cujit_dtype dtype, size_t n, uint64_t seed, uint64_t offset, int normal,
                         double mean, double std) {
  cujit_buffer *b = fill(dtype, n, seed, offset, normal, mean, std);
  double *out = malloc(n * sizeof *out);
  cr_assert_not_null(out);
  if (dtype == CUJIT_F64) {
    cj_test_download(out, b, n * sizeof *out);
  } else {
    float *f = malloc(n * sizeof *f);
    cj_test_download(f, b, n * sizeof *f);
    for (size_t i = 0; i < n; i++) out[i] = f[i];
    free(f);
  }
  cujit_buffer_free(b);
  return out;
}

/* The chi-square value with `dof` degrees of freedom that is exceeded with probability 1e-6
** (Wilson-Hilferty), so a correct generator fails about once in a million runs. */
static double chi2_limit(int dof) {
  double z = 4.753, a = 2.0 / (9.0 * dof);
  return dof * pow(1 - a + z * sqrt(a), 3);
}

static double normal_cdf(double x) {
  return 0.5 * erfc(-x / sqrt(2.0));
}

/* --- random numbers on the GPU ---------------------------------------------------------------- */

static void check_uniform(cujit_dtype dtype) {
  const size_t n = 1000000;
  double *x = fill_host(dtype, n, 12345, 0, 0, 0, 1);
  double sum = 0, sq = 0;
  enum { BINS = 100 };
  double count[BINS] = {0};
  for (size_t i = 0; i < n; i++) {
    cr_assert(x[i] > 0 && x[i] <= 1, "%s element %zu = %g is outside (0, 1]",
              cujit_dtype_name(dtype), i, x[i]);
    sum += x[i], sq += x[i] * x[i];
    int bin = (int)(x[i] * BINS);
    count[bin < BINS ? bin : BINS - 1]++;
  }
  double mean = sum / n, var = sq / n - mean * mean;
  /* Six standard errors: mean's is sqrt(1/12/n); variance's is sqrt(1/180/n). */
  cr_expect(fabs(mean - 0.5) < 6 * sqrt(1.0 / 12 / n), "mean %g", mean);
  cr_expect(fabs(var - 1.0 / 12) < 6 * sqrt(1.0 / 180 / n), "variance %g", var);
  double chi2 = 0, expect = (double)n / BINS;
  for (int b = 0; b < BINS; b++) chi2 += (count[b] - expect) * (count[b] - expect) / expect;
  cr_expect(chi2 < chi2_limit(BINS - 1), "%s uniform histogram: chi2 %g over %g",
            cujit_dtype_name(dtype), chi2, chi2_limit(BINS - 1));
  free(x);
}

static void check_normal(cujit_dtype dtype) {
  const size_t n = 1000000;
  const double mu = 1.5, sigma = 2.0;
  double *x = fill_host(dtype, n, 777, 0, 1, mu, sigma);
  enum { BINS = 40 }; /* over [-4, 4] standard deviations, plus one tail bin on each side */
  double count[BINS + 2] = {0}, sum = 0, sq = 0;
  for (size_t i = 0; i < n; i++) {
    cr_assert(isfinite(x[i]), "element %zu = %g", i, x[i]);
    sum += x[i], sq += x[i] * x[i];
    double z = (x[i] - mu) / sigma;
    int bin = z < -4 ? 0 : z >= 4 ? BINS + 1 : 1 + (int)((z + 4) / 8 * BINS);
    count[bin]++;
  }
  double mean = sum / n, var = sq / n - mean * mean;
  cr_expect(fabs(mean - mu) < 6 * sigma / sqrt((double)n), "mean %g", mean);
  /* var of the sample variance of a normal: 2 sigma^4 / n. */
  cr_expect(fabs(var - sigma * sigma) < 6 * sqrt(2.0 / n) * sigma * sigma, "variance %g", var);
  double chi2 = 0;
  for (int b = 0; b < BINS + 2; b++) {
    double lo = b == 0 ? -INFINITY : -4 + 8.0 * (b - 1) / BINS;
    double hi = b == BINS + 1 ? INFINITY : -4 + 8.0 * b / BINS;
    double expect = n * (normal_cdf(hi) - normal_cdf(lo));
    chi2 += (count[b] - expect) * (count[b] - expect) / expect;
  }
  cr_expect(chi2 < chi2_limit(BINS + 1), "%s normal histogram: chi2 %g over %g",
            cujit_dtype_name(dtype), chi2, chi2_limit(BINS + 1));
  free(x);
}

Test(library, gpu_uniform_statistics) {
  CJ_NEED_DEVICE(engine);
  check_uniform(CUJIT_F32);
  check_uniform(CUJIT_F64);
}

Test(library, gpu_normal_statistics) {
  CJ_NEED_DEVICE(engine);
  check_normal(CUJIT_F32);
  check_normal(CUJIT_F64);
}

Test(library, gpu_random_matches_host_reference) {
  CJ_NEED_DEVICE(engine);
  const size_t n = 100003;
  const uint64_t seed = 0x123456789abcdefULL, offset = (1ULL << 34) + 5; /* counters above 2^32 */
  double *uf = fill_host(CUJIT_F32, n, seed, offset, 0, 0, 1);
  double *ud = fill_host(CUJIT_F64, n, seed, offset, 0, 0, 1);
  double *nf = fill_host(CUJIT_F32, n, seed, offset, 1, 0, 1);
  double *nd = fill_host(CUJIT_F64, n, seed, offset, 1, 0, 1);
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(uf[i], (double)ref_uniform_f32(seed, offset + i, 0), "f32 uniform %zu", i);
    cr_assert_eq(ud[i], ref_uniform_f64(seed, offset + i, 0), "f64 uniform %zu", i);
    cr_assert(fabs(nf[i] - ref_normal_f32(seed, offset + i, 0)) < 1e-5, "f32 normal %zu: %g vs %g",
              i, nf[i], ref_normal_f32(seed, offset + i, 0));
    cr_assert(fabs(nd[i] - ref_normal_f64(seed, offset + i, 0)) < 1e-12, "f64 normal %zu", i);
  }
  free(uf), free(ud), free(nf), free(nd);
}

Test(library, gpu_random_is_deterministic_and_offsets_continue) {
  CJ_NEED_DEVICE(engine);
  const size_t n = 4099;
  static const cujit_dtype types[] = {CUJIT_F32, CUJIT_F64};
  for (int t = 0; t < 2; t++)
    for (int normal = 0; normal < 2; normal++) {
      double *a = fill_host(types[t], n, 99, 0, normal, 0, 1);
      double *again = fill_host(types[t], n, 99, 0, normal, 0, 1);
      double *other = fill_host(types[t], n, 100, 0, normal, 0, 1);
      cr_assert(memcmp(a, again, n * sizeof *a) == 0, "same seed, different numbers");
      size_t same = 0;
      for (size_t i = 0; i < n; i++) same += a[i] == other[i];
      cr_expect(same < 10, "seeds 99 and 100 agree on %zu of %zu", same, n);
      static const size_t shifts[] = {1, 2, 3, 4, 5, 1000};
      for (size_t s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
        size_t k = shifts[s];
        double *b = fill_host(types[t], n - k, 99, k, normal, 0, 1);
        for (size_t i = 0; i < n - k; i++)
          cr_assert_eq(b[i], a[i + k], "%s %s offset %zu element %zu", cujit_dtype_name(types[t]),
                       normal ? "normal" : "uniform", k, i);
        free(b);
      }
      free(a), free(again), free(other);
    }
}

Test(library, gpu_device_side_random_matches_host) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(
                   engine,
                   "draw(unsigned long long seed, unsigned long long stream, float *f, double *d, "
                   "int n)",
                   "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "if (i < n) {\n"
                   "  f[i] = cujit::uniform_float(seed, i, stream);\n"
                   "  d[i] = cujit::uniform_double(seed, i, stream);\n"
                   "}\n",
                   "#include <cujit/random.h>\n", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const int n = 1000;
  const uint64_t seed = 31337, stream = 0x100000002ULL;
  cujit_buffer *fb = cj_test_upload(NULL, n * sizeof(float), CUJIT_F32);
  cujit_buffer *db = cj_test_upload(NULL, n * sizeof(double), CUJIT_F64);
  cujit_arg args[] = {CUJIT_ARG_U(seed), CUJIT_ARG_U(stream), CUJIT_ARG_BUF(fb), CUJIT_ARG_BUF(db),
                      CUJIT_ARG_I(n)};
  cr_assert_eq(cujit_launch_n(k, n, NULL, args, 5), CUJIT_OK, "%s", cujit_errmsg(engine));
  float f[1000];
  double d[1000];
  cj_test_download(f, fb, sizeof f);
  cj_test_download(d, db, sizeof d);
  for (int i = 0; i < n; i++) {
    cr_assert_eq(f[i], ref_uniform_f32(seed, i, stream), "float %d", i);
    cr_assert_eq(d[i], ref_uniform_f64(seed, i, stream), "double %d", i);
  }
  cujit_buffer_free(fb), cujit_buffer_free(db);
  cujit_kernel_free(k);
}

Test(library, gpu_random_argument_errors) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *ib = cj_test_upload(NULL, 64, CUJIT_I32), *fb = cj_test_upload(NULL, 64, CUJIT_F32);
  cr_expect_eq(cujit_random_uniform(ib, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(engine), "i32") != NULL, "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_random_normal(fb, 1, 0, 0, -1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_normal(fb, 1, 0, NAN, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_uniform(fb, 1, UINT64_MAX - 3, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_buffer_free(ib), cujit_buffer_free(fb);
}

/* --- reductions on the GPU -------------------------------------------------------------------- */

/* A value of `dtype` from 64 random bits, stored at p, and returned as a host value in the
** result's representation (double, int64 or uint64 through r). */
typedef struct hostval {
  double f;
  int64_t i;
  uint64_t u;
} hostval;

static hostval make_value(cujit_dtype d, void *p) {
  uint64_t r = cj_test_rand64();
  hostval v = {0};
  switch (d) {
  case CUJIT_F32: {
    float x = (float)((double)(r >> 11) * 0x1p-53 * 2 - 1);
    memcpy(p, &x, 4);
    v.f = x;
    break;
  }
  case CUJIT_F64: {
    double x = (double)(r >> 11) * 0x1p-53 * 200 - 100;
    memcpy(p, &x, 8);
    v.f = x;
    break;
  }
  case CUJIT_F16: {
    float x = (float)((int)(r % 2001) - 1000) / 8;
    uint16_t h = cj_test_exact_half(x);
    memcpy(p, &h, 2);
    v.f = x;
    break;
  }
  case CUJIT_BF16: { /* multiples of 1/4 up to 31.75: 7 bits, exact in bfloat16's 8 */
    float x = (float)((int)(r % 255) - 127) / 4;
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t h = (uint16_t)(u >> 16);
    memcpy(p, &h, 2);
    v.f = x;
    break;
  }
  case CUJIT_I8: {
    int8_t x = (int8_t)r;
    memcpy(p, &x, 1);
    v.i = x;
    break;
  }
  case CUJIT_I32: {
    int32_t x = (int32_t)r;
    memcpy(p, &x, 4);
    v.i = x;
    break;
  }
  case CUJIT_I64: {
    int64_t x = (int64_t)r;
    memcpy(p, &x, 8);
    v.i = x;
    break;
  }
  case CUJIT_U8: {
    uint8_t x = (uint8_t)r;
    memcpy(p, &x, 1);
    v.u = x;
    break;
  }
  case CUJIT_U16: {
    uint16_t x = (uint16_t)r;
    memcpy(p, &x, 2);
    v.u = x;
    break;
  }
  case CUJIT_U32: {
    uint32_t x = (uint32_t)r;
    memcpy(p, &x, 4);
    v.u = x;
    break;
  }
  case CUJIT_U64: {
    memcpy(p, &r, 8);
    v.u = r;
    break;
  }
  default:
    cr_assert_fail("no test values for %s", cujit_dtype_name(d));
  }
  return v;
}

static int is_float_type(cujit_dtype d) {
  return d == CUJIT_F16 || d == CUJIT_BF16 || d == CUJIT_F32 || d == CUJIT_F64;
}
static int is_signed_type(cujit_dtype d) {
  return d == CUJIT_I8 || d == CUJIT_I16 || d == CUJIT_I32 || d == CUJIT_I64;
}

/* Reduces count elements of random data with 64 elements past count that would change every
** result if they were read, and checks against the host. */
static void check_reductions(cujit_dtype d, size_t count) {
  size_t es = cujit_dtype_size(d), total = count + 64;
  unsigned char *a = malloc(total * es), *b = malloc(total * es);
  cr_assert(a && b);
  double fsum = 0, fdot = 0, fabs_sum = 0, fabs_dot = 0, fmin = INFINITY, fmax = -INFINITY;
  uint64_t usum = 0, udot = 0, umin = UINT64_MAX, umax = 0;
  int64_t imin = INT64_MAX, imax = INT64_MIN;
  for (size_t i = 0; i < total; i++) {
    hostval x = make_value(d, a + i * es), y = make_value(d, b + i * es);
    if (i >= count) { /* the guard: the largest value there is, in every type */
      memset(a + i * es, d == CUJIT_F16 ? 0x7b : 0x7f, es); /* 0x7b7b: half 61280; 0x7f7f: the
                                                             ** largest bfloat16 */
      if (!is_float_type(d) && !is_signed_type(d)) memset(a + i * es, 0xff, es);
      continue;
    }
    if (is_float_type(d)) {
      fsum += x.f, fabs_sum += fabs(x.f), fdot += x.f * y.f, fabs_dot += fabs(x.f * y.f);
      fmin = fmin < x.f ? fmin : x.f, fmax = fmax > x.f ? fmax : x.f;
    } else if (is_signed_type(d)) {
      usum += (uint64_t)x.i, udot += (uint64_t)x.i * (uint64_t)y.i;
      imin = imin < x.i ? imin : x.i, imax = imax > x.i ? imax : x.i;
    } else {
      usum += x.u, udot += x.u * y.u;
      umin = umin < x.u ? umin : x.u, umax = umax > x.u ? umax : x.u;
    }
  }
  cujit_buffer *ab = cj_test_upload(a, total * es, d), *bb = cj_test_upload(b, total * es, d);
  cujit_scalar r[4];
  for (int k = 0; k < 4; k++) /* poison all but the size, which says the layout */
    memset(&r[k], 0xa5, sizeof r[k]), r[k].size = sizeof r[k];
  cujit_status st;
  cr_assert_eq(st = cujit_reduce(ab, CUJIT_REDUCE_SUM, count, &r[0], NULL), CUJIT_OK,
               "%s sum of %zu: %s", cujit_dtype_name(d), count, cujit_errmsg(engine));
  cr_assert_eq(cujit_dot(ab, bb, count, &r[3], NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  if (count == 0) {
    cr_expect_eq(cujit_reduce(ab, CUJIT_REDUCE_MIN, 0, &r[1], NULL), CUJIT_ERROR_INVALID_ARGUMENT);
    cr_expect_eq(cujit_reduce(ab, CUJIT_REDUCE_MAX, 0, &r[2], NULL), CUJIT_ERROR_INVALID_ARGUMENT);
    cr_expect(strstr(cujit_errmsg(engine), "no elements") != NULL, "%s", cujit_errmsg(engine));
  } else {
    cr_assert_eq(cujit_reduce(ab, CUJIT_REDUCE_MIN, count, &r[1], NULL), CUJIT_OK);
    cr_assert_eq(cujit_reduce(ab, CUJIT_REDUCE_MAX, count, &r[2], NULL), CUJIT_OK);
  }
  const char *name = cujit_dtype_name(d);
  if (is_float_type(d)) {
    for (int k = 0; k < 4; k++)
      if (count || k == 0 || k == 3) cr_assert_eq(r[k].dtype, CUJIT_F64);
    /* Both sides accumulate in double, in different orders: each is within n * 2^-53 of the
    ** sum of magnitudes (the classic bound), far tighter than float accumulation would be. */
    double tol = 2.0 * (double)(count + 1) * 0x1p-53;
    cr_expect(fabs(r[0].v.f - fsum) <= tol * fabs_sum, "%s sum of %zu: %.17g vs %.17g", name, count,
              r[0].v.f, fsum);
    cr_expect(fabs(r[3].v.f - fdot) <= tol * fabs_dot, "%s dot of %zu: %.17g vs %.17g", name, count,
              r[3].v.f, fdot);
    if (count) {
      cr_expect_eq(r[1].v.f, fmin, "%s min of %zu: %g vs %g", name, count, r[1].v.f, fmin);
      cr_expect_eq(r[2].v.f, fmax, "%s max of %zu: %g vs %g", name, count, r[2].v.f, fmax);
    }
  } else if (is_signed_type(d)) {
    cr_expect_eq(r[0].dtype, CUJIT_I64);
    cr_expect_eq(r[0].v.i, (int64_t)usum, "%s sum of %zu", name, count);
    cr_expect_eq(r[3].v.i, (int64_t)udot, "%s dot of %zu", name, count);
    if (count) {
      cr_expect_eq(r[1].v.i, imin, "%s min of %zu", name, count);
      cr_expect_eq(r[2].v.i, imax, "%s max of %zu", name, count);
    }
  } else {
    cr_expect_eq(r[0].dtype, CUJIT_U64);
    cr_expect_eq(r[0].v.u, usum, "%s sum of %zu", name, count);
    cr_expect_eq(r[3].v.u, udot, "%s dot of %zu", name, count);
    if (count) {
      cr_expect_eq(r[1].v.u, umin, "%s min of %zu", name, count);
      cr_expect_eq(r[2].v.u, umax, "%s max of %zu", name, count);
    }
  }
  cujit_buffer_free(ab), cujit_buffer_free(bb);
  free(a), free(b);
}

Test(library, gpu_reductions_match_host, .timeout = 300) {
  CJ_NEED_DEVICE(engine);
  static const cujit_dtype types[] = {CUJIT_F32, CUJIT_F64, CUJIT_F16, CUJIT_BF16,
                                      CUJIT_I8,  CUJIT_I32, CUJIT_I64, CUJIT_U8,
                                      CUJIT_U16, CUJIT_U32, CUJIT_U64};
  static const size_t lengths[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 1000, (1u << 20) + 7};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
      check_reductions(types[t], lengths[l]);
}

Test(library, gpu_reduction_nan_and_argument_errors) {
  CJ_NEED_DEVICE(engine);
  float x[100];
  for (int i = 0; i < 100; i++) x[i] = (float)i;
  x[57] = NAN;
  cujit_buffer *b = cj_test_upload(x, sizeof x, CUJIT_F32),
               *raw = cj_test_upload(x, sizeof x, CUJIT_DTYPE_NONE);
  cujit_buffer *other = cj_test_upload(NULL, sizeof x, CUJIT_I32);
  cujit_scalar r = CUJIT_SCALAR_INIT;
  cr_assert_eq(cujit_reduce(b, CUJIT_REDUCE_MIN, 100, &r, NULL), CUJIT_OK);
  cr_expect(isnan(r.v.f), "min with a NaN is %g", r.v.f);
  cr_assert_eq(cujit_reduce(b, CUJIT_REDUCE_MAX, 57, &r, NULL), CUJIT_OK);
  cr_expect_eq(r.v.f, 56.0);
  cr_expect_eq(cujit_reduce(b, CUJIT_REDUCE_SUM, 101, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(engine), "101") != NULL, "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_reduce(raw, CUJIT_REDUCE_SUM, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_reduce(b, (cujit_reduce_op)7, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_dot(b, other, 10, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  /* On a stream. */
  cujit_stream *s;
  cr_assert_eq(cujit_stream_create(engine, &s), CUJIT_OK);
  cr_assert_eq(cujit_reduce(b, CUJIT_REDUCE_SUM, 57, &r, s), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect_eq(r.v.f, 56.0 * 57 / 2);
  cujit_stream_free(s);
  cujit_buffer_free(b), cujit_buffer_free(raw), cujit_buffer_free(other);
}

/* Device-side block reductions over blocks of awkward shapes, including partial warps. */
Test(library, gpu_block_and_warp_reductions) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(
                   engine, "blockred(const int *x, long long *out)",
                   "unsigned r = cujit::block_rank(), t = cujit::block_threads();\n"
                   "int v = x[blockIdx.x * t + r];\n"
                   "long long s = cujit::block_sum((long long)v);\n"
                   "int lo = cujit::block_min(v), hi = cujit::block_max(v);\n"
                   "double ds = cujit::block_sum((double)v);\n"
                   "if (r == 0) {\n"
                   "  out[4 * blockIdx.x] = s; out[4 * blockIdx.x + 1] = lo;\n"
                   "  out[4 * blockIdx.x + 2] = hi; out[4 * blockIdx.x + 3] = (long long)ds;\n"
                   "}\n",
                   "#include <cujit/reduce.h>\n", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  static const unsigned shapes[][3] = {{1, 1, 1},   {31, 1, 1},   {33, 1, 1}, {100, 1, 1},
                                       {256, 1, 1}, {1024, 1, 1}, {16, 3, 1}, {8, 4, 3}};
  const unsigned blocks = 5;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    unsigned t = shapes[s][0] * shapes[s][1] * shapes[s][2];
    int *x = malloc(blocks * t * sizeof *x);
    for (unsigned i = 0; i < blocks * t; i++) x[i] = (int)(cj_test_rand64() % 2000001) - 1000000;
    cujit_buffer *xb = cj_test_upload(x, blocks * t * sizeof *x, CUJIT_I32);
    cujit_buffer *ob = cj_test_upload(NULL, blocks * 4 * sizeof(long long), CUJIT_I64);
    cr_assert_eq(cujit_memset(ob, 0, 0xa5, blocks * 4 * sizeof(long long), NULL), CUJIT_OK);
    cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                             .grid = {blocks, 1, 1},
                             .block = {shapes[s][0], shapes[s][1], shapes[s][2]},
                             .shared_bytes = 0,
                             .stream = NULL};
    cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(ob)};
    cr_assert_eq(cujit_launch(k, &c, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
    long long out[4 * 5];
    cj_test_download(out, ob, sizeof out);
    for (unsigned b = 0; b < blocks; b++) {
      long long sum = 0;
      int lo = INT32_MAX, hi = INT32_MIN;
      for (unsigned i = 0; i < t; i++) {
        int v = x[b * t + i];
        sum += v, lo = v < lo ? v : lo, hi = v > hi ? v : hi;
      }
      cr_expect_eq(out[4 * b], sum, "block %ux%ux%u #%u sum", shapes[s][0], shapes[s][1],
                   shapes[s][2], b);
      cr_expect_eq(out[4 * b + 1], lo, "block %u threads #%u min", t, b);
      cr_expect_eq(out[4 * b + 2], hi, "block %u threads #%u max", t, b);
      cr_expect_eq(out[4 * b + 3], sum, "block %u threads #%u double sum", t, b);
    }
    cujit_buffer_free(xb), cujit_buffer_free(ob);
    free(x);
  }
  cujit_kernel_free(k);
  /* Warp reductions: lane 0 of each full warp. */
  cr_assert_eq(cujit_kernel_define(engine, "warpred(const float *x, float *out)",
                                   "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "float s = cujit::warp_sum(x[i]), m = cujit::warp_max(x[i]);\n"
                                   "if (i % 32 == 0) { out[i / 16] = s; out[i / 16 + 1] = m; }\n",
                                   "#include <cujit/reduce.h>\n", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  float x[256], out[16];
  for (int i = 0; i < 256; i++) x[i] = (float)(cj_test_rand64() % 1000) / 8; /* exact float sums */
  cujit_buffer *xb = cj_test_upload(x, sizeof x, CUJIT_F32),
               *ob = cj_test_upload(NULL, sizeof out, CUJIT_F32);
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {2, 1, 1},
                           .block = {128, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(ob)};
  cr_assert_eq(cujit_launch(k, &c, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(out, ob, sizeof out);
  for (int w = 0; w < 8; w++) {
    float s = 0, m = -INFINITY;
    for (int l = 0; l < 32; l++) s += x[32 * w + l], m = x[32 * w + l] > m ? x[32 * w + l] : m;
    cr_expect_eq(out[2 * w], s, "warp %d sum", w);
    cr_expect_eq(out[2 * w + 1], m, "warp %d max", w);
  }
  cujit_buffer_free(xb), cujit_buffer_free(ob);
  cujit_kernel_free(k);
}
