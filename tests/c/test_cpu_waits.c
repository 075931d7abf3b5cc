/*
** test_cpu_waits.c -- the CPU device's waits and frees through the public API, with kernels that
** spin until the host releases them: cujit_interrupt ends every wait in progress (on any number
** of threads, of every kind), a pending interrupt and cujit_interrupt_clear, and frees that never
** wait for the queue yet never give back memory that queued work still uses. Needs g++ only.
*/
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cpu/cpu.h"
#include "cujit.h"
#include "run/device.h"
#include "expect.h"
#include "scratch.h"

static cujit_engine *engine;
static cujit_device *dev;
static cujit_kernel *spin;    /* spins until f[0] != 0 */
static cujit_buffer *flag;    /* managed: the host releases the kernel through it */
static volatile int *release; /* flag's host pointer */
static cujit_stream *stream;  /* spin runs on it; the default stream's waits are behind it */

static void open_cpu(void) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cpu_waits"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  EXPECT_OK(cujit_current_device(engine, &dev));
  EXPECT_OK(cujit_kernel_define(engine, "spin(volatile int *f)", "while (f[0] == 0) { }", NULL,
                                NULL, &spin));
  EXPECT_OK(cujit_buffer_alloc_managed(engine, 4, CUJIT_I32, &flag));
  release = cujit_buffer_host_ptr(flag);
  *release = 0;
  EXPECT_OK(cujit_stream_create(engine, &stream));
}

static void close_cpu(void) {
  cujit_close(engine);
  engine = NULL;
  cj_scratch_remove();
}

/* A broken wait hangs rather than fails: the timeout ends it. Per suite, not per test: the
** sanitizer build's Criterion runner leaks a block per test timeout when tests run in parallel. */
TestSuite(cpu_waits, .timeout = 120);

static cujit_launch_config one_thread(void) {
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  return cfg;
}

static void launch_spin(void) {
  cujit_launch_config cfg = one_thread();
  cujit_arg a[] = {CUJIT_ARG_BUF(flag)};
  cfg.stream = stream;
  EXPECT_OK(cujit_launch(spin, &cfg, a, 1));
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The number of waits in progress on the CPU device's queue. */
static int waiting(void) {
  cpu_dev *c = dev->impl;
  pthread_mutex_lock(&c->lock);
  int n = c->waiting;
  pthread_mutex_unlock(&c->lock);
  return n;
}

/* Until `n` waits are blocked on the queue (a test that breaks hangs here, to ctest's timeout,
** rather than pass). */
static void until_waiting(int n) {
  while (waiting() < n) sleep_ms(1);
}

/* --- cujit_interrupt ends every wait -------------------------------------------------------- */

enum wait_kind { WAIT_DEVICE, WAIT_STREAM, WAIT_EVENT, WAIT_COPY, WAIT_KINDS };

typedef struct waiter {
  pthread_t thread;
  enum wait_kind kind;
  cujit_event *event;
  cujit_status status;
  char message[512];
} waiter;

static void *wait_one(void *p) {
  waiter *w = p;
  int back = -1;
  switch (w->kind) {
  case WAIT_DEVICE:
    w->status = cujit_device_synchronize(dev);
    break;
  case WAIT_STREAM:
    w->status = cujit_stream_synchronize(stream);
    break;
  case WAIT_EVENT:
    w->status = cujit_event_synchronize(w->event);
    break;
  default:
    w->status = cujit_memcpy_dtoh(&back, flag, 0, sizeof back, NULL); /* after the kernel */
    break;
  }
  snprintf(w->message, sizeof w->message, "%s", cujit_errmsg(engine));
  return NULL;
}

/* `count` threads wait, each its kind in turn; all are blocked before the one interrupt. */
static void interrupt_waiters(int count) {
  waiter *w = calloc((size_t)count, sizeof *w);
  cr_assert(w);
  cujit_event *event;
  launch_spin();
  EXPECT_OK(cujit_event_create(engine, &event));
  EXPECT_OK(cujit_event_record(event, stream));
  for (int i = 0; i < count; i++) {
    w[i].kind = (enum wait_kind)(i % WAIT_KINDS), w[i].event = event;
    cr_assert_eq(pthread_create(&w[i].thread, NULL, wait_one, &w[i]), 0);
  }
  until_waiting(count);
  cujit_interrupt(engine);
  for (int i = 0; i < count; i++) {
    pthread_join(w[i].thread, NULL);
    cr_expect_eq(w[i].status, CUJIT_ERROR_INTERRUPTED, "waiter %d (kind %d) gave %s: %s", i,
                 (int)w[i].kind, cujit_status_string(w[i].status), w[i].message);
    cr_expect(strstr(w[i].message, "interrupted") != NULL, "waiter %d: %s", i, w[i].message);
  }
  cr_expect_eq(cujit_event_query(event), CUJIT_ERROR_NOT_READY, "the kernel goes on running");
  *release = 1;
  /* Reported by all: this wait, started after, runs to the kernel's end. */
  EXPECT_OK(cujit_device_synchronize(dev));
  EXPECT_OK(cujit_event_query(event));
  cujit_event_free(event);
  free(w);
}

Test(cpu_waits, an_interrupt_ends_every_wait_of_three_threads, .init = open_cpu,
     .fini = close_cpu) {
  interrupt_waiters(3);
}

Test(cpu_waits, an_interrupt_ends_every_kind_of_wait_on_eight_threads, .init = open_cpu,
     .fini = close_cpu) {
  interrupt_waiters(8);
  /* And again, on the same engine: the first interrupt was reported, a second one counts anew. */
  *release = 0;
  interrupt_waiters(3);
}

Test(cpu_waits, a_pending_interrupt_stops_the_next_wait_only, .init = open_cpu, .fini = close_cpu) {
  cujit_interrupt(engine); /* no wait in progress: it stays pending */
  cujit_interrupt(engine); /* two interrupts before a wait are still one report */
  launch_spin();
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_INTERRUPTED, "interrupted");
  /* Reported: the next wait is not cut short (another thread releases the kernel once it waits). */
  waiter w = {.kind = WAIT_DEVICE};
  cr_assert_eq(pthread_create(&w.thread, NULL, wait_one, &w), 0);
  until_waiting(1);
  sleep_ms(20); /* several of the wait's looks at the interrupt count: none may end it */
  cr_expect_eq(waiting(), 1, "the wait ended without an interrupt");
  *release = 1;
  pthread_join(w.thread, NULL);
  cr_expect_eq(w.status, CUJIT_OK, "%s: %s", cujit_status_string(w.status), w.message);
}

Test(cpu_waits, interrupt_clear_forgets_a_pending_interrupt, .init = open_cpu, .fini = close_cpu) {
  cujit_interrupt(engine);
  cujit_interrupt_clear(engine);
  launch_spin();
  waiter w = {.kind = WAIT_COPY};
  cr_assert_eq(pthread_create(&w.thread, NULL, wait_one, &w), 0);
  until_waiting(1);
  sleep_ms(20);
  cr_expect_eq(waiting(), 1, "a cleared interrupt ended the wait");
  *release = 1;
  pthread_join(w.thread, NULL);
  cr_expect_eq(w.status, CUJIT_OK, "%s: %s", cujit_status_string(w.status), w.message);
  cujit_interrupt(NULL); /* a no-op, as every call on a NULL handle */
  cujit_interrupt_clear(NULL);
}

/* --- frees never wait, yet never give back memory queued work uses --------------------------- */

typedef struct freer {
  cujit_buffer *buffer;
  cujit_host_buffer *host;
  int done; /* atomic */
} freer;

static void *free_them(void *p) {
  freer *f = p;
  cujit_buffer_free(f->buffer);
  cujit_host_free(f->host);
  __atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* Up to a minute for the frees to return; a free that waits for the queue never does, since the
** kernel ends only when this thread releases it afterwards. */
static int frees_return(freer *f) {
  for (int i = 0; i < 60000 && !__atomic_load_n(&f->done, __ATOMIC_ACQUIRE); i++) sleep_ms(1);
  return __atomic_load_n(&f->done, __ATOMIC_ACQUIRE);
}

Test(cpu_waits, freeing_unrelated_memory_does_not_wait_for_a_running_kernel, .init = open_cpu,
     .fini = close_cpu) {
  freer f = {0};
  EXPECT_OK(cujit_buffer_alloc(engine, 1 << 20, CUJIT_U8, &f.buffer));
  EXPECT_OK(cujit_host_alloc(engine, 1 << 20, &f.host));
  size_t before = cujit_device_allocated(dev);
  launch_spin();
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, free_them, &f), 0);
  int returned = frees_return(&f);
  cr_expect(returned, "cujit_buffer_free / cujit_host_free waited for the kernel");
  cr_expect_eq(cujit_stream_query(stream), CUJIT_ERROR_NOT_READY, "the kernel still runs");
  cr_expect_eq(cujit_device_allocated(dev), before - (1 << 20), "the buffer no longer counts");
  *release = 1;
  pthread_join(t, NULL);
  EXPECT_OK(cujit_device_synchronize(dev));
  /* With the queue idle a free is immediate; the device goes on working. */
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, 64, CUJIT_U8, &b));
  cujit_buffer_free(b);
  *release = 1;
  launch_spin();
  EXPECT_OK(cujit_device_synchronize(dev));
}

/* 64 MiB: past glibc's largest mmap threshold, so a free gives the pages back to the kernel at
** once, and a kernel still reading them would crash (a device fault) instead of reading stale
** bytes by luck. */
#define BIG ((size_t)64 << 20)

static cujit_kernel *reader(void) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine,
                                "read_after(volatile int *f, const unsigned char *b, long long n, "
                                "int *out, int trap)",
                                "while (f[0] == 0) { }\n"
                                "out[0] = b[0] + b[n / 2] + b[n - 1];\n"
                                "if (trap) __trap();",
                                NULL, NULL, &k));
  return k;
}

static void launch_reader(cujit_kernel *k, cujit_buffer *big, cujit_buffer *out, int trap) {
  cujit_launch_config cfg = one_thread();
  cujit_arg a[] = {CUJIT_ARG_BUF(flag), CUJIT_ARG_BUF(big), CUJIT_ARG_I((long long)BIG),
                   CUJIT_ARG_BUF(out), CUJIT_ARG_I(trap)};
  EXPECT_OK(cujit_launch(k, &cfg, a, 5));
}

Test(cpu_waits, memory_freed_while_queued_work_uses_it_lives_until_that_work_ends, .init = open_cpu,
     .fini = close_cpu) {
  cujit_kernel *k = reader();
  cujit_buffer *big, *out;
  EXPECT_OK(cujit_buffer_alloc(engine, BIG, CUJIT_U8, &big));
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_I32, &out));
  EXPECT_OK(cujit_memset(big, 0, 0x5A, BIG, NULL));
  EXPECT_OK(cujit_memset(out, 0, 0, 4, NULL));
  launch_reader(k, big, out, 0);
  freer f = {.buffer = big};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, free_them, &f), 0);
  cr_expect(frees_return(&f), "cujit_buffer_free waited for the kernel that uses the buffer");
  /* Memory allocated now must not be the freed buffer's, which the kernel still reads. */
  cujit_buffer *again;
  EXPECT_OK(cujit_buffer_alloc(engine, BIG, CUJIT_U8, &again));
  EXPECT_OK(cujit_memset(again, 0, 0x11, BIG, stream)); /* queued: behind the kernel */
  *release = 1;
  pthread_join(t, NULL);
  EXPECT_OK(cujit_device_synchronize(dev));
  int got = 0;
  EXPECT_OK(cujit_memcpy_dtoh(&got, out, 0, sizeof got, NULL));
  cr_expect_eq(got, 3 * 0x5A, "the kernel read %d, not the freed buffer's bytes", got);
  cujit_buffer_free(again);
}

Test(cpu_waits, a_free_queued_behind_a_kernel_that_faults_still_frees, .init = open_cpu,
     .fini = close_cpu) {
  cujit_kernel *k = reader();
  cujit_buffer *big, *out;
  EXPECT_OK(cujit_buffer_alloc(engine, BIG, CUJIT_U8, &big));
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_I32, &out));
  EXPECT_OK(cujit_memset(big, 0, 0x5A, BIG, NULL));
  launch_reader(k, big, out, 1);
  cujit_buffer_free(big); /* queued: LeakSanitizer (scripts/sanitize.sh) sees a lost one */
  *release = 1;
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, "__trap");
  EXPECT_OK(cujit_device_reset(dev));
  EXPECT_OK(cujit_buffer_alloc_managed(engine, 4, CUJIT_I32, &flag));
  release = cujit_buffer_host_ptr(flag);
  *release = 1;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  launch_spin();
  EXPECT_OK(cujit_device_synchronize(dev));
}

/* --- a kernel that never ends is abandoned by a reset, and by cujit_close ------------------- */

static void check_saxpy(void) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "axpy(float a, const float *x, float *y, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] = a * x[i] + y[i];",
                                NULL, NULL, &k));
  enum { N = 1000 };
  float x[N], y[N], got[N];
  for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
  cujit_buffer *dx, *dy;
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof x, CUJIT_F32, &dx));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof y, CUJIT_F32, &dy));
  EXPECT_OK(cujit_memcpy_htod(dx, 0, x, sizeof x, NULL));
  EXPECT_OK(cujit_memcpy_htod(dy, 0, y, sizeof y, NULL));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  cujit_arg a[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy), CUJIT_ARG_I(N)};
  EXPECT_OK(cujit_launch(k, &cfg, a, 4));
  EXPECT_OK(cujit_memcpy_dtoh(got, dy, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++) cr_expect_eq(got[i], 2.0f * i + 1.0f, "y[%d] = %g", i, got[i]);
  cujit_buffer_free(dx);
  cujit_buffer_free(dy);
  cujit_kernel_free(k);
}

/* After the reset the old buffers are lost; the test makes new ones and runs a kernel. */
static void reset_and_work_again(void) {
  EXPECT_OK(cujit_device_reset(dev));
  EXPECT_OK(cujit_device_status(dev));
  EXPECT_OK(cujit_buffer_alloc_managed(engine, 4, CUJIT_I32, &flag));
  release = cujit_buffer_host_ptr(flag);
  *release = 0;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  check_saxpy();
  launch_spin(); /* the device runs a kernel of the same program again, and ends it */
  *release = 1;
  EXPECT_OK(cujit_device_synchronize(dev));
}

Test(cpu_waits, a_reset_abandons_a_kernel_that_never_ends, .init = open_cpu, .fini = close_cpu) {
  launch_spin();
  cujit_buffer *after;
  EXPECT_OK(cujit_buffer_alloc(engine, 64, CUJIT_U8, &after));
  EXPECT_OK(cujit_memset(after, 0, 7, 64, stream)); /* queued behind: dropped by the reset */
  cujit_interrupt(engine); /* as Ctrl-C would: the wait ends, the kernel goes on */
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_INTERRUPTED, "interrupted");
  cr_expect_eq(cujit_stream_query(stream), CUJIT_ERROR_NOT_READY, "the kernel still runs");
  reset_and_work_again();
  /* A second abandon on the same device works as the first. */
  *release = 0;
  launch_spin();
  reset_and_work_again();
}

/* Every worker inside the kernel, on fibers (a barrier in the loop), some blocks still queued
** for the workers: all leave, and the fibers' state is given back. */
Test(cpu_waits, a_reset_abandons_a_kernel_on_every_worker_and_its_fibers, .init = open_cpu,
     .fini = close_cpu) {
  cujit_kernel *k;
  /* Thread 0 reads the flag and the block leaves together: were each thread to read it, a
  ** release between two threads' reads would leave some at the barrier (a divergent barrier,
  ** which the CPU device rightly reports as a fault). */
  EXPECT_OK(cujit_kernel_define(engine, "spin_sync(volatile int *f)",
                                "__shared__ int go;\n"
                                "for (;;) { if (threadIdx.x == 0) go = f[0];\n"
                                "  __syncthreads(); if (go) break; __syncthreads(); }",
                                NULL, NULL, &k));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 64, cfg.block[0] = 128, cfg.stream = stream;
  cujit_arg a[] = {CUJIT_ARG_BUF(flag)};
  EXPECT_OK(cujit_launch(k, &cfg, a, 1));
  EXPECT_OK(cujit_launch(k, &cfg, a, 1)); /* a second launch, queued: dropped */
  reset_and_work_again();
  /* The same kernel, its fibers made anew, runs to its end once released. */
  *release = 0;
  cfg.stream = stream;
  a[0] = CUJIT_ARG_BUF(flag);
  EXPECT_OK(cujit_launch(k, &cfg, a, 1));
  *release = 1;
  EXPECT_OK(cujit_device_synchronize(dev));
  cujit_kernel_free(k);
}

typedef struct warnings {
  char text[2048];
  int count;
} warnings;

static void keep_warning(void *user, const char *message) {
  warnings *w = user;
  w->count++;
  snprintf(w->text, sizeof w->text, "%s", message);
}

Test(cpu_waits, close_abandons_a_kernel_that_never_ends_with_a_warning, .init = open_cpu,
     .fini = close_cpu) {
  static warnings w;
  cujit_set_warning_handler(engine, keep_warning, &w);
  launch_spin();
  cujit_buffer *unfreed;
  EXPECT_OK(cujit_buffer_alloc(engine, 1 << 20, CUJIT_U8, &unfreed)); /* freed by the close */
  cujit_close(engine); /* returns (ctest's timeout says otherwise), having waited its 2 s */
  engine = NULL;
  cr_expect_eq(w.count, 1, "%d warnings, last: %s", w.count, w.text);
  cr_expect(strstr(w.text, "cujit_close: the CPU device was still running kernel 'spin'"), "%s",
            w.text);
  cr_expect(strstr(w.text, "abandoned it"), "%s", w.text);
}

Test(cpu_waits, close_waits_for_work_that_ends, .init = open_cpu, .fini = close_cpu) {
  static warnings w;
  cujit_set_warning_handler(engine, keep_warning, &w);
  check_saxpy();
  launch_spin();
  *release = 1; /* ends soon: the close waits for it, and says nothing */
  cujit_close(engine);
  engine = NULL;
  cr_expect_eq(w.count, 0, "%s", w.text);
}
