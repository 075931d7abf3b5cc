// shared_util.cuh -- dynamic shared memory declared inside header functions, as libraries of
// device helpers do it: one spelling per helper.
#ifndef SHARED_UTIL_CUH
#define SHARED_UTIL_CUH

template <typename T> struct SharedMemory {
  __device__ T *get() {
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    return reinterpret_cast<T *>(smem_bytes);
  }
};

// The sum of one value per thread of the block, through the dynamic shared array.
__device__ inline float block_sum(float v) {
  extern float __shared__ sums[];
  sums[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
    __syncthreads();
  }
  float r = sums[0];
  __syncthreads();
  return r;
}

#endif
