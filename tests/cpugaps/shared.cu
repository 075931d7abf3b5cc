// shared.cu -- `extern __shared__` in the spellings real code uses: in a header's functions and
// template, at file scope, and inside kernels (templated element type, qualifiers after the type).
#include "shared_util.cuh"

extern __shared__ int file_scope_ints[];

template <typename T> __global__ void reverse_blocks(const T *in, T *out, int n) {
  extern __shared__ T tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tile[threadIdx.x] = in[i];
  __syncthreads();
  int last = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x)) - 1;
  if (i < n) out[i] = tile[last - (int)threadIdx.x];
}

template <typename T> __global__ void scale_via_wrapper(const T *in, T *out, T s, int n) {
  SharedMemory<T> smem;
  T *buf = smem.get();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  if (i < n) out[i] = s * buf[(threadIdx.x + 1) % blockDim.x];
}

extern "C" __global__ void block_sums(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float total = block_sum(i < n ? in[i] : 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

extern "C" __global__ void count_odd(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  file_scope_ints[threadIdx.x] = i < n ? (in[i] & 1) : 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    int c = 0;
    for (unsigned t = 0; t < blockDim.x; t++) c += file_scope_ints[t];
    out[blockIdx.x] = c;
  }
}

// Declarations split over lines, as a formatter leaves long ones: at file scope and in a kernel.
extern __shared__ __align__(16)
    unsigned int
    file_scope_words
    [];

extern "C" __global__ void count_even_split(const int *in, int *out, int n) {
  extern __shared__
      int
      local_ints
      [];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  local_ints[threadIdx.x] = i < n && (in[i] & 1) == 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned c = 0;
    for (unsigned t = 0; t < blockDim.x; t++) c += file_scope_words[t]; /* the same memory */
    out[blockIdx.x] = (int)c;
  }
}
