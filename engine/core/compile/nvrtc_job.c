/*
** nvrtc_job.c -- one NVRTC compile as plain data (nvrtc_job.h): the calls from
** nvrtcCreateProgram to the lowered names, shared by the process's own compile and the worker
** process's.
*/
#include "nvrtc_job.h"
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

static nvrtcResult fail(cj_nvrtc_step *failed, const char *call, nvrtcResult r) {
  failed->call = call, failed->result = r;
  return r;
}

nvrtcResult cj_nvrtc_job_create(cj_nvrtc *nv, const cj_nvrtc_job *job, nvrtcProgram *prog,
                                cj_nvrtc_step *failed) {
  failed->call = NULL, failed->result = NVRTC_SUCCESS;
  nvrtcResult r = nv->nvrtcCreateProgram(prog, job->source, job->name, job->header_count,
                                         job->header_sources, job->header_names);
  if (r != NVRTC_SUCCESS) return fail(failed, "nvrtcCreateProgram", r);
  for (size_t at = 0; at < job->exprs_len; at += strlen(job->exprs + at) + 1)
    if ((r = nv->nvrtcAddNameExpression(*prog, job->exprs + at)) != NVRTC_SUCCESS) {
      nv->nvrtcDestroyProgram(prog);
      return fail(failed, "nvrtcAddNameExpression", r);
    }
  return NVRTC_SUCCESS;
}

int cj_nvrtc_job_log(cj_nvrtc *nv, nvrtcProgram prog, cj_cache_entry *e) {
  size_t len = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &len) != NVRTC_SUCCESS) len = 0;
  e->log = calloc(len + 1, 1);
  if (e->log && len) nv->nvrtcGetProgramLog(prog, e->log);
  return e->log != NULL;
}

nvrtcResult cj_nvrtc_job_names(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
                               cj_cache_entry *e, cj_nvrtc_step *failed) {
  cj_buf names = {0};
  for (size_t at = 0; at < job->exprs_len; at += strlen(job->exprs + at) + 1) {
    const char *lowered = NULL;
    nvrtcResult r = nv->nvrtcGetLoweredName(prog, job->exprs + at, &lowered);
    if (r != NVRTC_SUCCESS || !lowered) {
      cj_buf_free(&names);
      return fail(failed, "nvrtcGetLoweredName",
                  r != NVRTC_SUCCESS ? r : NVRTC_ERROR_INTERNAL_ERROR);
    }
    cj_buf_add(&names, job->exprs + at, strlen(job->exprs + at) + 1);
    cj_buf_add(&names, lowered, strlen(lowered) + 1);
  }
  if (names.failed) {
    cj_buf_free(&names);
    return fail(failed, "malloc", NVRTC_ERROR_OUT_OF_MEMORY);
  }
  e->names = names.data, e->names_len = names.len;
  return NVRTC_SUCCESS;
}

nvrtcResult cj_nvrtc_job_outputs(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
                                 cj_cache_entry *e, cj_nvrtc_step *failed) {
  failed->call = NULL, failed->result = NVRTC_SUCCESS;
  size_t n = 0;
  nvrtcResult r = nv->nvrtcGetPTXSize(prog, &n);
  if (r != NVRTC_SUCCESS) return fail(failed, "nvrtcGetPTXSize", r);
  if (!(e->ptx = malloc(n + 1))) return fail(failed, "malloc", NVRTC_ERROR_OUT_OF_MEMORY);
  if ((r = nv->nvrtcGetPTX(prog, e->ptx)) != NVRTC_SUCCESS) return fail(failed, "nvrtcGetPTX", r);
  e->ptx[n] = '\0';
  e->ptx_len = strlen(e->ptx);
  if (job->want_cubin) {
    if ((r = nv->nvrtcGetCUBINSize(prog, &n)) != NVRTC_SUCCESS)
      return fail(failed, "nvrtcGetCUBINSize", r);
    if (n == 0) return fail(failed, "empty CUBIN", NVRTC_ERROR_INTERNAL_ERROR);
    if (!(e->cubin = malloc(n))) return fail(failed, "malloc", NVRTC_ERROR_OUT_OF_MEMORY);
    if ((r = nv->nvrtcGetCUBIN(prog, e->cubin)) != NVRTC_SUCCESS)
      return fail(failed, "nvrtcGetCUBIN", r);
    e->cubin_len = n;
  }
  return cj_nvrtc_job_names(nv, prog, job, e, failed);
}

void cj_nvrtc_job_run(cj_nvrtc *nv, const cj_nvrtc_job *job, cj_cache_entry *e,
                      nvrtcResult *compiled, cj_nvrtc_step *failed) {
  *compiled = NVRTC_SUCCESS;
  nvrtcProgram prog;
  if (cj_nvrtc_job_create(nv, job, &prog, failed) != NVRTC_SUCCESS) return;
  *compiled = nv->nvrtcCompileProgram(prog, job->option_count, job->options);
  if (!cj_nvrtc_job_log(nv, prog, e))
    fail(failed, "malloc", NVRTC_ERROR_OUT_OF_MEMORY);
  else if (*compiled == NVRTC_SUCCESS)
    cj_nvrtc_job_outputs(nv, prog, job, e, failed);
  nv->nvrtcDestroyProgram(&prog);
}
