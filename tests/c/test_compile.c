/*
** test_compile.c -- source generation, NVRTC compiles for an explicit sm_90 (no GPU needed),
** compile errors mapped to the user's lines, files, defines, include dirs, arch checks and
** argument checks. Each test has its own fresh cache directory.
*/
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "compile/compile.h"
#include "program/program.h"

static cujit_engine *engine;
static char tmpdir[256];

/* NVRTC from the toolkit when the loader would not find it on its own. */
static void find_nvrtc(void) {
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
}

static void setup(void) {
  cr_assert_lt(snprintf(tmpdir, sizeof tmpdir, "%s", cj_scratch_make("compile")),
               (int)sizeof tmpdir);
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", tmpdir);
  setenv("CUJIT_CACHE_DIR", cache, 1);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_CACHE_MAX");
  find_nvrtc();
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void teardown(void) {
  cujit_close(engine);
  cj_scratch_remove();
}

static void need_nvrtc(void) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
}

static const cujit_compile_options sm90 = {.size = sizeof(cujit_compile_options), .arch = "sm_90"};

static const char *saxpy_src =
    "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

static char *generate(const char *sigtext, const char *body, const char *preamble,
                      const char *const *types) {
  cj_signature sig;
  char err[512];
  cr_assert_eq(cj_signature_parse(sigtext, &sig, err, sizeof err), CUJIT_OK, "%s", err);
  char *src = cj_source_for_kernel(&sig, body, preamble, types);
  cj_signature_free(&sig);
  cr_assert_not_null(src);
  return src;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

TestSuite(compile, .init = setup, .fini = teardown, .timeout = 120);

Test(compile, codegen_layout) {
  char *src = generate("saxpy(float a, const float *x, float *y, int n)",
                       "int i = threadIdx.x;\nif (i < n) y[i] = a * x[i];",
                       "__device__ float sq(float v) { return v * v; }", NULL);
  const char *first = "#line 1 \"saxpy:generated\"\n#include <cujit/prelude.h>\n";
  cr_assert_eq(strncmp(src, first, strlen(first)), 0, "the embedded prelude comes first: %s", src);
  cr_assert(strstr(src, "#line 1 \"saxpy:preamble\"\n__device__ float sq"), "%s", src);
  cr_assert(strstr(src, "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, "
                        "int n) {\n#line 1 \"saxpy\"\nint i = threadIdx.x;\n"),
            "%s", src);
  cr_assert(strstr(src, "y[i] = a * x[i];\n}\n"), "%s", src);
  cr_assert_null(strstr(src, "typedef"), "%s", src);
  cr_assert_null(strstr(src, "cuda_fp16.h"), "%s", src);
  cr_assert(cj_source_is_kernel(src, "saxpy"));
  cr_assert(!cj_source_is_kernel(src, "sax"));
  free(src);
}

/* Generating a kernel's source keeps nothing (glibc's count of bytes in use, over many). */
Test(compile, codegen_keeps_no_memory) {
  cj_signature sig;
  char err[512];
  cr_assert_eq(
      cj_signature_parse("saxpy(float a, const float *x, float *y, int n)", &sig, err, sizeof err),
      CUJIT_OK, "%s", err);
  free(cj_source_for_kernel(&sig, "y[0] = a;", NULL, NULL)); /* first-use allocations */
  struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < 200; i++) free(cj_source_for_kernel(&sig, "y[0] = a;", NULL, NULL));
  struct mallinfo2 after = mallinfo2();
  cj_signature_free(&sig);
  cr_assert_leq(after.uordblks + after.hblkhd, before.uordblks + before.hblkhd + 1024,
                "200 sources kept %zu bytes",
                (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd));
}

Test(compile, many_defines) {
  /* More options than the option list's first allocation (16): it grows, and each one counts. */
  need_nvrtc();
  enum { N = 200 };
  static char names[N][32];
  const char *defines[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "D%d=%d", i, i);
    defines[i] = names[i];
  }
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .defines = defines,
                             .define_count = N};
  cujit_program *p;
  const char *src = "#if D0 != 0 || D199 != 199 || D100 != 100\n#error lost\n#endif\n"
                    "extern \"C\" __global__ void many(int *x) { x[0] = D150; }\n";
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

Test(compile, an_error_message_without_a_log) {
  /* NVRTC may give no log at all: the message still names what failed. */
  char *src = generate("k(int *y)", "y[0] = 1;", NULL, NULL);
  char *msg = cj_compile_error_message("k", src, NULL);
  cr_assert_not_null(msg);
  cr_assert_eq(strncmp(msg, "kernel 'k' failed to compile", 28), 0, "%s", msg);
  cr_assert(strstr(msg, "(NVRTC wrote no log)"), "%s", msg);
  free(msg);
  msg = cj_compile_error_message(NULL, "int x;", NULL);
  cr_assert_not_null(msg);
  cr_assert(strstr(msg, "<source>"), "%s", msg);
  free(msg);
  free(src);
}

Test(compile, codegen_type_variables_and_half) {
  const char *types[] = {"double", "__half"};
  char *src = generate("axpy(T a, const T *x, U *y, int n)", "y[0] = x[0];", NULL, types);
  cr_assert(strstr(src, "typedef double T;\n"), "%s", src);
  cr_assert(strstr(src, "typedef __half U;\n"), "%s", src);
  cr_assert(strstr(src, "#include <cuda_fp16.h>\n"), "%s", src);
  cr_assert_null(strstr(src, "cuda_bf16.h"), "no bfloat16 here: %s", src);
  cr_assert(strstr(src, "void axpy(T a, const T *x, U *y, int n)"), "%s", src);
  cr_assert_null(strstr(src, ":preamble"), "no preamble given: %s", src);
  free(src);

  cj_signature sig, conc;
  char err[256];
  cr_assert_eq(cj_signature_parse("axpy(T a, T *y)", &sig, err, sizeof err), CUJIT_OK);
  cujit_dtype t[] = {CUJIT_F32};
  cr_assert_eq(cj_signature_specialize(&sig, t, 1, &conc, err, sizeof err), CUJIT_OK);
  src = cj_source_for_kernel(&conc, "y[0] = a;", NULL, NULL);
  cr_assert(strstr(src, "typedef float T;\n"), "a specialised signature binds T: %s", src);
  cr_assert(strstr(src, "void axpy(float a, float *y)"), "%s", src);
  free(src);
  cj_signature_free(&sig);
  cj_signature_free(&conc);
}

Test(compile, good_kernel_for_sm90) {
  need_nvrtc();
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, "saxpy.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  size_t ptx_len, cubin_len;
  const char *ptx = cujit_program_ptx(p, &ptx_len);
  cr_assert(strstr(ptx, ".entry saxpy"), "PTX lacks the entry");
  cr_assert_eq(ptx_len, strlen(ptx));
  const unsigned char *cubin = cujit_program_cubin(p, &cubin_len);
  cr_assert_not_null(cubin);
  cr_assert_gt(cubin_len, 64);
  cr_assert_eq(memcmp(cubin,
                      "\x7f"
                      "ELF",
                      4),
               0, "CUBIN is an ELF file");
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "saxpy");
  cr_assert_null(cujit_program_kernel_name(p, 1));
  cr_assert_eq(cujit_program_from_cache(p), 0);
  cr_assert_geq(cujit_program_milliseconds(p), 0.0);
  cr_assert_not_null(cujit_program_log(p));
  cr_assert_str_eq(p->arch, "sm_90");
  cr_assert_eq(p->kernels[0].nparams, 4);
  cujit_program_free(p);
}

Test(compile, compute_arch_gives_ptx_only) {
  need_nvrtc();
  cujit_compile_options o = {.size = sizeof(cujit_compile_options), .arch = "compute_90"};
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  size_t len = 99;
  cr_assert_null(cujit_program_cubin(p, &len));
  cr_assert_eq(len, 0);
  cr_assert(strstr(cujit_program_ptx(p, NULL), ".target sm_90"));
  cujit_program_free(p);
}

/* __nv_bfloat16 brings the toolkit's <cuda_bf16.h> (not <cuda_fp16.h>), named by a parameter or
** bound to a type variable. */
Test(compile, codegen_bf16_includes_cuda_bf16) {
  const char *types[] = {"__nv_bfloat16"};
  char *src = generate("bscale(T *x, float s)", "x[0] = x[0];", NULL, types);
  cr_assert(strstr(src, "#include <cuda_bf16.h>\n"), "%s", src);
  cr_assert(strstr(src, "typedef __nv_bfloat16 T;\n"), "%s", src);
  cr_assert_null(strstr(src, "cuda_fp16.h"), "%s", src);
  free(src);
  src = generate("bscale(nv_bfloat16 *x, float s)", "x[0] = x[0];", NULL, NULL);
  cr_assert(strstr(src, "#include <cuda_bf16.h>\n"), "%s", src);
  free(src);
  src = generate("fscale(float *x, float s)", "x[0] = x[0];", NULL, NULL);
  cr_assert_null(strstr(src, "cuda_bf16.h"), "%s", src);
  free(src);
}

Test(compile, half_kernel) {
  need_nvrtc();
  char *src = generate("hscale(__half *x, __half s, int n)",
                       "int i = threadIdx.x;\nif (i < n) x[i] = __hmul(x[i], s);", NULL, NULL);
  cujit_program *p;
  cr_assert_eq(cj_program_build(engine, src, "hscale", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(cujit_program_ptx(p, NULL), ".entry hscale"));
  cj_program_release(p);
  free(src);
}

Test(compile, body_error_names_kernel_and_line) {
  need_nvrtc();
  char *src = generate("saxpy(float a, const float *x, float *y, int n)",
                       "int i = threadIdx.x;\nif (i < n)\n  y[i] = q;\n",
                       "__device__ float twice(float v) { return 2 * v; }\n", NULL);
  cujit_program *p = (cujit_program *)1;
  cr_assert_eq(cj_program_build(engine, src, "saxpy", &sm90, &p), CUJIT_ERROR_COMPILE);
  cr_assert_null(p);
  const char *msg = cujit_errmsg(engine);
  const char *want = "kernel 'saxpy' failed to compile: line 3 of its body: error: identifier "
                     "\"q\" is undefined\n\n";
  cr_assert_eq(strncmp(msg, want, strlen(want)), 0, "got: %s", msg);
  cr_assert(strstr(msg, "y[i] = q;"), "the offending line is quoted: %s", msg);
  cr_assert(strstr(msg, "saxpy(3): error"), "the NVRTC log follows: %s", msg);
  cr_assert_eq(cujit_errcode(engine), CUJIT_ERROR_COMPILE);
  free(src);
  /* Two errors: the headline names the first the compiler reported, the log has both. */
  src = generate("k2(float *y)", "y[0] = first_missing;\ny[1] = 1;\ny[2] = second_missing;\n", NULL,
                 NULL);
  cr_assert_eq(cj_program_build(engine, src, "k2", &sm90, &p), CUJIT_ERROR_COMPILE);
  msg = cujit_errmsg(engine);
  want = "kernel 'k2' failed to compile: line 1 of its body: error: identifier "
         "\"first_missing\" is undefined\n\n";
  cr_assert_eq(strncmp(msg, want, strlen(want)), 0, "got: %s", msg);
  cr_assert(strstr(msg, "second_missing"), "the log holds the second error too: %s", msg);
  free(src);
}

Test(compile, preamble_error) {
  need_nvrtc();
  char *src = generate("k(float *y)", "y[0] = twice(1.0f);",
                       "// helpers\n__device__ float twice(float v) { return 2 * w; }\n", NULL);
  cujit_program *p;
  cr_assert_eq(cj_program_build(engine, src, "k", &sm90, &p), CUJIT_ERROR_COMPILE);
  const char *msg = cujit_errmsg(engine);
  cr_assert(strstr(msg, "kernel 'k' failed to compile: line 2 of its preamble: error: identifier "
                        "\"w\" is undefined"),
            "got: %s", msg);
  free(src);
}

Test(compile, signature_type_error) {
  need_nvrtc();
  /* A type cujit knows but the kernel's code cannot see points at the signature. */
  char *src = generate("k(T *y)", "y[0] = 1;", NULL, NULL);
  cujit_program *p;
  cr_assert_eq(cj_program_build(engine, src, "k", &sm90, &p), CUJIT_ERROR_COMPILE);
  cr_assert(strstr(cujit_errmsg(engine), "kernel 'k' failed to compile: its signature: error"),
            "got: %s", cujit_errmsg(engine));
  free(src);
}

Test(compile, file_and_its_errors) {
  need_nvrtc();
  char path[400];
  snprintf(path, sizeof path, "%s/good.cu", tmpdir);
  write_file(path, saxpy_src);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile_file(engine, path, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "saxpy");
  cujit_program_free(p);

  snprintf(path, sizeof path, "%s/bad.cu", tmpdir);
  write_file(path, "// 1\n// 2\n// 3\n// 4\n// 5\nextern \"C\" __global__ void k(int *x) {\n"
                   "  x[0] = undefined_thing;\n}\n");
  cr_assert_eq(cujit_program_compile_file(engine, path, &sm90, &p), CUJIT_ERROR_COMPILE);
  char want[1200];
  snprintf(want, sizeof want, "'%s' failed to compile: %s:7: error: identifier \"undefined_thing\"",
           path, path);
  cr_assert(strstr(cujit_errmsg(engine), want), "got: %s", cujit_errmsg(engine));

  snprintf(path, sizeof path, "%s/missing.cu", tmpdir);
  cr_assert_eq(cujit_program_compile_file(engine, path, &sm90, &p), CUJIT_ERROR_IO);
  cr_assert_null(p);
  cr_assert(strstr(cujit_errmsg(engine), path), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "No such file or directory"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_program_compile_file(engine, tmpdir, &sm90, &p), CUJIT_ERROR_IO);
  cr_assert(strstr(cujit_errmsg(engine), "Is a directory"), "%s", cujit_errmsg(engine));
}

Test(compile, defines) {
  need_nvrtc();
  const char *src = "#ifndef SCALE\n#error define SCALE\n#endif\n"
                    "extern \"C\" __global__ void k(float *x) { x[0] *= SCALE; }\n";
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, "scale.cu", &sm90, &p), CUJIT_ERROR_COMPILE);
  cr_assert(strstr(cujit_errmsg(engine), "failed to compile: scale.cu:2: catastrophic error: "
                                         "#error directive: define SCALE"),
            "%s", cujit_errmsg(engine));
  const char *d3[] = {"SCALE=3.5f", "UNUSED"};
  cujit_compile_options o = {
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .defines = d3, .define_count = 2};
  cr_assert_eq(cujit_program_compile(engine, src, "scale.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  char *ptx_a = strdup(cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  const char *d4[] = {"SCALE=4.5f"};
  o.defines = d4, o.define_count = 1;
  cr_assert_eq(cujit_program_compile(engine, src, "scale.cu", &o, &p), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(p), 0, "another define is another key");
  cr_assert_str_neq(ptx_a, cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  free(ptx_a);
  const char *bad[] = {"3X=1"};
  o.defines = bad;
  cr_assert_eq(cujit_program_compile(engine, src, "scale.cu", &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'3X=1'"), "%s", cujit_errmsg(engine));
}

Test(compile, include_dirs_are_part_of_the_key) {
  need_nvrtc();
  char inc[400], sub[420], hdr[450];
  snprintf(inc, sizeof inc, "%s/inc", tmpdir);
  snprintf(sub, sizeof sub, "%s/my", inc);
  cr_assert_eq(mkdir(inc, 0755), 0);
  cr_assert_eq(mkdir(sub, 0755), 0);
  snprintf(hdr, sizeof hdr, "%s/consts.h", sub);
  write_file(hdr, "#define FACTOR 1234567\n");
  const char *src = "#include <my/consts.h>\n"
                    "extern \"C\" __global__ void k(int *x) { x[0] = FACTOR; }\n";
  const char *dirs[] = {inc};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .include_dirs = dirs,
                             .include_dir_count = 1};
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(cujit_program_ptx(p, NULL), "1234567"));
  cujit_program_free(p);
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &o, &p), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(p), 1, "same header: a hit");
  cujit_program_free(p);
  write_file(hdr, "#define FACTOR 7654321\n");
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &o, &p), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(p), 0, "the header changed: a miss");
  cr_assert(strstr(cujit_program_ptx(p, NULL), "7654321"));
  cujit_program_free(p);

  const char *missing[] = {"/nonexistent/include"};
  o.include_dirs = missing;
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "/nonexistent/include"), "%s", cujit_errmsg(engine));
}

Test(compile, other_options_change_the_key) {
  need_nvrtc();
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &sm90, &p), CUJIT_OK);
  cujit_program_free(p);
  cujit_compile_options o = {
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .fast_math = 1};
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(p), 0);
  cujit_program_free(p);
  o = (cujit_compile_options){
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .line_info = 1, .std = "c++20"};
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_program_from_cache(p), 0);
  cujit_program_free(p);
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, "other-name", &sm90, &p), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(p), 0, "the name reaches NVRTC's log");
  cujit_program_free(p);
}

Test(compile, bad_options) {
  need_nvrtc();
  cujit_program *p;
  const char *flags[] = {"--no-such-nvrtc-flag"};
  cujit_compile_options o = {.size = sizeof(cujit_compile_options),
                             .arch = "sm_90",
                             .extra_flags = flags,
                             .extra_flag_count = 1};
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "--no-such-nvrtc-flag"), "%s", cujit_errmsg(engine));
  const char *null_flag[] = {NULL};
  o.extra_flags = null_flag;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  o = (cujit_compile_options){
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .define_count = 2};
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "defines is NULL"), "%s", cujit_errmsg(engine));
  o = (cujit_compile_options){
      .size = sizeof(cujit_compile_options), .arch = "sm_90", .std = "c++ 17"};
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "std 'c++ 17' is not a language standard"), "%s",
            cujit_errmsg(engine));
  o.std = ""; /* the empty mirror: refused by cujit, not passed to NVRTC as "-std=" */
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "std '' is not a language standard"), "%s",
            cujit_errmsg(engine));
  /* an include directory that is a file, or is not there: its path and the reason */
  char file[300], missing[300];
  snprintf(file, sizeof file, "%s/plain.h", tmpdir);
  snprintf(missing, sizeof missing, "%s/no-such-dir", tmpdir);
  FILE *f = fopen(file, "w");
  cr_assert_not_null(f);
  fclose(f);
  const char *dirs[] = {file};
  o = (cujit_compile_options){.size = sizeof(cujit_compile_options),
                              .arch = "sm_90",
                              .include_dirs = dirs,
                              .include_dir_count = 1};
  char want[700];
  snprintf(want, sizeof want, "'%s' is not a directory", file);
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), want), "%s", cujit_errmsg(engine));
  dirs[0] = missing;
  snprintf(want, sizeof want, "'%s' cannot be used: No such file or directory", missing);
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), want), "%s", cujit_errmsg(engine));
  dirs[0] = tmpdir; /* a directory is taken */
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

Test(compile, arch_checks) {
  char arch[32];
  /* Each malformation, and junk after a legal suffix (the mirror: a suffix check that reads one
  ** character would let "sm_90ab" through). */
  const char *bad[] = {"sm90",       "sm_",      "sm_9",    "gfx90",        "sm_90x", "compute_",
                       "sm_90ab",    "sm_100fx", "sm_90a ", "compute_90af", "sm-90",  "sx_90",
                       "compute-90", "sm_9a",    "sm_1000", "sm_-90"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cujit_compile_options o = {.size = sizeof(cujit_compile_options), .arch = bad[i]};
    cr_assert_eq(cj_program_arch(engine, &o, arch, sizeof arch), CUJIT_ERROR_INVALID_ARGUMENT, "%s",
                 bad[i]);
    cr_assert(strstr(cujit_errmsg(engine), bad[i]), "%s", cujit_errmsg(engine));
    cr_assert(strstr(cujit_errmsg(engine), "sm_90"), "suggests a form: %s", cujit_errmsg(engine));
  }
  const char *good[] = {"sm_90a", "sm_100f", "compute_90", "compute_90a", "sm_10", "sm_999"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    cujit_compile_options ok = {.size = sizeof(cujit_compile_options), .arch = good[i]};
    cr_assert_eq(cj_program_arch(engine, &ok, arch, sizeof arch), CUJIT_OK, "%s: %s", good[i],
                 cujit_errmsg(engine));
    cr_assert_str_eq(arch, good[i]);
  }

  need_nvrtc();
  cujit_compile_options old = {.size = sizeof(cujit_compile_options), .arch = "sm_20"};
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &old, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'sm_20' is not supported"), "%s", cujit_errmsg(engine));
  int v;
  cr_assert_eq(cujit_nvrtc_version(engine, &v), CUJIT_OK);
  char by[64];
  snprintf(by, sizeof by, "not supported by NVRTC %d.%d (", v / 1000, v % 1000 / 10);
  cr_assert(strstr(cujit_errmsg(engine), by), "names NVRTC's version (%s): %s", by,
            cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "sm_90"), "lists the supported: %s", cujit_errmsg(engine));
  /* A device newer than NVRTC, no arch given: the highest NVRTC supports instead (an explicit
  ** one was refused above). */
  cr_assert_eq(cj_compile_arch(engine, NULL, "sm_999", arch, sizeof arch), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  int highest = 0;
  cr_assert(sscanf(arch, "sm_%d", &highest) == 1 && highest >= 90 && highest < 999, "%s", arch);
  snprintf(by, sizeof by, "sm_%d", highest + 1);
  cr_assert_eq(cj_compile_arch(engine, NULL, by, arch, sizeof arch), CUJIT_OK);
  cr_assert_eq(atoi(arch + 3), highest, "%s: the same highest for any newer device", arch);
  snprintf(by, sizeof by, "sm_%d", highest);
  cr_assert_eq(cj_compile_arch(engine, NULL, by, arch, sizeof arch), CUJIT_OK);
  cr_assert_str_eq(arch, by, "its own highest is kept");
}

Test(compile, arch_from_the_device) {
  char arch[32];
  cujit_status st = cj_program_arch(engine, NULL, arch, sizeof arch);
  if (st == CUJIT_OK) {
    cr_assert_eq(strncmp(arch, "sm_", 3), 0, "%s", arch);
    return;
  }
  cr_assert(st == CUJIT_ERROR_NO_DRIVER || st == CUJIT_ERROR_NO_DEVICE, "status %d", st);
  cr_assert(strstr(cujit_errmsg(engine), "no GPU to take the arch from ("), "%s",
            cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "pass an explicit arch such as sm_90"), "%s",
            cujit_errmsg(engine));
}

Test(compile, argument_checks) {
  cujit_program *p = (cujit_program *)1;
  cr_assert_eq(cujit_program_compile(NULL, saxpy_src, NULL, &sm90, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_program_compile(engine, NULL, NULL, &sm90, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_null(p);
  cr_assert(strstr(cujit_errmsg(engine), "source is NULL"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &sm90, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_program_compile_file(engine, NULL, &sm90, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(cujit_program_compile_file(engine, "", &sm90, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_program_free(NULL);
  cr_assert_eq(cujit_program_kernel_count(NULL), 0);
  cr_assert_null(cujit_program_kernel_name(NULL, 0));
  size_t len = 5;
  cr_assert_null(cujit_program_ptx(NULL, &len));
  cr_assert_eq(len, 0);
  cr_assert_str_eq(cujit_program_log(NULL), "");
}

Test(compile, no_kernel_in_the_source) {
  need_nvrtc();
  cujit_program *p;
  cr_assert_eq(
      cujit_program_compile(engine, "__device__ int f() { return 1; }\n", "dev.cu", &sm90, &p),
      CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "dev.cu"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "no __global__ kernel"), "%s", cujit_errmsg(engine));
}

Test(compile, embedded_headers) {
  need_nvrtc();
  const char *src = "#include <cujit/grid.h>\n"
                    "extern \"C\" __global__ void g(int *x) { x[cujit::grid1()] = 1; }\n";
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, NULL, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

Test(compile, refcounts) {
  need_nvrtc();
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &sm90, &p), CUJIT_OK);
  cj_program_retain(p); /* as a kernel would */
  cujit_program_free(p);
  cr_assert_str_eq(p->kernels[0].name, "saxpy", "still alive for the other holder");
  cj_program_release(p);
  /* A program the user never frees goes with the engine (checked by leak tools). */
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, NULL, &sm90, &p), CUJIT_OK);
}

/* The map of loaded programs: a second program of the same key shares the first one's record
** (bytes, kernels, modules) but has its own log and from_cache; a cleared cache makes a new one. */
Test(compile, programs_of_one_key_share_a_record) {
  need_nvrtc();
  cujit_program *a, *b, *c;
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, "s.cu", &sm90, &a), CUJIT_OK);
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, "s.cu", &sm90, &b), CUJIT_OK);
  cr_assert_neq(a, b, "one handle per compile, each freed on its own");
  cr_assert_eq(cujit_program_from_cache(a), 0);
  cr_assert_eq(cujit_program_from_cache(b), 1);
  cr_assert_eq(cujit_program_ptx(a, NULL), cujit_program_ptx(b, NULL), "the bytes are shared");
  cr_assert_eq(a->kernels, b->kernels, "the kernels read from the source are shared");
  cujit_program_free(a);
  cr_assert_str_eq(b->kernels[0].name, "saxpy", "the record outlives the first handle");
  cujit_kernel *k1, *k2;
  cr_assert_eq(cujit_kernel_define(engine, "twice(float *y)", "y[0] = 1;", NULL, &sm90, &k1),
               CUJIT_OK);
  cr_assert_eq(cujit_kernel_define(engine, "twice(float *y)", "y[0] = 1;", NULL, &sm90, &k2),
               CUJIT_OK);
  cr_assert_eq(cujit_kernel_source(k1), cujit_kernel_source(k2), "defined twice, built once");
  cr_assert_eq(cujit_cache_clear(engine), CUJIT_OK);
  cr_assert_eq(cujit_program_compile(engine, saxpy_src, "s.cu", &sm90, &c), CUJIT_OK);
  cr_assert_eq(cujit_program_from_cache(c), 0, "a cleared cache compiles again");
  cr_assert_neq(cujit_program_ptx(c, NULL), cujit_program_ptx(b, NULL), "into a new record");
  cr_assert_str_eq(cujit_program_ptx(c, NULL), cujit_program_ptx(b, NULL));
  cujit_program_free(b);
  cujit_program_free(c);
  cujit_kernel_free(k1);
  cujit_kernel_free(k2);
}

/* The map of loaded programs past its first size (64 buckets, grown past 2 records a bucket) and
** past its bound (1,024 records, past which the records no program holds are dropped): 1,100
** programs of their own (PTX only, for speed), every fourth held. Compiled again, each comes back
** with its own code, and each held one with its record (the same bytes): found after every growth
** and every drop, twice over (the second round passes the bound again). Under the sanitizers a
** record lost from the buckets, or freed while held, is a leak or a use after free. */
Test(compile, the_program_map_grows_and_drops_only_records_nothing_holds, .timeout = 600) {
  need_nvrtc();
  enum { N = 1100, EVERY = 4 };
  static cujit_program *held[N / EVERY];
  const cujit_compile_options ptx_only = {.size = sizeof(cujit_compile_options),
                                          .arch = "compute_90"};
  char src[128], value[16];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) {
      snprintf(src, sizeof src, "extern \"C\" __global__ void k(int *x) { *x = %d; }", 100000 + i);
      snprintf(value, sizeof value, "%d", 100000 + i);
      cujit_program *p;
      cr_assert_eq(cujit_program_compile(engine, src, NULL, &ptx_only, &p), CUJIT_OK,
                   "round %d, program %d: %s", round, i, cujit_errmsg(engine));
      cr_assert_eq(cujit_program_from_cache(p), round > 0, "round %d, program %d", round, i);
      cr_assert(strstr(cujit_program_ptx(p, NULL), value), "round %d: program %d's own code", round,
                i);
      if (i % EVERY) {
        cujit_program_free(p);
      } else if (round == 0) {
        held[i / EVERY] = p;
      } else {
        cr_assert_eq(cujit_program_ptx(p, NULL), cujit_program_ptx(held[i / EVERY], NULL),
                     "round %d: held program %d found in the map (its record, not a new one)",
                     round, i);
        cujit_program_free(p);
      }
    }
  }
  for (int i = 0; i < N / EVERY; i++) cujit_program_free(held[i]);
}

/* Each NVRTC call that fails is an error naming the call (a stand-in NVRTC fails the one named
** by CJ_TEST_NVRTC_FAIL, tests/c/nvrtc_failing.c); the program log unavailable is no error. */
Test(compile, nvrtc_failures_are_errors_naming_the_call) {
  need_nvrtc();
  setenv("CUJIT_NVRTC", CJ_TEST_NVRTC_FAILING, 1);
  static const char *const calls[] = {"nvrtcCreateProgram",    "nvrtcAddNameExpression",
                                      "nvrtcCompileProgram",   "nvrtcGetPTXSize",
                                      "nvrtcGetPTX",           "nvrtcGetCUBINSize",
                                      "nvrtcGetCUBIN",         "nvrtcGetLoweredName",
                                      "nvrtcGetProgramLogSize"};
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
    setenv("CJ_TEST_NVRTC_FAIL", calls[i], 1);
    cujit_engine *e;
    cr_assert_eq(cujit_open(&e), CUJIT_OK);
    char src[1024]; /* a source of its own, so that no run is a cache hit */
    snprintf(src, sizeof src, "// %s\n%s__global__ void cxxk(int *p) { *p = 1; }\n", calls[i],
             saxpy_src);
    cujit_program *p = NULL;
    cujit_status st = cujit_program_compile(e, src, NULL, &sm90, &p);
    if (strcmp(calls[i], "nvrtcGetProgramLogSize") == 0) {
      cr_assert_eq(st, CUJIT_OK, "%s: %s", calls[i], cujit_errmsg(e));
      cujit_program_free(p);
    } else {
      cr_assert_neq(st, CUJIT_OK, "%s failing", calls[i]);
      cr_assert_null(p);
      const char *says =
          strcmp(calls[i], "nvrtcCompileProgram") == 0 ? "NVRTC failed compiling" : calls[i];
      cr_assert(strstr(cujit_errmsg(e), says), "%s: %s", calls[i], cujit_errmsg(e));
      cr_assert(strstr(cujit_errmsg(e), "NVRTC_ERROR_INTERNAL_ERROR"), "%s", cujit_errmsg(e));
    }
    cujit_close(e);
  }
  unsetenv("CJ_TEST_NVRTC_FAIL");
}
