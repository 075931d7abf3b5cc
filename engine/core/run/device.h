/*
** device.h -- devices above the backend seam: the engine's device table, the current device,
** entering a device (refused while it is faulted), whether an object outlived a reset, and the
** public device calls. Nothing here knows which backend runs a device. Internal.
*/
#ifndef CUJIT_DEVICE_H
#define CUJIT_DEVICE_H

#include "backend/backend.h"

/* Opens the scope of a public call that may enter a device (backend.h, "the caller's current
** context"): the context the caller had current on this thread is current again when the call
** returns, by whatever return. The first statement of every such public call. */
static inline void cj_scope_end_(int *unused) {
  (void)unused;
  cj_backend_scope_close();
}
#define CJ_KEEP_CALLER_CONTEXT                                                                     \
  __attribute__((cleanup(cj_scope_end_), unused)) int cj_scope_ = (cj_backend_scope_open(), 0)

/* The engine's current device, the table made (and every device's info read) on first use. */
cujit_status cj_current_device(cujit_engine *engine, cujit_device **out);

/* Makes the device usable on this thread, or fails with its fault. The launch path calls this:
** one load and the backend's enter, which is cheap when the device is already entered. */
static inline cujit_status cj_device_enter(cujit_device *device) {
  if (cj_device_faulted(device)) return cj_device_refuse(device);
  return device->ops->enter(device);
}

/* The engine's current device, entered, when its handles are the driver's (issue 24); else
** UNSUPPORTED for `fn`, saying the CPU device has no native `what` ("functions"). */
cujit_status cj_native_current(cujit_engine *engine, const char *fn, const char *what,
                               cujit_device **device);
/* Only the check of cj_native_current, for a caller that enters the device itself. */
cujit_status cj_native_check(cujit_device *device, const char *fn, const char *what);

/* Like cj_device_enter for releasing objects: 1 when the device is usable and not faulted, 0
** otherwise; records no error, so a free never clobbers cujit_errmsg. */
int cj_device_enter_quiet(cujit_device *device);

/* 1 while an object made at `generation` of `device` is still valid (no reset since). */
static inline int cj_device_current(const cujit_device *device, unsigned generation) {
  return __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE) == generation;
}

/* The status for an object made at `generation` of `device`: OK, or BUFFER_LOST after a reset
** (with a message naming `what`), or the device's fault. */
cujit_status cj_check_alive(cujit_device *device, unsigned generation, const char *what);

/* The checks that open every call making an object: an engine, and an output pointer (`fn` names
** the call, `type` the handle: "cujit_stream"). */
cujit_status cj_check_new(cujit_engine *engine, const void *out, const char *fn, const char *type);

/* Then the current device (or *device when it is not NULL), entered, and the object allocated
** zeroed (`what` names it in the out-of-memory message: "stream"). */
cujit_status cj_new_on_current(cujit_engine *engine, const char *fn, const char *what, size_t size,
                               cujit_device **device, void **object);

/* Per-device arrays (a kernel's functions, a program's modules) have cj_device_slots entries:
** the CPU device (ordinal CUJIT_DEVICE_CPU, -1) in slot 0, then GPU i in slot i + 1. The count
** is fixed once any device was got: getting the CPU device makes the GPU table first. */
static inline int cj_device_slot(const cujit_device *device) {
  return device->ordinal + 1;
}
static inline int cj_device_slots(const cujit_engine *engine) {
  int gpus = __atomic_load_n(&engine->device_count, __ATOMIC_ACQUIRE);
  return (gpus > 0 ? gpus : 0) + 1;
}

/* "device 1" or "the CPU device", for messages. Returns buf. */
const char *cj_device_name(const cujit_device *device, char *buf, size_t len);

/* The same, as `engine` sees it: "the CPU device of another engine" (or "device 0 of ...") when
** the device is not `engine`'s, so two engines' CPU devices never read as one device. */
const char *cj_device_name_in(const cujit_device *device, const cujit_engine *engine, char *buf,
                              size_t len);

/* The device in `slot`, or NULL when there is none (the CPU device not made yet). */
cujit_device *cj_device_in_slot(cujit_engine *engine, int slot);

/* Releases every device and frees the table (cujit_close). */
void cj_devices_release(cujit_engine *engine);

#endif
