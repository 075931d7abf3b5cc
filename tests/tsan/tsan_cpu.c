/*
** tsan_cpu.c -- the CPU device from 8 threads at once, under ThreadSanitizer: each thread makes
** streams, pinned host memory and buffers, captures an upload and a download into a graph,
** replays it, checks the round trip and frees everything, round after round. What is shared: the
** device's record of its memory (cpu_alloc.c, changed by every allocation and free, and searched
** by every captured copy to tell pinned memory from pageable, cpu_graph.c), its streams and its
** queue (cpu_queue.c). Each is read and changed only under the device's locks; a race
** ThreadSanitizer sees fails the run (its exit status, 66), as does a call that does not succeed
** or a copy that does not round-trip. Built only with -DCUJIT_SANITIZE_THREAD=ON, registered as
** tsan.cpu; needs no GPU and no compiler (copies only).
*/
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cujit.h"

#define THREADS 8
#define ROUNDS 30
#define N 256

static cujit_engine *engine;
static cujit_device *cpu;

#include "jobs.h"

static void *work(void *arg) {
  job *j = arg;
  for (int r = 0; r < ROUNDS; r++) {
    cujit_stream *s = NULL;
    cujit_host_buffer *in = NULL, *out = NULL;
    cujit_buffer *b = NULL, *spare = NULL;
    cujit_graph *g = NULL;
    EXPECT_OK(cujit_stream_create_on(cpu, &s));
    EXPECT_OK(cujit_host_alloc(engine, N * sizeof(int), &in));
    EXPECT_OK(cujit_host_alloc(engine, N * sizeof(int), &out));
    EXPECT_OK(cujit_buffer_alloc_on(cpu, N * sizeof(int), CUJIT_I32, &b));
    /* a captured copy searches the record of memory while the other threads change it */
    EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_THREAD_LOCAL));
    EXPECT_OK(cujit_memcpy_htod(b, 0, cujit_host_ptr(in), N * sizeof(int), s));
    EXPECT_OK(cujit_memcpy_dtoh(cujit_host_ptr(out), b, 0, N * sizeof(int), s));
    EXPECT_OK(cujit_capture_end(s, &g));
    EXPECT_OK(cujit_buffer_alloc_on(cpu, 64 + 64 * (size_t)j->id, CUJIT_U8, &spare));
    int *src = cujit_host_ptr(in), *dst = cujit_host_ptr(out);
    for (int i = 0; i < N; i++) src[i] = j->id * 100000 + r * N + i, dst[i] = -1;
    EXPECT_OK(cujit_graph_launch(g, s)); /* the replay reads what is in `in` now */
    EXPECT_OK(cujit_stream_synchronize(s));
    if (memcmp(src, dst, N * sizeof(int)) != 0) {
      snprintf(j->failure, sizeof j->failure, "thread %d round %d: the replay did not round-trip",
               j->id, r);
      return NULL;
    }
    if (r % THREADS == j->id) EXPECT_OK(cujit_device_synchronize(cpu)); /* every stream */
    cujit_graph_free(g);
    cujit_buffer_free(spare);
    cujit_buffer_free(b);
    cujit_host_free(out);
    cujit_host_free(in);
    cujit_stream_free(s);
  }
  return NULL;
}

int main(void) {
  if (cujit_open(&engine) != CUJIT_OK) return 1;
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) != CUJIT_OK || /* for cujit_host_alloc */
      cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu) != CUJIT_OK) {
    fprintf(stderr, "FAIL: the CPU device does not open: %s\n", cujit_errmsg(engine));
    cujit_close(engine);
    return 1;
  }
  int rc = run_jobs(work);
  if (!rc)
    printf("%d threads x %d rounds of captured copies, replays and allocations on the CPU "
           "device: all succeeded\n",
           THREADS, ROUNDS);
  cujit_close(engine);
  return rc;
}
