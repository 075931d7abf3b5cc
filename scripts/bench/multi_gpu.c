/*
** multi_gpu.c -- the two-GPU figures of issue 14, side by side in one run: a peer copy GPU 0 ->
** GPU 1 beside a device-to-device copy on GPU 0 (cujit_memcpy_dtod), and an all-reduce of f32
** over both GPUs through cujit (cujit_nccl_all_reduce) beside NCCL called directly from C, on the
** same buffers: this program opens libnccl.so.2 itself (CUJIT_NCCL or the library path) with its
** own communicators. Prints rows of results.csv (common.h); what cannot run is "missing".
**
**   cujit_bench_multi_gpu [--mib N] [--reps N]      (default 256 MiB, 20 repetitions)
**
** It refuses to use NCCL unless NCCL_NVLS_ENABLE=0 is in the environment (NVLink multicast stays
** off on the shared GPU machines; nothing here sets it).
*/
#include "common.h"
#include "cujit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's C API as nccl.h declares it (ncclComm_t is a pointer, enums are ints). */
typedef int (*nccl_init_all_fn)(void **comms, int ndev, const int *devlist);
typedef int (*nccl_destroy_fn)(void *comm);
typedef int (*nccl_group_fn)(void);
typedef int (*nccl_all_reduce_fn)(const void *send, void *recv, size_t count, int dtype, int op,
                                  void *comm, void *stream);
enum { NCCL_FLOAT32 = 7, NCCL_SUM = 0 };

typedef struct direct_nccl {
  void *handle;
  nccl_init_all_fn init_all;
  nccl_destroy_fn destroy;
  nccl_group_fn group_start, group_end;
  nccl_all_reduce_fn all_reduce;
} direct_nccl;

static int open_direct(direct_nccl *n, char *why, size_t len) {
  const char *path = getenv("CUJIT_NCCL");
  n->handle = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!n->handle) {
    snprintf(why, len, "no NCCL: %s", dlerror());
    return 0;
  }
  *(void **)&n->init_all = dlsym(n->handle, "ncclCommInitAll");
  *(void **)&n->destroy = dlsym(n->handle, "ncclCommDestroy");
  *(void **)&n->group_start = dlsym(n->handle, "ncclGroupStart");
  *(void **)&n->group_end = dlsym(n->handle, "ncclGroupEnd");
  *(void **)&n->all_reduce = dlsym(n->handle, "ncclAllReduce");
  if (n->init_all && n->destroy && n->group_start && n->group_end && n->all_reduce) return 1;
  snprintf(why, len, "libnccl.so.2 lacks an entry point this program calls");
  return 0;
}

static cujit_engine *engine;
static int reps = 20;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    if ((call) != CUJIT_OK) {                                                                      \
      fprintf(stderr, "multi_gpu: %s failed: %s\n", #call, cujit_errmsg(engine));                  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void sync_both(cujit_device *d0, cujit_device *d1) {
  CHECK(cujit_device_synchronize(d0));
  CHECK(cujit_device_synchronize(d1));
}

/* The median seconds of `reps` copies of `bytes` from src to dst (after one warm-up). */
static double time_copy(cujit_buffer *dst, cujit_buffer *src, size_t bytes, cujit_device *d0,
                        cujit_device *d1) {
  double t[256];
  CHECK(cujit_memcpy_dtod(dst, 0, src, 0, bytes, NULL));
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now_us();
    CHECK(cujit_memcpy_dtod(dst, 0, src, 0, bytes, NULL)); /* returns when done */
    t[r] = (bench_now_us() - t0) * 1e-6;
  }
  sync_both(d0, d1);
  return bench_median(t, reps);
}

static void copies(cujit_device *d0, cujit_device *d1, size_t bytes) {
  cujit_buffer *a0, *b0, *a1;
  CHECK(cujit_buffer_alloc_on(d0, bytes, CUJIT_F32, &a0));
  CHECK(cujit_buffer_alloc_on(d0, bytes, CUJIT_F32, &b0));
  CHECK(cujit_buffer_alloc_on(d1, bytes, CUJIT_F32, &a1));
  CHECK(cujit_memset(a0, 0, 1, bytes, NULL));
  double d2d = time_copy(b0, a0, bytes, d0, d1);
  /* Read + written bytes for the copy on one device, as docs/benchmarks.md counts it. */
  bench_row("multi_gpu", "cujit", "d2d copy on GPU 0 (read+write)", (double)bytes,
            2.0 * (double)bytes / d2d / 1e9, "GB/s");
  double peer = time_copy(a1, a0, bytes, d0, d1);
  bench_row("multi_gpu", "cujit", "peer copy GPU0->GPU1", (double)bytes, (double)bytes / peer / 1e9,
            "GB/s");
  if (cujit_device_enable_peer(d1, d0) == CUJIT_OK) {
    peer = time_copy(a1, a0, bytes, d0, d1);
    bench_row("multi_gpu", "cujit", "peer copy GPU0->GPU1, peer access on", (double)bytes,
              (double)bytes / peer / 1e9, "GB/s");
  } else {
    bench_missing("multi_gpu", "cujit", "peer copy GPU0->GPU1, peer access on", (double)bytes,
                  cujit_errmsg(engine));
  }
  cujit_buffer_free(a0);
  cujit_buffer_free(b0);
  cujit_buffer_free(a1);
}

/* Median seconds of one all-reduce over both GPUs, by `run` (cujit's or NCCL's). */
typedef void (*reduce_fn)(void *ctx);

static double time_reduce(reduce_fn run, void *ctx, cujit_device *d0, cujit_device *d1) {
  double t[256];
  for (int w = 0; w < 3; w++) run(ctx); /* NCCL sets up its channels on the first calls */
  sync_both(d0, d1);
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now_us();
    run(ctx);
    sync_both(d0, d1);
    t[r] = (bench_now_us() - t0) * 1e-6;
  }
  return bench_median(t, reps);
}

typedef struct reduce_ctx {
  cujit_nccl_comm *comm;
  direct_nccl *nccl;
  void *comms[2];
  cujit_buffer *bufs[2];
  size_t count;
} reduce_ctx;

static void run_cujit(void *p) {
  reduce_ctx *c = p;
  CHECK(cujit_nccl_all_reduce(c->comm, c->bufs, NULL, c->count, CUJIT_NCCL_SUM, NULL));
}

static void run_direct(void *p) {
  reduce_ctx *c = p;
  int rc = c->nccl->group_start();
  for (int i = 0; i < 2 && rc == 0; i++) {
    void *ptr = (void *)(uintptr_t)cujit_buffer_devptr(c->bufs[i]);
    rc = c->nccl->all_reduce(ptr, ptr, c->count, NCCL_FLOAT32, NCCL_SUM, c->comms[i], NULL);
  }
  int end = c->nccl->group_end();
  if (rc != 0 || end != 0) {
    fprintf(stderr, "multi_gpu: ncclAllReduce failed (%d, %d)\n", rc, end);
    exit(1);
  }
}

/* Bus bandwidth as nccl-tests reports it: bytes / time * 2 (n - 1) / n, n = 2 ranks. */
static void reduce_row(const char *system, size_t bytes, double s) {
  bench_row("multi_gpu", system, "all_reduce f32 sum, 2 GPUs, bus bandwidth", (double)bytes,
            (double)bytes / s / 1e9, "GB/s");
  bench_row("multi_gpu", system, "all_reduce f32 sum, 2 GPUs, time", (double)bytes, s * 1e3, "ms");
}

static void all_reduce(cujit_device *d0, cujit_device *d1, size_t bytes) {
  const char *variant = "all_reduce f32 sum, 2 GPUs, bus bandwidth";
  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  if (!nvls || strcmp(nvls, "0") != 0) {
    bench_missing("multi_gpu", "cujit", variant, (double)bytes,
                  "NCCL_NVLS_ENABLE is not 0; set it to measure NCCL");
    return;
  }
  direct_nccl nccl = {0};
  char why[512];
  int ordinals[] = {0, 1};
  reduce_ctx c = {.nccl = &nccl, .count = bytes / sizeof(float)};
  if (cujit_nccl_comm_init_all(engine, ordinals, 2, &c.comm) != CUJIT_OK) {
    bench_missing("multi_gpu", "cujit", variant, (double)bytes, cujit_errmsg(engine));
    return;
  }
  CHECK(cujit_buffer_alloc_on(d0, bytes, CUJIT_F32, &c.bufs[0]));
  CHECK(cujit_buffer_alloc_on(d1, bytes, CUJIT_F32, &c.bufs[1]));
  CHECK(cujit_memset(c.bufs[0], 0, 0, bytes, NULL));
  CHECK(cujit_memset(c.bufs[1], 0, 0, bytes, NULL));
  if (!open_direct(&nccl, why, sizeof why) || nccl.init_all(c.comms, 2, ordinals) != 0) {
    bench_missing("multi_gpu", "nccl (direct)", variant, (double)bytes,
                  nccl.handle ? "ncclCommInitAll failed" : why);
    nccl.handle = NULL;
  }
  /* Alternated, so that neither gets a warmer machine: cujit, direct, cujit, direct. */
  double s_cujit = 1e30, s_direct = 1e30;
  for (int round = 0; round < 2; round++) {
    double s = time_reduce(run_cujit, &c, d0, d1);
    s_cujit = s < s_cujit ? s : s_cujit;
    if (nccl.handle) {
      s = time_reduce(run_direct, &c, d0, d1);
      s_direct = s < s_direct ? s : s_direct;
    }
  }
  reduce_row("cujit", bytes, s_cujit);
  if (nccl.handle) {
    reduce_row("nccl (direct)", bytes, s_direct);
    bench_row("multi_gpu", "cujit", "all_reduce time / direct NCCL (goal <= 1.05)", (double)bytes,
              s_cujit / s_direct, "x");
    nccl.destroy(c.comms[0]);
    nccl.destroy(c.comms[1]);
  }
  cujit_nccl_comm_free(c.comm);
  cujit_buffer_free(c.bufs[0]);
  cujit_buffer_free(c.bufs[1]);
}

int main(int argc, char **argv) {
  size_t mib = 256;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
      mib = (size_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--mib N] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (mib == 0 || reps < 1 || reps > 256) {
    fprintf(stderr, "multi_gpu: --mib must be positive and --reps in 1..256\n");
    return 2;
  }
  size_t bytes = mib << 20;
  if (cujit_open(&engine) != CUJIT_OK) {
    fprintf(stderr, "multi_gpu: cujit_open failed\n");
    return 1;
  }
  int count = 0;
  cujit_device *d0, *d1;
  if (cujit_device_count(engine, &count) != CUJIT_OK || count < 2) {
    bench_missing("multi_gpu", "cujit", "two-GPU figures", (double)bytes,
                  count < 2 ? "fewer than two GPUs" : cujit_errmsg(engine));
    cujit_close(engine);
    return 0;
  }
  CHECK(cujit_device_get(engine, 0, &d0));
  CHECK(cujit_device_get(engine, 1, &d1));
  copies(d0, d1, bytes);
  all_reduce(d0, d1, bytes);
  cujit_close(engine);
  return 0;
}
