/*
** latency.c -- the latency cases of issue 15, cujit's C API beside the raw Driver API in one
** process (the same context, the same CUBIN, measured in turn):
**   latency: launch one spin kernel of 0, 5, 20, 50, 200, 1000 and 10000 us and wait for it, per
**            kind of wait: `rtL_stream` (on a stream: cuStreamSynchronize /
*cujit_stream_synchronize),
**            `rtL_device` (default stream: cuCtxSynchronize / cujit_device_synchronize),
*`rtL_event`
**            (an event recorded after it: cuEventSynchronize / cujit_event_synchronize); median us
**            per round trip. `cpu_wait1s`: the CPU time (user + system) of the process during a
**            wait for a one-second kernel, % of the wall time.
**   small:   allocate + free 4 KiB, zeros(1024), sum of 1 K and 1 M floats to a host number, copy
**            of 1 K floats to and from the host, an elementwise kernel on 1 K floats and a
**            synchronize; median us per operation.
** Rows: system raw (the driver) and cujit_c. Without a GPU every figure is a "missing" row.
*/
#include "common.h"

#include "cujit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define SYS "cujit_c"

static cujit_engine *engine;
static char why[1024];

static const int lengths_us[] = {0, 5, 20, 50, 200, 1000, 10000};
enum { NLENGTHS = sizeof lengths_us / sizeof *lengths_us, MAX_SAMPLES = 2000 };

static int check(cujit_status st, const char *what) {
  if (st == CUJIT_OK) return 1;
  snprintf(why, sizeof why, "%s: %s (%s)", what, cujit_errmsg(engine), cujit_status_string(st));
  return 0;
}

static int cu(CUresult rc, const char *what) {
  return bench_cu_check(rc, what, why, sizeof why);
}

/* Everything both systems use: cujit's kernels and the driver's handles for the same CUBIN. */
typedef struct setup {
  cujit_device *dev;
  cujit_kernel *spin, *twice;
  cujit_stream *stream;
  cujit_event *event;
  CUlibrary lib;
  CUfunction raw_spin, raw_twice;
  CUstream raw_stream;
  CUevent raw_event;
} setup;

static int open_setup(const bench_opts *o, setup *s) {
  memset(s, 0, sizeof *s);
  char *src = bench_read_kernel(o, "spin.cu", why, sizeof why);
  cujit_program *prog = NULL;
  int ok = src && check(cujit_current_device(engine, &s->dev), "no device") &&
           check(cujit_program_compile(engine, src, "spin.cu", NULL, &prog), "spin.cu") &&
           check(cujit_program_kernel(prog, "spin", &s->spin), "spin") &&
           check(cujit_program_kernel(prog, "twice", &s->twice), "twice") &&
           check(cujit_stream_create(engine, &s->stream), "stream") &&
           check(cujit_event_create(engine, &s->event), "event");
  free(src);
  const void *image = ok ? cujit_program_cubin(prog, NULL) : NULL;
  if (ok && !image) image = cujit_program_ptx(prog, NULL);
  ok = ok && bench_driver_open(why, sizeof why) &&
       check(cujit_device_synchronize(s->dev), "sync") &&
       bench_cu_function(image, "spin", &s->lib, &s->raw_spin, why, sizeof why);
  CUkernel k;
  ok = ok && cu(bench_cu.cuLibraryGetKernel(&k, s->lib, "twice"), "cuLibraryGetKernel") &&
       cu(bench_cu.cuKernelGetFunction(&s->raw_twice, k), "cuKernelGetFunction") &&
       cu(bench_cu.cuStreamCreate(&s->raw_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate") &&
       /* the kind of event cujit_event_create makes (and CuPy's Event()): one that can time, whose
       ** record costs the driver more than a CU_EVENT_DISABLE_TIMING one's */
       cu(bench_cu.cuEventCreate(&s->raw_event, CU_EVENT_DEFAULT), "cuEventCreate");
  cujit_program_free(prog);
  return ok;
}

/* --- latency ---------------------------------------------------------------------------------- */

enum { WAIT_STREAM, WAIT_DEVICE, WAIT_EVENT };
static const char *const wait_names[] = {"stream", "device", "event"};

/* One launch of spin(ns) and its wait, by the driver itself. */
static int raw_roundtrip(setup *s, int kind, unsigned long long ns) {
  void *params[] = {&ns};
  CUstream stream = kind == WAIT_STREAM ? s->raw_stream : NULL;
  if (bench_cu.cuLaunchKernel(s->raw_spin, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL)) return 0;
  if (kind == WAIT_STREAM) return bench_cu.cuStreamSynchronize(stream) == CUDA_SUCCESS;
  if (kind == WAIT_DEVICE) return bench_cu.cuCtxSynchronize() == CUDA_SUCCESS;
  return bench_cu.cuEventRecord(s->raw_event, NULL) == CUDA_SUCCESS &&
         bench_cu.cuEventSynchronize(s->raw_event) == CUDA_SUCCESS;
}

static int cujit_roundtrip(setup *s, int kind, unsigned long long ns) {
  cujit_launch_config c = {
      .size = sizeof c, .grid = {1, 1, 1}, .block = {1, 1, 1}, .shared_bytes = 0, .stream = NULL};
  if (kind == WAIT_STREAM) c.stream = s->stream;
  cujit_arg arg = CUJIT_ARG_U(ns);
  if (!check(cujit_launch(s->spin, &c, &arg, 1), "cujit_launch")) return 0;
  if (kind == WAIT_STREAM) return check(cujit_stream_synchronize(s->stream), "stream wait");
  if (kind == WAIT_DEVICE) return check(cujit_device_synchronize(s->dev), "device wait");
  return check(cujit_event_record(s->event, NULL), "event record") &&
         check(cujit_event_synchronize(s->event), "event wait");
}

/* The median of `count` round trips (after 3 untimed ones), us; the two systems alternate in
** blocks so that both see the same state of the machine. */
static void time_length(const bench_opts *o, setup *s, int kind, int length_us) {
  static double v[2][MAX_SAMPLES];
  unsigned long long ns = (unsigned long long)length_us * 1000;
  long budget = length_us > 0 ? 400000 / length_us : MAX_SAMPLES; /* ~0.4 s per figure */
  long count = o->roundtrips < budget ? o->roundtrips : budget;
  if (count > MAX_SAMPLES) count = MAX_SAMPLES;
  if (count < 5) count = o->short_mode ? 1 : 5;
  int ok[2] = {1, 1};
  for (int w = 0; w < 3; w++)
    ok[0] &= raw_roundtrip(s, kind, ns), ok[1] &= cujit_roundtrip(s, kind, ns);
  for (long i = 0; i < count; i++)
    for (int sys = 0; sys < 2; sys++) {
      int which = (int)(i & 1) ^ sys; /* alternate which goes first */
      double t0 = bench_now_us();
      ok[which] &= which ? cujit_roundtrip(s, kind, ns) : raw_roundtrip(s, kind, ns);
      v[which][i] = bench_now_us() - t0;
    }
  char variant[32];
  snprintf(variant, sizeof variant, "rt%d_%s", length_us, wait_names[kind]);
  for (int sys = 0; sys < 2; sys++) {
    const char *name = sys ? SYS : "raw";
    if (ok[sys])
      bench_row("latency", name, variant, (double)count, bench_median(v[sys], (int)count), "us");
    else
      bench_missing("latency", name, variant, (double)count, sys ? why : "a raw call failed");
  }
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* CPU % of the process while it waits for a kernel of one second (10 ms in --short). */
static void cpu_during_wait(const bench_opts *o, setup *s) {
  int length_us = o->short_mode ? 10000 : 1000000;
  for (int sys = 0; sys < 2; sys++) {
    double c0 = cpu_seconds(), t0 = bench_now_us();
    int ok = sys ? cujit_roundtrip(s, WAIT_STREAM, (unsigned long long)length_us * 1000)
                 : raw_roundtrip(s, WAIT_STREAM, (unsigned long long)length_us * 1000);
    double cpu = (cpu_seconds() - c0) * 1e6, wall = bench_now_us() - t0;
    if (ok)
      bench_row("latency", sys ? SYS : "raw", "cpu_wait1s", 1, 100 * cpu / wall, "%");
    else
      bench_missing("latency", sys ? SYS : "raw", "cpu_wait1s", 1, why);
  }
}

static void case_latency(const bench_opts *o, setup *s) {
  for (int kind = 0; kind < 3; kind++)
    for (int l = 0; l < NLENGTHS; l++) time_length(o, s, kind, lengths_us[l]);
  cpu_during_wait(o, s);
}

/* --- small operations ------------------------------------------------------------------------- */

enum { N1K = 1024, N1M = 1 << 20 };

typedef struct small_state {
  setup *s;
  cujit_buffer *a1k, *a1m;
  CUdeviceptr raw1k;
  float host[N1K];
} small_state;

typedef int (*op_fn)(small_state *st);

static int cujit_alloc_free(small_state *st) {
  cujit_buffer *b;
  if (!check(cujit_buffer_alloc(engine, 4 * N1K, CUJIT_F32, &b), "alloc")) return 0;
  cujit_buffer_free(b);
  return 1;
}
static int cujit_zeros(small_state *st) {
  cujit_buffer *b;
  if (!check(cujit_buffer_alloc(engine, 4 * N1K, CUJIT_F32, &b), "alloc")) return 0;
  int ok = check(cujit_memset(b, 0, 0, 4 * N1K, NULL), "memset");
  cujit_buffer_free(b);
  return ok;
}
static int cujit_sum(cujit_buffer *b, size_t n) {
  cujit_scalar r = CUJIT_SCALAR_INIT;
  return check(cujit_reduce(b, CUJIT_REDUCE_SUM, n, &r, NULL), "reduce");
}
static int cujit_sum1k(small_state *st) {
  return cujit_sum(st->a1k, N1K);
}
static int cujit_sum1m(small_state *st) {
  return cujit_sum(st->a1m, N1M);
}
static int cujit_dtoh1k(small_state *st) {
  return check(cujit_memcpy_dtoh(st->host, st->a1k, 0, sizeof st->host, NULL), "dtoh");
}
static int cujit_htod1k(small_state *st) {
  return check(cujit_memcpy_htod(st->a1k, 0, st->host, sizeof st->host, NULL), "htod");
}
static int cujit_ew1k(small_state *st) {
  cujit_launch_config c = {.size = sizeof c,
                           .grid = {N1K / 256, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cujit_arg args[] = {CUJIT_ARG_BUF(st->a1k), CUJIT_ARG_I(N1K)};
  return check(cujit_launch(st->s->twice, &c, args, 2), "launch") &&
         check(cujit_device_synchronize(st->s->dev), "sync");
}

static int raw_alloc_free(small_state *st) {
  CUdeviceptr p;
  return cu(bench_cu.cuMemAlloc(&p, 4 * N1K), "cuMemAlloc") &&
         cu(bench_cu.cuMemFree(p), "cuMemFree");
}
static int raw_dtoh1k(small_state *st) {
  return cu(bench_cu.cuMemcpyDtoH(st->host, st->raw1k, sizeof st->host), "cuMemcpyDtoH");
}
static int raw_htod1k(small_state *st) {
  return cu(bench_cu.cuMemcpyHtoD(st->raw1k, st->host, sizeof st->host), "cuMemcpyHtoD");
}
static int raw_ew1k(small_state *st) {
  int n = N1K;
  void *params[] = {&st->raw1k, &n};
  return cu(bench_cu.cuLaunchKernel(st->s->raw_twice, N1K / 256, 1, 1, 256, 1, 1, 0, NULL, params,
                                    NULL),
            "cuLaunchKernel") &&
         cu(bench_cu.cuCtxSynchronize(), "cuCtxSynchronize");
}

static void time_op(const bench_opts *o, small_state *st, const char *system, const char *variant,
                    op_fn op) {
  static double v[MAX_SAMPLES];
  long count = o->roundtrips < MAX_SAMPLES ? o->roundtrips : MAX_SAMPLES;
  int ok = op(st) && op(st) && op(st); /* warm: kernels built, pool primed */
  for (long i = 0; ok && i < count; i++) {
    double t0 = bench_now_us();
    ok = op(st);
    v[i] = bench_now_us() - t0;
  }
  if (ok)
    bench_row("small", system, variant, (double)count, bench_median(v, (int)count), "us");
  else
    bench_missing("small", system, variant, (double)count, why);
}

static void case_small(const bench_opts *o, setup *s) {
  static small_state st;
  st.s = s;
  if (!check(cujit_buffer_alloc(engine, 4 * N1K, CUJIT_F32, &st.a1k), "alloc") ||
      !check(cujit_buffer_alloc(engine, 4 * (size_t)N1M, CUJIT_F32, &st.a1m), "alloc") ||
      !check(cujit_memset(st.a1m, 0, 0, 4 * (size_t)N1M, NULL), "memset") ||
      !cu(bench_cu.cuMemAlloc(&st.raw1k, 4 * N1K), "cuMemAlloc")) {
    bench_missing("small", SYS, "(all)", 0, why);
    return;
  }
  static const struct {
    const char *variant;
    op_fn cujit, raw;
  } ops[] = {
      {"alloc_free", cujit_alloc_free, raw_alloc_free},
      {"zeros", cujit_zeros, NULL},
      {"sum1k", cujit_sum1k, NULL},
      {"sum1m", cujit_sum1m, NULL},
      {"dtoh1k", cujit_dtoh1k, raw_dtoh1k},
      {"htod1k", cujit_htod1k, raw_htod1k},
      {"ew1k", cujit_ew1k, raw_ew1k},
  };
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    time_op(o, &st, SYS, ops[i].variant, ops[i].cujit);
    if (ops[i].raw) time_op(o, &st, "raw", ops[i].variant, ops[i].raw);
  }
  bench_cu.cuMemFree(st.raw1k);
  cujit_buffer_free(st.a1k);
  cujit_buffer_free(st.a1m);
}

/* --short without a GPU (CI): spin.cu still compiles for sm_90 through cujit. */
static void compile_check(const bench_opts *o) {
  cujit_compile_options opts = CUJIT_COMPILE_OPTIONS_INIT;
  opts.arch = "sm_90";
  char *src = bench_read_kernel(o, "spin.cu", why, sizeof why);
  cujit_program *prog = NULL;
  if (src && check(cujit_program_compile(engine, src, "spin.cu", &opts, &prog), "spin.cu"))
    bench_row("compile_check", SYS, "spin.cu", 0, 0, "ms");
  else
    bench_missing("compile_check", SYS, "spin.cu", 0, why);
  cujit_program_free(prog);
  free(src);
}

int main(int argc, char **argv) {
  bench_opts o;
  if (!bench_parse(&o, argc, argv, "cujit_bench_latency")) return 2;
  setup s;
  int opened = check(cujit_open(&engine), "cujit_open") && open_setup(&o, &s);
  if (!opened) {
    fprintf(stderr, "cujit_bench_latency: %s; every figure is reported missing\n", why);
    if (bench_wants(&o, "latency")) bench_missing("latency", SYS, "(all)", 0, why);
    if (bench_wants(&o, "latency")) bench_missing("latency", "raw", "(all)", 0, why);
    if (bench_wants(&o, "small")) bench_missing("small", SYS, "(all)", 0, why);
    if (o.short_mode && engine) compile_check(&o);
  } else {
    if (bench_wants(&o, "latency")) case_latency(&o, &s);
    if (bench_wants(&o, "small")) case_small(&o, &s);
  }
  cujit_close(engine);
  return 0;
}
