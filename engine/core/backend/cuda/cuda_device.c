/*
** cuda_device.c -- the CUDA backend's devices (backend.h): turning driver results into statuses
** and messages (sticky errors poison the device, naming the kernel launched last), the table of
** the driver's devices, their primary contexts (entered on first use), memory info, synchronize,
** reset and release; and the backend's table of operations, whose other entries are in this
** folder's files by role: cuda_memory.c, cuda_pool.c, cuda_stream.c, cuda_program.c,
** cuda_graph.c, cuda_peer.c, cuda_ipc.c.
*/
#include "cuda.h"
#include "base/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- driver results --------------------------------------------------------------------------- */

/* Errors after which the context is unusable: every later call in it fails the same way. */
static int is_sticky(CUresult rc) {
  switch (rc) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_CONTAINED:
  case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    return 1;
  default:
    return 0;
  }
}

/* Faults the driver says may outlive a context reset. */
static int may_need_restart(CUresult rc) {
  return rc == CUDA_ERROR_ECC_UNCORRECTABLE || rc == CUDA_ERROR_CONTAINED ||
         rc == CUDA_ERROR_TENSOR_MEMORY_LEAK;
}

static void error_text(const cj_driver *drv, CUresult rc, const char **name, const char **text) {
  *name = *text = NULL;
  if (drv && drv->cuGetErrorName) drv->cuGetErrorName(rc, name);
  if (drv && drv->cuGetErrorString) drv->cuGetErrorString(rc, text);
  if (!*name) *name = "unknown CUDA error";
  if (!*text) *text = "no description";
}

static cujit_status driver_error(cujit_engine *engine, CUresult rc, const char *what) {
  const char *name, *text;
  error_text(__atomic_load_n(&engine->drv_state, __ATOMIC_ACQUIRE) == 1 ? &engine->drv : NULL, rc,
             &name, &text);
  return cj_fail(engine, CUJIT_ERROR_DRIVER, "%s failed: %s (%s, code %d)", what, text, name,
                 (int)rc);
}

static cujit_status poison(cujit_device *dev, CUresult rc, const char *what) {
  const char *name, *text;
  error_text(DRV(dev), rc, &name, &text);
  char blame[192] = "";
  const char *kernel = __atomic_load_n(&dev->last_kernel, __ATOMIC_RELAXED);
  if (kernel) snprintf(blame, sizeof blame, " in or before kernel '%.128s'", kernel);
  return cj_device_fault(
      dev,
      "device %d faulted: %s (%s)%s, seen by %s; the device refuses further work until reset: "
      "call cujit_device_reset (Lua: cuda.reset()), which loses the device's buffers, streams "
      "and events (host data is untouched)%s",
      dev->ordinal, text, name, blame, what,
      may_need_restart(rc) ? "; if the reset fails too, restart the program" : "");
}

/* The one out-of-memory message: for an allocation of `bytes` (> 0), or for the call `what`. */
static cujit_status out_of_memory(cujit_device *dev, const char *what, size_t bytes) {
  size_t free_bytes = 0, total = 0;
  char asked[32], f[32], t[32];
  /* Without a context (its retain is what failed) the driver cannot say: not asked. */
  int known = __atomic_load_n(&CU(dev)->ctx, __ATOMIC_ACQUIRE) &&
              DRV(dev)->cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS;
  cj_bytes_text(free_bytes, f, sizeof f);
  cj_bytes_text(total, t, sizeof t);
  if (bytes)
    return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_MEMORY,
                   "out of device memory: asked for %s (%zu bytes), device %d has %s free of %s; "
                   "free buffers you no longer need or allocate less",
                   cj_bytes_text(bytes, asked, sizeof asked), bytes, dev->ordinal, f, t);
  if (!known)
    return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_MEMORY,
                   "%s failed: device %d is out of memory; free buffers you no longer need", what,
                   dev->ordinal);
  return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_MEMORY,
                 "%s failed: device %d is out of memory (free memory is %s of %s); free buffers "
                 "you no longer need",
                 what, dev->ordinal, f, t);
}

/* A driver result as a status, recorded with a message naming `what`. */
static cujit_status check(cujit_device *dev, CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  cujit_engine *engine = dev->engine;
  if (is_sticky(rc)) return poison(dev, rc, what);
  if (cj_cuda_is_capture_error(rc)) return cj_cuda_capture_error(dev, rc, what);
  switch (rc) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return out_of_memory(dev, what, 0);
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE, "%s failed: device %d is not usable (%s)", what,
                   dev->ordinal, rc == CUDA_ERROR_NO_DEVICE ? "no device" : "invalid");
  case CUDA_ERROR_NOT_SUPPORTED: {
    const char *name, *text;
    error_text(DRV(dev), rc, &name, &text);
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED, "%s failed on device %d: %s (%s)", what,
                   dev->ordinal, text, name);
  }
  default:
    return driver_error(engine, rc, what);
  }
}

cujit_status cj_cuda_check(cujit_device *dev, CUresult rc, const char *what) {
  return check(dev, rc, what);
}

cj_driver *cj_cuda_driver(cujit_device *dev) {
  return DRV(dev);
}

cujit_status cj_cuda_out_of_memory(cujit_device *dev, const char *what, size_t bytes) {
  return out_of_memory(dev, what, bytes);
}

cujit_status cj_cuda_answer(cujit_device *dev, CUresult rc, const char *what) {
  return rc == CUDA_ERROR_NOT_READY ? CUJIT_ERROR_NOT_READY : check(dev, rc, what);
}

cujit_status cj_cuda_missing(cujit_device *dev, const char *entry, const char *feature) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s needs the driver's %s, which this driver (version %d) does not have; update "
                 "the NVIDIA driver",
                 feature, entry, DRV(dev)->version);
}

cujit_status cj_cuda_attribute(cujit_device *dev, CUdevice_attribute which, int *value) {
  return check(dev, DRV(dev)->cuDeviceGetAttribute(value, which, CU(dev)->handle),
               "reading a device attribute");
}

/* --- the device table ------------------------------------------------------------------------- */

static int attribute(cj_driver *drv, CUdevice dev, CUdevice_attribute which) {
  int value = 0;
  if (drv->cuDeviceGetAttribute(&value, which, dev) != CUDA_SUCCESS) value = 0;
  return value;
}

static void read_info(cj_driver *drv, CUdevice h, int ordinal, cujit_device_info *info) {
  info->size = sizeof *info;
  info->ordinal = ordinal;
  if (drv->cuDeviceGetName(info->name, (int)sizeof info->name, h) != CUDA_SUCCESS)
    snprintf(info->name, sizeof info->name, "CUDA device %d", ordinal);
  info->name[sizeof info->name - 1] = '\0';
  info->cc_major = attribute(drv, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info->cc_minor = attribute(drv, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info->multiprocessors = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  size_t total = 0;
  if (drv->cuDeviceTotalMem(&total, h) == CUDA_SUCCESS) info->total_memory = total;
  info->max_threads_per_block = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info->max_block_dim[0] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  info->max_block_dim[1] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  info->max_block_dim[2] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  info->max_grid_dim[0] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  info->max_grid_dim[1] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  info->max_grid_dim[2] = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  info->max_shared_per_block = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info->max_shared_per_block_optin =
      attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (info->max_shared_per_block_optin < info->max_shared_per_block)
    info->max_shared_per_block_optin = info->max_shared_per_block;
  info->warp_size = attribute(drv, h, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info->clock_khz = attribute(drv, h, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info->memory_clock_khz = attribute(drv, h, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info->memory_bus_width = attribute(drv, h, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info->pci_bus_id = attribute(drv, h, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
}

static void free_table(cujit_device *devs, int n) {
  for (int i = 0; i < n; i++)
    if (devs[i].impl) {
      pthread_mutex_destroy(&CU(&devs[i])->lock);
      pthread_mutex_destroy(&CU(&devs[i])->streams_lock);
      cj_cuda_pool_close(CU(&devs[i])); /* holds nothing yet: only its locks go */
      free(devs[i].impl);
    }
  free(devs);
}

/* CUJIT_POOL=off (or 0, no, false) allocates every buffer with cuMemAlloc and frees it with
** cuMemFree, which waits for the whole device. A value not understood warns and keeps the pool. */
static int pool_wanted(cujit_engine *engine) {
  int on = 1;
  char why[256];
  if (cj_env_bool("CUJIT_POOL", &on, why, sizeof why) == CJ_ENV_BAD) {
    cj_warn(engine, "%s; the memory pool stays on", why);
    on = 1;
  }
  return on;
}

cujit_status cj_cuda_devices(cujit_engine *engine, cujit_device **devices, int *count) {
  *devices = NULL;
  *count = 0;
  cj_driver *drv;
  cujit_status st = cj_need_driver(engine, &drv);
  if (st != CUJIT_OK) return st;
  int n = 0;
  CUresult rc = drv->cuDeviceGetCount(&n);
  if (rc != CUDA_SUCCESS) return driver_error(engine, rc, "reading the CUDA devices");
  cujit_device *devs = n > 0 ? calloc((size_t)n, sizeof *devs) : NULL;
  if (n > 0 && !devs)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "out of host memory while reading the device table");
  int pool = n > 0 && pool_wanted(engine); /* read (and warned about) once for all GPUs */
  for (int i = 0; i < n; i++) {
    cujit_device *d = &devs[i];
    cuda_device *c = calloc(1, sizeof *c);
    if (!c) {
      free_table(devs, i);
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "out of host memory while reading the device table");
    }
    c->drv = drv;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->streams_lock, NULL);
    cj_cuda_pool_init(c);
    d->engine = engine, d->ordinal = i, d->ops = &cj_backend_cuda, d->impl = c;
    atomic_init(&d->allocated, 0);
    if ((rc = drv->cuDeviceGet(&c->handle, i)) != CUDA_SUCCESS) {
      free_table(devs, i + 1);
      return driver_error(engine, rc, "reading the CUDA devices");
    }
    read_info(drv, c->handle, i, &d->info);
    if (pool && attribute(drv, c->handle, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) &&
        drv->cuDeviceGetDefaultMemPool(&c->pool, c->handle) != CUDA_SUCCESS)
      c->pool = NULL;
    snprintf(d->arch, sizeof d->arch, "sm_%d%d", d->info.cc_major, d->info.cc_minor);
  }
  *devices = devs;
  *count = n;
  return CUJIT_OK;
}

/* --- devices and contexts --------------------------------------------------------------------- */

/* The pool keeps what is freed to it (the release threshold is "everything"), as CuPy's pool
** does: memory goes back to the device only through pool_trim, which an allocation that finds the
** device full calls itself. Without it the driver would release unused memory at every
** synchronize and the next allocation would map it again. */
static void keep_pool(cuda_device *c) {
  cuuint64_t keep = UINT64_MAX;
  if (c->pool) c->drv->cuMemPoolSetAttribute(c->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
}

/* The first entry: retain the primary context, once. */
static cujit_status retain(cujit_device *dev) {
  cuda_device *c = CU(dev);
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&c->lock);
  if (!c->ctx) {
    CUcontext ctx = NULL;
    rc = c->drv->cuDevicePrimaryCtxRetain(&ctx, c->handle);
    if (rc == CUDA_SUCCESS) keep_pool(c);
    if (rc == CUDA_SUCCESS) __atomic_store_n(&c->ctx, ctx, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&c->lock);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[64];
  snprintf(what, sizeof what, "retaining the primary context of device %d", dev->ordinal);
  return check(dev, rc, what);
}

/* The caller's context back, at the close of the public call that replaced it (backend.h). */
static void restore_caller(void *drv, void *prior) {
  ((cj_driver *)drv)->cuCtxSetCurrent((CUcontext)prior);
}

/* Makes ctx current in place of what is, which the public call's close puts back. */
static CUresult make_current(cuda_device *c, CUcontext ctx) {
  CUcontext current = NULL;
  if (c->drv->cuCtxGetCurrent(&current) != CUDA_SUCCESS) current = NULL;
  if (current == ctx) return CUDA_SUCCESS;
  CUresult rc = c->drv->cuCtxSetCurrent(ctx);
  if (rc == CUDA_SUCCESS) cj_backend_switched(restore_caller, c->drv, current);
  return rc;
}

/* On the launch path: one cuCtxGetCurrent when the context is already current. */
static cujit_status cuda_enter(cujit_device *dev) {
  cuda_device *c = CU(dev);
  CUcontext ctx = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  if (!ctx) {
    cujit_status st = retain(dev);
    if (st != CUJIT_OK) return st;
    ctx = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  }
  CUcontext current = NULL;
  if (c->drv->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return CUJIT_OK;
  return check(dev, make_current(c, ctx), "cuCtxSetCurrent");
}

static int cuda_enter_quiet(cujit_device *dev) {
  cuda_device *c = CU(dev);
  CUcontext ctx = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  if (!ctx) return 0; /* nothing was ever made on it */
  return make_current(c, ctx) == CUDA_SUCCESS;
}

static cujit_status already_used(cujit_device *dev) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "cujit_device_use_context: device %d already runs on %s; call "
                 "cujit_device_use_context right after cujit_open, before anything is made on the "
                 "device",
                 dev->ordinal,
                 CU(dev)->adopted ? "another context given by the application"
                                  : "its primary context, where cujit has made objects");
}

/* cujit_device_use_context: the caller's context in place of the primary one, before cujit made
** anything on the device. The context must be of this device: asked with it current, the caller's
** current context put back after (the scope of the public call does). */
static cujit_status cuda_use_context(cujit_device *dev, void *context) {
  cuda_device *c = CU(dev);
  cj_driver *drv = c->drv;
  CUcontext used = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  if (used && used != (CUcontext)context) return already_used(dev);
  if (!drv->cuCtxGetDevice)
    return cj_cuda_missing(dev, "cuCtxGetDevice", "cujit_device_use_context");
  CUresult rc = make_current(c, (CUcontext)context);
  CUdevice owner = -1;
  if (rc == CUDA_SUCCESS) rc = drv->cuCtxGetDevice(&owner);
  if (rc != CUDA_SUCCESS)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_use_context: the context is not one the driver knows (CUDA "
                   "error %d); pass a CUcontext made by cuCtxCreate or a device's primary context, "
                   "still alive",
                   (int)rc);
  if (owner != c->handle)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_use_context: the context belongs to another GPU (CUdevice %d), "
                   "not to device %d; pass it to that device's cujit_device_use_context",
                   (int)owner, dev->ordinal);
  int taken = 0;
  pthread_mutex_lock(&c->lock); /* against a retain on another thread meanwhile */
  if (c->ctx && c->ctx != (CUcontext)context)
    taken = 1;
  else if (!c->ctx) {
    c->adopted = 1;
    keep_pool(c);
    __atomic_store_n(&c->ctx, (CUcontext)context, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&c->lock);
  return taken ? already_used(dev) : CUJIT_OK;
}

/* The context cujit uses on the device, retained (the primary) when nothing was made yet. */
static cujit_status cuda_context(cujit_device *dev, void **context) {
  cuda_device *c = CU(dev);
  *context = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  if (*context) return CUJIT_OK;
  cujit_status st = retain(dev);
  *context = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
  return st;
}

static cujit_status cuda_mem_info(cujit_device *dev, size_t *free_bytes, size_t *total_bytes) {
  return check(dev, DRV(dev)->cuMemGetInfo(free_bytes, total_bytes), "cuMemGetInfo");
}

/* The streams made here, then the default (legacy) stream: the device is done when all are.
** Polled by cj_backend_wait, so that an interrupt can cut the wait short; no cuCtxSynchronize
** after it (it cannot be interrupted and would cost a second round trip). Once every stream was
** seen done in one pass, only the default stream is asked again: a device wait usually waits for
** one busy stream, and each poll then costs what a stream wait's does. The streams are not asked
** at all when no work was queued on them since a device wait last saw them done (streams_busy,
** cleared when this wait starts and set again should it end before seeing them done). Work other
** libraries queue on their own streams of the shared context is theirs to wait for. */
typedef struct device_wait {
  const char *what;
  int streams_done;
} device_wait;

static cujit_status device_done(cujit_device *dev, void *handle) {
  cuda_device *c = CU(dev);
  device_wait *w = handle;
  CUresult rc = CUDA_SUCCESS;
  if (!w->streams_done) {
    pthread_mutex_lock(&c->streams_lock);
    for (int i = 0; i < c->nstreams && rc == CUDA_SUCCESS; i++)
      if (!c->streams[i].capturing) rc = c->drv->cuStreamQuery(c->streams[i].stream);
    pthread_mutex_unlock(&c->streams_lock);
    w->streams_done = rc == CUDA_SUCCESS;
  }
  if (rc == CUDA_SUCCESS) rc = c->drv->cuStreamQuery((CUstream)0);
  return cj_cuda_answer(dev, rc, w->what);
}

cujit_status cj_cuda_synchronize(cujit_device *dev) {
  device_wait w = {"cujit_device_synchronize", 0};
  if (!atomic_exchange_explicit(&dev->streams_busy, 0, memory_order_acq_rel))
    w.streams_done = 1; /* nothing queued on a stream since they were last seen done */
  cujit_status st = cj_backend_wait(dev, device_done, &w, w.what);
  if (!w.streams_done) atomic_store(&dev->streams_busy, 1);
  return st;
}

/* After a reset, the first retain tells whether the driver let the fault go: on recent drivers an
** illegal address or a launch failure stays with the process for good (CUDA documents that the
** process must be restarted), and the new context is unusable. */
static cujit_status unrecoverable(cujit_device *dev, CUresult rc) {
  const char *name, *text;
  error_text(DRV(dev), rc, &name, &text);
  cujit_engine *engine = dev->engine;
  pthread_mutex_lock(&engine->lock);
  char cause[sizeof dev->fault_msg];
  snprintf(cause, sizeof cause, "%s", dev->fault_msg);
  snprintf(dev->fault_msg, sizeof dev->fault_msg,
           "%.1200s\ncujit reset device %d, but the CUDA driver keeps this fault for the rest of "
           "the process (%s: %s); no reset can bring the GPU back here: save what you need from "
           "host memory and restart the program (compiled kernels stay in the disk cache)",
           cause, dev->ordinal, name, text);
  dev->unrecoverable = 1;
  pthread_mutex_unlock(&engine->lock);
  return cj_device_refuse(dev);
}

/* Reset while still retained (the driver documents releasing after a reset as safe), then drop
** our retain, so the next entry retains a freshly initialised context. Without a retain nothing
** of ours lives there (objects need one, and a fault needs objects): no driver call. What the
** pool holds goes back first, even from a faulted context (cj_cuda_pool_give_back). */
static cujit_status cuda_reset(cujit_device *dev) {
  cuda_device *c = CU(dev);
  if (c->adopted)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "resetting device %d: cujit runs there on a context the application gave "
                   "(cujit_device_use_context), and never destroys what it did not create; "
                   "recover in the application (destroy that context and make a new one), then "
                   "open a new engine on it",
                   dev->ordinal);
  int faulted = cj_device_faulted(dev);
  if (cuda_enter_quiet(dev)) cj_cuda_pool_give_back(dev, 1);
  pthread_mutex_lock(&c->lock);
  CUresult rc = c->ctx ? c->drv->cuDevicePrimaryCtxReset(c->handle) : CUDA_SUCCESS, again = rc;
  if (rc == CUDA_SUCCESS) {
    if (c->ctx) c->drv->cuDevicePrimaryCtxRelease(c->handle);
    __atomic_store_n(&c->ctx, NULL, __ATOMIC_RELEASE);
    pthread_mutex_lock(&c->streams_lock); /* the reset destroyed them, and their events */
    c->nstreams = 0;
    pthread_mutex_unlock(&c->streams_lock);
    cj_cuda_pool_forget(c); /* what give_back could not free went with the context */
    if (faulted) {
      CUcontext ctx = NULL;
      if ((again = c->drv->cuDevicePrimaryCtxRetain(&ctx, c->handle)) == CUDA_SUCCESS) {
        keep_pool(c);
        __atomic_store_n(&c->ctx, ctx, __ATOMIC_RELEASE);
      }
    }
  }
  pthread_mutex_unlock(&c->lock);
  if (rc == CUDA_SUCCESS) return again == CUDA_SUCCESS ? CUJIT_OK : unrecoverable(dev, again);
  const char *name, *text;
  error_text(c->drv, rc, &name, &text);
  return cj_fail(dev->engine, faulted ? CUJIT_ERROR_DEVICE_FAULT : CUJIT_ERROR_DRIVER,
                 "resetting device %d failed: %s (%s); restart the program to use this GPU again",
                 dev->ordinal, text, name);
}

/* Never retained (or the retain failed): no driver call at all, nothing of ours is there. */
static void cuda_release(cujit_device *dev) {
  cuda_device *c = CU(dev);
  if (cuda_enter_quiet(dev)) cj_cuda_pool_give_back(dev, 0);
  cj_cuda_pool_close(c);
  if (c->ctx && !c->adopted) c->drv->cuDevicePrimaryCtxRelease(c->handle);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->streams_lock);
  free(c->streams);
  free(c);
  dev->impl = NULL;
}

const cj_backend cj_backend_cuda = {
    .name = "cuda",
    .native = 1,
    .enter = cuda_enter,
    .enter_quiet = cuda_enter_quiet,
    .use_context = cuda_use_context,
    .context = cuda_context,
    .mem_info = cuda_mem_info,
    .synchronize = cj_cuda_synchronize,
    .reset = cuda_reset,
    .release = cuda_release,
    .alloc = cj_cuda_alloc,
    .free = cj_cuda_free,
    .host_alloc = cj_cuda_host_alloc,
    .host_free = cj_cuda_host_free,
    .copy = cj_cuda_copy,
    .memset8 = cj_cuda_memset8,
    .managed_alloc = cj_cuda_managed_alloc,
    .managed_free = cj_cuda_managed_free,
    .prefetch = cj_cuda_prefetch,
    .advise = cj_cuda_advise,
    .host_map = cj_cuda_host_map,
    .host_register = cj_cuda_host_register,
    .host_unregister = cj_cuda_host_unregister,
    .pool_trim = cj_cuda_pool_trim,
    .pool_reserved = cj_cuda_pool_reserved,
    .stream_create = cj_cuda_stream_create,
    .stream_destroy = cj_cuda_stream_destroy,
    .stream_adopt = cj_cuda_stream_adopt,
    .stream_query = cj_cuda_stream_query,
    .stream_synchronize = cj_cuda_stream_synchronize,
    .stream_wait_event = cj_cuda_stream_wait_event,
    .event_create = cj_cuda_event_create,
    .event_destroy = cj_cuda_event_destroy,
    .event_record = cj_cuda_event_record,
    .event_query = cj_cuda_event_query,
    .event_synchronize = cj_cuda_event_synchronize,
    .event_elapsed = cj_cuda_event_elapsed,
    .load = cj_cuda_load,
    .unload = cj_cuda_unload,
    .get_function = cj_cuda_get_function,
    .module_native = cj_cuda_module_native,
    .launch = cj_cuda_launch,
    .suggest_block = cj_cuda_suggest_block,
    .allow_shared = cj_cuda_allow_shared,
    .attributes = cj_cuda_attributes,
    .param_info = cj_cuda_param_info,
    .get_global = cj_cuda_get_global,
    .coresident_blocks = cj_cuda_coresident_blocks,
    .launch_cooperative = cj_cuda_launch_cooperative,
    .check_attrs = cj_cuda_check_attrs,
    .launch_ex = cj_cuda_launch_ex,
    .capture_begin = cj_cuda_capture_begin,
    .capture_last_node = cj_cuda_capture_last_node,
    .capture_end = cj_cuda_capture_end,
    .graph_destroy = cj_cuda_graph_destroy,
    .graph_nodes = cj_cuda_graph_nodes,
    .graph_instantiate = cj_cuda_graph_instantiate,
    .exec_destroy = cj_cuda_exec_destroy,
    .graph_launch = cj_cuda_graph_launch,
    .graph_set_kernel = cj_cuda_graph_set_kernel,
    .graph_update = cj_cuda_graph_update,
    .graph_dot = cj_cuda_graph_dot,
    .copy_peer = cj_cuda_copy_peer,
    .peer_enable = cj_cuda_peer_enable,
    .shareable_alloc = cj_cuda_shareable_alloc,
    .shareable_free = cj_cuda_shareable_free,
    .ipc_export = cj_cuda_ipc_export,
    .ipc_open = cj_cuda_ipc_open,
    .ipc_close = cj_cuda_ipc_close,
    .ipc_event_create = cj_cuda_ipc_event_create,
    .ipc_event_export = cj_cuda_ipc_event_export,
    .ipc_event_open = cj_cuda_ipc_event_open,
    .pointer_check = cj_cuda_pointer_check,
    .tensor_map_encode = cj_cuda_tensor_map_encode,
};
