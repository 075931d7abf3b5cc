/*
** cujit/reduce.h -- warp- and block-level reductions (sum, min, max, or any associative operator)
** for float, double, int, long long, unsigned and unsigned long long, with __shfl_down_sync
** inside a warp and shared memory between the warps of a block.
**
**   warp_sum(v) etc.: every lane of a full warp calls it; lane 0 gets the result.
**   block_sum(v) etc.: every thread of the block calls it (it synchronises); thread 0 (rank 0)
**     gets the result, the others get an unspecified value. Any block shape and size, including
**     sizes that are not a multiple of 32. Safe to call several times in a row.
** min and max propagate NaN, as NumPy's do: the result is NaN when any input is.
** Sums of float are best accumulated in double by the caller (cast before reducing), as
** cujit_reduce does; integer sums wrap modulo 2^bits, as C's unsigned arithmetic does.
*/
#pragma once
#include <cujit/grid.h>

namespace cujit {

struct op_sum {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    return a + b;
  }
};
/* NaN-propagating for floating types (x != x only for NaN); plain for integers. */
struct op_min {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    return (a != a || a < b) ? a : b;
  }
};
struct op_max {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
    return (a != a || a > b) ? a : b;
  }
};

/* Reduces v over the first `lanes` lanes of the calling warp (those lanes must all call it, and
** they must be named in `mask`); lane 0 gets the result. */
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op, unsigned mask = 0xffffffffu,
                                         unsigned lanes = 32) {
  unsigned lane = block_rank() & 31u;
#pragma unroll
  for (unsigned off = 16; off > 0; off >>= 1) {
    T other = __shfl_down_sync(mask, v, off);
    if (lane + off < lanes) v = op(v, other);
  }
  return v;
}

template <class T> __device__ __forceinline__ T warp_sum(T v) {
  return warp_reduce(v, op_sum());
}
template <class T> __device__ __forceinline__ T warp_min(T v) {
  return warp_reduce(v, op_min());
}
template <class T> __device__ __forceinline__ T warp_max(T v) {
  return warp_reduce(v, op_max());
}

/* Reduces v over the whole block; thread 0 gets the result. */
template <class T, class Op> __device__ __forceinline__ T block_reduce(T v, Op op) {
  __shared__ T partial[32];
  unsigned rank = block_rank(), nthreads = block_threads();
  unsigned warp = rank >> 5, lane = rank & 31u, nwarps = (nthreads + 31u) >> 5;
  /* The last warp may be partial: only its existing lanes take part. */
  unsigned lanes = nthreads - (warp << 5) < 32u ? nthreads - (warp << 5) : 32u;
  unsigned mask = lanes == 32u ? 0xffffffffu : (1u << lanes) - 1u;
  v = warp_reduce(v, op, mask, lanes);
  __syncthreads(); /* a previous call may still be reading partial[] */
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    unsigned m = nwarps == 32u ? 0xffffffffu : (1u << nwarps) - 1u;
    if (lane < nwarps) v = warp_reduce(partial[lane], op, m, nwarps);
  }
  return v;
}

template <class T> __device__ __forceinline__ T block_sum(T v) {
  return block_reduce(v, op_sum());
}
template <class T> __device__ __forceinline__ T block_min(T v) {
  return block_reduce(v, op_min());
}
template <class T> __device__ __forceinline__ T block_max(T v) {
  return block_reduce(v, op_max());
}

} // namespace cujit
