/*
** fuzz_elf.c -- the symbol-table reader for the CPU device's shared objects, which come from the
** disk cache: any bytes give -1, 0 or 1, never a read outside them, and a symbol said to be
** defined has its name in the bytes.
*/
#define _GNU_SOURCE /* memmem */
#include "lang/elf_symbols.h"
#include "fuzz.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"real", "ghost", "cj_variant_scale_1", "cj_cpu_abi_version",
                                      ""};
  unsigned char *image = malloc(size ? size : 1); /* aligned, as the cache's bytes are */
  if (!image) return 0;
  memcpy(image, data, size);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    int r = cj_elf_defines(image, size, names[i]);
    if (r < -1 || r > 1 || (r == 1 && !memmem(image, size, names[i], strlen(names[i]) + 1))) {
      fprintf(stderr, "cj_elf_defines(%s) gave %d\n", names[i], r);
      abort();
    }
  }
  free(image);
  return 0;
}
