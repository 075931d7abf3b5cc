// read.cu -- the read-bandwidth floor of the sum (case 6): every float read once with 16-byte
// loads, nothing written unless the total happens to equal `never`, so no load can be dropped.
extern "C" __global__ void readall(const float *x, float *out, int n4, float never) {
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    float4 v = reinterpret_cast<const float4 *>(x)[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == never) out[0] = acc;
}
