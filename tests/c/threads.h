/*
** threads.h -- the work of test_threads.c, shared with tsan_threads.c (the same run without
** Criterion, whose arena cannot start under ThreadSanitizer): 8 threads on one engine defining,
** checking, launching and specialising, and compiling many programs at once (each call's own
** threads under the 8). Included by one file of each program.
*/
#ifndef CUJIT_TEST_THREADS_H
#define CUJIT_TEST_THREADS_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cujit.h"

#define THREADS 8
#define ROUNDS 20

/* A device address for a pointer parameter; never dereferenced (the kernels guard their stores). */
#define NULL_PTR ((cujit_arg){.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0})

typedef struct job {
  int id;
  char failure[512]; /* what went wrong, "" when nothing */
  cujit_kernel *specs[2];
} job;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      snprintf(j->failure, sizeof j->failure, __VA_ARGS__);                                        \
      return NULL;                                                                                 \
    }                                                                                              \
  } while (0)

static cujit_engine *engine;
static cujit_kernel *generic;
static const cujit_compile_options sm90 = {.size = sizeof sm90, .arch = "sm_90"};

static void *work(void *arg) {
  job *j = arg;
  for (int round = 0; round < ROUNDS; round++) {
    cujit_kernel *k;
    cujit_status st = cujit_kernel_define(engine, "tk(float a, float *y, int n)",
                                          "if (n < 0) y[0] = a;", NULL, &sm90, &k);
    EXPECT(st == CUJIT_OK, "define: %s", cujit_errmsg(engine));

    cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
    c.grid[0] = 1, c.block[0] = 32;
    cujit_arg two[] = {CUJIT_ARG_F(1.0), NULL_PTR};
    st = cujit_launch(k, &c, two, 2);
    EXPECT(st == CUJIT_ERROR_ARGUMENT, "count check: status %d", st);
    EXPECT(strstr(cujit_errmsg(engine), "takes 3 argument(s), got 2"), "message of this thread: %s",
           cujit_errmsg(engine));

    /* A value for this thread, so a message from another thread would show. */
    long long big = (1LL << 40) + j->id;
    cujit_arg far[] = {CUJIT_ARG_F(1.0), NULL_PTR, CUJIT_ARG_I(big)};
    st = cujit_launch(k, &c, far, 3);
    EXPECT(st == CUJIT_ERROR_ARGUMENT, "range check: status %d", st);
    char want[64];
    snprintf(want, sizeof want, "%lld does not fit", big);
    EXPECT(strstr(cujit_errmsg(engine), want), "wanted '%s' in: %s", want, cujit_errmsg(engine));

    cujit_arg good[] = {CUJIT_ARG_F(1.0), NULL_PTR, CUJIT_ARG_I(1)};
    st = cujit_launch(k, &c, good, 3);
    EXPECT(st == CUJIT_OK || st == CUJIT_ERROR_NO_DRIVER || st == CUJIT_ERROR_NO_DEVICE,
           "launch: status %d: %s", st, cujit_errmsg(engine));
    st = cujit_launch_n(k, 100, NULL, good, 3);
    EXPECT(st == CUJIT_OK || st == CUJIT_ERROR_NO_DRIVER || st == CUJIT_ERROR_NO_DEVICE,
           "launch_n: status %d: %s", st, cujit_errmsg(engine));
    cujit_kernel_free(k);

    if (round == 0) { /* many at once, from every thread: shared texts, its own, a bad one */
      char mine[128], bad_name[32];
      snprintf(mine, sizeof mine, "extern \"C\" __global__ void own%d(int *x) { *x = %d; }", j->id,
               j->id);
      snprintf(bad_name, sizeof bad_name, "bad%d.cu", j->id);
      const char *srcs[] = {"extern \"C\" __global__ void shared1(int *x) { *x = 1; }", mine,
                            "extern \"C\" __global__ void shared1(int *x) { *x = 1; }",
                            "extern \"C\" __global__ void b(int *x) { *x = ; }"};
      const char *names[] = {"s.cu", "own.cu", "s.cu", bad_name};
      const cujit_compile_options *opts[] = {&sm90, &sm90, &sm90, &sm90};
      cujit_program *progs[4];
      cujit_status each[4];
      st = cujit_program_compile_many(engine, 4, srcs, names, opts, progs, each);
      EXPECT(st == CUJIT_ERROR_COMPILE, "compile_many: status %d: %s", st, cujit_errmsg(engine));
      EXPECT(each[0] == CUJIT_OK && each[1] == CUJIT_OK && each[2] == CUJIT_OK,
             "compile_many: %d %d %d", each[0], each[1], each[2]);
      EXPECT(strstr(cujit_program_compile_many_message(engine, 3), bad_name),
             "this thread's item message: %s", cujit_program_compile_many_message(engine, 3));
      for (int i = 0; i < 4; i++) cujit_program_free(progs[i]);
      cujit_dtype lists[] = {CUJIT_F32, CUJIT_F64, CUJIT_I32};
      cujit_kernel *specs[3];
      st = cujit_kernel_specialize_many(generic, 3, lists, specs, NULL);
      EXPECT(st == CUJIT_OK, "specialize_many: %s", cujit_errmsg(engine));
    }

    cujit_dtype t = (round + j->id) % 2 ? CUJIT_F64 : CUJIT_F32;
    cujit_kernel *s;
    st = cujit_kernel_specialize(generic, &t, 1, &s);
    EXPECT(st == CUJIT_OK, "specialize: %s", cujit_errmsg(engine));
    cujit_kernel **seen = &j->specs[t == CUJIT_F64];
    EXPECT(!*seen || *seen == s, "one specialisation per type list");
    *seen = s;
  }
  return NULL;
}

/* 1 when NVRTC can be opened, asked of a throwaway engine so that the threads race to open it in
** theirs. */
static int nvrtc_available(void) {
  cujit_engine *probe;
  int version = 0;
  if (cujit_open(&probe) != CUJIT_OK) return 0;
  cujit_status st = cujit_nvrtc_version(probe, &version);
  cujit_close(probe);
  return st == CUJIT_OK;
}

/* Runs the threads; returns 0, or 1 with `why` saying what went wrong first. */
static int run_threads(char *why, size_t len) {
  pthread_t th[THREADS];
  job jobs[THREADS];
  memset(jobs, 0, sizeof jobs);
  why[0] = '\0';
  if (cujit_kernel_define(engine, "gscale(T a, T *y, int n)", "if (n < 0) y[0] = a;", NULL, &sm90,
                          &generic) != CUJIT_OK) {
    snprintf(why, len, "define: %s", cujit_errmsg(engine));
    return 1;
  }
  for (int i = 0; i < THREADS; i++) {
    jobs[i].id = i;
    if (pthread_create(&th[i], NULL, work, &jobs[i]) != 0) {
      snprintf(why, len, "pthread_create failed");
      for (int k = 0; k < i; k++) pthread_join(th[k], NULL);
      return 1;
    }
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < THREADS && !why[0]; i++) {
    if (jobs[i].failure[0]) snprintf(why, len, "thread %d: %s", i, jobs[i].failure);
    for (int t = 0; t < 2 && !why[0]; t++)
      if (jobs[i].specs[t] != jobs[0].specs[t])
        snprintf(why, len, "thread %d sees another specialisation", i);
  }
  return why[0] != '\0';
}

#endif
