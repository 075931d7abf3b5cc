/*
** fuzz_hostcode.c -- host code elision (compile/host_code.h): any text comes back whole or with
** declarations blanked, never a crash; the same length, every newline where it was, and every
** byte either kept or made a space; unchanged, with a reason, when it cannot be read.
*/
#include "fuzz.h"
#include "compile/host_code.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *source = fuzz_cstring(data, size), why[256];
  size_t elided = 0, n = strlen(source);
  char *out = cj_host_code_elide(source, &elided, why, sizeof why);
  if (!out || strlen(out) != n) abort();
  for (size_t i = 0; i < n; i++)
    if (out[i] != source[i] && (out[i] != ' ' || source[i] == '\n')) abort();
  if (why[0] && (elided || memcmp(out, source, n))) abort(); /* given back unchanged */
  free(out);
  free(source);
  return 0;
}
