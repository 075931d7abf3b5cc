// arguments.cu -- the arguments real kernels take: the standard integer typedefs (a clock_t
// start time, sizes, pointer-sized integers), an optional input the host passes as NULL, and a
// filter whose coefficients live in static and namespaced __constant__/__device__ variables that
// the host fills before the launch.
#ifndef __CUJIT_CPU__ // NVRTC: libcu++ has the fixed-width types; the CPU device, the C library
#include <cuda/std/cstdint>
using cuda::std::int8_t;
using cuda::std::int32_t;
using cuda::std::int_fast8_t;
using cuda::std::int_least16_t;
using cuda::std::intmax_t;
using cuda::std::intptr_t;
using cuda::std::uint16_t;
using cuda::std::uint64_t;
using cuda::std::uint_fast64_t;
using cuda::std::uint_least64_t;
using cuda::std::uintmax_t;
using cuda::std::uintptr_t;
#else
#include <stdint.h>
#include <time.h>
#endif

// Every argument written out whole, so that the host sees whether it arrived at its full width.
extern "C" __global__ void echo_widths(clock_t started, size_t bytes, ptrdiff_t delta,
                                       intptr_t handle, uintptr_t address, intmax_t big,
                                       uintmax_t ubig, int_least16_t small, uint_least64_t wide,
                                       int_fast8_t tiny, uint_fast64_t fast, int8_t i8,
                                       uint16_t u16, int32_t i32, uint64_t u64, long long *out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  out[0] = (long long)started;
  out[1] = (long long)bytes;
  out[2] = (long long)delta;
  out[3] = (long long)handle;
  out[4] = (long long)address;
  out[5] = (long long)big;
  out[6] = (long long)ubig;
  out[7] = small;
  out[8] = (long long)wide;
  out[9] = tiny;
  out[10] = (long long)fast;
  out[11] = i8;
  out[12] = u16;
  out[13] = i32;
  out[14] = (long long)u64;
}

// y = a * x + bias, the bias optional: the host passes NULL when there is none.
__global__ void axpb(int n, float a, const float *__restrict__ x, const float *__restrict__ bias,
                     float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + (bias != nullptr ? bias[i] : 0.0f);
}

#define MAX_TAPS 9

static __constant__ float taps[MAX_TAPS]; // the filter's weights, set by the host

namespace filter {
__constant__ float gain;
static __device__ float offset;
namespace {
__constant__ int radius; // taps used: 2 * radius + 1
}
} // namespace filter

// out[i] = gain * sum_k taps[k + radius] * in[clamp(i + k)] + offset
__global__ void smooth(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = -filter::radius; k <= filter::radius; k++) {
    int j = min(max(i + k, 0), n - 1);
    acc += taps[k + filter::radius] * in[j];
  }
  out[i] = filter::gain * acc + filter::offset;
}
