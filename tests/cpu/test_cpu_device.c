#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "#line 1 \"vadd:signature\"\n"
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n"
    "#line 1 \"vadd\"\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "#include <cujit/reduce.h>\n"
    "extern \"C\" __global__ void bsum(const float *a, float *out, int n) {\n"
    "  float v = 0;\n"
    "  for (long long i : cujit::grid_stride(n)) v += a[i];\n"
    "  v = cujit::block_sum(v);\n"
    "  if (threadIdx.x == 0) atomicAdd(out, v);\n"
    "}\n";
int main(void) {
  char err[8192];
  const char *k[] = {"vadd", "bsum"};
  cpu_module *m = cpu_compile(src, k, 2, 0, err, sizeof err);
  if (!m) {
    printf("compile failed: %s\n", err);
    return 1;
  }
  int n = 100000;
  float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), out = 0;
  for (int i = 0; i < n; i++) a[i] = i, b[i] = 2 * i, c[i] = -1;
  void *args[] = {&a, &b, &c, &n};
  cpu_launch_opts o = {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0, 0, 0};
  if (cpu_launch(m, "vadd", &o, args, err, sizeof err)) printf("err %s\n", err);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != 3.0f * i;
  printf("vadd bad=%d\n", bad);
  for (int i = 0; i < n; i++) a[i] = 1;
  float *po = &out;
  void *args2[] = {&a, &po, &n};
  cpu_launch_opts o2 = {{64, 1, 1}, {256, 1, 1}, 0, 0, 0};
  if (cpu_launch(m, "bsum", &o2, args2, err, sizeof err)) printf("err %s\n", err);
  printf("bsum %f\n", out);
  cpu_unload(m);
  return 0;
}
