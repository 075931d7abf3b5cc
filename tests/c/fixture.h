/*
** fixture.h -- the setup shared by the C test suites that work through the public API: one engine
** per test on a fresh cache directory (its scratch directory, scratch.h), and the compile options
*for an explicit
** sm_90, which needs NVRTC but no GPU; and the small helpers of the GPU tests (buffers to and
** from the host, random test values). Use: TestSuite(name, .init = cj_fixture_open,
** .fini = cj_fixture_close).
*/
#ifndef CUJIT_TEST_FIXTURE_H
#define CUJIT_TEST_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cujit.h"
#include "scratch.h"

static cujit_engine *engine;

__attribute__((unused)) static const cujit_compile_options sm90 = {
    .size = sizeof(cujit_compile_options), .arch = "sm_90"};

static inline void cj_fixture_open(void) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static inline void cj_fixture_close(void) {
  cujit_close(engine);
  cj_scratch_remove();
}

/* A device buffer holding `bytes` of data (uninitialised when data is NULL). */
static inline cujit_buffer *cj_test_upload(const void *data, size_t bytes, cujit_dtype dtype) {
  cujit_buffer *b;
  cr_assert_eq(cujit_buffer_alloc(engine, bytes, dtype, &b), CUJIT_OK, "%s", cujit_errmsg(engine));
  if (data)
    cr_assert_eq(cujit_memcpy_htod(b, 0, data, bytes, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  return b;
}

static inline void cj_test_download(void *dst, cujit_buffer *b, size_t bytes) {
  cr_assert_eq(cujit_memcpy_dtoh(dst, b, 0, bytes, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
}

/* 64 random bits from a fixed-seed xorshift: the same test data on every run. */
static inline uint64_t cj_test_rand64(void) {
  static uint32_t state = 0x9e3779b9u;
  uint64_t hi = 0;
  for (int i = 0; i < 2; i++) {
    uint32_t x = state;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    state = x;
    hi = hi << 32 | x;
  }
  return hi;
}

/* Half bits of a float that half represents exactly (the tests only make such values). */
static inline uint16_t cj_test_exact_half(float f) {
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  int e;
  double m = frexp(fabs(f), &e); /* f = m 2^e, m in [0.5, 1) */
  return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
}

#endif
