/*
** test_null_args.c -- the C API's calls given a NULL where they need a pointer (the kernel, the
** configuration, the arguments, an output), a zero where they need a size, or a generic kernel
** where they need a compiled one: each is refused with INVALID_ARGUMENT and a message naming the
** call and what is missing, its output cleared where it has one, and nothing crashes. The header
** promises a message for every failure; a check that exists but that no test reaches is one a
** careless edit can remove (issue 28: such refusals survived an independent sample). On a GPU when
** there is one, else on the CPU device; the name lookups compile for sm_90 and need no device.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

/* The engine, on a GPU when there is one, else on the CPU device. */
static void open_on_a_device(void) {
  cj_fixture_open();
  CJ_NEED_DEVICE(engine);
}

TestSuite(null_args, .init = open_on_a_device, .fini = cj_fixture_close, .timeout = 300);

static const char *const source = "extern \"C\" __global__ void fill(float *x, int n) {\n"
                                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "  if (i < n) x[i] = 7.0f;\n"
                                  "}\n";

/* A program of `source` and its kernel, on the current device. */
static cujit_program *program;
static cujit_kernel *fill;

static void compile_fill(void) {
  EXPECT_OK(cujit_program_compile(engine, source, "fill.cu", NULL, &program));
  EXPECT_OK(cujit_program_kernel(program, "fill", &fill));
}

static void free_fill(void) {
  cujit_kernel_free(fill);
  cujit_program_free(program);
}

/* A call whose handle is NULL: INVALID_ARGUMENT, and nothing recorded (cujit.h: there is no
** engine to tell), so the engine's message is still the earlier failure's. */
#define EXPECT_NULL_HANDLE(call)                                                                   \
  do {                                                                                             \
    char before_[512];                                                                             \
    snprintf(before_, sizeof before_, "%s", cujit_errmsg(engine));                                 \
    cujit_status st_ = (call);                                                                     \
    cr_expect_eq(st_, CUJIT_ERROR_INVALID_ARGUMENT, "%s gave %s", #call,                           \
                 cujit_status_string(st_));                                                        \
    cr_expect_str_eq(cujit_errmsg(engine), before_, "%s recorded \"%s\" in the engine", #call,     \
                     cujit_errmsg(engine));                                                        \
  } while (0)

/* A pointer that is not NULL, to see an output cleared. */
static void *const stale = (void *)&stale;

Test(null_args, launches) {
  compile_fill();
  cujit_buffer *x = cj_test_upload(NULL, 64 * sizeof(float), CUJIT_F32);
  int n = 64;
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(n)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 64;
  float h[64];
  EXPECT_OK(cujit_memset(x, 0, 0, sizeof h, NULL));
  const char *launch = "cujit_launch needs a kernel, a launch configuration and the arguments";
  EXPECT_NULL_HANDLE(cujit_launch(NULL, &cfg, args, 2));
  EXPECT_REFUSED(cujit_launch(fill, NULL, args, 2), CUJIT_ERROR_INVALID_ARGUMENT, launch);
  EXPECT_REFUSED(cujit_launch(fill, &cfg, NULL, 2), CUJIT_ERROR_INVALID_ARGUMENT, launch);
  const char *coop = "cujit_launch_cooperative needs a kernel, a launch configuration and the "
                     "arguments";
  EXPECT_NULL_HANDLE(cujit_launch_cooperative(NULL, &cfg, args, 2));
  EXPECT_REFUSED(cujit_launch_cooperative(fill, NULL, args, 2), CUJIT_ERROR_INVALID_ARGUMENT, coop);
  EXPECT_REFUSED(cujit_launch_cooperative(fill, &cfg, NULL, 2), CUJIT_ERROR_INVALID_ARGUMENT, coop);
  const char *n_launch = "cujit_launch_n needs a kernel and the arguments";
  EXPECT_NULL_HANDLE(cujit_launch_n(NULL, 64, NULL, args, 2));
  EXPECT_REFUSED(cujit_launch_n(fill, 64, NULL, NULL, 2), CUJIT_ERROR_INVALID_ARGUMENT, n_launch);
  /* None of them ran: the buffer is as it was; the same call with everything given runs. */
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < 64; i++) cr_assert_eq(h[i], 0.0f, "[%d] = %g: a refused launch ran", i, h[i]);
  EXPECT_OK(cujit_launch_n(fill, 64, NULL, args, 2));
  cj_test_download(h, x, sizeof h);
  for (int i = 0; i < 64; i++) cr_assert_eq(h[i], 7.0f, "[%d] = %g after cujit_launch_n", i, h[i]);
  /* No arguments and a count of none is a call without arguments: refused for its count. */
  EXPECT_FAIL(cujit_launch(fill, &cfg, NULL, 0), CUJIT_ERROR_ARGUMENT, "fill");
  cujit_buffer_free(x);
  free_fill();
}

Test(null_args, kernel_queries) {
  compile_fill();
  void *native = stale;
  EXPECT_REFUSED(cujit_kernel_function(fill, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_kernel_function: native is NULL");
  EXPECT_NULL_HANDLE(cujit_kernel_function(NULL, &native));
  EXPECT_REFUSED(cujit_program_module(program, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_program_module: native is NULL");
  EXPECT_NULL_HANDLE(cujit_program_module(NULL, &native));
  int block = -1, grid = -1;
  const char *suggest = "cujit_kernel_suggest_block needs a kernel and an output pointer";
  EXPECT_REFUSED(cujit_kernel_suggest_block(fill, NULL, &grid), CUJIT_ERROR_INVALID_ARGUMENT,
                 suggest);
  EXPECT_NULL_HANDLE(cujit_kernel_suggest_block(NULL, &block, &grid));
  EXPECT_OK(cujit_kernel_suggest_block(fill, &block, NULL)); /* min_grid may be NULL */
  cr_expect_gt(block, 0, "the block suggested: %d", block);
  unsigned long long blocks = 99;
  const char *coop = "cujit_kernel_max_cooperative_blocks needs a kernel, a block of at least one "
                     "thread and an output pointer";
  EXPECT_REFUSED(cujit_kernel_max_cooperative_blocks(fill, 0, 0, &blocks),
                 CUJIT_ERROR_INVALID_ARGUMENT, coop);
  EXPECT_REFUSED(cujit_kernel_max_cooperative_blocks(fill, 32, 0, NULL),
                 CUJIT_ERROR_INVALID_ARGUMENT, coop);
  EXPECT_NULL_HANDLE(cujit_kernel_max_cooperative_blocks(NULL, 32, 0, &blocks));
  EXPECT_OK(cujit_kernel_max_cooperative_blocks(fill, 1, 0, &blocks)); /* one thread is a block */
  cr_expect_gt(blocks, 0);
  cujit_kernel *k = stale;
  const char *lookup = "cujit_program_kernel needs a program, a name and an output pointer";
  EXPECT_REFUSED(cujit_program_kernel(program, NULL, &k), CUJIT_ERROR_INVALID_ARGUMENT, lookup);
  cr_expect_null(k, "out is cleared");
  k = stale;
  EXPECT_NULL_HANDLE(cujit_program_kernel(NULL, "fill", &k));
  cr_expect_null(k, "out is cleared");
  EXPECT_REFUSED(cujit_program_kernel(program, "fill", NULL), CUJIT_ERROR_INVALID_ARGUMENT, lookup);
  cujit_buffer *b = stale;
  EXPECT_REFUSED(cujit_program_global(program, NULL, &b, NULL, NULL, NULL),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_program_global needs a program, a variable name and an output pointer");
  cr_expect_null(b, "out is cleared");
  cujit_program *p = stale;
  EXPECT_REFUSED(cujit_program_compile_file(engine, "fill.cu", NULL, NULL),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_program_compile_file: out is NULL; pass the address of a cujit_program *");
  EXPECT_NULL_HANDLE(cujit_program_compile_file(NULL, "fill.cu", NULL, &p));
  free_fill();
}

/* A generic kernel has no program until it is specialised: whatever needs its code says so. */
Test(null_args, a_generic_kernel_before_its_types) {
  cujit_kernel *axpy, *s = stale;
  EXPECT_OK(cujit_kernel_define(engine, "axpy(T a, const T *x, T *y, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] += a * x[i];",
                                NULL, NULL, &axpy));
  const char *generic = "kernel 'axpy' is generic: specialise it first (cujit_kernel_specialize)";
  int block = -1;
  EXPECT_REFUSED(cujit_kernel_suggest_block(axpy, &block, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 generic);
  unsigned long long blocks;
  EXPECT_REFUSED(cujit_kernel_max_cooperative_blocks(axpy, 32, 0, &blocks),
                 CUJIT_ERROR_INVALID_ARGUMENT, generic);
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, NULL, 1, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_kernel_specialize needs a kernel, the types and an output pointer");
  cr_expect_null(s, "out is cleared");
  cujit_dtype f32 = CUJIT_F32;
  EXPECT_REFUSED(cujit_kernel_specialize(axpy, &f32, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_kernel_specialize needs a kernel, the types and an output pointer");
  EXPECT_OK(cujit_kernel_specialize(axpy, &f32, 1, &s));
  EXPECT_OK(cujit_kernel_suggest_block(s, &block, NULL)); /* specialised, it has its code */
  cujit_kernel_free(s);
  cujit_kernel_free(axpy);
}

Test(null_args, devices_memory_and_events) {
  cujit_device *dev = NULL;
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_REFUSED(cujit_device_memory(dev, NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_device_memory: both free_bytes and total_bytes are NULL");
  size_t total = 0;
  EXPECT_OK(cujit_device_memory(dev, NULL, &total)); /* either alone is enough */
  cr_expect_gt(total, 0);
  EXPECT_REFUSED(cujit_device_pool_reserved(dev, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_device_pool_reserved: bytes is NULL; pass a size_t to fill");
  cujit_buffer *x = cj_test_upload(NULL, 64, CUJIT_F32), *v = stale;
  EXPECT_REFUSED(cujit_buffer_view(x, 0, 16, CUJIT_F32, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_view: out is NULL");
  EXPECT_NULL_HANDLE(cujit_buffer_view(NULL, 0, 16, CUJIT_F32, &v));
  char text[CUJIT_IPC_HANDLE_MAX];
  EXPECT_REFUSED(cujit_buffer_ipc_handle(x, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_ipc_handle: text is NULL");
  EXPECT_NULL_HANDLE(cujit_buffer_ipc_handle(NULL, text));
  cujit_buffer_free(x);
  cujit_event *ev;
  EXPECT_OK(cujit_event_create(engine, &ev));
  EXPECT_REFUSED(cujit_event_ipc_handle(ev, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_ipc_handle: text is NULL");
  EXPECT_NULL_HANDLE(cujit_event_ipc_handle(NULL, text));
  void *native = stale;
  EXPECT_REFUSED(cujit_event_handle(ev, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_handle: native is NULL");
  EXPECT_NULL_HANDLE(cujit_event_handle(NULL, &native));
  cujit_event_free(ev);
}

Test(null_args, host_memory) {
  cujit_host_buffer *h = stale;
  char memory[64];
  const char *reg = "cujit_host_register: pass the address and size (> 0) of host memory you "
                    "allocated";
  EXPECT_REFUSED(cujit_host_register(engine, NULL, sizeof memory, &h), CUJIT_ERROR_INVALID_ARGUMENT,
                 reg);
  cr_expect_null(h, "out is cleared");
  EXPECT_REFUSED(cujit_host_register(engine, memory, 0, &h), CUJIT_ERROR_INVALID_ARGUMENT, reg);
  EXPECT_OK(cujit_host_alloc(engine, 6, &h));
  cujit_buffer *b = stale;
  EXPECT_REFUSED(cujit_host_map(h, CUJIT_F32, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_host_map: out is NULL");
  EXPECT_NULL_HANDLE(cujit_host_map(NULL, CUJIT_F32, &b));
  EXPECT_REFUSED(cujit_host_map(h, CUJIT_F32, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_host_map: the host buffer's 6 bytes are not whole elements of dtype 2");
  cr_expect_null(b, "out is cleared");
  EXPECT_REFUSED(cujit_host_map(h, CUJIT_DTYPE_COUNT_, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_host_map: the host buffer's 6 bytes are not whole elements of dtype 13");
  cujit_host_free(h);
}

/* A global's name looked up in the PTX before any device is asked: a prefix of a variable's
** name, a namespaced variable's bare name and an empty name fit none. */
Test(null_args, global_names_that_fit_none) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_compile_options sm90 = {.size = sizeof sm90, .arch = "sm_90"};
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine,
                                  "namespace a { __device__ int taps[4]; }\n"
                                  "extern \"C\" __global__ void k(int *x) { x[0] = a::taps[1]; }\n",
                                  "taps.cu", &sm90, &p));
  const char *names[] = {"tap", "taps", "a::tap", ""};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    cujit_buffer *b = stale;
    char want[256];
    snprintf(want, sizeof want,
             "the program has no __device__ or __constant__ variable '%s'; name one as the source "
             "does ('taps', 'ns::taps')",
             names[i]);
    EXPECT_REFUSED(cujit_program_global(p, names[i], &b, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND,
                   want);
    cr_expect_null(b, "'%s': out is cleared", names[i]);
  }
  cujit_program_free(p);
}
