/*
** base.c -- what every layer of the core uses: per-thread error messages, warnings, the lazy
** opening of the driver and NVRTC, live-object tracking, per-engine slots, dtypes, status text,
** strings, growable buffers, sizes as text and the clock. Opening and closing the engine itself
** is engine.c's, at the top of the core.
*/
#include "base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cj_errslot {
  cj_errslot *next;
  pthread_t thread;
  cujit_status status;
  char msg[CJ_MSG_MAX];
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

void cujit_interrupt(cujit_engine *engine) {
  if (engine) atomic_fetch_add(&engine->interrupts, 1); /* lock-free: fine in a signal handler */
}

/* Marks every interrupt so far as reported; `seen` is a count read earlier. The count only moves
** forward (modulo 2^32), so an older `seen` never undoes a newer report. */
static void mark_reported(cujit_engine *engine, unsigned seen) {
  unsigned old = atomic_load(&engine->reported);
  while ((int)(seen - old) > 0 && !atomic_compare_exchange_weak(&engine->reported, &old, seen)) {
  }
}

void cujit_interrupt_clear(cujit_engine *engine) {
  if (engine) mark_reported(engine, atomic_load(&engine->interrupts));
}

unsigned cj_interrupt_mark(cujit_engine *engine) {
  /* A pending interrupt (not reported yet) dates the mark before it, so the wait reports it. */
  return atomic_load(&engine->reported);
}

int cj_interrupted(cujit_engine *engine, unsigned mark) {
  unsigned now = atomic_load(&engine->interrupts);
  if (now == mark) return 0;
  mark_reported(engine, now);
  return 1;
}

void cj_fsize_guard(cj_fsize *g) {
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &g->old);
  /* One already pending (the caller's own, blocked before) is not ours to consume. */
  g->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

void cj_fsize_release(cj_fsize *g) {
  int saved = errno; /* the caller reads the write's errno after this */
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  if (!g->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
    struct timespec now = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
  errno = saved;
}

void cj_errors_free(cujit_engine *engine) {
  for (cj_errslot *s = engine->errs, *next; s; s = next) next = s->next, free(s);
  engine->errs = NULL;
  if (tls_slot.engine_id == engine->id) tls_slot.engine_id = 0, tls_slot.slot = NULL;
}

/* Opens a library once: `state` is 0 (not tried), 1 (open) or -1 (failed), published with a release
** store after the library's record is filled, so a reader that sees 1 sees the record. */
static int open_once(cujit_engine *engine, int *state, int (*open)(void *, char *, size_t),
                     void *lib, char *why, size_t why_len) {
  int s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
  if (s != 0) return s;
  pthread_mutex_lock(&engine->lock);
  if ((s = *state) == 0)
    __atomic_store_n(state, s = open(lib, why, why_len) ? 1 : -1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&engine->lock);
  return s;
}

static int open_driver(void *lib, char *why, size_t why_len) {
  return cj_driver_open(lib, why, why_len);
}

static int open_nvrtc(void *lib, char *why, size_t why_len) {
  return cj_nvrtc_open(lib, why, why_len);
}

cujit_status cj_need_driver(cujit_engine *engine, cj_driver **out) {
  if (open_once(engine, &engine->drv_state, open_driver, &engine->drv, engine->drv_why,
                sizeof engine->drv_why) < 0)
    return cj_fail(engine,
                   strncmp(engine->drv_why, "no CUDA device", 14) == 0 ? CUJIT_ERROR_NO_DEVICE
                                                                       : CUJIT_ERROR_NO_DRIVER,
                   "%s", engine->drv_why);
  *out = &engine->drv;
  return CUJIT_OK;
}

cujit_status cj_need_nvrtc(cujit_engine *engine, cj_nvrtc **out) {
  if (open_once(engine, &engine->nvrtc_state, open_nvrtc, &engine->nvrtc, engine->nvrtc_why,
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

/* --- dtypes ----------------------------------------------------------------------------------- */

static const struct {
  const char *name, *ctype;
  size_t size;
} dtypes[CUJIT_DTYPE_COUNT_] = {
    [CUJIT_DTYPE_NONE] = {"bytes", "unsigned char", 1},
    [CUJIT_F16] = {"f16", "__half", 2},
    [CUJIT_F32] = {"f32", "float", 4},
    [CUJIT_F64] = {"f64", "double", 8},
    [CUJIT_I8] = {"i8", "signed char", 1},
    [CUJIT_I16] = {"i16", "short", 2},
    [CUJIT_I32] = {"i32", "int", 4},
    [CUJIT_I64] = {"i64", "long long", 8},
    [CUJIT_U8] = {"u8", "unsigned char", 1},
    [CUJIT_U16] = {"u16", "unsigned short", 2},
    [CUJIT_U32] = {"u32", "unsigned int", 4},
    [CUJIT_U64] = {"u64", "unsigned long long", 8},
};

const char *cujit_dtype_name(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].name : "?";
}

const char *cujit_dtype_ctype(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].ctype : "?";
}

size_t cujit_dtype_size(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].size : 0;
}

cujit_dtype cujit_dtype_from_name(const char *name) {
  if (!name) return CUJIT_DTYPE_NONE;
  for (int i = 1; i < CUJIT_DTYPE_COUNT_; i++)
    if (strcmp(name, dtypes[i].name) == 0 || strcmp(name, dtypes[i].ctype) == 0)
      return (cujit_dtype)i;
  return CUJIT_DTYPE_NONE;
}

/* --- small helpers ---------------------------------------------------------------------------- */

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

double cj_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

char *cj_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *cj_strdup(const char *s) {
  return s ? cj_strndup(s, strlen(s)) : NULL;
}

void cj_buf_add(cj_buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->data = p, b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void cj_buf_puts(cj_buf *b, const char *s) {
  cj_buf_add(b, s, strlen(s));
}

void cj_buf_printf(cj_buf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    cj_buf_add(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  cj_buf_add(b, big, (size_t)n);
  free(big);
}

void cj_buf_free(cj_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}
