/*
** stub.h -- opening an engine on the stand-in driver (scripts/bench/stub_driver.c), for the tests
** tests/CMakeLists.txt runs with it first on LD_LIBRARY_PATH: a scratch cache, and its device 0,
** with the message that says what is wrong when the stand-in is not the driver found.
*/
#ifndef CUJIT_TEST_STUB_H
#define CUJIT_TEST_STUB_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "cujit.h"
#include "scratch.h"

/* Opens *engine with its cache in the test's scratch directory; gives the stand-in's device 0. */
static inline cujit_device *cj_stub_open(cujit_engine **engine) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(engine), CUJIT_OK);
  cujit_device *gpu = NULL;
  cr_assert_eq(cujit_device_get(*engine, 0, &gpu), CUJIT_OK,
               "the stand-in driver's device 0 is missing (%s): is scripts/bench/stubcuda first "
               "on LD_LIBRARY_PATH?",
               cujit_errmsg(*engine));
  return gpu;
}

#endif
