/*
** trace.c -- NVTX ranges (trace.h): the domain "cujit", registered kernel names, pushes, pops
** and marks, through the CUDA toolkit's header-only NVTX3. Each NVTX call is a test of NVTX's own
** function pointer, which NVTX sets at its first call: to the profiler's entry, or to nothing
** when no injection library is there. cujit makes that first call once, in cj_trace_open, and
** keeps the answer (the domain, NULL without a profiler) in cj_trace_on, so that without a
** profiler no other NVTX call is ever made.
*/
#include "trace.h"
#include "env.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#if CUJIT_HAVE_NVTX
/* The toolkit's header, as a system header: its own code is not held to cujit's warnings. */
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>
#endif

int cj_trace_on;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int env_bad; /* CUJIT_NVTX was not understood (env_why says why): each engine warns */
static char env_why[256];

#if CUJIT_HAVE_NVTX
static const char *const if_bad = "NVTX ranges are on (the default)";
static nvtxDomainHandle_t domain;

/* What a registered name stands for when the profiler gave no handle for it: the text is pushed
** instead (the address is the mark, never read). */
static char unregistered;

static void attach(void) {
  int on = cj_env_nvtx(env_why, sizeof env_why);
  env_bad = on < 0;
  if (!on) return; /* silenced: NVTX is never called, not even to look for a profiler */
  domain = nvtxDomainCreateA("cujit");
  cj_trace_on = domain != NULL;
}

void *cj_trace_name(const char *name) {
  if (!cj_trace_on) return NULL;
  nvtxStringHandle_t h = nvtxDomainRegisterStringA(domain, name);
  return h ? (void *)h : (void *)&unregistered;
}

static void push(nvtxEventAttributes_t *a) {
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  nvtxDomainRangePushEx(domain, a);
}

void cj_trace_push_named(void *handle, const char *text) {
  nvtxEventAttributes_t a = {0};
  if (handle == &unregistered) {
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text;
  } else {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = (nvtxStringHandle_t)handle;
  }
  push(&a);
}

void cj_trace_pop_named(void) {
  nvtxDomainRangePop(domain);
}

void cj_trace_push(const char *fmt, ...) {
  if (!cj_trace_on) return;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  nvtxEventAttributes_t a = {0};
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text; /* the profiler copies it during the call */
  push(&a);
}

void cj_trace_pop(void) {
  if (cj_trace_on) nvtxDomainRangePop(domain);
}

void cj_trace_mark(const char *fmt, ...) {
  if (!cj_trace_on) return;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  nvtxDomainMarkEx(domain, &a);
}

#else /* built without nvtx3: CUJIT_NVTX is still read, so a typo is still reported */

static const char *const if_bad = "the default (on) is used, and this build has no NVTX ranges";

static void attach(void) {
  env_bad = cj_env_nvtx(env_why, sizeof env_why) < 0;
}

void *cj_trace_name(const char *name) {
  (void)name;
  return NULL;
}

void cj_trace_push_named(void *handle, const char *text) {
  (void)handle, (void)text;
}

void cj_trace_pop_named(void) {}

void cj_trace_push(const char *fmt, ...) {
  (void)fmt;
}

void cj_trace_pop(void) {}

void cj_trace_mark(const char *fmt, ...) {
  (void)fmt;
}

#endif

void cj_trace_open(cujit_engine *engine) {
  pthread_once(&once, attach);
  if (env_bad) cj_warn(engine, "%s; %s", env_why, if_bad);
}
