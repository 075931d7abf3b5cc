/*
** test_nvrtc_worker.c -- NVRTC compiles in worker processes (compile/remote.h): while one compile
** runs in the process's NVRTC, the others of a cujit_program_compile_many go to
** cujit-nvrtc-worker and come back byte for byte what the process makes alone (PTX, CUBIN,
** lowered names of C++ kernels, compile errors with their lines); CUJIT_NVRTC_WORKER=off, a path
** that is no program, a program that exits at once and one that answers garbage all leave the
** compiles to the process, right and with at most one warning; the workers end with the engine,
** none left behind, each with status 0; a compile sent to a worker makes no NVRTC call in the
** process while the process's own compile runs. Needs NVRTC, no GPU (an explicit sm_90).
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "expect.h"

static void open_engine(void) {
  setenv("CUJIT_CACHE", "off", 1); /* every compile a real one */
  setenv("CUJIT_COMPILE_THREADS", "4", 1);
  unsetenv("CUJIT_NVRTC_WORKER");
  cj_fixture_open();
  int v = 0;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK) cr_skip_test("no NVRTC here");
}

static void close_engine(void) {
  cj_fixture_close();
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_COMPILE_THREADS");
  unsetenv("CUJIT_NVRTC_WORKER");
}

TestSuite(worker, .init = open_engine, .fini = close_engine, .timeout = 300);

/* Item 0 includes <cooperative_groups.h> (about a second of NVRTC's front end), so that the items
** after it start while it runs: they are the ones a worker takes. */
#define ITEMS 4
static const char heavy[] = "#include <cooperative_groups.h>\n"
                            "namespace cg = cooperative_groups;\n"
                            "__global__ void h(float *x) {\n"
                            "  x[cg::this_thread_block().thread_rank()] = 1.0f;\n"
                            "}\n";
static const char cxx_kernel[] = "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }\n"
                                 "__global__ void plain(double *x) { *x = 3.0; }\n";
static const char small[] = "extern \"C\" __global__ void s(int *x, int n) {\n"
                            "  for (int i = 0; i < n; i++) x[i] = i * 7;\n"
                            "}\n";
static const char bad[] = "extern \"C\" __global__ void b(int *x) {\n"
                          "  int y = 1;\n"
                          "  *x = undeclared_name + y;\n"
                          "}\n";

typedef struct outcome {
  cujit_status status[ITEMS];
  char *ptx[ITEMS], *message[ITEMS];
  void *cubin[ITEMS];
  size_t cubin_len[ITEMS];
  uint64_t in_workers;
} outcome;

static void dup_bytes(void **to, const void *from, size_t n) {
  *to = from ? malloc(n ? n : 1) : NULL;
  if (from) memcpy(*to, from, n);
}

/* The four items of round `round` (its number in a comment before each text: no round is a memo
** hit of another) compiled at once by one cujit_program_compile_many. */
static void compile_items(outcome *out, int round) {
  static char texts[ITEMS][1024];
  const char *plain[ITEMS] = {heavy, cxx_kernel, small, bad}, *srcs[ITEMS];
  for (int i = 0; i < ITEMS; i++)
    snprintf(texts[i], sizeof texts[i], "// round %d\n%s", round, plain[i]), srcs[i] = texts[i];
  const char *names[ITEMS] = {"heavy.cu", "cxx.cu", "small.cu", "bad.cu"};
  const cujit_compile_options *opts[ITEMS] = {&sm90, &sm90, &sm90, &sm90};
  cujit_program *p[ITEMS] = {0};
  memset(out, 0, sizeof *out);
  cr_assert_eq(cujit_program_compile_many(engine, ITEMS, srcs, names, opts, p, out->status),
               CUJIT_ERROR_COMPILE, "%s", cujit_errmsg(engine));
  for (int i = 0; i < ITEMS; i++) {
    out->message[i] = strdup(cujit_program_compile_many_message(engine, i));
    if (!p[i]) continue;
    out->ptx[i] = strdup(cujit_program_ptx(p[i], NULL));
    const void *cubin = cujit_program_cubin(p[i], &out->cubin_len[i]);
    dup_bytes(&out->cubin[i], cubin, out->cubin_len[i]);
    cujit_program_free(p[i]);
  }
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  out->in_workers = s.compiles_in_workers;
}

static void free_outcome(outcome *o) {
  for (int i = 0; i < ITEMS; i++) free(o->ptx[i]), free(o->message[i]), free(o->cubin[i]);
}

/* The same items on a second engine that compiles everything in its process. */
static void compile_here(outcome *out, int round) {
  cujit_engine *mine = engine;
  setenv("CUJIT_NVRTC_WORKER", "off", 1);
  EXPECT_OK(cujit_open(&engine));
  compile_items(out, round);
  cujit_close(engine);
  engine = mine;
  unsetenv("CUJIT_NVRTC_WORKER");
  cr_assert_eq(out->in_workers, 0, "CUJIT_NVRTC_WORKER=off still used workers");
}

static void expect_same(const outcome *a, const outcome *b) {
  for (int i = 0; i < ITEMS; i++) {
    cr_assert_eq(a->status[i], b->status[i], "item %d: status %d against %d", i, a->status[i],
                 b->status[i]);
    cr_assert_str_eq(a->message[i], b->message[i], "item %d's message differs", i);
    if (!a->ptx[i]) continue;
    cr_assert_str_eq(a->ptx[i], b->ptx[i], "item %d's PTX differs", i);
    cr_assert_eq(a->cubin_len[i], b->cubin_len[i], "item %d's CUBIN size differs", i);
    cr_assert(a->cubin_len[i] > 0 && !memcmp(a->cubin[i], b->cubin[i], a->cubin_len[i]),
              "item %d's CUBIN differs", i);
  }
}

static void expect_items_right(const outcome *o) {
  cr_assert_eq(o->status[0], CUJIT_OK, "%s", o->message[0]);
  cr_assert_eq(o->status[1], CUJIT_OK, "%s", o->message[1]);
  cr_assert_eq(o->status[2], CUJIT_OK, "%s", o->message[2]);
  cr_assert_eq(o->status[3], CUJIT_ERROR_COMPILE);
  cr_assert(strstr(o->message[3], "undeclared_name") && strstr(o->message[3], "bad.cu"),
            "the compile error lost its text: %s", o->message[3]);
  cr_assert(strstr(o->ptx[1], "_Z5twicePf") && strstr(o->ptx[1], "_Z5plainPd"),
            "the C++ kernels' lowered names are missing:\n%.400s", o->ptx[1]);
  cr_assert(strstr(o->ptx[2], ".entry s("), "item 2's kernel is missing");
}

/* The children of this process not yet waited for: 0 when it has none at all. */
static int children_running(void) {
  int r = waitpid(-1, NULL, WNOHANG);
  return !(r < 0 && errno == ECHILD);
}

/* Round 1: the small items do not wait for a worker to start (they compile in the process, one
** after another, and the workers start for later); the heavy one does. Round 2: the workers are
** there, and take what comes while the process's NVRTC is busy. */
Test(worker, compiles_beside_a_running_one_go_to_workers_and_give_the_same_bytes) {
  cr_assert(!children_running(), "the test process has children before the test");
  outcome there[2], here[2];
  for (int round = 0; round < 2; round++) {
    compile_items(&there[round], round);
    expect_items_right(&there[round]);
    compile_here(&here[round], round);
    expect_same(&there[round], &here[round]);
  }
  cr_assert(children_running(), "no worker was started");
  cr_assert_geq(there[1].in_workers, 2, "only %d compiles ran in workers over both rounds",
                (int)there[1].in_workers);
  for (int round = 0; round < 2; round++) free_outcome(&there[round]), free_outcome(&here[round]);
}

/* How many processes this one started and has not waited for (their /proc/PID/stat's ppid). */
static int children(void) {
  DIR *d = opendir("/proc");
  cr_assert(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char path[300], stat[512];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
    if (!f) continue;
    size_t len = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[len] = '\0';
    const char *close_paren = strrchr(stat, ')'); /* the name may hold spaces */
    int ppid = 0;
    if (close_paren && sscanf(close_paren + 2, "%*c %d", &ppid) == 1 && ppid == getpid()) n++;
  }
  closedir(d);
  return n;
}

/* Small programs only, one round: none waits for a worker to start, the workers are started for
** the next compiles, at most one fewer than the threads (the process's own NVRTC is one). */
Test(worker, workers_are_started_for_later_within_the_thread_count) {
  setenv("CUJIT_COMPILE_THREADS", "3", 1);
  const char *srcs[6];
  char texts[6][256];
  for (int i = 0; i < 6; i++) {
    snprintf(texts[i], sizeof texts[i], "extern \"C\" __global__ void t%d(int *x) { *x = %d; }\n",
             i, i);
    srcs[i] = texts[i];
  }
  const cujit_compile_options *opts[6] = {&sm90, &sm90, &sm90, &sm90, &sm90, &sm90};
  cujit_program *p[6];
  EXPECT_OK(cujit_program_compile_many(engine, 6, srcs, NULL, opts, p, NULL));
  for (int i = 0; i < 6; i++) cujit_program_free(p[i]);
  int workers = children();
  cr_assert(workers >= 1 && workers <= 2, "%d workers for 3 threads", workers);
}

/* A worker that cannot be started at all (posix_spawn refused: the machine's process limit, met
** when the whole suite runs at once on a many-core host, as seen once on the H200 machine) leaves
** its compile here, as designed; so up to three rounds of new texts, one of which must run every
** compile in a worker. Code that does not send them fails all three. */
Test(worker, always_sends_every_compile_to_a_worker_with_the_same_bytes) {
  outcome there, here;
  setenv("CUJIT_NVRTC_WORKER", "always", 1);
  uint64_t before = 0, in_round[3] = {0};
  int round = 0;
  for (;;) {
    compile_items(&there, round);
    in_round[round] = there.in_workers - before;
    if (in_round[round] >= ITEMS || round == 2) break;
    before = there.in_workers;
    free_outcome(&there);
    round++;
  }
  cr_assert_geq(in_round[round], ITEMS,
                "only %d, %d and %d of the %d compiles of each round ran in workers",
                (int)in_round[0], (int)in_round[1], (int)in_round[2], ITEMS);
  expect_items_right(&there);
  compile_here(&here, round);
  expect_same(&there, &here);
  free_outcome(&there), free_outcome(&here);
}

Test(worker, the_kernels_of_a_worker_compile_are_found_by_name) {
  setenv("CUJIT_NVRTC_WORKER", "always", 1);
  cujit_program *p;
  cujit_kernel *k;
  EXPECT_OK(cujit_program_compile(engine, cxx_kernel, "cxx.cu", &sm90, &p));
  cr_assert_eq(cujit_program_kernel(p, "twice", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel(p, "plain", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_program_free(p);
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  cr_assert_eq(s.compiles_in_workers, 1);
}

Test(worker, the_workers_end_with_the_engine) {
  cr_assert(!children_running(), "the test process has children before the test");
  outcome o;
  setenv("CUJIT_NVRTC_WORKER", "always", 1);
  compile_items(&o, 0);
  cr_assert_geq(o.in_workers, 1);
  cr_assert(children_running(), "the workers should stay for the next compiles");
  cujit_close(engine);
  engine = NULL;
  cr_assert(!children_running(), "a worker outlived cujit_close");
  EXPECT_OK(cujit_open(&engine)); /* for the fixture's close */
  free_outcome(&o);
}

/* The workers end well: each one started through a script that notes its exit status, and every
** status 0 once the engine closed (a worker that leaks, under the sanitizer suite, or crashes at
** its end, says so here; cujit itself only waits for them). */
Test(worker, every_worker_ends_with_status_0) {
  char body[8192], statuses[4200];
  snprintf(statuses, sizeof statuses, "%s/statuses", getenv("CUJIT_CACHE_DIR"));
  snprintf(body, sizeof body, "'%s' \"$@\"\necho $? >> '%s'", CJ_TEST_WORKER, statuses);
  char wrapper[4096];
  snprintf(wrapper, sizeof wrapper, "%s/wrapper", getenv("CUJIT_CACHE_DIR"));
  FILE *f = fopen(wrapper, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(wrapper, 0755);
  setenv("CUJIT_NVRTC_WORKER", wrapper, 1);
  outcome o[2];
  for (int round = 0; round < 2; round++) {
    compile_items(&o[round], round);
    expect_items_right(&o[round]);
  }
  cr_assert_geq(o[1].in_workers, 1, "no compile ran in a worker");
  cujit_close(engine);
  engine = NULL;
  f = fopen(statuses, "r");
  cr_assert(f, "no worker ended (no status noted)");
  int ended = 0, status;
  while (fscanf(f, "%d", &status) == 1) {
    ended++;
    cr_expect_eq(status, 0, "a worker ended with status %d", status);
  }
  fclose(f);
  cr_assert_geq(ended, 1);
  EXPECT_OK(cujit_open(&engine)); /* for the fixture's close */
  for (int round = 0; round < 2; round++) free_outcome(&o[round]);
}

static int warnings;
static char last_warning[1024];
static void on_warning(void *user, const char *message) {
  (void)user;
  warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", message);
}

/* CUJIT_NVRTC_WORKER set to `value`: every item as the process alone makes it, none in workers.
 */
static void expect_fallback(const char *value, int want_warnings) {
  outcome there, here;
  setenv("CUJIT_NVRTC_WORKER", value, 1);
  warnings = 0;
  cujit_set_warning_handler(engine, on_warning, NULL);
  compile_items(&there, 0);
  cr_assert_eq(there.in_workers, 0, "CUJIT_NVRTC_WORKER=%s: compiles counted in workers", value);
  cr_assert_eq(warnings, want_warnings, "CUJIT_NVRTC_WORKER=%s: %d warnings (last: %s)", value,
               warnings, last_warning);
  expect_items_right(&there);
  compile_here(&here, 0);
  expect_same(&there, &here);
  free_outcome(&there), free_outcome(&here);
}

/* A program in the scratch directory with `body` as its shell script. */
static const char *script(const char *name, const char *body) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", getenv("CUJIT_CACHE_DIR"), name);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(path, 0755);
  return path;
}

Test(worker, off_keeps_every_compile_in_the_process) {
  expect_fallback("off", 0);
}

Test(worker, a_path_that_is_no_program_warns_once_and_compiles_here) {
  expect_fallback("/nonexistent/cujit-nvrtc-worker", 1);
  cr_assert(strstr(last_warning, "CUJIT_NVRTC_WORKER=/nonexistent/cujit-nvrtc-worker") &&
                strstr(last_warning, "not an executable"),
            "the warning does not say what was wrong: %s", last_warning);
}

Test(worker, a_worker_that_exits_at_once_leaves_the_compile_here) {
  expect_fallback(script("exits", "exit 0"), 0);
}

Test(worker, a_worker_that_answers_garbage_leaves_the_compile_here) {
  expect_fallback(script("garbage", "head -c 12 >/dev/null; printf 'CJW1\\001\\000\\000\\000"
                                    "\\000\\000\\000\\000x'; sleep 1"),
                  0);
}

Test(worker, a_worker_that_stops_reading_leaves_the_compile_here) {
  expect_fallback(script("stops", "head -c 3 >/dev/null"), 0);
}

Test(worker, the_program_refuses_to_be_run_by_hand) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "%s --help 2>&1", CJ_TEST_WORKER);
  FILE *f = popen(cmd, "r");
  cr_assert(f);
  char out[512] = "";
  size_t n = fread(out, 1, sizeof out - 1, f);
  out[n] = '\0';
  int status = pclose(f);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 64, "exit status %d", status);
  cr_assert(strstr(out, "not run by hand") && strstr(out, "CUJIT_NVRTC_WORKER=off"), "%s", out);
}

/* Three programs including <cooperative_groups.h>, one after another, each in a worker: the
** worker makes a precompiled header of its own and its next compile of those headers uses it
** (counted as the engine's); the bytes are those of the process's own compiles. */
Test(worker, a_worker_makes_and_uses_its_own_precompiled_headers) {
  setenv("CUJIT_NVRTC_WORKER", "always", 1);
  setenv("CUJIT_PCH", "auto", 1);
  char src[3][512];
  char *ptx[3];
  for (int i = 0; i < 3; i++) {
    snprintf(src[i], sizeof src[i], "%s__global__ void more%d(int *x) { x[0] = %d; }\n", heavy, i,
             i);
    cujit_program *p;
    EXPECT_OK(cujit_program_compile(engine, src[i], "pch.cu", &sm90, &p));
    ptx[i] = strdup(cujit_program_ptx(p, NULL));
    cujit_program_free(p);
  }
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  cr_assert_eq(s.compiles_in_workers, 3);
  cr_assert_geq(s.pch_created, 1, "no worker made a PCH");
  cr_assert_geq(s.pch_used, 1, "no later compile used the worker's PCH");
  cujit_engine *mine = engine; /* the same three in the process alone */
  setenv("CUJIT_NVRTC_WORKER", "off", 1);
  EXPECT_OK(cujit_open(&engine));
  for (int i = 0; i < 3; i++) {
    cujit_program *p;
    EXPECT_OK(cujit_program_compile(engine, src[i], "pch.cu", &sm90, &p));
    cr_assert_str_eq(cujit_program_ptx(p, NULL), ptx[i], "program %d differs", i);
    cujit_program_free(p);
    free(ptx[i]);
  }
  cujit_close(engine);
  engine = mine;
  unsetenv("CUJIT_PCH");
}

/* No line in the stand-in's log of calls made during another thread's compile (each names its
** process: the test's, or a worker's, which loads the stand-in too). */
static void expect_nothing_noted(const char *log) {
  char noted[2048] = "";
  FILE *f = fopen(log, "r");
  size_t n = f ? fread(noted, 1, sizeof noted - 1, f) : 0;
  if (f) fclose(f);
  noted[n] = '\0';
  cr_assert_eq(n, 0,
               "NVRTC was called while the process's compile ran, so waited for it (this test's "
               "process is pid %d):\n%s",
               (int)getpid(), noted);
}

/* NVRTC 13 runs a process's calls one at a time: a call made while the process's own compile runs
** waits for it. So a compile sent to a worker beside that one must make no NVRTC call (each used
** to ask NVRTC the PCH heap's size and the archs it supports, and so waited: on the H200 host
** eight heavy programs at once took 326 ms, and 164 ms without those calls). The stand-in NVRTC
** notes each call made during another thread's compile: four heavy programs at once, twice (the
** first round starts the workers, the second finds them), and none is noted. */
Test(worker, a_compile_sent_to_a_worker_never_waits_for_the_process_own) {
  const char *log = cj_scratch_path("busy.log");
  setenv("CJ_TEST_NVRTC_BUSY_LOG", log, 1);
  setenv("CUJIT_NVRTC", CJ_TEST_NVRTC_WITH_PCH, 1);
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *mine = engine;
  EXPECT_OK(cujit_open(&engine));
  enum { N = 4 };
  char texts[N][512];
  const char *srcs[N];
  const cujit_compile_options *opts[N];
  cujit_program *p[N];
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < N; i++) {
      snprintf(texts[i], sizeof texts[i], "%s__global__ void busy%d_%d(int *x) { x[0] = %d; }\n",
               heavy, round, i, i);
      srcs[i] = texts[i], opts[i] = &sm90;
    }
    EXPECT_OK(cujit_program_compile_many(engine, N, srcs, NULL, opts, p, NULL));
    for (int i = 0; i < N; i++) cujit_program_free(p[i]);
  }
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  cujit_close(engine);
  engine = mine;
  unsetenv("CJ_TEST_NVRTC_BUSY_LOG"), unsetenv("CUJIT_NVRTC"), unsetenv("CUJIT_PCH");
  cr_assert_geq(s.compiles_in_workers, 2, "only %d compiles ran in workers",
                (int)s.compiles_in_workers);
  cr_assert_geq(s.pch_created, 1, "no precompiled header was made: the stand-in's PCH calls?");
  expect_nothing_noted(log);
}

/* The process's first compile with a PCH asks NVRTC the heap's size just before it begins; a
** request for a worker made then used to ask too, when it read the size as not known yet, and so
** could call NVRTC just after that compile began (seen once in CI, above). Here the stand-in
** reports the size as 0, so it is never known, and the request is made while the process's
** compile surely runs (the stand-in says so): that code would call NVRTC every time. */
static void *compile_heavy(void *src) {
  cujit_program *p = NULL;
  cujit_status st = cujit_program_compile(engine, src, "first.cu", &sm90, &p);
  if (p) cujit_program_free(p);
  return (void *)(intptr_t)st;
}

Test(worker, a_request_for_a_worker_asks_nvrtc_nothing_while_the_heap_size_is_unknown) {
  const char *log = cj_scratch_path("busy.log");
  setenv("CJ_TEST_NVRTC_BUSY_LOG", log, 1);
  setenv("CJ_TEST_NVRTC_PCH_HEAP_UNKNOWN", "1", 1);
  setenv("CUJIT_NVRTC", CJ_TEST_NVRTC_WITH_PCH, 1);
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *mine = engine;
  EXPECT_OK(cujit_open(&engine));
  int v = 0;
  EXPECT_OK(cujit_nvrtc_version(engine, &v)); /* the stand-in loaded, to be asked below */
  void *standin = dlopen(CJ_TEST_NVRTC_WITH_PCH, RTLD_NOW | RTLD_NOLOAD);
  cr_assert(standin, "the engine did not load the stand-in NVRTC");
  int (*running)(void);
  *(void **)&running = dlsym(standin, "cj_standin_compiles_running");
  cr_assert(running);
  char first[3][512], second[3][512];
  uint64_t sent = 0;
  /* the second compile goes to a worker only when the first still runs: under a heavy load the
  ** first may end first, so up to three tries */
  for (int round = 0; round < 3 && !sent; round++) {
    snprintf(first[round], sizeof first[round], "%s__global__ void first%d(int *x) { *x = 1; }\n",
             heavy, round);
    snprintf(second[round], sizeof second[round],
             "%s__global__ void second%d(int *x) { *x = 2; }\n", heavy, round);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, compile_heavy, first[round]), 0);
    for (int ms = 0; !running() && ms < 60000; ms++) usleep(1000);
    cujit_program *p;
    EXPECT_OK(cujit_program_compile(engine, second[round], "second.cu", &sm90, &p));
    cujit_program_free(p);
    void *st;
    pthread_join(t, &st);
    cr_assert_eq((intptr_t)st, CUJIT_OK, "the first compile failed");
    cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
    EXPECT_OK(cujit_cache_stats_get(engine, &s));
    sent = s.compiles_in_workers;
  }
  dlclose(standin);
  cujit_close(engine);
  engine = mine;
  unsetenv("CJ_TEST_NVRTC_BUSY_LOG"), unsetenv("CJ_TEST_NVRTC_PCH_HEAP_UNKNOWN");
  unsetenv("CUJIT_NVRTC"), unsetenv("CUJIT_PCH");
  cr_assert_geq(sent, 1, "no compile went to a worker in three tries");
  expect_nothing_noted(log);
}

/* How many entries of `dir` are precompiled-header roots (cujit-pch-*). */
static int pch_roots(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d, "%s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strncmp(e->d_name, "cujit-pch-", 10) == 0;
  closedir(d);
  return n;
}

/* A worker's precompiled headers live in a directory of its own under TMPDIR, which it removes
** when it ends (its engine's close), as the engine's own: after the engine that started it
** closes, nothing of either is left. */
Test(worker, a_worker_removes_its_precompiled_headers_when_it_ends) {
  char tmp[512];
  snprintf(tmp, sizeof tmp, "%s", cj_scratch_path("tmp"));
  cr_assert(mkdir(tmp, 0700) == 0, "%s: %s", tmp, strerror(errno));
  const char *kept = getenv("TMPDIR");
  char *was = kept ? strdup(kept) : NULL;
  setenv("TMPDIR", tmp, 1); /* the workers started below inherit it */
  setenv("CUJIT_NVRTC_WORKER", "always", 1);
  setenv("CUJIT_PCH", "auto", 1);
  cujit_engine *mine = engine;
  EXPECT_OK(cujit_open(&engine));
  char src[512];
  snprintf(src, sizeof src, "%s__global__ void roots(int *x) { x[0] = 1; }\n", heavy);
  cujit_program *p;
  EXPECT_OK(cujit_program_compile(engine, src, "roots.cu", &sm90, &p));
  cujit_program_free(p);
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  EXPECT_OK(cujit_cache_stats_get(engine, &s));
  int during = pch_roots(tmp);
  cujit_close(engine);
  engine = mine;
  int after = pch_roots(tmp);
  was ? setenv("TMPDIR", was, 1) : unsetenv("TMPDIR");
  free(was);
  unsetenv("CUJIT_PCH");
  cr_assert_eq(s.compiles_in_workers, 1);
  cr_assert_geq(s.pch_created, 1, "the worker made no PCH");
  cr_assert_geq(during, 1, "the worker's PCH root is not in its TMPDIR");
  cr_assert_eq(after, 0, "%d precompiled-header roots left after the engine closed", after);
}
