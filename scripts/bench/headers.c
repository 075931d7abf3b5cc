/*
** headers.c -- kernels including <cooperative_groups.h> compiled one after another in one process
** (issue 25): cujit, whose NVRTC compiles run with a precompiled header (CUJIT_PCH, default auto),
** beside NVRTC alone compiling the same kind of kernel in the same process with the same options.
** The first cujit kernel makes the PCH (variant cg_first), the later ones use it (cg_second, the
** median; goal <= 0.15x NVRTC alone). Each compile has a kernel of its own name, so nothing is a
** cache hit: cujit's disk cache is off (CUJIT_CACHE=off, set here) and NVRTC's own in-memory cache
** is off where NVRTC has the option (-no-cache, 12.9 and later; the detail says when it had not).
** No GPU needed: the arch is explicit. Prints a line per figure on stderr and results.csv rows
** (case "pch", systems nvrtc and cujit_c) on stdout.
**   usage: cujit_bench_headers [repetitions, default 3] [arch, default sm_90]
*/
#include "common.h"

#include "cujit.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cg_source = "#include <cooperative_groups.h>\n"
                               "namespace cg = cooperative_groups;\n"
                               "extern \"C\" __global__ void %s(float *x, int n) {\n"
                               "  cg::thread_block b = cg::this_thread_block();\n"
                               "  int i = blockIdx.x * blockDim.x + b.thread_rank();\n"
                               "  if (i < n) x[i] *= 2.0f;\n"
                               "  b.sync();\n"
                               "  cg::thread_block_tile<32> w = cg::tiled_partition<32>(b);\n"
                               "  if (i < n) x[i] += w.shfl_down(x[i], 1);\n"
                               "}\n";

/* NVRTC alone: the library cujit opens (CUJIT_NVRTC, else libnvrtc.so.13, .12). */
static struct {
  __typeof__(&nvrtcVersion) version;
  __typeof__(&nvrtcCreateProgram) create;
  __typeof__(&nvrtcCompileProgram) compile;
  __typeof__(&nvrtcDestroyProgram) destroy;
} nv;

static int open_nvrtc(char *why, size_t len) {
  void *h = bench_nvrtc_library(why, len);
  if (h) {
    *(void **)&nv.version = dlsym(h, "nvrtcVersion");
    *(void **)&nv.create = dlsym(h, "nvrtcCreateProgram");
    *(void **)&nv.compile = dlsym(h, "nvrtcCompileProgram");
    *(void **)&nv.destroy = dlsym(h, "nvrtcDestroyProgram");
    if (nv.version && nv.create && nv.compile && nv.destroy) return 1;
    snprintf(why, len, "NVRTC lacks one of its basic calls");
  }
  return 0;
}

/* The options cujit gives NVRTC for these kernels (but its PCH options): the arch, the toolkit's
** cccl and include directories, and -no-cache where NVRTC has it. */
static const char *opts[8];
static int nopts;

static void nvrtc_options(const char *arch, int no_cache) {
  static char a[64];
  snprintf(a, sizeof a, "-arch=%s", arch);
  opts[nopts++] = a;
  nopts += bench_nvrtc_include_options(opts + nopts);
  if (no_cache) opts[nopts++] = "-no-cache";
}

/* The untimed first compile of each: NVRTC's first in a process loads its builtins. */
static const char *warm_source = "extern \"C\" __global__ void %s(float *x) { x[0] = 1; }\n";

/* One NVRTC compile of kernel `name` (of `text`, cg_source by default), in ms; -1 if it failed. */
static double nvrtc_ms(const char *name, const char *text) {
  char src[2048], file[64];
  snprintf(src, sizeof src, text ? text : cg_source, name);
  snprintf(file, sizeof file, "%s.cu", name);
  nvrtcProgram p;
  if (nv.create(&p, src, file, 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
  double t0 = bench_now_us();
  nvrtcResult r = nv.compile(p, nopts, opts);
  double ms = (bench_now_us() - t0) / 1e3;
  nv.destroy(&p);
  return r == NVRTC_SUCCESS ? ms : -1;
}

/* One cujit compile, as nvrtc_ms; a failure is said on stderr. */
static double cujit_ms(cujit_engine *e, const cujit_compile_options *o, const char *name,
                       const char *text) {
  char src[2048], file[64];
  snprintf(src, sizeof src, text ? text : cg_source, name);
  snprintf(file, sizeof file, "%s.cu", name);
  cujit_program *p = NULL;
  double t0 = bench_now_us();
  cujit_status st = cujit_program_compile(e, src, file, o, &p);
  double ms = (bench_now_us() - t0) / 1e3;
  if (st != CUJIT_OK) fprintf(stderr, "cujit_bench_headers: %s\n", cujit_errmsg(e));
  cujit_program_free(p);
  return st == CUJIT_OK ? ms : -1;
}

static void missing_all(const char *why) {
  static const char *const variants[] = {"cg_first", "cg_second"};
  for (int i = 0; i < 2; i++) {
    bench_missing("pch", "nvrtc", variants[i], 0, why);
    bench_missing("pch", "cujit_c", variants[i], 0, why);
  }
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 3;
  if (reps < 1) reps = 1;
  const char *arch = argc > 2 ? argv[2] : "sm_90";
  char why[512], detail[256];
  setenv("CUJIT_CACHE", "off", 1); /* every compile runs NVRTC */
  cujit_engine *e;
  int v = 0;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  if (!open_nvrtc(why, sizeof why) || cujit_nvrtc_version(e, &v) != CUJIT_OK) {
    missing_all(v ? why : cujit_errmsg(e));
    return 0;
  }
  int no_cache = v >= 12090;
  nvrtc_options(arch, no_cache);
  const char *extra[] = {"-no-cache"};
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch, o.extra_flags = extra, o.extra_flag_count = no_cache;
  if (nvrtc_ms("warm_nvrtc", warm_source) < 0 || cujit_ms(e, &o, "warm_cujit", warm_source) < 0) {
    missing_all("a compile failed (see stderr)");
    return 0;
  }
  cujit_cache_stats s0 = CUJIT_CACHE_STATS_INIT, s1 = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &s0);
  double *plain = calloc((size_t)reps, sizeof *plain), *with = calloc((size_t)reps, sizeof *with);
  double first = cujit_ms(e, &o, "cg_first", NULL);
  int ok = plain && with && first >= 0;
  for (int r = 0; ok && r < reps; r++) { /* kernels of their own names: nothing is reused */
    char name[32];
    snprintf(name, sizeof name, "cg_nvrtc%d", r);
    plain[r] = nvrtc_ms(name, NULL);
    snprintf(name, sizeof name, "cg_cujit%d", r);
    with[r] = cujit_ms(e, &o, name, NULL);
    ok = plain[r] >= 0 && with[r] >= 0;
  }
  cujit_cache_stats_get(e, &s1);
  if (!ok) {
    missing_all("a compile failed (see stderr)");
    return 0;
  }
  double floor = bench_median(plain, reps), second = bench_median(with, reps);
  snprintf(detail, sizeof detail, "median of %d; %s; PCH made %llu used %llu", reps,
           no_cache ? "-no-cache" : "NVRTC before 12.9 has no -no-cache",
           (unsigned long long)(s1.pch_created - s0.pch_created),
           (unsigned long long)(s1.pch_used - s0.pch_used));
  fprintf(stderr, "NVRTC alone        %8.1f ms  (%s)\n", floor, detail);
  fprintf(stderr, "cujit, first       %8.1f ms  %.2fx (makes the PCH)\n", first, first / floor);
  fprintf(stderr, "cujit, later ones  %8.1f ms  %.3fx (use it)\n", second, second / floor);
  printf("pch,nvrtc,cg_first,1,%.4g,ms,ok,%s\n", floor, detail);
  printf("pch,nvrtc,cg_second,%d,%.4g,ms,ok,%s\n", reps, floor, detail);
  printf("pch,cujit_c,cg_first,1,%.4g,ms,ok,%s\n", first, detail);
  printf("pch,cujit_c,cg_second,%d,%.4g,ms,ok,%s\n", reps, second, detail);
  free(plain), free(with);
  cujit_close(e);
  return 0;
}
