/*
** stub.h -- what the tests run against the stand-in driver (scripts/bench/stub_driver.c, first on
** LD_LIBRARY_PATH for the tests tests/CMakeLists.txt lists as stub tests) share: the stand-in's
** device 0, asserted to be there, and its own functions (cujit_stub_*), looked up in the loaded
** libcuda.so.1.
*/
#ifndef CUJIT_TEST_STUB_H
#define CUJIT_TEST_STUB_H

#include <criterion/criterion.h>
#include <dlfcn.h>

#include "cujit.h"

/* Device 0 of `engine`, which the stand-in always has. */
static inline cujit_device *cj_stub_device(cujit_engine *engine) {
  cujit_device *gpu = NULL;
  cr_assert_eq(cujit_device_get(engine, 0, &gpu), CUJIT_OK,
               "the stand-in driver's device 0 is missing (%s): is scripts/bench/stubcuda first "
               "on LD_LIBRARY_PATH?",
               cujit_errmsg(engine));
  return gpu;
}

/* The stand-in's function `name` (cujit_stub_seen, cujit_stub_block, ...). */
static inline void *cj_stub_symbol(const char *name) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(cuda, "libcuda.so.1 is not loaded");
  void *fn = dlsym(cuda, name);
  dlclose(cuda);
  cr_assert_not_null(fn, "libcuda.so.1 is not the stand-in driver (scripts/bench/stubcuda): no %s",
                     name);
  return fn;
}

#endif
