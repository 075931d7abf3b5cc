/*
** stub_devices.c -- the stand-in driver's devices: how many (CUJIT_STUB_DEVICES=N pretend sm_90
** devices, 1 unless set), what each is (its name, attributes and memory: CUJIT_STUB_CC,
** CUJIT_STUB_MANAGED, CUJIT_STUB_MEMORY), a primary context of its own for each, and what passes
** between them, as the real driver does it: cuDeviceCanAccessPeer (yes for two different devices
** unless CUJIT_STUB_PEER=0), cuCtxEnablePeerAccess from the current context to another device's
** (a second time answers "already enabled"; a reset of either device's primary context drops it),
** cuMemcpyPeer and cuMemcpyPeerAsync (a copy of host memory, as every pretend block is; contexts
** the stand-in never made refused) and cuMemPoolSetAccess (noted). cujit_stub_peer_seen tells tests
** what the calls were given, so that the CUDA backend's peer paths run without two GPUs.
*/
#include "stub_devices.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cj_stub_cost(void);                             /* stub_driver.c */
int cj_stub_env_int(const char *name, int fallback); /* stub_driver.c */

static char primaries[CJ_STUB_DEVICES_MAX]; /* devices 1 and on; device 0's is stub_driver.c's */
static unsigned char on[CJ_STUB_DEVICES_MAX][CJ_STUB_DEVICES_MAX]; /* [from][to] */

enum {
  SEEN_COPY,
  SEEN_COPY_BYTES,
  SEEN_COPY_SRC,
  SEEN_COPY_DST,
  SEEN_COPY_STREAM,
  SEEN_ENABLE,
  SEEN_POOL,
  SEEN_POOL_ID,
  SEEN_POOL_FLAGS,
  SEEN_COUNT
};
static const char *const seen_names[SEEN_COUNT] = {
    "peer_copy", "peer_copy.bytes", "peer_copy.src",  "peer_copy.dst",    "peer_copy.stream",
    "enable",    "pool_access",     "pool_access.id", "pool_access.flags"};
static long seen[SEEN_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int cj_stub_device_count(void) {
  int n = cj_stub_env_int("CUJIT_STUB_DEVICES", 1);
  return n < 1 ? 1 : n > CJ_STUB_DEVICES_MAX ? CJ_STUB_DEVICES_MAX : n;
}

CUresult cj_stub_get_count(int *n) {
  cj_stub_cost();
  *n = cj_stub_device_count();
  return CUDA_SUCCESS;
}

CUresult cj_stub_device_get(CUdevice *d, int ordinal) {
  cj_stub_cost();
  *d = ordinal;
  return ordinal >= 0 && ordinal < cj_stub_device_count() ? CUDA_SUCCESS
                                                          : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cj_stub_device_name(char *name, int len, CUdevice d) {
  cj_stub_cost();
  (void)d;
  strncpy(name, "stub sm_90 (no GPU)", (size_t)len - 1);
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult cj_stub_device_attribute(int *v, CUdevice_attribute a, CUdevice d) {
  cj_stub_cost();
  (void)d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = cj_stub_env_int("CUJIT_STUB_CC", 9);
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *v = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *v = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *v = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *v = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *v = 49152;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = 232448;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *v = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    *v = 1;
    break;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    *v = 1;
    break;
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    *v = cj_stub_env_int("CUJIT_STUB_MANAGED", 1);
    break;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    *v = cj_stub_env_int("CUJIT_STUB_CC", 9) >= 9;
    break;
  default:
    *v = 0;
  }
  return CUDA_SUCCESS;
}

/* CUJIT_STUB_MEMORY=BYTES: the device's memory (80 GiB unless set), which its device blocks fill.
 */
size_t cj_stub_device_memory(void) {
  const char *env = getenv("CUJIT_STUB_MEMORY");
  return env && *env ? (size_t)strtoull(env, NULL, 10) : (size_t)80 << 30;
}

CUresult cj_stub_total_mem(size_t *bytes, CUdevice d) {
  cj_stub_cost();
  (void)d;
  *bytes = cj_stub_device_memory();
  return CUDA_SUCCESS;
}

CUcontext cj_stub_primary(CUdevice d) {
  return d >= 1 && d < CJ_STUB_DEVICES_MAX ? (CUcontext)&primaries[d] : NULL;
}

int cj_stub_primary_device(CUcontext ctx) {
  const char *c = (const char *)ctx;
  return c > primaries && c < primaries + CJ_STUB_DEVICES_MAX ? (int)(c - primaries) : -1;
}

static int is_device(CUdevice d) {
  return d >= 0 && d < cj_stub_device_count();
}

CUresult cj_stub_can_access_peer(int *can, CUdevice dev, CUdevice peer) {
  cj_stub_cost();
  if (!is_device(dev) || !is_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
  *can = dev != peer && cj_stub_env_int("CUJIT_STUB_PEER", 1);
  return CUDA_SUCCESS;
}

CUresult cj_stub_enable_peer(CUcontext peer, unsigned flags) {
  cj_stub_cost();
  int from = cj_stub_current_device(), to = cj_stub_context_device(peer);
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  if (from < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (to < 0) return CUDA_ERROR_INVALID_HANDLE;
  if (from == to || !cj_stub_env_int("CUJIT_STUB_PEER", 1))
    return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
  pthread_mutex_lock(&lock);
  CUresult rc = on[from][to] ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS) on[from][to] = 1, seen[SEEN_ENABLE]++;
  pthread_mutex_unlock(&lock);
  return rc;
}

/* A primary context reset destroys the context: the access it had and the access given to it. */
CUresult cj_stub_primary_reset(CUdevice d) {
  cj_stub_cost();
  if (!is_device(d)) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < CJ_STUB_DEVICES_MAX; i++) on[d][i] = on[i][d] = 0;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                          size_t bytes, int on_stream) {
  cj_stub_cost();
  int to = cj_stub_context_device(dst_ctx), from = cj_stub_context_device(src_ctx);
  if (to < 0 || from < 0) return CUDA_ERROR_INVALID_CONTEXT;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  pthread_mutex_lock(&lock);
  seen[SEEN_COPY]++, seen[SEEN_COPY_BYTES] = (long)bytes;
  seen[SEEN_COPY_SRC] = from, seen[SEEN_COPY_DST] = to, seen[SEEN_COPY_STREAM] = on_stream;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

CUresult cj_stub_copy_peer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                           size_t bytes) {
  return copy_peer(dst, dst_ctx, src, src_ctx, bytes, 0);
}

CUresult cj_stub_copy_peer_async(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                 CUcontext src_ctx, size_t bytes, CUstream s) {
  (void)s;
  return copy_peer(dst, dst_ctx, src, src_ctx, bytes, 1);
}

CUresult cj_stub_pool_set_access(CUmemoryPool pool, const CUmemAccessDesc *desc, size_t count) {
  cj_stub_cost();
  if (!pool || !desc || count != 1) return CUDA_ERROR_INVALID_VALUE;
  if (desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !is_device(desc->location.id))
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  seen[SEEN_POOL]++, seen[SEEN_POOL_ID] = desc->location.id, seen[SEEN_POOL_FLAGS] = desc->flags;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

long cujit_stub_peer_seen(const char *name) {
  int from, to;
  char end;
  long v = -1;
  pthread_mutex_lock(&lock);
  if (sscanf(name, "on.%d.%d%c", &from, &to, &end) == 2 && from >= 0 &&
      from < CJ_STUB_DEVICES_MAX && to >= 0 && to < CJ_STUB_DEVICES_MAX)
    v = on[from][to];
  for (int i = 0; i < SEEN_COUNT; i++)
    if (strcmp(name, seen_names[i]) == 0) v = seen[i];
  pthread_mutex_unlock(&lock);
  return v;
}
