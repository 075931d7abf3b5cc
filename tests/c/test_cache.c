/*
** test_cache.c -- the compiled-code cache's entries: memory and disk hits, hits with no NVRTC at
** all, corrupt entries (each damage warned about once, removed and rebuilt), the entry format's
** size checks, the cache key's builder, two processes filling one cache at once, the memory
** cache's bound, and a write past the file size limit (ulimit -f), which warns instead of ending
** the process with SIGXFSZ. The directory itself (where it is, its bound, clearing, what else may
** sit in it, who may write it): test_cache_dir.c.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>

#include "cache_fixture.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "program/program.h"

TestSuite(cache, .init = cj_cache_setup, .fini = cj_cache_teardown, .timeout = 300);

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
