/*
** gpu.h -- the one helper through which every C test that needs a device goes: CJ_NEED_GPU skips
** with a reason when there is no GPU, CJ_NEED_DEVICE falls back to the CPU device; both fail
** instead when CUJIT_REQUIRE_GPU=1, so a GPU run cannot pass by skipping. Each case that gets a
** device says which on a line "runs on: DEVICE [suite::case]", which scripts/test_summary.lua
** counts.
** CJ_NEED_GPUS does the same for N GPUs under CUJIT_REQUIRE_GPUS=N.
*/
#ifndef CUJIT_TEST_GPU_H
#define CUJIT_TEST_GPU_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"

static inline int cj_test_gpu_required(void) {
  const char *v = getenv("CUJIT_REQUIRE_GPU");
  return v && strcmp(v, "1") == 0;
}

/* The marker line of the running case: "GPU" or "CPU device". */
static inline void cj_test_runs_on(const char *device) {
  const struct criterion_test *t = criterion_current_test;
  printf("runs on: %s [%s::%s]\n", device, t ? t->category : "?", t ? t->name : "?");
  fflush(stdout);
}

/* 1 when the engine's current device is the CPU device. */
static inline int cj_test_on_cpu(cujit_engine *engine) {
  cujit_device *dev = NULL;
  return cujit_current_device(engine, &dev) == CUJIT_OK &&
         cujit_device_ordinal(dev) == CUJIT_DEVICE_CPU;
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
    cj_test_runs_on("GPU");                                                                        \
  } while (0)

/* Like CJ_NEED_GPU for suites that hold on the CPU device too: without a GPU the CPU device
** (docs/cpu.md) becomes current and the test runs there; CUJIT_TEST_NO_CPU=1 skips instead. */
#define CJ_NEED_DEVICE(engine)                                                                     \
  do {                                                                                             \
    cujit_device *cj_dev_;                                                                         \
    if (cujit_device_get((engine), 0, &cj_dev_) == CUJIT_OK) {                                     \
      cj_test_runs_on(cj_test_on_cpu(engine) ? "CPU device" : "GPU");                              \
      break;                                                                                       \
    }                                                                                              \
    if (cj_test_gpu_required())                                                                    \
      cr_assert_fail("CUJIT_REQUIRE_GPU=1 but no GPU: %s", cujit_errmsg(engine));                  \
    if (getenv("CUJIT_TEST_NO_CPU") || cujit_set_device((engine), CUJIT_DEVICE_CPU) != CUJIT_OK)   \
      cr_skip_test("no GPU: %s", cujit_errmsg(engine));                                            \
    cj_test_runs_on("CPU device");                                                                 \
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
