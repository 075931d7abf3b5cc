/*
** trace.h -- NVTX ranges for profilers (Nsight Systems, Nsight Compute, any NVTX tool): the one
** place cujit speaks NVTX3 (header-only, from the CUDA toolkit), in its domain "cujit". The
** layers that do the work call it: the program's build and its compile (NVRTC or g++), the
** cache's disk reads and hits, a program's load on a device, and each launch, named by the
** kernel's name registered once (so a launch formats no string).
**
** Off unless a profiler is attached, by NVTX's own rule: cj_trace_open's first NVTX call looks
** for an injection library (NVTX_INJECTION64_PATH, which a profiler sets); without one NVTX
** answers nothing and cujit never calls it again, every range below then costs a test of a flag.
** CUJIT_NVTX=0 (off, no, false) silences it entirely: NVTX is never called, so a tool attached
** sees no domain "cujit". Built without the toolkit's nvtx3 headers (CUJIT_HAVE_NVTX 0), every
** call here does nothing. Internal.
*/
#ifndef CUJIT_TRACE_H
#define CUJIT_TRACE_H

#include "base.h"

/* Once per process (the first engine), attaches to a profiler unless CUJIT_NVTX is off; every
** engine: a CUJIT_NVTX value not understood is a warning on it (the default, on, is used). */
void cj_trace_open(cujit_engine *engine);

/* 1 while ranges are recorded: a profiler is attached and CUJIT_NVTX is not off. Set once, by
** the first cj_trace_open, before any engine exists for other layers to use. */
extern int cj_trace_on;

/* A name registered with the profiler for a hot path's ranges (a kernel's name, at its making):
** NULL when nothing is recorded, so the launch path tests one pointer it already has at hand. The
** handle lives as long as the process (NVTX has no unregistering); `name` only during the call. */
void *cj_trace_name(const char *name);

/* A range on this thread, named by a handle of cj_trace_name (text: the same name, used if the
** profiler could not register it); nothing when the handle is NULL. Each push is ended by a pop
** with the same handle, on the same thread. */
void cj_trace_push_named(void *handle, const char *text);
void cj_trace_pop_named(void);
static inline void cj_trace_push_kernel(void *handle, const char *text) {
  if (handle) cj_trace_push_named(handle, text);
}
static inline void cj_trace_pop_kernel(void *handle) {
  if (handle) cj_trace_pop_named();
}

/* Ranges and marks off the hot path, named by formatted text ("cujit: load %s"), formatted only
** while recording. Each cj_trace_push is ended by a cj_trace_pop on the same thread. */
void cj_trace_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cj_trace_pop(void);
void cj_trace_mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
