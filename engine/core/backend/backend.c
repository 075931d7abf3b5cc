/*
** backend.c -- what every backend shares below the seam: poisoning a device with its first
** sticky fault, refusing work on a faulted device, and the wait policy: waiting by polling so
** that a wait can be interrupted, at the driver's latency, without holding a core for long waits.
** The operations themselves are in backend_cuda.c (and the CPU device's files).
*/
#include "backend.h"
#include "base/env.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

cujit_status cj_device_refuse(cujit_device *dev) {
  /* Copied under the lock its writers hold: a reset on another thread may be clearing it. */
  char msg[sizeof dev->fault_msg];
  pthread_mutex_lock(&dev->engine->lock);
  memcpy(msg, dev->fault_msg, sizeof msg);
  pthread_mutex_unlock(&dev->engine->lock);
  msg[sizeof msg - 1] = '\0';
  return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_FAULT, "%s", msg);
}

cujit_status cj_device_fault(cujit_device *dev, const char *fmt, ...) {
  char msg[sizeof dev->fault_msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cujit_engine *engine = dev->engine;
  pthread_mutex_lock(&engine->lock);
  if (dev->fault == CUJIT_OK) { /* the first report names the cause; later ones repeat it */
    snprintf(dev->fault_msg, sizeof dev->fault_msg, "%s", msg);
    __atomic_store_n(&dev->fault, CUJIT_ERROR_DEVICE_FAULT, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&engine->lock);
  return cj_device_refuse(dev);
}

/* --- the caller's current context (backend.h) ------------------------------------------------ */

typedef struct caller_context {
  int depth;                       /* scopes open on this thread */
  void (*restore)(void *, void *); /* set while a context replaced the caller's */
  void *user, *prior;
} caller_context;

static _Thread_local caller_context caller;

void cj_backend_scope_open(void) {
  caller.depth++;
}

void cj_backend_scope_close(void) {
  if (--caller.depth > 0 || !caller.restore) return;
  void (*restore)(void *, void *) = caller.restore;
  caller.restore = NULL;
  restore(caller.user, caller.prior);
}

void cj_backend_switched(void (*restore)(void *user, void *prior), void *user, void *prior) {
  if (caller.depth == 0 || caller.restore || !prior) return;
  caller.restore = restore;
  caller.user = user;
  caller.prior = prior;
}

/* --- the wait policy ---------------------------------------------------------------------------
** Measured on the H200 (issue 15): a wait that spun 20 us and then slept in doubling naps paid
** 35-150 us over the driver's own cuStreamSynchronize for any kernel past 20 us, because Linux's
** timer slack (50 us by default) stretches every short nap. A wait now goes through three phases:
**   1. spin  (the first SPIN_NS, at most the window): poll back to back, as the driver's own
**                                     spinning wait does;
**   2. yield (until the spin window): poll with sched_yield between polls, so other threads of a
**                                     busy core still run;
**   3. nap   (after the window):      sleep 1/NAP_DIVISOR of the time waited so far (at least
**                                     MIN_NAP_NS, at most MAX_NAP_NS) with the thread's timer
**                                     slack lowered to SLACK_NS for the wait and restored after.
** A kernel that ends during phase 3 is seen late by at most 1/NAP_DIVISOR of its length plus a
** wake-up, inside the goal of 1.1x the driver's round trip; a wait of seconds wakes about once per
** millisecond (well under 1% of a core); cujit_interrupt is seen within MAX_NAP_NS.
** CUJIT_WAIT chooses the window: "spin" never naps (a core at 100%, the lowest latency: the user's
** choice), a number is the window in microseconds, unset or anything else keeps DEFAULT_WINDOW_US.
** scripts/bench (case `latency`) measures the round trip per kernel length and the CPU time of a
** one-second wait for each policy; the defaults below are what those rows decide. */
#define SPIN_NS 50000L          /* phase 1 */
#define DEFAULT_WINDOW_US 1000L /* phase 2 ends, phase 3 starts */
#define NAP_DIVISOR 32          /* phase 3: nap 1/32 of the time waited so far */
#define MIN_NAP_NS 20000L
#define MAX_NAP_NS 1000000L /* and so an interrupt is seen within ~1 ms */
#define SLACK_NS 1000UL     /* the timer slack while napping */

static long window_ns; /* from CUJIT_WAIT, once: nanoseconds, or -2 to spin throughout */
static pthread_once_t window_once = PTHREAD_ONCE_INIT;

static void read_window(void) {
  const char *env = getenv("CUJIT_WAIT");
  unsigned long long us = DEFAULT_WINDOW_US;
  if (env && strcmp(env, "spin") == 0) {
    window_ns = -2; /* never nap */
    return;
  }
  char why[256];
  if (cj_env_uint("CUJIT_WAIT", 0, 10ULL * 1000 * 1000, &us, why, sizeof why) == CJ_ENV_BAD) {
    us = DEFAULT_WINDOW_US; /* once per process (the window is), with no engine to hand */
    cj_warn(NULL, "%s: microseconds to spin before napping, or spin; waits use the default, %ld",
            why, DEFAULT_WINDOW_US);
  }
  window_ns = (long)us * 1000L;
}

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void nap(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL);
}

/* Phase 3 lowers the thread's timer slack once; the caller's slack comes back when the wait
** ends. Elsewhere than Linux the naps keep the system's slack. */
static unsigned long lower_slack(void) {
#ifdef __linux__
  int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, SLACK_NS, 0, 0, 0);
  return old > 0 ? (unsigned long)old : 0;
#else
  return 0;
#endif
}

static void restore_slack(unsigned long old) {
#ifdef __linux__
  if (old) prctl(PR_SET_TIMERSLACK, old, 0, 0, 0);
#else
  (void)old;
#endif
}

static cujit_status interrupted(cujit_device *dev, const char *what) {
  cujit_engine *engine = dev->engine;
  char name[32] = "the CPU device"; /* device.c's cj_device_name, a layer up */
  if (dev->ordinal != CUJIT_DEVICE_CPU) snprintf(name, sizeof name, "device %d", dev->ordinal);
  return cj_fail(engine, CUJIT_ERROR_INTERRUPTED,
                 "%s was interrupted (cujit_interrupt); the work already queued on %s goes on "
                 "running",
                 what, name);
}

cujit_status cj_backend_wait(cujit_device *dev, cj_poll_fn done, void *handle, const char *what) {
  cujit_engine *engine = dev->engine;
  pthread_once(&window_once,
               read_window);           /* first, so a bad CUJIT_WAIT is told at the first wait */
  cujit_status st = done(dev, handle); /* work already done costs one poll, not a clock read */
  if (st != CUJIT_ERROR_NOT_READY) return st;
  long start = now_ns(), window = window_ns;
  unsigned long slack = 0;
  int napping = 0;
  unsigned mark = cj_interrupt_mark(engine);
  for (;;) {
    if (cj_interrupted(engine, mark)) {
      st = interrupted(dev, what);
      break;
    }
    long waited = now_ns() - start;
    if (window == -2 || (waited < SPIN_NS && waited < window)) {
      /* phase 1 */
    } else if (waited < window) {
      sched_yield();
    } else {
      if (!napping) slack = lower_slack(), napping = 1;
      long ns = waited / NAP_DIVISOR;
      nap(ns < MIN_NAP_NS ? MIN_NAP_NS : ns > MAX_NAP_NS ? MAX_NAP_NS : ns);
    }
    if ((st = done(dev, handle)) != CUJIT_ERROR_NOT_READY) break;
  }
  restore_slack(slack);
  return st;
}
