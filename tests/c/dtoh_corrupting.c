/*
** dtoh_corrupting.c -- an LD_PRELOAD stand-in for cujit_memcpy_dtoh that adds 1 to the middle float
** of what it copies back (CJ_TEST_SPOIL=-1: subtracts 1), so that a test can see an example's own
** check catch a wrong result (sh.test_example_errors, with examples/c/saxpy.c and dlpack.c): a
** check that always says "ok" would pass every other test, and one that catches only a value too
** large only half the wrong ones.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include <cujit.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef cujit_status (*dtoh_fn)(void *, const cujit_buffer *, size_t, size_t, cujit_stream *);

cujit_status cujit_memcpy_dtoh(void *dst, const cujit_buffer *src, size_t src_offset, size_t bytes,
                               cujit_stream *stream) {
  dtoh_fn real;
  *(void **)&real = dlsym(RTLD_NEXT, "cujit_memcpy_dtoh");
  if (!real) return CUJIT_ERROR_NOT_FOUND;
  cujit_status st = real(dst, src, src_offset, bytes, stream);
  const char *spoil = getenv("CJ_TEST_SPOIL");
  float by = spoil && strcmp(spoil, "-1") == 0 ? -1.0f : 1.0f;
  if (st == CUJIT_OK && bytes >= sizeof(float)) ((float *)dst)[bytes / sizeof(float) / 2] += by;
  return st;
}
