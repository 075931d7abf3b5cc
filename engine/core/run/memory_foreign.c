/*
** memory_foreign.c -- memory cujit did not allocate, and memory held past its buffer's free:
** cujit_buffer_wrap (a buffer of kind FOREIGN over another allocator's memory, checked by the
** backend's pointer_check, given back once through the caller's release), and the holds that a
** DLPack export (dlpack.c) keeps on a buffer's memory so that it outlives cujit_buffer_free until
** the consumer's deleter runs.
*/
#include "backend/backend.h"
#include "memory.h"

#include <pthread.h>
#include <stdlib.h>

/* --- holds ---------------------------------------------------------------------------------------
** One lock for every engine: a deleter may run on any thread after any engine's close, when no
** engine's lock is left to take, and holds come and go rarely (one per export). */

struct cj_hold {
  cujit_buffer *buffer; /* NULL once the buffer was destroyed (cujit_close, reset and free) */
  cj_hold *prev, *next;
};

static pthread_mutex_t holds_lock = PTHREAD_MUTEX_INITIALIZER;

cujit_status cj_buffer_hold(cujit_buffer *b, cj_hold **out) {
  cj_hold *h = calloc(1, sizeof *h);
  if (!h)
    return cj_fail(b->device->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "out of host memory exporting a buffer");
  pthread_mutex_lock(&holds_lock);
  h->buffer = b;
  h->next = b->holds;
  if (b->holds) b->holds->prev = h;
  b->holds = h;
  atomic_fetch_add(&b->exports, 1);
  pthread_mutex_unlock(&holds_lock);
  *out = h;
  return CUJIT_OK;
}

void cj_hold_drop(cj_hold *hold) {
  pthread_mutex_lock(&holds_lock);
  cujit_buffer *b = hold->buffer, *destroy = NULL;
  if (b) {
    if (hold->prev)
      hold->prev->next = hold->next;
    else
      b->holds = hold->next;
    if (hold->next) hold->next->prev = hold->prev;
    /* The freed flag is read before the count drops: once it is 0 a cujit_buffer_free on
    ** another thread may destroy the buffer without this lock. */
    int freed = b->freed;
    if (atomic_fetch_sub(&b->exports, 1) == 1 && freed) destroy = b;
  }
  pthread_mutex_unlock(&holds_lock);
  free(hold);
  if (destroy) {
    cj_untrack(destroy->device->engine, &destroy->link);
    cj_buffer_destroy(&destroy->link);
  }
}

int cj_buffer_free_held(cujit_buffer *b) {
  pthread_mutex_lock(&holds_lock);
  int held = atomic_load(&b->exports) > 0;
  if (held) {
    b->freed = 1;
    cj_buffer_detach(b); /* its views are lost now, as after any free */
  }
  pthread_mutex_unlock(&holds_lock);
  return held;
}

void cj_buffer_release_foreign(cujit_buffer *b) {
  if (b->holds) {
    pthread_mutex_lock(&holds_lock);
    for (cj_hold *h = b->holds; h; h = h->next) h->buffer = NULL;
    b->holds = NULL;
    pthread_mutex_unlock(&holds_lock);
  }
  if (b->kind != CJ_BUFFER_FOREIGN) return;
  /* The owner frees the memory in release: nothing queued may still use it. A lost or faulted
  ** device runs nothing more; the wait records nothing a later call would see. */
  cujit_device *device = b->device;
  if (cj_device_current(device, b->generation) && cj_device_enter_quiet(device))
    (void)device->ops->synchronize(device);
  if (b->release) b->release(b->release_user, b->ptr);
}

/* --- wrapping --------------------------------------------------------------------------------- */

static cujit_status check_wrap_args(cujit_engine *engine, const char *fn, uint64_t address,
                                    size_t bytes, cujit_dtype dtype) {
  if ((unsigned)dtype >= CUJIT_DTYPE_COUNT_)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %d is not a cujit_dtype; use CUJIT_F32, CUJIT_I32, ... or "
                   "CUJIT_DTYPE_NONE for raw bytes",
                   fn, (int)dtype);
  if (address == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the address is 0; pass the address of memory you allocated", fn);
  if (bytes == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: 0 bytes; a buffer holds at least one byte (one element)", fn);
  size_t elem = cujit_dtype_size(dtype);
  if (bytes % elem != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %zu bytes is not a whole number of %s elements (%zu bytes each); wrap a "
                   "multiple of %zu",
                   fn, bytes, cujit_dtype_name(dtype), elem, elem);
  if (address % elem != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: address 0x%llx is not aligned to %s elements (%zu bytes): a misaligned "
                   "pointer, on which a GPU faults; wrap from an aligned address",
                   fn, (unsigned long long)address, cujit_dtype_name(dtype), elem);
  return CUJIT_OK;
}

cujit_status cj_buffer_wrap(cujit_engine *engine, cujit_device *device, uint64_t address,
                            size_t bytes, cujit_dtype dtype, cujit_release_fn release, void *user,
                            const char *fn, cujit_buffer **out) {
  cujit_status st = cj_check_new(engine, out, fn, "cujit_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if ((st = check_wrap_args(engine, fn, address, bytes, dtype)) != CUJIT_OK) return st;
  cujit_buffer *b = NULL;
  if ((st = cj_new_on_current(engine, fn, "buffer", sizeof *b, &device, (void **)&b)) != CUJIT_OK)
    return st;
  if ((st = device->ops->pointer_check(device, address, bytes, fn)) != CUJIT_OK) {
    free(b);
    return st;
  }
  b->kind = CJ_BUFFER_FOREIGN;
  b->device = device;
  b->generation = __atomic_load_n(&device->generation, __ATOMIC_ACQUIRE);
  b->ptr = address;
  b->size = bytes;
  b->dtype = dtype;
  b->release = release;
  b->release_user = user;
  cj_track(engine, &b->link, cj_buffer_destroy);
  *out = b;
  return CUJIT_OK;
}

cujit_status cujit_buffer_wrap(cujit_engine *engine, uint64_t address, size_t bytes,
                               cujit_dtype dtype, cujit_release_fn release, void *user,
                               cujit_buffer **out) {
  return cj_buffer_wrap(engine, NULL, address, bytes, dtype, release, user, "cujit_buffer_wrap",
                        out);
}

cujit_status cujit_buffer_wrap_on(cujit_device *device, uint64_t address, size_t bytes,
                                  cujit_dtype dtype, cujit_release_fn release, void *user,
                                  cujit_buffer **out) {
  if (!device)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_buffer_wrap_on: device is NULL");
  return cj_buffer_wrap(device->engine, device, address, bytes, dtype, release, user,
                        "cujit_buffer_wrap_on", out);
}
