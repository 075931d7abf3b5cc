/*
** cuda_stream.c -- the CUDA backend's streams and events (backend.h): streams made non-blocking
** and kept in the device's list (for synchronize and the pool's joins), queries that answer
** NOT_READY without recording it, and timing between events.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- streams and events ----------------------------------------------------------------------- */

/* Kept in the device's list (for synchronize and the pool's joins) with its event. */
static CUresult track_stream(cuda_device *c, CUstream s, int foreign) {
  CUevent joined = NULL;
  CUresult rc = c->drv->cuEventCreate(&joined, CU_EVENT_DISABLE_TIMING);
  if (rc != CUDA_SUCCESS) return rc;
  pthread_mutex_lock(&c->streams_lock);
  if (c->nstreams == c->cap) {
    int cap = c->cap ? 2 * c->cap : 8;
    cuda_stream *grown = realloc(c->streams, (size_t)cap * sizeof *grown);
    if (grown) c->streams = grown, c->cap = cap;
  }
  if (c->nstreams < c->cap) c->streams[c->nstreams++] = (cuda_stream){s, joined, 0, foreign};
  int kept = c->streams[c->nstreams - 1].stream == s;
  pthread_mutex_unlock(&c->streams_lock);
  if (kept) return CUDA_SUCCESS;
  c->drv->cuEventDestroy(joined);
  return CUDA_ERROR_OUT_OF_MEMORY;
}

cujit_status cj_cuda_stream_create(cujit_device *dev, void **stream) {
  cuda_device *c = CU(dev);
  CUstream s = NULL;
  CUresult rc = c->drv->cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  if (rc == CUDA_SUCCESS && (rc = track_stream(c, s, 0)) != CUDA_SUCCESS) {
    c->drv->cuStreamDestroy(s);
    s = NULL;
  }
  *stream = s;
  return cj_cuda_check(dev, rc, "cuStreamCreate");
}

/* cujit_stream_wrap: the application's stream, of the context cujit uses on the device (entered),
** kept in the list as cujit's own are, so device synchronize and the pool's reuse of freed blocks
** order themselves after the work cujit queues there. */
cujit_status cj_cuda_stream_adopt(cujit_device *dev, void *native, void **stream) {
  cuda_device *c = CU(dev);
  *stream = NULL;
  if (!c->drv->cuStreamGetCtx) return cj_cuda_missing(dev, "cuStreamGetCtx", "cujit_stream_wrap");
  CUcontext owner = NULL;
  CUresult rc = c->drv->cuStreamGetCtx((CUstream)native, &owner);
  if (rc != CUDA_SUCCESS)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_stream_wrap: the driver does not know the stream (CUDA error %d); pass a "
                   "CUstream or cudaStream_t that is still alive",
                   (int)rc);
  if (owner != __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE))
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_stream_wrap: the stream belongs to another context than the one cujit "
                   "uses on device %d (its primary context, unless cujit_device_use_context gave "
                   "one); make the stream there, or give cujit the stream's context first",
                   dev->ordinal);
  pthread_mutex_lock(&c->streams_lock);
  int known = 0;
  for (int i = 0; i < c->nstreams; i++) known |= c->streams[i].stream == (CUstream)native;
  pthread_mutex_unlock(&c->streams_lock);
  if (known)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_stream_wrap: the stream is already a cujit stream on device %d (made by "
                   "cujit, or wrapped and not freed yet); use that cujit_stream",
                   dev->ordinal);
  if ((rc = track_stream(c, (CUstream)native, 1)) != CUDA_SUCCESS)
    return cj_cuda_check(dev, rc, "cujit_stream_wrap");
  *stream = native;
  return CUJIT_OK;
}

void cj_cuda_stream_capturing(cujit_device *dev, void *stream, int capturing) {
  cuda_device *c = CU(dev);
  pthread_mutex_lock(&c->streams_lock);
  for (int i = 0; i < c->nstreams; i++)
    if (c->streams[i].stream == (CUstream)stream) c->streams[i].capturing = capturing;
  pthread_mutex_unlock(&c->streams_lock);
}

/* The stream's work still queued goes on after it is destroyed: the default stream waits for it
** first, so that device synchronize and the pool's reuse of freed blocks, which no longer see the
** stream, still come after that work. */
void cj_cuda_stream_destroy(cujit_device *dev, void *stream) {
  cuda_device *c = CU(dev);
  int foreign = 0;
  pthread_mutex_lock(&c->streams_lock);
  for (int i = 0; i < c->nstreams; i++)
    if (c->streams[i].stream == (CUstream)stream) {
      if (!c->streams[i].capturing &&
          c->drv->cuEventRecord(c->streams[i].joined, (CUstream)stream) == CUDA_SUCCESS)
        c->drv->cuStreamWaitEvent((CUstream)0, c->streams[i].joined, 0);
      c->drv->cuEventDestroy(c->streams[i].joined);
      foreign = c->streams[i].foreign;
      c->streams[i] = c->streams[--c->nstreams];
      break;
    }
  pthread_mutex_unlock(&c->streams_lock);
  if (!foreign) c->drv->cuStreamDestroy((CUstream)stream);
}

cujit_status cj_cuda_stream_query(cujit_device *dev, void *stream) {
  return cj_cuda_answer(dev, DRV(dev)->cuStreamQuery((CUstream)stream), "cujit_stream_query");
}

cujit_status cj_cuda_stream_done(cujit_device *dev, void *stream) {
  return cj_cuda_answer(dev, DRV(dev)->cuStreamQuery((CUstream)stream), "cujit_stream_synchronize");
}

cujit_status cj_cuda_stream_synchronize(cujit_device *dev, void *stream) {
  return cj_backend_wait(dev, cj_cuda_stream_done, stream, "cujit_stream_synchronize");
}

cujit_status cj_cuda_stream_wait_event(cujit_device *dev, void *stream, void *event) {
  return cj_cuda_check(dev, DRV(dev)->cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0),
                       "cuStreamWaitEvent");
}

cujit_status cj_cuda_event_create(cujit_device *dev, void **event) {
  CUevent e = NULL;
  cujit_status st =
      cj_cuda_check(dev, DRV(dev)->cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  *event = e;
  return st;
}

void cj_cuda_event_destroy(cujit_device *dev, void *event) {
  DRV(dev)->cuEventDestroy((CUevent)event);
}

cujit_status cj_cuda_event_record(cujit_device *dev, void *event, void *stream) {
  return cj_cuda_check(dev, DRV(dev)->cuEventRecord((CUevent)event, (CUstream)stream),
                       "cuEventRecord");
}

cujit_status cj_cuda_event_query(cujit_device *dev, void *event) {
  return cj_cuda_answer(dev, DRV(dev)->cuEventQuery((CUevent)event), "cujit_event_query");
}

static cujit_status event_done(cujit_device *dev, void *event) {
  return cj_cuda_answer(dev, DRV(dev)->cuEventQuery((CUevent)event), "cujit_event_synchronize");
}

cujit_status cj_cuda_event_synchronize(cujit_device *dev, void *event) {
  return cj_backend_wait(dev, event_done, event, "cujit_event_synchronize");
}

cujit_status cj_cuda_event_elapsed(cujit_device *dev, void *start, void *end, float *ms) {
  CUresult rc = DRV(dev)->cuEventElapsedTime(ms, (CUevent)start, (CUevent)end);
  if (rc == CUDA_ERROR_NOT_READY)
    return cj_fail(dev->engine, CUJIT_ERROR_NOT_READY,
                   "cujit_event_elapsed: an event has not completed yet; call "
                   "cujit_event_synchronize on the end event first");
  /* cujit's own events have timing and cujit_event_elapsed saw them recorded, so this is an
  ** application's event from cujit_event_wrap, made without timing or never recorded */
  if (rc == CUDA_ERROR_INVALID_HANDLE)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_event_elapsed: the driver cannot time these events (invalid resource "
                   "handle): a wrapped event made without timing (CU_EVENT_DISABLE_TIMING, "
                   "cudaEventDisableTiming) or never recorded has no time; time with events from "
                   "cujit_event_create, or record the wrapped ones");
  return cj_cuda_check(dev, rc, "cujit_event_elapsed");
}
