/*
** report.c -- the benchmark's report command: turns results.csv into the benchmark's table (stdout
** and table.md: the tables, report_tables.c, and each goal's verdict, report_goals.c) and its
** charts (launch.png, bandwidth_*.png), drawn here.
**
** usage: cujit_bench_report --csv results.csv --out DIR
** A malformed CSV line is an error naming the line; a figure that is missing shows as "missing",
** and a goal that depends on it reads NOT MEASURED, never met.
*/
#include "chart.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
  FILE *md = fopen(path, "w");
  if (!md) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  out_copy_to(md);
  heading();
  tables();
  goals_section();
  out_copy_to(NULL);
  fclose(md);
  int ok = launch_chart(dir) & bandwidth_chart(dir, "vadd") & bandwidth_chart(dir, "saxpy");
  return ok ? 0 : 1;
}
