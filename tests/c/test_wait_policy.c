/*
** test_wait_policy.c -- the arithmetic of a wait's phases (engine/core/backend/backend.c,
** cj_backend_wait), on a clock the test owns, so that no figure of real time is read or asserted.
** This file defines clock_gettime, sched_yield and nanosleep, which the engine linked into it
** calls; on the waiting thread, while a case fakes them, the monotonic clock moves 100 ns a read,
** a yield 1 us, and a nap by exactly what it asked for (each nap noted); a second turns during
** each wait. The policy, as the
** file's comment states it: phase 1 polls back to back for the first SPIN_NS (50 us, at most the
** window); phase 2 yields between polls until the window (CUJIT_WAIT microseconds, 1000 unless
** set); phase 3 naps 1/32 of the time waited so far, at least 20 us and at most 1 ms;
** CUJIT_WAIT=spin polls back to back throughout; cujit_interrupt ends a wait at its next look.
** CUJIT_WAIT is read once a process: each case is one (Criterion's). Also the wait for rank 0's
** unique-id file (cujit_nccl_id_read), which looks every 10 ms.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "cujit.h"
#include "expect.h"
#include "scratch.h"

#define MAX_NAPS 4096

static _Thread_local int faking; /* only the waiting thread's calls are faked */
static long fake_now;            /* ns */
static long last_read;           /* what the last clock read returned */
static long yields, first_yield_at = -1, reads;
static long nap_asked[MAX_NAPS], nap_waited[MAX_NAPS]; /* the nap, and the clock read before it */
static int naps;
static long interrupt_after = -1; /* cujit_interrupt after this many naps */
static cujit_engine *engine;

int clock_gettime(clockid_t clock, struct timespec *ts) {
  if (faking && clock == CLOCK_MONOTONIC) {
    fake_now += 100;
    last_read = fake_now;
    reads++;
    ts->tv_sec = fake_now / 1000000000L, ts->tv_nsec = fake_now % 1000000000L;
    return 0;
  }
  int (*real)(clockid_t, struct timespec *) =
      (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  return real(clock, ts);
}

int sched_yield(void) {
  if (faking) {
    if (first_yield_at < 0) first_yield_at = last_read;
    yields++;
    fake_now += 1000;
    return 0;
  }
  int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "sched_yield");
  return real();
}

int nanosleep(const struct timespec *req, struct timespec *rem) {
  if (faking) {
    long ns = req->tv_sec * 1000000000L + req->tv_nsec;
    cr_assert_lt(naps, MAX_NAPS, "more than %d naps", MAX_NAPS);
    nap_asked[naps] = ns, nap_waited[naps] = last_read;
    naps++;
    fake_now += ns;
    if (naps == interrupt_after) cujit_interrupt(engine);
    return 0;
  }
  int (*real)(const struct timespec *, struct timespec *) =
      (int (*)(const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "nanosleep");
  return real(req, rem);
}

/* The work the wait polls for: done once the fake clock reaches `until` (ns after it started). */
static long started, until;
static long polls;

static cujit_status ends_with = CUJIT_OK; /* what the poll says once the work has ended */

static cujit_status done_at(cujit_device *dev, void *handle) {
  (void)dev, (void)handle;
  polls++;
  return fake_now - started >= until ? ends_with : CUJIT_ERROR_NOT_READY;
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_WAIT");
  cj_scratch_remove();
}

TestSuite(wait_policy, .fini = close_engine);

/* Where the fake clock starts: `cross_in` ns before a whole second (2 s), so that the clock's
** seconds and nanoseconds both change during the wait. */
static long cross_in = 3 * 1000 * 1000L;

/* Waits on the CPU device (any device's waits go through the same policy) for work that ends
** `ns` after the wait starts, on the fake clock; gives the wait's status. */
static cujit_status wait_for(const char *window, long ns) {
  if (window) setenv("CUJIT_WAIT", window, 1);
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  cujit_device *dev;
  EXPECT_OK(cujit_current_device(engine, &dev));
  fake_now = 2000000000L - cross_in, started = fake_now, until = ns;
  faking = 1;
  cujit_status st = cj_backend_wait(dev, done_at, NULL, "the test's wait");
  faking = 0;
  return st;
}

/* The wait's first clock read is its start; each read moves the clock 100 ns, each yield 1 us:
** phase 1 reads on a 100 ns grid, phase 2 on one of 1.1 us. */
static long since_start(long at) {
  return at - (started + 100);
}

/* The time waited when the wait last read the clock before nap i. */
static long waited_before(int i) {
  return since_start(nap_waited[i]);
}

static long clamp(long v, long lo, long hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

Test(wait_policy, spins_then_yields_then_naps_a_32nd_of_the_wait) {
  EXPECT_OK(wait_for(NULL, 40 * 1000 * 1000L)); /* 40 ms: naps reach their bound */
  cr_assert_eq(since_start(first_yield_at), 50000, "the first yield came %ld ns in, want 50 us",
               since_start(first_yield_at));
  /* phase 2 yields from 50 us to the window, 1 ms, a read and a yield (1.1 us) a step */
  cr_assert(yields >= (1000000 - 50000) / 1100 && yields <= (1000000 - 50000) / 1100 + 1,
            "%ld yields between 50 us and 1 ms", yields);
  cr_assert_gt(naps, 50, "%d naps", naps);
  cr_assert(waited_before(0) >= 1000000 && waited_before(0) < 1000000 + 1100,
            "the first nap came %ld ns in, want the first step at or past the window (1 ms)",
            waited_before(0));
  int at_most = 0;
  for (int i = 0; i < naps; i++) {
    long want = clamp(waited_before(i) / 32, 20000, 1000000);
    cr_assert_eq(nap_asked[i], want, "nap %d after %ld ns waited: %ld ns, want %ld", i,
                 waited_before(i), nap_asked[i], want);
    at_most += nap_asked[i] == 1000000;
  }
  cr_assert_gt(at_most, 0, "no nap reached the bound of 1 ms");
  cr_assert_geq(fake_now - started, until, "the wait ended before the work");
  cr_assert_lt(fake_now - started, until + 1000000 + 200, "the wait ended %ld ns past the work",
               fake_now - started - until);
}

Test(wait_policy, a_short_window_naps_at_the_least_nap) {
  cross_in = 10000;                       /* the second turns in phase 1 */
  EXPECT_OK(wait_for("30", 400 * 1000L)); /* a 30 us window, less than phase 1's 50 us */
  cr_assert_eq(yields, 0, "a window shorter than phase 1 leaves no phase 2: %ld yields", yields);
  cr_assert_eq(waited_before(0), 30000, "the first nap came %ld ns in, want 30 us",
               waited_before(0));
  cr_assert_eq(nap_asked[0], 20000, "the first nap: %ld ns, want the least, 20000", nap_asked[0]);
  for (int i = 0; i < naps; i++)
    cr_assert_eq(nap_asked[i], clamp(waited_before(i) / 32, 20000, 1000000), "nap %d: %ld ns", i,
                 nap_asked[i]);
}

Test(wait_policy, spin_never_yields_or_naps) {
  EXPECT_OK(wait_for("spin", 3 * 1000 * 1000L));
  cr_assert_eq(yields, 0, "%ld yields", yields);
  cr_assert_eq(naps, 0, "%d naps", naps);
  cr_assert_geq(polls, 3 * 1000 * 1000L / 100 / 2, "%ld polls in 3 ms of 100 ns reads", polls);
}

Test(wait_policy, a_window_of_0_naps_at_once) {
  EXPECT_OK(wait_for("0", 200 * 1000L));
  cr_assert_eq(yields, 0, "%ld yields", yields);
  cr_assert_eq(waited_before(0), 100, "the first nap came %ld ns in, want at the first look",
               waited_before(0));
}

Test(wait_policy, an_interrupt_ends_the_wait_at_its_next_look) {
  interrupt_after = 3;
  cujit_status st = wait_for(NULL, 10L * 1000 * 1000 * 1000); /* 10 s of work */
  cr_assert_eq(st, CUJIT_ERROR_INTERRUPTED, "status %d", (int)st);
  cr_assert_eq(naps, 3, "the wait napped %d times, the interrupt came in the 3rd", naps);
  cr_assert_str_eq(cujit_errmsg(engine), "the test's wait was interrupted (cujit_interrupt); the "
                                         "work already queued on the CPU device goes on running");
}

/* Work already ended costs one poll and no clock read, whatever the poll says; an error met later
** in the wait ends it with that error. Statuses on both sides of CUJIT_ERROR_NOT_READY. */
static void ends_at_once_with(cujit_status status) {
  ends_with = status;
  cr_assert_eq(wait_for(NULL, 0), status);
  cr_assert_eq(polls, 1, "%s at once: %ld polls", cujit_status_string(status), polls);
  cr_assert_eq(reads, 0, "%s at once: %ld clock reads", cujit_status_string(status), reads);
}

Test(wait_policy, work_done_at_once_costs_one_poll) {
  ends_at_once_with(CUJIT_OK);
}

Test(wait_policy, a_fault_at_once_costs_one_poll) {
  ends_at_once_with(CUJIT_ERROR_DEVICE_FAULT);
}

Test(wait_policy, a_driver_error_at_once_costs_one_poll) {
  ends_at_once_with(CUJIT_ERROR_DRIVER);
}

Test(wait_policy, an_error_met_while_waiting_ends_the_wait) {
  ends_with = CUJIT_ERROR_DRIVER;
  cr_assert_eq(wait_for(NULL, 2 * 1000 * 1000L), CUJIT_ERROR_DRIVER);
  cr_assert_gt(naps, 0, "the error came before the naps");
  cr_assert_lt(fake_now - started, 2 * 1000 * 1000L + 1000000 + 200,
               "the wait went on %ld ns past the error", fake_now - started - until);
}

/* A CUJIT_WAIT that is neither a count of microseconds nor "spin" keeps the default window. */
Test(wait_policy, a_bad_window_keeps_the_default) {
  EXPECT_OK(wait_for("soon", 2 * 1000 * 1000L));
  cr_assert_eq(since_start(first_yield_at), 50000, "the first yield came %ld ns in",
               since_start(first_yield_at));
  cr_assert(waited_before(0) >= 1000000 && waited_before(0) < 1000000 + 1100,
            "the first nap came %ld ns in, want the default window's 1 ms", waited_before(0));
}

/* Waiting for rank 0's unique-id file (cujit_nccl_id_read) looks again every 10 ms until its
** timeout, then says the file did not appear. */
Test(wait_policy, a_unique_id_file_is_looked_for_every_10_ms) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  char hex[CUJIT_NCCL_ID_HEX];
  const char *path = cj_scratch_path("never-written.id");
  fake_now = 2000000000L - 20 * 1000 * 1000L, started = fake_now;
  faking = 1;
  cujit_status st = cujit_nccl_id_read(engine, path, 0.1, hex);
  faking = 0;
  cr_assert_eq(st, CUJIT_ERROR_IO, "status %s: %s", cujit_status_string(st), cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "did not appear within 0.1 s"), "%s",
            cujit_errmsg(engine));
  cr_assert(naps >= 9 && naps <= 11, "%d looks in 100 ms", naps);
  for (int i = 0; i < naps; i++)
    cr_assert_eq(nap_asked[i], 10 * 1000 * 1000L, "pause %d: %ld ns, want 10 ms", i, nap_asked[i]);
}
