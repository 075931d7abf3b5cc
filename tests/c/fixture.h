/*
** fixture.h -- the setup shared by the C test suites that work through the public API: one engine
** per test on a fresh cache directory (removed after), and the compile options for an explicit
** sm_90, which needs NVRTC but no GPU. Use: TestSuite(name, .init = cj_fixture_open,
** .fini = cj_fixture_close).
*/
#ifndef CUJIT_TEST_FIXTURE_H
#define CUJIT_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "cujit.h"

static cujit_engine *engine;
static char cj_fixture_dir[] = "/tmp/cujit-test-XXXXXX";

__attribute__((unused)) static const cujit_compile_options sm90 = {.arch = "sm_90"};

static inline void cj_fixture_open(void) {
  cr_assert_not_null(mkdtemp(cj_fixture_dir));
  setenv("CUJIT_CACHE_DIR", cj_fixture_dir, 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static inline void cj_fixture_close(void) {
  cujit_close(engine);
  char cmd[sizeof cj_fixture_dir + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cj_fixture_dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", cj_fixture_dir);
}

#endif
