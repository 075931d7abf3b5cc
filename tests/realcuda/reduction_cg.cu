// Sum reduction with cooperative groups: each 32-thread tile reduces with shfl_down, tile
// leaders meet in shared memory, the first tile reduces their sums. Style of the samples'
// reduction (its cooperative-groups variants). Launch with blockDim.x == blockSize.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename T> __device__ T tile_sum(const cg::thread_block_tile<32> &tile, T v) {
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  return v;
}

template <typename T, unsigned int blockSize>
__global__ void reduce_cg(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  __shared__ T tile_sums[blockSize / 32];
  T sum = 0;
  for (unsigned int i = blockIdx.x * blockSize + threadIdx.x; i < n; i += blockSize * gridDim.x)
    sum += g_idata[i];
  sum = tile_sum(tile, sum);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = sum;
  cg::sync(cta);
  if (tile.meta_group_rank() == 0) {
    sum = tile.thread_rank() < blockSize / 32 ? tile_sums[tile.thread_rank()] : T(0);
    sum = tile_sum(tile, sum);
    if (tile.thread_rank() == 0) g_odata[blockIdx.x] = sum;
  }
}
