/*
** report_print.c -- how the benchmark report prints a table: every line to stdout and to a copy
** (table.md), a cell's figure with its ratio over the column's floor, the reasons figures are
** missing, and the two shapes of table (a floor per column, or one floor for all).
*/
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static FILE *md; /* table.md, written alongside stdout */

void out(const char *fmt, ...) {
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

void out_copy_to(FILE *copy) {
  md = copy;
}

void cell(const row *r, double floor, int fraction) {
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

void reasons(const char *bcase) {
  for (int i = 0; i < nrows; i++) {
    if (strcmp(rows[i].bcase, bcase) != 0 || strcmp(rows[i].status, "missing") != 0) continue;
    int repeat = 0;
    for (int j = 0; j < i && !repeat; j++)
      repeat = !strcmp(rows[j].bcase, bcase) && !strcmp(rows[j].system, rows[i].system) &&
               !strcmp(rows[j].detail, rows[i].detail);
    if (!repeat) out("- %s missing: %s\n", title_of(rows[i].system), rows[i].detail);
  }
}

static int present(const char *bcase, const char *system) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].system, system)) return 1;
  return 0;
}

void column_table(const char *heading, const char *bcase, const char *const *variants,
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

void simple_table(const char *heading, const char *bcase, const char *const *variants,
                  int nvariants, const char *floor_sys, const char *floor_variant, int fraction) {
  column cols[NSYS];
  for (int s = 0; s < NSYS; s++)
    cols[s].system = systems[s],
    cols[s].floor = floor_sys && strcmp(systems[s], floor_sys) ? floor_sys : NULL;
  column_table(heading, bcase, variants, nvariants, cols, NSYS, floor_variant, fraction);
}
