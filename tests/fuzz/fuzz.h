/*
** fuzz.h -- what every fuzz target shares: the libFuzzer entry point each defines, and a
** NUL-terminated copy of the input for the parsers that take C strings.
*/
#ifndef CUJIT_FUZZ_H
#define CUJIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input up to its first NUL, as a malloc'd C string (aborts when out of memory: a fuzzer
** run must not mistake that for a finding). */
static inline char *fuzz_cstring(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/* The next part of a NUL-separated input: a malloc'd C string; *data and *size move past it. */
static inline char *fuzz_part(const uint8_t **data, size_t *size) {
  const uint8_t *nul = *size ? memchr(*data, '\0', *size) : NULL;
  size_t n = nul ? (size_t)(nul - *data) : *size;
  char *s = fuzz_cstring(*data, n);
  *data += nul ? n + 1 : n;
  *size -= nul ? n + 1 : n;
  return s;
}

#endif
