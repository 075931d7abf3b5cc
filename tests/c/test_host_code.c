/*
** test_host_code.c -- host code elided (compile/host_code.h): text in, text out. What goes (main,
** host functions, launches, host globals, classes, templates, prototypes), what stays (kernels,
** device and __host__ __device__ functions, types and constants device code names, what cujit
** cannot decide, every #if), that every line keeps its number, and that malformed text is given
** back unchanged with the reason, never cut. Then whole files through cujit_program_compile for
** an explicit sm_90 (NVRTC, no GPU) and for the CPU device.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/compile.h"
#include "program/program.h"
#include "compile/host_code.h"
#include "compile/scan.h"
#include "fixture.h"

static size_t lines(const char *s) {
  size_t n = 1;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* The source elided: same length, same lines, newlines where they were. */
static char *elide(const char *src, size_t *n, char *why) {
  char *out = cj_host_code_elide(src, n, why, 256);
  cr_assert_not_null(out);
  cr_assert_eq(strlen(out), strlen(src), "length kept");
  cr_assert_eq(lines(out), lines(src), "line count kept");
  for (size_t i = 0; src[i]; i++)
    cr_assert((src[i] == '\n') == (out[i] == '\n'), "newline at %zu kept", i);
  return out;
}

#define KEPT(out, s) cr_assert(strstr(out, s), "'%s' should stay:\n%s", s, out)
#define GONE(out, s) cr_assert(!strstr(out, s), "'%s' should go:\n%s", s, out)

/* The line (1-based) where `s` starts in `text`. */
static size_t line_at(const char *text, const char *s) {
  const char *at = strstr(text, s);
  cr_assert_not_null(at, "'%s' not found", s);
  size_t n = 1;
  for (const char *p = text; p < at; p++) n += *p == '\n';
  return n;
}

static const char sample[] =
    "#include <stdio.h>\n"
    "#include <vector>\n"
    "#define N 1024\n"
    "#define CHECK(call) check_result((call), #call, __LINE__)\n"
    "static void check_result(int err, const char *what, int line) {\n"
    "  if (err) { fprintf(stderr, \"%s failed at %d {\\n\", what, line); exit(1); }\n"
    "}\n"
    "struct Params { float scale; int n; float get() const { return scale; } };\n"
    "class Timer {\n"
    " public:\n"
    "  Timer() : start_{0}, stop_(0) {}\n"
    "  void start();\n"
    "  double start_, stop_;\n"
    "};\n"
    "void Timer::start() { start_ = 1; }\n"
    "std::vector<float> g_host(N);\n"
    "static Timer g_timer;\n"
    "const int block_size = 256;\n"
    "int n = 7;\n"
    "template <typename T> void fill(std::vector<T> &v, T x) { for (auto &e : v) e = x; }\n"
    "__host__ __device__ inline float sq(float x) { return x * x; }\n"
    "__device__ float twice(float x) { return 2 * x; }\n"
    "extern \"C\" __global__ void scale(float *out, const float *in, Params p, int n) {\n"
    "  int i = blockIdx.x * block_size + threadIdx.x;\n"
    "  if (i < n) out[i] = sq(in[i]) * p.scale + twice(1);\n"
    "}\n"
    "void run(float *h, int n);\n"
    "void run(float *h, int n) {\n"
    "  float *d;\n"
    "  CHECK(cudaMalloc(&d, n * sizeof(float)));\n"
    "  auto go = [&](int b) { scale<<<b, block_size>>>(d, d, Params{2, n}, n); };\n"
    "  go((n + 255) / 256);\n"
    "  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);\n"
    "}\n"
    "int main(int argc, char **argv) {\n"
    "  Timer t; t.start();\n"
    "  fill(g_host, 1.0f);\n"
    "  run(g_host.data(), N);\n"
    "  printf(\"}}} done\\n\");\n"
    "  return 0;\n"
    "}\n";

Test(host_code, a_sample_keeps_its_device_code_and_loses_its_host_code) {
  size_t n;
  char why[256];
  char *out = elide(sample, &n, why);
  cr_assert_str_empty(why);
  KEPT(out, "#include <stdio.h>");
  KEPT(out, "#define CHECK(call)");
  KEPT(out, "struct Params { float scale;"); /* a kernel's parameter type */
  KEPT(out, "const int block_size = 256;");  /* a constant a kernel names */
  KEPT(out, "__host__ __device__ inline float sq");
  KEPT(out, "__device__ float twice");
  KEPT(out, "if (i < n) out[i] = sq(in[i])");
  GONE(out, "static void check_result");
  GONE(out, "class Timer");
  GONE(out, "Timer::start");
  GONE(out, "g_host");
  GONE(out, "g_timer");
  GONE(out, "int n = 7"); /* the kernel's `n` is its parameter */
  GONE(out, "void fill");
  GONE(out, "void run");
  GONE(out, "<<<");
  GONE(out, "cudaMalloc");
  GONE(out, "main");
  GONE(out, "done");
  cr_assert_eq(line_at(out, "extern \"C\" __global__"), line_at(sample, "extern \"C\" __global__"));
  cr_assert_geq(n, 9);
  free(out);
}

Test(host_code, a_name_device_code_uses_stays) {
  static const char src[] =
      "float host_only(float x) { return x + 1; }\n"
      "float shared_helper(float x) { return x * 3; }\n" /* called by a kernel: cannot decide */
      "enum Mode { MODE_ADD, MODE_MUL };\n"
      "enum Unused { U_A, U_B };\n"
      "typedef unsigned int uint;\n"
      "typedef struct { int a; } host_pair;\n"
      "using real = float;\n"
      "const int W = 8, H = 4;\n"
      "#define SIZE (W * H)\n"
      "__global__ void k(real *x, uint m) {\n"
      "  float host_only = 1;\n" /* a local of that name is no call */
      "  if (m == MODE_ADD && threadIdx.x < SIZE) x[threadIdx.x] = shared_helper(host_only);\n"
      "}\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  GONE(out, "float host_only(float x)");
  KEPT(out, "float shared_helper(float x) { return x * 3; }");
  KEPT(out, "enum Mode { MODE_ADD, MODE_MUL };");
  GONE(out, "enum Unused");
  KEPT(out, "typedef unsigned int uint;");
  GONE(out, "host_pair");
  KEPT(out, "using real = float;");
  KEPT(out, "const int W = 8, H = 4;"); /* named through the macro SIZE */
  free(out);
}

Test(host_code, macros_decide_like_the_words_they_stand_for) {
  static const char src[] =
      "#define HD __host__ __device__\n"
      "#define DEV_INLINE HD inline\n"
      "#define HOST_INLINE static inline\n"
      "#define MAKE_SCALE(T) extern \"C\" __global__ void scale_##T(T *x, int n) { \\\n"
      "  if (threadIdx.x < n) x[threadIdx.x] *= 2; }\n"
      "DEV_INLINE float cube(float x) { return x * x * x; }\n"
      "HOST_INLINE int host_add(int a, int b) { return a + b; }\n"
      "MAKE_SCALE(float)\n"
      "MAKE_SCALE(double)\n"
      "CUDA_CALLABLE float from_a_header(float x) { return x; }\n" /* unknown: stays */
      "int main() { return host_add(1, 2); }\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  KEPT(out, "DEV_INLINE float cube");
  GONE(out, "host_add(int a");
  KEPT(out, "MAKE_SCALE(float)");
  KEPT(out, "MAKE_SCALE(double)");
  KEPT(out, "CUDA_CALLABLE float from_a_header");
  GONE(out, "main");
  KEPT(out, "#define MAKE_SCALE(T) extern");
  free(out);
}

Test(host_code, preprocessor_lines_stay_and_keep_if_balanced) {
  static const char src[] = "#ifdef USE_OPENMP\n"
                            "#include <omp.h>\n"
                            "#endif\n"
                            "void host_loop(float *x, int n) {\n"
                            "#ifdef USE_OPENMP\n"
                            "#pragma omp parallel for\n"
                            "#endif\n"
                            "  for (int i = 0; i < n; i++) x[i] = 0;\n"
                            "}\n"
                            "#if __CUDA_ARCH__ >= 700 || defined(__CUJIT_CPU__)\n"
                            "__global__ void k(float *x) { x[0] = 1; }\n"
                            "#else\n"
                            "__global__ void k(float *x) { x[0] = 2; }\n"
                            "#endif\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  cr_assert_eq(n, 1);
  GONE(out, "host_loop");
  GONE(out, "#pragma omp"); /* inside the definition blanked */
  KEPT(out, "#include <omp.h>");
  cr_assert_eq(line_at(out, "#if __CUDA_ARCH__"), line_at(src, "#if __CUDA_ARCH__"));
  /* every #if of the definition is still there, so the branches still pair */
  const char *p = out;
  int ifs = 0, ends = 0;
  while ((p = strstr(p, "#if"))) ifs++, p++;
  for (p = out; (p = strstr(p, "#endif")); p++) ends++;
  cr_assert_eq(ifs, ends, "%s", out);
  KEPT(out, "x[0] = 1;");
  KEPT(out, "x[0] = 2;");
  free(out);
}

Test(host_code, namespaces_extern_c_blocks_and_classes) {
  static const char src[] =
      "namespace util {\n"
      "void log_line(const char *s);\n"
      "struct HostBuffer { float *p; ~HostBuffer(); };\n"
      "HostBuffer::~HostBuffer() { delete[] p; }\n"
      "struct Vec3 { float x, y, z; __device__ float dot(const Vec3 &o) const; };\n"
      "__device__ float Vec3::dot(const Vec3 &o) const { return x * o.x + y * o.y; }\n"
      "}  // namespace util\n"
      "extern \"C\" {\n"
      "__global__ void norm(util::Vec3 *v, float *out) { out[0] = v[0].dot(v[0]); }\n"
      "int host_api(void);\n"
      "}\n"
      "template <typename T> struct Matrix { T *data; int rows() const { return 3; } };\n"
      "template <typename T> __global__ void tk(T *x) { x[0] = T(1); }\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  cr_assert_str_empty(why);
  KEPT(out, "namespace util {");
  KEPT(out, "}  ");
  GONE(out, "log_line");
  GONE(out, "HostBuffer");
  KEPT(out, "struct Vec3");
  KEPT(out, "__device__ float Vec3::dot");
  KEPT(out, "extern \"C\" {");
  KEPT(out, "__global__ void norm");
  GONE(out, "host_api");
  GONE(out, "struct Matrix");
  KEPT(out, "template <typename T> __global__ void tk");
  free(out);
}

Test(host_code, literals_and_comments_never_confuse_it) {
  static const char src[] = "/* a comment with a brace { and a\n"
                            "# line that is no directive */\n"
                            "static const char *banner = \"{ not a brace\";\n"
                            "void host(void) {\n"
                            "  char c = '}';\n"
                            "  const char *r = R\"x(a raw } string\n"
                            "#with a hash and ) quote\" )x\";\n"
                            "  // a } in a line comment\n"
                            "}\n"
                            "__global__ void k(int *x) { x[0] = '{'; }\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  cr_assert_str_empty(why, "%s", why);
  cr_assert_eq(n, 2);
  GONE(out, "banner");
  GONE(out, "raw } string");
  GONE(out, "#with a hash");                /* inside a raw string: no preprocessor line */
  KEPT(out, "# line that is no directive"); /* a comment is never touched */
  KEPT(out, "__global__ void k(int *x) { x[0] = '{'; }");
  free(out);
}

/* A class that stays loses its host member functions no kept code calls (NVRTC refuses even
** their declarations); its data, constructors, device members and called members stay. */
Test(host_code, a_kept_class_loses_its_host_members) {
  static const char src[] =
      "struct Particle {\n"
      "  float x, v;\n"
      "  float mass = std::sqrt(4.0f), charge{0};\n" /* data: its '=' comes before the '(' */
      " public:\n"
      "  Particle() : x{0}, v(0) {}\n"
      "  void print() const { std::printf(\"%f\\n\", x); describe(); }\n"
      "  void describe() const {}\n"
      "  void reset();\n"
      "  friend bool operator==(const Particle &a, const Particle &b) { return a.x == b.x; }\n"
      "  __host__ __device__ float energy() const { return 0.5f * v * v; }\n"
      "  float speed() const { return v; }\n"
      "  template <class T> T as() const { return T(x); }\n"
      "};\n"
      "void Particle::reset() { x = v = 0; }\n"
      "__global__ void step(Particle *p) { p->x += p->energy() + p->speed(); }\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  KEPT(out, "float x, v;");
  KEPT(out, "float mass = std::sqrt(4.0f), charge{0};");
  KEPT(out, "Particle() : x{0}, v(0) {}");
  GONE(out, "print");
  GONE(out, "describe"); /* called only by a member that went */
  GONE(out, "reset");
  GONE(out, "operator==");
  GONE(out, "as()");
  KEPT(out, "__host__ __device__ float energy()");
  KEPT(out, "float speed() const { return v; }"); /* called by the kernel: the compiler names it */
  KEPT(out, " public:");
  KEPT(out, "};");
  free(out);
}

/* The quick look (a kernel's source given back without reading it as declarations) never hides
** host code: after a kernel, inside namespace and extern "C" blocks, after a struct's body. */
Test(host_code, the_quick_look_misses_no_host_code) {
  static const char *const srcs[] = {
      "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\nvoid host(void) {}\n",
      "namespace a { namespace b {\n__global__ void k(int *x) {}\nint host() { return 1; }\n} }\n",
      "extern \"C\" {\n__global__ void k(int *x) { if (x) { x[0] = 1; } }\nint host(void);\n}\n",
      "struct S { int v; } host_s;\n__global__ void k(int *x) {}\n",
      "__global__ void k(int *x) {}\nint main() { return 0; }",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
    size_t n;
    char why[256];
    char *out = elide(srcs[i], &n, why);
    cr_assert_geq(n, 1, "source %zu: %s", i, out);
    free(out);
    char *b = cj_blank_source(srcs[i]);
    cr_expect_eq(cj_host_may_hold_host_code(b), 1, "the quick look passed source %zu", i);
    free(b);
  }
  static const char kernels[] = "namespace a {\nextern \"C\" __global__ void k(int *x) {}\n"
                                "template <typename T> __global__ void t(T *x) { if (x) {} }\n}\n"
                                "extern \"C\" {\n__device__ int d;\n__global__ void q() {}\n}\n";
  size_t n;
  char why[256];
  char *out = elide(kernels, &n, why);
  cr_assert_str_eq(out, kernels);
  cr_assert_eq(n, 0);
  free(out);
  /* ... and the quick look sees through namespaces and extern "C" blocks (spaced or not) itself,
  ** so that a kernel's source is not read in full */
  static const char *const through[] = {
      kernels,
      "extern \"C\"{__global__ void k(int *x) {}}\n",
      "extern\t\"C\" \n {\n__global__ void k(int *x) {}\n}\n",
      "inline namespace v1 { extern \"C\" { __device__ int d; } }\n",
  };
  for (size_t i = 0; i < sizeof through / sizeof *through; i++) {
    char *b = cj_blank_source(through[i]);
    cr_expect_eq(cj_host_may_hold_host_code(b), 0, "the quick look stopped at:\n%s", through[i]);
    free(b);
  }
}

/* Text it cannot read as declarations comes back unchanged, with the reason and the line. */
static void unchanged(const char *src, const char *reason, size_t line) {
  size_t n = 99;
  char why[256];
  char *out = elide(src, &n, why);
  cr_assert_str_eq(out, src);
  cr_assert_eq(n, 0);
  cr_assert(strstr(why, reason), "'%s' lacks '%s'", why, reason);
  char at[32];
  snprintf(at, sizeof at, "line %zu", line);
  cr_assert(strstr(why, at), "'%s' lacks '%s'", why, at);
  free(out);
}

/* A kernel template and a host wrapper of the same name (another parameter list, C linkage) that
** launches it: the wrapper is host code, and isPow2 that only it calls goes with it. A device
** function's overload by parameter list stays. Before, the kernel's own name kept the wrapper. */
Test(host_code, a_host_function_named_like_a_kernel_goes) {
  static const char src[] =
      "template <unsigned bs, bool pow2>\n"
      "__global__ void sumPass(const float *in, float *out, unsigned n) { out[0] = in[0]; }\n"
      "__device__ float twice(float x) { return 2 * x; }\n"
      "__device__ float twice(float x, float y) { return twice(x) + y; }\n"
      "bool isPow2(unsigned x) { return (x & (x - 1)) == 0; }\n"
      "extern \"C\" void sumPass(int size, int threads, float *d_in, float *d_out) {\n"
      "  if (isPow2(size)) sumPass<256, true><<<1, threads>>>(d_in, d_out, size);\n"
      "}\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  KEPT(out, "__global__ void sumPass(const float *in");
  KEPT(out, "float twice(float x, float y)");
  GONE(out, "isPow2");
  GONE(out, "int threads");
  GONE(out, "<<<");
  cr_assert_eq(n, 2, "the wrapper and its helper: %zu", n);
  free(out);
}

/* The main source elided knowing its headers' kept text: the types and constants the header's
** kernel names stay, a host wrapper named like the header's kernel and the source's host-only
** struct go. */
Test(host_code, the_source_keeps_what_its_headers_name) {
  static const char src[] = "typedef float real_t;\n"
                            "template <class T> struct Pair { T a, b; };\n"
                            "struct Params { int n; real_t w; };\n"
                            "const int kBlock = 128;\n"
                            "struct Log { double ms; };\n"
                            "#include \"k.cuh\"\n"
                            "void mix(int n, Params p) { mix<<<n / kBlock, kBlock>>>(p, 0); }\n"
                            "int main() { Log l; mix(4, Params{}); return (int)l.ms; }\n";
  const char *header = "__global__ void mix(Params p, Pair<real_t> *x) {\n"
                       "  __shared__ real_t t[kBlock]; t[0] = p.w * x->a; }\n";
  size_t n = 0;
  char why[64];
  char *out = cj_host_code_elide_among(src, &header, 1, &n, why, sizeof why);
  cr_assert_not_null(out);
  cr_assert_eq(strlen(out), strlen(src), "length kept");
  KEPT(out, "typedef float real_t;");
  KEPT(out, "struct Pair");
  KEPT(out, "struct Params { int n; real_t w; };");
  KEPT(out, "const int kBlock = 128;");
  GONE(out, "Log");
  GONE(out, "<<<");
  GONE(out, "main");
  free(out);
}

/* Declarations whose shape the simple ones lack: a constructor defined outside its class with a
** member initialiser list (braces and parentheses), a template with a parenthesised default, an
** explicit specialisation, a pointer to a function, and a macro invocation without ';' before a
** namespace's end. Each host one goes whole, each device one stays whole, and the text after each
** is read as it should be (the kernel after them stays, and keeps its line). */
Test(host_code, constructors_specialisations_and_function_pointers) {
  static const char src[] =
      "struct Clock { Clock(int s); int start_, stop_[2]; };\n"
      "Clock::Clock(int s) : start_(s), stop_{0, 1} { start_ += 1; }\n"
      "template <typename T, int K = sizeof(T) * (2 + 1)> void host_fill(T *p) { p[0] = K; }\n"
      "template <> void host_fill<int, 4>(int *p) { p[0] = -4; }\n"
      "template <typename T, int K = (sizeof(T) > 2)> __device__ T dev_pick(T x) { return x * K; "
      "}\n"
      "template <> __device__ float dev_pick<float, 1>(float x) { return x + 1; }\n"
      "static void (*g_report)(int) = nullptr;\n"
      "namespace tools {\n"
      "REGISTER_TOOL(clock)\n"
      "}\n"
      "__global__ void k(float *x) { x[0] = dev_pick<float, 1>(x[0]); }\n";
  size_t n;
  char why[256];
  char *out = elide(src, &n, why);
  cr_assert_str_empty(why, "%s", why);
  GONE(out, "Clock::Clock");
  GONE(out, "start_ += 1");
  GONE(out, "stop_{0, 1}");
  GONE(out, "host_fill");
  GONE(out, "p[0] = -4");
  KEPT(out, "template <typename T, int K = (sizeof(T) > 2)> __device__ T dev_pick(T x) { return x "
            "* K; }");
  KEPT(out, "template <> __device__ float dev_pick<float, 1>(float x) { return x + 1; }");
  GONE(out, "g_report");
  KEPT(out, "REGISTER_TOOL(clock)"); /* cannot tell what it makes: kept as it is */
  KEPT(out, "__global__ void k(float *x) { x[0] = dev_pick<float, 1>(x[0]); }");
  cr_assert_eq(line_at(out, "__global__ void k"), line_at(src, "__global__ void k"));
  free(out);
}

Test(host_code, malformed_text_comes_back_unchanged_with_the_reason) {
  unchanged("int main() {\n  return 0;\n", "never closed", 3);
  unchanged("void f() {}\n}\n__global__ void k() {}\n", "closes nothing", 2);
  unchanged("void f() { g(1]; }\n", "wrong one", 1);
  unchanged("namespace a {\nvoid f() {}\n", "never closed", 3);
  unchanged("int x = 3);\n", "closes nothing", 1);
  /* #if branches that open braces unevenly: both are read, so they cannot pair */
  unchanged("void f(int x) {\n#if A\n  if (x) {\n#else\n  if (!x) {\n#endif\n  }\n}\n"
            "int main() { return 0; }\n",
            "never closed", 10);
  size_t n;
  char why[256];
  char *out = elide("", &n, why); /* nothing at all */
  cr_assert_str_eq(out, "");
  free(out);
  out = elide("\"unterminated\n{", &n, why);
  cr_assert_str_eq(out, "\"unterminated\n{");
  free(out);
}

/* --- whole files through the compile ---------------------------------------------------------- */

TestSuite(host_code_compiled, .init = cj_fixture_open, .fini = cj_fixture_close);

/* A sample without host headers: the runtime calls, launches and host classes must not reach
** the compiler (before host code was elided, NVRTC refused cudaMalloc, <<< and main's std::). */
static const char whole[] =
    "struct Params { float a; };\n"
    "class Stopwatch { public: void start() { t = 0; } double t; };\n"
    "static Stopwatch watch;\n"
    "__global__ void axpy(float *y, const float *x, Params p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] += p.a * x[i];\n"
    "}\n"
    "int main() {\n"
    "  float *x, *y; int n = 1 << 20;\n"
    "  cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));\n"
    "  watch.start();\n"
    "  axpy<<<(n + 255) / 256, 256>>>(y, x, Params{2.0f}, n);\n"
    "  std::printf(\"%f\\n\", watch.t);\n"
    "  return cudaDeviceSynchronize();\n"
    "}\n";

Test(host_code_compiled, a_whole_file_compiles_for_sm_90) {
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, whole, "whole.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "axpy", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  /* what was compiled, and hashed: the kernel at its line, no host code */
  cr_assert(!strstr(p->source, "cudaMalloc") && !strstr(p->source, "Stopwatch"), "%s", p->source);
  cr_assert(!strncmp(strstr(p->source, "__global__ void axpy") - 1, "\n__global__", 11));
  cr_assert_eq(line_at(p->source, "__global__ void axpy"), 4);
  cujit_kernel_free(k);
  cujit_program_free(p);
}

Test(host_code_compiled, a_host_function_device_code_calls_is_named_by_the_compiler) {
  static const char src[] = "float host_scale(float x) { return x * 2; }\n"
                            "__global__ void k(float *x) { x[0] = host_scale(x[0]); }\n"
                            "int main() { return 0; }\n";
  cujit_program *p = NULL;
  cr_assert_neq(cujit_program_compile(engine, src, "both.cu", &sm90, &p), CUJIT_OK);
  cr_assert(strstr(cujit_errmsg(engine), "host_scale"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "both.cu:1"), "the user's line: %s", cujit_errmsg(engine));
}

/* A helper header of host functions (the samples' helper_cuda.h kind) beside the kernels:
** elided for NVRTC too, which reads the header from memory as cujit read it. */
Test(host_code_compiled, a_user_headers_host_code_is_elided_for_nvrtc) {
  char dir[600], name[700];
  snprintf(dir, sizeof dir, "%s/hdr", cj_scratch); /* inside the fixture's scratch directory */
  cr_assert_eq(mkdir(dir, 0700), 0);
  cj_scratch_write(
      "hdr/helper_check.h",
      "#pragma once\n"
      "inline void check(int status, const char *what) {\n"
      "  if (status) { fprintf(stderr, \"%s failed\\n\", what); exit(1); }\n"
      "}\n"
      "template <typename T> T *device_alloc(int n) {\n"
      "  T *p; check(cudaMalloc(&p, n * sizeof(T)), \"cudaMalloc\"); return p;\n"
      "}\n"
      "__host__ __device__ inline int div_up(int a, int b) { return (a + b - 1) / b; }\n");
  snprintf(name, sizeof name, "%s/k.cu", dir);
  static const char src[] = "#include \"helper_check.h\"\n"
                            "__global__ void blocks(int *out, int n) { out[0] = div_up(n, 32); }\n"
                            "int main() { int *d = device_alloc<int>(1); (void)d; return 0; }\n";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, name, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

/* A header's types and constants that only other files' device code names (the main file's
** kernel takes the struct, another header's device function the enum) stay, though nothing in
** the header itself uses them; what only host code names goes (a struct holding a std::vector,
** which NVRTC's <vector> stand-in refuses, and a host function that calls printf). Each header
** was once elided alone, and the kernel's own parameter type was gone. */
Test(host_code_compiled, a_headers_type_that_another_files_kernel_takes_stays) {
  char dir[600], name[700];
  snprintf(dir, sizeof dir, "%s/unit", cj_scratch);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cj_scratch_write("unit/params.h",
                   "#pragma once\n#include <cstdio>\n#include <vector>\n"
                   "struct Params { int n; float scale; };\n"
                   "enum Mode { MODE_ADD, MODE_MUL };\n"
                   "const int kTile = 64;\n"
                   "struct History { std::vector<float> runs; };\n"
                   "inline void show(const Params &p) { printf(\"%d %f\\n\", p.n, p.scale); }\n");
  cj_scratch_write("unit/ops.cuh",
                   "#pragma once\n#include \"params.h\"\n"
                   "__device__ inline float apply(const Params *p, float x, Mode m) {\n"
                   "  return m == MODE_ADD ? x + p->scale : x * p->scale;\n}\n");
  snprintf(name, sizeof name, "%s/k.cu", dir);
  static const char src[] =
      "#include \"params.h\"\n#include \"ops.cuh\"\n"
      "__global__ void run(const Params *p, float *x) {\n"
      "  __shared__ float t[kTile];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  t[threadIdx.x % kTile] = i < p->n ? apply(p, x[i], MODE_MUL) : 0.0f;\n"
      "  if (i < p->n) x[i] = t[threadIdx.x % kTile];\n}\n"
      "int main() { Params p = {4, 2.0f}; History h; show(p); return (int)h.runs.size(); }\n";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, name, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(cujit_program_ptx(p, NULL), "run"), "the kernel");
  cujit_program_free(p);
}

/* A struct with host methods, passed to a kernel: NVRTC took the struct only once its host
** members were gone ("host functions are not allowed in JIT mode", even for a declaration). */
Test(host_code_compiled, a_struct_with_host_methods_compiles_for_sm_90) {
  static const char src[] = "struct Grid {\n"
                            "  int w, h;\n"
                            "  int cells() const { return w * h; }\n"
                            "  void describe() const;\n"
                            "  __device__ int index(int x, int y) const { return y * w + x; }\n"
                            "};\n"
                            "__global__ void fill(int *out, const Grid *g) {\n"
                            "  out[g->index(threadIdx.x, blockIdx.x)] = 1;\n"
                            "}\n";
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "grid.cu", &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_program_free(p);
}

/* -default-device makes functions and variables without an execution space device code: then
** nothing is host code, and nothing is elided (a non-const variable would be, otherwise). */
Test(host_code_compiled, default_device_elides_nothing) {
  static const char src[] = "int scale_by = 3;\n"
                            "float twice(float x) { return 2 * x; }\n"
                            "__global__ void k(float *x) { x[0] = twice(x[0]) * scale_by; }\n";
  const char *flags[] = {"-default-device"};
  cujit_compile_options o = {
      .size = sizeof o, .arch = "sm_90", .extra_flags = flags, .extra_flag_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, "dd.cu", &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(p->source, "int scale_by = 3;"), "kept: %s", p->source);
  cujit_program_free(p);
}

/* The user's headers too: a variable nothing names, elided from a header without the flag, is a
** device variable with it (in the PTX). */
Test(host_code_compiled, default_device_elides_nothing_from_the_headers) {
  char dir[600], name[700];
  snprintf(dir, sizeof dir, "%s/dd", cj_scratch);
  cr_assert_eq(mkdir(dir, 0700), 0);
  cj_scratch_write("dd/counters.h", "#pragma once\nint header_counter = 7;\n");
  snprintf(name, sizeof name, "%s/k.cu", dir);
  static const char src[] = "#include \"counters.h\"\n"
                            "__global__ void k(int *x) { x[0] = 1; }\n";
  const char *flags[] = {"-default-device"};
  cujit_compile_options o = {
      .size = sizeof o, .arch = "sm_90", .extra_flags = flags, .extra_flag_count = 1};
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, src, name, &o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(strstr(cujit_program_ptx(p, NULL), "header_counter"), "kept: %s",
            cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  cr_assert_eq(cujit_program_compile(engine, src, name, &sm90, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert(!strstr(cujit_program_ptx(p, NULL), "header_counter"), "host code, elided: %s",
            cujit_program_ptx(p, NULL));
  cujit_program_free(p);
}
