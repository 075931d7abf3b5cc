/*
** peer.h -- between devices: copies from one device's buffer to another's, and peer access, which
** lets a launch on one GPU take buffers of another. Internal; part of the memory layer.
*/
#ifndef CUJIT_PEER_H
#define CUJIT_PEER_H

#include "stream.h"

/* `bytes` (> 0) from src on src_dev to dst on dst_dev, two different devices, on `stream` (NULL,
** or a stream of either device; done when it returns when NULL). The buffers were checked. */
cujit_status cj_copy_between(cujit_device *dst_dev, uint64_t dst, cujit_device *src_dev,
                             uint64_t src, size_t bytes, cujit_stream *stream);

/* 1 when cujit_device_enable_peer(dev, other) succeeded and neither device was reset since. */
int cj_peer_enabled(const cujit_device *dev, const cujit_device *other);

#endif
