/*
** test_threads.c -- what include/cujit.h promises about threads, exercised from 8 threads at once
** on one engine (tests/c/threads.h): defining kernels (the same one, so the map of loaded programs
** and the cache are shared), specialising one generic kernel, checking arguments, launching
** (which, with no GPU, fails with NO_DRIVER after the arguments are checked), and per-thread error
** messages. tests/tsan/tsan_threads.c runs the same under ThreadSanitizer.
*/
#include <criterion/criterion.h>
#include <stdlib.h>

#include "threads.h"

static char cache_dir[] = "/tmp/cujit-test-threads-XXXXXX";

static void setup(void) {
  cr_assert_not_null(mkdtemp(cache_dir));
  setenv("CUJIT_CACHE_DIR", cache_dir, 1);
  if (!nvrtc_available()) cr_skip_test("no NVRTC");
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void teardown(void) {
  cujit_close(engine);
  char cmd[sizeof cache_dir + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cache_dir);
}

TestSuite(threads, .init = setup, .fini = teardown, .timeout = 300);

Test(threads, one_engine_eight_threads) {
  char why[600];
  cr_assert_eq(run_threads(why, sizeof why), 0, "%s", why);
}
