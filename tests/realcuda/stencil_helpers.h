// stencil_helpers.h -- the kind of helper header samples ship beside their kernels: host checks
// and timing next to what host and device share. Its host functions are elided for NVRTC
// (docs/cuda-code.md, "Host code"); the CPU device's g++ compiles them whole, as nvcc would.
#ifndef STENCIL_HELPERS_H
#define STENCIL_HELPERS_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RADIUS 3

// Read by the kernel through a pointer, filled by the host: stays.
struct StencilParams {
  int n;
  float scale;
};

// The weights, the same on both sides: stays.
__host__ __device__ inline float stencil_weight(int k) {
  return 1.0f / (1 + (k < 0 ? -k : k));
}

// Host only: goes.
inline void fail_if(bool bad, const char *what, int line) {
  if (bad) {
    fprintf(stderr, "%s failed at line %d\n", what, line);
    exit(EXIT_FAILURE);
  }
}

class HostClock {
public:
  void start() {
    t0_ = clock();
  }
  double seconds() const {
    return double(clock() - t0_) / CLOCKS_PER_SEC;
  }

private:
  clock_t t0_ = 0;
};
#endif
