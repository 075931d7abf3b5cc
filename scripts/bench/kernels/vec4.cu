// vec4.cu -- vector add and SAXPY moving four floats per thread with 16-byte loads (case 5). The
// same arithmetic as vadd.cu and saxpy.cu; n4 = n / 4, and n is a multiple of 4 in the sweep.
extern "C" __global__ void vadd4(const float *a, const float *b, float *c, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 x = reinterpret_cast<const float4 *>(a)[i];
    float4 y = reinterpret_cast<const float4 *>(b)[i];
    reinterpret_cast<float4 *>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

extern "C" __global__ void saxpy4(float a, const float *x, float *y, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 u = reinterpret_cast<const float4 *>(x)[i];
    float4 v = reinterpret_cast<float4 *>(y)[i];
    reinterpret_cast<float4 *>(y)[i] =
        make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
  }
}
