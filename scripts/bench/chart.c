/*
** chart.c -- draws the benchmark's bar and line charts into an RGB canvas and writes them as PNG.
** Everything is integer pixels on a white background: axes with "nice" ticks (1, 2, 5 x 10^k),
** a legend row under the title, text in the 5x7 font of font.c scaled by whole pixels.
*/
#include "chart.h"

#include <png.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WIDTH = 960, HEIGHT = 560, LEFT = 90, RIGHT = 30, TOP = 80, BOTTOM = 70 };

typedef struct canvas {
  int w, h;
  unsigned char *px; /* w * h * 3 */
} canvas;

typedef struct rgb {
  unsigned char r, g, b;
} rgb;

static const rgb black = {0, 0, 0}, grey = {215, 215, 215};
static const rgb palette[] = {{31, 119, 180},  {214, 39, 40}, {44, 160, 44},   {255, 127, 14},
                              {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {23, 190, 207},
                              {127, 127, 127}, {188, 189, 34}};
enum { PALETTE = sizeof palette / sizeof *palette };

static void set_px(canvas *c, int x, int y, rgb col) {
  if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
  unsigned char *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
  p[0] = col.r, p[1] = col.g, p[2] = col.b;
}

static void fill_rect(canvas *c, int x0, int y0, int x1, int y1, rgb col) {
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) set_px(c, x, y, col);
}

/* Bresenham, `thick` pixels square pen. */
static void line(canvas *c, int x0, int y0, int x1, int y1, int thick, rgb col) {
  int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    fill_rect(c, x0 - thick / 2, y0 - thick / 2, x0 - thick / 2 + thick, y0 - thick / 2 + thick,
              col);
    if (x0 == x1 && y0 == y1) break;
    int e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

static int text_width(const char *s, int scale) {
  return (int)strlen(s) * 6 * scale - scale;
}

static void text(canvas *c, int x, int y, const char *s, int scale, rgb col) {
  for (; *s; s++, x += 6 * scale) {
    const unsigned char *g = chart_glyph(*s);
    for (int row = 0; row < 7; row++)
      for (int bit = 0; bit < 5; bit++)
        if (g[row] & (0x10 >> bit))
          fill_rect(c, x + bit * scale, y + row * scale, x + (bit + 1) * scale,
                    y + (row + 1) * scale, col);
  }
}

/* Text turned a quarter counter-clockwise, for the y-axis label: reads bottom to top. */
static void text_up(canvas *c, int x, int y, const char *s, int scale, rgb col) {
  for (; *s; s++, y -= 6 * scale) {
    const unsigned char *g = chart_glyph(*s);
    for (int row = 0; row < 7; row++)
      for (int bit = 0; bit < 5; bit++)
        if (g[row] & (0x10 >> bit))
          fill_rect(c, x + row * scale, y - (bit + 1) * scale, x + (row + 1) * scale,
                    y - bit * scale, col);
  }
}

static int canvas_open(canvas *c, char *err, size_t err_len) {
  c->w = WIDTH, c->h = HEIGHT;
  c->px = malloc((size_t)c->w * (size_t)c->h * 3);
  if (!c->px) return snprintf(err, err_len, "out of memory for a %dx%d chart", c->w, c->h), 0;
  memset(c->px, 255, (size_t)c->w * (size_t)c->h * 3);
  return 1;
}

static int write_png(const canvas *c, const char *path, char *err, size_t err_len) {
  FILE *f = fopen(path, "wb");
  if (!f) return snprintf(err, err_len, "cannot write %s", path), 0;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fclose(f);
    return snprintf(err, err_len, "libpng failed writing %s", path), 0;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < c->h; y++) png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  return fclose(f) == 0 ? 1 : (snprintf(err, err_len, "cannot finish %s", path), 0);
}

/* A tick step of 1, 2 or 5 x 10^k giving about five intervals up to `top`. */
static double nice_step(double top) {
  double raw = top / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
  return mag * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10);
}

typedef struct axes {
  int x0, y0, x1, y1; /* plot area, y0 the top */
  double ymax;
} axes;

static int y_pixel(const axes *a, double v) {
  return a->y1 - (int)lround(v / a->ymax * (a->y1 - a->y0));
}

static void frame(canvas *c, axes *a, const char *title, const char *ylabel, double top) {
  a->x0 = LEFT, a->y0 = TOP, a->x1 = WIDTH - RIGHT, a->y1 = HEIGHT - BOTTOM;
  if (!(top > 0) || !isfinite(top)) top = 1;
  double step = nice_step(top);
  a->ymax = ceil(top / step) * step;
  text(c, (WIDTH - text_width(title, 2)) / 2, 12, title, 2, black);
  for (double v = 0; v <= a->ymax + step / 2; v += step) {
    int y = y_pixel(a, v);
    line(c, a->x0, y, a->x1, y, 1, grey);
    char label[32];
    snprintf(label, sizeof label, "%g", v);
    text(c, a->x0 - 8 - text_width(label, 1), y - 3, label, 1, black);
  }
  line(c, a->x0, a->y0, a->x0, a->y1, 2, black);
  line(c, a->x0, a->y1, a->x1, a->y1, 2, black);
  text_up(c, 14, (a->y0 + a->y1 + text_width(ylabel, 2)) / 2, ylabel, 2, black);
}

static void legend(canvas *c, int n, const char *const *names) {
  int total = 0;
  for (int s = 0; s < n; s++) total += 14 + text_width(names[s], 1) + 18;
  int x = (WIDTH - total) / 2, y = 44;
  for (int s = 0; s < n; s++) {
    fill_rect(c, x, y, x + 10, y + 10, palette[s % PALETTE]);
    text(c, x + 14, y + 2, names[s], 1, black);
    x += 14 + text_width(names[s], 1) + 18;
  }
}

int chart_bars(const char *path, const char *title, const char *ylabel, int ngroups,
               const char *const *groups, int nseries, const char *const *series,
               const double *values, char *err, size_t err_len) {
  if (ngroups <= 0 || nseries <= 0)
    return snprintf(err, err_len, "a bar chart needs at least one group and one series"), 0;
  canvas c;
  if (!canvas_open(&c, err, err_len)) return 0;
  double top = 0;
  for (int i = 0; i < ngroups * nseries; i++)
    if (isfinite(values[i]) && values[i] > top) top = values[i];
  axes a;
  frame(&c, &a, title, ylabel, top * 1.1);
  legend(&c, nseries, series);
  int group_w = (a.x1 - a.x0) / ngroups, bar_w = (group_w - 20) / nseries;
  if (bar_w < 2) bar_w = 2;
  for (int g = 0; g < ngroups; g++) {
    int gx = a.x0 + g * group_w + 10;
    for (int s = 0; s < nseries; s++) {
      double v = values[g * nseries + s];
      int x = gx + s * bar_w;
      if (!isfinite(v)) {
        text_up(&c, x + bar_w / 2 - 3, a.y1 - 4, "n/a", 1, black);
        continue;
      }
      fill_rect(&c, x + 1, y_pixel(&a, v), x + bar_w - 1, a.y1, palette[s % PALETTE]);
      char label[32];
      snprintf(label, sizeof label, "%.3g", v);
      if (text_width(label, 1) <= bar_w)
        text(&c, x + (bar_w - text_width(label, 1)) / 2, y_pixel(&a, v) - 10, label, 1, black);
    }
    text(&c, gx + (group_w - 20 - text_width(groups[g], 2)) / 2, a.y1 + 12, groups[g], 2, black);
  }
  int ok = write_png(&c, path, err, err_len);
  free(c.px);
  return ok;
}

static void x_range(int nseries, const chart_series *series, double *lo, double *hi) {
  *lo = INFINITY, *hi = -INFINITY;
  for (int s = 0; s < nseries; s++)
    for (int i = 0; i < series[s].count; i++) {
      if (series[s].x[i] < *lo) *lo = series[s].x[i];
      if (series[s].x[i] > *hi) *hi = series[s].x[i];
    }
  if (!(*lo < *hi)) *lo -= 1, *hi += 1; /* one x value, or none: a range that shows it */
}

int chart_lines(const char *path, const char *title, const char *xlabel, const char *ylabel,
                int nseries, const chart_series *series, int log2_x, char *err, size_t err_len) {
  if (nseries <= 0) return snprintf(err, err_len, "a line chart needs at least one series"), 0;
  canvas c;
  if (!canvas_open(&c, err, err_len)) return 0;
  double top = 0, lo, hi;
  for (int s = 0; s < nseries; s++)
    for (int i = 0; i < series[s].count; i++)
      if (isfinite(series[s].y[i]) && series[s].y[i] > top) top = series[s].y[i];
  x_range(nseries, series, &lo, &hi);
  axes a;
  frame(&c, &a, title, ylabel, top * 1.1);
  const char **names = malloc((size_t)nseries * sizeof *names);
  if (!names) return free(c.px), snprintf(err, err_len, "out of memory"), 0;
  for (int s = 0; s < nseries; s++) names[s] = series[s].name;
  legend(&c, nseries, names);
  free(names);
#define XPIX(v) (a.x0 + 20 + (int)lround(((v)-lo) / (hi - lo) * (a.x1 - a.x0 - 40)))
  for (double v = ceil(lo); v <= hi; v += (hi - lo) > 12 ? ceil((hi - lo) / 12) : 1) {
    char label[32];
    snprintf(label, sizeof label, log2_x ? "2^%g" : "%g", v);
    line(&c, XPIX(v), a.y1, XPIX(v), a.y1 + 5, 1, black);
    text(&c, XPIX(v) - text_width(label, 1) / 2, a.y1 + 10, label, 1, black);
  }
  text(&c, (a.x0 + a.x1 - text_width(xlabel, 2)) / 2, a.y1 + 34, xlabel, 2, black);
  for (int s = 0; s < nseries; s++) {
    rgb col = palette[s % PALETTE];
    int have = 0, px = 0, py = 0;
    for (int i = 0; i < series[s].count; i++) {
      if (!isfinite(series[s].y[i])) {
        have = 0;
        continue;
      }
      int x = XPIX(series[s].x[i]), y = y_pixel(&a, series[s].y[i]);
      if (have) line(&c, px, py, x, y, 2, col);
      fill_rect(&c, x - 3, y - 3, x + 4, y + 4, col);
      have = 1, px = x, py = y;
    }
  }
#undef XPIX
  int ok = write_png(&c, path, err, err_len);
  free(c.px);
  return ok;
}
