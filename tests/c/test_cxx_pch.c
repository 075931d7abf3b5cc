/*
** test_cxx_pch.c -- the CPU device's precompiled prelude (compile/cxx_pch.c): the first compile
** makes it in the disk cache, later ones of any engine use it, and it never changes what a
** compile makes: the same entry bytes with and without it, a changed or foreign PCH made again or
** left alone, a lock held elsewhere not waited for, flags that key it and macros g++ checks, off
** with CUJIT_PCH=off and in the check build, removed by cujit_cache_clear, the oldest evicted.
** Needs g++ only: runs on CI.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "compile/cxx_pch.h"
#include "cujit.h"
#include "scratch.h"

static char cache_dir[600];
static const cujit_compile_options on_cpu = {.size = sizeof(cujit_compile_options), .arch = "cpu"};

static void setup(void) {
  const char *dir = cj_scratch_make("cxx-pch");
  cr_assert_lt(snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir), (int)sizeof cache_dir);
  setenv("CUJIT_CACHE_DIR", cache_dir, 1);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_PCH");
  unsetenv("CUJIT_CPU_CHECK");
  unsetenv("CUJIT_CXX");
  setenv("CUJIT_DEVICE", "cpu", 1);
}

static void teardown(void) {
  cj_scratch_remove();
}

TestSuite(cxx_pch, .init = setup, .fini = teardown, .timeout = 300);

static cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  return e;
}

static cujit_cache_stats stats(cujit_engine *e) {
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(e, &s), CUJIT_OK);
  return s;
}

/* Runs kernel `name` of p on one block of `threads` threads of the CPU device, its one argument
** a buffer of threads elements of dtype (4 bytes each), and copies that buffer into host. */
static void run_one_block(cujit_engine *e, cujit_program *p, const char *name, int threads,
                          cujit_dtype dtype, void *host) {
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, name, &k), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_device *cpu;
  cr_assert_eq(cujit_device_get(e, CUJIT_DEVICE_CPU, &cpu), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_buffer *y;
  cr_assert_eq(cujit_buffer_alloc_on(cpu, (size_t)threads * 4, dtype, &y), CUJIT_OK);
  cujit_launch_config cfg = {
      .size = sizeof cfg, .grid = {1, 1, 1}, .block = {(unsigned)threads, 1, 1}};
  cujit_arg args[] = {CUJIT_ARG_BUF(y)};
  cr_assert_eq(cujit_launch(k, &cfg, args, 1), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_dtoh(host, y, 0, (size_t)threads * 4, NULL), CUJIT_OK, "%s",
               cujit_errmsg(e));
  cujit_buffer_free(y);
}

/* Compiles y[i] = i * c + ADD (+ 100 when __CUDA_ARCH__ is 700; ADD from the options' defines when
** given, else 0), runs it on 64 threads of the CPU device, and checks every value. */
static void compile_and_run(cujit_engine *e, int c, const cujit_compile_options *options) {
  char src[512];
  snprintf(src, sizeof src,
           "#ifndef ADD\n#define ADD 0\n#endif\n"
           "#if __CUDA_ARCH__ == 700\n#define ARCH_ADD 100\n#else\n#define ARCH_ADD 0\n#endif\n"
           "extern \"C\" __global__ void line(float *y) {\n"
           "  y[threadIdx.x] = threadIdx.x * %d.0f + ADD + ARCH_ADD;\n}\n",
           c);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, "line.cu", options ? options : &on_cpu, &p), CUJIT_OK,
               "%s", cujit_errmsg(e));
  float host[64];
  run_one_block(e, p, "line", 64, CUJIT_F32, host);
  int add = 0;
  for (size_t i = 0; options && i < options->define_count; i++)
    if (strncmp(options->defines[i], "ADD=", 4) == 0)
      add += atoi(options->defines[i] + 4);
    else if (strcmp(options->defines[i], "__CUDA_ARCH__=700") == 0)
      add += 100; /* the prelude's own is 800: the unit must see the one given */
  for (int i = 0; i < 64; i++)
    cr_assert_eq(host[i], (float)(i * c + add), "y[%d] = %g, not %d", i, host[i], i * c + add);
  cujit_program_free(p);
}

/* The key directories under <cache>/cxx-pch (names in `names`, up to 8), or -1 when it is not
** there. */
static int key_dirs(char names[8][64]) {
  char root[700];
  snprintf(root, sizeof root, "%s/cxx-pch", cache_dir);
  DIR *d = opendir(root);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;)
    if (de->d_name[0] != '.' && n < 8) snprintf(names[n++], 64, "%.63s", de->d_name);
  closedir(d);
  return n;
}

static void path_of(char *out, size_t len, const char *key, const char *file) {
  snprintf(out, len, "%s/cxx-pch/%s/%s", cache_dir, key, file);
}

static int exists(const char *path) {
  return access(path, F_OK) == 0;
}

/* The only key directory there is (asserted), in key. */
static void the_key(char key[64]) {
  char names[8][64];
  cr_assert_eq(key_dirs(names), 1, "one precompiled prelude expected");
  snprintf(key, 64, "%s", names[0]);
}

/* A first compile in an engine of its own, which makes the PCH: its key, and its file in gch. */
static void make_pch(char key[64], char gch[900]) {
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  cr_assert_eq(stats(e).pch_created, 1);
  cujit_close(e);
  the_key(key);
  path_of(gch, 900, key, "cujit/cpu_prelude.h.gch");
}

/* A compile and run of a new program in a new engine (as a new process): the PCHs it made and
** used are `created` and `used`. */
static void new_engine_compiles(int c, unsigned created, unsigned used, const char *why) {
  cujit_engine *e = open_engine();
  compile_and_run(e, c, NULL);
  cujit_cache_stats st = stats(e);
  cujit_close(e);
  cr_assert(st.pch_created == created && st.pch_used == used,
            "%s: %llu made and %llu used, not %u and %u", why, (unsigned long long)st.pch_created,
            (unsigned long long)st.pch_used, created, used);
}

Test(cxx_pch, the_first_compile_makes_it_and_later_ones_of_any_engine_use_it) {
  cujit_engine *e = open_engine();
  char names[8][64];
  cr_assert_eq(key_dirs(names), -1, "no precompiled prelude before any compile");
  compile_and_run(e, 3, NULL);
  cr_assert_eq(stats(e).pch_created, 1);
  cr_assert_eq(stats(e).pch_used, 0);
  char key[64], path[900];
  the_key(key);
  cr_assert_eq(strlen(key), 32);
  path_of(path, sizeof path, key, "cujit/cpu_prelude.h.gch");
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "the PCH is at %s", path);
  cr_assert_gt(st.st_size, 1 << 20, "a PCH of the prelude is megabytes, not %lld bytes",
               (long long)st.st_size);
  cr_assert_eq(st.st_mode & 077, 0, "the PCH is the user's alone");
  path_of(path, sizeof path, key, "sum");
  cr_assert(exists(path), "its checksum is beside it");
  /* as the cache's own directory: no one else may list, read or write them */
  const char *private_paths[] = {"..", "", "cujit", "sum", "cujit/cpu_prelude.h"};
  for (size_t i = 0; i < sizeof private_paths / sizeof *private_paths; i++) {
    path_of(path, sizeof path, key, private_paths[i]);
    cr_assert_eq(stat(path, &st), 0, "no %s", path);
    cr_assert_eq(st.st_mode & 077, 0, "%s is open to others (mode %o)", path,
                 (unsigned)st.st_mode & 0777);
  }
  compile_and_run(e, 4, NULL); /* another program, the same engine */
  cr_assert_eq(stats(e).pch_created, 1);
  cr_assert_eq(stats(e).pch_used, 1);
  cujit_close(e);
  e = open_engine(); /* another engine: as another process, it finds it on disk */
  compile_and_run(e, 5, NULL);
  cr_assert_eq(stats(e).pch_created, 0);
  cr_assert_eq(stats(e).pch_used, 1);
  cujit_close(e);
}

/* The bytes of file dir/name, whole (*len its size). */
static char *file_bytes(const char *dir, const char *name, size_t *len) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  cr_assert(f, "no %s", path);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  rewind(f);
  char *data = malloc(*len + 1);
  cr_assert_eq(fread(data, 1, *len, f), *len);
  fclose(f);
  return data;
}

/* Every entry file (.cjc) of cache a is in cache b with the same bytes, and b has no others;
** returns how many there are. */
static int same_entries(const char *a, const char *b) {
  int count[2] = {0, 0};
  for (int side = 0; side < 2; side++) {
    DIR *d = opendir(side ? b : a);
    cr_assert(d, "no cache directory %s", side ? b : a);
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
      if (!strstr(de->d_name, ".cjc")) continue;
      count[side]++;
      if (side) continue;
      size_t la, lb;
      char *x = file_bytes(a, de->d_name, &la), *y = file_bytes(b, de->d_name, &lb);
      cr_assert(la == lb && memcmp(x, y, la) == 0,
                "entry %s differs between a compile with the PCH and one without", de->d_name);
      free(x);
      free(y);
    }
    closedir(d);
  }
  cr_assert_eq(count[0], count[1]);
  return count[0];
}

Test(cxx_pch, a_header_that_includes_the_prelude_again_compiles_through_it) {
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL); /* makes it */
  /* <cooperative_groups.h> is cujit/cpu_cg.h here, which includes the prelude itself */
  const char *src = "#include <cooperative_groups.h>\n"
                    "namespace cg = cooperative_groups;\n"
                    "extern \"C\" __global__ void ranks(int *y) {\n"
                    "  cg::thread_block b = cg::this_thread_block();\n"
                    "  b.sync();\n"
                    "  y[b.thread_rank()] = 2 * (int)b.thread_rank() + 1;\n}\n";
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, "cg.cu", &on_cpu, &p), CUJIT_OK, "%s",
               cujit_errmsg(e));
  cr_assert_eq(stats(e).pch_used, 1);
  int host[32];
  run_one_block(e, p, "ranks", 32, CUJIT_I32, host);
  for (int i = 0; i < 32; i++) cr_assert_eq(host[i], 2 * i + 1);
  cujit_program_free(p);
  cujit_close(e);
}

Test(cxx_pch, it_changes_nothing_in_what_is_compiled) {
  cujit_engine *e = open_engine();
  compile_and_run(e, 2, NULL); /* makes the PCH */
  compile_and_run(e, 7, NULL); /* uses it */
  cr_assert_eq(stats(e).pch_used, 1);
  cujit_close(e);
  /* the same programs compiled into a cache of their own, without a PCH */
  char other[700];
  snprintf(other, sizeof other, "%s-off", cache_dir);
  setenv("CUJIT_CACHE_DIR", other, 1);
  setenv("CUJIT_PCH", "off", 1);
  e = open_engine();
  compile_and_run(e, 2, NULL);
  compile_and_run(e, 7, NULL);
  cr_assert_eq(stats(e).pch_created + stats(e).pch_used, 0, "CUJIT_PCH=off");
  cujit_close(e);
  cr_assert_geq(same_entries(cache_dir, other), 2);
  char cmd[1600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", other);
  cr_assert_eq(system(cmd), 0);
}

Test(cxx_pch, off_makes_none_and_neither_does_the_check_build) {
  setenv("CUJIT_PCH", "off", 1);
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  char names[8][64];
  cr_assert_eq(key_dirs(names), -1, "CUJIT_PCH=off made a PCH");
  cujit_close(e);
  unsetenv("CUJIT_PCH");
  setenv("CUJIT_CPU_CHECK", "1", 1); /* compiled only: its objects need the sanitizers' runtime */
  e = open_engine();
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, "extern \"C\" __global__ void k(int *x) { *x = 1; }\n",
                                     "k.cu", &on_cpu, &p),
               CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_program_free(p);
  cr_assert_eq(stats(e).pch_created + stats(e).pch_used, 0, "the check build made or used one");
  cujit_close(e);
}

Test(cxx_pch, without_the_disk_cache_there_is_none) {
  setenv("CUJIT_CACHE", "off", 1);
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  compile_and_run(e, 4, NULL);
  cr_assert_eq(stats(e).pch_created + stats(e).pch_used, 0, "a PCH without a disk cache");
  cujit_close(e);
  char names[8][64];
  cr_assert_eq(key_dirs(names), -1, "CUJIT_CACHE=off wrote a PCH into the cache directory");
}

/* The engine's warnings, one after another (cujit_set_warning_handler). */
static void keep_warning(void *user, const char *message) {
  char *all = user;
  size_t used = strlen(all);
  snprintf(all + used, 1024 - used, "%s\n", message);
}

Test(cxx_pch, an_unknown_cujit_pch_value_is_auto_with_a_warning) {
  setenv("CUJIT_PCH", "sometimes", 1);
  char warnings[1024] = "";
  cujit_engine *e = open_engine();
  cujit_set_warning_handler(e, keep_warning, warnings);
  compile_and_run(e, 3, NULL);
  cr_assert_eq(stats(e).pch_created, 1, "CUJIT_PCH=sometimes did not use auto");
  cr_assert(strstr(warnings, "CUJIT_PCH") && strstr(warnings, "sometimes") &&
                strstr(warnings, "auto is used"),
            "the warning does not name the value and what is done: %s", warnings);
  cujit_close(e);
}

/* The process's open file descriptors on files or directories under the test's cache (a GPU's
** driver keeps descriptors of its own open after cujit_close: they are not counted). */
static int fds_in_cache(void) {
  DIR *d = opendir("/proc/self/fd");
  cr_assert(d);
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    char fd_path[300], target[1024];
    snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%s", de->d_name);
    ssize_t len = de->d_name[0] == '.' ? -1 : readlink(fd_path, target, sizeof target - 1);
    if (len <= 0) continue;
    target[len] = '\0';
    n += strncmp(target, cache_dir, strlen(cache_dir)) == 0;
  }
  closedir(d);
  return n;
}

/* Writes `bytes` at `offset` of the file at path (in place: the same inode). */
static void overwrite(const char *path, long offset, const char *bytes, size_t n) {
  FILE *f = fopen(path, "r+b");
  cr_assert(f, "cannot open %s", path);
  fseek(f, offset, SEEK_SET);
  cr_assert_eq(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

Test(cxx_pch, a_changed_pch_is_made_again_and_the_result_stands) {
  char key[64], gch[900], sum[900];
  make_pch(key, gch);
  overwrite(gch, 4096, "cujit", 5); /* one flipped run of bytes in the middle */
  new_engine_compiles(6, 1, 0, "a PCH whose bytes changed");
  cr_assert_eq(truncate(gch, 1000), 0); /* a short one */
  new_engine_compiles(8, 1, 0, "a PCH cut short");
  path_of(sum, sizeof sum, key, "sum");
  cr_assert_eq(unlink(sum), 0); /* a PCH without its checksum */
  new_engine_compiles(9, 1, 0, "a PCH without a checksum");
}

Test(cxx_pch, a_pch_that_passes_its_checksum_but_g_plus_plus_cannot_read_is_dropped) {
  char key[64], gch[900], sum[900];
  make_pch(key, gch);
  path_of(sum, sizeof sum, key, "sum");
  /* cut short, with a checksum that matches the cut bytes: g++ says it cannot read the PCH */
  size_t len = 100000;
  cr_assert_eq(truncate(gch, (off_t)len), 0);
  FILE *f = fopen(gch, "rb");
  char *data = malloc(len);
  cr_assert_eq(fread(data, 1, len, f), len);
  fclose(f);
  XXH128_hash_t h = XXH3_128bits(data, len);
  free(data);
  f = fopen(sum, "w");
  fprintf(f, "%016llx%016llx %lld\n", (unsigned long long)h.high64, (unsigned long long)h.low64,
          (long long)len);
  fclose(f);
  /* handed to g++ (it passed its checksum), the unit built again without it, right */
  new_engine_compiles(4, 0, 1, "the cut PCH with a matching checksum");
  cr_assert(!exists(gch), "the PCH g++ could not read stays");
  new_engine_compiles(5, 1, 0, "after it was dropped");
}

Test(cxx_pch, a_process_reads_a_pchs_checksum_once) {
  /* a PCH is tens of megabytes: once its bytes were seen right, this process trusts the same file
  ** (same inode, size and time) without its checksum; a changed file is checked again (above) */
  char key[64], gch[900], sum[900];
  make_pch(key, gch);
  new_engine_compiles(4, 0, 1, "the PCH, checked");
  path_of(sum, sizeof sum, key, "sum");
  cr_assert_eq(unlink(sum), 0);
  new_engine_compiles(5, 0, 1, "the PCH this process checked, its checksum gone since");
  cr_assert_eq(truncate(gch, 1000), 0); /* another file now: checked, no checksum, made again */
  new_engine_compiles(6, 1, 0, "a PCH changed after this process checked it");
}

Test(cxx_pch, a_pch_others_may_write_is_not_used) {
  char key[64], gch[900], dir[900];
  make_pch(key, gch);
  cr_assert_eq(chmod(gch, 0602), 0);
  new_engine_compiles(4, 1, 0, "a PCH others may write (made again)");
  cr_assert_eq(chmod(gch, 0620), 0);
  new_engine_compiles(5, 1, 0, "a PCH its group may write (made again)");
  cr_assert_eq(chmod(gch, 0644), 0); /* others may read it: used */
  new_engine_compiles(6, 0, 1, "a PCH others may only read");
  path_of(dir, sizeof dir, key, "");
  /* the key's directory writable by others, or by its group: nothing made or used */
  cr_assert_eq(chmod(dir, 0702), 0);
  new_engine_compiles(7, 0, 0, "a key directory others may write");
  cr_assert_eq(chmod(dir, 0720), 0);
  new_engine_compiles(8, 0, 0, "a key directory its group may write");
  cr_assert_eq(chmod(dir, 0755), 0);
  new_engine_compiles(9, 0, 1, "a key directory others may only read");
}

Test(cxx_pch, a_pch_or_directory_of_another_user_is_not_used) {
  if (geteuid() != 0) cr_skip_test("needs root, to give a file to another user");
  char key[64], gch[900], dir[900];
  make_pch(key, gch);
  cr_assert_eq(chown(gch, 65534, 65534), 0);
  new_engine_compiles(4, 1, 0, "a PCH of another user's (made again)");
  struct stat st;
  cr_assert_eq(stat(gch, &st), 0);
  cr_assert_eq(st.st_uid, 0, "the other user's PCH stayed in place");
  path_of(dir, sizeof dir, key, "");
  cr_assert_eq(chown(dir, 65534, 65534), 0); /* the key's directory another's: left alone */
  new_engine_compiles(5, 0, 0, "a key directory of another user's");
}

Test(cxx_pch, a_compile_does_not_wait_for_another_making_it) {
  char key[64], gch[900], lock[900];
  make_pch(key, gch);
  path_of(lock, sizeof lock, key, "lock");
  cr_assert_eq(unlink(gch), 0);
  int fd = open(lock, O_RDWR);
  cr_assert_geq(fd, 0);
  cr_assert_eq(flock(fd, LOCK_EX), 0); /* as a maker in another process holds it */
  new_engine_compiles(4, 0, 0, "while another held the lock");
  cr_assert(!exists(gch));
  close(fd); /* released: the next compile makes it */
  new_engine_compiles(5, 1, 0, "after the lock was released");
  cr_assert(exists(gch));
}

Test(cxx_pch, flags_key_it_and_macros_do_not) {
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  char names[8][64];
  cr_assert_eq(key_dirs(names), 1);
  /* -D: the same PCH (g++ checks each macro against it); one the prelude defines itself
  ** (__CUDA_ARCH__, 800 there unless given) makes g++ parse the prelude instead: the unit sees
  ** the value given either way */
  const char *defines[] = {"ADD=5", "__CUDA_ARCH__=700"};
  cujit_compile_options with_defines = on_cpu;
  with_defines.defines = defines, with_defines.define_count = 1;
  compile_and_run(e, 4, &with_defines);
  cr_assert_eq(stats(e).pch_used, 1, "a -D the prelude does not use kept the PCH out");
  with_defines.define_count = 2;
  compile_and_run(e, 5, &with_defines);
  cr_assert_eq(key_dirs(names), 1, "-D made a PCH of its own");
  /* fast math and another standard are other PCHs */
  cujit_compile_options fast = on_cpu;
  fast.fast_math = 1;
  compile_and_run(e, 6, &fast);
  cr_assert_eq(key_dirs(names), 2, "fast math used the PCH made without it");
  cujit_compile_options std20 = on_cpu;
  std20.std = "c++20";
  compile_and_run(e, 7, &std20);
  cr_assert_eq(key_dirs(names), 3, "-std=c++20 used the PCH made for c++17");
  cr_assert_eq(stats(e).pch_created, 3);
  cujit_close(e);
}

Test(cxx_pch, a_prelude_that_does_not_compile_is_not_tried_again) {
  cujit_engine *e = open_engine();
  cujit_compile_options old = on_cpu;
  old.std = "c++11"; /* the prelude needs C++17 */
  cujit_program *p;
  const char *src = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n";
  cr_assert_neq(cujit_program_compile(e, src, "k.cu", &old, &p), CUJIT_OK);
  cr_assert_eq(stats(e).pch_created, 0);
  char key[64], failed[900];
  the_key(key);
  path_of(failed, sizeof failed, key, "failed");
  cr_assert(exists(failed), "the failure is not recorded: every compile would try again");
  /* a failure half an hour old stands: the next compile does not try (the mark is left as it is) */
  char cmd[1000];
  snprintf(cmd, sizeof cmd, "touch -d '30 minutes ago' '%s'", failed);
  cr_assert_eq(system(cmd), 0);
  struct stat st;
  cr_assert_eq(stat(failed, &st), 0);
  time_t half_hour_ago = st.st_mtime;
  const char *src2 = "extern \"C\" __global__ void k(int *x) { x[0] = 2; }\n";
  cr_assert_neq(cujit_program_compile(e, src2, "k.cu", &old, &p), CUJIT_OK);
  cr_assert(strstr(cujit_errmsg(e), "error"), "the unit's own error: %s", cujit_errmsg(e));
  cr_assert_eq(stat(failed, &st), 0);
  cr_assert_eq(st.st_mtime, half_hour_ago, "a failure of half an hour ago was tried again");
  time_t first = st.st_mtime;
  /* a failure two hours old no longer stands: the next compile tries again (and fails again) */
  snprintf(cmd, sizeof cmd, "touch -d '2 hours ago' '%s'", failed);
  cr_assert_eq(system(cmd), 0);
  const char *src3 = "extern \"C\" __global__ void k(int *x) { x[0] = 3; }\n";
  cr_assert_neq(cujit_program_compile(e, src3, "k.cu", &old, &p), CUJIT_OK);
  cr_assert_eq(stat(failed, &st), 0);
  cr_assert_gt(st.st_mtime, first, "the old failure was not tried again");
  compile_and_run(e, 3, NULL); /* the default standard has its own key, made */
  cr_assert_eq(stats(e).pch_created, 1);
  cujit_close(e);
}

Test(cxx_pch, cache_clear_removes_them) {
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  char names[8][64];
  cr_assert_eq(key_dirs(names), 1);
  cr_assert_eq(cujit_cache_clear(e), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(key_dirs(names), -1, "cujit_cache_clear left the precompiled preludes");
  compile_and_run(e, 4, NULL);
  cr_assert_eq(stats(e).pch_created, 2, "not made again after the clear");
  cujit_close(e);
}

Test(cxx_pch, the_least_recently_used_beyond_the_limit_go) {
  char root[700], path[900];
  snprintf(root, sizeof root, "%s/cxx-pch", cache_dir);
  cr_assert_eq(mkdir(cache_dir, 0700), 0);
  cr_assert_eq(mkdir(root, 0700), 0);
  /* CJ_CXX_PCH_KEEP older keys, the first of them the oldest */
  for (int i = 0; i < CJ_CXX_PCH_KEEP; i++) {
    snprintf(path, sizeof path, "%s/%032x", root, i);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/%032x/sum", root, i);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fclose(f);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "touch -d '2020-01-0%d' '%s'", i + 1, path);
    cr_assert_eq(system(cmd), 0);
  }
  cujit_engine *e = open_engine();
  compile_and_run(e, 3, NULL);
  cr_assert_eq(stats(e).pch_created, 1);
  cujit_close(e);
  cr_assert_eq(fds_in_cache(), 0, "a compile that evicted left descriptors open in the cache");
  char names[8][64];
  cr_assert_eq(key_dirs(names), CJ_CXX_PCH_KEEP);
  snprintf(path, sizeof path, "%s/%032x", root, 0);
  cr_assert(!exists(path), "the least recently used stayed");
  snprintf(path, sizeof path, "%s/%032x", root, 1);
  cr_assert(exists(path), "one more than needed went");
}
