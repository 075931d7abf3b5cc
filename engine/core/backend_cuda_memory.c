/*
** backend_cuda_memory.c -- the CUDA backend's memory: buffers on the driver's stream-ordered pool
** (cuMemAllocFromPoolAsync / cuMemFreeAsync on the device's default pool; cuMemAlloc / cuMemFree
** with CUJIT_POOL=off), trimming it, pinned host memory, copies and fills.
*/
#include "backend_cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* --- memory ----------------------------------------------------------------------------------- */

/* --- the pool: buffers are not tied to a stream, so the default stream carries every pool
** allocation and free, and the streams made here are joined to it with events (nothing to do
** while there are none, the common case): a free waits in stream order for the work queued so far
** on every stream (freeing what queued work still reads is safe), and work queued on any stream
** after an allocation waits for it (a block whose free is still pending in the default stream is
** reused there at once). Neither waits on the host. */

/* The default stream waits for what every stream holds now; before a free. */
static CUresult join_streams(cuda_device *c) {
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&c->streams_lock);
  for (int i = 0; i < c->nstreams && rc == CUDA_SUCCESS; i++) {
    if (c->streams[i].capturing) continue;
    rc = c->drv->cuEventRecord(c->streams[i].joined, c->streams[i].stream);
    if (rc == CUDA_SUCCESS) rc = c->drv->cuStreamWaitEvent((CUstream)0, c->streams[i].joined, 0);
  }
  pthread_mutex_unlock(&c->streams_lock);
  return rc;
}

/* Every stream waits for the default stream as it is now; after an allocation, and after a fill
** on the default stream. */
static CUresult join_default(cuda_device *c) {
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&c->streams_lock);
  if (c->nstreams > 0 && !c->allocated)
    rc = c->drv->cuEventCreate(&c->allocated, CU_EVENT_DISABLE_TIMING);
  if (c->nstreams > 0 && rc == CUDA_SUCCESS) rc = c->drv->cuEventRecord(c->allocated, (CUstream)0);
  for (int i = 0; i < c->nstreams && rc == CUDA_SUCCESS; i++)
    if (!c->streams[i].capturing)
      rc = c->drv->cuStreamWaitEvent(c->streams[i].stream, c->allocated, 0);
  pthread_mutex_unlock(&c->streams_lock);
  return rc;
}

static CUresult alloc_once(cuda_device *c, size_t bytes, CUdeviceptr *ptr) {
  if (!c->pool) return c->drv->cuMemAlloc(ptr, bytes);
  CUresult rc = c->drv->cuMemAllocFromPoolAsync(ptr, bytes, c->pool, (CUstream)0);
  return rc == CUDA_SUCCESS ? join_default(c) : rc;
}

/* Out of memory: first the pool's unused memory goes back (after the frees still queued), then
** one more try, then the usual message. */
cujit_status cj_cuda_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  cuda_device *c = CU(dev);
  CUdeviceptr ptr = 0;
  CUresult rc = alloc_once(c, bytes, &ptr);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && c->pool && cj_cuda_pool_trim(dev) == CUJIT_OK)
    rc = alloc_once(c, bytes, &ptr);
  *addr = (uint64_t)ptr;
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return cj_cuda_out_of_memory(dev, NULL, bytes);
  char what[96], asked[32];
  snprintf(what, sizeof what, "%s of %s on device %d", c->pool ? "cuMemAllocAsync" : "cuMemAlloc",
           cj_bytes_text(bytes, asked, sizeof asked), dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

void cj_cuda_free(cujit_device *dev, uint64_t addr) {
  cuda_device *c = CU(dev);
  if (!c->pool || join_streams(c) != CUDA_SUCCESS || /* a failed join falls back to waiting */
      c->drv->cuMemFreeAsync((CUdeviceptr)addr, (CUstream)0) != CUDA_SUCCESS)
    c->drv->cuMemFree((CUdeviceptr)addr);
}

cujit_status cj_cuda_pool_trim(cujit_device *dev) {
  cuda_device *c = CU(dev);
  if (!c->pool) return CUJIT_OK;
  cujit_status st = cj_cuda_synchronize(dev); /* frees still queued hold their blocks */
  /* A free counts as outstanding until the host has observed its completion through a
  ** synchronize; a query does not count (the trim left every block otherwise). The work is done
  ** by now, so this returns at once. */
  if (st == CUJIT_OK) st = cj_cuda_check(dev, c->drv->cuCtxSynchronize(), "cujit_device_trim");
  return st == CUJIT_OK ? cj_cuda_check(dev, c->drv->cuMemPoolTrimTo(c->pool, 0), "cuMemPoolTrimTo")
                        : st;
}

cujit_status cj_cuda_pool_reserved(cujit_device *dev, size_t *bytes) {
  cuda_device *c = CU(dev);
  cuuint64_t reserved = 0;
  *bytes = 0;
  if (!c->pool) return CUJIT_OK;
  CUresult rc =
      c->drv->cuMemPoolGetAttribute(c->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
  *bytes = (size_t)reserved;
  return cj_cuda_check(dev, rc, "reading the memory pool's size (cuMemPoolGetAttribute)");
}

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
  case CJ_COPY_HTOD:
    return finish(dev, drv->cuMemcpyHtoDAsync(dst, (const void *)(uintptr_t)src, bytes, s), stream,
                  "cuMemcpyHtoD", bytes);
  case CJ_COPY_DTOH: {
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

/* A fill on the default stream does not wait (as cudaMemset of device memory does not): the
** streams made here are made to wait for it, so all later work on any stream sees it, and the host
** can only look at device memory through a copy, which comes after it too. */
cujit_status cj_cuda_memset8(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                             void *stream) {
  CUresult rc = DRV(dev)->cuMemsetD8Async(dst, value, bytes, (CUstream)stream);
  if (rc == CUDA_SUCCESS && !stream) rc = join_default(CU(dev));
  return rc == CUDA_SUCCESS ? CUJIT_OK : failed(dev, rc, "cuMemsetD8", bytes);
}
