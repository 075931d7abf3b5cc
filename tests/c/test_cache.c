/*
** test_cache.c -- the compiled-code cache: memory and disk hits, hits with no NVRTC at all,
** corrupt and foreign entries, an unusable directory, CUJIT_CACHE=off, LRU eviction, clearing,
** the directory's resolution, two processes filling one cache at once, what else may sit at
** an entry's path (a FIFO, a directory, a huge file), who may write the cache, and a write past
** the file size limit (ulimit -f), which warns instead of ending the process with SIGXFSZ.
*/
#define _GNU_SOURCE /* unshare */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>

#include "scratch.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "program/program.h"

static char tmpdir[256], cache_dir[320];
static const cujit_compile_options sm90 = {.size = sizeof(cujit_compile_options), .arch = "sm_90"};

/* Warnings received, for the tests that count them. */
static int nwarnings;
static char warnings[8][2048];

static void on_warning(void *user, const char *msg) {
  (void)user;
  if (nwarnings < 8) snprintf(warnings[nwarnings], sizeof warnings[0], "%s", msg);
  nwarnings++;
}

static cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cujit_set_warning_handler(e, on_warning, NULL);
  return e;
}

static void setup(void) {
  cr_assert_lt(snprintf(tmpdir, sizeof tmpdir, "%s", cj_scratch_make("cache")), (int)sizeof tmpdir);
  snprintf(cache_dir, sizeof cache_dir, "%s/cache", tmpdir);
  setenv("CUJIT_CACHE_DIR", cache_dir, 1);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_CACHE_MAX");
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
  nwarnings = 0;
}

static void teardown(void) {
  cj_scratch_remove();
}

static void need_nvrtc(cujit_engine *e) {
  int v;
  if (cujit_nvrtc_version(e, &v) != CUJIT_OK) cr_skip_test("no NVRTC: %s", cujit_errmsg(e));
}

/* A small kernel whose name and constant make it distinct. */
static char *kernel_src(const char *name, int constant) {
  static char buf[8][512];
  static int next;
  char *s = buf[next++ % 8];
  snprintf(s, 512, "extern \"C\" __global__ void %s(int *x) { x[threadIdx.x] = %d; }\n", name,
           constant);
  return s;
}

static cujit_program *compile_ok(cujit_engine *e, const char *src) {
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, NULL, &sm90, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  return p;
}

/* The entry files in the cache directory. */
static int list_entries(char names[][64], int max) {
  DIR *d = opendir(cache_dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strstr(de->d_name, ".cjc") && n < max) snprintf(names[n++], 64, "%.60s", de->d_name);
  closedir(d);
  return n;
}

static void only_entry_path(char *path, size_t len) {
  char names[4][64];
  cr_assert_eq(list_entries(names, 4), 1, "one entry on disk");
  snprintf(path, len, "%s/%s", cache_dir, names[0]);
}

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 300);

Test(cache, memory_then_disk_hits) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cr_assert_str_eq(cujit_cache_dir(e), cache_dir);
  const char *src = kernel_src("hit", 41);
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0);
  char *ptx = strdup(cujit_program_ptx(p, NULL));
  size_t cubin_len;
  cujit_program_cubin(p, &cubin_len);
  cujit_program_free(p);
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert_str_eq(cujit_program_log(p), "");
  cujit_program_free(p);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(e, &st), CUJIT_OK);
  cr_assert_eq(st.memory_hits, 1);
  cr_assert_eq(st.disk_hits, 0);
  cr_assert_eq(st.misses, 1);
  cr_assert_eq(st.entries, 1);
  cr_assert_gt(st.bytes, cubin_len);
  cr_assert_eq(st.max_bytes, (uint64_t)1 << 30);
  cr_assert_eq(st.disk_enabled, 1);
  cujit_close(e);

  e = open_engine();
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert_str_eq(cujit_program_ptx(p, NULL), ptx);
  size_t len2;
  const void *cubin = cujit_program_cubin(p, &len2);
  cr_assert_eq(len2, cubin_len);
  cr_assert_eq(memcmp(cubin,
                      "\x7f"
                      "ELF",
                      4),
               0);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "hit");
  cr_assert_eq(cujit_cache_stats_get(e, &st), CUJIT_OK);
  cr_assert_eq(st.disk_hits, 1);
  cr_assert_eq(st.misses, 0);
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cujit_close(e);
  free(ptx);
}

Test(cache, a_hit_needs_no_nvrtc) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("warm", 7);
  cujit_program_free(compile_ok(e, src));
  cujit_close(e);

  setenv("CUJIT_NVRTC", "/nonexistent/libnvrtc.so", 1);
  e = open_engine();
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert(strstr(cujit_program_ptx(p, NULL), ".entry warm"));
  cujit_program_free(p);
  cr_assert_eq(e->nvrtc_state, 0, "NVRTC was never opened");
  cr_assert_eq(cujit_program_compile(e, kernel_src("cold", 8), NULL, &sm90, &p),
               CUJIT_ERROR_NO_NVRTC);
  cr_assert(strstr(cujit_errmsg(e), "/nonexistent/libnvrtc.so"), "%s", cujit_errmsg(e));
  cujit_close(e);
}

/* Damages the one entry with `damage`, then checks a fresh engine warns once with `reason`,
** rebuilds, and gets the same code as before. */
static void check_damage(void (*damage)(const char *path), const char *reason) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  const char *src = kernel_src("fragile", 99);
  cujit_program *p = compile_ok(e, src);
  char *ptx = strdup(cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  cujit_close(e);
  char path[512];
  only_entry_path(path, sizeof path);
  damage(path);

  e = open_engine();
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0, "a bad entry is a miss");
  cr_assert_str_eq(cujit_program_ptx(p, NULL), ptx);
  cujit_program_free(p);
  cr_assert_eq(nwarnings, 1);
  cr_assert(strstr(warnings[0], path), "names the entry: %s", warnings[0]);
  cr_assert(strstr(warnings[0], reason), "says why: %s", warnings[0]);
  cr_assert(strstr(warnings[0], "removed, recompiling"), "%s", warnings[0]);
  cujit_close(e);

  e = open_engine(); /* the rebuilt entry is good */
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cujit_program_free(p);
  cr_assert_eq(nwarnings, 1);
  cujit_close(e);
  free(ptx);
}

static void patch(const char *path, long offset, const void *bytes, size_t n) {
  int fd = open(path, O_WRONLY);
  cr_assert_geq(fd, 0);
  cr_assert_eq(pwrite(fd, bytes, n, offset), (ssize_t)n);
  close(fd);
}

static void flip_payload_byte(const char *path) {
  struct stat st;
  stat(path, &st);
  int fd = open(path, O_RDWR);
  unsigned char b;
  off_t at = CJ_CACHE_HEADER_BYTES + (st.st_size - CJ_CACHE_HEADER_BYTES) / 2;
  cr_assert_eq(pread(fd, &b, 1, at), 1);
  b ^= 0x20;
  cr_assert_eq(pwrite(fd, &b, 1, at), 1);
  close(fd);
}

static void truncate_half(const char *path) {
  struct stat st;
  stat(path, &st);
  cr_assert_eq(truncate(path, st.st_size / 2), 0);
}

static void truncate_header(const char *path) {
  cr_assert_eq(truncate(path, 10), 0);
}

static void append_byte(const char *path) {
  int fd = open(path, O_WRONLY | O_APPEND);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, "x", 1), 1);
  close(fd);
}

static void wrong_schema(const char *path) {
  unsigned char v[4] = {CJ_CACHE_SCHEMA + 1, 0, 0, 0};
  patch(path, 8, v, 4);
}

static void wrong_key(const char *path) {
  unsigned char b;
  int fd = open(path, O_RDONLY);
  cr_assert_eq(pread(fd, &b, 1, 20), 1);
  close(fd);
  b ^= 0xff; /* a different byte whatever the key was (a fixed value may be the key's own) */
  patch(path, 20, &b, 1);
}

static void wrong_magic(const char *path) {
  patch(path, 0, "GARBAGE!", 8);
}

Test(cache, flipped_byte) {
  check_damage(flip_payload_byte, "checksum mismatch");
}

Test(cache, truncated) {
  check_damage(truncate_half, "truncated");
}

Test(cache, truncated_header) {
  check_damage(truncate_header, "truncated header");
}

Test(cache, longer_than_its_header_says) {
  /* The mirror of "truncated": the payload's checksum still matches, so the size check alone
  ** refuses a file its header sizes add up to LESS than. */
  check_damage(append_byte, "sizes do not match the file");
}

static void put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

Test(cache, entry_sizes_against_the_file) {
  cj_cache_key key = {{0}};
  memcpy(key.bytes, "0123456789abcdef", 16);
  unsigned char cubin[3] = {1, 2, 3};
  cj_cache_entry e = {.ptx = "// ptx\n",
                      .ptx_len = 7,
                      .cubin = cubin,
                      .cubin_len = 3,
                      .log = "warn",
                      .nvrtc_version = 12080};
  size_t n;
  unsigned char *d = cj_cache_entry_encode(&key, &e, &n);
  cr_assert_not_null(d);
  cr_assert_eq(n, CJ_CACHE_HEADER_BYTES + 7 + 3 + 4);
  cr_assert_null(cj_cache_entry_check_header(d, n, &key, n));
  cr_assert_str_eq(cj_cache_entry_check_header(d, n, &key, n + 1), "sizes do not match the file");
  cr_assert_str_eq(cj_cache_entry_check_header(d, n, &key, n - 1), "truncated");
  cr_assert_str_eq(cj_cache_entry_check_header(d, CJ_CACHE_HEADER_BYTES - 1, &key, n),
                   "truncated header");
  cj_cache_entry got;
  cr_assert_null(cj_cache_entry_parse(d, n, &key, &got));
  cr_assert_eq(got.ptx_len, 7);
  cr_assert_str_eq(got.ptx, "// ptx\n");
  cr_assert_eq(got.cubin_len, 3);
  cr_assert_eq(memcmp(got.cubin, cubin, 3), 0);
  cr_assert_str_eq(got.log, "warn");
  cr_assert_eq(got.nvrtc_version, 12080);
  cj_cache_entry_free(&got);
  cr_assert_null(got.ptx, "free clears the entry");

  /* A PTX size one short, with the checksum made to match the shorter payload: only the sizes
  ** catch that the file holds a byte more than the header accounts for. */
  unsigned char *shrunk = malloc(n);
  memcpy(shrunk, d, n);
  put_le64(shrunk + 32, 6);
  cr_assert_str_eq(cj_cache_entry_parse(shrunk, n, &key, &got), "sizes do not match the file");
  cr_assert_null(got.ptx, "nothing handed out");
  /* Sizes that wrap around 2^64 to the file's size are refused, not trusted. */
  put_le64(shrunk + 32, UINT64_MAX - 1);
  put_le64(shrunk + 40, 3 + 7 + 2);
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, n), "sizes do not match the file");
  put_le64(shrunk + 32, (uint64_t)1 << 63);
  put_le64(shrunk + 40, (uint64_t)1 << 63);
  put_le64(shrunk + 48, 14);
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, n), "sizes do not match the file");
  /* Past 1 GiB a part is refused even when the file is that long. */
  uint64_t big = ((uint64_t)1 << 30) + 1;
  put_le64(shrunk + 32, big);
  put_le64(shrunk + 40, 0);
  put_le64(shrunk + 48, 0);
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, CJ_CACHE_HEADER_BYTES + big),
                   "sizes do not match the file");
  put_le64(shrunk + 32, big - 1);
  cr_assert_null(cj_cache_entry_check_header(shrunk, n, &key, CJ_CACHE_HEADER_BYTES + big - 1));
  memcpy(shrunk, d, n);
  shrunk[7] ^= 1;
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, n), "not a cujit cache entry");
  memcpy(shrunk, d, n);
  shrunk[10] = 1; /* the schema's third byte */
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, n),
                   "written by another cujit cache schema");
  memcpy(shrunk, d, n);
  shrunk[31] ^= 1; /* the key's last byte */
  cr_assert_str_eq(cj_cache_entry_check_header(shrunk, n, &key, n), "holds another key");
  memcpy(shrunk, d, n);
  shrunk[n - 1] ^= 1; /* the log's last byte */
  cr_assert_str_eq(cj_cache_entry_parse(shrunk, n, &key, &got), "checksum mismatch");
  memcpy(shrunk, d, n);
  shrunk[CJ_CACHE_HEADER_BYTES] ^= 1; /* the PTX's first byte */
  cr_assert_str_eq(cj_cache_entry_parse(shrunk, n, &key, &got), "checksum mismatch");
  free(shrunk);
  free(d);
}

Test(cache, null_arguments_and_balanced_close) {
  cj_cache_close(NULL); /* engine.c closes a cache that failed to open */
  cujit_engine *e = open_engine();
  cj_cache_entry entry = {.ptx = "// p\n", .ptx_len = 5, .log = ""};
  cj_cache_key key = {{1}};
  cj_cache *c = cj_cache_open(e);
  cr_assert_not_null(c);
  cj_cache_put(c, NULL, &entry);
  cj_cache_put(c, &key, NULL);
  cj_cache_put(NULL, &key, &entry);
  cj_cache_entry none = {.ptx = NULL};
  cj_cache_put(c, &key, &none);
  cj_cache_entry got;
  cr_assert_eq(cj_cache_get(c, &key, &got), 0, "nothing was stored");
  cj_cache_close(c);
  /* A closed cache gives back all it took (glibc's count of bytes in use). */
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < 3; i++) {
    c = cj_cache_open(e);
    cj_cache_put(c, &key, &entry);
    cj_cache_close(c);
  }
  struct mallinfo2 after = mallinfo2();
  cr_assert_leq(after.uordblks + after.hblkhd, before.uordblks + before.hblkhd + 1024,
                "three caches opened and closed kept %zu bytes",
                (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd));
  cujit_close(e);
}

Test(cache, wrong_schema) {
  check_damage(wrong_schema, "schema");
}

Test(cache, wrong_key) {
  check_damage(wrong_key, "another key");
}

Test(cache, wrong_magic) {
  check_damage(wrong_magic, "not a cujit cache entry");
}

Test(cache, unusable_directory_means_memory_only) {
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

Test(cache, off_means_memory_only_and_silent) {
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

Test(cache, directory_resolution) {
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

Test(cache, max_size_parsing) {
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

Test(cache, lru_eviction) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  char names[8][64];
  cujit_program_free(compile_ok(e, kernel_src("lru_a", 1)));
  cr_assert_eq(list_entries(names, 8), 1);
  char a[64];
  snprintf(a, sizeof a, "%s", names[0]);
  cujit_program_free(compile_ok(e, kernel_src("lru_b", 2)));
  cr_assert_eq(list_entries(names, 8), 2);
  char b[64];
  snprintf(b, sizeof b, "%s", strcmp(names[0], a) ? names[0] : names[1]);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  uint64_t per_entry = st.bytes / 2;
  cujit_close(e);
  /* Hours old: a hit bumps an entry's time only when it is over an hour old. */
  set_age(a, 3 * 3600);
  set_age(b, 2 * 3600);

  /* Room for two entries and a half: a third one pushes out the least recently used. */
  char max[32];
  snprintf(max, sizeof max, "%llu", (unsigned long long)(per_entry * 5 / 2));
  setenv("CUJIT_CACHE_MAX", max, 1);
  e = open_engine();
  cujit_program *p = compile_ok(e, kernel_src("lru_a", 1)); /* a hit: a becomes the newest */
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cujit_program_free(p);
  cujit_program_free(compile_ok(e, kernel_src("lru_c", 3)));
  cr_assert(entry_exists(a), "a was used recently");
  cr_assert(!entry_exists(b), "b was the least recently used");
  cr_assert_eq(list_entries(names, 8), 2);
  cujit_cache_stats_get(e, &st);
  cr_assert_leq(st.bytes, st.max_bytes);
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cujit_close(e);
}

Test(cache, entry_bigger_than_the_bound_is_kept_alone) {
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

Test(cache, clear) {
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

Test(cache, key_builder) {
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "ab");
  cj_key_add_str(kb, "c");
  cj_cache_key k1 = cj_key_end(kb);
  kb = cj_key_begin();
  cj_key_add_str(kb, "a");
  cj_key_add_str(kb, "bc");
  cj_cache_key k2 = cj_key_end(kb);
  cr_assert_neq(memcmp(k1.bytes, k2.bytes, 16), 0, "parts cannot run together");
  kb = cj_key_begin();
  cj_key_add_str(kb, "ab");
  cj_key_add_str(kb, "c");
  cj_cache_key k3 = cj_key_end(kb);
  cr_assert_eq(memcmp(k1.bytes, k3.bytes, 16), 0);
  kb = cj_key_begin();
  cj_key_add_str(kb, NULL);
  cj_cache_key k4 = cj_key_end(kb);
  kb = cj_key_begin();
  cj_key_add_str(kb, "");
  cj_cache_key k5 = cj_key_end(kb);
  cr_assert_neq(memcmp(k4.bytes, k5.bytes, 16), 0);
}

/* The builder gathers small parts before hashing: the key must be XXH3-128 of every part, each
** after its 8-byte length, whatever their sizes (parts that fill the gathered block exactly,
** cross it, or are bigger than it), so that keys stay those of entries already on disk. */
Test(cache, key_builder_hashes_the_parts_as_one_stream) {
  static const size_t sizes[] = {0, 1, 7, 500, 3, 1, 504, 512, 513, 2000, 5, 511, 0, 4096, 9};
  static char part[4096], all[16384];
  size_t used = 0;
  cj_key_builder *kb = cj_key_begin();
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    for (size_t j = 0; j < sizes[i]; j++) part[j] = (char)(i * 31 + j * 7);
    uint64_t n = sizes[i];
    memcpy(all + used, &n, sizeof n), used += sizeof n;
    memcpy(all + used, part, sizes[i]), used += sizes[i];
    cj_key_add(kb, part, sizes[i]);
  }
  cj_cache_key got = cj_key_end(kb);
  XXH128_canonical_t want;
  XXH128_canonicalFromHash(&want, XXH3_128bits(all, used));
  cr_assert_eq(memcmp(got.bytes, want.digest, 16), 0, "the key is the hash of the whole stream");
}

/* One child process: compiles its own kernels and the shared ones; exits 0 when all went well. */
static void child(int id) {
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) _exit(10);
  cujit_set_warning_handler(e, on_warning, NULL);
  char name[32];
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 4; i++) {
      cujit_program *p;
      snprintf(name, sizeof name, "own%d_%d", id, i);
      if (cujit_program_compile(e, kernel_src(name, id * 10 + i), NULL, &sm90, &p) != CUJIT_OK)
        _exit(11);
      cujit_program_free(p);
      snprintf(name, sizeof name, "shared_%d", i);
      if (cujit_program_compile(e, kernel_src(name, 100 + i), NULL, &sm90, &p) != CUJIT_OK)
        _exit(12);
      cujit_program_free(p);
    }
  cujit_close(e);
  _exit(nwarnings ? 13 : 0);
}

Test(cache, two_processes_at_once) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_close(e);
  pid_t pids[2];
  for (int i = 0; i < 2; i++) {
    pids[i] = fork();
    cr_assert_geq(pids[i], 0);
    if (pids[i] == 0) child(i + 1);
  }
  for (int i = 0; i < 2; i++) {
    int status;
    cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i, status);
  }
  char names[32][64];
  cr_assert_eq(list_entries(names, 32), 12, "4 + 4 own and 4 shared entries");

  setenv("CUJIT_NVRTC", "/nonexistent/libnvrtc.so", 1); /* every one must be a good hit */
  e = open_engine();
  char name[32];
  for (int id = 1; id <= 2; id++)
    for (int i = 0; i < 4; i++) {
      snprintf(name, sizeof name, "own%d_%d", id, i);
      cujit_program *p = compile_ok(e, kernel_src(name, id * 10 + i));
      cr_assert_str_eq(cujit_program_kernel_name(p, 0), name);
      cujit_program_free(p);
    }
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "shared_%d", i);
    cujit_program *p = compile_ok(e, kernel_src(name, 100 + i));
    cr_assert(strstr(cujit_program_ptx(p, NULL), name));
    cujit_program_free(p);
  }
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  DIR *d = opendir(cache_dir);
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    cr_assert_null(strstr(de->d_name, ".tmp"), "no temp file left: %s", de->d_name);
  closedir(d);
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

Test(cache, fifo_at_an_entry_path_does_not_hang_and_stays) {
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

Test(cache, symlink_at_an_entry_path_is_not_followed_replaced_or_removed) {
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

Test(cache, directory_at_an_entry_path_is_not_said_removed) {
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

Test(cache, a_huge_file_at_an_entry_path_is_not_read_whole) {
  check_foreign(one_gib_file, "not a cujit cache entry", 1);
  cr_assert_lt(read_during_compile, 256ull << 20, "read %llu bytes", read_during_compile);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "%s", path);
  return st.st_mode & 07777;
}

Test(cache, private_modes_whatever_the_umask) {
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

Test(cache, group_or_world_writable_directory_is_refused) {
  char dir[400];
  snprintf(dir, sizeof dir, "%s/shared", tmpdir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cr_assert_eq(chmod(dir, 0777), 0);
  check_refused(dir, "group or others may write it");
}

Test(cache, directory_of_another_user_is_refused) {
  if (geteuid() != 0) cr_skip_test("needs root to give a directory away");
  char dir[400];
  snprintf(dir, sizeof dir, "%s/theirs", tmpdir);
  cr_assert_eq(mkdir(dir, 0755), 0);
  cr_assert_eq(chown(dir, 65534, 65534), 0);
  check_refused(dir, "belongs to another user");
}

/* The memory cache keeps entries up to 64 MiB in all: one of exactly 64 MiB stays, one byte more
** is not kept, and a second entry that would pass the bound drops the oldest. Memory only
** (CUJIT_CACHE=off), so each answer comes from memory. */
Test(cache, the_memory_bound) {
  setenv("CUJIT_CACHE", "off", 1);
  cujit_engine *e = open_engine();
  cj_cache *c = cj_cache_open(e);
  cr_assert_not_null(c);
  size_t mib64 = (size_t)64 << 20;
  char *text = malloc(mib64 + 1);
  cr_assert_not_null(text);
  memset(text, 'p', mib64);
  text[mib64] = '\0';
  cj_cache_key a = {{1}}, b = {{2}}, big = {{3}};
  cj_cache_entry got;
  cj_cache_entry exact = {.ptx = text, .ptx_len = mib64 - 4, .log = "four"};
  cj_cache_put(c, &a, &exact);
  cr_assert_eq(cj_cache_get(c, &a, &got), 1, "64 MiB in all (PTX and log) is kept");
  cr_assert_eq(got.ptx_len, mib64 - 4);
  cr_assert_str_eq(got.log, "four");
  cj_cache_entry_free(&got);
  cj_cache_entry over = {.ptx = text, .ptx_len = mib64 - 3, .log = "four"};
  cj_cache_put(c, &big, &over);
  cr_assert_eq(cj_cache_get(c, &big, &got), 0, "one byte over 64 MiB is not kept");
  cr_assert_eq(cj_cache_get(c, &a, &got), 1, "and drops nothing");
  cj_cache_entry_free(&got);
  cj_cache_entry half = {.ptx = text, .ptx_len = mib64 / 2, .log = ""};
  cj_cache_put(c, &b, &half);
  cr_assert_eq(cj_cache_get(c, &b, &got), 1);
  cj_cache_entry_free(&got);
  cr_assert_eq(cj_cache_get(c, &a, &got), 0, "the oldest made room");
  cj_cache_close(c);
  free(text);
  cujit_close(e);
}

/* The entry just written is evicted last, even when the others look newer (dated ahead by a
** machine whose clock runs fast). */
Test(cache, the_entry_just_written_is_evicted_last) {
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  char names[8][64], a[64], b[64];
  cujit_program_free(compile_ok(e, kernel_src("ahead_a", 1)));
  cr_assert_eq(list_entries(names, 8), 1);
  snprintf(a, sizeof a, "%s", names[0]);
  cujit_program_free(compile_ok(e, kernel_src("ahead_b", 2)));
  cr_assert_eq(list_entries(names, 8), 2);
  snprintf(b, sizeof b, "%s", strcmp(names[0], a) ? names[0] : names[1]);
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &st);
  uint64_t per_entry = st.bytes / 2;
  cujit_close(e);
  set_age(a, -2 * 3600);
  set_age(b, -3 * 3600);
  char max[32];
  snprintf(max, sizeof max, "%llu", (unsigned long long)(per_entry * 5 / 2));
  setenv("CUJIT_CACHE_MAX", max, 1);
  e = open_engine();
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
Test(cache, a_directory_cujit_cannot_write_means_memory_only) {
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

/* Past ulimit -f a write raises SIGXFSZ, whose default action ends the process: the cache write
** must fail with EFBIG and a warning instead, with SIGXFSZ's disposition and this thread's mask
** as they were, and nothing pending. Before: the process died (killed by SIGXFSZ). */
Test(cache, a_write_past_the_file_size_limit_warns_and_the_process_goes_on) {
  cujit_engine *e = open_engine();
  cj_cache *c = cj_cache_open(e);
  cr_assert_not_null(c);
  static unsigned char cubin[64 * 1024];
  memset(cubin, 0x5A, sizeof cubin);
  cj_cache_entry entry = {
      .ptx = "", .ptx_len = 0, .cubin = cubin, .cubin_len = sizeof cubin, .log = ""};
  cj_cache_key key = {{7}};
  struct rlimit old, small;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  small = old;
  small.rlim_cur = 4096;
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  sigset_t mask_before, mask_after, pending;
  pthread_sigmask(SIG_BLOCK, NULL, &mask_before);
  cj_cache_put(c, &key, &entry);
  pthread_sigmask(SIG_BLOCK, NULL, &mask_after);
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  cr_expect_eq(nwarnings, 1, "%d warnings", nwarnings);
  cr_expect(strstr(warnings[0], "could not write cache entry"), "%s", warnings[0]);
  cr_expect(strstr(warnings[0], strerror(EFBIG)), "says why: %s", warnings[0]);
  cr_expect_eq(sigismember(&mask_after, SIGXFSZ), sigismember(&mask_before, SIGXFSZ),
               "the thread's mask is as it was");
  cr_expect_eq(sigpending(&pending), 0);
  cr_expect_eq(sigismember(&pending, SIGXFSZ), 0, "the SIGXFSZ raised was consumed");
  struct sigaction now;
  sigaction(SIGXFSZ, NULL, &now);
  cr_expect(now.sa_handler == SIG_DFL, "SIGXFSZ's disposition is left alone");
  char names[4][64];
  cr_expect_eq(list_entries(names, 4), 0, "no entry, and no partial file");
  DIR *d = opendir(cache_dir);
  int temporaries = 0;
  for (struct dirent *de; d && (de = readdir(d));)
    temporaries += strstr(de->d_name, ".tmp") != NULL;
  if (d) closedir(d);
  cr_expect_eq(temporaries, 0, "the temporary file was removed");
  /* Within the limit again, the next write is kept. */
  cj_cache_put(c, &key, &entry);
  cr_expect_eq(list_entries(names, 4), 1);
  cj_cache_close(c);
  cujit_close(e);
}
