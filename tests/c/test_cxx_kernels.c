/*
** test_cxx_kernels.c -- real CUDA code through the C API: C++-linkage kernels and template
** instantiations named by name_expressions (their lowered names kept in the cache entry, so a
** hit in a new engine finds them without NVRTC), the entry format with and without lowered
** names, pointers to any type, the nonnull option refusing a NULL buffer, and the NVRTC log kept
** on a hit, compiled for an explicit sm_90 (NVRTC, no GPU); default arguments, run on the GPU
** or the CPU device.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/cache.h"
#include "compile/compile.h"
#include "program/program.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(cxx_kernels, .init = cj_fixture_open, .fini = cj_fixture_close);

static void need_nvrtc(void) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
}

static const char *src = "typedef unsigned int uint;\n"
                         "struct Params { float scale; int n; };\n"
                         "namespace ops { __global__ void fill(uint *x, uint v) { x[0] = v; } }\n"
                         "static __global__ void apply(Params p, float *x, float *bias = NULL) {\n"
                         "  x[0] = p.scale + (bias ? bias[0] : 0.0f); }\n"
                         "template <typename T, int N> __global__ void scale(T *x, T a) {\n"
                         "  for (int i = 0; i < N; i++) x[i] *= a; }\n";

static const char *exprs[] = {"scale<float, 4>", "scale<double, 2>"};

static cujit_program *compile(void) {
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .name_expressions = exprs,
                             .name_expression_count = 2};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  return p;
}

/* The lowered name of kernel `name` is an .entry of the PTX. */
static void lowered_in_ptx(cujit_program *p, const char *name, const char *want) {
  for (size_t i = 0; i < p->nkernels; i++)
    if (strcmp(p->kernels[i].name, name) == 0) {
      cr_assert_not_null(p->kernels[i].symbol, "kernel %s has no lowered name", name);
      cr_assert_str_eq(p->kernels[i].symbol, want);
      char entry[256];
      snprintf(entry, sizeof entry, ".entry %s(", want);
      cr_assert(strstr(p->ptx, entry), "PTX lacks %s", entry);
      return;
    }
  cr_assert_fail("no kernel %s", name);
}

static void check_program(cujit_program *p) {
  const char *want[] = {"ops::fill", "apply", "scale<float, 4>", "scale<double, 2>"};
  cr_assert_eq(cujit_program_kernel_count(p), 4);
  for (size_t i = 0; i < 4; i++) cr_assert_str_eq(cujit_program_kernel_name(p, i), want[i]);
  lowered_in_ptx(p, "ops::fill", "_ZN3ops4fillEPjj");
  lowered_in_ptx(p, "scale<double, 2>", "_Z5scaleIdLi2EEvPT_S0_");
  cujit_kernel *k;
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_program_kernel(p, "scale<float, 4>", &k), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_param(k, 1, &info), CUJIT_OK);
  cr_assert_str_eq(info.type, "float");
  cr_assert_eq(info.dtype, CUJIT_F32);
  cujit_kernel_free(k);
  cr_assert_eq(cujit_program_kernel(p, "ops::fill", &k), CUJIT_OK);
  cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK);
  cr_assert_eq(info.dtype, CUJIT_U32, "uint * read through the typedef");
  cujit_kernel_free(k);
  cr_assert_eq(cujit_program_kernel(p, "apply", &k), CUJIT_OK);
  cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK);
  cr_assert_eq(info.size, 8, "the struct's size comes from the PTX");
  cr_assert_eq(cujit_kernel_param(k, 2, &info), CUJIT_OK);
  cr_assert(info.nullable, "bias is declared = NULL");
  cr_assert_eq(cujit_kernel_param(k, 1, &info), CUJIT_OK);
  cr_assert(info.nullable, "any pointer takes NULL unless the nonnull option names it");
  cujit_kernel_free(k);
}

Test(cxx_kernels, names_and_lowered_names_cold_and_from_the_cache) {
  need_nvrtc();
  cujit_program *p = compile();
  cr_assert(!cujit_program_from_cache(p));
  check_program(p);
  cujit_program_free(p);
  /* A new engine: a hit on disk, no NVRTC run, the lowered names from the entry. */
  cujit_close(engine);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  p = compile();
  cr_assert(cujit_program_from_cache(p));
  check_program(p);
  cujit_program_free(p);
}

Test(cxx_kernels, nonnull_star_refuses_null_but_where_the_kernel_says_null) {
  need_nvrtc();
  static const char *every[] = {"*"};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .name_expressions = exprs,
                             .name_expression_count = 2,
                             .nonnull = every,
                             .nonnull_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "apply", &k), CUJIT_OK);
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_kernel_param(k, 1, &info), CUJIT_OK);
  cr_assert(!info.nullable, "x is named by nonnull \"*\"");
  cr_assert_eq(cujit_kernel_param(k, 2, &info), CUJIT_OK);
  cr_assert(info.nullable, "bias is declared = NULL: \"*\" leaves it");
  float params[2] = {2.0f, 0.0f};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  cujit_arg nulls[] = {
      {.kind = CUJIT_ARG_BYTES, .v.bytes = params}, CUJIT_ARG_BUF(NULL), CUJIT_ARG_BUF(NULL)};
  cr_assert_eq(cujit_launch(k, &cfg, nulls, 3), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'x'"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "nonnull"), "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);
  cujit_program_free(p);
}

Test(cxx_kernels, unknown_names_say_how) {
  need_nvrtc();
  const char *bad[] = {"shift<float>"};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .name_expressions = bad,
                             .name_expression_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "it has scale"), "%s", cujit_errmsg(engine));
  const char *few[] = {"scale<float>"};
  o.name_expressions = few;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(cujit_errmsg(engine), "takes 2 argument(s), not 1"), "%s", cujit_errmsg(engine));
}

/* Template parameters with defaults: a name expression may leave out any of the trailing ones,
** the last included, and each left out takes its default (one may name an earlier parameter). */
Test(cxx_kernels, name_expressions_take_the_defaults_they_leave_out) {
  need_nvrtc();
  const char *with_defaults = "template <typename T, int N = 3, typename U = T>\n"
                              "__global__ void blend(T *x, U a) { for (int i = 0; i < N; i++) "
                              "x[i] += (T)a; }\n";
  const char *names[] = {"blend<float>", "blend<int, 2>", "blend<double, 2, float>"};
  const char *want[][2] = {{"float *", "float"}, {"int *", "int"}, {"double *", "float"}};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .name_expressions = names,
                             .name_expression_count = 3};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, with_defaults, "d.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  for (int i = 0; i < 3; i++) {
    cujit_kernel *k;
    cr_assert_eq(cujit_program_kernel(p, names[i], &k), CUJIT_OK, "%s", cujit_errmsg(engine));
    for (int j = 0; j < 2; j++) {
      cujit_param_info info = CUJIT_PARAM_INFO_INIT;
      cr_assert_eq(cujit_kernel_param(k, j, &info), CUJIT_OK);
      cr_assert_str_eq(info.type, want[i][j], "%s: parameter %d is %s", names[i], j, info.type);
    }
    cujit_kernel_free(k);
  }
  cujit_program_free(p);
  const char *none[] = {"blend<>"};
  o.name_expressions = none, o.name_expression_count = 1;
  cr_assert_eq(cujit_program_compile(engine, with_defaults, "d.cu", &o, &p), CUJIT_ERROR_SIGNATURE);
  cr_assert(
      strstr(cujit_errmsg(engine), "name expression 'blend<>': template kernel 'blend' takes 3"),
      "T has no default: %s", cujit_errmsg(engine));
}

/* The list itself malformed: refused before any compile, each with its reason, and no program. */
Test(cxx_kernels, malformed_name_expression_lists_are_refused) {
  cujit_compile_options o = {
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .name_expression_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine),
                   "'k.cu': name_expression_count is 1 but name_expressions is NULL"),
            "%s", cujit_errmsg(engine));
  const char *empty[] = {"scale<float, 4>", ""}, *null[] = {"scale<float, 4>", NULL},
             *twice[] = {"scale<float, 4>", "scale<double, 2>", "scale<float, 4>"};
  o.name_expressions = empty;
  o.name_expression_count = 2;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'k.cu': name expression 2 is NULL or empty"), "%s",
            cujit_errmsg(engine));
  o.name_expressions = null;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "name expression 2 is NULL or empty"), "%s",
            cujit_errmsg(engine));
  o.name_expressions = twice;
  o.name_expression_count = 3;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(
      strstr(cujit_errmsg(engine), "'k.cu': name expression 'scale<float, 4>' is given twice"),
      "%s", cujit_errmsg(engine));
  cr_assert_null(p, "a refused compile gives no program");
  /* The same list without its repeat compiles. */
  o.name_expression_count = 2;
  need_nvrtc();
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

Test(cxx_kernels, the_log_comes_back_on_a_hit) {
  need_nvrtc();
  const char *warns = "extern \"C\" __global__ void w(int *x) { int unused_here; *x = 1; }\n";
  cujit_program *p = NULL, *q = NULL;
  cr_assert_eq(cujit_program_compile(engine, warns, "w.cu", &sm90, &p), CUJIT_OK);
  cr_assert(strstr(cujit_program_log(p), "unused_here"), "%s", cujit_program_log(p));
  cujit_close(engine);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_eq(cujit_program_compile(engine, warns, "w.cu", &sm90, &q), CUJIT_OK);
  cr_assert(cujit_program_from_cache(q));
  cr_assert(strstr(cujit_program_log(q), "unused_here"), "the hit's log: '%s'",
            cujit_program_log(q));
  cujit_program_free(q);
}

Test(cxx_kernels, entries_with_and_without_lowered_names) {
  cj_cache_key key = {{0}};
  memcpy(key.bytes, "0123456789abcdef", 16);
  char names[] = "&k\0_Z1kv\0&s<int>\0_Z1sIiEvv";
  cj_cache_entry e = {
      .ptx = "// ptx\n", .ptx_len = 7, .log = "warn", .names = names, .names_len = sizeof names};
  size_t n;
  unsigned char *d = cj_cache_entry_encode(&key, &e, &n);
  cj_cache_entry got;
  cr_assert_null(cj_cache_entry_parse(d, n, &key, &got));
  cr_assert_str_eq(got.log, "warn");
  cr_assert_str_eq(cj_cache_entry_lowered(&got, "&s<int>"), "_Z1sIiEvv");
  cr_assert_str_eq(cj_cache_entry_lowered(&got, "&k"), "_Z1kv");
  cr_assert_null(cj_cache_entry_lowered(&got, "&z"));
  cj_cache_entry_free(&got);
  free(d);
  e.names = NULL, e.names_len = 0; /* as entries were written before lowered names */
  d = cj_cache_entry_encode(&key, &e, &n);
  cr_assert_null(cj_cache_entry_parse(d, n, &key, &got));
  cr_assert_str_eq(got.log, "warn");
  cr_assert_null(got.names);
  cj_cache_entry_free(&got);
  free(d);
  e.names = names, e.names_len = 5; /* "&k\0_Z" : a pair cut short */
  d = cj_cache_entry_encode(&key, &e, &n);
  cr_assert_str_eq(cj_cache_entry_parse(d, n, &key, &got), "malformed lowered names");
  free(d);
}

Test(cxx_kernels, types_declared_in_the_kernels_namespace) {
  need_nvrtc();
  const char *ns = "namespace lib {\n"
                   "struct Cell { float v; };\n"
                   "__global__ void clear(Cell *c, int n) { if (n) c[0].v = 0; }\n"
                   "template <class T> __global__ void put(Cell *c, T v) { c[0].v = v; }\n"
                   "}\n";
  const char *names[] = {"lib::put<float>"};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .name_expressions = names,
                             .name_expression_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, ns, "ns.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel_count(p), 2);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "lib::clear");
  cr_assert_str_eq(cujit_program_kernel_name(p, 1), "lib::put<float>");
  cujit_program_free(p);
}

/* Two C++ kernels of one name and other parameter lists: cujit names a kernel by its name, which
** cannot tell them apart. The compiler's error says so, naming both lists and what to do, on both
** devices (before, NVRTC's "cannot determine which instance of overloaded function" and a g++
** template error); an #if that keeps one of them still compiles. */
static const char overloaded[] =
    "__global__ void count_pairs(const int2 *pairs, int *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = pairs[i].x + pairs[i].y;\n"
    "}\n"
    "#if !defined(ONLY_PAIRS)\n"
    "__global__ void count_pairs(const int *values, int *out, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) out[i] = 2 * values[i];\n"
    "}\n"
    "#endif\n";

static void refuses_overload(const char *arch) {
  cujit_compile_options o = {.size = sizeof o, .arch = arch};
  cujit_program *p = NULL;
  cr_assert_neq(cujit_program_compile(engine, overloaded, "ovl.cu", &o, &p), CUJIT_OK);
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "C++ kernel 'count_pairs' is overloaded"), "%s: %s", arch, m);
  cr_assert(strstr(m, "count_pairs(const int2 *pairs, int *out, int n)"), "%s: %s", arch, m);
  cr_assert(strstr(m, "count_pairs(const int *values, int *out, int n)"), "%s: %s", arch, m);
  cr_assert(strstr(m, "its own name"), "what to do: %s", m);
  const char *flags[] = {"-DONLY_PAIRS"};
  o.extra_flags = flags, o.extra_flag_count = 1;
  cr_assert_eq(cujit_program_compile(engine, overloaded, "ovl.cu", &o, &p), CUJIT_OK, "%s: %s",
               arch, cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cujit_program_free(p);
}

Test(cxx_kernels, an_overloaded_kernel_is_refused_naming_both_lists) {
  need_nvrtc();
  refuses_overload("sm_90");
}

Test(cxx_kernels, an_overloaded_kernel_is_refused_on_the_cpu_device) {
  refuses_overload("cpu");
}

/* Default arguments, on a device function and on an extern "C" kernel (whose launch still gives
** every argument, as cuLaunchKernel takes them all): a source NVRTC compiles must compile and run
** on the CPU device too, whose weak redeclaration of the kernel once repeated the default and g++
** refused it ("default argument given for parameter 3"). Runs on the GPU when there is one. */
Test(cxx_kernels, default_arguments_compile_and_run_on_every_device) {
  CJ_NEED_DEVICE(engine);
  const char *src = "#define F 1\n#define R (F + 1)\n#define A R, R\n" /* macros of short names */
                    "__device__ float scaled(float x, float by = 2.0f) { return x * by; }\n"
                    "extern \"C\" __global__ void with_defaults(float *y, int n, float f = 3.0f) "
                    "{\n"
                    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                    "  if (i < n) y[i] = scaled(y[i]) + scaled(f, 0.5f);\n"
                    "}\n";
  cujit_program *p = NULL;
  cujit_kernel *k = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "defaults.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel(p, "with_defaults", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  const float in[4] = {1, 2, 3, 4};
  cujit_buffer *y = cj_test_upload(in, sizeof in, CUJIT_F32);
  cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {32, 1, 1}};
  cujit_arg args[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_I(4), CUJIT_ARG_F(5.0)};
  cr_assert_eq(cujit_launch(k, &c, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  float out[4];
  cj_test_download(out, y, sizeof out);
  for (int i = 0; i < 4; i++) /* 2 y + f / 2, the default 2 used, the given 0.5 too */
    cr_expect_eq(out[i], 2.0f * in[i] + 2.5f, "y[%d] is %g, want %g", i, out[i], 2 * in[i] + 2.5);
  cujit_buffer_free(y);
  cujit_kernel_free(k);
  cujit_program_free(p);
}
