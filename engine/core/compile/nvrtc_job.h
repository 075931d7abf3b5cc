/*
** nvrtc_job.h -- one NVRTC compile as plain data: what NVRTC is given (a source, its headers in
** memory, the options, the name expressions of C++ kernels) and what it gives back (the log, PTX,
** CUBIN and lowered names, into a cache entry). The same steps run in the process (compile.c) and
** in a worker process (remote.h, cujit-nvrtc-worker), so what a worker returns is what the process
** would have made, byte for byte. Knows no engine: a failed step is an nvrtcResult and the name of
** the call that gave it, which the caller turns into its message. Internal.
*/
#ifndef CUJIT_NVRTC_JOB_H
#define CUJIT_NVRTC_JOB_H

#include "cache.h"
#include "base/loader.h"

#include <stddef.h>

typedef struct cj_nvrtc_job {
  const char *source, *name;
  int header_count;
  const char *const *header_sources, *const *header_names;
  int option_count;
  const char *const *options;
  const char *exprs; /* "&NAME\0" for each C++-linkage kernel, exprs_len bytes in all */
  size_t exprs_len;
  int want_cubin; /* a real arch (sm_NN): the CUBIN too; compute_NN: the PTX only */
} cj_nvrtc_job;

/* A failed step: the call (NULL when none failed) and what it returned. NVRTC_ERROR_OUT_OF_MEMORY
** with call "malloc" for memory of cujit's; call "empty CUBIN" when NVRTC made an empty one. */
typedef struct cj_nvrtc_step {
  const char *call;
  nvrtcResult result;
} cj_nvrtc_step;

/* nvrtcCreateProgram and the name expressions: NVRTC_SUCCESS with *prog to destroy, else the
** step that failed (nothing to destroy). */
nvrtcResult cj_nvrtc_job_create(cj_nvrtc *nv, const cj_nvrtc_job *job, nvrtcProgram *prog,
                                cj_nvrtc_step *failed);

/* After nvrtcCompileProgram: the log into e->log ("" when there is none); 0 when out of memory. */
int cj_nvrtc_job_log(cj_nvrtc *nv, nvrtcProgram prog, cj_cache_entry *e);

/* After a successful compile: the PTX, the CUBIN when the job wants it, and the lowered name of
** each name expression, into `e`. */
nvrtcResult cj_nvrtc_job_outputs(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
                                 cj_cache_entry *e, cj_nvrtc_step *failed);

/* The lowered name of each name expression into e->names, as "EXPR\0LOWERED\0" pairs (part of
** cj_nvrtc_job_outputs; alone after a link, which makes the rest). */
nvrtcResult cj_nvrtc_job_names(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
                               cj_cache_entry *e, cj_nvrtc_step *failed);

/* The whole compile with nothing around it (no PCH, no link): create, compile, log, outputs.
** *compiled is nvrtcCompileProgram's result (NVRTC_SUCCESS also when an earlier step failed:
** then `failed` says which); the log is in `e` whenever the compile ran. What a worker process
*runs. */
void cj_nvrtc_job_run(cj_nvrtc *nv, const cj_nvrtc_job *job, cj_cache_entry *e,
                      nvrtcResult *compiled, cj_nvrtc_step *failed);

#endif
