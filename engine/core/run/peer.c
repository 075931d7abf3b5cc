/*
** peer.c -- between devices: copies from one device's buffer to another's (two GPUs: the
** backend's peer copy; a GPU and the CPU device, whose memory is host memory: the GPU's own host
** copy), and peer access, which lets a launch on one GPU take buffers of another, remembered per
** engine with both devices' reset generations (a reset drops it).
*/
#include "peer.h"

#include <stdlib.h>

#define PEER_MAX 64 /* GPUs per engine that peer access is remembered for */

typedef struct peer_entry {
  unsigned on, dev_generation, peer_generation; /* atomic access */
} peer_entry;

typedef struct peer_table {
  peer_entry entry[PEER_MAX][PEER_MAX];
} peer_table;

static const char peer_tag = 0;

static void peer_init(void *state, cujit_engine *engine) {
  (void)state, (void)engine; /* zeroed: nothing enabled */
}

static void peer_destroy(void *state) {
  (void)state;
}

static peer_table *peers(cujit_engine *engine) {
  return cj_slot_get(engine, &peer_tag, sizeof(peer_table), peer_init, peer_destroy);
}

static int gpu_in_table(const cujit_device *dev) {
  return dev->ordinal >= 0 && dev->ordinal < PEER_MAX;
}

int cj_peer_enabled(const cujit_device *dev, const cujit_device *other) {
  if (!gpu_in_table(dev) || !gpu_in_table(other) || dev->engine != other->engine) return 0;
  peer_table *t = peers(dev->engine);
  if (!t) return 0;
  peer_entry *e = &t->entry[dev->ordinal][other->ordinal];
  return __atomic_load_n(&e->on, __ATOMIC_ACQUIRE) &&
         cj_device_current(dev, __atomic_load_n(&e->dev_generation, __ATOMIC_RELAXED)) &&
         cj_device_current(other, __atomic_load_n(&e->peer_generation, __ATOMIC_RELAXED));
}

cujit_status cujit_device_enable_peer(cujit_device *device, cujit_device *peer) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_device_enable_peer";
  if (!device || !peer)
    return cj_fail(device ? device->engine
                   : peer ? peer->engine
                          : NULL,
                   CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, device ? "peer" : "device");
  cujit_engine *engine = device->engine;
  if (peer->engine != engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the devices belong to two engines; get both from one engine", fn);
  if (device == peer)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: device %d and its peer are the same device; a device always reaches its "
                   "own memory",
                   fn, device->ordinal);
  if (device->ops->host_addressed || peer->ops->host_addressed)
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: the CPU device shares no memory with a GPU; copy between them "
                   "(cujit_memcpy_dtod, or a:copy_to(device) in Lua)",
                   fn);
  if (!gpu_in_table(device) || !gpu_in_table(peer) || !device->ops->peer_enable)
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: peer access between devices %d and %d is not supported (cujit remembers "
                   "it for the first %d GPUs); copy between them instead",
                   fn, device->ordinal, peer->ordinal, PEER_MAX);
  peer_table *t = peers(engine);
  if (!t) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  cujit_status st = cj_device_enter(peer);
  if (st == CUJIT_OK) st = cj_device_enter(device);
  if (st == CUJIT_OK) st = device->ops->peer_enable(device, peer);
  if (st != CUJIT_OK) return st;
  peer_entry *e = &t->entry[device->ordinal][peer->ordinal];
  __atomic_store_n(&e->dev_generation, __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE),
                   __ATOMIC_RELAXED);
  __atomic_store_n(&e->peer_generation, __atomic_load_n(&peer->generation, __ATOMIC_ACQUIRE),
                   __ATOMIC_RELAXED);
  __atomic_store_n(&e->on, 1, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

/* A GPU and the CPU device: the CPU device's memory is host memory, so the GPU copies to or from
** it as to or from any host memory, after the CPU device's queued work that may use it. */
static cujit_status copy_with_host(cujit_device *dst_dev, uint64_t dst, cujit_device *src_dev,
                                   uint64_t src, size_t bytes, cujit_stream *stream) {
  cujit_device *host = dst_dev->ops->host_addressed ? dst_dev : src_dev;
  cujit_device *gpu = host == dst_dev ? src_dev : dst_dev;
  if (stream && stream->device != gpu)
    return cj_fail(gpu->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_memcpy_dtod: a copy between the CPU device and device %d runs on the "
                   "GPU; pass a stream of device %d, or none",
                   gpu->ordinal, gpu->ordinal);
  cujit_status st = cujit_device_synchronize(host);
  if (st == CUJIT_OK) st = cj_device_enter(gpu);
  if (st != CUJIT_OK) return st;
  st = gpu->ops->copy(gpu, host == dst_dev ? CJ_COPY_DTOH : CJ_COPY_HTOD, dst, src, bytes,
                      cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}

cujit_status cj_copy_between(cujit_device *dst_dev, uint64_t dst, cujit_device *src_dev,
                             uint64_t src, size_t bytes, cujit_stream *stream) {
  cujit_engine *engine = dst_dev->engine;
  if (stream && stream->device != dst_dev && stream->device != src_dev)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_memcpy_dtod: the stream is on device %d but the copy goes from device "
                   "%d to device %d; pass a stream of either device",
                   stream->device->ordinal, src_dev->ordinal, dst_dev->ordinal);
  cujit_status st =
      stream ? cj_check_alive(stream->device, stream->generation, "the stream") : CUJIT_OK;
  if (st != CUJIT_OK) return st;
  if (dst_dev->ops->host_addressed || src_dev->ops->host_addressed)
    return copy_with_host(dst_dev, dst, src_dev, src, bytes, stream);
  if (dst_dev->ops != src_dev->ops || !dst_dev->ops->copy_peer)
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "cujit_memcpy_dtod: no copy from device %d to device %d (their backends "
                   "differ); copy through host memory",
                   src_dev->ordinal, dst_dev->ordinal);
  /* Both contexts must exist to be named; the stream's device is entered last. */
  if ((st = cj_device_enter(src_dev)) != CUJIT_OK || (st = cj_device_enter(dst_dev)) != CUJIT_OK)
    return st;
  if (stream && (st = cj_device_enter(stream->device)) != CUJIT_OK) return st;
  st = dst_dev->ops->copy_peer(dst_dev, dst, src_dev, src, bytes, cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}
