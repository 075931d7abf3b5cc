/*
** heap.h -- the bytes the host's heap holds now, for tests that check memory is given back (a
** freed buffer of the CPU device, a closed engine's leftovers): AddressSanitizer's count in a
** sanitizer build (its allocator replaces glibc's), glibc's otherwise.
*/
#ifndef CUJIT_TEST_HEAP_H
#define CUJIT_TEST_HEAP_H

#include <malloc.h>
#include <stddef.h>

#ifdef __SANITIZE_ADDRESS__ /* from libasan (GCC ships no header declaring it) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

static inline size_t cj_test_heap_bytes(void) {
#ifdef __SANITIZE_ADDRESS__
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

#endif
