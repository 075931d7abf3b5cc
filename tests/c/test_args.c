/*
** test_args.c -- the arguments real code passes, through the C API (issue 22): the standard
** typedefs read with their target sizes; the compiled names of static, namespaced and
** anonymous-namespace variables read back into the source's words (NVRTC's and g++'s manglings);
** a NULL buffer or address 0 for any pointer, and the nonnull option refusing it by name;
** cujit_program_global on such variables, filled from the host and read by a kernel; a
** 32000-byte struct by value. On the GPU, or the CPU device without one; NVRTC's view for an
** explicit sm_90 where NVRTC is.
*/
#include <criterion/criterion.h>
#include <string.h>

#include "fixture.h"
#include "gpu.h"
#include "lang/signature.h"
#include "lang/symbols.h"

TestSuite(args, .init = cj_fixture_open, .fini = cj_fixture_close);

static cj_signature parse(const char *text) {
  cj_signature s;
  char err[512];
  cr_assert_eq(cj_signature_parse(text, &s, err, sizeof err), CUJIT_OK, "%s: %s", text, err);
  return s;
}

/* (The exact-width types and ptrdiff_t: test_signature's table.) */
Test(args, standard_typedefs_have_the_targets_sizes) {
  static const struct {
    const char *type, *spelled;
    cujit_dtype dtype;
    size_t size;
  } want[] = {
      {"clock_t", "clock_t", CUJIT_I64, 8},
      {"time_t", "time_t", CUJIT_I64, 8},
      {"ssize_t", "ssize_t", CUJIT_I64, 8},
      {"intptr_t", "intptr_t", CUJIT_I64, 8},
      {"uintptr_t", "uintptr_t", CUJIT_U64, 8},
      {"intmax_t", "intmax_t", CUJIT_I64, 8},
      {"uintmax_t", "uintmax_t", CUJIT_U64, 8},
      {"int_least8_t", "int_least8_t", CUJIT_I8, 1},
      {"int_least16_t", "int_least16_t", CUJIT_I16, 2},
      {"int_least32_t", "int_least32_t", CUJIT_I32, 4},
      {"int_least64_t", "int_least64_t", CUJIT_I64, 8},
      {"uint_least8_t", "uint_least8_t", CUJIT_U8, 1},
      {"uint_least16_t", "uint_least16_t", CUJIT_U16, 2},
      {"uint_least32_t", "uint_least32_t", CUJIT_U32, 4},
      {"uint_least64_t", "uint_least64_t", CUJIT_U64, 8},
      {"int_fast8_t", "int_fast8_t", CUJIT_I8, 1},
      {"int_fast64_t", "int_fast64_t", CUJIT_I64, 8},
      {"uint_fast8_t", "uint_fast8_t", CUJIT_U8, 1},
      {"uint_fast64_t", "uint_fast64_t", CUJIT_U64, 8},
      {"uint", "unsigned int", CUJIT_U32, 4},
      {"ushort", "unsigned short", CUJIT_U16, 2},
      {"uchar", "unsigned char", CUJIT_U8, 1},
      {"ulong", "unsigned long", CUJIT_U64, 8},
      {"longlong", "long long", CUJIT_I64, 8},
      {"ulonglong", "unsigned long long", CUJIT_U64, 8},
      {"size_t", "size_t", CUJIT_U64, 8},
      {"long", "long", CUJIT_I64, 8}, /* LP64, as CUDA's 64-bit targets */
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    char text[128];
    snprintf(text, sizeof text, "k(char c, %s v, const %s *p)", want[i].type, want[i].type);
    cj_signature s = parse(text);
    cr_assert_str_eq(s.params[1].type, want[i].spelled, "%s", want[i].type);
    cr_assert_eq(s.params[1].dtype, want[i].dtype, "%s", want[i].type);
    cr_assert_eq(s.params[1].size, want[i].size, "%s", want[i].type);
    cr_assert_eq(s.params[1].align, want[i].size, "%s", want[i].type);
    cr_assert_eq(s.params[1].offset, want[i].size, "%s after a char", want[i].type);
    cr_assert_eq(s.params[2].dtype, want[i].dtype, "a pointer to %s", want[i].type);
    cj_signature_free(&s);
  }
  /* 2 and 4 bytes under NVRTC's libcu++, 8 under glibc: no one size, so not read. */
  static const char *const unsized[] = {"int_fast16_t", "int_fast32_t", "uint_fast16_t",
                                        "uint_fast32_t"};
  for (size_t i = 0; i < sizeof unsized / sizeof *unsized; i++) {
    cj_signature s;
    char err[512], text[64];
    snprintf(text, sizeof text, "k(%s v)", unsized[i]);
    cr_assert_eq(cj_signature_parse(text, &s, err, sizeof err), CUJIT_ERROR_SIGNATURE, "%s", text);
    cr_assert(strstr(err, unsized[i]), "%s", err);
  }
}

Test(args, compiled_names_read_back_into_the_sources_words,
     .timeout = 30) { /* a loop that never ends fails */
  static const struct {
    const char *symbol, *name;
    int fits;
  } cases[] = {
      {"taps", "taps", 1},
      {"taps", "::taps", 1},
      {"taps", "tap", 0},
      {"_ZL4taps", "taps", 1},                                        /* static, g++ */
      {"_ZN4__cjL4tapsE", "taps", 1},                                 /* static, the CPU device */
      {"_ZN4__cj4tapsE", "taps", 1},                                  /* at file scope there */
      {"_ZN4__cj12_GLOBAL__N_16anon_cE", "anon_c", 1},                /* anonymous namespace */
      {"_ZN2ns5scaleE", "ns::scale", 1},                              /* NVRTC, a namespace's */
      {"_ZN2ns5scaleE", "scale", 0},                                  /* named with its namespace */
      {"_ZN2ns5scaleE", "ns::scal", 0},                               /* */
      {"_ZN2ns5scaleE", "ns::scalee", 0},                             /* */
      {"_ZN2ns5scaleE", "nx::scale", 0},                              /* */
      {"_ZN4__cj2ns5scaleE", "ns::scale", 1},                         /* the CPU device */
      {"_ZN2ns4__cj5scaleE", "scale", 0},                             /* __cj only outermost */
      {"_ZN31_INTERNAL_00000000_8__source__k2ns3offE", "ns::off", 1}, /* NVRTC, static */
      {"_ZN31_INTERNAL_00000000_8__source__k33_GLOBAL__N__00000000_8__source__k6anon_cE", "anon_c",
       1},
      {"_ZN31_INTERNAL_00000000_8__source__k2ns33_GLOBAL__N__00000000_8__source__k6hiddenE",
       "ns::hidden", 1},
      {"_ZN1a1b1cE", "a::b::c", 1},
      {"_ZN1a1b1cE", "a::c", 0},
      {"_Z5scaleIfEvPT_", "scale", 0}, /* a function template */
      {"_ZN2ns5scaleE_", "ns::scale", 0},
      {"_ZN2ns99scaleE", "ns::scale", 0}, /* a length past the end */
      {"_Z", "x", 0},
      {"_ZNSt1xE", "x", 0}, /* a substitution (St: std) first: not read, and not looped on */
      {"_ZN2nsIiE1vE", "ns::v", 0}, /* template arguments inside */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_assert_eq(cj_symbol_names_variable(cases[i].symbol, strlen(cases[i].symbol), cases[i].name),
                 cases[i].fits, "'%s' as '%s'", cases[i].symbol, cases[i].name);
  /* a name ends at its NUL: what lies past it (here ":b") is never read as more of it */
  static const char past_the_end[] = "a\0:b";
  cr_assert_eq(cj_symbol_names_variable("_ZN1a1bE", 8, past_the_end), 0, "a::b as 'a'");
}

static const char *src =
    "// a bias that is optional, and a filter's coefficients in constants\n"
    "__global__ void axpb(int n, float a, const float *x, const float *bias,\n"
    "                     float *y) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + (bias ? bias[i] : 0.0f);\n"
    "}\n"
    "static __constant__ float weights[3];\n"
    "namespace tune { static __device__ float shift; }\n"
    "namespace { __constant__ int stride; }\n"
    "__global__ void blend(const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float s = 0;\n"
    "  for (int k = 0; k < 3; k++) s += weights[k] * x[(i + k * stride) % n];\n"
    "  y[i] = s + tune::shift;\n"
    "}\n";

static cujit_program *compile(const char *const *nonnull, size_t count) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.nonnull = nonnull, o.nonnull_count = count;
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "args.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  return p;
}

enum { N = 300 };

static void axpb_host(float a, const float *x, const float *bias, float *y) {
  for (int i = 0; i < N; i++) y[i] = a * x[i] + (bias ? bias[i] : 0.0f);
}

static cujit_status launch_axpb(cujit_kernel *k, float a, cujit_arg x, cujit_arg bias,
                                cujit_arg y) {
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  cujit_arg args[] = {CUJIT_ARG_I(N), CUJIT_ARG_F(a), x, bias, y};
  return cujit_launch(k, &cfg, args, 5); /* the copy back waits for it */
}

Test(args, a_null_buffer_or_address_0_for_any_pointer) {
  CJ_NEED_DEVICE(engine);
  float x[N], bias[N], got[N], want[N];
  for (int i = 0; i < N; i++)
    x[i] = (float)(cj_test_rand64() % 1000) / 64, bias[i] = (float)(cj_test_rand64() % 100) - 50;
  cujit_program *p = compile(NULL, 0);
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "axpb", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  cr_assert_eq(cujit_kernel_param(k, 3, &info), CUJIT_OK);
  cr_assert(info.nullable, "bias takes NULL with no '= NULL'");
  cujit_buffer *dx = cj_test_upload(x, sizeof x, CUJIT_F32),
               *db = cj_test_upload(bias, sizeof bias, CUJIT_F32),
               *dy = cj_test_upload(NULL, sizeof got, CUJIT_F32);
  cr_assert_eq(launch_axpb(k, 1.5f, CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(NULL), CUJIT_ARG_BUF(dy)),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(got, dy, sizeof got);
  axpb_host(1.5f, x, NULL, want);
  cr_assert_arr_eq(got, want, sizeof got, "a * x with a NULL bias");
  cujit_arg zero = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0};
  cr_assert_eq(launch_axpb(k, -2, CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(db), CUJIT_ARG_BUF(dy)),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(got, dy, sizeof got);
  axpb_host(-2, x, bias, want);
  cr_assert_arr_eq(got, want, sizeof got, "a * x + bias");
  cr_assert_eq(launch_axpb(k, 3, CUJIT_ARG_BUF(dx), zero, CUJIT_ARG_BUF(dy)), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cj_test_download(got, dy, sizeof got);
  axpb_host(3, x, NULL, want);
  cr_assert_arr_eq(got, want, sizeof got, "a * x with address 0 for bias");
  /* A buffer of another dtype is refused as before. */
  cujit_buffer *ints = cj_test_upload(NULL, N * 4, CUJIT_I32);
  cr_assert_eq(launch_axpb(k, 1, CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(ints), CUJIT_ARG_BUF(dy)),
               CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'bias'"), "%s", cujit_errmsg(engine));
  cujit_kernel_free(k);
  cujit_program_free(p);
  /* nonnull: NULL and address 0 refused for the parameters named, naming them. */
  static const char *named[] = {"x", "y"};
  p = compile(named, 2);
  cr_assert_eq(cujit_program_kernel(p, "axpb", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_param(k, 2, &info), CUJIT_OK);
  cr_assert(!info.nullable, "x is named");
  cr_assert_eq(launch_axpb(k, 1, CUJIT_ARG_BUF(NULL), CUJIT_ARG_BUF(NULL), CUJIT_ARG_BUF(dy)),
               CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "argument 3 'x'"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "nonnull"), "%s", cujit_errmsg(engine));
  cr_assert_eq(launch_axpb(k, 1, CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(NULL), zero),
               CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "argument 5 'y'"), "%s", cujit_errmsg(engine));
  cr_assert_eq(launch_axpb(k, 1, CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(NULL), CUJIT_ARG_BUF(dy)),
               CUJIT_OK, "bias is not named: %s", cujit_errmsg(engine));
  cujit_kernel_free(k);
  cujit_program_free(p);
  /* A name that is no pointer parameter: an error listing those there are. */
  static const char *wrong[] = {"n"};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.nonnull = wrong, o.nonnull_count = 1;
  cr_assert_eq(cujit_program_compile(engine, src, "args.cu", &o, &p), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'n'"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "axpb.bias"), "%s", cujit_errmsg(engine));
  cujit_buffer_free(dx), cujit_buffer_free(db), cujit_buffer_free(dy), cujit_buffer_free(ints);
}

/* Fills a program variable found by name from the host, checking its dtype and count. */
static void set_global(cujit_program *p, const char *name, const void *data, size_t bytes,
                       cujit_dtype dtype) {
  cujit_buffer *g;
  cujit_dtype d;
  int ndim;
  size_t shape[3];
  cr_assert_eq(cujit_program_global(p, name, &g, &d, &ndim, shape), CUJIT_OK, "%s: %s", name,
               cujit_errmsg(engine));
  cr_assert_eq(d, dtype, "%s's dtype", name);
  cr_assert_eq(shape[0] * cujit_dtype_size(d), bytes, "%s's size", name);
  cr_assert_eq(cujit_memcpy_htod(g, 0, data, bytes, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer_free(g);
}

Test(args, static_and_namespaced_variables_by_name) {
  CJ_NEED_DEVICE(engine);
  cujit_program *p = compile(NULL, 0);
  float weights[3] = {0.5f, -0.25f, 2.0f}, shift = 10.0f;
  int stride = 7;
  set_global(p, "weights", weights, sizeof weights, CUJIT_F32);
  set_global(p, "tune::shift", &shift, sizeof shift, CUJIT_F32);
  set_global(p, "stride", &stride, sizeof stride, CUJIT_I32);
  float x[N], got[N], want[N];
  for (int i = 0; i < N; i++) x[i] = (float)(cj_test_rand64() % 512) / 8 - 32;
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int k = 0; k < 3; k++) s += weights[k] * x[(i + k * stride) % N];
    want[i] = s + shift;
  }
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "blend", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer *dx = cj_test_upload(x, sizeof x, CUJIT_F32),
               *dy = cj_test_upload(NULL, sizeof got, CUJIT_F32);
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  cujit_arg args[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy), CUJIT_ARG_I(N)};
  cr_assert_eq(cujit_launch(k, &cfg, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(got, dy, sizeof got);
  for (int i = 0; i < N; i++) cr_assert_float_eq(got[i], want[i], 1e-4, "y[%d]", i);
  cujit_buffer *g;
  cr_assert_eq(cujit_program_global(p, "shift", &g, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND,
               "named without its namespace");
  cr_assert(strstr(cujit_errmsg(engine), "'shift'"), "%s", cujit_errmsg(engine));
  cujit_buffer_free(dx), cujit_buffer_free(dy);
  cujit_kernel_free(k);
  cujit_program_free(p);
}

/* 32000 bytes of parameters: past the classic 4096, within CUDA 12.1's 32764. */
static const char *big_src = "struct Table { float v[8000]; };\n"
                             "__global__ void total(Table t, double *out) {\n"
                             "  if (threadIdx.x != 0) return;\n"
                             "  double s = 0;\n"
                             "  for (int i = 0; i < 8000; i++) s += t.v[i];\n"
                             "  out[0] = s;\n"
                             "}\n";

Test(args, a_32000_byte_struct_by_value) {
  int v;
  if (cujit_nvrtc_version(engine, &v) == CUJIT_OK) {
    cujit_program *p;
    cr_assert_eq(cujit_program_compile(engine, big_src, "big.cu", &sm90, &p), CUJIT_OK, "%s",
                 cujit_errmsg(engine));
    cujit_kernel *k;
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    cr_assert_eq(cujit_program_kernel(p, "total", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
    cr_assert_eq(cujit_kernel_param(k, 0, &info), CUJIT_OK);
    cr_assert_eq(info.size, 32000, "the struct's size from sm_90's PTX");
    cr_assert_eq(cujit_kernel_param(k, 1, &info), CUJIT_OK);
    cr_assert_eq(info.offset, 32000);
    cujit_kernel_free(k);
    cujit_program_free(p);
  }
  CJ_NEED_DEVICE(engine);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, big_src, "big.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "total", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  static float table[8000];
  double want = 0, got = 0;
  for (int i = 0; i < 8000; i++)
    table[i] = (float)((int)(cj_test_rand64() % 2001) - 1000) / 16, want += table[i];
  cujit_buffer *out = cj_test_upload(NULL, sizeof got, CUJIT_F64);
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 32;
  cujit_arg args[] = {{.kind = CUJIT_ARG_BYTES, .v.bytes = table}, CUJIT_ARG_BUF(out)};
  /* the CPU device sizes it from the object g++ made (verify.c), a GPU from the PTX */
  cr_assert_eq(cujit_launch(k, &cfg, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(&got, out, sizeof got);
  cr_assert_eq(got, want, "the sum of the struct's 8000 floats");
  cujit_buffer_free(out);
  cujit_kernel_free(k);
  cujit_program_free(p);
}

/* A struct past the parameter space (32764 bytes) is refused with the bytes it takes, however
** large: by NVRTC's compile for a GPU, when its kernel is asked for on the CPU device (not left
** unsized until a launch, which then said cujit could not size it). */
Test(args, a_struct_past_the_parameter_space_is_refused_with_its_bytes) {
  static const char *const sizes[] = {"32800", "2 << 20"}; /* bytes: over the limit, and 2 MiB */
  for (int i = 0; i < 2; i++) {
    char src[256];
    snprintf(src, sizeof src,
             "struct Huge { char v[%s]; };\n"
             "extern \"C\" __global__ void first(Huge h, char *out) { *out = h.v[1]; }\n",
             sizes[i]);
    int v;
    cujit_program *p = NULL;
    if (cujit_nvrtc_version(engine, &v) == CUJIT_OK) {
      cr_expect_eq(cujit_program_compile(engine, src, "huge.cu", &sm90, &p), CUJIT_ERROR_COMPILE);
      cr_expect(strstr(cujit_errmsg(engine), "Formal parameter space overflowed"), "%s",
                cujit_errmsg(engine));
      cr_expect_null(p);
    }
    CJ_NEED_DEVICE(engine);
    cujit_status st = cujit_program_compile(engine, src, "huge.cu", NULL, &p);
    cujit_kernel *k = NULL;
    if (st == CUJIT_OK) /* the CPU device: g++ has no such limit, cujit refuses the kernel */
      st = cujit_program_kernel(p, "first", &k);
    cr_expect_neq(st, CUJIT_OK, "a struct of %s bytes was taken", sizes[i]);
    cr_expect_null(k);
    cujit_program_free(p);
    p = NULL;
    cr_expect(strstr(cujit_errmsg(engine), cj_test_on_cpu(engine)
                                               ? "the parameters take"
                                               : "Formal parameter space overflowed"),
              "%s", cujit_errmsg(engine));
    cr_expect(strstr(cujit_errmsg(engine), i == 0 ? "32808" : "2097160"), "the bytes it takes: %s",
              cujit_errmsg(engine));
  }
}

Test(args, an_elementwise_kernel_refuses_a_null_array) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k;
  cr_assert_eq(
      cujit_elementwise_define(engine, "float x -> float y", "y = 2 * x", "twice", NULL, &k),
      CUJIT_OK, "%s", cujit_errmsg(engine));
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  cujit_buffer *dx = cj_test_upload(x, sizeof x, CUJIT_F32),
               *dy = cj_test_upload(NULL, sizeof y, CUJIT_F32);
  cujit_arg null_out[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(NULL)};
  cr_assert_eq(cujit_elementwise_launch(k, N, NULL, null_out, 2), CUJIT_ERROR_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "'y'"), "%s", cujit_errmsg(engine));
  cujit_arg both[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(dy)};
  cr_assert_eq(cujit_elementwise_launch(k, N, NULL, both, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(y, dy, sizeof y);
  for (int i = 0; i < N; i++) cr_assert_eq(y[i], 2.0f * i, "y[%d]", i);
  cujit_buffer_free(dx), cujit_buffer_free(dy);
  cujit_kernel_free(k);
}

/* A GPU program's variables are found in its PTX before the device is asked: each name the source
** gives finds one (the lookup goes on to the device, which may be missing here: any answer but
** NOT_FOUND), and a name that is no variable is NOT_FOUND at once. NVRTC, no GPU needed. */
Test(args, a_gpu_programs_variables_are_found_in_its_ptx) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, "args.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  static const char *found[] = {"weights", "::weights", "tune::shift", "stride"};
  static const char *missing[] = {"shift", "blend", "axpb", "tune", "weight", "tune::stride"};
  cujit_buffer *g = NULL;
  for (size_t i = 0; i < sizeof found / sizeof *found; i++) {
    cujit_status st = cujit_program_global(p, found[i], &g, NULL, NULL, NULL);
    cr_assert_neq(st, CUJIT_ERROR_NOT_FOUND, "%s: %s", found[i], cujit_errmsg(engine));
    if (st == CUJIT_OK) cujit_buffer_free(g);
  }
  for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
    cr_assert_eq(cujit_program_global(p, missing[i], &g, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND,
                 "%s", missing[i]);
    cr_assert(strstr(cujit_errmsg(engine), missing[i]), "%s", cujit_errmsg(engine));
  }
  cujit_program_free(p);
}
