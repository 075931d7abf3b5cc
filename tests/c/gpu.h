/*
** gpu.h -- the one helper through which every C test that needs a GPU goes: it skips with a
** reason when there is none, and fails instead when CUJIT_REQUIRE_GPU=1, so a GPU run cannot
** pass by skipping; CJ_NEED_GPUS does the same for N GPUs under CUJIT_REQUIRE_GPUS=N.
*/
#ifndef CUJIT_TEST_GPU_H
#define CUJIT_TEST_GPU_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"

static inline int cj_test_gpu_required(void) {
  const char *v = getenv("CUJIT_REQUIRE_GPU");
  return v && strcmp(v, "1") == 0;
}

/* Opens device 0 of `engine`, or skips (fails under CUJIT_REQUIRE_GPU=1) with the reason. */
#define CJ_NEED_GPU(engine)                                                                        \
  do {                                                                                             \
    cujit_device *cj_dev_;                                                                         \
    if (cujit_device_get((engine), 0, &cj_dev_) != CUJIT_OK) {                                     \
      if (cj_test_gpu_required())                                                                  \
        cr_assert_fail("CUJIT_REQUIRE_GPU=1 but no GPU: %s", cujit_errmsg(engine));                \
      cr_skip_test("no GPU: %s", cujit_errmsg(engine));                                            \
    }                                                                                              \
  } while (0)

/* Like CJ_NEED_GPU for suites that hold on the CPU device too: without a GPU the CPU device
** (docs/cpu.md) becomes current and the test runs there; CUJIT_TEST_NO_CPU=1 skips instead. */
#define CJ_NEED_DEVICE(engine)                                                                     \
  do {                                                                                             \
    cujit_device *cj_dev_;                                                                         \
    if (cujit_device_get((engine), 0, &cj_dev_) != CUJIT_OK) {                                     \
      if (cj_test_gpu_required())                                                                  \
        cr_assert_fail("CUJIT_REQUIRE_GPU=1 but no GPU: %s", cujit_errmsg(engine));                \
      if (getenv("CUJIT_TEST_NO_CPU") || cujit_set_device((engine), CUJIT_DEVICE_CPU) != CUJIT_OK) \
        cr_skip_test("no GPU: %s", cujit_errmsg(engine));                                          \
    }                                                                                              \
  } while (0)

/* The GPUs a run requires: CUJIT_REQUIRE_GPUS=N, or 1 under CUJIT_REQUIRE_GPU=1, else 0. */
static inline int cj_test_gpus_required(void) {
  const char *v = getenv("CUJIT_REQUIRE_GPUS");
  if (v && *v) return atoi(v);
  return cj_test_gpu_required();
}

/* Needs `n` GPUs in `engine`: skips with the reason when there are fewer, and fails instead when
** CUJIT_REQUIRE_GPUS asks for at least n. */
#define CJ_NEED_GPUS(engine, n)                                                                    \
  do {                                                                                             \
    int cj_count_ = 0;                                                                             \
    if (cujit_device_count((engine), &cj_count_) != CUJIT_OK) cj_count_ = 0;                       \
    if (cj_count_ < (n)) {                                                                         \
      if (cj_test_gpus_required() >= (n))                                                          \
        cr_assert_fail("CUJIT_REQUIRE_GPUS=%d but the test needs %d GPUs and there are %d",        \
                       cj_test_gpus_required(), (n), cj_count_);                                   \
      cr_skip_test("needs %d GPUs, this machine has %d", (n), cj_count_);                          \
    }                                                                                              \
  } while (0)

/* Fresh random floats in [-1, 1) from a small xorshift, so inputs are never zeros. */
static inline float cj_test_randf(unsigned *state) {
  unsigned x = *state;
  x ^= x << 13, x ^= x >> 17, x ^= x << 5;
  *state = x;
  return (float)((double)x / 2147483648.0 - 1.0);
}

#endif
