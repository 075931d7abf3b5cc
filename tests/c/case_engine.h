/*
** case_engine.h -- the one engine of a test case, for the suites that open it themselves (on the
** cache directory ctest gives, not fixture.h's scratch one): `engine`, which expect.h reads, opened
** by the case's .init (open_engine, or open_cpu with the CPU device current) and closed by its
** .fini (close_engine); and the small helpers those suites share.
*/
#ifndef CUJIT_TEST_CASE_ENGINE_H
#define CUJIT_TEST_CASE_ENGINE_H

#include <criterion/criterion.h>
#include <stdint.h>

#include "cujit.h"
#include "expect.h"

static cujit_engine *engine;

static inline void open_engine(void) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_not_null(engine);
}

static inline void open_cpu(void) {
  open_engine();
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
}

static inline void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
}

/* A launch of `blocks` blocks of `threads` threads, in x only. */
static inline cujit_launch_config launch_1d(unsigned blocks, unsigned threads) {
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = blocks, cfg.block[0] = threads;
  cfg.grid[1] = cfg.grid[2] = cfg.block[1] = cfg.block[2] = 1;
  return cfg;
}

/* What an out parameter holds before a call that must set it (to NULL when it fails). */
static inline void *poison_ptr(void) {
  return (void *)(uintptr_t)0xdeadbeef;
}

#endif
