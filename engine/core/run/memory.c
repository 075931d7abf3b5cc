/*
** memory.c -- device buffers, host buffers, and the copies and fills between them, with every size
** and offset checked against the buffers before anything reaches the backend.
*/
#include "memory.h"
#include "backend/backend.h"
#include "peer.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUFFER_OF(l) ((cujit_buffer *)((char *)(l)-offsetof(cujit_buffer, link)))
#define HOST_BUFFER_OF(l) ((cujit_host_buffer *)((char *)(l)-offsetof(cujit_host_buffer, link)))

static int buffer_is_current(const cujit_buffer *b) {
  return cj_device_current(b->device, b->generation) && !b->orphaned;
}

/* --- device buffers --------------------------------------------------------------------------- */

/* Frees the memory unless a reset already did (the handle would be stale) or the device is
** faulted (its context cannot free anything; the reset will). */
void cj_buffer_destroy(cj_link *link) {
  cujit_buffer *b = BUFFER_OF(link);
  cujit_device *device = b->device;
  cj_buffer_detach(b);
  if (b->kind == CJ_BUFFER_VIEW || b->kind == CJ_BUFFER_FOREIGN) {
    /* the owner's memory; a foreign buffer's release runs below */
  } else if (buffer_is_current(b)) {
    if (cj_device_enter_quiet(device)) {
      if (b->kind == CJ_BUFFER_DEVICE)
        device->ops->free(device, b->ptr);
      else
        cj_buffer_release_special(b);
    }
    if (b->kind != CJ_BUFFER_OPENED) atomic_fetch_sub(&device->allocated, b->size);
  }
  cj_buffer_release_foreign(b);
  free(b);
}

static cujit_status check_alloc_args(cujit_engine *engine, size_t bytes, cujit_dtype dtype) {
  if (bytes == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_buffer_alloc: a buffer of 0 bytes; ask for at least one byte");
  if ((unsigned)dtype >= CUJIT_DTYPE_COUNT_)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_buffer_alloc: %d is not a cujit_dtype; use CUJIT_F32, CUJIT_I32, ... "
                   "or CUJIT_DTYPE_NONE for raw bytes",
                   (int)dtype);
  size_t elem = cujit_dtype_size(dtype);
  if (bytes % elem != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_buffer_alloc: %zu bytes is not a whole number of %s elements (%zu bytes "
                   "each); ask for a multiple of %zu",
                   bytes, cujit_dtype_name(dtype), elem, elem);
  return CUJIT_OK;
}

static cujit_status alloc_memory(cujit_device *device, size_t bytes, cj_buffer_kind kind,
                                 uint64_t *ptr) {
  if (kind == CJ_BUFFER_MANAGED) return device->ops->managed_alloc(device, bytes, ptr);
  if (kind == CJ_BUFFER_SHAREABLE) return device->ops->shareable_alloc(device, bytes, ptr);
  return device->ops->alloc(device, bytes, ptr);
}

/* A buffer of `kind` on `device`, or on the engine's current device when it is NULL. */
static cujit_status buffer_alloc(cujit_engine *engine, cujit_device *device, size_t bytes,
                                 cujit_dtype dtype, cj_buffer_kind kind, const char *fn,
                                 cujit_buffer **out) {
  cujit_status st = cj_check_new(engine, out, fn, "cujit_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  cujit_buffer *b = NULL;
  if ((st = check_alloc_args(engine, bytes, dtype)) != CUJIT_OK) return st;
  if ((st = cj_new_on_current(engine, fn, "buffer", sizeof *b, &device, (void **)&b)) != CUJIT_OK)
    return st;
  if ((st = alloc_memory(device, bytes, kind, &b->ptr)) != CUJIT_OK) {
    free(b);
    return st;
  }
  b->kind = (unsigned char)kind;
  b->host_visible = kind == CJ_BUFFER_MANAGED ? CJ_HOST_MANAGED : 0;
  b->device = device;
  b->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  b->size = bytes;
  b->dtype = dtype;
  atomic_fetch_add(&device->allocated, bytes);
  cj_track(engine, &b->link, cj_buffer_destroy);
  *out = b;
  return CUJIT_OK;
}

cujit_status cj_buffer_alloc_kind(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                  cj_buffer_kind kind, const char *fn, cujit_buffer **out) {
  return buffer_alloc(engine, NULL, bytes, dtype, kind, fn, out);
}

cujit_status cujit_buffer_alloc(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return buffer_alloc(engine, NULL, bytes, dtype, CJ_BUFFER_DEVICE, "cujit_buffer_alloc", out);
}

cujit_status cujit_buffer_alloc_on(cujit_device *device, size_t bytes, cujit_dtype dtype,
                                   cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_buffer_alloc_on: device is NULL");
  return buffer_alloc(device->engine, device, bytes, dtype, CJ_BUFFER_DEVICE,
                      "cujit_buffer_alloc_on", out);
}

void cujit_buffer_free(cujit_buffer *buffer) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!buffer) return;
  /* A DLPack export holds the memory: the last deleter destroys it (memory_foreign.c). */
  if (atomic_load(&buffer->exports) && cj_buffer_free_held(buffer)) return;
  cj_untrack(buffer->device->engine, &buffer->link);
  cj_buffer_destroy(&buffer->link);
}

size_t cujit_buffer_size(const cujit_buffer *buffer) {
  return buffer ? buffer->size : 0;
}

cujit_dtype cujit_buffer_dtype(const cujit_buffer *buffer) {
  return buffer ? buffer->dtype : CUJIT_DTYPE_NONE;
}

cujit_device *cujit_buffer_device(const cujit_buffer *buffer) {
  return buffer ? buffer->device : NULL;
}

uint64_t cujit_buffer_devptr(const cujit_buffer *buffer) {
  return buffer && buffer_is_current(buffer) ? buffer->ptr : 0;
}

/* --- checks shared by the copies -------------------------------------------------------------- */

/* Overflow-safe: offset + bytes is never computed. */
static cujit_status check_range(cujit_engine *engine, const char *fn, const char *which,
                                const cujit_buffer *b, size_t offset, size_t bytes) {
  if (offset <= b->size && bytes <= b->size - offset) return CUJIT_OK;
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: copy of %zu bytes at offset %zu runs past the end of a%s buffer of %zu "
                 "bytes",
                 fn, bytes, offset, which, b->size);
}

/* The stream, when given, must be alive and on the buffer's device. */
static cujit_status check_stream(cujit_engine *engine, const char *fn, cujit_device *device,
                                 const cujit_stream *stream) {
  if (!stream) return CUJIT_OK;
  char s[64], b[64];
  if (stream->device != device)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is on %s but the buffer is on %s; use a stream of the "
                   "buffer's device",
                   fn, cj_device_name_in(stream->device, engine, s, sizeof s),
                   cj_device_name_in(device, engine, b, sizeof b));
  return cj_check_alive(device, stream->generation, "the stream");
}

/* Lost (made before a reset) or on a faulted device; the message names the buffer. */
static cujit_status check_buffer(const char *fn, const char *which, const cujit_buffer *b) {
  cujit_device *device = b->device;
  if (b->orphaned) return cj_buffer_orphan_error(device->engine, fn);
  if (buffer_is_current(b) && !cj_device_faulted(device)) return CUJIT_OK;
  char what[64];
  snprintf(what, sizeof what, "%s: the %s buffer", fn, which);
  return cj_check_alive(device, b->generation, what);
}

/* --- copies ----------------------------------------------------------------------------------- */

cujit_status cujit_memcpy_htod(cujit_buffer *dst, size_t dst_offset, const void *src, size_t bytes,
                               cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_memcpy_htod";
  if (!dst) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
  cujit_device *device = dst->device;
  cujit_engine *engine = device->engine;
  if (!src && bytes > 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: src is NULL; pass host memory", fn);
  cujit_status st = check_range(engine, fn, " destination", dst, dst_offset, bytes);
  if (st == CUJIT_OK) st = check_buffer(fn, "destination", dst);
  if (st == CUJIT_OK) st = check_stream(engine, fn, device, stream);
  if (st != CUJIT_OK || bytes == 0) return st;
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  st = device->ops->copy(device, CJ_COPY_HTOD, dst->ptr + dst_offset, (uint64_t)(uintptr_t)src,
                         bytes, cj_stream_queue(stream));
  cj_stream_queued(stream);
  /* A small upload on the default stream may return once the source is consumed, before the
  ** device has the bytes (stream order brings them to all later work there). Memory the host or
  ** another process may read without a stream (managed, mapped, shareable, views of any) has
  ** them when this returns, as before. */
  if (st == CUJIT_OK && !stream && dst->kind != CJ_BUFFER_DEVICE)
    st = device->ops->stream_synchronize(device, NULL);
  return st;
}

cujit_status cujit_memcpy_dtoh(void *dst, const cujit_buffer *src, size_t src_offset, size_t bytes,
                               cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_memcpy_dtoh";
  if (!src) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: src is NULL", fn);
  cujit_device *device = src->device;
  cujit_engine *engine = device->engine;
  if (!dst && bytes > 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: dst is NULL; pass host memory", fn);
  cujit_status st = check_range(engine, fn, " source", src, src_offset, bytes);
  if (st == CUJIT_OK) st = check_buffer(fn, "source", src);
  if (st == CUJIT_OK) st = check_stream(engine, fn, device, stream);
  if (st != CUJIT_OK || bytes == 0) return st;
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  st = device->ops->copy(device, CJ_COPY_DTOH, (uint64_t)(uintptr_t)dst, src->ptr + src_offset,
                         bytes, cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}

/* The driver's copy is undefined for overlapping ranges (one buffer, or views sharing memory);
** refuse them. Both buffers are on one device, so their addresses compare. */
static int ranges_overlap(const cujit_buffer *a, size_t ao, const cujit_buffer *b, size_t bo,
                          size_t bytes) {
  if (bytes == 0) return 0;
  uint64_t x = a->ptr + ao, y = b->ptr + bo;
  return x < y + bytes && y < x + bytes; /* both in range, so no overflow */
}

/* Two views of one array that overlap: their bytes counted from that array's start, where views
** of it are (each view's own offsets would read alike: [0, 32) and [0, 32)). */
static cujit_status overlap_error(cujit_engine *engine, const char *fn, const cujit_buffer *dst,
                                  size_t dst_offset, const cujit_buffer *src, size_t src_offset,
                                  size_t bytes) {
  uint64_t sroot = src->root_ptr ? src->root_ptr : src->ptr;
  uint64_t droot = dst->root_ptr ? dst->root_ptr : dst->ptr;
  if (src == dst || sroot != droot)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the source [%zu, %zu) and destination [%zu, %zu) overlap in the same "
                   "buffer; copy through a second buffer",
                   fn, src_offset, src_offset + bytes, dst_offset, dst_offset + bytes);
  uint64_t s = src->ptr + src_offset - sroot, d = dst->ptr + dst_offset - droot;
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the source and the destination are views of one array and overlap: bytes "
                 "[%llu, %llu) and [%llu, %llu) of that array; copy through a second buffer",
                 fn, (unsigned long long)s, (unsigned long long)(s + bytes), (unsigned long long)d,
                 (unsigned long long)(d + bytes));
}

cujit_status cujit_memcpy_dtod(cujit_buffer *dst, size_t dst_offset, const cujit_buffer *src,
                               size_t src_offset, size_t bytes, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_memcpy_dtod";
  if (!dst || !src)
    return cj_fail(dst   ? dst->device->engine
                   : src ? src->device->engine
                         : NULL,
                   CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, dst ? "src" : "dst");
  cujit_device *device = dst->device;
  cujit_engine *engine = device->engine;
  cujit_status st = check_range(engine, fn, " source", src, src_offset, bytes);
  if (st == CUJIT_OK) st = check_range(engine, fn, " destination", dst, dst_offset, bytes);
  if (st == CUJIT_OK && ranges_overlap(dst, dst_offset, src, src_offset, bytes))
    st = overlap_error(engine, fn, dst, dst_offset, src, src_offset, bytes);
  if (st == CUJIT_OK) st = check_buffer(fn, "source", src);
  if (st == CUJIT_OK) st = check_buffer(fn, "destination", dst);
  if (st == CUJIT_OK && src->device != device) /* peer.c */
    return bytes ? cj_copy_between(dst->device, dst->ptr + dst_offset, src->device,
                                   src->ptr + src_offset, bytes, stream)
                 : CUJIT_OK;
  if (st == CUJIT_OK) st = check_stream(engine, fn, device, stream);
  if (st != CUJIT_OK || bytes == 0) return st;
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  st = device->ops->copy(device, CJ_COPY_DTOD, dst->ptr + dst_offset, src->ptr + src_offset, bytes,
                         cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}

cujit_status cujit_memset(cujit_buffer *dst, size_t offset, unsigned char value, size_t bytes,
                          cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_memset";
  if (!dst) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
  cujit_device *device = dst->device;
  cujit_engine *engine = device->engine;
  cujit_status st = CUJIT_OK;
  if (offset > dst->size || bytes > dst->size - offset)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: setting %zu bytes at offset %zu runs past the end of a buffer of %zu bytes",
                 fn, bytes, offset, dst->size);
  if (st == CUJIT_OK) st = check_buffer(fn, "destination", dst);
  if (st == CUJIT_OK) st = check_stream(engine, fn, device, stream);
  if (st != CUJIT_OK || bytes == 0) return st;
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  st = device->ops->memset8(device, dst->ptr + offset, value, bytes, cj_stream_queue(stream));
  cj_stream_queued(stream);
  return st;
}

/* --- pinned host memory ----------------------------------------------------------------------- */

static int host_buffer_is_current(const cujit_host_buffer *h) {
  return cj_device_current(h->device, h->generation);
}

void cj_host_destroy(cj_link *link) {
  cujit_host_buffer *h = HOST_BUFFER_OF(link);
  cj_buffer_orphan_views(&h->views);
  if (host_buffer_is_current(h) && cj_device_enter_quiet(h->device)) {
    if (h->registered)
      h->device->ops->host_unregister(h->device, h->ptr);
    else
      h->device->ops->host_free(h->device, h->ptr);
  }
  free(h);
}

cujit_status cujit_host_alloc(cujit_engine *engine, size_t bytes, cujit_host_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_host_alloc";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_host_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if (bytes == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_host_alloc: a buffer of 0 bytes; ask for at least one byte");
  cujit_device *device = NULL;
  cujit_host_buffer *h = NULL;
  if ((st = cj_new_on_current(engine, fn, "buffer", sizeof *h, &device, (void **)&h)) != CUJIT_OK)
    return st;
  if ((st = device->ops->host_alloc(device, bytes, &h->ptr)) != CUJIT_OK) {
    free(h);
    return st;
  }
  h->engine = engine;
  h->size = bytes;
  h->device = device;
  h->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  cj_track(engine, &h->link, cj_host_destroy);
  *out = h;
  return CUJIT_OK;
}

void cujit_host_free(cujit_host_buffer *buffer) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!buffer) return;
  cj_untrack(buffer->engine, &buffer->link);
  cj_host_destroy(&buffer->link);
}

void *cujit_host_ptr(const cujit_host_buffer *buffer) {
  return buffer && host_buffer_is_current(buffer) ? buffer->ptr : NULL;
}

size_t cujit_host_size(const cujit_host_buffer *buffer) {
  return buffer ? buffer->size : 0;
}
