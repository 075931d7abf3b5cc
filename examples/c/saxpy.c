/*
** saxpy.c -- the C quick start: define a kernel from a string, move data, launch, check.
**
** With no GPU it still compiles the kernel (for sm_90) and reports that the launch was skipped,
** exiting 77 so test runners count it as skipped (1 under CUJIT_REQUIRE_GPU=1);
** CUJIT_EXAMPLE_COMPILE_ONLY=1 makes that part a test of its own.
*/
#include <cujit.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(engine, call)                                                                        \
  do {                                                                                             \
    if ((call) != CUJIT_OK) {                                                                      \
      fprintf(stderr, "saxpy: %s\n", cujit_errmsg(engine));                                        \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static const char *signature = "saxpy(float a, const float *x, float *y, int n)";
static const char *body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "if (i < n) y[i] = a * x[i] + y[i];\n";

static int compile_only(cujit_engine *e) {
  cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
  options.arch = "sm_90";
  cujit_kernel *k;
  CHECK(e, cujit_kernel_define(e, signature, body, NULL, &options, &k));
  const cujit_program *p = cujit_kernel_program(k);
  printf("compiled %s for sm_90 (%s, %.2f ms)\n", cujit_kernel_signature(k),
         cujit_program_from_cache(p) ? "cache hit" : "NVRTC", cujit_program_milliseconds(p));
  return 0;
}

int main(void) {
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  const char *only = getenv("CUJIT_EXAMPLE_COMPILE_ONLY");
  cujit_device *dev;
  if ((only && *only == '1') || cujit_current_device(e, &dev) != CUJIT_OK) {
    int rc = compile_only(e);
    if (!(only && *only == '1')) {
      const char *required = getenv("CUJIT_REQUIRE_GPU");
      const char *why = cujit_errmsg(e); /* its first line: why there is no GPU */
      printf("no GPU (%.*s): launch skipped\n", (int)strcspn(why, "\n"), why);
      rc = required && *required == '1' ? 1 : 77;
    }
    cujit_close(e);
    return rc;
  }
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) x[i] = (float)rand() / RAND_MAX, y[i] = (float)rand() / RAND_MAX;

  cujit_kernel *saxpy;
  CHECK(e, cujit_kernel_define(e, signature, body, NULL, NULL, &saxpy));
  cujit_buffer *dx, *dy;
  CHECK(e, cujit_buffer_alloc(e, N * sizeof(float), CUJIT_F32, &dx));
  CHECK(e, cujit_buffer_alloc(e, N * sizeof(float), CUJIT_F32, &dy));
  CHECK(e, cujit_memcpy_htod(dx, 0, x, N * sizeof(float), NULL));
  CHECK(e, cujit_memcpy_htod(dy, 0, y, N * sizeof(float), NULL));

  cujit_arg args[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy), CUJIT_ARG_I(N)};
  CHECK(e, cujit_launch_n(saxpy, N, NULL, args, 4)); /* block size from the occupancy API */
  CHECK(e, cujit_memcpy_dtoh(out, dy, 0, N * sizeof(float), NULL));

  int bad = 0;
  for (int i = 0; i < N; i++) bad += fabsf(out[i] - (2.0f * x[i] + y[i])) > 1e-6f;
  printf("saxpy on %d floats: %s (%d mismatches)\n", N, bad ? "FAILED" : "ok", bad);
  cujit_close(e); /* frees the kernel and buffers too */
  free(x), free(y), free(out);
  return bad != 0;
}
