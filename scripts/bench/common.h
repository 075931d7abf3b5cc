/*
** common.h -- what every C benchmark program in scripts/bench shares: a monotonic clock, medians,
** the options every program takes, and the CSV rows they print on stdout.
**
** Every program prints rows of results.csv (see README.md): case,system,variant,n,value,unit,
** status,detail. A figure that could not be measured is a row with status "missing" and the reason
** in detail, never a failure of the program.
*/
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>

typedef struct bench_opts {
  const char *cases;   /* comma-separated list of cases to run; "all" */
  const char *kernels; /* directory holding the shared kernel sources (scripts/bench/kernels) */
  int reps;            /* timed repetitions of each figure, after a warm-up */
  long launches;       /* launches per repetition for the launch cases */
  int batch;           /* launches between two synchronizations */
  long roundtrips;     /* launch + synchronize pairs per repetition */
  int min_log2, max_log2, step_log2; /* bandwidth sweep: 2^min .. 2^max elements */
  int sum_log2;                      /* size of the sum, 2^sum_log2 floats */
  int mc_log2;                       /* Monte Carlo paths, 2^mc_log2 */
  int short_mode; /* CI: no timing loops worth the name, everything else exercised */
} bench_opts;

/* Fills defaults, then reads --cases, --kernels, --reps, --launches, --batch, --roundtrips,
** --sizes MIN:MAX[:STEP], --sum-log2, --mc-log2, --quick and --short. Returns 0 and prints a usage
** message naming the bad argument on error. */
int bench_parse(bench_opts *o, int argc, char **argv, const char *program);

/* 1 when `name` is one of the comma-separated cases asked for (or they are "all"). */
int bench_wants(const bench_opts *o, const char *name);

/* Microseconds from a monotonic clock. */
double bench_now_us(void);

/* The median of v[0..n-1] (sorts v). 0 when n is 0. */
double bench_median(double *v, int n);

/* One CSV row of a measured figure. */
void bench_row(const char *bcase, const char *system, const char *variant, double n, double value,
               const char *unit);
/* One CSV row saying why a figure is missing (status "missing"). */
void bench_missing(const char *bcase, const char *system, const char *variant, double n,
                   const char *why);
/* A row with status "info": a version or a device name, for the report's heading. */
void bench_info(const char *system, const char *what, const char *value);

/* Reads a whole file into a malloc'd NUL-terminated string; NULL (errno set) when it cannot. */
char *bench_read_file(const char *path);
/* Reads `name` from the kernels directory; on failure writes why into `why`. */
char *bench_read_kernel(const bench_opts *o, const char *name, char *why, size_t why_len);

#endif
