/*
** test_library.c -- the device library (kernels_src/cujit) and its C API: every header compiled
** by NVRTC for sm_90, Philox4x32-10 against Random123's known answers, the elementwise builder's
** parsing and errors (all on CI); and on the GPU, the random fills (statistics, determinism,
** offsets, equality with the host reference), reductions and dot products against host results
** on random data of awkward lengths, device-side warp and block reductions, and elementwise
** kernels against the host.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

static cujit_engine *engine;
static char cache_dir[] = "/tmp/cujit-test-library-XXXXXX";

static void setup(void) {
  cr_assert_not_null(mkdtemp(cache_dir));
  setenv("CUJIT_CACHE_DIR", cache_dir, 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void teardown(void) {
  cujit_close(engine);
}

TestSuite(library, .init = setup, .fini = teardown);

static const cujit_compile_options sm90 = {.arch = "sm_90"};

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
    "extern \"C\" __global__ void use_all(float *f, double *d, long long *l, unsigned *u,\n"
    "                                     __half *h, unsigned long long seed) {\n"
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
    "}\n";

Test(library, every_header_compiles_for_sm90) {
  cujit_program *p;
  cujit_status st = compile_timed(all_headers_source, "all headers", &p);
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  size_t len;
  cr_assert(strstr(cujit_program_ptx(p, &len), ".entry use_all") != NULL);
  cujit_program_free(p);
  /* Each header alone, with nothing used: what including it costs. */
  static const char *const headers[] = {"prelude", "grid", "random", "reduce", "half"};
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
char *cj_library_source(int program, cujit_dtype d);

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

/* --- the elementwise builder, on CI ----------------------------------------------------------- */

Test(library, elementwise_define_builds_the_signature) {
  cujit_kernel *k;
  cujit_status st = cujit_elementwise_define(engine, "scalar float a, float x, float y -> float z",
                                             "z = a * x + y", "saxpy", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_str_eq(cujit_kernel_name(k), "saxpy");
  cr_assert_eq(cujit_kernel_param_count(k), 5);
  static const struct {
    const char *name;
    cujit_param_kind kind;
    cujit_dtype dtype;
    int is_const;
  } want[] = {{"a", CUJIT_PARAM_SCALAR, CUJIT_F32, 0},
              {"x", CUJIT_PARAM_POINTER, CUJIT_F32, 1},
              {"y", CUJIT_PARAM_POINTER, CUJIT_F32, 1},
              {"z", CUJIT_PARAM_POINTER, CUJIT_F32, 0},
              {"n", CUJIT_PARAM_SCALAR, CUJIT_I64, 0}};
  for (size_t i = 0; i < 5; i++) {
    cujit_param_info p;
    cr_assert_eq(cujit_kernel_param(k, i, &p), CUJIT_OK);
    cr_expect_str_eq(p.name, want[i].name);
    cr_expect_eq(p.kind, want[i].kind, "param %zu", i);
    cr_expect_eq(p.dtype, want[i].dtype, "param %zu", i);
    if (want[i].kind == CUJIT_PARAM_POINTER) cr_expect_eq(p.is_const, want[i].is_const);
  }
  cujit_kernel_free(k);
}

Test(library, elementwise_generic_and_every_type_compile) {
  cujit_kernel *k, *spec;
  cujit_status st = cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                             "axpy", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert(cujit_kernel_is_generic(k));
  static const cujit_dtype types[] = {CUJIT_F32, CUJIT_F64, CUJIT_I32, CUJIT_U64, CUJIT_F16};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    cr_expect_eq(cujit_kernel_specialize(k, &types[i], 1, &spec), CUJIT_OK, "%s: %s",
                 cujit_dtype_name(types[i]), cujit_errmsg(engine));
  cujit_kernel_free(k);
  /* Mixed spellings, several outputs, no inputs. */
  cr_assert_eq(cujit_elementwise_define(engine, "f64 x, unsigned u, half h -> double s, i64 c",
                                        "s = x + u + cujit::to_float(h); c = i;", "mixed", &sm90,
                                        &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);
  cr_assert_eq(
      cujit_elementwise_define(engine, "-> long long z", "z = 3 * i + n", "iota", &sm90, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);
}

/* The generated kernel moves 16 bytes per array per step: ld/st.global(.nc).v4.f32 for float, v2
** for double, 16-byte integer vectors for half; PTX compiled here, no GPU needed. */
static void expect_vector_ptx(cujit_kernel *k, const char *what, const char *load,
                              const char *store) {
  const cujit_program *p = cujit_kernel_program(k);
  cr_assert_not_null(p, "%s: no program", what);
  size_t len;
  const char *ptx = cujit_program_ptx(p, &len);
  cr_assert_not_null(ptx, "%s: no PTX", what);
  char nc[64];
  snprintf(nc, sizeof nc, "ld.global.nc.%s", load + strlen("ld.global."));
  cr_expect(strstr(ptx, load) != NULL || strstr(ptx, nc) != NULL, "%s: no %s in the PTX:\n%s", what,
            load, ptx);
  cr_expect(strstr(ptx, store) != NULL, "%s: no %s in the PTX:\n%s", what, store, ptx);
  cr_expect(strstr(ptx, ".local") == NULL, "%s: the kernel spills to local memory", what);
}

Test(library, elementwise_ptx_uses_16_byte_vectors) {
  cujit_kernel *k, *spec;
  cujit_status st = cujit_elementwise_define(engine, "float x, float y -> float z", "z = x + y",
                                             "vadd", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  expect_vector_ptx(k, "f32 vadd", "ld.global.v4.f32", "st.global.v4.f32");
  cujit_kernel_free(k);
  cr_assert_eq(cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                        "axpy", &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  static const struct {
    cujit_dtype d;
    const char *load, *store;
  } want[] = {{CUJIT_F32, "ld.global.v4.f32", "st.global.v4.f32"},
              {CUJIT_F64, "ld.global.v2.f64", "st.global.v2.f64"},
              {CUJIT_I32, "ld.global.v4.u32", "st.global.v4.u32"},
              {CUJIT_F16, "ld.global.v4.u32", "st.global.v4.u32"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_assert_eq(cujit_kernel_specialize(k, &want[i].d, 1, &spec), CUJIT_OK, "%s: %s",
                 cujit_dtype_name(want[i].d), cujit_errmsg(engine));
    expect_vector_ptx(spec, cujit_dtype_name(want[i].d), want[i].load, want[i].store);
  }
  cujit_kernel_free(k);
}

static void expect_define_error(const char *params, const char *expr, cujit_status want,
                                const char *fragment) {
  cujit_kernel *k = (cujit_kernel *)1;
  cujit_status st = cujit_elementwise_define(engine, params, expr, "bad", &sm90, &k);
  cr_expect_eq(st, want, "\"%s\": got %s: %s", params ? params : "(null)", cujit_status_string(st),
               cujit_errmsg(engine));
  cr_expect_null(k, "\"%s\": *out is not NULL after a failure", params ? params : "(null)");
  cr_expect(strstr(cujit_errmsg(engine), fragment) != NULL, "\"%s\": message \"%s\" lacks \"%s\"",
            params ? params : "(null)", cujit_errmsg(engine), fragment);
}

Test(library, elementwise_definition_errors) {
  expect_define_error("float x, float y", "x", CUJIT_ERROR_SIGNATURE, "no '->'");
  expect_define_error("float x -> float y -> float z", "y = x", CUJIT_ERROR_SIGNATURE,
                      "more than one");
  expect_define_error("float x ->", "x", CUJIT_ERROR_SIGNATURE, "no outputs");
  expect_define_error("float x -> scalar float y", "y = x", CUJIT_ERROR_SIGNATURE, "marked scalar");
  expect_define_error("float i -> float y", "y = i", CUJIT_ERROR_SIGNATURE, "reserved");
  expect_define_error("float x -> float n", "n = x", CUJIT_ERROR_SIGNATURE, "reserved");
  expect_define_error("float cj_x -> float y", "y = cj_x", CUJIT_ERROR_SIGNATURE, "reserved");
  expect_define_error("float x, float x -> float y", "y = x", CUJIT_ERROR_SIGNATURE, "twice");
  expect_define_error("float x -> float x", "x = x", CUJIT_ERROR_SIGNATURE, "twice");
  expect_define_error("float *x -> float y", "y = *x", CUJIT_ERROR_SIGNATURE, "'*'");
  expect_define_error("float x[] -> float y", "y = x", CUJIT_ERROR_SIGNATURE, "'[]'");
  expect_define_error("x -> float y", "y = x", CUJIT_ERROR_SIGNATURE, "needs a type and a name");
  expect_define_error("quaternion x -> float y", "y = x", CUJIT_ERROR_SIGNATURE,
                      "not an element type");
  expect_define_error("float x, -> float y", "y = x", CUJIT_ERROR_SIGNATURE, "empty");
  expect_define_error("float x -> float y", "  ", CUJIT_ERROR_INVALID_ARGUMENT, "empty");
  expect_define_error(NULL, "y = x", CUJIT_ERROR_INVALID_ARGUMENT, "needs");
  cujit_kernel *k = NULL;
  cr_expect_eq(cujit_elementwise_define(engine, "float x -> float y", "y = x", "9lives", &sm90, &k),
               CUJIT_ERROR_SIGNATURE);
  cr_expect_eq(cujit_elementwise_define(NULL, "float x -> float y", "y = x", "f", &sm90, &k),
               CUJIT_ERROR_INVALID_ARGUMENT);
}

Test(library, elementwise_expression_errors_name_the_kernel) {
  cujit_kernel *k;
  cujit_status st = cujit_elementwise_define(engine, "float x, float y -> float z",
                                             "z = x +* undefined_name", "broken", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_ERROR_COMPILE, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "broken") != NULL, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "undefined_name") != NULL, "%s", cujit_errmsg(engine));
}

Test(library, null_arguments_are_refused) {
  cujit_scalar r;
  cr_expect_eq(cujit_reduce(NULL, CUJIT_REDUCE_SUM, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_dot(NULL, NULL, 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_uniform(NULL, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_normal(NULL, 1, 0, 0, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_elementwise_launch(NULL, 1, NULL, NULL, 0), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_scalar s = {.dtype = CUJIT_I64, .v.i = -5};
  cr_expect_eq(cujit_scalar_to_double(&s), -5.0);
}

/* --- GPU helpers ------------------------------------------------------------------------------ */

static cujit_buffer *upload(const void *data, size_t bytes, cujit_dtype dtype) {
  cujit_buffer *b;
  cr_assert_eq(cujit_buffer_alloc(engine, bytes, dtype, &b), CUJIT_OK, "%s", cujit_errmsg(engine));
  if (data)
    cr_assert_eq(cujit_memcpy_htod(b, 0, data, bytes, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  return b;
}

static void download(void *dst, cujit_buffer *b, size_t bytes) {
  cr_assert_eq(cujit_memcpy_dtoh(dst, b, 0, bytes, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
}

static cujit_buffer *fill(cujit_dtype dtype, size_t n, uint64_t seed, uint64_t offset, int normal,
                          double mean, double std) {
  cujit_buffer *b = upload(NULL, n * cujit_dtype_size(dtype), dtype);
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
    download(out, b, n * sizeof *out);
  } else {
    float *f = malloc(n * sizeof *f);
    download(f, b, n * sizeof *f);
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
  CJ_NEED_GPU(engine);
  check_uniform(CUJIT_F32);
  check_uniform(CUJIT_F64);
}

Test(library, gpu_normal_statistics) {
  CJ_NEED_GPU(engine);
  check_normal(CUJIT_F32);
  check_normal(CUJIT_F64);
}

Test(library, gpu_random_matches_host_reference) {
  CJ_NEED_GPU(engine);
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
  CJ_NEED_GPU(engine);
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
  CJ_NEED_GPU(engine);
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
  cujit_buffer *fb = upload(NULL, n * sizeof(float), CUJIT_F32);
  cujit_buffer *db = upload(NULL, n * sizeof(double), CUJIT_F64);
  cujit_arg args[] = {CUJIT_ARG_U(seed), CUJIT_ARG_U(stream), CUJIT_ARG_BUF(fb), CUJIT_ARG_BUF(db),
                      CUJIT_ARG_I(n)};
  cr_assert_eq(cujit_launch_n(k, n, NULL, args, 5), CUJIT_OK, "%s", cujit_errmsg(engine));
  float f[1000];
  double d[1000];
  download(f, fb, sizeof f);
  download(d, db, sizeof d);
  for (int i = 0; i < n; i++) {
    cr_assert_eq(f[i], ref_uniform_f32(seed, i, stream), "float %d", i);
    cr_assert_eq(d[i], ref_uniform_f64(seed, i, stream), "double %d", i);
  }
  cujit_buffer_free(fb), cujit_buffer_free(db);
  cujit_kernel_free(k);
}

Test(library, gpu_random_argument_errors) {
  CJ_NEED_GPU(engine);
  cujit_buffer *ib = upload(NULL, 64, CUJIT_I32), *fb = upload(NULL, 64, CUJIT_F32);
  cr_expect_eq(cujit_random_uniform(ib, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(engine), "i32") != NULL, "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_random_normal(fb, 1, 0, 0, -1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_normal(fb, 1, 0, NAN, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_random_uniform(fb, 1, UINT64_MAX - 3, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_buffer_free(ib), cujit_buffer_free(fb);
}

/* --- reductions on the GPU -------------------------------------------------------------------- */

static uint32_t rng_state = 0x9e3779b9u;
static uint64_t rand64(void) {
  uint64_t hi = 0;
  for (int i = 0; i < 2; i++) {
    uint32_t x = rng_state;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    rng_state = x;
    hi = hi << 32 | x;
  }
  return hi;
}

/* A value of `dtype` from 64 random bits, stored at p, and returned as a host value in the
** result's representation (double, int64 or uint64 through r). */
typedef struct hostval {
  double f;
  int64_t i;
  uint64_t u;
} hostval;

/* Half bits of a float that half represents exactly (we only make such values). */
static uint16_t exact_half(float f) {
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  int e;
  double m = frexp(fabs(f), &e); /* f = m 2^e, m in [0.5, 1) */
  return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
}

static hostval make_value(cujit_dtype d, void *p) {
  uint64_t r = rand64();
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
    uint16_t h = exact_half(x);
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
  return d == CUJIT_F16 || d == CUJIT_F32 || d == CUJIT_F64;
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
      memset(a + i * es, d == CUJIT_F16 ? 0x7b : 0x7f, es); /* 0x7b7b: half 61280 */
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
  cujit_buffer *ab = upload(a, total * es, d), *bb = upload(b, total * es, d);
  cujit_scalar r[4];
  for (int k = 0; k < 4; k++) memset(&r[k], 0xa5, sizeof r[k]); /* poison */
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
  CJ_NEED_GPU(engine);
  static const cujit_dtype types[] = {CUJIT_F32, CUJIT_F64, CUJIT_F16, CUJIT_I8,  CUJIT_I32,
                                      CUJIT_I64, CUJIT_U8,  CUJIT_U16, CUJIT_U32, CUJIT_U64};
  static const size_t lengths[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 1000, (1u << 20) + 7};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
      check_reductions(types[t], lengths[l]);
}

Test(library, gpu_reduction_nan_and_argument_errors) {
  CJ_NEED_GPU(engine);
  float x[100];
  for (int i = 0; i < 100; i++) x[i] = (float)i;
  x[57] = NAN;
  cujit_buffer *b = upload(x, sizeof x, CUJIT_F32), *raw = upload(x, sizeof x, CUJIT_DTYPE_NONE);
  cujit_buffer *other = upload(NULL, sizeof x, CUJIT_I32);
  cujit_scalar r;
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
  CJ_NEED_GPU(engine);
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
    for (unsigned i = 0; i < blocks * t; i++) x[i] = (int)(rand64() % 2000001) - 1000000;
    cujit_buffer *xb = upload(x, blocks * t * sizeof *x, CUJIT_I32);
    cujit_buffer *ob = upload(NULL, blocks * 4 * sizeof(long long), CUJIT_I64);
    cr_assert_eq(cujit_memset(ob, 0, 0xa5, blocks * 4 * sizeof(long long), NULL), CUJIT_OK);
    cujit_launch_config c = {sizeof(cujit_launch_config),
                             {blocks, 1, 1},
                             {shapes[s][0], shapes[s][1], shapes[s][2]},
                             0,
                             NULL};
    cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(ob)};
    cr_assert_eq(cujit_launch(k, &c, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
    long long out[4 * 5];
    download(out, ob, sizeof out);
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
  for (int i = 0; i < 256; i++) x[i] = (float)(rand64() % 1000) / 8; /* exact float sums */
  cujit_buffer *xb = upload(x, sizeof x, CUJIT_F32), *ob = upload(NULL, sizeof out, CUJIT_F32);
  cujit_launch_config c = {sizeof(cujit_launch_config), {2, 1, 1}, {128, 1, 1}, 0, NULL};
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(ob)};
  cr_assert_eq(cujit_launch(k, &c, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
  download(out, ob, sizeof out);
  for (int w = 0; w < 8; w++) {
    float s = 0, m = -INFINITY;
    for (int l = 0; l < 32; l++) s += x[32 * w + l], m = x[32 * w + l] > m ? x[32 * w + l] : m;
    cr_expect_eq(out[2 * w], s, "warp %d sum", w);
    cr_expect_eq(out[2 * w + 1], m, "warp %d max", w);
  }
  cujit_buffer_free(xb), cujit_buffer_free(ob);
  cujit_kernel_free(k);
}

/* --- elementwise kernels on the GPU ----------------------------------------------------------- */

static void check_axpy(cujit_kernel *k, cujit_dtype d, size_t n) {
  const size_t extra = 16, total = n + extra, es = cujit_dtype_size(d);
  double *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y);
  unsigned char *xs = malloc(total * es), *ys = malloc(total * es), *zs = malloc(total * es);
  for (size_t i = 0; i < total; i++) {
    x[i] = (double)((int)(rand64() % 2001) - 1000) / 16,
    y[i] = (double)((int)(rand64() % 2001) - 1000);
    if (d == CUJIT_F32) {
      float fx = (float)x[i], fy = (float)y[i];
      memcpy(xs + i * 4, &fx, 4), memcpy(ys + i * 4, &fy, 4);
    } else {
      memcpy(xs + i * 8, &x[i], 8), memcpy(ys + i * 8, &y[i], 8);
    }
  }
  cujit_buffer *xb = upload(xs, total * es, d), *yb = upload(ys, total * es, d);
  cujit_buffer *zb = upload(NULL, total * es, d);
  cr_assert_eq(cujit_memset(zb, 0, 0xff, total * es, NULL), CUJIT_OK);
  const double a = 2.5;
  cujit_arg args[] = {CUJIT_ARG_F(a), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(zb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  download(zs, zb, total * es);
  for (size_t i = 0; i < total; i++) {
    double z;
    if (d == CUJIT_F32) {
      float f;
      memcpy(&f, zs + i * 4, 4);
      z = f;
    } else {
      memcpy(&z, zs + i * 8, 8);
    }
    if (i < n) /* inputs are multiples of 1/16 below 2^11: a*x+y is exact in float */
      cr_assert_eq(z, a * x[i] + y[i], "%s n=%zu z[%zu] = %g, expected %g", cujit_dtype_name(d), n,
                   i, z, a * x[i] + y[i]);
    else
      cr_assert(isnan(z), "%s n=%zu: z[%zu] past n was written", cujit_dtype_name(d), n, i);
  }
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(zb);
  free(x), free(y), free(xs), free(ys), free(zs);
}

Test(library, gpu_elementwise_axpy_matches_host) {
  CJ_NEED_GPU(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                        "axpy", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  static const size_t ns[] = {0, 1, 3, 4, 5, 1000, 1023, 4097, (1u << 20) + 3};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    check_axpy(k, CUJIT_F32, ns[i]);
    check_axpy(k, CUJIT_F64, ns[i]);
  }
  cujit_kernel_free(k);
}

/* y = a*x + y in place (the output is the buffer y) over f32, f64 and f16 through one generic
** kernel; elements past n must keep their values. Inputs are small multiples of 1/4 so every
** result is exact in each type, half included. */
static void check_axpy_in_place(cujit_kernel *k, cujit_dtype d, size_t n) {
  const size_t total = n + 13, es = cujit_dtype_size(d);
  double *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y);
  unsigned char *xs = malloc(total * es), *ys = malloc(total * es);
  cr_assert(x && y && xs && ys);
  for (size_t i = 0; i < total; i++) {
    x[i] = (double)((int)(rand64() % 201) - 100) / 4, y[i] = (double)((int)(rand64() % 201) - 100);
    if (d == CUJIT_F16) {
      uint16_t hx = exact_half((float)x[i]), hy = exact_half((float)y[i]);
      memcpy(xs + i * 2, &hx, 2), memcpy(ys + i * 2, &hy, 2);
    } else if (d == CUJIT_F32) {
      float fx = (float)x[i], fy = (float)y[i];
      memcpy(xs + i * 4, &fx, 4), memcpy(ys + i * 4, &fy, 4);
    } else {
      memcpy(xs + i * 8, &x[i], 8), memcpy(ys + i * 8, &y[i], 8);
    }
  }
  cujit_buffer *xb = upload(xs, total * es, d), *yb = upload(ys, total * es, d);
  cujit_arg args[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(yb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  unsigned char *got = malloc(total * es);
  download(got, yb, total * es);
  for (size_t i = 0; i < total; i++) {
    double want = i < n ? 2.0 * x[i] + y[i] : y[i];
    unsigned char w[8];
    if (d == CUJIT_F16) {
      uint16_t h = exact_half((float)want);
      memcpy(w, &h, 2);
    } else if (d == CUJIT_F32) {
      float f = (float)want;
      memcpy(w, &f, 4);
    } else {
      memcpy(w, &want, 8);
    }
    cr_assert(memcmp(got + i * es, w, es) == 0, "%s in place, n=%zu: y[%zu] should be %g",
              cujit_dtype_name(d), n, i, want);
  }
  cujit_buffer_free(xb), cujit_buffer_free(yb);
  free(x), free(y), free(xs), free(ys), free(got);
}

Test(library, gpu_elementwise_in_place_awkward_lengths) {
  CJ_NEED_GPU(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                        "axpy", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  static const size_t ns[] = {0, 1, 3, 4, 5, 7, 8, 9, 1023, (1u << 20) + 3};
  static const cujit_dtype ds[] = {CUJIT_F32, CUJIT_F64, CUJIT_F16};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t j = 0; j < sizeof ds / sizeof ds[0]; j++) check_axpy_in_place(k, ds[j], ns[i]);
  cujit_kernel_free(k);
}

/* Raw device addresses into the middle of buffers are not aligned for 16-byte packs: the kernel
** must notice and go one element at a time, with every element still right. */
Test(library, gpu_elementwise_unaligned_addresses) {
  CJ_NEED_GPU(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "float x, float y -> float z", "z = x - 2 * y",
                                        "sub2", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const size_t n = 4099, total = n + 8;
  float *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y), *z = malloc(total * 4);
  cr_assert(x && y && z);
  for (size_t i = 0; i < total; i++)
    x[i] = (float)((int)(rand64() % 2001) - 1000), y[i] = (float)((int)(rand64() % 2001) - 1000);
  cujit_buffer *xb = upload(x, total * 4, CUJIT_F32), *yb = upload(y, total * 4, CUJIT_F32);
  cujit_buffer *zb = upload(NULL, total * 4, CUJIT_F32);
  static const size_t offsets[][3] = {{1, 0, 0}, {0, 0, 3}, {1, 1, 1}, {2, 0, 2}, {0, 0, 0}};
  for (size_t t = 0; t < sizeof offsets / sizeof offsets[0]; t++) {
    const size_t ox = offsets[t][0], oy = offsets[t][1], oz = offsets[t][2];
    cr_assert_eq(cujit_memset(zb, 0, 0xff, total * 4, NULL), CUJIT_OK);
    cujit_arg args[] = {{.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(xb) + 4 * ox},
                        {.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(yb) + 4 * oy},
                        {.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(zb) + 4 * oz}};
    cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 3), CUJIT_OK, "%s",
                 cujit_errmsg(engine));
    download(z, zb, total * 4);
    for (size_t i = 0; i < total; i++) {
      if (i >= oz && i < oz + n)
        cr_assert_eq(z[i], x[i - oz + ox] - 2 * y[i - oz + oy], "offsets %zu %zu %zu: z[%zu]", ox,
                     oy, oz, i - oz);
      else
        cr_assert(isnan(z[i]), "offsets %zu %zu %zu: z[%zu] outside the range was written", ox, oy,
                  oz, i);
    }
  }
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(zb);
  cujit_kernel_free(k);
  free(x), free(y), free(z);
}

Test(library, gpu_elementwise_integers_in_place_and_iota) {
  CJ_NEED_GPU(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "int x, int y -> int s, long long p",
                                        "s = x + y;\np = (long long)x * y - i;", "ints", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const size_t n = 100003;
  int *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *s = malloc(n * sizeof *s);
  long long *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++)
    x[i] = (int)(rand64() % 2000001) - 1000000, y[i] = (int)(rand64() % 1000);
  cujit_buffer *xb = upload(x, n * sizeof *x, CUJIT_I32), *yb = upload(y, n * sizeof *y, CUJIT_I32);
  cujit_buffer *pb = upload(NULL, n * sizeof *p, CUJIT_I64);
  /* s goes back into x: in place. */
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(pb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  download(s, xb, n * sizeof *s);
  download(p, pb, n * sizeof *p);
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(s[i], x[i] + y[i], "s[%zu]", i);
    cr_assert_eq(p[i], (long long)x[i] * y[i] - (long long)i, "p[%zu]", i);
  }
  /* Argument errors: a short buffer, a wrong count, a kernel that is not elementwise. */
  cujit_buffer *small = upload(NULL, 10 * sizeof(int), CUJIT_I32);
  cujit_arg bad[] = {CUJIT_ARG_BUF(small), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(pb)};
  cr_expect_eq(cujit_elementwise_launch(k, n, NULL, bad, 4), CUJIT_ERROR_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(engine), "fewer") != NULL, "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_elementwise_launch(k, n, NULL, args, 3), CUJIT_ERROR_ARGUMENT);
  cr_expect_eq(cujit_elementwise_launch(k, 0, NULL, args, 4), CUJIT_OK);
  cujit_kernel_free(k);
  cr_assert_eq(
      cujit_elementwise_define(engine, "-> long long z", "z = 3 * i + n", "iota", NULL, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_arg one[] = {CUJIT_ARG_BUF(pb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, one, 1), CUJIT_OK, "%s", cujit_errmsg(engine));
  download(p, pb, n * sizeof *p);
  for (size_t i = 0; i < n; i++) cr_assert_eq(p[i], 3 * (long long)i + (long long)n, "iota %zu", i);
  cujit_kernel_free(k);
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(pb), cujit_buffer_free(small);
  free(x), free(y), free(s), free(p);
}

Test(library, gpu_elementwise_half) {
  CJ_NEED_GPU(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "half x -> float y, half h",
                                        "y = cujit::to_float(x) * 2.0f; h = x;", "halves", NULL,
                                        &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  enum { N = 777 };
  uint16_t xs[N], hs[N];
  float xf[N], y[N];
  for (int i = 0; i < N; i++)
    xf[i] = (float)((int)(rand64() % 4001) - 2000) / 4, xs[i] = exact_half(xf[i]);
  cujit_buffer *xb = upload(xs, sizeof xs, CUJIT_F16), *yb = upload(NULL, sizeof y, CUJIT_F32);
  cujit_buffer *hb = upload(NULL, sizeof hs, CUJIT_F16);
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(hb)};
  cr_assert_eq(cujit_elementwise_launch(k, N, NULL, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  download(y, yb, sizeof y);
  download(hs, hb, sizeof hs);
  for (int i = 0; i < N; i++) {
    cr_assert_eq(y[i], 2 * xf[i], "y[%d] = %g for x = %g", i, y[i], xf[i]);
    cr_assert_eq(hs[i], xs[i], "h[%d]", i);
  }
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(hb);
  cujit_kernel_free(k);
}
