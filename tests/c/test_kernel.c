/*
** test_kernel.c -- kernels through the public API: defining, generic specialisation, argument
** checking (on CI, before any device is needed), and launches checked against host references
** on a device (GPU 0, else the CPU device), including faults and recovery.
*/
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "gpu.h"
#include "program/launch.h"

TestSuite(kernel, .init = cj_fixture_open, .fini = cj_fixture_close);

static const char *saxpy_body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] = a * x[i] + y[i];\n";

Test(kernel, define_reads_signature) {
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "saxpy(float a, const float *x, float *y, int n)",
                                   saxpy_body, NULL, &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_str_eq(cujit_kernel_name(k), "saxpy");
  cr_assert_eq(cujit_kernel_param_count(k), 4);
  cujit_param_info p = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_kernel_param(k, 1, &p), CUJIT_OK);
  cr_assert_str_eq(p.name, "x");
  cr_assert_eq(p.kind, CUJIT_PARAM_POINTER);
  cr_assert_eq(p.dtype, CUJIT_F32);
  cr_assert(p.is_const);
  cr_assert_eq(cujit_kernel_param(k, 3, &p), CUJIT_OK);
  cr_assert_eq(p.dtype, CUJIT_I32);
  cr_assert_eq(p.offset, 24);
  cr_assert_neq(cujit_kernel_param(k, 4, &p), CUJIT_OK);
  cr_assert(strstr(cujit_kernel_source(k), "saxpy") != NULL);
  const cujit_program *prog = cujit_kernel_program(k);
  size_t len;
  cr_assert(strstr(cujit_program_ptx(prog, &len), ".entry saxpy") != NULL);
  cr_assert_eq(cujit_kernel_is_generic(k), 0);
  cujit_kernel_free(k);
}

Test(kernel, empty_body_and_bad_signature) {
  cujit_kernel *k = (cujit_kernel *)1;
  cr_assert_eq(cujit_kernel_define(engine, "f(int n)", "  \n\t", NULL, &sm90, &k),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_null(k);
  cr_assert(strstr(cujit_errmsg(engine), "empty body") != NULL, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_define(engine, "f(int n, float n)", "return;", NULL, &sm90, &k),
               CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine), "n") != NULL);
  cr_assert_eq(cujit_kernel_define(engine, NULL, "x", NULL, &sm90, &k),
               CUJIT_ERROR_INVALID_ARGUMENT);
}

Test(kernel, compile_error_names_kernel_and_line) {
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "broken(float *y, int n)",
                                   "int i = threadIdx.x;\nif (i < n)\n  y[i] = q;\n", NULL, &sm90,
                                   &k),
               CUJIT_ERROR_COMPILE);
  const char *msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "broken") != NULL, "%s", msg);
  cr_assert(strstr(msg, "line 3") != NULL, "%s", msg);
}

Test(kernel, program_kernel_not_found_lists_kernels) {
  cujit_program *p;
  const char *src = "extern \"C\" __global__ void one(int *x) { x[0] = 1; }\n"
                    "extern \"C\" __global__ void two(int *x) { x[0] = 2; }\n";
  cr_assert_eq(cujit_program_compile(engine, src, "two.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "three", &k), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "'one'") && strstr(cujit_errmsg(engine), "'two'"), "%s",
            cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel(p, "two", &k), CUJIT_OK);
  cujit_program_free(p); /* the kernel keeps what it needs */
  cr_assert_str_eq(cujit_kernel_name(k), "two");
  cr_assert_eq(cujit_kernel_param_count(k), 1);
  cujit_kernel_free(k);
}

Test(kernel, generic_specialises_once_per_type) {
  cujit_kernel *g, *f32, *f64, *again;
  cr_assert_eq(cujit_kernel_define(engine, "axpy(T a, const T *x, T *y, int n)",
                                   "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "if (i < n) y[i] = a * x[i] + y[i];",
                                   NULL, &sm90, &g),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert(cujit_kernel_is_generic(g));
  cr_assert_eq(cujit_kernel_type_var_count(g), 1);
  cr_assert_str_eq(cujit_kernel_type_var(g, 0), "T");
  cujit_dtype t = CUJIT_F32;
  cr_assert_eq(cujit_kernel_specialize(g, &t, 1, &f32), CUJIT_OK, "%s", cujit_errmsg(engine));
  t = CUJIT_F64;
  cr_assert_eq(cujit_kernel_specialize(g, &t, 1, &f64), CUJIT_OK, "%s", cujit_errmsg(engine));
  t = CUJIT_F32;
  cr_assert_eq(cujit_kernel_specialize(g, &t, 1, &again), CUJIT_OK);
  cr_assert_eq(again, f32);
  cr_assert_neq(f32, f64);
  cujit_param_info p = CUJIT_PARAM_INFO_INIT;
  cujit_kernel_param(f64, 1, &p);
  cr_assert_eq(p.dtype, CUJIT_F64);
  size_t len;
  cr_assert(strstr(cujit_program_ptx(cujit_kernel_program(f64), &len), ".f64") != NULL);
  cr_assert_eq(cujit_kernel_specialize(g, &t, 2, &again), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_kernel_free(f32); /* owned by the generic kernel: a no-op */
  cujit_kernel_free(g);
}

/* Two type variables: a specialisation is found again only by its whole list, so lists that
** share a first type (f32,i32 / f32,f64 / i32,f64: dtypes differing in any byte) are three. */
Test(kernel, generic_lists_that_share_a_type_are_other_specialisations) {
  cujit_kernel *g;
  cr_assert_eq(cujit_kernel_define(engine, "mix(const T *x, U *y, int n)",
                                   "int i = threadIdx.x;\nif (i < n) y[i] = (U)x[i];", NULL, &sm90,
                                   &g),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_type_var_count(g), 2);
  const cujit_dtype lists[][2] = {
      {CUJIT_F32, CUJIT_I32}, {CUJIT_F32, CUJIT_F64}, {CUJIT_I32, CUJIT_F64}};
  cujit_kernel *k[3];
  for (int i = 0; i < 3; i++) {
    cr_assert_eq(cujit_kernel_specialize(g, lists[i], 2, &k[i]), CUJIT_OK, "%s",
                 cujit_errmsg(engine));
    for (int j = 0; j < 2; j++) {
      cujit_param_info p = CUJIT_PARAM_INFO_INIT;
      cr_assert_eq(cujit_kernel_param(k[i], j, &p), CUJIT_OK);
      cr_assert_eq(p.dtype, lists[i][j], "list %d, parameter %d: dtype %d", i, j, (int)p.dtype);
    }
  }
  cr_assert(k[0] != k[1] && k[1] != k[2] && k[0] != k[2], "three lists, three kernels");
  cujit_kernel *again;
  cr_assert_eq(cujit_kernel_specialize(g, lists[1], 2, &again), CUJIT_OK);
  cr_assert_eq(again, k[1], "the same list: the same kernel");
  cujit_kernel_free(g);
}

/* Argument checks happen before the device is needed, so they run on CI too. */
static cujit_kernel *define_saxpy(void) {
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "saxpy(float a, const float *x, float *y, int n)",
                                   saxpy_body, NULL, &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  return k;
}

static void expect_arg_error(cujit_kernel *k, cujit_arg *args, size_t n, const char *needle) {
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {1, 1, 1},
                           .block = {32, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cr_assert_eq(cujit_launch(k, &c, args, n), CUJIT_ERROR_ARGUMENT, "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), needle) != NULL, "expected '%s' in: %s", needle,
            cujit_errmsg(engine));
}

Test(kernel, argument_checks) {
  cujit_kernel *k = define_saxpy();
  cujit_arg args[4] = {CUJIT_ARG_F(2.0),
                       {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0},
                       {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0},
                       CUJIT_ARG_I(10)};
  expect_arg_error(k, args, 3, "takes 4 argument");
  args[3] = CUJIT_ARG_F(3.5);
  expect_arg_error(k, args, 4, "not an integer");
  args[3] = CUJIT_ARG_I(1LL << 40);
  expect_arg_error(k, args, 4, "does not fit");
  args[3] = CUJIT_ARG_I(-5);
  args[0] = CUJIT_ARG_F(1e300);
  expect_arg_error(k, args, 4, "out of range for f32");
  args[0] = CUJIT_ARG_F(1.5);
  args[1] = CUJIT_ARG_I(7);
  expect_arg_error(k, args, 4, "'x'");
  args[1] = (cujit_arg){.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0};
  args[0] = (cujit_arg){.kind = CUJIT_ARG_BUFFER, .v.buffer = NULL};
  expect_arg_error(k, args, 4, "'a'");
  cujit_kernel_free(k);
}

/* Packs one float argument for parameter 0 of `k` (no device needed); returns the status. */
static cujit_status pack_one(cujit_kernel *k, cujit_arg a, unsigned char *params) {
  cujit_arg args[2] = {a, {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0}};
  void *pointers[CJ_MAX_PARAMS];
  memset(params, 0xee, 16);
  return cj_launch_pack(k, args, 2, NULL, params, pointers);
}

static uint16_t packed_half(cujit_kernel *k, double v) {
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  cr_assert_eq(pack_one(k, CUJIT_ARG_F(v), params), CUJIT_OK, "%.17g: %s", v, cujit_errmsg(engine));
  uint16_t h;
  memcpy(&h, params, sizeof h);
  return h;
}

Test(kernel, float_limits_one_rule) {
  /* One rule, as the Lua binding's host arrays: a value rounds to the nearest of the type and is
  ** refused only when that would be infinity. So the largest values pass, and so does 65510 for a
  ** __half (it becomes 65504, as a[1] = 65510 does on an f16 host array). */
  cujit_kernel *h, *f;
  cr_assert_eq(
      cujit_kernel_define(engine, "hk(__half v, int *out)", "out[0] = 1;", NULL, &sm90, &h),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_define(engine, "fk(float v, int *out)", "out[0] = 1;", NULL, &sm90, &f),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(packed_half(h, 65504.0), 0x7bff, "the largest half");
  cr_assert_eq(packed_half(h, -65504.0), 0xfbff);
  cr_assert_eq(packed_half(h, 65510.0), 0x7bff, "rounds down to the largest half");
  cr_assert_eq(packed_half(h, 65519.99999999), 0x7bff, "no double rounding through float");
  cr_assert_eq(packed_half(h, 1.0), 0x3c00);
  cr_assert_eq(packed_half(h, 1.0 + 0x1p-11), 0x3c00, "a tie rounds to even");
  cr_assert_eq(packed_half(h, 1.0 + 0x1p-11 + 0x1p-40), 0x3c01, "just past a tie rounds up");
  cr_assert_eq(packed_half(h, 1.0 + 3 * 0x1p-11), 0x3c02, "a tie from odd rounds up");
  cr_assert_eq(packed_half(h, 0x1p-24), 0x0001, "the smallest subnormal");
  cr_assert_eq(packed_half(h, 0x1p-25), 0x0000, "half of it is a tie to zero");
  cr_assert_eq(packed_half(h, 0x1.8p-25), 0x0001);
  cr_assert_eq(packed_half(h, 0x1p-26), 0x0000);
  cr_assert_eq(packed_half(h, 0x1.ffcp-15), 0x0400,
               "a subnormal rounding up to the smallest normal");
  cr_assert_eq(packed_half(h, -0.0), 0x8000);
  cr_assert_eq(packed_half(h, 0.333251953125), 0x3555);
  cr_assert_eq(packed_half(h, INFINITY), 0x7c00, "infinity passed as such");
  cr_assert_eq(packed_half(h, NAN) & 0x7e00, 0x7e00);
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  cr_assert_eq(pack_one(h, CUJIT_ARG_I(65504), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(pack_one(h, CUJIT_ARG_I(65519), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  const double refused_half[] = {65520.0, -65520.0, 1e6};
  for (size_t i = 0; i < 3; i++) {
    cr_assert_eq(pack_one(h, CUJIT_ARG_F(refused_half[i]), params), CUJIT_ERROR_ARGUMENT, "%g",
                 refused_half[i]);
    cr_assert(strstr(cujit_errmsg(engine), "is out of range for f16 (it would become infinity; the "
                                           "largest is 65504)"),
              "%s", cujit_errmsg(engine));
  }
  cr_assert_eq(pack_one(h, CUJIT_ARG_I(65520), params), CUJIT_ERROR_ARGUMENT);

  float got;
  cr_assert_eq(pack_one(f, CUJIT_ARG_F(FLT_MAX), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, FLT_MAX, "the largest float");
  cr_assert_eq(pack_one(f, CUJIT_ARG_F(-FLT_MAX), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, -FLT_MAX);
  double below = (double)FLT_MAX + 0x1p103 - 0x1p80; /* just under half an ulp past FLT_MAX */
  cr_assert_eq(pack_one(f, CUJIT_ARG_F(below), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, FLT_MAX, "rounds down to the largest float");
  cr_assert_eq(pack_one(f, CUJIT_ARG_F(1.5), params), CUJIT_OK);
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, 1.5f);
  cr_assert_eq(pack_one(f, CUJIT_ARG_F((double)FLT_MAX + 0x1p103), params), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "out of range for f32 (it would become infinity; the "
                                         "largest is 3.40282347e+38)"),
            "%s", cujit_errmsg(engine));
  cr_assert_eq(pack_one(f, CUJIT_ARG_F(-1e39), params), CUJIT_ERROR_ARGUMENT);
  /* Integers for a float, each read as its own kind: an unsigned past INT64_MAX is no negative. */
  cr_assert_eq(pack_one(f, CUJIT_ARG_U(UINT64_MAX), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, 0x1p64f, "UINT64_MAX rounds to 2^64, not -1: %g", got);
  cr_assert_eq(pack_one(f, CUJIT_ARG_U(3000000000u), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, 3e9f, "%g", got);
  cr_assert_eq(pack_one(f, CUJIT_ARG_I(-3), params), CUJIT_OK, "%s", cujit_errmsg(engine));
  memcpy(&got, params, sizeof got);
  cr_assert_eq(got, -3.0f, "%g", got);
  cr_assert_eq(pack_one(h, CUJIT_ARG_U(UINT64_MAX), params), CUJIT_ERROR_ARGUMENT,
               "2^64 is past the largest half");
  cr_assert(strstr(cujit_errmsg(engine), "out of range for f16"), "%s", cujit_errmsg(engine));
  cujit_kernel_free(h);
  cujit_kernel_free(f);
}

/* The bytes packed for argument `i` of `k`, as a little-endian unsigned number. */
static uint64_t packed_at(cujit_kernel *k, const unsigned char *params, size_t i) {
  cujit_param_info p = CUJIT_PARAM_INFO_INIT;
  cujit_kernel_param(k, i, &p);
  uint64_t v = 0;
  memcpy(&v, params + p.offset, p.size);
  return v;
}

Test(kernel, integers_pack_at_their_width) {
  cujit_kernel *k;
  cr_assert_eq(
      cujit_kernel_define(engine,
                          "ik(signed char a, unsigned short b, unsigned int c, long long d, "
                          "unsigned long long e, short f, int *out)",
                          "out[0] = 1;", NULL, &sm90, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  cujit_arg args[7] = {CUJIT_ARG_I(-2),
                       CUJIT_ARG_U(65535),
                       CUJIT_ARG_U(4294967295u),
                       CUJIT_ARG_I(INT64_MIN),
                       CUJIT_ARG_U(UINT64_MAX),
                       CUJIT_ARG_F(-3.0),
                       {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0x1000}};
  memset(params, 0xab, sizeof params);
  cr_assert_eq(cj_launch_pack(k, args, 7, NULL, params, pointers), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(packed_at(k, params, 0), 0xfe, "signed char -2, one byte");
  cr_assert_eq(params[1], 0xab, "nothing written past the char");
  cr_assert_eq(packed_at(k, params, 1), 0xffff);
  cr_assert_eq(packed_at(k, params, 2), 0xffffffffu);
  cr_assert_eq(packed_at(k, params, 3), (uint64_t)1 << 63);
  cr_assert_eq(packed_at(k, params, 4), UINT64_MAX);
  cr_assert_eq(packed_at(k, params, 5), 0xfffd, "short -3 from an exact float");
  cr_assert_eq(packed_at(k, params, 6), 0x1000, "a device pointer as given");
  for (size_t i = 0; i < 7; i++) {
    cujit_param_info p = CUJIT_PARAM_INFO_INIT;
    cujit_kernel_param(k, i, &p);
    cr_assert_eq(pointers[i], params + p.offset, "pointers[%zu] at its offset", i);
  }
  /* Unsigned values past the range, each width; and the kind named in the message. */
  cujit_arg bad[7];
  memcpy(bad, args, sizeof bad);
  bad[1] = CUJIT_ARG_U(65536);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "65536 does not fit (range 0..65535)"), "%s",
            cujit_errmsg(engine));
  bad[1] = CUJIT_ARG_I(-1);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "-1 does not fit (range 0..65535)"), "%s",
            cujit_errmsg(engine));
  memcpy(bad, args, sizeof bad);
  bad[2] = CUJIT_ARG_U(4294967296u);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "argument 3 'c' (unsigned int): 4294967296 does not fit"),
            "%s", cujit_errmsg(engine));
  memcpy(bad, args, sizeof bad);
  bad[0] = (cujit_arg){.kind = CUJIT_ARG_DEVPTR, .v.devptr = 8};
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "expects a number, got a device pointer"), "%s",
            cujit_errmsg(engine));
  bad[0] = CUJIT_ARG_BUF(NULL);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "expects a number, got a buffer"), "%s",
            cujit_errmsg(engine));
  memcpy(bad, args, sizeof bad);
  bad[6] = CUJIT_ARG_U(7);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "expects a device buffer, got an unsigned integer"), "%s",
            cujit_errmsg(engine));
  bad[6] = CUJIT_ARG_F(1.0);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "expects a device buffer, got a float"), "%s",
            cujit_errmsg(engine));
  bad[6] = CUJIT_ARG_I(7);
  cr_assert_eq(cj_launch_pack(k, bad, 7, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "expects a device buffer, got an integer"), "%s",
            cujit_errmsg(engine));
  cujit_kernel_free(k);
}

/* A bool parameter takes 0 and 1 only: another byte is not a bool on the device (docs: cujit.h). */
Test(kernel, bool_takes_0_and_1) {
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "bk(bool b, int *out)", "out[0] = b;", NULL, &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  cujit_arg args[2] = {CUJIT_ARG_I(1), {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0x1000}};
  cr_assert_eq(cj_launch_pack(k, args, 2, NULL, params, pointers), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(packed_at(k, params, 0), 1);
  args[0] = CUJIT_ARG_F(0.0);
  cr_assert_eq(cj_launch_pack(k, args, 2, NULL, params, pointers), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(packed_at(k, params, 0), 0);
  cujit_arg bad[] = {CUJIT_ARG_I(2), CUJIT_ARG_U(255), CUJIT_ARG_F(2.0), CUJIT_ARG_I(-1)};
  const char *why[] = {"2 does not fit (range 0..1)", "255 does not fit (range 0..1)",
                       "2 does not fit (range 0..1)", "-1 does not fit (range 0..1)"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    args[0] = bad[i];
    cr_assert_eq(cj_launch_pack(k, args, 2, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
    cr_assert(strstr(cujit_errmsg(engine), "argument 1 'b' (bool): "), "%s", cujit_errmsg(engine));
    cr_assert(strstr(cujit_errmsg(engine), why[i]), "%s", cujit_errmsg(engine));
  }
}

Test(kernel, a_parameter_type_cujit_cannot_size) {
  cujit_program *p;
  const char *src = "struct pair { int a, b; };\n"
                    "extern \"C\" __global__ void sk(pair v, int *out) { out[0] = v.a + v.b; }\n";
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "sk", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  cujit_arg args[2] = {CUJIT_ARG_I(1), {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0}};
  /* Its size comes from the PTX (.param .align 4 .b8 v[8]): it takes its 8 bytes. */
  cr_assert_eq(cj_launch_pack(k, args, 2, NULL, params, pointers), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "argument 1 'v' (pair): expects 8 raw bytes"), "%s",
            cujit_errmsg(engine));
  int pair[2] = {1, 2};
  args[0] = (cujit_arg){.kind = CUJIT_ARG_BYTES, .v.bytes = pair};
  cr_assert_eq(cj_launch_pack(k, args, 2, NULL, params, pointers), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(memcmp(params, pair, sizeof pair), 0);
  cujit_kernel_free(k);
  cujit_program_free(p);
}

Test(kernel, unsigned_and_exact_float_for_int) {
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "f(unsigned char c, unsigned int *out)", "out[0] = c;",
                                   NULL, &sm90, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_arg args[2] = {CUJIT_ARG_I(256), {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0}};
  expect_arg_error(k, args, 2, "does not fit");
  args[0] = CUJIT_ARG_I(-1);
  expect_arg_error(k, args, 2, "does not fit");
  cujit_kernel_free(k);
}

/* --- on a device: GPU 0, else the CPU device -------------------------------------------------- */

static void fill_random(float *v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) v[i] = cj_test_randf(&seed);
}

Test(kernel, gpu_saxpy_matches_host) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "saxpy(float a, const float *x, float *y, int n)",
                                   saxpy_body, NULL, NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  enum { N = 100003 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  fill_random(x, N, 1), fill_random(y, N, 2);
  cujit_buffer *dx, *dy;
  cr_assert_eq(cujit_buffer_alloc(engine, N * 4, CUJIT_F32, &dx), CUJIT_OK);
  cr_assert_eq(cujit_buffer_alloc(engine, N * 4, CUJIT_F32, &dy), CUJIT_OK);
  cujit_memcpy_htod(dx, 0, x, N * 4, NULL);
  cujit_memcpy_htod(dy, 0, y, N * 4, NULL);
  cujit_arg args[4] = {CUJIT_ARG_F(2.5), CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy), CUJIT_ARG_I(N)};
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {(N + 255) / 256, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cr_assert_eq(cujit_launch(k, &c, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  memset(out, 0xff, N * sizeof *out);
  cr_assert_eq(cujit_memcpy_dtoh(out, dy, 0, N * 4, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  for (size_t i = 0; i < N; i++) cr_assert_float_eq(out[i], 2.5f * x[i] + y[i], 1e-6, "at %zu", i);
  /* launch_n: occupancy-chosen block over the same data */
  cujit_memcpy_htod(dy, 0, y, N * 4, NULL);
  cr_assert_eq(cujit_launch_n(k, N, NULL, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  memset(out, 0xff, N * sizeof *out);
  cujit_memcpy_dtoh(out, dy, 0, N * 4, NULL);
  for (size_t i = 0; i < N; i++) cr_assert_float_eq(out[i], 2.5f * x[i] + y[i], 1e-6, "at %zu", i);
  cujit_kernel_attributes at = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cr_assert_eq(cujit_kernel_attributes_get(k, &at), CUJIT_OK);
  cr_assert_gt(at.max_threads_per_block, 0);
  if (!cj_test_on_cpu(engine)) /* a host thread has no register count */
    cr_assert_gt(at.registers, 0);
  free(x), free(y), free(out);
}

Test(kernel, gpu_generic_from_buffer_dtypes) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *g;
  cr_assert_eq(cujit_kernel_define(engine, "scale(T *y, T a, int n)",
                                   "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "if (i < n) y[i] = y[i] * a;",
                                   NULL, NULL, &g),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  enum { N = 1000 };
  double hd[N], od[N];
  float hf[N], of[N];
  unsigned s = 9;
  for (int i = 0; i < N; i++) hd[i] = cj_test_randf(&s), hf[i] = (float)hd[i];
  cujit_buffer *bd, *bf;
  cujit_buffer_alloc(engine, sizeof hd, CUJIT_F64, &bd);
  cujit_buffer_alloc(engine, sizeof hf, CUJIT_F32, &bf);
  cujit_memcpy_htod(bd, 0, hd, sizeof hd, NULL);
  cujit_memcpy_htod(bf, 0, hf, sizeof hf, NULL);
  cujit_arg a1[3] = {CUJIT_ARG_BUF(bd), CUJIT_ARG_F(3.0), CUJIT_ARG_I(N)};
  cujit_arg a2[3] = {CUJIT_ARG_BUF(bf), CUJIT_ARG_F(3.0), CUJIT_ARG_I(N)};
  cr_assert_eq(cujit_launch_n(g, N, NULL, a1, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_launch_n(g, N, NULL, a2, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_memcpy_dtoh(od, bd, 0, sizeof od, NULL);
  cujit_memcpy_dtoh(of, bf, 0, sizeof of, NULL);
  for (int i = 0; i < N; i++) {
    cr_assert_eq(od[i], hd[i] * 3.0);
    cr_assert_eq(of[i], hf[i] * 3.0f);
  }
}

Test(kernel, gpu_2d_launch_and_dynamic_shared) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  /* Each block reverses its row through dynamic shared memory larger than the 48 KiB default. */
  cr_assert_eq(cujit_kernel_define(engine, "rev(const int *in, int *out, int w, int h)",
                                   "extern __shared__ int tile[];\n"
                                   "int y = blockIdx.y;\n"
                                   "for (int x = threadIdx.x; x < w; x += blockDim.x)\n"
                                   "  tile[x] = in[y * w + x];\n"
                                   "__syncthreads();\n"
                                   "for (int x = threadIdx.x; x < w; x += blockDim.x)\n"
                                   "  out[y * w + x] = tile[w - 1 - x];\n",
                                   NULL, NULL, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  enum { W = 20000, H = 7 }; /* 80 000 bytes of shared memory per block */
  int *in = malloc(W * H * sizeof *in), *out = malloc(W * H * sizeof *out);
  unsigned s = 5;
  for (int i = 0; i < W * H; i++) in[i] = (int)(cj_test_randf(&s) * 1e6);
  cujit_buffer *bi, *bo;
  cujit_buffer_alloc(engine, W * H * 4, CUJIT_I32, &bi);
  cujit_buffer_alloc(engine, W * H * 4, CUJIT_I32, &bo);
  cujit_memcpy_htod(bi, 0, in, W * H * 4, NULL);
  cujit_memset(bo, 0, 0xAB, W * H * 4, NULL);
  cujit_arg args[4] = {CUJIT_ARG_BUF(bi), CUJIT_ARG_BUF(bo), CUJIT_ARG_I(W), CUJIT_ARG_I(H)};
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {1, H, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = W * 4,
                           .stream = NULL};
  cr_assert_eq(cujit_launch(k, &c, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_memcpy_dtoh(out, bo, 0, W * H * 4, NULL);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) cr_assert_eq(out[y * W + x], in[y * W + W - 1 - x]);
  free(in), free(out);
}

Test(kernel, gpu_launch_limits) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = NULL;
  cr_assert_eq(cujit_kernel_define(engine, "nop(int n)", "(void)n;", NULL, NULL, &k), CUJIT_OK,
               "%s", cujit_errmsg(engine));
  cujit_arg a = CUJIT_ARG_I(1);
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {1, 1, 1},
                           .block = {2048, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cr_assert_eq(cujit_launch(k, &c, &a, 1), CUJIT_ERROR_LAUNCH_CONFIG);
  c.block[0] = 32, c.grid[1] = 1u << 20;
  cr_assert_eq(cujit_launch(k, &c, &a, 1), CUJIT_ERROR_LAUNCH_CONFIG);
  cr_assert(strstr(cujit_errmsg(engine), "grid.y") != NULL, "%s", cujit_errmsg(engine));
  c.grid[1] = 1, c.shared_bytes = 1u << 30;
  cr_assert_eq(cujit_launch(k, &c, &a, 1), CUJIT_ERROR_LAUNCH_CONFIG);
  c.shared_bytes = 0, c.grid[0] = 0;
  cr_assert_eq(cujit_launch(k, &c, &a, 1), CUJIT_ERROR_LAUNCH_CONFIG);
  c.grid[0] = 1;
  cr_assert_eq(cujit_launch(k, &c, &a, 1), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_device *dev;
  cujit_current_device(engine, &dev);
  cr_assert_eq(cujit_device_synchronize(dev), CUJIT_OK);
}

Test(kernel, gpu_fault_then_reset) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *bad, *good;
  cr_assert_eq(cujit_kernel_define(engine, "wild(int *p)",
                                   "p[(long long)threadIdx.x * 1000000007LL] = 1;", NULL, NULL,
                                   &bad),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_define(engine, "fill(int *p, int v, int n)",
                                   "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "if (i < n) p[i] = v;",
                                   NULL, NULL, &good),
               CUJIT_OK);
  cujit_device *dev;
  cr_assert_eq(cujit_current_device(engine, &dev), CUJIT_OK);
  cujit_buffer *old;
  cr_assert_eq(cujit_buffer_alloc(engine, 64, CUJIT_I32, &old), CUJIT_OK);
  cujit_arg a = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 16};
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {1, 1, 1},
                           .block = {32, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cujit_status st = cujit_launch(bad, &c, &a, 1);
  if (st == CUJIT_OK) st = cujit_device_synchronize(dev);
  cr_assert_eq(st, CUJIT_ERROR_DEVICE_FAULT, "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "wild") != NULL, "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "reset") != NULL, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_device_status(dev), CUJIT_ERROR_DEVICE_FAULT);
  cujit_arg ga[3] = {CUJIT_ARG_BUF(old), CUJIT_ARG_I(7), CUJIT_ARG_I(16)};
  cr_assert_eq(cujit_launch(good, &c, ga, 3), CUJIT_ERROR_DEVICE_FAULT);
  /* Recent drivers keep an illegal address for the rest of the process (CUDA documents that the
  ** process must restart); cujit's reset must then say so plainly and keep refusing work. */
  st = cujit_device_reset(dev);
  if (st != CUJIT_OK) {
    cr_assert_eq(st, CUJIT_ERROR_DEVICE_FAULT, "%s", cujit_errmsg(engine));
    cr_assert(strstr(cujit_errmsg(engine), "restart the program") != NULL, "%s",
              cujit_errmsg(engine));
    cr_assert(strstr(cujit_errmsg(engine), "wild") != NULL, "%s", cujit_errmsg(engine));
    cr_assert_eq(cujit_device_status(dev), CUJIT_ERROR_DEVICE_FAULT);
    cr_assert_eq(cujit_launch(good, &c, ga, 3), CUJIT_ERROR_DEVICE_FAULT);
    cr_assert_eq(cujit_device_reset(dev), CUJIT_ERROR_DEVICE_FAULT); /* and stays so */
    cujit_buffer_free(old);                                          /* freeing is still fine */
    return;
  }
  cr_assert_eq(cujit_device_status(dev), CUJIT_OK);
  cr_assert_eq(cujit_launch(good, &c, ga, 3), CUJIT_ERROR_ARGUMENT); /* old buffer is lost */
  cr_assert(strstr(cujit_errmsg(engine), "lost") != NULL, "%s", cujit_errmsg(engine));
  cujit_buffer_free(old);
  cujit_buffer *fresh;
  cr_assert_eq(cujit_buffer_alloc(engine, 64, CUJIT_I32, &fresh), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  ga[0] = CUJIT_ARG_BUF(fresh);
  cr_assert_eq(cujit_launch(good, &c, ga, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  int out[16];
  memset(out, 0, sizeof out);
  cr_assert_eq(cujit_memcpy_dtoh(out, fresh, 0, sizeof out, NULL), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  for (int i = 0; i < 16; i++) cr_assert_eq(out[i], 7);
}

Test(kernel, gpu_stream_launch_and_events) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = define_saxpy();
  (void)k;
  cujit_kernel *fill;
  cr_assert_eq(cujit_kernel_define(engine, "fill(float *p, float v, long long n)",
                                   "long long i = cujit::grid1();\n"
                                   "for (; i < n; i += cujit::gridsize1()) p[i] = v;",
                                   "#include <cujit/grid.h>", NULL, &fill),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_stream *s;
  cujit_event *e0, *e1;
  cr_assert_eq(cujit_stream_create(engine, &s), CUJIT_OK);
  cujit_event_create(engine, &e0), cujit_event_create(engine, &e1);
  enum { N = 1 << 22 };
  cujit_buffer *b;
  cujit_buffer_alloc(engine, N * 4, CUJIT_F32, &b);
  cujit_arg args[3] = {CUJIT_ARG_BUF(b), CUJIT_ARG_F(1.25), CUJIT_ARG_I(N)};
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {264, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = s};
  cujit_event_record(e0, s);
  cr_assert_eq(cujit_launch(fill, &c, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_event_record(e1, s);
  cr_assert_eq(cujit_stream_synchronize(s), CUJIT_OK);
  float ms = -1;
  cr_assert_eq(cujit_event_elapsed(e0, e1, &ms), CUJIT_OK);
  cr_assert(ms >= 0);
  float *h = malloc(N * 4);
  cujit_memcpy_dtoh(h, b, 0, N * 4, NULL);
  for (size_t i = 0; i < N; i += 997) cr_assert_eq(h[i], 1.25f);
  cr_assert_eq(h[N - 1], 1.25f);
  free(h);
}
