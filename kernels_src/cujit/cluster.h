/*
** cujit/cluster.h -- thread block clusters in a few calls that work on a GPU and on the CPU
** device alike (issue 26; docs/device-library.md). A launch with a cluster (Lua: cluster =
** {x, y, z}; C: cujit_launch_config.cluster) runs each cluster's blocks at once, and they reach
** each other's shared memory (distributed shared memory):
**
**   cujit::cluster_rank()          this block's rank in its cluster, 0 .. cluster_blocks() - 1
**   cujit::cluster_blocks()        the blocks of the cluster
**   cujit::cluster_sync()          a barrier of every thread of every block of the cluster; also
**                                  what makes a sibling's shared memory safe to read (call it
**                                  before the first read, and before a block returns while its
**                                  siblings may still read its memory)
**   cujit::cluster_shared(p, r)    where shared memory p (a __shared__ variable, or extern
**                                  __shared__) of this block is in the block of rank r
**
** On a GPU they are the sm_90 instructions (%cluster_ctarank, barrier.cluster, mapa); below sm_90,
** where launches take no cluster, a block is a cluster of one. On the CPU device they stand on
** its cluster emulation (cujit/cpu_cluster.h). Includes <cujit/pdl.h> too.
*/
#pragma once
#include <cujit/pdl.h>

namespace cujit {

#if defined(__CUJIT_CPU__)
static inline unsigned cluster_rank() {
  return ::cj_cpu::cluster_rank();
}
static inline unsigned cluster_blocks() {
  return ::cj_cpu::cluster_size();
}
/* The caller's line, so that the CPU device's barrier checks see where each thread waits. */
static inline void cluster_sync(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::cj_cpu::barrier(file, line, "cluster_group::sync", 0);
}
template <class T>
static inline T *cluster_shared(T *p, unsigned rank, const char *file = __builtin_FILE(),
                                int line = __builtin_LINE()) {
  return (T *)::cj_cpu::map_rank(p, rank, file, line);
}
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
static __device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
static __device__ __forceinline__ unsigned cluster_blocks() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
static __device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}
template <class T> static __device__ __forceinline__ T *cluster_shared(T *p, unsigned rank) {
  unsigned long long out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(p), "r"(rank));
  return (T *)out;
}
#else /* a GPU without clusters: every block is a cluster of one */
static __device__ __forceinline__ unsigned cluster_rank() {
  return 0;
}
static __device__ __forceinline__ unsigned cluster_blocks() {
  return 1;
}
static __device__ __forceinline__ void cluster_sync() {
  __syncthreads();
}
template <class T> static __device__ __forceinline__ T *cluster_shared(T *p, unsigned rank) {
  return rank == 0 ? p : (T *)0;
}
#endif

} // namespace cujit
