/*
** report_goals.c -- the goals the benchmark report judges (issues 5, 9, 12, 15, 25 and 26,
*DESIGN.md
** section 5), each against the floor measured beside it, and their verdicts: met, missed, or NOT
** MEASURED when a figure or its floor is missing, never met.
*/
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum goal_kind {
  RATIO_MAX,    /* value / floor <= limit (times, lower is better) */
  FRACTION_MIN, /* value / floor >= limit (bandwidths) */
  SPEEDUP_MIN,  /* floor / value >= limit (the peer's time over ours) */
  ABSOLUTE_MAX, /* value <= limit, in the row's unit */
  ABSOLUTE_MIN, /* value >= limit, in the row's unit (rates) */
  EXCESS_MAX    /* value - floor <= limit, in the row's unit (cujit's part over the driver's) */
} goal_kind;

typedef struct goal {
  const char *what, *bcase, *system, *variant; /* NULL: every variant; "rt*": those so begun */
  const char *floor_sys, *floor_variant;       /* floor_variant NULL: the same variant */
  goal_kind kind;
  double limit;
  int largest_only; /* judge only the largest size measured (bandwidth: 2^28) */
} goal;

static const goal goals[] = {
    /* Launch goals are judged in one process: the floor measured there, interleaved with cujit,
    ** since the same raw launch moved by up to 30% from one process to the next. */
    {"launch host time, C <= 1.05x raw C in the same process", "launch", "cujit_c", NULL,
     "raw_c_same", NULL, RATIO_MAX, 1.05, 0},
    {"launch host time, Lua <= 1.15x raw C in the same (Lua) process", "launch", "cujit_lua", NULL,
     "raw_c_in_lua", NULL, RATIO_MAX, 1.15, 0},
    {"cold compile <= 1.10x NVRTC alone", "cold", "cujit_c", "vadd", "nvrtc", NULL, RATIO_MAX, 1.10,
     0},
    {"cold compile from Lua <= 1.10x NVRTC alone", "cold", "cujit_lua", "vadd", "nvrtc", NULL,
     RATIO_MAX, 1.10, 0},
    {"warm cache to first launch <= 0.2 ms", "warm", "cujit_c", "vadd", NULL, NULL, ABSOLUTE_MAX,
     0.2, 0},
    {"warm cache to first launch from Lua <= 0.2 ms", "warm", "cujit_lua", "vadd", NULL, NULL,
     ABSOLUTE_MAX, 0.2, 0},
    {"warm cache, cujit's part over the driver's own load + launch <= 0.2 ms", "warm", "cujit_c",
     "vadd", "raw", NULL, EXCESS_MAX, 0.2, 0},
    {"warm cache from Lua, cujit's part over the driver's own load + launch <= 0.2 ms", "warm",
     "cujit_lua", "vadd", "raw", NULL, EXCESS_MAX, 0.2, 0},
    {"whole script process well under CuPy's (<= 0.5x)", "process", "cujit_lua", "vadd", "cupy",
     NULL, RATIO_MAX, 0.5, 0},
    {"whole script process well under Numba's (<= 0.5x)", "process", "cujit_lua", "vadd", "numba",
     NULL, RATIO_MAX, 0.5, 0},
    {"bandwidth-bound kernels >= 93% of the device copy", "bandwidth", "cujit_c", NULL, "raw",
     "copy", FRACTION_MIN, 0.93, 1},
    {"bandwidth-bound kernels from Lua >= 93% of the device copy", "bandwidth", "cujit_lua", NULL,
     "raw", "copy", FRACTION_MIN, 0.93, 1},
    {"sum >= 90% of read bandwidth", "sum", "cujit_c", "sum", "raw", "read", FRACTION_MIN, 0.90, 0},
    {"Monte Carlo >= 1000x faster than Numba, RNG setup included", "montecarlo", "cujit_c", "e2e",
     "numba", NULL, SPEEDUP_MIN, 1000, 0},
    {"Monte Carlo <= 0.3 ms in all", "montecarlo", "cujit_c", "e2e", NULL, NULL, ABSOLUTE_MAX, 0.3,
     0},
    /* Issue 26: the GEMM at 8192^3 against cuBLAS (through CuPy) in the same run. */
    {"f16 GEMM >= 600 TFLOP/s (tensor cores)", "gemm", "cujit_c", "f16", NULL, NULL, ABSOLUTE_MIN,
     600, 0},
    {"f16 GEMM >= 75% of cuBLAS f16", "gemm", "cujit_c", "f16", "cupy", NULL, FRACTION_MIN, 0.75,
     0},
    {"bf16 GEMM >= 600 TFLOP/s (tensor cores)", "gemm", "cujit_c", "bf16", NULL, NULL, ABSOLUTE_MIN,
     600, 0},
    {"f32 GEMM (SIMT) >= 80% of cuBLAS f32", "gemm", "cujit_c", "f32", "cupy", NULL, FRACTION_MIN,
     0.80, 0},
    /* Issue 12: a replayed graph costs the driver's own replay and nothing more. */
    {"graph replay per node, C <= 1.05x the raw graph in the same process", "graph", "cujit_c",
     NULL, "raw_c_same", NULL, RATIO_MAX, 1.05, 0},
    {"graph replay per node, Lua <= 1.05x the raw graph (raw C process)", "graph", "cujit_lua",
     NULL, "raw", NULL, RATIO_MAX, 1.05, 0},
    {"graph replay about 0.5 us a node (<= 0.6 us at 1000 nodes)", "graph", "cujit_c", "nodes1000",
     NULL, NULL, ABSOLUTE_MAX, 0.6, 0},
    {"graph replay from Lua about 0.5 us a node (<= 0.6 us at 1000 nodes)", "graph", "cujit_lua",
     "nodes1000", NULL, NULL, ABSOLUTE_MAX, 0.6, 0},
    /* Issue 15: waits at the driver's floor, small operations at or below CuPy's. */
    {"wait round trip <= 1.10x the driver's own wait of the same kind", "latency", "cujit_c", "rt*",
     "raw", NULL, RATIO_MAX, 1.10, 0},
    {"wait round trip from Lua <= 1.10x the driver's own wait of the same kind", "latency",
     "cujit_lua", "rt*", "raw", NULL, RATIO_MAX, 1.10, 0},
    {"CPU during a 1 s wait <= 10% of a core", "latency", "cujit_c", "cpu_wait1s", NULL, NULL,
     ABSOLUTE_MAX, 10, 0},
    {"CPU during a 1 s wait from Lua <= 10% of a core", "latency", "cujit_lua", "cpu_wait1s", NULL,
     NULL, ABSOLUTE_MAX, 10, 0},
    {"small operations at or below CuPy's", "small", "cujit_c", NULL, "cupy", NULL, RATIO_MAX, 1.0,
     0},
    {"small operations from Lua at or below CuPy's", "small", "cujit_lua", NULL, "cupy", NULL,
     RATIO_MAX, 1.0, 0},
    {"allocate + free >= 2x cheaper than cuMemAlloc + cuMemFree", "small", "cujit_c", "alloc_free",
     "raw", NULL, RATIO_MAX, 0.5, 0},
    /* Issue 25: compiling at once, a process's first compile beside the driver's start. */
    {"eight independent programs at once >= 5x faster than one after another", "compile", "cujit_c",
     "many8_parallel", "cujit_c", "many8_serial", RATIO_MAX, 0.2, 0},
    {"the same, eight including <cooperative_groups.h>", "compile", "cujit_c", "heavy8_parallel",
     "cujit_c", "heavy8_serial", RATIO_MAX, 0.2, 0},
    {"(the machine's floor for it: NVRTC alone in eight processes, a precompiled header each)",
     "compile", "nvrtc", "heavy8_nvrtc_parallel", "nvrtc", "heavy8_nvrtc_serial", RATIO_MAX, 0.2,
     0},
    {"the same, precompiled headers off", "compile", "cujit_c", "heavy8_nopch_parallel", "cujit_c",
     "heavy8_nopch_serial", RATIO_MAX, 0.2, 0},
    {"the same on the CPU device (g++)", "compile", "cujit_c", "many8_parallel_cpu", "cujit_c",
     "many8_serial_cpu", RATIO_MAX, 0.2, 0},
    {"a trivial kernel's first compile of a process, cuInit included, <= 0.8x NVRTC alone with "
     "the driver started inside it",
     "compile", "cujit_c", "first_cujit", "nvrtc", "first_nvrtc", RATIO_MAX, 0.8, 0},
    {"(its floor: the driver alone, cuInit and cuDeviceGet in a new process)", "compile", "raw",
     "first_driver", "nvrtc", "first_nvrtc", RATIO_MAX, 0.8, 0},
    /* Issue 9: defining what is already defined is a lookup. */
    {"defining an already-defined kernel in the same process under 5 us", "redefine", "cujit_c",
     "define", NULL, NULL, ABSOLUTE_MAX, 5, 0},
    /* Issue 25: a later kernel with the same heavy headers uses the precompiled header. */
    {"second kernel including <cooperative_groups.h> in a process <= 0.15x NVRTC alone", "pch",
     "cujit_c", "cg_second", "nvrtc", NULL, RATIO_MAX, 0.15, 0},
    /* Issue 25: device code kept as LTO-IR makes a new kernel's compile small. */
    {"new process, cold kernel, warm LTO-IR library <= 0.2x a full compile", "link", "cujit_c",
     "linked", "cujit_c", "whole", RATIO_MAX, 0.2, 0},
    {"the same with the device's arch given (the driver starts beside the compile)", "link",
     "cujit_c", "linked_arch", "cujit_c", "whole_arch", RATIO_MAX, 0.2, 0},
    {"linked kernel's run time within 1.05x of the fully compiled one", "link", "cujit_c",
     "run_linked", "cujit_c", "run_whole", RATIO_MAX, 1.05, 0},
};

/* A goal's variant: exact, or a prefix when it ends in '*'. */
static int variant_matches(const char *pattern, const char *variant) {
  size_t n = strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, variant, n - 1) == 0;
  return strcmp(pattern, variant) == 0;
}

static void verdict(const goal *g, const row *r, tally *t) {
  const char *fv = g->floor_variant ? g->floor_variant : r->variant;
  const row *f = g->floor_sys ? find(g->bcase, g->floor_sys, fv, r->n) : NULL;
  char size[32] = "";
  if (r->n > 0 && !strcmp(g->bcase, "bandwidth"))
    snprintf(size, sizeof size, " 2^%.0f", log2(r->n));
  out("- %s [%s%s, %s]: ", g->what, r->variant, size, title_of(g->system));
  if (!isfinite(r->value) || (g->floor_sys && (!f || !isfinite(f->value) || f->value <= 0))) {
    const row *gone = !isfinite(r->value) ? r : f;
    out("NOT MEASURED (%s missing%s%s)\n", gone ? title_of(gone->system) : title_of(g->floor_sys),
        gone && *gone->detail ? ": " : "", gone ? gone->detail : "");
    t->unmeasured++;
    return;
  }
  double got = r->value, ratio = f ? got / f->value : got;
  int met = 0;
  switch (g->kind) {
  case RATIO_MAX:
    met = ratio <= g->limit, out("%.3fx", ratio);
    break;
  case FRACTION_MIN:
    met = ratio >= g->limit, out("%.1f%%", 100 * ratio);
    break;
  case SPEEDUP_MIN:
    met = 1 / ratio >= g->limit, out("%.0fx faster", 1 / ratio);
    break;
  case ABSOLUTE_MAX:
    met = got <= g->limit, out("%.4g %s", got, r->unit);
    break;
  case ABSOLUTE_MIN:
    met = got >= g->limit, out("%.4g %s", got, r->unit);
    break;
  case EXCESS_MAX:
    met = got - f->value <= g->limit, out("%.4g %s", got - f->value, r->unit);
    break;
  }
  out(" -> GOAL %s\n", met ? "MET" : "MISSED");
  if (met)
    t->met++;
  else
    t->missed++;
}

static void judge(const goal *g, tally *t) {
  double largest = -1;
  for (int i = 0; g->largest_only && i < nrows; i++)
    if (!strcmp(rows[i].bcase, g->bcase) && rows[i].n > largest) largest = rows[i].n;
  int any = 0;
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows[i];
    if (strcmp(r->bcase, g->bcase) || strcmp(r->system, g->system) ||
        (g->variant && !variant_matches(g->variant, r->variant)) ||
        (g->largest_only && r->n != largest))
      continue;
    verdict(g, r, t);
    any = 1;
  }
  if (!any) {
    const row *why = NULL; /* a "missing" row of the whole case says why */
    for (int i = 0; i < nrows && !why; i++)
      if (!strcmp(rows[i].bcase, g->bcase) && !strcmp(rows[i].system, g->system)) why = &rows[i];
    out("- %s [%s]: NOT MEASURED (%s)\n", g->what, title_of(g->system),
        why ? why->detail : "no row in the results");
    t->unmeasured++;
  }
}

tally goals_section(void) {
  tally t = {0, 0, 0};
  out("\n### Goals (issues 5, 9 and 15, DESIGN.md section 5)\n\n");
  for (size_t i = 0; i < sizeof goals / sizeof *goals; i++) judge(&goals[i], &t);
  out("\nGoals: %d met, %d missed, %d not measured.\n", t.met, t.missed, t.unmeasured);
  return t;
}
