/*
** c_api.c -- cujit through its public C API (include/cujit.h), on the same kernel sources as the
** raw Driver API program: launch host time, round trip, cold compile, warm cache, bandwidth, the
** library's reduction and Monte Carlo with <cujit/random.h>. The launch case also measures its own
** floor in this process, interleaved with cujit: raw cuLaunchKernel on the CUBIN cujit compiled.
** Without a GPU (CI) each figure is a "missing" row, and --short still compiles every shared
** kernel for sm_90 through cujit.
*/
#include "common.h"

#include "cujit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS "cujit_c"
#define SYS_FLOOR "raw_c_same" /* raw cuLaunchKernel, in this process */

static cujit_engine *engine;
static char why[1024];

static int check(cujit_status st, const char *what) {
  if (st == CUJIT_OK) return 1;
  snprintf(why, sizeof why, "%s: %s (%s)", what, cujit_errmsg(engine), cujit_status_string(st));
  return 0;
}

static int compile(const bench_opts *o, const char *file, const cujit_compile_options *opts,
                   cujit_program **prog) {
  char *src = bench_read_kernel(o, file, why, sizeof why);
  int ok = src && check(cujit_program_compile(engine, src, file, opts, prog), file);
  free(src);
  return ok;
}

static int kernel(const bench_opts *o, const char *file, const char *name, cujit_kernel **k) {
  cujit_program *prog = NULL;
  int ok = compile(o, file, NULL, &prog) && check(cujit_program_kernel(prog, name, k), name);
  cujit_program_free(prog); /* the kernel keeps what it needs */
  return ok;
}

static cujit_launch_config config(unsigned grid, unsigned block) {
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {grid, 1, 1},
                           .block = {block, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  return c;
}

/* --- cases 1 and 2 ---------------------------------------------------------------------------- */

/* cujit's arguments: the same values bench_pack_launch gives the raw floor. */
static size_t pack(cujit_arg *a, cujit_buffer *buf, int nargs) {
  bench_launch_args v;
  bench_pack_launch(&v, 0, nargs);
  if (nargs == 1) {
    a[0] = CUJIT_ARG_I(v.i[0]);
    return 1;
  }
  if (nargs == 4) {
    a[0] = CUJIT_ARG_BUF(buf), a[1] = CUJIT_ARG_BUF(buf), a[2] = CUJIT_ARG_I(v.i[0]);
    a[3] = CUJIT_ARG_F(v.f[0]);
    return 4;
  }
  for (int k = 0; k < 4; k++) {
    a[k] = CUJIT_ARG_BUF(buf), a[4 + k] = CUJIT_ARG_I(v.i[k]);
    a[8 + k] = CUJIT_ARG_F(v.f[k]);
  }
  return 12;
}

/* The raw cuLaunchKernel floor, in this process: the CUBIN cujit compiled for the kernel, loaded
** by the driver itself into the context cujit launches in, and launched with the same arguments.
** Measured against cujit in the same process, so that what differs between processes (where the
** driver's memory landed, the CPU it runs on, its clock) is common to both figures. */
typedef struct raw_floor {
  CUlibrary lib;
  CUfunction fn;
  bench_launch_args args;
} raw_floor;

static int raw_floor_open(raw_floor *f, cujit_kernel *k, const char *name, cujit_buffer *buf,
                          int nargs) {
  const cujit_program *prog = cujit_kernel_program(k);
  const void *image = prog ? cujit_program_cubin(prog, NULL) : NULL;
  if (!image && prog) image = cujit_program_ptx(prog, NULL); /* a compute_XX program: PTX only */
  if (!image) {
    snprintf(why, sizeof why, "cujit holds neither CUBIN nor PTX of %s", name);
    return 0;
  }
  CUcontext ctx = NULL;
  if (!bench_driver_open(why, sizeof why) ||
      !bench_cu_check(bench_cu.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent", why, sizeof why))
    return 0;
  if (!ctx) {
    snprintf(why, sizeof why, "no current CUDA context after a cujit launch");
    return 0;
  }
  bench_pack_launch(&f->args, (CUdeviceptr)cujit_buffer_devptr(buf), nargs);
  return bench_cu_function(image, name, &f->lib, &f->fn, why, sizeof why);
}

static int raw_batch(const bench_opts *o, raw_floor *f) {
  int ok = 1;
  for (int b = 0; b < o->batch; b++)
    if (bench_cu.cuLaunchKernel(f->fn, 1, 1, 1, 32, 1, 1, 0, NULL, f->args.params, NULL)) ok = 0;
  if (!ok) snprintf(why, sizeof why, "cuLaunchKernel (the same-process floor) failed");
  return ok;
}

static int cujit_batch(const bench_opts *o, cujit_kernel *k, const cujit_arg *args, size_t nargs) {
  cujit_launch_config cfg = config(1, 32);
  int ok = 1;
  for (int b = 0; b < o->batch; b++)
    if (cujit_launch(k, &cfg, args, nargs) != CUJIT_OK) ok = 0;
  if (!ok) snprintf(why, sizeof why, "cujit_launch failed: %s", cujit_errmsg(engine));
  return ok;
}

/* Same method as raw.c: batches, only the launch calls timed, drained between batches. With a
** floor, every batch of cujit launches is paired with one of raw launches, the pair's order
** alternating, so both see the same state of the machine: us[0] is cujit's figure, us[1] the
** floor's. */
static int time_launches(const bench_opts *o, cujit_kernel *k, cujit_device *dev,
                         const cujit_arg *args, size_t nargs, raw_floor *raw, double us[2]) {
  double *v = calloc(2 * (size_t)o->reps, sizeof *v);
  int ok = v != NULL;
  if (!v) snprintf(why, sizeof why, "out of host memory");
  for (int r = -1; ok && r < o->reps; r++) { /* r == -1: warm-up */
    double spent[2] = {0, 0};
    long batches = 0;
    for (long done = 0; ok && done < o->launches; done += o->batch, batches++)
      for (int turn = 0; ok && turn < 2; turn++) {
        int side = (int)((turn + batches) % 2); /* 0: cujit, 1: the floor */
        if (side == 1 && !raw) continue;
        double t0 = bench_now_us();
        ok = side ? raw_batch(o, raw) : cujit_batch(o, k, args, nargs);
        spent[side] += bench_now_us() - t0;
        ok = ok && check(cujit_device_synchronize(dev), "synchronize after a batch");
      }
    double count = (double)batches * o->batch;
    if (r >= 0) v[r] = spent[0] / count, v[o->reps + r] = spent[1] / count;
  }
  if (ok) us[0] = bench_median(v, o->reps), us[1] = bench_median(v + o->reps, o->reps);
  free(v);
  return ok;
}

static int time_roundtrips(const bench_opts *o, cujit_kernel *k, cujit_device *dev,
                           const cujit_arg *args, size_t nargs, double *us) {
  cujit_launch_config cfg = config(1, 32);
  double *v = calloc((size_t)o->reps, sizeof *v);
  int ok = v != NULL;
  for (int r = -1; ok && r < o->reps; r++) {
    double t0 = bench_now_us();
    for (long i = 0; ok && i < o->roundtrips; i++)
      ok = check(cujit_launch(k, &cfg, args, nargs), "cujit_launch") &&
           check(cujit_device_synchronize(dev), "synchronize");
    if (r >= 0) v[r] = (bench_now_us() - t0) / (double)o->roundtrips;
  }
  if (ok) *us = bench_median(v, o->reps);
  free(v);
  return ok;
}

/* A first launch makes cujit's context current; the floor is then opened in that context. */
static int floor_for(cujit_kernel *k, cujit_device *dev, const char *name, cujit_buffer *buf,
                     const cujit_arg *args, size_t nargs, raw_floor *raw) {
  cujit_launch_config cfg = config(1, 32);
  return check(cujit_launch(k, &cfg, args, nargs), "cujit_launch") &&
         check(cujit_device_synchronize(dev), "synchronize") &&
         raw_floor_open(raw, k, name, buf, (int)nargs);
}

static void launch_rows(const bench_opts *o, const char *variant, int have, cujit_kernel *k,
                        cujit_device *dev, const char *name, cujit_buffer *buf,
                        const cujit_arg *args, size_t nargs) {
  raw_floor raw;
  memset(&raw, 0, sizeof raw);
  double us[2];
  int with_floor = have && floor_for(k, dev, name, buf, args, nargs, &raw);
  char floor_why[sizeof why]; /* why the floor is missing: its own failure, or the kernel's */
  snprintf(floor_why, sizeof floor_why, "%s", why);
  int ok = have && time_launches(o, k, dev, args, nargs, with_floor ? &raw : NULL, us);
  if (ok)
    bench_row("launch", SYS, variant, (double)o->launches, us[0], "us");
  else
    bench_missing("launch", SYS, variant, (double)o->launches, why);
  if (ok && with_floor)
    bench_row("launch", SYS_FLOOR, variant, (double)o->launches, us[1], "us");
  else
    bench_missing("launch", SYS_FLOOR, variant, (double)o->launches, with_floor ? why : floor_why);
  if (raw.lib) bench_cu.cuLibraryUnload(raw.lib);
}

static void case_launch(const bench_opts *o, cujit_device *dev, cujit_buffer *buf) {
  static const int counts[] = {1, 4, 12};
  for (int c = 0; c < 3; c++) {
    char variant[16], name[16];
    snprintf(variant, sizeof variant, "args%d", counts[c]);
    snprintf(name, sizeof name, "empty%d", counts[c]);
    cujit_kernel *k = NULL;
    cujit_arg args[12];
    size_t nargs = pack(args, buf, counts[c]);
    double us;
    int have = kernel(o, "empty.cu", name, &k);
    if (bench_wants(o, "launch")) launch_rows(o, variant, have, k, dev, name, buf, args, nargs);
    if (counts[c] == 4 && bench_wants(o, "roundtrip")) {
      if (have && time_roundtrips(o, k, dev, args, nargs, &us))
        bench_row("roundtrip", SYS, variant, (double)o->roundtrips, us, "us");
      else
        bench_missing("roundtrip", SYS, variant, (double)o->roundtrips, why);
    }
    cujit_kernel_free(k);
  }
}

/* --- the graph case: graphs of empty kernels, captured by cujit, against the raw floor -------- */

typedef struct graph_pair {
  cujit_graph *graph;
  cujit_stream *stream;
  CUgraphExec floor; /* the same launches captured by the driver alone, on floor_stream */
  CUstream floor_stream;
} graph_pair;

static int cujit_replay(void *ctx) {
  graph_pair *p = ctx;
  return cujit_graph_launch(p->graph, p->stream) == CUJIT_OK;
}

static int floor_replay(void *ctx) {
  graph_pair *p = ctx;
  return bench_cu.cuGraphLaunch(p->floor, p->floor_stream) == CUDA_SUCCESS;
}

static int drain_pair(void *ctx) {
  graph_pair *p = ctx;
  return check(cujit_stream_synchronize(p->stream), "cujit_stream_synchronize") &&
         bench_cu_check(bench_cu.cuStreamSynchronize(p->floor_stream), "cuStreamSynchronize", why,
                        sizeof why);
}

/* cujit's graph of n launches; *capture_us and *instantiate_us what each took. */
static int cujit_graph_of(cujit_kernel *k, const cujit_arg *args, int n, graph_pair *p,
                          double *capture_us, double *instantiate_us) {
  cujit_launch_config cfg = config(1, 32);
  cfg.stream = p->stream;
  double t0 = bench_now_us();
  int began = check(cujit_capture_begin(p->stream, CUJIT_CAPTURE_RELAXED), "cujit_capture_begin");
  int ok = began;
  for (int i = 0; ok && i < n; i++) ok = check(cujit_launch(k, &cfg, args, 4), "cujit_launch");
  if (began)
    ok = check(cujit_capture_end(p->stream, ok ? &p->graph : NULL), "cujit_capture_end") && ok;
  double t1 = bench_now_us();
  ok = ok && check(cujit_graph_instantiate(p->graph), "cujit_graph_instantiate");
  *capture_us = t1 - t0, *instantiate_us = bench_now_us() - t1;
  return ok;
}

static void case_graph(const bench_opts *o, cujit_device *dev, cujit_buffer *buf) {
  cujit_kernel *k = NULL;
  cujit_arg args[4];
  raw_floor raw;
  graph_pair p;
  memset(&raw, 0, sizeof raw);
  memset(&p, 0, sizeof p);
  pack(args, buf, 4);
  int ok = kernel(o, "empty.cu", "empty4", &k) && floor_for(k, dev, "empty4", buf, args, 4, &raw) &&
           check(cujit_stream_create(engine, &p.stream), "cujit_stream_create") &&
           bench_cu_check(bench_cu.cuStreamCreate(&p.floor_stream, CU_STREAM_NON_BLOCKING),
                          "cuStreamCreate", why, sizeof why);
  for (int i = 0; ok && i < bench_graph_count(o); i++) {
    double capture[2], instantiate[2], us[2];
    int n = bench_graph_sizes[i];
    ok = cujit_graph_of(k, args, n, &p, &capture[0], &instantiate[0]) &&
         bench_raw_graph(raw.fn, raw.args.params, n, p.floor_stream, &p.floor, &capture[1],
                         &instantiate[1], why, sizeof why) &&
         bench_time_replays(o, n, cujit_replay, floor_replay, drain_pair, &p, us);
    if (ok) bench_graph_rows(SYS, i, us[0], capture[0], instantiate[0]);
    if (ok) bench_graph_rows(SYS_FLOOR, i, us[1], capture[1], instantiate[1]);
    cujit_graph_free(p.graph);
    if (p.floor) bench_cu.cuGraphExecDestroy(p.floor);
    p.graph = NULL, p.floor = NULL;
  }
  if (!ok) bench_graph_missing(o, SYS, why), bench_graph_missing(o, SYS_FLOOR, why);
  if (p.floor_stream) bench_cu.cuStreamDestroy(p.floor_stream);
  cujit_stream_free(p.stream);
  if (raw.lib) bench_cu.cuLibraryUnload(raw.lib);
  cujit_kernel_free(k);
}

/* --- cases 3 and 4: source (or cache) to first launch finished, in a fresh process ------------ */

static void case_first_launch(const bench_opts *o, const char *bcase, cujit_device *dev,
                              cujit_buffer *buf) {
  int n = 1 << 20, want_cached = !strcmp(bcase, "warm");
  char *src = bench_read_kernel(o, "vadd.cu", why, sizeof why);
  cujit_program *prog = NULL;
  cujit_kernel *k = NULL;
  cujit_launch_config cfg = config((unsigned)(n / 256), 256);
  cujit_arg args[] = {CUJIT_ARG_BUF(buf), CUJIT_ARG_BUF(buf), CUJIT_ARG_BUF(buf), CUJIT_ARG_I(n)};
  /* cold: NVRTC's in-memory cache off where it has the option (12.9+), as NVRTC alone's row */
  const char *no_cache[] = {"-no-cache"};
  cujit_compile_options co = CUJIT_COMPILE_OPTIONS_INIT;
  int v = 0;
  if (!want_cached && cujit_nvrtc_version(engine, &v) == CUJIT_OK && v >= 12090)
    co.extra_flags = no_cache, co.extra_flag_count = 1;
  double t0 = bench_now_us();
  int ok = src && check(cujit_program_compile(engine, src, "vadd.cu", &co, &prog), "compile") &&
           check(cujit_program_kernel(prog, "vadd", &k), "vadd") &&
           check(cujit_launch(k, &cfg, args, 4), "cujit_launch") &&
           check(cujit_device_synchronize(dev), "synchronize");
  double ms = (bench_now_us() - t0) / 1e3;
  if (ok && cujit_program_from_cache(prog) != want_cached) {
    snprintf(why, sizeof why, "%s",
             want_cached ? "the cache missed: was it warmed first?"
                         : "the cache hit: CUJIT_CACHE_DIR was not empty");
    ok = 0;
  }
  if (ok)
    bench_row(bcase, SYS, "vadd", n, ms, "ms");
  else
    bench_missing(bcase, SYS, "vadd", n, why);
  cujit_kernel_free(k);
  cujit_program_free(prog);
  free(src);
}

/* --- the device library: the sum (case 6) and the elementwise variants of case 5 -------------- */

/* Host wall time of a sum that ends with the total on the host, as every system is timed. */
static void case_sum(const bench_opts *o) {
  size_t n = (size_t)1 << o->sum_log2;
  cujit_buffer *x = NULL;
  cujit_scalar total = CUJIT_SCALAR_INIT;
  int reps = o->reps * 3, ok = 1;
  double *v = calloc((size_t)reps, sizeof *v);
  float *ones = v ? malloc(n * sizeof *ones) : NULL;
  for (size_t i = 0; ones && i < n; i++) ones[i] = 1.0f;
  ok = ones && check(cujit_buffer_alloc(engine, n * 4, CUJIT_F32, &x), "alloc") &&
       check(cujit_memcpy_htod(x, 0, ones, n * 4, NULL), "copy to device") &&
       check(cujit_reduce(x, CUJIT_REDUCE_SUM, n, &total, NULL), "cujit_reduce"); /* warm-up */
  for (int r = 0; ok && r < reps; r++) {
    double t0 = bench_now_us();
    ok = check(cujit_reduce(x, CUJIT_REDUCE_SUM, n, &total, NULL), "cujit_reduce");
    v[r] = (bench_now_us() - t0) / 1e3;
  }
  double got = cujit_scalar_to_double(&total);
  if (ok && got != (double)n) {
    snprintf(why, sizeof why, "wrong sum %.17g of %zu ones", got, n);
    ok = 0;
  }
  if (ok)
    bench_row("sum", SYS, "sum", (double)n, 4.0 * (double)n / (bench_median(v, reps) * 1e-3) / 1e9,
              "GB/s");
  else
    bench_missing("sum", SYS, "sum", (double)n, why);
  cujit_buffer_free(x);
  free(ones), free(v);
}

/* cujit_gemm (case gemm): square n x n x n products, f32, f16 and bf16 inputs into f32 (f16 and
** bf16: the tensor-core path where the device has it; f16_simt: CUJIT_GEMM=simt, the path every
** device has), on device time between two events; the median of the repetitions after one
** warm-up (which compiles); the product checked after the last (gemm_result_ok), else missing. */
static const char *const gemm_variants[] = {"f32", "f16", "bf16", "f16_simt"};
static const cujit_dtype gemm_inputs[] = {CUJIT_F32, CUJIT_F16, CUJIT_BF16, CUJIT_F16};

static int gemm_time(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c, int n, cujit_event *ev[2],
                     double *ms) {
  cujit_gemm_options opts = CUJIT_GEMM_OPTIONS_INIT;
  opts.m = opts.n = opts.k = n;
  float f = 0;
  int ok = check(cujit_event_record(ev[0], NULL), "event") &&
           check(cujit_gemm(a, b, c, &opts, NULL), "cujit_gemm") &&
           check(cujit_event_record(ev[1], NULL), "event") &&
           check(cujit_event_synchronize(ev[1]), "event") &&
           check(cujit_event_elapsed(ev[0], ev[1], &f), "elapsed");
  *ms = f;
  return ok;
}

/* The value of each element of a buffer of `dtype` whose bytes are all 0x3c: f32 0x3c3c3c3c,
** f16 0x3c3c (1 + 60/1024), bf16 0x3c3c (f32 0x3c3c0000). */
static double byte_3c_value(cujit_dtype dtype) {
  uint32_t u = dtype == CUJIT_F32 ? 0x3c3c3c3cu : 0x3c3c0000u;
  float f;
  memcpy(&f, &u, 4);
  return dtype == CUJIT_F16 ? 1.0 + 60.0 / 1024 : (double)f;
}

/* C's first, a middle and last elements against n v^2 (every product the same): a kernel that
** skipped work or wrote its tiles elsewhere is off by whole terms, not by rounding. */
static int gemm_result_ok(cujit_buffer *c, int n, cujit_dtype in) {
  double v = byte_3c_value(in), want = (double)n * v * v;
  size_t at[3] = {0, (size_t)n * (size_t)n / 2 + (size_t)n / 3, (size_t)n * (size_t)n - 1};
  for (int i = 0; i < 3; i++) {
    float got = 0;
    if (!check(cujit_memcpy_dtoh(&got, c, at[i] * 4, 4, NULL), "download")) return 0;
    if (!(fabs(got - want) <= 1e-3 * want)) {
      snprintf(why, sizeof why, "wrong product: C[%zu] is %g, want %g", at[i], got, want);
      return 0;
    }
  }
  return 1;
}

static void case_gemm(const bench_opts *o) {
  int n = o->short_mode ? 256 : 8192, reps = o->reps * 3;
  double *v = calloc((size_t)reps, sizeof *v);
  cujit_event *ev[2] = {NULL, NULL};
  int ok = v && check(cujit_event_create(engine, &ev[0]), "event") &&
           check(cujit_event_create(engine, &ev[1]), "event");
  for (int w = 0; w < 4; w++) {
    cujit_dtype in = gemm_inputs[w];
    if (w == 3) setenv("CUJIT_GEMM", "simt", 1);
    size_t elems = (size_t)n * (size_t)n;
    cujit_buffer *a = NULL, *b = NULL, *c = NULL;
    int good = ok &&
               check(cujit_buffer_alloc(engine, elems * cujit_dtype_size(in), in, &a), "alloc") &&
               check(cujit_buffer_alloc(engine, elems * cujit_dtype_size(in), in, &b), "alloc") &&
               check(cujit_buffer_alloc(engine, elems * 4, CUJIT_F32, &c), "alloc") &&
               check(cujit_memset(a, 0, 0x3c, elems * cujit_dtype_size(in), NULL), "memset") &&
               check(cujit_memset(b, 0, 0x3c, elems * cujit_dtype_size(in), NULL), "memset") &&
               gemm_time(a, b, c, n, ev, &v[0]);
    for (int r = 0; good && r < reps; r++) good = gemm_time(a, b, c, n, ev, &v[r]);
    good = good && gemm_result_ok(c, n, in);
    if (good)
      bench_row("gemm", SYS, gemm_variants[w], n,
                2.0 * n * (double)n * n / (bench_median(v, reps) * 1e-3) / 1e12, "TFLOP/s");
    else
      bench_missing("gemm", SYS, gemm_variants[w], n, why);
    cujit_buffer_free(a), cujit_buffer_free(b), cujit_buffer_free(c);
  }
  unsetenv("CUJIT_GEMM");
  cujit_event_free(ev[0]), cujit_event_free(ev[1]);
  free(v);
}

/* The library's elementwise kernels for the same two operations, launched as the library sizes
** them (a grid-stride loop); the variants are named vadd_ew and saxpy_ew. */
static int elementwise_define(cujit_kernel **k) {
  return check(cujit_elementwise_define(engine, "float x, float y -> float z", "z = x + y",
                                        "vadd_ew", NULL, &k[0]),
               "vadd_ew") &&
         check(cujit_elementwise_define(engine, "scalar float a, float x, float y -> float z",
                                        "z = a * x + y", "saxpy_ew", NULL, &k[1]),
               "saxpy_ew");
}

static int elementwise_once(cujit_kernel **k, int what, cujit_buffer *a, cujit_buffer *b,
                            cujit_buffer *c, size_t n) {
  cujit_arg add[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(b), CUJIT_ARG_BUF(c)};
  cujit_arg ax[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(c), CUJIT_ARG_BUF(c)};
  return what == 0 ? check(cujit_elementwise_launch(k[0], n, NULL, add, 3), "vadd_ew")
                   : check(cujit_elementwise_launch(k[1], n, NULL, ax, 4), "saxpy_ew");
}

/* --- case 5 of the shared kernels, timed by events ------------------------------------------ */

typedef struct sweep {
  cujit_buffer *a, *b, *c;
  cujit_kernel *k[6]; /* vadd saxpy vadd4 saxpy4, and the library's vadd_ew saxpy_ew */
  cujit_event *start, *stop;
} sweep;

enum { VARIANTS = 6 };
static int launch_elementwise(sweep *s, int what, int n) {
  return elementwise_once(&s->k[4], what, s->a, s->b, s->c, (size_t)n);
}
static const char *const bw_variants[] = {"vadd",   "saxpy",   "vadd4",
                                          "saxpy4", "vadd_ew", "saxpy_ew"};

static int run_once(sweep *s, int what, int n, double *ms) {
  int n4 = n / 4, per = what >= 2 ? n4 : n;
  cujit_launch_config cfg = config((unsigned)((per + 255) / 256), 256);
  cujit_arg add[] = {CUJIT_ARG_BUF(s->a), CUJIT_ARG_BUF(s->b), CUJIT_ARG_BUF(s->c),
                     CUJIT_ARG_I(per)};
  cujit_arg ax[] = {CUJIT_ARG_F(2.0), CUJIT_ARG_BUF(s->a), CUJIT_ARG_BUF(s->c), CUJIT_ARG_I(per)};
  float f = 0;
  int ok = check(cujit_event_record(s->start, NULL), "event") &&
           (what >= 4 ? launch_elementwise(s, what - 4, n)
                      : check(cujit_launch(s->k[what], &cfg, what % 2 ? ax : add, 4), "launch")) &&
           check(cujit_event_record(s->stop, NULL), "event") &&
           check(cujit_event_synchronize(s->stop), "event") &&
           check(cujit_event_elapsed(s->start, s->stop, &f), "elapsed");
  *ms = f;
  return ok;
}

static int run_median(const bench_opts *o, sweep *s, int what, int n, double *ms) {
  double v[1000];
  int reps = o->reps * 3 > 1000 ? 1000 : o->reps * 3;
  if (!run_once(s, what, n, &v[0])) return 0;
  for (int r = 0; r < reps; r++)
    if (!run_once(s, what, n, &v[r])) return 0;
  *ms = bench_median(v, reps);
  return 1;
}

static int fill(cujit_buffer *b, float value, size_t n) {
  float *host = malloc(n * sizeof *host);
  if (!host) return snprintf(why, sizeof why, "out of host memory"), 0;
  for (size_t i = 0; i < n; i++) host[i] = value;
  int ok = check(cujit_memcpy_htod(b, 0, host, n * sizeof *host, NULL), "copy to device");
  free(host);
  return ok;
}

static int sweep_open(const bench_opts *o, sweep *s, size_t n) {
  static const char *const files[] = {"vadd.cu", "saxpy.cu", "vec4.cu", "vec4.cu"};
  static const char *const names[] = {"vadd", "saxpy", "vadd4", "saxpy4"};
  for (int w = 0; w < 4; w++)
    if (!kernel(o, files[w], names[w], &s->k[w])) return 0;
  if (!elementwise_define(&s->k[4])) return 0;
  return check(cujit_buffer_alloc(engine, n * 4, CUJIT_F32, &s->a), "alloc") &&
         check(cujit_buffer_alloc(engine, n * 4, CUJIT_F32, &s->b), "alloc") &&
         check(cujit_buffer_alloc(engine, n * 4, CUJIT_F32, &s->c), "alloc") &&
         fill(s->a, 1.0f, n) && fill(s->b, 2.0f, n) &&
         check(cujit_event_create(engine, &s->start), "event") &&
         check(cujit_event_create(engine, &s->stop), "event");
}

static void sweep_close(sweep *s) {
  for (int w = 0; w < 6; w++) cujit_kernel_free(s->k[w]);
  cujit_buffer_free(s->a), cujit_buffer_free(s->b), cujit_buffer_free(s->c);
  cujit_event_free(s->start), cujit_event_free(s->stop);
}

static int vadd_checks(sweep *s, int n) {
  float ends[2] = {0, 0};
  if (!check(cujit_memcpy_dtoh(&ends[0], s->c, 0, 4, NULL), "copy to host") ||
      !check(cujit_memcpy_dtoh(&ends[1], s->c, (size_t)(n - 1) * 4, 4, NULL), "copy to host"))
    return 0;
  if (ends[0] == 3.0f && ends[1] == 3.0f) return 1;
  snprintf(why, sizeof why, "vadd gave wrong results (%g, %g instead of 3)", ends[0], ends[1]);
  return 0;
}

static void case_bandwidth(const bench_opts *o) {
  sweep s;
  memset(&s, 0, sizeof s);
  int ok = sweep_open(o, &s, (size_t)1 << o->max_log2);
  for (int k = o->min_log2; k <= o->max_log2; k += o->step_log2) {
    int n = 1 << k;
    for (int w = 0; w < VARIANTS; w++) {
      double ms = 0;
      int good = ok && check(cujit_memset(s.c, 0, 0xff, (size_t)n * 4, NULL), "poison") &&
                 run_median(o, &s, w, n, &ms) && (w % 2 || vadd_checks(&s, n));
      if (good)
        bench_row("bandwidth", SYS, bw_variants[w], n, 12.0 * n / (ms * 1e-3) / 1e9, "GB/s");
      else
        bench_missing("bandwidth", SYS, bw_variants[w], n, why);
    }
  }
  sweep_close(&s);
}

/* --- case 7: Monte Carlo, end to end ---------------------------------------------------------- */

static const double mc_s0 = 100, mc_strike = 100, mc_rate = 0.05, mc_sigma = 0.2, mc_years = 1;

/* The Black-Scholes price the estimate must agree with, so a fast wrong kernel cannot pass. */
static double black_scholes_call(void) {
  double sq = mc_sigma * sqrt(mc_years);
  double d1 = (log(mc_s0 / mc_strike) + (mc_rate + 0.5 * mc_sigma * mc_sigma) * mc_years) / sq;
  double d2 = d1 - sq;
  return mc_s0 * 0.5 * erfc(-d1 / sqrt(2)) -
         mc_strike * exp(-mc_rate * mc_years) * 0.5 * erfc(-d2 / sqrt(2));
}

static int mc_once(cujit_kernel *k, cujit_buffer *sum, long long paths, unsigned long long seed,
                   double *price) {
  float drift = (float)((mc_rate - 0.5 * mc_sigma * mc_sigma) * mc_years);
  float vol = (float)(mc_sigma * sqrt(mc_years));
  cujit_launch_config cfg = config((unsigned)((paths / 4 + 255) / 256), 256);
  cujit_arg args[] = {CUJIT_ARG_BUF(sum), CUJIT_ARG_I(paths),     CUJIT_ARG_U(seed),
                      CUJIT_ARG_F(mc_s0), CUJIT_ARG_F(mc_strike), CUJIT_ARG_F(drift),
                      CUJIT_ARG_F(vol)};
  double total = 0;
  int ok = check(cujit_memset(sum, 0, 0, 8, NULL), "memset") &&
           check(cujit_launch(k, &cfg, args, 7), "cujit_launch") &&
           check(cujit_memcpy_dtoh(&total, sum, 0, 8, NULL), "copy to host");
  *price = exp(-mc_rate * mc_years) * total / (double)paths;
  return ok;
}

static void case_montecarlo(const bench_opts *o) {
  long long paths = 1ll << o->mc_log2;
  cujit_kernel *k = NULL;
  cujit_buffer *sum = NULL;
  double price = 0, *v = calloc((size_t)o->reps, sizeof *v);
  int ok = v && kernel(o, "montecarlo_cujit.cu", "mc_call", &k) &&
           check(cujit_buffer_alloc(engine, 8, CUJIT_F64, &sum), "alloc") &&
           mc_once(k, sum, 1024, 1, &price); /* warm-up: loads the kernel */
  for (int r = 0; ok && r < o->reps; r++) {
    double t0 = bench_now_us();
    ok = mc_once(k, sum, paths, 1234 + (unsigned long long)r, &price);
    v[r] = (bench_now_us() - t0) / 1e3;
  }
  double want = black_scholes_call(), err = fabs(price - want);
  if (ok && paths >= 1 << 20 && err > 0.05) {
    snprintf(why, sizeof why, "wrong price %.4f (Black-Scholes %.4f)", price, want);
    ok = 0;
  }
  if (ok)
    bench_row("montecarlo", SYS, "e2e", (double)paths, bench_median(v, o->reps), "ms");
  else
    bench_missing("montecarlo", SYS, "e2e", (double)paths, why);
  cujit_kernel_free(k);
  cujit_buffer_free(sum);
  free(v);
}

/* --- without a device ------------------------------------------------------------------------- */

/* CI: every shared kernel must at least compile through cujit for the H200's arch. */
static void compile_checks(const bench_opts *o) {
  static const char *const files[] = {"empty.cu", "vadd.cu", "saxpy.cu", "vec4.cu",
                                      "montecarlo_cujit.cu"};
  cujit_compile_options opts = CUJIT_COMPILE_OPTIONS_INIT;
  opts.arch = "sm_90";
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    cujit_program *prog = NULL;
    double t0 = bench_now_us();
    if (compile(o, files[f], &opts, &prog))
      bench_row("compile_check", SYS, files[f], 0, (bench_now_us() - t0) / 1e3, "ms");
    else
      bench_missing("compile_check", SYS, files[f], 0, why);
    cujit_program_free(prog);
  }
}

static void all_missing(const bench_opts *o) {
  static const char *const launch[] = {"args1", "args4", "args12"};
  for (int c = 0; c < 3 && bench_wants(o, "launch"); c++) {
    bench_missing("launch", SYS, launch[c], (double)o->launches, why);
    bench_missing("launch", SYS_FLOOR, launch[c], (double)o->launches, why);
  }
  if (bench_wants(o, "roundtrip")) bench_missing("roundtrip", SYS, "args4", 0, why);
  if (bench_wants(o, "cold")) bench_missing("cold", SYS, "vadd", 1 << 20, why);
  if (bench_wants(o, "warm")) bench_missing("warm", SYS, "vadd", 1 << 20, why);
  for (int k = o->min_log2; k <= o->max_log2 && bench_wants(o, "bandwidth"); k += o->step_log2)
    for (int w = 0; w < VARIANTS; w++) bench_missing("bandwidth", SYS, bw_variants[w], 1 << k, why);
  if (bench_wants(o, "sum")) bench_missing("sum", SYS, "sum", 1 << o->sum_log2, why);
  for (int w = 0; w < 4 && bench_wants(o, "gemm"); w++)
    bench_missing("gemm", SYS, gemm_variants[w], o->short_mode ? 256 : 8192, why);
  if (bench_wants(o, "montecarlo"))
    bench_missing("montecarlo", SYS, "e2e", (double)(1ll << o->mc_log2), why);
  if (bench_wants(o, "graph"))
    bench_graph_missing(o, SYS, why), bench_graph_missing(o, SYS_FLOOR, why);
}

static void info(void) {
  char text[64];
  int v = 0;
  bench_info(SYS, "cujit", cujit_version());
  if (cujit_nvrtc_version(engine, &v) == CUJIT_OK) {
    snprintf(text, sizeof text, "%d.%d", v / 1000, v % 1000 / 10);
    bench_info(SYS, "nvrtc", text);
  }
}

int main(int argc, char **argv) {
  bench_opts o;
  if (!bench_parse(&o, argc, argv, "cujit_bench_c")) return 2;
  cujit_status st = cujit_open(&engine);
  if (st != CUJIT_OK) {
    snprintf(why, sizeof why, "cujit_open failed: %s", cujit_status_string(st));
    all_missing(&o);
    return 0;
  }
  cujit_device *dev = NULL;
  cujit_buffer *small = NULL;
  if (!check(cujit_current_device(engine, &dev), "no device") ||
      !check(cujit_buffer_alloc(engine, 1 << 22, CUJIT_F32, &small), "alloc")) {
    fprintf(stderr, "cujit_bench_c: %s; every cujit C figure is reported missing\n", why);
    all_missing(&o);
    if (o.short_mode && bench_wants(&o, "info")) compile_checks(&o);
  } else {
    if (bench_wants(&o, "info")) info();
    if (bench_wants(&o, "launch") || bench_wants(&o, "roundtrip")) case_launch(&o, dev, small);
    if (bench_wants(&o, "cold")) case_first_launch(&o, "cold", dev, small);
    if (bench_wants(&o, "warm")) case_first_launch(&o, "warm", dev, small);
    if (bench_wants(&o, "bandwidth")) case_bandwidth(&o);
    if (bench_wants(&o, "sum")) case_sum(&o);
    if (bench_wants(&o, "gemm")) case_gemm(&o);
    if (bench_wants(&o, "montecarlo")) case_montecarlo(&o);
    if (bench_wants(&o, "graph")) case_graph(&o, dev, small);
  }
  cujit_buffer_free(small);
  cujit_close(engine);
  return 0;
}
