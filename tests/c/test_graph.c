/*
** test_graph.c -- graphs: capture records instead of running, replays run the recorded work in
** order, argument replacement goes through the launch checks, whole-graph update, the calls a
** capture refuses (and the capture still ends cleanly), a fault inside a graph named as such,
** buffers freed before their graph, a capture on one thread while another thread launches on
** another stream, copies through pinned memory recorded (a pageable one refused, invalidating the
** capture), replays queued before cujit_graph_set_args keeping their arguments, and an event
** recorded into a capture. The argument checks that need no device run everywhere; the rest
** through CJ_NEED_DEVICE (on the CPU device when there is no GPU), each result checked against host
** arithmetic.
*/
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "fixture.h"
#include "axpb.h"
#include "gpu.h"

TestSuite(graph, .init = cj_fixture_open, .fini = cj_fixture_close);

#define N 1000

/* x = a x + b in float over the N elements of x, on stream s (axpb.h). */
static cujit_status axpb(cujit_kernel *k, cujit_buffer *x, double a, double b, cujit_stream *s) {
  return cj_axpb_launch(k, x, a, b, N, s);
}

static void fill(float *h, float v) {
  for (int i = 0; i < N; i++) h[i] = v + (float)i;
}

/* Every element of the buffer is what applying `steps` (a, b) pairs to fill(start) gives. */
static void expect_steps(cujit_buffer *x, float start, const float (*steps)[2], int nsteps) {
  float got[N], want[N];
  fill(want, start);
  for (int s = 0; s < nsteps; s++)
    for (int i = 0; i < N; i++) want[i] = steps[s][0] * want[i] + steps[s][1];
  cj_test_download(got, x, sizeof got);
  for (int i = 0; i < N; i++)
    cr_assert_float_eq(got[i], want[i], 1e-3f * (1 + fabsf(want[i])), "x[%d] = %g, want %g", i,
                       got[i], want[i]);
}

static cujit_buffer *upload_filled(float start) {
  float h[N];
  fill(h, start);
  return cj_test_upload(h, sizeof h, CUJIT_F32);
}

/* --- everywhere ------------------------------------------------------------------------------- */

Test(graph, null_handles_are_refused) { /* no engine to hold a message: the status says it */
#define EXPECT_INVALID(call) cr_expect_eq((call), CUJIT_ERROR_INVALID_ARGUMENT, "%s", #call)
  EXPECT_INVALID(cujit_capture_begin(NULL, CUJIT_CAPTURE_RELAXED));
  EXPECT_INVALID(cujit_capture_end(NULL, NULL));
  EXPECT_INVALID(cujit_graph_launch(NULL, NULL));
  EXPECT_INVALID(cujit_graph_replay(NULL, NULL, 3));
  EXPECT_INVALID(cujit_graph_set_args(NULL, 0, NULL, 0));
  EXPECT_INVALID(cujit_graph_update(NULL, NULL));
  EXPECT_INVALID(cujit_graph_dot(NULL, "g.dot"));
  EXPECT_INVALID(cujit_graph_instantiate(NULL));
  cr_expect_eq(cujit_graph_node_count(NULL, CUJIT_GRAPH_NODE_KINDS), 0);
  cr_expect_null(cujit_graph_kernel(NULL, 0));
  cr_expect_null(cujit_graph_device(NULL));
  cr_expect_eq(cujit_stream_capturing(NULL), 0);
  cujit_graph_free(NULL);
}

/* --- on a device (a GPU, else the CPU device) --------------------------------------------------
 */

/* A stream, a loaded kernel and a buffer, for the tests below. */
typedef struct setup {
  cujit_stream *s;
  cujit_kernel *k;
  cujit_buffer *x;
} setup;

static setup make_setup(float start) {
  setup u;
  CJ_NEED_DEVICE(engine);
  EXPECT_OK(cujit_stream_create(engine, &u.s));
  u.k = cj_axpb_define("float");
  u.x = upload_filled(start);
  int block;
  EXPECT_OK(cujit_kernel_suggest_block(u.k, &block, NULL)); /* loads it on the device */
  return u;
}

Test(graph, capture_records_and_replay_runs_in_order) {
  setup u = make_setup(1);
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  cr_expect_eq(cujit_stream_capturing(u.s), 1);
  EXPECT_OK(axpb(u.k, u.x, 2, 1, u.s));
  EXPECT_OK(cujit_memset(u.x, 0, 0, 4, u.s)); /* x[0] = 0 */
  EXPECT_OK(axpb(u.k, u.x, 0.5, -3, u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  cr_expect_eq(cujit_stream_capturing(u.s), 0);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 2);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_MEMSET), 1);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KINDS), 3);
  cr_expect_eq(cujit_graph_kernel(g, 1), u.k);
  cr_expect_null(cujit_graph_kernel(g, 2));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  expect_steps(u.x, 1, NULL, 0); /* captured, not run */
  EXPECT_OK(cujit_graph_replay(g, u.s, 3));
  EXPECT_OK(cujit_stream_synchronize(u.s)); /* cujit streams do not wait for the default one */
  EXPECT_OK(cujit_graph_launch(g, NULL));   /* the default stream: returns when done */
  EXPECT_OK(cujit_device_synchronize(cujit_graph_device(g)));
  /* Each replay: x = 2x + 1, x[0] = 0, x = x / 2 - 3; so x[0] ends at -3 whatever came before. */
  float h[N], want1 = 2;
  for (int r = 0; r < 4; r++) want1 = 0.5f * (2 * want1 + 1) - 3;
  cj_test_download(h, u.x, sizeof h);
  cr_expect_float_eq(h[0], -3, 1e-6f, "x[0] = %g", h[0]);
  cr_expect_float_eq(h[1], want1, 1e-4f, "x[1] = %g, want %g", h[1], want1);
  char path[sizeof cj_scratch + 16];
  snprintf(path, sizeof path, "%s/g.dot", cj_scratch);
  EXPECT_OK(cujit_graph_dot(g, path));
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  static char text[1 << 16];
  size_t got = fread(text, 1, sizeof text - 1, f);
  text[got] = '\0';
  fclose(f);
  cr_expect(strstr(text, "digraph") != NULL, "dot output starts: %.200s", text);
  if (cujit_device_ordinal(cujit_graph_device(g)) == -1) {
    /* The CPU device writes it itself: each node in capture order, each after the one before. */
    char want[1024];
    snprintf(want, sizeof want,
             "digraph cujit_cpu_graph {\n  node [shape=box];\n"
             "  n0 [label=\"0: kernel axpb\\ngrid (%d,1,1) block (128,1,1) shared 0\"];\n"
             "  n1 [label=\"1: memset 4 bytes to 0x00\"];\n  n0 -> n1;\n"
             "  n2 [label=\"2: kernel axpb\\ngrid (%d,1,1) block (128,1,1) shared 0\"];\n"
             "  n1 -> n2;\n}\n",
             (N + 127) / 128, (N + 127) / 128);
    cr_expect_str_eq(text, want);
  } else { /* the driver's own (cuGraphDebugDotPrint): its three nodes, two edges between them */
    int edges = 0;
    for (const char *p = text; (p = strstr(p, "->")); p += 2) edges++;
    cr_expect_geq(edges, 2, "%d edges in the driver's dot output:\n%.2000s", edges, text);
  }
  /* a directory that is not there: refused with the path, nothing written */
  snprintf(path, sizeof path, "%s/none/g.dot", cj_scratch);
  char want[sizeof path + 128];
  snprintf(want, sizeof want,
           "cujit_graph_dot: could not write '%s'; check that its directory exists and is "
           "writable",
           path);
  EXPECT_REFUSED(cujit_graph_dot(g, path), CUJIT_ERROR_IO, want);
  cujit_graph_free(g);
}

Test(graph, set_args_checks_like_a_launch) {
  setup u = make_setup(1);
  cujit_buffer *y = upload_filled(10), *d;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(double), CUJIT_F64, &d));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  cujit_arg bad_n[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_F(3), CUJIT_ARG_F(1), CUJIT_ARG_F(2.5)};
  EXPECT_FAIL(cujit_graph_set_args(g, 0, bad_n, 4), CUJIT_ERROR_ARGUMENT, "argument 4 'n'");
  cujit_arg bad_dtype[] = {CUJIT_ARG_BUF(d), CUJIT_ARG_F(3), CUJIT_ARG_F(1), CUJIT_ARG_I(N)};
  EXPECT_FAIL(cujit_graph_set_args(g, 0, bad_dtype, 4), CUJIT_ERROR_ARGUMENT, "holds f64");
  cujit_arg range[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_F(1e300), CUJIT_ARG_F(1), CUJIT_ARG_I(N)};
  EXPECT_FAIL(cujit_graph_set_args(g, 0, range, 4), CUJIT_ERROR_ARGUMENT, "out of range");
  EXPECT_FAIL(cujit_graph_set_args(g, 0, range, 3), CUJIT_ERROR_ARGUMENT, "4");
  EXPECT_FAIL(cujit_graph_set_args(g, 1, range, 4), CUJIT_ERROR_INVALID_ARGUMENT, "1 kernel node");
  cujit_arg good[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_F(3), CUJIT_ARG_F(1), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_graph_set_args(g, 0, good, 4));
  EXPECT_OK(cujit_graph_replay(g, u.s, 2));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  static const float twice[][2] = {{3, 1}, {3, 1}};
  expect_steps(y, 10, twice, 2);
  expect_steps(u.x, 1, NULL, 0); /* the old argument is no longer used */
  cujit_graph_free(g);
}

Test(graph, update_from_a_capture_of_the_same_shape) {
  setup u = make_setup(1);
  cujit_buffer *y = upload_filled(5);
  cujit_graph *g, *g2, *g3;
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &g));
  EXPECT_OK(cujit_graph_instantiate(g));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_THREAD_LOCAL));
  EXPECT_OK(axpb(u.k, y, -1, 4, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &g2));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_GLOBAL));
  EXPECT_OK(axpb(u.k, y, -1, 4, u.s));
  EXPECT_OK(axpb(u.k, y, -1, 4, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &g3));
  EXPECT_FAIL(cujit_graph_update(g, g3), CUJIT_ERROR_INVALID_ARGUMENT, "same");
  EXPECT_OK(cujit_graph_update(g, g2));
  cujit_graph_free(g2); /* g holds its own copy of the parameters */
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  static const float once[][2] = {{-1, 4}};
  expect_steps(y, 5, once, 1);
  expect_steps(u.x, 1, NULL, 0);
  cujit_arg good[] = {CUJIT_ARG_BUF(u.x), CUJIT_ARG_F(-1), CUJIT_ARG_F(4), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_graph_set_args(g, 0, good, 4)); /* nodes still addressable after the update */
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  expect_steps(u.x, 1, once, 1);
  cujit_graph_free(g);
  cujit_graph_free(g3);
}

/* The kernels alike, the other nodes not: the device's own comparison of the nodes refuses it. */
Test(graph, update_refuses_a_capture_whose_other_nodes_differ) {
  setup u = make_setup(1);
  cujit_buffer *y = upload_filled(5);
  cujit_graph *g, *fewer, *first_differs;
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_memset(y, 0, 0, 4, u.s));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &g));
  EXPECT_OK(cujit_graph_instantiate(g));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED)); /* the kernel without the memset */
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &fewer));
  EXPECT_FAIL(cujit_graph_update(g, fewer), CUJIT_ERROR_INVALID_ARGUMENT, "topology differs");
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED)); /* a copy where the memset was */
  EXPECT_OK(cujit_memcpy_dtod(y, 0, u.x, 0, 4, u.s));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  EXPECT_OK(cujit_capture_end(u.s, &first_differs));
  EXPECT_FAIL(cujit_graph_update(g, first_differs), CUJIT_ERROR_INVALID_ARGUMENT,
              "a node is of another kind");
  EXPECT_OK(cujit_graph_launch(g, u.s)); /* still the graph it was */
  EXPECT_OK(cujit_stream_synchronize(u.s));
  float h[2];
  cj_test_download(h, y, sizeof h);
  cr_expect_float_eq(h[0], 0, 0, "the memset ran, not the copy");
  cr_expect_float_eq(h[1], 6, 0);
  cujit_graph_free(g);
  cujit_graph_free(fewer);
  cujit_graph_free(first_differs);
}

Test(graph, refused_calls_name_the_way_out_and_the_capture_ends) {
  setup u = make_setup(1);
  cujit_kernel *fresh;
  EXPECT_OK(cujit_kernel_define(engine, "fresh(float *x)", "x[0] = 7;", NULL, NULL, &fresh));
  cujit_scalar sum = CUJIT_SCALAR_INIT;
  EXPECT_OK(cujit_reduce(u.x, CUJIT_REDUCE_SUM, N, &sum, NULL)); /* its kernels loaded */
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_FAIL(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED), CUJIT_ERROR_INVALID_ARGUMENT,
              "already capturing");
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  cujit_launch_config c = {
      .size = sizeof c, .grid = {1, 1, 1}, .block = {1, 1, 1}, .shared_bytes = 0, .stream = u.s};
  cujit_arg a[] = {CUJIT_ARG_BUF(u.x)};
  EXPECT_FAIL(cujit_launch(fresh, &c, a, 1), CUJIT_ERROR_UNSUPPORTED, "launch it once");
  EXPECT_FAIL(cujit_reduce(u.x, CUJIT_REDUCE_SUM, N, &sum, u.s), CUJIT_ERROR_UNSUPPORTED,
              "returns its value to the host");
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g)); /* refused before the driver: the capture is intact */
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 1);
  EXPECT_FAIL(cujit_capture_end(u.s, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "not capturing");
  /* A wait on the capturing stream is refused before the driver: the capture goes on. */
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_FAIL(cujit_stream_synchronize(u.s), CUJIT_ERROR_UNSUPPORTED, "captures a graph");
  EXPECT_FAIL(cujit_stream_query(u.s), CUJIT_ERROR_UNSUPPORTED, "captures a graph");
  EXPECT_OK(cujit_device_synchronize(cujit_stream_device(u.s))); /* skips the capturing stream */
  EXPECT_OK(cujit_capture_end(u.s, NULL));                       /* discarded */
  cr_expect_eq(cujit_stream_capturing(u.s), 0);
  EXPECT_OK(cujit_launch(fresh, &c, a, 1)); /* the stream works again */
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  float h[2];
  cj_test_download(h, u.x, sizeof h);
  cr_expect_float_eq(h[0], 14, 1e-6f);
  cr_expect_float_eq(h[1], 4, 1e-6f);
  cujit_graph_free(g);
}

Test(graph, a_fault_inside_a_graph_is_named_as_such) {
  setup u = make_setup(1);
  cujit_kernel *poke;
  EXPECT_OK(cujit_kernel_define(engine, "poke(unsigned long long addr)",
                                "*(volatile int *)addr = 1;", NULL, NULL, &poke));
  EXPECT_OK(cujit_kernel_suggest_block(poke, &(int){0}, NULL));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  cujit_launch_config c = {
      .size = sizeof c, .grid = {1, 1, 1}, .block = {1, 1, 1}, .shared_bytes = 0, .stream = u.s};
  cujit_arg a[] = {CUJIT_ARG_U(0)};
  EXPECT_OK(cujit_launch(poke, &c, a, 1));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  cujit_status st = cujit_graph_launch(g, u.s);
  if (st == CUJIT_OK) st = cujit_stream_synchronize(u.s);
  cr_expect_eq(st, CUJIT_ERROR_DEVICE_FAULT, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "cujit_graph") != NULL, "%s", cujit_errmsg(engine));
  cujit_graph_free(g); /* freeing on a faulted device is fine */
}

Test(graph, buffers_freed_before_their_graph) {
  setup u = make_setup(1);
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  cujit_buffer_free(u.x);
  cujit_graph_free(g);
  cujit_buffer *y = upload_filled(3); /* the device goes on */
  EXPECT_OK(axpb(u.k, y, 2, 0, NULL));
  static const float once[][2] = {{2, 0}};
  expect_steps(y, 3, once, 1);
}

/* One thread captures on its stream while another launches and waits on its own. */
typedef struct other_thread {
  cujit_kernel *k;
  cujit_buffer *y;
  cujit_stream *s;
  pthread_barrier_t *captured;
  cujit_status st;
} other_thread;

static void *launch_meanwhile(void *p) {
  other_thread *t = p;
  pthread_barrier_wait(t->captured); /* the capture has begun */
  t->st = CUJIT_OK;
  for (int i = 0; i < 10 && t->st == CUJIT_OK; i++) t->st = axpb(t->k, t->y, 1, 1, t->s);
  if (t->st == CUJIT_OK) t->st = cujit_stream_synchronize(t->s);
  pthread_barrier_wait(t->captured); /* done: the capture may end */
  return NULL;
}

Test(graph, capture_on_one_thread_while_another_launches) {
  setup u = make_setup(1);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, 2);
  other_thread t = {u.k, upload_filled(100), NULL, &barrier, CUJIT_OK};
  EXPECT_OK(cujit_stream_create(engine, &t.s));
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, launch_meanwhile, &t), 0);
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < 5; i++) EXPECT_OK(axpb(u.k, u.x, 1, 2, u.s));
  pthread_barrier_wait(&barrier);
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  pthread_join(th, NULL);
  pthread_barrier_destroy(&barrier);
  cr_expect_eq(t.st, CUJIT_OK, "the other thread: %s", cujit_errmsg(engine));
  float steps[10][2];
  for (int i = 0; i < 10; i++) steps[i][0] = 1, steps[i][1] = 1;
  expect_steps(t.y, 100, (const float(*)[2])steps, 10);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 5);
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_stream_synchronize(u.s));
  for (int i = 0; i < 5; i++) steps[i][0] = 1, steps[i][1] = 2;
  expect_steps(u.x, 1, (const float(*)[2])steps, 5);
  cujit_graph_free(g);
}

Test(graph, copies_through_pinned_memory_are_recorded_and_read_at_each_replay) {
  setup u = make_setup(1);
  cujit_host_buffer *in, *out;
  EXPECT_OK(cujit_host_alloc(engine, N * sizeof(float), &in));
  EXPECT_OK(cujit_host_alloc(engine, N * sizeof(float), &out));
  float *hin = cujit_host_ptr(in), *hout = cujit_host_ptr(out);
  cujit_buffer *y;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(float), CUJIT_F32, &y));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_memcpy_htod(u.x, 0, hin, N * sizeof(float), u.s));
  EXPECT_OK(axpb(u.k, u.x, 3, -1, u.s));
  EXPECT_OK(cujit_memcpy_dtod(y, 0, u.x, 0, N * sizeof(float), u.s));
  EXPECT_OK(cujit_memset(y, 0, 0, 2 * sizeof(float), u.s)); /* y[0] = y[1] = 0 */
  EXPECT_OK(cujit_memcpy_dtoh(hout, y, 0, N * sizeof(float), u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_COPY), 3);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KERNEL), 1);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_MEMSET), 1);
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KINDS), 5);
  for (int round = 0; round < 3; round++) { /* new input each round: read when the replay runs */
    for (int i = 0; i < N; i++) hin[i] = (float)(round * 1000 + i), hout[i] = -12345;
    EXPECT_OK(cujit_graph_launch(g, u.s));
    EXPECT_OK(cujit_stream_synchronize(u.s));
    for (int i = 0; i < N; i++) {
      float want = i < 2 ? 0 : 3 * (float)(round * 1000 + i) - 1;
      cr_assert_float_eq(hout[i], want, 1e-3f, "round %d: out[%d] = %g, want %g", round, i, hout[i],
                         want);
    }
  }
  cujit_graph_free(g);
  cujit_host_free(in);
  cujit_host_free(out);
}

Test(graph, a_pageable_copy_is_refused_and_invalidates_the_capture) {
  /* A GPU's driver records the copy, reading the memory at each replay: only the CPU device
  ** refuses it. Skipped before anything is made: a skip ends the case without its .fini, leaving
  ** what the setup made to the process's exit (compute-sanitizer reports it leaked). */
  cujit_device *gpu;
  if (cujit_device_get(engine, 0, &gpu) == CUJIT_OK)
    cr_skip_test("the CPU device's refusal: a GPU's driver records a copy from pageable memory");
  setup u = make_setup(1);
  cr_assert(cj_test_on_cpu(engine));
  static float pageable[N];
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u.k, u.x, 2, 0, u.s));
  EXPECT_FAIL(cujit_memcpy_htod(u.x, 0, pageable, sizeof pageable, u.s), CUJIT_ERROR_UNSUPPORTED,
              "cujit_host_alloc");
  EXPECT_FAIL(axpb(u.k, u.x, 2, 0, u.s), CUJIT_ERROR_UNSUPPORTED, "invalidated");
  cujit_graph *g = NULL;
  EXPECT_FAIL(cujit_capture_end(u.s, &g), CUJIT_ERROR_UNSUPPORTED, "invalidated");
  cr_expect_null(g);
  cr_expect_eq(cujit_stream_capturing(u.s), 0);
  EXPECT_OK(cujit_memcpy_dtoh(pageable, u.x, 0, sizeof pageable, u.s)); /* the stream works */
  EXPECT_OK(cujit_stream_synchronize(u.s));
  expect_steps(u.x, 1, NULL, 0); /* nothing of the capture ran */
  cr_expect_float_eq(pageable[5], 6, 1e-6f, "pageable[5] = %g", pageable[5]);
}

Test(graph, replays_queued_before_set_args_keep_their_arguments) {
  setup u = make_setup(1);
  cujit_buffer *y = upload_filled(2);
  cujit_stream *other;
  EXPECT_OK(cujit_stream_create(engine, &other));
  EXPECT_OK(cujit_capture_begin(u.s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u.k, u.x, 1, 1, u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  enum { QUEUED = 300 };
  EXPECT_OK(cujit_graph_replay(g, u.s, QUEUED / 2)); /* still queued, most of them, below */
  EXPECT_OK(cujit_graph_replay(g, other, QUEUED / 2));
  cujit_arg to_y[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_F(2), CUJIT_ARG_F(0), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_graph_set_args(g, 0, to_y, 4));
  EXPECT_OK(cujit_graph_replay(g, u.s, 2));
  cujit_graph_free(g); /* replays already queued complete */
  EXPECT_OK(cujit_device_synchronize(cujit_stream_device(u.s)));
  float h[N];
  cj_test_download(h, u.x, sizeof h);
  for (int i = 0; i < N; i++)
    cr_assert_float_eq(h[i], 1 + (float)i + QUEUED, 1e-3f, "x[%d] = %g after %d replays", i, h[i],
                       QUEUED);
  static const float twice[][2] = {{2, 0}, {2, 0}};
  expect_steps(y, 2, twice, 2);
  cujit_stream_free(other);
}

/* A capture begun on u's stream: x = 2x, then an event recorded (a point of the capture, as the
** driver has it). */
static cujit_event *capture_with_event(const setup *u) {
  cujit_event *e;
  EXPECT_OK(cujit_event_create(engine, &e));
  EXPECT_OK(cujit_capture_begin(u->s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(axpb(u->k, u->x, 2, 0, u->s));
  EXPECT_OK(cujit_event_record(e, u->s));
  return e;
}

Test(graph, an_event_recorded_into_a_capture_adds_no_node) {
  setup u = make_setup(1);
  cujit_event *e = capture_with_event(&u);
  EXPECT_OK(axpb(u.k, u.x, 1, 1, u.s));
  cujit_graph *g;
  EXPECT_OK(cujit_capture_end(u.s, &g));
  cr_expect_eq(cujit_graph_node_count(g, CUJIT_GRAPH_NODE_KINDS), 2);
  EXPECT_OK(cujit_graph_launch(g, u.s));
  EXPECT_OK(cujit_event_record(e, u.s)); /* outside a capture: a point of the device's work */
  EXPECT_OK(cujit_event_synchronize(e));
  static const float steps[][2] = {{2, 0}, {1, 1}};
  expect_steps(u.x, 1, steps, 2);
  cujit_graph_free(g);
  cujit_event_free(e);
}

Test(graph, waiting_for_an_event_recorded_into_a_capture_is_refused) {
  setup u = make_setup(1);
  cujit_event *e = capture_with_event(&u);
  EXPECT_FAIL(cujit_event_synchronize(e), CUJIT_ERROR_UNSUPPORTED, "captur");
  if (cj_test_on_cpu(engine))
    EXPECT_FAIL(cujit_event_query(e), CUJIT_ERROR_UNSUPPORTED, "captur");
  else /* the driver refuses it as an invalid value, in its own words */
    cr_expect_neq(cujit_event_query(e), CUJIT_OK);
  cujit_capture_end(u.s, NULL); /* its status is the driver's to choose: the refusals may count */
  cr_expect_eq(cujit_stream_capturing(u.s), 0);
  cujit_event_free(e);
}
