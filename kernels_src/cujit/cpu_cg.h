/*
** cujit/cpu_cg.h -- cooperative groups on the CPU device: what <cooperative_groups.h>,
** <cooperative_groups/reduce.h>, <cooperative_groups/scan.h> and
** <cooperative_groups/memcpy_async.h> give device code (cpu_source.c maps those headers here),
** written over the executor's barrier and warp operations (cpu_sync.h, cpu_warp.h). This file has
** the groups: the block, the grid, the cluster, coalesced groups, tiles and partitions; what runs
** over a group (reductions, scans, memcpy_async) is in cpu_cg_collectives.h, included at its end.
** Tiles are consecutive lanes of a warp, as on the GPU; every tile or coalesced-group operation is
** one warp operation over the group's lanes (its member mask), so lanes of different groups never
** meet. Results match the GPU's, the order of floating-point reductions included (docs/cpu.md,
** "Cooperative groups"). What is not here is refused, naming it: at compile time by a
** static_assert, or at run time (grid_group::sync outside a cooperative launch) by a launch error.
*/
#pragma once

#include <cujit/cpu_prelude.h>

namespace cj_cpu {
namespace cg {

/* The calling CUDA thread's linear rank in its block, and its lane. */
static inline unsigned rank() {
  return current(me()->ex);
}
static inline unsigned lane() {
  return rank() & 31u;
}
static inline unsigned lanes_below() {
  return (1u << lane()) - 1u;
}
/* The mask of a tile of n lanes (a power of two up to 32) holding this lane. */
static inline unsigned tile_mask(unsigned n) {
  return n >= 32 ? ~0u : ((1u << n) - 1u) << (lane() & ~(n - 1u));
}
/* Bit r of the result: bit of `bits` at the lane of rank r in `mask` (the lanes, packed). */
static inline unsigned pack(unsigned bits, unsigned mask) {
  unsigned r = 0, k = 0;
  for (unsigned l = 0; l < 32; l++)
    if (mask >> l & 1u) r |= (bits >> l & 1u) << k++;
  return r;
}
/* The lane of rank r in `mask`, or 32 when it has fewer lanes. */
static inline unsigned lane_of_rank(unsigned mask, unsigned r) {
  for (unsigned l = 0; l < 32; l++)
    if ((mask >> l & 1u) && r-- == 0) return l;
  return 32;
}

/* A shuffle of a value of any trivially copyable type: one warp operation per 8 bytes, as the
** GPU's moves a larger value 4 bytes at a time. */
template <class T>
static inline T shuffle(const char *file, int line, const char *what, unsigned mask, const T &v,
                        int kind, unsigned arg, int width) {
  static_assert(std::is_trivially_copyable<T>::value,
                "cooperative groups' shuffles take trivially copyable values");
  enum { words = (sizeof(T) + 7) / 8 };
  unsigned long long in[words] = {}, out[words];
  memcpy(in, &v, sizeof(T));
  for (int k = 0; k < words; k++)
    out[k] = warp_op(file, line, what, mask, in[k], kind, arg, width, 0).value;
  T r;
  memcpy(&r, out, sizeof(T));
  return r;
}
static inline warp_result vote(const char *file, int line, const char *what, unsigned mask,
                               int pred) {
  return warp_op(file, line, what, mask, 0, S_SELF, 0, 32, pred);
}
template <class T>
static inline unsigned match(const char *file, int line, const char *what, unsigned mask, T v,
                             int combine) {
  static_assert(std::is_integral<T>::value || std::is_pointer<T>::value,
                "match_any and match_all take an integer");
  return (unsigned)warp_op(file, line, what, mask, (unsigned long long)v, S_SELF, 0, 32, 0, combine)
      .value;
}

[[noreturn]] static inline void refuse(const char *file, int line, const char *what) {
  fail_here(file, line, what);
}
/* this_grid().sync(): the block's barrier, then the grid's (unblock and grid_wait); in a launch
** that is not cooperative the other blocks may never run at the same time: refused. */
static inline void grid_sync(const char *file, int line) {
  if (!me()->ex->L->cooperative)
    refuse(file, line,
           "grid_group::sync() needs a cooperative launch (Lua: k[{grid, block, cooperative = "
           "true}]; C: cujit_launch_cooperative), where every block runs at once; in this launch "
           "the grid-wide barrier would never be met");
  barrier(file, line, "grid_group::sync", 0);
}

/* A dependent false, so that a static_assert fires only where its template is used. */
template <class T> struct unsupported : std::false_type {};

} // namespace cg
} // namespace cj_cpu

#define CJ_CG_AT const char *file = __builtin_FILE(), int line = __builtin_LINE()

namespace cooperative_groups {

/* --- thread_group: any group, its kind chosen at run time ------------------------------------- */
class thread_group {
protected:
  enum kind_t : unsigned { k_block, k_tile, k_coalesced, k_grid };
  unsigned kind_, mask_, size_, meta_rank_, meta_size_;
  constexpr thread_group(unsigned kind, unsigned mask, unsigned size, unsigned meta_rank,
                         unsigned meta_size)
      : kind_(kind), mask_(mask), size_(size), meta_rank_(meta_rank), meta_size_(meta_size) {}

public:
  unsigned long long num_threads() const {
    if (kind_ == k_block) return (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
    if (kind_ == k_grid)
      return (unsigned long long)blockDim.x * blockDim.y * blockDim.z * gridDim.x * gridDim.y *
             gridDim.z;
    return size_;
  }
  unsigned long long size() const {
    return num_threads();
  }
  unsigned long long thread_rank() const {
    unsigned t = ::cj_cpu::cg::rank();
    if (kind_ == k_block) return t;
    if (kind_ == k_tile) return t & (size_ - 1u);
    if (kind_ == k_coalesced)
      return (unsigned)__builtin_popcount(mask_ & ::cj_cpu::cg::lanes_below());
    unsigned long long b =
        blockIdx.x +
        (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    return b * ((unsigned long long)blockDim.x * blockDim.y * blockDim.z) + t;
  }
  unsigned meta_group_rank() const {
    return meta_rank_;
  }
  unsigned meta_group_size() const {
    return meta_size_;
  }
  bool is_valid() const {
    return kind_ != k_grid || ::cj_cpu::me()->ex->L->cooperative;
  }
  unsigned get_type() const {
    return kind_;
  }
  void sync(CJ_CG_AT) const {
    if (kind_ == k_block)
      ::cj_cpu::barrier(file, line, "thread_block::sync", 0);
    else if (kind_ == k_grid)
      ::cj_cpu::cg::grid_sync(file, line);
    else
      ::cj_cpu::cg::vote(file, line,
                         kind_ == k_tile ? "thread_block_tile::sync" : "coalesced_group::sync",
                         mask_, 0);
  }
  /* For the runtime tiled_partition. */
  unsigned mask_of_group() const {
    return mask_;
  }
};

/* --- the block -------------------------------------------------------------------------------- */
class thread_block : public thread_group {
public:
  constexpr thread_block() : thread_group(k_block, ~0u, 0, 0, 1) {}
  static void sync(CJ_CG_AT) {
    ::cj_cpu::barrier(file, line, "thread_block::sync", 0);
  }
  static unsigned thread_rank() {
    return ::cj_cpu::cg::rank();
  }
  static unsigned num_threads() {
    return blockDim.x * blockDim.y * blockDim.z;
  }
  static unsigned size() {
    return num_threads();
  }
  static dim3 group_index() {
    return dim3(blockIdx);
  }
  static dim3 thread_index() {
    return dim3(threadIdx);
  }
  static dim3 dim_threads() {
    return blockDim;
  }
  static dim3 group_dim() {
    return blockDim;
  }
  template <class T = void> static void barrier_arrive() {
    static_assert(
        ::cj_cpu::cg::unsupported<T>::value,
        "thread_block::barrier_arrive (split barriers) is not supported on the CPU device: "
        "use sync()");
  }
};
static inline thread_block this_thread_block() {
  return thread_block();
}

/* --- the grid --------------------------------------------------------------------------------- */
class grid_group : public thread_group {
public:
  constexpr grid_group() : thread_group(k_grid, ~0u, 0, 0, 1) {}
  /* Only a cooperative launch's grid can meet at sync(). */
  bool is_valid() const {
    return ::cj_cpu::me()->ex->L->cooperative != 0;
  }
  void sync(CJ_CG_AT) const {
    thread_group::sync(file, line);
  }
  static unsigned long long num_threads() {
    return (unsigned long long)blockDim.x * blockDim.y * blockDim.z * num_blocks();
  }
  static unsigned long long size() {
    return num_threads();
  }
  static unsigned long long num_blocks() {
    return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  }
  static unsigned long long block_rank() {
    return blockIdx.x + (unsigned long long)gridDim.x *
                            (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  }
  static unsigned long long thread_rank() {
    return block_rank() * ((unsigned long long)blockDim.x * blockDim.y * blockDim.z) +
           ::cj_cpu::cg::rank();
  }
  static dim3 block_index() {
    return dim3(blockIdx);
  }
  static dim3 thread_index() {
    return dim3(threadIdx);
  }
  static dim3 dim_blocks() {
    return gridDim;
  }
  static dim3 dim_threads() {
    return blockDim;
  }
  static dim3 group_dim() {
    return blockDim;
  }
};
static inline grid_group this_grid() {
  return grid_group();
}
template <class T = void> static inline void this_multi_grid() {
  static_assert(::cj_cpu::cg::unsupported<T>::value,
                "cooperative_groups::this_multi_grid (multi-device launches) is not supported on "
                "the CPU device");
}

/* --- the cluster (issue 26; cpu_cluster.h) -----------------------------------------------------
** A launch with a cluster runs each cluster's blocks at once; any other launch is clusters of one
** block, as on a GPU. */
class cluster_group {
public:
  struct arrival_token {};
  static void sync(CJ_CG_AT) {
    ::cj_cpu::barrier(file, line, "cluster_group::sync", 0);
  }
  template <class T> static T *map_shared_rank(T *addr, int rank, CJ_CG_AT) {
    return (T *)::cj_cpu::map_rank(addr, (unsigned)rank, file, line);
  }
  static unsigned block_rank() {
    return ::cj_cpu::cluster_rank();
  }
  static unsigned num_blocks() {
    return ::cj_cpu::cluster_size();
  }
  static dim3 dim_blocks() {
    return ::cj_cpu::cluster_dims();
  }
  static dim3 block_index() {
    dim3 d = dim_blocks();
    return dim3(blockIdx.x % d.x, blockIdx.y % d.y, blockIdx.z % d.z);
  }
  static dim3 dim_threads() {
    dim3 d = dim_blocks();
    return dim3(d.x * blockDim.x, d.y * blockDim.y, d.z * blockDim.z);
  }
  static dim3 thread_index() {
    dim3 b = block_index();
    return dim3(b.x * blockDim.x + threadIdx.x, b.y * blockDim.y + threadIdx.y,
                b.z * blockDim.z + threadIdx.z);
  }
  static unsigned num_threads() {
    return num_blocks() * blockDim.x * blockDim.y * blockDim.z;
  }
  static unsigned size() {
    return num_threads();
  }
  static unsigned thread_rank() {
    return block_rank() * (blockDim.x * blockDim.y * blockDim.z) + ::cj_cpu::cg::rank();
  }
  template <class T = void> static arrival_token barrier_arrive() {
    static_assert(::cj_cpu::cg::unsupported<T>::value,
                  "cluster_group::barrier_arrive (split cluster barriers) is not supported on the "
                  "CPU device: use sync()");
    return arrival_token();
  }
};
static inline cluster_group this_cluster() {
  return cluster_group();
}

/* --- coalesced groups: any lanes of one warp ---------------------------------------------------
 */
class coalesced_group : public thread_group {
public:
  explicit coalesced_group(unsigned mask, unsigned meta_rank = 0, unsigned meta_size = 1)
      : thread_group(k_coalesced, mask, (unsigned)__builtin_popcount(mask), meta_rank, meta_size) {}
  unsigned num_threads() const {
    return size_;
  }
  unsigned size() const {
    return size_;
  }
  unsigned thread_rank() const {
    return (unsigned)__builtin_popcount(mask_ & ::cj_cpu::cg::lanes_below());
  }
  void sync(CJ_CG_AT) const {
    ::cj_cpu::cg::vote(file, line, "coalesced_group::sync", mask_, 0);
  }
  /* The lane of rank r, taken modulo the group's size as a tile's shfl takes its source. */
  template <class T> T shfl(const T &v, int src, CJ_CG_AT) const {
    unsigned l = ::cj_cpu::cg::lane_of_rank(mask_, (unsigned)src % size_);
    return ::cj_cpu::cg::shuffle(file, line, "coalesced_group::shfl", mask_, v, ::cj_cpu::S_IDX, l,
                                 32);
  }
  /* Past either end, a lane keeps its own value (the GPU's __fns finds no lane there). */
  template <class T> T shfl_down(const T &v, unsigned d, CJ_CG_AT) const {
    unsigned r = thread_rank() + d;
    unsigned l = r < size_ ? ::cj_cpu::cg::lane_of_rank(mask_, r) : ::cj_cpu::cg::lane();
    return ::cj_cpu::cg::shuffle(file, line, "coalesced_group::shfl_down", mask_, v,
                                 ::cj_cpu::S_IDX, l, 32);
  }
  template <class T> T shfl_up(const T &v, int d, CJ_CG_AT) const {
    unsigned r = thread_rank();
    unsigned l = (unsigned)d <= r ? ::cj_cpu::cg::lane_of_rank(mask_, r - (unsigned)d)
                                  : ::cj_cpu::cg::lane();
    return ::cj_cpu::cg::shuffle(file, line, "coalesced_group::shfl_up", mask_, v, ::cj_cpu::S_IDX,
                                 l, 32);
  }
  int any(int p, CJ_CG_AT) const {
    return ::cj_cpu::cg::vote(file, line, "coalesced_group::any", mask_, p).ballot != 0;
  }
  int all(int p, CJ_CG_AT) const {
    return ::cj_cpu::cg::vote(file, line, "coalesced_group::all", mask_, p).ballot == mask_;
  }
  /* Bit r: the thread of rank r (the lanes packed, as the GPU's). */
  unsigned ballot(int p, CJ_CG_AT) const {
    return ::cj_cpu::cg::pack(
        ::cj_cpu::cg::vote(file, line, "coalesced_group::ballot", mask_, p).ballot, mask_);
  }
  template <class T> unsigned match_any(T v, CJ_CG_AT) const {
    return ::cj_cpu::cg::pack(::cj_cpu::cg::match(file, line, "coalesced_group::match_any", mask_,
                                                  v, ::cj_cpu::W_MATCH_ANY),
                              mask_);
  }
  template <class T> unsigned match_all(T v, int &pred, CJ_CG_AT) const {
    unsigned m = ::cj_cpu::cg::match(file, line, "coalesced_group::match_all", mask_, v,
                                     ::cj_cpu::W_MATCH_ALL);
    pred = m != 0;
    return ::cj_cpu::cg::pack(m, mask_);
  }
};

/* The lanes of this warp that reach this call together: the executor lets them meet until no lane
** of the warp can go on (cpu_sync.h's coalesce), so lanes that took another branch are not in it,
** as on the GPU; `site` tells this call from another one (the other side of an if). */
static inline coalesced_group coalesced_threads_at(const char *file, int line, const char *site) {
  unsigned mask = ::cj_cpu::activemask();
  return coalesced_group(
      ::cj_cpu::warp_op(file, line, site, mask, 0, ::cj_cpu::S_SELF, 0, 32, 0, ::cj_cpu::W_COALESCE)
          .members);
}

/* --- tiles of N consecutive threads, N = 1, 2, 4, ..., 32 --------------------------------------
 */
template <unsigned N, class Parent = void> class thread_block_tile : public thread_group {
  static_assert(
      N >= 1 && N <= 32 && (N & (N - 1)) == 0,
      "thread_block_tile: the CPU device has tiles of 1, 2, 4, 8, 16 or 32 threads (tiles "
      "of more than a warp are not supported on the CPU device)");

public:
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : thread_group(k_tile, ::cj_cpu::cg::tile_mask(N), N, meta_rank, meta_size) {}
  template <class P>
  thread_block_tile(const thread_block_tile<N, P> &t)
      : thread_group(k_tile, ::cj_cpu::cg::tile_mask(N), N, t.meta_group_rank(),
                     t.meta_group_size()) {}
  static constexpr unsigned num_threads() {
    return N;
  }
  static constexpr unsigned size() {
    return N;
  }
  static unsigned thread_rank() {
    return ::cj_cpu::cg::lane() & (N - 1u);
  }
  unsigned meta_group_rank() const {
    return meta_rank_;
  }
  unsigned meta_group_size() const {
    return meta_size_;
  }
  static void sync(CJ_CG_AT) {
    ::cj_cpu::cg::vote(file, line, "thread_block_tile::sync", ::cj_cpu::cg::tile_mask(N), 0);
  }
  template <class T> static T shfl(const T &v, int src, CJ_CG_AT) {
    return ::cj_cpu::cg::shuffle(file, line, "thread_block_tile::shfl", ::cj_cpu::cg::tile_mask(N),
                                 v, ::cj_cpu::S_IDX, (unsigned)src, (int)N);
  }
  template <class T> static T shfl_down(const T &v, unsigned d, CJ_CG_AT) {
    return ::cj_cpu::cg::shuffle(file, line, "thread_block_tile::shfl_down",
                                 ::cj_cpu::cg::tile_mask(N), v, ::cj_cpu::S_DOWN, d, (int)N);
  }
  template <class T> static T shfl_up(const T &v, unsigned d, CJ_CG_AT) {
    return ::cj_cpu::cg::shuffle(file, line, "thread_block_tile::shfl_up",
                                 ::cj_cpu::cg::tile_mask(N), v, ::cj_cpu::S_UP, d, (int)N);
  }
  template <class T> static T shfl_xor(const T &v, unsigned m, CJ_CG_AT) {
    return ::cj_cpu::cg::shuffle(file, line, "thread_block_tile::shfl_xor",
                                 ::cj_cpu::cg::tile_mask(N), v, ::cj_cpu::S_XOR, m, (int)N);
  }
  static int any(int p, CJ_CG_AT) {
    return ::cj_cpu::cg::vote(file, line, "thread_block_tile::any", ::cj_cpu::cg::tile_mask(N), p)
               .ballot != 0;
  }
  static int all(int p, CJ_CG_AT) {
    unsigned m = ::cj_cpu::cg::tile_mask(N);
    ::cj_cpu::warp_result r = ::cj_cpu::cg::vote(file, line, "thread_block_tile::all", m, p);
    return r.ballot == r.members;
  }
  /* Bit r: the tile's thread of rank r (the warp's ballot shifted down to the tile). */
  static unsigned ballot(int p, CJ_CG_AT) {
    unsigned m = ::cj_cpu::cg::tile_mask(N);
    return ::cj_cpu::cg::vote(file, line, "thread_block_tile::ballot", m, p).ballot >>
           (::cj_cpu::cg::lane() & ~(N - 1u));
  }
  template <class T> static unsigned match_any(T v, CJ_CG_AT) {
    return ::cj_cpu::cg::match(file, line, "thread_block_tile::match_any",
                               ::cj_cpu::cg::tile_mask(N), v, ::cj_cpu::W_MATCH_ANY) >>
           (::cj_cpu::cg::lane() & ~(N - 1u));
  }
  template <class T> static unsigned match_all(T v, int &pred, CJ_CG_AT) {
    unsigned m = ::cj_cpu::cg::match(file, line, "thread_block_tile::match_all",
                                     ::cj_cpu::cg::tile_mask(N), v, ::cj_cpu::W_MATCH_ALL);
    pred = m != 0;
    return m >> (::cj_cpu::cg::lane() & ~(N - 1u));
  }
};

template <unsigned N>
static inline thread_block_tile<N, thread_block> tiled_partition(const thread_block &) {
  unsigned n = thread_block::num_threads();
  return thread_block_tile<N, thread_block>(thread_block::thread_rank() / N, (n + N - 1) / N);
}
template <unsigned N, unsigned M, class P>
static inline thread_block_tile<N, thread_block_tile<M, P>>
tiled_partition(const thread_block_tile<M, P> &parent) {
  static_assert(N <= M, "tiled_partition<N>(tile): N must not exceed the tile's size");
  return thread_block_tile<N, thread_block_tile<M, P>>(parent.thread_rank() / N, M / N);
}
template <unsigned N>
static inline thread_block_tile<N, coalesced_group> tiled_partition(const coalesced_group &) {
  static_assert(::cj_cpu::cg::unsupported<thread_block_tile<N>>::value,
                "tiled_partition<N>(coalesced_group) is not supported on the CPU device: partition "
                "the block or a tile");
}
/* The runtime tiled_partition(parent, n): n a power of two up to 32, of a block or a tile. */
static inline thread_group tiled_partition_at(const thread_group &parent, unsigned n,
                                              const char *file, int line) {
  if (n == 0 || n > 32 || (n & (n - 1)) != 0)
    ::cj_cpu::cg::refuse(file, line,
                         "tiled_partition(parent, n): n must be 1, 2, 4, 8, 16 or 32 on the CPU "
                         "device");
  unsigned kind = parent.get_type();
  if (kind == 1u /* k_tile */ && n > parent.num_threads())
    ::cj_cpu::cg::refuse(file, line, "tiled_partition(tile, n): n is larger than the tile");
  if (kind != 0u /* k_block */ && kind != 1u)
    ::cj_cpu::cg::refuse(file, line,
                         "tiled_partition(parent, n) of a coalesced group or the grid is not "
                         "supported on the CPU device: partition the block or a tile");
  struct tile : thread_group {
    tile(unsigned n, unsigned rank, unsigned meta)
        : thread_group(k_tile, ::cj_cpu::cg::tile_mask(n), n, rank, meta) {}
  };
  unsigned pr = (unsigned)parent.thread_rank(), ps = (unsigned)parent.num_threads();
  return tile(n, pr / n, (ps + n - 1) / n);
}
static inline thread_group tiled_partition(const thread_group &parent, unsigned n, CJ_CG_AT) {
  return tiled_partition_at(parent, n, file, line);
}

/* --- partitions of a tile or coalesced group by a label ----------------------------------------
 */
template <class G>
static inline coalesced_group binary_partition_at(const G &g, bool pred, const char *file,
                                                  int line) {
  unsigned mask = g.mask_of_group();
  unsigned set = ::cj_cpu::cg::vote(file, line, "binary_partition", mask, pred).ballot;
  if (set == mask || set == 0) return coalesced_group(mask, 0, 1);
  return coalesced_group(mask & (pred ? set : ~set), pred ? 1 : 0, 2);
}
template <class G>
static inline coalesced_group labeled_partition_at(const G &g, unsigned long long label,
                                                   const char *file, int line) {
  unsigned mask = g.mask_of_group();
  unsigned sub =
      ::cj_cpu::cg::match(file, line, "labeled_partition", mask, label, ::cj_cpu::W_MATCH_ANY);
  unsigned leader = (unsigned)__builtin_ctz(sub);
  unsigned leaders =
      ::cj_cpu::cg::vote(file, line, "labeled_partition", mask, leader == ::cj_cpu::cg::lane())
          .ballot;
  return coalesced_group(sub, (unsigned)__builtin_popcount(leaders & ((1u << leader) - 1u)),
                         (unsigned)__builtin_popcount(leaders));
}
static inline coalesced_group binary_partition(const coalesced_group &g, bool pred, CJ_CG_AT) {
  return binary_partition_at(g, pred, file, line);
}
template <unsigned N, class P>
static inline coalesced_group binary_partition(const thread_block_tile<N, P> &g, bool pred,
                                               CJ_CG_AT) {
  return binary_partition_at(g, pred, file, line);
}
template <class L>
static inline coalesced_group labeled_partition(const coalesced_group &g, L label, CJ_CG_AT) {
  static_assert(std::is_integral<L>::value || std::is_pointer<L>::value,
                "labeled_partition takes an integer label");
  if (std::is_same<L, bool>::value) return binary_partition_at(g, (bool)label, file, line);
  return labeled_partition_at(g, (unsigned long long)label, file, line);
}
template <unsigned N, class P, class L>
static inline coalesced_group labeled_partition(const thread_block_tile<N, P> &g, L label,
                                                CJ_CG_AT) {
  static_assert(std::is_integral<L>::value || std::is_pointer<L>::value,
                "labeled_partition takes an integer label");
  if (std::is_same<L, bool>::value) return binary_partition_at(g, (bool)label, file, line);
  return labeled_partition_at(g, (unsigned long long)label, file, line);
}

/* --- free functions over any group ------------------------------------------------------------ */
template <class G> static inline void sync(const G &g, CJ_CG_AT) {
  g.sync(file, line);
}
template <class G> static inline unsigned long long thread_rank(const G &g) {
  return (unsigned long long)g.thread_rank();
}
template <class G> static inline unsigned long long group_size(const G &g) {
  return (unsigned long long)g.num_threads();
}
template <class G> static inline unsigned long long num_threads(const G &g) {
  return (unsigned long long)g.num_threads();
}

} // namespace cooperative_groups

#include <cujit/cpu_cg_collectives.h>

#undef CJ_CG_AT

#define CJ_CG_STR2(x) #x
#define CJ_CG_STR(x) CJ_CG_STR2(x)
/* A call names its site, so that lanes at two calls (the two sides of an if) form two groups. */
#define coalesced_threads()                                                                        \
  coalesced_threads_at(__FILE__, __LINE__,                                                         \
                       "coalesced_threads() of " __FILE__ ":" CJ_CG_STR(__LINE__))
