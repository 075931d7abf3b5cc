/*
** device.c -- devices and their primary contexts: the device table read on first use, the
** current device, entering a device's context, turning driver results into statuses and
** messages, sticky faults that poison a device, and the reset that recovers from them.
*/
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the device table ------------------------------------------------------------------------- */

static int device_attribute(cj_driver *drv, CUdevice dev, CUdevice_attribute which) {
  int value = 0;
  if (drv->cuDeviceGetAttribute(&value, which, dev) != CUDA_SUCCESS) value = 0;
  return value;
}

static void read_device_info(cj_driver *drv, struct cujit_device *d) {
  cujit_device_info *info = &d->info;
  CUdevice h = d->handle;
  info->ordinal = d->ordinal;
  if (drv->cuDeviceGetName(info->name, (int)sizeof info->name, h) != CUDA_SUCCESS)
    snprintf(info->name, sizeof info->name, "CUDA device %d", d->ordinal);
  info->name[sizeof info->name - 1] = '\0';
  info->cc_major = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info->cc_minor = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info->multiprocessors = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  size_t total = 0;
  if (drv->cuDeviceTotalMem(&total, h) == CUDA_SUCCESS) info->total_memory = total;
  info->max_threads_per_block = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info->max_block_dim[0] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  info->max_block_dim[1] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  info->max_block_dim[2] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  info->max_grid_dim[0] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  info->max_grid_dim[1] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  info->max_grid_dim[2] = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  info->max_shared_per_block =
      device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info->max_shared_per_block_optin =
      device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (info->max_shared_per_block_optin < info->max_shared_per_block)
    info->max_shared_per_block_optin = info->max_shared_per_block;
  info->warp_size = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info->clock_khz = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info->memory_clock_khz = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info->memory_bus_width = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info->pci_bus_id = device_attribute(drv, h, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
}

/* Fills the table; called with engine->lock held, so it only reports, never calls cj_fail. */
static cujit_status load_devices(cujit_engine *engine, cj_driver *drv, CUresult *rc) {
  int n = 0;
  if ((*rc = drv->cuDeviceGetCount(&n)) != CUDA_SUCCESS) return CUJIT_ERROR_DRIVER;
  struct cujit_device *devs = NULL;
  if (n > 0 && (devs = calloc((size_t)n, sizeof *devs)) == NULL)
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  for (int i = 0; i < n; i++) {
    struct cujit_device *d = &devs[i];
    d->engine = engine;
    d->ordinal = i;
    atomic_init(&d->allocated, 0);
    if ((*rc = drv->cuDeviceGet(&d->handle, i)) != CUDA_SUCCESS) {
      free(devs);
      return CUJIT_ERROR_DRIVER;
    }
    read_device_info(drv, d);
  }
  engine->devices = devs;
  /* Published last: readers that see the count see the filled table. */
  __atomic_store_n(&engine->device_count, n, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

static cujit_status driver_error(cujit_engine *engine, CUresult rc, const char *what);

/* The device table, read on first use. Lock-free once read. */
static cujit_status need_devices(cujit_engine *engine) {
  if (__atomic_load_n(&engine->device_count, __ATOMIC_ACQUIRE) >= 0) return CUJIT_OK;
  cj_driver *drv;
  cujit_status st = cj_need_driver(engine, &drv);
  if (st != CUJIT_OK) return st;
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&engine->lock);
  if (engine->device_count < 0) st = load_devices(engine, drv, &rc);
  pthread_mutex_unlock(&engine->lock);
  if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY)
    return cj_fail(engine, st, "out of host memory while reading the device table");
  if (st != CUJIT_OK) return driver_error(engine, rc, "reading the CUDA devices");
  return CUJIT_OK;
}

static void gpu_range(int count, char *buf, size_t len) {
  if (count == 0)
    snprintf(buf, len, "no GPU");
  else
    snprintf(buf, len, "%d GPU%s (0..%d)", count, count == 1 ? "" : "s", count - 1);
}

static cujit_status no_such_device(cujit_engine *engine, int ordinal) {
  char range[64];
  gpu_range(engine->device_count, range, sizeof range);
  return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                 "device %d does not exist: this machine has %s; set CUJIT_DEVICE or call "
                 "cujit_set_device with one of those",
                 ordinal, range);
}

cujit_status cujit_device_count(cujit_engine *engine, int *count) {
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_device_count: engine is NULL");
  if (!count)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_count: count is NULL; pass the address of an int");
  *count = 0;
  cujit_status st = need_devices(engine);
  if (st == CUJIT_OK) *count = engine->device_count;
  return st;
}

cujit_status cujit_device_get(cujit_engine *engine, int ordinal, cujit_device **out) {
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_device_get: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_get: out is NULL; pass the address of a cujit_device *");
  *out = NULL;
  cujit_status st = need_devices(engine);
  if (st != CUJIT_OK) return st;
  if (ordinal < 0 || ordinal >= engine->device_count) return no_such_device(engine, ordinal);
  *out = &engine->devices[ordinal];
  return CUJIT_OK;
}

/* Why the current device is unusable: a malformed CUJIT_DEVICE, or one naming a missing GPU. */
static cujit_status bad_current_device(cujit_engine *engine, int current) {
  char range[64];
  gpu_range(engine->device_count, range, sizeof range);
  const char *env = getenv("CUJIT_DEVICE");
  if (current < 0)
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                   "CUJIT_DEVICE='%s' is not a device number: set it to an ordinal (this machine "
                   "has %s), unset it to use device 0, or call cujit_set_device",
                   env ? env : "", range);
  if (env && *env)
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                   "CUJIT_DEVICE=%s names device %d, which does not exist: this machine has %s",
                   env, current, range);
  return no_such_device(engine, current);
}

cujit_status cj_current_device(cujit_engine *engine, cujit_device **out) {
  cujit_status st = need_devices(engine);
  if (st != CUJIT_OK) return st;
  int current = __atomic_load_n(&engine->current_device, __ATOMIC_RELAXED);
  if (current < 0 || current >= engine->device_count) return bad_current_device(engine, current);
  *out = &engine->devices[current];
  return CUJIT_OK;
}

cujit_status cujit_current_device(cujit_engine *engine, cujit_device **out) {
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_current_device: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_current_device: out is NULL; pass the address of a cujit_device *");
  *out = NULL;
  return cj_current_device(engine, out);
}

cujit_status cujit_set_device(cujit_engine *engine, int ordinal) {
  cujit_device *device;
  cujit_status st = cujit_device_get(engine, ordinal, &device);
  if (st == CUJIT_OK) __atomic_store_n(&engine->current_device, ordinal, __ATOMIC_RELAXED);
  return st;
}

/* --- small queries ---------------------------------------------------------------------------- */

#define NEED_DEVICE(device, fn)                                                                    \
  if (!(device)) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, fn ": device is NULL")

cujit_status cujit_device_info_get(cujit_device *device, cujit_device_info *info) {
  NEED_DEVICE(device, "cujit_device_info_get");
  if (!info)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_info_get: info is NULL; pass a cujit_device_info to fill");
  *info = device->info;
  return CUJIT_OK;
}

int cujit_device_ordinal(const cujit_device *device) {
  return device ? device->ordinal : -1;
}

cujit_status cujit_device_arch(cujit_device *device, char *buf, size_t len) {
  NEED_DEVICE(device, "cujit_device_arch");
  if (!buf || len == 0)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_arch: no buffer to write the arch into (buf NULL or len 0)");
  int n = snprintf(buf, len, "sm_%d%d", device->info.cc_major, device->info.cc_minor);
  if (n < 0 || (size_t)n >= len) {
    buf[0] = '\0';
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_arch: a buffer of %zu bytes is too small for \"sm_%d%d\" (needs "
                   "%d); pass 16 bytes",
                   len, device->info.cc_major, device->info.cc_minor, n + 1);
  }
  return CUJIT_OK;
}

cujit_status cujit_device_memory(cujit_device *device, size_t *free_bytes, size_t *total_bytes) {
  NEED_DEVICE(device, "cujit_device_memory");
  if (!free_bytes && !total_bytes)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_memory: both free_bytes and total_bytes are NULL");
  size_t f = 0, t = 0;
  cujit_status st = cj_device_enter(device);
  if (st == CUJIT_OK)
    st = cj_check(device, device->engine->drv.cuMemGetInfo(&f, &t), "cuMemGetInfo");
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return st;
}

size_t cujit_device_allocated(const cujit_device *device) {
  return device ? atomic_load(&device->allocated) : 0;
}

cujit_status cujit_device_status(cujit_device *device) {
  NEED_DEVICE(device, "cujit_device_status");
  if (__atomic_load_n(&device->fault, __ATOMIC_ACQUIRE) != CUJIT_OK)
    return cj_fail(device->engine, CUJIT_ERROR_DEVICE_FAULT, "%s", device->fault_msg);
  return CUJIT_OK;
}

/* --- contexts --------------------------------------------------------------------------------- */

static cujit_status refuse_faulted(cujit_device *device) {
  return cj_fail(device->engine, CUJIT_ERROR_DEVICE_FAULT, "%s", device->fault_msg);
}

/* The first entry: retain the primary context, once, under the lock. */
static cujit_status retain_context(cujit_device *device) {
  cujit_engine *engine = device->engine;
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&engine->lock);
  if (!device->ctx) {
    CUcontext ctx = NULL;
    rc = engine->drv.cuDevicePrimaryCtxRetain(&ctx, device->handle);
    if (rc == CUDA_SUCCESS) __atomic_store_n(&device->ctx, ctx, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&engine->lock);
  if (rc != CUDA_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "retaining the primary context of device %d", device->ordinal);
    return cj_check(device, rc, what);
  }
  return CUJIT_OK;
}

cujit_status cj_device_enter(cujit_device *device) {
  if (__atomic_load_n(&device->fault, __ATOMIC_ACQUIRE) != CUJIT_OK) return refuse_faulted(device);
  CUcontext ctx = __atomic_load_n(&device->ctx, __ATOMIC_ACQUIRE);
  if (!ctx) {
    cujit_status st = retain_context(device);
    if (st != CUJIT_OK) return st;
    ctx = __atomic_load_n(&device->ctx, __ATOMIC_ACQUIRE);
  }
  cj_driver *drv = &device->engine->drv;
  CUcontext current = NULL;
  if (drv->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return CUJIT_OK;
  return cj_check(device, drv->cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

int cj_device_enter_quiet(cujit_device *device) {
  if (!device || __atomic_load_n(&device->fault, __ATOMIC_ACQUIRE) != CUJIT_OK) return 0;
  CUcontext ctx = __atomic_load_n(&device->ctx, __ATOMIC_ACQUIRE);
  if (!ctx) return 0; /* nothing was ever made on it */
  cj_driver *drv = &device->engine->drv;
  CUcontext current = NULL;
  if (drv->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return 1;
  return drv->cuCtxSetCurrent(ctx) == CUDA_SUCCESS;
}

/* --- driver results --------------------------------------------------------------------------- */

const char *cj_bytes_text(size_t bytes, char *buf, size_t len) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, len, "%zu byte%s", bytes, bytes == 1 ? "" : "s");
    return buf;
  }
  double v = (double)bytes / 1024.0;
  size_t u = 0;
  /* 1023.97 MiB would print as "1024.0 MiB": move up a unit first. */
  while (v >= 1023.95 && u + 1 < sizeof units / sizeof *units) v /= 1024.0, u++;
  snprintf(buf, len, "%.1f %s", v, units[u]);
  return buf;
}

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

static void error_text(cj_driver *drv, CUresult rc, const char **name, const char **text) {
  *name = *text = NULL;
  if (drv && drv->cuGetErrorName) drv->cuGetErrorName(rc, name);
  if (drv && drv->cuGetErrorString) drv->cuGetErrorString(rc, text);
  if (!*name) *name = "unknown CUDA error";
  if (!*text) *text = "no description";
}

static cujit_status driver_error(cujit_engine *engine, CUresult rc, const char *what) {
  const char *name, *text;
  error_text(engine->drv_state == 1 ? &engine->drv : NULL, rc, &name, &text);
  return cj_fail(engine, CUJIT_ERROR_DRIVER, "%s failed: %s (%s, code %d)", what, text, name,
                 (int)rc);
}

static cujit_status poison(cujit_device *device, CUresult rc, const char *what) {
  cujit_engine *engine = device->engine;
  const char *name, *text;
  error_text(&engine->drv, rc, &name, &text);
  char blame[192] = "";
  const char *kernel = device->last_kernel;
  if (kernel) snprintf(blame, sizeof blame, " in or before kernel '%.128s'", kernel);
  pthread_mutex_lock(&engine->lock);
  if (device->fault == CUJIT_OK) { /* the first report names the cause; later ones repeat it */
    snprintf(device->fault_msg, sizeof device->fault_msg,
             "device %d faulted: %s (%s)%s, seen by %s; the device refuses further work until "
             "reset: call cujit_device_reset (Lua: cuda.reset()), which loses the device's "
             "buffers, streams and events (host data is untouched)%s",
             device->ordinal, text, name, blame, what,
             may_need_restart(rc) ? "; if the reset fails too, restart the program" : "");
    __atomic_store_n(&device->fault, CUJIT_ERROR_DEVICE_FAULT, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&engine->lock);
  return refuse_faulted(device);
}

static cujit_status out_of_memory(cujit_device *device, const char *what) {
  size_t free_bytes = 0, total = 0;
  char f[32], t[32];
  cujit_engine *engine = device->engine;
  if (engine->drv.cuMemGetInfo(&free_bytes, &total) != CUDA_SUCCESS)
    return cj_fail(engine, CUJIT_ERROR_DEVICE_MEMORY,
                   "%s failed: device %d is out of memory; free buffers you no longer need", what,
                   device->ordinal);
  return cj_fail(engine, CUJIT_ERROR_DEVICE_MEMORY,
                 "%s failed: device %d is out of memory (free memory is %s of %s); free buffers "
                 "you no longer need",
                 what, device->ordinal, cj_bytes_text(free_bytes, f, sizeof f),
                 cj_bytes_text(total, t, sizeof t));
}

cujit_status cj_check(cujit_device *device, CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  if (!what) what = "a CUDA driver call";
  if (!device) return CUJIT_ERROR_DRIVER;
  cujit_engine *engine = device->engine;
  if (is_sticky(rc)) return poison(device, rc, what);
  switch (rc) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return out_of_memory(device, what);
  case CUDA_ERROR_NOT_READY:
    return cj_fail(engine, CUJIT_ERROR_NOT_READY, "%s: the work has not finished yet", what);
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE, "%s failed: device %d is not usable (%s)", what,
                   device->ordinal, rc == CUDA_ERROR_NO_DEVICE ? "no device" : "invalid");
  case CUDA_ERROR_NOT_SUPPORTED: {
    const char *name, *text;
    error_text(&engine->drv, rc, &name, &text);
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED, "%s failed on device %d: %s (%s)", what,
                   device->ordinal, text, name);
  }
  default:
    return driver_error(engine, rc, what);
  }
}

cujit_status cj_check_alive(cujit_device *device, unsigned generation, const char *what) {
  if (__atomic_load_n(&device->generation, __ATOMIC_ACQUIRE) != generation)
    return cj_fail(device->engine, CUJIT_ERROR_BUFFER_LOST,
                   "%s was made on device %d before the device was reset, so it is lost; make a "
                   "new one (freeing the old one is still fine)",
                   what, device->ordinal);
  if (__atomic_load_n(&device->fault, __ATOMIC_ACQUIRE) != CUJIT_OK) return refuse_faulted(device);
  return CUJIT_OK;
}

/* --- reset ------------------------------------------------------------------------------------ */

/* After a reset, the first retain tells whether the driver let the fault go: on recent drivers
** an illegal address or a launch failure stays with the process for good (CUDA documents that
** the process must be restarted), and the new context is unusable. */
static cujit_status verify_recovered(cujit_device *device) {
  cj_driver *drv = &device->engine->drv;
  CUcontext ctx = NULL;
  CUresult rc = drv->cuDevicePrimaryCtxRetain(&ctx, device->handle);
  if (rc == CUDA_SUCCESS) {
    __atomic_store_n(&device->ctx, ctx, __ATOMIC_RELEASE);
    return CUJIT_OK;
  }
  const char *name, *text;
  error_text(drv, rc, &name, &text);
  char cause[sizeof device->fault_msg];
  snprintf(cause, sizeof cause, "%s", device->fault_msg);
  snprintf(
      device->fault_msg, sizeof device->fault_msg,
      "%.1200s\ncujit reset device %d, but the CUDA driver keeps this fault for the rest of the "
      "process (%s: %s); no reset can bring the GPU back here: save what you need from host "
      "memory and restart the program (compiled kernels stay in the disk cache)",
      cause, device->ordinal, name, text);
  device->unrecoverable = 1;
  return CUJIT_ERROR_DEVICE_FAULT;
}

cujit_status cujit_device_reset(cujit_device *device) {
  NEED_DEVICE(device, "cujit_device_reset");
  cujit_engine *engine = device->engine;
  cj_driver *drv = &engine->drv;
  pthread_mutex_lock(&engine->lock);
  if (device->unrecoverable) {
    pthread_mutex_unlock(&engine->lock);
    return refuse_faulted(device);
  }
  /* Reset while still retained (the driver documents releasing after a reset as safe), then
  ** drop our retain, so the next entry retains a freshly initialised context. Without a retain
  ** nothing of ours lives there (objects need one, and a fault needs objects): no driver call. */
  int faulted = device->fault != CUJIT_OK;
  CUresult rc = device->ctx ? drv->cuDevicePrimaryCtxReset(device->handle) : CUDA_SUCCESS;
  cujit_status st = CUJIT_OK;
  if (rc == CUDA_SUCCESS) {
    if (device->ctx) drv->cuDevicePrimaryCtxRelease(device->handle);
    __atomic_store_n(&device->ctx, NULL, __ATOMIC_RELEASE);
    /* Everything of the old context is gone: its objects become lost, its memory is free. */
    __atomic_add_fetch(&device->generation, 1, __ATOMIC_ACQ_REL);
    atomic_store(&device->allocated, 0);
    if (faulted) st = verify_recovered(device);
    if (st == CUJIT_OK) {
      device->fault_msg[0] = '\0';
      __atomic_store_n(&device->fault, CUJIT_OK, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&engine->lock);
  if (st != CUJIT_OK) return refuse_faulted(device);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  const char *name, *text;
  error_text(drv, rc, &name, &text);
  return cj_fail(engine, device->fault ? CUJIT_ERROR_DEVICE_FAULT : CUJIT_ERROR_DRIVER,
                 "resetting device %d failed: %s (%s); restart the program to use this GPU again",
                 device->ordinal, text, name);
}
