// half2.cu -- paired half arithmetic as mixed-precision kernels write it.
#include <cuda_fp16.h>

extern "C" __global__ void half2_axpy(const __half2 *x, const __half2 *y, __half2 *out,
                                      float a, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  __half2 a2 = __float2half2_rn(a);
  __half2 r = __hfma2(a2, x[i], y[i]);
  out[i] = r;
}

extern "C" __global__ void half2_mix(const __half2 *x, const __half2 *y, __half2 *sum,
                                     __half2 *prod, __half2 *quot, __half2 *ops, float2 *wide,
                                     __half *lo_hi, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  __half2 a = x[i], b = y[i];
  sum[i] = __hadd2(a, b);
  prod[i] = __hmul2(a, b);
  quot[i] = __h2div(a, b);
  __half2 t = (a + b) * a - b / b;
  t -= __hsub2(a, a);
  ops[i] = t;
  wide[i] = __half22float2(__halves2half2(__high2half(a), __low2half(b)));
  lo_hi[2 * i] = __low2half(__floats2half2_rn(__low2float(a) * 2.0f, 0.0f));
  lo_hi[2 * i + 1] = __high2half(__lowhigh2highlow(a));
}
