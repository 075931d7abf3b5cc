/*
** base.h -- the bottom of libcujit's core: the engine record every layer shares, per-thread error
** messages, warnings, the lazily opened driver and NVRTC, the list of live objects, per-engine
** state slots, dtypes, strings, growable buffers, sizes as text and the clock. Calls nothing
** above the loader. Internal: nothing here is public.
*/
#ifndef CUJIT_BASE_H
#define CUJIT_BASE_H

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
typedef struct cj_cache cj_cache;             /* cache.h */
typedef struct cj_program_map cj_program_map; /* program.h: the loaded programs */
typedef struct cj_slot cj_slot;               /* per-engine state of higher layers */
typedef struct cj_remote cj_remote;           /* compile/remote.h: NVRTC worker processes */

struct cujit_engine {
  pthread_mutex_t lock;       /* guards the lazy opens, the live list, error slots, slots, faults */
  pthread_mutex_t table_lock; /* serialises making the device table (device.c) */
  /* Guards every device's list of streams (stream.c); held while they are queried, which may
  ** record an error, so it is never taken while `lock` is held. */
  pthread_mutex_t streams_lock;
  unsigned long id; /* unique per engine ever opened, to validate thread-local caches */

  cj_driver drv;
  int drv_state; /* 0 not tried, 1 open, -1 failed (drv_why says why); atomic access */
  char drv_why[512];
  /* Serialises opening the driver: its own lock, not `lock`, so that a driver opening on the
  ** starter thread (cj_driver_start) holds up nothing else (NVRTC, errors, the live list). */
  pthread_mutex_t drv_lock;
  pthread_t drv_starter; /* the thread cj_driver_start made, joined by cj_driver_join */
  int drv_starter_state; /* 0 none, 1 made, 2 joined (under drv_lock; atomic reads) */
  int drv_starter_tid;   /* its kernel thread id once it runs (atomic), for tests */

  cj_nvrtc nvrtc;
  int nvrtc_state;
  char nvrtc_why[512];

  int device_count;                /* -1 until the driver is asked */
  struct cujit_device *devices;    /* device_count of them, filled on first use (device.c) */
  int current_device;              /* per engine, not per thread (unlike CUDA's current device) */
  struct cujit_device *cpu_device; /* the CPU device, made on first use (device.c) */

  cj_cache *cache;              /* opened and closed by engine.c */
  _Atomic unsigned direct_hits; /* builds a direct entry answered (program.c), for tests */
  cj_program_map *programs;     /* opened and closed by engine.c */
  cj_slot *slots;               /* under lock; freed by engine.c through cj_slots_free */
  char *kept_dir;   /* line info's kept sources (compile/kept.c), made under lock on first use */
  int kept_private; /* kept_dir is the engine's own, removed at close */
  atomic_ullong pch_created, pch_used; /* compile/pch.c's counts, in cujit_cache_stats */
  cj_remote *remote;        /* NVRTC worker processes (compile/remote.c), opened by engine.c */
  atomic_int nvrtc_running; /* NVRTC compiles running in this process (remote.c decides by it) */
  atomic_ullong compiles_in_workers; /* in cujit_cache_stats */

  cujit_warning_fn warn_fn;
  void *warn_user;
  /* cujit_interrupt bumps `interrupts`; `reported` is the count the last report or
  ** cujit_interrupt_clear saw. Counters, not a flag, so that every wait in progress sees the
  ** interrupt (none can clear it for the others); lock-free atomics, so a signal handler may
  ** bump it. Waits use cj_interrupt_mark and cj_interrupted. */
  atomic_uint interrupts, reported;

  cj_errslot *errs; /* one per thread that has failed a call */
  cj_link live;     /* list head */
};

/* Records a failure for this thread and returns `status`. The message should say what was wrong
** and what to do. Safe with engine == NULL (then it only returns status). */
cujit_status cj_fail(cujit_engine *engine, cujit_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
cujit_status cj_vfail(cujit_engine *engine, cujit_status status, const char *fmt, va_list ap);

/* Per-item messages, for a call that does many things and reports each one of them
** (cujit_program_compile_many): cj_items_keep takes over `messages` (a malloc'd array of `count`
** malloc'd strings, NULL for an item that succeeded) as this thread's, freeing those it kept
** before; out of memory, it frees them. cj_item_message: item `index`'s message, "" for one that
** succeeded, NULL past the count of the last call that kept any (or none yet). Each lives until
** the next cj_items_keep on the same engine from the same thread, or cujit_close. */
void cj_items_keep(cujit_engine *engine, char **messages, size_t count);
const char *cj_item_message(const cujit_engine *engine, size_t index);

/* A wait takes a mark when it starts and asks cj_interrupted(mark) as it goes: 1 once
** cujit_interrupt was called after the mark, or before it without any wait having reported it
** yet (a pending interrupt). A 1 counts as reported, so waits started later are not cut short. */
unsigned cj_interrupt_mark(cujit_engine *engine);
int cj_interrupted(cujit_engine *engine, unsigned mark);

/* Around a write of a file: a write past the size limit (ulimit -f, RLIMIT_FSIZE) raises
** SIGXFSZ, whose default action ends the process. cj_fsize_guard blocks it in this thread only
** (a library leaves the process's dispositions alone), so write() fails with EFBIG instead;
** cj_fsize_release consumes the signal if the writes raised it, and restores the mask. */
typedef struct cj_fsize {
  sigset_t old;
  int was_pending;
} cj_fsize;
void cj_fsize_guard(cj_fsize *g);
void cj_fsize_release(cj_fsize *g);

/* Sends a warning to the engine's handler (stderr by default). */
void cj_warn(cujit_engine *engine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The driver / NVRTC, opened on first need. On failure they record the reason and return
** NO_DRIVER (or NO_DEVICE when the driver sees no GPU) / NO_NVRTC. */
cujit_status cj_need_driver(cujit_engine *engine, cj_driver **out);
cujit_status cj_need_nvrtc(cujit_engine *engine, cj_nvrtc **out);

/* A first compile for a GPU calls cj_driver_start just before NVRTC (compile.c): when no call
** has tried the driver yet and the current device is not the CPU device, a thread of its own opens
*it (dlopen, cuInit: about 190 ms on the H200
** machine, which NVRTC 13 would otherwise pay inside its first compile) while the compile runs.
** It records no error: a failure is kept in drv_why and reported, as before, by the call that
** needs the driver. cj_driver_join waits for that thread, if one was made; cj_need_driver and
** cujit_close call it, so no starter thread outlives the engine. A process without a driver pays
** a failed dlopen on that thread, which it paid before at its first device call. */
void cj_driver_start(cujit_engine *engine);
void cj_driver_join(cujit_engine *engine);

/* NVRTC when some call already opened it, else NULL; never opens it (5-140 ms). */
cj_nvrtc *cj_nvrtc_if_open(cujit_engine *engine);

/* Live-object tracking. cj_track sets link->destroy and adds it; cj_untrack removes it. */
void cj_track(cujit_engine *engine, cj_link *link, void (*destroy)(cj_link *));
void cj_untrack(cujit_engine *engine, cj_link *link);

/* A per-engine record of a higher layer (the device library's kernels and scratch buffers), found
** by `tag` (the address of something of that layer's, unique in the process). Made zeroed, of
** `size` bytes, on first use, when `init` runs (under the engine's lock: it must not fail or
** record); `destroy` runs at cujit_close, after every live object is gone, before it is freed.
** NULL when out of memory (recorded). */
void *cj_slot_get(cujit_engine *engine, const void *tag, size_t size,
                  void (*init)(void *state, cujit_engine *engine), void (*destroy)(void *state));
void cj_slots_free(cujit_engine *engine);

/* "512 bytes", "4.0 KiB", "1.5 GiB": sizes in messages. Returns buf. */
const char *cj_bytes_text(size_t bytes, char *buf, size_t len);

/* Milliseconds from a monotonic clock. */
double cj_now_ms(void);

/* Frees the error slots of every thread (cujit_close). */
void cj_errors_free(cujit_engine *engine);

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

#include "trace.h" /* NVTX ranges (trace.h), which every layer above may mark */

#endif
