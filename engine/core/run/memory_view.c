/*
** memory_view.c -- buffers that own no memory of their own: views of part of a buffer
** (cujit_buffer_view), of pinned host memory mapped for the device (cujit_host_map, with
** cujit_host_register for memory allocated elsewhere), and the bookkeeping every view shares:
** the owner's list of its views, so that freeing the owner orphans them (a view then reads as
** lost, with a message of its own, and never touches freed memory).
*/
#include "backend/backend.h"
#include "memory.h"

#include <stdlib.h>

/* --- the views of an owner -------------------------------------------------------------------- */

cujit_status cj_buffer_new_view(cujit_engine *engine, cujit_device *device, unsigned generation,
                                uint64_t ptr, size_t bytes, cujit_dtype dtype,
                                cujit_buffer **owner_list, cujit_buffer **out) {
  cujit_buffer *v = calloc(1, sizeof *v);
  if (!v)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "out of host memory making a buffer view");
  v->device = device;
  v->generation = generation;
  v->ptr = ptr;
  v->size = bytes;
  v->dtype = dtype;
  v->kind = CJ_BUFFER_VIEW;
  v->owner = owner_list;
  if (owner_list) {
    v->next_view = *owner_list;
    *owner_list = v;
  }
  cj_track(engine, &v->link, cj_buffer_destroy);
  *out = v;
  return CUJIT_OK;
}

void cj_buffer_orphan_views(cujit_buffer **views) {
  for (cujit_buffer *v = *views, *next; v; v = next) {
    next = v->next_view;
    v->orphaned = 1;
    v->owner = NULL;
    v->next_view = NULL;
  }
  *views = NULL;
}

void cj_buffer_detach(cujit_buffer *b) {
  cj_buffer_orphan_views(&b->views);
  if (!b->owner) return;
  for (cujit_buffer **p = b->owner; *p; p = &(*p)->next_view)
    if (*p == b) {
      *p = b->next_view;
      break;
    }
  b->owner = NULL;
  b->next_view = NULL;
}

cujit_status cj_buffer_orphan_error(cujit_engine *engine, const char *fn) {
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the buffer is a view of memory that has been freed; keep the array (or "
                 "host buffer) it views alive while the view is used",
                 fn);
}

void cj_buffer_release_special(cujit_buffer *b) {
  cujit_device *device = b->device;
  const cj_backend *t = device->ops;
  switch ((cj_buffer_kind)b->kind) {
  case CJ_BUFFER_MANAGED:
    t->managed_free(device, b->ptr);
    break;
  case CJ_BUFFER_SHAREABLE:
    t->shareable_free(device, b->ptr);
    break;
  case CJ_BUFFER_OPENED:
    t->ipc_close(device, b->ptr);
    break;
  case CJ_BUFFER_DEVICE:
  case CJ_BUFFER_VIEW:
  case CJ_BUFFER_FOREIGN: /* memory_foreign.c's release */
    break;
  }
}

/* --- views of a buffer ------------------------------------------------------------------------ */

cujit_status cujit_buffer_view(cujit_buffer *buffer, size_t offset, size_t bytes, cujit_dtype dtype,
                               cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_buffer_view";
  if (out) *out = NULL;
  if (!buffer || !out)
    return cj_fail(buffer ? buffer->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, buffer ? "out" : "buffer");
  *out = NULL;
  cujit_engine *engine = buffer->device->engine;
  if (buffer->orphaned) return cj_buffer_orphan_error(engine, fn);
  if (!cj_device_current(buffer->device, buffer->generation))
    return cj_check_alive(buffer->device, buffer->generation, "cujit_buffer_view: the buffer");
  if ((unsigned)dtype >= CUJIT_DTYPE_COUNT_)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %d is not a cujit_dtype", fn,
                   (int)dtype);
  size_t elem = cujit_dtype_size(dtype);
  if (bytes == 0 || offset > buffer->size || bytes > buffer->size - offset)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: a view of %zu bytes at offset %zu does not fit in a buffer of %zu bytes "
                   "(a view holds at least one byte, inside its buffer)",
                   fn, bytes, offset, buffer->size);
  if (bytes % elem != 0 || offset % elem != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: offset %zu and size %zu must be whole %s elements (%zu bytes each)", fn,
                   offset, bytes, cujit_dtype_name(dtype), elem);
  /* A view of a view views the owner: freeing the middle one leaves this one usable. */
  cujit_buffer *owner = buffer->kind == CJ_BUFFER_VIEW ? NULL : buffer;
  /* Where it starts in the owner's memory decides the alignment, not the offset alone: an f64
  ** view at offset 0 of an f32 view 4 bytes in would be a misaligned pointer, a GPU fault. */
  uint64_t root = owner ? owner->ptr : buffer->root_ptr ? buffer->root_ptr : buffer->ptr;
  size_t start = (size_t)(buffer->ptr - root) + offset;
  if (start % elem != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the view would start %zu bytes into the buffer it views (offset %zu of a "
                   "view that starts at byte %zu), which is not a whole number of %s elements "
                   "(%zu bytes each): a misaligned pointer, on which a GPU faults",
                   fn, start, offset, (size_t)(buffer->ptr - root), cujit_dtype_name(dtype), elem);
  cujit_buffer **list = owner ? &owner->views : buffer->owner;
  cujit_status st = cj_buffer_new_view(engine, buffer->device, buffer->generation,
                                       buffer->ptr + offset, bytes, dtype, list, out);
  if (st == CUJIT_OK) {
    (*out)->host_visible = buffer->host_visible;
    (*out)->root_ptr = owner ? owner->ptr : buffer->root_ptr ? buffer->root_ptr : buffer->ptr;
    (*out)->root = owner ? owner : buffer->root;
  }
  return st;
}

/* --- host memory for the device --------------------------------------------------------------- */

cujit_status cujit_host_map(cujit_host_buffer *host, cujit_dtype dtype, cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_host_map";
  if (out) *out = NULL;
  if (!host || !out)
    return cj_fail(host ? host->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                   host ? "out" : "host");
  *out = NULL;
  cujit_device *device = host->device;
  cujit_engine *engine = host->engine;
  if (!cj_device_current(device, host->generation))
    return cj_check_alive(device, host->generation, "cujit_host_map: the host buffer");
  if ((unsigned)dtype >= CUJIT_DTYPE_COUNT_ || host->size % cujit_dtype_size(dtype) != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the host buffer's %zu bytes are not whole elements of dtype %d", fn,
                   host->size, (int)dtype);
  uint64_t addr = 0;
  cujit_status st = cj_device_enter(device);
  if (st == CUJIT_OK) st = device->ops->host_map(device, host->ptr, &addr);
  if (st == CUJIT_OK)
    st = cj_buffer_new_view(engine, device, host->generation, addr, host->size, dtype, &host->views,
                            out);
  if (st == CUJIT_OK) (*out)->host_visible = CJ_HOST_MAPPED;
  return st;
}

cujit_status cujit_host_register(cujit_engine *engine, void *ptr, size_t bytes,
                                 cujit_host_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_host_register";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_host_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if (!ptr || bytes == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: pass the address and size (> 0) of host memory you allocated", fn);
  cujit_device *device = NULL;
  cujit_host_buffer *h = NULL;
  if ((st = cj_new_on_current(engine, fn, "buffer", sizeof *h, &device, (void **)&h)) != CUJIT_OK)
    return st;
  if ((st = device->ops->host_register(device, ptr, bytes)) != CUJIT_OK) {
    free(h);
    return st;
  }
  h->engine = engine;
  h->ptr = ptr;
  h->size = bytes;
  h->device = device;
  h->registered = 1;
  h->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  cj_track(engine, &h->link, cj_host_destroy);
  *out = h;
  return CUJIT_OK;
}
