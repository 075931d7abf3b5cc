/*
** larray.h -- device arrays (userdata cujit.device_array): cujit buffers with a dtype and a 1-3-D
** row-major shape, as the other files of the binding see them.
*/
#ifndef CUJIT_LARRAY_H
#define CUJIT_LARRAY_H

#include "lstate.h"

#define CJL_ARRAY "cujit.device_array"

typedef struct cjl_array {
  cujit_buffer *buffer;   /* NULL once freed; a view reads its base's instead */
  struct cjl_array *base; /* the array a view (reshape) shares memory with, or NULL */
  cjl_state *state;
  cujit_dtype dtype; /* CUJIT_DTYPE_NONE for untyped bytes pushed from C */
  int ndim;
  int owns; /* frees the buffer when released; 0 for views and buffers pushed from C */
  size_t shape[CJL_MAX_DIMS];
  size_t size;          /* elements */
  unsigned long synced; /* managed: state->launches when the host last waited for the device */
} cjl_array;

/* The device array at `idx` and its buffer; raises an argument error if it is not one or if it
** has been freed. `out` may be NULL. cjl_live_array gives the array itself. */
cujit_buffer *cjl_check_array(lua_State *L, int idx, cjl_array **out);
cjl_array *cjl_live_array(lua_State *L, int idx);

/* The device array at `idx`, or NULL if the value is something else. */
cjl_array *cjl_test_array(lua_State *L, int idx);

/* The buffer behind an array (its base's for a view); NULL once freed. */
cujit_buffer *cjl_array_buffer(const cjl_array *a);

/* The array's size in bytes. */
size_t cjl_array_bytes(const cjl_array *a);

/* Allocates a buffer on the current device and pushes it as a new device array. Raises on
** failure (no GPU, out of memory) with the engine's message. */
cjl_array *cjl_new_array(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape);
/* The same on `device` (NULL: the current device). */
cjl_array *cjl_new_array_on(lua_State *L, cujit_device *device, cujit_dtype dtype, int ndim,
                            const size_t *shape);

/* Raises with the engine's message when a call on the array's engine failed. */
void cjl_check_array_status(lua_State *L, const cjl_array *a, cujit_status status);

/* Pushes a device array around `buffer` (a view, managed or shareable buffer of the toolbox)
** with that dtype and shape; owns: frees the buffer with the array; keep_idx (0: none) is a value
** the array keeps alive (the array or program it views). */
cjl_array *cjl_wrap_buffer(lua_State *L, cujit_buffer *buffer, cujit_dtype dtype, int ndim,
                           const size_t *shape, int owns, int keep_idx);

/* Frees the array's buffer now if the array owns it; idempotent. */
void cjl_release_array(cjl_array *a);

/* Registers the device array class; adds cuda.device_array, cuda.zeros and cuda.full to the
** module table. */
void cjl_open_arrays(lua_State *L, int module_index);

#endif
