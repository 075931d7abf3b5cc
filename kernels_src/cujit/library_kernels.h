/*
** cujit/library_kernels.h -- the kernels behind the host library calls (cujit_reduce, cujit_dot,
** cujit_random_uniform, cujit_random_normal), and the helpers of the kernels that
** cujit_elementwise_define generates. Internal: engine/core/program/library.c compiles it once per
** engine and element type, defining the types below first; user code has no reason to include it.
**
**   CJ_REDUCE  defined for the reduction program, with
**     CJ_T       the element type;
**     CJ_SUM     the sum accumulator: double for floating types, long long or unsigned long long
**                for integers (so integer sums are exact, modulo 2^64);
**     CJ_MM      the min/max type: CJ_T, widened to float or int where shuffles need it;
**     CJ_MM_MAX, CJ_MM_LOWEST  the identities of min and max in CJ_MM;
**   CJ_RANDOM  defined for the random-fill program;
**   CJ_ELEMENTWISE  defined in the preamble of every generated elementwise kernel.
** Every kernel takes void pointers and 64-bit counts, so its signature is the same for every type;
** the extern "C" kernels themselves are written by library.c into the translation unit.
*/
#pragma once
#include <cujit/grid.h>

#ifdef CJ_REDUCE
#include <cujit/half.h>
#include <cujit/reduce.h>

typedef CJ_T cj_t;
typedef CJ_SUM cj_sum_t;
typedef CJ_MM cj_mm_t;

/* Loads go 16 bytes at a time where the arrays start on 16 bytes (buffers do: cuMemAlloc gives 256),
** and the few elements past the last whole vector are picked up one each by the first threads. A
** view may start anywhere (a slice of an f32 array 4 bytes in): a 16-byte load there faults on a
** GPU (misaligned address), so such an array goes one element at a time. */
enum { cj_vec_n = 16 / sizeof(cj_t) };
struct __align__(16) cj_vec {
  cj_t v[cj_vec_n];
};

template <bool DOT, class A> __device__ __forceinline__ A cj_term(cj_t a, cj_t b) {
  return DOT ? (A)a * (A)b : (A)a;
}

template <bool DOT, class A, class Op>
__device__ __forceinline__ A cj_fold_vec(A acc, const cj_vec &a, const cj_vec &b, Op op) {
#pragma unroll
  for (int k = 0; k < cj_vec_n; k++) acc = op(acc, cj_term<DOT, A>(a.v[k], b.v[k]));
  return acc;
}

/* This thread's share of x[0, n) (times y when DOT), folded into acc: four independent vector
** loads in flight per array per iteration, so the memory system stays busy. */
template <bool DOT, class A, class Op>
__device__ __forceinline__ A cj_fold(const cj_t *x, const cj_t *y, unsigned long long n, A acc,
                                     Op op) {
  unsigned long long stride = cujit::gridsize1(), i = cujit::grid1();
  if ((((unsigned long long)x | (DOT ? (unsigned long long)y : 0ull)) & 15ull) != 0) {
    for (; i < n; i += stride) acc = op(acc, cj_term<DOT, A>(x[i], DOT ? y[i] : x[i]));
    return acc;
  }
  const cj_vec *xv = (const cj_vec *)x, *yv = (const cj_vec *)(DOT ? y : x);
  unsigned long long nvec = n / cj_vec_n;
  for (; i + 3 * stride < nvec; i += 4 * stride) {
    cj_vec a0 = xv[i], a1 = xv[i + stride], a2 = xv[i + 2 * stride], a3 = xv[i + 3 * stride];
    cj_vec b0 = a0, b1 = a1, b2 = a2, b3 = a3;
    if (DOT) b0 = yv[i], b1 = yv[i + stride], b2 = yv[i + 2 * stride], b3 = yv[i + 3 * stride];
    acc = cj_fold_vec<DOT>(acc, a0, b0, op);
    acc = cj_fold_vec<DOT>(acc, a1, b1, op);
    acc = cj_fold_vec<DOT>(acc, a2, b2, op);
    acc = cj_fold_vec<DOT>(acc, a3, b3, op);
  }
  for (; i < nvec; i += stride) {
    cj_vec a = xv[i], b = a;
    if (DOT) b = yv[i];
    acc = cj_fold_vec<DOT>(acc, a, b, op);
  }
  unsigned long long t = nvec * cj_vec_n + cujit::grid1();
  if (t < n) acc = op(acc, cj_term<DOT, A>(x[t], DOT ? y[t] : x[t]));
  return acc;
}

/* Stage 1: one partial per block; a grid of one block (a small array) writes the 8-byte result
** itself, where stage 2 would, so the reduction is one launch. */
template <bool DOT, class A, class Op>
__device__ __forceinline__ void cj_stage1(const void *x, const void *y, unsigned long long n,
                                          void *partials, A identity, Op op) {
  A acc = cj_fold<DOT>((const cj_t *)x, (const cj_t *)y, n, identity, op);
  acc = cujit::block_reduce(acc, op);
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1)
    *(cj_sum_t *)partials = (cj_sum_t)acc;
  else
    ((A *)partials)[blockIdx.x] = acc;
}

/* Stage 2: one block folds the partials and writes the 8-byte result. */
template <class A, class Op>
__device__ __forceinline__ void cj_stage2(const void *partials, unsigned long long count, void *out,
                                          A identity, Op op) {
  const A *p = (const A *)partials;
  A acc = identity;
  for (unsigned long long i = threadIdx.x; i < count; i += blockDim.x) acc = op(acc, p[i]);
  acc = cujit::block_reduce(acc, op);
  if (threadIdx.x == 0) *(cj_sum_t *)out = (cj_sum_t)acc;
}

/* The kernels' bodies; library.c writes the extern "C" kernels around them in the translation
** unit itself, where cujit reads kernel signatures. */
__device__ __forceinline__ void cj_sum_body(const void *x, unsigned long long n, void *partials) {
  cj_stage1<false>(x, x, n, partials, (cj_sum_t)0, cujit::op_sum());
}
__device__ __forceinline__ void cj_dot_body(const void *x, const void *y, unsigned long long n,
                                            void *partials) {
  cj_stage1<true>(x, y, n, partials, (cj_sum_t)0, cujit::op_sum());
}
__device__ __forceinline__ void cj_min_body(const void *x, unsigned long long n, void *partials) {
  cj_stage1<false>(x, x, n, partials, (cj_mm_t)(CJ_MM_MAX), cujit::op_min());
}
__device__ __forceinline__ void cj_max_body(const void *x, unsigned long long n, void *partials) {
  cj_stage1<false>(x, x, n, partials, (cj_mm_t)(CJ_MM_LOWEST), cujit::op_max());
}
__device__ __forceinline__ void cj_sum_final_body(const void *partials, unsigned long long count,
                                                  void *out) {
  cj_stage2(partials, count, out, (cj_sum_t)0, cujit::op_sum());
}
__device__ __forceinline__ void cj_min_final_body(const void *partials, unsigned long long count,
                                                  void *out) {
  cj_stage2(partials, count, out, (cj_mm_t)(CJ_MM_MAX), cujit::op_min());
}
__device__ __forceinline__ void cj_max_final_body(const void *partials, unsigned long long count,
                                                  void *out) {
  cj_stage2(partials, count, out, (cj_mm_t)(CJ_MM_LOWEST), cujit::op_max());
}
#endif /* CJ_REDUCE */

#ifdef CJ_RANDOM
#include <cujit/random.h>

/* Element k of the output is element offset + k of the stream (stream 0). A thread makes one
** Philox block, and stores it whole when it lies inside the output at a 16-byte aligned address,
** else element by element: a view (cujit_buffer_view, Lua's a:slice) need only be aligned to its
** element, and a 16-byte store there faults (misaligned address on a GPU, SIGSEGV on the CPU
** device). Positions are compared as c - offset < n: offset + n is 2^64, which wraps to 0, for a
** fill that ends at the generator's last counter, which library.c accepts. */
__device__ __forceinline__ bool cj_fill_aligned(const void *p) {
  return ((unsigned long long)p & 15) == 0;
}

__device__ __forceinline__ void cj_fill_f32_body(void *out, unsigned long long n,
                                                 unsigned long long seed, unsigned long long offset,
                                                 int normal, double mean, double std) {
  float *o = (float *)out;
  float fm = (float)mean, fs = (float)std;
  unsigned long long first = offset >> 2, last = (offset + n - 1) >> 2;
  for (unsigned long long b = first + cujit::grid1(); b <= last; b += cujit::gridsize1()) {
    float4 v = normal ? cujit::normal_float4(seed, b) : cujit::uniform_float4(seed, b);
    if (normal) v = make_float4(fm + fs * v.x, fm + fs * v.y, fm + fs * v.z, fm + fs * v.w);
    unsigned long long c = b << 2;
    if (c >= offset && c - offset + 3 < n && cj_fill_aligned(o + (c - offset))) {
      *(float4 *)(o + (c - offset)) = v;
    } else {
      float w[4] = {v.x, v.y, v.z, v.w};
      for (int k = 0; k < 4; k++)
        if (c + k >= offset && c + k - offset < n) o[c + k - offset] = w[k];
    }
  }
}

__device__ __forceinline__ void cj_fill_f64_body(void *out, unsigned long long n,
                                                 unsigned long long seed, unsigned long long offset,
                                                 int normal, double mean, double std) {
  double *o = (double *)out;
  unsigned long long first = offset >> 1, last = (offset + n - 1) >> 1;
  for (unsigned long long b = first + cujit::grid1(); b <= last; b += cujit::gridsize1()) {
    double2 v = normal ? cujit::normal_double2(seed, b) : cujit::uniform_double2(seed, b);
    if (normal) v = make_double2(mean + std * v.x, mean + std * v.y);
    unsigned long long c = b << 1;
    if (c >= offset && c - offset + 1 < n && cj_fill_aligned(o + (c - offset))) {
      *(double2 *)(o + (c - offset)) = v;
    } else {
      if (c >= offset && c - offset < n) o[c - offset] = v.x;
      if (c + 1 >= offset && c + 1 - offset < n) o[c + 1 - offset] = v.y;
    }
  }
}
#endif /* CJ_RANDOM */

#ifdef CJ_ELEMENTWISE
/* A generated elementwise kernel moves every array cj_ew_width elements at a time: as many as fit
** 16 bytes of its widest element type, so the widest arrays go as one 16-byte load or store per
** thread per step (ld.global.v4.f32 for float) and narrower ones as 8, 4 or 2 bytes. Fewer, wider
** memory instructions are what lift a streaming kernel from ~88% to the copy bandwidth. */
template <class T> __host__ __device__ constexpr int cj_ew_max_size() {
  return (int)sizeof(T);
}
template <class T, class U, class... R> __host__ __device__ constexpr int cj_ew_max_size() {
  return (int)sizeof(T) > cj_ew_max_size<U, R...>() ? (int)sizeof(T) : cj_ew_max_size<U, R...>();
}
template <class... T> __host__ __device__ constexpr int cj_ew_width() {
  return 16 / cj_ew_max_size<T...>() > 1 ? 16 / cj_ew_max_size<T...>() : 1;
}

/* W consecutive elements, aligned as a whole so that a copy of one is a single vector access. */
template <class T, int W> struct alignas(sizeof(T) * W) cj_ew_pack { T v[W]; };

/* Whether p may be read or written as packs of W: buffers from cuMemAlloc always can, but a raw
** device address (CUJIT_ARG_DEVPTR) may point into the middle of one. */
template <int W, class T> __device__ __forceinline__ bool cj_ew_aligned(const T *p) {
  return ((unsigned long long)p & (sizeof(T) * W - 1)) == 0;
}
#endif /* CJ_ELEMENTWISE */
