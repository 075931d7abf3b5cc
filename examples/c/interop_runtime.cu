/*
** interop_runtime.cu -- cujit inside an application written against the CUDA runtime API
** (docs/embedding.md). The application allocates with cudaMalloc, makes its own stream and runs
** its own kernel on it (compiled by nvcc, launched with <<<>>>); it hands the memory and the stream
** to cujit, whose runtime-compiled kernel runs on that stream after the application's; the
** application then copies the result back on the same stream and checks every element. Nothing is
** synchronised in between: the stream orders the three pieces of work. Afterwards the stream and
** the memory are still the application's: cujit freed its wrappers, not them.
**
** It needs a GPU (the runtime API has no CPU device): without one it exits 77, saying why
** (CUJIT_REQUIRE_GPU=1 makes that a failure). CUJIT_EXAMPLE_COMPILE_ONLY=1 compiles cujit's kernel
** for sm_90 and exits, which needs NVRTC but no GPU. Built only where nvcc is (examples/CMakeLists).
*/
#include <cuda_runtime.h>
#include <cujit.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(engine, call)                                                                        \
  do {                                                                                             \
    if ((call) != CUJIT_OK) {                                                                      \
      std::fprintf(stderr, "interop_runtime: %s failed: %s\n", #call, cujit_errmsg(engine));       \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t rc_ = (call);                                                                      \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "interop_runtime: %s failed: %s\n", #call, cudaGetErrorString(rc_));    \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

/* The application's own kernel: x[i] = i / 4 (exact in float). */
__global__ void ramp(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (float)i / 4;
}

/* cujit's, compiled at run time: y = a * x + b. */
static const char *signature = "affine(const float *x, float *y, float a, float b, int n)";
static const char *body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "if (i < n) y[i] = a * x[i] + b;\n";

/* How many times the release callbacks ran, and with what. */
static int released;
static void release(void *user, uint64_t address) {
  (void)address;
  released += *(int *)user;
}

static bool is_set(const char *name) {
  const char *v = std::getenv(name);
  return v && std::strcmp(v, "1") == 0;
}

int main() {
  cujit_engine *e = NULL;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  if (is_set("CUJIT_EXAMPLE_COMPILE_ONLY")) {
    cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
    options.arch = "sm_90";
    cujit_kernel *k = NULL;
    CHECK(e, cujit_kernel_define(e, signature, body, NULL, &options, &k));
    std::printf("compiled %s for sm_90\n", cujit_kernel_signature(k));
    cujit_close(e);
    return 0;
  }
  int gpus = 0;
  cudaError_t rc = cudaGetDeviceCount(&gpus);
  if (rc != cudaSuccess || gpus == 0) {
    std::printf("interop_runtime: the CUDA runtime sees no GPU (%s)\n",
                rc != cudaSuccess ? cudaGetErrorString(rc) : "0 devices");
    cujit_close(e);
    return is_set("CUJIT_REQUIRE_GPU") ? 1 : 77;
  }
  CHECK_CUDA(cudaSetDevice(0));
  std::printf("runs on: GPU 0\n");

  /* The application's memory, stream and work. */
  const int n = 1 << 20;
  float *x = NULL, *y = NULL;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&y, n * sizeof(float)));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ramp<<<(n + 255) / 256, 256, 0, stream>>>(x, n);
  CHECK_CUDA(cudaGetLastError());

  /* Handed to cujit: the runtime API's context is the device's primary context, cujit's too. */
  cujit_stream *s = NULL;
  CHECK(e, cujit_stream_wrap(e, stream, &s));
  int one = 1;
  cujit_buffer *bx = NULL, *by = NULL;
  CHECK(e, cujit_buffer_wrap(e, (uint64_t)(uintptr_t)x, n * sizeof(float), CUJIT_F32, release,
                             &one, &bx));
  CHECK(e, cujit_buffer_wrap(e, (uint64_t)(uintptr_t)y, n * sizeof(float), CUJIT_F32, release,
                             &one, &by));
  cujit_kernel *k = NULL;
  CHECK(e, cujit_kernel_define(e, signature, body, NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_BUF(bx), CUJIT_ARG_BUF(by), CUJIT_ARG_F(2.0f), CUJIT_ARG_F(-1.0f),
                      CUJIT_ARG_I(n)};
  CHECK(e, cujit_launch_n(k, n, s, args, 5));

  /* The application reads the result on its stream: after cujit's kernel, which ran after ramp. */
  std::vector<float> host(n);
  CHECK_CUDA(cudaMemcpyAsync(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  long bad = 0;
  for (int i = 0; i < n; i++)
    if (host[i] != 2.0f * ((float)i / 4) - 1.0f) bad++;
  std::printf("%ld of %d elements wrong: %s\n", bad, n, bad ? "FAILED" : "ok");

  /* cujit lets go of its wrappers; the application's objects stay its own. */
  cujit_kernel_free(k);
  cujit_buffer_free(bx);
  cujit_buffer_free(by);
  cujit_stream_free(s);
  cujit_close(e);
  int owned = released == 2;
  std::printf("release callbacks: %d (want 2): %s\n", released, owned ? "ok" : "FAILED");
  ramp<<<(n + 255) / 256, 256, 0, stream>>>(y, n); /* the stream and y are still alive */
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUDA(cudaFree(x));
  CHECK_CUDA(cudaFree(y));
  std::printf("%s\n", !bad && owned ? "2 checks passed" : "checks FAILED");
  return bad || !owned;
}
