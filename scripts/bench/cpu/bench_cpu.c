/*
** bench_cpu.c -- the CPU device's kernel side against plain C loops on the same cores: vector add
** and SAXPY (barrier-free: a plain loop per block), a grid-stride reduction (shared-memory tree
** with __syncthreads, warp-shuffle finish: fibers), and the cost of a barrier in a 256-thread
** block reduction, one element per thread. Two worker threads, as tests/cpu/harness.c runs them;
** the C loops split the same work over two pthreads. Prints figures; asserts nothing.
**
** Build by hand after a normal build (it links libcujit.a for cj_cpu_translation_unit):
**   cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude -Iengine/core -Itests/cpu \
**      scripts/bench/cpu/bench_cpu.c tests/cpu/harness.c build/libcujit.a \
**      -lxxhash -ldl -lpthread -lm -o build/bench_cpu
**   CUJIT_SOURCE_DIR=$PWD build/bench_cpu
*/
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KERNEL(name, params, body)                                                                 \
  "#line 1 \"" name ":signature\"\nextern \"C\" __global__ void " name "(" params ") {\n"          \
  "#line 1 \"" name "\"\n" body "\n}\n"

static const char *const NAMES[] = {"vadd", "saxpy", "gsum", "bsum", "wsum"};
// clang-format off
static const char SRC[] =
    "#include <cujit/prelude.h>\n"
    KERNEL("vadd", "const float *a, const float *b, float *c, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) c[i] = a[i] + b[i];")
    KERNEL("saxpy", "float a, const float *x, float *y, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) y[i] = a * x[i] + y[i];")
    KERNEL("gsum", "const float *x, float *out, int n",
           "  __shared__ float s[256];\n"
           "  float v = 0;\n"
           "  for (long long i : cujit::grid_stride(n)) v += x[i];\n"
           "  unsigned t = threadIdx.x;\n"
           "  s[t] = v;\n"
           "  __syncthreads();\n"
           "  for (unsigned st = 128; st >= 32; st >>= 1) {\n"
           "    if (t < st) s[t] += s[t + st];\n"
           "    __syncthreads();\n"
           "  }\n"
           "  if (t < 32) {\n"
           "    v = s[t];\n"
           "    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
           "    if (t == 0) atomicAdd(out, v);\n"
           "  }")
    KERNEL("bsum", "const float *x, float *out",
           "  __shared__ float s[256];\n"
           "  unsigned t = threadIdx.x;\n"
           "  s[t] = x[blockIdx.x * 256 + t];\n"
           "  __syncthreads();\n"
           "  for (unsigned st = 128; st > 0; st >>= 1) {\n"
           "    if (t < st) s[t] += s[t + st];\n"
           "    __syncthreads();\n"
           "  }\n"
           "  if (t == 0) out[blockIdx.x] = s[0];")
    KERNEL("wsum", "const float *x, float *out",
           "  float v = x[blockIdx.x * 256 + threadIdx.x];\n"
           "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
           "  if ((threadIdx.x & 31) == 0) out[blockIdx.x * 8 + threadIdx.x / 32] = v;");
// clang-format on

/* Process CPU time (both workers' together), so that other load on the machine does not count;
** the figures below are CPU seconds, the ratios CPU time against CPU time. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- the C references: the same work split over two pthreads --------------------------------- */
typedef struct part {
  int kind;
  const float *a, *b;
  float *c, alpha;
  long lo, hi;
  double sum;
} part;
static void *ref_part(void *p) {
  part *w = p;
  if (w->kind == 0)
    for (long i = w->lo; i < w->hi; i++) w->c[i] = w->a[i] + w->b[i];
  else if (w->kind == 1)
    for (long i = w->lo; i < w->hi; i++) w->c[i] = w->alpha * w->a[i] + w->c[i];
  else {
    float s = 0;
    for (long i = w->lo; i < w->hi; i++) s += w->a[i];
    w->sum = s;
  }
  return NULL;
}
static double ref_run(int kind, const float *a, const float *b, float *c, float alpha, long n) {
  pthread_t th[2];
  part w[2];
  for (int k = 0; k < 2; k++) {
    w[k] = (part){kind, a, b, c, alpha, n * k / 2, n * (k + 1) / 2, 0};
    pthread_create(&th[k], NULL, ref_part, &w[k]);
  }
  for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
  return w[0].sum + w[1].sum;
}

static char err[16384];
/* The best of `reps` runs of a kernel launch and of a C reference, in CPU seconds. */
static double best_launch(int reps, cpu_module *m, const char *k, unsigned grid, void **args) {
  cpu_launch_opts o = {{grid, 1, 1}, {256, 1, 1}, 0, 0, 0};
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    if (cpu_launch(m, k, &o, args, err, sizeof err) != 0) fprintf(stderr, "%s\n", err);
    double t = now() - t0;
    best = t < best ? t : best;
  }
  return best;
}
static double best_ref(int reps, int kind, const float *a, const float *b, float *c, float alpha,
                       long n) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    ref_run(kind, a, b, c, alpha, n);
    double t = now() - t0;
    best = t < best ? t : best;
  }
  return best;
}

int main(void) {
  cpu_module *m = cpu_compile(SRC, NAMES, 5, 0, err, sizeof err);
  if (!m) {
    fprintf(stderr, "compile failed: %s\n", err);
    return 1;
  }
  printf("CPU time of the whole process (both workers), best of several runs\n");
  long sizes[] = {1L << 18, 1L << 24};
  for (int s = 0; s < 2; s++) {
    int n = (int)sizes[s];
    float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), alpha = 1.5f;
    for (int i = 0; i < n; i++) a[i] = (float)(i % 1000) * 0.001f, b[i] = 1.0f, c[i] = 0;
    int reps = n < (1 << 20) ? 200 : 10;
    void *va[] = {&a, &b, &c, &n}, *sa[] = {&alpha, &a, &c, &n};
    double kv = best_launch(reps, m, "vadd", (n + 255) / 256, va);
    double cv = best_ref(reps, 0, a, b, c, 0, n);
    double ks = best_launch(reps, m, "saxpy", (n + 255) / 256, sa);
    double cs = best_ref(reps, 1, a, NULL, c, alpha, n);
    float out = 0, *po = &out;
    void *ga[] = {&a, &po, &n};
    double kg[2], cg = best_ref(reps, 2, a, NULL, NULL, 0, n);
    for (int g = 0; g < 2; g++) {
      kg[g] = best_launch(reps, m, "gsum", g ? 8 : 2, ga);
    }
    printf("n = %d floats (%s)\n", n, n < (1 << 20) ? "in cache" : "from memory");
    printf("  vector add     kernel %8.1f us   C loop %8.1f us   ratio %.2f\n", kv * 1e6, cv * 1e6,
           kv / cv);
    printf("  saxpy          kernel %8.1f us   C loop %8.1f us   ratio %.2f\n", ks * 1e6, cs * 1e6,
           ks / cs);
    for (int g = 0; g < 2; g++)
      printf("  grid-stride sum, %d blocks: kernel %8.1f us   C loop %8.1f us   ratio %.2f\n",
             g ? 8 : 2, kg[g] * 1e6, cg * 1e6, kg[g] / cg);
    free(a), free(b), free(c);
  }
  /* The barrier: 4096 blocks of 256 threads, 9 barriers each (one, then eight tree steps). */
  int blocks = 4096;
  float *x = malloc(blocks * 256 * 4), *o = malloc(blocks * 4);
  for (int i = 0; i < blocks * 256; i++) x[i] = 1.0f;
  void *ba[] = {&x, &o};
  double kb = best_launch(5, m, "bsum", blocks, ba);
  printf("block reduction, 256 threads, one element each: %.1f ns (CPU) per thread per barrier "
         "(%.2f ms CPU for %d blocks x 9 barriers)\n",
         kb / ((double)blocks * 256 * 9) * 1e9, kb * 1e3, blocks);
  if (o[0] != 256.0f) printf("  (wrong result %g)\n", o[0]);
  float *wo = malloc(blocks * 8 * 4);
  void *wa[] = {&x, &wo};
  double kw = best_launch(5, m, "wsum", blocks, wa);
  printf("warp-shuffle reduction, 256 threads, five __shfl_down_sync each: %.1f ns (CPU) per "
         "thread per shuffle\n",
         kw / ((double)blocks * 256 * 5) * 1e9);
  if (wo[0] != 32.0f) printf("  (wrong result %g)\n", wo[0]);
  free(wo);
  free(x), free(o);
  cpu_unload(m);
  return 0;
}
