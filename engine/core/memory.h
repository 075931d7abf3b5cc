/*
** memory.h -- device buffers and host buffers over the backend seam, with the copies and fills
** between them. Internal.
*/
#ifndef CUJIT_MEMORY_H
#define CUJIT_MEMORY_H

#include "stream.h"

struct cujit_buffer {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  uint64_t ptr; /* the device address */
  size_t size;
  cujit_dtype dtype;
};

/* Host memory the backend allocated (pinned on CUDA), which belongs to the device's context: a
** reset of that device frees it too, and the buffer then reads as lost (cujit_host_ptr: NULL). */
struct cujit_host_buffer {
  cj_link link;
  cujit_engine *engine;
  void *ptr;
  size_t size;
  cujit_device *device;
  unsigned generation;
};

#endif
