/*
** lcopy.c -- copies between Lua tables, host arrays and device arrays: cuda.to_device,
** cuda.to_device_async, a:copy_to, a:copy_from, a:copy_to_host(_async), a:totable, h:copy_from,
*h:to_device.
** Every copy reads its source through one dispatch (read_source), so the same source is checked
** the same way whatever the destination.
*/
#include "larray.h"
#include "lconv.h"
#include "lcopy.h"
#include "ldevice.h"
#include "lhost.h"
#include "lstream.h"

#include <string.h>

/* What a copy writes into: the dtype and shape of a device or host array. */
typedef struct copy_target {
  cujit_dtype dtype;
  int ndim;
  const size_t *shape;
  size_t size;
} copy_target;

/* What a copy reads: host memory (a table read into a scratch block, or a host array's elements,
** converted to the target's dtype when they differ), or a device buffer of the same dtype. */
typedef struct copy_source {
  const void *host;           /* NULL for a device source */
  const cujit_buffer *device; /* NULL for a host source */
  int keep; /* stack index of what an asynchronous copy must keep alive until the stream is done */
} copy_source;

/* Raises at `idx`: arrays copied as they are need one dtype and one element count. */
static void copy_mismatch(lua_State *L, int idx, const copy_target *from, const copy_target *to) {
  char from_type[64], to_type[64];
  cjl_format_type(from_type, sizeof from_type, from->dtype, from->ndim, from->shape);
  cjl_format_type(to_type, sizeof to_type, to->dtype, to->ndim, to->shape);
  luaL_argerror(L, idx,
                lua_pushfstring(L, "cannot copy %s into %s (same dtype and element count needed)",
                                from_type, to_type));
}

static void size_mismatch(lua_State *L, int idx, const char *what, size_t have, size_t want) {
  luaL_argerror(L, idx,
                lua_pushfstring(L, "%s has %I elements, the array %I", what, (lua_Integer)have,
                                (lua_Integer)want));
}

/* Reads the source argument at `idx` for a copy into `t`: a Lua table or a host array with as
** many elements (converted), or a device array with the same dtype and element count. */
static void read_source(lua_State *L, int idx, const copy_target *t, copy_source *src) {
  cjl_host *h;
  cjl_array *a;
  memset(src, 0, sizeof *src);
  if (lua_istable(L, idx)) {
    size_t shape[CJL_MAX_DIMS];
    int ndim;
    src->host = cjl_table_to_scratch(L, idx, t->dtype, &ndim, shape);
    src->keep = lua_gettop(L);
    if (cjl_shape_size(ndim, shape) != t->size)
      size_mismatch(L, idx, "table", cjl_shape_size(ndim, shape), t->size);
  } else if ((h = cjl_test_host(L, idx)) != NULL) {
    h = cjl_check_host(L, idx);
    if (h->size != t->size) size_mismatch(L, idx, "host array", h->size, t->size);
    src->host = cjl_host_as(L, idx, h, t->dtype);
    src->keep = src->host == cjl_host_data(h) ? idx : lua_gettop(L);
  } else if ((a = cjl_test_array(L, idx)) != NULL) {
    src->device = cjl_check_array(L, idx, &a);
    if (a->size != t->size || a->dtype != t->dtype)
      copy_mismatch(L, idx, &(copy_target){a->dtype, a->ndim, a->shape, a->size}, t);
  } else {
    luaL_argerror(L, idx,
                  lua_pushfstring(L,
                                  "table, cujit.host_array or cujit.device_array expected, got %s",
                                  luaL_typename(L, idx)));
  }
}

static copy_target array_target(const cjl_array *a) {
  return (copy_target){a->dtype, a->ndim, a->shape, a->size};
}

/* Copies the source at `src_idx` into device array a, on `stream` when given (argument
** `stream_idx`, which then keeps the host memory alive). */
static void copy_into_array(lua_State *L, cjl_array *a, int src_idx, cujit_stream *stream,
                            int stream_idx) {
  copy_target t = array_target(a);
  copy_source src;
  read_source(L, src_idx, &t, &src);
  cujit_buffer *dst = cjl_array_buffer(a);
  size_t nbytes = cjl_array_bytes(a);
  if (src.device) {
    cjl_check_array_status(L, a, cujit_memcpy_dtod(dst, 0, src.device, 0, nbytes, stream));
    return;
  }
  cjl_check_array_status(L, a, cujit_memcpy_htod(dst, 0, src.host, nbytes, stream));
  if (stream) cjl_stream_keep(L, stream_idx, src.keep);
}

/* cuda.to_device(x [, dtype] [, {device = d}]): x a Lua table (nested for 2-D/3-D; dtype
** required), a host array (dtype defaults to its own) or a device array (a copy with its own dtype,
** from any device); on the current device or d. */
static int l_to_device(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim;
  cujit_dtype dtype;
  cjl_host *h;
  cjl_array *a;
  cujit_device *device = NULL;
  if (lua_istable(L, 2) && !lua_istable(L, 1)) { /* the options in the dtype's place */
    device = cjl_opt_device_option(L, 2);
    lua_pushnil(L);
    lua_replace(L, 2);
  } else {
    device = cjl_opt_device_option(L, 3);
  }
  if (lua_istable(L, 1)) {
    if (lua_isnoneornil(L, 2))
      return luaL_argerror(L, 2,
                           "dtype expected: a Lua table has no element type (use 'f32', "
                           "'f64', 'i32', ...)");
    dtype = cjl_check_dtype(L, 2);
    const char *why = cjl_table_shape(L, 1, shape, &ndim);
    if (why) return luaL_argerror(L, 1, why);
  } else if ((h = cjl_test_host(L, 1)) != NULL) {
    h = cjl_check_host(L, 1);
    dtype = cjl_opt_dtype(L, 2, h->dtype);
    ndim = h->ndim;
    memcpy(shape, h->shape, sizeof shape);
  } else if ((a = cjl_test_array(L, 1)) != NULL) {
    a = cjl_live_array(L, 1);
    luaL_argcheck(L, lua_isnoneornil(L, 2) || cjl_check_dtype(L, 2) == a->dtype, 2,
                  "a device array is copied with its own dtype");
    dtype = a->dtype;
    ndim = a->ndim;
    memcpy(shape, a->shape, sizeof shape);
  } else {
    copy_target none = {CUJIT_F32, 1, shape, 0};
    copy_source unused;
    read_source(L, 1, &none, &unused); /* raises, naming what is accepted */
    return 0;
  }
  lua_settop(L, 1);
  cjl_array *copy = cjl_new_array_on(L, device, dtype, ndim, shape);
  copy_into_array(L, copy, 1, NULL, 0);
  lua_settop(L, 2);
  return 1;
}

/* a:copy_to(device [, stream]) -> a new array on `device` (an ordinal or "cpu") with a's dtype,
** shape and contents: a peer copy between GPUs, a host copy with the CPU device. The stream, of
** either device, makes it asynchronous. */
static int array_copy_to(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  cujit_device *device = cjl_check_device(L, 2);
  cujit_stream *stream = cjl_opt_stream(L, 3);
  cjl_array *b = cjl_new_array_on(L, device, a->dtype, a->ndim, a->shape);
  cjl_check_array_status(
      L, a, cujit_memcpy_dtod(b->buffer, 0, cjl_array_buffer(a), 0, cjl_array_bytes(a), stream));
  return 1;
}

/* cuda.to_device_async(host_array, stream) -> device array; the host array must not change
** until the stream is synchronized (the stream keeps it alive until then). */
static int l_to_device_async(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  luaL_argcheck(L, stream, 2, "cujit.stream expected (use cuda.to_device for a synchronous copy)");
  cjl_array *a = cjl_new_array(L, h->dtype, h->ndim, h->shape);
  cjl_check_array_status(
      L, a, cujit_memcpy_htod(a->buffer, 0, cjl_host_data(h), cjl_array_bytes(a), stream));
  cjl_stream_keep(L, 2, 1);
  return 1;
}

/* a:copy_to_host([host_array]) -> host array (a new one, or the one given, which must have as
** many elements and the same dtype). */
static cjl_host *target_host(lua_State *L, cjl_array *a, int idx, int pinned) {
  if (lua_isnoneornil(L, idx)) {
    cujit_dtype dtype = a->dtype == CUJIT_DTYPE_NONE ? CUJIT_U8 : a->dtype;
    cjl_host *h = cjl_push_host(L, dtype, a->ndim, a->shape, pinned);
    return h;
  }
  cjl_host *h = cjl_check_host(L, idx);
  if (h->size != a->size || cjl_elem_size(h->dtype) != cjl_elem_size(a->dtype) ||
      (a->dtype != CUJIT_DTYPE_NONE && h->dtype != a->dtype))
    copy_mismatch(L, idx, &(copy_target){a->dtype, a->ndim, a->shape, a->size},
                  &(copy_target){h->dtype, h->ndim, h->shape, h->size});
  lua_pushvalue(L, idx);
  return h;
}

static int array_copy_to_host(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  cjl_host *h = target_host(L, a, 2, 0);
  cjl_check_array_status(
      L, a, cujit_memcpy_dtoh(cjl_host_data(h), cjl_array_buffer(a), 0, cjl_array_bytes(a), NULL));
  return 1;
}

/* a:copy_to_host_async(stream [, host_array]) -> host array (pinned when made here); read it
** only after the stream is synchronized. */
static int array_copy_to_host_async(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  luaL_argcheck(L, stream, 2,
                "cujit.stream expected (use a:copy_to_host() for a synchronous copy)");
  cjl_host *h = target_host(L, a, 3, 1);
  cjl_check_array_status(
      L, a,
      cujit_memcpy_dtoh(cjl_host_data(h), cjl_array_buffer(a), 0, cjl_array_bytes(a), stream));
  cjl_stream_keep(L, 2, -1);
  return 1;
}

/* a:totable() -> Lua table, nested by shape. */
static int array_totable(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  void *data = cjl_scratch(L, cjl_array_bytes(a));
  cjl_check_array_status(L, a,
                         cujit_memcpy_dtoh(data, cjl_array_buffer(a), 0, cjl_array_bytes(a), NULL));
  cjl_push_table(L, a->dtype, a->ndim, a->shape, data);
  return 1;
}

/* a:copy_from(x [, stream]): x a device array, host array or Lua table with as many elements
** (and, for a device array, the same dtype). Returns a. */
static int array_copy_from(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 3);
  copy_into_array(L, a, 2, stream, 3);
  lua_settop(L, 1);
  return 1;
}

/* h:copy_from(x): x a table, host array or device array with as many elements. Returns h. */
static int host_copy_from(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  copy_target t = {h->dtype, h->ndim, h->shape, h->size};
  copy_source src;
  read_source(L, 2, &t, &src);
  size_t nbytes = h->size * cjl_elem_size(h->dtype);
  if (src.device) {
    if (cujit_memcpy_dtoh(cjl_host_data(h), src.device, 0, nbytes, NULL) != CUJIT_OK)
      return cjl_error(L, h->state->engine);
  } else {
    memmove(cjl_host_data(h), src.host, nbytes); /* a view of the same memory may overlap */
  }
  lua_settop(L, 1);
  return 1;
}

/* h:to_device() -> device array with h's dtype, shape and contents. */
static int host_to_device(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  lua_settop(L, 1);
  cjl_array *a = cjl_new_array(L, h->dtype, h->ndim, h->shape);
  copy_into_array(L, a, 1, NULL, 0);
  lua_settop(L, 2);
  return 1;
}

static const luaL_Reg array_methods[] = {{"copy_to", array_copy_to},
                                         {"copy_to_host", array_copy_to_host},
                                         {"copy_to_host_async", array_copy_to_host_async},
                                         {"totable", array_totable},
                                         {"copy_from", array_copy_from},
                                         {NULL, NULL}};
static const luaL_Reg host_methods[] = {
    {"copy_from", host_copy_from}, {"to_device", host_to_device}, {NULL, NULL}};
static const luaL_Reg module_functions[] = {
    {"to_device", l_to_device}, {"to_device_async", l_to_device_async}, {NULL, NULL}};

void cjl_open_copies(lua_State *L, int module_index) {
  cjl_add_methods(L, CJL_ARRAY, array_methods);
  cjl_add_methods(L, CJL_HOST, host_methods);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
