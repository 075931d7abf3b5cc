/*
** stub_attrs.c -- the stand-in driver's launch attributes (issue 26): cuLaunchKernel,
** cuLaunchKernelEx, cuFuncSetAttribute and cuOccupancyMaxActiveClusters (CUJIT_STUB_CLUSTERS
** clusters fit, 16 unless set; a negative count: a size the device does not take at all,
** CUDA_ERROR_INVALID_CLUSTER_SIZE) note what they are given; cujit_stub_seen(name) (dlsym it)
** tells back: a call's count ("cuLaunchKernel", "cuLaunchKernelEx", "cuOccupancyMaxActiveClusters",
** "max_dynamic_shared" and "non_portable" for the two function attributes) or the last value given
** ("grid.x", "shared", "cluster.x", "cluster.y", "cluster.z", "programmatic", "priority", "attrs"
** (their count), and "max_dynamic_shared.value"); -1 for a name it does not know.
** cuFuncGetParamInfo answers from CUJIT_STUB_PARAM_SIZES (a kernel's parameter sizes in bytes,
** "8,4": each placed at the next multiple of its size, at most 8), for every kernel alike; unset,
** it is not supported, as on a driver before CUDA 12.4.
*/
#include "stub_attrs.h"
#include "stub_graph.h"

#include <stdlib.h>
#include <string.h>

enum {
  SEEN_LAUNCH,
  SEEN_LAUNCH_EX,
  SEEN_OCCUPANCY,
  SEEN_MAX_SHARED,
  SEEN_NON_PORTABLE,
  SEEN_GRID_X,
  SEEN_SHARED,
  SEEN_CLUSTER_X,
  SEEN_CLUSTER_Y,
  SEEN_CLUSTER_Z,
  SEEN_PROGRAMMATIC,
  SEEN_PRIORITY,
  SEEN_ATTRS,
  SEEN_MAX_SHARED_VALUE,
  SEEN_COUNT
};
static const char *const seen_names[SEEN_COUNT] = {"cuLaunchKernel",
                                                   "cuLaunchKernelEx",
                                                   "cuOccupancyMaxActiveClusters",
                                                   "max_dynamic_shared",
                                                   "non_portable",
                                                   "grid.x",
                                                   "shared",
                                                   "cluster.x",
                                                   "cluster.y",
                                                   "cluster.z",
                                                   "programmatic",
                                                   "priority",
                                                   "attrs",
                                                   "max_dynamic_shared.value"};
static long seen[SEEN_COUNT]; /* atomic access */

long cujit_stub_seen(const char *name);
long cujit_stub_seen(const char *name) {
  for (int i = 0; i < SEEN_COUNT; i++)
    if (strcmp(seen_names[i], name) == 0) return __atomic_load_n(&seen[i], __ATOMIC_RELAXED);
  return -1;
}

static void note(int what, long value) {
  __atomic_store_n(&seen[what], value, __ATOMIC_RELAXED);
}

CUresult cj_stub_launch_plain(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                              void **extra) {
  __atomic_add_fetch(&seen[SEEN_LAUNCH], 1, __ATOMIC_RELAXED);
  note(SEEN_GRID_X, gx), note(SEEN_SHARED, shared);
  return cj_stub_launch_kernel(f, gx, gy, gz, bx, by, bz, shared, s, params, extra); /* graphs */
}

CUresult cj_stub_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  (void)f, (void)params, (void)extra;
  __atomic_add_fetch(&seen[SEEN_LAUNCH_EX], 1, __ATOMIC_RELAXED);
  note(SEEN_GRID_X, c->gridDimX), note(SEEN_SHARED, c->sharedMemBytes);
  note(SEEN_ATTRS, c->numAttrs);
  long cluster[3] = {0, 0, 0}, programmatic = 0, priority = 0;
  for (unsigned i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      cluster[0] = a->value.clusterDim.x, cluster[1] = a->value.clusterDim.y,
      cluster[2] = a->value.clusterDim.z;
    else if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      programmatic = a->value.programmaticStreamSerializationAllowed;
    else if (a->id == CU_LAUNCH_ATTRIBUTE_PRIORITY)
      priority = a->value.priority;
  }
  note(SEEN_CLUSTER_X, cluster[0]), note(SEEN_CLUSTER_Y, cluster[1]);
  note(SEEN_CLUSTER_Z, cluster[2]), note(SEEN_PROGRAMMATIC, programmatic);
  note(SEEN_PRIORITY, priority);
  return cj_stub_launch();
}

CUresult cj_stub_func_set_attribute(CUfunction f, CUfunction_attribute a, int value) {
  cj_stub_cost();
  (void)f;
  if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    __atomic_add_fetch(&seen[SEEN_MAX_SHARED], 1, __ATOMIC_RELAXED);
    note(SEEN_MAX_SHARED_VALUE, value);
  } else if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
    __atomic_add_fetch(&seen[SEEN_NON_PORTABLE], 1, __ATOMIC_RELAXED);
  }
  return CUDA_SUCCESS;
}

CUresult cj_stub_max_active_clusters(int *clusters, CUfunction f, const CUlaunchConfig *c) {
  cj_stub_cost();
  (void)f, (void)c;
  __atomic_add_fetch(&seen[SEEN_OCCUPANCY], 1, __ATOMIC_RELAXED);
  int fit = cj_stub_env_int("CUJIT_STUB_CLUSTERS", 16);
  if (fit < 0) return CUDA_ERROR_INVALID_CLUSTER_SIZE; /* *clusters left as it was */
  *clusters = fit;
  return CUDA_SUCCESS;
}

CUresult cj_stub_param_info(CUfunction f, size_t index, size_t *offset, size_t *size) {
  (void)f;
  cj_stub_cost();
  const char *list = getenv("CUJIT_STUB_PARAM_SIZES");
  if (!list || !*list) return CUDA_ERROR_NOT_SUPPORTED;
  size_t at = 0;
  for (size_t i = 0;; i++) {
    char *end;
    size_t bytes = strtoul(list, &end, 10);
    if (end == list) return CUDA_ERROR_INVALID_VALUE; /* past the last parameter */
    size_t align = bytes >= 8 ? 8 : bytes >= 4 ? 4 : bytes >= 2 ? 2 : 1;
    at = (at + align - 1) / align * align;
    if (i == index) {
      if (offset) *offset = at;
      if (size) *size = bytes;
      return CUDA_SUCCESS;
    }
    at += bytes;
    list = *end == ',' ? end + 1 : end;
  }
}
