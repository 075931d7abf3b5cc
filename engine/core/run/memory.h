/*
** memory.h -- device buffers and host buffers over the backend seam, with the copies and fills
** between them. Internal.
*/
#ifndef CUJIT_MEMORY_H
#define CUJIT_MEMORY_H

#include "stream.h"

struct cujit_buffer {
  cj_link link;
  cujit_device *device;
  unsigned generation;
  uint64_t ptr; /* the device address */
  size_t size;
  cujit_dtype dtype;
  /* Issue 16 (memory_view.c): what the memory is, and views. A view (also of a host buffer, or a
  ** program's global) owns no memory; `owner` is the head of its owner's list of views, and the
  ** owner's free marks each view orphaned, which then reads as lost with its own message. */
  unsigned char kind;         /* cj_buffer_kind; CJ_BUFFER_DEVICE is 0 */
  unsigned char orphaned;     /* a view whose owner was freed */
  unsigned char host_visible; /* CJ_HOST_MANAGED or _MAPPED: the host may use ptr directly */
  cujit_buffer **owner;       /* a view's owner's list head, NULL once orphaned or with none */
  cujit_buffer *views, *next_view;
  uint64_t root_ptr; /* a cujit_buffer_view's: its owner's address, so messages can count from it */
};

typedef enum cj_buffer_kind {
  CJ_BUFFER_DEVICE,    /* ops->alloc */
  CJ_BUFFER_VIEW,      /* memory of a buffer, a host buffer or a program: frees nothing */
  CJ_BUFFER_MANAGED,   /* ops->managed_alloc */
  CJ_BUFFER_SHAREABLE, /* ops->shareable_alloc: exportable to other processes */
  CJ_BUFFER_OPENED,    /* ops->ipc_open: another process's memory */
} cj_buffer_kind;

enum { CJ_HOST_MANAGED = 1, CJ_HOST_MAPPED = 2 }; /* cujit_buffer.host_visible */

/* Host memory the backend allocated (pinned on CUDA), which belongs to the device's context: a
** reset of that device frees it too, and the buffer then reads as lost (cujit_host_ptr: NULL). */
struct cujit_host_buffer {
  cj_link link;
  cujit_engine *engine;
  void *ptr;
  size_t size;
  cujit_device *device;
  unsigned generation;
  int registered;      /* cujit_host_register's: unregistered, not freed */
  cujit_buffer *views; /* cujit_host_map's views of it */
};

/* A buffer of `kind` (DEVICE, MANAGED or SHAREABLE) on the current device; `fn` names the call. */
cujit_status cj_buffer_alloc_kind(cujit_engine *engine, size_t bytes, cujit_dtype dtype,
                                  cj_buffer_kind kind, const char *fn, cujit_buffer **out);

/* The live list's destructors of buffers (every kind) and host buffers (allocated or
** registered), memory.c's. */
void cj_buffer_destroy(cj_link *link);
void cj_host_destroy(cj_link *link);

/* memory_view.c: a view's new record on `owner_list`, and what memory.c's destroy calls. */
cujit_status cj_buffer_new_view(cujit_engine *engine, cujit_device *device, unsigned generation,
                                uint64_t ptr, size_t bytes, cujit_dtype dtype,
                                cujit_buffer **owner_list, cujit_buffer **out);
/* Unlinks a view from its owner and orphans the buffer's own views. */
void cj_buffer_detach(cujit_buffer *b);
/* Orphans every view of a list (a host buffer's at its free). */
void cj_buffer_orphan_views(cujit_buffer **views);
/* Frees the memory of a kind other than DEVICE and VIEW (the device entered). */
void cj_buffer_release_special(cujit_buffer *b);
/* "the buffer is a view of memory that has been freed; ..." as an INVALID_ARGUMENT for `fn`. */
cujit_status cj_buffer_orphan_error(cujit_engine *engine, const char *fn);

#endif
