/*
** test_signature.c -- kernel signatures: types, sizes, alignment and offsets, type variables,
** every malformed case with its message, writing back, specialising, and reading the kernels of
** a whole translation unit. No GPU, no NVRTC.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/scan.h"

static cj_signature parse_ok(const char *text) {
  cj_signature sig;
  char err[1024];
  cujit_status st = cj_signature_parse(text, &sig, err, sizeof err);
  cr_assert_eq(st, CUJIT_OK, "'%s' should parse: %s", text, err);
  return sig;
}

/* Parses text expecting failure; checks that the message holds each of the parts given. */
static void parse_bad(const char *text, const char *part1, const char *part2) {
  cj_signature sig;
  char err[1024];
  cujit_status st = cj_signature_parse(text, &sig, err, sizeof err);
  cr_assert_eq(st, CUJIT_ERROR_SIGNATURE, "'%s' should be refused", text);
  cr_assert(strstr(err, part1), "message for '%s' lacks '%s': %s", text, part1, err);
  if (part2) cr_assert(strstr(err, part2), "message for '%s' lacks '%s': %s", text, part2, err);
  cr_assert(strstr(err, "signature '"), "message names the signature: %s", err);
  cr_assert(strchr(err, '^'), "message has a caret line: %s", err);
}

Test(signature, saxpy_layout) {
  cj_signature s = parse_ok("saxpy(float a, const float *x, float *__restrict__ y, int n)");
  cr_assert_str_eq(s.name, "saxpy");
  cr_assert_eq(s.nparams, 4);
  cr_assert_str_eq(s.params[0].type, "float");
  cr_assert_eq(s.params[0].kind, CUJIT_PARAM_SCALAR);
  cr_assert_eq(s.params[0].dtype, CUJIT_F32);
  cr_assert_str_eq(s.params[1].type, "const float *");
  cr_assert_eq(s.params[1].kind, CUJIT_PARAM_POINTER);
  cr_assert_eq(s.params[1].is_const, 1);
  cr_assert_eq(s.params[1].dtype, CUJIT_F32);
  cr_assert_eq(s.params[2].is_const, 0);
  cr_assert_str_eq(s.params[2].type, "float *__restrict__");
  cr_assert_eq(s.params[3].dtype, CUJIT_I32);
  size_t offsets[] = {0, 8, 16, 24};
  for (int i = 0; i < 4; i++) cr_assert_eq(s.params[i].offset, offsets[i], "param %d", i);
  cr_assert_eq(s.params[1].size, 8);
  cr_assert_eq(s.params[1].align, 8);
  cr_assert_eq(s.param_bytes, 28);
  cr_assert_eq(s.ntype_vars, 0);
  cj_signature_free(&s);
}

Test(signature, padding) {
  cj_signature s = parse_ok("f(char a, double b)");
  cr_assert_eq(s.params[0].offset, 0);
  cr_assert_eq(s.params[1].offset, 8);
  cr_assert_eq(s.param_bytes, 16);
  cj_signature_free(&s);
  s = parse_ok("f(char a, short b, char c, int d, char e, float4 v)");
  size_t want[] = {0, 2, 4, 8, 12, 16};
  for (int i = 0; i < 6; i++) cr_assert_eq(s.params[i].offset, want[i], "param %d", i);
  cr_assert_eq(s.param_bytes, 32);
  cj_signature_free(&s);
}

Test(signature, scalar_types) {
  static const struct {
    const char *written, *normal;
    cujit_dtype dtype;
    size_t size;
  } cases[] = {
      {"bool", "bool", CUJIT_U8, 1},
      {"char", "char", CUJIT_I8, 1},
      {"signed char", "signed char", CUJIT_I8, 1},
      {"unsigned char", "unsigned char", CUJIT_U8, 1},
      {"short", "short", CUJIT_I16, 2},
      {"short int", "short", CUJIT_I16, 2},
      {"unsigned short", "unsigned short", CUJIT_U16, 2},
      {"int", "int", CUJIT_I32, 4},
      {"signed", "int", CUJIT_I32, 4},
      {"unsigned", "unsigned int", CUJIT_U32, 4},
      {"unsigned int", "unsigned int", CUJIT_U32, 4},
      {"long", "long", CUJIT_I64, 8},
      {"long int", "long", CUJIT_I64, 8},
      {"unsigned long", "unsigned long", CUJIT_U64, 8},
      {"long long", "long long", CUJIT_I64, 8},
      {"unsigned long long int", "unsigned long long", CUJIT_U64, 8},
      {"long unsigned long", "unsigned long long", CUJIT_U64, 8},
      {"size_t", "size_t", CUJIT_U64, 8},
      {"ptrdiff_t", "ptrdiff_t", CUJIT_I64, 8},
      {"int8_t", "int8_t", CUJIT_I8, 1},
      {"int16_t", "int16_t", CUJIT_I16, 2},
      {"int32_t", "int32_t", CUJIT_I32, 4},
      {"int64_t", "int64_t", CUJIT_I64, 8},
      {"uint8_t", "uint8_t", CUJIT_U8, 1},
      {"uint16_t", "uint16_t", CUJIT_U16, 2},
      {"uint32_t", "uint32_t", CUJIT_U32, 4},
      {"uint64_t", "uint64_t", CUJIT_U64, 8},
      {"float", "float", CUJIT_F32, 4},
      {"double", "double", CUJIT_F64, 8},
      {"__half", "__half", CUJIT_F16, 2},
      {"half", "__half", CUJIT_F16, 2},
      {"__nv_bfloat16", "__nv_bfloat16", CUJIT_BF16, 2},
      {"nv_bfloat16", "__nv_bfloat16", CUJIT_BF16, 2},
      {"const __nv_bfloat16", "const __nv_bfloat16", CUJIT_BF16, 2},
      {"const int", "const int", CUJIT_I32, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[128], ptext[128];
    snprintf(text, sizeof text, "k(%s v)", cases[i].written);
    cj_signature s = parse_ok(text);
    cr_assert_str_eq(s.params[0].type, cases[i].normal, "%s", text);
    cr_assert_eq(s.params[0].dtype, cases[i].dtype, "%s", text);
    cr_assert_eq(s.params[0].size, cases[i].size, "%s", text);
    cr_assert_eq(s.params[0].align, cases[i].size, "%s", text);
    cj_signature_free(&s);
    snprintf(ptext, sizeof ptext, "k(%s *p)", cases[i].written);
    s = parse_ok(ptext);
    cr_assert_eq(s.params[0].kind, CUJIT_PARAM_POINTER, "%s", ptext);
    cr_assert_eq(s.params[0].dtype, cases[i].dtype, "%s", ptext);
    cr_assert_eq(s.params[0].size, 8);
    cj_signature_free(&s);
  }
}

Test(signature, vector_types) {
  static const struct {
    const char *name;
    size_t size, align;
  } cases[] = {
      {"char2", 2, 2},       {"char3", 3, 1},          {"uchar4", 4, 4},
      {"short2", 4, 4},      {"short3", 6, 2},         {"ushort4", 8, 8},
      {"int1", 4, 4},        {"int2", 8, 8},           {"int3", 12, 4},
      {"int4", 16, 16},      {"uint2", 8, 8},          {"uint4", 16, 16},
      {"float2", 8, 8},      {"float3", 12, 4},        {"float4", 16, 16},
      {"double2", 16, 16},   {"double3", 24, 8},       {"double4", 32, 16},
      {"longlong2", 16, 16}, {"ulong3", 24, 8},        {"double4_32a", 32, 32},
      {"__half2", 4, 4},     {"__nv_bfloat162", 4, 4}, {"nv_bfloat162", 4, 4},
      {"half2", 4, 4}, /* cuda_fp16.h's other spelling, as nv_bfloat162 is */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[128];
    snprintf(text, sizeof text, "k(char c, %s v)", cases[i].name);
    cj_signature s = parse_ok(text);
    cr_assert_eq(s.params[1].size, cases[i].size, "%s", cases[i].name);
    cr_assert_eq(s.params[1].align, cases[i].align, "%s", cases[i].name);
    cr_assert_eq(s.params[1].offset, cases[i].align, "%s", cases[i].name);
    cr_assert_eq(s.params[1].dtype, CUJIT_DTYPE_NONE, "%s", cases[i].name);
    cj_signature_free(&s);
  }
}

Test(signature, pointers_and_qualifiers) {
  cj_signature s = parse_ok("k(void *a, const void *b, float *const c, volatile int *d, "
                            "const float * restrict e, float const *f, double **g)");
  cr_assert_eq(s.nparams, 7);
  cr_assert_eq(s.params[0].dtype, CUJIT_DTYPE_NONE);
  cr_assert_eq(s.params[0].kind, CUJIT_PARAM_POINTER);
  cr_assert_eq(s.params[1].is_const, 1);
  cr_assert_str_eq(s.params[2].type, "float *const");
  cr_assert_eq(s.params[2].is_const, 0, "a const pointer to non-const data");
  cr_assert_str_eq(s.params[3].type, "volatile int *");
  cr_assert_str_eq(s.params[4].type, "const float *__restrict__");
  cr_assert_str_eq(s.params[5].type, "const float *", "qualifier order is normalised");
  cr_assert_eq(s.params[5].is_const, 1);
  cr_assert_str_eq(s.params[6].type, "double **");
  cr_assert_eq(s.params[6].dtype, CUJIT_DTYPE_NONE);
  cj_signature_free(&s);
}

Test(signature, type_variables) {
  cj_signature s = parse_ok("axpy(T a, const T *x, U *y, T2 *z, int n)");
  cr_assert_eq(s.ntype_vars, 3);
  cr_assert_str_eq(s.type_vars[0], "T");
  cr_assert_str_eq(s.type_vars[1], "U");
  cr_assert_str_eq(s.type_vars[2], "T2");
  cr_assert_eq(s.params[0].type_var, 0);
  cr_assert_eq(s.params[1].type_var, 0);
  cr_assert_eq(s.params[2].type_var, 1);
  cr_assert_eq(s.params[3].type_var, 2);
  cr_assert_eq(s.params[4].type_var, -1);
  cr_assert_str_eq(s.params[1].type, "const T *");
  cr_assert(cj_signature_is_generic(&s));

  cj_signature c;
  char err[512] = "left from before";
  cujit_dtype types[] = {CUJIT_F64, CUJIT_I16, CUJIT_U8};
  cr_assert_eq(cj_signature_specialize(&s, types, 3, &c, err, sizeof err), CUJIT_OK, "%s", err);
  cr_assert_str_eq(err, "", "a success leaves no message");
  cr_assert(!cj_signature_is_generic(&c));
  cr_assert_str_eq(c.params[0].type, "double");
  cr_assert_eq(c.params[0].size, 8);
  cr_assert_eq(c.params[0].dtype, CUJIT_F64);
  cr_assert_str_eq(c.params[1].type, "const double *");
  cr_assert_eq(c.params[1].dtype, CUJIT_F64);
  cr_assert_str_eq(c.params[2].type, "short *");
  cr_assert_str_eq(c.params[3].type, "unsigned char *");
  cr_assert_eq(c.params[4].offset, 32);
  cr_assert_eq(c.param_bytes, 36);
  char *f = cj_signature_format(&c);
  cr_assert_str_eq(f, "axpy(double a, const double *x, short *y, unsigned char *z, int n)");
  free(f);
  cj_signature_free(&c);

  cr_assert_neq(cj_signature_specialize(&s, types, 2, &c, err, sizeof err), CUJIT_OK);
  cr_assert(strstr(err, "3 type variable"), "%s", err);
  cujit_dtype none[] = {CUJIT_DTYPE_NONE, CUJIT_F32, CUJIT_F32};
  cr_assert_neq(cj_signature_specialize(&s, none, 3, &c, err, sizeof err), CUJIT_OK);
  cr_assert(strstr(err, "T"), "%s", err);
  cj_signature_free(&s);
}

Test(signature, empty_lists) {
  cj_signature s = parse_ok("k()");
  cr_assert_eq(s.nparams, 0);
  cr_assert_eq(s.param_bytes, 0);
  cj_signature_free(&s);
  s = parse_ok("  k ( void )  ");
  cr_assert_eq(s.nparams, 0);
  cj_signature_free(&s);
}

Test(signature, format_round_trip) {
  const char *texts[] = {
      "saxpy(float a, const float *x, float *__restrict__ y, int n)",
      "k(unsigned  int a,long  long b ,  const   T*  c)",
      "k(float *const p, double2 v, size_t n)",
      "k()",
  };
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    cj_signature s = parse_ok(texts[i]);
    char *f = cj_signature_format(&s);
    cj_signature again = parse_ok(f);
    char *g = cj_signature_format(&again);
    cr_assert_str_eq(f, g, "format is a fixed point for '%s'", texts[i]);
    cr_assert_eq(again.param_bytes, s.param_bytes);
    free(f), free(g);
    cj_signature_free(&s), cj_signature_free(&again);
  }
  cj_signature s = parse_ok("k(unsigned  int a,long  long b ,  const   T*  c)");
  char *f = cj_signature_format(&s);
  cr_assert_str_eq(f, "k(unsigned int a, long long b, const T *c)");
  free(f);
  cj_signature_free(&s);
}

Test(signature, unknown_type_points_at_it) {
  cj_signature sig;
  char err[1024];
  cr_assert_eq(cj_signature_parse("saxpy(float a, flot *x)", &sig, err, sizeof err),
               CUJIT_ERROR_SIGNATURE);
  cr_assert_str_eq(err, "signature 'saxpy(float a, flot *x)': unknown type 'flot' for parameter "
                        "'x' (column 16)\n  saxpy(float a, flot *x)\n                 ^");
}

Test(signature, errors) {
  parse_bad("(int a)", "missing kernel name", NULL);
  parse_bad("", "empty signature", NULL);
  parse_bad("saxpy", "missing '('", NULL);
  parse_bad("saxpy int a", "expected '('", NULL);
  parse_bad("saxpy(int a", "missing ')'", NULL);
  parse_bad("saxpy(int a) {", "unexpected text after", NULL);
  parse_bad("saxpy(int a);", "unexpected text after", NULL);
  parse_bad("2saxpy(int a)", "not a C identifier", NULL);
  parse_bad("int(float a)", "reserved word", NULL);
  parse_bad("k(int a, , int b)", "empty parameter", "column 10");
  parse_bad("k(int a,)", "empty parameter", NULL);
  parse_bad("k(=T *x, int n)", "parameter 1 has a default value but no type and name", NULL);
  parse_bad("k(int n, = 3)", "parameter 2 has a default value but no type and name", NULL);
  parse_bad("k(int)", "has no name", NULL);
  parse_bad("k(const float *)", "has no name", NULL);
  parse_bad("k(unsigned long)", "has no name", NULL);
  parse_bad("k(n)", "has no type", NULL);
  parse_bad("k(int a, float a)", "'a' is declared twice", "column 16");
  {
    /* A default argument on a scalar: refused when given, passed over when read from a source. */
    cj_signature lenient;
    char why[256];
    parse_bad("k(int n = 4)", "default arguments are not supported", NULL);
    cr_assert_eq(cj_signature_parse_lenient("k(int n = 4)", &lenient, why, sizeof why), CUJIT_OK,
                 "%s", why);
    cr_assert_eq(lenient.nparams, 1);
    cj_signature_free(&lenient);
  }
  /* The column is the name's, not that of a longer word it starts ("const"). */
  parse_bad("k(int c, const int c)", "'c' is declared twice", "column 20");
  parse_bad("k(float float)", "reserved word", NULL);
  parse_bad("k(int for)", "reserved word", NULL);
  parse_bad("k(int size_t)", "is a type", NULL);
  parse_bad("k(int threadIdx)", "built-in variable", NULL);
  parse_bad("k(int blockIdx)", "'blockIdx' is a CUDA built-in variable", NULL);
  parse_bad("k(int blockDim)", "'blockDim' is a CUDA built-in variable", NULL);
  parse_bad("k(int gridDim)", "'gridDim' is a CUDA built-in variable", NULL);
  parse_bad("k(int warpSize)", "'warpSize' is a CUDA built-in variable", NULL);
  parse_bad("k(const a)", "parameter 'a' has no type", NULL);
  parse_bad("k(int n, volatile *p)", "parameter 'p' has no type", NULL);
  parse_bad("k(int 2a)", "not a C identifier", NULL);
  parse_bad("k(float x[4])", "array", NULL);
  parse_bad("k(float &x)", "references", NULL);
  parse_bad("k(void (*f)(int))", "function pointer", NULL);
  parse_bad("k(int n = 3)", "default arguments", NULL);
  parse_bad("k(std::vector<int> v)", "'::'", NULL);
  parse_bad("k(vec<int> v)", "template", NULL);
  parse_bad("k(int a, ...)", "variadic", NULL);
  parse_bad("k(int a,...)", "variadic", NULL);
  parse_bad("k(...)", "variadic", NULL);
  parse_bad("k(float *...)", "variadic", NULL);
  parse_bad("k(float0 v)", "unknown type 'float0'", NULL);
  parse_bad("k(float5 v)", "unknown type 'float5'", NULL);
  parse_bad("k(double4_16b v)", "unknown type 'double4_16b'", NULL);
  parse_bad("k(void x)", "type void", NULL);
  parse_bad("k(int a, void)", "has no name", NULL);
  parse_bad("k(struct S s)", "unknown type 'struct S'", NULL);
  /* A type variable is ONE upper-case letter and digits: two letters, a lower-case letter, or a
  ** digit first are unknown types, never generic parameters. */
  parse_bad("k(TX a)", "unknown type 'TX' for parameter 'a'", NULL);
  parse_bad("k(const TX *a)", "unknown type 'TX'", NULL);
  parse_bad("k(T2X a)", "unknown type 'T2X'", NULL);
  parse_bad("k(t a)", "unknown type 't'", NULL);
  parse_bad("k(unsigned float x)", "unexpected 'float'", NULL);
  parse_bad("k(short long x)", "not a valid type", NULL);
  parse_bad("k(__restrict__ float *p)", "applies to pointers", NULL);
  parse_bad("k(float * int p)", "unexpected 'int'", NULL);
  parse_bad("k(int a$)", "unexpected character", NULL);
  parse_bad("k(A a, B b, C c, D d, E e, F f, G g, H h, I i)", "too many type variables", NULL);
}

/* Every reserved word is found (the lexicon searches its sorted list by halves: a word out of
** order would be missed), and words that only start or extend one are not reserved. */
Test(signature, every_reserved_word_is_refused_as_a_name) {
  static const char *const reserved[] = {"alignas",
                                         "alignof",
                                         "and",
                                         "asm",
                                         "auto",
                                         "bool",
                                         "break",
                                         "case",
                                         "catch",
                                         "char",
                                         "char16_t",
                                         "char32_t",
                                         "char8_t",
                                         "class",
                                         "const",
                                         "consteval",
                                         "constexpr",
                                         "constinit",
                                         "const_cast",
                                         "continue",
                                         "decltype",
                                         "default",
                                         "delete",
                                         "do",
                                         "double",
                                         "dynamic_cast",
                                         "else",
                                         "enum",
                                         "explicit",
                                         "export",
                                         "extern",
                                         "false",
                                         "float",
                                         "for",
                                         "friend",
                                         "goto",
                                         "if",
                                         "inline",
                                         "int",
                                         "long",
                                         "mutable",
                                         "namespace",
                                         "new",
                                         "noexcept",
                                         "not",
                                         "nullptr",
                                         "operator",
                                         "or",
                                         "private",
                                         "protected",
                                         "public",
                                         "register",
                                         "reinterpret_cast",
                                         "requires",
                                         "restrict",
                                         "return",
                                         "short",
                                         "signed",
                                         "sizeof",
                                         "static",
                                         "static_assert",
                                         "static_cast",
                                         "struct",
                                         "switch",
                                         "template",
                                         "this",
                                         "thread_local",
                                         "throw",
                                         "true",
                                         "try",
                                         "typedef",
                                         "typeid",
                                         "typename",
                                         "union",
                                         "unsigned",
                                         "using",
                                         "virtual",
                                         "void",
                                         "volatile",
                                         "wchar_t",
                                         "while",
                                         "_Bool",
                                         "__global__",
                                         "__device__",
                                         "__host__",
                                         "__shared__",
                                         "__constant__",
                                         "__managed__",
                                         "__restrict__",
                                         "__restrict",
                                         "__forceinline__",
                                         "__noinline__",
                                         "__launch_bounds__",
                                         "__grid_constant__"};
  char text[64];
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
    snprintf(text, sizeof text, "%s(int a)", reserved[i]);
    parse_bad(text, "reserved word", NULL);
    snprintf(text, sizeof text, "k(int %s)", reserved[i]);
    cj_signature sig;
    char err[1024];
    cr_assert_neq(cj_signature_parse(text, &sig, err, sizeof err), CUJIT_OK, "'%s' parsed", text);
  }
  static const char *const near[] = {"_Boo",     "_Boolx", "__global", "__global__x",
                                     "alignasx", "al",     "const_",   "constant",
                                     "whil",     "whilex", "zz",       "A"};
  for (size_t i = 0; i < sizeof near / sizeof *near; i++) {
    snprintf(text, sizeof text, "%s(int a)", near[i]);
    cj_signature sig = parse_ok(text);
    cj_signature_free(&sig);
  }
}

Test(signature, null_text) {
  cj_signature sig;
  char err[256];
  cr_assert_eq(cj_signature_parse(NULL, &sig, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "NULL"), "%s", err);
}

Test(signature, limits) {
  /* 129 parameters */
  char text[8192] = "k(";
  for (int i = 0; i < 129; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "%sint a%d", i ? ", " : "", i);
  strcat(text, ")");
  parse_bad(text, "more than 128 parameters", NULL);
  /* 128 are fine */
  char *cut = strstr(text, ", int a128");
  strcpy(cut, ")");
  cj_signature s = parse_ok(text);
  cr_assert_eq(s.nparams, 128);
  cr_assert_eq(s.param_bytes, 512);
  cj_signature_free(&s);
}

Test(signature, param_bytes_at_the_limit) {
  /* 128 parameters of at most 32 bytes fit exactly in 4096 bytes: the largest legal buffer. */
  char text[8192] = "k(";
  for (int i = 0; i < 128; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "%sdouble4 v%d", i ? ", " : "", i);
  strcat(text, ")");
  cj_signature s = parse_ok(text);
  cr_assert_eq(s.param_bytes, 4096);
  cr_assert_eq(s.params[127].offset, 4064);
  cj_signature_free(&s);
}

Test(signature, long_names_are_kept_whole) {
  char name[301], text[700];
  memset(name, 'a', 300);
  name[300] = '\0';
  snprintf(text, sizeof text, "k(float *%s, int n)", name);
  cj_signature s = parse_ok(text);
  cr_assert_str_eq(s.params[0].name, name);
  char *back = cj_signature_format(&s);
  cr_assert(strstr(back, name), "written back whole");
  free(back);
  cj_signature_free(&s);
}

Test(signature, deep_pointers_are_kept_whole) {
  /* Twelve levels, each const volatile: 37 tokens and a 180-character type. */
  char text[1024] = "k(const volatile int ", want[1024] = "const volatile int ";
  for (int i = 0; i < 12; i++) {
    strcat(text, "*const volatile ");
    strcat(want, "*const volatile ");
  }
  strcat(text, "p)");
  want[strlen(want) - 1] = '\0';
  cj_signature s = parse_ok(text);
  cr_assert_str_eq(s.params[0].type, want);
  cr_assert_eq(s.params[0].kind, CUJIT_PARAM_POINTER);
  cj_signature_free(&s);
  s = parse_ok("k(int ************p)");
  cr_assert_str_eq(s.params[0].type, "int ************");
  cj_signature_free(&s);
}

Test(signature, kernels_named_like_types_get_a_true_message) {
  parse_bad("half(int n)", "'half' names a CUDA type", "choose another name");
  parse_bad("float4(int n)", "'float4' names a CUDA type", NULL);
  parse_bad("int(int n)", "reserved word", NULL);
}

Test(signature, multiline_signature_columns) {
  cj_signature sig;
  char err[1024];
  cr_assert_eq(cj_signature_parse("k(int a,\n  flot b)", &sig, err, sizeof err),
               CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "column 12"), "%s", err);
  cr_assert(strstr(err, "k(int a,   flot b)"), "newlines shown as spaces: %s", err);
}

Test(signature, long_signature_shows_a_window) {
  char text[2048] = "k(";
  for (int i = 0; i < 60; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "int a%d, ", i);
  strcat(text, "flot x)");
  cj_signature sig;
  char err[1024];
  cr_assert_eq(cj_signature_parse(text, &sig, err, sizeof err), CUJIT_ERROR_SIGNATURE);
  cr_assert(strstr(err, "unknown type 'flot' for parameter 'x'"), "%s", err);
  const char *caret_line = strrchr(err, '\n') + 1, *shown_line = strstr(err, "\n  ") + 3;
  size_t col = strlen(caret_line) - 1;
  cr_assert_eq(strncmp(shown_line + col - 2, "flot", 4), 0, "caret under 'flot': %s", err);
}

/* --- translation units --------------------------------------------------------------------- */

static size_t scan(const char *src, cj_signature **sigs) {
  size_t n = 0;
  char err[512];
  cujit_status st = cj_scan_kernels(src, sigs, &n, err, sizeof err);
  cr_assert_eq(st, CUJIT_OK, "scan failed: %s", err);
  return n;
}

static void free_sigs(cj_signature *sigs, size_t n) {
  for (size_t i = 0; i < n; i++) cj_signature_free(&sigs[i]);
  free(sigs);
}

Test(scan, several_kernels_in_order) {
  const char *src =
      "#include <cujit/grid.h>\n"
      "#define N 3 /* extern \"C\" __global__ void fake(int x) */\n"
      "// extern \"C\" __global__ void commented(int a) {}\n"
      "/* extern \"C\" __global__ void block_commented(int a) {} */\n"
      "__device__ float twice(float x) { return 2 * x; }\n"
      "const char *s = \"extern \\\"C\\\" __global__ void in_string(int a) {}\";\n"
      "char c = '{';\n"
      "extern \"C\" __global__ void first(float a, const float *x, float *y, int n) {\n"
      "  if (a > 0) { y[0] = twice(x[0]); }\n"
      "}\n"
      "extern \"C\" __global__ void __launch_bounds__(256, 2) second(double *d) { }\n"
      "__global__ extern \"C\" void third(int n) { }\n"
      "extern \"C\" {\n"
      "  __global__ void fourth(unsigned n) { }\n"
      "  __global__ void fifth(char c, double d);\n"
      "  __global__ void fifth(char c, double d) { }\n"
      "}\n"
      "template <typename T> __global__ void templ(T *x) { }\n"
      "__global__ void mangled(int n) { }\n"
      "namespace ns { extern \"C\" __global__ void sixth(float *p) {} }\n";
  cj_signature *sigs;
  size_t n = scan(src, &sigs);
  const char *want[] = {"first", "second", "third", "fourth", "fifth", "mangled", "sixth"};
  cr_assert_eq(n, 7, "found %zu kernels", n); /* C++ linkage too; templates need a name */
  for (size_t i = 0; i < n; i++) cr_assert_str_eq(sigs[i].name, want[i]);
  cr_assert_eq(sigs[0].nparams, 4);
  cr_assert_eq(sigs[0].params[1].is_const, 1);
  cr_assert_eq(sigs[0].param_bytes, 28);
  cr_assert_eq(sigs[4].params[1].offset, 8);
  free_sigs(sigs, n);
}

Test(scan, unknown_types_are_opaque) {
  const char *src = "struct P { float x, y; };\n"
                    "extern \"C\" __global__ void k(P p, float *out, Q *q, int n) {}\n";
  cj_signature *sigs;
  size_t n = scan(src, &sigs);
  cr_assert_eq(n, 1);
  cr_assert_eq(sigs[0].nparams, 4);
  cr_assert_str_eq(sigs[0].params[0].name, "p");
  cr_assert_str_eq(sigs[0].params[0].type, "P");
  cr_assert_eq(sigs[0].params[0].kind, CUJIT_PARAM_SCALAR);
  cr_assert_eq(sigs[0].params[0].dtype, CUJIT_DTYPE_NONE);
  cr_assert_eq(sigs[0].params[0].size, 0);
  cr_assert_eq(sigs[0].params[1].dtype, CUJIT_F32);
  cr_assert_eq(sigs[0].params[2].kind, CUJIT_PARAM_POINTER); /* a pointer, whatever to */
  cr_assert_eq(sigs[0].params[2].dtype, CUJIT_DTYPE_NONE);
  cr_assert_eq(sigs[0].params[2].size, 8);
  cr_assert_eq(sigs[0].params[3].dtype, CUJIT_I32);
  free_sigs(sigs, n);
}

/* A comma inside a template's brackets, with the spaces people write after it, does not end the
** parameter: three template arguments, two, and brackets within brackets. */
Test(scan, commas_inside_template_arguments_stay_in_their_parameter) {
  const char *src =
      "extern \"C\" __global__ void k(Triple<int, float, double> t, float *out,\n"
      "                               Pair<short, Box< long, char >, int> p, int n) {}\n";
  cj_signature *sigs;
  size_t n = scan(src, &sigs);
  cr_assert_eq(n, 1);
  cr_assert_eq(sigs[0].nparams, 4, "%zu parameters", sigs[0].nparams);
  const char *names[] = {"t", "out", "p", "n"};
  for (int i = 0; i < 4; i++) cr_assert_str_eq(sigs[0].params[i].name, names[i], "parameter %d", i);
  cr_assert_eq(sigs[0].params[0].kind, CUJIT_PARAM_SCALAR);
  cr_assert_eq(sigs[0].params[0].dtype, CUJIT_DTYPE_NONE);
  cr_assert_eq(sigs[0].params[1].dtype, CUJIT_F32);
  cr_assert_eq(sigs[0].params[2].dtype, CUJIT_DTYPE_NONE);
  cr_assert_eq(sigs[0].params[3].dtype, CUJIT_I32);
  free_sigs(sigs, n);
}

Test(scan, unnamed_parameters) {
  cj_signature *sigs;
  size_t n = scan("extern \"C\" __global__ void k(float *, int) {}", &sigs);
  cr_assert_eq(n, 1);
  cr_assert_eq(sigs[0].nparams, 2);
  cr_assert_str_eq(sigs[0].params[0].name, "arg1");
  free_sigs(sigs, n);
}

Test(scan, none_found) {
  cj_signature *sigs = NULL;
  size_t n = 7;
  char err[512];
  cr_assert_eq(
      cj_scan_kernels("template <class T> __global__ void k(T *x) {}", &sigs, &n, err, sizeof err),
      CUJIT_ERROR_NOT_FOUND);
  cr_assert_eq(n, 0);
  cr_assert(strstr(err, "template"), "%s", err);
  cr_assert(strstr(err, "name_expressions"), "%s", err);
  cr_assert_eq(cj_scan_kernels("", &sigs, &n, err, sizeof err), CUJIT_ERROR_NOT_FOUND);
}

/* The reason given when nothing is read: a #define that writes __global__ (on one line or
** continued onto the next, `#` spaced from `define`), and not for __global__ in a comment, a
** string or a #define of something else. */
Test(scan, none_found_names_a_macro_that_writes_kernels) {
  static const char *with_macro[] = {
      "#define K(n) extern \"C\" __global__ void n(int *x) {}\nK(a)\n",
      "#define K(n) \\\n  extern \"C\" __global__ void n(int *x) {}\nK(a)\n",
      "  #  define K(n) extern \"C\" \\\n \\\n __global__ void n(int *x) {}\nK(a)\n",
  };
  static const char *without[] = {
      "// extern \"C\" __global__ void k(int *x) {}\n__device__ void f() {}\n",
      "#define N 3\nconst char *s = \"__global__\";\n__device__ void f() {}\n",
      "#define N \\\n 3\n// __global__\n__device__ void f() {}\n",
      "#include <x.h> // __global__\n__device__ void f() {}\n",
  };
  cj_signature *sigs = NULL;
  size_t n = 7;
  char err[512];
  for (size_t i = 0; i < sizeof with_macro / sizeof *with_macro; i++) {
    cr_assert_eq(cj_scan_kernels(with_macro[i], &sigs, &n, err, sizeof err), CUJIT_ERROR_NOT_FOUND,
                 "source %zu", i);
    cr_assert_eq(n, 0);
    cr_assert(strstr(err, "a #define writes __global__"), "source %zu: %s", i, err);
    cr_assert(strstr(err, "signatures option"), "source %zu: %s", i, err);
  }
  for (size_t i = 0; i < sizeof without / sizeof *without; i++) {
    cr_assert_eq(cj_scan_kernels(without[i], &sigs, &n, err, sizeof err), CUJIT_ERROR_NOT_FOUND,
                 "source %zu", i);
    cr_assert_str_eq(err, "no __global__ kernel in the source", "source %zu", i);
  }
}

/* Macro calls that end without a `;` come before a kernel's specifiers, never after __global__:
** the kernel's name and parameters are those after it, in either order of __global__ and the
** return type. */
Test(scan, macro_calls_before_a_kernel_are_not_its_name) {
  const char *src = "#define K(n) extern \"C\" __global__ void n(int *x) {}\n"
                    "K(a)\nK(b)\nextern \"C\" __global__ void first(float *p, int q) {}\n"
                    "K(c) extern \"C\" void __global__ second(double d) {}\n"
                    "F(1) G(2, 3) extern \"C\" __global__ __launch_bounds__(64) void third() {}\n";
  cj_signature *sigs;
  size_t n = scan(src, &sigs);
  cr_assert_eq(n, 3);
  cr_assert_str_eq(sigs[0].name, "first");
  cr_assert_eq(sigs[0].nparams, 2);
  cr_assert_str_eq(sigs[0].params[0].name, "p");
  cr_assert_str_eq(sigs[0].params[1].name, "q");
  cr_assert_str_eq(sigs[1].name, "second");
  cr_assert_eq(sigs[1].nparams, 1);
  cr_assert_str_eq(sigs[1].params[0].name, "d");
  cr_assert_str_eq(sigs[2].name, "third");
  cr_assert_eq(sigs[2].nparams, 0);
  free_sigs(sigs, n);
}

Test(scan, kernels_made_by_codegen_are_found) {
  const char *src = "#line 1 \"k:generated\"\ntypedef float T;\n#line 1 \"k:signature\"\n"
                    "extern \"C\" __global__ void k(T a, const float *x) {\n#line 1 \"k\"\n"
                    "int i = 0; (void)i;\n}\n";
  cj_signature *sigs;
  size_t n = scan(src, &sigs);
  cr_assert_eq(n, 1);
  cr_assert_str_eq(sigs[0].name, "k");
  free_sigs(sigs, n);
}
