/*
** cujit/grid.h -- grid helpers for kernels: the global index and stride in 1-3 dimensions, as
** Numba's cuda.grid and cuda.gridsize, the thread's linear rank within its block, and a
** grid-stride range for loops that cover any length with any launch shape.
*/
#pragma once

namespace cujit {

/* The global index of this thread along x (1-D), as a 64-bit value so that index arithmetic on
** arrays of more than 2^31 elements does not overflow. */
__device__ __forceinline__ long long grid1() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

/* The total number of threads along x: the stride of a grid-stride loop. */
__device__ __forceinline__ long long gridsize1() {
  return (long long)gridDim.x * blockDim.x;
}

struct index2 {
  long long x, y;
};
struct index3 {
  long long x, y, z;
};

__device__ __forceinline__ index2 grid2() {
  index2 r = {(long long)blockIdx.x * blockDim.x + threadIdx.x,
              (long long)blockIdx.y * blockDim.y + threadIdx.y};
  return r;
}
__device__ __forceinline__ index2 gridsize2() {
  index2 r = {(long long)gridDim.x * blockDim.x, (long long)gridDim.y * blockDim.y};
  return r;
}
__device__ __forceinline__ index3 grid3() {
  index3 r = {(long long)blockIdx.x * blockDim.x + threadIdx.x,
              (long long)blockIdx.y * blockDim.y + threadIdx.y,
              (long long)blockIdx.z * blockDim.z + threadIdx.z};
  return r;
}
__device__ __forceinline__ index3 gridsize3() {
  index3 r = {(long long)gridDim.x * blockDim.x, (long long)gridDim.y * blockDim.y,
              (long long)gridDim.z * blockDim.z};
  return r;
}

/* This thread's rank within its block, x fastest: the order in which the hardware forms warps,
** so rank / 32 is the warp and rank % 32 the lane, whatever the block's shape. */
__device__ __forceinline__ unsigned block_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ __forceinline__ unsigned block_threads() {
  return blockDim.x * blockDim.y * blockDim.z;
}

/* A grid-stride range over [0, n) for range-based for loops:
**     for (long long i : cujit::grid_stride(n)) y[i] = a * x[i] + y[i];
** Correct for any grid; the grid only decides how the work is shared. */
struct grid_stride {
  long long first, n, step;
  struct iterator {
    long long i, step;
    __device__ __forceinline__ long long operator*() const {
      return i;
    }
    __device__ __forceinline__ iterator &operator++() {
      i += step;
      return *this;
    }
    /* Only ever compared with end(), whose i holds the bound. */
    __device__ __forceinline__ bool operator!=(const iterator &end) const {
      return i < end.i;
    }
  };
  __device__ __forceinline__ explicit grid_stride(long long count)
      : first(grid1()), n(count), step(gridsize1()) {}
  __device__ __forceinline__ iterator begin() const {
    iterator it = {first, step};
    return it;
  }
  __device__ __forceinline__ iterator end() const {
    iterator it = {n, step};
    return it;
  }
};

} // namespace cujit
