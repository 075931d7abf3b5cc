/*
** test_cpu_names.c -- every name NVRTC takes works on the CPU device too: kernels, __device__
** functions and variables named as what the host's system headers declare (unistd.h, cmath,
** cstring, ...) or as the entries' own parameters, kernels named as functions cujit's headers
** call, a program's members and calls named as its kernels, and overloads of CUDA's functions.
** Needs only g++: runs on CI.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "case_engine.h"
#include "cujit.h"
#include "expect.h"
#include "scratch.h"

/* Names NVRTC 13 takes as extern "C" kernels, __device__ functions and __device__ variables that
** failed on the CPU device only: the entry's parameters (w, l) and what the prelude's system
** headers declare (unistd.h, sys/mman.h, cstdlib, cmath, cstring, ctime, ...). */
static const char *const taken_names[] = {
    "w",      "l",      "x",      "sync",    "index",  "select",  "time",   "read",
    "write",  "close",  "remove", "rename",  "link",   "pipe",    "dup",    "sleep",
    "mmap",   "system", "random", "rand",    "gamma",  "isnan",   "isinf",  "div",
    "memcpy", "exit",   "abort",  "fork",    "access", "getpid",  "usleep", "alarm",
    "brk",    "sbrk",   "srand",  "drand48", "qsort",  "bsearch", "atoi",   "strlen",
    "strcpy", "bzero",  "ffs",    "clock",   "signal", "open",    "stat",   "kill"};
enum { NAMES = sizeof taken_names / sizeof taken_names[0] };
/* NVRTC declares the variables isnan, isinf, memcpy, clock (functions of its own) in no program. */
static int nvrtc_takes_as_variable(const char *n) {
  return strcmp(n, "isnan") && strcmp(n, "isinf") && strcmp(n, "memcpy") && strcmp(n, "clock");
}

static void run_named(cujit_program *p, const char *name, cujit_buffer *o, int i) {
  cujit_kernel *k = NULL;
  cr_assert_eq(cujit_program_kernel(p, name, &k), CUJIT_OK, "kernel '%s': %s", name,
               cujit_errmsg(engine));
  cujit_launch_config cfg = launch_1d(1, 1);
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o), CUJIT_ARG_I(i)}, 2));
}

Test(names, every_kernel_name_nvrtc_takes, .init = open_cpu, .fini = close_engine) {
  static char src[16384];
  size_t at = 0;
  for (int i = 0; i < NAMES; i++)
    at += (size_t)snprintf(src + at, sizeof src - at,
                           "extern \"C\" __global__ void %s(int *o, int i) { o[i] = i + 1; }\n",
                           taken_names[i]);
  /* also a C++ kernel, and a name expression over a type of the program's own named as a C
  ** library function */
  snprintf(src + at, sizeof src - at,
           "struct index { int v; };\n"
           "template <class T> __global__ void fill(int *o, int i) { o[i] = sizeof(T) + 100; }\n");
  cujit_compile_options op = CUJIT_COMPILE_OPTIONS_INIT;
  const char *exprs[] = {"fill<index>"};
  op.name_expressions = exprs, op.name_expression_count = 1;
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(engine, src, "names.cu", &op, &p));
  cujit_buffer *o = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, (NAMES + 1) * sizeof(int), CUJIT_I32, &o));
  for (int i = 0; i < NAMES; i++) run_named(p, taken_names[i], o, i);
  run_named(p, "fill<index>", o, NAMES);
  int got[NAMES + 1];
  EXPECT_OK(cujit_memcpy_dtoh(got, o, 0, sizeof got, NULL));
  for (int i = 0; i < NAMES; i++)
    cr_expect_eq(got[i], i + 1, "kernel '%s' wrote %d", taken_names[i], got[i]);
  cr_expect_eq(got[NAMES], 104);
  cujit_buffer_free(o);
  cujit_program_free(p);
  /* and through cujit_kernel_define, the signature-and-body form */
  for (int i = 0; i < 3; i++) {
    char sig[64];
    snprintf(sig, sizeof sig, "%s(int *o, int i)", taken_names[i * 7]);
    cujit_kernel *k = NULL;
    EXPECT_OK(cujit_kernel_define(engine, sig, "o[i] = 7;", NULL, NULL, &k));
    cujit_kernel_free(k);
  }
}

/* Kernels named as functions that cujit's headers call (grid.h's member initialiser first(...)
** and range-for end(), reduce.h's block_rank(...), random.h's log(...)): only the kernel's own
** declarators get the reserved name, so a header's `name(` is left alone (a macro renaming every
** `name(` broke grid.h's first(...)). */
Test(names, kernels_named_as_functions_headers_call, .init = open_cpu, .fini = close_engine) {
  static const char *const names[] = {"first", "end",         "block_rank", "warp_sum",
                                      "log",   "make_float4", "grid1"};
  enum { N = sizeof names / sizeof names[0] };
  static char src[4096];
  size_t at = (size_t)snprintf(src, sizeof src,
                               "#include <cujit/grid.h>\n#include <cujit/reduce.h>\n"
                               "#include <cujit/random.h>\n");
  for (int i = 0; i < N; i++)
    at += (size_t)snprintf(src + at, sizeof src - at,
                           "extern \"C\" __global__ void %s(int *o, int i) { o[i] = i + 1; }\n",
                           names[i]);
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(engine, src, "header_names.cu", NULL, &p));
  cujit_buffer *o = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, N * sizeof(int), CUJIT_I32, &o));
  for (int i = 0; i < N; i++) run_named(p, names[i], o, i);
  int got[N];
  EXPECT_OK(cujit_memcpy_dtoh(got, o, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++) cr_expect_eq(got[i], i + 1, "kernel '%s' wrote %d", names[i], got[i]);
  cujit_buffer_free(o);
  cujit_program_free(p);
  cujit_kernel *k = NULL; /* the signature-and-body form includes cujit's headers itself */
  EXPECT_OK(cujit_kernel_define(engine, "first(int *o, int i)", "o[i] = 7;", NULL, NULL, &k));
  cujit_kernel_free(k);
}

/* The program's own members and calls named as its extern "C" kernels: a member initialised as
** first(x), a method called as s.at(i), a range-for over a class with begin()/end(), and a kernel
** a macro writes (which keeps its plain name, though cujit's check redeclares it in an extern "C"
** block). A macro renaming every `name(` broke the first three (the member's declaration `int
** first;` has no parenthesis; s.at(i) became s.__cj_k_at(i)); renaming the check's redeclaration
** alone made the macro-written kernel's entry call a null weak symbol. */
Test(names, members_and_calls_named_as_kernels, .init = open_cpu, .fini = close_engine) {
  static const char src[] =
      "struct pair_ { int first; __device__ pair_(int x) : first(x) {} };\n"
      "struct box { int v[4]; __device__ int at(int i) const { return v[i]; } };\n"
      "struct span_ { int n; struct it { int i; __device__ int operator*() const { return i; }\n"
      "  __device__ void operator++() { i++; } __device__ bool operator!=(it o) const {\n"
      "  return i != o.i; } };\n"
      "  __device__ it begin() const { return {0}; } __device__ it end() const { return {n}; } };\n"
      "extern \"C\" __global__ void first(int *o) { pair_ p(41); o[0] = p.first + 1; }\n"
      "extern \"C\" __global__ void at(int *o) { box b = {{5, 6, 7, 8}}; o[1] = b.at(2); }\n"
      "extern \"C\" __global__ void end(int *o) { int t = 0; for (int i : span_{5}) t += i;\n"
      "  o[2] = t; }\n"
      "#define MAKE(name, value) extern \"C\" __global__ void name(int *o) { o[3] = value; }\n"
      "MAKE(made, 99)\n";
  /* a kernel a macro writes is not read from the text: the signatures option names them all */
  const char *sigs[] = {"first(int *o)", "at(int *o)", "end(int *o)", "made(int *o)"};
  cujit_compile_options op = CUJIT_COMPILE_OPTIONS_INIT;
  op.signatures = sigs, op.signature_count = 4;
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(engine, src, "members.cu", &op, &p));
  cujit_buffer *o = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 4 * sizeof(int), CUJIT_I32, &o));
  const char *names[] = {"first", "at", "end", "made"};
  for (int i = 0; i < 4; i++) {
    cujit_kernel *k = NULL;
    cr_assert_eq(cujit_program_kernel(p, names[i], &k), CUJIT_OK, "kernel '%s': %s", names[i],
                 cujit_errmsg(engine));
    cujit_launch_config cfg = launch_1d(1, 1);
    EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o)}, 1));
  }
  int got[4];
  EXPECT_OK(cujit_memcpy_dtoh(got, o, 0, sizeof got, NULL));
  cr_expect(got[0] == 42 && got[1] == 7 && got[2] == 10 && got[3] == 99, "%d %d %d %d", got[0],
            got[1], got[2], got[3]);
  cujit_buffer_free(o);
  cujit_program_free(p);
}

Test(names, every_function_and_variable_name_nvrtc_takes, .init = open_cpu, .fini = close_engine) {
  static char src[32768];
  size_t at = 0;
  for (int i = 0; i < NAMES; i++)
    at += (size_t)snprintf(src + at, sizeof src - at,
                           "namespace f { __device__ int %s(int x) { return x + %d; } }\n",
                           taken_names[i], i);
  for (int i = 0; i < NAMES; i++)
    if (nvrtc_takes_as_variable(taken_names[i]))
      at += (size_t)snprintf(src + at, sizeof src - at, "__device__ int %s = %d;\n", taken_names[i],
                             1000 + i);
  at += (size_t)snprintf(src + at, sizeof src - at,
                         "__device__ int own = 77;\n"
                         "extern \"C\" __global__ void use(int *o) {\n  int k = 0;\n");
  for (int i = 0; i < NAMES; i++)
    at += (size_t)snprintf(src + at, sizeof src - at, "  o[k++] = f::%s(0);\n", taken_names[i]);
  for (int i = 0; i < NAMES; i++)
    if (nvrtc_takes_as_variable(taken_names[i]))
      at += (size_t)snprintf(src + at, sizeof src - at, "  o[k++] = %s;\n", taken_names[i]);
  /* at file scope too, not in a namespace: functions named as the C library's, other types */
  snprintf(src + at, sizeof src - at,
           "  o[k++] = ::own;\n}\n"
           /* overloads of CUDA's functions, helper_math.h's way, here and in an included header */
           "__device__ float2 fminf(float2 a, float2 b) {\n"
           "  return make_float2(fminf(a.x, b.x), fminf(a.y, b.y));\n}\n"
           "__device__ int3 abs(int3 v) { return make_int3(abs(v.x), abs(v.y), abs(v.z)); }\n"
           "#include <more_math.h>\n"
           "__device__ float2 fmaxf(float2 a, float2 b) {\n"
           "  return make_float2(fmaxf(a.x, b.x), fmaxf(a.y, b.y));\n}\n"
           "extern \"C\" __global__ void use2(float *o) {\n"
           "  float2 m = fminf(make_float2(1, 5), make_float2(2, 3));\n"
           "  o[0] = m.x + m.y + fminf(7.0f, 6.0f);\n"
           "  o[1] = abs(make_int3(-1, 2, -3)).z + abs(-4) + fmaxf(make_float3(1, 2, 3), "
           "make_float3(3, 2, 1)).x + fmaxf(make_float2(0, 9), make_float2(1, 1)).y +\n"
           "         fmaxf(1.0f, 5.0f, 2.0f);\n}\n");
  const char *dir = cj_scratch_make("names");
  /* (the float3 overload is found by its argument's namespace anyway, the float one is not) */
  cj_scratch_write("more_math.h",
                   "__device__ float3 fmaxf(float3 a, float3 b) {\n"
                   "  return make_float3(fmaxf(a.x, b.x), fmaxf(a.y, b.y), fmaxf(a.z, b.z));\n}\n"
                   "__device__ float fmaxf(float a, float b, float c) { return fmaxf(fmaxf(a, b), "
                   "c); }\n");
  cujit_compile_options op = CUJIT_COMPILE_OPTIONS_INIT;
  const char *dirs[] = {dir};
  op.include_dirs = dirs, op.include_dir_count = 1;
  cujit_program *p = NULL;
  cujit_status st = cujit_program_compile(engine, src, "names.cu", &op, &p);
  cj_scratch_remove();
  EXPECT_OK(st);
  cujit_buffer *o = NULL, *of = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 2 * NAMES * sizeof(int), CUJIT_I32, &o));
  EXPECT_OK(cujit_buffer_alloc(engine, 2 * sizeof(float), CUJIT_F32, &of));
  cujit_kernel *k = NULL, *k2 = NULL;
  EXPECT_OK(cujit_program_kernel(p, "use", &k));
  EXPECT_OK(cujit_program_kernel(p, "use2", &k2));
  cujit_launch_config cfg = launch_1d(1, 1);
  EXPECT_OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(o)}, 1));
  EXPECT_OK(cujit_launch(k2, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(of)}, 1));
  int got[2 * NAMES];
  float gotf[2];
  EXPECT_OK(cujit_memcpy_dtoh(got, o, 0, sizeof got, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(gotf, of, 0, sizeof gotf, NULL));
  int j = 0;
  for (int i = 0; i < NAMES; i++, j++)
    cr_expect_eq(got[j], i, "function '%s' gave %d", taken_names[i], got[j]);
  for (int i = 0; i < NAMES; i++)
    if (nvrtc_takes_as_variable(taken_names[i])) {
      cr_expect_eq(got[j], 1000 + i, "variable '%s' held %d", taken_names[i], got[j]);
      j++;
    }
  cr_expect_eq(got[j], 77, "::own held %d", got[j]);
  cr_expect(gotf[0] == 10.0f && gotf[1] == 24.0f, "%g %g", gotf[0], gotf[1]);
  /* the host finds the variables by their names */
  for (int i = 0; i < NAMES; i++) {
    if (!nvrtc_takes_as_variable(taken_names[i])) continue;
    cujit_buffer *b = NULL;
    cujit_dtype dt;
    int ndim;
    size_t shape[3];
    cr_assert_eq(cujit_program_global(p, taken_names[i], &b, &dt, &ndim, shape), CUJIT_OK,
                 "global '%s': %s", taken_names[i], cujit_errmsg(engine));
    int v = 0;
    EXPECT_OK(cujit_memcpy_dtoh(&v, b, 0, sizeof v, NULL));
    cr_expect_eq(v, 1000 + i, "global '%s' = %d", taken_names[i], v);
    cujit_buffer_free(b);
  }
  cujit_buffer_free(o);
  cujit_buffer_free(of);
  cujit_kernel_free(k);
  cujit_kernel_free(k2);
  cujit_program_free(p);
}
