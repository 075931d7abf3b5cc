/*
** stub_events.c -- the stand-in driver's events: each cuEventCreate makes a handle of its own that
** remembers its flags and whether it was recorded, so that cuEventElapsedTime refuses what the
** real driver refuses (CUDA_ERROR_INVALID_HANDLE: an event made with CU_EVENT_DISABLE_TIMING, one
** never recorded, or one it did not make, such as an event opened from an IPC handle) and
** otherwise answers 0 ms: no kernel takes time here. Without this a backend that made its timing
** events without timing passed every test without a GPU.
*/
#include "stub_events.h"

#include <pthread.h>
#include <stdlib.h>

void cj_stub_cost(void); /* stub_driver.c */

typedef struct stub_event {
  unsigned flags;
  int recorded;
  struct stub_event *next;
} stub_event;

static stub_event *events; /* every live event this stand-in made */
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;

/* The live event at handle e, or NULL; with events_lock held. */
static stub_event *find(CUevent e) {
  for (stub_event *ev = events; ev; ev = ev->next)
    if ((CUevent)ev == e) return ev;
  return NULL;
}

CUresult cj_stub_event_create(CUevent *event, unsigned flags) {
  cj_stub_cost();
  stub_event *ev = calloc(1, sizeof *ev);
  if (!ev) return CUDA_ERROR_OUT_OF_MEMORY;
  ev->flags = flags;
  pthread_mutex_lock(&events_lock);
  ev->next = events, events = ev;
  pthread_mutex_unlock(&events_lock);
  *event = (CUevent)ev;
  return CUDA_SUCCESS;
}

CUresult cj_stub_event_destroy(CUevent event) {
  cj_stub_cost();
  pthread_mutex_lock(&events_lock);
  stub_event **at = &events;
  while (*at && (CUevent)*at != event) at = &(*at)->next;
  stub_event *gone = *at;
  if (gone) *at = gone->next;
  pthread_mutex_unlock(&events_lock);
  free(gone); /* an event the stand-in did not make (an IPC one) is let go, as before */
  return CUDA_SUCCESS;
}

void cj_stub_event_recorded(CUevent event) {
  pthread_mutex_lock(&events_lock);
  stub_event *ev = find(event);
  if (ev) ev->recorded = 1;
  pthread_mutex_unlock(&events_lock);
}

CUresult cj_stub_event_elapsed(float *ms, CUevent start, CUevent end) {
  cj_stub_cost();
  pthread_mutex_lock(&events_lock);
  const stub_event *a = find(start), *b = find(end);
  int timed =
      a && b && a->recorded && b->recorded && !((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING);
  pthread_mutex_unlock(&events_lock);
  if (!timed) return CUDA_ERROR_INVALID_HANDLE;
  *ms = 0.0f;
  return CUDA_SUCCESS;
}
