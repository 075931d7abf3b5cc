/*
** dlpack.c -- a DLPack round trip: one library hands a tensor to another without a copy.
**
** Two cujit engines stand for two libraries of one program (a framework and cujit, say). The
** producer fills a buffer with a kernel and exports it (cujit_buffer_to_dlpack) as a 2-D tensor;
** the consumer imports it (cujit_buffer_from_dlpack) at the same address and runs its own kernel on
** it. The producer then sees the consumer's result, frees its buffer (the tensor keeps the memory
** alive), and the consumer's free runs the tensor's deleter, which gives the memory back. Every
** element is checked, and so is each step of the ownership: same address, shape, memory still
** readable after the producer's free.
**
** Runs on the current device (CUJIT_DEVICE, else GPU 0), and with no GPU on the CPU device, saying
** so on its "runs on:" line; CUJIT_EXAMPLE_NO_CPU=1 skips instead (exit 77) and CUJIT_REQUIRE_GPU=1
** fails. CUJIT_EXAMPLE_COMPILE_ONLY=1 only compiles the kernels, for sm_90 (NVRTC, no GPU).
*/
#include <cujit.h>
#include <cujit_dlpack.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(engine, call)                                                                        \
  do {                                                                                             \
    if ((call) != CUJIT_OK) {                                                                      \
      fprintf(stderr, "dlpack: %s\n", cujit_errmsg(engine));                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "dlpack: " __VA_ARGS__);                                                     \
      fputc('\n', stderr);                                                                         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

enum { ROWS = 512, COLS = 1024, N = ROWS * COLS };

static const char *fill_sig = "fill(float *y, int n)";
static const char *fill_body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "if (i < n) y[i] = (float)(i % 1000) / 4;\n";
static const char *affine_sig = "affine(float *y, int n)";
static const char *affine_body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                 "if (i < n) y[i] = 2 * y[i] + 1;\n";

/* What the two kernels leave in element i: exact in float (quarters below 500). */
static float want(int i) {
  return 2 * ((float)(i % 1000) / 4) + 1;
}

static int is_set(const char *name) {
  const char *v = getenv(name);
  return v && *v == '1';
}

static int compile_only(cujit_engine *e) {
  cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
  options.arch = "sm_90";
  cujit_kernel *k;
  CHECK(e, cujit_kernel_define(e, fill_sig, fill_body, NULL, &options, &k));
  CHECK(e, cujit_kernel_define(e, affine_sig, affine_body, NULL, &options, &k));
  printf("compiled fill and affine for sm_90\n");
  return 0;
}

/* The device both engines run on: the current one, else (no GPU) the CPU device. Returns its
** ordinal, or sets *rc to the exit status when the example stops here. */
static int choose_device(cujit_engine *e, int *rc) {
  cujit_device *dev;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  if (cujit_current_device(e, &dev) == CUJIT_OK && cujit_device_info_get(dev, &info) == CUJIT_OK) {
    printf(info.ordinal == CUJIT_DEVICE_CPU ? "runs on: CPU device (%s)\n" : "runs on: GPU (%s)\n",
           info.name);
    return info.ordinal;
  }
  char why[512];
  snprintf(why, sizeof why, "%s", cujit_errmsg(e));
  why[strcspn(why, "\n")] = '\0';
  if (is_set("CUJIT_REQUIRE_GPU")) {
    fprintf(stderr, "dlpack: CUJIT_REQUIRE_GPU=1 but there is no GPU: %s\n", why);
    *rc = 1;
  } else if (is_set("CUJIT_EXAMPLE_NO_CPU")) {
    printf("no GPU (%s): skipped\n", why);
    *rc = 77;
  } else {
    printf("runs on: CPU device (no GPU: %s)\n", why);
  }
  return CUJIT_DEVICE_CPU;
}

static void run(cujit_engine *e, const char *sig, const char *body, cujit_buffer *y) {
  cujit_kernel *k;
  CHECK(e, cujit_kernel_define(e, sig, body, NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_I(N)};
  CHECK(e, cujit_launch_n(k, N, NULL, args, 2));
  CHECK(e, cujit_device_synchronize(cujit_buffer_device(y)));
}

static int mismatches(cujit_engine *e, cujit_buffer *b, float *host) {
  CHECK(e, cujit_memcpy_dtoh(host, b, 0, N * sizeof(float), NULL));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != want(i);
  return bad;
}

int main(void) {
  cujit_engine *producer, *consumer;
  if (cujit_open(&producer) != CUJIT_OK || cujit_open(&consumer) != CUJIT_OK) return 1;
  int rc = -1;
  if (is_set("CUJIT_EXAMPLE_COMPILE_ONLY")) {
    rc = compile_only(producer);
  } else {
    int ordinal = choose_device(producer, &rc);
    if (rc < 0) {
      CHECK(producer, cujit_set_device(producer, ordinal));
      CHECK(consumer, cujit_set_device(consumer, ordinal));
    }
  }
  if (rc >= 0) {
    cujit_close(consumer);
    cujit_close(producer);
    return rc;
  }

  /* The producer makes a buffer and exports it as a ROWS x COLS tensor. */
  cujit_buffer *made;
  CHECK(producer, cujit_buffer_alloc(producer, N * sizeof(float), CUJIT_F32, &made));
  run(producer, fill_sig, fill_body, made);
  void *tensor;
  CHECK(producer, cujit_buffer_to_dlpack(made, 2, (const int64_t[]){ROWS, COLS}, &tensor));
  const DLTensor *t = &((DLManagedTensorVersioned *)tensor)->dl_tensor;
  printf("exported: DLPack %u.%u, device type %d, %d-D %lld x %lld, strides %lld, %lld\n",
         ((DLManagedTensorVersioned *)tensor)->version.major,
         ((DLManagedTensorVersioned *)tensor)->version.minor, (int)t->device.device_type,
         (int)t->ndim, (long long)t->shape[0], (long long)t->shape[1], (long long)t->strides[0],
         (long long)t->strides[1]);

  /* The consumer takes it over: its buffer is the same memory, and it owns the tensor now. */
  cujit_buffer *taken;
  int ndim = 0;
  int64_t shape[CUJIT_DLPACK_MAX_DIMS];
  CHECK(consumer, cujit_buffer_from_dlpack(consumer, tensor, &taken, &ndim, shape));
  EXPECT(cujit_buffer_devptr(taken) == cujit_buffer_devptr(made), "the import is a copy");
  EXPECT(ndim == 2 && shape[0] == ROWS && shape[1] == COLS, "the shape did not come across");
  run(consumer, affine_sig, affine_body, taken);

  float *host = malloc(N * sizeof *host);
  int seen = mismatches(producer, made, host); /* the producer sees the consumer's work */
  cujit_buffer_free(made); /* the tensor holds the memory: the consumer's buffer still reads */
  int after = mismatches(consumer, taken, host);
  cujit_buffer_free(taken); /* runs the tensor's deleter: the memory goes back now */
  printf("round trip of %d floats, no copy: %s (%d mismatches seen by the producer, %d by the "
         "consumer after the producer's free)\n",
         N, seen || after ? "FAILED" : "ok", seen, after);
  free(host);
  cujit_close(consumer);
  cujit_close(producer);
  return seen || after;
}
