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
  void *handle;               /* the backend's */
  struct cj_capture *capture; /* while it captures a graph (graph.c), what launches record */
};

struct cujit_event {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  void *handle;
  int recorded; /* elapsed time needs both events recorded */
};

/* A new event on the current device (`fn` names the call): an ordinary one, or a shareable one
** (issue 16, ipc.c): made, or opened from another process's handle (CJ_IPC_HANDLE_BYTES). */
cujit_status cj_event_new(cujit_engine *engine, const char *fn, int shareable,
                          const unsigned char *ipc_handle, cujit_event **out);

/* The backend's stream for a launch or copy: the stream's handle, or NULL (the default stream). */
static inline void *cj_stream_handle(const cujit_stream *stream) {
  return stream ? stream->handle : NULL;
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
