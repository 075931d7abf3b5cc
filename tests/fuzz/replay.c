/*
** replay.c -- a fuzz target as a plain program: runs LLVMFuzzerTestOneInput on every file of the
** corpus directories (or files) named on the command line, so that ctest exercises each target
** on every build without libFuzzer. A finding aborts, failing the test.
*/
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 0;
  }
  size_t cap = 4096, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
    if ((n += got) == cap) buf = realloc(buf, cap *= 2);
  fclose(f);
  if (!buf) abort();
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 1;
}

int main(int argc, char **argv) {
  size_t inputs = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such corpus: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      inputs += (size_t)replay_file(argv[i]);
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
      char path[4096];
      if (de->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "%s/%s", argv[i], de->d_name);
      inputs += (size_t)replay_file(path);
    }
    if (d) closedir(d);
  }
  printf("replayed %zu inputs\n", inputs);
  return inputs ? 0 : 1; /* an empty corpus tests nothing: fail */
}
