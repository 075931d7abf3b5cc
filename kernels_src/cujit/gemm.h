/*
** cujit/gemm.h -- a portable tiled GEMM for one thread block: C = epilogue(alpha * op(A) op(B) +
** beta * C) over row-major arrays, on CUDA cores (SIMT), for any GPU and the CPU device. It is
** the kernel behind cujit_gemm (engine/core/program/gemm.c), and user kernels may call it too.
**
**   cujit::gemm_simt<T, O, EPILOGUE, TILE>(a, b, c, bias, mask, m, n, k, trans_a, trans_b, alpha,
**                                          beta)
**     run by every thread of a block of cujit::gemm_threads (256) threads, on a grid of
**     (ceil(n / TILE), any y): block (x, y) computes the TILE x TILE tiles of C in column x, rows
**     y, y + gridDim.y, ... (so an m past 65535 tiles needs no larger grid).
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
**   TILE  the side of a block's tile of C: 64 (gemm_tile_n, the default) or 128 (gemm_tile_wide:
**         four times the work per block, for products with enough tiles to fill the GPU).
** With beta == 0 C is not read, as in BLAS: whatever C held (NaN included) does not show.
**
** Each thread keeps (TILE / 16)^2 elements of C in registers (8 x 8 for the 128 tile, 4 x 4 for
** the 64 one) as 4 x 4 groups 64 rows and columns apart: thread (tx, ty) of the 16 x 16 owns rows
** ty * 4 .. + 3 and columns tx * 4 .. + 3 of each 64 x 64 quarter. Per step along k (8 for the
** 128 tile, 16 for the 64: either way each thread loads 4 elements of each operand per step) the
** block stages a TILE-wide slice of op(A) and of op(B) in shared memory as float (zero past the
** edges of the matrices, so no shape need be a multiple of the tile), both stored k-major, so a
** thread reads its 4 rows of A and 4 columns of B for one k as one 16-byte load each: per k, the
** 128 tile does 64 FMAs per 4 such loads. Shared memory is double-buffered: the next step's
** elements are loaded from global memory into registers before this step's FMAs and stored after
** them, so their latency hides behind the arithmetic and one barrier per step suffices.
** Each thread's 4 loaded elements are consecutive along the array's contiguous dimension (k for a
** plain A, m for a transposed one), so a warp's loads are coalesced either way; they are one
** 16-byte (f32) or 8-byte load where the array is aligned to that and its contiguous dimension is
** a multiple of 4 (checked here, per operand), else 4 scalar loads. Steps whose slices lie inside
** the matrices load without bounds checks; only the edge tiles check each element. A tile inside
** C whose operands both allow those loads takes one branch a step (the general load's chain of
** them cost some 15 % of the 128 tile's speed on an H200), and the staging stores carry no branch
** (below), so the compiler mixes them into the FMAs.
** The tensor-core path of sm_90 (wgmma and TMA) is cujit::gemm_tc of <cujit/gemm_tc.h>, behind
** the same host call; this one is the path every device has.
*/
#pragma once
#include <cujit/bf16.h>
#include <cujit/half.h>

namespace cujit {

enum gemm_epilogue { gemm_bias = 1, gemm_relu = 2, gemm_relu_mask = 4 };

enum {
  gemm_tile_m = 64, /* the default tile of C (TILE = 64) */
  gemm_tile_n = 64,
  gemm_tile_k = 16, /* its step along k */
  gemm_tile_wide = 128,
  gemm_threads = 256,
  gemm_per_thread = 4, /* rows and columns of C per thread of the default tile: 64 / 16 */
};

/* The sizes that follow from a tile side. */
template <int TILE> struct gemm_shape {
  static_assert(TILE == 64 || TILE == 128, "cujit::gemm_simt: TILE is 64 or 128");
  enum {
    bk = 1024 / TILE,  /* the step along k: TILE * bk / 4 = 256 threads load 4 elements each */
    per = TILE / 16,   /* rows (and columns) of C per thread */
    groups = per / 4,  /* its 4 x 4 groups per dimension, 64 apart */
    pitch = TILE + 4,  /* a shared row: whole 16-byte units, and 4 banks of skew (below) */
    loaders = TILE / 4 /* threads along a k-major slice's row */
  };
};

/* One 16-byte (float) or 8-byte (half types) unit of 4 elements, read with one load. */
template <class T> struct alignas(4 * sizeof(T)) gemm_quad { T v[4]; };

/* What one thread loads of one operand per step: 4 elements along the array's contiguous
** dimension, and where they go in the shared slice. */
template <class T> struct gemm_loader {
  const T *p;        /* the first element at k step 0 (in bounds or not: read only when it is) */
  long long advance; /* elements a k step moves it */
  int o_left;        /* how many of the outer indices it reads are inside (1 or 4 on, <= 0 none) */
  int k_at;          /* its first k at step 0 */
  int kk, o;         /* where the elements go in the slice: [kk][o] */
  bool k_major, vec; /* the array's rows are k; one 16- or 8-byte load is allowed */
};

/* The loader of an operand that is op = outer x k (A, outer = m) or k x outer (B, outer = n),
** stored k-major (its rows are k: a transposed A, a plain B) or not, for the tile starting at
** outer index o0. k-major: consecutive threads take consecutive quads of a row of the slice, so
** of the array; otherwise bk / 4 threads share a row of the array (each takes 4 k's of it). */
template <int TILE, class T>
__device__ __forceinline__ gemm_loader<T> gemm_loader_at(const T *x, long long o0, long long outer,
                                                         int k, bool k_major) {
  typedef gemm_shape<TILE> S;
  const int e = (int)threadIdx.x;
  gemm_loader<T> l;
  l.k_major = k_major;
  long long o_at;
  if (k_major) {
    l.kk = e / S::loaders, l.o = e % S::loaders * 4;
    o_at = o0 + l.o, l.k_at = l.kk;
    l.p = x + ((size_t)l.k_at * (size_t)outer + (size_t)o_at);
    l.advance = (long long)S::bk * outer;
  } else {
    l.o = e / (S::bk / 4), l.kk = e % (S::bk / 4) * 4;
    o_at = o0 + l.o, l.k_at = l.kk;
    l.p = x + ((size_t)o_at * (size_t)k + (size_t)l.k_at);
    l.advance = S::bk;
  }
  const long long left = outer - o_at;
  l.o_left = left > 4 ? 4 : (int)(left < 0 ? 0 : left);
  /* whole quads stay inside a row when its length is a multiple of 4 (quads start at multiples
  ** of 4), and aligned when the array's start is */
  const long long row_length = k_major ? outer : k;
  l.vec = row_length % 4 == 0 && (unsigned long long)x % sizeof(gemm_quad<T>) == 0;
  return l;
}

/* The thread's 4 elements of k step `step` into r, as loaded: 0 past either edge of the array.
** `inside`: the whole slice lies inside the array (an interior step), so nothing is checked. */
template <int BK, class T>
__device__ __forceinline__ void gemm_load(gemm_quad<T> &r, const gemm_loader<T> &l, long long step,
                                          int k, bool inside) {
  const T *p = l.p + step * l.advance;
  const long long k_at = l.k_at + step * BK;
  /* all 4 inside: along outer when k-major (k_at is theirs), else along k */
  if (inside || (l.k_major ? l.o_left == 4 && k_at < k : l.o_left > 0 && k_at + 3 < k)) {
    if (l.vec) {
      r = *reinterpret_cast<const gemm_quad<T> *>(p);
    } else {
#pragma unroll
      for (int j = 0; j < 4; j++) r.v[j] = p[j];
    }
  } else {
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const bool in = l.k_major ? j < l.o_left && k_at < k : l.o_left > 0 && k_at + j < k;
      r.v[j] = in ? p[j] : from_float<T>(0.0f);
    }
  }
}

/* The loaded elements into the k-major slice s[kk][o]: along o when they run along o (a k-major
** array), else down a column. Four scalar stores at a stride of 1 or `pitch` either way, with no
** branch: so the compiler may interleave them with the step's FMAs (a branch here would leave them
** after the FMAs, right before the barrier, where their latency shows). Down a column they are
** conflict-free in the 128 tile: the pitch's skew of 4 banks per row puts the two k quads of a
** warp's 16 rows on banks 0-15 and 16-31 (the 64 tile's four k quads meet in pairs: 2-way, on a
** step twice as long); along a row they meet 4-way, a few cycles a step. */
template <int TILE, class T>
__device__ __forceinline__ void gemm_stage(float (*s)[gemm_shape<TILE>::pitch],
                                           const gemm_loader<T> &l, const gemm_quad<T> &r) {
  float *const at = &s[l.kk][l.o];
  const int stride = l.k_major ? 1 : gemm_shape<TILE>::pitch;
#pragma unroll
  for (int j = 0; j < 4; j++) at[j * stride] = to_float(r.v[j]);
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

/* The thread's 4 values of one k at `at` of a slice row (its group's first), into v[4 g ..]. */
__device__ __forceinline__ void gemm_read4(float *v, const float *at) {
  const float4 q = *reinterpret_cast<const float4 *>(at);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

template <class T, class O, int EPILOGUE, int TILE = gemm_tile_n>
__device__ __forceinline__ void gemm_simt(const T *a, const T *b, O *c, const O *bias,
                                          const O *mask, int m, int n, int k, int trans_a,
                                          int trans_b, float alpha, float beta) {
  typedef gemm_shape<TILE> S;
  enum { BK = S::bk, PER = S::per, PITCH = S::pitch };
  /* [buffer][k][row of A or column of B]; rows of whole 16-byte units, so aligned float4s */
  __shared__ __align__(16) float a_tile[2][BK][PITCH];
  __shared__ __align__(16) float b_tile[2][BK][PITCH];
  /* thread (tx, ty) of the 16 x 16; a warp is 8 x 4 of them, so that its reads of one k are 4
  ** float4s of A and 8 of B, one shared-memory wavefront each (16 x 2 takes 2 for B's 16) */
  const int warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;
  const int tx = warp % 2 * 8 + lane % 8, ty = warp / 2 * 4 + lane / 8;
  const long long col0 = (long long)blockIdx.x * TILE;
  const long long row_tiles = ((long long)m + TILE - 1) / TILE;
  /* k / BK whole steps and a partial one; counted so that k near INT_MAX does not overflow */
  const long long steps = k / BK + (k % BK != 0);
  const bool b_inside_n = col0 + TILE <= n;
  const gemm_loader<T> lb = gemm_loader_at<TILE>(b, col0, n, k, trans_b == 0);
  for (long long tile = blockIdx.y; tile < row_tiles; tile += gridDim.y) {
    const long long row0 = tile * TILE;
    const bool a_inside_m = row0 + TILE <= m;
    const gemm_loader<T> la = gemm_loader_at<TILE>(a, row0, m, k, trans_a != 0);
    float acc[PER][PER];
#pragma unroll
    for (int i = 0; i < PER; i++)
#pragma unroll
      for (int j = 0; j < PER; j++) acc[i][j] = 0.0f;
    /* every step of this tile loads whole quads without checks (1 branch a step, not the
    ** general load's chain of them): it lies inside C and both operands allow quads */
    const bool plain = a_inside_m && b_inside_n && la.vec && lb.vec;
    gemm_quad<T> ra, rb; /* as loaded: converted to float when staged (half the registers) */
    bool whole = (long long)BK <= k; /* step 0's slices reach no further than k */
    gemm_load<BK>(ra, la, 0, k, a_inside_m && whole);
    gemm_load<BK>(rb, lb, 0, k, b_inside_n && whole);
    gemm_stage<TILE>(a_tile[0], la, ra);
    gemm_stage<TILE>(b_tile[0], lb, rb);
    __syncthreads();
    for (long long step = 0; step < steps; step++) {
      const int buf = (int)(step & 1);
      const bool more = step + 1 < steps;
      if (more) { /* the next step's elements, in flight during this step's FMAs */
        whole = (step + 2) * BK <= (long long)k;
        if (plain && whole) {
          ra = *reinterpret_cast<const gemm_quad<T> *>(la.p + (step + 1) * la.advance);
          rb = *reinterpret_cast<const gemm_quad<T> *>(lb.p + (step + 1) * lb.advance);
        } else {
          gemm_load<BK>(ra, la, step + 1, k, a_inside_m && whole);
          gemm_load<BK>(rb, lb, step + 1, k, b_inside_n && whole);
        }
      }
#pragma unroll
      for (int kk = 0; kk < BK; kk++) {
        float av[PER], bv[PER];
#pragma unroll
        for (int g = 0; g < S::groups; g++) {
          gemm_read4(av + 4 * g, &a_tile[buf][kk][64 * g + 4 * ty]);
          gemm_read4(bv + 4 * g, &b_tile[buf][kk][64 * g + 4 * tx]);
        }
#pragma unroll
        for (int i = 0; i < PER; i++)
#pragma unroll
          for (int j = 0; j < PER; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
      }
      if (more) {
        /* the other buffer was last read in the step before this one, which every thread has
        ** finished: it passed the barrier below */
        gemm_stage<TILE>(a_tile[buf ^ 1], la, ra);
        gemm_stage<TILE>(b_tile[buf ^ 1], lb, rb);
      }
      __syncthreads(); /* the staged step is complete, and this one's buffer free to refill */
    }
    /* Addressed through pointers to the thread's first element of C, the mask and the bias, so
    ** that its others are those plus constants (and a multiple of n per row): few registers
    ** beside the sums (the 128 tile's kernel has 128, for two blocks per multiprocessor), where
    ** indices of 64 bits per element spill. */
    const long long row_t = row0 + 4 * ty, col_t = col0 + 4 * tx;
    /* how many of its rows and columns (64 + 4 at most) are inside C, in 32 bits */
    const int rows_left = (int)(m - row_t < TILE ? m - row_t : TILE);
    const int cols_left = (int)(n - col_t < TILE ? n - col_t : TILE);
    const size_t at0 = (size_t)row_t * (size_t)n + (size_t)col_t;
    O *const c_t = c + at0;
    const O *const mask_t = EPILOGUE & gemm_relu_mask ? mask + at0 : mask;
    const O *const bias_t = EPILOGUE & gemm_bias ? bias + col_t : bias;
#pragma unroll
    for (int i = 0; i < PER; i++) {
      const int dr = 64 * (i / 4) + i % 4;
      if (dr >= rows_left) continue;
      const size_t row_at = (size_t)dr * (size_t)n;
#pragma unroll
      for (int j = 0; j < PER; j++) {
        const int dc = 64 * (j / 4) + j % 4;
        if (dc < cols_left)
          gemm_store<O>(c_t + row_at, bias_t, EPILOGUE & gemm_relu_mask ? mask_t + row_at : mask_t,
                        dc, dc, acc[i][j], alpha, beta, EPILOGUE);
      }
    }
  }
}

} // namespace cujit
