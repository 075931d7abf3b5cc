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
  X(cuLaunchKernel, 4000)

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

#endif
