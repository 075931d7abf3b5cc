/*
** test_cpu_e2e.c -- the CPU device end to end through the public API, as a user without a GPU
** would use it: selecting it (CUJIT_DEVICE_CPU, CUJIT_DEVICE=cpu), kernels defined from a
** signature and a body or compiled from a .cu source, buffers, launches on streams, events, the
** disk cache, compile errors at the user's line, and faults (a trap, a recursion without bound)
** with the reset that clears them. Every result is checked against the same computation on the
** host. Needs only g++: runs on CI.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "case_engine.h"
#include "expect.h"
#include "gpu.h"

static cujit_buffer *upload(const void *data, size_t bytes, cujit_dtype dtype) {
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, bytes, dtype, &b));
  EXPECT_OK(cujit_memcpy_htod(b, 0, data, bytes, NULL));
  return b;
}

/* The host's memory as /proc/meminfo says (MemTotal, kB): the CPU device's. */
static unsigned long long host_memory_kib(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  cr_assert_not_null(f, "/proc/meminfo");
  char line[256];
  unsigned long long kib = 0;
  while (!kib && fgets(line, sizeof line, f)) sscanf(line, "MemTotal: %llu kB", &kib);
  fclose(f);
  cr_assert_gt(kib, 0, "no MemTotal in /proc/meminfo");
  return kib;
}

Test(cpu_device, selected_and_described, .init = open_cpu, .fini = close_engine) {
  cujit_device *dev = NULL, *got = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &got));
  cr_expect_eq(dev, got);
  cr_expect_eq(cujit_device_ordinal(dev), CUJIT_DEVICE_CPU);
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(dev, &info));
  cr_expect(strncmp(info.name, "CPU (", 5) == 0, "name %s", info.name);
  cr_expect_gt(info.multiprocessors, 0);
  cr_expect_gt(info.total_memory, 0);
  cr_expect_eq(info.max_threads_per_block, 1024);
  char arch[16];
  EXPECT_OK(cujit_device_arch(dev, arch, sizeof arch));
  cr_expect_str_eq(arch, "cpu");
  size_t free_bytes = 0, total = 0;
  EXPECT_OK(cujit_device_memory(dev, &free_bytes, &total));
  cr_expect_eq(total, info.total_memory);
  cr_expect(free_bytes > 0 && free_bytes <= total);
  unsigned long long host_kib = host_memory_kib();
  cr_expect_eq(total, (size_t)host_kib * 1024, "%zu bytes, the host's MemTotal is %llu kB", total,
               host_kib);
}

Test(cpu_device, selected_from_the_environment) {
  setenv("CUJIT_DEVICE", "cpu", 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  unsetenv("CUJIT_DEVICE");
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  cr_expect_eq(cujit_device_ordinal(dev), CUJIT_DEVICE_CPU);
  close_engine();
}

Test(cpu_device, no_gpu_message_names_the_cpu_device) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cujit_device *dev = NULL;
  if (cujit_current_device(engine, &dev) == CUJIT_OK) {
    close_engine();
    cr_skip_test("a GPU is present: the no-GPU message cannot be seen here");
  }
  cr_expect(strstr(cujit_errmsg(engine), "CUJIT_DEVICE=cpu"), "%s", cujit_errmsg(engine));
  close_engine();
}

Test(cpu_device, saxpy_from_a_signature_and_a_body, .init = open_cpu, .fini = close_engine) {
  enum { N = 10007 };
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "saxpy(float a, const float *x, float *y, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] = a * x[i] + y[i];",
                                NULL, NULL, &k));
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
  unsigned seed = 12345;
  for (int i = 0; i < N; i++) x[i] = cj_test_randf(&seed), y[i] = cj_test_randf(&seed);
  cujit_buffer *dx = upload(x, N * sizeof *x, CUJIT_F32), *dy = upload(y, N * sizeof *y, CUJIT_F32);
  cujit_launch_config cfg = launch_1d((N + 127) / 128, 128);
  cujit_arg args[] = {CUJIT_ARG_F(2.5), CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &cfg, args, 4));
  EXPECT_OK(cujit_memcpy_dtoh(out, dy, 0, N * sizeof *out, NULL));
  for (int i = 0; i < N; i++)
    if (out[i] != 2.5f * x[i] + y[i])
      cr_assert_fail("y[%d] = %g, want %g", i, out[i], 2.5f * x[i] + y[i]);
  cujit_buffer_free(dx);
  cujit_buffer_free(dy);
  cujit_kernel_free(k);
  free(x);
  free(y);
  free(out);
}

Test(cpu_device, generic_kernel_on_a_stream_with_events, .init = open_cpu, .fini = close_engine) {
  enum { N = 5000 };
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "scale(T a, T *x, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) x[i] = a * x[i];",
                                NULL, NULL, &k));
  double *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) x[i] = i * 0.25 - 7;
  cujit_buffer *dx = upload(x, N * sizeof *x, CUJIT_F64);
  cujit_stream *s = NULL;
  cujit_event *a = NULL, *b = NULL;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_event_create(engine, &a));
  EXPECT_OK(cujit_event_create(engine, &b));
  EXPECT_OK(cujit_event_record(a, s));
  cujit_arg args[] = {CUJIT_ARG_F(-3.0), CUJIT_ARG_BUF(dx), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch_n(k, N, s, args, 3));
  EXPECT_OK(cujit_memcpy_dtoh(out, dx, 0, N * sizeof *out, s));
  EXPECT_OK(cujit_event_record(b, s));
  EXPECT_OK(cujit_event_synchronize(b));
  float ms = -1;
  EXPECT_OK(cujit_event_elapsed(a, b, &ms));
  cr_expect_geq(ms, 0.0f);
  EXPECT_OK(cujit_stream_query(s));
  for (int i = 0; i < N; i++) cr_expect_eq(out[i], -3.0 * x[i], "x[%d]", i);
  cujit_event_free(a);
  cujit_event_free(b);
  cujit_stream_free(s);
  cujit_buffer_free(dx);
  cujit_kernel_free(k);
  free(x);
  free(out);
}

static const char two_kernels[] = "extern \"C\" __global__ void fill(int *x, int v, int n) {\n"
                                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "  if (i < n) x[i] = v + i;\n"
                                  "}\n"
                                  "extern \"C\" __global__ void twice(int *x, int n) {\n"
                                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "  if (i < n) x[i] *= 2;\n"
                                  "}\n";

Test(cpu_device, program_of_two_kernels_and_the_disk_cache, .init = open_cpu,
     .fini = close_engine) {
  enum { N = 777 };
  char unique[64];
  snprintf(unique, sizeof unique, "// %p %d\n", (void *)&unique, rand());
  char *source = malloc(sizeof two_kernels + sizeof unique);
  snprintf(source, sizeof two_kernels + sizeof unique, "%s%s", unique, two_kernels);
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(engine, source, "two.cu", NULL, &p));
  cr_expect_eq(cujit_program_from_cache(p), 0, "a new source is compiled");
  cr_expect_eq(cujit_program_kernel_count(p), 2);
  cujit_kernel *fill = NULL, *twice = NULL;
  EXPECT_OK(cujit_program_kernel(p, "fill", &fill));
  EXPECT_OK(cujit_program_kernel(p, "twice", &twice));
  cujit_buffer *d = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(int), CUJIT_I32, &d));
  cujit_launch_config cfg = launch_1d((N + 63) / 64, 64);
  EXPECT_OK(cujit_launch(fill, &cfg,
                         (cujit_arg[]){CUJIT_ARG_BUF(d), CUJIT_ARG_I(-40), CUJIT_ARG_I(N)}, 3));
  EXPECT_OK(cujit_launch(twice, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(d), CUJIT_ARG_I(N)}, 2));
  int out[N];
  EXPECT_OK(cujit_memcpy_dtoh(out, d, 0, sizeof out, NULL));
  for (int i = 0; i < N; i++) cr_expect_eq(out[i], 2 * (i - 40), "x[%d]", i);
  cujit_buffer_free(d);
  cujit_kernel_free(fill);
  cujit_kernel_free(twice);
  cujit_program_free(p);
  /* Another engine finds the shared object in the disk cache. */
  cujit_engine *second = NULL;
  cr_assert_eq(cujit_open(&second), CUJIT_OK);
  EXPECT_OK(cujit_set_device(second, CUJIT_DEVICE_CPU));
  cujit_program *again = NULL;
  cr_assert_eq(cujit_program_compile(second, source, "two.cu", NULL, &again), CUJIT_OK, "%s",
               cujit_errmsg(second));
  cr_expect_eq(cujit_program_from_cache(again), 1, "the second compile is a cache hit");
  cujit_program_free(again);
  cujit_close(second);
  free(source);
}

/* The kernels handed out are the ones g++ built, as on a GPU they are the ones NVRTC built
** (issue 8): a kernel inside #if 0 is left out, and of two definitions under #ifdef the one
** compiled gives the parameters, so an array of the other type is refused, not misread. */
Test(cpu_device, kernels_are_the_ones_compiled, .init = open_cpu, .fini = close_engine) {
  static const char ghost[] = "#if 0\nextern \"C\" __global__ void ghost(int *x) {}\n#endif\n"
                              "extern \"C\" __global__ void real(int *x) { *x = 7; }\n";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, ghost, "ghost.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_expect_eq(cujit_program_kernel_count(p), 1);
  cr_expect_str_eq(cujit_program_kernel_name(p, 0), "real");
  cujit_kernel *k = NULL;
  cr_expect_eq(cujit_program_kernel(p, "ghost", &k), CUJIT_ERROR_NOT_FOUND);
  cujit_program_free(p);
  static const char ifdef[] =
      "#ifdef D\n"
      "extern \"C\" __global__ void scale(double *x, int n) { for (int i = 0; i < n; i++) x[i] "
      "*= 2; }\n"
      "#else\n"
      "extern \"C\" __global__ void scale(float *x, int n) { for (int i = 0; i < n; i++) x[i] *= "
      "3; }\n"
      "#endif\n";
  const char *defines[] = {"D"};
  for (int with_d = 0; with_d < 2; with_d++) {
    cujit_compile_options o = {
        .size = sizeof(cujit_compile_options), .defines = defines, .define_count = (size_t)with_d};
    cr_assert_eq(cujit_program_compile(engine, ifdef, "ifdef.cu", &o, &p), CUJIT_OK, "%s",
                 cujit_errmsg(engine));
    cr_assert_eq(cujit_program_kernel(p, "scale", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK);
    cr_expect_str_eq(info.type, with_d ? "double *" : "float *");
    double in[2] = {1, 2};
    float inf[2] = {1, 2};
    cujit_buffer *b =
        with_d ? upload(in, sizeof in, CUJIT_F64) : upload(inf, sizeof inf, CUJIT_F32);
    cujit_launch_config cfg = launch_1d(1, 1);
    EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(b), CUJIT_ARG_I(2)}, 2));
    if (with_d) {
      EXPECT_OK(cujit_memcpy_dtoh(in, b, 0, sizeof in, NULL));
      cr_expect(in[0] == 2 && in[1] == 4, "the double kernel ran: %g %g", in[0], in[1]);
    } else {
      EXPECT_OK(cujit_memcpy_dtoh(inf, b, 0, sizeof inf, NULL));
      cr_expect(inf[0] == 3 && inf[1] == 6, "the float kernel ran: %g %g", inf[0], inf[1]);
    }
    cujit_buffer *other =
        with_d ? upload(inf, sizeof inf, CUJIT_F32) : upload(in, sizeof in, CUJIT_F64);
    cr_expect_neq(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(other), CUJIT_ARG_I(2)}, 2),
                  CUJIT_OK, "an array of the other definition's type is refused");
    cujit_buffer_free(other);
    cujit_buffer_free(b);
    cujit_kernel_free(k);
    cujit_program_free(p);
  }
}

/* C++-linkage kernels (static, without extern "C", in a namespace) keep strong references beside
** the weak ones of extern "C" kernels: g++ refuses a static one made weak ("weak declaration of
** 'twice' must be public"), which once broke tests/realcuda/scan.cu. A C++ kernel an #if removes
** is therefore a compile error naming it, as NVRTC's name expression makes it on a GPU. */
Test(cpu_device, cxx_kernels_beside_extern_c_ones, .init = open_cpu, .fini = close_engine) {
  static const char source[] = "static __global__ void twice(int *x) { *x *= 2; }\n"
                               "__global__ void thrice(int *x) { *x *= 3; }\n"
                               "namespace ns { __global__ void add1(int *x) { *x += 1; } }\n"
                               "#if 0\nextern \"C\" __global__ void ghost(int *x) {}\n#endif\n"
                               "extern \"C\" __global__ void seven(int *x) { *x = 7; }\n";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, source, "linkage.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_expect_eq(cujit_program_kernel_count(p), 4,
               "ghost is left out of twice, thrice, ns::add1, seven");
  int x = 0;
  cujit_buffer *b = upload(&x, sizeof x, CUJIT_I32);
  cujit_launch_config cfg = launch_1d(1, 1);
  static const char *const order[] = {"seven", "twice", "thrice", "ns::add1"};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    cujit_kernel *k = NULL;
    cr_assert_eq(cujit_program_kernel(p, order[i], &k), CUJIT_OK, "%s", cujit_errmsg(engine));
    EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(b)}, 1));
    cujit_kernel_free(k);
  }
  EXPECT_OK(cujit_memcpy_dtoh(&x, b, 0, sizeof x, NULL));
  cr_expect_eq(x, (7 * 2) * 3 + 1, "each kernel ran once, in order: %d", x);
  cujit_kernel *ghost = NULL;
  cr_expect_eq(cujit_program_kernel(p, "ghost", &ghost), CUJIT_ERROR_NOT_FOUND);
  cujit_buffer_free(b);
  cujit_program_free(p);
  static const char removed[] = "#if 0\nstatic __global__ void gone(int *x) {}\n#endif\n"
                                "extern \"C\" __global__ void here(int *x) {}\n";
  p = NULL;
  EXPECT_FAIL(cujit_program_compile(engine, removed, "removed.cu", NULL, &p), CUJIT_ERROR_COMPILE,
              "C++ kernel 'gone' with other parameters than gone(int *x), read from its text (or "
              "it is overloaded, or an #if removes it)");
  cr_expect_null(p);
  /* Variants of one name, one extern "C" and one static: the name is C++ for the entry. */
  static const char mixed[] = "#ifdef D\nextern \"C\" __global__ void pick(int *x) { *x = 1; }\n"
                              "#else\nstatic __global__ void pick(float *x) { *x = 2; }\n#endif\n";
  cr_assert_eq(cujit_program_compile(engine, mixed, "mixed.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k = NULL;
  cr_assert_eq(cujit_program_kernel(p, "pick", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK);
  cr_expect_str_eq(info.type, "float *", "the static variant was compiled");
  cujit_kernel_free(k);
  cujit_program_free(p);
}

Test(cpu_device, compile_error_names_the_line_of_the_body, .init = open_cpu, .fini = close_engine) {
  cujit_kernel *k = NULL;
  EXPECT_FAIL(cujit_kernel_define(engine, "bad(float *y)", "int i = threadIdx.x;\ny[i] = nope;",
                                  NULL, NULL, &k),
              CUJIT_ERROR_COMPILE, "kernel 'bad' failed to compile: line 2 of its body: error:");
  cr_expect(strstr(cujit_errmsg(engine), "nope"), "%s", cujit_errmsg(engine));
  cr_expect_null(k);
}

Test(cpu_device, trap_faults_until_reset, .init = open_cpu, .fini = close_engine) {
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "stop(int at)",
                                "if ((int)(blockIdx.x * blockDim.x + threadIdx.x) == at) __trap();",
                                NULL, NULL, &k));
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 64, CUJIT_U8, &b));
  cujit_launch_config cfg = launch_1d(2, 64);
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_I(77)}, 1));
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, "kernel 'stop'");
  EXPECT_FAIL(cujit_device_status(dev), CUJIT_ERROR_DEVICE_FAULT, "cujit_device_reset");
  EXPECT_OK(cujit_device_reset(dev));
  EXPECT_OK(cujit_device_status(dev));
  unsigned char byte;
  EXPECT_FAIL(cujit_memcpy_dtoh(&byte, b, 0, 1, NULL), CUJIT_ERROR_BUFFER_LOST, "reset");
  cujit_buffer_free(b);
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_I(-1)}, 1));
  EXPECT_OK(cujit_device_synchronize(dev));
  cujit_kernel_free(k);
}

/* A kernel recursing without bound runs past the bottom of its stack group into the guard page
** under it: the crash is caught on the worker's alternate signal stack (the faulting stack has no
** room left) and is the device's fault, not the end of the process. */
Test(cpu_device, unbounded_recursion_is_a_device_fault, .init = open_cpu, .fini = close_engine) {
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "deeper(int stop)",
                                "struct down {\n"
                                "  static __device__ __noinline__ int go(int n, int stop) {\n"
                                "    volatile char pad[512];\n"
                                "    pad[n % 512] = (char)n;\n"
                                "    return n == stop ? 0 : go(n + 1, stop) + pad[n % 512];\n"
                                "  }\n"
                                "};\n"
                                "if (threadIdx.x == 0) down::go(0, stop);",
                                NULL, NULL, &k));
  cujit_launch_config cfg = launch_1d(1, 32);
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_I(-1)}, 1));
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, "kernel 'deeper' crashed");
  EXPECT_OK(cujit_device_reset(dev));
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_I(100)}, 1)); /* a bounded one runs */
  EXPECT_OK(cujit_device_synchronize(dev));
  cujit_kernel_free(k);
}
