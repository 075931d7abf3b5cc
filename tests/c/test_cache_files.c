/*
** test_cache_files.c -- the disk cache's own files (compile/cache.c): the order eviction takes
** them in when their times differ by nanoseconds only (the older first, whatever the names), and
** which names are entries: a file named like one but with another suffix is not counted, cleared
** or evicted. Hits, foreign entries and the rest are test_cache.c's; the directory is
** test_cache_dir.c's.
*/
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "cache_fixture.h"

TestSuite(cache_files, .init = cj_cache_setup, .fini = cj_cache_teardown, .timeout = 300);

/* Compiles a kernel distinct by `n`: one more entry on disk. */
static void compile_new(cujit_engine *e, int n) {
  char name[16];
  snprintf(name, sizeof name, "k%d", n);
  cujit_program *p = compile_ok(e, kernel_src(name, n));
  cr_assert_eq(cujit_program_from_cache(p), 0, "a fresh compile");
  cujit_program_free(p);
}

static const char *in_cache(const char *name) {
  static char path[sizeof cache_dir + 64];
  snprintf(path, sizeof path, "%s/%.60s", cache_dir, name);
  return path;
}

static void set_mtime(const char *name, time_t sec, long nsec) {
  struct timespec t[2] = {{sec, nsec}, {sec, nsec}};
  cr_assert_eq(utimensat(AT_FDCWD, in_cache(name), t, 0), 0, "%s", name);
}

static off_t size_of(const char *name) {
  struct stat st;
  cr_assert_eq(stat(in_cache(name), &st), 0, "%s", name);
  return st.st_size;
}

/* Two entries of the same second, 800 ns apart: the older goes first when one must. The older is
** the one the directory lists first and whose name sorts after the other's: a sort that let the
** names decide, or that compared the two the other way round, would keep it. */
Test(cache_files, within_a_second_the_older_entry_is_evicted_first) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  enum { MADE = 4 };
  for (int i = 0; i < MADE; i++) compile_new(e, i);
  cujit_close(e);
  char names[MADE][64];
  cr_assert_eq(list_entries(names, MADE), MADE);
  int older = 0, newer = 1; /* listed first, and named after the other if any pair is */
  while (newer < MADE && strcmp(names[older], names[newer]) < 0)
    if (++newer == MADE && older + 2 < MADE) newer = ++older + 1;
  if (newer == MADE) older = 0, newer = 1; /* listed in name order: the times still decide */
  for (int i = 0; i < MADE; i++)
    if (i != older && i != newer) cr_assert_eq(unlink(in_cache(names[i])), 0);
  time_t second = time(NULL) - 2 * 3600; /* hours old: no hit would touch them */
  set_mtime(names[older], second, 100);
  set_mtime(names[newer], second, 900);
  /* Room for the two and half a third: the next entry written pushes one out. */
  off_t two = size_of(names[older]) + size_of(names[newer]);
  char max[32];
  snprintf(max, sizeof max, "%lld", (long long)(two + two / 4));
  setenv("CUJIT_CACHE_MAX", max, 1);
  e = open_engine();
  compile_new(e, MADE);
  cujit_close(e);
  cr_assert_neq(access(in_cache(names[older]), F_OK), 0, "%s, 800 ns older, was kept",
                names[older]);
  cr_assert_eq(access(in_cache(names[newer]), F_OK), 0, "%s, the newer, was evicted", names[newer]);
  char left[MADE][64];
  cr_assert_eq(list_entries(left, MADE), 2, "the newer and the one just written");
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
}

/* The bytes of the entries on disk: programs (.cjc) and the manifests beside them (.cjm). */
static uint64_t entry_bytes(void) {
  DIR *d = opendir(cache_dir);
  cr_assert_not_null(d, "%s", cache_dir);
  uint64_t bytes = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strlen(de->d_name) == 36 && (strstr(de->d_name, ".cjc") || strstr(de->d_name, ".cjm")))
      bytes += (uint64_t)size_of(de->d_name);
  closedir(d);
  return bytes;
}

/* Named like an entry (32 hex digits) with a suffix that is not .cjc or .cjm: not cujit's. */
Test(cache_files, a_file_with_another_suffix_is_no_entry) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  compile_new(e, 1);
  static const char *const others[] = {"0123456789abcdef0123456789abcdef.cja",
                                       "0123456789abcdef0123456789abcdef.abc",
                                       "0123456789abcdef0123456789abcdef.cjz"};
  enum { OTHERS = sizeof others / sizeof others[0], BYTES = 1 << 16 };
  static char data[BYTES];
  for (int i = 0; i < OTHERS; i++) {
    FILE *f = fopen(in_cache(others[i]), "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, BYTES, f), BYTES);
    fclose(f);
  }
  char names[4][64];
  cr_assert_eq(list_entries(names, 4), 1);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(e, &st), CUJIT_OK);
  cr_assert_eq(st.entries, 1);
  cr_assert_eq(st.bytes, entry_bytes(), "the entries' bytes alone: %llu",
               (unsigned long long)st.bytes);
  cujit_close(e);
  setenv("CUJIT_CACHE_MAX", "1", 1); /* nothing fits: every entry goes, the others stay */
  e = open_engine();
  compile_new(e, 2);
  for (int i = 0; i < OTHERS; i++)
    cr_assert_eq(access(in_cache(others[i]), F_OK), 0, "%s was evicted", others[i]);
  cr_assert_eq(cujit_cache_clear(e), CUJIT_OK, "%s", cujit_errmsg(e));
  for (int i = 0; i < OTHERS; i++)
    cr_assert_eq(access(in_cache(others[i]), F_OK), 0, "%s was cleared", others[i]);
  cujit_close(e);
}
