/*
** memory_managed.c -- managed (unified) memory: allocating it, its host address, and the
** prefetch and advice calls that steer the driver's migrations. The allocation itself is
** memory.c's (a buffer of kind MANAGED); the host address is shared by mapped host memory's views.
*/
#include "backend/backend.h"
#include "memory.h"

#include <stdio.h>

cujit_status cujit_buffer_alloc_managed(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                        cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return cj_buffer_alloc_kind(engine, bytes, dtype, CJ_BUFFER_MANAGED, "cujit_buffer_alloc_managed",
                              out);
}

void *cujit_buffer_host_ptr(const cujit_buffer *buffer) {
  if (!buffer || !buffer->host_visible || buffer->orphaned ||
      !cj_device_current(buffer->device, buffer->generation))
    return NULL;
  return (void *)(uintptr_t)buffer->ptr;
}

/* A managed buffer (or a view of one), current, on a usable device, with a stream of its device. */
static cujit_status check_managed(const char *fn, cujit_buffer *buffer, cujit_stream *stream) {
  if (!buffer) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the buffer is NULL", fn);
  cujit_device *device = buffer->device;
  cujit_engine *engine = device->engine;
  if (buffer->orphaned) return cj_buffer_orphan_error(engine, fn);
  char what[64]; /* "cujit_buffer_prefetch: the buffer was made on ... before the reset" */
  if (!cj_device_current(device, buffer->generation)) {
    snprintf(what, sizeof what, "%s: the buffer", fn);
    return cj_check_alive(device, buffer->generation, what);
  }
  /* Mapped host memory is host_visible too (CJ_HOST_MAPPED), but it never migrates. */
  if (buffer->host_visible != CJ_HOST_MANAGED)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the buffer is not managed memory; allocate it with "
                   "cujit_buffer_alloc_managed (Lua: cuda.managed_array)",
                   fn);
  char s[64], b[64];
  if (stream && stream->device != device)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is on %s but the buffer on %s", fn,
                   cj_device_name_in(stream->device, engine, s, sizeof s),
                   cj_device_name_in(device, engine, b, sizeof b));
  if (stream && !cj_device_current(device, stream->generation)) {
    snprintf(what, sizeof what, "%s: the stream", fn);
    return cj_check_alive(device, stream->generation, what);
  }
  return cj_device_enter(device);
}

cujit_status cujit_buffer_prefetch(cujit_buffer *buffer, int to_host, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  cujit_status st = check_managed("cujit_buffer_prefetch", buffer, stream);
  if (st != CUJIT_OK) return st;
  cujit_device *device = buffer->device;
  st = device->ops->prefetch(device, buffer->ptr, buffer->size, to_host != 0,
                             cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}

cujit_status cujit_buffer_advise(cujit_buffer *buffer, cujit_advice advice) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_buffer_advise";
  cujit_status st = check_managed(fn, buffer, NULL);
  if (st != CUJIT_OK) return st;
  if ((unsigned)advice > CUJIT_ADVISE_UNSET_ACCESSED_BY)
    return cj_fail(buffer->device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %d is not a cujit_advice", fn, (int)advice);
  cujit_device *device = buffer->device;
  return device->ops->advise(device, buffer->ptr, buffer->size, (cj_advice)advice);
}
