/*
** raw.c -- the floor: the CUDA Driver API and NVRTC called directly, with nothing in between.
**
** Opens libcuda.so.1 and libnvrtc at run time (dlopen + cuGetProcAddress, as the engine does), so
** it builds and runs where there is no driver: there it prints "missing" rows and exits 0. Measures
** launch host time, the launch + synchronize round trip, NVRTC alone from source to first launch,
** the device-to-device copy and the read bandwidth that the other systems are held against, and the
** same vector add / SAXPY kernels as everyone else.
*/
#include "common.h"

#include <nvrtc.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS "raw"

#define NVRTC_FUNCTIONS(X)                                                                         \
  X(nvrtcVersion)                                                                                  \
  X(nvrtcCreateProgram)                                                                            \
  X(nvrtcDestroyProgram)                                                                           \
  X(nvrtcCompileProgram)                                                                           \
  X(nvrtcGetCUBINSize)                                                                             \
  X(nvrtcGetCUBIN)                                                                                 \
  X(nvrtcGetProgramLogSize)                                                                        \
  X(nvrtcGetProgramLog)

#define NVRTC_FIELD(name) __typeof__(&name) name;

static struct {
  NVRTC_FUNCTIONS(NVRTC_FIELD)
  void *nvrtc_handle;
  CUdevice dev;
  int cc_major, cc_minor, sms;
} cu;

static char why[1024]; /* why the last step failed, for the "missing" rows */

static int check(CUresult rc, const char *what) {
  return bench_cu_check(rc, what, why, sizeof why);
}

static int open_device(void) {
  CUcontext ctx;
  if (!check(bench_cu.cuInit(0), "cuInit") ||
      !check(bench_cu.cuDeviceGet(&cu.dev, 0), "cuDeviceGet"))
    return 0;
  if (!check(bench_cu.cuDevicePrimaryCtxRetain(&ctx, cu.dev), "cuDevicePrimaryCtxRetain") ||
      !check(bench_cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
    return 0;
  bench_cu.cuDeviceGetAttribute(&cu.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu.dev);
  bench_cu.cuDeviceGetAttribute(&cu.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu.dev);
  bench_cu.cuDeviceGetAttribute(&cu.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu.dev);
  return 1;
}

static int open_nvrtc(void) {
  if (cu.nvrtc_handle) return 1;
  void *h = bench_nvrtc_library(why, sizeof why);
  if (!h) return 0;
#define RESOLVE(name)                                                                              \
  if (!(*(void **)&cu.name = dlsym(h, #name))) {                                                   \
    snprintf(why, sizeof why, "NVRTC lacks %s", #name);                                            \
    return 0;                                                                                      \
  }
  NVRTC_FUNCTIONS(RESOLVE)
#undef RESOLVE
  cu.nvrtc_handle = h;
  return 1;
}

/* ---- compiling and loading ------------------------------------------------------------------- */

/* NVRTC to CUBIN for the device's own sm_XX (malloc'd into *cubin). */
static int compile_cubin(const char *src, const char *name, char **cubin) {
  if (!open_nvrtc()) return 0;
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", cu.cc_major, cu.cc_minor);
  /* NVRTC's own in-memory cache off where it has the option (12.9 and later), so that a cold
  ** compile is a real one (NVRTC keeps no cache on disk: a new process starts without one) */
  int major = 0, minor = 0;
  cu.nvrtcVersion(&major, &minor);
  const char *opts[] = {arch, "-no-cache"};
  int nopts = major * 1000 + minor * 10 >= 12090 ? 2 : 1;
  nvrtcProgram prog;
  if (cu.nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS) {
    snprintf(why, sizeof why, "nvrtcCreateProgram failed for %s", name);
    return 0;
  }
  int ok = cu.nvrtcCompileProgram(prog, nopts, opts) == NVRTC_SUCCESS;
  size_t size = 0;
  *cubin = NULL;
  if (ok && cu.nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS && (*cubin = malloc(size)))
    ok = cu.nvrtcGetCUBIN(prog, *cubin) == NVRTC_SUCCESS;
  else if (ok)
    ok = 0;
  if (!ok) {
    size_t log_len = 0;
    cu.nvrtcGetProgramLogSize(prog, &log_len);
    char log[512] = "";
    if (log_len > 0 && log_len < sizeof log) cu.nvrtcGetProgramLog(prog, log);
    snprintf(why, sizeof why, "NVRTC could not compile %s: %s", name, log);
    free(*cubin);
    *cubin = NULL;
  }
  cu.nvrtcDestroyProgram(&prog);
  return ok;
}

/* NVRTC to CUBIN, then a context-independent library. */
static int build(const char *src, const char *name, CUlibrary *lib) {
  char *cubin = NULL;
  int ok = compile_cubin(src, name, &cubin) &&
           check(bench_cu.cuLibraryLoadData(lib, cubin, NULL, NULL, 0, NULL, NULL, 0),
                 "cuLibraryLoadData");
  free(cubin);
  return ok;
}

static int load(const bench_opts *o, const char *file, CUlibrary *lib) {
  char *src = bench_read_kernel(o, file, why, sizeof why);
  int ok = src && build(src, file, lib);
  free(src);
  return ok;
}

/* The kernel as a CUfunction of the current context, as cujit launches it (see common.c). */
static int get_kernel(CUlibrary lib, const char *name, CUfunction *fn) {
  CUkernel k;
  return check(bench_cu.cuLibraryGetKernel(&k, lib, name), "cuLibraryGetKernel") &&
         check(bench_cu.cuKernelGetFunction(fn, k), "cuKernelGetFunction");
}

static int launch(CUfunction fn, unsigned grid, unsigned block, void **params) {
  return check(bench_cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL),
               "cuLaunchKernel");
}

/* ---- cases 1 and 2: launch host time, round trip --------------------------------------------- */

/* Host microseconds per launch: batches of o->batch launches, only the launch calls timed, the
** device drained between batches so the driver's queue never fills. */
static int time_launches(const bench_opts *o, CUfunction fn, void **params, double *us) {
  double *v = calloc((size_t)o->reps, sizeof *v);
  int ok = v != NULL;
  for (int r = -1; ok && r < o->reps; r++) { /* r == -1: warm-up */
    double spent = 0;
    for (long done = 0; ok && done < o->launches; done += o->batch) {
      double t0 = bench_now_us();
      for (int b = 0; b < o->batch; b++)
        if (bench_cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL)) ok = 0;
      spent += bench_now_us() - t0;
      ok = ok && check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize after a batch of launches");
    }
    if (r >= 0) v[r] = spent / (double)o->launches;
  }
  if (ok)
    *us = bench_median(v, o->reps);
  else if (!*why)
    snprintf(why, sizeof why, "cuLaunchKernel failed during the loop");
  free(v);
  return ok;
}

static int time_roundtrips(const bench_opts *o, CUfunction fn, void **params, double *us) {
  double *v = calloc((size_t)o->reps, sizeof *v);
  int ok = v != NULL;
  for (int r = -1; ok && r < o->reps; r++) {
    double t0 = bench_now_us();
    for (long k = 0; ok && k < o->roundtrips; k++)
      ok = launch(fn, 1, 32, params) && check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
    if (r >= 0) v[r] = (bench_now_us() - t0) / (double)o->roundtrips;
  }
  if (ok) *us = bench_median(v, o->reps);
  free(v);
  return ok;
}

static void case_launch(const bench_opts *o, CUdeviceptr buf) {
  static const int counts[] = {1, 4, 12};
  CUlibrary lib;
  if (!load(o, "empty.cu", &lib)) {
    for (int c = 0; c < 3; c++) {
      char variant[16];
      snprintf(variant, sizeof variant, "args%d", counts[c]);
      bench_missing("launch", SYS, variant, (double)o->launches, why);
    }
    bench_missing("roundtrip", SYS, "args4", (double)o->roundtrips, why);
    return;
  }
  for (int c = 0; c < 3; c++) {
    char variant[16], name[16];
    snprintf(variant, sizeof variant, "args%d", counts[c]);
    snprintf(name, sizeof name, "empty%d", counts[c]);
    bench_launch_args a;
    bench_pack_launch(&a, buf, counts[c]);
    CUfunction fn;
    double us;
    int have = get_kernel(lib, name, &fn);
    if (bench_wants(o, "launch")) {
      if (have && time_launches(o, fn, a.params, &us))
        bench_row("launch", SYS, variant, (double)o->launches, us, "us");
      else
        bench_missing("launch", SYS, variant, (double)o->launches, why);
    }
    if (counts[c] == 4 && bench_wants(o, "roundtrip")) {
      if (have && time_roundtrips(o, fn, a.params, &us))
        bench_row("roundtrip", SYS, variant, (double)o->roundtrips, us, "us");
      else
        bench_missing("roundtrip", SYS, variant, (double)o->roundtrips, why);
    }
  }
  bench_cu.cuLibraryUnload(lib);
}

/* ---- case 3: NVRTC alone, source to first launch finished ----------------------------------- */

static void case_cold(const bench_opts *o, CUdeviceptr buf) {
  char *src = bench_read_kernel(o, "vadd.cu", why, sizeof why);
  if (!src) {
    bench_missing("cold", "nvrtc", "vadd", 1 << 20, why);
    return;
  }
  int n = 1 << 20;
  void *params[] = {&buf, &buf, &buf, &n};
  CUlibrary lib;
  CUfunction fn;
  /* One process, one cold compile: run.sh starts this program once per repetition. Opening
  ** NVRTC is inside the timed region because cujit opens it lazily too. */
  double t0 = bench_now_us();
  int ok = build(src, "vadd.cu", &lib) && get_kernel(lib, "vadd", &fn) &&
           launch(fn, (unsigned)(n / 256), 256, params) &&
           check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  double ms = (bench_now_us() - t0) / 1e3;
  if (ok)
    bench_row("cold", "nvrtc", "vadd", n, ms, "ms");
  else
    bench_missing("cold", "nvrtc", "vadd", n, why);
  free(src);
}

/* The floor under a warm-cache first launch: the driver's own part, a CUBIN already in memory
** loaded, its kernel got and launched once, and waited for. NVRTC runs first, untimed. */
static void case_warm(const bench_opts *o, CUdeviceptr buf) {
  char *src = bench_read_kernel(o, "vadd.cu", why, sizeof why), *cubin = NULL;
  int n = 1 << 20;
  if (!src || !compile_cubin(src, "vadd.cu", &cubin)) {
    bench_missing("warm", "raw", "vadd", n, why);
    free(src);
    return;
  }
  void *params[] = {&buf, &buf, &buf, &n};
  CUlibrary lib;
  CUfunction fn;
  double t0 = bench_now_us();
  int ok = check(bench_cu.cuLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0),
                 "cuLibraryLoadData") &&
           get_kernel(lib, "vadd", &fn) && launch(fn, (unsigned)(n / 256), 256, params) &&
           check(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  double ms = (bench_now_us() - t0) / 1e3;
  if (ok)
    bench_row("warm", "raw", "vadd", n, ms, "ms");
  else
    bench_missing("warm", "raw", "vadd", n, why);
  free(cubin);
  free(src);
}

/* ---- case 5 and 6 floors, and the shared kernels on the raw driver -------------------------- */

typedef struct timer {
  CUevent start, stop;
} timer;

static int gpu_ms(timer *t, double *ms) {
  float f = 0;
  if (!check(bench_cu.cuEventSynchronize(t->stop), "cuEventSynchronize") ||
      !check(bench_cu.cuEventElapsedTime(&f, t->start, t->stop), "cuEventElapsedTime"))
    return 0;
  *ms = f;
  return 1;
}

typedef struct sweep {
  CUdeviceptr a, b, c;
  CUfunction fn[5]; /* vadd saxpy vadd4 saxpy4 readall */
  timer t;
} sweep;

static const char *const sweep_names[] = {"vadd", "saxpy", "vadd4", "saxpy4", "readall"};

/* One timed run of `what` on n floats (kernel or copy), by events. */
static int run_once(sweep *s, int what, int n, double *ms) {
  float alpha = 2.0f, never = -1.0f;
  int n4 = n / 4;
  void *p_vadd[] = {&s->a, &s->b, &s->c, &n}, *p_saxpy[] = {&alpha, &s->a, &s->c, &n};
  void *p_vadd4[] = {&s->a, &s->b, &s->c, &n4}, *p_saxpy4[] = {&alpha, &s->a, &s->c, &n4};
  void *p_read[] = {&s->a, &s->c, &n4, &never};
  unsigned g1 = (unsigned)((n + 255) / 256), g4 = (unsigned)((n4 + 255) / 256);
  unsigned gread = (unsigned)(cu.sms * 8) < g4 ? (unsigned)(cu.sms * 8) : g4;
  bench_cu.cuEventRecord(s->t.start, NULL);
  int ok;
  switch (what) {
  case 0:
    ok = launch(s->fn[0], g1, 256, p_vadd);
    break;
  case 1:
    ok = launch(s->fn[1], g1, 256, p_saxpy);
    break;
  case 2:
    ok = launch(s->fn[2], g4, 256, p_vadd4);
    break;
  case 3:
    ok = launch(s->fn[3], g4, 256, p_saxpy4);
    break;
  case 4:
    ok = launch(s->fn[4], gread, 256, p_read);
    break;
  default:
    ok = check(bench_cu.cuMemcpyDtoD(s->c, s->a, (size_t)n * 4), "cuMemcpyDtoD");
  }
  bench_cu.cuEventRecord(s->t.stop, NULL);
  return ok && gpu_ms(&s->t, ms);
}

static int run_median(const bench_opts *o, sweep *s, int what, int n, double *ms) {
  double v[1000];
  int reps = o->reps * 3 > 1000 ? 1000 : o->reps * 3; /* kernels are short: more repetitions */
  if (!run_once(s, what, n, &v[0])) return 0;         /* warm-up */
  for (int r = 0; r < reps; r++)
    if (!run_once(s, what, n, &v[r])) return 0;
  *ms = bench_median(v, reps);
  return 1;
}

static void report_bw(const char *bcase, const char *variant, int n, int ok, double ms,
                      double bytes) {
  if (ok)
    bench_row(bcase, SYS, variant, n, bytes / (ms * 1e-3) / 1e9, "GB/s");
  else
    bench_missing(bcase, SYS, variant, n, why);
}

static int vadd_checks(sweep *s, int n) {
  float got[2] = {0, 0};
  /* a = 1, b = 2 everywhere: a correct vadd leaves 3 at both ends. */
  if (!check(bench_cu.cuMemcpyDtoH(&got[0], s->c, 4), "cuMemcpyDtoH") ||
      !check(bench_cu.cuMemcpyDtoH(&got[1], s->c + (size_t)(n - 1) * 4, 4), "cuMemcpyDtoH"))
    return 0;
  if (got[0] == 3.0f && got[1] == 3.0f) return 1;
  snprintf(why, sizeof why, "vadd gave wrong results (%g, %g instead of 3)", got[0], got[1]);
  return 0;
}

static void sweep_sizes(const bench_opts *o, sweep *s) {
  static const char *const variants[] = {"vadd", "saxpy", "vadd4", "saxpy4"};
  for (int k = o->min_log2; k <= o->max_log2; k += o->step_log2) {
    int n = 1 << k;
    double ms = 0;
    int ok = run_median(o, s, 5, n, &ms);
    report_bw("bandwidth", "copy", n, ok, ms, 2.0 * 4 * n);
    for (int w = 0; w < 4; w++) {
      bench_cu.cuMemsetD32(s->c, 0x7fc00000u, (size_t)n); /* poison: NaN */
      ok = run_median(o, s, w, n, &ms) && (w != 0 || vadd_checks(s, n));
      report_bw("bandwidth", variants[w], n, ok, ms, 3.0 * 4 * n);
    }
  }
}

static int sweep_open(const bench_opts *o, sweep *s, size_t bytes) {
  CUlibrary libs[4];
  static const char *const files[] = {"vadd.cu", "saxpy.cu", "vec4.cu", "read.cu"};
  static const int file_of[] = {0, 1, 2, 2, 3};
  for (int f = 0; f < 4; f++)
    if (!load(o, files[f], &libs[f])) return 0;
  for (int k = 0; k < 5; k++)
    if (!get_kernel(libs[file_of[k]], sweep_names[k], &s->fn[k])) return 0;
  if (!check(bench_cu.cuMemAlloc(&s->a, bytes), "cuMemAlloc") ||
      !check(bench_cu.cuMemAlloc(&s->b, bytes), "cuMemAlloc") ||
      !check(bench_cu.cuMemAlloc(&s->c, bytes), "cuMemAlloc"))
    return 0;
  bench_cu.cuMemsetD32(s->a, 0x3f800000u, bytes / 4); /* 1.0f */
  bench_cu.cuMemsetD32(s->b, 0x40000000u, bytes / 4); /* 2.0f */
  return check(bench_cu.cuEventCreate(&s->t.start, CU_EVENT_DEFAULT), "cuEventCreate") &&
         check(bench_cu.cuEventCreate(&s->t.stop, CU_EVENT_DEFAULT), "cuEventCreate");
}

/* The sum's floor, timed as every sum is: host wall time from the call to one number on the host.
** Here that is the read-only kernel and a 4-byte copy back. */
static int read_to_host(const bench_opts *o, sweep *s, int n, double *ms) {
  int reps = o->reps * 3 > 1000 ? 1000 : o->reps * 3, n4 = n / 4;
  unsigned grid = (unsigned)((n4 + 255) / 256);
  if (grid > (unsigned)cu.sms * 8) grid = (unsigned)cu.sms * 8;
  float never = -1.0f, got = 0;
  void *params[] = {&s->a, &s->c, &n4, &never};
  double v[1000];
  for (int r = -1; r < reps; r++) {
    double t0 = bench_now_us();
    if (!launch(s->fn[4], grid, 256, params) ||
        !check(bench_cu.cuMemcpyDtoH(&got, s->c, sizeof got), "cuMemcpyDtoH"))
      return 0;
    if (r >= 0) v[r] = (bench_now_us() - t0) / 1e3;
  }
  *ms = bench_median(v, reps);
  return 1;
}

static void case_bandwidth(const bench_opts *o) {
  int top = o->max_log2 > o->sum_log2 ? o->max_log2 : o->sum_log2;
  sweep s;
  memset(&s, 0, sizeof s);
  int ok = sweep_open(o, &s, (size_t)4 << top);
  if (ok && bench_wants(o, "bandwidth")) sweep_sizes(o, &s);
  if (!ok && bench_wants(o, "bandwidth"))
    for (int k = o->min_log2; k <= o->max_log2; k += o->step_log2)
      bench_missing("bandwidth", SYS, "copy", 1 << k, why);
  if (bench_wants(o, "sum")) {
    double ms = 0;
    int n = 1 << o->sum_log2;
    int good = ok && run_median(o, &s, 4, n, &ms);
    if (good)
      bench_row("sum", SYS, "read_kernel", n, 4.0 * n / (ms * 1e-3) / 1e9, "GB/s");
    else
      bench_missing("sum", SYS, "read_kernel", n, why);
    good = ok && read_to_host(o, &s, n, &ms);
    if (good)
      bench_row("sum", SYS, "read", n, 4.0 * n / (ms * 1e-3) / 1e9, "GB/s");
    else
      bench_missing("sum", SYS, "read", n, why);
  }
  if (s.a) bench_cu.cuMemFree(s.a);
  if (s.b) bench_cu.cuMemFree(s.b);
  if (s.c) bench_cu.cuMemFree(s.c);
}

/* ---- the graph case: replaying captured graphs of empty kernels ------------------------------ */

typedef struct raw_replay {
  CUgraphExec exec;
  CUstream stream;
} raw_replay;

static int raw_replay_once(void *ctx) {
  raw_replay *g = ctx;
  return bench_cu.cuGraphLaunch(g->exec, g->stream) == CUDA_SUCCESS;
}

static int raw_drain(void *ctx) {
  return check(bench_cu.cuStreamSynchronize(((raw_replay *)ctx)->stream), "cuStreamSynchronize");
}

static void case_graph(const bench_opts *o, CUdeviceptr buf) {
  CUlibrary lib;
  CUfunction fn;
  raw_replay g = {NULL, NULL};
  if (!load(o, "empty.cu", &lib)) {
    bench_graph_missing(o, SYS, why);
    return;
  }
  bench_launch_args a;
  bench_pack_launch(&a, buf, 4);
  int ok = get_kernel(lib, "empty4", &fn) &&
           check(bench_cu.cuStreamCreate(&g.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (int i = 0; ok && i < bench_graph_count(o); i++) {
    double capture, instantiate, us[2];
    int n = bench_graph_sizes[i];
    ok = bench_raw_graph(fn, a.params, n, g.stream, &g.exec, &capture, &instantiate, why,
                         sizeof why) &&
         bench_time_replays(o, n, raw_replay_once, NULL, raw_drain, &g, us);
    if (ok) bench_graph_rows(SYS, i, us[0], capture, instantiate);
    if (g.exec) bench_cu.cuGraphExecDestroy(g.exec);
    g.exec = NULL;
  }
  if (!ok) bench_graph_missing(o, SYS, why);
  if (g.stream) bench_cu.cuStreamDestroy(g.stream);
  bench_cu.cuLibraryUnload(lib);
}

/* ---- versions, for the report's heading ------------------------------------------------------ */

static void case_info(void) {
  char name[256] = "", text[64];
  int version = 0;
  bench_cu.cuDeviceGetName(name, sizeof name, cu.dev);
  bench_info(SYS, "gpu", name);
  bench_cu.cuDriverGetVersion(&version);
  snprintf(text, sizeof text, "%d.%d", version / 1000, version % 1000 / 10);
  bench_info(SYS, "driver_cuda", text);
  snprintf(text, sizeof text, "sm_%d%d, %d SMs", cu.cc_major, cu.cc_minor, cu.sms);
  bench_info(SYS, "arch", text);
  int major = 0, minor = 0;
  if (open_nvrtc() && cu.nvrtcVersion(&major, &minor) == NVRTC_SUCCESS) {
    snprintf(text, sizeof text, "%d.%d", major, minor);
    bench_info(SYS, "nvrtc", text);
  }
}

/* Without a device every case still answers, with the reason. */
static void all_missing(const bench_opts *o) {
  static const char *const variants[] = {"args1", "args4", "args12"};
  for (int c = 0; c < 3 && bench_wants(o, "launch"); c++)
    bench_missing("launch", SYS, variants[c], (double)o->launches, why);
  if (bench_wants(o, "roundtrip")) bench_missing("roundtrip", SYS, "args4", 0, why);
  if (bench_wants(o, "cold")) bench_missing("cold", "nvrtc", "vadd", 1 << 20, why);
  if (bench_wants(o, "warm")) bench_missing("warm", "raw", "vadd", 1 << 20, why);
  for (int k = o->min_log2; k <= o->max_log2 && bench_wants(o, "bandwidth"); k += o->step_log2)
    bench_missing("bandwidth", SYS, "copy", 1 << k, why);
  if (bench_wants(o, "sum")) bench_missing("sum", SYS, "read", 1 << o->sum_log2, why);
  if (bench_wants(o, "graph")) bench_graph_missing(o, SYS, why);
}

int main(int argc, char **argv) {
  bench_opts o;
  if (!bench_parse(&o, argc, argv, "cujit_bench_raw")) return 2;
  if (!bench_driver_open(why, sizeof why) || !open_device()) {
    fprintf(stderr, "cujit_bench_raw: %s; every raw figure is reported missing\n", why);
    all_missing(&o);
    return 0;
  }
  CUdeviceptr small = 0;
  if (!check(bench_cu.cuMemAlloc(&small, 1 << 22), "cuMemAlloc")) {
    all_missing(&o);
    return 0;
  }
  if (bench_wants(&o, "info")) case_info();
  if (bench_wants(&o, "launch") || bench_wants(&o, "roundtrip")) case_launch(&o, small);
  if (bench_wants(&o, "cold")) case_cold(&o, small);
  if (bench_wants(&o, "warm")) case_warm(&o, small);
  if (bench_wants(&o, "bandwidth") || bench_wants(&o, "sum")) case_bandwidth(&o);
  if (bench_wants(&o, "graph")) case_graph(&o, small);
  bench_cu.cuMemFree(small);
  return 0;
}
