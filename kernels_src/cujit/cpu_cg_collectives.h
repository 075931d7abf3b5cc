/*
** cujit/cpu_cg_collectives.h -- what runs over a cooperative group on the CPU device: the
** reductions of <cooperative_groups/reduce.h>, the scans of <cooperative_groups/scan.h> (over a
** tile or a coalesced group, each the GPU's own order of combining, so floating-point results
** match) and <cooperative_groups/memcpy_async.h>'s copies. Included only at the end of cpu_cg.h,
** over its groups and its CJ_CG_AT.
*/
#pragma once

#ifndef CJ_CG_AT
#error "cujit/cpu_cg_collectives.h is included by cujit/cpu_cg.h only"
#endif

namespace cooperative_groups {

/* --- reductions (<cooperative_groups/reduce.h>) ------------------------------------------------
 */
template <class T> struct plus {
  T operator()(T a, T b) const {
    return a + b;
  }
};
template <class T> struct less {
  T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};
template <class T> struct greater {
  T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};
template <class T> struct bit_and {
  T operator()(T a, T b) const {
    return a & b;
  }
};
template <class T> struct bit_or {
  T operator()(T a, T b) const {
    return a | b;
  }
};
template <class T> struct bit_xor {
  T operator()(T a, T b) const {
    return a ^ b;
  }
};

/* A tile: the butterfly the GPU's runs for every type and operator (its integer redux.sync gives
** the same result, the six operators being associative and commutative): lane r combines its
** value with lane r ^ m's for m = N/2, ..., 1, the own value first. */
template <unsigned N, class P, class T, class Op>
static inline auto reduce(const thread_block_tile<N, P> &g, T val, Op op, CJ_CG_AT)
    -> decltype(op(val, val)) {
  (void)g;
  decltype(op(val, val)) out = val;
  for (unsigned m = N >> 1; m > 0; m >>= 1)
    out = op(out, thread_block_tile<N, P>::shfl_xor(out, m, file, line));
  return out;
}
/* The inclusive scan of the GPU's headers, over the ranks of a tile or a coalesced group: rank r
** combines its value with rank r - i's for i = 1, 2, 4, ... (its own value first). */
template <class R, class Op>
static inline R scan_ranks(unsigned mask, R out, Op &op, const char *file, int line,
                           const char *what) {
  unsigned rank = (unsigned)__builtin_popcount(mask & ::cj_cpu::cg::lanes_below());
  unsigned size = (unsigned)__builtin_popcount(mask);
  for (unsigned i = 1; i < size; i <<= 1) {
    unsigned src = i <= rank ? ::cj_cpu::cg::lane_of_rank(mask, rank - i) : ::cj_cpu::cg::lane();
    R got = ::cj_cpu::cg::shuffle(file, line, what, mask, out, ::cj_cpu::S_IDX, src, 32);
    if (i <= rank) out = op(out, got);
  }
  return out;
}
/* A coalesced group: of 32 lanes, the butterfly; of fewer, the scan above and the last rank's
** result to all. */
template <class T, class Op>
static inline auto reduce(const coalesced_group &g, T val, Op op, CJ_CG_AT)
    -> decltype(op(val, val)) {
  decltype(op(val, val)) out = val;
  unsigned mask = g.mask_of_group();
  if (g.size() == 32) {
    for (unsigned m = 16; m > 0; m >>= 1)
      out = op(out, ::cj_cpu::cg::shuffle(file, line, "cooperative_groups::reduce", mask, out,
                                          ::cj_cpu::S_XOR, m, 32));
    return out;
  }
  out = scan_ranks(mask, out, op, file, line, "cooperative_groups::reduce");
  return ::cj_cpu::cg::shuffle(file, line, "cooperative_groups::reduce", mask, out, ::cj_cpu::S_IDX,
                               31u - (unsigned)__builtin_clz(mask), 32);
}

/* --- scans (<cooperative_groups/scan.h>) over a tile or a coalesced group ----------------------
 */
template <class G, class T, class Op>
static inline auto scan_of(const G &g, T val, Op &op, bool exclusive, const char *file, int line)
    -> decltype(op(val, val)) {
  typedef decltype(op(val, val)) R;
  unsigned mask = g.mask_of_group();
  R out = scan_ranks(mask, (R)val, op, file, line, "cooperative_groups::scan");
  if (!exclusive) return out;
  /* As the GPU's: an integer sum less the own value; else the rank below's, and R{} for rank 0. */
  if (std::is_integral<T>::value && std::is_same<Op, plus<T>>::value) return out - val;
  unsigned rank = (unsigned)g.thread_rank();
  unsigned src = rank ? ::cj_cpu::cg::lane_of_rank(mask, rank - 1) : ::cj_cpu::cg::lane();
  R below = ::cj_cpu::cg::shuffle(file, line, "cooperative_groups::scan", mask, out,
                                  ::cj_cpu::S_IDX, src, 32);
  return rank ? below : R{};
}
template <unsigned N, class P, class T, class Op = plus<T>>
static inline auto inclusive_scan(const thread_block_tile<N, P> &g, T val, Op op = Op(), CJ_CG_AT)
    -> decltype(op(val, val)) {
  return scan_of(g, val, op, false, file, line);
}
template <unsigned N, class P, class T, class Op = plus<T>>
static inline auto exclusive_scan(const thread_block_tile<N, P> &g, T val, Op op = Op(), CJ_CG_AT)
    -> decltype(op(val, val)) {
  return scan_of(g, val, op, true, file, line);
}
template <class T, class Op = plus<T>>
static inline auto inclusive_scan(const coalesced_group &g, T val, Op op = Op(), CJ_CG_AT)
    -> decltype(op(val, val)) {
  return scan_of(g, val, op, false, file, line);
}
template <class T, class Op = plus<T>>
static inline auto exclusive_scan(const coalesced_group &g, T val, Op op = Op(), CJ_CG_AT)
    -> decltype(op(val, val)) {
  return scan_of(g, val, op, true, file, line);
}

template <class... A> static inline void reduce_update_async(A &&...) {
  static_assert(::cj_cpu::cg::unsupported<void(A...)>::value,
                "cooperative_groups::reduce_update_async is not supported on the CPU device: use "
                "cooperative_groups::reduce and an atomic");
}
template <class... A> static inline void reduce_store_async(A &&...) {
  static_assert(::cj_cpu::cg::unsupported<void(A...)>::value,
                "cooperative_groups::reduce_store_async is not supported on the CPU device: use "
                "cooperative_groups::reduce and a store");
}

/* --- memcpy_async (<cooperative_groups/memcpy_async.h>): a plain copy, each thread of the group
** copying its share, then wait() is the group's sync ------------------------------------------- */
template <class G>
static inline void memcpy_async(const G &g, void *dst, const void *src, size_t bytes) {
  size_t n = (size_t)g.num_threads(), r = (size_t)g.thread_rank(), share = (bytes + n - 1) / n;
  size_t lo = r * share < bytes ? r * share : bytes, hi = lo + share < bytes ? lo + share : bytes;
  if (hi > lo) memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
}
template <class G, class T>
static inline void memcpy_async(const G &g, T *dst, size_t dst_count, const T *src,
                                size_t src_count) {
  memcpy_async(g, (void *)dst, (const void *)src,
               (dst_count < src_count ? dst_count : src_count) * sizeof(T));
}
template <class G> static inline void wait(const G &g, CJ_CG_AT) {
  g.sync(file, line);
}
template <unsigned Stages, class G> static inline void wait_prior(const G &g, CJ_CG_AT) {
  g.sync(file, line);
}

} // namespace cooperative_groups
