/*
** stub_devices.h -- the stand-in driver's devices and what passes between them (stub_devices.c),
** named in stub_driver.c's table.
*/
#ifndef CJ_STUB_DEVICES_H
#define CJ_STUB_DEVICES_H

#include <cuda.h>

/* CUJIT_STUB_DEVICES (1 to CJ_STUB_DEVICES_MAX; 1 unless set): how many devices the stand-in has.
 */
#define CJ_STUB_DEVICES_MAX 8
int cj_stub_device_count(void);
CUresult cj_stub_get_count(int *n);
CUresult cj_stub_device_get(CUdevice *d, int ordinal);
CUresult cj_stub_device_name(char *name, int len, CUdevice d);
CUresult cj_stub_device_attribute(int *v, CUdevice_attribute a, CUdevice d);
/* CUJIT_STUB_MEMORY (bytes; 80 GiB unless set): each device's memory. */
size_t cj_stub_device_memory(void);
CUresult cj_stub_total_mem(size_t *bytes, CUdevice d);

/* The primary context of device d >= 1 (device 0's is stub_driver.c's), and the device of such a
** context, or -1 for any other. */
CUcontext cj_stub_primary(CUdevice d);
int cj_stub_primary_device(CUcontext ctx);

/* stub_driver.c's: the device of a context the stand-in made (-1 for any other), and of the one
** current on this thread (-1 when none is). */
int cj_stub_context_device(CUcontext ctx);
int cj_stub_current_device(void);

CUresult cj_stub_can_access_peer(int *can, CUdevice dev, CUdevice peer);
CUresult cj_stub_enable_peer(CUcontext peer, unsigned flags);
CUresult cj_stub_primary_reset(CUdevice d);
CUresult cj_stub_copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                           size_t bytes);
CUresult cj_stub_copy_peer_async(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                 CUcontext src_ctx, size_t bytes, CUstream s);
CUresult cj_stub_pool_set_access(CUmemoryPool pool, const CUmemAccessDesc *desc, size_t count);

/* For tests (dlsym it from libcuda.so.1): "peer_copy" (a count), "peer_copy.bytes",
** "peer_copy.src" and "peer_copy.dst" (the devices of the contexts named), "peer_copy.stream"
** (1: cuMemcpyPeerAsync, 0: cuMemcpyPeer); "enable" (the calls that enabled access), "pool_access"
*(a count),
** "pool_access.id" (the device the pool was opened to), "pool_access.flags"; "on.D.P" (1 when
*device
** D's context has access to device P's memory now); -1 for a name it does not know. */
long cujit_stub_peer_seen(const char *name);

#endif
