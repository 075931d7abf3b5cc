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

/* Sets the option of `row` in `o` to `value` (a switch: on when value is not NULL; a list: the
** one item, held in *one). */
static void set_value(const cj_option *row, cujit_compile_options *o, const char **one,
                      const char *value) {
  char *at = (char *)o + row->info.offset;
  if (row->info.kind == CUJIT_OPTION_SWITCH) {
    *(int *)(void *)at = value != NULL;
  } else if (row->info.kind == CUJIT_OPTION_TEXT) {
    *(const char **)(void *)at = value;
  } else {
    *one = value;
    *(const char *const **)(void *)at = one;
    *(size_t *)(void *)((char *)o + row->info.count_offset) = 1;
  }
}

/* Sets the option of `row` in `o` to its example (a switch: on). */
static void set_example(const cj_option *row, cujit_compile_options *o, const char **one) {
  set_value(row, o, one, row->info.kind == CUJIT_OPTION_SWITCH ? "on" : row->example);
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

/* Which flags ask ptxas for its report (then NVRTC's and nvJitLink's own caches are bypassed, since
** a binary from them comes without it): -v or --verbose as the value of either spelling, and
** nothing that merely looks like it (NVRTC hands ptxas one option per flag: ptxas refuses "-O3,-v"
** and "-v -O3"). */
Test(options, ptxas_report_asked_by_either_spelling) {
  static const struct {
    const char *flag;
    int verbose;
  } cases[] = {
      {"--ptxas-options=-v", 1},
      {"-Xptxas=-v", 1},
      {"--ptxas-options=--verbose", 1},
      {"-Xptxas=--verbose", 1},
      {"--ptxas-options=-O3", 0},
      {"-Xptxas=-vv", 0},
      {"-Xptxas=--verbosee", 0},
      {"-Xptxas=-v ", 0},
      {"-v", 0},
      {"--verbose", 0},
      {"--ptxas-options=", 0},
      {"-Xptxas-v", 0},
      {"-DV=--ptxas-options=-v", 0},
      {"--ptxas-options-v", 0},
      {"-Xptxas=-O3,-v", 0},
      {"--ptxas-options=-warn-spills", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *one[] = {cases[i].flag};
    cr_expect_eq(cj_options_ptxas_verbose(one, 1), cases[i].verbose, "%s", cases[i].flag);
    const char *among[] = {"-Xptxas=-O3", cases[i].flag, "--use_fast_math"};
    cr_expect_eq(cj_options_ptxas_verbose(among, 3), cases[i].verbose, "%s among others",
                 cases[i].flag);
    cr_expect_eq(cj_options_ptxas_verbose(among, 1), 0, "past the count: %s", cases[i].flag);
  }
  cr_expect_eq(cj_options_ptxas_verbose(NULL, 0), 0);
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

/* Compiles `source` with `o` on `e`: whether a cache handed it, and the PTX (the caller frees). */
static int compiled(cujit_engine *e, const char *source, const cujit_compile_options *o,
                    const char *what, char **ptx) {
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, source, "k.cu", o, &p), CUJIT_OK, "%s: %s", what,
               cujit_errmsg(e));
  int hit = cujit_program_from_cache(p);
  *ptx = strdup(cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  return hit;
}

/* Compiles `source` with `o`: whether it came from a cache (the memo or the byte cache). */
static int from_cache(const char *source, const cujit_compile_options *o, const char *what) {
  char *ptx;
  int hit = compiled(engine, source, o, what, &ptx);
  free(ptx);
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

/* --- the value, not only the presence (issue 28) ----------------------------------------------
** The tests above set each option or leave it unset, so a key that hashed a list's count but not
** its items, or a text option's presence but not its text, passed them. Here each option goes
** from its row's example to its row's other value (as many items: only the text differs; a
** switch: on to off): every key must follow, and the same value in other memory must give the
** same key. */

/* The memo key of `source` compiled with `o` (arch as cj_compile_arch resolves it). */
static cj_cache_key memo_of(const char *source, const cujit_compile_options *o, const char *what) {
  char arch[32];
  cr_assert_eq(cj_compile_arch(engine, o, "", arch, sizeof arch), CUJIT_OK, "%s: %s", what,
               cujit_errmsg(engine));
  cj_cache_key key;
  cr_assert(cj_compile_memo_key(engine, source, "k.cu", o, arch, &key), "%s: %s", what,
            cujit_errmsg(engine));
  return key;
}

static int same_key(const cj_cache_key *a, const cj_cache_key *b) {
  return memcmp(a->bytes, b->bytes, sizeof a->bytes) == 0;
}

/* The row's example and other value, each as the test sets it (a switch: on, off). */
static const char *example_of(const cj_option *row) {
  return row->info.kind == CUJIT_OPTION_SWITCH ? "on" : row->example;
}
static const char *other_of(const cj_option *row) {
  return row->info.kind == CUJIT_OPTION_SWITCH ? NULL : row->other;
}

Test(options, every_row_has_an_other_value_unlike_its_example) {
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind == CUJIT_OPTION_SWITCH) continue;
    cr_expect(row->other && row->example && strcmp(row->other, row->example) != 0 &&
                  (!row->fallback || strcmp(row->other, row->fallback) != 0),
              "%s: its row's other value '%s' must be valid and differ from the example '%s' "
              "and the default",
              row->info.field, row->other ? row->other : "(NULL)", row->example);
  }
}

Test(options, the_memo_key_follows_every_option_s_value) {
  const char *source = "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = 7; }\n";
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    const char *field = row->info.field, *one = NULL, *two = NULL, *three = NULL;
    char
        copy[256]; /* the example in memory of the test's own: the key hashes text, not addresses */
    snprintf(copy, sizeof copy, "%s", example_of(row));
    cujit_compile_options a = baseline(), again = baseline(), b = baseline();
    set_value(row, &a, &one, example_of(row));
    set_value(row, &again, &two, copy);
    set_value(row, &b, &three, other_of(row));
    cj_cache_key ka = memo_of(source, &a, field), kagain = memo_of(source, &again, field),
                 kb = memo_of(source, &b, field);
    cr_expect(same_key(&ka, &kagain), "%s: the same value in other memory changes the memo key",
              field);
    cr_expect(!same_key(&ka, &kb), "%s: '%s' and '%s' give one memo key", field, example_of(row),
              other_of(row) ? other_of(row) : "off");
    if (row->info.kind != CUJIT_OPTION_LIST) continue;
    /* Two items, in either order: for -D and -I the order decides what is compiled. */
    const char *forth[] = {row->example, row->other}, *back[] = {row->other, row->example};
    cujit_compile_options f = baseline(), k = baseline();
    *(const char *const **)(void *)((char *)&f + row->info.offset) = forth;
    *(const char *const **)(void *)((char *)&k + row->info.offset) = back;
    *(size_t *)(void *)((char *)&f + row->info.count_offset) = 2;
    *(size_t *)(void *)((char *)&k + row->info.count_offset) = 2;
    cj_cache_key kf = memo_of(source, &f, field), kk = memo_of(source, &k, field);
    cr_expect(!same_key(&kf, &kk), "%s: its two items in either order give one memo key", field);
    cr_expect(!same_key(&kf, &ka) && !same_key(&kf, &kb), "%s: two items and one give one memo key",
              field);
  }
}

static uint64_t disk_entries(cujit_engine *e) {
  cujit_cache_stats st = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(e, &st), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert(st.disk_enabled, "the disk cache is off");
  return st.entries;
}

/* A source whose PTX shows the values of -D and -X, and the language standard. */
static const char *valued =
    "#ifndef CJ_EXAMPLE\n#define CJ_EXAMPLE 0\n#endif\n"
    "#ifndef CJ_EXAMPLE_FLAG\n#define CJ_EXAMPLE_FLAG 0\n#endif\n"
    "template <typename T> __global__ void tstore(T *y) { y[threadIdx.x] = T(5); }\n"
    "extern \"C\" __global__ void store(int *y) {\n"
    "  y[threadIdx.x] = 1000003 * CJ_EXAMPLE + 10007 * CJ_EXAMPLE_FLAG + (int)(__cplusplus % 97);\n"
    "}\n";

/* Every option that reaches the compiled bytes (NVRTC's line, the target, the linked files) goes
** from its example to its other value: the second compile is no hit of either cache and stores an
** entry of its own; a second engine on the same directory (no memo) gets each value's entry back
** from the disk, the bytes the first engine compiled for that value, and stores nothing. */
Test(options, the_cache_key_follows_every_option_s_value, .timeout = 600) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  char *ptx[64][2] = {{NULL}}, *base_ptx, *got;
  cr_assert_lt(cj_option_count, 64);
  cujit_compile_options base = baseline();
  cr_expect_eq(compiled(engine, valued, &base, "the baseline", &base_ptx), 0);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->key != CJ_KEY_LINE && row->key != CJ_KEY_TARGET && row->key != CJ_KEY_LINK) continue;
    const char *field = row->info.field, *one = NULL, *two = NULL;
    cujit_compile_options a = baseline(), b = baseline();
    set_value(row, &a, &one, example_of(row));
    set_value(row, &b, &two, other_of(row));
    uint64_t before = disk_entries(engine);
    cr_expect_eq(compiled(engine, valued, &a, field, &ptx[r][0]), 0, "%s: the example was a hit",
                 field);
    uint64_t after_a = disk_entries(engine);
    cr_expect_gt(after_a, before, "%s: the example's compile stored nothing", field);
    if (!other_of(row)) { /* a switch: off is the baseline, compiled above */
      ptx[r][1] = strdup(base_ptx);
      continue;
    }
    cr_expect_eq(compiled(engine, valued, &b, field, &ptx[r][1]), 0,
                 "%s = %s was handed the program compiled with %s", field,
                 other_of(row) ? other_of(row) : "off", example_of(row));
    cr_expect_gt(disk_entries(engine), after_a, "%s: the other value's compile stored nothing",
                 field);
  }
  cujit_engine *second;
  cr_assert_eq(cujit_open(&second), CUJIT_OK);
  uint64_t stored = disk_entries(second);
  cr_expect_eq(compiled(second, valued, &base, "the baseline", &got), 1);
  cr_expect_str_eq(got, base_ptx);
  free(got), free(base_ptx);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (!ptx[r][0]) continue;
    const char *field = row->info.field, *values[2] = {example_of(row), other_of(row)};
    for (int i = 0; i < 2; i++) {
      const char *one = NULL;
      cujit_compile_options o = baseline();
      set_value(row, &o, &one, values[i]);
      cr_expect_eq(compiled(second, valued, &o, field, &got), 1,
                   "%s = %s: a second engine missed the entry the first stored", field,
                   values[i] ? values[i] : "off");
      cr_expect_str_eq(got, ptx[r][i], "%s = %s: the second engine got other bytes", field,
                       values[i] ? values[i] : "off");
      free(got), free(ptx[r][i]);
    }
  }
  cr_expect_eq(disk_entries(second), stored, "hits stored entries");
  cujit_close(second);
}

/* The options of the unit (signatures, name expressions) and the launch's checks (nonnull) do not
** all reach the bytes, but the program must show the value it was built with, never the one a
** compile before it had: each goes from example to other in one engine. */
Test(options, a_program_shows_the_unit_options_it_was_given) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  int seen = 0;
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->key != CJ_KEY_UNIT) continue;
    const char *field = row->info.field, *values[2] = {row->example, row->other};
    for (int i = 0; i < 2; i++) {
      const char *one = NULL;
      cujit_compile_options o = baseline();
      set_value(row, &o, &one, values[i]);
      cujit_program *p;
      cujit_kernel *k;
      cr_assert_eq(cujit_program_compile(engine, valued, "k.cu", &o, &p), CUJIT_OK, "%s: %s", field,
                   cujit_errmsg(engine));
      if (!strcmp(field, "name_expressions")) { /* a kernel of the name; not the other's */
        cr_expect_eq(cujit_program_kernel(p, values[i], &k), CUJIT_OK, "%s = %s: %s", field,
                     values[i], cujit_errmsg(engine));
        cujit_kernel_free(k);
        cr_expect_neq(cujit_program_kernel(p, values[1 - i], &k), CUJIT_OK,
                      "%s = %s: the program has the other value's kernel %s", field, values[i],
                      values[1 - i]);
        seen++;
      } else if (!strcmp(field, "signatures")) { /* the parameter named as the signature says */
        cr_assert_eq(cujit_program_kernel(p, "store", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
        cujit_param_info info = CUJIT_PARAM_INFO_INIT;
        cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK, "%s", cujit_errmsg(engine));
        const char *name = strrchr(values[i], '*') + 1;
        char want[64];
        snprintf(want, sizeof want, "%.*s", (int)strcspn(name, ")"), name);
        cr_expect_str_eq(info.name, want, "%s = %s: the parameter is named '%s'", field, values[i],
                         info.name);
        cujit_kernel_free(k);
        seen++;
      }
      cujit_program_free(p);
    }
  }
  cr_expect_eq(seen, 4, "a unit option this test does not know: say what its program shows");
}
