/*
** fuzz_png.c -- the PNG reader behind cuda.image.read. It is static inside the Lua binding's
** limage.c and reads from a path, so this thin target includes that file and hands it the input
** through an in-memory file (/proc/self/fd of a memfd): the code fuzzed is the code shipped.
*/
#define _GNU_SOURCE /* memfd_create */
#include "fuzz.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "limage.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int fd = -1;
  static char path[64];
  if (fd < 0) {
    fd = memfd_create("cujit-fuzz-png", 0);
    if (fd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) abort();
  image img;
  char err[512];
  if (png_read_file(path, &img, err, sizeof err)) {
    if (!img.pixels || img.width == 0 || img.height == 0 ||
        !(img.channels == 1 || img.channels == 3 || img.channels == 4))
      abort();
    free(img.pixels);
  }
  return 0;
}
