/*
** test_memo.c -- the program layer's memo (program.c): building what was built before skips the
** scan and the key only while the result cannot differ. Each test changes one input (the source,
** an option, a header the source reads, a pre-included or probed file, the C++ compiler's
** checks, with and without an included header, the cache) and checks the PTX or the cache's
** answer follows; a memo that handed back the earlier program would fail. NVRTC compiles for an
** explicit sm_90 (no GPU needed).
*/
#include <string.h>

#include "fixture.h"

static const char *dir; /* the scratch directory: the cache's, and the headers' */

static void setup(void) {
  unsetenv("CUJIT_CACHE");
  cj_fixture_open();
  dir = cj_scratch;
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
}

TestSuite(memo, .init = setup, .fini = cj_fixture_close, .timeout = 300);

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* A kernel storing `value`, which its PTX holds as a decimal immediate. */
static char *store_source(long value) {
  static char text[256];
  snprintf(text, sizeof text,
           "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = %ld; }\n", value);
  return text;
}

/* Compiles and checks the PTX stores `value`; returns whether it came from the cache. */
static int compile_expecting(const char *source, const char *name, const cujit_compile_options *o,
                             long value) {
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, source, name, o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  char want[32];
  snprintf(want, sizeof want, " %ld;", value);
  cr_expect_not_null(strstr(cujit_program_ptx(p, NULL), want), "%s: the PTX does not store %ld",
                     name ? name : "<source>", value);
  int from_cache = cujit_program_from_cache(p);
  cujit_program_free(p);
  return from_cache;
}

Test(memo, changed_source) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cr_expect_eq(compile_expecting(store_source(7340001), "k.cu", &o, 7340001), 0);
  cr_expect_eq(compile_expecting(store_source(7340001), "k.cu", &o, 7340001), 1);
  cr_expect_eq(compile_expecting(store_source(7340002), "k.cu", &o, 7340002), 0);
  cr_expect_eq(compile_expecting(store_source(7340001), "k.cu", &o, 7340001), 1);
}

Test(memo, changed_option) {
  const char *source = "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = VALUE; }\n";
  const char *one[] = {"VALUE=111111"}, *two[] = {"VALUE=222222"};
  const char *flag_one[] = {"-DVALUE=333333"}, *flag_two[] = {"-DVALUE=444444"};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  o.defines = one, o.define_count = 1;
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 111111), 0);
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 111111), 1);
  o.defines = two;
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 222222), 0);
  o.fast_math = 1; /* the same PTX here, another key: compiled, not handed the one above */
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 222222), 0);
  o.define_count = 0, o.fast_math = 0;
  o.extra_flags = flag_one, o.extra_flag_count = 1;
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 333333), 0);
  o.extra_flags = flag_two;
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 444444), 0);
  o.extra_flags = flag_one;
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 333333), 1);
  o.arch = "compute_90"; /* PTX only: another key */
  cr_expect_eq(compile_expecting(source, "k.cu", &o, 333333), 0);
}

/* A file the compile reads (`file` in the scratch directory; NULL text: absent) changes between
** compiles of the same source "k.cu" there: the compile after the change sees it (the size
** changes too, so no mtime granularity can hide the edit). */
static void file_changes(const char *source, const cujit_compile_options *o, const char *file,
                         const char *before, long before_value, const char *after,
                         long after_value) {
  char name[600], path[600];
  snprintf(name, sizeof name, "%s/k.cu", dir);
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (before) write_file(path, before);
  cr_expect_eq(compile_expecting(source, name, o, before_value), 0);
  cr_expect_eq(compile_expecting(source, name, o, before_value), 1);
  write_file(path, after);
  cr_expect_eq(compile_expecting(source, name, o, after_value), 0);
}

Test(memo, included_header_changes) {
  const char *source = "#include \"value.h\"\n"
                       "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = VALUE; }\n";
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  file_changes(source, &o, "value.h", "#define VALUE 555555\n", 555555, "#define VALUE 6666666\n",
               6666666);
}

/* A file the source never names: read through --pre-include. */
Test(memo, pre_included_file_changes) {
  char flag[600];
  snprintf(flag, sizeof flag, "--pre-include=%s/pre.h", dir);
  const char *flags[] = {flag};
  const char *source = "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = VALUE; }\n";
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  o.extra_flags = flags, o.extra_flag_count = 1;
  file_changes(source, &o, "pre.h", "#define VALUE 777777\n", 777777, "#define VALUE 8888888\n",
               8888888);
}

/* A file probed absent by __has_include appears between two compiles. */
Test(memo, probed_file_appears) {
  const char *source = "#if __has_include(\"maybe.h\")\n#include \"maybe.h\"\n#else\n"
                       "#define VALUE 121212\n#endif\n"
                       "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = VALUE; }\n";
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  file_changes(source, &o, "maybe.h", NULL, 121212, "#define VALUE 343434\n", 343434);
}

/* Many programs built, then built again in the other order: each is its own. */
Test(memo, many_distinct_sources) {
  enum { N = 48 };
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  for (long i = 0; i < N; i++)
    cr_expect_eq(compile_expecting(store_source(9100000 + i), "k.cu", &o, 9100000 + i), 0);
  for (long i = N - 1; i >= 0; i--)
    cr_expect_eq(compile_expecting(store_source(9100000 + i), "k.cu", &o, 9100000 + i), 1);
}

/* Kernels defined from a signature and a body: another body, another preamble, another kernel. */
Test(memo, defined_kernels) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  struct {
    const char *body, *preamble;
    long value;
  } cases[] = {{"y[threadIdx.x] = 515151;", NULL, 515151},
               {"y[threadIdx.x] = 525252;", NULL, 525252},
               {"y[threadIdx.x] = V;", "#define V 535353", 535353},
               {"y[threadIdx.x] = V;", "#define V 545454", 545454}};
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      cujit_kernel *k;
      cr_assert_eq(
          cujit_kernel_define(engine, "store(int *y)", cases[i].body, cases[i].preamble, &o, &k),
          CUJIT_OK, "%s", cujit_errmsg(engine));
      const cujit_program *p = cujit_kernel_program(k);
      char want[32];
      snprintf(want, sizeof want, " %ld;", cases[i].value);
      cr_expect_not_null(strstr(cujit_program_ptx(p, NULL), want), "round %d: not %ld", round,
                         cases[i].value);
      cr_expect_eq(cujit_program_from_cache(p), round);
      cujit_kernel_free(k);
    }
}

/* Compiling again counts as the memory hit it stands for; after cujit_cache_clear it compiles. */
Test(memo, cache_clear_and_stats) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cr_expect_eq(compile_expecting(store_source(565656), "k.cu", &o, 565656), 0);
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(engine, &before), CUJIT_OK);
  cr_expect_eq(compile_expecting(store_source(565656), "k.cu", &o, 565656), 1);
  cr_expect_eq(compile_expecting(store_source(565656), "k.cu", &o, 565656), 1);
  cr_assert_eq(cujit_cache_stats_get(engine, &after), CUJIT_OK);
  cr_expect_eq(after.memory_hits, before.memory_hits + 2);
  cr_assert_eq(cujit_cache_clear(engine), CUJIT_OK);
  cr_expect_eq(compile_expecting(store_source(565656), "k.cu", &o, 565656), 0);
  cr_expect_eq(compile_expecting(store_source(565656), "k.cu", &o, 565656), 1);
}

/* The CPU device's key holds the C++ compiler's identity, which CUJIT_CPU_CHECK changes. */
static int compile_cpu_named(const char *source, const char *name) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "cpu";
  cujit_program *p;
  cujit_status st = cujit_program_compile(engine, source, name, &o, &p);
  if (st != CUJIT_OK) cr_skip_test("no C++ compiler for the CPU device: %s", cujit_errmsg(engine));
  int from_cache = cujit_program_from_cache(p);
  cujit_program_free(p);
  return from_cache;
}

static int compile_cpu(const char *source) {
  return compile_cpu_named(source, "k.cu");
}

Test(memo, cpu_compiler_checks_change) {
  unsetenv("CUJIT_CPU_CHECK");
  cr_expect_eq(compile_cpu(store_source(575757)), 0);
  cr_expect_eq(compile_cpu(store_source(575757)), 1);
  setenv("CUJIT_CPU_CHECK", "1", 1);
  cr_expect_eq(compile_cpu(store_source(575757)), 0);
  unsetenv("CUJIT_CPU_CHECK");
  cr_expect_eq(compile_cpu(store_source(575757)), 1);
}

/* The same with a header the source includes: the key is then made from the files read (the
** full key), and the compiler's identity must be in that one too, or CUJIT_CPU_CHECK=1 would load
** the object built without AddressSanitizer. */
Test(memo, cpu_compiler_checks_change_with_an_included_header) {
  char name[600], path[600];
  snprintf(name, sizeof name, "%s/k.cu", dir);
  snprintf(path, sizeof path, "%s/cpu_value.h", dir);
  write_file(path, "#define VALUE 585858\n");
  const char *source = "#include \"cpu_value.h\"\n"
                       "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = VALUE; }\n";
  unsetenv("CUJIT_CPU_CHECK");
  cr_expect_eq(compile_cpu_named(source, name), 0);
  cr_expect_eq(compile_cpu_named(source, name), 1);
  setenv("CUJIT_CPU_CHECK", "1", 1);
  cr_expect_eq(compile_cpu_named(source, name), 0, "checks on: another compiler identity");
  unsetenv("CUJIT_CPU_CHECK");
  cr_expect_eq(compile_cpu_named(source, name), 1);
}
