/*
** test_options.c -- the one table of compile options (compile/options.h) and every consumer of it.
** The table covers every member cujit.h gives cujit_compile_options (read from the header, so a
** member dropped into padding is caught too); setting any one option to its row's example changes
** the memo key, NVRTC's option list (which both cache keys hash) and g++'s line exactly where the
** row says it does; the compile with it is not handed the program compiled without it (both keys
** missed); and `cujit compile` takes its flag. NVRTC compiles for sm_90 (no GPU needed).
*/
#include <ctype.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/compile.h"
#include "compile/options.h"
#include "fixture.h"

static void setup(void) {
  unsetenv("CUJIT_CACHE");
  cj_fixture_open();
  cj_scratch_example_link(cj_scratch); /* the link option's example names it, relative */
  cr_assert_eq(chdir(cj_scratch), 0);
}

TestSuite(options, .init = setup, .fini = cj_fixture_close, .timeout = 300);

/* Sets the option of `row` in `o` to its example (a switch: on). */
static void set_example(const cj_option *row, cujit_compile_options *o, const char **one) {
  char *at = (char *)o + row->info.offset;
  if (row->info.kind == CUJIT_OPTION_SWITCH) {
    *(int *)(void *)at = 1;
  } else if (row->info.kind == CUJIT_OPTION_TEXT) {
    *(const char **)(void *)at = row->example;
  } else {
    *one = row->example;
    *(const char *const **)(void *)at = one;
    *(size_t *)(void *)((char *)o + row->info.count_offset) = 1;
  }
}

static cujit_compile_options baseline(void) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  return o;
}

/* "a b c": a list joined, for comparing and for messages. */
static void joined(const cj_option_list *l, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < l->n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", l->v[i]);
}

static int has_word(const cj_option_list *l, const char *flag, const char *value) {
  char want[512];
  snprintf(want, sizeof want, "%s%s", flag, value ? value : "");
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], want) == 0) return 1;
  return 0;
}

/* The member names of cujit_compile_options as cujit.h declares them. */
static size_t header_members(char names[][64], size_t max) {
  char path[1024];
  const char *src = getenv("CUJIT_SOURCE_DIR");
  cr_assert_not_null(src, "CUJIT_SOURCE_DIR is not set (ctest sets it)");
  snprintf(path, sizeof path, "%s/include/cujit.h", src);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "cannot read %s", path);
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';
  char *start = strstr(text, "typedef struct cujit_compile_options {");
  char *end = start ? strstr(start, "} cujit_compile_options;") : NULL;
  cr_assert(start && end, "cujit.h has no 'typedef struct cujit_compile_options {...}'");
  start += strlen("typedef struct cujit_compile_options {");
  *end = '\0';
  for (char *c = strstr(start, "/*"); c; c = strstr(c, "/*")) { /* comments out */
    char *close = strstr(c + 2, "*/");
    cr_assert_not_null(close);
    memset(c, ' ', (size_t)(close + 2 - c));
  }
  size_t n = 0;
  for (char *decl = strtok(start, ";"); decl; decl = strtok(NULL, ";")) {
    char *e = decl + strlen(decl); /* the declarator's name: the last identifier */
    while (e > decl && !(isalnum((unsigned char)e[-1]) || e[-1] == '_')) e--;
    char *b = e;
    while (b > decl && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    if (b == e) continue;
    cr_assert_lt(n, max);
    snprintf(names[n++], 64, "%.*s", (int)(e - b), b);
  }
  return n;
}

/* The C name of a row's count member, found by its offset among the header's members. */
static int table_names(const char *name) {
  if (strcmp(name, "size") == 0) return 1;
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (strcmp(row->info.field, name) == 0) return 1;
    if (row->info.kind == CUJIT_OPTION_LIST) {
      size_t len = strlen(name); /* "define_count" for "defines": the list's count */
      if (len > 6 && strcmp(name + len - 6, "_count") == 0 &&
          strncmp(row->info.field, name, len - 6) == 0)
        return 1;
    }
  }
  return 0;
}

Test(options, the_table_has_every_member_of_the_struct) {
  char names[64][64];
  size_t n = header_members(names, 64);
  cr_assert_gt(n, 10, "read %zu members only", n);
  size_t rows_seen = 0;
  for (size_t i = 0; i < n; i++) {
    cr_expect(table_names(names[i]),
              "cujit_compile_options.%s has no row in the option table (CJ_COMPILE_OPTIONS in "
              "engine/core/compile/options.h): add one, so every consumer sees it",
              names[i]);
    for (size_t r = 0; r < cj_option_count; r++)
      rows_seen += !strcmp(cj_options[r].info.field, names[i]);
  }
  cr_expect_eq(rows_seen, cj_option_count, "a row of the table names no member of the struct");
  /* The public description is the table. */
  for (size_t r = 0; r < cj_option_count; r++)
    cr_expect_eq(cujit_compile_option(r), &cj_options[r].info);
  cr_expect_null(cujit_compile_option(cj_option_count));
}

/* NVRTC's list in the order it always had: the cache keys of existing programs hold. */
Test(options, nvrtc_list_keeps_its_order) {
  const char *defines[] = {"A=1", "B"}, *dirs[] = {"."}, *flags[] = {"-maxrregcount=32"};
  cujit_compile_options o = baseline();
  o.fast_math = o.line_info = o.debug = 1;
  o.std = "c++20";
  o.defines = defines, o.define_count = 2;
  o.include_dirs = dirs, o.include_dir_count = 1;
  o.extra_flags = flags, o.extra_flag_count = 1;
  cj_option_list l = {0};
  cr_assert_eq(cj_options_nvrtc(engine, &o, "sm_90", &l), CUJIT_OK, "%s", cujit_errmsg(engine));
  char got[1024];
  joined(&l, got, sizeof got);
  cr_expect_str_eq(got, "-arch=sm_90 -std=c++20 --use_fast_math -lineinfo -G -DA=1 -DB "
                        "--include-path=. -maxrregcount=32");
  cj_option_list_free(&l);
  cr_assert_eq(cj_options_nvrtc(engine, NULL, "cpu", &l), CUJIT_OK);
  joined(&l, got, sizeof got);
  cr_expect_str_eq(got, "-arch=cpu -std=c++17");
  cj_option_list_free(&l);
}

/* Each row set alone: the memo key always changes; NVRTC's list and g++'s line change when the
** row puts the option on them, holding its spelling, and stay as they were when it does not. */
Test(options, every_option_reaches_every_consumer) {
  const char *source = "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = 7; }\n";
  cujit_compile_options base = baseline();
  cj_cache_key base_memo, memo;
  cr_assert(cj_compile_memo_key(engine, source, "k.cu", &base, "sm_90", &base_memo));
  cj_option_list base_nvrtc = {0}, base_cxx = {0};
  cj_buf notes = {0};
  cr_assert_eq(cj_options_nvrtc(engine, &base, "sm_90", &base_nvrtc), CUJIT_OK);
  cj_options_cxx(&base, &base_cxx, &notes);
  char a[2048], b[2048];
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    const char *field = row->info.field, *one = NULL;
    cujit_compile_options o = base;
    set_example(row, &o, &one);
    char arch[32];
    cr_assert_eq(cj_compile_arch(engine, &o, "", arch, sizeof arch), CUJIT_OK, "%s: %s", field,
                 cujit_errmsg(engine));
    cr_assert(cj_compile_memo_key(engine, source, "k.cu", &o, arch, &memo), "%s", field);
    cr_expect_neq(memcmp(memo.bytes, base_memo.bytes, sizeof memo.bytes), 0,
                  "%s does not change the memo key", field);

    cj_option_list nvrtc = {0}, cxx = {0};
    cr_assert_eq(cj_options_nvrtc(engine, &o, arch, &nvrtc), CUJIT_OK, "%s: %s", field,
                 cujit_errmsg(engine));
    joined(&base_nvrtc, a, sizeof a), joined(&nvrtc, b, sizeof b);
    if (row->nvrtc) {
      cr_expect_str_neq(a, b, "%s does not change NVRTC's list", field);
      cr_expect(
          has_word(&nvrtc, row->nvrtc, row->info.kind == CUJIT_OPTION_SWITCH ? NULL : row->example),
          "%s: NVRTC's list '%s' lacks '%s%s'", field, b, row->nvrtc,
          row->info.kind == CUJIT_OPTION_SWITCH ? "" : row->example);
    } else {
      cr_expect_str_eq(a, b, "%s is not NVRTC's, yet changes its list", field);
    }

    cj_options_cxx(&o, &cxx, &notes);
    joined(&base_cxx, a, sizeof a), joined(&cxx, b, sizeof b);
    if (row->cxx) {
      cr_expect_str_neq(a, b, "%s does not change g++'s line", field);
      if (row->cxx != CJ_CXX_AS_NVRTC)
        cr_expect(
            has_word(&cxx, row->cxx, row->info.kind == CUJIT_OPTION_SWITCH ? NULL : row->example),
            "%s: g++'s line '%s' lacks '%s'", field, b, row->cxx);
    } else {
      cr_expect_str_eq(a, b, "%s is not g++'s, yet changes its line", field);
    }
    cj_option_list_free(&nvrtc);
    cj_option_list_free(&cxx);
  }
  cj_option_list_free(&base_nvrtc);
  cj_option_list_free(&base_cxx);
  cj_buf_free(&notes);
}

/* Compiles `source` with `o`: whether it came from a cache (the memo or the byte cache). */
static int from_cache(const char *source, const cujit_compile_options *o, const char *what) {
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, source, "k.cu", o, &p), CUJIT_OK, "%s: %s", what,
               cujit_errmsg(engine));
  int hit = cujit_program_from_cache(p);
  cujit_program_free(p);
  return hit;
}

static const char *two_kernels =
    "template <typename T> __global__ void tstore(T *y) { y[threadIdx.x] = T(5); }\n"
    "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = 7; }\n";

/* End to end: an option that reaches NVRTC's line or the target is not handed the program built
** without it, so both the memo key and the cache key followed it. One that reaches the unit
** (signatures, name expressions) changes it only when the unit differs: it compiles. */
Test(options, no_option_is_handed_the_program_built_without_it) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_compile_options base = baseline();
  cr_expect_eq(from_cache(two_kernels, &base, "the baseline"), 0);
  cr_expect_eq(from_cache(two_kernels, &base, "the baseline again"), 1);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    const char *one = NULL;
    cujit_compile_options o = base;
    set_example(row, &o, &one);
    int hit = from_cache(two_kernels, &o, row->info.field);
    if (row->key == CJ_KEY_LINE || row->key == CJ_KEY_TARGET)
      cr_expect_eq(hit, 0, "%s = %s was handed the program compiled without it", row->info.field,
                   row->example ? row->example : "on");
  }
}

/* `cujit compile` takes every option that has a flag, with its example, and compiles anew. */
Test(options, cujit_compile_takes_every_flag) {
  const char *bin = getenv("CUJIT_BINARY_DIR");
  char cli[1024], dir[1024], cmd[4096], path[1100];
  snprintf(cli, sizeof cli, "%s/cujit", bin ? bin : ".");
  if (!bin || access(cli, X_OK) != 0) cr_skip_test("no cujit command at %s", cli);
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  snprintf(dir, sizeof dir, "%s/cli", cj_scratch); /* beside the cache the command shares */
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/k.cu", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(two_kernels, f);
  fclose(f);
  cj_scratch_example_link(dir);
  const char *base = "cd '%s' && '%s' compile k.cu --ptx -o - %s%s%s%s > /dev/null 2> err.txt";
  for (size_t i = 0; i <= cj_option_count; i++) { /* the baseline first: none a flag sets */
    const cj_option *row = i ? &cj_options[i - 1] : NULL;
    if (row && !row->info.cli_flag) continue;
    int is_arch = row && row->key == CJ_KEY_TARGET;
    snprintf(cmd, sizeof cmd, base, dir, cli, is_arch ? "" : "--arch sm_90 ",
             row ? row->info.cli_flag : "", row && row->example ? " " : "",
             row && row->example ? row->example : "");
    int status = system(cmd);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char err[4096] = "";
    f = fopen(path, "r");
    if (f) err[fread(err, 1, sizeof err - 1, f)] = '\0', fclose(f);
    cr_expect_eq(status, 0, "%s: %s", cmd, err);
    cr_expect_not_null(strstr(err, ", compiled in"), "%s was handed a cached program: %s",
                       row ? row->info.cli_flag : "the baseline", err);
  }
}

/* A generic kernel keeps a deep copy of its options (kernel.c, by the table): each option set to
** its example is in the copy, in memory of its own; the unit's lists are left out. */
Test(options, a_generic_kernel_copies_every_option) {
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    const char *one = NULL, *field = row->info.field;
    cujit_compile_options o = baseline(), copy;
    set_example(row, &o, &one);
    void *storage;
    cr_assert_eq(cj_options_check_lists(engine, &o), CUJIT_OK, "%s", cujit_errmsg(engine));
    cr_assert(cj_options_copy(&o, &copy, &storage));
    if (row->info.kind == CUJIT_OPTION_SWITCH) {
      cr_expect_eq(*(int *)(void *)((char *)&copy + row->info.offset), 1, "%s", field);
    } else if (row->info.kind == CUJIT_OPTION_TEXT) {
      const char *got = cj_option_text(row, &copy);
      cr_expect(got && strcmp(got, row->example) == 0 && got != row->example, "%s", field);
    } else {
      size_t n;
      const char *const *items = cj_option_items(row, &copy, &n);
      if (row->key == CJ_KEY_UNIT || row->key == CJ_KEY_NONE)
        cr_expect(n == 0 && !items, "%s: a defined kernel's copy keeps the unit's list", field);
      else
        cr_expect(n == 1 && items && items != &one && strcmp(items[0], one) == 0 && items[0] != one,
                  "%s is not copied", field);
    }
    free(storage);
  }
}

/* End to end: the caller's strings change after the define; the specialisation sees the old. */
Test(options, a_generic_kernel_compiles_with_the_options_it_was_given) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  char define[32] = "VALUE=8181818";
  const char *defines[] = {define};
  cujit_compile_options o = baseline();
  o.defines = defines, o.define_count = 1;
  cujit_kernel *k, *s;
  cr_assert_eq(
      cujit_kernel_define(engine, "store(T *y)", "y[threadIdx.x] = (T)VALUE;", NULL, &o, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  strcpy(define, "VALUE=9292929");
  cr_assert_eq(cujit_kernel_specialize(k, (cujit_dtype[]){CUJIT_I32}, 1, &s), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  const char *ptx = cujit_program_ptx(cujit_kernel_program(s), NULL);
  cr_expect_not_null(strstr(ptx, "8181818"), "the specialisation lost the define it was given");
  cujit_kernel_free(k);
}

/* The same on the CPU device, whose key is NVRTC's list with the C++ compiler's identity: every
** option on the line gives another program, built by g++ with it. */
Test(options, no_option_is_handed_the_cpu_program_built_without_it, .timeout = 600) {
  cujit_compile_options base = CUJIT_COMPILE_OPTIONS_INIT;
  base.arch = "cpu";
  cujit_program *p;
  if (cujit_program_compile(engine, two_kernels, "k.cu", &base, &p) != CUJIT_OK)
    cr_skip_test("no C++ compiler for the CPU device: %s", cujit_errmsg(engine));
  cr_expect_eq(cujit_program_from_cache(p), 0);
  cujit_program_free(p);
  cr_expect_eq(from_cache(two_kernels, &base, "the CPU baseline again"), 1);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    const char *one = NULL;
    cujit_compile_options o = base;
    if (row->key != CJ_KEY_LINE) continue; /* the target is "cpu" here; the unit's: above */
    set_example(row, &o, &one);
    cr_expect_eq(from_cache(two_kernels, &o, row->info.field), 0,
                 "%s = %s was handed the CPU program compiled without it", row->info.field,
                 row->example ? row->example : "on");
  }
}
