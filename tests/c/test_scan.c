/*
** test_scan.c -- the kernels of a translation unit are the ones NVRTC compiled: preprocessor
** branches, #if 0, kernels written by macros (explicit signatures), parameter limits, and kernel
** names that are also type names. Compiles for an explicit sm_90: NVRTC, no GPU.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "compile/scan.h"
#include "compile/verify.h"

TestSuite(scan_compiled, .init = cj_fixture_open, .fini = cj_fixture_close);

static cujit_program *compile_ok(const char *src, const cujit_compile_options *options) {
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "k.cu", options, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  return p;
}

static void compile_fails(const char *src, const cujit_compile_options *options, cujit_status want,
                          const char *part1, const char *part2) {
  cujit_program *p = NULL;
  cujit_status st = cujit_program_compile(engine, src, "k.cu", options, &p);
  cr_assert_eq(st, want, "status %d, want %d: %s", st, want, cujit_errmsg(engine));
  cr_assert_null(p);
  cr_assert(strstr(cujit_errmsg(engine), part1), "lacks '%s': %s", part1, cujit_errmsg(engine));
  if (part2)
    cr_assert(strstr(cujit_errmsg(engine), part2), "lacks '%s': %s", part2, cujit_errmsg(engine));
}

/* The type of parameter `index` of kernel `name` of the program. */
static void param_type(cujit_program *p, const char *name, size_t index, const char *type,
                       cujit_dtype dtype) {
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, name, &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_kernel_param(k, index, &info), CUJIT_OK);
  cr_assert_str_eq(info.type, type);
  cr_assert_eq(info.dtype, dtype);
  cujit_kernel_free(k);
}

/* Options for sm_90 that give the kernels' signatures rather than have them read. */
static cujit_compile_options sm90_given(const char *const *sigs, size_t count) {
  return (cujit_compile_options){.size = sizeof(cujit_compile_options),
                                 .arch = "sm_90",
                                 .signatures = sigs,
                                 .signature_count = count};
}

static const char *ifdef_src =
    "#ifdef D\n"
    "extern \"C\" __global__ void scale(double *x, int n) { x[n] *= 2; }\n"
    "#else\n"
    "extern \"C\" __global__ void scale(float *x, int n) { x[n] *= 2; }\n"
    "#endif\n";

Test(scan_compiled, ifdef_gives_the_definition_compiled) {
  cujit_program *p = compile_ok(ifdef_src, &sm90);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  param_type(p, "scale", 0, "float *", CUJIT_F32);
  cujit_program_free(p);
  const char *defines[] = {"D"};
  cujit_compile_options with_d = {.size = sizeof(cujit_compile_options),
                                  .arch = "sm_90",
                                  .defines = defines,
                                  .define_count = 1};
  p = compile_ok(ifdef_src, &with_d);
  param_type(p, "scale", 0, "double *", CUJIT_F64);
  cujit_program_free(p);
}

Test(scan_compiled, kernels_in_if_0_are_left_out) {
  cujit_program *p = compile_ok("#if 0\n"
                                "extern \"C\" __global__ void ghost(int *x) {}\n"
                                "#endif\n"
                                "extern \"C\" __global__ void real(int *x) { *x = 1; }\n",
                                &sm90);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "real");
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "ghost", &k), CUJIT_ERROR_NOT_FOUND);
  cujit_program_free(p);
  compile_fails("#if 0\nextern \"C\" __global__ void ghost(int *x) {}\n#endif\n", &sm90,
                CUJIT_ERROR_NOT_FOUND, "inactive preprocessor conditions", NULL);
}

static const char *macro_src =
    "#define KERNEL(name, T) extern \"C\" __global__ void name(T *x, int n) { x[n] = 0; }\n"
    "KERNEL(scale, float)\n";

Test(scan_compiled, macro_kernels_take_explicit_signatures) {
  compile_fails(macro_src, &sm90, CUJIT_ERROR_NOT_FOUND, "compiles kernel(s) scale, which cujit",
                "give their signatures in the signatures option");
  compile_fails("__device__ void not_a_kernel(int *x) {}\n", &sm90, CUJIT_ERROR_NOT_FOUND,
                "no __global__ kernel", NULL);
  const char *sigs[] = {"scale(float *x, int n)"};
  cujit_compile_options o = sm90_given(sigs, 1);
  cujit_program *p = compile_ok(macro_src, &o);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  param_type(p, "scale", 0, "float *", CUJIT_F32);
  param_type(p, "scale", 1, "int", CUJIT_I32);
  cujit_program_free(p);
}

/* A kernel a macro writes, its #define continued over lines, called without a `;` before a
** kernel written out: the calls are not that kernel's name (the name follows __global__). NVRTC
** compiles all three; cujit reads the one written out, with its parameters, and the others are
** reached through explicit signatures. */
static const char *macro_calls_src =
    "#define KERNEL(name, T) \\\n"
    "  extern \"C\" __global__ void name(T *x, \\\n"
    "                                  int n) { x[n] = 0; }\n"
    "KERNEL(one, float)\n"
    "KERNEL(two, double)\n"
    "extern \"C\" void __global__ plain(int *y, float z) { *y = (int)z; }\n";

static void only_plain_is_read(const cujit_compile_options *options) {
  cujit_program *p = compile_ok(macro_calls_src, options);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "plain");
  param_type(p, "plain", 0, "int *", CUJIT_I32);
  param_type(p, "plain", 1, "float", CUJIT_F32);
  cujit_program_free(p);
}

Test(scan_compiled, macro_calls_before_a_kernel_are_not_its_name) {
  only_plain_is_read(&sm90);
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) == CUJIT_OK) only_plain_is_read(NULL);
  const char *sigs[] = {"one(float *x, int n)", "two(double *x, int n)", "plain(int *y, float z)"};
  cujit_compile_options o = sm90_given(sigs, 3);
  cujit_program *p = compile_ok(macro_calls_src, &o);
  cr_assert_eq(cujit_program_kernel_count(p), 3);
  param_type(p, "two", 0, "double *", CUJIT_F64);
  cujit_program_free(p);
}

/* Only kernels a macro writes: NVRTC's program names them; the CPU device, which has no such
** list, says that a #define writes __global__ and what to do. */
Test(scan_compiled, kernels_only_a_macro_writes_are_named_or_explained) {
  const char *src = "#define KERNEL(name, T) \\\n"
                    "  extern \"C\" __global__ void name(T *x) { *x = 0; }\n"
                    "KERNEL(one, float)\n";
  compile_fails(src, &sm90, CUJIT_ERROR_NOT_FOUND, "compiles kernel(s) one, which cujit",
                "give their signatures in the signatures option");
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) != CUJIT_OK) return;
  compile_fails(src, NULL, CUJIT_ERROR_NOT_FOUND,
                "no __global__ kernel in the source that cujit could read: a #define writes "
                "__global__, and cujit does not expand macros",
                "give the kernels' signatures in the signatures option");
  const char *sigs[] = {"one(float *x)"};
  cujit_compile_options o = {
      .size = sizeof(cujit_compile_options), .signatures = sigs, .signature_count = 1};
  cujit_program *p = compile_ok(src, &o);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "one");
  cujit_program_free(p);
}

Test(scan_compiled, a_wrong_explicit_signature_is_a_compile_error) {
  const char *wrong[] = {"scale(double *x, int n)"};
  cujit_compile_options o = sm90_given(wrong, 1);
  compile_fails(macro_src, &o, CUJIT_ERROR_COMPILE, "kernel 'scale' is not compiled with",
                "correct it in the signatures option");
  const char *absent[] = {"other(float *x, int n)"};
  o.signatures = absent;
  compile_fails(macro_src, &o, CUJIT_ERROR_NOT_FOUND, "'other', given in the signatures option",
                NULL);
  const char *bad[] = {"scale(float *x, int n)", "scale(float *x, int n)"};
  o.signatures = bad, o.signature_count = 2;
  compile_fails(macro_src, &o, CUJIT_ERROR_SIGNATURE, "signatures[1]", "given twice");
  o.signatures = NULL;
  compile_fails(macro_src, &o, CUJIT_ERROR_INVALID_ARGUMENT, "signatures is NULL", NULL);
}

Test(scan_compiled, a_definition_cujit_did_not_read_is_a_compile_error) {
  /* cujit reads only the double kernel; NVRTC compiles the float one the macro writes. */
  char src[1024];
  snprintf(
      src, sizeof src,
      "%s#if 0\nextern \"C\" __global__ void scale(double *x, int n) {}\n#else\n"
      "KERNEL(scale, float)\n#endif\n",
      "#define KERNEL(name, T) extern \"C\" __global__ void name(T *x, int n) { x[n] = 0; }\n");
  compile_fails(src, &sm90, CUJIT_ERROR_COMPILE,
                "compiles kernel 'scale' with other parameters than scale(double *x, int n)",
                "give its signature in the signatures option");
}

Test(scan_compiled, a_parameter_count_cujit_misread_is_an_error) {
  compile_fails("#define TWO int a, int b\n"
                "extern \"C\" __global__ void k(TWO) {}\n",
                &sm90, CUJIT_ERROR_SIGNATURE, "1 parameter(s) as cujit read it",
                "but 2 as compiled");
}

Test(scan_compiled, more_parameters_than_the_limit_are_refused) {
  char src[8192];
  int n = snprintf(src, sizeof src, "extern \"C\" __global__ void big(");
  for (int i = 0; i < CJ_MAX_PARAMS + 2; i++)
    n += snprintf(src + n, sizeof src - (size_t)n, "%sint a%d", i ? ", " : "", i);
  snprintf(src + n, sizeof src - (size_t)n, ") {}\n");
  char limit[32];
  snprintf(limit, sizeof limit, "%d", CJ_MAX_PARAMS);
  compile_fails(src, &sm90, CUJIT_ERROR_SIGNATURE, "kernel 'big'", limit);
}

Test(scan_compiled, kernels_named_like_types) {
  cujit_program *p = compile_ok("extern \"C\" __global__ void half(float *x) { *x = 1; }\n"
                                "extern \"C\" __global__ void float4(int *x) { *x = 1; }\n",
                                &sm90);
  cr_assert_eq(cujit_program_kernel_count(p), 2);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "half");
  cr_assert_str_eq(cujit_program_kernel_name(p, 1), "float4");
  cujit_program_free(p);
}

Test(scan_compiled, kernels_in_namespaces_are_checked_there) {
  cujit_program *p = compile_ok("namespace ns { typedef float real; inline namespace v1 {\n"
                                "extern \"C\" __global__ void k(real *x, float *y) { *x = *y; }\n"
                                "extern \"C\" __global__ void k2(float *y, int n) { y[n] = 0; }\n"
                                "} }\n",
                                &sm90);
  cr_assert_eq(cujit_program_kernel_count(p), 2);
  param_type(p, "k2", 0, "float *", CUJIT_F32);
  cujit_program_free(p);
}

/* The checks must compile with g++ too, for the CPU device. */
Test(scan_compiled, the_checks_compile_with_gpp) {
  if (system("g++ --version > /dev/null 2>&1") != 0) cr_skip_test("no g++");
  static const struct {
    const char *src;
    int ok;
  } cases[] = {
      {"#ifdef D\nextern \"C\" __global__ void scale(double *x, int n) {}\n#else\n"
       "extern \"C\" __global__ void scale(float *x, int n) {}\n#endif\n",
       1},
      {"namespace a { extern \"C\" __global__ void k(const float *__restrict__ x, int n) {} }\n",
       1},
      {"#define K(T) extern \"C\" __global__ void scale(T *x, int n) {}\n#if 0\n"
       "extern \"C\" __global__ void scale(double *x, int n) {}\n#else\nK(float)\n#endif\n",
       0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cj_scan scan;
    char err[512], path[600];
    snprintf(path, sizeof path, "%s/unit-XXXXXX.cpp", cj_scratch); /* the fixture's scratch */
    cr_assert_eq(cj_scan_prepare(cases[i].src, NULL, 0, &scan, err, sizeof err), CUJIT_OK, "%s",
                 err);
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(scan.text, f);
    fclose(f);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "g++ -fsyntax-only -D__global__= -D__device__= %s > %s.log 2>&1",
             path, path);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "grep -q 'cujit: the source compiles kernel' %s.log", path);
    int mapped = system(cmd) == 0;
    snprintf(cmd, sizeof cmd, "rm -f %s %s.log", path, path);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", path);
    cr_assert_eq(rc == 0, cases[i].ok, "case %zu: g++ %s:\n%s", i, rc ? "failed" : "passed",
                 scan.text);
    if (!cases[i].ok) cr_assert(mapped, "case %zu: g++'s error names the check", i);
    cj_scan_free(&scan);
  }
}

Test(scan_compiled, a_body_shared_by_two_openings_is_not_misread) {
  /* The reader sees the double opening only (the float one is inside its body, to a reader that
  ** ignores #if); the check refuses the float kernel NVRTC compiles, saying what to do. */
  const char *src = "#ifdef D\n"
                    "extern \"C\" __global__ void k(double *x) {\n"
                    "#else\n"
                    "extern \"C\" __global__ void k(float *x) {\n"
                    "#endif\n"
                    "  x[0] = 1;\n"
                    "}\n"
                    "extern \"C\" __global__ void k(float *x);\n";
  compile_fails(src, &sm90, CUJIT_ERROR_COMPILE, "other parameters than k(double *x)",
                "signatures option");
}

/* The PTX check by hand-written PTX: parameter sizes from .u32, .f64 and .b8 arrays. */
static cujit_status verify_with(const char *src, const char *ptx, char *err, size_t len) {
  cj_scan scan;
  cr_assert_eq(cj_scan_prepare(src, NULL, 0, &scan, err, len), CUJIT_OK, "%s", err);
  cj_signature *kernels = NULL;
  size_t n = 0;
  cujit_status st = cj_verify_ptx(&scan, ptx, &kernels, &n, err, len);
  if (st == CUJIT_OK) {
    cr_assert_eq(n, 1);
    for (size_t i = 0; i < n; i++) cj_signature_free(&kernels[i]);
    free(kernels);
  }
  cj_scan_free(&scan);
  return st;
}

Test(scan_ptx, parameter_sizes_are_read_from_the_ptx) {
  const char *src = "extern \"C\" __global__ void k(unsigned int a, __half h, double d) {}\n";
  char err[1024];
  const char *good = ".visible .entry k(\n\t.param .u32 k_param_0,\n\t.param .align 2 .b8 "
                     "k_param_1[2],\n\t.param .f64 k_param_2\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, good, err, sizeof err), CUJIT_OK, "%s", err);
  const char *bad_u32 = ".visible .entry k(\n\t.param .u64 k_param_0,\n\t.param .align 2 .b8 "
                        "k_param_1[2],\n\t.param .f64 k_param_2\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, bad_u32, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "parameter 1 'a' (unsigned int) takes 4 bytes as cujit read it, but 8"),
            "%s", err);
  const char *bad_b8 = ".visible .entry k(\n\t.param .u32 k_param_0,\n\t.param .align 2 .b8 "
                       "k_param_1[12],\n\t.param .f64 k_param_2\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, bad_b8, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "parameter 2 'h' (__half) takes 2 bytes as cujit read it, but 12"), "%s",
            err);
  const char *bad_f = ".visible .entry k(\n\t.param .u32 k_param_0,\n\t.param .align 2 .b8 "
                      "k_param_1[2],\n\t.param .f32 k_param_2\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, bad_f, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "parameter 3 'd' (double) takes 8 bytes as cujit read it, but 4"), "%s",
            err);
  const char *fewer = ".visible .entry k(\n\t.param .u32 k_param_0\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, fewer, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "has 3 parameter(s) as cujit read it"), "%s", err);
  cr_assert(strstr(err, "but 1 as compiled"), "%s", err);
  /* Two entries, the kernel second: found past the first. */
  const char *two = ".visible .entry other(\n\t.param .u32 other_param_0\n)\n{\n}\n"
                    ".visible .entry k(\n\t.param .u32 k_param_0,\n\t.param .align 2 .b8 "
                    "k_param_1[2],\n\t.param .f64 k_param_2\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, two, err, sizeof err), CUJIT_OK, "%s", err);
}

/* Reads src's kernels into *scan; asserts it succeeds. */
static void prepare_ok(const char *src, cj_scan *scan) {
  char err[512];
  cr_assert_eq(cj_scan_prepare(src, NULL, 0, scan, err, sizeof err), CUJIT_OK, "%s", err);
}

/* The kernels a source holds, by name, in order ("a,b"); asserts the scan succeeds. */
static void scanned_names(const char *src, char *names, size_t len) {
  cj_scan scan;
  prepare_ok(src, &scan);
  names[0] = '\0';
  for (size_t i = 0; i < scan.count; i++)
    snprintf(names + strlen(names), len - strlen(names), "%s%s", i ? "," : "",
             scan.kernels[i].sig.name);
  cj_scan_free(&scan);
}

Test(scan_ptx, kernels_in_comments_strings_and_directives_are_not_read) {
  char names[256];
  scanned_names("// extern \"C\" __global__ void line_comment(int x) {}\n"
                "/* extern \"C\" __global__ void block_comment(int x) {}\n"
                "   extern \"C\" __global__ void second_line(int x) {} */\n"
                "#define K extern \"C\" __global__ void directive(int x) {}\n"
                "#define LONG a \\\n"
                "  extern \"C\" __global__ void continued(int x) {}\n"
                "# /* a comment on a directive */ define X 1\n"
                "extern \"C\" __global__ void real(int *x, char c) {\n"
                "  const char *s = \"extern \\\"C\\\" __global__ void in_string(int x) {}\";\n"
                "  const char *r = R\"d(extern \"C\" __global__ void in_raw(int x) {})d\";\n"
                "  x[0] = s[0] + r[0] + ')' + '\\'';\n"
                "}\n"
                "extern \"C\" __global__ void after(float *y) { y[0] = 1; }\n",
                names, sizeof names);
  cr_assert_str_eq(names, "real,after");
  scanned_names(
      "extern \"C\" __global__ void a(int *x) {} /* c */ extern \"C\" __global__ void "
      "b(int *x) {}\n// last line without a newline: extern \"C\" __global__ void c(int x)",
      names, sizeof names);
  cr_assert_str_eq(names, "a,b");
  /* "/" then "*" then "/" opens a comment without closing it: the opening's star is no end's. */
  scanned_names("/*/ extern \"C\" __global__ void still_a_comment(int *x) {} */\n"
                "/**/ extern \"C\" __global__ void g(int *x) {}\n",
                names, sizeof names);
  cr_assert_str_eq(names, "g");
  /* A division is not a comment: "/ (" must not hide the kernels after it. */
  scanned_names("extern \"C\" __global__ void d(int *x, int n) { x[0] = 1 / (n + 1); }\n"
                "extern \"C\" __global__ void e(int *x) { x[0] = 2 /1; }\n"
                "extern \"C\" __global__ void f(int *x) {}\n",
                names, sizeof names);
  cr_assert_str_eq(names, "d,e,f");
  /* More kernels than the first allocation holds (8). */
  char src[4096] = "", want[256] = "";
  for (int k = 0; k < 20; k++) {
    snprintf(src + strlen(src), sizeof src - strlen(src),
             "extern \"C\" __global__ void k%d(int *x) { x[0] = %d; }\n", k, k);
    snprintf(want + strlen(want), sizeof want - strlen(want), "%sk%d", k ? "," : "", k);
  }
  scanned_names(src, names, sizeof names);
  cr_assert_str_eq(names, want);
}

/* `xR"(` is an identifier (here a macro given by -D) then a string, not a raw string: what
** follows the string's end is read. */
Test(scan_ptx, an_identifier_ending_in_r_before_a_string_is_not_a_raw_string) {
  char names[256];
  scanned_names("xR\"(\";\nextern \"C\" __global__ void k(int *x) {}\n", names, sizeof names);
  cr_assert_str_eq(names, "k");
  /* A raw string with an encoding prefix is a raw string: its quote does not end it, and the
  ** kernel after it is read. */
  scanned_names("const char *s = u8R\"(a\"b)\";\nextern \"C\" __global__ void k(int *x) {}\n",
                names, sizeof names);
  cr_assert_str_eq(names, "k");
  scanned_names("const wchar_t *w = LR\"d(\")d\";\nextern \"C\" __global__ void k(int *x) {}\n",
                names, sizeof names);
  cr_assert_str_eq(names, "k");
  /* A division in a directive does not end it; decltype(...) before the name is not the name. */
  scanned_names("#define HALF(a) (a) / 2; extern \"C\" __global__ void in_define(int x) {}\n"
                "extern \"C\" __global__ decltype(void()) k(int *x) {}\n",
                names, sizeof names);
  cr_assert_str_eq(names, "k");
}

/* typedef and using at namespace scope are put into the kernels' parameters; the namespaces
** around a kernel (nested ones too) are its scope text. */
Test(scan_ptx, typedefs_usings_and_nested_namespaces_are_read) {
  const char *src = "typedef unsigned int uint;\n"
                    "using real = float;\n"
                    "typedef real *rptr;\n"
                    "typedef double dbl;\n"
                    "namespace a { namespace b {\n"
                    "extern \"C\" __global__ void k(uint u, real r, rptr p, dbl d) {}\n"
                    "} }\n";
  cj_scan scan;
  prepare_ok(src, &scan);
  cr_assert_eq(scan.count, 1);
  const cj_signature *sig = &scan.kernels[0].sig;
  cr_assert_eq(sig->nparams, 4);
  cr_assert_str_eq(sig->params[3].type, "double", "a typedef of three words");
  cr_assert_str_eq(sig->params[0].type, "unsigned int");
  cr_assert_eq(sig->params[0].dtype, CUJIT_U32);
  cr_assert_str_eq(sig->params[1].type, "float");
  cr_assert_str_eq(sig->params[2].type, "float *");
  cr_assert_eq(scan.ntd, 4);
  cr_assert_str_eq(scan.kernels[0].scope, "namespace a  { namespace b  { ");
  cr_assert_eq(scan.kernels[0].scope_depth, 2);
  cj_scan_free(&scan);
}

/* A template kernel is remembered, its name qualified, its parameters and defaults read past an
** attribute's parentheses. */
Test(scan_ptx, template_kernels_are_remembered_with_their_parameters) {
  const char *src = "namespace ns {\n"
                    "template <class T, class U = X<int>, int N = 4> __global__ "
                    "__launch_bounds__(128) void "
                    "scale(T *x, int n) {}\n"
                    "}\n";
  cj_scan scan;
  prepare_ok(src, &scan);
  cr_assert_eq(scan.count, 0);
  cr_assert_eq(scan.templates, 1);
  cr_assert_eq(scan.ntmpls, 1);
  const cj_scan_template *t = &scan.tmpls[0];
  cr_assert_str_eq(t->name, "ns::scale");
  cr_assert_str_eq(t->params, "T *x, int n");
  cr_assert_eq(t->ntparams, 3);
  cr_assert_str_eq(t->tparams[0], "T");
  cr_assert_null(t->tdefaults[0]);
  cr_assert_str_eq(t->tparams[1], "U");
  cr_assert_str_eq(t->tdefaults[1], "X<int>", "a nested template argument list");
  cr_assert_str_eq(t->tparams[2], "N");
  cr_assert_str_eq(t->tdefaults[2], "4");
  cr_assert_str_eq(t->scope, "namespace ns  { "); /* the head as written, then " { " */
  cj_scan_free(&scan);
}

/* A parameter of a type cujit cannot size (a struct it did not see) takes the size and alignment
** the PTX gives it, stated (.align) or the width of its type; the offsets are laid out again. */
Test(scan_ptx, unread_types_take_the_ptx_sizes_and_alignments) {
  const char *src = "struct S;\nextern \"C\" __global__ void k(char c, S s, char d, S t) {}\n";
  const char *ptx = ".visible .entry k(\n\t.param .u8 k_param_0,\n\t.param .align 8 .b8 "
                    "k_param_1[16],\n\t.param .u8 k_param_2,\n\t.param .u64 k_param_3\n)\n{\n}\n";
  cj_scan scan;
  char err[1024];
  cr_assert_eq(cj_scan_prepare(src, NULL, 0, &scan, err, sizeof err), CUJIT_OK, "%s", err);
  cj_signature *kernels = NULL;
  size_t n = 0;
  cr_assert_eq(cj_verify_ptx(&scan, ptx, &kernels, &n, err, sizeof err), CUJIT_OK, "%s", err);
  cr_assert_eq(n, 1);
  const cj_param *p = kernels[0].params;
  cr_assert_eq(p[1].size, 16);
  cr_assert_eq(p[1].align, 8, "stated by .align");
  cr_assert_eq(p[1].offset, 8);
  cr_assert_eq(p[3].size, 8);
  cr_assert_eq(p[3].align, 8, "the width of .u64");
  cr_assert_eq(p[3].offset, 32);
  cr_assert_eq(kernels[0].param_bytes, 40);
  cj_signature_free(&kernels[0]);
  free(kernels);
  cj_scan_free(&scan);
}

/* A kernel the PTX has and the source reading did not find is named in the message, even when its
** name is one letter. */
Test(scan_ptx, a_kernel_compiled_but_not_read_is_named) {
  char err[1024];
  const char *src = "#define K(n) extern \"C\" __global__ void n(int x) {}\nK(k)\n";
  const char *ptx = ".visible .entry k(\n\t.param .u32 k_param_0\n)\n{\n}\n";
  cr_assert_eq(verify_with(src, ptx, err, sizeof err), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(err, "the program compiles kernel(s) k, which cujit could not read"), "%s", err);
}

/* A header's typedef reaches the source's kernels: they are read again once it is known. */
Test(scan_ptx, a_headers_typedef_reaches_the_sources_kernels) {
  cj_scan scan;
  prepare_ok("extern \"C\" __global__ void k(ushort *x) {}\n", &scan);
  const char *headers[] = {"typedef unsigned short ushort;\n"};
  char err[512];
  cr_assert_eq(cj_scan_headers(&scan, headers, 1, err, sizeof err), CUJIT_OK, "%s", err);
  cr_assert_eq(scan.count, 1);
  cr_assert_str_eq(scan.kernels[0].sig.params[0].type, "unsigned short *");
  cr_assert_eq(scan.kernels[0].sig.params[0].dtype, CUJIT_U16);
  cj_scan_free(&scan);
}
