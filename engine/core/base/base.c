/*
** base.c -- the engine's record as every layer shares it: per-thread error messages and status
** text, warnings, the lazy opening of the driver and NVRTC, live-object tracking and per-engine
** slots. Opening and closing the engine itself is engine.c's, at the top of the core; the rest of
** base.h is defined by interrupt.c (interrupts, SIGXFSZ held off), dtype.c and text.c (strings,
** growable buffers, sizes as text, the clock).
*/
#define _GNU_SOURCE /* syscall */
#include "base.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cj_errslot {
  cj_errslot *next;
  pthread_t thread;
  cujit_status status;
  char msg[CJ_MSG_MAX];
  char **items; /* per-item messages of the last call that reports them (cj_items_keep) */
  size_t nitems;
};

/* The slot of the last engine this thread failed on, so repeated failures skip the lock. */
static _Thread_local struct {
  unsigned long engine_id;
  cj_errslot *slot;
} tls_slot;

static cj_errslot *find_slot(const cujit_engine *engine, int create) {
  if (tls_slot.engine_id == engine->id && tls_slot.slot) return tls_slot.slot;
  cujit_engine *e = (cujit_engine *)engine;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&e->lock);
  cj_errslot *s = e->errs;
  while (s && !pthread_equal(s->thread, self)) s = s->next;
  if (!s && create && (s = calloc(1, sizeof *s)) != NULL) {
    s->thread = self;
    s->next = e->errs;
    e->errs = s;
  }
  pthread_mutex_unlock(&e->lock);
  if (s) tls_slot.engine_id = engine->id, tls_slot.slot = s;
  return s;
}

cujit_status cj_vfail(cujit_engine *engine, cujit_status status, const char *fmt, va_list ap) {
  if (!engine) return status;
  cj_errslot *s = find_slot(engine, 1);
  if (!s) return status;
  s->status = status;
  vsnprintf(s->msg, sizeof s->msg, fmt, ap);
  return status;
}

cujit_status cj_fail(cujit_engine *engine, cujit_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cj_vfail(engine, status, fmt, ap);
  va_end(ap);
  return status;
}

const char *cujit_errmsg(const cujit_engine *engine) {
  if (!engine) return "no engine (NULL): open one with cujit_open";
  cj_errslot *s = find_slot(engine, 0);
  return s ? s->msg : "";
}

cujit_status cujit_errcode(const cujit_engine *engine) {
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  cj_errslot *s = find_slot(engine, 0);
  return s ? s->status : CUJIT_OK;
}

static void default_warning(void *user, const char *message) {
  (void)user;
  fprintf(stderr, "cujit: warning: %s\n", message);
}

void cj_warn(cujit_engine *engine, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (engine && engine->warn_fn)
    engine->warn_fn(engine->warn_user, msg);
  else
    default_warning(NULL, msg);
}

void cujit_set_warning_handler(cujit_engine *engine, cujit_warning_fn fn, void *user) {
  if (!engine) return;
  engine->warn_fn = fn ? fn : default_warning;
  engine->warn_user = fn ? user : NULL;
}

static void items_free(char **items, size_t n) {
  for (size_t i = 0; items && i < n; i++) free(items[i]);
  free(items);
}

void cj_items_keep(cujit_engine *engine, char **messages, size_t count) {
  cj_errslot *s = engine ? find_slot(engine, 1) : NULL;
  if (!s) {
    items_free(messages, count);
    return;
  }
  items_free(s->items, s->nitems);
  s->items = messages, s->nitems = messages ? count : 0;
}

const char *cj_item_message(const cujit_engine *engine, size_t index) {
  cj_errslot *s = engine ? find_slot(engine, 0) : NULL;
  if (!s || index >= s->nitems) return NULL;
  return s->items[index] ? s->items[index] : "";
}

void cj_errors_free(cujit_engine *engine) {
  for (cj_errslot *s = engine->errs, *next; s; s = next)
    next = s->next, items_free(s->items, s->nitems), free(s);
  engine->errs = NULL;
  if (tls_slot.engine_id == engine->id) tls_slot.engine_id = 0, tls_slot.slot = NULL;
}

/* Opens a library once: `state` is 0 (not tried), 1 (open) or -1 (failed), published with a release
** store after the library's record is filled, so a reader that sees 1 sees the record. */
static int open_once(pthread_mutex_t *lock, int *state, int (*open)(void *, char *, size_t),
                     void *lib, char *why, size_t why_len) {
  int s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
  if (s != 0) return s;
  pthread_mutex_lock(lock);
  if ((s = *state) == 0)
    __atomic_store_n(state, s = open(lib, why, why_len) ? 1 : -1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(lock);
  return s;
}

static int open_driver(void *lib, char *why, size_t why_len) {
  return cj_driver_open(lib, why, why_len);
}

static int open_nvrtc(void *lib, char *why, size_t why_len) {
  return cj_nvrtc_open(lib, why, why_len);
}

static void *start_driver(void *arg) {
  cujit_engine *engine = arg;
  /* Not named: the driver's own threads, made by cuInit here, would inherit the name. */
  __atomic_store_n(&engine->drv_starter_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
  open_once(&engine->drv_lock, &engine->drv_state, open_driver, &engine->drv, engine->drv_why,
            sizeof engine->drv_why);
  return NULL;
}

void cj_driver_start(cujit_engine *engine) {
  /* The CPU device chosen (or a CUJIT_DEVICE not understood): the driver may never be wanted. */
  if (__atomic_load_n(&engine->current_device, __ATOMIC_RELAXED) < 0 ||
      __atomic_load_n(&engine->drv_state, __ATOMIC_ACQUIRE) != 0 ||
      __atomic_load_n(&engine->drv_starter_state, __ATOMIC_ACQUIRE) != 0)
    return;
  pthread_mutex_lock(&engine->drv_lock);
  /* Not made twice, nor after a join: a driver that failed is not tried again. */
  if (engine->drv_starter_state == 0 && engine->drv_state == 0 &&
      pthread_create(&engine->drv_starter, NULL, start_driver, engine) == 0)
    __atomic_store_n(&engine->drv_starter_state, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&engine->drv_lock);
}

void cj_driver_join(cujit_engine *engine) {
  if (__atomic_load_n(&engine->drv_starter_state, __ATOMIC_ACQUIRE) != 1) return;
  pthread_mutex_lock(&engine->drv_lock); /* the starter takes it too, briefly: join outside */
  int mine = engine->drv_starter_state == 1;
  if (mine) __atomic_store_n(&engine->drv_starter_state, 2, __ATOMIC_RELEASE);
  pthread_t t = engine->drv_starter;
  pthread_mutex_unlock(&engine->drv_lock);
  if (mine) pthread_join(t, NULL);
}

cujit_status cj_need_driver(cujit_engine *engine, cj_driver **out) {
  cj_driver_join(engine);
  if (open_once(&engine->drv_lock, &engine->drv_state, open_driver, &engine->drv, engine->drv_why,
                sizeof engine->drv_why) < 0)
    return cj_fail(engine,
                   strncmp(engine->drv_why, "no CUDA device", 14) == 0 ? CUJIT_ERROR_NO_DEVICE
                                                                       : CUJIT_ERROR_NO_DRIVER,
                   "%s", engine->drv_why);
  *out = &engine->drv;
  return CUJIT_OK;
}

cujit_status cj_need_nvrtc(cujit_engine *engine, cj_nvrtc **out) {
  if (open_once(&engine->lock, &engine->nvrtc_state, open_nvrtc, &engine->nvrtc, engine->nvrtc_why,
                sizeof engine->nvrtc_why) < 0)
    return cj_fail(engine, CUJIT_ERROR_NO_NVRTC, "%s", engine->nvrtc_why);
  *out = &engine->nvrtc;
  return CUJIT_OK;
}

cj_nvrtc *cj_nvrtc_if_open(cujit_engine *engine) {
  return __atomic_load_n(&engine->nvrtc_state, __ATOMIC_ACQUIRE) == 1 ? &engine->nvrtc : NULL;
}

const char *cujit_version(void) {
  return CUJIT_VERSION_STRING;
}

cujit_status cujit_driver_version(cujit_engine *engine, int *version) {
  if (!engine || !version) return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "NULL argument");
  *version = 0;
  cj_driver *drv = NULL;
  cujit_status st = cj_need_driver(engine, &drv);
  if (st == CUJIT_OK) *version = drv->version;
  return st;
}

cujit_status cujit_nvrtc_version(cujit_engine *engine, int *version) {
  if (!engine || !version) return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "NULL argument");
  *version = 0;
  cj_nvrtc *nv = NULL;
  cujit_status st = cj_need_nvrtc(engine, &nv);
  if (st == CUJIT_OK) *version = nv->version;
  return st;
}

void cj_track(cujit_engine *engine, cj_link *link, void (*destroy)(cj_link *)) {
  link->destroy = destroy;
  pthread_mutex_lock(&engine->lock);
  link->next = engine->live.next;
  link->prev = &engine->live;
  engine->live.next->prev = link;
  engine->live.next = link;
  pthread_mutex_unlock(&engine->lock);
}

void cj_untrack(cujit_engine *engine, cj_link *link) {
  pthread_mutex_lock(&engine->lock);
  if (link->next) {
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->next = link->prev = NULL;
  }
  pthread_mutex_unlock(&engine->lock);
}

/* --- per-engine slots ------------------------------------------------------------------------- */

struct cj_slot {
  cj_slot *next;
  const void *tag;
  void (*destroy)(void *state);
  _Alignas(16) unsigned char state[];
};

void *cj_slot_get(cujit_engine *engine, const void *tag, size_t size,
                  void (*init)(void *state, cujit_engine *engine), void (*destroy)(void *state)) {
  pthread_mutex_lock(&engine->lock);
  cj_slot *s = engine->slots;
  while (s && s->tag != tag) s = s->next;
  if (!s && (s = calloc(1, sizeof *s + size)) != NULL) {
    s->tag = tag;
    s->destroy = destroy;
    s->next = engine->slots;
    engine->slots = s;
    init(s->state, engine);
  }
  pthread_mutex_unlock(&engine->lock);
  if (!s) cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for engine state");
  return s ? s->state : NULL;
}

void cj_slots_free(cujit_engine *engine) {
  for (cj_slot *s = engine->slots, *next; s; s = next) {
    next = s->next;
    s->destroy(s->state);
    free(s);
  }
  engine->slots = NULL;
}

const char *cujit_status_string(cujit_status status) {
  static const char *const text[CUJIT_STATUS_COUNT_] = {
      [CUJIT_OK] = "no error",
      [CUJIT_ERROR_INVALID_ARGUMENT] = "invalid argument",
      [CUJIT_ERROR_OUT_OF_HOST_MEMORY] = "out of host memory",
      [CUJIT_ERROR_NO_DRIVER] = "no CUDA driver",
      [CUJIT_ERROR_NO_DEVICE] = "no such CUDA device",
      [CUJIT_ERROR_NO_NVRTC] = "no NVRTC",
      [CUJIT_ERROR_SIGNATURE] = "malformed kernel signature",
      [CUJIT_ERROR_COMPILE] = "compile error",
      [CUJIT_ERROR_NOT_FOUND] = "kernel not found",
      [CUJIT_ERROR_ARGUMENT] = "kernel arguments do not match the signature",
      [CUJIT_ERROR_LAUNCH_CONFIG] = "launch configuration outside the device's limits",
      [CUJIT_ERROR_DEVICE_MEMORY] = "out of device memory",
      [CUJIT_ERROR_DEVICE_FAULT] = "device fault (reset the device)",
      [CUJIT_ERROR_BUFFER_LOST] = "buffer lost in a device reset",
      [CUJIT_ERROR_NOT_READY] = "not ready",
      [CUJIT_ERROR_CACHE] = "cache error",
      [CUJIT_ERROR_IO] = "I/O error",
      [CUJIT_ERROR_DRIVER] = "CUDA driver error",
      [CUJIT_ERROR_INTERRUPTED] = "interrupted",
      [CUJIT_ERROR_UNSUPPORTED] = "unsupported",
  };
  return (unsigned)status < CUJIT_STATUS_COUNT_ ? text[status] : "unknown status";
}
