/*
** report_results.c -- the benchmark report's results: results.csv read into rows (a malformed
** line is an error naming it), the look-ups every table, goal and chart makes, and the systems the
** report compares with the title each is shown by.
*/
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELDS = 8, MAX_ROWS = 20000 };

row rows[MAX_ROWS];
int nrows;

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

int read_csv(const char *path) {
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

const row *find(const char *bcase, const char *system, const char *variant, double n) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].system, system) &&
        !strcmp(rows[i].variant, variant) && (n < 0 || rows[i].n == n))
      return &rows[i];
  return NULL;
}

double value(const char *bcase, const char *system, const char *variant, double n) {
  const row *r = find(bcase, system, variant, n);
  return r ? r->value : NAN;
}

int sizes(const char *bcase, double *n) {
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

/* ---- the systems ----------------------------------------------------------------------------- */

const char *const systems[NSYS] = {"raw", "nvrtc", "cujit_c", "cujit_lua", "cupy", "numba"};
static const char *const titles[] = {"raw C",     "NVRTC alone", "cujit C",
                                     "cujit Lua", "CuPy",        "Numba"};

/* The launch case's floors measured inside the cujit processes, interleaved with cujit's own
** launches: cujit_bench_c's raw cuLaunchKernel, and bench.lua's raw launcher called from the same
** Lua loop and from a C loop. Only table 1, its goals and its chart show them. And cujit C's
** waits under CUJIT_WAIT=spin, which only table 8 shows. */
static const char *const same_systems[] = {"raw_c_same", "raw_lua_same", "raw_c_in_lua",
                                           "cujit_c_spin"};
static const char *const same_titles[] = {"raw C (same process)", "raw from Lua (same process)",
                                          "raw C loop (Lua process)", "cujit C spin"};
enum { NSAME = 4 };

const char *title_of(const char *system) {
  for (int s = 0; s < NSYS; s++)
    if (!strcmp(systems[s], system)) return titles[s];
  for (int s = 0; s < NSAME; s++)
    if (!strcmp(same_systems[s], system)) return same_titles[s];
  return system;
}
