/*
** report.h -- what the parts of the benchmark report (cujit_bench_report) share: the results read
** from results.csv and their look-ups (report_results.c), the printing of a table to stdout and
** table.md (report_print.c), the tables themselves (report_tables.c) and the goals' verdicts
** (report_goals.c). report.c is the command, and draws the charts.
*/
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdio.h>

enum { SIZES = 32 }; /* the most sizes a case may be measured at */

typedef struct row {
  char *bcase, *system, *variant, *unit, *status, *detail;
  double n, value; /* value is NaN unless status is "ok" */
} row;

/* --- report_results.c ------------------------------------------------------------------------ */

extern row rows[]; /* the results, in the order of the file */
extern int nrows;

/* Reads results.csv into rows; 0 (with the reason on stderr, naming the line) when it cannot. */
int read_csv(const char *path);
/* The row for (case, system, variant) at size n (n < 0: any size). */
const row *find(const char *bcase, const char *system, const char *variant, double n);
/* find's value, NaN without a row. */
double value(const char *bcase, const char *system, const char *variant, double n);
/* The sizes measured for a case, ascending (at most SIZES). */
int sizes(const char *bcase, double *n);

/* The peers the tables compare, in their order, and the title of any system. */
enum { NSYS = 6 };
extern const char *const systems[NSYS];
const char *title_of(const char *system);

/* --- report_print.c -------------------------------------------------------------------------- */

/* Prints to stdout, and to `copy` too once out_copy_to has named one (NULL: stdout only). */
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_copy_to(FILE *copy);
/* A table cell: "-" when the system has no such figure, "missing" when it could not be measured.
** fraction: 0 shows value / floor as "1.02x", 1 as a percentage, 2 as "Nx faster" (floor / value).
*/
void cell(const row *r, double floor, int fraction);
/* Why figures of a case are missing, one line per system and reason. */
void reasons(const char *bcase);

/* A column of a table: a system and the system its ratios are over (NULL: none shown). */
typedef struct column {
  const char *system, *floor;
} column;

/* One table: a row per variant, a column per system present in the case, each cell's ratio over
** its column's floor at `floor_variant` (NULL: the row's own variant). */
void column_table(const char *heading, const char *bcase, const char *const *variants,
                  int nvariants, const column *cols, int ncols, const char *floor_variant,
                  int fraction);
/* A table whose every system is held against one floor (none: floor_sys NULL). */
void simple_table(const char *heading, const char *bcase, const char *const *variants,
                  int nvariants, const char *floor_sys, const char *floor_variant, int fraction);

/* --- report_tables.c, report_goals.c --------------------------------------------------------- */

/* The report's heading (the machine and versions, from the "info" rows), then every table. */
void heading(void);
void tables(void);

typedef struct tally {
  int met, missed, unmeasured;
} tally;

/* Each goal's verdict, one line each, and the count of each kind. */
tally goals_section(void);

#endif
