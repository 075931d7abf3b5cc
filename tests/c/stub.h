/*
** stub.h -- what the tests run against the stand-in driver (scripts/bench/stub_driver.c, first on
** LD_LIBRARY_PATH for the tests tests/CMakeLists.txt lists as stub tests) share: an engine opened
** on it with a scratch cache, the stand-in's device 0, asserted to be there (the message says what
** is wrong when the stand-in is not the driver found), and its own functions (cujit_stub_*),
** looked up in the loaded libcuda.so.1: what it noted, and the blocks it holds.
*/
#ifndef CUJIT_TEST_STUB_H
#define CUJIT_TEST_STUB_H

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>

#include "cujit.h"
#include "scratch.h"

/* Device 0 of `engine`, which the stand-in always has. */
static inline cujit_device *cj_stub_device(cujit_engine *engine) {
  cujit_device *gpu = NULL;
  cr_assert_eq(cujit_device_get(engine, 0, &gpu), CUJIT_OK,
               "the stand-in driver's device 0 is missing (%s): is scripts/bench/stubcuda first "
               "on LD_LIBRARY_PATH?",
               cujit_errmsg(engine));
  return gpu;
}

/* Opens *engine with its cache in the test's scratch directory; gives the stand-in's device 0. */
static inline cujit_device *cj_stub_open(cujit_engine **engine) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(engine), CUJIT_OK);
  return cj_stub_device(*engine);
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

/* What the stand-in's `getter` (cujit_stub_seen, cujit_stub_memory_seen, cujit_stub_peer_seen)
** noted under `name`; the name must be one it knows (else -1, which fails the test). */
static inline long cj_stub_seen(const char *getter, const char *name) {
  long (*get)(const char *) = (long (*)(const char *))cj_stub_symbol(getter);
  long v = get(name);
  cr_assert_neq(v, -1, "the stand-in (%s) notes nothing called '%s'", getter, name);
  return v;
}

/* The stand-in's device and pinned blocks not yet freed (cujit_stub_live_allocations). */
static inline long cj_stub_live_allocations(void) {
  long (*count)(void) = (long (*)(void))cj_stub_symbol("cujit_stub_live_allocations");
  return count();
}

#endif
