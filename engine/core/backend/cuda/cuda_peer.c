/*
** cuda_peer.c -- the CUDA backend between two GPUs: copies from one device's memory to
** another's (cuMemcpyPeer, which goes over NVLink or PCIe when the devices can reach each other
** and is staged through host memory by the driver when they cannot), and peer access, which lets
** a kernel on one device read and write another's memory (cuCtxEnablePeerAccess).
*/
#include "cuda.h"

#include <stdio.h>

/* The primary contexts of both devices exist: the core entered each before calling. */
cujit_status cj_cuda_copy_peer(cujit_device *dev, uint64_t dst, cujit_device *src_dev, uint64_t src,
                               size_t bytes, void *stream) {
  cj_driver *drv = DRV(dev);
  CUcontext dst_ctx = __atomic_load_n(&CU(dev)->ctx, __ATOMIC_ACQUIRE);
  CUcontext src_ctx = __atomic_load_n(&CU(src_dev)->ctx, __ATOMIC_ACQUIRE);
  char what[96], size[32];
  snprintf(what, sizeof what, "cuMemcpyPeer of %s from device %d to device %d",
           cj_bytes_text(bytes, size, sizeof size), src_dev->ordinal, dev->ordinal);
  if (stream)
    return cj_cuda_check(
        dev, drv->cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, bytes, (CUstream)stream), what);
  /* The copy without a stream is ordered behind both contexts' default streams but may return
  ** before it is done: wait for it on both devices, as the other copies on a NULL stream do. */
  cujit_status st = cj_cuda_check(dev, drv->cuMemcpyPeer(dst, dst_ctx, src, src_ctx, bytes), what);
  if (st == CUJIT_OK) st = cj_backend_wait(dev, cj_cuda_stream_done, NULL, "cujit_memcpy_peer");
  if (st == CUJIT_OK && (st = dev->ops->enter(src_dev)) == CUJIT_OK)
    st = cj_backend_wait(src_dev, cj_cuda_stream_done, NULL, "cujit_memcpy_peer");
  return st;
}

cujit_status cj_cuda_peer_enable(cujit_device *dev, cujit_device *peer) {
  cj_driver *drv = DRV(dev);
  int can = 0;
  cujit_status st =
      cj_cuda_check(dev, drv->cuDeviceCanAccessPeer(&can, CU(dev)->handle, CU(peer)->handle),
                    "cuDeviceCanAccessPeer");
  if (st != CUJIT_OK) return st;
  if (!can)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "device %d cannot access device %d's memory directly (no NVLink or PCIe peer "
                   "path between them); copy between them instead (cujit_memcpy_peer, or "
                   "a:copy_to(device) in Lua), which the driver stages through host memory",
                   dev->ordinal, peer->ordinal);
  st = peer->ops->enter(peer); /* its primary context must exist to be named */
  if (st != CUJIT_OK) return st;
  CUcontext peer_ctx = __atomic_load_n(&CU(peer)->ctx, __ATOMIC_ACQUIRE);
  if ((st = dev->ops->enter(dev)) != CUJIT_OK) return st;
  CUresult rc = drv->cuCtxEnablePeerAccess(peer_ctx, 0);
  if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cj_cuda_check(dev, rc, "cuCtxEnablePeerAccess");
  /* Buffers come from peer's memory pool, which cuCtxEnablePeerAccess does not open: a pool
  ** grants access to other devices itself. */
  CUmemoryPool pool = CU(peer)->pool;
  if (!pool) return CUJIT_OK; /* CUJIT_POOL=off: plain allocations follow the context's access */
  CUmemAccessDesc access = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev->ordinal},
                            .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  return cj_cuda_check(dev, drv->cuMemPoolSetAccess(pool, &access, 1),
                       "cuMemPoolSetAccess (opening a device's memory pool to its peer)");
}
