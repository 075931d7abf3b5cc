/*
** nccl_lib.c -- dlopen libnccl.so.2 (or $CUJIT_NCCL) once per process and resolve the entry
** points cujit calls. Nothing in cujit links NCCL.
*/
#include "nccl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cj_nccl nccl;
static int nccl_state; /* 0 not tried, 1 open, -1 failed (nccl_why says why) */
static char nccl_why[1024];
static pthread_mutex_t nccl_lock = PTHREAD_MUTEX_INITIALIZER;

static const char install_hint[] =
    "install NCCL 2.x (a distribution's libnccl2, or `pip install nvidia-nccl-cu13`) and put "
    "libnccl.so.2 on the library path, or set CUJIT_NCCL to its path (for the wheel: "
    "python3 -c \"import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))\", then "
    "lib/libnccl.so.2 under it)";

static int resolve(void *handle, const char *name, void **out, int required) {
  *out = dlsym(handle, name);
  if (*out || !required) return 1;
  snprintf(nccl_why, sizeof nccl_why,
           "NCCL at %s lacks %s: it is older than cujit needs (NCCL 2.10 or newer); %s", nccl.path,
           name, install_hint);
  return 0;
}

static int resolve_all(void) {
#define NCCL_REQUIRED_(field) resolve(nccl.handle, "nccl" #field, (void **)&nccl.field, 1)
  return NCCL_REQUIRED_(GetVersion) && NCCL_REQUIRED_(GetErrorString) &&
         NCCL_REQUIRED_(GetUniqueId) && NCCL_REQUIRED_(CommInitRank) &&
         NCCL_REQUIRED_(CommInitAll) && NCCL_REQUIRED_(CommDestroy) && NCCL_REQUIRED_(CommAbort) &&
         NCCL_REQUIRED_(GroupStart) && NCCL_REQUIRED_(GroupEnd) && NCCL_REQUIRED_(AllReduce) &&
         NCCL_REQUIRED_(Broadcast) && NCCL_REQUIRED_(Reduce) && NCCL_REQUIRED_(AllGather) &&
         NCCL_REQUIRED_(ReduceScatter) &&
         resolve(nccl.handle, "ncclGetLastError", (void **)&nccl.GetLastError, 0);
#undef NCCL_REQUIRED_
}

static void open_once(void) {
  const char *env = getenv("CUJIT_NCCL");
  const char *name = env && *env ? env : "libnccl.so.2";
  snprintf(nccl.path, sizeof nccl.path, "%s", name);
  nccl.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!nccl.handle) {
    const char *err = dlerror();
    if (env && *env)
      snprintf(nccl_why, sizeof nccl_why,
               "NCCL could not be opened from CUJIT_NCCL=%s (%s); point CUJIT_NCCL at a "
               "libnccl.so.2, or unset it to search the library path",
               env, err ? err : "unknown error");
    else
      snprintf(nccl_why, sizeof nccl_why, "no NCCL: libnccl.so.2 could not be opened (%s); %s",
               err ? err : "unknown error", install_hint);
    nccl_state = -1;
    return;
  }
  if (!resolve_all()) {
    nccl_state = -1; /* kept open: a library once opened stays, as the comment in the .h says */
    return;
  }
  int version = 0;
  if (nccl.GetVersion(&version) != CJ_NCCL_SUCCESS) version = 0;
  nccl.version = version;
  if (version < 21000) {
    snprintf(nccl_why, sizeof nccl_why,
             "NCCL at %s is version %d, older than cujit needs (2.10, for the avg reduction); %s",
             nccl.path, version, install_hint);
    nccl_state = -1;
    return;
  }
  nccl_state = 1;
}

const cj_nccl *cj_nccl_open(char *why, size_t why_len) {
  pthread_mutex_lock(&nccl_lock);
  if (nccl_state == 0) open_once();
  int state = nccl_state;
  pthread_mutex_unlock(&nccl_lock);
  if (state == 1) return &nccl;
  snprintf(why, why_len, "%s", nccl_why);
  return NULL;
}
