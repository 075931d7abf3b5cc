/*
** ipc.c -- sharing device memory and events with other processes (CUDA IPC): shareable buffers,
** their handles as text ("cujit-ipc-mem:<dtype>:<bytes>:<128 hex digits>", events
** "cujit-ipc-event:<128 hex digits>"), and opening a handle as a buffer or event of this process.
** The backend does the driver's part (backend.h, between processes); the CPU device refuses each
*call.
*/
#include "backend/backend.h"
#include "memory.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_PREFIX "cujit-ipc-mem:"
#define EVENT_PREFIX "cujit-ipc-event:"

static void to_hex(const unsigned char *bytes, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < CJ_IPC_HANDLE_BYTES; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * CJ_IPC_HANDLE_BYTES] = '\0';
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Exactly 128 lowercase hex digits, then the end of the text. */
static int from_hex(const char *text, unsigned char *bytes) {
  for (int i = 0; i < CJ_IPC_HANDLE_BYTES; i++) {
    int hi = hex_digit(text[2 * i]), lo = hi < 0 ? -1 : hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return 0;
    bytes[i] = (unsigned char)(hi << 4 | lo);
  }
  return text[2 * CJ_IPC_HANDLE_BYTES] == '\0';
}

static cujit_status bad_handle(cujit_engine *engine, const char *fn, const char *text) {
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: '%.60s%s' is not a cujit IPC handle; pass the text the exporting "
                 "process's %s gave, unchanged",
                 fn, text, strlen(text) > 60 ? "..." : "",
                 strncmp(fn, "cujit_event", 11) == 0 ? "cujit_event_ipc_handle"
                                                     : "cujit_buffer_ipc_handle");
}

/* The handle of memory at `addr` (event NULL) or of `event`, made at `generation`, as hex. */
static cujit_status export_hex(const char *fn, cujit_device *device, unsigned generation,
                               uint64_t addr, void *event, char *hex) {
  if (!cj_device_current(device, generation)) return cj_check_alive(device, generation, fn);
  unsigned char handle[CJ_IPC_HANDLE_BYTES];
  const cj_backend *t = device->ops;
  cujit_status st = cj_device_enter(device);
  if (st == CUJIT_OK)
    st = event ? t->ipc_event_export(device, event, handle) : t->ipc_export(device, addr, handle);
  if (st == CUJIT_OK) to_hex(handle, hex);
  return st;
}

/* --- memory ----------------------------------------------------------------------------------- */

cujit_status cujit_buffer_alloc_shareable(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                          cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return cj_buffer_alloc_kind(engine, bytes, dtype, CJ_BUFFER_SHAREABLE,
                              "cujit_buffer_alloc_shareable", out);
}

cujit_status cujit_buffer_ipc_handle(const cujit_buffer *buffer, char text[CUJIT_IPC_HANDLE_MAX]) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_buffer_ipc_handle";
  if (!buffer || !text)
    return cj_fail(buffer ? buffer->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, buffer ? "text" : "the buffer");
  cujit_device *device = buffer->device;
  if (buffer->orphaned) return cj_buffer_orphan_error(device->engine, fn);
  if (buffer->kind != CJ_BUFFER_SHAREABLE)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: only a buffer allocated shareable can be exported (memory of cujit's pool "
                   "cannot); allocate it with cujit_buffer_alloc_shareable (Lua: "
                   "cuda.device_array(shape, dtype, {shareable = true}))",
                   fn);
  char hex[2 * CJ_IPC_HANDLE_BYTES + 1];
  cujit_status st = export_hex(fn, device, buffer->generation, buffer->ptr, NULL, hex);
  if (st != CUJIT_OK) return st;
  snprintf(text, CUJIT_IPC_HANDLE_MAX, MEM_PREFIX "%s:%zu:%s",
           buffer->dtype == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(buffer->dtype),
           buffer->size, hex);
  return CUJIT_OK;
}

/* "<dtype>:<bytes>:<hex>" after the prefix. */
static int parse_mem(const char *text, cujit_dtype *dtype, size_t *bytes, unsigned char *handle) {
  if (strncmp(text, MEM_PREFIX, strlen(MEM_PREFIX)) != 0) return 0;
  const char *p = text + strlen(MEM_PREFIX), *colon = strchr(p, ':');
  char name[16];
  if (!colon || colon - p >= (long)sizeof name) return 0;
  memcpy(name, p, (size_t)(colon - p));
  name[colon - p] = '\0';
  *dtype = strcmp(name, "bytes") == 0 ? CUJIT_DTYPE_NONE : cujit_dtype_from_name(name);
  if (*dtype == CUJIT_DTYPE_NONE && strcmp(name, "bytes") != 0) return 0;
  /* Decimal digits only (strtoull alone takes blanks, a sign and "-4" as 2^64 - 4), a size that
  ** fits and holds whole elements: anything else was not written by cujit_buffer_ipc_handle. */
  if (colon[1] < '0' || colon[1] > '9') return 0;
  char *end = NULL;
  errno = 0;
  unsigned long long n = strtoull(colon + 1, &end, 10);
  if (errno == ERANGE || *end != ':' || n == 0 || n > SIZE_MAX) return 0;
  if (*dtype != CUJIT_DTYPE_NONE && n % cujit_dtype_size(*dtype) != 0) return 0;
  *bytes = (size_t)n;
  return from_hex(end + 1, handle);
}

cujit_status cujit_buffer_ipc_open(cujit_engine *engine, const char *text, cujit_buffer **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_buffer_ipc_open";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  cujit_dtype dtype;
  size_t bytes;
  unsigned char handle[CJ_IPC_HANDLE_BYTES];
  if (!text || !parse_mem(text, &dtype, &bytes, handle))
    return bad_handle(engine, fn, text ? text : "(NULL)");
  cujit_device *device = NULL;
  cujit_buffer *b = NULL;
  if ((st = cj_new_on_current(engine, fn, "buffer", sizeof *b, &device, (void **)&b)) != CUJIT_OK)
    return st;
  if ((st = device->ops->ipc_open(device, handle, &b->ptr)) != CUJIT_OK) {
    free(b);
    return st;
  }
  b->kind = CJ_BUFFER_OPENED;
  b->device = device;
  b->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  b->size = bytes;
  b->dtype = dtype;
  cj_track(engine, &b->link, cj_buffer_destroy);
  *out = b;
  return CUJIT_OK;
}

/* --- events ----------------------------------------------------------------------------------- */

cujit_status cujit_event_create_shareable(cujit_engine *engine, cujit_event **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return cj_event_new(engine, "cujit_event_create_shareable", 1, NULL, out);
}

cujit_status cujit_event_ipc_handle(const cujit_event *event, char text[CUJIT_IPC_HANDLE_MAX]) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_ipc_handle";
  if (!event || !text)
    return cj_fail(event ? event->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, event ? "text" : "the event");
  /* The driver refuses an event made without CU_EVENT_INTERPROCESS in its own words; cujit
  ** knows which of its own events were (an application's is taken as exportable: stream.c). */
  if (!event->exportable)
    return cj_fail(event->device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: only an event made shareable can be exported (an ordinary one keeps "
                   "timing, which a shared event cannot); make it with "
                   "cujit_event_create_shareable (Lua: cuda.shareable_event())",
                   fn);
  char hex[2 * CJ_IPC_HANDLE_BYTES + 1];
  cujit_status st = export_hex(fn, event->device, event->generation, 0, event->handle, hex);
  if (st != CUJIT_OK) return st;
  snprintf(text, CUJIT_IPC_HANDLE_MAX, EVENT_PREFIX "%s", hex);
  return CUJIT_OK;
}

cujit_status cujit_event_ipc_open(cujit_engine *engine, const char *text, cujit_event **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_ipc_open";
  unsigned char handle[CJ_IPC_HANDLE_BYTES];
  if (!text || strncmp(text, EVENT_PREFIX, strlen(EVENT_PREFIX)) != 0 ||
      !from_hex(text + strlen(EVENT_PREFIX), handle)) {
    if (out) *out = NULL;
    return bad_handle(engine, fn, text ? text : "(NULL)");
  }
  return cj_event_new(engine, fn, 1, handle, out);
}
