/*
** cuda_program.c -- the CUDA backend's programs and launches (backend.h): loading a program's
** image (cuLibraryLoadData) and finding kernels in it, launches and their failures, occupancy,
** the shared-memory opt-in, attributes and parameter layout, a library's globals
** (cuLibraryGetGlobal), cooperative launches (cuLaunchCooperativeKernel, bounded by the
** occupancy) and launches with attributes (cuLaunchKernelEx: clusters, bounded by
** cuOccupancyMaxActiveClusters, programmatic dependent launch, priority). Optional driver entry
*points refuse their feature, saying so (CJ_CUDA_NEED).
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- programs and launches -------------------------------------------------------------------- */

/* A CUlibrary holds the program for every context; each device still gets its own, so that
** unloading follows the program layer's per-device bookkeeping. */
cujit_status cj_cuda_load(cujit_device *dev, const cj_image *image, void **module) {
  const void *code = image->binary ? image->binary : (const void *)image->ptx;
  CUlibrary lib = NULL;
  CUresult rc = DRV(dev)->cuLibraryLoadData(&lib, code, NULL, NULL, 0, NULL, NULL, 0);
  *module = lib;
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[300];
  snprintf(what, sizeof what, "loading the code of %s (%s) onto device %d", image->name,
           image->arch, dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

void cj_cuda_unload(cujit_device *dev, void *module) {
  DRV(dev)->cuLibraryUnload((CUlibrary)module);
}

/* The function for the current context of the kernel `name` of the library. */
cujit_status cj_cuda_get_function(cujit_device *dev, void *module, const char *name, void **fn) {
  cj_driver *drv = DRV(dev);
  CUkernel kernel = NULL;
  CUfunction f = NULL;
  CUresult rc = drv->cuLibraryGetKernel(&kernel, (CUlibrary)module, name);
  if (rc == CUDA_SUCCESS) rc = drv->cuKernelGetFunction(&f, kernel);
  *fn = f;
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[300];
  snprintf(what, sizeof what, "loading kernel '%s' on device %d", name, dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

/* cujit_program_module: the library's module in the context cujit uses (entered). */
cujit_status cj_cuda_module_native(cujit_device *dev, void *module, void **native) {
  cj_driver *drv = DRV(dev);
  *native = NULL;
  if (!drv->cuLibraryGetModule)
    return cj_cuda_missing(dev, "cuLibraryGetModule", "cujit_program_module");
  CUmodule m = NULL;
  CUresult rc = drv->cuLibraryGetModule(&m, (CUlibrary)module);
  *native = m;
  return cj_cuda_check(dev, rc, "cuLibraryGetModule");
}

static cujit_status launch_error(cujit_device *dev, CUresult rc) {
  int resources = rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  const char *kernel = __atomic_load_n(&dev->last_kernel, __ATOMIC_RELAXED);
  char what[300];
  snprintf(what, sizeof what, "launch of kernel '%s' on device %d%s", kernel ? kernel : "?",
           dev->ordinal,
           resources ? " (the block needs more registers than the device has for that many "
                       "threads: try a smaller block)"
                     : "");
  cujit_status st = cj_cuda_check(dev, rc, what);
  if (!resources) return st;
  char msg[CJ_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", cujit_errmsg(dev->engine));
  return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG, "%s", msg);
}

cujit_status cj_cuda_launch(cujit_device *dev, void *fn, const unsigned grid[3],
                            const unsigned block[3], unsigned shared_bytes, void *stream,
                            void **args) {
  CUresult rc =
      DRV(dev)->cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
                               block[2], shared_bytes, (CUstream)stream, args, NULL);
  return rc == CUDA_SUCCESS ? CUJIT_OK : launch_error(dev, rc);
}

cujit_status cj_cuda_suggest_block(cujit_device *dev, void *fn, int *block_size, int *min_grid) {
  CUresult rc =
      DRV(dev)->cuOccupancyMaxPotentialBlockSize(min_grid, block_size, (CUfunction)fn, NULL, 0, 0);
  return cj_cuda_check(dev, rc, "the occupancy query (cuOccupancyMaxPotentialBlockSize)");
}

cujit_status cj_cuda_allow_shared(cujit_device *dev, void *fn, unsigned bytes) {
  CUresult rc = DRV(dev)->cuFuncSetAttribute(
      (CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[200];
  snprintf(what, sizeof what, "allowing a kernel %u bytes of dynamic shared memory", bytes);
  return cj_cuda_check(dev, rc, what);
}

cujit_status cj_cuda_attributes(cujit_device *dev, void *fn, cujit_kernel_attributes *attrs) {
  static const CUfunction_attribute which[] = {CU_FUNC_ATTRIBUTE_NUM_REGS,
                                               CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                               CU_FUNC_ATTRIBUTE_PTX_VERSION,
                                               CU_FUNC_ATTRIBUTE_BINARY_VERSION};
  int *fields[] = {&attrs->registers,     &attrs->static_shared_bytes,   &attrs->const_bytes,
                   &attrs->local_bytes,   &attrs->max_threads_per_block, &attrs->ptx_version,
                   &attrs->binary_version};
  for (size_t i = 0; i < sizeof which / sizeof *which; i++) {
    CUresult rc = DRV(dev)->cuFuncGetAttribute(fields[i], which[i], (CUfunction)fn);
    if (rc != CUDA_SUCCESS) return cj_cuda_check(dev, rc, "reading kernel attributes");
  }
  return CUJIT_OK;
}

/* cuFuncGetParamInfo is optional (CUDA 12.4+): without it, cujit's own layout stands. */
int cj_cuda_param_info(cujit_device *dev, void *fn, size_t index, size_t *offset, size_t *size) {
  cj_driver *drv = DRV(dev);
  return drv->cuFuncGetParamInfo &&
         drv->cuFuncGetParamInfo((CUfunction)fn, index, offset, size) == CUDA_SUCCESS;
}

/* --- globals and cooperative launches -------------------------------------------------------- */

cujit_status cj_cuda_get_global(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                                size_t *bytes) {
  CJ_CUDA_NEED(dev, cuLibraryGetGlobal, "a program's globals");
  CUdeviceptr p = 0;
  size_t n = 0;
  CUresult rc = DRV(dev)->cuLibraryGetGlobal(&p, &n, (CUlibrary)module, name);
  if (rc == CUDA_ERROR_NOT_FOUND)
    return cj_fail(dev->engine, CUJIT_ERROR_NOT_FOUND,
                   "the program has no __device__ or __constant__ variable '%s' (a variable of "
                   "C++ linkage inside a namespace, or a static one, is not found by name: "
                   "declare it at file scope, not static)",
                   name);
  *addr = p, *bytes = n;
  return cj_cuda_check(dev, rc, "finding a global of a program (cuLibraryGetGlobal)");
}

cujit_status cj_cuda_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                       unsigned shared_bytes, unsigned long long *blocks) {
  CJ_CUDA_NEED(dev, cuOccupancyMaxActiveBlocksPerMultiprocessor, "a cooperative launch");
  int cooperative = 0, per_sm = 0;
  cujit_status st = cj_cuda_attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &cooperative);
  if (st != CUJIT_OK) return st;
  if (!cooperative)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "device %d does not support cooperative launches", dev->ordinal);
  CUresult rc = DRV(dev)->cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (CUfunction)fn,
                                                                      (int)threads, shared_bytes);
  if ((st = cj_cuda_check(dev, rc, "the occupancy query of a cooperative launch")) != CUJIT_OK)
    return st;
  *blocks = (unsigned long long)per_sm * (unsigned long long)dev->info.multiprocessors;
  return CUJIT_OK;
}

cujit_status cj_cuda_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                        const unsigned block[3], unsigned shared_bytes,
                                        void *stream, void **args) {
  CJ_CUDA_NEED(dev, cuLaunchCooperativeKernel, "a cooperative launch");
  CUresult rc =
      DRV(dev)->cuLaunchCooperativeKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0],
                                          block[1], block[2], shared_bytes, (CUstream)stream, args);
  if (rc == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
    return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "a cooperative launch on device %d: the grid does not fit on the device at "
                   "once; launch fewer blocks (cujit checks occupancy x SMs first; the driver "
                   "also counts registers and shared memory)",
                   dev->ordinal);
  return cj_cuda_check(dev, rc, "a cooperative launch (cuLaunchCooperativeKernel)");
}

/* --- launch attributes (issue 26) ------------------------------------------------------------- */

/* The CUlaunchConfig of a launch with `attrs`, its attributes in `room` (3 at most). */
static void launch_config(CUlaunchConfig *c, CUlaunchAttribute room[3], const unsigned grid[3],
                          const unsigned block[3], unsigned shared_bytes, void *stream,
                          const cj_launch_attrs *attrs) {
  memset(c, 0, sizeof *c);
  memset(room, 0, 3 * sizeof *room);
  c->gridDimX = grid[0], c->gridDimY = grid[1], c->gridDimZ = grid[2];
  c->blockDimX = block[0], c->blockDimY = block[1], c->blockDimZ = block[2];
  c->sharedMemBytes = shared_bytes, c->hStream = (CUstream)stream, c->attrs = room;
  unsigned n = 0;
  if (attrs->cluster[0]) {
    room[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    room[n].value.clusterDim.x = attrs->cluster[0];
    room[n].value.clusterDim.y = attrs->cluster[1];
    room[n++].value.clusterDim.z = attrs->cluster[2];
  }
  if (attrs->programmatic) {
    room[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    room[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (attrs->priority) {
    room[n].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    room[n++].value.priority = attrs->priority;
  }
  c->numAttrs = n;
}

cujit_status cj_cuda_check_attrs(cujit_device *dev, void *fn, const unsigned grid[3],
                                 const unsigned block[3], unsigned shared_bytes,
                                 const cj_launch_attrs *attrs, int *clusters) {
  CJ_CUDA_NEED(dev, cuLaunchKernelEx, "launch attributes (clusters, programmatic launches)");
  *clusters = 1;
  unsigned size = attrs->cluster[0] * attrs->cluster[1] * attrs->cluster[2];
  if ((size || attrs->programmatic) && dev->info.cc_major < 9)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "device %d is sm_%d%d: %s need sm_90 or newer (Hopper); launch without %s "
                   "there",
                   dev->ordinal, dev->info.cc_major, dev->info.cc_minor,
                   size ? "thread block clusters" : "programmatic dependent launches",
                   size ? "the cluster" : "programmatic");
  if (!size) return CUJIT_OK;
  int can = 0;
  cujit_status st = cj_cuda_attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, &can);
  if (st != CUJIT_OK) return st;
  if (!can)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "device %d does not support cluster launches", dev->ordinal);
  cj_driver *drv = DRV(dev);
  if (size > 8) { /* past the portable size: the kernel must allow it, where the device can */
    CUresult rc = drv->cuFuncSetAttribute((CUfunction)fn,
                                          CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (rc != CUDA_SUCCESS)
      return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "a cluster of %u blocks on device %d: over the portable 8, and the device "
                     "does not allow larger clusters for this kernel "
                     "(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED refused); use at "
                     "most 8 blocks per cluster",
                     size, dev->ordinal);
  }
  CJ_CUDA_NEED(dev, cuOccupancyMaxActiveClusters, "checking that a cluster fits");
  CUlaunchConfig c;
  CUlaunchAttribute room[3];
  launch_config(&c, room, grid, block, shared_bytes, NULL, attrs);
  CUresult rc = drv->cuOccupancyMaxActiveClusters(clusters, (CUfunction)fn, &c);
  if (rc == CUDA_ERROR_INVALID_CLUSTER_SIZE) {
    *clusters = 0; /* a size the device does not take at all: none fits */
    return CUJIT_OK;
  }
  return cj_cuda_check(dev, rc, "the occupancy query of a cluster (cuOccupancyMaxActiveClusters)");
}

cujit_status cj_cuda_launch_ex(cujit_device *dev, void *fn, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes, void *stream,
                               void **args, const cj_launch_attrs *attrs) {
  CUlaunchConfig c;
  CUlaunchAttribute room[3];
  launch_config(&c, room, grid, block, shared_bytes, stream, attrs);
  CUresult rc = DRV(dev)->cuLaunchKernelEx(&c, (CUfunction)fn, args, NULL);
  return rc == CUDA_SUCCESS ? CUJIT_OK : launch_error(dev, rc);
}
