// params.cu -- structs passed to kernels by value, as simulation codes pass their settings.
struct SimParams {
  float dt;
  double damping; // 8-aligned: 4 bytes of padding after dt
  int steps;
  float3 gravity; // 12 bytes, 4-aligned
  char tag;
};

struct __align__(16) Coeffs {
  float c[200]; // 800 bytes: a table passed whole
  int count;
};

extern "C" __global__ void integrate(SimParams p, const float *v, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = v[i];
  for (int s = 0; s < p.steps; s++) x = (float)(x * p.damping) + p.dt * p.gravity.y;
  out[i] = x + (float)p.tag;
}

extern "C" __global__ void polynomial(const float *x, Coeffs k, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int j = k.count - 1; j >= 0; j--) acc = acc * x[i] + k.c[j];
  out[i] = acc;
}
