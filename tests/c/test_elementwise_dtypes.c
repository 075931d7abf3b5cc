/*
** test_elementwise_dtypes.c -- every dtype through the elementwise builder, on the device
** (issue 28): for each of the twelve dtypes, an elementwise kernel spelled with the dtype's name
** and one with a type variable specialised by the buffer's dtype take the values at the type's
** boundaries (signed and unsigned extremes, -1, half's and bfloat16's largest and smallest,
** infinities, -0) and
** give back each value unchanged and as a double. The parameters must carry the dtype asked for,
** a signed type read as unsigned (or a narrower one) gives another double, and the element past
** n keeps its bytes. On a GPU when there is one, else on the CPU device.
*/
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(elementwise_dtypes, .init = cj_fixture_open, .fini = cj_fixture_close, .timeout = 600);

#define MAXV 8

/* A dtype's boundary values, as the bytes of each element. */
typedef struct values {
  size_t n;
  unsigned char bytes[MAXV][8];
} values;

#define PUT(T, ...)                                                                                \
  do {                                                                                             \
    const T v_[] = {__VA_ARGS__};                                                                  \
    out.n = sizeof v_ / sizeof v_[0];                                                              \
    for (size_t i_ = 0; i_ < out.n; i_++) memcpy(out.bytes[i_], &v_[i_], sizeof(T));               \
  } while (0)

static values boundaries(cujit_dtype d) {
  values out = {0};
  switch (d) {
  case CUJIT_F16: /* 65504, -65504, the smallest subnormal 2^-24, 1, -0, infinity, 2^-14 */
    PUT(uint16_t, 0x7BFF, 0xFBFF, 0x0001, 0x3C00, 0x8000, 0x7C00, 0x0400);
    break;
  case CUJIT_BF16: /* its largest (2^128 - 2^120), -largest, the smallest subnormal 2^-133, 1,
                   ** -0, infinity, 2^-126, 1 + 2^-7 */
    PUT(uint16_t, 0x7F7F, 0xFF7F, 0x0001, 0x3F80, 0x8000, 0x7F80, 0x0080, 0x3F81);
    break;
  case CUJIT_F32:
    PUT(float, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, FLT_MIN, -0.0f, INFINITY, 1.0f / 3);
    break;
  case CUJIT_F64:
    PUT(double, DBL_MAX, -DBL_MAX, DBL_TRUE_MIN, DBL_MIN, -0.0, -INFINITY, 1.0 / 3);
    break;
  case CUJIT_I8:
    PUT(int8_t, INT8_MIN, -1, 0, 1, INT8_MAX);
    break;
  case CUJIT_I16:
    PUT(int16_t, INT16_MIN, -1, 0, 255, 256, INT16_MAX);
    break;
  case CUJIT_I32:
    PUT(int32_t, INT32_MIN, -1, 0, 65535, 65536, INT32_MAX);
    break;
  case CUJIT_I64:
    PUT(int64_t, INT64_MIN, -1, 0, (int64_t)1 << 53, ((int64_t)1 << 53) + 1, INT32_MAX, INT64_MAX);
    break;
  case CUJIT_U8:
    PUT(uint8_t, 0, 1, 127, 128, UINT8_MAX);
    break;
  case CUJIT_U16:
    PUT(uint16_t, 0, 255, 32767, 32768, UINT16_MAX);
    break;
  case CUJIT_U32:
    PUT(uint32_t, 0, 65536, INT32_MAX, (uint32_t)INT32_MAX + 1, UINT32_MAX);
    break;
  case CUJIT_U64:
    PUT(uint64_t, 0, UINT32_MAX, (uint64_t)1 << 63, ((uint64_t)1 << 63) + 4096, UINT64_MAX);
    break;
  default:
    cr_assert_fail("no values for dtype %d", (int)d);
  }
  return out;
}

/* The element at p of dtype d as a double, by the host's own conversion (round to nearest). */
static double as_double(cujit_dtype d, const unsigned char *p) {
#define AS(T)                                                                                      \
  do {                                                                                             \
    T v_;                                                                                          \
    memcpy(&v_, p, sizeof v_);                                                                     \
    return (double)v_;                                                                             \
  } while (0)
  switch (d) {
  case CUJIT_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
  }
  case CUJIT_BF16: { /* float's upper half */
    uint16_t b;
    uint32_t u;
    float f;
    memcpy(&b, p, 2);
    u = (uint32_t)b << 16;
    memcpy(&f, &u, 4);
    return f;
  }
  case CUJIT_F32:
    AS(float);
  case CUJIT_F64:
    AS(double);
  case CUJIT_I8:
    AS(int8_t);
  case CUJIT_I16:
    AS(int16_t);
  case CUJIT_I32:
    AS(int32_t);
  case CUJIT_I64:
    AS(int64_t);
  case CUJIT_U8:
    AS(uint8_t);
  case CUJIT_U16:
    AS(uint16_t);
  case CUJIT_U32:
    AS(uint32_t);
  case CUJIT_U64:
    AS(uint64_t);
  default:
    cr_assert_fail("no conversion for dtype %d", (int)d);
  }
#undef AS
  return 0;
}

/* Runs k (x -> double y, same-type z) over dtype d's boundary values; n of n + 1 elements. */
static void check_kernel(cujit_kernel *k, cujit_dtype d, const char *what) {
  const size_t es = cujit_dtype_size(d);
  values v = boundaries(d);
  const size_t n = v.n, total = n + 1;
  unsigned char x[(MAXV + 1) * 8], z[(MAXV + 1) * 8];
  double y[MAXV + 1];
  for (size_t i = 0; i < n; i++) memcpy(x + i * es, v.bytes[i], es);
  memset(x + n * es, 0x5a, es);
  cujit_buffer *xb = cj_test_upload(x, total * es, d);
  cujit_buffer *yb = cj_test_upload(NULL, total * sizeof(double), CUJIT_F64);
  cujit_buffer *zb = cj_test_upload(NULL, total * es, d);
  EXPECT_OK(cujit_memset(yb, 0, 0x77, total * sizeof(double), NULL));
  EXPECT_OK(cujit_memset(zb, 0, 0x77, total * es, NULL));
  cujit_arg args[] = {CUJIT_ARG_BUF(xb), CUJIT_ARG_BUF(yb), CUJIT_ARG_BUF(zb)};
  EXPECT_OK(cujit_elementwise_launch(k, n, NULL, args, 3));
  cj_test_download(y, yb, total * sizeof(double));
  cj_test_download(z, zb, total * es);
  for (size_t i = 0; i < n; i++) {
    double want = as_double(d, v.bytes[i]);
    cr_expect(memcmp(&y[i], &want, sizeof want) == 0,
              "%s: %s element %zu as a double is %.17g, want %.17g", what, cujit_dtype_name(d), i,
              y[i], want);
    cr_expect(memcmp(z + i * es, v.bytes[i], es) == 0,
              "%s: %s element %zu changed on the way through", what, cujit_dtype_name(d), i);
  }
  unsigned char untouched[8];
  memset(untouched, 0x77, sizeof untouched);
  cr_expect(memcmp(&y[n], untouched, sizeof(double)) == 0 && memcmp(z + n * es, untouched, es) == 0,
            "%s: %s element n, past the launch, was written", what, cujit_dtype_name(d));
  cujit_buffer_free(xb), cujit_buffer_free(yb), cujit_buffer_free(zb);
}

/* The 16-bit floats, which convert to double through cujit::to_float (a float). */
static int is_half(cujit_dtype d) {
  return d == CUJIT_F16 || d == CUJIT_BF16;
}

/* The body: half and bfloat16 have no conversion to double of their own. */
static const char *body(cujit_dtype d) {
  return is_half(d) ? "y = (double)cujit::to_float(x); z = x;" : "y = (double)x; z = x;";
}

static void check_params(cujit_kernel *k, cujit_dtype d, const char *what) {
  static const char *const names[] = {"x", "y", "z"};
  for (size_t p = 0; p < 3; p++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    EXPECT_OK(cujit_kernel_param(k, p, &info));
    cujit_dtype want = p == 1 ? CUJIT_F64 : d;
    cr_expect_str_eq(info.name, names[p], "%s", what);
    cr_expect_eq(info.dtype, want, "%s: parameter %s holds %s, want %s", what, names[p],
                 cujit_dtype_name(info.dtype), cujit_dtype_name(want));
    cr_expect_eq(info.kind, CUJIT_PARAM_POINTER, "%s: parameter %s", what, names[p]);
  }
}

Test(elementwise_dtypes, every_dtype_by_name) {
  CJ_NEED_DEVICE(engine);
  for (cujit_dtype d = CUJIT_F16; d < CUJIT_DTYPE_COUNT_; d++) {
    char params[96], name[32], what[128];
    snprintf(params, sizeof params, "%s x -> f64 y, %s z", cujit_dtype_name(d),
             cujit_dtype_name(d));
    snprintf(name, sizeof name, "through_%s", cujit_dtype_name(d));
    snprintf(what, sizeof what, "'%s'", params);
    cujit_kernel *k;
    EXPECT_OK(cujit_elementwise_define(engine, params, body(d), name, NULL, &k));
    check_params(k, d, what);
    check_kernel(k, d, what);
    cujit_kernel_free(k);
  }
}

/* The same through a type variable: the buffer's dtype picks the specialisation, whose C type must
** be the dtype's (a u16 written as short, or an i8 as unsigned char, gives another double). */
Test(elementwise_dtypes, every_dtype_through_a_type_variable) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *generic, *half;
  EXPECT_OK(cujit_elementwise_define(engine, "T x -> f64 y, T z", body(CUJIT_F32), "through_t",
                                     NULL, &generic));
  EXPECT_OK(cujit_elementwise_define(engine, "T x -> f64 y, T z", body(CUJIT_F16), "through_h",
                                     NULL, &half));
  for (cujit_dtype d = CUJIT_F16; d < CUJIT_DTYPE_COUNT_; d++) {
    char what[64];
    snprintf(what, sizeof what, "T x -> f64 y, T z with T = %s", cujit_dtype_name(d));
    cujit_kernel *s;
    EXPECT_OK(cujit_kernel_specialize(is_half(d) ? half : generic, &d, 1, &s));
    check_params(s, d, what);
    check_kernel(is_half(d) ? half : generic, d, what); /* specialised by the buffers */
  }
  cujit_kernel_free(generic), cujit_kernel_free(half);
}
