/*
** stream.c -- streams, events, and waiting on them: every synchronize polls the driver with a
** short spin and a backoff, so a wait stays fast yet cujit_interrupt can cut it short.
*/
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STREAM_OF(l) ((cujit_stream *)((char *)(l)-offsetof(cujit_stream, link)))
#define EVENT_OF(l) ((cujit_event *)((char *)(l)-offsetof(cujit_event, link)))

#define SPIN_MS 0.02        /* poll without sleeping for the first 20 us */
#define FIRST_SLEEP_NS 2000 /* then sleep, doubling up to... */
#define MAX_SLEEP_NS 100000

/* --- waiting ---------------------------------------------------------------------------------- */

static void nap(long ns) {
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

cujit_status cj_wait(cujit_device *device, cj_query_fn query, void *handle, const char *what) {
  cujit_engine *engine = device->engine;
  double start = cj_now_ms();
  long sleep_ns = FIRST_SLEEP_NS;
  for (;;) {
    CUresult rc = query(device, handle);
    if (rc != CUDA_ERROR_NOT_READY) return cj_check(device, rc, what);
    if (engine->interrupted) {
      engine->interrupted = 0;
      return cj_fail(engine, CUJIT_ERROR_INTERRUPTED,
                     "%s was interrupted (cujit_interrupt); the work already queued on device %d "
                     "goes on running",
                     what, device->ordinal);
    }
    if (cj_now_ms() - start < SPIN_MS) continue;
    nap(sleep_ns);
    if (sleep_ns < MAX_SLEEP_NS)
      sleep_ns = sleep_ns * 2 > MAX_SLEEP_NS ? MAX_SLEEP_NS : sleep_ns * 2;
  }
}

static CUresult query_stream(cujit_device *device, void *handle) {
  return device->engine->drv.cuStreamQuery((CUstream)handle);
}

static CUresult query_event(cujit_device *device, void *handle) {
  return device->engine->drv.cuEventQuery((CUevent)handle);
}

/* The legacy stream and every live stream of the device: the lock keeps the list still while
** it is walked, and is held only for these few queries. */
static CUresult query_device(cujit_device *device, void *unused) {
  (void)unused;
  cujit_engine *engine = device->engine;
  unsigned generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  pthread_mutex_lock(&engine->lock);
  CUresult rc = engine->drv.cuStreamQuery((CUstream)0);
  for (cujit_stream *s = device->streams; s && rc == CUDA_SUCCESS; s = s->dev_next)
    if (s->generation == generation) rc = engine->drv.cuStreamQuery(s->handle);
  pthread_mutex_unlock(&engine->lock);
  return rc;
}

cujit_status cujit_device_synchronize(cujit_device *device) {
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_device_synchronize: device is NULL");
  if (!__atomic_load_n(&device->ctx, __ATOMIC_ACQUIRE) && device->fault == CUJIT_OK)
    return CUJIT_OK; /* nothing was ever queued on it */
  cujit_status st = cj_device_enter(device);
  if (st == CUJIT_OK) st = cj_wait(device, query_device, NULL, "cujit_device_synchronize");
  /* Catches work cujit did not queue (other libraries sharing the primary context); by now it
  ** is usually done and this returns at once. */
  if (st == CUJIT_OK)
    st = cj_check(device, device->engine->drv.cuCtxSynchronize(), "cujit_device_synchronize");
  return st;
}

/* --- streams ---------------------------------------------------------------------------------- */

static void link_to_device(cujit_stream *s) {
  cujit_device *device = s->device;
  pthread_mutex_lock(&device->engine->lock);
  s->dev_prev = NULL;
  s->dev_next = device->streams;
  if (device->streams) device->streams->dev_prev = s;
  device->streams = s;
  pthread_mutex_unlock(&device->engine->lock);
}

static void unlink_from_device(cujit_stream *s) {
  cujit_device *device = s->device;
  pthread_mutex_lock(&device->engine->lock);
  if (s->dev_prev)
    s->dev_prev->dev_next = s->dev_next;
  else if (device->streams == s)
    device->streams = s->dev_next;
  if (s->dev_next) s->dev_next->dev_prev = s->dev_prev;
  s->dev_prev = s->dev_next = NULL;
  pthread_mutex_unlock(&device->engine->lock);
}

static int is_current(const cujit_device *device, unsigned generation) {
  return __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE) == generation;
}

static void stream_destroy(cj_link *link) {
  cujit_stream *s = STREAM_OF(link);
  unlink_from_device(s);
  if (is_current(s->device, s->generation) && cj_device_enter_quiet(s->device))
    s->device->engine->drv.cuStreamDestroy(s->handle);
  free(s);
}

cujit_status cujit_stream_create(cujit_engine *engine, cujit_stream **out) {
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_stream_create: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_stream_create: out is NULL; pass the address of a cujit_stream *");
  *out = NULL;
  cujit_device *device = NULL;
  cujit_status st = cj_current_device(engine, &device);
  if (st == CUJIT_OK) st = cj_device_enter(device);
  if (st != CUJIT_OK) return st;
  cujit_stream *s = calloc(1, sizeof *s);
  if (!s)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cujit_stream_create: out of host memory for the stream object");
  st = cj_check(device, engine->drv.cuStreamCreate(&s->handle, CU_STREAM_NON_BLOCKING),
                "cuStreamCreate");
  if (st != CUJIT_OK) {
    free(s);
    return st;
  }
  s->device = device;
  s->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  link_to_device(s);
  cj_track(engine, &s->link, stream_destroy);
  *out = s;
  return CUJIT_OK;
}

void cujit_stream_free(cujit_stream *stream) {
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
  if (!is_current(stream->device, stream->generation)) {
    char what[80];
    snprintf(what, sizeof what, "%s: the stream", fn);
    st = cj_check_alive(stream->device, stream->generation, what);
  }
  return st == CUJIT_OK ? cj_device_enter(stream->device) : st;
}

cujit_status cujit_stream_synchronize(cujit_stream *stream) {
  static const char fn[] = "cujit_stream_synchronize";
  cujit_status st = enter_stream(stream, fn);
  return st == CUJIT_OK ? cj_wait(stream->device, query_stream, stream->handle, fn) : st;
}

cujit_status cujit_stream_query(cujit_stream *stream) {
  static const char fn[] = "cujit_stream_query";
  cujit_status st = enter_stream(stream, fn);
  if (st != CUJIT_OK) return st;
  return cj_check(stream->device, stream->device->engine->drv.cuStreamQuery(stream->handle), fn);
}

/* --- events ----------------------------------------------------------------------------------- */

static void event_destroy(cj_link *link) {
  cujit_event *e = EVENT_OF(link);
  if (is_current(e->device, e->generation) && cj_device_enter_quiet(e->device))
    e->device->engine->drv.cuEventDestroy(e->handle);
  free(e);
}

cujit_status cujit_event_create(cujit_engine *engine, cujit_event **out) {
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_event_create: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_event_create: out is NULL; pass the address of a cujit_event *");
  *out = NULL;
  cujit_device *device = NULL;
  cujit_status st = cj_current_device(engine, &device);
  if (st == CUJIT_OK) st = cj_device_enter(device);
  if (st != CUJIT_OK) return st;
  cujit_event *e = calloc(1, sizeof *e);
  if (!e)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cujit_event_create: out of host memory for the event object");
  st = cj_check(device, engine->drv.cuEventCreate(&e->handle, CU_EVENT_DEFAULT), "cuEventCreate");
  if (st != CUJIT_OK) {
    free(e);
    return st;
  }
  e->device = device;
  e->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  cj_track(engine, &e->link, event_destroy);
  *out = e;
  return CUJIT_OK;
}

void cujit_event_free(cujit_event *event) {
  if (!event) return;
  cj_untrack(event->device->engine, &event->link);
  event_destroy(&event->link);
}

static cujit_status check_event(cujit_event *event, const char *fn, const char *which) {
  if (!event) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, which);
  if (is_current(event->device, event->generation) && event->device->fault == CUJIT_OK)
    return CUJIT_OK;
  char what[80];
  snprintf(what, sizeof what, "%s: %s", fn, which);
  return cj_check_alive(event->device, event->generation, what);
}

cujit_status cujit_event_record(cujit_event *event, cujit_stream *stream) {
  static const char fn[] = "cujit_event_record";
  cujit_status st = check_event(event, fn, "the event");
  if (st != CUJIT_OK) return st;
  cujit_device *device = event->device;
  if (stream && stream->device != device)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the event is on device %d but the stream on device %d; record an event "
                   "made on the stream's device (make it current with cujit_set_device)",
                   fn, device->ordinal, stream->device->ordinal);
  if (stream)
    st = enter_stream(stream, fn);
  else
    st = cj_device_enter(device);
  if (st == CUJIT_OK)
    st =
        cj_check(device, device->engine->drv.cuEventRecord(event->handle, cj_stream_handle(stream)),
                 "cuEventRecord");
  if (st == CUJIT_OK) event->recorded = 1;
  return st;
}

cujit_status cujit_event_synchronize(cujit_event *event) {
  static const char fn[] = "cujit_event_synchronize";
  cujit_status st = check_event(event, fn, "the event");
  if (st == CUJIT_OK) st = cj_device_enter(event->device);
  return st == CUJIT_OK ? cj_wait(event->device, query_event, event->handle, fn) : st;
}

cujit_status cujit_event_query(cujit_event *event) {
  static const char fn[] = "cujit_event_query";
  cujit_status st = check_event(event, fn, "the event");
  if (st == CUJIT_OK) st = cj_device_enter(event->device);
  if (st != CUJIT_OK) return st;
  return cj_check(event->device, event->device->engine->drv.cuEventQuery(event->handle), fn);
}

cujit_status cujit_event_elapsed(cujit_event *start, cujit_event *end, float *ms) {
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
  if (!start->recorded || !end->recorded)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s event was never recorded; record both with cujit_event_record", fn,
                   start->recorded ? "end" : "start");
  if ((st = cj_device_enter(device)) != CUJIT_OK) return st;
  CUresult rc = engine->drv.cuEventElapsedTime(ms, start->handle, end->handle);
  if (rc == CUDA_ERROR_NOT_READY)
    return cj_fail(engine, CUJIT_ERROR_NOT_READY,
                   "%s: an event has not completed yet; call cujit_event_synchronize on the end "
                   "event first",
                   fn);
  return cj_check(device, rc, fn);
}

cujit_status cujit_stream_wait_event(cujit_stream *stream, cujit_event *event) {
  static const char fn[] = "cujit_stream_wait_event";
  cujit_status st = check_event(event, fn, "the event");
  if (st == CUJIT_OK) st = enter_stream(stream, fn);
  if (st != CUJIT_OK) return st;
  return cj_check(stream->device,
                  stream->device->engine->drv.cuStreamWaitEvent(stream->handle, event->handle, 0),
                  "cuStreamWaitEvent");
}
