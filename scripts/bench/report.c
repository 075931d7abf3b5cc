/*
** report.c -- turns results.csv into the benchmark's table (stdout and table.md), its verdict on
** each goal of issue 5 / DESIGN.md section 5 (and issue 12's graph goals), and its charts
*(launch.png, bandwidth_*.png).
**
** usage: cujit_bench_report --csv results.csv --out DIR
** A malformed CSV line is an error naming the line; a figure that is missing shows as "missing",
** and a goal that depends on it reads NOT MEASURED, never met.
*/
#include "chart.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELDS = 8, MAX_ROWS = 20000, SIZES = 32 };

typedef struct row {
  char *bcase, *system, *variant, *unit, *status, *detail;
  double n, value; /* value is NaN unless status is "ok" */
} row;

static row rows[MAX_ROWS];
static int nrows;
static FILE *md; /* table.md, written alongside stdout */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  if (md) {
    va_start(ap, fmt);
    vfprintf(md, fmt, ap);
    va_end(ap);
  }
}

/* ---- reading --------------------------------------------------------------------------------- */

static int split(char *line, char **f) {
  int n = 0;
  for (char *p = line;; p++) {
    if (n < FIELDS) f[n] = n == 0 ? line : f[n];
    if (*p == ',' || *p == '\0') {
      int end = *p == '\0';
      *p = '\0';
      if (++n < FIELDS && !end) f[n] = p + 1;
      if (end) break;
    }
  }
  return n;
}

static int parse_row(char *line, int lineno, row *r) {
  char *f[FIELDS];
  int n = split(line, f);
  if (n != FIELDS) {
    fprintf(stderr,
            "results CSV line %d: %d fields, expected %d "
            "(case,system,variant,n,value,unit,status,detail)\n",
            lineno, n, FIELDS);
    return 0;
  }
  char *end;
  r->n = strtod(f[3], &end);
  if (end == f[3] || *end) {
    fprintf(stderr, "results CSV line %d: size '%s' is not a number\n", lineno, f[3]);
    return 0;
  }
  int ok = !strcmp(f[6], "ok");
  r->value = ok ? strtod(f[4], &end) : NAN;
  if (ok && (end == f[4] || *end || !isfinite(r->value))) {
    fprintf(stderr, "results CSV line %d: status ok but value '%s' is not a number\n", lineno,
            f[4]);
    return 0;
  }
  char **dst[] = {&r->bcase, &r->system, &r->variant, NULL, NULL, &r->unit, &r->status, &r->detail};
  for (int i = 0; i < FIELDS; i++)
    if (dst[i] && !(*dst[i] = strdup(f[i]))) return 0;
  return 1;
}

static int read_csv(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot read %s: %s\n", path, strerror(errno));
    return 0;
  }
  char line[4096];
  int lineno = 0, ok = 1;
  while (ok && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = '\0';
    if (!*line || (lineno == 1 && !strncmp(line, "case,", 5))) continue;
    if (nrows == MAX_ROWS) {
      fprintf(stderr, "%s: more than %d rows\n", path, MAX_ROWS);
      ok = 0;
    } else
      ok = parse_row(line, lineno, &rows[nrows++]);
  }
  fclose(f);
  if (ok && nrows == 0) fprintf(stderr, "%s holds no results\n", path), ok = 0;
  return ok;
}

/* ---- looking up ------------------------------------------------------------------------------ */

/* The row for (case, system, variant) at size n (n < 0: any size). */
static const row *find(const char *bcase, const char *system, const char *variant, double n) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].system, system) &&
        !strcmp(rows[i].variant, variant) && (n < 0 || rows[i].n == n))
      return &rows[i];
  return NULL;
}

static double value(const char *bcase, const char *system, const char *variant, double n) {
  const row *r = find(bcase, system, variant, n);
  return r ? r->value : NAN;
}

/* The sizes measured for a case, ascending. */
static int sizes(const char *bcase, double *n) {
  int count = 0;
  for (int i = 0; i < nrows; i++) {
    if (strcmp(rows[i].bcase, bcase) != 0 || !(rows[i].n > 0)) continue;
    int seen = 0;
    for (int k = 0; k < count; k++) seen |= n[k] == rows[i].n;
    if (seen || count == SIZES) continue;
    int at = count++;
    while (at > 0 && n[at - 1] > rows[i].n) n[at] = n[at - 1], at--;
    n[at] = rows[i].n;
  }
  return count;
}

/* ---- the table ------------------------------------------------------------------------------- */

static const char *const systems[] = {"raw", "nvrtc", "cujit_c", "cujit_lua", "cupy", "numba"};
static const char *const titles[] = {"raw C",     "NVRTC alone", "cujit C",
                                     "cujit Lua", "CuPy",        "Numba"};
enum { NSYS = 6 };

/* The launch case's floors measured inside the cujit processes, interleaved with cujit's own
** launches: cujit_bench_c's raw cuLaunchKernel, and bench.lua's raw launcher called from the same
** Lua loop and from a C loop. Only table 1, its goals and its chart show them. And cujit C's
** waits under CUJIT_WAIT=spin, which only table 8 shows. */
static const char *const same_systems[] = {"raw_c_same", "raw_lua_same", "raw_c_in_lua",
                                           "cujit_c_spin"};
static const char *const same_titles[] = {"raw C (same process)", "raw from Lua (same process)",
                                          "raw C loop (Lua process)", "cujit C spin"};
enum { NSAME = 4 };

static const char *title_of(const char *system) {
  for (int s = 0; s < NSYS; s++)
    if (!strcmp(systems[s], system)) return titles[s];
  for (int s = 0; s < NSAME; s++)
    if (!strcmp(same_systems[s], system)) return same_titles[s];
  return system;
}

/* A table cell: "-" when the system has no such figure, "missing" when it could not be measured.
** fraction: 0 shows value / floor as "1.02x", 1 as a percentage, 2 as "Nx faster" (floor / value).
*/
static void cell(const row *r, double floor, int fraction) {
  double v = r ? r->value : NAN;
  if (!r)
    out(" - |");
  else if (!isfinite(v))
    out(" missing |");
  else if (!isfinite(floor) || floor <= 0)
    out(" %.4g |", v);
  else if (fraction == 2)
    out(" %.4g (%.0fx faster) |", v, floor / v);
  else if (fraction)
    out(" %.4g (%.0f%%) |", v, 100 * v / floor);
  else
    out(" %.4g (%.2fx) |", v, v / floor);
}

/* Why figures of a case are missing, one line per system and reason. */
static void reasons(const char *bcase) {
  for (int i = 0; i < nrows; i++) {
    if (strcmp(rows[i].bcase, bcase) != 0 || strcmp(rows[i].status, "missing") != 0) continue;
    int repeat = 0;
    for (int j = 0; j < i && !repeat; j++)
      repeat = !strcmp(rows[j].bcase, bcase) && !strcmp(rows[j].system, rows[i].system) &&
               !strcmp(rows[j].detail, rows[i].detail);
    if (!repeat) out("- %s missing: %s\n", title_of(rows[i].system), rows[i].detail);
  }
}

/* A column of a table: a system and the system its ratios are over (NULL: none shown). */
typedef struct column {
  const char *system, *floor;
} column;

static int present(const char *bcase, const char *system) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].system, system)) return 1;
  return 0;
}

/* One table: a row per variant, a column per system present in the case, each cell's ratio over
** its column's floor at `floor_variant` (NULL: the row's own variant). */
static void column_table(const char *heading, const char *bcase, const char *const *variants,
                         int nvariants, const column *cols, int ncols, const char *floor_variant,
                         int fraction) {
  int used[16] = {0};
  out("\n### %s\n\n| |", heading);
  for (int c = 0; c < ncols && c < 16; c++)
    if ((used[c] = present(bcase, cols[c].system))) out(" %s |", title_of(cols[c].system));
  out("\n|---|");
  for (int c = 0; c < ncols && c < 16; c++)
    if (used[c]) out("---|");
  out("\n");
  for (int v = 0; v < nvariants; v++) {
    const char *fv = floor_variant ? floor_variant : variants[v];
    out("| %s |", variants[v]);
    for (int c = 0; c < ncols && c < 16; c++)
      if (used[c])
        cell(find(bcase, cols[c].system, variants[v], -1),
             cols[c].floor ? value(bcase, cols[c].floor, fv, -1) : NAN, fraction);
    out("\n");
  }
  reasons(bcase);
}

/* A table whose every system is held against one floor (none: floor_sys NULL). */
static void simple_table(const char *heading, const char *bcase, const char *const *variants,
                         int nvariants, const char *floor_sys, const char *floor_variant,
                         int fraction) {
  column cols[NSYS];
  for (int s = 0; s < NSYS; s++)
    cols[s].system = systems[s],
    cols[s].floor = floor_sys && strcmp(systems[s], floor_sys) ? floor_sys : NULL;
  column_table(heading, bcase, variants, nvariants, cols, NSYS, floor_variant, fraction);
}

/* Table 1: each cujit figure over the raw floor measured in its own process, interleaved with
** it; the separate raw C process, CuPy and Numba as before. */
static void launch_table(void) {
  static const char *const variants[] = {"args1", "args4", "args12"};
  static const column cols[] = {
      {"raw", NULL},
      {"raw_c_same", NULL},
      {"cujit_c", "raw_c_same"},
      {"raw_c_in_lua", NULL},
      {"raw_lua_same", "raw_c_in_lua"},
      {"cujit_lua", "raw_c_in_lua"},
      {"cupy", "raw"},
      {"numba", "raw"},
  };
  column_table("1. Host time per async launch of an empty kernel, us (x: cujit C over raw C in "
               "its own process, cujit Lua and raw from Lua over raw C in the Lua process, both "
               "interleaved with the cujit launches; CuPy and Numba over raw C in a process of "
               "its own)",
               "launch", variants, 3, cols, sizeof cols / sizeof *cols, NULL, 0);
}

static const char *const bw_variants[] = {"vadd",   "saxpy",   "vadd4",
                                          "saxpy4", "vadd_ew", "saxpy_ew"};
enum { BW_VARIANTS = 6 };

static int any_figure(const char *bcase, const char *variant, double n) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].variant, variant) && rows[i].n == n)
      return 1;
  return 0;
}

static void bandwidth_table(void) {
  double n[SIZES];
  int count = sizes("bandwidth", n);
  out("\n### 5. Bandwidth, GB/s (bytes read + written / kernel time by events; %% of the device "
      "copy at the same size)\n\n| size | kernel | copy | raw C | cujit C | cujit Lua | CuPy | "
      "Numba |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < count; k++) {
    double copy = value("bandwidth", "raw", "copy", n[k]);
    for (int v = 0; v < BW_VARIANTS; v++) {
      if (v > 0 && !any_figure("bandwidth", bw_variants[v], n[k])) continue;
      out("| 2^%.0f | %s |", log2(n[k]), bw_variants[v]);
      if (v == 0)
        cell(find("bandwidth", "raw", "copy", n[k]), NAN, 0);
      else
        out(" |");
      for (int s = 0; s < NSYS; s++)
        if (strcmp(systems[s], "nvrtc") != 0)
          cell(find("bandwidth", systems[s], bw_variants[v], n[k]), copy, 1);
      out("\n");
    }
  }
  reasons("bandwidth");
}

/* ---- goals ----------------------------------------------------------------------------------- */

typedef enum goal_kind {
  RATIO_MAX,    /* value / floor <= limit (times, lower is better) */
  FRACTION_MIN, /* value / floor >= limit (bandwidths) */
  SPEEDUP_MIN,  /* floor / value >= limit (the peer's time over ours) */
  ABSOLUTE_MAX, /* value <= limit, in the row's unit */
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
    {"the same, precompiled headers off", "compile", "cujit_c", "heavy8_nopch_parallel", "cujit_c",
     "heavy8_nopch_serial", RATIO_MAX, 0.2, 0},
    {"the same on the CPU device (g++)", "compile", "cujit_c", "many8_parallel_cpu", "cujit_c",
     "many8_serial_cpu", RATIO_MAX, 0.2, 0},
    {"a trivial kernel's first compile of a process, cuInit included, <= 0.8x NVRTC alone with "
     "the driver started inside it",
     "compile", "cujit_c", "first_cujit", "nvrtc", "first_nvrtc", RATIO_MAX, 0.8, 0},
    /* Issue 9: defining what is already defined is a lookup. */
    {"defining an already-defined kernel in the same process under 5 us", "redefine", "cujit_c",
     "define", NULL, NULL, ABSOLUTE_MAX, 5, 0},
    /* Issue 25: a later kernel with the same heavy headers uses the precompiled header. */
    {"second kernel including <cooperative_groups.h> in a process <= 0.15x NVRTC alone", "pch",
     "cujit_c", "cg_second", "nvrtc", NULL, RATIO_MAX, 0.15, 0},
    /* Issue 25: device code kept as LTO-IR makes a new kernel's compile small. */
    {"new process, cold kernel, warm LTO-IR library <= 0.2x a full compile", "link", "cujit_c",
     "linked", "cujit_c", "whole", RATIO_MAX, 0.2, 0},
    {"linked kernel's run time within 1.05x of the fully compiled one", "link", "cujit_c",
     "run_linked", "cujit_c", "run_whole", RATIO_MAX, 1.05, 0},
};

/* A goal's variant: exact, or a prefix when it ends in '*'. */
static int variant_matches(const char *pattern, const char *variant) {
  size_t n = strlen(pattern);
  if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, variant, n - 1) == 0;
  return strcmp(pattern, variant) == 0;
}

typedef struct tally {
  int met, missed, unmeasured;
} tally;

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

static tally goals_section(void) {
  tally t = {0, 0, 0};
  out("\n### Goals (issues 5, 9 and 15, DESIGN.md section 5)\n\n");
  for (size_t i = 0; i < sizeof goals / sizeof *goals; i++) judge(&goals[i], &t);
  out("\nGoals: %d met, %d missed, %d not measured.\n", t.met, t.missed, t.unmeasured);
  return t;
}

/* ---- heading and the case tables
 * ----------------------------------------------------------------- */

static void heading(void) {
  out("## cujit benchmark\n\n");
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].status, "info"))
      out("- %s %s: %s\n", title_of(rows[i].system), rows[i].variant, rows[i].detail);
  out("\nEach figure is a median over repetitions after a warm-up; \"missing\" says the figure "
      "could "
      "not be measured (the reason is listed under the table).\n");
}

static void mc_table(void) {
  static const char *const variants[] = {"e2e", "setup", "kernel"};
  simple_table("7. Monte Carlo, European call, 2^24 paths, end to end with RNG setup, ms (speed-up "
               "over Numba's end to end)",
               "montecarlo", variants, 3, "numba", "e2e", 2);
}

/* Graphs: host time per node of a replay, against the raw graph in the same process (cujit C),
** or in the raw C process (cujit Lua, CuPy); then capture and instantiation; then the graphs
** example's step. */
static void graph_tables(void) {
  static const char *const nodes[] = {"nodes1", "nodes10", "nodes100", "nodes1000"};
  static const char *const setup[] = {"capture1",      "instantiate1",   "capture10",
                                      "instantiate10", "capture100",     "instantiate100",
                                      "capture1000",   "instantiate1000"};
  static const char *const step[] = {"launches", "graph"};
  static const column cols[] = {
      {"raw", NULL},        {"raw_c_same", NULL}, {"cujit_c", "raw_c_same"},
      {"cujit_lua", "raw"}, {"cupy", "raw"},      {"numba", NULL}};
  column_table("8. Graph replay: host time per kernel node of a replayed graph of N empty kernels, "
               "us (x: cujit C over the raw graph replayed in its own process, interleaved; cujit "
               "Lua, a g:launch() per replay from a Lua loop, and CuPy over the raw C process)",
               "graph", nodes, 4, cols, sizeof cols / sizeof *cols, NULL, 0);
  simple_table("9. Graph capture (begin, N launches, end) and instantiation, us (x: over raw C; "
               "CuPy instantiates inside end_capture)",
               "graph_setup", setup, 8, "raw", NULL, 0);
  simple_table("10. The graphs example's step (5 small kernels on 4096 cells), us per step end to "
               "end, as stream launches and as graph replays (20 steps a graph)",
               "graph_step", step, 2, NULL, NULL, 0);
}

/* Issue 15: a spin kernel of each length launched and waited for, per kind of wait (the driver's
** own wait of that kind is the floor), the CPU a one-second wait takes; then small operations
** against CuPy. */
static void latency_tables(void) {
  static const char *const kinds[] = {"stream", "device", "event"};
  static const int lengths[] = {0, 5, 20, 50, 200, 1000, 10000};
  enum { NL = sizeof lengths / sizeof *lengths };
  static char names[3 * NL + 1][24];
  const char *variants[3 * NL + 1];
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < NL; l++) {
      snprintf(names[k * NL + l], sizeof names[0], "rt%d_%s", lengths[l], kinds[k]);
      variants[k * NL + l] = names[k * NL + l];
    }
  variants[3 * NL] = "cpu_wait1s";
  static const column cols[] = {{"raw", NULL},
                                {"cujit_c", "raw"},
                                {"cujit_c_spin", "raw"},
                                {"cujit_lua", "raw"},
                                {"cupy", "raw"}};
  column_table("11. Launch of a spin kernel of N us + wait, us, by kind of wait (stream, device, "
               "event); cpu_wait1s: CPU time of a 1 s wait, % of a core (x: over the driver's "
               "own wait of the same kind; cujit C spin: the same with CUJIT_WAIT=spin)",
               "latency", variants, 3 * NL + 1, cols, sizeof cols / sizeof *cols, NULL, 0);
  static const char *const small[] = {"alloc_free", "zeros",  "sum1k",   "sum1m",
                                      "dtoh1k",     "htod1k", "table1k", "ew1k"};
  simple_table("12. Small operations, median us: allocate + free 4 KiB, zeros(1024), sum of 1 K "
               "and 1 M floats to a host number, 1 K floats from and to the host, a 1 K table "
               "to the device, an elementwise kernel on 1 K floats + synchronize (x: over CuPy)",
               "small", small, 8, "cupy", NULL, 0);
}

/* Issue 16: the read kernel over device, managed (prefetched or not) and mapped host memory,
** from Lua, each as a fraction of device memory. */
static void memory_table(void) {
  static const char *const where[] = {"device", "managed_prefetched", "managed", "mapped"};
  static const column cols[] = {{"cujit_lua", "cujit_lua"}};
  column_table("13. A kernel reading 2^26 floats (at most) from device memory, managed memory "
               "prefetched to the device, managed memory migrated by page faults, and mapped "
               "host memory, GB/s (%: of device memory)",
               "memory", where, 4, cols, 1, "device", 1);
}

/* Issue 9: what building again costs the host, in one process (cujit_bench_redefine). */
static void redefine_table(void) {
  static const char *const again[] = {"define", "compile"};
  static const column cols[] = {{"cujit_c", NULL}};
  column_table("14. Defining an already-defined kernel (cujit_kernel_define) and compiling an "
               "already-compiled program (cujit_program_compile) again in the same process, "
               "median us",
               "redefine", again, 2, cols, 1, NULL, 0);
}

/* Issue 25: a new process compiling a new kernel against a library kept as LTO-IR, or whole
** (cujit_bench_link); the kernel's run time both ways. */
static void link_table(void) {
  static const char *const v[] = {"library", "linked", "whole", "linked_all", "whole_all"};
  static const char *const run[] = {"run_linked", "run_whole"};
  static const column cols[] = {{"cujit_c", NULL}};
  column_table("16. A new process compiling a kernel it never compiled, ms to the kernel ready: "
               "linked with a device library already kept as LTO-IR (link = {\"linklib.cu\"}) or "
               "compiled whole with the library's text (library: its own first compile); _all: the "
               "kernel calls the library's dispatcher, every function reachable",
               "link", v, 5, cols, 1, NULL, 0);
  column_table("17. That library's kernel run time, linked and compiled whole, us per launch",
               "link", run, 2, cols, 1, NULL, 0);
}

/* Issue 25: compiling at once, -minimal, a process's first compile (cujit_bench_compile). */
static void compile_table(void) {
  static const char *const ways[] = {"many8_serial",
                                     "many8_parallel",
                                     "many8_parallel_noworkers",
                                     "many8_parallel_first",
                                     "heavy8_serial",
                                     "heavy8_parallel",
                                     "heavy8_parallel_noworkers",
                                     "heavy8_parallel_first",
                                     "heavy8_nopch_serial",
                                     "heavy8_nopch_parallel",
                                     "heavy8_nopch_parallel_noworkers",
                                     "heavy8_nopch_parallel_first",
                                     "many8_serial_cpu",
                                     "many8_parallel_cpu",
                                     "minimal_off",
                                     "minimal_on",
                                     "first_nvrtc",
                                     "first_cujit",
                                     "first_cujit_device_first"};
  simple_table("18. Compiling: eight programs one after another and at once (GPU: NVRTC, with "
               "worker processes and without; heavy8: each including <cooperative_groups.h>, with "
               "precompiled headers and without; cpu: the CPU device's g++), a small kernel "
               "without and with -minimal, and a trivial "
               "kernel's first compile of a process until the driver is started (NVRTC alone; "
               "cujit with the arch given, the driver starting beside; cujit asking the device "
               "first), ms",
               "compile", ways, sizeof ways / sizeof *ways, NULL, NULL, 0);
}

static void tables(void) {
  static const char *const rt[] = {"args4"};
  static const char *const vadd[] = {"vadd"};
  double n[SIZES];
  launch_table();
  simple_table("2. Launch + synchronize round trip, us (x: over raw C)", "roundtrip", rt, 1, "raw",
               NULL, 0);
  simple_table("3. Cold compile, source to first launch finished, empty caches, ms (x: over NVRTC "
               "alone)",
               "cold", vadd, 1, "nvrtc", NULL, 0);
  simple_table("4a. Warm disk cache in a new process, asking for the kernel to first launch "
               "finished, ms (raw C: the driver's own part, a CUBIN in memory loaded, launched "
               "once and waited for; x: over it)",
               "warm", vadd, 1, "raw", NULL, 0);
  simple_table("4b. Whole process, start to exit, of a script that launches one kernel and prints "
               "a value, ms (x: over CuPy)",
               "process", vadd, 1, "cupy", NULL, 0);
  bandwidth_table();
  int count = sizes("sum", n);
  for (int k = 0; k < count; k++) {
    static const char *const sum[] = {"read", "sum"};
    char title[160];
    snprintf(title, sizeof title,
             "6. Sum of 2^%.0f float32, GB/s of input read (%% of the raw "
             "read-only kernel)",
             log2(n[k]));
    simple_table(title, "sum", sum, 2, "raw", "read", 1);
  }
  static const char *const gemm[] = {"f32", "f16"}; /* f16: f16 inputs into f32 */
  simple_table("6b. cujit_gemm, square n x n x n into f32, TFLOP/s (device time)", "gemm", gemm, 2,
               NULL, NULL, 0);
  mc_table();
  graph_tables();
  latency_tables();
  memory_table();
  redefine_table();
  static const char *const cg[] = {"cg_first", "cg_second"}; /* issue 25 (cujit_bench_headers) */
  simple_table("15. Kernels including <cooperative_groups.h> in one process: the first (makes the "
               "PCH), later ones (median), ms (x: over NVRTC alone, the same process)",
               "pch", cg, 2, "nvrtc", NULL, 0);
  link_table();
  compile_table();
}

/* ---- charts ---------------------------------------------------------------------------------- */

static int launch_chart(const char *dir) {
  static const char *const groups[] = {"args1", "args4", "args12"};
  static const char *const sys[] = {"raw",          "raw_c_same", "cujit_c", "raw_c_in_lua",
                                    "raw_lua_same", "cujit_lua",  "cupy",    "numba"};
  enum { N = sizeof sys / sizeof *sys };
  const char *names[N];
  double v[3 * N];
  for (int s = 0; s < N; s++) names[s] = title_of(sys[s]);
  for (int g = 0; g < 3; g++)
    for (int s = 0; s < N; s++) v[g * N + s] = value("launch", sys[s], groups[g], -1);
  char path[4096], err[256];
  snprintf(path, sizeof path, "%s/launch.png", dir);
  if (chart_bars(path, "Host time per async launch (median)", "microseconds", 3, groups, N, names,
                 v, err, sizeof err))
    return 1;
  fprintf(stderr, "launch chart: %s\n", err);
  return 0;
}

/* One line per (system, form of the kernel) with at least one figure, plus the device copy. The
** forms: one element per thread ("vadd"), four ("vadd4"), the system's elementwise builder
** ("vadd_ew"). */
static int bandwidth_chart(const char *dir, const char *kernel) {
  static const char *const sys[] = {"raw", "cujit_c", "cujit_lua", "cupy", "numba"};
  static const char *const forms[] = {"", "4", "_ew"};
  enum { MAX_SERIES = 1 + 5 * 3 };
  double n[SIZES], x[SIZES], y[MAX_SERIES][SIZES];
  char names[MAX_SERIES][64];
  chart_series series[MAX_SERIES];
  int count = sizes("bandwidth", n), nseries = 0;
  for (int k = 0; k < count; k++) x[k] = log2(n[k]);
  for (int s = -1; s < 5; s++)
    for (int f = 0; f < (s < 0 ? 1 : 3); f++) {
      char var[32];
      snprintf(var, sizeof var, "%s%s", s < 0 ? "copy" : kernel, s < 0 ? "" : forms[f]);
      const char *sy = s < 0 ? "raw" : sys[s];
      int any = 0;
      for (int k = 0; k < count; k++)
        any |= isfinite(y[nseries][k] = value("bandwidth", sy, var, n[k]));
      if (!any) continue;
      if (s < 0)
        snprintf(names[nseries], sizeof names[nseries], "device copy");
      else
        snprintf(names[nseries], sizeof names[nseries], "%s %s", title_of(sy), var);
      series[nseries] = (chart_series){names[nseries], count, x, y[nseries]};
      nseries++;
    }
  if (nseries == 0) return 1; /* nothing measured: no chart, and the table says why */
  char path[4096], title[128], err[256];
  snprintf(path, sizeof path, "%s/bandwidth_%s.png", dir, kernel);
  snprintf(title, sizeof title, "%s bandwidth vs size (float32, read + written)", kernel);
  if (chart_lines(path, title, "elements", "GB/s", nseries, series, 1, err, sizeof err)) return 1;
  fprintf(stderr, "bandwidth chart: %s\n", err);
  return 0;
}

int main(int argc, char **argv) {
  const char *csv = NULL, *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv") && i + 1 < argc)
      csv = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      dir = argv[++i];
    else {
      fprintf(stderr,
              "cujit_bench_report: unexpected argument '%s'\n"
              "usage: cujit_bench_report --csv results.csv --out DIR\n",
              argv[i]);
      return 2;
    }
  }
  if (!csv || !dir) {
    fprintf(stderr, "usage: cujit_bench_report --csv results.csv --out DIR (both are needed)\n");
    return 2;
  }
  if (!read_csv(csv)) return 1;
  char path[4096];
  snprintf(path, sizeof path, "%s/table.md", dir);
  if (!(md = fopen(path, "w"))) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  heading();
  tables();
  goals_section();
  fclose(md);
  md = NULL;
  int ok = launch_chart(dir) & bandwidth_chart(dir, "vadd") & bandwidth_chart(dir, "saxpy");
  return ok ? 0 : 1;
}
