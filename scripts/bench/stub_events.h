/*
** stub_events.h -- the stand-in driver's events (stub_events.c): entry points named in
** stub_driver.c's table, and the note stub_memory.c's cuEventRecord makes.
*/
#ifndef CJ_STUB_EVENTS_H
#define CJ_STUB_EVENTS_H

#include <cuda.h>

CUresult cj_stub_event_create(CUevent *event, unsigned flags);
CUresult cj_stub_event_destroy(CUevent event);
CUresult cj_stub_event_elapsed(float *ms, CUevent start, CUevent end);
void cj_stub_event_recorded(CUevent event); /* cuEventRecord was called on it */

#endif
