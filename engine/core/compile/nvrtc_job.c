/*
** nvrtc_job.c -- one NVRTC compile as plain data (nvrtc_job.h): the calls from
** nvrtcCreateProgram to the lowered names, shared by the process's own compile and the worker
** process's.
*/
#include "nvrtc_job.h"
#include "link.h"
#include "pch.h"
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

static nvrtcResult fail(cj_nvrtc_step *failed, const char *call, nvrtcResult r) {
  failed->call = call, failed->result = r;
  return r;
}

static nvrtcResult create(cj_nvrtc *nv, const cj_nvrtc_job *job, nvrtcProgram *prog,
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

static int take_log(cj_nvrtc *nv, nvrtcProgram prog, cj_cache_entry *e) {
  size_t len = 0;
  if (nv->nvrtcGetProgramLogSize(prog, &len) != NVRTC_SUCCESS) len = 0;
  e->log = calloc(len + 1, 1);
  if (e->log && len) nv->nvrtcGetProgramLog(prog, e->log);
  return e->log != NULL;
}

static nvrtcResult lowered_names(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
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

static nvrtcResult outputs(cj_nvrtc *nv, nvrtcProgram prog, const cj_nvrtc_job *job,
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
  return lowered_names(nv, prog, job, e, failed);
}

cujit_status cj_nvrtc_job_run(cujit_engine *engine, cj_nvrtc *nv, const cj_nvrtc_job *job,
                              cj_cache_entry *e, nvrtcResult *compiled, cj_nvrtc_step *failed) {
  *compiled = NVRTC_SUCCESS;
  nvrtcProgram prog;
  if (create(nv, job, &prog, failed) != NVRTC_SUCCESS) return CUJIT_OK;
  cj_option_list *o = job->options;
  cj_pch pch = {
      0}; /* after the keys: the PCH options are not hashed, and change nothing compiled */
  if (job->pch) cj_pch_start(engine, nv, job->pch, o, &pch);
  *compiled = nv->nvrtcCompileProgram(prog, (int)o->n, (const char *const *)o->v);
  int logged = take_log(nv, prog, e);
  cj_pch_end(engine, nv, prog, o, &pch, e->log);
  cujit_status st = CUJIT_OK;
  if (!logged) {
    fail(failed, "malloc", NVRTC_ERROR_OUT_OF_MEMORY);
  } else if (*compiled == NVRTC_SUCCESS && job->link) {
    st = cj_link_ltoir(engine, nv, prog, e);
    if (st == CUJIT_OK) lowered_names(nv, prog, job, e, failed);
  } else if (*compiled == NVRTC_SUCCESS) {
    outputs(nv, prog, job, e, failed);
  }
  nv->nvrtcDestroyProgram(&prog);
  return st;
}
