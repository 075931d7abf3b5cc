// Cooperative groups as kernels use them: block reductions over warp tiles, cg::reduce on
// smaller tiles, votes and matches over data, partitions by data-dependent labels, the threads
// that take a branch, tiles chosen at run time, a grid-wide barrier, and staged copies into shared
// memory. tests/lua/test_cpu_cg.lua runs each against a host reference (on the GPU, or on the CPU
// device without one) and compiles this file for sm_90.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

// Block sum: each warp tile folds with shfl_down, tile leaders meet in shared memory, and the
// first tile combines their sums with cg::reduce. One result per block.
template <typename T, unsigned BlockSize>
__global__ void block_reduce(const T *__restrict__ in, T *__restrict__ block_sums, unsigned n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ T warp_sums[BlockSize / 32];
  unsigned i = block.group_index().x * BlockSize + block.thread_rank();
  T v = i < n ? in[i] : T(0);
  for (int offset = warp.num_threads() / 2; offset > 0; offset /= 2) v += warp.shfl_down(v, offset);
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    T s = warp.thread_rank() < warp.meta_group_size() ? warp_sums[warp.thread_rank()] : T(0);
    s = cg::reduce(warp, s, cg::plus<T>());
    if (block.thread_rank() == 0) block_sums[block.group_index().x] = s;
  }
}

// cg::reduce over tiles of TileSize threads: per tile its sum, minimum and maximum.
template <unsigned TileSize, typename T>
__global__ void tile_reduce(const T *__restrict__ in, T *__restrict__ out, unsigned n) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<TileSize>(block);
  unsigned i = blockIdx.x * blockDim.x + block.thread_rank();
  T v = in[i < n ? i : n - 1];
  T sum = cg::reduce(tile, v, cg::plus<T>());
  T lo = cg::reduce(tile, v, cg::less<T>());
  T hi = cg::reduce(tile, v, cg::greater<T>());
  unsigned t = i / TileSize;
  if (tile.thread_rank() == 0) {
    out[3 * t] = sum;
    out[3 * t + 1] = lo;
    out[3 * t + 2] = hi;
  }
}

// The bitwise reductions, on tiles of 8.
__global__ void tile_bits(const unsigned *__restrict__ in, unsigned *__restrict__ out) {
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned a = cg::reduce(tile, in[i], cg::bit_and<unsigned>());
  unsigned o = cg::reduce(tile, in[i], cg::bit_or<unsigned>());
  unsigned x = cg::reduce(tile, in[i], cg::bit_xor<unsigned>());
  if (tile.thread_rank() == 0) {
    out[3 * (i / 8)] = a;
    out[3 * (i / 8) + 1] = o;
    out[3 * (i / 8) + 2] = x;
  }
}

// Votes and matches of a tile over the data: per thread ballot, any, all, match_any of the
// value's class, and the value of the tile's neighbours through shfl/shfl_up/shfl_xor.
template <unsigned TileSize>
__global__ void tile_votes(const int *__restrict__ in, int threshold, unsigned *__restrict__ out) {
  auto tile = cg::tiled_partition<TileSize>(cg::this_thread_block());
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  bool above = v > threshold;
  unsigned *o = out + 7 * i;
  o[0] = tile.ballot(above);
  o[1] = tile.any(above);
  o[2] = tile.all(above);
  o[3] = tile.match_any(v & 3);
  o[4] = (unsigned)tile.shfl(v, (int)(tile.num_threads() - 1));
  o[5] = (unsigned)tile.shfl_up(v, 1);
  o[6] = (unsigned)tile.shfl_xor(v, 1);
  tile.sync();
}

// Partitions of a warp by a label read from memory, and of tiles of 8 by the value's sign: each
// thread writes its rank and size in its group, the group's place among the groups, and the
// group's sum.
__global__ void partitions(const int *__restrict__ label, const int *__restrict__ value,
                           int *__restrict__ out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  unsigned i = block.group_index().x * block.size() + block.thread_rank();
  cg::coalesced_group same = cg::labeled_partition(warp, label[i]);
  int *o = out + 10 * i;
  o[0] = same.thread_rank();
  o[1] = same.num_threads();
  o[2] = same.meta_group_rank();
  o[3] = same.meta_group_size();
  o[4] = cg::reduce(same, value[i], cg::plus<int>());
  cg::thread_block_tile<8> eight = cg::tiled_partition<8>(block);
  cg::coalesced_group sign = cg::binary_partition(eight, value[i] < 0);
  o[5] = sign.thread_rank();
  o[6] = sign.size();
  o[7] = sign.meta_group_rank();
  o[8] = sign.meta_group_size();
  o[9] = cg::reduce(sign, value[i], cg::greater<int>());
}

// The threads that take a branch: their rank and number, the first one's value, their ballot, and
// a float sum in the order the GPU's cg::reduce takes.
__global__ void coalesced_branch(const int *__restrict__ key, const float *__restrict__ x,
                                 int *__restrict__ out, float *__restrict__ sums) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int *o = out + 4 * i;
  o[0] = o[1] = o[2] = o[3] = -1;
  sums[i] = -1.0f;
  if (key[i] % 3 != 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    o[0] = active.thread_rank();
    o[1] = active.size();
    o[2] = active.shfl(key[i], 0);
    o[3] = (int)active.ballot(key[i] > 0);
    sums[i] = cg::reduce(active, x[i], cg::plus<float>());
  }
}

// Prefix sums: inclusive over tiles of 16 (float, in the GPU's order), and exclusive sums and
// maxima among the threads of a warp whose key is odd.
__global__ void scans(const float *__restrict__ x, const int *__restrict__ key,
                      float *__restrict__ incl, int *__restrict__ excl, int *__restrict__ excl_max) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  incl[i] = cg::inclusive_scan(tile, x[i]);
  excl[i] = excl_max[i] = -1;
  if (key[i] & 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    excl[i] = cg::exclusive_scan(odd, key[i]);
    excl_max[i] = cg::exclusive_scan(odd, key[i], cg::greater<int>());
  }
}

// A tile size chosen at run time: each tile of `tile_size` threads rotates its values through
// shared memory by one place, with the tile's own barrier between the write and the read.
__global__ void runtime_tiles(const int *__restrict__ in, int *__restrict__ out,
                              unsigned tile_size) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group tile = cg::tiled_partition(block, tile_size);
  __shared__ int stage[256];
  unsigned t = block.thread_rank(), i = blockIdx.x * blockDim.x + t;
  stage[t] = in[i];
  tile.sync();
  unsigned base = t - (unsigned)tile.thread_rank();
  out[3 * i] = stage[base + ((unsigned)tile.thread_rank() + 1) % (unsigned)tile.size()];
  out[3 * i + 1] = (int)tile.thread_rank();
  out[3 * i + 2] = (int)tile.size();
}

// Two phases over the grid: partial sums, a grid-wide barrier, then block 0 adds them up.
// Needs a cooperative launch.
__global__ void grid_sum(const int *__restrict__ in, int *__restrict__ partial,
                         int *__restrict__ total, unsigned n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ int acc;
  if (block.thread_rank() == 0) acc = 0;
  block.sync();
  for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) atomicAdd(&acc, in[i]);
  block.sync();
  if (block.thread_rank() == 0) partial[grid.block_rank()] = acc;
  grid.sync();
  if (grid.thread_rank() == 0) {
    int s = 0;
    for (unsigned b = 0; b < grid.num_blocks(); b++) s += partial[b];
    *total = s;
  }
}

// Where each thread stands in the grid (no barrier: any launch).
__global__ void grid_ranks(unsigned *__restrict__ out) {
  cg::grid_group grid = cg::this_grid();
  unsigned long long r = grid.thread_rank();
  out[3 * r] = (unsigned)grid.block_rank();
  out[3 * r + 1] = (unsigned)grid.size();
  out[3 * r + 2] = (unsigned)grid.num_blocks();
}

// Stage a block's slice into shared memory with memcpy_async, wait, and use it reversed; then a
// warp stages its own 32 values again.
__global__ void staged_copy(const unsigned *__restrict__ in, unsigned *__restrict__ out) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ unsigned tile[256];
  __shared__ unsigned mine[8][32];
  const unsigned *src = in + blockIdx.x * 256;
  cg::memcpy_async(block, tile, src, sizeof(unsigned) * 256);
  cg::wait(block);
  unsigned t = block.thread_rank();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::memcpy_async(warp, mine[warp.meta_group_rank()], src + 32 * warp.meta_group_rank(),
                   sizeof(unsigned) * 32);
  cg::wait(warp);
  out[blockIdx.x * 256 + t] = tile[255 - t] ^ mine[warp.meta_group_rank()][31 - warp.thread_rank()];
}
