/*
** test_compile_many.c -- many programs compiled at once (cujit_program_compile_many,
** cujit_kernel_specialize_many) and the driver started beside a first compile: each item's
** status, message and program, good items usable beside bad ones, repeats in one call compiled
** once, cache hits, CUJIT_COMPILE_THREADS read strictly, 1 compiling on the calling thread alone
** and 2 compiling at once (seen by a C++ compiler wrapper that waits for a second compiler to
** run), a generic kernel's type lists, no thread of cujit's left after the call or cujit_close
** (the process's threads counted, the driver's own made first), and the driver's errors
** unchanged by its early start. GPU compiles use an explicit sm_90 (NVRTC, no
** GPU); the concurrency cases use the CPU device's g++. Runs also against the stand-in driver
** (tests/CMakeLists.txt: c.test_compile_many.stub_driver), where the driver does open.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h" /* the engine's driver state: was it started, and was it joined */
#include "fixture.h"
#include "expect.h"

static void open_engine(void) {
  unsetenv("CUJIT_COMPILE_THREADS");
  cj_fixture_open();
}

static void close_engine(void) {
  cj_fixture_close();
  unsetenv("CUJIT_COMPILE_THREADS");
  unsetenv("CUJIT_CXX");
}

TestSuite(many, .init = open_engine, .fini = close_engine, .timeout = 300);

static int nvrtc_here(void) {
  int v = 0;
  return cujit_nvrtc_version(engine, &v) == CUJIT_OK;
}

#define NEED_NVRTC()                                                                               \
  do {                                                                                             \
    if (!nvrtc_here()) cr_skip_test("no NVRTC here: %s", cujit_errmsg(engine));                    \
  } while (0)

static const char good_a[] = "extern \"C\" __global__ void a(int *x) { *x = 1; }\n";
static const char good_b[] = "extern \"C\" __global__ void b(float *x) { *x = 2.0f; }\n";
static const char bad_syntax[] = "extern \"C\" __global__ void c(int *x) {\n  *x = ;\n}\n";

static uint64_t misses(void) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  return s.misses;
}

static int has_entry(const cujit_program *p, const char *name) {
  size_t len;
  const char *ptx = cujit_program_ptx(p, &len);
  char want[64];
  snprintf(want, sizeof want, ".entry %s(", name);
  return ptx && strstr(ptx, want) != NULL;
}

Test(many, good_and_bad_each_with_its_status_and_message) {
  NEED_NVRTC();
  const char *src[] = {good_a, bad_syntax, good_b, NULL};
  const char *names[] = {"a.cu", "bad.cu", NULL, "null.cu"};
  const cujit_compile_options *opt[] = {&sm90, &sm90, &sm90, &sm90};
  cujit_program *p[4];
  cujit_status st[4];
  cujit_status all = cujit_program_compile_many(engine, 4, src, names, opt, p, st);
  cr_assert_eq(all, CUJIT_ERROR_COMPILE, "the first failure's status: %s", cujit_errmsg(engine));
  cr_assert_str_eq(cujit_errmsg(engine) + strlen(cujit_errmsg(engine)) -
                       strlen(cujit_program_compile_many_message(engine, 1)),
                   cujit_program_compile_many_message(engine, 1),
                   "errmsg ends with item 1's message: %s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine),
                   "cujit_program_compile_many: 2 of 4 programs failed; the first, item 1: "),
            "%s", cujit_errmsg(engine));
  cr_assert_eq(st[0], CUJIT_OK);
  cr_assert_eq(st[1], CUJIT_ERROR_COMPILE);
  cr_assert_eq(st[2], CUJIT_OK);
  cr_assert_eq(st[3], CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_str_eq(cujit_program_compile_many_message(engine, 0), "");
  cr_assert_str_eq(cujit_program_compile_many_message(engine, 2), "");
  const char *m1 = cujit_program_compile_many_message(engine, 1);
  cr_assert(strstr(m1, "bad.cu:2: error"), "names the file and line: %s", m1);
  cr_assert(strstr(cujit_program_compile_many_message(engine, 3), "source is NULL"), "%s",
            cujit_program_compile_many_message(engine, 3));
  cr_assert_null(cujit_program_compile_many_message(engine, 4), "past the count: NULL");
  cr_assert_null(p[1]);
  cr_assert_null(p[3]);
  cr_assert(has_entry(p[0], "a") && has_entry(p[2], "b"), "the good ones are the programs asked");
  cujit_kernel *k;
  EXPECT_OK(cujit_program_kernel(p[2], "b", &k));
  cr_assert_str_eq(cujit_kernel_signature(k), "b(float *x)");
  cujit_kernel_free(k);
  for (int i = 0; i < 4; i++) cujit_program_free(p[i]);
}

Test(many, statuses_may_be_null_and_an_item_may_have_no_options) {
  NEED_NVRTC();
  const char *src[] = {bad_syntax, good_a};
  const cujit_compile_options *opt[] = {&sm90, NULL}; /* item 1: the current device's arch */
  cujit_program *p[2];
  cujit_device *dev;
  int gpu = cujit_current_device(engine, &dev) == CUJIT_OK;
  cr_assert_eq(cujit_program_compile_many(engine, 2, src, NULL, opt, p, NULL), CUJIT_ERROR_COMPILE);
  cr_assert(strstr(cujit_program_compile_many_message(engine, 0), "<source>:2: error"), "%s",
            cujit_program_compile_many_message(engine, 0));
  if (gpu) {
    cr_assert_str_eq(cujit_program_compile_many_message(engine, 1), "");
    cr_assert(has_entry(p[1], "a"));
  } else {
    cr_assert(strstr(cujit_program_compile_many_message(engine, 1), "no GPU to take the arch from"),
              "%s", cujit_program_compile_many_message(engine, 1));
    cr_assert_null(p[1]);
  }
  cujit_program_free(p[1]);
}

Test(many, an_item_with_bad_options_fails_alone) {
  NEED_NVRTC();
  cujit_compile_options unsized = {.arch = "sm_90"}; /* no size: refused, naming the macro */
  const char *src[] = {good_a, good_b};
  const cujit_compile_options *opt[] = {&sm90, &unsized};
  cujit_program *p[2];
  cujit_status st[2];
  cr_assert_eq(cujit_program_compile_many(engine, 2, src, NULL, opt, p, st),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(st[0], CUJIT_OK);
  cr_assert_eq(st[1], CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_program_compile_many_message(engine, 1), "CUJIT_COMPILE_OPTIONS_INIT"),
            "%s", cujit_program_compile_many_message(engine, 1));
  cr_assert_null(p[1]);
  cujit_program_free(p[0]);
}

Test(many, every_item_tried_and_the_messages_replaced_by_the_next_call) {
  NEED_NVRTC();
  const char *bad[] = {bad_syntax, "garbage(", bad_syntax};
  const char *names[] = {"one.cu", "two.cu", "three.cu"};
  const cujit_compile_options *opt[] = {&sm90, &sm90, &sm90};
  cujit_program *p[3];
  cujit_status st[3];
  cr_assert_neq(cujit_program_compile_many(engine, 3, bad, names, opt, p, st), CUJIT_OK);
  for (int i = 0; i < 3; i++) {
    cr_assert_neq(st[i], CUJIT_OK, "item %d", i);
    cr_assert(strstr(cujit_program_compile_many_message(engine, (size_t)i), names[i]), "%s",
              cujit_program_compile_many_message(engine, (size_t)i));
    cr_assert_null(p[i]);
  }
  cr_assert(strstr(cujit_errmsg(engine), "3 of 3 programs failed; the first, item 0"), "%s",
            cujit_errmsg(engine));
  const char *one[] = {good_a};
  EXPECT_OK(cujit_program_compile_many(engine, 1, one, NULL, opt, p, st));
  cr_assert_str_eq(cujit_program_compile_many_message(engine, 0), "");
  cr_assert_null(cujit_program_compile_many_message(engine, 1), "the old call's items are gone");
  cujit_program_free(p[0]);
}

Test(many, a_repeat_in_one_call_is_compiled_once) {
  NEED_NVRTC();
  const char *src[] = {good_a, good_b, good_a};
  const char *names[] = {"a.cu", "b.cu", "a.cu"};
  const cujit_compile_options *opt[] = {&sm90, &sm90, &sm90};
  cujit_program *p[3];
  cujit_status st[3];
  setenv("CUJIT_COMPILE_THREADS", "3", 1);
  EXPECT_OK(cujit_program_compile_many(engine, 3, src, names, opt, p, st));
  cr_assert_eq(cujit_program_from_cache(p[0]), 0, "the first is compiled");
  cr_assert_eq(cujit_program_from_cache(p[1]), 0);
  cr_assert_eq(cujit_program_from_cache(p[2]), 1, "the repeat is the first's, from memory");
  cr_assert_str_eq(cujit_program_ptx(p[0], NULL), cujit_program_ptx(p[2], NULL));
  cr_assert_neq(p[0], p[2], "two handles, each freed alone");
  cr_assert_eq(misses(), 2, "two compiles for three items");
  for (int i = 0; i < 3; i++) cujit_program_free(p[i]);
}

Test(many, cache_hits_are_taken_per_item) {
  NEED_NVRTC();
  cujit_program *first;
  EXPECT_OK(cujit_program_compile(engine, good_a, "a.cu", &sm90, &first));
  cr_assert_eq(cujit_program_from_cache(first), 0);
  const char *src[] = {good_b, good_a};
  const char *names[] = {"b.cu", "a.cu"};
  const cujit_compile_options *opt[] = {&sm90, &sm90};
  cujit_program *p[2];
  EXPECT_OK(cujit_program_compile_many(engine, 2, src, names, opt, p, NULL));
  cr_assert_eq(cujit_program_from_cache(p[0]), 0);
  cr_assert_eq(cujit_program_from_cache(p[1]), 1, "compiled before this call: a hit");
  cujit_program_free(first);
  cujit_program_free(p[0]);
  cujit_program_free(p[1]);
}

Test(many, refusals_of_the_arguments) {
  cujit_program *p[2] = {(cujit_program *)1, (cujit_program *)1};
  const char *src[] = {good_a, good_b};
  cr_assert_eq(cujit_program_compile_many(NULL, 2, src, NULL, NULL, p, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_program_compile_many(engine, 2, NULL, NULL, NULL, p, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_null(p[0], "the programs are cleared before any refusal");
  cr_assert_null(p[1]);
  cr_assert(strstr(cujit_errmsg(engine), "cujit_program_compile_many: sources is NULL"), "%s",
            cujit_errmsg(engine));
  cr_assert_null(cujit_program_compile_many_message(engine, 0), "a refusal keeps no items");
  cr_assert_eq(cujit_program_compile_many(engine, 2, src, NULL, NULL, NULL, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "programs is NULL; pass an array of 2 cujit_program *"),
            "%s", cujit_errmsg(engine));
  EXPECT_OK(cujit_program_compile_many(engine, 0, NULL, NULL, NULL, NULL, NULL));
}

Test(many, compile_threads_is_read_strictly) {
  static const char *const bad[] = {"0", "abc", "4x", "-1", "1025", " 2", "2.0", "+3"};
  const char *src[] = {good_a};
  cujit_program *p[1];
  cujit_status st[1] = {CUJIT_OK};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("CUJIT_COMPILE_THREADS", bad[i], 1);
    p[0] = (cujit_program *)1;
    cr_assert_eq(cujit_program_compile_many(engine, 1, src, NULL, NULL, p, st),
                 CUJIT_ERROR_INVALID_ARGUMENT, "'%s' refused", bad[i]);
    char want[128];
    snprintf(want, sizeof want,
             "CUJIT_COMPILE_THREADS='%s' is not understood: it takes a whole "
             "number from 1 to 1024",
             bad[i]);
    cr_assert(strstr(cujit_errmsg(engine), want), "%s", cujit_errmsg(engine));
    cr_assert_null(p[0], "nothing compiled");
  }
  if (!nvrtc_here()) return;
  const cujit_compile_options *opt[] = {&sm90};
  static const char *const good[] = {"1", "2", "1024", ""}; /* "": unset */
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    setenv("CUJIT_COMPILE_THREADS", good[i], 1);
    EXPECT_OK(cujit_program_compile_many(engine, 1, src, NULL, opt, p, st));
    cujit_program_free(p[0]);
  }
}

/* --- compiling at once, seen by the compiler ---------------------------------------------------
 */

/* A C++ compiler wrapper for the CPU device: a compile (not --version) marks itself running,
** waits up to `wait` seconds for another compile to be running, logs "together" or "alone", then
** runs g++. Returns the directory holding its log. */
static const char *wrapper(const char *wait) {
  static char dir[600]; /* inside the test's scratch directory, the cache's (fixture.h) */
  snprintf(dir, sizeof dir, "%s/cxx-wrapper", getenv("CUJIT_CACHE_DIR"));
  cr_assert_eq(mkdir(dir, 0700), 0);
  char path[700];
  snprintf(path, sizeof path, "%s/cxx.sh", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f,
          "#!/bin/sh\n"
          "case \" $* \" in *' --version '*) exec g++ \"$@\";; esac\n"
          "d='%s'; touch \"$d/run.$$\"; n=0; seen=alone\n"
          "while [ $n -lt %s ]; do\n"
          "  if [ $(ls \"$d\" | grep -c '^run\\.') -gt 1 ]; then seen=together; break; fi\n"
          "  sleep 0.1; n=$((n + 1))\n"
          "done\n"
          "echo $seen >> \"$d/log\"\n"
          "g++ \"$@\"; rc=$?; rm -f \"$d/run.$$\"; exit $rc\n",
          dir, wait);
  fclose(f);
  chmod(path, 0755);
  setenv("CUJIT_CXX", path, 1);
  return dir;
}

static void log_of(const char *dir, int *together, int *alone) {
  char path[700], line[64];
  snprintf(path, sizeof path, "%s/log", dir);
  FILE *f = fopen(path, "r");
  *together = *alone = 0;
  while (f && fgets(line, sizeof line, f)) {
    *together += strncmp(line, "together", 8) == 0;
    *alone += strncmp(line, "alone", 5) == 0;
  }
  if (f) fclose(f);
}

static const cujit_compile_options cpu_arch = {.size = sizeof(cujit_compile_options),
                                               .arch = "cpu"};

Test(many, two_threads_compile_two_programs_at_once) {
  const char *dir = wrapper("600"); /* tenths: a compile waits up to 60 s for the other */
  setenv("CUJIT_COMPILE_THREADS", "2", 1);
  const char *src[] = {good_a, good_b};
  const cujit_compile_options *opt[] = {&cpu_arch, &cpu_arch};
  cujit_program *p[2];
  EXPECT_OK(cujit_program_compile_many(engine, 2, src, NULL, opt, p, NULL));
  int together, alone;
  log_of(dir, &together, &alone);
  cr_assert_geq(together, 2, "both compilers ran at the same time (%d together, %d alone)",
                together, alone);
  cujit_program_free(p[0]);
  cujit_program_free(p[1]);
}

Test(many, one_thread_compiles_one_after_another) {
  const char *dir = wrapper("30"); /* 3 s: ample for a second compiler to show up if it ran */
  setenv("CUJIT_COMPILE_THREADS", "1", 1);
  const char *src[] = {good_a, good_b};
  const cujit_compile_options *opt[] = {&cpu_arch, &cpu_arch};
  cujit_program *p[2];
  EXPECT_OK(cujit_program_compile_many(engine, 2, src, NULL, opt, p, NULL));
  int together, alone;
  log_of(dir, &together, &alone);
  cr_assert_eq(together, 0, "no compile overlapped another (%d together)", together);
  cr_assert_geq(alone, 2, "each program was compiled (%d)", alone);
  cujit_program_free(p[0]);
  cujit_program_free(p[1]);
}

/* --- a generic kernel's type lists ------------------------------------------------------------ */

Test(many, specialize_many_compiles_each_list_once_and_reports_each) {
  NEED_NVRTC();
  cujit_kernel *g;
  EXPECT_OK(cujit_kernel_define(engine, "mod2(T a, T *y)", "y[0] = a % 2;", NULL, &sm90, &g));
  cujit_dtype lists[] = {CUJIT_I32, CUJIT_F32, CUJIT_DTYPE_NONE, CUJIT_I64, CUJIT_I32};
  cujit_kernel *k[5];
  cujit_status st[5];
  cr_assert_eq(cujit_kernel_specialize_many(g, 5, lists, k, st), CUJIT_ERROR_COMPILE, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine),
                   "cujit_kernel_specialize_many: 2 of 5 type lists failed; the first, item 1"),
            "%s", cujit_errmsg(engine));
  cr_assert_eq(st[0], CUJIT_OK);
  cr_assert_eq(st[1], CUJIT_ERROR_COMPILE, "float % int does not compile");
  cr_assert_eq(st[2], CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(st[3], CUJIT_OK);
  cr_assert_eq(st[4], CUJIT_OK);
  cr_assert(strstr(cujit_program_compile_many_message(engine, 1), "mod2"), "%s",
            cujit_program_compile_many_message(engine, 1));
  cr_assert(strstr(cujit_program_compile_many_message(engine, 2), "not a concrete dtype"), "%s",
            cujit_program_compile_many_message(engine, 2));
  cr_assert_null(k[1]);
  cr_assert_null(k[2]);
  cr_assert_eq(k[0], k[4], "the same list, the same specialisation");
  cr_assert_str_eq(cujit_kernel_signature(k[3]), "mod2(long long a, long long *y)");
  cujit_kernel *again;
  EXPECT_OK(cujit_kernel_specialize(g, &lists[3], 1, &again));
  cr_assert_eq(again, k[3], "kept on the generic kernel");
  cr_assert_eq(cujit_program_from_cache(cujit_kernel_program(again)), 1,
               "the specialisation found its program built by the call's compiles");
  cr_assert_eq(misses(), 3, "one compile per distinct list that could be made (I32, F32, I64)");
  cujit_kernel *concrete;
  EXPECT_OK(cujit_kernel_define(engine, "c(int *y)", "y[0] = 1;", NULL, &sm90, &concrete));
  cr_assert_eq(cujit_kernel_specialize_many(concrete, 1, lists, k, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "is not generic"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_specialize_many(g, 1, NULL, k, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "types is NULL; pass 1 lists of 1 dtypes"), "%s",
            cujit_errmsg(engine));
  cujit_kernel_free(concrete);
  cujit_kernel_free(g);
}

Test(many, specialize_many_ahead_with_no_outputs) {
  NEED_NVRTC();
  cujit_kernel *g;
  EXPECT_OK(cujit_kernel_define(engine, "twice(T *y)", "y[0] += y[0];", NULL, &sm90, &g));
  cujit_dtype lists[] = {CUJIT_F32, CUJIT_F64};
  EXPECT_OK(cujit_kernel_specialize_many(g, 2, lists, NULL, NULL)); /* only made and kept */
  cr_assert_str_eq(cujit_program_compile_many_message(engine, 1), "");
  uint64_t before = misses();
  for (int i = 0; i < 2; i++) {
    cujit_kernel *k;
    EXPECT_OK(cujit_kernel_specialize(g, &lists[i], 1, &k));
    cr_assert_eq(cujit_program_from_cache(cujit_kernel_program(k)), 1, "list %d was made ahead", i);
  }
  cr_assert_eq(misses(), before, "no compile at the specialisations");
  cujit_kernel_free(g);
}

/* --- the driver started beside a first compile ------------------------------------------------ */

/* The number of threads of this process. */
static int threads_now(void) {
  DIR *d = opendir("/proc/self/task");
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *t; (t = readdir(d)) != NULL;) n += t->d_name[0] != '.';
  closedir(d);
  return n;
}

/* The names of this process's threads (comm), for a failure's message. */
static void thread_names(char *out, size_t len) {
  DIR *d = opendir("/proc/self/task");
  size_t at = 0;
  out[0] = '\0';
  for (struct dirent *t; d && (t = readdir(d)) != NULL;) {
    if (t->d_name[0] == '.') continue;
    char path[300], name[32] = "?";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", t->d_name);
    FILE *f = fopen(path, "r");
    if (f && fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
    if (f) fclose(f);
    int n = snprintf(out + at, len - at, "%s%s:%s", at ? " " : "", t->d_name, name);
    if (n < 0 || (size_t)n >= len - at) break;
    at += (size_t)n;
  }
  if (d) closedir(d);
}

/* A joined thread leaves /proc/self/task a moment after its join returns: the kernel wakes the
** joiner when the thread lets go of its memory, and unlists it later in its exit (seen on a
** 16-core machine: one more thread counted just after compile_many returned). So the checks
** below look again for up to SETTLE_MS: far less than the 300 ms a starter is kept inside cuInit
** (close_joins_the_driver_starter), so a thread left running is still seen. */
#define SETTLE_MS 50

static void sleep_ms(int ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

/* Whether thread `tid` of this process still exists after SETTLE_MS. */
static int thread_alive(int tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d", tid);
  struct stat st;
  for (int ms = 0; ms < SETTLE_MS && stat(path, &st) == 0; ms++) sleep_ms(1);
  return stat(path, &st) == 0;
}

/* The number of this process's threads once it is `want`, or after SETTLE_MS. */
static int threads_settled(int want) {
  int n = threads_now();
  for (int ms = 0; ms < SETTLE_MS && n != want; ms++) {
    sleep_ms(1);
    n = threads_now();
  }
  return n;
}

/* The starter's thread id, once it has run (it stores it first thing). */
static int starter_tid(cujit_engine *e) {
  int tid = 0;
  for (int i = 0; i < 10000 && !(tid = __atomic_load_n(&e->drv_starter_tid, __ATOMIC_ACQUIRE)); i++)
    usleep(1000);
  cr_assert_neq(tid, 0, "the starter thread never ran");
  return tid;
}

Test(many, a_miss_starts_the_driver_and_leaves_no_thread) {
  NEED_NVRTC();
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine, good_a, "a.cu", &sm90, &p));
  cr_assert_neq(__atomic_load_n(&engine->drv_starter_state, __ATOMIC_ACQUIRE), 0,
                "a compile for a GPU that missed the cache started the driver");
  int tid = starter_tid(engine);
  cj_driver_join(engine);
  cr_assert_eq(engine->drv_starter_state, 2, "joined");
  cr_assert_neq(engine->drv_state, 0, "the driver was tried (1 here, or -1 without one)");
  cr_assert(!thread_alive(tid), "the starter is gone after the join");
  cj_driver_join(engine); /* a second join is nothing */
  cujit_program_free(p);
}

/* cujit_close waits for a starter still starting the driver: the engine it writes into is freed
** by the close. Against the stand-in (c.test_compile_many.stub_driver), each of its calls is made
** to take 0.3 s, so the starter is inside cuInit when the close comes; a real driver's cuInit
** (about 0.2 s) often is too. */
Test(many, close_joins_the_driver_starter) {
  NEED_NVRTC();
  setenv("CUJIT_STUB_CALL_NS", "300000000", 1); /* read at the stand-in's first call: none yet */
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine, good_b, "b.cu", &sm90, &p));
  int tid = starter_tid(engine);
  cujit_program_free(p);
  cujit_close(engine);
  engine = NULL;
  cr_assert(!thread_alive(tid), "the starter outlived cujit_close");
  unsetenv("CUJIT_STUB_CALL_NS");
}

Test(many, the_driver_errors_are_those_of_an_engine_that_never_compiled) {
  NEED_NVRTC();
  cujit_engine *fresh;
  cr_assert_eq(cujit_open(&fresh), CUJIT_OK);
  int v1 = -1, v2 = -1;
  cujit_status s1 = cujit_driver_version(fresh, &v1);
  char m1[CJ_MSG_MAX];
  snprintf(m1, sizeof m1, "%s", cujit_errmsg(fresh));
  cujit_close(fresh);
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine, good_b, "b.cu", &sm90, &p));
  cujit_status s2 = cujit_driver_version(engine, &v2); /* joins the starter, if it still runs */
  cr_assert_eq(s2, s1, "the same status (%d, %d)", s1, s2);
  cr_assert_eq(v2, v1);
  if (s1 != CUJIT_OK) cr_assert_str_eq(cujit_errmsg(engine), m1);
  cujit_program_free(p);
}

Test(many, no_compile_thread_outlives_the_call_nor_a_driver_starter_close) {
  NEED_NVRTC();
  cujit_engine *e2;
  cr_assert_eq(cujit_open(&e2), CUJIT_OK);
  int v;
  cujit_driver_version(e2, &v); /* the driver's own threads, if any, made before counting */
  int before = threads_now();
  char names_before[1024], names_after[1024];
  thread_names(names_before, sizeof names_before);
  const char *src[] = {good_a, good_b, bad_syntax};
  const cujit_compile_options *opt[] = {&sm90, &sm90, &sm90};
  cujit_program *p[3];
  setenv("CUJIT_COMPILE_THREADS", "3", 1); /* a fresh cache: every item a miss */
  cujit_program_compile_many(e2, 3, src, NULL, opt, p, NULL);
  int after = threads_settled(before);
  thread_names(names_after, sizeof names_after);
  cr_assert_eq(after, before, "the compile threads are joined by the call (before: %s; after: %s)",
               names_before, names_after);
  cujit_close(e2);  /* frees the programs too */
  cujit_engine *e3; /* and a driver starter: joined by cujit_close */
  cr_assert_eq(cujit_open(&e3), CUJIT_OK);
  cujit_program *q;
  cr_assert_eq(cujit_program_compile(e3, "extern \"C\" __global__ void a3(int *x) { *x = 3; }",
                                     "a3.cu", &sm90, &q),
               CUJIT_OK, "%s", cujit_errmsg(e3));
  int tid = starter_tid(e3);
  cujit_close(e3);
  cr_assert(!thread_alive(tid), "the driver's starter is joined by cujit_close");
}

Test(many, a_hit_or_a_cpu_compile_starts_no_driver) {
  NEED_NVRTC();
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine, good_a, "a.cu", &sm90, &p));
  cujit_program_free(p);
  cujit_engine *e2;
  cr_assert_eq(cujit_open(&e2), CUJIT_OK); /* the same cache directory: a disk hit */
  EXPECT_OK(cujit_program_compile(e2, good_a, "a.cu", &sm90, &p));
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert_eq(e2->drv_starter_state, 0, "a hit needs no driver started");
  EXPECT_OK(cujit_program_compile(e2, good_b, "b.cu", &cpu_arch, &p));
  cr_assert_eq(e2->drv_starter_state, 0, "neither does the CPU device");
  cr_assert_eq(e2->drv_state, 0);
  cujit_close(e2);
}

Test(many, the_cpu_device_chosen_starts_no_driver) {
  NEED_NVRTC();
  setenv("CUJIT_DEVICE", "cpu", 1);
  cujit_engine *e2;
  cr_assert_eq(cujit_open(&e2), CUJIT_OK);
  unsetenv("CUJIT_DEVICE");
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e2, good_b, "b2.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(e2));
  cr_assert_eq(cujit_program_from_cache(p), 0, "a miss, for a GPU");
  cr_assert_eq(e2->drv_starter_state, 0, "yet the driver is not started: the CPU device is chosen");
  cr_assert_eq(e2->drv_state, 0);
  cujit_program_free(p);
  cujit_close(e2);
}
