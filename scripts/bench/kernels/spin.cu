// spin.cu -- the latency kernels (cases latency and small): spin(ns) keeps one thread busy for ns
// nanoseconds of the GPU's global timer (0 returns at once), so a launch + wait round trip can be
// measured per kernel length; twice(x, n) is the elementwise kernel of the small operations.
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  if (ns == 0) return;
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

extern "C" __global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i];
}
