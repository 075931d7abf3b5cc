/*
** cujit/cpu_abi.h -- the contract between the CPU device's engine side (engine/core, C) and the
** shared objects it builds from kernels (compiled by the system C++ compiler with
** <cujit/cpu_prelude.h>). Plain C, included by both. Bump CJ_CPU_ABI_VERSION on any change: the
** engine refuses a shared object built for another version.
**
** A launch: the engine fills one cj_cpu_launch, then each worker thread of its pool calls the
** kernel's entry, `cjk_<kernel name>(launch, worker)`. The entry takes block indices from
** launch->next_block (atomically, in schedule order) and runs each whole block on the calling
** thread, until none are left. The first failure (barrier divergence, __trap, a failed assert, a
** fault caught by the check build) is written into launch->error once (error_set goes 0 -> 1) and
** the remaining blocks are skipped. A cooperative launch has no more blocks than workers: each
** worker runs one, and they meet at this_grid().sync() (cpu_exec.h, grid_wait).
*/
#ifndef CUJIT_CPU_ABI_H
#define CUJIT_CPU_ABI_H

#define CJ_CPU_ABI_VERSION 5

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cj_cpu_schedule {
  CJ_CPU_FORWARD = 0, /* threads of a block run in index order between barriers */
  CJ_CPU_REVERSE = 1, /* last thread first */
  CJ_CPU_RANDOM = 2   /* a random order per block and barrier phase, from schedule_seed */
};

typedef struct cj_cpu_launch {
  unsigned grid[3], block[3];
  unsigned shared_bytes; /* dynamic shared memory (extern __shared__) per block */
  void **args;           /* as cuLaunchKernel's kernelParams */
  const char *kernel;    /* the kernel's name, for messages */

  int schedule;                     /* enum cj_cpu_schedule */
  unsigned long long schedule_seed; /* for CJ_CPU_RANDOM */
  unsigned long long next_block;    /* taken with __atomic_fetch_add by the workers */
  unsigned long long total_blocks;  /* grid[0] * grid[1] * grid[2] */

  /* A cooperative launch (version 3): at most one block per worker, so that every block runs at
  ** once and this_grid().sync() can be met. The engine zeroes the counters; the workers count
  ** the blocks at the grid barrier of phase `grid_phase`, and the blocks that returned. */
  int cooperative;
  unsigned long long grid_arrived, grid_phase, grid_done;

  /* A cluster launch (version 4): cluster[] blocks a cluster on each axis, cluster_size their
  ** product (1: no cluster, blocks taken one by one as above). Then the workers go in groups of
  ** cluster_size, worker i being rank i % cluster_size of group i / cluster_size; group g runs
  ** clusters g, g + ngroups, ..., each worker the block of its rank, so that the blocks of a
  ** cluster run at once and meet at cluster barriers (cpu_cluster.h). `groups` is their meeting
  ** state, ngroups of them, zeroed by the engine for each run. */
  unsigned cluster[3], cluster_size;
  unsigned long long ngroups;
  struct cj_cpu_cluster_group *groups;

  int error_set;    /* 0, then 1 once error holds the first failure (set with a CAS) */
  char error[1024]; /* "kernel 'k': block (1,0,0) thread (33,0,0): ..." */
} cj_cpu_launch;

/* The most blocks a cluster has (as a GPU allows with non-portable sizes). */
#define CJ_CPU_MAX_CLUSTER 16

/* The meeting state of one group of workers running clusters: the cluster barrier (blocks
** arrived at phase `phase`), the blocks of the current cluster that returned (counted over the
** group's clusters: the k-th cluster's blocks are all done at k * cluster_size), and where each
** rank's shared memory lies, published once by each worker (its static __shared__ variables, one
** thread_local block per OS thread, located by an anchor variable; its dynamic shared memory). */
typedef struct cj_cpu_cluster_group {
  unsigned long long arrived, phase, done;
  char *anchor[CJ_CPU_MAX_CLUSTER];
  char *dyn[CJ_CPU_MAX_CLUSTER];
  int published;
} cj_cpu_cluster_group;

/* One per (loaded shared object, worker thread), owned by the engine and kept across launches:
** the entry may keep fiber stacks and shared-memory buffers in `state` (the engine calls the
** shared object's cj_cpu_worker_release when the worker ends or the module is unloaded). */
typedef struct cj_cpu_worker {
  int index;   /* 0 .. workers-1 */
  void *state; /* the shared object's own per-worker state, NULL at first */
  /* The calling OS thread's record of the CUDA thread it runs (a thread_local of the shared
  ** object), stored by the entry as it starts; the engine clears it before each call. A fault
  ** handler hands it to cj_cpu_where, which so never reaches the object's thread-locals itself:
  ** the first touch of a dlopen'd object's thread-local on a thread may allocate. */
  void *regs;
} cj_cpu_worker;

typedef void (*cj_cpu_entry_fn)(cj_cpu_launch *launch, cj_cpu_worker *worker);

/* Every CPU-device shared object exports:
**   int  cj_cpu_abi_version(void);                  returns CJ_CPU_ABI_VERSION
**   void cj_cpu_worker_release(cj_cpu_worker *w);   frees w->state, sets it to NULL
**   void cjk_<name>(cj_cpu_launch *, cj_cpu_worker *) for each kernel
**   int  cj_cpu_where(const cj_cpu_worker *w, char *buf, size_t len);   (version 5) when w's
**        thread is inside an entry of this object (w->regs set, the CUDA thread's block known):
**        writes "block (x,y,z) thread (a,b,c)" (the CUDA thread running now) and returns 1; else
**        returns 0. For a fault handler on a worker thread (a wild pointer, a fiber's stack
**        overflow, an abandoning reset): no allocation, no stdio, no thread-local. */
typedef int (*cj_cpu_where_fn)(const cj_cpu_worker *w, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
