// saxpy_whole.cu -- a whole program as nvcc users write it: kernels, and the host code that
// allocates, copies, launches and checks, in one file. It includes nothing (nvcc includes the
// runtime's declarations by itself), so it compiles with NVRTC and on the CPU device once cujit
// has elided the host code; test_hostcode.lua loads it with cuda.load and runs the kernels.
#define BLOCK 128
#define CHECK(call) check_status((call), #call, __LINE__)
#define DEFINE_FILL(NAME, T)                                                     \
  extern "C" __global__ void NAME(T *x, T v, int n) {                            \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                               \
    if (i < n) x[i] = v;                                                         \
  }

// Shared by host and device: the kernels read it through a pointer, the host fills it.
struct Coeffs {
  float a, b;
  __host__ __device__ float apply(float x) const { return a * x + b; }
};

__host__ __device__ inline float clampf(float x, float lo, float hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

const float LIMIT = 100.0f;  // a host constant the kernels use: it stays

// Host-only from here to the kernels: a class, globals with constructors, a template.
class RunningStats {
 public:
  RunningStats() : count_(0), sum_(0.0) {}
  void add(double x) { count_++, sum_ += x; }
  double mean() const { return count_ ? sum_ / count_ : 0.0; }

 private:
  long count_;
  double sum_;
};

static RunningStats g_stats;
RunningStats *g_extra = new RunningStats();
int n = 1 << 16;  // the kernels' parameter n is their own

template <typename T>
T host_max(const T *x, int count) {
  T m = x[0];
  for (int i = 1; i < count; i++) m = x[i] > m ? x[i] : m;
  return m;
}

static void check_status(int status, const char *what, int line) {
  if (status != 0) {
    g_stats.add(line);
    throw status;  // what == "cudaMalloc(...)" { not a brace }
  }
}

void host_saxpy(float *y, const float *x, const Coeffs &c, int count);

extern "C" __global__ void saxpy_clamped(float *y, const float *x, const Coeffs *c, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = clampf(c->apply(x[i]) + y[i], -LIMIT, LIMIT);
}

__global__ void square_all(float *x, int n) {  // C++ linkage: named by its name expression
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = x[i] * x[i];
}

DEFINE_FILL(fill_f32, float)
DEFINE_FILL(fill_i32, int)

void host_saxpy(float *y, const float *x, const Coeffs &c, int count) {
  for (int i = 0; i < count; i++) y[i] = clampf(c.apply(x[i]) + y[i], -LIMIT, LIMIT);
}

int main(int argc, char **argv) {
  float *d_x, *d_y;
  Coeffs *d_c, c = {2.0f, 1.0f};
  CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CHECK(cudaMalloc(&d_y, n * sizeof(float)));
  CHECK(cudaMalloc(&d_c, sizeof c));
  CHECK(cudaMemcpy(d_c, &c, sizeof c, cudaMemcpyHostToDevice));
  dim3 grid((n + BLOCK - 1) / BLOCK), block(BLOCK);
  auto launch = [&](float v) {
    fill_f32<<<grid, block>>>(d_x, v, n);
    fill_f32<<<grid, block>>>(d_y, 0.0f, n);
    saxpy_clamped<<<grid, block>>>(d_y, d_x, d_c, n);
  };
  launch(1.5f);
  square_all<<<64, 256>>>(d_y, n);
  float *h_y = new float[n];
  CHECK(cudaMemcpy(h_y, d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
  g_stats.add(host_max(h_y, n));
  printf("max %f, mean %f\n", host_max(h_y, n), g_stats.mean());
  cudaFree(d_x), cudaFree(d_y), cudaFree(d_c);
  delete[] h_y;
  return 0;
}
