/*
** nvrtc_job.h -- one NVRTC compile as plain data: what NVRTC is given (a source, its headers in
** memory, the options, the name expressions of C++ kernels) and what it gives back (the log, PTX,
** CUBIN and lowered names, into a cache entry). The same steps run in the process (compile.c) and
** in a worker process (remote.h, cujit-nvrtc-worker), so what a worker returns is what the process
** would have made, byte for byte. A failed step is an nvrtcResult and the name of the call that
** gave it, which the caller turns into its message. Internal.
*/
#ifndef CUJIT_NVRTC_JOB_H
#define CUJIT_NVRTC_JOB_H

#include "cache.h"
#include "includes.h"
#include "options.h"
#include "base/loader.h"

#include <stddef.h>

typedef struct cj_nvrtc_job {
  const char *source, *name;
  int header_count;
  const char *const *header_sources, *const *header_names;
  cj_option_list *options; /* NVRTC's list; the PCH's options join it during the compile only */
  const char *exprs;       /* "&NAME\0" for each C++-linkage kernel, exprs_len bytes in all */
  size_t exprs_len;
  int want_cubin;         /* a real arch (sm_NN): the CUBIN too; compute_NN: the PTX only */
  const cj_includes *pch; /* compiled with a PCH (pch.h) of these headers, or NULL */
  int link;               /* link= files: the link (link.h) makes the outputs */
  int heavy; /* a long compile (a PCH's headers, or much text): worth waiting for a worker */
} cj_nvrtc_job;

/* A failed step: the call (NULL when none failed) and what it returned. NVRTC_ERROR_OUT_OF_MEMORY
** with call "malloc" for memory of cujit's; call "empty CUBIN" when NVRTC made an empty one. */
typedef struct cj_nvrtc_step {
  const char *call;
  nvrtcResult result;
} cj_nvrtc_step;

/* The compile: nvrtcCreateProgram with the name expressions, the PCH around
** nvrtcCompileProgram when job->pch, the log (PCH messages taken out), then the PTX, CUBIN and
** lowered names, or the link. *compiled is nvrtcCompileProgram's result (NVRTC_SUCCESS also when
** an earlier step failed: `failed` says which, its call NULL when none did); the log is in `e`
** whenever the compile ran. Returns the link's status (CUJIT_OK without one). */
cujit_status cj_nvrtc_job_run(cujit_engine *engine, cj_nvrtc *nv, const cj_nvrtc_job *job,
                              cj_cache_entry *e, nvrtcResult *compiled, cj_nvrtc_step *failed);

#endif
