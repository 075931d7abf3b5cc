/*
** backend_cuda_toolbox.c -- the CUDA backend's operations of issue 16's toolbox
** (backend_toolbox.h): managed memory (cuMemAllocManaged, cuMemPrefetchAsync_v2, cuMemAdvise_v2),
** mapped and registered host memory (cuMemHostGetDevicePointer, cuMemHostRegister), a library's
** globals (cuLibraryGetGlobal), cooperative launches (cuLaunchCooperativeKernel, with the
** occupancy that bounds them) and IPC of memory and events (cuIpc*). Every entry point is an
** optional one of the loader: a driver without it refuses that feature, saying so.
*/
#include "backend_cuda.h"
#include "backend/backend_toolbox.h"

#include <stdio.h>
#include <string.h>

/* An optional entry point the driver lacks: the feature is refused, not the engine. */
static cujit_status missing(cujit_device *dev, const char *entry, const char *feature) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s needs the driver's %s, which this driver (version %d) does not have; update "
                 "the NVIDIA driver",
                 feature, entry, DRV(dev)->version);
}

#define NEED(dev, entry, feature)                                                                  \
  do {                                                                                             \
    if (!DRV(dev)->entry) return missing(dev, #entry, feature);                                    \
  } while (0)

static cujit_status attribute(cujit_device *dev, CUdevice_attribute which, int *value) {
  return cj_cuda_check(dev, DRV(dev)->cuDeviceGetAttribute(value, which, CU(dev)->handle),
                       "reading a device attribute");
}

/* --- managed memory --------------------------------------------------------------------------- */

static cujit_status cuda_managed_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  NEED(dev, cuMemAllocManaged, "managed memory");
  int managed = 0;
  cujit_status st = attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed);
  if (st != CUJIT_OK) return st;
  if (!managed)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "device %d does not support managed memory; use a device array and copies",
                   dev->ordinal);
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return cj_cuda_out_of_memory(dev, NULL, bytes);
  *addr = p;
  return cj_cuda_check(dev, rc, "allocating managed memory (cuMemAllocManaged)");
}

/* cuMemFree on managed memory waits for the work that may use it, as its contract says. */
static void cuda_managed_free(cujit_device *dev, uint64_t addr) {
  DRV(dev)->cuMemFree((CUdeviceptr)addr);
}

static CUmemLocation location(cujit_device *dev, int host) {
  CUmemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = host ? 0 : (int)CU(dev)->handle;
  return loc;
}

static cujit_status cuda_prefetch(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                                  void *stream) {
  NEED(dev, cuMemPrefetchAsync, "prefetching managed memory");
  CUresult rc = DRV(dev)->cuMemPrefetchAsync((CUdeviceptr)addr, bytes, location(dev, to_host), 0,
                                             (CUstream)stream);
  return cj_cuda_check(dev, rc, "prefetching managed memory (cuMemPrefetchAsync)");
}

static cujit_status cuda_advise(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice) {
  NEED(dev, cuMemAdvise, "advice on managed memory");
  static const CUmem_advise to_cuda[] = {
      [CJ_ADVISE_READ_MOSTLY] = CU_MEM_ADVISE_SET_READ_MOSTLY,
      [CJ_ADVISE_PREFERRED_DEVICE] = CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
      [CJ_ADVISE_PREFERRED_HOST] = CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
      [CJ_ADVISE_ACCESSED_BY] = CU_MEM_ADVISE_SET_ACCESSED_BY,
      [CJ_ADVISE_UNSET_READ_MOSTLY] = CU_MEM_ADVISE_UNSET_READ_MOSTLY,
      [CJ_ADVISE_UNSET_PREFERRED] = CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
      [CJ_ADVISE_UNSET_ACCESSED_BY] = CU_MEM_ADVISE_UNSET_ACCESSED_BY,
  };
  CUresult rc = DRV(dev)->cuMemAdvise((CUdeviceptr)addr, bytes, to_cuda[advice],
                                      location(dev, advice == CJ_ADVISE_PREFERRED_HOST));
  return cj_cuda_check(dev, rc, "advice on managed memory (cuMemAdvise)");
}

/* --- mapped and registered host memory ------------------------------------------------------- */

static cujit_status cuda_host_map(cujit_device *dev, void *host, uint64_t *addr) {
  NEED(dev, cuMemHostGetDevicePointer, "mapped host memory");
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuMemHostGetDevicePointer(&p, host, 0);
  *addr = p;
  return cj_cuda_check(dev, rc, "mapping host memory for the device (cuMemHostGetDevicePointer)");
}

static cujit_status cuda_host_register(cujit_device *dev, void *host, size_t bytes) {
  NEED(dev, cuMemHostRegister, "registering host memory");
  CUresult rc = DRV(dev)->cuMemHostRegister(
      host, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "registering host memory: that memory is already registered (or pinned by "
                   "cujit); register each range once");
  return cj_cuda_check(dev, rc, "registering host memory (cuMemHostRegister)");
}

static void cuda_host_unregister(cujit_device *dev, void *host) {
  if (DRV(dev)->cuMemHostUnregister) DRV(dev)->cuMemHostUnregister(host);
}

/* --- globals and cooperative launches -------------------------------------------------------- */

static cujit_status cuda_get_global(cujit_device *dev, void *module, const char *name,
                                    uint64_t *addr, size_t *bytes) {
  NEED(dev, cuLibraryGetGlobal, "a program's globals");
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

static cujit_status cuda_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                           unsigned shared_bytes, unsigned long long *blocks) {
  NEED(dev, cuOccupancyMaxActiveBlocksPerMultiprocessor, "a cooperative launch");
  int cooperative = 0, per_sm = 0;
  cujit_status st = attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &cooperative);
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

static cujit_status cuda_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                            const unsigned block[3], unsigned shared_bytes,
                                            void *stream, void **args) {
  NEED(dev, cuLaunchCooperativeKernel, "a cooperative launch");
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

/* --- sharing between processes ---------------------------------------------------------------- */

static cujit_status cuda_shareable_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuMemAlloc(&p, bytes);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return cj_cuda_out_of_memory(dev, NULL, bytes);
  *addr = p;
  return cj_cuda_check(dev, rc, "allocating shareable device memory (cuMemAlloc)");
}

static void cuda_shareable_free(cujit_device *dev, uint64_t addr) {
  DRV(dev)->cuMemFree((CUdeviceptr)addr);
}

static cujit_status cuda_ipc_export(cujit_device *dev, uint64_t addr, unsigned char *handle) {
  NEED(dev, cuIpcGetMemHandle, "sharing memory between processes");
  CUipcMemHandle h;
  CUresult rc = DRV(dev)->cuIpcGetMemHandle(&h, (CUdeviceptr)addr);
  if (rc == CUDA_SUCCESS) memcpy(handle, h.reserved, CJ_IPC_HANDLE_BYTES);
  return cj_cuda_check(dev, rc, "exporting device memory (cuIpcGetMemHandle)");
}

static cujit_status cuda_ipc_open(cujit_device *dev, const unsigned char *handle, uint64_t *addr) {
  NEED(dev, cuIpcOpenMemHandle, "opening memory of another process");
  CUipcMemHandle h;
  memcpy(h.reserved, handle, CJ_IPC_HANDLE_BYTES);
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_INVALID_VALUE)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "opening memory of another process on device %d: the driver refused the "
                   "handle (a handle opens in another process only, once per process, while "
                   "the exporting process still holds the memory)",
                   dev->ordinal);
  *addr = p;
  return cj_cuda_check(dev, rc, "opening memory of another process (cuIpcOpenMemHandle)");
}

static void cuda_ipc_close(cujit_device *dev, uint64_t addr) {
  if (DRV(dev)->cuIpcCloseMemHandle) DRV(dev)->cuIpcCloseMemHandle((CUdeviceptr)addr);
}

static cujit_status cuda_ipc_event_create(cujit_device *dev, void **event) {
  CUevent e = NULL;
  CUresult rc = DRV(dev)->cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING);
  *event = e;
  return cj_cuda_check(dev, rc, "creating an interprocess event (cuEventCreate)");
}

static cujit_status cuda_ipc_event_export(cujit_device *dev, void *event, unsigned char *handle) {
  NEED(dev, cuIpcGetEventHandle, "sharing an event between processes");
  CUipcEventHandle h;
  CUresult rc = DRV(dev)->cuIpcGetEventHandle(&h, (CUevent)event);
  if (rc == CUDA_SUCCESS) memcpy(handle, h.reserved, CJ_IPC_HANDLE_BYTES);
  return cj_cuda_check(dev, rc, "exporting an event (cuIpcGetEventHandle)");
}

static cujit_status cuda_ipc_event_open(cujit_device *dev, const unsigned char *handle,
                                        void **event) {
  NEED(dev, cuIpcOpenEventHandle, "opening an event of another process");
  CUipcEventHandle h;
  memcpy(h.reserved, handle, CJ_IPC_HANDLE_BYTES);
  CUevent e = NULL;
  CUresult rc = DRV(dev)->cuIpcOpenEventHandle(&e, h);
  *event = e;
  return cj_cuda_check(dev, rc, "opening an event of another process (cuIpcOpenEventHandle)");
}

const cj_backend_toolbox cj_cuda_toolbox = {
    .managed_alloc = cuda_managed_alloc,
    .managed_free = cuda_managed_free,
    .prefetch = cuda_prefetch,
    .advise = cuda_advise,
    .host_map = cuda_host_map,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
    .get_global = cuda_get_global,
    .coresident_blocks = cuda_coresident_blocks,
    .launch_cooperative = cuda_launch_cooperative,
    .shareable_alloc = cuda_shareable_alloc,
    .shareable_free = cuda_shareable_free,
    .ipc_export = cuda_ipc_export,
    .ipc_open = cuda_ipc_open,
    .ipc_close = cuda_ipc_close,
    .ipc_event_create = cuda_ipc_event_create,
    .ipc_event_export = cuda_ipc_event_export,
    .ipc_event_open = cuda_ipc_event_open,
};
