// montecarlo_cujit.cu -- European call by Monte Carlo with cujit's counter-based generator (case
// 7): no generator state, so no setup; each thread prices four paths from one Philox block, the
// block sums its payoffs in double and adds them to *sum. Price = exp(-rT) * sum / paths.
#include <cujit/random.h>
#include <cujit/reduce.h>

extern "C" __global__ void mc_call(double *sum, long long paths, unsigned long long seed, float s0,
                                   float strike, float drift, float vol) {
  long long block = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double acc = 0.0;
  if (4 * block < paths) {
    float4 z = cujit::normal_float4(seed, (unsigned long long)block);
    float p0 = fmaxf(s0 * __expf(drift + vol * z.x) - strike, 0.0f);
    float p1 = fmaxf(s0 * __expf(drift + vol * z.y) - strike, 0.0f);
    float p2 = fmaxf(s0 * __expf(drift + vol * z.z) - strike, 0.0f);
    float p3 = fmaxf(s0 * __expf(drift + vol * z.w) - strike, 0.0f);
    acc = (double)((p0 + p1) + (p2 + p3));
  }
  acc = cujit::block_sum(acc);
  if (threadIdx.x == 0) atomicAdd(sum, acc);
}
