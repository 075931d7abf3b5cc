/*
** launch_attrs.c -- the launch attributes of cujit_launch_config (issue 26): thread block
** clusters, programmatic dependent launch and priority, checked before a launch goes to the
** backend's launch_ex. What every device shares is checked here (the grid a multiple of the
** cluster, at most 16 blocks a cluster, no cooperative launch); what the device says (its arch,
** how many clusters fit at once) is asked of the backend once per kernel, attributes and shape,
** and remembered on the kernel, so that a loop of attributed launches makes no extra driver call.
*/
#include "launch.h"
#include "backend/backend.h"

/* Blocks per cluster: 8 on every GPU with clusters, 16 where the device allows more (sm_90). */
#define PORTABLE_CLUSTER 8
#define LARGEST_CLUSTER 16

/* A nonzero key for the attributes and shape that the device's answer depends on: each cluster
** axis (at most 16: 5 bits), programmatic (1 bit), the block's threads (11 bits) and the dynamic
** shared memory (at most 2^24 bytes here: larger is refused before). */
static unsigned long long attrs_key(const cj_launch_attrs *a, unsigned threads,
                                    unsigned shared_bytes) {
  return 1ull | (unsigned long long)a->cluster[0] << 1 | (unsigned long long)a->cluster[1] << 6 |
         (unsigned long long)a->cluster[2] << 11 |
         (unsigned long long)(a->programmatic != 0) << 16 | (unsigned long long)threads << 17 |
         (unsigned long long)shared_bytes << 28;
}

static cujit_status check_cluster(const cujit_kernel *k, const cujit_device *dev,
                                  const unsigned grid[3], cj_launch_attrs *a) {
  static const char axis[3] = {'x', 'y', 'z'};
  char name[32];
  unsigned blocks = 1;
  for (int d = 0; d < 3; d++) {
    if (d > 0 && a->cluster[d] == 0) a->cluster[d] = 1;
    if (a->cluster[d] == 0 || a->cluster[d] > LARGEST_CLUSTER)
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': cluster.%c = %u; a cluster has 1 to %d blocks on each axis",
                     k->sig.name, axis[d], a->cluster[d], LARGEST_CLUSTER);
    if (grid[d] % a->cluster[d] != 0)
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': grid.%c = %u is not a multiple of cluster.%c = %u; the grid "
                     "must be made of whole clusters",
                     k->sig.name, axis[d], grid[d], axis[d], a->cluster[d]);
    blocks *= a->cluster[d];
  }
  if (blocks > LARGEST_CLUSTER)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': a cluster of %u x %u x %u = %u blocks is over %s's limit of %d "
                   "blocks per cluster (%d is the portable size; up to %d where the device "
                   "allows it)",
                   k->sig.name, a->cluster[0], a->cluster[1], a->cluster[2], blocks,
                   cj_device_name(dev, name, sizeof name), LARGEST_CLUSTER, PORTABLE_CLUSTER,
                   LARGEST_CLUSTER);
  return CUJIT_OK;
}

cujit_status cj_launch_attrs_check(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                   const cujit_launch_config *c, const unsigned grid[3],
                                   const unsigned block[3], int cooperative, cj_launch_attrs *a) {
  a->programmatic = c->programmatic, a->priority = c->priority;
  for (int d = 0; d < 3; d++) a->cluster[d] = c->cluster[d];
  int clustered = (c->cluster[0] | c->cluster[1] | c->cluster[2]) != 0;
  if (cooperative)
    return cj_fail(k->engine, CUJIT_ERROR_UNSUPPORTED,
                   "kernel '%s': a cooperative launch takes no launch attributes (cluster = "
                   "{%u,%u,%u}, programmatic = %d, priority = %d); launch it without them",
                   k->sig.name, c->cluster[0], c->cluster[1], c->cluster[2], c->programmatic,
                   c->priority);
  cujit_status st = clustered ? check_cluster(k, dev, grid, a) : CUJIT_OK;
  if (st != CUJIT_OK) return st;
  unsigned threads = block[0] * block[1] * block[2];
  unsigned long long key = attrs_key(a, threads, c->shared_bytes);
  if (__atomic_load_n(&on->attrs_checked, __ATOMIC_RELAXED) == key) return CUJIT_OK;
  int fit = 0;
  st = dev->ops->check_attrs(dev, on->fn, grid, block, c->shared_bytes, a, &fit);
  if (st != CUJIT_OK) return st;
  char name[32];
  if (fit < 1)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': not one cluster of %u x %u x %u blocks of %u threads with %u "
                   "bytes of dynamic shared memory fits on %s at once (0 such clusters are "
                   "co-resident); use smaller clusters, smaller blocks or less shared memory",
                   k->sig.name, a->cluster[0], a->cluster[1], a->cluster[2], threads,
                   c->shared_bytes, cj_device_name(dev, name, sizeof name));
  __atomic_store_n(&on->attrs_checked, key, __ATOMIC_RELAXED);
  return CUJIT_OK;
}
