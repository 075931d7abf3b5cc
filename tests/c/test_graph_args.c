/*
** test_graph_args.c -- a graph's arguments changed in every order: cujit_graph_set_args before
** and after cujit_graph_update (the update replaces what set_args gave, a later set_args changes
** one node of the updated graph and leaves the other with the update's), set_args and update
** while earlier replays are still queued (each replay runs with the arguments it was queued with),
** a refused set_args or update leaving the graph as it was, and buffers of another
** specialisation of a generic kernel refused with the message, whatever the order. Each buffer is
** checked against the host's arithmetic. On a GPU when there is one, else on the CPU device.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "axpb.h"
#include "gpu.h"

TestSuite(graph_args, .init = cj_fixture_open, .fini = cj_fixture_close);

#define N 512

/* A buffer of N floats and its host mirror: every kernel run is applied to both. */
typedef struct vec {
  cujit_buffer *b;
  float h[N];
} vec;

static void vec_make(vec *v, float start) {
  for (int i = 0; i < N; i++) v->h[i] = start + (float)(i % 17);
  v->b = cj_test_upload(v->h, sizeof v->h, CUJIT_F32);
}

/* x = a x + b on the host mirror (small integers: exact in float, any order). */
static void host_axpb(vec *v, float a, float b) {
  for (int i = 0; i < N; i++) v->h[i] = a * v->h[i] + b;
}

static void vec_check(const vec *v, const char *what) {
  float got[N];
  cj_test_download(got, v->b, sizeof got);
  for (int i = 0; i < N; i++)
    cr_assert_eq(got[i], v->h[i], "%s: [%d] = %g, want %g", what, i, got[i], v->h[i]);
}

/* x = a x + b over the N elements of x, on stream s (axpb.h). */
static cujit_status launch(cujit_kernel *k, cujit_buffer *x, double a, double b, cujit_stream *s) {
  return cj_axpb_launch(k, x, a, b, N, s);
}

static cujit_status set(cujit_graph *g, size_t node, cujit_buffer *x, double a, double b) {
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(a), CUJIT_ARG_F(b), CUJIT_ARG_I(N)};
  return cujit_graph_set_args(g, node, args, 4);
}

static cujit_stream *stream;
static cujit_kernel *kernel;

/* A device, a stream, the generic kernel loaded for f32 buffers (a capture cannot compile). */
static void setup(void) {
  CJ_NEED_DEVICE(engine);
  EXPECT_OK(cujit_stream_create(engine, &stream));
  kernel = cj_axpb_define("T");
  vec warm;
  vec_make(&warm, 0);
  EXPECT_OK(launch(kernel, warm.b, 1, 0, stream));
  EXPECT_OK(cujit_stream_synchronize(stream));
}

/* A graph of two kernel nodes: node 0 = axpb(x, a0, b0), node 1 = axpb(y, a1, b1). */
static cujit_graph *capture2(cujit_buffer *x, float a0, float b0, cujit_buffer *y, float a1,
                             float b1) {
  cujit_graph *g;
  EXPECT_OK(cujit_capture_begin(stream, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(launch(kernel, x, a0, b0, stream));
  EXPECT_OK(launch(kernel, y, a1, b1, stream));
  EXPECT_OK(cujit_capture_end(stream, &g));
  return g;
}

static void replay(cujit_graph *g, size_t times) {
  EXPECT_OK(cujit_graph_replay(g, stream, times));
  EXPECT_OK(cujit_stream_synchronize(stream));
}

Test(graph_args, set_args_then_update_then_set_args) {
  setup();
  vec x, y, z, w;
  vec_make(&x, 1), vec_make(&y, 2), vec_make(&z, 3), vec_make(&w, 4);
  cujit_graph *g = capture2(x.b, 2, 0, y.b, 1, 1);
  EXPECT_OK(set(g, 1, z.b, 3, 0)); /* before the first replay: node 1 now scales z */
  replay(g, 1);
  host_axpb(&x, 2, 0), host_axpb(&z, 3, 0);
  vec_check(&x, "node 0 as captured"), vec_check(&z, "node 1 after set_args"),
      vec_check(&y, "y, replaced by set_args");

  cujit_graph *g2 = capture2(y.b, -1, 4, x.b, 1, -1);
  EXPECT_OK(cujit_graph_update(g, g2)); /* the update's arguments replace set_args's too */
  cujit_graph_free(g2);
  replay(g, 2);
  host_axpb(&y, -1, 4), host_axpb(&x, 1, -1), host_axpb(&y, -1, 4), host_axpb(&x, 1, -1);
  vec_check(&y, "node 0 after the update"), vec_check(&x, "node 1 after the update"),
      vec_check(&z, "z, no longer in the graph");

  EXPECT_OK(set(g, 0, w.b, 2, 1)); /* after the update: node 0 only */
  replay(g, 1);
  host_axpb(&w, 2, 1), host_axpb(&x, 1, -1);
  vec_check(&w, "node 0 after set_args following the update");
  vec_check(&x, "node 1 keeps the update's arguments");
  vec_check(&y, "y, replaced in node 0");
  EXPECT_OK(set(g, 0, w.b, 1, 5)); /* set twice: the last wins */
  EXPECT_OK(set(g, 0, w.b, -2, 0));
  replay(g, 1);
  host_axpb(&w, -2, 0), host_axpb(&x, 1, -1);
  vec_check(&w, "the second of two set_args");
  vec_check(&x, "node 1 after node 0's set_args");
  cujit_graph_free(g);
}

Test(graph_args, update_before_the_first_replay_and_twice) {
  setup();
  vec x, y;
  vec_make(&x, 1), vec_make(&y, 2);
  cujit_graph *g = capture2(x.b, 2, 0, y.b, 2, 0);
  cujit_graph *g2 = capture2(y.b, 1, 3, x.b, 1, 5);
  cujit_graph *g3 = capture2(x.b, -1, 0, y.b, 1, -7);
  EXPECT_OK(cujit_graph_update(g, g2)); /* never launched nor instantiated yet */
  EXPECT_OK(cujit_graph_update(g, g3)); /* the second update replaces the first */
  replay(g, 1);
  host_axpb(&x, -1, 0), host_axpb(&y, 1, -7);
  vec_check(&x, "node 0 from the second update"), vec_check(&y, "node 1 from the second update");
  EXPECT_OK(set(g, 1, x.b, 3, 0));
  EXPECT_OK(cujit_graph_update(g, g2)); /* after set_args: the update wins again */
  replay(g, 1);
  host_axpb(&y, 1, 3), host_axpb(&x, 1, 5);
  vec_check(&y, "node 0 from g2 again"), vec_check(&x, "node 1 from g2, not set_args");
  cujit_graph_free(g2);
  cujit_graph_free(g3);
  replay(g, 1); /* the captures it took its parameters from are gone */
  host_axpb(&y, 1, 3), host_axpb(&x, 1, 5);
  vec_check(&y, "after freeing g2"), vec_check(&x, "after freeing g2 (node 1)");
  cujit_graph_free(g);
}

/* Replays queued before a change run as they were queued: set_args and update each affect only
** the replays queued after them (CUDA: "already enqueued launches are not affected"). */
Test(graph_args, changes_while_replays_are_queued) {
  setup();
  vec x, y, z;
  vec_make(&x, 1), vec_make(&y, 2), vec_make(&z, 3);
  cujit_graph *g = capture2(x.b, 1, 1, y.b, 1, 2);
  enum { QUEUED = 200 };
  EXPECT_OK(cujit_graph_replay(g, stream, QUEUED)); /* mostly still queued below */
  EXPECT_OK(set(g, 0, z.b, 1, 3));
  EXPECT_OK(cujit_graph_replay(g, stream, 2));
  cujit_graph *g2 = capture2(y.b, 1, -1, z.b, 1, 10);
  EXPECT_OK(cujit_graph_update(g, g2));
  EXPECT_OK(cujit_graph_replay(g, stream, 3));
  EXPECT_OK(set(g, 1, x.b, 1, 100));
  EXPECT_OK(cujit_graph_launch(g, stream));
  cujit_graph_free(g2);
  cujit_graph_free(g); /* queued replays complete */
  EXPECT_OK(cujit_stream_synchronize(stream));
  for (int r = 0; r < QUEUED; r++) host_axpb(&x, 1, 1), host_axpb(&y, 1, 2);
  for (int r = 0; r < 2; r++) host_axpb(&z, 1, 3), host_axpb(&y, 1, 2);
  for (int r = 0; r < 3; r++) host_axpb(&y, 1, -1), host_axpb(&z, 1, 10);
  host_axpb(&y, 1, -1), host_axpb(&x, 1, 100);
  vec_check(&x, "x: the queued replays, then the last set_args");
  vec_check(&y, "y: node 1 until the update, node 0 after it");
  vec_check(&z, "z: set_args's node 0, then the update's node 1");
}

Test(graph_args, refusals_leave_the_graph_as_it_was) {
  setup();
  vec x, y, z;
  vec_make(&x, 1), vec_make(&y, 2), vec_make(&z, 3);
  cujit_graph *g = capture2(x.b, 2, 0, y.b, 1, 1);
  EXPECT_OK(set(g, 0, z.b, 1, 2));
  EXPECT_FAIL(set(g, 2, x.b, 5, 5), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_graph_set_args: the graph has 2 kernel nodes (counted from 0 in capture "
              "order), so there is no node 2");
  EXPECT_FAIL(set(g, 0, x.b, 1e300, 0), CUJIT_ERROR_ARGUMENT, "out of range");
  cujit_arg three[] = {CUJIT_ARG_BUF(x.b), CUJIT_ARG_F(5), CUJIT_ARG_F(5)};
  EXPECT_FAIL(cujit_graph_set_args(g, 0, three, 3), CUJIT_ERROR_ARGUMENT, "4");
  EXPECT_FAIL(cujit_graph_set_args(g, 0, NULL, 4), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_graph_set_args: args is NULL");
  cujit_graph *one;
  EXPECT_OK(cujit_capture_begin(stream, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(launch(kernel, x.b, 9, 9, stream));
  EXPECT_OK(cujit_capture_end(stream, &one));
  EXPECT_FAIL(cujit_graph_update(g, one), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_graph_update: the new capture launched 1 kernels, the graph 2; the shape "
              "must be the same");
  EXPECT_FAIL(cujit_graph_update(g, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "`from` must be a graph captured on the same device");
  cujit_graph *copies; /* a capture of no kernel: nothing to set */
  EXPECT_OK(cujit_capture_begin(stream, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_memset(x.b, 0, 0, sizeof(float), stream));
  EXPECT_OK(cujit_capture_end(stream, &copies));
  EXPECT_FAIL(set(copies, 0, x.b, 1, 1), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_graph_set_args: the graph has no kernel nodes: its capture launched no "
              "kernel");
  cujit_graph_free(copies);
  replay(g, 1); /* still set_args's node 0 and the captured node 1 */
  host_axpb(&z, 1, 2), host_axpb(&y, 1, 1);
  vec_check(&z, "node 0 after the refusals"), vec_check(&y, "node 1 after the refusals");
  vec_check(&x, "x, named only by refused calls");
  cujit_graph_free(one);
  cujit_graph_free(g);
}

/* The graph launches the f32 specialisation of a generic kernel (the f64 one exists too): f64
** buffers are refused, saying so, before and after an update and after a good set_args; the graph
** runs on as it was. */
Test(graph_args, buffers_of_another_specialisation) {
  setup();
  vec x, y;
  vec_make(&x, 1), vec_make(&y, 2);
  double hd[N];
  for (int i = 0; i < N; i++) hd[i] = i;
  cujit_buffer *d = cj_test_upload(hd, sizeof hd, CUJIT_F64);
  cujit_kernel *k64;
  cujit_dtype f64 = CUJIT_F64;
  EXPECT_OK(cujit_kernel_specialize(kernel, &f64, 1, &k64));
  cujit_graph *g = capture2(x.b, 2, 0, y.b, 1, 1);
  /* The node holds the f32 specialisation: the launch check names the buffer's dtype. */
  const char *why = "kernel 'axpb', argument 1 'x' (float *): the buffer holds f64 but the "
                    "parameter points to f32";
  EXPECT_FAIL(set(g, 0, d, 1, 1), CUJIT_ERROR_ARGUMENT, why);
  replay(g, 1);
  host_axpb(&x, 2, 0), host_axpb(&y, 1, 1);
  vec_check(&x, "node 0 after the refused f64 buffer");
  EXPECT_OK(set(g, 0, y.b, 3, 0));
  EXPECT_FAIL(set(g, 0, d, 1, 1), CUJIT_ERROR_ARGUMENT, why);
  cujit_graph *g2 = capture2(y.b, 1, 1, x.b, 1, 2);
  EXPECT_OK(cujit_graph_update(g, g2));
  EXPECT_FAIL(set(g, 0, d, 1, 1), CUJIT_ERROR_ARGUMENT, why);
  replay(g, 1);
  host_axpb(&y, 1, 1), host_axpb(&x, 1, 2);
  vec_check(&y, "node 0 from the update"), vec_check(&x, "node 1 from the update");
  double got[N];
  cj_test_download(got, d, sizeof got);
  for (int i = 0; i < N; i++)
    cr_assert_eq(got[i], (double)i, "the f64 buffer was written: [%d]", i);
  cujit_graph_free(g2);
  cujit_graph_free(g);
}
