/*
** engine.c -- the top of the core: cujit_open makes an engine and opens what it owns (the cache,
** the map of loaded programs); cujit_close frees every live object, then closes those, releases
** the devices and the driver. Everything else is in the layers below (docs/ARCHITECTURE.md).
*/
#include "compile/cache.h"
#include "compile/kept.h"
#include "compile/remote.h"
#include "run/device.h"
#include "program/program.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static atomic_ulong next_engine_id = 1;

/* CUJIT_DEVICE: an ordinal, "cpu", or anything else, which the first use of the current device
** reports (device.c). */
#define BAD_ENV_DEVICE (-2)

static int env_device(void) {
  const char *v = getenv("CUJIT_DEVICE");
  if (!v || !*v) return 0;
  if (strcmp(v, "cpu") == 0) return CUJIT_DEVICE_CPU;
  if (strspn(v, "0123456789") != strlen(v) || strlen(v) > 4) return BAD_ENV_DEVICE; /* " 1", "+1" */
  long n = strtol(v, NULL, 10);
  return n > 1024 ? BAD_ENV_DEVICE : (int)n;
}

cujit_status cujit_open(cujit_engine **out) {
  if (!out) return CUJIT_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  cujit_engine *e = calloc(1, sizeof *e);
  if (!e) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  pthread_mutex_init(&e->lock, NULL);
  pthread_mutex_init(&e->table_lock, NULL);
  pthread_mutex_init(&e->streams_lock, NULL);
  pthread_mutex_init(&e->drv_lock, NULL);
  e->id = atomic_fetch_add(&next_engine_id, 1);
  e->device_count = -1;
  e->current_device = env_device();
  /* warn_fn NULL: warnings go to stderr (cj_warn) */
  e->live.next = e->live.prev = &e->live;
  e->programs = cj_program_map_open();
  e->cache = e->programs ? cj_cache_open(e) : NULL;
  e->remote = e->cache ? cj_remote_open() : NULL; /* NULL: no worker processes, nothing worse */
  if (!e->cache) {
    cj_program_map_close(e->programs);
    pthread_mutex_destroy(&e->drv_lock);
    pthread_mutex_destroy(&e->streams_lock);
    pthread_mutex_destroy(&e->table_lock);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  cj_trace_open(e); /* the first engine attaches to a profiler, if one is there */
  *out = e;
  return CUJIT_OK;
}

void cujit_close(cujit_engine *engine) {
  if (!engine) return;
  cj_driver_join(engine); /* a driver starting on a thread of its own (base.h) */
  /* the caller's context back before the driver, which would put it back, is closed */
  cj_backend_scope_open();
  /* Newest first, so kernels go before the programs they hold and buffers before devices. */
  while (engine->live.next != &engine->live) {
    cj_link *l = engine->live.next;
    cj_untrack(engine, l);
    l->destroy(l);
  }
  cj_slots_free(engine);
  cj_program_map_close(engine->programs); /* unloads the programs from the devices */
  cj_kept_close(engine); /* before the cache: a private directory of kept sources goes */
  cj_cache_close(engine->cache);
  cj_remote_close(engine->remote); /* its workers end with it */
  cj_devices_release(engine);
  cj_backend_scope_close();
  if (engine->drv_state == 1) cj_driver_close(&engine->drv);
  if (engine->nvrtc_state == 1) cj_nvrtc_close(&engine->nvrtc);
  cj_errors_free(engine);
  pthread_mutex_destroy(&engine->drv_lock);
  pthread_mutex_destroy(&engine->streams_lock);
  pthread_mutex_destroy(&engine->table_lock);
  pthread_mutex_destroy(&engine->lock);
  free(engine);
}
