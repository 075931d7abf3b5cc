/*
** test_threads.c -- what include/cujit.h promises about threads, exercised from 8 threads at once
** on one engine (tests/c/threads.h): defining kernels (the same one, so the map of loaded programs
** and the cache are shared), specialising one generic kernel, checking arguments, launching
** (which, with no GPU, fails with NO_DRIVER after the arguments are checked), and per-thread error
** messages. tests/tsan/tsan_threads.c runs the same under ThreadSanitizer. And the first CPU-device
** compiles of a process, made by 8 threads at once: the compiler is asked its version once.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "scratch.h"
#include "threads.h"

static void setup(void) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("threads"), 1);
  if (!nvrtc_available()) cr_skip_test("no NVRTC");
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void teardown(void) {
  cujit_close(engine);
  cj_scratch_remove();
}

TestSuite(threads, .init = setup, .fini = teardown, .timeout = 300);

Test(threads, one_engine_eight_threads) {
  char why[600];
  cr_assert_eq(run_threads(why, sizeof why), 0, "%s", why);
}

/* --- first CPU-device compiles from 8 threads at once ---------------------------------------- */

static char counted[600]; /* a line per `--version` the stand-in compiler answered */

/* CUJIT_CXX: g++ behind a script that counts `--version` and answers it slowly, so that every
** thread asks for the compiler's identity before any answer is stored. */
static void cpu_setup(void) {
  const char *dir = cj_scratch_make("threads_cpu");
  setenv("CUJIT_CACHE_DIR", dir, 1);
  char script[600];
  snprintf(script, sizeof script, "%s/slow-g++", dir);
  snprintf(counted, sizeof counted, "%s/versions", dir);
  FILE *f = fopen(script, "w");
  cr_assert(f);
  fprintf(f,
          "#!/bin/sh\n"
          "if [ \"$1\" = --version ]; then echo asked >>'%s'; sleep 0.3; fi\n"
          "exec g++ \"$@\"\n",
          counted);
  fclose(f);
  chmod(script, 0700);
  setenv("CUJIT_CXX", script, 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_eq(cujit_set_device(engine, CUJIT_DEVICE_CPU), CUJIT_OK);
}

static void cpu_teardown(void) {
  cujit_close(engine);
  unsetenv("CUJIT_CXX");
  cj_scratch_remove();
}

static pthread_barrier_t all_ready;

static void *first_compile(void *arg) {
  job *j = arg;
  char body[64];
  snprintf(body, sizeof body, "o[0] = %d;", j->id); /* a program of its own: a compile each */
  pthread_barrier_wait(&all_ready);
  cujit_kernel *k;
  if (cujit_kernel_define(engine, "first(int *o)", body, NULL, NULL, &k) != CUJIT_OK)
    snprintf(j->failure, sizeof j->failure, "thread %d: %s", j->id, cujit_errmsg(engine));
  else
    cujit_kernel_free(k);
  return NULL;
}

TestSuite(threads_cpu, .init = cpu_setup, .fini = cpu_teardown, .timeout = 300);

/* Before: each thread ran `--version` and stored its own strings, all but the last leaked
** (LeakSanitizer, scripts/sanitize.sh); here the count shows it in every build. */
Test(threads_cpu, first_compiles_at_once_ask_the_compiler_once) {
  job jobs[THREADS];
  pthread_t t[THREADS];
  pthread_barrier_init(&all_ready, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) {
    memset(&jobs[i], 0, sizeof jobs[i]);
    jobs[i].id = i;
    cr_assert_eq(pthread_create(&t[i], NULL, first_compile, &jobs[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&all_ready);
  for (int i = 0; i < THREADS; i++) cr_expect_str_empty(jobs[i].failure, "%s", jobs[i].failure);
  FILE *f = fopen(counted, "r");
  cr_assert(f, "the stand-in compiler was never asked its version");
  int lines = 0;
  for (int ch; (ch = fgetc(f)) != EOF;) lines += ch == '\n';
  fclose(f);
  cr_expect_eq(lines, 1, "`--version` ran %d times for one compiler", lines);
}
