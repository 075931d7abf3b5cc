/*
** bench_graph.c -- graphs on the CPU device against plain launches, through the public API: an
** empty kernel (one block of 32 threads) launched L times on a stream, then graphs of 1, 10, 100
** and 1000 such nodes replayed until L nodes have run (and two graphs of one node replayed in
** turn, so that no replay joins the one queued before it). For each: the host time per kernel (the
** calls alone) and the time per kernel until the stream is done (the queue thread's work
** included). Prints figures; asserts nothing.
**
** Build by hand after a normal build:
**   cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude scripts/bench/cpu/bench_graph.c \
**      -Lbuild -lcujit -Wl,-rpath,$PWD/build -o build/bench_graph
**   build/bench_graph [L]        (L: kernels per measurement, default 100000)
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cujit.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void check(cujit_engine *e, cujit_status st, const char *what) {
  if (st == CUJIT_OK) return;
  fprintf(stderr, "%s: %s\n", what, cujit_errmsg(e));
  exit(1);
}

static cujit_status empty_launch(cujit_kernel *k, cujit_buffer *x, cujit_stream *s) {
  cujit_launch_config c = {
      .size = sizeof c, .grid = {1, 1, 1}, .block = {32, 1, 1}, .shared_bytes = 0, .stream = s};
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(1)};
  return cujit_launch(k, &c, args, 2);
}

/* The best of 5 runs: host microseconds per kernel, and until the stream is done. */
static void report(const char *what, double host[5], double done[5]) {
  double h = host[0], d = done[0];
  for (int i = 1; i < 5; i++) h = host[i] < h ? host[i] : h, d = done[i] < d ? done[i] : d;
  printf("| %-22s | %8.3f | %8.3f |\n", what, h, d);
}

int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 100000;
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  check(e, cujit_set_device(e, CUJIT_DEVICE_CPU), "cujit_set_device");
  cujit_kernel *k;
  check(e,
        cujit_kernel_define(e, "empty(float *x, int n)", "if (n < 0) x[threadIdx.x] = 0;", NULL,
                            NULL, &k),
        "define");
  cujit_buffer *x;
  cujit_stream *s;
  check(e, cujit_buffer_alloc(e, 32 * sizeof(float), CUJIT_F32, &x), "alloc");
  check(e, cujit_stream_create(e, &s), "stream");
  check(e, empty_launch(k, x, s), "launch");
  check(e, cujit_stream_synchronize(s), "synchronize");
  printf("%ld kernels per run, best of 5; microseconds per kernel\n\n", total);
  printf("| %-22s | %8s | %8s |\n| --- | --- | --- |\n", "how", "host", "done");
  double host[5], done[5];
  for (int r = 0; r < 5; r++) {
    double t0 = now_us();
    for (long i = 0; i < total; i++) check(e, empty_launch(k, x, s), "launch");
    double t1 = now_us();
    check(e, cujit_stream_synchronize(s), "synchronize");
    host[r] = (t1 - t0) / (double)total, done[r] = (now_us() - t0) / (double)total;
  }
  report("launches", host, done);
  /* Two graphs of one node replayed in turn: no replay joins the one queued before it. */
  cujit_graph *pair[2];
  for (int j = 0; j < 2; j++) {
    check(e, cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED), "capture");
    check(e, empty_launch(k, x, s), "captured launch");
    check(e, cujit_capture_end(s, &pair[j]), "capture end");
    check(e, cujit_graph_instantiate(pair[j]), "instantiate");
  }
  for (int r = 0; r < 5; r++) {
    double t0 = now_us();
    for (long i = 0; i < total; i++) check(e, cujit_graph_launch(pair[i & 1], s), "replay");
    double t1 = now_us();
    check(e, cujit_stream_synchronize(s), "synchronize");
    host[r] = (t1 - t0) / (double)total, done[r] = (now_us() - t0) / (double)total;
  }
  report("2 graphs of 1, in turn", host, done);
  static const long sizes[] = {1, 10, 100, 1000};
  for (int n = 0; n < 4; n++) {
    cujit_graph *g;
    check(e, cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED), "capture");
    for (long i = 0; i < sizes[n]; i++) check(e, empty_launch(k, x, s), "captured launch");
    check(e, cujit_capture_end(s, &g), "capture end");
    check(e, cujit_graph_instantiate(g), "instantiate");
    long replays = total / sizes[n];
    for (int r = 0; r < 5; r++) {
      double t0 = now_us();
      for (long i = 0; i < replays; i++) check(e, cujit_graph_launch(g, s), "replay");
      double t1 = now_us();
      check(e, cujit_stream_synchronize(s), "synchronize");
      host[r] = (t1 - t0) / (double)total, done[r] = (now_us() - t0) / (double)total;
    }
    char what[40];
    snprintf(what, sizeof what, "graph of %ld nodes", sizes[n]);
    report(what, host, done);
    cujit_graph_free(g);
  }
  cujit_close(e);
  return 0;
}
