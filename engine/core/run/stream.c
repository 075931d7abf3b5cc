/*
** stream.c -- streams, events, and synchronizing a whole device, over the backend seam: every wait
** is the backend's, by the wait policy of backend.c (cj_backend_wait), which cujit_interrupt cuts
** short.
*/
#include "stream.h"
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_OF(l) ((cujit_stream *)((char *)(l)-offsetof(cujit_stream, link)))
#define EVENT_OF(l) ((cujit_event *)((char *)(l)-offsetof(cujit_event, link)))

/* --- the device ------------------------------------------------------------------------------- */

/* One wait, by the backend, for all the device's work (its default stream and every stream). */
cujit_status cujit_device_synchronize(cujit_device *device) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_device_synchronize: device is NULL");
  if (!device->ops->enter_quiet(device) && !cj_device_faulted(device))
    return CUJIT_OK; /* nothing was ever queued on it */
  cujit_status st = cj_device_enter(device);
  return st == CUJIT_OK ? device->ops->synchronize(device) : st;
}

/* --- streams ---------------------------------------------------------------------------------- */

static void stream_destroy(cj_link *link) {
  cujit_stream *s = STREAM_OF(link);
  if (cj_device_current(s->device, s->generation) && cj_device_enter_quiet(s->device)) {
    s->device->ops->event_destroy(s->device, s->joined);
    s->device->ops->stream_destroy(s->device, s->handle);
  }
  free(s);
}

/* Two calls queued, nothing waited for on the host. A capturing stream is left behind: its work
** runs at the graph's replays, which catch up themselves. Should the join fail, a wait for the
** whole device orders the stream as well; should that fail too, the device is in trouble that
** the stream's own work is about to report. */
void cj_stream_catch_up(cujit_stream *stream, unsigned long epoch) {
  cujit_device *dev = stream->device;
  if (stream->capture) return;
  const cj_backend *ops = dev->ops;
  /* the default stream of the stream's device: NCCL's and peer copies' callers may have another
  ** device entered */
  if (ops->enter(dev) != CUJIT_OK) return;
  if ((ops->event_record(dev, stream->joined, NULL) == CUJIT_OK &&
       ops->stream_wait_event(dev, stream->handle, stream->joined) == CUJIT_OK) ||
      ops->synchronize(dev) == CUJIT_OK)
    atomic_store_explicit(&stream->seen_epoch, epoch, memory_order_relaxed);
}

/* "the CPU device has no native streams ..." for `fn`, or OK on a device whose handles are the
** driver's. */
static cujit_status need_native(cujit_device *device, const char *fn, const char *what) {
  if (device->ops->native) return CUJIT_OK;
  char name[32];
  return cj_fail(device->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s: %s has no native %s (its %s are cujit's own); native handles exist on "
                 "GPUs only",
                 fn, cj_device_name(device, name, sizeof name), what, what);
}

/* Makes a stream on `device`, or on the engine's current device when it is NULL: a new one, or
** the application's `native` stream wrapped (cujit_stream_wrap). */
static cujit_status stream_create(cujit_engine *engine, cujit_device *device, void *native,
                                  const char *fn, cujit_stream **out) {
  cujit_status st = cj_check_new(engine, out, fn, "cujit_stream");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  cujit_stream *s = NULL;
  if ((st = cj_new_on_current(engine, fn, "stream", sizeof *s, &device, (void **)&s)) != CUJIT_OK)
    return st;
  if (!native)
    st = device->ops->stream_create(device, &s->handle);
  else if ((st = need_native(device, fn, "streams")) == CUJIT_OK)
    st = device->ops->stream_adopt(device, native, &s->handle);
  if (st == CUJIT_OK && (st = device->ops->event_create(device, &s->joined)) != CUJIT_OK)
    device->ops->stream_destroy(device, s->handle);
  if (st != CUJIT_OK) {
    free(s);
    return st;
  }
  /* a new stream has nothing queued that could run before the default stream's past work, but
  ** what it queues may: it starts behind */
  atomic_init(&s->seen_epoch, atomic_load_explicit(&device->order_epoch, memory_order_acquire) - 1);
  s->device = device;
  s->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  cj_track(engine, &s->link, stream_destroy);
  *out = s;
  return CUJIT_OK;
}

cujit_status cujit_stream_create(cujit_engine *engine, cujit_stream **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return stream_create(engine, NULL, NULL, "cujit_stream_create", out);
}

cujit_status cujit_stream_create_on(cujit_device *device, cujit_stream **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_stream_create_on: device is NULL");
  return stream_create(device->engine, device, NULL, "cujit_stream_create_on", out);
}

/* A NULL native handle is the default stream, which cujit's NULL stream already is. */
static cujit_status refuse_null_native(cujit_engine *engine, const char *fn, const char *what) {
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the native %s is NULL; %s", fn, what,
                 strcmp(what, "stream") == 0
                     ? "the legacy default stream is cujit's NULL stream: pass NULL as the "
                       "cujit_stream instead of wrapping it"
                     : "pass an event made by cuEventCreate or cudaEventCreate");
}

cujit_status cujit_stream_wrap(cujit_engine *engine, void *native, cujit_stream **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_wrap";
  if (engine && out && !native) return refuse_null_native(engine, fn, "stream");
  return stream_create(engine, NULL, native, fn, out);
}

cujit_status cujit_stream_wrap_on(cujit_device *device, void *native, cujit_stream **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_wrap_on";
  if (!device) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: device is NULL", fn);
  if (out && !native) return refuse_null_native(device->engine, fn, "stream");
  return stream_create(device->engine, device, native, fn, out);
}

void cujit_stream_free(cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!stream) return;
  cj_untrack(stream->device->engine, &stream->link);
  stream_destroy(&stream->link);
}

cujit_device *cujit_stream_device(const cujit_stream *stream) {
  return stream ? stream->device : NULL;
}

/* Alive and entered: the common start of every stream operation. */
static cujit_status enter_stream(cujit_stream *stream, const char *fn) {
  if (!stream) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
  cujit_status st = CUJIT_OK;
  if (!cj_device_current(stream->device, stream->generation)) {
    char what[80];
    snprintf(what, sizeof what, "%s: the stream", fn);
    st = cj_check_alive(stream->device, stream->generation, what);
  }
  return st == CUJIT_OK ? cj_device_enter(stream->device) : st;
}

/* A stream that captures a graph records its work instead of running it: a wait on it cannot be
** recorded, and would never end (graph.c sets stream->capture). */
static cujit_status refuse_capturing(const cujit_stream *stream, const char *fn) {
  return cj_fail(stream->device->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s: the stream captures a graph, and a wait for it cannot be recorded; wait "
                 "after cujit_capture_end (then for the graph's replays, as for launches)",
                 fn);
}

cujit_status cujit_stream_synchronize(cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_synchronize";
  cujit_status st = enter_stream(stream, fn);
  if (st == CUJIT_OK && stream->capture) return refuse_capturing(stream, fn);
  return st == CUJIT_OK ? stream->device->ops->stream_synchronize(stream->device, stream->handle)
                        : st;
}

/* Whether a graph capture (graph.c) is recording the stream's work: the capture is the stream's
** own state, so that layers beside graph.c (library.c's reductions) may ask. */
int cujit_stream_capturing(const cujit_stream *stream) {
  return stream && stream->capture;
}

cujit_status cujit_stream_query(cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_query";
  cujit_status st = enter_stream(stream, fn);
  if (st == CUJIT_OK && stream->capture) return refuse_capturing(stream, fn);
  if (st != CUJIT_OK) return st;
  return stream->device->ops->stream_query(stream->device, stream->handle);
}

/* --- events ----------------------------------------------------------------------------------- */

static void event_destroy(cj_link *link) {
  cujit_event *e = EVENT_OF(link);
  if (!e->foreign && cj_device_current(e->device, e->generation) &&
      cj_device_enter_quiet(e->device))
    e->device->ops->event_destroy(e->device, e->handle);
  free(e);
}

/* An event on `device` (NULL: the current one); shareable for IPC, or opened from a handle. */
static cujit_status event_create(cujit_engine *engine, cujit_device *device, const char *fn,
                                 int shareable, const unsigned char *ipc_handle,
                                 cujit_event **out) {
  cujit_status st = cj_check_new(engine, out, fn, "cujit_event");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  cujit_event *e = NULL;
  if ((st = cj_new_on_current(engine, fn, "event", sizeof *e, &device, (void **)&e)) != CUJIT_OK)
    return st;
  const cj_backend *ops = device->ops;
  st = !shareable   ? device->ops->event_create(device, &e->handle)
       : ipc_handle ? ops->ipc_event_open(device, ipc_handle, &e->handle)
                    : ops->ipc_event_create(device, &e->handle);
  if (st != CUJIT_OK) {
    free(e);
    return st;
  }
  e->device = device;
  e->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  e->exportable = shareable && !ipc_handle;
  e->untimed = shareable;
  cj_track(engine, &e->link, event_destroy);
  *out = e;
  return CUJIT_OK;
}

cujit_status cujit_event_wrap(cujit_engine *engine, void *native, cujit_event **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_wrap";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_event");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if (!native) return refuse_null_native(engine, fn, "event");
  cujit_device *device = NULL;
  cujit_event *e = NULL;
  if ((st = cj_current_device(engine, &device)) != CUJIT_OK ||
      (st = need_native(device, fn, "events")) != CUJIT_OK ||
      (st = cj_new_on_current(engine, fn, "event", sizeof *e, &device, (void **)&e)) != CUJIT_OK)
    return st;
  e->handle = native;
  e->foreign = 1;
  e->recorded = 1;   /* by the application, maybe: the driver answers for it */
  e->exportable = 1; /* made for IPC, maybe: the driver answers for that too */
  e->device = device;
  e->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  cj_track(engine, &e->link, event_destroy);
  *out = e;
  return CUJIT_OK;
}

cujit_status cujit_stream_handle(const cujit_stream *stream, void **native) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_handle";
  if (!stream || !native)
    return cj_fail(stream ? stream->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, stream ? "native" : "stream");
  *native = NULL;
  cujit_status st = need_native(stream->device, fn, "streams");
  if (st == CUJIT_OK && !cj_device_current(stream->device, stream->generation))
    st = cj_check_alive(stream->device, stream->generation, "cujit_stream_handle: the stream");
  if (st == CUJIT_OK) *native = stream->handle;
  return st;
}

cujit_status cujit_event_handle(const cujit_event *event, void **native) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_handle";
  if (!event || !native)
    return cj_fail(event ? event->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, event ? "native" : "event");
  *native = NULL;
  cujit_status st = need_native(event->device, fn, "events");
  if (st == CUJIT_OK && !cj_device_current(event->device, event->generation))
    st = cj_check_alive(event->device, event->generation, "cujit_event_handle: the event");
  if (st == CUJIT_OK) *native = event->handle;
  return st;
}

cujit_status cj_event_new(cujit_engine *engine, const char *fn, int shareable,
                          const unsigned char *ipc_handle, cujit_event **out) {
  return event_create(engine, NULL, fn, shareable, ipc_handle, out);
}

cujit_status cujit_event_create(cujit_engine *engine, cujit_event **out) {
  CJ_KEEP_CALLER_CONTEXT;
  return event_create(engine, NULL, "cujit_event_create", 0, NULL, out);
}

cujit_status cujit_event_create_on(cujit_device *device, cujit_event **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_event_create_on: device is NULL");
  return event_create(device->engine, device, "cujit_event_create_on", 0, NULL, out);
}

void cujit_event_free(cujit_event *event) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!event) return;
  cj_untrack(event->device->engine, &event->link);
  event_destroy(&event->link);
}

static cujit_status check_event(cujit_event *event, const char *fn, const char *which) {
  if (!event) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, which);
  if (cj_device_current(event->device, event->generation) && !cj_device_faulted(event->device))
    return CUJIT_OK;
  char what[80];
  snprintf(what, sizeof what, "%s: %s", fn, which);
  return cj_check_alive(event->device, event->generation, what);
}

cujit_status cujit_event_record(cujit_event *event, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_record";
  cujit_status st = check_event(event, fn, "the event");
  if (st != CUJIT_OK) return st;
  cujit_device *device = event->device;
  char ev[64], st_name[64];
  if (stream && stream->device != device)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the event is on %s but the stream on %s; record an event made on the "
                   "stream's device (make it current with cujit_set_device)",
                   fn, cj_device_name_in(device, device->engine, ev, sizeof ev),
                   cj_device_name_in(stream->device, device->engine, st_name, sizeof st_name));
  if (stream)
    st = enter_stream(stream, fn);
  else
    st = cj_device_enter(device);
  if (st == CUJIT_OK)
    st = device->ops->event_record(device, event->handle, cj_stream_queue(stream));
  cj_stream_queued(stream); /* device synchronize waits for the record too */
  if (st == CUJIT_OK) event->recorded = 1;
  return st;
}

cujit_status cujit_event_synchronize(cujit_event *event) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_synchronize";
  cujit_status st = check_event(event, fn, "the event");
  if (st == CUJIT_OK) st = cj_device_enter(event->device);
  return st == CUJIT_OK ? event->device->ops->event_synchronize(event->device, event->handle) : st;
}

cujit_status cujit_event_query(cujit_event *event) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_query";
  cujit_status st = check_event(event, fn, "the event");
  if (st == CUJIT_OK) st = cj_device_enter(event->device);
  if (st != CUJIT_OK) return st;
  return event->device->ops->event_query(event->device, event->handle);
}

cujit_status cujit_event_elapsed(cujit_event *start, cujit_event *end, float *ms) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_event_elapsed";
  cujit_status st = check_event(start, fn, "the start event");
  if (st == CUJIT_OK) st = check_event(end, fn, "the end event");
  if (st != CUJIT_OK) return st;
  cujit_device *device = start->device;
  cujit_engine *engine = device->engine;
  if (!ms)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: ms is NULL; pass a float to fill",
                   fn);
  *ms = 0;
  if (end->device != device)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the events are on different devices (%d and %d); time with two events "
                   "of one device",
                   fn, device->ordinal, end->device->ordinal);
  if (start->untimed || end->untimed)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s event is shareable between processes, and those have no timing; "
                   "time with events from cujit_event_create (Lua: cuda.event())",
                   fn, start->untimed ? "start" : "end");
  if (!start->recorded || !end->recorded)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s event was never recorded; record both with cujit_event_record", fn,
                   start->recorded ? "end" : "start");
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  return device->ops->event_elapsed(device, start->handle, end->handle, ms);
}

cujit_status cujit_stream_wait_event(cujit_stream *stream, cujit_event *event) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_stream_wait_event";
  cujit_status st = check_event(event, fn, "the event");
  if (st != CUJIT_OK) return st;
  /* NULL: the default stream of the event's device, as cujit_event_record takes it */
  cujit_device *device = stream ? stream->device : event->device;
  st = stream ? enter_stream(stream, fn) : cj_device_enter(device);
  if (st != CUJIT_OK) return st;
  st = device->ops->stream_wait_event(device, cj_stream_queue(stream), event->handle);
  cj_stream_queued(stream);
  return st;
}
