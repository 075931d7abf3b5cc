/*
** text.c -- small helpers every layer uses: strings copied, growable buffers (cj_buf), a byte
** count as text ("1.5 GiB") and the clock in milliseconds. Declared in base.h.
*/
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *cj_bytes_text(size_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, len, "%zu byte%s", bytes, bytes == 1 ? "" : "s");
    return buf;
  }
  double v = (double)bytes / 1024.0;
  size_t u = 0;
  /* 1023.97 MiB would print as "1024.0 MiB": move up a unit first. */
  while (v >= 1023.95 && u + 1 < sizeof units / sizeof *units) v /= 1024.0, u++;
  snprintf(buf, len, "%.1f %s", v, units[u]);
  return buf;
}

double cj_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

char *cj_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *cj_strdup(const char *s) {
  return s ? cj_strndup(s, strlen(s)) : NULL;
}

void cj_buf_add(cj_buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p, b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void cj_buf_puts(cj_buf *b, const char *s) {
  cj_buf_add(b, s, strlen(s));
}

void cj_buf_printf(cj_buf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    cj_buf_add(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  cj_buf_add(b, big, (size_t)n);
  free(big);
}

void cj_buf_free(cj_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}
