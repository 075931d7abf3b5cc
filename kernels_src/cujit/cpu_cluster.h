/*
** cujit/cpu_cluster.h -- thread block clusters on the CPU device (issue 26): how a cluster launch
** runs, and what cooperative_groups::cluster_group (cpu_cg.h) and <cujit/cluster.h> stand on.
**
** The workers go in groups of the cluster's size (cpu_abi.h): worker i is rank i % size of group
** i / size, and group g runs clusters g, g + groups, ... with each worker running the block of
** its rank, so the blocks of a cluster run at once, each on an OS thread of its own, and meet at
** cluster_group::sync() (cluster_wait, cpu_exec.h). A group starts its next cluster only once
** every block of the current one returned, so a block's shared memory stays its own while its
** siblings may still read it.
**
** Distributed shared memory. A block's static __shared__ variables are thread_local (one block
** per OS thread, cpu_prelude.h), all in the shared object's one TLS block of that thread, laid
** out alike in every thread; its dynamic shared memory is its worker's buffer. Each worker
** publishes both (the address of its `R`, and its buffer), so a sibling's copy of a shared
** variable is at the same offset from the sibling's: map_rank.
*/
#pragma once

namespace cj_cpu {

static inline void run_block(exec *ex); /* cpu_sync.h */

/* The cluster's shape: its blocks on each axis (all 1 outside a cluster launch). */
static inline dim3 cluster_dims() {
  const cj_cpu_launch *L = me()->ex->L;
  return L->cluster_size > 1 ? dim3(L->cluster[0], L->cluster[1], L->cluster[2]) : dim3(1, 1, 1);
}
/* The block's rank in its cluster: x first, as on the GPU (%cluster_ctarank). */
static inline unsigned cluster_rank() {
  const regs *r = me();
  dim3 d = cluster_dims();
  return r->bid.x % d.x + d.x * (r->bid.y % d.y + d.y * (r->bid.z % d.z));
}
static inline unsigned cluster_size() {
  const cj_cpu_launch *L = me()->ex->L;
  return L->cluster_size > 1 ? L->cluster_size : 1;
}

/* The address in block `rank` of the cluster of shared memory `p` points into in this block. */
static inline void *map_rank(const void *p, unsigned rank, const char *file, int line) {
  exec *ex = me()->ex;
  char what[200];
  if (rank >= cluster_size()) {
    snprintf(what, sizeof what,
             "map_shared_rank(ptr, %u): the cluster has %u block%s (ranks 0 to %u)", rank,
             cluster_size(), cluster_size() == 1 ? "" : "s", cluster_size() - 1);
    fail_here(file, line, what);
  }
  cj_cpu_cluster_group *G = ex->cgroup;
  if (!G) return const_cast<void *>(p); /* a cluster of one: rank 0 is this block */
  char *anchor = __atomic_load_n(&G->anchor[rank], __ATOMIC_ACQUIRE);
  if (!anchor)
    fail_here(file, line,
              "map_shared_rank before the block of that rank started: call cluster.sync() "
              "first, as on a GPU");
  const char *c = (const char *)p;
  const cj_cpu_launch *L = ex->L;
  if (ex->dyn && c >= ex->dyn && c < ex->dyn + L->shared_bytes)
    return G->dyn[rank] + (c - ex->dyn);
  return anchor + (c - (const char *)me());
}

/* Worker `index`'s part of a cluster launch (cpu_abi.h): the block of its rank in each of its
** group's clusters, waiting at the end of each for the cluster's other blocks. */
static inline void run_clusters(exec *ex, unsigned index) {
  cj_cpu_launch *L = ex->L;
  unsigned size = L->cluster_size, rank = index % size;
  unsigned long long group = index / size;
  if (group >= L->ngroups || !L->groups) return;
  cj_cpu_cluster_group *G = &L->groups[group];
  ex->cgroup = G, ex->crank = rank;
  __atomic_store_n(&G->dyn[rank], ex->dyn, __ATOMIC_RELAXED);
  __atomic_store_n(&G->anchor[rank], (char *)me(), __ATOMIC_RELEASE);
  unsigned cx = L->cluster[0], cy = L->cluster[1], cz = L->cluster[2];
  unsigned gx = L->grid[0] / cx, gy = L->grid[1] / cy; /* the grid of clusters */
  unsigned long long clusters = L->total_blocks / size;
  ex->k = 0, ex->kend = 1; /* the runner's fast loop runs this block only */
  ex->cround = 0;
  for (unsigned long long c = group; c < clusters && !failed(ex); c += L->ngroups) {
    regs *r = me();
    unsigned x = (unsigned)(c % gx), y = (unsigned)(c / gx % gy), z = (unsigned)(c / gx / gy);
    r->bid = uint3{x * cx + rank % cx, y * cy + rank / cx % cy, z * cz + rank / cx / cy};
    ex->block = r->bid.x + (unsigned long long)L->grid[0] *
                               (r->bid.y + (unsigned long long)L->grid[1] * r->bid.z);
    ex->k = 0;
#if defined(CJ_CPU_CHECK)
    if (ex->dyn_cap) memset(ex->dyn, 0xff, ex->dyn_cap);
#endif
    run_block(ex);
    __atomic_add_fetch(&G->done, 1, __ATOMIC_ACQ_REL);
    ex->cround++;
    while (__atomic_load_n(&G->done, __ATOMIC_ACQUIRE) < ex->cround * size && !failed(ex))
      sched_yield();
  }
  ex->cgroup = nullptr;
}

} // namespace cj_cpu

/* Programmatic dependent launch (cujit/pdl.h): the CPU device runs one kernel at a time in stream
** order, so there is nothing to wait for and nothing to release early. */
static inline void cudaGridDependencySynchronize(void) {}
static inline void cudaTriggerProgrammaticLaunchCompletion(void) {}
/* A kernel's compiled cluster shape: the unit writer (cpu_source.c) takes `__cluster_dims__(...)`
** off a kernel of the unit and exports its arguments with the kernel's entry (cjc_<name>), which
** a launch then takes; what is left for this macro (on a template, whose arguments may name its
** parameters, or on what is no kernel of the unit) is refused: run as clusters of one block, the
** kernel would differ silently. */
#define __cluster_dims__(...)                                                                      \
  _Pragma("GCC error \"__cluster_dims__ is supported on the CPU device only on a kernel of the program (not a template): give the launch its cluster instead (Lua: cluster = {x, y, z}; C: cujit_launch_config.cluster)\"")
