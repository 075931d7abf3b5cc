/*
** cuda_memory.c -- the CUDA backend's pinned host memory, copies and fills (buffers and
** the pool are cuda_pool.c's).
*/
#include "cuda.h"

#include <string.h>

#include <stdio.h>
#include <stdlib.h>

cujit_status cj_cuda_host_alloc(cujit_device *dev, size_t bytes, void **ptr) {
  /* DEVICEMAP: kernels may use it in place (cujit_host_map), as UVA allows anyway */
  CUresult rc =
      DRV(dev)->cuMemHostAlloc(ptr, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[96], size[32];
  cj_bytes_text(bytes, size, sizeof size);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY)
    return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cujit_host_alloc: cannot pin %s of host memory; ask for less, or use ordinary "
                   "(pageable) memory",
                   size);
  snprintf(what, sizeof what, "cuMemHostAlloc of %s", size);
  return cj_cuda_check(dev, rc, what);
}

void cj_cuda_host_free(cujit_device *dev, void *ptr) {
  DRV(dev)->cuMemFreeHost(ptr);
}

static cujit_status failed(cujit_device *dev, CUresult rc, const char *call, size_t bytes) {
  char what[96], size[32];
  snprintf(what, sizeof what, "%s of %s on device %d", call,
           cj_bytes_text(bytes, size, sizeof size), dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

/* A copy on a NULL stream promises a synchronous call; the driver's "synchronous" copies may return
** before the device is done (pageable uploads, device-to-device), and cujit's non-blocking streams
** do not order behind the legacy stream, so wait for it here. */
static cujit_status finish(cujit_device *dev, CUresult rc, void *stream, const char *call,
                           size_t bytes) {
  if (rc != CUDA_SUCCESS) return failed(dev, rc, call, bytes);
  return stream ? CUJIT_OK : cj_backend_wait(dev, cj_cuda_stream_done, NULL, call);
}

cujit_status cj_cuda_copy(cujit_device *dev, cj_copy_kind kind, uint64_t dst, uint64_t src,
                          size_t bytes, void *stream) {
  cj_driver *drv = DRV(dev);
  CUstream s = (CUstream)stream;
  switch (kind) {
  case CJ_COPY_HTOD: {
    cujit_status st;
    if (!stream && cj_cuda_staged_upload(dev, dst, (const void *)(uintptr_t)src, bytes, &st))
      return st; /* small: staged, no wait */
    return finish(dev, drv->cuMemcpyHtoDAsync(dst, (const void *)(uintptr_t)src, bytes, s), stream,
                  "cuMemcpyHtoD", bytes);
  }
  case CJ_COPY_DTOH: {
    cujit_status staged;
    if (!stream && cj_cuda_staged_download(dev, (void *)(uintptr_t)dst, src, bytes, &staged))
      return staged; /* small: one copy and one wait */
    /* Into pageable memory the driver's copy waits for the work ahead of it in its own way (a
    ** spin that holds a core and no interrupt can stop), so that wait is cujit's first; it costs
    ** one query when nothing is queued. */
    cujit_status st =
        stream ? CUJIT_OK : cj_backend_wait(dev, cj_cuda_stream_done, NULL, "cujit_memcpy_dtoh");
    if (st != CUJIT_OK) return st;
    return finish(dev, drv->cuMemcpyDtoHAsync((void *)(uintptr_t)dst, src, bytes, s), stream,
                  "cuMemcpyDtoH", bytes);
  }
  default:
    return finish(dev, drv->cuMemcpyDtoDAsync(dst, src, bytes, s), stream, "cuMemcpyDtoD", bytes);
  }
}

/* A fill on the default stream does not wait (as cudaMemset of device memory does not): every
** stream catches up with it before its next work (cj_cuda_order_after_default), so all later work
** on any stream sees it, and the host can only look at device memory through a copy, which comes
** after it too. */
cujit_status cj_cuda_memset8(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                             void *stream) {
  CUresult rc = DRV(dev)->cuMemsetD8Async(dst, value, bytes, (CUstream)stream);
  if (rc != CUDA_SUCCESS) return failed(dev, rc, "cuMemsetD8", bytes);
  if (!stream) cj_cuda_order_after_default(dev);
  return CUJIT_OK;
}

/* --- managed memory --------------------------------------------------------------------------- */

cujit_status cj_cuda_managed_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  CJ_CUDA_NEED(dev, cuMemAllocManaged, "managed memory");
  int managed = 0;
  cujit_status st = cj_cuda_attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed);
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
void cj_cuda_managed_free(cujit_device *dev, uint64_t addr) {
  DRV(dev)->cuMemFree((CUdeviceptr)addr);
}

static CUmemLocation location(cujit_device *dev, int host) {
  CUmemLocation loc;
  memset(&loc, 0, sizeof loc);
  loc.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  loc.id = host ? 0 : (int)CU(dev)->handle;
  return loc;
}

cujit_status cj_cuda_prefetch(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                              void *stream) {
  CJ_CUDA_NEED(dev, cuMemPrefetchAsync, "prefetching managed memory");
  CUresult rc = DRV(dev)->cuMemPrefetchAsync((CUdeviceptr)addr, bytes, location(dev, to_host), 0,
                                             (CUstream)stream);
  return cj_cuda_check(dev, rc, "prefetching managed memory (cuMemPrefetchAsync)");
}

cujit_status cj_cuda_advise(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice) {
  CJ_CUDA_NEED(dev, cuMemAdvise, "advice on managed memory");
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

cujit_status cj_cuda_host_map(cujit_device *dev, void *host, uint64_t *addr) {
  CJ_CUDA_NEED(dev, cuMemHostGetDevicePointer, "mapped host memory");
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuMemHostGetDevicePointer(&p, host, 0);
  *addr = p;
  return cj_cuda_check(dev, rc, "mapping host memory for the device (cuMemHostGetDevicePointer)");
}

cujit_status cj_cuda_host_register(cujit_device *dev, void *host, size_t bytes) {
  CJ_CUDA_NEED(dev, cuMemHostRegister, "registering host memory");
  CUresult rc = DRV(dev)->cuMemHostRegister(
      host, bytes, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "registering host memory: that memory is already registered (or pinned by "
                   "cujit); register each range once");
  return cj_cuda_check(dev, rc, "registering host memory (cuMemHostRegister)");
}

void cj_cuda_host_unregister(cujit_device *dev, void *host) {
  if (DRV(dev)->cuMemHostUnregister) DRV(dev)->cuMemHostUnregister(host);
}

/* --- memory of other allocators --------------------------------------------------------------- */

/* What the driver says of an address, for pointer_check. */
typedef struct pointer_facts {
  unsigned memory_type; /* a CUmemorytype, 0 when the driver does not know the address */
  CUcontext context;    /* NULL for memory of no context (pools, cuMemCreate mappings) */
  int ordinal;
  unsigned managed;
  CUdeviceptr start;
  size_t range;
} pointer_facts;

static cujit_status pointer_facts_of(cujit_device *dev, uint64_t addr, const char *fn,
                                     pointer_facts *f) {
  cj_driver *drv = DRV(dev);
  if (!drv->cuPointerGetAttributes)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: this CUDA driver lacks cuPointerGetAttributes, so cujit cannot check that "
                   "the memory is device %d's; update the driver (CUDA 7.0 or later)",
                   fn, dev->ordinal);
  CUpointer_attribute which[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_CONTEXT,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,   CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void *data[] = {&f->memory_type, &f->context, &f->ordinal, &f->managed, &f->start, &f->range};
  memset(f, 0, sizeof *f);
  f->ordinal = -1;
  CUresult rc =
      drv->cuPointerGetAttributes(sizeof which / sizeof *which, which, data, (CUdeviceptr)addr);
  /* An address no allocation holds is answered with defaults, or (some drivers) refused. */
  if (rc == CUDA_ERROR_INVALID_VALUE) {
    memset(f, 0, sizeof *f);
    return CUJIT_OK;
  }
  char what[96];
  snprintf(what, sizeof what, "%s: asking the driver about address 0x%llx", fn,
           (unsigned long long)addr);
  return cj_cuda_check(dev, rc, what);
}

cujit_status cj_cuda_pointer_check(cujit_device *dev, uint64_t addr, size_t bytes, const char *fn) {
  pointer_facts f;
  cujit_status st = pointer_facts_of(dev, addr, fn, &f);
  if (st != CUJIT_OK) return st;
  cujit_engine *e = dev->engine;
  unsigned long long a = (unsigned long long)addr;
  int me = (int)CU(dev)->handle;
  if (f.memory_type == 0)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx is not memory the CUDA driver allocated (host memory from "
                   "malloc, memory already freed, or a wrong address); pass device memory of "
                   "device %d (cudaMalloc, cuMemAlloc), or wrap host memory on the CPU device",
                   fn, a, dev->ordinal);
  if (f.memory_type == CU_MEMORYTYPE_HOST && !f.managed)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx is pinned host memory, not device memory; give it to "
                   "cujit with cujit_host_register and cujit_host_map (Lua: cuda.register, "
                   "h:mapped()), or copy it to a device buffer",
                   fn, a);
  if (f.memory_type != CU_MEMORYTYPE_DEVICE && f.memory_type != CU_MEMORYTYPE_UNIFIED && !f.managed)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx is memory of type %u (an array or other), not device "
                   "memory; pass memory from cudaMalloc or cuMemAlloc",
                   fn, a, f.memory_type);
  if (f.ordinal >= 0 && f.ordinal != me)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx is memory of device %d, not device %d; wrap it on device "
                   "%d (cujit_buffer_wrap_on), or copy it here",
                   fn, a, f.ordinal, dev->ordinal, f.ordinal);
  CUcontext mine = __atomic_load_n(&CU(dev)->ctx, __ATOMIC_ACQUIRE);
  if (f.context && mine && f.context != mine)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx belongs to another CUDA context of device %d than the one "
                   "cujit uses (%s); allocate it there, or copy it",
                   fn, a, dev->ordinal,
                   CU(dev)->adopted ? "the one given to cujit_device_use_context"
                                    : "the device's primary context, which the CUDA runtime uses "
                                      "too");
  /* A range of 0: the driver keeps no extent for that memory; nothing to compare. */
  if (f.range && (addr < f.start || addr - f.start > f.range || bytes > f.range - (addr - f.start)))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %zu bytes from 0x%llx run past the allocation they start in "
                   "([0x%llx, 0x%llx), %zu bytes); wrap at most %zu bytes from there",
                   fn, bytes, a, (unsigned long long)f.start,
                   (unsigned long long)(f.start + f.range), f.range,
                   addr >= f.start && addr - f.start <= f.range ? f.range - (size_t)(addr - f.start)
                                                                : (size_t)0);
  return CUJIT_OK;
}
