/*
** loader.c -- dlopen libcuda.so.1, libnvrtc and libnvJitLink, resolve their entry points.
*/
#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static int resolve(get_proc_fn get_proc, const char *name, int abi, void **out) {
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *out = NULL;
  return get_proc(name, out, abi, CU_GET_PROC_ADDRESS_DEFAULT, &found) == CUDA_SUCCESS &&
         found == CU_GET_PROC_ADDRESS_SUCCESS && *out != NULL;
}

static int resolve_all(cj_driver *drv, get_proc_fn get_proc, char *why, size_t why_len) {
#define CJ_RESOLVE_(name, abi)                                                                     \
  if (!resolve(get_proc, #name, abi, (void **)&drv->name)) {                                       \
    snprintf(why, why_len,                                                                         \
             "the CUDA driver lacks %s (ABI %d); cujit needs a driver for CUDA 12.0 or newer",     \
             #name, abi);                                                                          \
    return 0;                                                                                      \
  }
  CJ_DRIVER_FUNCTIONS(CJ_RESOLVE_)
#undef CJ_RESOLVE_
#define CJ_RESOLVE_OPTIONAL_(name, abi) resolve(get_proc, #name, abi, (void **)&drv->name);
  CJ_DRIVER_OPTIONAL_FUNCTIONS(CJ_RESOLVE_OPTIONAL_)
#undef CJ_RESOLVE_OPTIONAL_
  return 1;
}

int cj_driver_open(cj_driver *drv, char *why, size_t why_len) {
  memset(drv, 0, sizeof *drv);
  /* NODELETE: once cuInit ran, the driver has threads and exit handlers of its own, and
  ** unmapping it at cujit_close leaves them pointing at nothing (seen as a crash at exit after
  ** a primary context failed to be made). dlclose only drops the count. */
  drv->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!drv->handle) {
    snprintf(why, why_len,
             "no CUDA driver: libcuda.so.1 could not be opened (%s); install the NVIDIA driver",
             dlerror());
    return 0;
  }
  get_proc_fn get_proc;
  *(void **)&get_proc = dlsym(drv->handle, "cuGetProcAddress_v2");
  if (!get_proc) {
    snprintf(why, why_len,
             "the CUDA driver is too old (no cuGetProcAddress_v2); cujit needs a "
             "driver for CUDA 12.0 or newer");
    cj_driver_close(drv);
    return 0;
  }
  if (!resolve_all(drv, get_proc, why, why_len)) {
    cj_driver_close(drv);
    return 0;
  }
  CUresult rc = drv->cuInit(0);
  if (rc != CUDA_SUCCESS) {
    const char *name = NULL;
    drv->cuGetErrorName(rc, &name);
    snprintf(why, why_len,
             rc == CUDA_ERROR_NO_DEVICE
                 ? "no CUDA device: the driver is installed but sees no GPU (cuInit: %s)"
                 : "the CUDA driver failed to initialise (cuInit: %s); check the driver install",
             name ? name : "unknown error");
    cj_driver_close(drv);
    return 0;
  }
  drv->cuDriverGetVersion(&drv->version);
  return 1;
}

void cj_driver_close(cj_driver *drv) {
  if (drv->handle) dlclose(drv->handle);
  memset(drv, 0, sizeof *drv);
}

static int nvrtc_resolve(cj_nvrtc *nv, char *why, size_t why_len) {
#define CJ_NVRTC_RESOLVE_(name)                                                                    \
  if (!(*(void **)&nv->name = dlsym(nv->handle, #name))) {                                         \
    snprintf(why, why_len, "%s lacks %s; cujit needs NVRTC 12.0 or newer", nv->path, #name);       \
    return 0;                                                                                      \
  }
  CJ_NVRTC_FUNCTIONS(CJ_NVRTC_RESOLVE_)
#undef CJ_NVRTC_RESOLVE_
#define CJ_NVRTC_OPTIONAL_(name) *(void **)&nv->name = dlsym(nv->handle, #name);
  CJ_NVRTC_OPTIONAL_FUNCTIONS(CJ_NVRTC_OPTIONAL_)
#undef CJ_NVRTC_OPTIONAL_
  return 1;
}

/* The archs it supports, into nv->archs (none when it cannot say). */
static void nvrtc_archs(cj_nvrtc *nv) {
  int n = 0;
  if (nv->nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 && n <= 256 &&
      nv->nvrtcGetSupportedArchs(nv->archs) == NVRTC_SUCCESS)
    nv->arch_count = n;
}

int cj_nvrtc_open(cj_nvrtc *nv, char *why, size_t why_len) {
  static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
  memset(nv, 0, sizeof *nv);
  const char *env = getenv("CUJIT_NVRTC");
  if (env && *env) {
    snprintf(nv->path, sizeof nv->path, "%s", env);
    nv->handle = dlopen(env, RTLD_NOW | RTLD_LOCAL);
  }
  for (size_t i = 0; !nv->handle && !(env && *env) && i < sizeof sonames / sizeof *sonames; i++) {
    snprintf(nv->path, sizeof nv->path, "%s", sonames[i]);
    nv->handle = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
  }
  if (!nv->handle) {
    snprintf(why, why_len,
             env && *env ? "no NVRTC: CUJIT_NVRTC=%s could not be opened; point it at a "
                           "libnvrtc.so, or unset it"
                         : "no NVRTC: neither libnvrtc.so.13 nor libnvrtc.so.12 could be opened%s; "
                           "install the CUDA toolkit's NVRTC, add its lib directory to "
                           "LD_LIBRARY_PATH, or set CUJIT_NVRTC to its path",
             env && *env ? env : "");
    memset(nv, 0, sizeof *nv);
    return 0;
  }
  if (!nvrtc_resolve(nv, why, why_len)) {
    cj_nvrtc_close(nv);
    return 0;
  }
  int major = 0, minor = 0;
  nv->nvrtcVersion(&major, &minor);
  nv->version = major * 1000 + minor * 10;
  nvrtc_archs(nv);
  return 1;
}

void cj_nvrtc_close(cj_nvrtc *nv) {
#ifndef CUJIT_SANITIZE_BUILD
  if (nv->handle) dlclose(nv->handle);
#else /* kept mapped, so that LeakSanitizer names NVRTC's lifetime pools (scripts/sanitize.supp)   \
       */
  (void)nv->handle;
#endif
  memset(nv, 0, sizeof *nv);
}

/* Tries one name; 1 when it opened and has every entry point (else `why` says what it lacks). */
static int nvjitlink_try(cj_nvjitlink *lk, const char *path, char *why, size_t why_len) {
  snprintf(lk->path, sizeof lk->path, "%s", path);
  if (!(lk->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return 0;
#define CJ_NVJITLINK_RESOLVE_(name)                                                                \
  if (!(*(void **)&lk->name = dlsym(lk->handle, #name))) {                                         \
    snprintf(why, why_len, "%s lacks %s; cujit needs nvJitLink 12.0 or newer", path, #name);       \
    dlclose(lk->handle);                                                                           \
    lk->handle = NULL;                                                                             \
    return -1;                                                                                     \
  }
  CJ_NVJITLINK_FUNCTIONS(CJ_NVJITLINK_RESOLVE_)
#undef CJ_NVJITLINK_RESOLVE_
  unsigned major = 0, minor = 0;
  lk->nvJitLinkVersion(&major, &minor);
  lk->version = (int)(major * 1000 + minor * 10);
  return 1;
}

int cj_nvjitlink_open(cj_nvjitlink *lk, char *why, size_t why_len) {
  static const char *const sonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};
  memset(lk, 0, sizeof *lk);
  why[0] = '\0';
  const char *env = getenv("CUJIT_NVJITLINK");
  if (env && *env) {
    int got = nvjitlink_try(lk, env, why, why_len);
    if (got > 0) return 1;
    if (got == 0)
      snprintf(why, why_len,
               "no nvJitLink: CUJIT_NVJITLINK=%s could not be opened; point it at a "
               "libnvJitLink.so, or unset it",
               env);
    return 0;
  }
  const char *dirs[] = {NULL, getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
    if (d && (!dirs[d] || !*dirs[d])) continue;
    for (size_t i = 0; i < sizeof sonames / sizeof *sonames; i++) {
      char path[512];
      if (d == 0)
        snprintf(path, sizeof path, "%s", sonames[i]);
      else if (snprintf(path, sizeof path, "%s/lib64/%s", dirs[d], sonames[i]) >= (int)sizeof path)
        continue;
      int got = nvjitlink_try(lk, path, why, why_len);
      if (got > 0) return 1;
      if (got < 0) return 0;
    }
  }
  snprintf(why, why_len,
           "no nvJitLink: neither libnvJitLink.so.13 nor libnvJitLink.so.12 could be opened (by "
           "the loader's path, $CUDA_HOME/lib64, $CUDA_PATH/lib64 or /usr/local/cuda/lib64); "
           "install the CUDA toolkit's nvJitLink, add its lib directory to LD_LIBRARY_PATH, or "
           "set CUJIT_NVJITLINK to its path");
  memset(lk->path, 0, sizeof lk->path);
  return 0;
}
