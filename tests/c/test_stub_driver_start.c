/*
** test_stub_driver_start.c -- the thread that starts the driver ahead of need (base.c,
** cj_driver_start, called on a compile's cache miss): one at most per engine, however many threads
** ask at once, none after it was joined, none once another thread has opened the driver, none
** while the CPU device is current. Against the stand-in driver (tests/CMakeLists.txt runs it with
** scripts/bench/stubcuda first on LD_LIBRARY_PATH), which opens. This file defines pthread_create
** and dlopen, which the engine linked into it calls: while a case races, the first counts the
** threads the engine makes, holds the first asker inside the call (its lock held) until every other
** asker has passed the unlocked check, and has the starter wait before it starts the driver; the
** second can make the driver's own opening slow. So a starter too many, were the locked check
** wrong, would be made every time, not by chance.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "cujit.h"
#include "scratch.h"

#define ASKERS 8

static _Thread_local int asking; /* set on the threads that call cj_driver_start */
static int slow_driver;          /* dlopen of libcuda.so.1 takes 300 ms */
static int made;                 /* threads the engine made while asked (atomic) */
static cujit_engine *engine;

static void pause_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

typedef struct held_start {
  void *(*routine)(void *);
  void *arg;
} held_start;

static void *start_late(void *p) {
  held_start h = *(held_start *)p;
  free(p);
  pause_ms(300); /* the driver stays unstarted while the askers go through their checks */
  return h.routine(h.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*routine)(void *), void *arg) {
  int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
      (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
          RTLD_NEXT, "pthread_create");
  if (!asking) return real(t, attr, routine, arg);
  __atomic_add_fetch(&made, 1, __ATOMIC_SEQ_CST);
  pause_ms(100); /* every other asker passes the unlocked check meanwhile, then waits */
  held_start *h = malloc(sizeof *h);
  cr_assert_not_null(h);
  h->routine = routine, h->arg = arg;
  return real(t, attr, start_late, h);
}

void *dlopen(const char *file, int mode) {
  void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  if (slow_driver && file && strcmp(file, "libcuda.so.1") == 0) pause_ms(300);
  return real(file, mode);
}

static pthread_barrier_t together;

static void *ask(void *unused) {
  (void)unused;
  pthread_barrier_wait(&together);
  asking = 1;
  cj_driver_start(engine);
  asking = 0;
  return NULL;
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_DEVICE");
  cj_scratch_remove();
}

TestSuite(driver_start, .fini = close_engine);

/* An engine on `device` (CUJIT_DEVICE) that has not yet asked for the driver (no compile, no GPU
** call). */
static void open_unstarted(const char *device) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  setenv("CUJIT_DEVICE", device, 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_eq(__atomic_load_n(&engine->drv_state, __ATOMIC_SEQ_CST), 0, "the driver was tried");
  cr_assert_eq(__atomic_load_n(&engine->drv_starter_state, __ATOMIC_SEQ_CST), 0,
               "a starter was made at open");
}

static void race(void) {
  pthread_t askers[ASKERS];
  pthread_barrier_init(&together, NULL, ASKERS);
  for (int i = 0; i < ASKERS; i++) cr_assert_eq(pthread_create(&askers[i], NULL, ask, NULL), 0);
  for (int i = 0; i < ASKERS; i++) pthread_join(askers[i], NULL);
  pthread_barrier_destroy(&together);
}

Test(driver_start, many_threads_asking_at_once_make_one_starter) {
  open_unstarted("0");
  race();
  cr_assert_eq(made, 1, "%d driver-starting threads for %d askers", made, ASKERS);
  cr_assert_eq(__atomic_load_n(&engine->drv_starter_state, __ATOMIC_SEQ_CST), 1);
  cj_driver_join(engine);
  cr_assert_eq(__atomic_load_n(&engine->drv_starter_state, __ATOMIC_SEQ_CST), 2);
  cr_assert_neq(__atomic_load_n(&engine->drv_state, __ATOMIC_SEQ_CST), 0,
                "the starter did not try the driver");
  race(); /* after the join: the driver was tried once, and is not again */
  cr_assert_eq(made, 1, "a starter was made after the join");
}

static void *open_driver_now(void *unused) {
  (void)unused;
  cj_driver *drv;
  cr_assert_eq(cj_need_driver(engine, &drv), CUJIT_OK, "the stand-in driver did not open: %s",
               cujit_errmsg(engine));
  return NULL;
}

/* A thread opens the driver itself (slowly, the lock held) while the others ask for a starter:
** they passed the unlocked check before it opened, and find it open under the lock. */
Test(driver_start, none_once_another_thread_opened_the_driver) {
  open_unstarted("0");
  slow_driver = 1;
  pthread_t opener;
  cr_assert_eq(pthread_create(&opener, NULL, open_driver_now, NULL), 0);
  pause_ms(100); /* the opener holds the lock, inside dlopen */
  race();
  pthread_join(opener, NULL);
  cr_assert_eq(__atomic_load_n(&engine->drv_state, __ATOMIC_SEQ_CST), 1,
               "the driver is not open: is the stand-in first on LD_LIBRARY_PATH?");
  cr_assert_eq(made, 0, "%d driver-starting threads after the driver was open", made);
}

Test(driver_start, none_while_the_cpu_device_is_current) {
  open_unstarted("cpu");
  race();
  cr_assert_eq(made, 0, "%d driver-starting threads with the CPU device current", made);
  cr_assert_eq(__atomic_load_n(&engine->drv_state, __ATOMIC_SEQ_CST), 0);
}
