/*
** device.c -- devices above the backend seam: the device table (made by the backends on first
** use), the current device, entering a device, telling objects that outlived a reset, the public
** device calls, and the reset that recovers from a fault.
*/
#include "device.h"
#include "base/structs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the device table ------------------------------------------------------------------------- */

/* Made once; lock-free once made: readers that see the count see the filled table. */
static cujit_status need_devices(cujit_engine *engine) {
  if (__atomic_load_n(&engine->device_count, __ATOMIC_ACQUIRE) >= 0) return CUJIT_OK;
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&engine->table_lock);
  if (engine->device_count < 0) {
    cujit_device *devs = NULL;
    int n = 0;
    /* Each backend's devices join the table here, the one place that names backends. */
    st = cj_cuda_devices(engine, &devs, &n);
    if (st == CUJIT_OK) {
      engine->devices = devs;
      __atomic_store_n(&engine->device_count, n, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&engine->table_lock);
  return st;
}

/* The CPU device, made on first use once the GPU table was tried, so that cj_device_slots stays
** fixed from then on. It needs no driver: a failure to find GPUs is no failure here. */
static cujit_status need_cpu(cujit_engine *engine, cujit_device **out) {
  cujit_device *dev = __atomic_load_n(&engine->cpu_device, __ATOMIC_ACQUIRE);
  cujit_status st = CUJIT_OK;
  if (!dev) {
    need_devices(engine);
    pthread_mutex_lock(&engine->table_lock);
    if (!engine->cpu_device && (st = cj_cpu_device(engine, &dev)) == CUJIT_OK)
      __atomic_store_n(&engine->cpu_device, dev, __ATOMIC_RELEASE);
    dev = engine->cpu_device;
    pthread_mutex_unlock(&engine->table_lock);
  }
  *out = dev;
  return st;
}

cujit_device *cj_device_in_slot(cujit_engine *engine, int slot) {
  if (slot == 0) return __atomic_load_n(&engine->cpu_device, __ATOMIC_ACQUIRE);
  int gpus = __atomic_load_n(&engine->device_count, __ATOMIC_ACQUIRE);
  return slot > 0 && slot <= gpus ? &engine->devices[slot - 1] : NULL;
}

void cj_devices_release(cujit_engine *engine) {
  for (int i = 0; i < engine->device_count; i++)
    engine->devices[i].ops->release(&engine->devices[i]);
  free(engine->devices);
  engine->devices = NULL;
  if (engine->cpu_device) {
    engine->cpu_device->ops->release(engine->cpu_device);
    free(engine->cpu_device);
    engine->cpu_device = NULL;
  }
}

const char *cj_device_name(const cujit_device *device, char *buf, size_t len) {
  if (device->ordinal == CUJIT_DEVICE_CPU)
    snprintf(buf, len, "the CPU device");
  else
    snprintf(buf, len, "device %d", device->ordinal);
  return buf;
}

const char *cj_device_name_in(const cujit_device *device, const cujit_engine *engine, char *buf,
                              size_t len) {
  char name[32];
  cj_device_name(device, name, sizeof name);
  snprintf(buf, len, "%s%s", name, device->engine == engine ? "" : " of another engine");
  return buf;
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
                 "cujit_set_device with one of those, or with CUJIT_DEVICE_CPU (CUJIT_DEVICE=cpu) "
                 "for the CPU device",
                 ordinal, range);
}

/* Without a GPU, whatever the reason, the message also says how to run on the CPU device. */
static cujit_status suggest_cpu(cujit_engine *engine, cujit_status st) {
  char why[CJ_MSG_MAX - 256];
  snprintf(why, sizeof why, "%s", cujit_errmsg(engine));
  return cj_fail(engine, st,
                 "%s\nNo GPU to run on: to run kernels on the CPU device instead, set "
                 "CUJIT_DEVICE=cpu (C: cujit_set_device(engine, CUJIT_DEVICE_CPU); Lua: "
                 "cuda.device(\"cpu\"))",
                 why);
}

cujit_status cujit_device_count(cujit_engine *engine, int *count) {
  CJ_KEEP_CALLER_CONTEXT;
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
  CJ_KEEP_CALLER_CONTEXT;
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_device_get: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_get: out is NULL; pass the address of a cujit_device *");
  *out = NULL;
  if (ordinal == CUJIT_DEVICE_CPU) return need_cpu(engine, out);
  cujit_status st = need_devices(engine);
  if (st != CUJIT_OK) return st;
  if (ordinal < 0 || ordinal >= engine->device_count) return no_such_device(engine, ordinal);
  *out = &engine->devices[ordinal];
  return CUJIT_OK;
}

/* Why the current device is unusable: CUJIT_DEVICE, or the program, names a missing GPU. */
static cujit_status bad_current_device(cujit_engine *engine, int current) {
  char range[64];
  gpu_range(engine->device_count, range, sizeof range);
  const char *env = getenv("CUJIT_DEVICE");
  if (env && *env)
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                   "CUJIT_DEVICE=%s names device %d, which does not exist: this machine has %s",
                   env, current, range);
  return no_such_device(engine, current);
}

/* A CUJIT_DEVICE that is neither an ordinal nor cpu: said first, whatever the GPUs, so that
** no advice to "set CUJIT_DEVICE=cpu" follows a value the user meant as just that. */
static cujit_status bad_env_device(cujit_engine *engine) {
  const char *env = getenv("CUJIT_DEVICE");
  return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                 "CUJIT_DEVICE='%s' is not understood: it takes a GPU ordinal (0, 1, ...: digits "
                 "only) or cpu (lower case, nothing around it) for the CPU device; unset it to "
                 "use device 0, or call cujit_set_device",
                 env ? env : "");
}

cujit_status cj_current_device(cujit_engine *engine, cujit_device **out) {
  int current = __atomic_load_n(&engine->current_device, __ATOMIC_RELAXED);
  if (current == CUJIT_DEVICE_CPU) return need_cpu(engine, out);
  if (current < 0) return bad_env_device(engine);
  cujit_status st = need_devices(engine);
  if (st != CUJIT_OK) return suggest_cpu(engine, st);
  if (current < 0 || current >= engine->device_count) {
    st = bad_current_device(engine, current);
    return engine->device_count == 0 ? suggest_cpu(engine, st) : st;
  }
  *out = &engine->devices[current];
  return CUJIT_OK;
}

cujit_status cujit_current_device(cujit_engine *engine, cujit_device **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!engine)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_current_device: engine is NULL");
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_current_device: out is NULL; pass the address of a cujit_device *");
  *out = NULL;
  return cj_current_device(engine, out);
}

cujit_status cujit_set_device(cujit_engine *engine, int ordinal) {
  CJ_KEEP_CALLER_CONTEXT;
  cujit_device *device;
  cujit_status st = cujit_device_get(engine, ordinal, &device);
  if (st == CUJIT_OK) __atomic_store_n(&engine->current_device, ordinal, __ATOMIC_RELAXED);
  return st;
}

/* --- small queries ---------------------------------------------------------------------------- */

#define NEED_DEVICE(device, fn)                                                                    \
  if (!(device)) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, fn ": device is NULL")

cujit_status cujit_device_info_get(cujit_device *device, cujit_device_info *info) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_info_get");
  if (!info)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_info_get: info is NULL; pass a cujit_device_info to fill");
  size_t room;
  cujit_status st = cj_struct_room(device->engine, "cujit_device_info_get", "cujit_device_info",
                                   info, sizeof device->info, CJ_DEVICE_INFO_V1, &room);
  if (st == CUJIT_OK) cj_struct_out(info, room, &device->info);
  return st;
}

int cujit_device_ordinal(const cujit_device *device) {
  return device ? device->ordinal : -1;
}

cujit_status cujit_device_arch(cujit_device *device, char *buf, size_t len) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_arch");
  if (!buf || len == 0)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_arch: no buffer to write the arch into (buf NULL or len 0)");
  const char *arch = device->arch;
  int n = snprintf(buf, len, "%s", arch);
  if (n < 0 || (size_t)n >= len) {
    buf[0] = '\0';
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_arch: a buffer of %zu bytes is too small for \"%s\" (needs %d); "
                   "pass 16 bytes",
                   len, arch, n + 1);
  }
  return CUJIT_OK;
}

cujit_status cujit_device_memory(cujit_device *device, size_t *free_bytes, size_t *total_bytes) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_memory");
  if (!free_bytes && !total_bytes)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_memory: both free_bytes and total_bytes are NULL");
  size_t f = 0, t = 0;
  cujit_status st = cj_device_enter(device);
  if (st == CUJIT_OK) st = device->ops->mem_info(device, &f, &t);
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return st;
}

size_t cujit_device_allocated(const cujit_device *device) {
  return device ? atomic_load(&device->allocated) : 0;
}

cujit_status cujit_device_pool_reserved(cujit_device *device, size_t *bytes) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_pool_reserved");
  if (!bytes)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_device_pool_reserved: bytes is NULL; pass a size_t to fill");
  *bytes = 0;
  if (!device->ops->enter_quiet(device) && !cj_device_faulted(device))
    return CUJIT_OK; /* nothing was ever allocated on it */
  cujit_status st = cj_device_enter(device);
  return st == CUJIT_OK ? device->ops->pool_reserved(device, bytes) : st;
}

cujit_status cujit_device_trim(cujit_device *device) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_trim");
  if (!device->ops->enter_quiet(device) && !cj_device_faulted(device)) return CUJIT_OK;
  cujit_status st = cj_device_enter(device);
  return st == CUJIT_OK ? device->ops->pool_trim(device) : st;
}

cujit_status cujit_device_status(cujit_device *device) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_status");
  if (cj_device_faulted(device)) return cj_device_refuse(device);
  return CUJIT_OK;
}

/* --- the application's context (issue 24) ------------------------------------------------------
 */

cujit_status cujit_device_use_context(cujit_device *device, void *context) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_use_context");
  static const char fn[] = "cujit_device_use_context";
  char name[32];
  if (!device->ops->use_context)
    return cj_fail(device->engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: %s has no native context to replace; contexts exist on GPUs only", fn,
                   cj_device_name(device, name, sizeof name));
  if (!context)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: context is NULL; pass the CUcontext to use (cuCtxCreate's, or "
                   "cuCtxGetCurrent's after the runtime API made one current)",
                   fn);
  if (cj_device_faulted(device)) return cj_device_refuse(device);
  return device->ops->use_context(device, context);
}

cujit_status cj_native_check(cujit_device *device, const char *fn, const char *what) {
  if (device->ops->native) return CUJIT_OK;
  return cj_fail(device->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s: the CPU device has no native %s (its kernels are functions of a shared "
                 "object cujit built); native handles exist on GPUs only",
                 fn, what);
}

cujit_status cj_native_current(cujit_engine *engine, const char *fn, const char *what,
                               cujit_device **device) {
  cujit_status st = cj_current_device(engine, device);
  if (st == CUJIT_OK) st = cj_native_check(*device, fn, what);
  return st == CUJIT_OK ? cj_device_enter(*device) : st;
}

cujit_status cujit_device_context(cujit_device *device, void **context) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_context");
  static const char fn[] = "cujit_device_context";
  if (!context)
    return cj_fail(device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: context is NULL; pass the address of a void * (a CUcontext) to fill", fn);
  *context = NULL;
  char name[32];
  if (!device->ops->context)
    return cj_fail(device->engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: %s has no native context; contexts exist on GPUs only", fn,
                   cj_device_name(device, name, sizeof name));
  if (cj_device_faulted(device)) return cj_device_refuse(device);
  return device->ops->context(device, context);
}

/* --- making objects on the current device ----------------------------------------------------- */

cujit_status cj_check_new(cujit_engine *engine, const void *out, const char *fn, const char *type) {
  if (!engine) return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: engine is NULL", fn);
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: out is NULL; pass the address of a %s *", fn, type);
  return CUJIT_OK;
}

static cujit_status new_on_device(cujit_device *device, const char *fn, const char *what,
                                  size_t size, void **object) {
  *object = NULL;
  cujit_status st = cj_device_enter(device);
  if (st != CUJIT_OK) return st;
  *object = calloc(1, size);
  if (!*object)
    return cj_fail(device->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "%s: out of host memory for the %s object", fn, what);
  return CUJIT_OK;
}

cujit_status cj_new_on_current(cujit_engine *engine, const char *fn, const char *what, size_t size,
                               cujit_device **device, void **object) {
  *object = NULL;
  cujit_status st = *device ? CUJIT_OK : cj_current_device(engine, device);
  return st == CUJIT_OK ? new_on_device(*device, fn, what, size, object) : st;
}

/* --- entering --------------------------------------------------------------------------------- */

int cj_device_enter_quiet(cujit_device *device) {
  if (!device || cj_device_faulted(device)) return 0;
  return device->ops->enter_quiet(device);
}

cujit_status cj_check_alive(cujit_device *device, unsigned generation, const char *what) {
  char name[32];
  if (__atomic_load_n(&device->generation, __ATOMIC_ACQUIRE) != generation)
    return cj_fail(device->engine, CUJIT_ERROR_BUFFER_LOST,
                   "%s was made on %s before the device was reset, so it is lost; make a new "
                   "one (freeing the old one is still fine)",
                   what, cj_device_name(device, name, sizeof name));
  if (cj_device_faulted(device)) return cj_device_refuse(device);
  return CUJIT_OK;
}

/* --- reset ------------------------------------------------------------------------------------ */

cujit_status cujit_device_reset(cujit_device *device) {
  CJ_KEEP_CALLER_CONTEXT;
  NEED_DEVICE(device, "cujit_device_reset");
  if (device->unrecoverable) return cj_device_refuse(device);
  cujit_status st = device->ops->reset(device);
  if (st == CUJIT_OK || device->unrecoverable) {
    /* Everything made before is gone: its objects become lost, its memory is free. */
    __atomic_add_fetch(&device->generation, 1, __ATOMIC_ACQ_REL);
    atomic_store(&device->allocated, 0);
  }
  if (st == CUJIT_OK) {
    pthread_mutex_lock(&device->engine->lock);
    device->fault_msg[0] = '\0';
    __atomic_store_n(&device->fault, CUJIT_OK, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&device->engine->lock);
  }
  return st;
}
