/*
** remote.h -- NVRTC compiles in worker processes. NVRTC 13 runs the compiles of one process one
** at a time (measured: eight threads of a process took as long as one after another), so a compile
** that starts while another NVRTC compile of the engine is running goes to a worker process
** (cujit-nvrtc-worker, engine/cli/nvrtc_worker.c) with the same NVRTC, which gives back the same
** bytes (nvrtc_job.h runs on both sides). Workers are started on first need, kept while the engine
** lives for the next compiles, and ended by cj_remote_close. Whatever goes wrong with a worker
** (none found, it cannot start, it dies) the compile runs in the process instead: slower, never
** different. CUJIT_NVRTC_WORKER=off turns workers off; =always sends every compile to one (NVRTC's
** crashes then end a worker, not the process); =PATH names the program. Internal.
*/
#ifndef CUJIT_REMOTE_H
#define CUJIT_REMOTE_H

#include "nvrtc_job.h"
#include "base/base.h"

/* The engine's pool (no process yet); NULL when out of memory, which only means no workers. */
cj_remote *cj_remote_open(void);
/* Ends the pool's workers (each is told by its socket closing, then waited for) and frees it. */
void cj_remote_close(cj_remote *pool);

/* Decides where a compile runs. Returns 1 when another compile is already running in this
** process's NVRTC and the job was compiled by a worker: `e`, *compiled and *failed hold what
** cj_nvrtc_job_run would have given. Returns 0 when the job is the caller's to run in the process;
** then it counts as running there until cj_remote_done. */
int cj_remote_compile(cujit_engine *engine, cj_nvrtc *nv, const cj_nvrtc_job *job,
                      cj_cache_entry *e, nvrtcResult *compiled, cj_nvrtc_step *failed);
void cj_remote_done(cujit_engine *engine);

/* The worker's side: answers requests read from `in` on `out` until `in` ends, with the worker's
** own engine (`engine`: its precompiled headers, made in the worker and used by its later compiles
** of the same headers). Returns the exit status for the worker's main: 0 at a clean end, 1 for a
** request it could not read, 2 without NVRTC. */
int cj_remote_serve(cujit_engine *engine, int in, int out);

#endif
