/*
** test_graph_stub.c -- the CUDA backend's graph bookkeeping, against the stand-in driver
** (scripts/bench/stub_graph.c; tests/CMakeLists.txt runs this program with it first on
** LD_LIBRARY_PATH, and nowhere else), which records what cujit tells the driver and refuses, as
** the real one does, a node of another graph: cujit_graph_set_args after cujit_graph_update
** addresses the instantiated graph's own node (not the node of the capture it was updated from,
** even once that capture is freed) with the update's kernel (the other specialisation of a
** generic kernel) and grid; set_args before the first replay, on one node of two; and what each
** replay was given, read back from the stand-in (its kernels do not run: the values themselves
** are checked on a GPU or the CPU device by c.test_graph_args). Also what cujit says for each
** reason the driver gives for refusing an update (CUJIT_STUB_UPDATE_RESULT), and the graph still
** replaying as it was; a capture a driver call refuses or invalidated, said as such; a capture's
** nodes counted by the kind the driver gives each (kernels, fills, copies).
*/
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "cujit.h"
#include "scratch.h"
#include "stub.h"
#include "expect.h"

static cujit_engine *engine;
static cujit_stream *stream;
static cujit_kernel *generic, *k32, *k64;
static void *fn32, *fn64;

#define N 1000

typedef int (*replayed_fn)(size_t, void **, unsigned *, unsigned *, unsigned long long *);

/* What the last replay ran at node i, from the stand-in. */
typedef struct node_seen {
  void *func;
  unsigned grid[3], block[3];
  unsigned long long param[4];
} node_seen;

static node_seen replayed(size_t i) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(cuda, "libcuda.so.1 is not loaded");
  replayed_fn fn = (replayed_fn)dlsym(cuda, "cujit_stub_graph_replayed");
  dlclose(cuda);
  cr_assert_not_null(fn, "libcuda.so.1 is not the stand-in driver (scripts/bench/stubcuda)");
  node_seen s;
  cr_assert_eq(fn(i, &s.func, s.grid, s.block, s.param), 0, "the last replay had no node %zu", i);
  return s;
}

static uint32_t f32_bits(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static uint64_t f64_bits(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

/* The engine on the stand-in's device, a stream, and axpb's f32 and f64 specialisations loaded. */
static void setup(void) {
  cj_stub_open(&engine);
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  EXPECT_OK(cujit_stream_create(engine, &stream));
  EXPECT_OK(cujit_kernel_define(engine, "axpb(T *x, T a, T b, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) x[i] = a * x[i] + b;",
                                NULL, NULL, &generic));
  cujit_dtype f32 = CUJIT_F32, f64 = CUJIT_F64;
  EXPECT_OK(cujit_kernel_specialize(generic, &f32, 1, &k32));
  EXPECT_OK(cujit_kernel_specialize(generic, &f64, 1, &k64));
  EXPECT_OK(cujit_kernel_function(k32, &fn32)); /* loads each on the device */
  EXPECT_OK(cujit_kernel_function(k64, &fn64));
  cr_assert_neq(fn32, fn64, "the stand-in gives each kernel its own function");
}

static void teardown(void) {
  cujit_close(engine);
  engine = NULL;
  cj_scratch_remove();
}

TestSuite(graph_stub, .init = setup, .fini = teardown);

static cujit_buffer *buffer(cujit_dtype dtype) {
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, N * (dtype == CUJIT_F64 ? 8 : 4), dtype, &b));
  return b;
}

static cujit_status launch(cujit_buffer *x, double a, double b, unsigned blocks) {
  cujit_launch_config c = {
      .size = sizeof c, .grid = {blocks, 1, 1}, .block = {128, 1, 1}, .stream = stream};
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(a), CUJIT_ARG_F(b), CUJIT_ARG_I(N)};
  return cujit_launch(generic, &c, args, 4);
}

static cujit_status set(cujit_graph *g, size_t node, cujit_buffer *x, double a, double b) {
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(a), CUJIT_ARG_F(b), CUJIT_ARG_I(N)};
  return cujit_graph_set_args(g, node, args, 4);
}

/* A capture's nodes are counted by kind from what the driver says of each (cuGraphNodeGetType):
** a kernel, a fill, a copy and a kernel again are 2, 1 and 1; the kernels are those of kernel
** nodes alone. */
Test(graph_stub, a_capture_counts_its_nodes_by_the_kind_the_driver_gives) {
  cujit_buffer *x = buffer(CUJIT_F32), *y = buffer(CUJIT_F32);
  cujit_graph *g;
  EXPECT_OK(cujit_capture_begin(stream, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(launch(x, 2, 1, 8));
  EXPECT_OK(cujit_memset(x, 0, 0, 4, stream));
  EXPECT_OK(cujit_memcpy_dtod(y, 0, x, 0, 4 * N, stream));
  EXPECT_OK(launch(y, 3, 1, 8));
  EXPECT_OK(cujit_capture_end(stream, &g));
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 2);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_MEMSET), 1);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_COPY), 1);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_OTHER), 0);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KINDS), 4);
  cr_expect_eq(cujit_graph_kernel(g, 0), k32, "the first node runs axpb's f32 specialisation");
  cr_expect_eq(cujit_graph_kernel(g, 1), k32, "kernel nodes are counted past the fill and copy");
  cr_expect_null(cujit_graph_kernel(g, 2), "two kernel nodes, not four");
  cujit_graph_free(g);
  cujit_buffer_free(y);
  cujit_buffer_free(x);
}

/* Two nodes: axpb(x, a0, b0) on `blocks0` blocks, axpb(y, a1, b1) on `blocks1`. */
static cujit_graph *capture2(cujit_buffer *x, double a0, double b0, unsigned blocks0,
                             cujit_buffer *y, double a1, double b1, unsigned blocks1) {
  cujit_graph *g;
  EXPECT_OK(cujit_capture_begin(stream, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(launch(x, a0, b0, blocks0));
  EXPECT_OK(launch(y, a1, b1, blocks1));
  EXPECT_OK(cujit_capture_end(stream, &g));
  return g;
}

/* Node i of the last replay ran `fn` on `blocks` blocks with (x, a, b, N) of that dtype. */
static void expect_node(size_t i, void *fn, unsigned blocks, cujit_buffer *x, double a, double b,
                        const char *what) {
  node_seen s = replayed(i);
  cr_expect_eq(s.func, fn, "%s: node %zu launches the %s kernel", what, i,
               s.func == fn32   ? "f32"
               : s.func == fn64 ? "f64"
                                : "another");
  cr_expect_eq(s.grid[0], blocks, "%s: node %zu's grid is %u blocks, want %u", what, i, s.grid[0],
               blocks);
  cr_expect_eq(s.block[0], 128, "%s: node %zu's block", what, i);
  cr_expect_eq(s.param[0], cujit_buffer_devptr(x), "%s: node %zu's buffer", what, i);
  if (fn == fn64) {
    cr_expect_eq(s.param[1], f64_bits(a), "%s: node %zu's a", what, i);
    cr_expect_eq(s.param[2], f64_bits(b), "%s: node %zu's b", what, i);
  } else {
    cr_expect_eq((uint32_t)s.param[1], f32_bits((float)a), "%s: node %zu's a", what, i);
    cr_expect_eq((uint32_t)s.param[2], f32_bits((float)b), "%s: node %zu's b", what, i);
  }
}

Test(graph_stub, set_args_after_an_update_reaches_the_graphs_own_node) {
  cujit_buffer *x = buffer(CUJIT_F32), *y = buffer(CUJIT_F32);
  cujit_buffer *d = buffer(CUJIT_F64), *e = buffer(CUJIT_F64);
  cujit_graph *g = capture2(x, 2, 0, 1, y, 1, 1, 3);
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn32, 1, x, 2, 0, "as captured");
  expect_node(1, fn32, 3, y, 1, 1, "as captured");

  cujit_graph *g2 = capture2(d, 3, 4, 8, y, 5, 6, 2); /* node 0: the f64 kernel, 8 blocks */
  EXPECT_OK(cujit_graph_update(g, g2));
  cujit_graph_free(g2); /* its nodes are gone: set_args must name g's own */
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn64, 8, d, 3, 4, "after the update");
  expect_node(1, fn32, 2, y, 5, 6, "after the update");

  EXPECT_OK(set(g, 0, e, 7, 8));
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn64, 8, e, 7, 8, "set_args after the update: the update's kernel and grid");
  expect_node(1, fn32, 2, y, 5, 6, "node 1 untouched by node 0's set_args");

  cr_expect_eq(set(g, 0, x, 1, 1), CUJIT_ERROR_ARGUMENT, "an f32 buffer for the f64 node");
  cr_expect(strstr(cujit_errmsg(engine), "the buffer holds f32 but the parameter points to f64"),
            "message: %s", cujit_errmsg(engine));
  EXPECT_OK(set(g, 1, x, -1, 2));
  EXPECT_OK(cujit_graph_replay(g, stream, 3));
  expect_node(0, fn64, 8, e, 7, 8, "node 0 after the refusal");
  expect_node(1, fn32, 2, x, -1, 2, "node 1's set_args with the update's grid");
  cujit_graph_free(g);
}

Test(graph_stub, set_args_before_the_first_replay_and_updates_in_a_row) {
  cujit_buffer *x = buffer(CUJIT_F32), *y = buffer(CUJIT_F32), *z = buffer(CUJIT_F32);
  cujit_graph *g = capture2(x, 2, 0, 4, y, 1, 1, 5);
  EXPECT_OK(set(g, 1, z, 3, -3)); /* instantiates it */
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn32, 4, x, 2, 0, "node 0 as captured");
  expect_node(1, fn32, 5, z, 3, -3, "node 1 after set_args before the first replay");
  cujit_graph *g2 = capture2(y, 1, 2, 6, x, 3, 4, 7);
  cujit_graph *g3 = capture2(z, 5, 6, 8, y, 7, 8, 9);
  EXPECT_OK(cujit_graph_update(g, g2));
  EXPECT_OK(cujit_graph_update(g, g3)); /* the last update wins, set_args's included */
  EXPECT_OK(set(g, 0, x, -5, 5));
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn32, 8, x, -5, 5, "set_args after two updates");
  expect_node(1, fn32, 9, y, 7, 8, "node 1 from the second update");
  cujit_graph_free(g3);
  cujit_graph_free(g2);
  cujit_graph_free(g);
}

Test(graph_stub, each_reason_an_update_is_refused_is_said) {
  static const struct {
    int result;
    const char *why;
  } reasons[] = {
      {CU_GRAPH_EXEC_UPDATE_ERROR, "the driver cannot update this graph in place"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, "the topology differs (other nodes or edges)"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED,
       "a node is of another kind (a kernel where a copy was, ...)"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED, "a kernel node launches another kernel"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED,
       "a copy or fill changed in a way the driver cannot update (its memory or direction)"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED, "the driver cannot update this graph in place"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE,
       "a kernel node launches another kernel"},
      {CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED, "a node's attributes changed"},
  };
  cujit_buffer *x = buffer(CUJIT_F32), *y = buffer(CUJIT_F32);
  cujit_graph *g = capture2(x, 2, 0, 1, y, 1, 1, 3), *g2 = capture2(y, 3, 4, 5, x, 5, 6, 7);
  EXPECT_OK(cujit_graph_launch(g, stream));
  for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++) {
    char value[16], want[300];
    snprintf(value, sizeof value, "%d", reasons[i].result);
    setenv("CUJIT_STUB_UPDATE_RESULT", value, 1);
    snprintf(want, sizeof want,
             "cujit_graph_update: the new capture is not of the same shape: %s; instantiate the "
             "new graph instead (cujit_graph_instantiate)",
             reasons[i].why);
    EXPECT_REFUSED(cujit_graph_update(g, g2), CUJIT_ERROR_INVALID_ARGUMENT, want);
  }
  unsetenv("CUJIT_STUB_UPDATE_RESULT");
  EXPECT_OK(cujit_graph_launch(g, stream)); /* refused updates left it as it was */
  expect_node(0, fn32, 1, x, 2, 0, "after the refused updates");
  expect_node(1, fn32, 3, y, 1, 1, "after the refused updates");
  EXPECT_OK(cujit_graph_update(g, g2));
  EXPECT_OK(cujit_graph_launch(g, stream));
  expect_node(0, fn32, 5, y, 3, 4, "after the update");
  cujit_graph_free(g2);
  cujit_graph_free(g);
}
