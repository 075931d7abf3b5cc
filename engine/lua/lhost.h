/*
** lhost.h -- host arrays (userdata cujit.host_array): typed C memory indexed from 1, optionally
** pinned, as the other files of the binding see them.
*/
#ifndef CUJIT_LHOST_H
#define CUJIT_LHOST_H

#include "lstate.h"

#define CJL_HOST "cujit.host_array"

typedef struct cjl_host {
  void *data;                /* NULL once freed; a view reads its base's instead */
  cujit_host_buffer *pinned; /* the page-locked allocation, when pinned */
  struct cjl_host *base;     /* the array a view (reshape) shares memory with, or NULL */
  cjl_state *state;
  cujit_dtype dtype;
  int ndim;
  size_t shape[CJL_MAX_DIMS];
  size_t size; /* elements */
} cjl_host;

/* Pushes a new zeroed host array (pinned through cujit_host_alloc when asked). */
cjl_host *cjl_push_host(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape, int pinned);

/* The host array at `idx` (raises if it is not one, or was freed), or NULL from cjl_test_host. */
cjl_host *cjl_check_host(lua_State *L, int idx);
cjl_host *cjl_test_host(lua_State *L, int idx);

/* The memory of a host array (its base's for a view); NULL once freed. */
void *cjl_host_data(const cjl_host *h);

/* The elements of the host array at `idx` as `dtype`: its own memory, or a converted scratch
** copy (pushed; nothing is pushed when no conversion is needed). */
const void *cjl_host_as(lua_State *L, int idx, cjl_host *h, cujit_dtype dtype);

/* Registers the host array class; adds cuda.host_array and cuda.array to the module table. */
void cjl_open_hosts(lua_State *L, int module_index);

#endif
