/*
** test_cache_dir.c -- the compiled-code cache's directory: an unusable one and CUJIT_CACHE=off
** (memory only), where it is (CUJIT_CACHE_DIR, XDG_CACHE_HOME, HOME), its bound (CUJIT_CACHE_MAX)
** and LRU eviction, clearing, what else may sit at an entry's path (a FIFO, a link, a directory, a
** huge file), and who may write it (private modes, directories others may write or cujit may not).
** The entries themselves: test_cache.c.
*/
#define _GNU_SOURCE /* unshare */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_fixture.h"

TestSuite(cache_dir, .init = cj_cache_setup, .fini = cj_cache_teardown, .timeout = 300);

Test(cache_dir, unusable_directory_means_memory_only) {
  char file[400], dir[450];
  snprintf(file, sizeof file, "%s/plain-file", tmpdir);
  FILE *f = fopen(file, "w");
  fputs("not a directory\n", f);
  fclose(f);
  snprintf(dir, sizeof dir, "%s/cache", file); /* can never be created, even by root */
  setenv("CUJIT_CACHE_DIR", dir, 1);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("memonly", 3);
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0);
  cujit_program_free(p);
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1, "still cached in memory");
  cujit_program_free(p);
  cujit_program_free(compile_ok(e, kernel_src("memonly2", 4)));
  cr_assert_eq(nwarnings, 1, "exactly one warning");
  cr_assert(strstr(warnings[0], dir), "names the directory: %s", warnings[0]);
  cr_assert(strstr(warnings[0], "Not a directory"), "says why: %s", warnings[0]);
  cr_assert(strstr(warnings[0], "CUJIT_CACHE_DIR"), "says how to fix: %s", warnings[0]);
  cr_assert_str_eq(cujit_cache_dir(e), "");
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  cr_assert_eq(st.disk_enabled, 0);
  cr_assert_eq(st.entries, 0);
  cr_assert_eq(st.memory_hits, 1);
  cr_assert_eq(cujit_cache_clear(e), CUJIT_OK);
  cujit_close(e);
}

Test(cache_dir, off_means_memory_only_and_silent) {
  setenv("CUJIT_CACHE", "off", 1);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("nodisk", 5);
  cujit_program_free(compile_ok(e, src));
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cujit_program_free(p);
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cr_assert_str_eq(cujit_cache_dir(e), "");
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  cr_assert_eq(st.disk_enabled, 0);
  struct stat sb;
  cr_assert_neq(stat(cache_dir, &sb), 0, "the directory was never made");
  cujit_close(e);
}

Test(cache_dir, directory_resolution) {
  unsetenv("CUJIT_CACHE_DIR");
  char xdg[400], want[420];
  snprintf(xdg, sizeof xdg, "%s/xdg", tmpdir);
  setenv("XDG_CACHE_HOME", xdg, 1);
  cujit_engine *e = open_engine();
  snprintf(want, sizeof want, "%s/cujit", xdg);
  cr_assert_str_eq(cujit_cache_dir(e), want);
  cujit_close(e);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", tmpdir, 1);
  e = open_engine();
  snprintf(want, sizeof want, "%s/.cache/cujit", tmpdir);
  cr_assert_str_eq(cujit_cache_dir(e), want);
  cujit_close(e);
}

Test(cache_dir, max_size_parsing) {
  static const struct {
    const char *text;
    uint64_t bytes;
    int warns;
  } cases[] = {
      {"4096", 4096, 0},
      {"64K", 64 << 10, 0},
      {"3M", 3 << 20, 0},
      {"2G", (uint64_t)2 << 30, 0},
      {"5kb", 5 << 10, 0},
      {"7MiB", 7 << 20, 0},
      {"lots", (uint64_t)1 << 30, 1},
      {"-5", (uint64_t)1 << 30, 1},
      {"0", (uint64_t)1 << 30, 1},
      {"12Q", (uint64_t)1 << 30, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("CUJIT_CACHE_MAX", cases[i].text, 1);
    nwarnings = 0;
    cujit_engine *e = open_engine();
    cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
    cujit_cache_stats_get(e, &st);
    cr_assert_eq(st.max_bytes, cases[i].bytes, "%s", cases[i].text);
    cr_assert_eq(nwarnings, cases[i].warns, "%s", cases[i].text);
    if (cases[i].warns) cr_assert(strstr(warnings[0], "CUJIT_CACHE_MAX"), "%s", warnings[0]);
    cujit_close(e);
  }
}

static void set_age(const char *name, int seconds_ago) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", cache_dir, name);
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= seconds_ago;
  t[1] = t[0];
  cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static int entry_exists(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", cache_dir, name);
  return access(path, F_OK) == 0;
}

/* Compiles kernels `name_a` (1) and `name_b` (2), one entry each, whose file names go to a and b;
** dates them `age_a` and `age_b` seconds ago; and bounds the cache (CUJIT_CACHE_MAX) to room for
** two entries and a half, so that a third one pushes one out. */
static void two_dated_entries(const char *name_a, int age_a, const char *name_b, int age_b,
                              char a[64], char b[64]) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  char names[8][64];
  cujit_program_free(compile_ok(e, kernel_src(name_a, 1)));
  cr_assert_eq(list_entries(names, 8), 1);
  snprintf(a, 64, "%s", names[0]);
  cujit_program_free(compile_ok(e, kernel_src(name_b, 2)));
  cr_assert_eq(list_entries(names, 8), 2);
  snprintf(b, 64, "%s", strcmp(names[0], a) ? names[0] : names[1]);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  uint64_t per_entry = st.bytes / 2;
  cujit_close(e);
  set_age(a, age_a);
  set_age(b, age_b);
  char max[32];
  snprintf(max, sizeof max, "%llu", (unsigned long long)(per_entry * 5 / 2));
  setenv("CUJIT_CACHE_MAX", max, 1);
}

Test(cache_dir, lru_eviction) {
  char names[8][64], a[64], b[64];
  /* Hours old: a hit bumps an entry's time only when it is over an hour old. */
  two_dated_entries("lru_a", 3 * 3600, "lru_b", 2 * 3600, a, b);
  cujit_engine *e = open_engine();
  cujit_program *p = compile_ok(e, kernel_src("lru_a", 1)); /* a hit: a becomes the newest */
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cujit_program_free(p);
  cujit_program_free(compile_ok(e, kernel_src("lru_c", 3)));
  cr_assert(entry_exists(a), "a was used recently");
  cr_assert(!entry_exists(b), "b was the least recently used");
  cr_assert_eq(list_entries(names, 8), 2);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  cr_assert_leq(st.bytes, st.max_bytes);
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cujit_close(e);
}

Test(cache_dir, entry_bigger_than_the_bound_is_kept_alone) {
  setenv("CUJIT_CACHE_MAX", "1", 1);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  char names[8][64];
  cujit_program_free(compile_ok(e, kernel_src("big_a", 1)));
  cujit_program_free(compile_ok(e, kernel_src("big_b", 2)));
  cr_assert_eq(list_entries(names, 8), 0, "nothing fits in one byte");
  cujit_program *p = compile_ok(e, kernel_src("big_b", 2));
  cr_assert_eq(cujit_program_from_cache(p), 1, "memory still serves it");
  cujit_program_free(p);
  cujit_close(e);
}

Test(cache_dir, clear) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("cleared", 11);
  cujit_program_free(compile_ok(e, src));
  cujit_program_free(compile_ok(e, kernel_src("cleared2", 12)));
  char stale[600];
  snprintf(stale, sizeof stale, "%s/.0123456789abcdef0123456789abcdef.123.deadbeef.tmp", cache_dir);
  FILE *f = fopen(stale, "w");
  fputs("half written", f);
  fclose(f);
  set_age(".0123456789abcdef0123456789abcdef.123.deadbeef.tmp", 120);
  char young[600]; /* another process's entry being written now */
  snprintf(young, sizeof young, "%s/.0123456789abcdef0123456789abcdef.124.feedbeef.tmp", cache_dir);
  f = fopen(young, "w");
  fputs("being written", f);
  fclose(f);
  char keep[600];
  snprintf(keep, sizeof keep, "%s/README", cache_dir);
  f = fopen(keep, "w");
  fputs("not ours", f);
  fclose(f);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  cr_assert_eq(st.entries, 2);
  cr_assert_eq(cujit_cache_clear(e), CUJIT_OK);
  cujit_cache_stats_get(e, &st);
  cr_assert_eq(st.entries, 0);
  cr_assert_eq(st.bytes, 0);
  cr_assert_neq(access(stale, F_OK), 0, "stale temp files go too");
  cr_assert_eq(access(young, F_OK), 0, "temp files younger than a minute stay");
  cr_assert_eq(access(keep, F_OK), 0, "files that are not entries stay");
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0, "memory was cleared too");
  cujit_program_free(p);
  cr_assert_eq(cujit_cache_clear(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_cache_stats_get(e, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_close(e);
}

/* --- what may sit at an entry's path, and who may write the cache ---------------------------- */

/* Bytes this process has read, from /proc/self/io. */
static unsigned long long bytes_read(void) {
  FILE *f = fopen("/proc/self/io", "r");
  unsigned long long n = 0;
  if (!f) cr_skip_test("no /proc/self/io");
  if (fscanf(f, "rchar: %llu", &n) != 1) n = 0;
  fclose(f);
  return n;
}

static unsigned long long read_during_compile;

/* Compiles once, then puts something else at the entry's path with `replace`, and compiles again
** with a fresh engine: it must not hang, must compile, and warn `count` times, first with `says`.
*/
static void check_foreign(void (*replace)(const char *path), const char *says, int count) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("foreign", 21);
  cujit_program_free(compile_ok(e, src));
  cujit_close(e);
  char path[512];
  only_entry_path(path, sizeof path);
  cr_assert_eq(unlink(path), 0);
  replace(path);
  alarm(60); /* a hang fails here instead of at the suite's timeout */
  e = open_engine();
  unsigned long long before = bytes_read();
  cujit_program *p = compile_ok(e, src);
  read_during_compile = bytes_read() - before;
  cr_assert_eq(cujit_program_from_cache(p), 0);
  cujit_program_free(p);
  cujit_close(e);
  alarm(0);
  cr_assert_eq(nwarnings, count, "%d warnings: %s | %s", nwarnings, warnings[0], warnings[1]);
  cr_assert(strstr(warnings[0], path), "names the entry: %s", warnings[0]);
  cr_assert(strstr(warnings[0], says), "%s", warnings[0]);
}

static void make_fifo(const char *path) {
  cr_assert_eq(mkfifo(path, 0600), 0);
}

static void make_dir(const char *path) {
  cr_assert_eq(mkdir(path, 0700), 0);
}

/* A FIFO, a device or a link at an entry's path is not cujit's: it is neither read nor renamed
** over (issue 23: a rename over a device node replaced /dev/null), nor removed by a clear.
** Checks that the entry's path still holds that kind of file before and after a clear. */
static void stays_through_a_clear(int (*is_kind)(mode_t), const char *kind) {
  char path[512];
  only_entry_path(path, sizeof path);
  struct stat st;
  cr_assert(lstat(path, &st) == 0 && is_kind(st.st_mode), "the %s is left alone", kind);
  cujit_engine *e = open_engine();
  cr_assert_eq(cujit_cache_clear(e), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_close(e);
  cr_assert(lstat(path, &st) == 0 && is_kind(st.st_mode),
            "a clear removes only cujit's own regular files, not the %s", kind);
}

static int is_fifo(mode_t m) {
  return S_ISFIFO(m);
}

static int is_link(mode_t m) {
  return S_ISLNK(m);
}

Test(cache_dir, fifo_at_an_entry_path_does_not_hang_and_stays) {
  check_foreign(make_fifo, "not a regular file; it was left alone and is not used", 1);
  stays_through_a_clear(is_fifo, "FIFO");
}

static char link_target[512];

static void make_link(const char *path) {
  snprintf(link_target, sizeof link_target, "%s/../the-users-file", cache_dir);
  FILE *f = fopen(link_target, "w");
  cr_assert(f);
  fputs("the user's own file\n", f);
  fclose(f);
  cr_assert_eq(symlink(link_target, path), 0);
}

Test(cache_dir, symlink_at_an_entry_path_is_not_followed_replaced_or_removed) {
  check_foreign(make_link, "is a symbolic link; it was left alone and is not used", 1);
  stays_through_a_clear(is_link, "symbolic link");
  char text[64] = "";
  FILE *f = fopen(link_target, "r");
  cr_assert(f);
  cr_assert(fgets(text, sizeof text, f));
  fclose(f);
  cr_assert_str_eq(text, "the user's own file\n", "the link's target is untouched");
  unlink(link_target);
}

Test(cache_dir, directory_at_an_entry_path_is_not_said_removed) {
  check_foreign(make_dir, "is a directory; it was left alone", 1); /* and no rename tried */
  cr_assert_null(strstr(warnings[0], "removed"), "%s", warnings[0]);
  char path[512];
  only_entry_path(path, sizeof path);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert(S_ISDIR(st.st_mode), "still there, as the warning says");
}

static void one_gib_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT, 0600);
  cr_assert_geq(fd, 0);
  cr_assert_eq(ftruncate(fd, (off_t)1 << 30), 0); /* sparse: costs no disk */
  close(fd);
}

Test(cache_dir, a_huge_file_at_an_entry_path_is_not_read_whole) {
  check_foreign(one_gib_file, "not a cujit cache entry", 1);
  cr_assert_lt(read_during_compile, 256ull << 20, "read %llu bytes", read_during_compile);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "%s", path);
  return st.st_mode & 07777;
}

Test(cache_dir, private_modes_whatever_the_umask) {
  for (int round = 0; round < 2; round++) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/umask%d/cujit", tmpdir, round);
    setenv("CUJIT_CACHE_DIR", dir, 1);
    mode_t old = umask(round == 0 ? 0 : 0277);
    cujit_engine *e = open_engine();
    need_nvrtc(e);
    cujit_program_free(compile_ok(e, kernel_src("modes", 40 + round)));
    cujit_close(e);
    umask(old);
    cr_assert_eq(mode_of(dir), 0700, "directory, umask round %d: %o", round, mode_of(dir));
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    while ((de = readdir(d)) != NULL) {
      if (de->d_name[0] == '.') continue;
      char path[700];
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
      cr_assert_eq(mode_of(path), 0600, "%s: %o", path, mode_of(path));
      files++;
    }
    closedir(d);
    cr_assert_eq(files, 2, "the entry and its manifest");
  }
}

/* A directory others may write is refused with one warning, then used once shared on purpose. */
static void check_refused(const char *dir, const char *why) {
  setenv("CUJIT_CACHE_DIR", dir, 1);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_program_free(compile_ok(e, kernel_src("refused", 50)));
  cujit_program_free(compile_ok(e, kernel_src("refused", 51)));
  cr_assert_str_eq(cujit_cache_dir(e), "", "memory only");
  cujit_close(e);
  cr_assert_eq(nwarnings, 1, "one warning");
  cr_assert(strstr(warnings[0], dir), "names the path: %s", warnings[0]);
  cr_assert(strstr(warnings[0], why), "says why: %s", warnings[0]);
  cr_assert(strstr(warnings[0], "chmod 700") && strstr(warnings[0], "CUJIT_CACHE_SHARED=1"),
            "says the fix: %s", warnings[0]);
  setenv("CUJIT_CACHE_SHARED", "1", 1);
  nwarnings = 0;
  e = open_engine();
  cujit_program_free(compile_ok(e, kernel_src("refused", 50)));
  cr_assert_str_eq(cujit_cache_dir(e), dir, "shared on purpose: used");
  cujit_close(e);
  unsetenv("CUJIT_CACHE_SHARED");
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
}

Test(cache_dir, group_or_world_writable_directory_is_refused) {
  char dir[400];
  snprintf(dir, sizeof dir, "%s/shared", tmpdir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_eq(chmod(dir, 0777), 0);
  check_refused(dir, "group or others may write it");
}

/* Writable by the group alone, or by others alone: each is enough to be refused. */
Test(cache_dir, group_only_or_others_only_writable_directory_is_refused) {
  const mode_t modes[] = {0770, 0720, 0703};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/shared%o", tmpdir, (unsigned)modes[i]);
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, modes[i]), 0);
    nwarnings = 0;
    check_refused(dir, "group or others may write it");
  }
}

Test(cache_dir, directory_of_another_user_is_refused) {
  if (geteuid() != 0) cr_skip_test("needs root to give a directory away");
  char dir[400];
  snprintf(dir, sizeof dir, "%s/theirs", tmpdir);
  cr_assert_eq(mkdir(dir, 0755), 0);
  cr_assert_eq(chown(dir, 65534, 65534), 0);
  check_refused(dir, "belongs to another user");
}

/* The entry just written is evicted last, even when the others look newer (dated ahead by a
** machine whose clock runs fast). */
Test(cache_dir, the_entry_just_written_is_evicted_last) {
  char names[8][64], a[64], b[64];
  two_dated_entries("ahead_a", -2 * 3600, "ahead_b", -3 * 3600, a, b);
  cujit_engine *e = open_engine();
  cujit_program_free(compile_ok(e, kernel_src("ahead_c", 3)));
  cr_assert_eq(list_entries(names, 8), 2);
  int c_kept = strcmp(names[0], a) && strcmp(names[0], b);
  c_kept |= strcmp(names[1], a) && strcmp(names[1], b);
  cr_assert(c_kept, "the new entry is kept: %s, %s", names[0], names[1]);
  cr_assert(entry_exists(b), "b is dated the newest");
  cr_assert(!entry_exists(a), "a was the oldest of the others");
  cujit_close(e);
}

/* A directory cujit may not write is not used (memory only, one warning saying why). For root,
** who may write any directory, a read-only file system: a tmpfs mounted read-only in this test
** process's own mount namespace (private, so nothing outside sees it). */
Test(cache_dir, a_directory_cujit_cannot_write_means_memory_only) {
  char ro[400];
  snprintf(ro, sizeof ro, "%s/ro", tmpdir);
  cr_assert_eq(mkdir(ro, 0700), 0);
  int mounted = 0;
  if (geteuid() != 0) {
    cr_assert_eq(chmod(ro, 0500), 0);
  } else if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
             mount("cujit-test-ro", ro, "tmpfs", MS_RDONLY, "mode=700") != 0) {
    cr_skip_test("root, and no read-only directory to be had: unshare or mount refused (%s)",
                 strerror(errno));
  } else {
    mounted = 1;
  }
  setenv("CUJIT_CACHE_DIR", ro, 1);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_program_free(compile_ok(e, kernel_src("readonly", 7)));
  cr_assert_eq(nwarnings, 1, "one warning");
  cr_assert(strstr(warnings[0], ro), "names the directory: %s", warnings[0]);
  cr_assert(strstr(warnings[0], mounted ? "Read-only file system" : "Permission denied"),
            "says why: %s", warnings[0]);
  cr_assert_str_eq(cujit_cache_dir(e), "");
  cujit_close(e);
  if (mounted) cr_assert_eq(umount2(ro, MNT_DETACH), 0);
}
