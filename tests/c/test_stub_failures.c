/*
** test_stub_failures.c -- what the CUDA backend says when the driver refuses a program's load, a
** kernel's lookup, a launch (out of resources: the block; a cooperative grid too large), the
** opt-in to more dynamic shared memory, an attribute read, a global's lookup or a stream's query
** (not ready is no error), against the
** stand-in driver (CUJIT_STUB_FAIL names the call, CUJIT_STUB_FAIL_CODE the CUresult;
** tests/CMakeLists.txt runs this program with the stand-in first on LD_LIBRARY_PATH, and nowhere
** else): a GPU gives these only under load or with broken code, so no GPU test reaches them. Each
** is the call's status and a message naming what failed, on which device, and what to do; the
** same call works again once the driver does. A parameter the driver sizes otherwise than cujit
** (cuFuncGetParamInfo) is refused before the launch. Also the cooperative launch's fit (8 blocks
*per
** multiprocessor in the stand-in, 132 multiprocessors).
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;
static cujit_kernel *kernel;
static cujit_buffer *x;

/* The engine with the stand-in failing `call` with CUresult `code`, and a kernel (compiled, not
** yet loaded) to use it on. */
static void open_failing(const char *call, const char *code) {
  setenv("CUJIT_STUB_FAIL", call, 1);
  setenv("CUJIT_STUB_FAIL_CODE", code, 1);
  cj_stub_open(&engine);
  EXPECT_OK(cujit_kernel_define(engine, "fill(float *x, int n)",
                                "if (threadIdx.x < n) x[threadIdx.x] = 1.0f;", NULL, NULL,
                                &kernel));
  EXPECT_OK(cujit_buffer_alloc(engine, 256, CUJIT_F32, &x));
}

static void close_engine(void) {
  cujit_kernel_free(kernel);
  cujit_buffer_free(x);
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
  unsetenv("CUJIT_STUB_PARAM_SIZES");
  cj_scratch_remove();
}

static cujit_status launch(unsigned blocks, unsigned threads, unsigned shared) {
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = blocks, c.block[0] = threads, c.shared_bytes = shared;
  cujit_arg a[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(64)};
  return cujit_launch(kernel, &c, a, 2);
}

/* The driver's own view of the compiled kernel's parameters (cuFuncGetParamInfo, CUDA 12.4+;
** CUJIT_STUB_PARAM_SIZES in the stand-in): one cujit sized otherwise is refused before the launch,
** naming it, both sizes and its offset; where they agree the launch goes. */
Test(stub_failures, a_parameter_the_compiled_kernel_sizes_otherwise_is_refused,
     .fini = close_engine) {
  setenv("CUJIT_STUB_PARAM_SIZES", "8,4", 1);
  open_failing("none", "1");
  EXPECT_OK(launch(1, 64, 0));
  cujit_kernel_free(kernel);
  setenv("CUJIT_STUB_PARAM_SIZES", "8,8", 1); /* a kernel loaded now reads the new sizes */
  EXPECT_OK(cujit_kernel_define(engine, "fill(float *x, int n)",
                                "if (threadIdx.x < n) x[threadIdx.x] = 2.0f;", NULL, NULL,
                                &kernel));
  EXPECT_FAIL(launch(1, 64, 0), CUJIT_ERROR_SIGNATURE,
              "kernel 'fill', parameter 2 'n' (int): cujit reads it as 4 bytes, but the compiled "
              "kernel's is 8 bytes (at offset 8); check the type");
}

Test(stub_failures, a_load_refused_names_the_program_and_device, .fini = close_engine) {
  open_failing("cuLibraryLoadData", "218"); /* CUDA_ERROR_INVALID_PTX */
  EXPECT_FAIL(launch(1, 64, 0), CUJIT_ERROR_DRIVER, "loading the code of ");
  EXPECT_FAIL(launch(1, 64, 0), CUJIT_ERROR_DRIVER, " onto device 0");
}

Test(stub_failures, a_kernel_lookup_refused_names_the_kernel, .fini = close_engine) {
  open_failing("cuLibraryGetKernel", "500"); /* CUDA_ERROR_NOT_FOUND */
  EXPECT_FAIL(launch(1, 64, 0), CUJIT_ERROR_DRIVER, "loading kernel 'fill' on device 0");
}

Test(stub_failures, out_of_resources_says_to_try_a_smaller_block, .fini = close_engine) {
  open_failing("cuLaunchKernel", "701"); /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */
  EXPECT_FAIL(launch(1, 1024, 0), CUJIT_ERROR_LAUNCH_CONFIG,
              "launch of kernel 'fill' on device 0 (the block needs more registers than the "
              "device has for that many threads: try a smaller block)");
}

Test(stub_failures, another_launch_failure_is_the_driver_s, .fini = close_engine) {
  open_failing("cuLaunchKernel", "719"); /* CUDA_ERROR_LAUNCH_FAILED */
  cujit_status st = launch(1, 64, 0);
  cr_assert_neq(st, CUJIT_OK);
  cr_assert_neq(st, CUJIT_ERROR_LAUNCH_CONFIG, "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "launch of kernel 'fill' on device 0"), "%s",
            cujit_errmsg(engine));
  cr_assert_null(strstr(cujit_errmsg(engine), "smaller block"), "%s", cujit_errmsg(engine));
}

Test(stub_failures, more_shared_memory_refused_says_how_much, .fini = close_engine) {
  open_failing("cuFuncSetAttribute", "1"); /* CUDA_ERROR_INVALID_VALUE */
  EXPECT_OK(launch(1, 64, 48 * 1024));     /* 48 KiB needs no opt-in */
  EXPECT_FAIL(launch(1, 64, 64 * 1024), CUJIT_ERROR_DRIVER,
              "allowing a kernel 65536 bytes of dynamic shared memory");
}

Test(stub_failures, attributes_refused, .fini = close_engine) {
  open_failing("cuFuncGetAttribute", "1");
  cujit_kernel_attributes attrs = CUJIT_KERNEL_ATTRIBUTES_INIT;
  EXPECT_FAIL(cujit_kernel_attributes_get(kernel, &attrs), CUJIT_ERROR_DRIVER,
              "reading kernel attributes");
}

Test(stub_failures, a_global_the_driver_does_not_find_is_named, .fini = close_engine) {
  open_failing("cuLibraryGetGlobal", "500"); /* CUDA_ERROR_NOT_FOUND */
  cujit_program *p;
  EXPECT_OK(
      cujit_program_compile(engine,
                            "__device__ float taps[4];\n"
                            "extern \"C\" __global__ void use(float *o) { o[0] = taps[0]; }\n",
                            "globals", NULL, &p));
  cujit_buffer *g = NULL;
  EXPECT_REFUSED(cujit_program_global(p, "taps", &g, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND,
                 "the program has no __device__ or __constant__ variable 'taps' (a variable of "
                 "C++ linkage inside a namespace, or a static one, is not found by name: declare "
                 "it at file scope, not static)");
  cr_assert_null(g);
  cujit_program_free(p);
}

Test(stub_failures, a_cooperative_grid_the_driver_refuses, .fini = close_engine) {
  open_failing("cuLaunchCooperativeKernel", "720"); /* CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE */
  unsigned long long fit = 0;
  EXPECT_OK(cujit_kernel_max_cooperative_blocks(kernel, 128, 0, &fit));
  cr_assert_eq(fit, 8ull * 132, "8 blocks a multiprocessor, 132 of them");
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 8 * 132 + 1, c.block[0] = 128;
  cujit_arg a[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(64)};
  EXPECT_FAIL(cujit_launch_cooperative(kernel, &c, a, 2), CUJIT_ERROR_LAUNCH_CONFIG, "1056");
  c.grid[0] = 8 * 132;
  EXPECT_REFUSED(cujit_launch_cooperative(kernel, &c, a, 2), CUJIT_ERROR_LAUNCH_CONFIG,
                 "a cooperative launch on device 0: the grid does not fit on the device at once; "
                 "launch fewer blocks (cujit checks occupancy x SMs first; the driver also counts "
                 "registers and shared memory)");
}

Test(stub_failures, a_call_a_capture_refuses_says_when_to_make_it, .fini = close_engine) {
  open_failing("cuMemsetD8Async", "900"); /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
  EXPECT_FAIL(cujit_memset(x, 0, 1, 64, NULL), CUJIT_ERROR_UNSUPPORTED,
              "cannot run while a stream of device 0 captures a graph");
  EXPECT_FAIL(cujit_memset(x, 0, 1, 64, NULL), CUJIT_ERROR_UNSUPPORTED,
              "do it before cujit_capture_begin or after cujit_capture_end");
}

Test(stub_failures, a_capture_invalidated_says_to_end_it, .fini = close_engine) {
  open_failing("cuMemsetD8Async", "901"); /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
  EXPECT_FAIL(cujit_memset(x, 0, 1, 64, NULL), CUJIT_ERROR_UNSUPPORTED,
              "the graph capture was invalidated by an earlier call that cannot be captured");
}

Test(stub_failures, a_graph_drawing_the_driver_cannot_write, .fini = close_engine) {
  open_failing("cuGraphDebugDotPrint", "304"); /* CUDA_ERROR_OPERATING_SYSTEM */
  cujit_stream *s;
  cujit_graph *g;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(launch(1, 64, 0)); /* loads it: a capture cannot */
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 1, c.block[0] = 64, c.stream = s;
  cujit_arg a[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(64)};
  EXPECT_OK(cujit_launch(kernel, &c, a, 2));
  EXPECT_OK(cujit_capture_end(s, &g));
  EXPECT_REFUSED(cujit_graph_dot(g, "/nonexistent/g.dot"), CUJIT_ERROR_IO,
                 "cujit_graph_dot: could not write '/nonexistent/g.dot'; check that its directory "
                 "exists and is writable");
  cujit_graph_free(g);
  cujit_stream_free(s);
}

/* The driver refusing to say how much memory there is: the call fails with the driver's reason,
** and both answers are 0, not whatever the caller's variables held. */
Test(stub_failures, memory_the_driver_will_not_count, .fini = close_engine) {
  open_failing("cuMemGetInfo", "999");
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  size_t free_bytes = 12345, total_bytes = 67890;
  EXPECT_FAIL(cujit_device_memory(dev, &free_bytes, &total_bytes), CUJIT_ERROR_DRIVER,
              "cuMemGetInfo");
  cr_expect_eq(free_bytes, 0, "free bytes after the refusal: %zu", free_bytes);
  cr_expect_eq(total_bytes, 0, "total bytes after the refusal: %zu", total_bytes);
}

/* cujit_stream_query is the driver's answer: CUDA_ERROR_NOT_READY is "not yet" (no error, no
** fault), anything else the driver's failure named with the call. */
Test(stub_failures, a_stream_query_is_the_driver_s_answer, .fini = close_engine) {
  open_failing("cuStreamQuery", "600"); /* CUDA_ERROR_NOT_READY */
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  cr_assert_eq(cujit_stream_query(s), CUJIT_ERROR_NOT_READY, "%s", cujit_errmsg(engine));
  cujit_device *dev;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_OK(cujit_device_status(dev));      /* not ready is no fault */
  setenv("CUJIT_STUB_FAIL_CODE", "999", 1); /* CUDA_ERROR_UNKNOWN */
  EXPECT_FAIL(cujit_stream_query(s), CUJIT_ERROR_DRIVER, "cujit_stream_query failed: ");
  EXPECT_FAIL(cujit_stream_query(s), CUJIT_ERROR_DRIVER, "code 999");
  cujit_stream_free(s);
}
