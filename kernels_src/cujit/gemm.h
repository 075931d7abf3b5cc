/*
** cujit/gemm.h -- a portable tiled GEMM for one thread block: C = epilogue(alpha * op(A) op(B) +
** beta * C) over row-major arrays, on CUDA cores (SIMT), for any GPU and the CPU device. It is
** the kernel behind cujit_gemm (engine/core/program/gemm.c), and user kernels may call it too.
**
**   cujit::gemm_simt<T, O, EPILOGUE>(a, b, c, bias, mask, m, n, k, trans_a, trans_b, alpha, beta)
**     run by every thread of a block of cujit::gemm_threads (256) threads, on a grid of
**     (ceil(n / gemm_tile_n), any y): block (x, y) computes the 64 x 64 tiles of C in column
**     x, rows y, y + gridDim.y, ... (so an m past 65535 tiles needs no larger grid).
**   T  the element type of A and B (float, __half or __nv_bfloat16); products are accumulated in
**      float.
**   O  the element type of C, of the bias and of the mask (float, or T).
**   op(A) is m x k: A itself (m x k, row-major) or, with trans_a, the transpose of a k x m A;
**   op(B) is k x n: B (k x n) or, with trans_b, the transpose of an n x k B.
**   EPILOGUE  bits of gemm_epilogue, applied in this order after alpha and beta:
**     gemm_bias       adds bias[col] (a vector of n) to every row: a linear layer's bias;
**     gemm_relu       max(v, 0) (NaN stays NaN);
**     gemm_relu_mask  keeps v where mask[row * n + col] > 0 and writes 0 elsewhere: the backward
**                     pass of a ReLU whose output (or input) was `mask`.
** With beta == 0 C is not read, as in BLAS: whatever C held (NaN included) does not show.
**
** Each thread keeps a 4 x 4 block of C in registers: per step of 16 along k, the block loads a
** 64 x 16 tile of op(A) and a 16 x 64 tile of op(B) into shared memory (as float, zero past the
** edges of the matrices, so no shape need be a multiple of the tile), then each thread does 16
** outer products of 4 values of A by 4 of B: 16 FMAs per 8 shared-memory reads, where a naive
** kernel does one per two global reads. The tile loads follow the contiguous dimension of each
** array (k for a plain A, m for a transposed one), so a warp's loads are coalesced either way.
** The tensor-core path of sm_90 (wgmma and TMA) is cujit::gemm_tc of <cujit/gemm_tc.h>, behind
** the same host call; this one is the path every device has.
*/
#pragma once
#include <cujit/bf16.h>
#include <cujit/half.h>

namespace cujit {

enum gemm_epilogue { gemm_bias = 1, gemm_relu = 2, gemm_relu_mask = 4 };

enum {
  gemm_tile_m = 64,
  gemm_tile_n = 64,
  gemm_tile_k = 16,
  gemm_threads = 256,
  gemm_per_thread = 4, /* rows and columns of C per thread: 4 x 4 = 64 x 64 / 256 */
};

/* The tiles of one k step, in float. A's is stored k-major (a_tile[kk][row]) so that the inner
** loop reads a column of it; the +1 keeps the transposing stores of a plain A's tile (16 threads
** writing down a column) off a single bank. */
struct gemm_smem {
  float a_tile[gemm_tile_k][gemm_tile_m + 1];
  float b_tile[gemm_tile_k][gemm_tile_n + 1];
};

/* A 16-deep slice of `outer` x k (op(A): outer = m) or k x `outer` (op(B): outer = n) into
** tile[kk][o]: elements o0 .. o0 + OUT - 1 of the outer dimension, k0 .. k0 + 15 of k, 0 past
** either edge. k_major: the array is stored with k as its rows (a transposed A, a plain B), else
** with the outer dimension as its rows (a plain A, a transposed B). Consecutive threads take
** consecutive addresses either way: along the outer dimension when k-major, along k otherwise. */
template <int OUT, class T>
__device__ __forceinline__ void gemm_load_tile(float (&tile)[gemm_tile_k][OUT + 1], const T *x,
                                               long long o0, int k0, long long outer, int k,
                                               bool k_major) {
  for (int e = threadIdx.x; e < OUT * gemm_tile_k; e += gemm_threads) {
    int o = k_major ? e % OUT : e / gemm_tile_k;
    int kk = k_major ? e / OUT : e % gemm_tile_k;
    size_t at_o = (size_t)(o0 + o), at_k = (size_t)(k0 + kk);
    float v = 0.0f;
    if (o0 + o < outer && k0 + kk < k)
      v = to_float(k_major ? x[at_k * (size_t)outer + at_o] : x[at_o * (size_t)k + at_k]);
    tile[kk][o] = v;
  }
}

/* One element of C after the epilogue (bits of gemm_epilogue: a constant where the kernel is
** specialised per epilogue, so the tests fold away), in float. */
template <class O>
__device__ __forceinline__ float gemm_value(const O *c, const O *bias, const O *mask, size_t at,
                                            int col, float acc, float alpha, float beta,
                                            int epilogue) {
  float v = alpha * acc;
  if (beta != 0.0f) v += beta * to_float(c[at]);
  if (epilogue & gemm_bias) v += to_float(bias[col]);
  if (epilogue & gemm_relu) v = v < 0.0f ? 0.0f : v;
  if (epilogue & gemm_relu_mask) v = to_float(mask[at]) > 0.0f ? v : 0.0f;
  return v;
}

/* That element stored as O. */
template <class O>
__device__ __forceinline__ void gemm_store(O *c, const O *bias, const O *mask, size_t at, int col,
                                           float acc, float alpha, float beta, int epilogue) {
  c[at] = from_float<O>(gemm_value<O>(c, bias, mask, at, col, acc, alpha, beta, epilogue));
}

template <class T, class O, int EPILOGUE>
__device__ __forceinline__ void gemm_simt(const T *a, const T *b, O *c, const O *bias,
                                          const O *mask, int m, int n, int k, int trans_a,
                                          int trans_b, float alpha, float beta) {
  __shared__ gemm_smem s;
  /* Thread (tx, ty) owns rows ty + 16 i and columns tx + 16 j of the tile: a warp then reads 2
  ** addresses of A's tile (broadcasts) and 16 consecutive ones of B's per step, without bank
  ** conflicts, and its stores to C are runs of 16 consecutive elements. */
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long col0 = (long long)blockIdx.x * gemm_tile_n;
  const long long row_tiles = ((long long)m + gemm_tile_m - 1) / gemm_tile_m;
  for (long long tile = blockIdx.y; tile < row_tiles; tile += gridDim.y) {
    const long long row0 = tile * gemm_tile_m;
    float acc[gemm_per_thread][gemm_per_thread];
#pragma unroll
    for (int i = 0; i < gemm_per_thread; i++)
#pragma unroll
      for (int j = 0; j < gemm_per_thread; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < k; k0 += gemm_tile_k) {
      gemm_load_tile<gemm_tile_m>(s.a_tile, a, row0, k0, m, k, trans_a != 0);
      gemm_load_tile<gemm_tile_n>(s.b_tile, b, col0, k0, n, k, trans_b == 0);
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < gemm_tile_k; kk++) {
        float av[gemm_per_thread], bv[gemm_per_thread];
#pragma unroll
        for (int i = 0; i < gemm_per_thread; i++) av[i] = s.a_tile[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < gemm_per_thread; j++) bv[j] = s.b_tile[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < gemm_per_thread; i++)
#pragma unroll
          for (int j = 0; j < gemm_per_thread; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
      __syncthreads(); /* the tiles are refilled next step */
    }
#pragma unroll
    for (int i = 0; i < gemm_per_thread; i++) {
      long long row = row0 + ty + 16 * i;
      if (row >= m) continue;
#pragma unroll
      for (int j = 0; j < gemm_per_thread; j++) {
        long long col = col0 + tx + 16 * j;
        if (col < n)
          gemm_store<O>(c, bias, mask, (size_t)row * (size_t)n + (size_t)col, (int)col,
                        acc[i][j], alpha, beta, EPILOGUE);
      }
    }
  }
}

} // namespace cujit
