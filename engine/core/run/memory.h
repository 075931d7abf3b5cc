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
  /* Issue 24 (memory_foreign.c): a cujit_buffer_view's owner when that is a buffer (a DLPack
  ** export of the view holds it); valid while the view is not orphaned. */
  cujit_buffer *root;
  /* CJ_BUFFER_FOREIGN: called once when the buffer is destroyed. */
  cujit_release_fn release;
  void *release_user;
  /* DLPack exports alive (memory_foreign.c's lock): while any is, cujit_buffer_free only marks
  ** the handle `freed` and the last export's deleter destroys the buffer. */
  _Atomic int exports;
  struct cj_hold *holds; /* those exports' records, a list */
  unsigned char freed;
};

typedef enum cj_buffer_kind {
  CJ_BUFFER_DEVICE,    /* ops->alloc */
  CJ_BUFFER_VIEW,      /* memory of a buffer, a host buffer or a program: frees nothing */
  CJ_BUFFER_MANAGED,   /* ops->managed_alloc */
  CJ_BUFFER_SHAREABLE, /* ops->shareable_alloc: exportable to other processes */
  CJ_BUFFER_OPENED,    /* ops->ipc_open: another process's memory */
  CJ_BUFFER_FOREIGN,   /* cujit_buffer_wrap: another allocator's memory, given back by `release` */
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
/* memory_foreign.c: cujit_buffer_free's way when DLPack exports hold the buffer: 1 when they
** do (the handle is then marked freed, its views orphaned, the memory kept), 0 when the caller
** destroys it now. */
int cj_buffer_free_held(cujit_buffer *b);
/* cujit_buffer_wrap's work on `device` (NULL: the current device), `fn` naming the call. */
cujit_status cj_buffer_wrap(cujit_engine *engine, cujit_device *device, uint64_t address,
                            size_t bytes, cujit_dtype dtype, cujit_release_fn release, void *user,
                            const char *fn, cujit_buffer **out);
/* At destroy: exports still alive no longer reach the buffer; a foreign buffer's release runs. */
void cj_buffer_release_foreign(cujit_buffer *b);

/* A DLPack export's hold on the memory of `b` (not a view: the buffer a view views), made by
** cj_buffer_hold and dropped once by cj_hold_drop (any thread), which destroys the buffer when it
** was freed and this was the last hold. After cujit_close or the buffer's destroy the hold reaches
** nothing and dropping it frees only the record. */
typedef struct cj_hold cj_hold;
cujit_status cj_buffer_hold(cujit_buffer *b, cj_hold **out);
void cj_hold_drop(cj_hold *hold);

/* "the buffer is a view of memory that has been freed; ..." as an INVALID_ARGUMENT for `fn`. */
cujit_status cj_buffer_orphan_error(cujit_engine *engine, const char *fn);

#endif
