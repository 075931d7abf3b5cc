/*
** stream.h -- streams and events over the backend seam, and synchronizing a whole device. A NULL
** stream is the device's default stream everywhere. Internal.
*/
#ifndef CUJIT_STREAM_H
#define CUJIT_STREAM_H

#include "device.h"

struct cujit_stream {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  void *handle;                     /* the backend's */
  struct cj_capture *capture;       /* while it captures a graph (graph.c), what launches record */
  void *joined;                     /* an event of the backend's, recorded on the default stream */
  _Atomic unsigned long seen_epoch; /* the device's order_epoch this stream last caught up with */
};

struct cujit_event {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  void *handle;
  int recorded;   /* elapsed time needs both events recorded */
  int foreign;    /* the application's (cujit_event_wrap): never destroyed by cujit */
  int exportable; /* its IPC handle may be asked of the driver: made shareable, or foreign */
  int untimed;    /* shareable (made or opened): the driver makes those without timing */
};

/* A new event on the current device (`fn` names the call): an ordinary one, or a shareable one
** (issue 16, ipc.c): made, or opened from another process's handle (CJ_IPC_HANDLE_BYTES). */
cujit_status cj_event_new(cujit_engine *engine, const char *fn, int shareable,
                          const unsigned char *ipc_handle, cujit_event **out);

/* Makes the stream wait for the device's default stream as it is now (issue 15): what the backend
** queued there before bumping order_epoch (a pool block handed out again, a fill, a staged
** upload) comes before the stream's next work. stream.c. */
void cj_stream_catch_up(cujit_stream *stream, unsigned long epoch);

/* The backend's stream for work about to be queued: the stream's handle, or NULL (the default
** stream). Every piece of work queued on a stream gets its handle here, so a stream behind the
** default stream catches up first: one load and a compare when it is not. The caller calls
** cj_stream_queued once the work is queued. */
static inline void *cj_stream_queue(cujit_stream *stream) {
  if (!stream) return NULL;
  unsigned long epoch = atomic_load_explicit(&stream->device->order_epoch, memory_order_acquire);
  if (epoch != atomic_load_explicit(&stream->seen_epoch, memory_order_relaxed))
    cj_stream_catch_up(stream, epoch);
  return stream->handle;
}

/* After work was queued on `stream` (NULL: nothing to say): the pool's next reuse of a freed
** block makes the default stream wait for the streams first (backend_cuda_pool.c), and the next
** device synchronize asks them. Stores only when a flag is clear, so launches on streams do not
** keep writing a shared line. */
static inline void cj_stream_queued(cujit_stream *stream) {
  if (!stream) return;
  cujit_device *dev = stream->device;
  if (!atomic_load_explicit(&dev->stream_work, memory_order_relaxed))
    atomic_store_explicit(&dev->stream_work, 1, memory_order_release);
  if (!atomic_load_explicit(&dev->streams_busy, memory_order_relaxed))
    atomic_store_explicit(&dev->streams_busy, 1, memory_order_release);
}

/* The device work on `stream` goes to (the stream's, else the engine's current one), entered,
** with a stream lost in a reset refused. The launch path calls this. */
static inline cujit_status cj_stream_device(cujit_engine *engine, cujit_stream *stream,
                                            cujit_device **device) {
  if (stream) {
    *device = stream->device;
    if (!cj_device_current(stream->device, stream->generation))
      return cj_check_alive(stream->device, stream->generation, "the stream");
  } else {
    cujit_status st = cj_current_device(engine, device);
    if (st != CUJIT_OK) return st;
  }
  return cj_device_enter(*device);
}

#endif
