/*
** chart.h -- a small chart renderer for the benchmark report: grouped bar charts and line charts
** drawn into an RGB canvas with a built-in 5x7 bitmap font, written as PNG with libpng.
*/
#ifndef BENCH_CHART_H
#define BENCH_CHART_H

#include <stddef.h>

/* One line of a line chart: `count` points (x[i], y[i]); a NaN y is a gap. */
typedef struct chart_series {
  const char *name;
  int count;
  const double *x, *y;
} chart_series;

/* Bars: values[g * nseries + s] is series s in group g; NaN draws "n/a" instead of a bar.
** Returns 1, or 0 with the reason in err. */
int chart_bars(const char *path, const char *title, const char *ylabel, int ngroups,
               const char *const *groups, int nseries, const char *const *series,
               const double *values, char *err, size_t err_len);

/* Lines over x; with log2_x set the x values are exponents and ticks read "2^k". */
int chart_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
                int nseries, const chart_series *series, int log2_x, char *err, size_t err_len);

/* The 5x7 glyph of c: seven rows, bit 4 leftmost ('?' for characters without one). */
const unsigned char *chart_glyph(char c);

#endif
