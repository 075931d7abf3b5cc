/*
** library_cujit.h -- the cases that use cujit's device library (the "Library" section of cujit.h):
** the sum by cujit_reduce (case 6) and vector add / SAXPY by cujit_elementwise (case 5). Included
*by
** cujit.c only when CMake found that this file compiles against the build's cujit.h, so a library
** still being written makes these figures "missing" instead of breaking the build.
*/

/* Host wall time of a sum that ends with the total on the host, as every system is timed. */
static void case_sum(const bench_opts *o) {
  size_t n = (size_t)1 << o->sum_log2;
  cujit_buffer *x = NULL;
  cujit_scalar total = {CUJIT_F64, {0}};
  int reps = o->reps * 3, ok = 1;
  double *v = calloc((size_t)reps, sizeof *v);
  float *ones = v ? malloc(n * sizeof *ones) : NULL;
  for (size_t i = 0; ones && i < n; i++) ones[i] = 1.0f;
  ok = ones && check(cujit_buffer_alloc(engine, n * 4, CUJIT_F32, &x), "alloc") &&
       check(cujit_memcpy_htod(x, 0, ones, n * 4, NULL), "copy to device") &&
       check(cujit_reduce(x, CUJIT_REDUCE_SUM, n, &total, NULL), "cujit_reduce"); /* warm-up */
  for (int r = 0; ok && r < reps; r++) {
    double t0 = bench_now_us();
    ok = check(cujit_reduce(x, CUJIT_REDUCE_SUM, n, &total, NULL), "cujit_reduce");
    v[r] = (bench_now_us() - t0) / 1e3;
  }
  double got = cujit_scalar_to_double(&total);
  if (ok && got != (double)n) {
    snprintf(why, sizeof why, "wrong sum %.17g of %zu ones", got, n);
    ok = 0;
  }
  if (ok)
    bench_row("sum", SYS, "sum", (double)n, 4.0 * (double)n / (bench_median(v, reps) * 1e-3) / 1e9,
              "GB/s");
  else
    bench_missing("sum", SYS, "sum", (double)n, why);
  cujit_buffer_free(x);
  free(ones), free(v);
}

/* The library's elementwise kernels for the same two operations, launched as the library sizes
** them (a grid-stride loop); the variants are named vadd_ew and saxpy_ew. */
static int elementwise_define(cujit_kernel **k) {
  return check(cujit_elementwise_define(engine, "float x, float y -> float z", "z = x + y",
                                        "vadd_ew", NULL, &k[0]),
               "vadd_ew") &&
         check(cujit_elementwise_define(engine, "scalar float a, float x, float y -> float z",
                                        "z = a * x + y", "saxpy_ew", NULL, &k[1]),
               "saxpy_ew");
}

static int elementwise_once(cujit_kernel **k, int what, cujit_buffer *a, cujit_buffer *b,
                            cujit_buffer *c, size_t n) {
  cujit_arg add[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(b), CUJIT_ARG_BUF(c)};
  cujit_arg ax[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(c), CUJIT_ARG_BUF(c)};
  return what == 0 ? check(cujit_elementwise_launch(k[0], n, NULL, add, 3), "vadd_ew")
                   : check(cujit_elementwise_launch(k[1], n, NULL, ax, 4), "saxpy_ew");
}
#define BENCH_HAVE_ELEMENTWISE 1
