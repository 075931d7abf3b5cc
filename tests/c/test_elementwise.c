/*
** test_elementwise.c -- the elementwise builder: the signature it writes, every element type and
** generic kernels compiled for sm_90, 16-byte vector accesses in the PTX, and its errors (all on
** CI); and on the GPU, axpy against the host for every type, in place, at awkward lengths and
** unaligned addresses, integers and iota, and half.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program/elementwise.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(elementwise, .init = cj_fixture_open, .fini = cj_fixture_close);

/* --- the elementwise builder, on CI ------------------------------------------------------------
 */

Test(elementwise, elementwise_define_builds_the_signature) {
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
    cujit_param_info p = CUJIT_PARAM_INFO_INIT;
    cr_assert_eq(cujit_kernel_param(k, i, &p), CUJIT_OK);
    cr_expect_str_eq(p.name, want[i].name);
    cr_expect_eq(p.kind, want[i].kind, "param %zu", i);
    cr_expect_eq(p.dtype, want[i].dtype, "param %zu", i);
    if (want[i].kind == CUJIT_PARAM_POINTER) cr_expect_eq(p.is_const, want[i].is_const);
  }
  cujit_kernel_free(k);
}

Test(elementwise, elementwise_generic_and_every_type_compile) {
  cujit_kernel *k, *spec;
  cujit_status st = cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                             "axpy", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert(cujit_kernel_is_generic(k));
  static const cujit_dtype types[] = {CUJIT_F32, CUJIT_F64, CUJIT_I32,
                                      CUJIT_U64, CUJIT_F16, CUJIT_BF16};
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
  /* bfloat16 by its spellings, and through a type variable bound to it, where cujit::to_float
  ** comes from cujit/bf16.h (included because the unit has the toolkit's cuda_bf16.h). */
  cr_assert_eq(cujit_elementwise_define(engine, "bf16 b, nv_bfloat16 c -> __nv_bfloat16 d, float e",
                                        "d = b; e = cujit::to_float(b) + cujit::to_float(c);",
                                        "bmixed", &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);
  cr_assert_eq(cujit_elementwise_define(engine, "T x -> float y", "y = cujit::to_float(x) * 2.0f",
                                        "widen", &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const cujit_dtype bf16 = CUJIT_BF16;
  cr_expect_eq(cujit_kernel_specialize(k, &bf16, 1, &spec), CUJIT_OK, "%s", cujit_errmsg(engine));
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

Test(elementwise, elementwise_ptx_uses_16_byte_vectors) {
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
              {CUJIT_F16, "ld.global.v4.u32", "st.global.v4.u32"},
              {CUJIT_BF16, "ld.global.v4.u32", "st.global.v4.u32"}};
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

Test(elementwise, elementwise_definition_errors) {
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
  expect_define_error("float x -> float y", "", CUJIT_ERROR_INVALID_ARGUMENT,
                      "e.g. \"z = a * x + y\""); /* says what to write */
  expect_define_error(NULL, "y = x", CUJIT_ERROR_INVALID_ARGUMENT, "needs");
  cujit_kernel *k = NULL;
  cr_expect_eq(cujit_elementwise_define(engine, "float x -> float y", "y = x", "9lives", &sm90, &k),
               CUJIT_ERROR_SIGNATURE);
  cr_expect_eq(cujit_elementwise_define(NULL, "float x -> float y", "y = x", "f", &sm90, &k),
               CUJIT_ERROR_INVALID_ARGUMENT);
}

/* The parameter list is read with the signature tokenizer and the signatures' type-variable rule:
** any spacing, T2 a type variable, Tx not; no fixed item length. No NVRTC needed. */
Test(elementwise, elementwise_text_reads_like_signatures) {
  cj_elementwise_kernel text;
  /* 64 parameters are taken, 65 are refused (the mirror). */
  char many[2048] = "";
  for (int i = 0; i < 63; i++) snprintf(many + strlen(many), 32, "%sfloat a%d", i ? ", " : "", i);
  strcat(many, " -> float z");
  cr_assert_eq(cj_elementwise_text(engine, many, "z = a0", "many", &text), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cj_elementwise_text_free(&text);
  strcat(many, ", float z2");
  cr_assert_eq(cj_elementwise_text(engine, many, "z = a0", "many", &text), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine), "more than 64 parameters"), "%s", cujit_errmsg(engine));
  cj_elementwise_text_free(&text);
  cr_assert_eq(
      cj_elementwise_text(engine, "scalar\tT2  a ,T2 x->\n T2 z", "z = a * x", "scale", &text),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_str_eq(text.signature,
                   "scale(T2 a, const T2 *__restrict__ x, T2 *__restrict__ z, long long n)");
  cj_elementwise_text_free(&text);
  cr_assert_eq(cj_elementwise_text(engine, "Tx x -> float z", "z = x", "f", &text),
               CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine), "'Tx' is not an element type"), "%s",
            cujit_errmsg(engine));
  cj_elementwise_text_free(&text);
  char params[600] = "unsigned   long   long   int   ";
  memset(params + strlen(params), 'v', 300);
  strcat(params, " -> float z");
  cr_assert_eq(cj_elementwise_text(engine, params, "z = 1", "f", &text), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine), "longer than 63 characters"), "%s", cujit_errmsg(engine));
  cj_elementwise_text_free(&text);
  params[strlen("unsigned   long   long   int   ") + 40] = '\0';
  strcat(params, " -> float z");
  cr_assert_eq(cj_elementwise_text(engine, params, "z = 1", "f", &text), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(text.signature, "const unsigned long long *__restrict__ vvvv"), "%s",
            text.signature);
  cj_elementwise_text_free(&text);
  /* Only the prefix cj_ is cujit's: a name that merely starts with cj is the user's. */
  cr_assert_eq(cj_elementwise_text(engine, "float x -> float y", "y = x", "cjx", &text), CUJIT_OK,
               "%s", cujit_errmsg(engine));
  cr_assert(strncmp(text.signature, "cjx(", 4) == 0, "%s", text.signature);
  cj_elementwise_text_free(&text);
  cr_assert_eq(cj_elementwise_text(engine, "float x -> float y", "y = x", "cj_x", &text),
               CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine),
                   "elementwise kernel name \"cj_x\": use a C identifier not starting with cj_"),
            "%s", cujit_errmsg(engine));
  cj_elementwise_text_free(&text);
}

/* The generated kernel includes half.h only where __half or a type variable may appear, and
** bf16.h only where __nv_bfloat16 is named (a type variable bound to it needs no bf16.h: the
** toolkit's header is large, and every generic kernel would pay for it). */
Test(elementwise, elementwise_includes_only_the_headers_its_types_need) {
  static const struct {
    const char *params;
    int half, bf16;
  } cases[] = {
      {"float x -> float y", 0, 0},          {"double x, int k -> double y", 0, 0},
      {"__half x -> float y", 1, 0},         {"T x -> T y", 1, 0},
      {"scalar T2 a, T2 x -> T2 y", 1, 0},   {"__nv_bfloat16 x -> float y", 0, 1},
      {"float x -> __nv_bfloat16 y", 0, 1},  {"__half x, __nv_bfloat16 b -> float y", 1, 1},
      {"T x, __nv_bfloat16 b -> T y", 1, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cj_elementwise_kernel text;
    cr_assert_eq(cj_elementwise_text(engine, cases[i].params, "y = x", "f", &text), CUJIT_OK,
                 "%s: %s", cases[i].params, cujit_errmsg(engine));
    cr_assert(strstr(text.preamble, "#include <cujit/library_kernels.h>"), "%s: %s",
              cases[i].params, text.preamble);
    cr_expect_eq(strstr(text.preamble, "#include <cujit/half.h>") != NULL, cases[i].half,
                 "%s: half.h %s wanted: %s", cases[i].params, cases[i].half ? "" : "not",
                 text.preamble);
    cr_expect_eq(strstr(text.preamble, "#include <cujit/bf16.h>") != NULL, cases[i].bf16,
                 "%s: bf16.h %s wanted: %s", cases[i].params, cases[i].bf16 ? "" : "not",
                 text.preamble);
    cj_elementwise_text_free(&text);
  }
}

Test(elementwise, elementwise_expression_errors_name_the_kernel) {
  cujit_kernel *k;
  cujit_status st = cujit_elementwise_define(engine, "float x, float y -> float z",
                                             "z = x +* undefined_name", "broken", &sm90, &k);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cr_assert_eq(st, CUJIT_ERROR_COMPILE, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "broken") != NULL, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "undefined_name") != NULL, "%s", cujit_errmsg(engine));
}

/* --- elementwise kernels on the GPU -------------------------------------------------------------
 */

static void check_axpy(cujit_kernel *k, cujit_dtype d, size_t n) {
  const size_t extra = 16, total = n + extra, es = cujit_dtype_size(d);
  double *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y);
  unsigned char *xs = malloc(total * es), *ys = malloc(total * es), *zs = malloc(total * es);
  for (size_t i = 0; i < total; i++) {
    x[i] = (double)((int)(cj_test_rand64() % 2001) - 1000) / 16,
    y[i] = (double)((int)(cj_test_rand64() % 2001) - 1000);
    if (d == CUJIT_F32) {
      float fx = (float)x[i], fy = (float)y[i];
      memcpy(xs + i * 4, &fx, 4), memcpy(ys + i * 4, &fy, 4);
    } else {
      memcpy(xs + i * 8, &x[i], 8), memcpy(ys + i * 8, &y[i], 8);
    }
  }
  cujit_buffer *xb = cj_test_upload(xs, total * es, d), *yb = cj_test_upload(ys, total * es, d);
  cujit_buffer *zb = cj_test_upload(NULL, total * es, d);
  cr_assert_eq(cujit_memset(zb, 0, 0xff, total * es, NULL), CUJIT_OK);
  const double a = 2.5;
  cujit_arg args[] = {CUJIT_ARG_F(a), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(zb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(zs, zb, total * es);
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

/* The generic z = a * x + y, for the current device. */
static cujit_kernel *define_axpy(void) {
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "scalar T a, T x, T y -> T z", "z = a * x + y",
                                        "axpy", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  return k;
}

Test(elementwise, gpu_elementwise_axpy_matches_host) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = define_axpy();
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
    x[i] = (double)((int)(cj_test_rand64() % 201) - 100) / 4,
    y[i] = (double)((int)(cj_test_rand64() % 201) - 100);
    if (d == CUJIT_F16) {
      uint16_t hx = cj_test_exact_half((float)x[i]), hy = cj_test_exact_half((float)y[i]);
      memcpy(xs + i * 2, &hx, 2), memcpy(ys + i * 2, &hy, 2);
    } else if (d == CUJIT_F32) {
      float fx = (float)x[i], fy = (float)y[i];
      memcpy(xs + i * 4, &fx, 4), memcpy(ys + i * 4, &fy, 4);
    } else {
      memcpy(xs + i * 8, &x[i], 8), memcpy(ys + i * 8, &y[i], 8);
    }
  }
  cujit_buffer *xb = cj_test_upload(xs, total * es, d), *yb = cj_test_upload(ys, total * es, d);
  cujit_arg args[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(yb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  unsigned char *got = malloc(total * es);
  cj_test_download(got, yb, total * es);
  for (size_t i = 0; i < total; i++) {
    double want = i < n ? 2.0 * x[i] + y[i] : y[i];
    unsigned char w[8];
    if (d == CUJIT_F16) {
      uint16_t h = cj_test_exact_half((float)want);
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

Test(elementwise, gpu_elementwise_in_place_awkward_lengths) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = define_axpy();
  static const size_t ns[] = {0, 1, 3, 4, 5, 7, 8, 9, 1023, (1u << 20) + 3};
  static const cujit_dtype ds[] = {CUJIT_F32, CUJIT_F64, CUJIT_F16};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t j = 0; j < sizeof ds / sizeof ds[0]; j++) check_axpy_in_place(k, ds[j], ns[i]);
  cujit_kernel_free(k);
}

/* Raw device addresses into the middle of buffers are not aligned for 16-byte packs: the kernel
** must notice and go one element at a time, with every element still right. */
Test(elementwise, gpu_elementwise_unaligned_addresses) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "float x, float y -> float z", "z = x - 2 * y",
                                        "sub2", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const size_t n = 4099, total = n + 8;
  float *x = malloc(total * sizeof *x), *y = malloc(total * sizeof *y), *z = malloc(total * 4);
  cr_assert(x && y && z);
  for (size_t i = 0; i < total; i++)
    x[i] = (float)((int)(cj_test_rand64() % 2001) - 1000),
    y[i] = (float)((int)(cj_test_rand64() % 2001) - 1000);
  cujit_buffer *xb = cj_test_upload(x, total * 4, CUJIT_F32),
               *yb = cj_test_upload(y, total * 4, CUJIT_F32);
  cujit_buffer *zb = cj_test_upload(NULL, total * 4, CUJIT_F32);
  static const size_t offsets[][3] = {{1, 0, 0}, {0, 0, 3}, {1, 1, 1}, {2, 0, 2}, {0, 0, 0}};
  for (size_t t = 0; t < sizeof offsets / sizeof offsets[0]; t++) {
    const size_t ox = offsets[t][0], oy = offsets[t][1], oz = offsets[t][2];
    cr_assert_eq(cujit_memset(zb, 0, 0xff, total * 4, NULL), CUJIT_OK);
    cujit_arg args[] = {{.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(xb) + 4 * ox},
                        {.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(yb) + 4 * oy},
                        {.kind = CUJIT_ARG_DEVPTR, .v.devptr = cujit_buffer_devptr(zb) + 4 * oz}};
    cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 3), CUJIT_OK, "%s",
                 cujit_errmsg(engine));
    cj_test_download(z, zb, total * 4);
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

Test(elementwise, gpu_elementwise_integers_in_place_and_iota) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "int x, int y -> int s, long long p",
                                        "s = x + y;\np = (long long)x * y - i;", "ints", NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  const size_t n = 100003;
  int *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *s = malloc(n * sizeof *s);
  long long *p = malloc(n * sizeof *p);
  for (size_t i = 0; i < n; i++)
    x[i] = (int)(cj_test_rand64() % 2000001) - 1000000, y[i] = (int)(cj_test_rand64() % 1000);
  cujit_buffer *xb = cj_test_upload(x, n * sizeof *x, CUJIT_I32),
               *yb = cj_test_upload(y, n * sizeof *y, CUJIT_I32);
  cujit_buffer *pb = cj_test_upload(NULL, n * sizeof *p, CUJIT_I64);
  /* s goes back into x: in place. */
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(pb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(s, xb, n * sizeof *s);
  cj_test_download(p, pb, n * sizeof *p);
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(s[i], x[i] + y[i], "s[%zu]", i);
    cr_assert_eq(p[i], (long long)x[i] * y[i] - (long long)i, "p[%zu]", i);
  }
  /* Argument errors: a short buffer, a wrong count, a kernel that is not elementwise. */
  cujit_buffer *small = cj_test_upload(NULL, 10 * sizeof(int), CUJIT_I32);
  cujit_arg bad[] = {CUJIT_ARG_BUF(small), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(pb)};
  cr_expect_eq(cujit_elementwise_launch(k, n, NULL, bad, 4), CUJIT_ERROR_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(engine), "argument 1 'x': the buffer holds 10 elements of 4 "
                                         "bytes, fewer than the 100003") != NULL,
            "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_elementwise_launch(k, n, NULL, args, 3), CUJIT_ERROR_ARGUMENT);
  cr_expect_eq(cujit_elementwise_launch(k, 0, NULL, args, 4), CUJIT_OK);
  cujit_kernel_free(k);
  cr_assert_eq(
      cujit_elementwise_define(engine, "-> long long z", "z = 3 * i + n", "iota", NULL, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_arg one[] = {CUJIT_ARG_BUF(pb)};
  cr_assert_eq(cujit_elementwise_launch(k, n, NULL, one, 1), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(p, pb, n * sizeof *p);
  for (size_t i = 0; i < n; i++) cr_assert_eq(p[i], 3 * (long long)i + (long long)n, "iota %zu", i);
  cujit_kernel_free(k);
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(pb), cujit_buffer_free(small);
  free(x), free(y), free(s), free(p);
}

Test(elementwise, gpu_elementwise_half) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_elementwise_define(engine, "half x -> float y, half h",
                                        "y = cujit::to_float(x) * 2.0f; h = x;", "halves", NULL,
                                        &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  enum { N = 777 };
  uint16_t xs[N], hs[N];
  float xf[N], y[N];
  for (int i = 0; i < N; i++)
    xf[i] = (float)((int)(cj_test_rand64() % 4001) - 2000) / 4, xs[i] = cj_test_exact_half(xf[i]);
  cujit_buffer *xb = cj_test_upload(xs, sizeof xs, CUJIT_F16),
               *yb = cj_test_upload(NULL, sizeof y, CUJIT_F32);
  cujit_buffer *hb = cj_test_upload(NULL, sizeof hs, CUJIT_F16);
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(hb)};
  cr_assert_eq(cujit_elementwise_launch(k, N, NULL, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(y, yb, sizeof y);
  cj_test_download(hs, hb, sizeof hs);
  for (int i = 0; i < N; i++) {
    cr_assert_eq(y[i], 2 * xf[i], "y[%d] = %g for x = %g", i, y[i], xf[i]);
    cr_assert_eq(hs[i], xs[i], "h[%d]", i);
  }
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(hb);
  cujit_kernel_free(k);
}
