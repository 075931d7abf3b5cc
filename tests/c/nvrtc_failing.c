/*
** nvrtc_failing.c -- a stand-in NVRTC for tests (CUJIT_NVRTC=<this library>): every call goes to
** the real libnvrtc.so.13 except the one named by $CJ_TEST_NVRTC_FAIL, which answers
** NVRTC_ERROR_INTERNAL_ERROR; $CJ_TEST_NVRTC_VERSION ("12.9") replaces the version it reports.
** So the suite sees cujit handle each NVRTC failure, which the real library never gives on a
** valid program, and versions other than the installed one.
**
** Built twice: nvrtc_failing exports no precompiled-header calls (an NVRTC older than 12.8);
** nvrtc_with_pch (CJ_STANDIN_PCH) forwards them too. With $CJ_TEST_NVRTC_BUSY_LOG set, each call
** made while another thread's nvrtcCompileProgram runs in the process appends a line to that
** file: NVRTC 13 runs a process's calls one at a time, so such a call waits for that compile. The
** line names the call, the process and thread that made it and the thread last to start a compile
** ("nvrtcGetPCHHeapSize pid 12 tid 14 while tid 13 compiles"): the engine's workers load this
** library too (they inherit CUJIT_NVRTC) and write to the same file, so a failure says who called.
** $CJ_TEST_NVRTC_PCH_HEAP_UNKNOWN=1 makes nvrtcGetPCHHeapSize report 0 (NVRTC's heap unchanged),
** so the engine never learns the size; cj_standin_compiles_running() says how many
** nvrtcCompileProgram calls of the process run now (a test waits for one to have begun).
*/
#define _GNU_SOURCE /* gettid */
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *real(const char *name) {
  static void *handle;
  if (!handle) handle = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  return handle ? dlsym(handle, name) : NULL;
}

static int fails(const char *name) {
  const char *f = getenv("CJ_TEST_NVRTC_FAIL");
  return f && strcmp(f, name) == 0;
}

static atomic_int compiles_running;      /* nvrtcCompileProgram calls of this process now */
static atomic_int compiler_tid;          /* the thread that started the last of them */
static _Thread_local int compiling_here; /* ... one of them on this thread */

int cj_standin_compiles_running(void); /* for tests, through dlsym: none of NVRTC's */
int cj_standin_compiles_running(void) {
  return atomic_load(&compiles_running);
}

static void note_if_busy(const char *name) {
  const char *log = getenv("CJ_TEST_NVRTC_BUSY_LOG");
  if (!log || atomic_load(&compiles_running) - compiling_here <= 0) return;
  FILE *f = fopen(log, "a");
  if (!f) return;
  fprintf(f, "%s pid %d tid %d while tid %d compiles\n", name, (int)getpid(), (int)gettid(),
          atomic_load(&compiler_tid));
  fclose(f);
}

#define FORWARD(name, ...)                                                                         \
  note_if_busy(#name);                                                                             \
  __typeof__(&name) fn;                                                                            \
  *(void **)&fn = real(#name);                                                                     \
  if (fails(#name) || !fn) return NVRTC_ERROR_INTERNAL_ERROR;                                      \
  return fn(__VA_ARGS__)

const char *nvrtcGetErrorString(nvrtcResult result) {
  const char *(*fn)(nvrtcResult);
  *(void **)&fn = real("nvrtcGetErrorString");
  return fn ? fn(result) : "no real NVRTC";
}

nvrtcResult nvrtcVersion(int *major, int *minor) {
  const char *v = getenv("CJ_TEST_NVRTC_VERSION");
  if (v && strchr(v, '.')) {
    *major = atoi(v), *minor = atoi(strchr(v, '.') + 1);
    return NVRTC_SUCCESS;
  }
  FORWARD(nvrtcVersion, major, minor);
}

nvrtcResult nvrtcGetNumSupportedArchs(int *n) {
  FORWARD(nvrtcGetNumSupportedArchs, n);
}

nvrtcResult nvrtcGetSupportedArchs(int *archs) {
  FORWARD(nvrtcGetSupportedArchs, archs);
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                               int numHeaders, const char *const *headers,
                               const char *const *includeNames) {
  FORWARD(nvrtcCreateProgram, prog, src, name, numHeaders, headers, includeNames);
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog) {
  FORWARD(nvrtcDestroyProgram, prog);
}

static nvrtcResult compile_program(nvrtcProgram prog, int numOptions, const char *const *options) {
  FORWARD(nvrtcCompileProgram, prog, numOptions, options);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options) {
  atomic_store(&compiler_tid, (int)gettid());
  atomic_fetch_add(&compiles_running, 1), compiling_here = 1;
  nvrtcResult r = compile_program(prog, numOptions, options);
  atomic_fetch_sub(&compiles_running, 1), compiling_here = 0;
  return r;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size) {
  FORWARD(nvrtcGetPTXSize, prog, size);
}

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx) {
  FORWARD(nvrtcGetPTX, prog, ptx);
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size) {
  FORWARD(nvrtcGetCUBINSize, prog, size);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin) {
  FORWARD(nvrtcGetCUBIN, prog, cubin);
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size) {
  FORWARD(nvrtcGetProgramLogSize, prog, size);
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log) {
  FORWARD(nvrtcGetProgramLog, prog, log);
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char *const name_expression) {
  FORWARD(nvrtcAddNameExpression, prog, name_expression);
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char *const name_expression,
                                const char **lowered_name) {
  FORWARD(nvrtcGetLoweredName, prog, name_expression, lowered_name);
}

#ifdef CJ_STANDIN_PCH
static nvrtcResult get_pch_heap_size(size_t *ret) {
  FORWARD(nvrtcGetPCHHeapSize, ret);
}

nvrtcResult nvrtcGetPCHHeapSize(size_t *ret) {
  nvrtcResult r = get_pch_heap_size(ret);
  const char *unknown = getenv("CJ_TEST_NVRTC_PCH_HEAP_UNKNOWN");
  if (r == NVRTC_SUCCESS && unknown && strcmp(unknown, "1") == 0) *ret = 0;
  return r;
}

nvrtcResult nvrtcSetPCHHeapSize(size_t size) {
  FORWARD(nvrtcSetPCHHeapSize, size);
}

nvrtcResult nvrtcGetPCHCreateStatus(nvrtcProgram prog) {
  FORWARD(nvrtcGetPCHCreateStatus, prog);
}

nvrtcResult nvrtcGetPCHHeapSizeRequired(nvrtcProgram prog, size_t *size) {
  FORWARD(nvrtcGetPCHHeapSizeRequired, prog, size);
}
#endif
