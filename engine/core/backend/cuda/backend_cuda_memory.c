/*
** backend_cuda_memory.c -- the CUDA backend's pinned host memory, copies and fills (buffers and
** the pool are backend_cuda_pool.c's).
*/
#include "backend_cuda.h"

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
