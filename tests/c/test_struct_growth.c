/*
** test_struct_growth.c -- the structs that grow (cujit.h's introduction): cujit reads and writes
** only the `size` bytes a program's layout has. Each struct is placed so that its last byte is the
** last of a readable page (the next one is PROT_NONE: a read or write past it is a crash), or is
** followed by guard bytes that must come back as they were. An older layout of
** cujit_compile_options (the first one, before `signatures`) is declared here as an older program
** had it; a newer program's larger layout is the struct with bytes after it. Launches and
** reductions are checked against host references, on GPU 0 or else the CPU device.
*/
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/structs.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(structs, .init = cj_fixture_open, .fini = cj_fixture_close);

#define GUARD 64      /* bytes of a newer layout past this library's */
#define PATTERN 0xa5u /* what the guard bytes and untouched structs hold */

/* `bytes` of zeros that end where a readable page ends: the next page is PROT_NONE. */
static void *at_page_end(size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  cr_assert_leq(bytes, page);
  unsigned char *m =
      mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  cr_assert_eq(mprotect(m + page, page, PROT_NONE), 0);
  return m + page - bytes;
}

static void set_size(void *s, size_t size) {
  memcpy(s, &size, sizeof size); /* each struct's first field, whatever its name */
}

static size_t size_in(const void *s) {
  size_t size;
  memcpy(&size, s, sizeof size);
  return size;
}

static int all_pattern(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != PATTERN) return 0;
  return 1;
}

static void expect_message(const char *fn, const char *type, const char *macro) {
  const char *m = cujit_errmsg(engine);
  cr_expect(strstr(m, fn) && strstr(m, type) && strstr(m, macro),
            "the message names the call, the struct and its macro: %s", m);
}

/* --- structs cujit fills ---------------------------------------------------------------------- */

typedef cujit_status (*fill_fn)(void *ctx, void *out);

/* One struct that cujit fills, of today's layout `today` bytes, through `fill`: exactly its
** bytes at the end of a page, a newer layout's guard bytes left alone, and bad sizes refused
** with the struct untouched. The first fill is the reference the others must equal. */
static void check_fill(const char *fn, const char *type, const char *macro, size_t today,
                       fill_fn fill, void *ctx, void *reference) {
  memset(reference, 0, today);
  set_size(reference, today);
  cr_assert_eq(fill(ctx, reference), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect_eq(size_in(reference), today, "size says the bytes filled");

  unsigned char *exact = at_page_end(today); /* a write past it would crash */
  set_size(exact, today);
  cr_assert_eq(fill(ctx, exact), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect_eq(memcmp(exact, reference, today), 0, "%s at a page's end: filled as any other", type);

  _Alignas(16) unsigned char newer[4096]; /* aligned as any struct */
  memset(newer, 0, today);
  memset(newer + today, PATTERN, GUARD);
  set_size(newer, today + GUARD); /* a newer program on this library */
  cr_assert_eq(fill(ctx, newer), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect(all_pattern(newer + today, GUARD), "%s: the bytes this library does not know are left",
            type);
  cr_expect_eq(size_in(newer), today, "%s: size says how much was filled", type);
  cr_expect_eq(memcmp(newer + sizeof(size_t), (unsigned char *)reference + sizeof(size_t),
                      today - sizeof(size_t)),
               0, "%s: the fields it knows are filled", type);

  /* The largest layout a later library may have is a layout: filled as any newer one. */
  static _Alignas(16) unsigned char largest[CJ_STRUCT_SIZE_MAX];
  memset(largest, PATTERN, sizeof largest);
  set_size(largest, sizeof largest);
  cr_assert_eq(fill(ctx, largest), CUJIT_OK, "%s of size %zu: %s", type, sizeof largest,
               cujit_errmsg(engine));
  cr_expect_eq(size_in(largest), today, "%s of the largest size: size says how much was filled",
               type);
  cr_expect(all_pattern(largest + today, sizeof largest - today),
            "%s of the largest size: the bytes this library does not know are left", type);

  cr_expect_eq(fill(ctx, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "%s: NULL is refused", type);
  const size_t bad[] = {0, 1, sizeof(size_t), CJ_STRUCT_SIZE_MAX + 1, (size_t)-1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    unsigned char *s = at_page_end(today);
    memset(s, PATTERN, today);
    set_size(s, bad[i]);
    cr_expect_eq(fill(ctx, s), CUJIT_ERROR_INVALID_ARGUMENT, "%s: size %zu is refused", type,
                 bad[i]);
    expect_message(fn, type, macro);
    cr_expect_eq(size_in(s), bad[i]);
    cr_expect(all_pattern(s + sizeof(size_t), today - sizeof(size_t)),
              "%s: a refused struct is left as it was", type);
  }
}

static cujit_status fill_device_info(void *dev, void *out) {
  return cujit_device_info_get(dev, out);
}
static cujit_status fill_cache_stats(void *e, void *out) {
  return cujit_cache_stats_get(e, out);
}
static cujit_status fill_param(void *k, void *out) {
  return cujit_kernel_param(k, 1, out);
}
static cujit_status fill_attributes(void *k, void *out) {
  return cujit_kernel_attributes_get(k, out);
}
static cujit_status fill_sum(void *b, void *out) {
  return cujit_reduce(b, CUJIT_REDUCE_SUM, cujit_buffer_size(b) / 4, out, NULL);
}

static const char *scale_signature = "scale(const float *x, float *y, int n)";
static const char *scale_body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] = SCALE * x[i] + OFFSET;\n";

Test(structs, filled_structs_keep_to_the_callers_size) {
  CJ_NEED_DEVICE(engine);
  cujit_device *dev;
  cr_assert_eq(cujit_current_device(engine, &dev), CUJIT_OK);
  cujit_device_info info;
  check_fill("cujit_device_info_get", "cujit_device_info", "CUJIT_DEVICE_INFO_INIT", sizeof info,
             fill_device_info, dev, &info);
  cr_expect_gt(info.max_threads_per_block, 0);
  cr_expect_eq(info.ordinal, cujit_device_ordinal(dev));

  const char *defines[] = {"SCALE=3", "OFFSET=0.5f"};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.defines = defines, o.define_count = 2;
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, scale_signature, scale_body, NULL, &o, &k), CUJIT_OK,
               "%s", cujit_errmsg(engine));
  cujit_param_info param;
  check_fill("cujit_kernel_param", "cujit_param_info", "CUJIT_PARAM_INFO_INIT", sizeof param,
             fill_param, k, &param);
  cr_expect_str_eq(param.name, "y");
  cr_expect_eq(param.kind, CUJIT_PARAM_POINTER);
  cr_expect_eq(param.dtype, CUJIT_F32);
  cr_expect_eq(param.offset, 8);
  cujit_kernel_attributes attrs;
  check_fill("cujit_kernel_attributes_get", "cujit_kernel_attributes",
             "CUJIT_KERNEL_ATTRIBUTES_INIT", sizeof attrs, fill_attributes, k, &attrs);
  cr_expect_gt(attrs.max_threads_per_block, 0);

  cujit_cache_stats stats;
  check_fill("cujit_cache_stats_get", "cujit_cache_stats", "CUJIT_CACHE_STATS_INIT", sizeof stats,
             fill_cache_stats, engine, &stats);
  cr_expect_geq(stats.misses + stats.memory_hits + stats.disk_hits, 1, "the define was counted");

  enum { N = 4099 };
  static int32_t v[N];
  int64_t want = 0;
  for (int i = 0; i < N; i++) v[i] = (int32_t)(cj_test_rand64() % 2000001) - 1000000, want += v[i];
  cujit_buffer *b = cj_test_upload(v, sizeof v, CUJIT_I32);
  cujit_scalar sum;
  check_fill("cujit_reduce", "cujit_scalar", "CUJIT_SCALAR_INIT", sizeof sum, fill_sum, b, &sum);
  cr_expect_eq(sum.dtype, CUJIT_I64);
  cr_expect_eq(sum.v.i, want, "the sum of %d values: %lld, host %lld", N, (long long)sum.v.i,
               (long long)want);
  cujit_buffer_free(b);
  cujit_kernel_free(k);
}

/* --- structs cujit reads ---------------------------------------------------------------------- */

/* cujit_compile_options as the first header with a size had it (commit 3d2aa00): no signatures
** nor name_expressions. */
typedef struct older_compile_options {
  size_t size;
  const char *arch;
  int fast_math, line_info, debug;
  const char *const *defines;
  size_t define_count;
  const char *const *include_dirs;
  size_t include_dir_count;
  const char *const *extra_flags;
  size_t extra_flag_count;
  const char *std;
} older_compile_options;

_Static_assert(sizeof(older_compile_options) == offsetof(cujit_compile_options, signatures),
               "the older layout is today's up to `std`");
_Static_assert(sizeof(older_compile_options) == CJ_COMPILE_OPTIONS_V1,
               "the older layout is the first one cujit accepts");

/* y = 3x + 0.5 for n values, launched with `config`, checked against the host. */
static void run_scale(cujit_kernel *k, const cujit_launch_config *config, int n) {
  float x[1024], y[1024];
  for (int i = 0; i < n; i++) x[i] = (float)(cj_test_rand64() % 20001) / 100.0f - 100.0f;
  cujit_buffer *bx = cj_test_upload(x, sizeof x, CUJIT_F32),
               *by = cj_test_upload(NULL, sizeof y, CUJIT_F32);
  cujit_arg args[] = {CUJIT_ARG_BUF(bx), CUJIT_ARG_BUF(by), CUJIT_ARG_I(n)};
  cr_assert_eq(cujit_launch(k, config, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(y, by, sizeof y);
  for (int i = 0; i < n; i++)
    cr_assert_float_eq(y[i], 3.0f * x[i] + 0.5f, 1e-4f, "y[%d] = %g for x = %g", i, y[i], x[i]);
  cujit_buffer_free(bx);
  cujit_buffer_free(by);
}

Test(structs, an_older_programs_compile_options_are_read_up_to_their_end) {
  CJ_NEED_DEVICE(engine);
  const char *defines[] = {"SCALE=3", "OFFSET=0.5f"};
  older_compile_options *old = at_page_end(sizeof *old); /* reading past it would crash */
  old->size = sizeof *old;
  old->defines = defines, old->define_count = 2;
  const cujit_compile_options *as_given = (const cujit_compile_options *)(void *)old;

  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, scale_signature, scale_body, NULL, as_given, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 4, c.block[0] = 256;
  run_scale(k, &c, 1000);
  cujit_kernel_free(k);

  cr_assert_eq(
      cujit_elementwise_define(engine, "T x -> T y", "y = SCALE * x + OFFSET", "ew", as_given, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);

  old->arch = "sm_90"; /* compile only: NVRTC, no GPU needed */
  cujit_program *p;
  cr_assert_eq(
      cujit_program_compile(engine,
                            "extern \"C\" __global__ void a(float *x) { x[0] = SCALE; }\n"
                            "extern \"C\" __global__ void b(float *x) { x[0] = OFFSET; }\n",
                            "older.cu", as_given, &p),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect_eq(cujit_program_kernel_count(p), 2,
               "the kernels read from the source (no signatures)");
  cujit_program_free(p);
}

Test(structs, a_newer_programs_compile_options_must_leave_what_is_unknown_unset) {
  struct {
    cujit_compile_options today;
    unsigned char later[GUARD];
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.today.size = sizeof newer;
  newer.today.arch = "sm_90";
  const char *src = "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n";
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, "newer.cu", &newer.today, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
  newer.later[GUARD - 1] = 1; /* a setting this library does not have */
  cr_expect_eq(cujit_program_compile(engine, src, "newer.cu", &newer.today, &p),
               CUJIT_ERROR_UNSUPPORTED);
  expect_message("cujit_program_compile", "cujit_compile_options", "newer layout");
  cujit_kernel *k;
  cr_expect_eq(cujit_kernel_define(engine, "k(int *x)", "x[0] = 1;", NULL, &newer.today, &k),
               CUJIT_ERROR_UNSUPPORTED);
}

Test(structs, compile_options_without_a_size_are_refused) {
  const size_t bad[] = {0, sizeof(size_t), CJ_COMPILE_OPTIONS_V1 - 1, CJ_STRUCT_SIZE_MAX + 1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
    o.size = bad[i], o.arch = "sm_90";
    cujit_program *p;
    cujit_kernel *k;
    cr_expect_eq(cujit_program_compile(engine, "__global__ void k() {}", NULL, &o, &p),
                 CUJIT_ERROR_INVALID_ARGUMENT, "size %zu", bad[i]);
    expect_message("cujit_program_compile", "cujit_compile_options", "CUJIT_COMPILE_OPTIONS_INIT");
    cr_expect_eq(cujit_program_compile_file(engine, "/nonexistent.cu", &o, &p),
                 CUJIT_ERROR_INVALID_ARGUMENT, "checked before the file is read");
    expect_message("cujit_program_compile_file", "cujit_compile_options",
                   "CUJIT_COMPILE_OPTIONS_INIT");
    cr_expect_eq(cujit_kernel_define(engine, "k(int *x)", "x[0] = 1;", NULL, &o, &k),
                 CUJIT_ERROR_INVALID_ARGUMENT);
    expect_message("cujit_kernel_define", "cujit_compile_options", "CUJIT_COMPILE_OPTIONS_INIT");
    cr_expect_eq(cujit_elementwise_define(engine, "T x -> T y", "y = x", NULL, &o, &k),
                 CUJIT_ERROR_INVALID_ARGUMENT);
    expect_message("cujit_elementwise_define", "cujit_compile_options",
                   "CUJIT_COMPILE_OPTIONS_INIT");
  }
}

/* The two refusals' whole messages: a size of 0 (a struct never initialised with its macro, or
** zeroed) says how to declare it; any other size that is no layout says which sizes are. */
Test(structs, a_size_of_0_and_a_size_of_no_layout_are_told_apart) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  cujit_program *p;
  char want[512];
  o.size = 0;
  cr_expect_eq(cujit_program_compile(engine, "__global__ void k() {}", NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_str_eq(cujit_errmsg(engine),
                   "cujit_program_compile: the cujit_compile_options's size field is 0; declare it "
                   "with CUJIT_COMPILE_OPTIONS_INIT (cujit_compile_options x = "
                   "CUJIT_COMPILE_OPTIONS_INIT;), or set .size = sizeof(cujit_compile_options), so "
                   "that cujit knows which layout the program has");
  o.size = 3;
  cr_expect_eq(cujit_program_compile(engine, "__global__ void k() {}", NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  snprintf(want, sizeof want,
           "cujit_program_compile: the cujit_compile_options's size field is 3, which is no layout "
           "of cujit_compile_options (from %zu to %d bytes; this library's is %zu): an "
           "uninitialised struct? declare it with CUJIT_COMPILE_OPTIONS_INIT",
           (size_t)CJ_COMPILE_OPTIONS_V1, CJ_STRUCT_SIZE_MAX, sizeof(cujit_compile_options));
  cr_expect_str_eq(cujit_errmsg(engine), want);
}

Test(structs, launch_configs_keep_to_the_callers_size) {
  CJ_NEED_DEVICE(engine);
  const char *defines[] = {"SCALE=3", "OFFSET=0.5f"};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.defines = defines, o.define_count = 2;
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, scale_signature, scale_body, NULL, &o, &k), CUJIT_OK,
               "%s", cujit_errmsg(engine));

  cujit_launch_config *exact = at_page_end(sizeof *exact); /* reading past it would crash */
  *exact = (cujit_launch_config)CUJIT_LAUNCH_CONFIG_INIT;
  exact->grid[0] = 8, exact->block[0] = 128;
  run_scale(k, exact, 1024);

  struct {
    cujit_launch_config today;
    unsigned char later[GUARD];
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.today.size = sizeof newer, newer.today.grid[0] = 3, newer.today.block[0] = 64;
  run_scale(k, &newer.today, 150); /* the newer fields unset: a launch as any other */

  float before[4] = {-1, -2, -3, -4}, after[4];
  cujit_buffer *x = cj_test_upload(before, sizeof before, CUJIT_F32);
  cujit_buffer *y = cj_test_upload(before, sizeof before, CUJIT_F32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_I(4)};
  newer.later[0] = 7; /* a setting this library does not have: refused, nothing launched */
  cr_expect_eq(cujit_launch(k, &newer.today, args, 3), CUJIT_ERROR_UNSUPPORTED);
  expect_message("cujit_launch", "cujit_launch_config", "newer layout");

  const size_t bad[] = {0, sizeof(size_t), CJ_LAUNCH_CONFIG_V1 - 1, CJ_STRUCT_SIZE_MAX + 1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
    c.size = bad[i], c.grid[0] = 1, c.block[0] = 4;
    cr_expect_eq(cujit_launch(k, &c, args, 3), CUJIT_ERROR_INVALID_ARGUMENT, "size %zu", bad[i]);
    expect_message("cujit_launch", "cujit_launch_config", "CUJIT_LAUNCH_CONFIG_INIT");
    cr_expect_eq(cujit_launch_cooperative(k, &c, args, 3), CUJIT_ERROR_INVALID_ARGUMENT);
    expect_message("cujit_launch_cooperative", "cujit_launch_config", "CUJIT_LAUNCH_CONFIG_INIT");
  }
  cj_test_download(after, y, sizeof after);
  cr_expect_eq(memcmp(after, before, sizeof after), 0, "no refused launch ran");
  cujit_buffer_free(x);
  cujit_buffer_free(y);
  cujit_kernel_free(k);
}

/* --- the next growth, as a later library will see today's programs -----------------------------
 */

/* Today's layouts are the older ones of the next header: a library whose structs have one more
** field fills and reads only today's bytes (the helpers every call above goes through). */
Test(structs, a_later_library_keeps_to_todays_layouts) {
  struct {
    cujit_kernel_attributes today;
    int added_later;
  } ours;
  memset(&ours, 0, sizeof ours);
  ours.today.registers = 37, ours.today.max_threads_per_block = 640, ours.added_later = 99;
  cujit_kernel_attributes *theirs = at_page_end(sizeof *theirs); /* a write past it would crash */
  *theirs = (cujit_kernel_attributes)CUJIT_KERNEL_ATTRIBUTES_INIT;
  size_t room;
  cr_assert_eq(cj_struct_room(engine, "later", "cujit_kernel_attributes", theirs, sizeof ours,
                              CJ_KERNEL_ATTRIBUTES_V1, &room),
               CUJIT_OK);
  cr_expect_eq(room, sizeof *theirs);
  cj_struct_out(theirs, room, &ours);
  cr_expect_eq(theirs->size, sizeof *theirs);
  cr_expect_eq(theirs->registers, 37);
  cr_expect_eq(theirs->max_threads_per_block, 640);

  struct {
    cujit_compile_options today;
    const char *added_later;
  } mine;
  memset(&mine, PATTERN, sizeof mine);
  cujit_compile_options *given = at_page_end(sizeof *given); /* a read past it would crash */
  *given = (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  given->arch = "sm_90", given->fast_math = 1;
  cr_assert_eq(cj_struct_in(engine, "later", "cujit_compile_options", given, &mine, sizeof mine,
                            CJ_COMPILE_OPTIONS_V1),
               CUJIT_OK);
  cr_expect_eq(mine.today.size, sizeof mine, "the copy is of the library's layout");
  cr_expect_str_eq(mine.today.arch, "sm_90");
  cr_expect_eq(mine.today.fast_math, 1);
  cr_expect_null(mine.added_later, "a field the program does not have takes its default");
}
