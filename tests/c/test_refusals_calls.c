/*
** test_refusals_calls.c -- refusals of the C API that no test reached, second pass (issue 28):
** found by listing every cj_fail message of the engine and looking for it in tests/. Each is
** checked with its status and whole message, next to the bound it guards (the last value
** accepted, and what the accepted call computes), and the memory it would have written is left as
** it was: random fills (a buffer of another dtype, mean and std, counters past 2^64),
** reductions and dot products (untyped bytes, a count past the buffer, an unknown operation, the
** minimum of nothing, buffers of two dtypes), specialisation (a concrete kernel, a count or dtype
** that does not fit), a generic launch that cannot bind its type, parameters past the last, a
** kernel name the program lacks, launch shapes of zero, elementwise launches of other kernels
** and with another argument count, elementwise names and expressions, allocations of zero or
** part elements, memset past the end (and past SIZE_MAX), copies between overlapping views,
** the device's arch into a short buffer, captures on the default stream or in an unknown mode,
** a graph written to an empty path, nonnull names that are no pointer parameter (of a defined
** kernel and of a program), and globals a program's PTX does not declare. On a GPU when there is
*one, else on the CPU device.
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(refusals_calls, .init = cj_fixture_open, .fini = cj_fixture_close, .timeout = 300);

#define N 16

/* Waits for what was queued on the current device (a refused call must have queued nothing). */
static void sync_current(void) {
  cujit_device *dev;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_OK(cujit_device_synchronize(dev));
}

static cujit_buffer *floats(float start) {
  float h[N];
  for (int i = 0; i < N; i++) h[i] = start + (float)i;
  return cj_test_upload(h, sizeof h, CUJIT_F32);
}

static void expect_floats(cujit_buffer *b, float start, const char *what) {
  float h[N];
  cj_test_download(h, b, sizeof h);
  for (int i = 0; i < N; i++)
    cr_expect_eq(h[i], start + (float)i, "%s: [%d] = %g, want %g", what, i, h[i], start + i);
}

Test(refusals_calls, random_fills) {
  CJ_NEED_DEVICE(engine);
  int hi[N] = {0};
  cujit_buffer *ints = cj_test_upload(hi, sizeof hi, CUJIT_I32), *x = floats(-5);
  EXPECT_REFUSED(cujit_random_uniform(ints, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_uniform: the buffer holds i32; random fills need an f32 or f64 "
                 "buffer");
  EXPECT_REFUSED(cujit_random_normal(ints, 1, 0, 0, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_normal: the buffer holds i32; random fills need an f32 or f64 "
                 "buffer");
  EXPECT_REFUSED(cujit_random_normal(x, 1, 0, 0, -1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_normal: mean 0 and std -1: both must be finite and std must be "
                 ">= 0");
  EXPECT_REFUSED(cujit_random_normal(x, 1, 0, NAN, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_normal: mean nan and std 1: both must be finite and std must be "
                 ">= 0");
  EXPECT_REFUSED(cujit_random_normal(x, 1, 0, 2, INFINITY, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_normal: mean 2 and std inf: both must be finite and std must be "
                 ">= 0");
  /* counters offset .. offset + 15: the last one is 2^64 - 1 at most */
  EXPECT_REFUSED(cujit_random_uniform(x, 1, UINT64_MAX - 14, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_random_uniform: offset 18446744073709551601 + 16 elements runs past the "
                 "generator's 2^64 counters");
  sync_current();
  expect_floats(x, -5, "the f32 buffer after the refused fills");
  cj_test_download(hi, ints, sizeof hi);
  for (int i = 0; i < N; i++) cr_expect_eq(hi[i], 0, "the i32 buffer was written at %d", i);
  /* the bounds themselves: std 0 gives the mean; the last counters fill every element */
  EXPECT_OK(cujit_random_normal(x, 1, 0, 2.5, 0, NULL));
  float h[N];
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++) cr_expect_eq(h[i], 2.5f, "std 0: [%d] = %g", i, h[i]);
  EXPECT_OK(cujit_random_uniform(x, 1, UINT64_MAX - 15, NULL));
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++)
    cr_expect(h[i] > 0 && h[i] <= 1, "the last counters: [%d] = %g is not in (0, 1]", i, h[i]);
}

Test(refusals_calls, reductions_and_dot_products) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *x = floats(1), *raw, *ints;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(float), CUJIT_DTYPE_NONE, &raw));
  int hi[N];
  for (int i = 0; i < N; i++) hi[i] = i;
  ints = cj_test_upload(hi, sizeof hi, CUJIT_I32);
  cujit_scalar r = CUJIT_SCALAR_INIT;
  EXPECT_REFUSED(cujit_reduce(raw, CUJIT_REDUCE_SUM, 4, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_reduce: the buffer holds untyped bytes; allocate it with an element type");
  EXPECT_REFUSED(cujit_reduce(x, CUJIT_REDUCE_SUM, N + 1, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_reduce: count 17 is more than the 16 f32 elements the buffer holds");
  EXPECT_REFUSED(cujit_reduce(x, (cujit_reduce_op)7, N, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_reduce: unknown operation 7; use CUJIT_REDUCE_SUM, _MIN or _MAX");
  EXPECT_REFUSED(cujit_reduce(x, CUJIT_REDUCE_MIN, 0, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_reduce: the minimum of no elements is undefined; check the length first");
  EXPECT_REFUSED(cujit_reduce(x, CUJIT_REDUCE_MAX, 0, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_reduce: the maximum of no elements is undefined; check the length first");
  EXPECT_REFUSED(cujit_dot(x, ints, N, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_dot: the buffers hold f32 and i32; they must match");
  cujit_buffer *head;
  EXPECT_OK(cujit_buffer_view(x, 0, 8 * sizeof(float), CUJIT_F32, &head));
  EXPECT_REFUSED(cujit_dot(x, head, 9, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_dot: count 9 is more than the 8 f32 elements the buffer holds");
  /* the bounds: the whole buffer, the sum of nothing, a dot over the view's whole length */
  EXPECT_OK(cujit_reduce(x, CUJIT_REDUCE_SUM, N, &r, NULL));
  cr_expect(r.dtype == CUJIT_F64 && r.v.f == N * (N + 1) / 2, "sum of 1..16: %g", r.v.f);
  EXPECT_OK(cujit_reduce(x, CUJIT_REDUCE_MAX, N, &r, NULL));
  cr_expect_eq(r.v.f, N, "max of 1..16");
  EXPECT_OK(cujit_reduce(x, CUJIT_REDUCE_SUM, 0, &r, NULL));
  cr_expect_eq(r.v.f, 0, "the sum of nothing");
  EXPECT_OK(cujit_dot(x, head, 8, &r, NULL));
  cr_expect_eq(r.v.f, 204, "1^2 + ... + 8^2");
  expect_floats(x, 1, "the buffer after the reductions");
  cujit_buffer_free(head);
}

static const char *const twice_body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                      "if (i < n) x[i] *= 2;";

Test(refusals_calls, specialisation_and_parameters) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_kernel *twice, *axpy, *s = (cujit_kernel *)&v;
  EXPECT_OK(cujit_kernel_define(engine, "twice(float *x, int n)", twice_body, NULL, &sm90, &twice));
  EXPECT_OK(cujit_kernel_define(engine, "axpy(T a, const T *x, T *y, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] += a * x[i];",
                                NULL, &sm90, &axpy));
  cujit_dtype two[] = {CUJIT_F32, CUJIT_F64};
  EXPECT_REFUSED(cujit_kernel_specialize(twice, two, 1, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'twice' (twice(float *x, int n)) is not generic: it has no type "
                 "variables left to bind");
  cr_expect_null(s, "out is set to NULL");
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, two, 2, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'axpy' has 1 type variable(s) but 2 type(s) were given");
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, two, 0, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'axpy' has 1 type variable(s) but 0 type(s) were given");
  cujit_dtype none = CUJIT_DTYPE_NONE, past = CUJIT_DTYPE_COUNT_, last = CUJIT_BF16;
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, &none, 1, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'axpy': type 0 for T is not a concrete dtype");
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, &past, 1, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'axpy': type 0 for T is not a concrete dtype");
  EXPECT_OK(cujit_kernel_specialize(axpy, &last, 1, &s)); /* the last dtype is one */
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  EXPECT_OK(cujit_kernel_param(s, 2, &info));
  cr_expect(info.dtype == CUJIT_BF16 && !strcmp(info.type, "__nv_bfloat16 *"), "y is %s",
            info.type);
  EXPECT_OK(cujit_kernel_param(twice, 1, &info)); /* the last parameter */
  cr_expect_str_eq(info.name, "n");
  EXPECT_REFUSED(cujit_kernel_param(twice, 2, &info), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'twice' has 2 parameter(s); there is no parameter 2");
  cujit_program *p;
  cujit_kernel *k = (cujit_kernel *)&v;
  EXPECT_OK(cujit_program_compile(engine,
                                  "extern \"C\" __global__ void a(int *x) {}\n"
                                  "extern \"C\" __global__ void b(int *x) {}\n",
                                  "two.cu", &sm90, &p));
  EXPECT_REFUSED(cujit_program_kernel(p, "c", &k), CUJIT_ERROR_NOT_FOUND,
                 "two.cu defines no kernel 'c'; its kernels are: 'a', 'b'");
  EXPECT_REFUSED(cujit_program_kernel(p, "A", &k), CUJIT_ERROR_NOT_FOUND,
                 "two.cu defines no kernel 'A'; its kernels are: 'a', 'b'");
  cujit_program_free(p);
  cujit_kernel_free(twice), cujit_kernel_free(axpy);
}

Test(refusals_calls, launches_that_cannot_run) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *twice, *axpy;
  EXPECT_OK(cujit_kernel_define(engine, "twice(float *x, int n)", twice_body, NULL, NULL, &twice));
  EXPECT_OK(cujit_kernel_define(engine, "axpy(T a, const T *x, T *y, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] += a * x[i];",
                                NULL, NULL, &axpy));
  cujit_buffer *x = floats(1), *doubles, *raw;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(double), CUJIT_F64, &doubles));
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(float), CUJIT_DTYPE_NONE, &raw));
  cujit_arg a1[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(N)};
  cujit_launch_config c = {.size = sizeof c, .grid = {0, 1, 1}, .block = {N, 1, 1}};
  EXPECT_REFUSED(cujit_launch(twice, &c, a1, 2), CUJIT_ERROR_LAUNCH_CONFIG,
                 "kernel 'twice': grid.x is 0; every launch needs at least one block of one "
                 "thread");
  c.grid[0] = 1, c.block[0] = 0;
  EXPECT_REFUSED(cujit_launch(twice, &c, a1, 2), CUJIT_ERROR_LAUNCH_CONFIG,
                 "kernel 'twice': block.x is 0; every launch needs at least one block of one "
                 "thread");
  /* generic: two buffers that bind T to two dtypes, or none that binds it */
  cujit_arg mixed[] = {CUJIT_ARG_F(2), CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(doubles), CUJIT_ARG_I(N)};
  EXPECT_REFUSED(cujit_launch_n(axpy, N, NULL, mixed, 4), CUJIT_ERROR_ARGUMENT,
                 "kernel 'axpy', argument 3 'y': T is already f32 from an earlier argument, but "
                 "this buffer holds f64");
  cujit_arg untyped[] = {CUJIT_ARG_F(2), CUJIT_ARG_BUF(raw), CUJIT_ARG_BUF(raw), CUJIT_ARG_I(N)};
  EXPECT_REFUSED(cujit_launch_n(axpy, N, NULL, untyped, 4), CUJIT_ERROR_ARGUMENT,
                 "kernel 'axpy': cannot tell what T is: no typed buffer is passed for a T pointer "
                 "parameter; pass one, or specialise explicitly (cujit_kernel_specialize)");
  sync_current();
  expect_floats(x, 1, "x after the refused launches");
  /* y and z of 0 count as 1; the launch then runs every element once */
  c.block[0] = N, c.grid[1] = c.grid[2] = c.block[1] = c.block[2] = 0;
  EXPECT_OK(cujit_launch(twice, &c, a1, 2));
  float h[N];
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++) cr_expect_eq(h[i], 2 * (1 + (float)i), "[%d] = %g", i, h[i]);
  cujit_kernel_free(twice), cujit_kernel_free(axpy);
}

Test(refusals_calls, elementwise_misuse) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *twice, *copy, *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "twice(float *x, int n)", twice_body, NULL, NULL, &twice));
  EXPECT_OK(cujit_elementwise_define(engine, "float x -> float y", "y = x", "copy", NULL, &copy));
  cujit_buffer *x = floats(3), *y = floats(0);
  cujit_arg one[] = {CUJIT_ARG_BUF(x)}, two[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y)};
  EXPECT_REFUSED(cujit_elementwise_launch(twice, N, NULL, one, 1), CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'twice' is not an elementwise kernel (its last parameter is not `long "
                 "long n`); make it with cujit_elementwise_define");
  EXPECT_REFUSED(cujit_elementwise_launch(copy, N, NULL, one, 1), CUJIT_ERROR_ARGUMENT,
                 "elementwise kernel 'copy' takes 2 argument(s) besides n, got 1: copy(const float "
                 "*__restrict__ x, float *__restrict__ y, long long n)");
  cujit_arg three[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_BUF(y)};
  EXPECT_REFUSED(cujit_elementwise_launch(copy, N, NULL, three, 3), CUJIT_ERROR_ARGUMENT,
                 "elementwise kernel 'copy' takes 2 argument(s) besides n, got 3: copy(const float "
                 "*__restrict__ x, float *__restrict__ y, long long n)");
  expect_floats(y, 0, "y after the refused launches");
  EXPECT_OK(cujit_elementwise_launch(copy, N, NULL, two, 2));
  expect_floats(y, 3, "y after the copy");
  EXPECT_REFUSED(
      cujit_elementwise_define(engine, "float x -> float y", "y = x", "cj_copy", NULL, &k),
      CUJIT_ERROR_SIGNATURE,
      "elementwise kernel name \"cj_copy\": use a C identifier not starting with cj_");
  EXPECT_REFUSED(cujit_elementwise_define(engine, "float x -> float y", "y = x", "2copy", NULL, &k),
                 CUJIT_ERROR_SIGNATURE,
                 "elementwise kernel name \"2copy\": use a C identifier not starting with cj_");
  EXPECT_REFUSED(
      cujit_elementwise_define(engine, "float x -> float y", " \n\t ", "blank", NULL, &k),
      CUJIT_ERROR_INVALID_ARGUMENT,
      "elementwise kernel 'blank': the expression is empty; write what each element "
      "computes, e.g. \"z = a * x + y\"");
  cr_expect_null(k);
  cujit_kernel_free(twice), cujit_kernel_free(copy);
}

Test(refusals_calls, memory_bounds) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *b = (cujit_buffer *)engine;
  EXPECT_REFUSED(cujit_buffer_alloc(engine, 0, CUJIT_F32, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_alloc: a buffer of 0 bytes; ask for at least one byte");
  EXPECT_REFUSED(cujit_buffer_alloc(engine, 6, CUJIT_F32, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_alloc: 6 bytes is not a whole number of f32 elements (4 bytes "
                 "each); ask for a multiple of 4");
  EXPECT_REFUSED(cujit_buffer_alloc(engine, 12, CUJIT_F64, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_alloc: 12 bytes is not a whole number of f64 elements (8 bytes "
                 "each); ask for a multiple of 8");
  EXPECT_REFUSED(cujit_buffer_alloc(engine, 8, CUJIT_DTYPE_COUNT_, &b),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_alloc: 13 is not a cujit_dtype; use CUJIT_F32, CUJIT_I32, ... or "
                 "CUJIT_DTYPE_NONE for raw bytes");
  cujit_host_buffer *hb;
  EXPECT_REFUSED(cujit_host_alloc(engine, 0, &hb), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_host_alloc: a buffer of 0 bytes; ask for at least one byte");
  /* memset: one byte past the end, an offset past it, a length that wraps; the end itself */
  cujit_buffer *x = floats(1);
  const size_t size = N * sizeof(float);
  EXPECT_REFUSED(cujit_memset(x, 60, 0, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_memset: setting 8 bytes at offset 60 runs past the end of a buffer of 64 "
                 "bytes");
  EXPECT_REFUSED(cujit_memset(x, 65, 0, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_memset: setting 0 bytes at offset 65 runs past the end of a buffer of 64 "
                 "bytes");
  EXPECT_REFUSED(
      cujit_memset(x, 8, 0, SIZE_MAX - 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
      "cujit_memset: setting 18446744073709551611 bytes at offset 8 runs past the end of "
      "a buffer of 64 bytes");
  expect_floats(x, 1, "after the refused memsets");
  EXPECT_OK(cujit_memset(x, size - 4, 0, 4, NULL)); /* the last element */
  EXPECT_OK(cujit_memset(x, size, 0, 0, NULL));     /* nothing, at the end */
  float h[N];
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N; i++)
    cr_expect_eq(h[i], i == N - 1 ? 0.0f : 1 + (float)i, "[%d] = %g after the last memset", i,
                 h[i]);
  /* copies between views of one buffer: overlapping refused, adjacent fine */
  cujit_buffer *a, *c;
  EXPECT_OK(cujit_buffer_view(x, 0, 32, CUJIT_F32, &a));  /* bytes [0, 32) */
  EXPECT_OK(cujit_buffer_view(x, 16, 32, CUJIT_F32, &c)); /* bytes [16, 48) */
  EXPECT_REFUSED(cujit_memcpy_dtod(c, 0, a, 8, 16, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_memcpy_dtod: the source and the destination are views of one array and "
                 "overlap: bytes [8, 24) and [16, 32) of that array; copy through a second buffer");
  EXPECT_REFUSED(cujit_memcpy_dtod(x, 8, x, 0, 16, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_memcpy_dtod: the source [0, 16) and destination [8, 24) overlap in the "
                 "same buffer; copy through a second buffer");
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < N - 1; i++) cr_expect_eq(h[i], 1 + (float)i, "[%d] after the refusals", i);
  EXPECT_OK(cujit_memcpy_dtod(c, 16, a, 0, 16, NULL)); /* [0, 16) to [32, 48): apart */
  EXPECT_OK(cujit_memcpy_dtod(c, 0, a, 0, 16, NULL));  /* [0, 16) to [16, 32): adjacent */
  cj_test_download(h, x, sizeof h);
  static const float want[N] = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 13, 14, 15, 0};
  for (int i = 0; i < N; i++) cr_expect_eq(h[i], want[i], "[%d] = %g after the copies", i, h[i]);
  cujit_buffer_free(a), cujit_buffer_free(c);
}

Test(refusals_calls, device_arch_captures_and_graphs) {
  CJ_NEED_DEVICE(engine);
  cujit_device *dev;
  EXPECT_OK(cujit_current_device(engine, &dev));
  char arch[16], small[16], want[256];
  EXPECT_OK(cujit_device_arch(dev, arch, sizeof arch));
  size_t need = strlen(arch) + 1;
  EXPECT_OK(cujit_device_arch(dev, small, need)); /* exactly the room it needs */
  cr_expect_str_eq(small, arch);
  snprintf(want, sizeof want,
           "cujit_device_arch: a buffer of %zu bytes is too small for \"%s\" (needs %zu); pass 16 "
           "bytes",
           need - 1, arch, need);
  EXPECT_REFUSED(cujit_device_arch(dev, small, need - 1), CUJIT_ERROR_INVALID_ARGUMENT, want);
  cr_expect_eq(small[0], '\0', "a refused arch leaves an empty string");
  EXPECT_REFUSED(cujit_device_arch(dev, small, 0), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_device_arch: no buffer to write the arch into (buf NULL or len 0)");
  EXPECT_REFUSED(cujit_device_arch(dev, NULL, 16), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_device_arch: no buffer to write the arch into (buf NULL or len 0)");

  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  /* No stream, no engine to keep the message in: the status alone says it. */
  cr_expect_eq(cujit_capture_begin(NULL, CUJIT_CAPTURE_RELAXED), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_REFUSED(cujit_capture_begin(s, (cujit_capture_mode)(CUJIT_CAPTURE_GLOBAL + 1)),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_capture_begin: mode 3 is not a cujit_capture_mode (CUJIT_CAPTURE_RELAXED, "
                 "CUJIT_CAPTURE_THREAD_LOCAL or CUJIT_CAPTURE_GLOBAL)");
  cr_expect_eq(cujit_stream_capturing(s), 0, "a refused capture began");
  /* the last mode is one: a capture of a memset, written to a file */
  cujit_buffer *x = floats(1);
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_GLOBAL));
  EXPECT_OK(cujit_memset(x, 0, 0, 4, s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(s, &g));
  EXPECT_REFUSED(cujit_graph_dot(g, ""), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_graph_dot: the path is empty; name the .dot file to write");
  EXPECT_REFUSED(cujit_graph_dot(g, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_graph_dot: the path is empty; name the .dot file to write");
  expect_floats(x, 1, "a captured memset ran");
  EXPECT_OK(cujit_graph_launch(g, s));
  EXPECT_OK(cujit_stream_synchronize(s));
  float h[N];
  cj_test_download(h, x, sizeof h);
  cr_expect(h[0] == 0 && h[1] == 2, "the replayed memset: %g %g", h[0], h[1]);
  cujit_graph_free(g);
  cujit_stream_free(s);
}

/* The nonnull option names pointer parameters only; a program's global by a name its PTX declares.
** Compiled for sm_90 (NVRTC, no GPU): both are refused before any device is asked. */
Test(refusals_calls, nonnull_names_and_global_names) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  const char *names[] = {"n"};
  cujit_compile_options o = sm90;
  o.nonnull = names, o.nonnull_count = 1;
  cujit_kernel *k = NULL;
  EXPECT_REFUSED(cujit_kernel_define(engine, "twice(float *x, int n)", twice_body, NULL, &o, &k),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel 'twice': the nonnull option names 'n', which is not one of its pointer "
                 "parameters; name a pointer parameter, or \"*\" for all of them");
  cr_expect_null(k);
  names[0] = "x"; /* the pointer: taken, and it refuses a null pointer */
  EXPECT_OK(cujit_kernel_define(engine, "twice(float *x, int n)", twice_body, NULL, &o, &k));
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  EXPECT_OK(cujit_kernel_param(k, 0, &info));
  cr_expect_eq(info.nullable, 0, "x named nonnull takes a null pointer");
  cujit_kernel_free(k);
  static const char *const source = "namespace { __device__ int v[4]; }\n"
                                    "namespace b { namespace { __device__ float v[2]; } }\n"
                                    "extern \"C\" __global__ void get(int *y, float *z) {\n"
                                    "  y[0] = v[1]; z[0] = b::v[1];\n"
                                    "}\n";
  names[0] = "w";
  cujit_program *p = NULL;
  EXPECT_REFUSED(cujit_program_compile(engine, source, "g.cu", &o, &p),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "'g.cu': the nonnull option names 'w', which is no pointer parameter of its "
                 "kernels; name one of get.y, get.z, or \"*\" for all");
  cr_expect_null(p);
  EXPECT_OK(cujit_program_compile(engine, source, "g.cu", &sm90, &p));
  cujit_buffer *g = NULL;
  cujit_dtype dtype;
  int ndim;
  size_t shape[3];
  EXPECT_REFUSED(cujit_program_global(p, "u", &g, &dtype, &ndim, shape), CUJIT_ERROR_NOT_FOUND,
                 "the program has no __device__ or __constant__ variable 'u'; name one as the "
                 "source does ('taps', 'ns::taps')");
  EXPECT_REFUSED(cujit_program_global(p, "", &g, &dtype, &ndim, shape), CUJIT_ERROR_NOT_FOUND,
                 "the program has no __device__ or __constant__ variable ''; name one as the "
                 "source does ('taps', 'ns::taps')");
  cr_expect_null(g);
  cujit_program_free(p);
}

/* A generic kernel keeps a copy of its options to compile each specialisation later: lists with a
** count but no array, or a NULL item, are refused when it is defined, naming the list, rather
** than read when it is specialised. Every list the copy keeps is tried. */
Test(refusals_calls, a_generic_kernel_s_options_with_null_lists) {
  static const struct {
    const char *field, *count;
  } lists[] = {{"defines", "define_count"},
               {"include_dirs", "include_dir_count"},
               {"extra_flags", "extra_flag_count"},
               {"link", "link_count"}};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    const cujit_compile_option_info *info = NULL;
    for (size_t i = 0; (info = cujit_compile_option(i)) && strcmp(info->field, lists[l].field); i++)
      ;
    cr_assert_not_null(info, "no option %s", lists[l].field);
    const char *null_item[] = {NULL};
    char want[256];
    for (int item = 0; item < 2; item++) {
      cujit_compile_options o = sm90;
      *(const char *const **)(void *)((char *)&o + info->offset) = item ? null_item : NULL;
      *(size_t *)(void *)((char *)&o + info->count_offset) = 1;
      if (item)
        snprintf(want, sizeof want, "compile options: %s[0] is NULL", lists[l].field);
      else
        snprintf(want, sizeof want, "compile options: %s is 1 but %s is NULL", lists[l].count,
                 lists[l].field);
      cujit_kernel *k = NULL;
      EXPECT_REFUSED(
          cujit_kernel_define(engine, "store(T *y)", "y[threadIdx.x] = T(1);", NULL, &o, &k),
          CUJIT_ERROR_INVALID_ARGUMENT, want);
      cr_expect_null(k);
    }
  }
}
