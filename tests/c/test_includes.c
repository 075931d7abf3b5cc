/*
** test_includes.c -- the cache's input rule: what NVRTC compiles is what was hashed. Each test
** compiles a program that reads a header, changes the header (or what its name resolves to),
** and checks the next compile sees the change instead of a stale entry; and that an unchanged
** header still gives a hit, without NVRTC.
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "program/program.h"
#include "compile/includes.h"

static char dir[256];
static int nwarnings;
static char warning[2048];

static void on_warning(void *user, const char *msg) {
  (void)user;
  snprintf(warning, sizeof warning, "%s", msg);
  nwarnings++;
}

static void setup(void) {
  cr_assert_lt(snprintf(dir, sizeof dir, "%s", cj_scratch_with_cache("includes")), (int)sizeof dir);
  nwarnings = 0;
}

static void teardown(void) {
  cj_scratch_remove();
}

TestSuite(includes, .init = setup, .fini = teardown, .timeout = 300);

static cujit_engine *open_engine(void) {
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cujit_set_warning_handler(e, on_warning, NULL);
  int v;
  if (cujit_nvrtc_version(e, &v) != CUJIT_OK) cr_skip_test("no NVRTC: %s", cujit_errmsg(e));
  return e;
}

/* Compiles the file (or the source, when `file` is NULL) with a fresh engine, so that only the
** disk cache carries over; returns the value the kernel stores, and whether it came from the
** cache. */
static int value_of(const char *file, const char *source, const cujit_compile_options *op,
                    int *from_cache) {
  cujit_engine *e = open_engine();
  cujit_program *p;
  cujit_status st = file ? cujit_program_compile_file(e, file, op, &p)
                         : cujit_program_compile(e, source, NULL, op, &p);
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(e));
  const char *mov = strstr(cujit_program_ptx(p, NULL), "mov.u32");
  cr_assert_not_null(mov, "%s", cujit_program_ptx(p, NULL));
  int v = atoi(strchr(mov, ',') + 1);
  *from_cache = cujit_program_from_cache(p);
  cujit_close(e);
  return v;
}

static const cujit_compile_options sm90 = {.size = sizeof(cujit_compile_options), .arch = "sm_90"};
#define KERNEL "extern \"C\" __global__ void k(int *p) { *p = VALUE; }\n"

/* Compiles, checks `want`, and checks that compiling again is a hit with the same value. */
static void expect(const char *file, const char *source, const cujit_compile_options *op, int want,
                   int want_cached) {
  int cached;
  cr_assert_eq(value_of(file, source, op, &cached), want);
  cr_assert_eq(cached, want_cached, "from the cache: %d, expected %d", cached, want_cached);
  cr_assert_eq(value_of(file, source, op, &cached), want);
  cr_assert_eq(cached, 1, "an unchanged program is a hit");
}

Test(includes, quoted_beside_the_file) {
  cj_scratch_write("hdr.h", "#define VALUE 111\n");
  cj_scratch_write("k.cu", "#include \"hdr.h\"\n" KERNEL);
  expect(cj_scratch_path("k.cu"), NULL, &sm90, 111, 0);
  cj_scratch_write("hdr.h", "#define VALUE 222\n");
  expect(cj_scratch_path("k.cu"), NULL, &sm90, 222, 0);
}

Test(includes, parent_directory_and_nested) {
  cj_scratch_write("x.h", "#include \"y.h\"\n");
  cj_scratch_write("y.h", "#define VALUE 311\n");
  cj_scratch_write("src/k.cu", "#include \"../x.h\"\n" KERNEL);
  expect(cj_scratch_path("src/k.cu"), NULL, &sm90, 311, 0);
  cj_scratch_write("y.h", "#define VALUE 312\n"); /* two levels down */
  expect(cj_scratch_path("src/k.cu"), NULL, &sm90, 312, 0);
}

Test(includes, absolute_in_source_and_preamble) {
  cj_scratch_write("abs.h", "#define VALUE 411\n");
  char src[700];
  snprintf(src, sizeof src, "#include \"%s\"\n" KERNEL, cj_scratch_path("abs.h"));
  expect(NULL, src, &sm90, 411, 0);
  cj_scratch_write("abs.h", "#define VALUE 412\n");
  expect(NULL, src, &sm90, 412, 0);

  char pre[600];
  snprintf(pre, sizeof pre, "#include \"%s\"", cj_scratch_path("abs.h"));
  for (int round = 0; round < 2; round++) {
    char value[64];
    snprintf(value, sizeof value, "#define VALUE %d\n", 421 + round);
    cj_scratch_write("abs.h", value);
    cujit_engine *e = open_engine();
    cujit_kernel *k;
    cr_assert_eq(cujit_kernel_define(e, "kp(int *p)", "*p = VALUE;", pre, &sm90, &k), CUJIT_OK,
                 "%s", cujit_errmsg(e));
    const char *ptx = cujit_program_ptx(cujit_kernel_program(k), NULL);
    char want[32];
    snprintf(want, sizeof want, "%d;", 421 + round);
    cr_assert(strstr(ptx, want), "preamble's header, round %d: %s", round, ptx);
    cujit_close(e);
  }
}

Test(includes, symlinked_subdirectory_under_include_dir) {
  cj_scratch_write("one/sub/v.h", "#define VALUE 511\n");
  cj_scratch_write("two/sub/v.h", "#define VALUE 522\n");
  cr_assert_eq(mkdir(cj_scratch_path("inc"), 0700), 0);
  cr_assert_eq(symlink(cj_scratch_path("one/sub"), cj_scratch_path("inc/sub")), 0);
  const char *dirs[] = {cj_scratch_path("inc")};
  cujit_compile_options op = {.size = sizeof(cujit_compile_options),
                              .arch = "sm_90",
                              .include_dirs = dirs,
                              .include_dir_count = 1};
  const char *src = "#include <sub/v.h>\n" KERNEL;
  expect(NULL, src, &op, 511, 0);
  cj_scratch_write("one/sub/v.h", "#define VALUE 512\n");
  expect(NULL, src, &op, 512, 0);
  cr_assert_eq(unlink(cj_scratch_path("inc/sub")), 0); /* same path, another directory */
  cr_assert_eq(symlink(cj_scratch_path("two/sub"), cj_scratch_path("inc/sub")), 0);
  expect(NULL, src, &op, 522, 0);
}

Test(includes, include_path_and_pre_include_flags) {
  cj_scratch_write("flagdir/f.h", "#define VALUE 611\n");
  cj_scratch_write("pre.h", "#define VALUE 621\n");
  char ip[400], pi[400];
  snprintf(ip, sizeof ip, "--include-path=%s", cj_scratch_path("flagdir"));
  snprintf(pi, sizeof pi, "--pre-include=%s", cj_scratch_path("pre.h"));
  const char *flags[] = {ip};
  cujit_compile_options op = {.size = sizeof(cujit_compile_options),
                              .arch = "sm_90",
                              .extra_flags = flags,
                              .extra_flag_count = 1};
  const char *src = "#include \"f.h\"\n" KERNEL;
  expect(NULL, src, &op, 611, 0);
  cj_scratch_write("flagdir/f.h", "#define VALUE 612\n");
  expect(NULL, src, &op, 612, 0);

  const char *pflags[] = {pi};
  cujit_compile_options pop = {.size = sizeof(cujit_compile_options),
                               .arch = "sm_90",
                               .extra_flags = pflags,
                               .extra_flag_count = 1};
  expect(NULL, KERNEL, &pop, 621, 0);
  cj_scratch_write("pre.h", "#define VALUE 622\n");
  expect(NULL, KERNEL, &pop, 622, 0);

  /* A relative --pre-include is found beside the file compiled, not in the working directory:
  ** NVRTC is given its real path (by its own search it would not find it). */
  cj_scratch_write("rel/pre.h", "#define VALUE 631\n");
  cj_scratch_write("rel/k.cu", KERNEL);
  const char *rflags[] = {"--pre-include=pre.h"};
  cujit_compile_options rop = {.size = sizeof(cujit_compile_options),
                               .arch = "sm_90",
                               .extra_flags = rflags,
                               .extra_flag_count = 1};
  expect(cj_scratch_path("rel/k.cu"), NULL, &rop, 631, 0);
}

Test(includes, a_new_header_that_shadows_is_seen) {
  cj_scratch_write("b/s.h", "#define VALUE 711\n");
  cr_assert_eq(mkdir(cj_scratch_path("a"), 0700), 0);
  const char *dirs[] = {cj_scratch_path("a"), cj_scratch_path("b")};
  cujit_compile_options op = {.size = sizeof(cujit_compile_options),
                              .arch = "sm_90",
                              .include_dirs = dirs,
                              .include_dir_count = 2};
  const char *src = "#include \"s.h\"\n" KERNEL;
  expect(NULL, src, &op, 711, 0);
  cj_scratch_write("a/s.h", "#define VALUE 722\n"); /* found first now */
  expect(NULL, src, &op, 722, 0);
}

Test(includes, inactive_includes_count_and_touching_does_not) {
  cj_scratch_write("live.h", "#define VALUE 811\n");
  cj_scratch_write("dead.h", "#error never read by the compiler\n");
  cj_scratch_write("k.cu", "#include \"live.h\"\n#if 0\n#include \"dead.h\"\n#endif\n" KERNEL);
  expect(cj_scratch_path("k.cu"), NULL, &sm90, 811, 0);
  /* a spurious miss is the price of never a stale hit */
  cj_scratch_write("dead.h", "#error changed\n");
  expect(cj_scratch_path("k.cu"), NULL, &sm90, 811, 0);
  struct timespec t[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
  cr_assert_eq(utimensat(AT_FDCWD, cj_scratch_path("live.h"), t, 0), 0); /* new time, same bytes */
  int cached;
  cr_assert_eq(value_of(cj_scratch_path("k.cu"), NULL, &sm90, &cached), 811);
  cr_assert_eq(cached, 1, "the bytes are the same: still a hit");
}

Test(includes, the_same_name_from_two_working_directories) {
  cj_scratch_write("d1/hdr.h", "#define VALUE 1111\n");
  cj_scratch_write("d2/hdr.h", "#define VALUE 2222\n");
  cj_scratch_write("d1/k.cu", "#include \"hdr.h\"\n" KERNEL);
  cj_scratch_write("d2/k.cu", "#include \"hdr.h\"\n" KERNEL); /* the same text, name and options */
  for (int round = 0; round < 2; round++) {
    int cached;
    cr_assert_eq(chdir(cj_scratch_path("d1")), 0);
    cr_assert_eq(value_of("k.cu", NULL, &sm90, &cached), 1111, "round %d", round);
    cr_assert_eq(chdir(cj_scratch_path("d2")), 0);
    cr_assert_eq(value_of("k.cu", NULL, &sm90, &cached), 2222, "round %d", round);
    cr_assert_eq(cached, round, "the second round is a hit");
  }
}

Test(includes, a_hit_with_headers_needs_no_nvrtc) {
  cj_scratch_write("hdr.h", "#define VALUE 911\n");
  cj_scratch_write("k.cu", "#include \"hdr.h\"\n" KERNEL);
  expect(cj_scratch_path("k.cu"), NULL, &sm90, 911, 0);
  setenv("CUJIT_NVRTC", "/nonexistent/libnvrtc.so", 1);
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile_file(e, cj_scratch_path("k.cu"), &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(e));
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert_eq(e->nvrtc_state, 0, "NVRTC was never opened");
  cujit_close(e);
}

Test(includes, macro_include_is_compiled_every_time_with_one_warning) {
  cj_scratch_write("m.h", "#define VALUE 1011\n");
  cj_scratch_write("k.cu", "#define HDR \"m.h\"\n\n#include HDR\n" KERNEL);
  for (int round = 0; round < 2; round++) {
    nwarnings = 0;
    int cached;
    cr_assert_eq(value_of(cj_scratch_path("k.cu"), NULL, &sm90, &cached), 1011 + round);
    cr_assert_eq(cached, 0, "never from the cache");
    cr_assert_eq(nwarnings, 1, "one warning");
    cr_assert(strstr(warning, "k.cu:3"), "names the line: %s", warning);
    cr_assert(strstr(warning, "without the cache"), "%s", warning);
    cj_scratch_write("m.h", "#define VALUE 1012\n");
  }
}

/* Writes `text` over every manifest in the cache; returns how many there were. */
static int overwrite_manifests(const char *text) {
  char cache[300], path[600];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  DIR *d = opendir(cache);
  cr_assert_not_null(d, "%s", cache);
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;)
    if (strstr(de->d_name, ".cjm")) {
      snprintf(path, sizeof path, "%s/%s", cache, de->d_name);
      FILE *f = fopen(path, "w");
      cr_assert_not_null(f, "%s", path);
      fputs(text, f);
      fclose(f);
      n++;
    }
  closedir(d);
  return n;
}

/* A source that names no header (no include or import anywhere, no pre-include flag) is looked
** up by its full key at once: its manifest is never read, so a damaged one goes unnoticed. One
** that names a header, even an in-memory one, still goes through its manifest. A build that read
** no file is kept under its direct key (program.c) and answered by it before any manifest (as
** `plain` is here too): the manifests of `named` and `big` are reached with line info on, which
** has no direct entry. */
Test(includes, a_source_naming_no_header_needs_no_manifest) {
  const char *plain = "extern \"C\" __global__ void k(int *p) { *p = 1201; }\n";
  const char *named =
      "#include <cujit/grid.h>\nextern \"C\" __global__ void k(int *p) { *p = 1202; "
      "}\n";
  cujit_compile_options lined = sm90;
  lined.line_info = 1;
  expect(NULL, plain, &sm90, 1201, 0);
  cr_assert_eq(overwrite_manifests("damaged"), 1, "the compile wrote its manifest all the same");
  nwarnings = 0;
  int cached;
  cr_assert_eq(value_of(NULL, plain, &sm90, &cached), 1201);
  cr_assert_eq(cached, 1, "a hit");
  cr_assert_eq(nwarnings, 0, "the manifest was not read: %s", warning);
  expect(NULL, named, &lined, 1202, 0);
  overwrite_manifests("damaged");
  nwarnings = 0;
  cr_assert_eq(value_of(NULL, named, &lined, &cached), 1202);
  cr_assert_eq(cached, 1, "a hit, through the includes resolved afresh");
  cr_assert_eq(nwarnings, 1, "its damaged manifest was read and refused");
  /* Past 16 KiB the manifest is read again (it costs less than resolving the text). */
  static char big[20000];
  int at = snprintf(big, sizeof big, "extern \"C\" __global__ void k(int *p) { *p = 1203; }\n");
  memset(big + at, ' ', sizeof big - (size_t)at - 1);
  expect(NULL, big, &lined, 1203, 0);
  overwrite_manifests("damaged");
  nwarnings = 0;
  cr_assert_eq(value_of(NULL, big, &lined, &cached), 1203);
  cr_assert_eq(nwarnings, 1, "a big source's damaged manifest was read and refused");
  const char *none[] = {"-arch=sm_90", "--include-path=/usr/include", "-I", "/x/include"};
  cr_assert_eq(cj_includes_none(plain, none, 4), 1);
  cr_assert_eq(cj_includes_none(named, none, 4), 0);
  cr_assert_eq(cj_includes_none("#if __has_include(<x.h>)\n#endif\n", NULL, 0), 0);
  cr_assert_eq(cj_includes_none("#import \"x.h\"\n", NULL, 0), 0);
  const char *pre[][2] = {{"--pre-include=x.h", ""}, {"--pre-include", "x.h"}, {"-include", "x.h"}};
  for (int i = 0; i < 3; i++) cr_assert_eq(cj_includes_none(plain, pre[i], 2), 0, "%s", pre[i][0]);
}

/* The resolver alone: what it hands over and the manifest's verdicts. */
Test(includes, resolver_and_manifest) {
  cj_scratch_write("r/a.h", "#pragma once\n#include \"b.h\"\n");
  cj_scratch_write("r/b.h", "#define VALUE 1\n");
  char src[600];
  snprintf(src, sizeof src, "#include \"a.h\"\n#include <cujit/x.h>\n#include \"a.h\"\n");
  const char *flags[] = {"-arch=sm_90"};
  const char *bnames[] = {"cujit/x.h"}, *bsrcs[] = {"#include \"b.h\"\n"};
  cj_include_request rq = {.source = src,
                           .name = cj_scratch_path("r/k.cu"),
                           .flags = flags,
                           .flag_count = 1,
                           .system_dir = cj_scratch_path("r"),
                           .builtin_names = bnames,
                           .builtin_sources = bsrcs,
                           .builtin_count = 1};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 1, "%s", inc.why);
  cr_assert_eq(inc.header_count, 3, "a.h, b.h once each, and the built-in");
  char real[4096];
  cr_assert_not_null(realpath(cj_scratch_path("r/a.h"), real));
  cr_assert(strstr(inc.source, real), "the directive names the real path: %s", inc.source);
  cr_assert(strstr(inc.source, "<cujit/x.h>"), "built-ins keep their names: %s", inc.source);
  uint8_t key[16] = {7}, got[16];
  char *m = cj_includes_manifest(&inc, key);
  cr_assert_not_null(m);
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m), got), 1);
  cr_assert_eq(memcmp(key, got, 16), 0);
  cj_scratch_write("r/b.h", "#define VALUE 2\n");
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m), got), 0, "a header changed");
  cj_scratch_write("r/b.h", "#define VALUE 1\n");
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m), got), 1, "same bytes again");
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m) - 3, got), 0, "a cut manifest");
  free(m);
  cj_includes_free(&inc);
}

/* A copy of m with the first `from` after `after` replaced by `to`. */
static char *edited(const char *m, const char *after, const char *from, const char *to) {
  const char *a = strstr(m, after);
  cr_assert_not_null(a, "'%s' in %s", after, m);
  const char *f = strstr(a, from);
  cr_assert_not_null(f, "'%s' in %s", from, m);
  char *e = malloc(strlen(m) + strlen(to) + 1);
  cr_assert_not_null(e);
  sprintf(e, "%.*s%s%s", (int)(f - m), m, to, f + strlen(from));
  return e;
}

static void check_edit(const char *m, const char *after, const char *from, const char *to, int want,
                       const char *what) {
  char *e = edited(m, after, from, to);
  uint8_t got[16];
  cr_assert_eq(cj_includes_manifest_check(e, strlen(e), got), want, "%s:\n%s", what, e);
  free(e);
}

/* Every field of the manifest is checked: a damaged one is a miss, never a hit. */
Test(includes, damaged_manifests_are_refused) {
  cj_scratch_write("m/a.h", "#include <c.h>\n");
  cj_scratch_write("m/inc/c.h", "#define VALUE 3\n");
  const char *flags[] = {"-I", cj_scratch_path("m/none"),
                         "--include-path=", cj_scratch_path("m/inc")};
  char inc_flag[600];
  snprintf(inc_flag, sizeof inc_flag, "--include-path=%s", cj_scratch_path("m/inc"));
  flags[2] = inc_flag;
  cj_include_request rq = {.source = "#include \"a.h\"\n",
                           .name = cj_scratch_path("m/k.cu"),
                           .flags = flags,
                           .flag_count = 3};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 1, "%s", inc.why);
  cr_assert_eq(inc.header_count, 2);
  uint8_t key[16] = {0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xcd}, got[16];
  char *m = cj_includes_manifest(&inc, key);
  cr_assert_not_null(m);
  cr_assert(strstr(m, "\nA "), "the path probed absent (m/none/c.h) is listed: %s", m);
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m), got), 1, "%s", m);
  cr_assert_eq(memcmp(key, got, 16), 0);
  check_edit(m, "K ", "ab", "aB", 0, "an upper-case key digit");
  check_edit(m, "K ", "cd\n", "cdX", 0, "the key line not ended");
  check_edit(m, "K ", "ab", "a", 0, "a short key");
  check_edit(m, "\nF ", "F ", "F\t", 0, "no space after the kind");
  check_edit(m, "\nF ", "F ", "G ", 0, "an unknown kind");
  check_edit(m, "\nF ", "F ", "F -", 0, "a negative size");
  check_edit(m, "\nF ", "F ", "F x", 0, "a size that is not a number");
  check_edit(m, "\nF ", "F ", "F 99999999999999999999", 0, "a size past the range");
  check_edit(m, "\nF ", "\t", " ", 0, "no tab before the real path");
  check_edit(m, "\nA ", "A ", "A \n", 0, "an empty absent path");
  check_edit(m, "\n", "\n", "\nD /nowhere\n", 0, "another working directory");
  char cwd[4096], dline[4200];
  cr_assert_not_null(getcwd(cwd, sizeof cwd));
  snprintf(dline, sizeof dline, "\nD %s\n", cwd);
  check_edit(m, "\n", "\n", dline, 1, "this working directory");
  /* The hash is checked when the mtime is not trusted (-1): a wrong one is a miss. */
  const char *f = strstr(m, "\nF ");
  long long size, sec;
  cr_assert_eq(sscanf(f, "\nF %lld %lld", &size, &sec), 2);
  char from[64], to[64];
  snprintf(from, sizeof from, "F %lld %lld ", size, sec);
  snprintf(to, sizeof to, "F %lld -1 ", size);
  check_edit(m, "\nF ", from, to, 1, "mtime untrusted, same bytes");
  char *untrusted = edited(m, "\nF ", from, to);
  const char *tab = strchr(strstr(untrusted, "\nF "), '\t');
  char *h = (char *)tab - 17; /* the hash's first digit */
  h[0] = h[0] == '0' ? '1' : '0';
  cr_assert_eq(cj_includes_manifest_check(untrusted, strlen(untrusted), got), 0, "%s", untrusted);
  h[0] = 'x';
  cr_assert_eq(cj_includes_manifest_check(untrusted, strlen(untrusted), got), 0, "a bad digit");
  free(untrusted);
  snprintf(to, sizeof to, "F %lld %lld ", size + 1, sec);
  check_edit(m, "\nF ", from, to, 0, "another size");
  long long ns, dev, ino;
  cr_assert_eq(sscanf(f, "\nF %lld %lld %lld %lld %lld", &size, &sec, &ns, &dev, &ino), 5);
  char ids[128], other[128];
  snprintf(ids, sizeof ids, " %lld %lld ", dev, ino);
  snprintf(other, sizeof other, " %lld %lld ", dev + 1, ino);
  check_edit(m, "\nF ", ids, other, 0, "another device");
  snprintf(other, sizeof other, " %lld %lld ", dev, ino + 1);
  check_edit(m, "\nF ", ids, other, 0, "another inode");
  char spaced[700], unspaced[700];
  snprintf(spaced, sizeof spaced, " %s\t", cj_scratch_path("m/a.h"));
  snprintf(unspaced, sizeof unspaced, "x%s\t", cj_scratch_path("m/a.h"));
  check_edit(m, "\nF ", spaced, unspaced, 0, "no space after the hash");
  /* A file at a path listed as absent (after a longer path was read): a miss. */
  char *appeared = malloc(strlen(m) + 700);
  cr_assert_not_null(appeared);
  sprintf(appeared, "%sA %s\n", m, cj_scratch_path("m/a.h"));
  cr_assert_eq(cj_includes_manifest_check(appeared, strlen(appeared), got), 0, "%s", appeared);
  free(appeared);
  /* The absent path appears: a miss. */
  cj_scratch_write("m/none/c.h", "#define VALUE 4\n");
  cr_assert_eq(cj_includes_manifest_check(m, strlen(m), got), 0, "%s", m);
  free(m);
  cj_includes_free(&inc);
}

/* -no-source-include: a quoted name is not looked for beside the source, only in -I directories;
** a --pre-include (both spellings) is found beside the source and named by its real path. */
Test(includes, search_order_and_pre_includes) {
  cj_scratch_write("s/a.h", "#define VALUE 1\n");
  cj_scratch_write("s/inc/a.h", "#define VALUE 2\n");
  cj_scratch_write("s/pre.h", "#define PRE 1\n");
  char beside[4096], in_inc[4096], pre[4096];
  cr_assert_not_null(realpath(cj_scratch_path("s/a.h"), beside));
  cr_assert_not_null(realpath(cj_scratch_path("s/inc/a.h"), in_inc));
  cr_assert_not_null(realpath(cj_scratch_path("s/pre.h"), pre));
  char iflag[600];
  snprintf(iflag, sizeof iflag, "-I%s", cj_scratch_path("s/inc"));
  const char *flags[] = {iflag, "--pre-include=pre.h", "-include", "pre.h"};
  cj_include_request rq = {.source = "#include \"a.h\"\n",
                           .name = cj_scratch_path("s/k.cu"),
                           .flags = flags,
                           .flag_count = 4};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 1, "%s", inc.why);
  cr_assert(strstr(inc.source, beside), "beside the source first: %s", inc.source);
  char want[4200];
  snprintf(want, sizeof want, "--pre-include=%s", pre);
  cr_assert_eq(inc.flag_count, 4);
  cr_assert_str_eq(inc.flags[1], want);
  cr_assert_str_eq(inc.flags[2], "-include");
  cr_assert_str_eq(inc.flags[3], pre);
  cj_includes_free(&inc);
  const char *no_source[] = {"-no-source-include", iflag};
  rq.flags = no_source, rq.flag_count = 2;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert(strstr(inc.source, in_inc), "only the -I directory: %s", inc.source);
  cj_includes_free(&inc);
}

/* A header over 64 MiB is not read (the include is then not cacheable, saying which); one of
** exactly 64 MiB is read (here it holds NUL bytes, which is the reason given). Sparse files. */
Test(includes, the_per_file_size_limit) {
  cj_scratch_write("big/k.h", "");
  cr_assert_eq(truncate(cj_scratch_path("big/k.h"), (off_t)64 << 20), 0);
  cj_include_request rq = {.source = "#include \"k.h\"\n", .name = cj_scratch_path("big/k.cu")};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 0);
  cr_assert(strstr(inc.why, "NUL bytes"), "%s", inc.why);
  cj_includes_free(&inc);
  cr_assert_eq(truncate(cj_scratch_path("big/k.h"), ((off_t)64 << 20) + 1), 0);
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 0);
  cr_assert(strstr(inc.why, "cannot read"), "%s", inc.why);
  cj_includes_free(&inc);
}

/* __has_include names are resolved and rewritten like #include's; a name found nowhere is probed
** in each -I directory once, and only there. */
Test(includes, has_include_and_names_found_nowhere) {
  cj_scratch_write("h/a.h", "#define VALUE 1\n");
  char real[4096];
  cr_assert_not_null(realpath(cj_scratch_path("h/a.h"), real));
  char iflag[600], want[8400];
  snprintf(iflag, sizeof iflag, "-I%s", cj_scratch_path("h/inc"));
  const char *flags[] = {iflag};
  cj_include_request rq = {.source = "#if __has_include(\"a.h\")\n#endif\n#include <nowhere.h>\n",
                           .name = cj_scratch_path("h/k.cu"),
                           .flags = flags,
                           .flag_count = 1};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 1, "%s", inc.why);
  snprintf(want, sizeof want, "#if __has_include(\"%s\")\n#endif\n#include <nowhere.h>\n", real);
  cr_assert_str_eq(inc.source, want);
  cr_assert_eq(inc.header_count, 1);
  cr_assert_eq(inc.file_count, 2, "a.h read, inc/nowhere.h probed absent");
  cr_assert_not_null(inc.files[0].path);
  cr_assert_null(inc.files[1].path);
  snprintf(want, sizeof want, "%s/nowhere.h", cj_scratch_path("h/inc"));
  cr_assert_str_eq(inc.files[1].canonical, want);
  cj_includes_free(&inc);
}

/* The includes of one program hold at most 512 MiB: eight headers of 64 MiB (hard links of one
** file, each a path of its own) pass, one byte more is refused, saying why. */
Test(includes, the_total_size_limit) {
  cj_scratch_write("total/h0.h", "");
  FILE *f = fopen(cj_scratch_path("total/h0.h"), "w");
  cr_assert_not_null(f);
  static char chunk[1 << 20];
  memset(chunk, ' ', sizeof chunk);
  for (int i = 0; i < 64; i++) cr_assert_eq(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
  fclose(f);
  char src[1024] = "", name[32];
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "total/h%d.h", i);
    if (i) cr_assert_eq(link(cj_scratch_path("total/h0.h"), cj_scratch_path(name)), 0);
    snprintf(src + strlen(src), sizeof src - strlen(src), "#include \"h%d.h\"\n", i);
  }
  cj_scratch_write("total/one.h", "x");
  snprintf(src + strlen(src), sizeof src - strlen(src), "#include \"one.h\"\n");
  cj_include_request rq = {.source = src, .name = cj_scratch_path("total/k.cu")};
  cj_includes inc;
  cr_assert_eq(cj_includes_resolve(&rq, &inc), 1);
  cr_assert_eq(inc.cacheable, 0);
  cr_assert(strstr(inc.why, "k.cu:9:"), "the include past the limit (line 9): %s", inc.why);
  cr_assert(strstr(inc.why, "512 MiB"), "%s", inc.why);
  cj_includes_free(&inc);
}
