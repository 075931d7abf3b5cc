/*
** dtoh_corrupting.c -- an LD_PRELOAD stand-in for cujit_memcpy_dtoh that adds 1 to the middle float
** of what it copies back, so that a test can see an example's own check catch a wrong result
** (sh.test_example_errors, with examples/c/saxpy.c): a check that always says "ok" would pass
** every other test.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include <cujit.h>

#include <dlfcn.h>

typedef cujit_status (*dtoh_fn)(void *, const cujit_buffer *, size_t, size_t, cujit_stream *);

cujit_status cujit_memcpy_dtoh(void *dst, const cujit_buffer *src, size_t src_offset, size_t bytes,
                               cujit_stream *stream) {
  dtoh_fn real;
  *(void **)&real = dlsym(RTLD_NEXT, "cujit_memcpy_dtoh");
  if (!real) return CUJIT_ERROR_NOT_FOUND;
  cujit_status st = real(dst, src, src_offset, bytes, stream);
  if (st == CUJIT_OK && bytes >= sizeof(float)) ((float *)dst)[bytes / sizeof(float) / 2] += 1;
  return st;
}
