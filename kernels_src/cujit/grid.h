/*
** cujit/grid.h -- grid helpers for kernels: the global index and stride in 1-3 dimensions, as
** Numba's cuda.grid and cuda.gridsize.
*/
#pragma once

namespace cujit {
__device__ __forceinline__ long long grid1() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long gridsize1() {
  return (long long)gridDim.x * blockDim.x;
}
} // namespace cujit
