/*
** workers.c -- jobs on threads made for one call and joined before it returns (workers.h). No
** pool kept between calls: a compile costs milliseconds to seconds, a thread tens of
** microseconds, and a pool would be a thread left running between calls and at exit.
*/
#define _GNU_SOURCE /* sched_getaffinity */
#include "workers.h"
#include "env.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 1024

typedef struct work {
  size_t count;
  atomic_size_t next; /* the next item to hand out */
  void (*job)(void *user, size_t index);
  void *user;
} work;

static void run(work *w) {
  for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->count;) w->job(w->user, i);
}

/* Not named: a thread the work makes inherits its maker's name, and NVRTC 13 may run cuInit in
** a worker, whose driver threads would then carry a name of cujit's for the life of the process. */
static void *run_items(void *arg) {
  run(arg);
  return NULL;
}

int cj_workers_run(size_t count, int threads, void (*job)(void *user, size_t index), void *user) {
  work w = {.count = count, .job = job, .user = user};
  atomic_init(&w.next, 0);
  size_t want = threads < 1 ? 1 : (size_t)threads;
  if (want > count) want = count;
  if (want > MAX_THREADS) want = MAX_THREADS;
  pthread_t *ids = want > 1 ? malloc((want - 1) * sizeof *ids) : NULL;
  size_t made = 0;
  while (ids && made + 1 < want && pthread_create(&ids[made], NULL, run_items, &w) == 0) made++;
  run(&w); /* the caller works too, and finishes what threads not made would have done */
  for (size_t i = 0; i < made; i++) pthread_join(ids[i], NULL);
  free(ids);
  return (int)made + 1;
}

int cj_compile_threads(char *why, size_t len) {
  unsigned long long n;
  int got = cj_env_uint("CUJIT_COMPILE_THREADS", 1, MAX_THREADS, &n, why, len);
  if (got == CJ_ENV_SET) return (int)n;
  if (got == CJ_ENV_BAD) return 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)(cores > MAX_THREADS ? MAX_THREADS : cores) : 1;
}
