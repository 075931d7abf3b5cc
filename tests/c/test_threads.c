/*
** test_threads.c -- what include/cujit.h promises about threads, exercised from 8 threads at once
** on one engine (tests/c/threads.h): defining kernels (the same one, so the map of loaded programs
** and the cache are shared), specialising one generic kernel, checking arguments, launching
** (which, with no GPU, fails with NO_DRIVER after the arguments are checked), and per-thread error
** messages. tests/tsan/tsan_threads.c runs the same under ThreadSanitizer.
*/
#include <criterion/criterion.h>
#include <stdlib.h>

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
