/*
** lmanaged.c -- memory the host and the device share, and memory shared between processes, from
** Lua. cuda.managed_array(shape [, dtype]) is a device array the host indexes in place (a[i],
** larray.c), a:prefetch("device" | "host" [, stream]) and a:advise(what) steer its migrations;
** h:mapped() is a device view of a pinned host array (zero copy) and cuda.register(h) pins a
** plain one; cuda.shareable_array, a:ipc_handle() and cuda.ipc_open(text [, shape]) share device
** memory with another process, cuda.shareable_event, e:ipc_handle() and cuda.ipc_open_event(text)
** an event.
*/
#include "larray.h"
#include "lconv.h"
#include "lhost.h"
#include "lmanaged.h"
#include "lstream.h"

#include <string.h>

/* A new array of a toolbox kind (managed or shareable) on the current device. */
static int new_special_array(lua_State *L, cujit_status (*alloc)(cujit_engine *, size_t,
                                                                 cujit_dtype, cujit_buffer **)) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_dtype dtype = cjl_opt_dtype(L, 2, CUJIT_F32);
  cujit_engine *e = cjl_engine(L);
  cujit_buffer *b = NULL;
  /* The userdata first, so that the buffer always has an owner the collector will see. */
  cjl_array *a = cjl_wrap_buffer(L, NULL, dtype, ndim, shape, 1, 0);
  cjl_check(L, e, alloc(e, cjl_shape_size(ndim, shape) * cjl_elem_size(dtype), dtype, &b));
  a->buffer = b;
  return 1;
}

/* cuda.managed_array(shape [, dtype]) -> device array in managed memory, zeroed. */
static int l_managed_array(lua_State *L) {
  new_special_array(L, cujit_buffer_alloc_managed);
  cjl_array *a = lua_touserdata(L, -1);
  cjl_check_array_status(L, a, cujit_memset(a->buffer, 0, 0, cjl_array_bytes(a), NULL));
  return 1;
}

/* a:prefetch([where [, stream]]): where is "device" (default) or "host". */
static int array_prefetch(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  static const char *const where[] = {"device", "host", NULL};
  int to_host = luaL_checkoption(L, 2, "device", where);
  cujit_stream *stream = cjl_opt_stream(L, 3);
  cjl_check_array_status(L, a, cujit_buffer_prefetch(cjl_array_buffer(a), to_host, stream));
  lua_settop(L, 1);
  return 1;
}

/* a:advise(what): "read_mostly", "preferred_device", "preferred_host", "accessed_by", or one of
** "unset_read_mostly", "unset_preferred", "unset_accessed_by". */
static int array_advise(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  static const char *const advice[] = {
      "read_mostly",       "preferred_device", "preferred_host",    "accessed_by",
      "unset_read_mostly", "unset_preferred",  "unset_accessed_by", NULL};
  int which = luaL_checkoption(L, 2, NULL, advice);
  cjl_check_array_status(L, a, cujit_buffer_advise(cjl_array_buffer(a), (cujit_advice)which));
  lua_settop(L, 1);
  return 1;
}

/* h:mapped() -> a device array over the pinned host array's memory (zero copy). */
static int host_mapped(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  cjl_host *owner = h->base ? h->base : h;
  if (!owner->pinned)
    return luaL_error(L, "h:mapped() needs pinned memory: make it with cuda.host_array(shape, "
                         "dtype, {mapped = true}), or pin this one with cuda.register(h)");
  cujit_engine *e = cjl_engine(L);
  cujit_buffer *view = NULL;
  cjl_check(L, e, cujit_host_map(owner->pinned, h->dtype, &view));
  cjl_wrap_buffer(L, view, h->dtype, h->ndim, h->shape, 1, 1);
  return 1;
}

/* cuda.register(h) -> h, its memory page-locked and mappable; h:free() or collection undoes it. */
static int l_register(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  if (h->base) return luaL_error(L, "cuda.register: register the array itself, not a reshape view");
  if (h->pinned) return luaL_error(L, "cuda.register: the host array is already pinned");
  cujit_engine *e = cjl_engine(L);
  cjl_check(L, e, cujit_host_register(e, h->data, h->size * cjl_elem_size(h->dtype), &h->pinned));
  lua_settop(L, 1);
  return 1;
}

/* --- sharing between processes ---------------------------------------------------------------- */

static int l_shareable_array(lua_State *L) {
  return new_special_array(L, cujit_buffer_alloc_shareable);
}

static int array_ipc_handle(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  char text[CUJIT_IPC_HANDLE_MAX];
  cjl_check_array_status(L, a, cujit_buffer_ipc_handle(cjl_array_buffer(a), text));
  lua_pushstring(L, text);
  return 1;
}

/* cuda.ipc_open(text [, shape]) -> a device array over another process's memory (1-D unless a
** shape of the same size is given). */
static int l_ipc_open(lua_State *L) {
  const char *text = cjl_check_text(L, 1, "the IPC handle");
  lua_settop(L, 2); /* the shape (or nil) stays at 2, below the new array */
  cujit_engine *e = cjl_engine(L);
  cjl_array *a = cjl_wrap_buffer(L, NULL, CUJIT_U8, 1, (size_t[]){1}, 1, 0);
  cjl_check(L, e, cujit_buffer_ipc_open(e, text, &a->buffer));
  cujit_dtype dtype = cujit_buffer_dtype(a->buffer);
  a->dtype = dtype == CUJIT_DTYPE_NONE ? CUJIT_U8 : dtype;
  size_t n = cujit_buffer_size(a->buffer) / cjl_elem_size(a->dtype), shape[CJL_MAX_DIMS] = {n};
  int ndim = 1;
  if (!lua_isnoneornil(L, 2)) {
    ndim = cjl_check_shape(L, 2, shape);
    if (cjl_shape_size(ndim, shape) != n)
      return luaL_error(L, "cuda.ipc_open: the shape given holds %d elements, the memory %d",
                        (int)cjl_shape_size(ndim, shape), (int)n);
  }
  cjl_set_shape(&a->ndim, a->shape, &a->size, ndim, shape);
  return 1;
}

static int l_shareable_event(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cjl_check(L, e, cujit_event_create_shareable(e, cjl_new_event(L)));
  return 1;
}

static int event_ipc_handle(lua_State *L) {
  cujit_event *ev = cjl_check_event(L, 1);
  char text[CUJIT_IPC_HANDLE_MAX];
  cjl_check(L, cjl_engine(L), cujit_event_ipc_handle(ev, text));
  lua_pushstring(L, text);
  return 1;
}

static int l_ipc_open_event(lua_State *L) {
  const char *text = cjl_check_text(L, 1, "the IPC handle");
  cujit_engine *e = cjl_engine(L);
  cjl_check(L, e, cujit_event_ipc_open(e, text, cjl_new_event(L)));
  return 1;
}

static const luaL_Reg array_methods[] = {{"prefetch", array_prefetch},
                                         {"advise", array_advise},
                                         {"ipc_handle", array_ipc_handle},
                                         {NULL, NULL}};
static const luaL_Reg host_methods[] = {{"mapped", host_mapped}, {NULL, NULL}};
static const luaL_Reg event_methods[] = {{"ipc_handle", event_ipc_handle}, {NULL, NULL}};
static const luaL_Reg module_functions[] = {{"managed_array", l_managed_array},
                                            {"register", l_register},
                                            {"shareable_array", l_shareable_array},
                                            {"ipc_open", l_ipc_open},
                                            {"shareable_event", l_shareable_event},
                                            {"ipc_open_event", l_ipc_open_event},
                                            {NULL, NULL}};

void cjl_open_managed(lua_State *L, int module_index) {
  cjl_add_methods(L, CJL_ARRAY, array_methods);
  cjl_add_methods(L, CJL_HOST, host_methods);
  cjl_add_methods(L, CJL_EVENT, event_methods);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
