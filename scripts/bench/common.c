/*
** common.c -- options, clock, medians and CSV rows shared by the C benchmark programs, and the raw
** Driver API they (and benchclock.so) open at run time.
*/
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(const char *program) {
  fprintf(stderr,
          "usage: %s [--cases LIST] [--kernels DIR] [--reps N] [--launches N] [--batch N]\n"
          "          [--roundtrips N] [--sizes MIN:MAX[:STEP]] [--sum-log2 K] [--mc-log2 K]\n"
          "          [--quick] [--short]\n"
          "Prints CSV rows (case,system,variant,n,value,unit,status,detail) on stdout.\n",
          program);
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_sizes(const char *s, bench_opts *o) {
  int lo = 0, hi = 0, step = 1, used = 0;
  int got = sscanf(s, "%d:%d%n", &lo, &hi, &used);
  if (got != 2) return 0;
  if (s[used] == ':' && sscanf(s + used + 1, "%d", &step) != 1) return 0;
  if (lo < 4 || hi > 30 || lo > hi || step < 1) return 0;
  o->min_log2 = lo, o->max_log2 = hi, o->step_log2 = step;
  return 1;
}

static void defaults(bench_opts *o) {
  o->cases = "all";
  o->kernels = "scripts/bench/kernels";
  o->reps = 7;
  o->launches = 20000;
  o->batch = 256; /* well under the ~1000 launches the driver queues: see README.md */
  o->roundtrips = 2000;
  o->min_log2 = 20, o->max_log2 = 28, o->step_log2 = 1;
  o->sum_log2 = 28;
  o->mc_log2 = 24;
  o->short_mode = 0;
}

/* --quick: the same cases on a smaller sweep, for a first look. --short: CI, no GPU expected. */
static void quick(bench_opts *o) {
  o->reps = 5, o->launches = 5000, o->roundtrips = 500, o->step_log2 = 4;
}
static void shrink(bench_opts *o) {
  o->reps = 1, o->launches = 10, o->batch = 10, o->roundtrips = 10;
  o->min_log2 = o->max_log2 = 10, o->sum_log2 = 10, o->mc_log2 = 10;
  o->short_mode = 1;
}

static int numeric_option(const char *name, const char *value, bench_opts *o) {
  struct {
    const char *name;
    long lo, hi;
    int is_int;
    void *field;
  } table[] = {
      {"--reps", 1, 1000, 1, &o->reps},       {"--launches", 1, 100000000, 0, &o->launches},
      {"--batch", 1, 100000, 1, &o->batch},   {"--roundtrips", 1, 10000000, 0, &o->roundtrips},
      {"--sum-log2", 4, 30, 1, &o->sum_log2}, {"--mc-log2", 4, 28, 1, &o->mc_log2},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    if (strcmp(name, table[i].name) != 0) continue;
    long v;
    if (!parse_long(value, table[i].lo, table[i].hi, &v)) {
      fprintf(stderr, "%s: expects an integer from %ld to %ld, got '%s'\n", name, table[i].lo,
              table[i].hi, value);
      return -1;
    }
    if (table[i].is_int)
      *(int *)table[i].field = (int)v;
    else
      *(long *)table[i].field = v;
    return 1;
  }
  return 0;
}

int bench_parse(bench_opts *o, int argc, char **argv, const char *program) {
  defaults(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--quick")) {
      quick(o);
      continue;
    }
    if (!strcmp(a, "--short")) {
      shrink(o);
      continue;
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(program);
      return 0;
    }
    if (strncmp(a, "--", 2) != 0 || i + 1 >= argc) {
      fprintf(stderr, "%s: unexpected argument '%s' (options take a value: --reps 5)\n", program,
              a);
      usage(program);
      return 0;
    }
    const char *v = argv[++i];
    int r = numeric_option(a, v, o);
    if (r < 0) return 0;
    if (r > 0) continue;
    if (!strcmp(a, "--cases"))
      o->cases = v;
    else if (!strcmp(a, "--kernels"))
      o->kernels = v;
    else if (!strcmp(a, "--sizes")) {
      if (!parse_sizes(v, o)) {
        fprintf(stderr,
                "--sizes: expects MIN:MAX[:STEP] in log2 elements, 4 <= MIN <= MAX <= 30, "
                "got '%s'\n",
                v);
        return 0;
      }
    } else {
      fprintf(stderr, "%s: unknown option '%s'\n", program, a);
      usage(program);
      return 0;
    }
  }
  if (o->batch > o->launches) o->batch = (int)o->launches;
  return 1;
}

int bench_wants(const bench_opts *o, const char *name) {
  size_t len = strlen(name);
  for (const char *p = o->cases; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if ((n == 3 && !strncmp(p, "all", 3)) || (n == len && !strncmp(p, name, n))) return 1;
    p += n + (end ? 1 : 0);
  }
  return 0;
}

double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* CSV fields never hold a comma or a line break: the report splits on commas. */
static void put_clean(const char *s) {
  for (; s && *s; s++) putchar(*s == ',' ? ';' : (*s == '\n' || *s == '\r') ? ' ' : *s);
}

static void row(const char *bcase, const char *system, const char *variant, double n,
                const char *value, const char *unit, const char *status, const char *detail) {
  put_clean(bcase), putchar(','), put_clean(system), putchar(','), put_clean(variant);
  printf(",%.0f,%s,", n, value);
  put_clean(unit), putchar(','), put_clean(status), putchar(','), put_clean(detail);
  putchar('\n');
  fflush(stdout);
}

void bench_row(const char *bcase, const char *system, const char *variant, double n, double value,
               const char *unit) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.6g", value);
  row(bcase, system, variant, n, buf, unit, "ok", "");
}

void bench_missing(const char *bcase, const char *system, const char *variant, double n,
                   const char *why) {
  row(bcase, system, variant, n, "", "", "missing", why);
}

void bench_info(const char *system, const char *what, const char *value) {
  row("info", system, what, 0, "", "", "info", value);
}

char *bench_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *grown = realloc(data, cap);
      if (!grown) {
        free(data), fclose(f), errno = ENOMEM;
        return NULL;
      }
      data = grown;
    }
    size_t got = fread(data + len, 1, 4096, f);
    len += got;
    if (got < 4096) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(data), errno = EIO;
    return NULL;
  }
  data[len] = '\0';
  return data;
}

char *bench_read_kernel(const bench_opts *o, const char *name, char *why, size_t why_len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", o->kernels, name);
  char *text = bench_read_file(path);
  if (!text)
    snprintf(why, why_len,
             "cannot read kernel source %s (%s); pass --kernels scripts/bench/kernels", path,
             strerror(errno));
  return text;
}

/* ---- the raw Driver API ---------------------------------------------------------------------- */

bench_driver bench_cu;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

int bench_cu_check(CUresult rc, const char *what, char *why, size_t why_len) {
  if (rc == CUDA_SUCCESS) return 1;
  const char *name = NULL;
  if (bench_cu.cuGetErrorName) bench_cu.cuGetErrorName(rc, &name);
  snprintf(why, why_len, "%s failed: %s", what, name ? name : "unknown CUDA error");
  return 0;
}

static int resolve(get_proc_fn get_proc, const char *name, int abi, void **out, char *why,
                   size_t why_len) {
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (get_proc(name, out, abi, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS &&
      found == CU_GET_PROC_ADDRESS_SUCCESS && *out)
    return 1;
  snprintf(why, why_len, "the CUDA driver lacks %s (ABI %d)", name, abi);
  return 0;
}

int bench_driver_open(char *why, size_t why_len) {
  static int opened;
  if (opened) return 1;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why, why_len, "no CUDA driver (%s)", dlerror());
    return 0;
  }
  get_proc_fn get_proc;
  *(void **)&get_proc = dlsym(h, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(why, why_len, "the CUDA driver is too old (no cuGetProcAddress_v2)");
    return 0;
  }
  bench_driver d;
#define RESOLVE(name, abi)                                                                         \
  if (!resolve(get_proc, #name, abi, (void **)&d.name, why, why_len)) return 0;
  BENCH_DRIVER_FUNCTIONS(RESOLVE)
#undef RESOLVE
  bench_cu = d; /* all or nothing: a half-resolved table is never seen */
  opened = 1;
  return 1;
}

/* A CUkernel cast to CUfunction launches too, but then the driver has to find the current
** context's function on every launch: a cost cujit does not pay, which once let the floor measure
** slower per launch than cujit itself. */
int bench_cu_function(const void *image, const char *name, CUlibrary *lib, CUfunction *fn,
                      char *why, size_t why_len) {
  CUkernel k;
  *lib = NULL;
  if (!bench_cu_check(bench_cu.cuLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0),
                      "cuLibraryLoadData", why, why_len))
    return 0;
  if (bench_cu_check(bench_cu.cuLibraryGetKernel(&k, *lib, name), "cuLibraryGetKernel", why,
                     why_len) &&
      bench_cu_check(bench_cu.cuKernelGetFunction(fn, k), "cuKernelGetFunction", why, why_len))
    return 1;
  bench_cu.cuLibraryUnload(*lib);
  *lib = NULL;
  return 0;
}

void bench_pack_launch(bench_launch_args *a, CUdeviceptr buf, int nargs) {
  for (int k = 0; k < 4; k++) a->p[k] = buf, a->i[k] = k + 1, a->f[k] = 0.5f * (float)k;
  if (nargs == 1)
    a->params[0] = &a->i[0];
  else if (nargs == 4) {
    a->params[0] = &a->p[0], a->params[1] = &a->p[1];
    a->params[2] = &a->i[0], a->params[3] = &a->f[0];
  } else {
    for (int k = 0; k < 4; k++)
      a->params[k] = &a->p[k], a->params[4 + k] = &a->i[k], a->params[8 + k] = &a->f[k];
  }
}

/* ---- graphs ---------------------------------------------------------------------------------- */

const int bench_graph_sizes[BENCH_GRAPH_SIZES] = {1, 10, 100, 1000};

int bench_graph_count(const bench_opts *o) {
  return o->short_mode ? 2 : BENCH_GRAPH_SIZES;
}

void bench_graph_rows(const char *system, int i, double per_node_us, double capture_us,
                      double instantiate_us) {
  char variant[32];
  int n = bench_graph_sizes[i];
  snprintf(variant, sizeof variant, "nodes%d", n);
  bench_row("graph", system, variant, n, per_node_us, "us");
  snprintf(variant, sizeof variant, "capture%d", n);
  if (capture_us >= 0) bench_row("graph_setup", system, variant, n, capture_us, "us");
  snprintf(variant, sizeof variant, "instantiate%d", n);
  if (instantiate_us >= 0) bench_row("graph_setup", system, variant, n, instantiate_us, "us");
}

void bench_graph_missing(const bench_opts *o, const char *system, const char *why) {
  char variant[32];
  for (int i = 0; i < bench_graph_count(o); i++) {
    snprintf(variant, sizeof variant, "nodes%d", bench_graph_sizes[i]);
    bench_missing("graph", system, variant, bench_graph_sizes[i], why);
  }
}

int bench_time_replays(const bench_opts *o, int nodes, bench_replay_fn replay,
                       bench_replay_fn floor, bench_replay_fn drain, void *ctx, double us[2]) {
  long per_batch = o->batch / nodes > 0 ? o->batch / nodes : 1;
  long replays = o->launches / nodes > per_batch ? o->launches / nodes : per_batch;
  double *v = calloc(2 * (size_t)o->reps, sizeof *v);
  int ok = v != NULL;
  for (int r = -1; ok && r < o->reps; r++) { /* r == -1: warm-up */
    double spent[2] = {0, 0};
    long batches = 0;
    for (long done = 0; ok && done < replays; done += per_batch, batches++)
      for (int turn = 0; ok && turn < 2; turn++) {
        int side = (int)((turn + batches) % 2); /* 0: the system, 1: the floor */
        if (side == 1 && !floor) continue;
        double t0 = bench_now_us();
        for (long b = 0; ok && b < per_batch; b++) ok = side ? floor(ctx) : replay(ctx);
        spent[side] += bench_now_us() - t0;
        ok = ok && drain(ctx);
      }
    double count = (double)batches * (double)per_batch * nodes;
    if (r >= 0) v[r] = spent[0] / count, v[o->reps + r] = spent[1] / count;
  }
  if (ok) us[0] = bench_median(v, o->reps), us[1] = bench_median(v + o->reps, o->reps);
  free(v);
  return ok;
}

int bench_raw_graph(CUfunction fn, void **params, int nodes, CUstream stream, CUgraphExec *exec,
                    double *capture_us, double *instantiate_us, char *why, size_t why_len) {
  CUgraph graph = NULL;
  double t0 = bench_now_us();
  int ok = bench_cu_check(bench_cu.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                          "cuStreamBeginCapture", why, why_len);
  for (int k = 0; ok && k < nodes; k++)
    ok = bench_cu_check(bench_cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL),
                        "cuLaunchKernel (captured)", why, why_len);
  CUresult end = bench_cu.cuStreamEndCapture(stream, &graph);
  ok = ok && bench_cu_check(end, "cuStreamEndCapture", why, why_len);
  double t1 = bench_now_us();
  ok = ok && bench_cu_check(bench_cu.cuGraphInstantiateWithFlags(exec, graph, 0),
                            "cuGraphInstantiateWithFlags", why, why_len);
  double t2 = bench_now_us();
  if (graph) bench_cu.cuGraphDestroy(graph);
  *capture_us = t1 - t0, *instantiate_us = t2 - t1;
  return ok;
}

/* ---- NVRTC alone ---------------------------------------------------------------------------- */

void *bench_nvrtc_library(char *why, size_t why_len) {
  const char *env = getenv("CUJIT_NVRTC");
  void *h = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!h) h = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libnvrtc.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    snprintf(why, why_len,
             "no NVRTC (libnvrtc.so.13 / .12; add the toolkit's lib64 to LD_LIBRARY_PATH)");
  return h;
}

int bench_nvrtc_include_options(const char *opts[2]) {
  static char cccl[600], inc[600];
  const char *home = getenv("CUDA_HOME");
  struct stat st;
  int n = 0;
  home = home && *home && strlen(home) < 512 ? home : "/usr/local/cuda";
  snprintf(cccl, sizeof cccl, "%s/include/cccl", home);
  if (stat(cccl, &st) == 0) {
    snprintf(cccl, sizeof cccl, "--include-path=%s/include/cccl", home);
    opts[n++] = cccl;
  }
  snprintf(inc, sizeof inc, "--include-path=%s/include", home);
  opts[n++] = inc;
  return n;
}
