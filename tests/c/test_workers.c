/*
** test_workers.c -- base/workers.c, the threads of a compile of many programs: how many a compile
** uses when CUJIT_COMPILE_THREADS is not set (the cores this process may run on, as its CPU
** affinity says; the online cores when the affinity cannot be read, at most 1024), and that every
** item of cj_workers_run runs once, whatever the threads asked for. The affinity read fails here
** on demand: this file defines sched_getaffinity, which the engine linked into it calls.
*/
#define _GNU_SOURCE /* sched_getaffinity, CPU_SET, RTLD_NEXT */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/workers.h"

static int affinity_fails; /* set by a test: the next reads of the affinity fail with EINVAL */

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set) {
  if (affinity_fails) {
    errno = EINVAL; /* what the kernel answers when it has more CPUs than the set holds */
    return -1;
  }
  int (*real)(pid_t, size_t, cpu_set_t *) =
      (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
  cr_assert_not_null(real, "libc's sched_getaffinity: %s", dlerror());
  return real(pid, size, set);
}

static void no_variable(void) {
  unsetenv("CUJIT_COMPILE_THREADS");
  affinity_fails = 0;
}

TestSuite(workers, .init = no_variable);

static int compile_threads(void) {
  char why[256] = "";
  int n = cj_compile_threads(why, sizeof why);
  cr_assert_gt(n, 0, "no variable set, yet: %s", why);
  return n;
}

Test(workers, a_process_bound_to_one_core_compiles_on_one_thread) {
  cpu_set_t all, one;
  cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
  cr_assert_eq(compile_threads(), CPU_COUNT(&all), "as many threads as cores it may run on");
  int first = 0;
  while (!CPU_ISSET(first, &all)) first++;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
  int n = compile_threads();
  sched_setaffinity(0, sizeof all, &all);
  cr_assert_eq(n, 1, "bound to core %d alone, a compile took %d threads (%ld cores online)", first,
               n, sysconf(_SC_NPROCESSORS_ONLN));
}

Test(workers, without_the_affinity_the_online_cores_count_at_most_1024) {
  affinity_fails = 1;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cr_assert_gt(online, 0);
  cr_assert_eq(compile_threads(), online > 1024 ? 1024 : online);
}

Test(workers, the_variable_wins_over_the_cores) {
  setenv("CUJIT_COMPILE_THREADS", "7", 1);
  cr_assert_eq(compile_threads(), 7);
  setenv("CUJIT_COMPILE_THREADS", "0", 1);
  char why[256] = "";
  cr_assert_eq(cj_compile_threads(why, sizeof why), 0);
  cr_assert(strstr(why, "CUJIT_COMPILE_THREADS='0' is not understood: it takes a whole number "
                        "from 1 to 1024"),
            "%s", why);
}

static void count_item(void *user, size_t index) {
  atomic_fetch_add(&((atomic_int *)user)[index], 1);
}

Test(workers, every_item_runs_once_on_at_most_the_threads_asked) {
  enum { ITEMS = 100 };
  static const int asked[] = {-3, 0, 1, 4, 500};
  for (size_t a = 0; a < sizeof asked / sizeof asked[0]; a++) {
    atomic_int runs[ITEMS];
    for (int i = 0; i < ITEMS; i++) atomic_init(&runs[i], 0);
    int used = cj_workers_run(ITEMS, asked[a], count_item, runs);
    int want = asked[a] < 1 ? 1 : asked[a] > ITEMS ? ITEMS : asked[a];
    cr_assert(used >= 1 && used <= want, "%d threads asked: %d used", asked[a], used);
    for (int i = 0; i < ITEMS; i++)
      cr_assert_eq(atomic_load(&runs[i]), 1, "%d threads asked: item %d ran %d times", asked[a], i,
                   atomic_load(&runs[i]));
  }
  cr_assert_eq(cj_workers_run(0, 4, count_item, NULL), 1, "no items: the caller alone, no job");
}
