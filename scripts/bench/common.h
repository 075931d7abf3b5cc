/*
** common.h -- what every C benchmark program in scripts/bench shares: a monotonic clock, medians,
** the options every program takes, and the CSV rows they print on stdout.
**
** Every program prints rows of results.csv (see README.md): case,system,variant,n,value,unit,
** status,detail. A figure that could not be measured is a row with status "missing" and the reason
** in detail, never a failure of the program.
**
** It also holds the raw Driver API that raw.c, cujit.c (its same-process floor) and benchclock.so
** (the Lua raw launcher) open at run time: libcuda.so.1 through dlopen + cuGetProcAddress, so that
** nothing links the driver and every program still runs, with "missing" rows, where there is none.
*/
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <cuda.h>
#include <cudaTypedefs.h>

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

/* ---- the raw Driver API ------------------------------------------------------------------------
 */

/* X(name, abi): the driver entry points used, with the ABI their PFN typedef names. */
#define BENCH_DRIVER_FUNCTIONS(X)                                                                  \
  X(cuInit, 2000)                                                                                  \
  X(cuDriverGetVersion, 2020)                                                                      \
  X(cuGetErrorName, 6000)                                                                          \
  X(cuDeviceGet, 2000)                                                                             \
  X(cuDeviceGetName, 2000)                                                                         \
  X(cuDeviceGetAttribute, 2000)                                                                    \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                \
  X(cuCtxSetCurrent, 4000)                                                                         \
  X(cuCtxGetCurrent, 4000)                                                                         \
  X(cuCtxSynchronize, 2000)                                                                        \
  X(cuStreamCreate, 2000)                                                                          \
  X(cuStreamSynchronize, 2000)                                                                     \
  X(cuMemcpyHtoD, 3020)                                                                            \
  X(cuMemAlloc, 3020)                                                                              \
  X(cuMemFree, 3020)                                                                               \
  X(cuMemcpyDtoD, 3020)                                                                            \
  X(cuMemcpyDtoH, 3020)                                                                            \
  X(cuMemsetD32, 3020)                                                                             \
  X(cuEventCreate, 2000)                                                                           \
  X(cuEventRecord, 2000)                                                                           \
  X(cuEventSynchronize, 2000)                                                                      \
  X(cuEventElapsedTime, 2000)                                                                      \
  X(cuLibraryLoadData, 12000)                                                                      \
  X(cuLibraryUnload, 12000)                                                                        \
  X(cuLibraryGetKernel, 12000)                                                                     \
  X(cuKernelGetFunction, 12000)                                                                    \
  X(cuLaunchKernel, 4000)                                                                          \
  X(cuStreamDestroy, 4000)                                                                         \
  X(cuStreamBeginCapture, 10010)                                                                   \
  X(cuStreamEndCapture, 10000)                                                                     \
  X(cuGraphInstantiateWithFlags, 11040)                                                            \
  X(cuGraphLaunch, 10000)                                                                          \
  X(cuGraphExecDestroy, 10000)                                                                     \
  X(cuGraphDestroy, 10000)

#define BENCH_DRIVER_FIELD(name, abi) PFN_##name##_v##abi name;
typedef struct bench_driver {
  BENCH_DRIVER_FUNCTIONS(BENCH_DRIVER_FIELD)
} bench_driver;
#undef BENCH_DRIVER_FIELD

/* The driver's entry points; all NULL until bench_driver_open succeeds. */
extern bench_driver bench_cu;

/* Opens libcuda.so.1 and resolves every entry point (once; later calls return at once). Returns 0
** and writes why into `why` when there is no driver or it lacks one of them. */
int bench_driver_open(char *why, size_t why_len);

/* ---- NVRTC alone, as cujit opens it, with the include directories cujit gives it ---------- */

/* dlopen of $CUJIT_NVRTC, else libnvrtc.so.13, else .12 (RTLD_LOCAL); NULL, with `why` saying what
** to do, when there is none. */
void *bench_nvrtc_library(char *why, size_t why_len);

/* The toolkit's include directories as NVRTC options (--include-path=HOME/include/cccl where it
** exists, then --include-path=HOME/include; HOME is $CUDA_HOME, else /usr/local/cuda) into
** opts[0..]; returns how many (at most 2). The strings are static, the same for every call. */
int bench_nvrtc_include_options(const char *opts[2]);

/* 1 when rc is CUDA_SUCCESS; else 0, and `why` says which call failed with the driver's name of
** the error. */
int bench_cu_check(CUresult rc, const char *what, char *why, size_t why_len);

/* Loads a CUBIN or NUL-terminated PTX image as a library and gets `name` from it as a CUfunction
** of the current context (cuKernelGetFunction, once): the handle cujit itself launches. */
int bench_cu_function(const void *image, const char *name, CUlibrary *lib, CUfunction *fn,
                      char *why, size_t why_len);

/* The parameters of empty1 / empty4 / empty12 (kernels/empty.cu), prepared once: params[] points
** into the struct, so it must not be copied after bench_pack_launch. */
typedef struct bench_launch_args {
  CUdeviceptr p[4];
  int i[4];
  float f[4];
  void *params[12];
} bench_launch_args;

/* Fills a with `nargs` (1, 4 or 12) arguments: device pointers `buf`, ints k + 1, floats 0.5 k. */
void bench_pack_launch(bench_launch_args *a, CUdeviceptr buf, int nargs);

/* ---- graphs (the "graph" case) ---------------------------------------------------------------
** Host time per kernel node of a replayed graph of 1, 10, 100 and 1000 empty4 launches (1 and 10
** in --short), and what capturing and instantiating one cost. */

#define BENCH_GRAPH_SIZES 4
extern const int bench_graph_sizes[BENCH_GRAPH_SIZES];
/* How many of them this run measures. */
int bench_graph_count(const bench_opts *o);

/* The graph case's rows: per node of graph size bench_graph_sizes[i] ("nodesN"), and the capture
** and instantiation of it ("captureN", "instantiateN", case graph_setup); the missing ones say
** why. */
void bench_graph_rows(const char *system, int i, double per_node_us, double capture_us,
                      double instantiate_us);
void bench_graph_missing(const bench_opts *o, const char *system, const char *why);

/* One replay of the graph (1 when queued), and a wait for every replay queued (1 when done). */
typedef int (*bench_replay_fn)(void *ctx);

/* Host microseconds per node of replaying a graph of `nodes` nodes: about o->launches nodes per
** repetition, in batches of at most o->batch nodes (at least one replay) with only the replay
** calls timed and the device drained between batches, the median of o->reps repetitions after a
** warm-up. With `floor` (may be NULL), each batch is paired with one of the floor's, their order
** alternating, so both see the same state of the machine: us[1] is the floor's figure. */
int bench_time_replays(const bench_opts *o, int nodes, bench_replay_fn replay,
                       bench_replay_fn floor, bench_replay_fn drain, void *ctx, double us[2]);

/* The raw floor's graph: `nodes` launches of fn(params) with one block of 32 threads captured on
** `stream` (relaxed mode) and instantiated; *capture_us and *instantiate_us what each took. */
int bench_raw_graph(CUfunction fn, void **params, int nodes, CUstream stream, CUgraphExec *exec,
                    double *capture_us, double *instantiate_us, char *why, size_t why_len);

#endif
