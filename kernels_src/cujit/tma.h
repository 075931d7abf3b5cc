/*
** cujit/tma.h -- the Tensor Memory Accelerator from a kernel (compute capability 9.0): the
** CUtensorMap a kernel takes by value (`const __grid_constant__ CUtensorMap map`, filled on the host
** by cujit_tensor_map_encode or Lua's a:tensor_map), tile copies between global and shared memory
** through it, bulk copies of contiguous bytes without one, and the shared-memory barriers
** (mbarrier) a copy into shared memory completes on. The PTX each wraps is named beside it.
**
** A load into shared memory: one thread initialises a barrier (mbarrier_init, then
** fence_barrier_init and __syncthreads), one thread says how many bytes will arrive
** (mbarrier_expect_tx) and starts the copy (tma_load_2d, ...), and every thread waits for the
** barrier's phase (mbarrier_wait(bar, phase), the phase flipping 0, 1, 0, ... with each use). A
** store from shared memory: the threads' writes made visible to the copy engine
** (fence_proxy_async, then __syncthreads), one thread starts it (tma_store_2d, ...), commits the
** group (bulk_commit) and waits before the shared memory is written again (bulk_wait_read<N>:
** all but the N newest groups have read their source) or before the kernel ends (bulk_wait<0>).
** A box reaching past the tensor reads zeros (or NaN: oob_nan) there, and stores drop what falls
** outside; a load's byte count is always the whole box's. Shared memory for a swizzled box is
** aligned to the swizzle's span times 8 (1024 bytes for 128B); 128 bytes otherwise.
**
** The CPU device has no TMA: including this header there is a compile error that says so.
*/
#pragma once

#if defined(__CUJIT_CPU__)
#error "<cujit/tma.h>: the Tensor Memory Accelerator is a unit of compute capability 9.0 GPUs; the CPU device has none (copy tiles with ordinary loads and stores, or run on a GPU)"
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "<cujit/tma.h> needs compute capability 9.0 or newer: compile for sm_90 (arch = \"sm_90\")"
#else

/* The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned (as cuda.h declares it, which
** NVRTC cannot include). */
#ifndef CUJIT_HAVE_CUTENSORMAP
#define CUJIT_HAVE_CUTENSORMAP 1
struct alignas(64) CUtensorMap_st {
  unsigned long long opaque[16];
};
typedef struct CUtensorMap_st CUtensorMap;
#endif

namespace cujit {

/* A generic pointer to shared memory as the 32-bit shared-window address PTX takes. */
__device__ __forceinline__ unsigned smem(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

/* --- barriers -------------------------------------------------------------------------------- */

/* mbarrier.init: `count` arrivals complete a phase. One thread, before any use. */
__device__ __forceinline__ void mbarrier_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}

/* fence.mbarrier_init: the barriers initialised made visible to the copy engine (then
** __syncthreads before another thread uses them). */
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* mbarrier.arrive.expect_tx: this thread's arrival, and `bytes` more that copies will bring. */
__device__ __forceinline__ void mbarrier_expect_tx(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)),
               "r"(bytes)
               : "memory");
}

/* mbarrier.try_wait.parity: whether the phase of parity `phase` completed. */
__device__ __forceinline__ bool mbarrier_try_wait(unsigned long long *bar, unsigned phase) {
  unsigned done;
  asm volatile("{\n\t.reg .pred p;\n\t"
               "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(done)
               : "r"(smem(bar)), "r"(phase)
               : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(unsigned long long *bar, unsigned phase) {
  while (!mbarrier_try_wait(bar, phase)) {
  }
}

/* fence.proxy.async: the threads' own writes to shared memory made visible to the copy engine,
** before a store reads them. */
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* --- tile copies through a tensor map (cp.async.bulk.tensor) --------------------------------- */

/* Coordinates are elements, the contiguous dimension first, as the map's dims. */
__device__ __forceinline__ void tma_load_1d(void *dst, const CUtensorMap *map, int x,
                                            unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2}], [%3];" ::"r"(smem(dst)),
               "l"(map), "r"(x), "r"(smem(bar))
               : "memory");
}

__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int x, int y,
                                            unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(dst)),
               "l"(map), "r"(x), "r"(y), "r"(smem(bar))
               : "memory");
}

__device__ __forceinline__ void tma_load_3d(void *dst, const CUtensorMap *map, int x, int y, int z,
                                            unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(smem(dst)),
               "l"(map), "r"(x), "r"(y), "r"(z), "r"(smem(bar))
               : "memory");
}

__device__ __forceinline__ void tma_store_1d(const CUtensorMap *map, int x, const void *src) {
  asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" ::"l"(
                   map),
               "r"(x), "r"(smem(src))
               : "memory");
}

__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, int x, int y,
                                             const void *src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(map),
      "r"(x), "r"(y), "r"(smem(src))
      : "memory");
}

__device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, int x, int y, int z,
                                             const void *src) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];" ::"l"(
          map),
      "r"(x), "r"(y), "r"(z), "r"(smem(src))
      : "memory");
}

/* prefetch.tensormap: the map brought into the cache before its first use. */
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

/* --- bulk copies of contiguous bytes (cp.async.bulk), sizes and addresses 16-byte multiples -- */

__device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes,
                                          unsigned long long *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1], %2, [%3];" ::"r"(smem(dst)),
               "l"(src), "r"(bytes), "r"(smem(bar))
               : "memory");
}

__device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
               "r"(smem(src)), "r"(bytes)
               : "memory");
}

/* cp.async.bulk.commit_group: the stores started since the last commit, as one group. */
__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* cp.async.bulk.wait_group.read N: all but the N newest groups have read their shared memory. */
template <int N> __device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/* cp.async.bulk.wait_group N: all but the N newest groups are complete (written to global). */
template <int N> __device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

} /* namespace cujit */

#endif
