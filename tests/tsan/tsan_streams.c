/*
** tsan_streams.c -- streams, events and buffers made, used and freed from 8 threads at once on the
** stand-in driver's pretend GPU (scripts/bench/stub_driver.c), under ThreadSanitizer: the CUDA
** backend's list of streams (cuda_stream.c: made, wrapped, destroyed, walked by a device
** synchronize), the memory pool and the pinned segment of small downloads change only under
** their locks. A race ThreadSanitizer sees
** fails the run (its exit status, 66), as does any call that does not succeed or a copy that does
** not round-trip. Built only with -DCUJIT_SANITIZE_THREAD=ON, registered as tsan.streams_stub
** with the stand-in first on the library path; exits 77 (skipped) where no GPU opens (the
** stand-in was not found).
*/
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cujit.h"

#define THREADS 8
#define ROUNDS 40

static cujit_engine *engine;
static cujit_device *gpu;

#include "jobs.h"

static void *work(void *arg) {
  job *j = arg;
  for (int r = 0; r < ROUNDS; r++) {
    cujit_stream *s = NULL;
    cujit_event *e = NULL;
    cujit_buffer *b = NULL;
    int in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = j->id * 1000 + r * 64 + i;
    EXPECT_OK(cujit_stream_create_on(gpu, &s));
    EXPECT_OK(cujit_event_create_on(gpu, &e));
    EXPECT_OK(cujit_buffer_alloc_on(gpu, sizeof in, CUJIT_I32, &b));
    EXPECT_OK(cujit_memcpy_htod(b, 0, in, sizeof in, s));
    EXPECT_OK(cujit_event_record(e, s));
    EXPECT_OK(cujit_stream_wait_event(NULL, e)); /* the default stream: the list is read */
    EXPECT_OK(cujit_memcpy_dtoh(out, b, 0, sizeof out, s));
    EXPECT_OK(cujit_stream_synchronize(s));
    /* on the default stream a small download goes through the device's one pinned segment
    ** (cuda_pool.c, under its lock): eight threads at once */
    int staged[64];
    EXPECT_OK(cujit_memcpy_dtoh(staged, b, 0, sizeof staged, NULL));
    if (memcmp(in, out, sizeof in) != 0 || memcmp(in, staged, sizeof in) != 0) {
      snprintf(j->failure, sizeof j->failure, "thread %d round %d: the %s copy did not round-trip",
               j->id, r, memcmp(in, out, sizeof in) ? "stream's" : "staged");
      return NULL;
    }
    if (r % 8 == j->id % 8) EXPECT_OK(cujit_device_synchronize(gpu)); /* walks every stream */
    cujit_buffer_free(b);
    cujit_event_free(e);
    cujit_stream_free(s); /* leaves the list while the others join it */
  }
  return NULL;
}

int main(void) {
  if (cujit_open(&engine) != CUJIT_OK) return 1;
  if (cujit_device_get(engine, 0, &gpu) != CUJIT_OK) {
    fprintf(stderr, "skipped: no GPU opens (is the stand-in driver on the library path?): %s\n",
            cujit_errmsg(engine));
    cujit_close(engine);
    return 77;
  }
  int rc = run_jobs(work);
  if (!rc)
    printf("%d threads x %d rounds of streams, events and buffers: all succeeded\n", THREADS,
           ROUNDS);
  cujit_close(engine);
  return rc;
}
