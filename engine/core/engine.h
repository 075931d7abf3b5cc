/*
** engine.h -- the engine object shared by every layer of libcujit: error messages, warnings,
** the lazily opened driver and NVRTC, the devices, the cache, and the list of live objects.
** Internal: nothing here is public.
*/
#ifndef CUJIT_ENGINE_H
#define CUJIT_ENGINE_H

#include "cujit.h"
#include "loader.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>

#define CJ_MSG_MAX 8192 /* an error message, compile logs included (longer ones are cut) */

/* Intrusive list of live objects, so cujit_close can free what the user did not. */
typedef struct cj_link {
  struct cj_link *prev, *next;
  void (*destroy)(struct cj_link *self); /* frees the object that contains this link */
} cj_link;

typedef struct cj_errslot cj_errslot;
typedef struct cj_cache cj_cache;

struct cujit_engine {
  pthread_mutex_t lock; /* guards the lazy opens, the device array, the live list, error slots */
  unsigned long id;     /* unique per engine ever opened, to validate thread-local caches */

  cj_driver drv;
  int drv_state; /* 0 not tried, 1 open, -1 failed (drv_why says why) */
  char drv_why[512];

  cj_nvrtc nvrtc;
  int nvrtc_state;
  char nvrtc_why[512];

  int device_count;             /* -1 until the driver is asked */
  struct cujit_device *devices; /* device_count of them, filled on first use */
  int current_device;

  cj_cache *cache;

  cujit_warning_fn warn_fn;
  void *warn_user;
  volatile sig_atomic_t interrupted;

  cj_errslot *errs; /* one per thread that has failed a call */
  cj_link live;     /* list head */
};

/* Records a failure for this thread and returns `status`. The message should say what was wrong
** and what to do. Safe with engine == NULL (then it only returns status). */
cujit_status cj_fail(cujit_engine *engine, cujit_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
cujit_status cj_vfail(cujit_engine *engine, cujit_status status, const char *fmt, va_list ap);

/* Sends a warning to the engine's handler (stderr by default). */
void cj_warn(cujit_engine *engine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The driver / NVRTC, opened on first need. On failure they record the reason and return
** NO_DRIVER (or NO_DEVICE when the driver sees no GPU) / NO_NVRTC. */
cujit_status cj_need_driver(cujit_engine *engine, cj_driver **out);
cujit_status cj_need_nvrtc(cujit_engine *engine, cj_nvrtc **out);

/* Live-object tracking. cj_track sets link->destroy and adds it; cj_untrack removes it. */
void cj_track(cujit_engine *engine, cj_link *link, void (*destroy)(cj_link *));
void cj_untrack(cujit_engine *engine, cj_link *link);

/* Milliseconds from a monotonic clock. */
double cj_now_ms(void);

/* Returns a malloc'd copy, or NULL. */
char *cj_strdup(const char *s);
char *cj_strndup(const char *s, size_t n);

/* A growable string for building sources and messages (never on the launch path). */
typedef struct cj_buf {
  char *data;
  size_t len, cap;
  int failed; /* an allocation failed; data holds what fitted */
} cj_buf;
void cj_buf_add(cj_buf *b, const char *s, size_t n);
void cj_buf_puts(cj_buf *b, const char *s);
void cj_buf_printf(cj_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cj_buf_free(cj_buf *b);

#endif
