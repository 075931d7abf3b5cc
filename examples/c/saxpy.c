/*
** saxpy.c -- the C quick start: define a kernel from a string, move data, launch, check.
**
** It runs on the current device (CUJIT_DEVICE, else GPU 0), and with no GPU on the CPU device
** (docs/cpu.md), saying so on its "runs on:" line; CUJIT_EXAMPLE_NO_CPU=1 skips instead (exit 77,
** as test runners count it) and CUJIT_REQUIRE_GPU=1 fails. CUJIT_EXAMPLE_COMPILE_ONLY=1 only
** compiles the kernel, for sm_90, which needs NVRTC but no GPU.
*/
#include <cujit.h>

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

/* The inputs, made from the index so that the check recomputes each expected element instead of
** reading back the arrays sent (an element never filled in would pass: zero in, zero out). Eighths
** and integers: 2x + y is exact in float, so the device's result must equal it bit for bit. */
static float x_of(int i) {
  return (float)(i % 1000 + 1) / 8;
}
static float y_of(int i) {
  return (float)(i % 7) - 3;
}

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

static int is_set(const char *name) {
  const char *v = getenv(name);
  return v && *v == '1';
}

/* Makes the device to run on current: the current one, else (no GPU) the CPU device. Returns -1
** to go on, else the exit status. */
static int choose_device(cujit_engine *e) {
  cujit_device *dev;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  if (cujit_current_device(e, &dev) == CUJIT_OK && cujit_device_info_get(dev, &info) == CUJIT_OK) {
    if (info.ordinal == CUJIT_DEVICE_CPU)
      printf("runs on: CPU device (%s)\n", info.name);
    else
      printf("runs on: GPU %d (%s)\n", info.ordinal, info.name);
    return -1;
  }
  char why[512];
  snprintf(why, sizeof why, "%s", cujit_errmsg(e));
  why[strcspn(why, "\n")] = '\0'; /* the reason, without the advice that follows it */
  if (is_set("CUJIT_REQUIRE_GPU")) {
    fprintf(stderr, "saxpy: CUJIT_REQUIRE_GPU=1 but there is no GPU: %s\n", why);
    return 1;
  }
  if (is_set("CUJIT_EXAMPLE_NO_CPU")) {
    printf("no GPU (%s): skipped\n", why);
    return 77;
  }
  CHECK(e, cujit_set_device(e, CUJIT_DEVICE_CPU));
  printf("runs on: CPU device (no GPU: %s)\n", why);
  return -1;
}

int main(void) {
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  int rc = is_set("CUJIT_EXAMPLE_COMPILE_ONLY") ? compile_only(e) : choose_device(e);
  if (rc >= 0) {
    cujit_close(e);
    return rc;
  }
  enum { N = 1 << 20 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) x[i] = x_of(i), y[i] = y_of(i);

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
  for (int i = 0; i < N; i++) bad += out[i] != 2.0f * x_of(i) + y_of(i);
  printf("saxpy on %d floats: %s (%d mismatches)\n", N, bad ? "FAILED" : "ok", bad);
  cujit_close(e); /* frees the kernel and buffers too */
  free(x), free(y), free(out);
  return bad != 0;
}
