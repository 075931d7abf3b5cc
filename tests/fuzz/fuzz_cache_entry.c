/*
** fuzz_cache_entry.c -- the cache entry reader (bytes of a file found at an entry's path, checked
** against the key its name gives) and CUJIT_CACHE_MAX's parser. An entry either parses into
** consistent parts or is refused with a reason; never a read past the bytes given.
*/
#include "compile/cache.h"
#include "fuzz.h"

#include <stdio.h>

static void entry(const uint8_t *data, size_t size) {
  cj_cache_key key;
  memset(&key, 0, sizeof key);
  if (size >= 32) memcpy(key.bytes, data + 16, sizeof key.bytes); /* reach past the key check */
  cj_cache_entry e;
  const char *bad = cj_cache_entry_parse(data, size, &key, &e);
  if (!bad) {
    if (!e.ptx || !e.log || e.ptx_len + e.cubin_len + CJ_CACHE_HEADER_BYTES > size) abort();
    cj_cache_entry_free(&e);
  } else if (e.ptx || e.cubin || e.log) {
    abort(); /* a refused entry hands nothing out */
  }
}

static void max_size(const uint8_t *data, size_t size) {
  char *text = fuzz_cstring(data, size > 64 ? 64 : size);
  uint64_t bytes = 0;
  if (cj_cache_parse_size(text, &bytes) && bytes == 0) {
    fprintf(stderr, "'%s' parsed to 0 bytes\n", text);
    abort();
  }
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  entry(data, size);
  max_size(data, size);
  return 0;
}
