/*
** scratch.h -- a test's own scratch directory: made under $TMPDIR (ctest points it at the build
** tree's test-tmp, so two build trees testing at once never meet and /tmp is left as it was) and
** removed by the test's .fini and, for a test that skips or fails before it, at the exit of the
** test's process; the files a test writes there, and the disk cache of a suite that compiles.
*/
#ifndef CUJIT_TEST_SCRATCH_H
#define CUJIT_TEST_SCRATCH_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cj_scratch[512];

/* Removes the scratch directory, even where a test made parts of it read-only. */
static inline void cj_scratch_remove(void) {
  if (!cj_scratch[0]) return;
  char cmd[2 * sizeof cj_scratch + 64];
  snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", cj_scratch, cj_scratch);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cj_scratch);
  cj_scratch[0] = '\0';
}

static void cj_scratch_at_exit(void) {
  cj_scratch_remove();
}

/* Makes "$TMPDIR/cujit-test-WHAT-XXXXXX" (/tmp without TMPDIR) and returns its path. */
static inline const char *cj_scratch_make(const char *what) {
  static int registered;
  /* One at a time: a second would take the first's place and leave it behind. */
  cr_assert(!cj_scratch[0], "a second scratch directory while %s is there: make it inside that",
            cj_scratch);
  const char *base = getenv("TMPDIR");
  snprintf(cj_scratch, sizeof cj_scratch, "%s/cujit-test-%s-XXXXXX", base && *base ? base : "/tmp",
           what);
  cr_assert_not_null(mkdtemp(cj_scratch), "cannot make the scratch directory %s", cj_scratch);
  if (!registered) atexit(cj_scratch_at_exit), registered = 1;
  return cj_scratch;
}

/* The path of `name` in the scratch directory; the last eight stay valid, so that one call can
** take several. */
static inline const char *cj_scratch_path(const char *name) {
  static char paths[8][2048];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, sizeof paths[0], "%.1000s/%s", cj_scratch, name);
  return p;
}

/* Writes `text` to the file `name` in the scratch directory (cj_scratch_make made it), making
** the directories `name` passes through ("src/k.cu": src). */
static inline void cj_scratch_write(const char *name, const char *text) {
  char path[2048];
  snprintf(path, sizeof path, "%.1000s/%s", cj_scratch, name);
  for (char *slash = path + strlen(cj_scratch) + 1; (slash = strchr(slash, '/')) != NULL; slash++) {
    *slash = '\0';
    cr_assert(mkdir(path, 0777) == 0 || errno == EEXIST, "cannot make %s: %s", path,
              strerror(errno));
    *slash = '/';
  }
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Makes the scratch directory (cj_scratch_make) with the suite's disk cache in it, the other
** cache settings cleared, for the suites that compile through NVRTC: CUJIT_NVRTC names CUDA's
** library where it is installed and the variable is not set. */
static inline const char *cj_scratch_with_cache(const char *what) {
  const char *dir = cj_scratch_make(what);
  setenv("CUJIT_CACHE_DIR", cj_scratch_path("cache"), 1);
  unsetenv("CUJIT_CACHE");
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
  return dir;
}

/* The link files the `link` option's example and other value name (compile/options.h) written
** into `dir`: a test that compiles with every option's example runs there, or gives the command
** that directory. The two define the same function differently. */
static inline void cj_scratch_example_link(const char *dir) {
  static const char *const files[][2] = {
      {"cj_example_link.cu", "__device__ int cj_example_link(int x) { return x + 1; }\n"},
      {"cj_example_link_other.cu", "__device__ int cj_example_link(int x) { return x + 2; }\n"}};
  for (size_t i = 0; i < 2; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%.1000s/%s", dir, files[i][0]);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(files[i][1], f);
    fclose(f);
  }
}

#endif
