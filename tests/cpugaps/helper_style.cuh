// helper_style.cuh -- a helper header as CUDA projects ship them: host-side checks that switch on
// what the runtime headers define, host utilities with POSIX headers, and a device helper.
#ifndef HELPER_STYLE_CUH
#define HELPER_STYLE_CUH
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/utsname.h>

#ifdef __DRIVER_TYPES_H__
// Defined only when the runtime's types are in: a file that calls it from host code needs them.
#define checkStatus(call) reportStatus((call), #call, __FILE__, __LINE__)
static inline void reportStatus(cudaError_t rc, const char *what, const char *file, int line) {
  if (rc != cudaSuccess) {
    fprintf(stderr, "%s:%d: %s failed (%d)\n", file, line, what, (int)rc);
    exit(EXIT_FAILURE);
  }
}
#endif

#ifdef __CUDA_RUNTIME_H__
// Host code that asks the device about itself, by the runtime's attribute values.
inline int computeModeOf(int dev) {
  int mode = 0, clock = 0, integrated = 0;
  checkStatus(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev));
  checkStatus(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev));
  checkStatus(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, dev));
  return mode + (integrated ? 0 : clock * 0);
}
#endif

inline bool sameFlag(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

inline const char *machineName() {
  static struct utsname u;
  return uname(&u) == 0 ? u.machine : "unknown";
}

__device__ __forceinline__ float halfSum(half2 v) {
  float2 f = __half22float2(v);
  return f.x + f.y;
}
#endif
