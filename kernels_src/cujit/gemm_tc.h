/*
** cujit/gemm_tc.h -- the tensor-core GEMM of sm_90 (Hopper): C = epilogue(alpha * op(A) op(B) +
** beta * C) with f16 or bf16 inputs, f32 accumulation and C of f32 or the inputs' type, through
** wgmma (warpgroup
** matrix multiply-accumulate) fed by TMA. It is the kernel cujit_gemm (engine/core/program/gemm.c)
** runs on an sm_90 GPU when the shapes and alignment allow; cujit::gemm_simt (<cujit/gemm.h>) is
** the path everywhere else. Compiled for the arch-specific target (sm_90a): wgmma and setmaxnreg
** exist nowhere else.
**
**   cujit::gemm_tc<T, O, A_MN, B_MN, CL, BN>(map_a, map_b, c, bias, mask, m, n, k, epilogue,
**                                            alpha, beta)
**     run by cujit::gemm_tc_threads (384) threads with gemm_tc_shape<BN>::smem_bytes of dynamic
**     shared memory, in clusters of CL (1 or 2) blocks along x, on a 1-D grid of any multiple of
**     CL (one block per multiprocessor is best): cluster c computes cluster tiles c, c +
**     gridDim.x / CL, ... (CL row tiles of 128 by BN columns, a row tile per block; BN 256 or
**     128); the epilogue bits and their order are gemm.h's.
**   map_a  a 2-D tensor map of A with 128-byte swizzle: K-major (a plain m x k A: dims {k, m},
**          box {64, 128}) or, with A_MN, M-major (a transposed A stored k x m: dims {m, k}, box
**          {64, 64});
**   map_b  K-major (a transposed B stored n x k: dims {k, n}, box {64, BN / CL}) or, with B_MN,
**          N-major (a plain k x n B: dims {n, k}, box {64, 64}).
** Reads past the matrices' edges come back as zeros from TMA, so m, n and k need not be
** multiples of the tile; stores are bounds-checked.
**
** A block computes 128 x BN tiles of C, one after another (persistent: the loads of its next
** tile overlap the stores of the last). Warpgroup 0 is the producer: one of its threads keeps
** gemm_tc_shape<BN>::stages slices of 64 along k in flight (TMA into shared memory, each stage's "full"
** barrier completing when its bytes have landed) and it gives most of its registers away
** (setmaxnreg). Warpgroups 1 and 2 are the consumers, each owning 64 rows of the tile: per stage,
** four wgmma m64nBNk16 into BN / 2 f32 accumulators per thread, the previous stage's wgmma
** awaited (one group in flight: CUJIT_GEMM_TC_INFLIGHT 1; 0 waits for the stage's own and hands
** it back at once) and that stage handed back to the producer through its "empty" barrier.
** Stages and barrier phases run on across tiles (slice `it` of the block's whole sequence uses
** stage it % stages, phase it / stages). In a cluster of 2 the blocks' tiles share B's columns:
** each block loads half of B's boxes and multicasts them into both (halving B's traffic from L2,
** which bounds a lone block), so a stage is refilled only when both blocks' consumers are done
** with it. Tiles are numbered in groups of gemm_tc_group row tiles so that the blocks running at
** once share A's and B's panels in L2.
*/
#pragma once

#if defined(__CUJIT_CPU__)
#error "<cujit/gemm_tc.h>: wgmma and TMA are units of sm_90 GPUs; on the CPU device use cujit::gemm_simt (<cujit/gemm.h>)"
#elif defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "<cujit/gemm_tc.h> needs the arch-specific target sm_90a (arch = \"sm_90a\"): wgmma exists only there"
#else

#include <cujit/cluster.h>
#include <cujit/gemm.h>
#include <cujit/tma.h>

#ifndef CUJIT_GEMM_TC_INFLIGHT
#define CUJIT_GEMM_TC_INFLIGHT 1 /* wgmma groups left in flight when a stage is handed back */
#endif

namespace cujit {

enum {
  gemm_tc_tile_m = 128,
  gemm_tc_tile_k = 64, /* 128 bytes of f16: one row of the 128-byte swizzle */
  gemm_tc_threads = 384, /* a producer warpgroup and two consumers */
  gemm_tc_group = 16,    /* row tiles walked together (L2 reuse) */
  gemm_tc_a_bytes = gemm_tc_tile_m * gemm_tc_tile_k * 2,
  gemm_tc_box = 64 * 64, /* elements of a 64 x 64 box: one consumer's A, a part of B */
};

/* The shape of a tile BN columns wide (256 or 128): its B bytes per stage, its stages (as many
** as about 193 KiB of shared memory hold), and the dynamic shared memory it needs: the stages,
** their 2 barriers each, and slack to align the start to 1024 bytes. */
template <int BN> struct gemm_tc_shape {
  enum {
    b_bytes = BN * gemm_tc_tile_k * 2,
    stages = BN == 256 ? 4 : 6,
    smem_bytes = stages * (gemm_tc_a_bytes + b_bytes) + stages * 16 + 1024,
  };
};
enum { gemm_tc_smem_bytes = gemm_tc_shape<256>::smem_bytes }; /* the larger of the two */

/* A wgmma shared-memory matrix descriptor with 128-byte swizzle: start address, leading and
** stride byte offsets, each in 16-byte units (PTX ISA, "Matrix Descriptor Format"). K-major:
** the stride offset is from one 8-row group to the next (1024 bytes here), the leading one unused.
** MN-major: the leading offset is from one 64-element column of atoms to the next along M or N
** (the next 64 x 64 box, 8192 bytes), the stride offset from one 8-row group along k to the next. */
__device__ __forceinline__ unsigned long long gemm_tc_desc(const void *at, unsigned leading,
                                                           unsigned stride) {
  return (unsigned long long)((smem(at) & 0x3ffffu) >> 4) |
         (unsigned long long)((leading & 0x3ffffu) >> 4) << 16 |
         (unsigned long long)((stride & 0x3ffffu) >> 4) << 32 | 1ull << 62;
}

#define CJ_TC_D8(i)                                                                                \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),      \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define CJ_TC_D128                                                                                 \
  CJ_TC_D8(0), CJ_TC_D8(8), CJ_TC_D8(16), CJ_TC_D8(24), CJ_TC_D8(32), CJ_TC_D8(40), CJ_TC_D8(48),  \
      CJ_TC_D8(56), CJ_TC_D8(64), CJ_TC_D8(72), CJ_TC_D8(80), CJ_TC_D8(88), CJ_TC_D8(96),          \
      CJ_TC_D8(104), CJ_TC_D8(112), CJ_TC_D8(120)
#define CJ_TC_D64                                                                                  \
  CJ_TC_D8(0), CJ_TC_D8(8), CJ_TC_D8(16), CJ_TC_D8(24), CJ_TC_D8(32), CJ_TC_D8(40), CJ_TC_D8(48),  \
      CJ_TC_D8(56)
#define CJ_TC_REGS64                                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                        \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define CJ_TC_REGS                                                                                 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                        \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "               \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "               \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "               \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "               \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "               \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "   \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"

/* wgmma.mma_async m64nNk16 with f32 accumulators, D += A B (scale-d 1): A and B from shared
** memory through their descriptors, transposed (MN-major) as the immediates say. Overloaded on
** the accumulators (128 of them: N = 256; 64: N = 128) and on the inputs' type (a pointer to it). */
#define CJ_TC_MMA(TYPE, PTX_TYPES, N, REGS, DLIST, DA, DB, SCALE, TA, TB)                           \
  template <int A_MN, int B_MN>                                                                    \
  __device__ __forceinline__ void gemm_tc_mma(float (&d)[N / 2], const TYPE *,                     \
                                              unsigned long long da, unsigned long long db) {      \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, " SCALE ", 0;\n\t"                        \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32" PTX_TYPES " " REGS ", " DA     \
                 ", " DB ", p, 1, 1, " TA ", " TB ";\n\t}"                                         \
                 : DLIST                                                                           \
                 : "l"(da), "l"(db), "r"(1), "n"(A_MN), "n"(B_MN));                                \
  }
CJ_TC_MMA(__half, ".f16.f16", 256, CJ_TC_REGS, CJ_TC_D128, "%128", "%129", "%130", "%131", "%132")
CJ_TC_MMA(__half, ".f16.f16", 128, CJ_TC_REGS64, CJ_TC_D64, "%64", "%65", "%66", "%67", "%68")
CJ_TC_MMA(__nv_bfloat16, ".bf16.bf16", 256, CJ_TC_REGS, CJ_TC_D128, "%128", "%129", "%130", "%131",
          "%132")
CJ_TC_MMA(__nv_bfloat16, ".bf16.bf16", 128, CJ_TC_REGS64, CJ_TC_D64, "%64", "%65", "%66", "%67",
          "%68")

__device__ __forceinline__ void gemm_tc_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void gemm_tc_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void gemm_tc_wait(float (&d)[128]) {
  asm volatile("wgmma.wait_group.sync.aligned %128;" : CJ_TC_D128 : "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void gemm_tc_wait(float (&d)[64]) {
  asm volatile("wgmma.wait_group.sync.aligned %64;" : CJ_TC_D64 : "n"(N) : "memory");
}

/* mbarrier.arrive without a byte count on the barrier at `bar`'s place in block `rank` of a
** cluster of CL: a consumer warp handing a stage back to every producer that writes into it. A
** lone block arrives on its own barrier: no cluster-scope release, which it does not need. */
template <int CL>
__device__ __forceinline__ void gemm_tc_arrive(unsigned long long *bar, unsigned rank) {
  if (CL == 1) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(bar)) : "memory");
    return;
  }
  asm volatile("{\n\t.reg .b32 at;\n\tmapa.shared::cluster.u32 at, %0, %1;\n\t"
               "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [at];\n\t}" ::"r"(smem(bar)),
               "r"(rank)
               : "memory");
}

/* A 2-D tile load written into the same place of the shared memory of every block of the
** cluster in `mask`, each block's barrier there completing its bytes. */
__device__ __forceinline__ void gemm_tc_load_multicast(void *dst, const CUtensorMap *map, int x,
                                                       int y, unsigned long long *bar,
                                                       unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem(dst)),
               "l"(map), "r"(x), "r"(y), "r"(smem(bar)), "h"(mask)
               : "memory");
}

/* B's boxes of a slice, 64 x 64 (N-major) or BN / CL rows of 64 (K-major: one per block of
** the cluster): box j is loaded by block j % CL into every block; a box wholly past n is not
** loaded at all (and its bytes not expected), so no copy reads nothing. */
template <int B_MN, int CL, int BN> struct gemm_tc_b_boxes {
  enum { count = B_MN ? BN / 64 : CL, rows = B_MN ? 64 : BN / CL };
  static __device__ __forceinline__ bool live(int j, int n0, int n) {
    return n0 + (B_MN ? 64 : rows) * j < n;
  }
};

/* The corner of the tile block `rank` of cluster tile t computes: cluster tiles are CL row tiles
** high (one per block, sharing B's columns), numbered down groups of gemm_tc_group of them,
** column by column within a group. */
template <int CL, int BN>
__device__ __forceinline__ void gemm_tc_corner(int t, int m, int n, int rank, int *m0, int *n0) {
  const int high = CL * gemm_tc_tile_m;
  const int tiles_m = (m + high - 1) / high;
  const int tiles_n = (n + BN - 1) / BN;
  const int per_group = gemm_tc_group * tiles_n, group = t / per_group;
  const int first_m = group * gemm_tc_group;
  const int group_m = min(tiles_m - first_m, (int)gemm_tc_group);
  const int in_group = t % per_group;
  *m0 = (first_m + in_group % group_m) * high + rank * gemm_tc_tile_m;
  *n0 = (in_group / group_m) * BN;
}

/* The producer, over one tile: slice `it` (counted over the block's tiles) refills its stage
** once the consumers of every block it writes into handed that stage's last use back. A's boxes
** are the block's own; B's are shared by the cluster (gemm_tc_b_boxes). Boxes wholly past m or
** n are skipped: the rows and columns they would fill are never stored. */
template <int A_MN, int B_MN, int CL, int BN, class T>
__device__ __forceinline__ void gemm_tc_produce(const CUtensorMap *map_a, const CUtensorMap *map_b,
                                                T *sa, T *sb, unsigned long long *full,
                                                unsigned long long *empty, int m, int n, int m0,
                                                int n0, int rank, int k_tiles, unsigned &it) {
  typedef gemm_tc_b_boxes<B_MN, CL, BN> boxes;
  typedef gemm_tc_shape<BN> shape;
  const bool a0 = m0 < m, a1 = A_MN ? m0 + 64 < m : false;
  unsigned bytes = (a0 ? (A_MN ? gemm_tc_a_bytes / 2 : gemm_tc_a_bytes) : 0) +
                   (a1 ? gemm_tc_a_bytes / 2 : 0);
#pragma unroll
  for (int j = 0; j < boxes::count; j++)
    if (boxes::live(j, n0, n)) bytes += boxes::rows * gemm_tc_tile_k * 2;
  for (int kt = 0; kt < k_tiles; kt++, it++) {
    int s = (int)(it % shape::stages), k0 = kt * gemm_tc_tile_k;
    if (it >= shape::stages) mbarrier_wait(&empty[s], (it / shape::stages - 1) & 1u);
    mbarrier_expect_tx(&full[s], bytes);
    T *a = sa + s * (gemm_tc_a_bytes / 2), *b = sb + s * (shape::b_bytes / 2);
    if (a0) A_MN ? tma_load_2d(a, map_a, m0, k0, &full[s]) : tma_load_2d(a, map_a, k0, m0, &full[s]);
    if (a1) tma_load_2d(a + gemm_tc_box, map_a, m0 + 64, k0, &full[s]);
#pragma unroll
    for (int j = rank; j < boxes::count; j += CL) {
      if (!boxes::live(j, n0, n)) continue;
      T *at = b + j * boxes::rows * gemm_tc_tile_k;
      int x = B_MN ? n0 + 64 * j : k0, y = B_MN ? k0 : n0 + boxes::rows * j;
      if (CL == 1)
        tma_load_2d(at, map_b, x, y, &full[s]);
      else
        gemm_tc_load_multicast(at, map_b, x, y, &full[s], (unsigned short)((1u << CL) - 1));
    }
  }
}

/* A consumer warpgroup over one tile: its 64 rows (a = the first of them in each stage) times the
** tile's 256 columns, accumulated in d; every stage it used is handed back by the end. */
template <class T, int A_MN, int B_MN, int CL, int BN>
__device__ __forceinline__ void gemm_tc_consume(float (&d)[BN / 2], const T *sa, const T *sb,
                                                unsigned long long *full,
                                                unsigned long long *empty, int k_tiles,
                                                unsigned &it) {
  const unsigned a_lead = A_MN ? 8192 : 16, b_lead = B_MN ? 8192 : 16;
  const bool leader = threadIdx.x % 32 == 0; /* one arrival per consumer warp */
  typedef gemm_tc_shape<BN> shape;
  for (int kt = 0; kt < k_tiles; kt++, it++) {
    int s = (int)(it % shape::stages);
    mbarrier_wait(&full[s], (it / shape::stages) & 1u);
    const T *a = sa + s * (gemm_tc_a_bytes / 2), *b = sb + s * (shape::b_bytes / 2);
    gemm_tc_fence();
#pragma unroll
    for (int kk = 0; kk < gemm_tc_tile_k / 16; kk++) {
      /* 16 along k: 32 bytes into a K-major row, 16 rows (2048 bytes) down an MN-major box */
      const T *ak = a + (A_MN ? kk * 16 * 64 : kk * 16);
      const T *bk = b + (B_MN ? kk * 16 * 64 : kk * 16);
      gemm_tc_mma<A_MN, B_MN>(d, a, gemm_tc_desc(ak, a_lead, 1024), gemm_tc_desc(bk, b_lead, 1024));
    }
    gemm_tc_commit();
    if (CUJIT_GEMM_TC_INFLIGHT == 0) {
      gemm_tc_wait<0>(d);
      if (leader)
#pragma unroll
        for (int r = 0; r < CL; r++) gemm_tc_arrive<CL>(&empty[it % shape::stages], r);
      continue;
    }
    gemm_tc_wait<1>(d); /* the previous slice's products are done: its stage can be refilled */
    if (kt > 0 && leader)
#pragma unroll
      for (int r = 0; r < CL; r++) gemm_tc_arrive<CL>(&empty[(it - 1) % shape::stages], r);
  }
  if (CUJIT_GEMM_TC_INFLIGHT == 0) return;
  gemm_tc_wait<0>(d);
  if (leader) /* the tile's last slice */
#pragma unroll
    for (int r = 0; r < CL; r++) gemm_tc_arrive<CL>(&empty[(it - 1) % shape::stages], r);
}

/* A consumer's 64 x 256 of C from its accumulators, through the epilogue. Their layout (PTX
** ISA, wgmma D fragments): warp w of the warpgroup holds rows 16 w + lane / 4 and 8 more;
** d[4 j + 2 h + e] is column 8 j + 2 (lane % 4) + e of row + 8 h. */
template <class O> struct __align__(2 * sizeof(O)) gemm_tc_pair {
  O x, y;
};

template <class O, int BN>
__device__ __forceinline__ void gemm_tc_store_tile(const float (&d)[BN / 2], O *c, const O *bias,
                                                   const O *mask, int m, int n, int r0, int n0,
                                                   int epilogue, float alpha, float beta) {
  const int lane = (int)threadIdx.x % 32, warp = ((int)threadIdx.x % 128) / 32;
  const int row0 = r0 + 16 * warp + lane / 4;
  const int col0 = n0 + 2 * (lane % 4);
  const bool even = n % 2 == 0; /* then a pair (row, even col) is aligned to two elements */
#pragma unroll
  for (int j = 0; j < BN / 8; j++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      int row = row0 + 8 * h, col = col0 + 8 * j;
      if (row >= m || col >= n) continue;
      size_t at = (size_t)row * (size_t)n + (size_t)col;
      float v0 = gemm_value<O>(c, bias, mask, at, col, d[4 * j + 2 * h], alpha, beta, epilogue);
      if (even) { /* col + 1 < n too: one store of both */
        float v1 = gemm_value<O>(c, bias, mask, at + 1, col + 1, d[4 * j + 2 * h + 1], alpha,
                                 beta, epilogue);
        *(gemm_tc_pair<O> *)(c + at) = gemm_tc_pair<O>{from_float<O>(v0), from_float<O>(v1)};
      } else {
        c[at] = from_float<O>(v0);
        if (col + 1 < n)
          gemm_store<O>(c, bias, mask, at + 1, col + 1, d[4 * j + 2 * h + 1], alpha, beta,
                        epilogue);
      }
    }
}

template <class T, class O, int A_MN, int B_MN, int CL, int BN = 256>
__device__ __forceinline__ void gemm_tc(const CUtensorMap *map_a, const CUtensorMap *map_b, O *c,
                                        const O *bias, const O *mask, int m, int n, int k,
                                        int epilogue, float alpha, float beta) {
  extern __shared__ unsigned char gemm_tc_raw[];
  /* 128-byte swizzled boxes start on 1024-byte boundaries (the swizzle pattern's period) */
  unsigned char *base = gemm_tc_raw + ((1024u - (smem(gemm_tc_raw) & 1023u)) & 1023u);
  typedef gemm_tc_shape<BN> shape;
  T *sa = (T *)base;
  T *sb = (T *)(base + shape::stages * gemm_tc_a_bytes);
  unsigned long long *full =
      (unsigned long long *)(base + shape::stages * (gemm_tc_a_bytes + shape::b_bytes));
  unsigned long long *empty = full + shape::stages;

  /* cluster tiles, CL row tiles high: the blocks of a cluster walk the same ones */
  const int tiles = ((m + CL * gemm_tc_tile_m - 1) / (CL * gemm_tc_tile_m)) *
                    ((n + BN - 1) / BN);
  const int k_tiles = (k + gemm_tc_tile_k - 1) / gemm_tc_tile_k;
  const int rank = CL == 1 ? 0 : (int)cluster_rank();
  const int first = (int)blockIdx.x / CL, step = (int)gridDim.x / CL;
  unsigned it = 0; /* slices so far, over the block's tiles */
  int m0, n0;
  const int wg = (int)threadIdx.x / 128;

  if (threadIdx.x == 0) {
    for (int s = 0; s < shape::stages; s++) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], 8 * CL); /* the consumer warps of every block writing here */
    }
    fence_barrier_init();
  }
  if (CL == 1)
    __syncthreads();
  else
    cluster_sync(); /* every block's barriers made before any copy or arrival reaches them */

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory");
    if (threadIdx.x == 0) {
      tma_prefetch_map(map_a);
      tma_prefetch_map(map_b);
      for (int t = first; t < tiles; t += step) {
        gemm_tc_corner<CL, BN>(t, m, n, rank, &m0, &n0);
        gemm_tc_produce<A_MN, B_MN, CL, BN>(map_a, map_b, sa, sb, full, empty, m, n, m0, n0, rank,
                                        k_tiles, it);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    for (int t = first; t < tiles; t += step) {
      gemm_tc_corner<CL, BN>(t, m, n, rank, &m0, &n0);
      float d[BN / 2];
#pragma unroll
      for (int i = 0; i < BN / 2; i++) d[i] = 0.0f;
      /* consumer wg - 1 owns rows 64 (wg - 1) on: the first 64 x 64 box of an M-major stage, or
      ** 64 rows of 128 bytes of a K-major one: 4096 elements in either case */
      gemm_tc_consume<T, A_MN, B_MN, CL, BN>(d, sa + (wg - 1) * gemm_tc_box, sb, full, empty, k_tiles,
                                         it);
      gemm_tc_store_tile<O, BN>(d, c, bias, mask, m, n, m0 + 64 * (wg - 1), n0, epilogue, alpha, beta);
    }
  }
  /* no block leaves while another may still arrive on its barriers */
  if (CL > 1) cluster_sync();
}

#undef CJ_TC_MMA
#undef CJ_TC_D8
#undef CJ_TC_D64
#undef CJ_TC_D128
#undef CJ_TC_REGS64
#undef CJ_TC_REGS

} /* namespace cujit */

#endif
