/*
** test_stub_waits.c -- a GPU wait's phases (engine/core/backend/backend.c, cj_backend_wait: spin,
** yield, then naps with the thread's timer slack lowered for the wait), against the stand-in
** driver, whose kernels pretend to run CUJIT_STUB_KERNEL_NS (tests/CMakeLists.txt runs this
** program with the stand-in first on LD_LIBRARY_PATH). What a waiting thread's neighbours can see
** of it, with no figure of time asserted: a second thread reads the waiting thread's timer slack
** (/proc/TID/timerslack_ns) throughout the wait. A wait that naps (CUJIT_WAIT=0) lowers
** it while it waits and gives the caller's own back after; a wait told to spin (CUJIT_WAIT=spin)
** never sleeps, so never touches it. CUJIT_WAIT is read once per process: each case is one. And
** a device's wait lasts until the work on the default stream and on cujit's streams has ended;
** two events time the work between them (the backend's events are made with timing).
*/
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

#define CALLER_SLACK_NS 77777UL /* the caller's own, unlike any slack cujit or Linux sets */

static cujit_engine *engine;

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_WAIT");
  unsetenv("CUJIT_STUB_KERNEL_NS");
  cj_scratch_remove();
}

TestSuite(stub_waits, .fini = close_engine, .timeout = 120);

typedef struct watch {
  char path[64];
  volatile int done;
  unsigned long lowest, highest;
  long reads;
} watch;

static unsigned long read_slack(const char *path) {
  FILE *f = fopen(path, "r");
  unsigned long v = 0;
  if (f) {
    if (fscanf(f, "%lu", &v) != 1) v = 0;
    fclose(f);
  }
  return v;
}

/* Reads the waiting thread's slack until told to stop, keeping the lowest and highest seen. */
static void *watch_slack(void *arg) {
  watch *w = arg;
  while (!w->done) {
    unsigned long v = read_slack(w->path);
    if (v < w->lowest) w->lowest = v;
    if (v > w->highest) w->highest = v;
    w->reads++;
    usleep(200);
  }
  return NULL;
}

/* The engine on the stand-in, whose launches pretend to run `kernel_ns`; a kernel and a buffer to
** launch it on. */
static cujit_device *open_with_kernel(const char *kernel_ns, cujit_kernel **k, cujit_buffer **b) {
  setenv("CUJIT_STUB_KERNEL_NS", kernel_ns, 1);
  cujit_device *gpu = cj_stub_open(&engine);
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  EXPECT_OK(cujit_kernel_define(engine, "mark(int *x)", "x[0] = 1;", NULL, NULL, k));
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_I32, b));
  return gpu;
}

/* One block of mark(b) on `stream` (NULL: the default stream). */
static void launch_mark(cujit_kernel *k, cujit_buffer *b, cujit_stream *stream) {
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  cfg.stream = stream;
  cujit_arg a[] = {CUJIT_ARG_BUF(b)};
  EXPECT_OK(cujit_launch(k, &cfg, a, 1));
}

/* With CUJIT_WAIT=`wait_env`, a launch pretending to run 300 ms, then a wait for it
** (cujit_device_synchronize), watched from a second thread. The caller's slack after the wait. */
static unsigned long watched_wait(const char *wait_env, watch *w) {
  setenv("CUJIT_WAIT", wait_env, 1);
  cujit_kernel *k;
  cujit_buffer *b;
  cujit_device *gpu = open_with_kernel("300000000", &k, &b);
  cr_assert_eq(prctl(PR_SET_TIMERSLACK, CALLER_SLACK_NS, 0, 0, 0), 0);
  snprintf(w->path, sizeof w->path, "/proc/%ld/timerslack_ns", (long)syscall(SYS_gettid));
  if (read_slack(w->path) != CALLER_SLACK_NS)
    cr_skip_test("%s does not show a thread's timer slack here (Linux 4.6 or later does)", w->path);
  w->lowest = w->highest = CALLER_SLACK_NS;
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, watch_slack, w), 0);
  while (w->reads == 0) usleep(100); /* the watcher runs before the wait starts */
  launch_mark(k, b, NULL);
  EXPECT_OK(cujit_device_synchronize(gpu));
  unsigned long after = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  w->done = 1;
  pthread_join(t, NULL);
  cujit_buffer_free(b);
  cujit_kernel_free(k);
  return after;
}

Test(stub_waits, a_napping_wait_lowers_the_timer_slack_while_it_waits_and_gives_it_back) {
  watch w = {0};
  unsigned long after = watched_wait("0", &w);
  cr_expect_lt(w.lowest, CALLER_SLACK_NS,
               "the wait napped with the caller's slack (%lu read %ld times): its naps would "
               "oversleep by that much each",
               w.lowest, w.reads);
  cr_expect_eq(after, CALLER_SLACK_NS, "the caller's slack was not given back: %lu", after);
}

Test(stub_waits, a_wait_told_to_spin_never_sleeps) {
  watch w = {0};
  unsigned long after = watched_wait("spin", &w);
  cr_expect_eq(w.lowest, CALLER_SLACK_NS,
               "CUJIT_WAIT=spin, yet the slack was lowered to %lu: the wait napped", w.lowest);
  cr_expect_eq(w.highest, CALLER_SLACK_NS, "the slack became %lu", w.highest);
  cr_expect_eq(after, CALLER_SLACK_NS);
}

/* A device's wait covers the default stream and every stream of cujit's: after it, work queued on
** either has ended (the stand-in's kernel pretends to run 200 ms). */
Test(stub_waits, a_device_wait_ends_after_the_default_stream_and_every_stream) {
  cujit_kernel *k;
  cujit_buffer *b;
  cujit_device *gpu = open_with_kernel("200000000", &k, &b);
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  cujit_event *e;
  EXPECT_OK(cujit_event_create(engine, &e));
  for (int on_stream = 0; on_stream < 2; on_stream++) {
    launch_mark(k, b, on_stream ? s : NULL);
    EXPECT_OK(cujit_event_record(e, on_stream ? s : NULL));
    cr_expect_eq(cujit_event_query(e), CUJIT_ERROR_NOT_READY, "the kernel still runs");
    EXPECT_OK(cujit_device_synchronize(gpu));
    cr_expect_eq(cujit_event_query(e), CUJIT_OK, "the device's wait ended before the work %s",
                 on_stream ? "on a stream" : "on the default stream");
  }
  cujit_event_free(e);
  cujit_stream_free(s);
  cujit_buffer_free(b);
  cujit_kernel_free(k);
}

/* Two events time the work between them on the default stream and on a stream: the backend makes
** its events with timing (the stand-in, like the driver, refuses a time between events made
** without it; it answers 0 ms, as no kernel takes time there). */
Test(stub_waits, two_events_time_the_work_between_them_on_any_stream) {
  cujit_kernel *k;
  cujit_buffer *b;
  open_with_kernel("1000000", &k, &b);
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  cujit_event *start, *end;
  EXPECT_OK(cujit_event_create(engine, &start));
  EXPECT_OK(cujit_event_create(engine, &end));
  for (int on_stream = 0; on_stream < 2; on_stream++) {
    cujit_stream *on = on_stream ? s : NULL;
    EXPECT_OK(cujit_event_record(start, on));
    launch_mark(k, b, on);
    EXPECT_OK(cujit_event_record(end, on));
    EXPECT_OK(cujit_event_synchronize(end));
    float ms = -1;
    cr_expect_eq(cujit_event_elapsed(start, end, &ms), CUJIT_OK, "timing %s: %s",
                 on_stream ? "a stream" : "the default stream", cujit_errmsg(engine));
    cr_expect_eq(ms, 0, "the stand-in's time is 0 ms, not %g", ms);
  }
  cujit_event_free(end);
  cujit_event_free(start);
  cujit_stream_free(s);
  cujit_buffer_free(b);
  cujit_kernel_free(k);
}
