// Monte Carlo estimate of pi with cuRAND's device API, in the style of the samples' Monte Carlo
// examples: each thread draws `per_thread` points and counts those inside the quarter circle.
#include <curand_kernel.h>

__global__ void count_inside(unsigned long long seed, unsigned int per_thread, unsigned int *hits) {
  unsigned int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, id, 0, &state);
  unsigned int inside = 0;
  for (unsigned int k = 0; k < per_thread; k++) {
    float x = curand_uniform(&state), y = curand_uniform(&state);
    inside += x * x + y * y <= 1.0f;
  }
  atomicAdd(hits, inside);
}
