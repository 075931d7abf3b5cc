// springs.cu -- one explicit step of damped springs, written the way a project's .cu file is:
// it brings the C and C++ headers its authors are used to, and uses what they declare in device
// code. cujit gives NVRTC stand-ins for the ones it lacks; the CPU device uses the host's own.
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <float.h>
#include <limits.h>
#include <time.h>
#include <cstdint>
#include <cstddef>
#include <cmath>
#include <climits>
#include <cfloat>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <cstdio>
#include <cassert>
#include <type_traits>
#include <utility>
#include <limits>
#include <algorithm>
#include <iostream> // for the host code that prints the results (not in this file)
#include <vector>
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <spring_helpers.h> // mix32, STEP_BLOCK

struct Spring {
  float x, v;
};

template <typename T>
__device__ T clamp_to(T a, T lo, T hi) {
  static_assert(std::is_arithmetic<T>::value, "clamp_to wants a number");
  return a < lo ? lo : (a > hi ? hi : a);
}

extern "C" __global__ void step(float *x, float *v, const float *force, float dt, int32_t n,
                                uint32_t *tags, float *energy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(blockDim.x <= STEP_BLOCK);
  if (i >= n) return;
  clock_t started = clock();
  (void)started;
  Spring s;
  s.x = x[i];
  s.v = v[i];
  Spring copy;
  memcpy(&copy, &s, sizeof s);
  float a = force[i] - 0.5f * copy.v - copy.x;
  copy.v += a * dt;
  copy.x += copy.v * dt;
  float e = 0.5f * copy.v * copy.v + 0.5f * copy.x * copy.x;
  e += std::sqrt(std::fabs(copy.x)) * (float)M_PI_4;
  if (isnan(e) || isinf(e)) e = FLT_MAX;
  x[i] = copy.x;
  v[i] = copy.v;
  energy[i] = std::min(clamp_to(e, 0.0f, std::numeric_limits<float>::max()), FLT_MAX);
  std::uint32_t lo = mix32((uint32_t)i), hi = mix32((uint32_t)i + 1u);
  if (lo > hi) std::swap(lo, hi);
  tags[i] = (lo ^ (hi << 1)) & (uint32_t)INT_MAX;
  tags[i] = std::max(tags[i], (uint32_t)0);
  if (n < 0) printf("never: %d\n", n);
}

// Facts of the headers, from one thread: what the host checks them against.
extern "C" __global__ void facts(long long *out) {
  int *scratch = (int *)malloc(4 * sizeof(int));
  memset(scratch, 0, 4 * sizeof(int));
  scratch[1] = abs(-7);
  out[0] = (long long)offsetof(Spring, v);
  out[1] = CHAR_BIT;
  out[2] = INT_MAX;
  out[3] = (long long)(FLT_EPSILON * 1e7f);
  out[4] = (long long)sizeof(int64_t);
  out[5] = std::numeric_limits<short>::max();
  out[6] = EXIT_FAILURE + scratch[0] + scratch[1];
  out[7] = (long long)(M_PI * 1000.0);
  out[8] = isinf(INFINITY) && isnan(NAN) && HUGE_VALF == INFINITY;
  out[9] = UINT8_MAX + (long long)INT16_MIN;
  free(scratch);
}
