/*
** cache_fixture.h -- the setup shared by the compiled-code cache's suites (test_cache.c,
** test_cache_dir.c): a cache directory of the test's own (CUJIT_CACHE_DIR under its scratch
** directory, scratch.h) with the cache's other settings cleared, the warnings an engine gave,
** small distinct kernels compiled for sm_90 (NVRTC, no GPU), and the entry files on disk. Use:
** TestSuite(name, .init = cj_cache_setup, .fini = cj_cache_teardown).
*/
#ifndef CUJIT_TEST_CACHE_FIXTURE_H
#define CUJIT_TEST_CACHE_FIXTURE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "cujit.h"

__attribute__((unused)) static char tmpdir[256], cache_dir[320];
__attribute__((unused)) static const cujit_compile_options sm90 = {
    .size = sizeof(cujit_compile_options), .arch = "sm_90"};

/* Warnings received, for the tests that count them. */
__attribute__((unused)) static int nwarnings;
__attribute__((unused)) static char warnings[8][2048];

static inline void on_warning(void *user, const char *msg) {
  (void)user;
  if (nwarnings < 8) snprintf(warnings[nwarnings], sizeof warnings[0], "%s", msg);
  nwarnings++;
}

static inline cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cujit_set_warning_handler(e, on_warning, NULL);
  return e;
}

static inline void cj_cache_setup(void) {
  cr_assert_lt(snprintf(tmpdir, sizeof tmpdir, "%s", cj_scratch_make("cache")), (int)sizeof tmpdir);
  snprintf(cache_dir, sizeof cache_dir, "%s/cache", tmpdir);
  setenv("CUJIT_CACHE_DIR", cache_dir, 1);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_CACHE_MAX");
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
  nwarnings = 0;
}

static inline void cj_cache_teardown(void) {
  cj_scratch_remove();
}

static inline void need_nvrtc(cujit_engine *e) {
  int v;
  if (cujit_nvrtc_version(e, &v) != CUJIT_OK) cr_skip_test("no NVRTC: %s", cujit_errmsg(e));
}

/* A small kernel whose name and constant make it distinct. */
static inline char *kernel_src(const char *name, int constant) {
  static char buf[8][512];
  static int next;
  char *s = buf[next++ % 8];
  snprintf(s, 512, "extern \"C\" __global__ void %s(int *x) { x[threadIdx.x] = %d; }\n", name,
           constant);
  return s;
}

static inline cujit_program *compile_ok(cujit_engine *e, const char *src) {
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, NULL, &sm90, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  return p;
}

/* The entry files in the cache directory. */
static inline int list_entries(char names[][64], int max) {
  DIR *d = opendir(cache_dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".cjc") && n < max) snprintf(names[n++], 64, "%.60s", de->d_name);
  closedir(d);
  return n;
}

static inline void only_entry_path(char *path, size_t len) {
  char names[4][64];
  cr_assert_eq(list_entries(names, 4), 1, "one entry on disk");
  snprintf(path, len, "%s/%s", cache_dir, names[0]);
}

#endif
