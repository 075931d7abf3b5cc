/*
** test_minimal.c -- NVRTC's -minimal where the unit cannot miss what it leaves out
** (compile/minimal.c): the rule word by word (cuda/CUDA/tex/surf words, comments read past,
** launches from device code, the macro -minimal defines, headers, files, NVRTC's version, a flag
** given already, CUJIT_MINIMAL on/off and refused), the retry without it when an identifier is
** undefined, and, with NVRTC, the same PTX with and without it for kernels where it applies, a
** unit naming an omitted type through a macro compiled all the same, and a bad CUJIT_MINIMAL
** refusing the compile with its message.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "compile/minimal.h"
#include "compile/source.h"
#include "fixture.h"

static void open_engine(void) {
  unsetenv("CUJIT_MINIMAL");
  cj_fixture_open();
}

static void close_engine(void) {
  cj_fixture_close();
  unsetenv("CUJIT_MINIMAL");
  unsetenv("CUJIT_CACHE");
}

TestSuite(minimal, .init = open_engine, .fini = close_engine, .timeout = 120);

/* Whether -minimal is added for a unit `source` with one in-memory header `header` (NULL: none),
** `files` files read or probed, NVRTC `version`, and `flag` already in the options (NULL: none). */
static int added_for(const char *source, const char *header, size_t files, int version,
                     const char *flag) {
  char *names[1] = {"cujit/x.h"}, *texts[1] = {(char *)header};
  cj_includes inc = {.source = (char *)source,
                     .header_names = names,
                     .header_sources = texts,
                     .header_count = header ? 1 : 0,
                     .cacheable = 1,
                     .file_count = files};
  cj_option_list o = {0};
  cj_option_list_add(&o, "--gpu-architecture=", "sm_90");
  if (flag) cj_option_list_add(&o, flag, NULL);
  cujit_status st = CUJIT_ERROR_UNSUPPORTED;
  int added = cj_minimal_add(engine, version, &inc, &o, &st);
  cr_assert_eq(st, CUJIT_OK, "%s", cujit_errmsg(engine));
  int count = 0;
  for (size_t i = 0; i < o.n; i++)
    count += strcmp(o.v[i], "-minimal") == 0 || strcmp(o.v[i], "--minimal") == 0;
  cr_assert_eq(count, added || flag ? 1 : 0, "-minimal in the options exactly when added or given");
  cj_option_list_free(&o);
  return added;
}

static const char plain[] = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";

Test(minimal, the_rule_word_by_word) {
  cr_assert_eq(added_for(plain, NULL, 0, 13000, NULL), 1, "a plain kernel");
  cr_assert_eq(added_for(plain, "__device__ int f() { return 1; }", 0, 12040, NULL), 1,
               "with an in-memory header, NVRTC 12.4");
  cr_assert_eq(added_for(plain, NULL, 0, 12030, NULL), 0, "NVRTC 12.3 has no -minimal");
  cr_assert_eq(added_for(plain, NULL, 1, 13000, NULL), 0, "a file read or probed");
  cr_assert_eq(added_for(plain, NULL, 0, 13000, "-minimal"), 0, "given already: not twice");
  cr_assert_eq(added_for(plain, NULL, 0, 13000, "--minimal"), 0, "given already, long form");
  static const char *const refused[] = {
      "__global__ void k(cudaTextureObject_t t) {}",
      "__global__ void k(int *x) { cudaError_t e = cudaSuccess; *x = e; }",
      "#if CUDART_VERSION > 12000\n#endif\n",
      "__global__ void k(float *x) { x[0] = tex2D<float>(0, 0, 0); }",
      "__global__ void k(float *x) { x[0] = tex1Dfetch<float>(0, 0); }",
      "__global__ void k(float *x) { x[0] = texCubemap<float>(0, 0, 0, 0); }",
      "__global__ void k() { surf2Dwrite(1, 0, 0, 0); }",
      "__global__ void k() { child<<<1, 1>>>(); }",
      "#ifdef __CUDACC_RTC_MINIMAL__\n#endif\n",
      "const char *s = \"cuda\";", /* literals are read: on the safe side */
  };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    cr_assert_eq(added_for(refused[i], NULL, 0, 13000, NULL), 0, "not with: %s", refused[i]);
    cr_assert_eq(added_for(plain, refused[i], 0, 13000, NULL), 0, "nor in a header: %s",
                 refused[i]);
  }
  static const char *const fine[] = {
      "// cuda.grid in a comment\n__global__ void k() {}",
      "/* a texture here,\n surf there */ __global__ void k() {}",
      "__global__ void k(int *mycuda, int *context) { *mycuda = *context; }",
      "__global__ void k(int *_cuda) { *_cuda = 0; } // << 2",
      "#line 1 \"k: the kernel read from its text\"\n__global__ void k(int *texture, int *surface) "
      "{ *texture = *surface; }",
  };
  for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
    cr_assert_eq(added_for(fine[i], NULL, 0, 13000, NULL), 1, "with: %s", fine[i]);
}

Test(minimal, cujit_minimal_off_and_refused) {
  setenv("CUJIT_MINIMAL", "off", 1);
  cr_assert_eq(added_for(plain, NULL, 0, 13000, NULL), 0, "CUJIT_MINIMAL=off");
  setenv("CUJIT_MINIMAL", "1", 1);
  cr_assert_eq(added_for(plain, NULL, 0, 13000, NULL), 1, "CUJIT_MINIMAL=1");
  setenv("CUJIT_MINIMAL", "maybe", 1);
  cj_includes inc = {.source = (char *)plain, .cacheable = 1};
  cj_option_list o = {0};
  cujit_status st = CUJIT_OK;
  cr_assert_eq(cj_minimal_add(engine, 13000, &inc, &o, &st), 0);
  cr_assert_eq(st, CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "CUJIT_MINIMAL='maybe' is not understood"), "%s",
            cujit_errmsg(engine));
  cj_option_list_free(&o);
}

Test(minimal, retried_without_it_only_for_an_undefined_identifier) {
  cj_option_list o = {0};
  cj_option_list_add(&o, "-arch=sm_90", NULL);
  cj_option_list_add(&o, "-minimal", NULL);
  cj_option_list_add(&o, "-lineinfo", NULL);
  char *log = strdup("x.cu(2): error: expected a \";\"");
  cr_assert_eq(cj_minimal_retry(&o, &log), 0, "another error: no retry");
  cr_assert_not_null(log, "and its log kept");
  cr_assert_eq(o.n, 3);
  free(log);
  log = strdup("x.cu(2): error: identifier \"cudaError_t\" is undefined");
  cr_assert_eq(cj_minimal_retry(&o, &log), 1);
  cr_assert_null(log, "the failed compile's log freed");
  cr_assert_eq(o.n, 2);
  cr_assert_str_eq(o.v[0], "-arch=sm_90");
  cr_assert_str_eq(o.v[1], "-lineinfo", "the others kept, in order");
  cj_option_list_free(&o);
}

/* --- with NVRTC ------------------------------------------------------------------------------- */

static int nvrtc_at_least_12_4(void) {
  int v = 0;
  return cujit_nvrtc_version(engine, &v) == CUJIT_OK && v >= 12040;
}

/* The PTX of `source` compiled for sm_90 by a fresh engine with no disk cache (a real compile). */
static char *ptx_of(const char *source, const char *minimal) {
  setenv("CUJIT_CACHE", "off", 1);
  if (minimal)
    setenv("CUJIT_MINIMAL", minimal, 1);
  else
    unsetenv("CUJIT_MINIMAL");
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, source, "m.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(e));
  cr_assert_eq(cujit_program_from_cache(p), 0);
  char *ptx = strdup(cujit_program_ptx(p, NULL));
  cujit_close(e);
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_MINIMAL");
  return ptx;
}

Test(minimal, the_same_ptx_with_and_without) {
  if (!nvrtc_at_least_12_4()) cr_skip_test("no NVRTC 12.4 or newer here");
  static const char *const sources[] = {
      plain,
      "#include <cujit/prelude.h>\n"
      "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
      "  for (long long i : cujit::grid_stride(n)) y[i] = a * x[i] + y[i];\n}\n",
      "#include <cujit/reduce.h>\n#include <cujit/random.h>\n"
      "extern \"C\" __global__ void r(const float *x, float *out, int n) {\n"
      "  float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;\n"
      "  v += cujit::uniform_float(7, threadIdx.x, 0);\n"
      "  v = cujit::block_sum(v);\n  if (threadIdx.x == 0) *out = v;\n}\n",
      "template <typename T> struct Pair { T a, b; };\n"
      "template <typename T> __device__ T sum(Pair<T> p) { return p.a + p.b; }\n"
      "extern \"C\" __global__ void t(Pair<double> *p, double *o) { *o = sum(*p); }\n",
  };
  static const char *const used[] = {"cujit/prelude.h", "cujit/grid.h", "cujit/reduce.h",
                                     "cujit/random.h"};
  for (size_t u = 0; u < sizeof used / sizeof *used; u++) /* -minimal applies to them all */
    for (size_t h = 0; h < cj_embedded_header_count; h++)
      if (strcmp(cj_embedded_header_names[h], used[u]) == 0)
        cr_assert_eq(added_for(plain, cj_embedded_header_sources[h], 0, 13000, NULL), 1,
                     "%s takes -minimal", used[u]);
  cujit_kernel *k; /* a cujit_kernel_define unit, as NVRTC gets it (its checks' #line included) */
  cr_assert_eq(cujit_kernel_define(engine, "saxpy(float a, const float *x, float *y, int n)",
                                   "int i = threadIdx.x; if (i < n) y[i] += a * x[i];", NULL, &sm90,
                                   &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(added_for(cujit_kernel_source(k), NULL, 0, 13000, NULL), 1,
               "a defined kernel's unit takes -minimal:\n%s", cujit_kernel_source(k));
  cujit_kernel_free(k);
  for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
    cr_assert_eq(added_for(sources[i], NULL, 0, 13000, NULL), 1, "source %zu takes -minimal", i);
    char *with = ptx_of(sources[i], NULL), *without = ptx_of(sources[i], "off");
    cr_assert_str_eq(with, without, "source %zu: the same PTX", i);
    free(with);
    free(without);
  }
}

Test(minimal, an_omitted_name_reached_through_a_macro_compiles_all_the_same) {
  if (!nvrtc_at_least_12_4()) cr_skip_test("no NVRTC 12.4 or newer here");
  static const char src[] = "#define P(a, b) a##b\n"
                            "extern \"C\" __global__ void k(int *x) {\n"
                            "  P(cuda, Error_t) e = P(cuda, Success);\n  *x = (int)e;\n}\n";
  char *ptx = ptx_of(src, NULL); /* -minimal first (no word names it), then again without */
  cr_assert(strstr(ptx, ".entry k("), "compiled: %s", ptx);
  free(ptx);
  static const char *const flags[] = {"-minimal"}; /* asked for by the user: not retried */
  cujit_compile_options o = sm90;
  o.extra_flags = flags, o.extra_flag_count = 1;
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, src, "m.cu", &o, &p), CUJIT_ERROR_COMPILE);
  cr_assert(strstr(cujit_errmsg(engine), "identifier \"cudaError_t\" is undefined"), "%s",
            cujit_errmsg(engine));
}

Test(minimal, a_bad_cujit_minimal_refuses_the_compile) {
  if (!nvrtc_at_least_12_4()) cr_skip_test("no NVRTC 12.4 or newer here");
  setenv("CUJIT_MINIMAL", "sometimes", 1);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(engine, plain, "m.cu", &sm90, &p),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine),
                   "CUJIT_MINIMAL='sometimes' is not understood: it takes 1, on, yes or true"),
            "%s", cujit_errmsg(engine));
}
