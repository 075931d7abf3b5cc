/*
** redefine.c -- what defining an already-defined kernel costs in the same process, and compiling
** an already-compiled program: the per-engine map of loaded programs should make each a lookup
** (goal: under 5 us). Needs NVRTC once (for the first compile, unless the disk cache has it), no
** GPU: the arch is explicit. Prints one line per figure: what, median and 90th percentile in us,
** and the same as a results.csv row (case "redefine", system cujit_c, variants define and
** compile; with another arch, define_ARCH and compile_ARCH) for run.sh. Arch "cpu" measures the
** CPU device's path (its first compile needs the C++ compiler instead of NVRTC).
**   usage: cujit_bench_redefine [repetitions, default 2000] [arch, default sm_90]
*/
#include "common.h"

#include "cujit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The median, then (bench_median sorted them) the 90th percentile. */
static void report(const char *what, const char *variant, const char *arch, double *us, int n) {
  double median = bench_median(us, n);
  int other = strcmp(arch, "sm_90") != 0;
  printf("%-16s median %8.2f us   p90 %8.2f us   (%d repetitions, %s)\n", what, median,
         us[n * 9 / 10], n, arch);
  printf("redefine,cujit_c,%s%s%s,%d,%.4g,us,ok,median of %d; p90 %.4g us\n", variant,
         other ? "_" : "", other ? arch : "", n, median, n, us[n * 9 / 10]);
}

static const char *signature = "saxpy(float a, const float *x, float *y, int n)";
static const char *body = "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "if (i < n) y[i] = a * x[i] + y[i];\n";
static const char *program = "extern \"C\" __global__ void scale(float a, float *y, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) y[i] *= a;\n"
                             "}\n";

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 2000;
  if (reps < 10) reps = 10;
  const char *arch = argc > 2 ? argv[2] : "sm_90";
  double *us = malloc((size_t)reps * sizeof *us);
  cujit_engine *e;
  if (!us || cujit_open(&e) != CUJIT_OK) return 1;
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  cujit_kernel *k;
  cujit_program *p;
  if (cujit_kernel_define(e, signature, body, NULL, &o, &k) != CUJIT_OK ||
      cujit_program_compile(e, program, "scale.cu", &o, &p) != CUJIT_OK) {
    fprintf(stderr, "cujit_bench_redefine: %s\n", cujit_errmsg(e));
    return 1;
  }
  for (int r = 0; r < reps; r++) { /* the first kernel and program stay alive meanwhile */
    cujit_kernel *again;
    double t0 = bench_now_us();
    cujit_status st = cujit_kernel_define(e, signature, body, NULL, &o, &again);
    us[r] = bench_now_us() - t0;
    if (st != CUJIT_OK) return 1;
    cujit_kernel_free(again);
  }
  report("define again", "define", arch, us, reps);
  for (int r = 0; r < reps; r++) {
    cujit_program *again;
    double t0 = bench_now_us();
    cujit_status st = cujit_program_compile(e, program, "scale.cu", &o, &again);
    us[r] = bench_now_us() - t0;
    if (st != CUJIT_OK) return 1;
    cujit_program_free(again);
  }
  report("compile again", "compile", arch, us, reps);
  cujit_kernel_free(k);
  cujit_program_free(p);
  cujit_close(e);
  free(us);
  return 0;
}
