/*
** jobs.h -- what the ThreadSanitizer programs of tests/tsan share: each of THREADS threads runs
** `work` on a job of its own, which names the first call that failed (EXPECT_OK, inside a loop
** over `r`, reading the program's `engine`); run_jobs starts them, joins them and prints each
** failure. The programs define THREADS and `engine` before including it.
*/
#ifndef CUJIT_TSAN_JOBS_H
#define CUJIT_TSAN_JOBS_H
#include <pthread.h>
#include <stdio.h>

#include "cujit.h"

typedef struct job {
  int id;
  char failure[512];
} job;

#define EXPECT_OK(call)                                                                            \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    if (st_ != CUJIT_OK) {                                                                         \
      snprintf(j->failure, sizeof j->failure, "thread %d round %d: %s: status %d: %s", j->id, r,   \
               #call, (int)st_, cujit_errmsg(engine));                                             \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

/* 0 when every job ran without a failure, else 1 (each failure printed). */
static int run_jobs(void *(*work)(void *)) {
  pthread_t t[THREADS];
  job jobs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){.id = i};
    if (pthread_create(&t[i], NULL, work, &jobs[i]) != 0) return 1;
  }
  int rc = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    if (jobs[i].failure[0]) fprintf(stderr, "FAIL: %s\n", jobs[i].failure), rc = 1;
  }
  return rc;
}
#endif
