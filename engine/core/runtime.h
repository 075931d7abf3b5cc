/*
** runtime.h -- devices, primary contexts, faults, device memory, streams and events: everything
** that talks to the driver apart from loading and launching kernels. Internal.
*/
#ifndef CUJIT_RUNTIME_H
#define CUJIT_RUNTIME_H

#include "engine.h"

struct cujit_device {
  cujit_engine *engine;
  const struct cj_backend *ops; /* the backend running this device's work (backend.h) */
  void *impl;                   /* its state (backend_cpu.c: queue, pool, allocations) */
  int ordinal;
  CUdevice handle;
  CUcontext ctx;          /* the retained primary context; NULL until first needed */
  cujit_device_info info; /* read once when the device is first got */
  unsigned generation;    /* bumped by each reset; objects made before it are lost */
  cujit_status fault;     /* CUJIT_OK, or DEVICE_FAULT after a sticky error */
  char fault_msg[2048];   /* the fault, the kernel that caused it, and how to recover */
  int unrecoverable;      /* a reset did not clear the fault: the driver keeps it for the process */
  const char *last_kernel; /* name of the kernel last launched here, to blame on a fault */
  _Atomic size_t allocated;
  struct cujit_stream *streams; /* its live streams (under engine->lock), for synchronize */
};

struct cujit_buffer {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  CUdeviceptr ptr;
  size_t size;
  cujit_dtype dtype;
};

/* Pinned memory belongs to the context that allocated it, so a reset of that device frees it
** too: the buffer then reads as lost (cujit_host_ptr gives NULL). */
struct cujit_host_buffer {
  cj_link link;
  cujit_engine *engine;
  void *ptr;
  size_t size;
  cujit_device *device;
  unsigned generation;
};

struct cujit_stream {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  CUstream handle;
  struct cujit_stream *dev_prev, *dev_next; /* in device->streams */
};

struct cujit_event {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  CUevent handle;
  int recorded; /* cuEventElapsedTime needs both events recorded */
};

/* The engine's current device, got (and its info read) on first use. */
cujit_status cj_current_device(cujit_engine *engine, cujit_device **out);

/* Makes the device's primary context current on this thread (retaining it on first use), or
** fails with the device's fault. The launch path calls this: it is cheap when the context is
** already current (one cuCtxGetCurrent). */
cujit_status cj_device_enter(cujit_device *device);

/* Turns a driver result into a status and message. `what` names the operation ("cuMemAlloc of
** 1.0 GiB"). Sticky errors (illegal address, launch failure, ...) poison the device: its fault
** is set, naming device->last_kernel, and later cj_device_enter calls refuse with it. */
cujit_status cj_check(cujit_device *device, CUresult rc, const char *what);

/* The status for an object made at `generation` of `device`: OK, or BUFFER_LOST after a reset
** (with a message naming `what`), or the device's fault. */
cujit_status cj_check_alive(cujit_device *device, unsigned generation, const char *what);

/* Like cj_device_enter for releasing objects: 1 when the device's context is current and the
** device is not faulted, 0 otherwise; records no error, so a free never clobbers cujit_errmsg. */
int cj_device_enter_quiet(cujit_device *device);

/* Waits until query(device, handle) stops saying CUDA_ERROR_NOT_READY, polling with a short spin
** then a backoff up to ~100 us, so that cujit_interrupt can cut the wait short (INTERRUPTED).
** `what` names the wait in messages ("cujit_stream_synchronize"). */
typedef CUresult (*cj_query_fn)(cujit_device *device, void *handle);
cujit_status cj_wait(cujit_device *device, cj_query_fn query, void *handle, const char *what);

/* "512 bytes", "4.0 KiB", "1.5 GiB": sizes in messages. Returns buf. */
const char *cj_bytes_text(size_t bytes, char *buf, size_t len);

/* The raw stream for a launch or copy: the stream's handle, or 0 (the default stream). */
static inline CUstream cj_stream_handle(const cujit_stream *stream) {
  return stream ? stream->handle : (CUstream)0;
}

#endif
