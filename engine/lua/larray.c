/*
** larray.c -- device arrays from Lua: cujit buffers with a dtype and a 1-3-D row-major shape;
** cuda.device_array, cuda.zeros, cuda.full, a:fill, a:copy, a:reshape, fields and finalizers, and
** buffers handed over from C (cujit_lua_push_buffer). Copies to and from the host are lcopy.c's.
*/
#include "cujit_lua.h"
#include "larray.h"
#include "lconv.h"
#include "ldevice.h"

#include <string.h>

#define FILL_CHUNK ((size_t)1 << 20)

cjl_array *cjl_test_array(lua_State *L, int idx) {
  return luaL_testudata(L, idx, CJL_ARRAY);
}

cujit_buffer *cjl_array_buffer(const cjl_array *a) {
  return a->base ? a->base->buffer : a->buffer;
}

cujit_buffer *cjl_check_array(lua_State *L, int idx, cjl_array **out) {
  cjl_array *a = cjl_test_array(L, idx);
  if (!a) luaL_typeerror(L, idx, CJL_ARRAY); /* names the value by its class's __name */
  cujit_buffer *b = cjl_array_buffer(a);
  if (!b) luaL_argerror(L, idx, "device array has been freed");
  if (out) *out = a;
  return b;
}

cjl_array *cjl_live_array(lua_State *L, int idx) {
  cjl_array *a;
  cjl_check_array(L, idx, &a);
  return a;
}

static cjl_array *new_array_object(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape) {
  cjl_array *a = lua_newuserdatauv(L, sizeof *a, 1);
  memset(a, 0, sizeof *a);
  a->state = cjl_state_of(L);
  a->dtype = dtype;
  cjl_set_shape(&a->ndim, a->shape, &a->size, ndim, shape);
  luaL_setmetatable(L, CJL_ARRAY);
  return a;
}

cjl_array *cjl_new_array_on(lua_State *L, cujit_device *device, cujit_dtype dtype, int ndim,
                            const size_t *shape) {
  cujit_engine *e = cjl_engine(L);
  /* The userdata first, so that the buffer always has an owner that the collector will see. */
  cjl_array *a = new_array_object(L, dtype, ndim, shape);
  a->owns = 1;
  size_t bytes = a->size * cjl_elem_size(dtype);
  if ((device ? cujit_buffer_alloc_on(device, bytes, dtype, &a->buffer)
              : cujit_buffer_alloc(e, bytes, dtype, &a->buffer)) != CUJIT_OK)
    cjl_error(L, e);
  return a;
}

cjl_array *cjl_wrap_buffer(lua_State *L, cujit_buffer *buffer, cujit_dtype dtype, int ndim,
                           const size_t *shape, int owns, int keep_idx) {
  if (keep_idx) keep_idx = lua_absindex(L, keep_idx);
  cjl_array *a = new_array_object(L, dtype, ndim, shape);
  a->buffer = buffer;
  a->owns = owns;
  if (keep_idx) {
    lua_pushvalue(L, keep_idx);
    lua_setiuservalue(L, -2, 1);
  }
  return a;
}

cjl_array *cjl_new_array(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape) {
  return cjl_new_array_on(L, NULL, dtype, ndim, shape);
}

/* The dtype at `idx` (default f32) and the options table ({device = ...}) after it, or the
** options table at `idx` itself when the dtype is left out. */
static cujit_dtype dtype_and_device(lua_State *L, int idx, cujit_device **device) {
  if (lua_istable(L, idx)) {
    *device = cjl_opt_device_option(L, idx);
    return CUJIT_F32;
  }
  *device = cjl_opt_device_option(L, idx + 1);
  return cjl_opt_dtype(L, idx, CUJIT_F32);
}

void cjl_release_array(cjl_array *a) {
  if (a->owns && a->buffer && !a->state->closed) cujit_buffer_free(a->buffer);
  a->buffer = NULL;
  a->base = NULL;
}

size_t cjl_array_bytes(const cjl_array *a) {
  return a->size * cjl_elem_size(a->dtype);
}

void cjl_check_array_status(lua_State *L, const cjl_array *a, cujit_status status) {
  if (status != CUJIT_OK) cjl_error(L, a->state->engine);
}

/* Fills the array with one value, by memset when all its bytes are equal, else by copying a
** chunk of repeated elements. */
static void fill_array(lua_State *L, cjl_array *a, int value_idx) {
  unsigned char elem[8];
  size_t esize = cjl_elem_size(a->dtype), nbytes = cjl_array_bytes(a);
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, value_idx, a->dtype, &v);
  if (why) luaL_argerror(L, value_idx, why);
  cjl_store(a->dtype, v, elem);
  int uniform = 1;
  for (size_t i = 1; i < esize; i++) uniform &= elem[i] == elem[0];
  cujit_buffer *b = cjl_array_buffer(a);
  if (uniform) {
    cjl_check_array_status(L, a, cujit_memset(b, 0, elem[0], nbytes, NULL));
    return;
  }
  size_t chunk = nbytes < FILL_CHUNK ? nbytes : FILL_CHUNK / esize * esize;
  unsigned char *block = cjl_scratch(L, chunk);
  for (size_t i = 0; i < chunk; i += esize) memcpy(block + i, elem, esize);
  for (size_t off = 0; off < nbytes; off += chunk) {
    size_t n = nbytes - off < chunk ? nbytes - off : chunk;
    cjl_check_array_status(L, a, cujit_memcpy_htod(b, off, block, n, NULL));
  }
  lua_pop(L, 1);
}

/* cuda.device_array(shape [, dtype] [, {device = d}]) -> uninitialized device array (dtype
** default f32) on the current device or d. */
static int l_device_array(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_device *device;
  cujit_dtype dtype = dtype_and_device(L, 2, &device);
  cjl_new_array_on(L, device, dtype, ndim, shape);
  return 1;
}

static int l_zeros(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_device *device;
  cujit_dtype dtype = dtype_and_device(L, 2, &device);
  cjl_array *a = cjl_new_array_on(L, device, dtype, ndim, shape);
  cjl_check_array_status(L, a, cujit_memset(a->buffer, 0, 0, cjl_array_bytes(a), NULL));
  return 1;
}

/* cuda.full(shape, value [, dtype]) */
static int l_full(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_device *device;
  cujit_dtype dtype = dtype_and_device(L, 3, &device);
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, 2, dtype, &v); /* before allocating */
  if (why) luaL_argerror(L, 2, why);
  cjl_array *a = cjl_new_array_on(L, device, dtype, ndim, shape);
  fill_array(L, a, 2);
  return 1;
}

/* a:copy() -> a new device array with the same contents. */
static int array_copy(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  cjl_array *b =
      cjl_new_array_on(L, cujit_buffer_device(cjl_array_buffer(a)), a->dtype, a->ndim, a->shape);
  cjl_check_array_status(
      L, a, cujit_memcpy_dtod(b->buffer, 0, cjl_array_buffer(a), 0, cjl_array_bytes(a), NULL));
  return 1;
}

static int array_fill(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  fill_array(L, a, 2);
  lua_settop(L, 1);
  return 1;
}

/* a:reshape(d1 [, d2 [, d3]]) or a:reshape{...} -> a view sharing a's memory. */
static int array_reshape(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_reshape_args(L, 2, a->size, shape);
  cjl_array *view = new_array_object(L, a->dtype, ndim, shape);
  view->base = a->base ? a->base : a;
  if (a->base)
    lua_getiuservalue(L, 1, 1); /* keep the base alive, not the view in between */
  else
    lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int array_free(lua_State *L) {
  cjl_release_array(luaL_checkudata(L, 1, CJL_ARRAY));
  return 0;
}

static int array_devptr(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  lua_pushinteger(L, (lua_Integer)cujit_buffer_devptr(cjl_array_buffer(a)));
  return 1;
}

static int array_len(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  lua_pushinteger(L, (lua_Integer)a->size);
  return 1;
}

/* 1 when an array the view at `idx` was made from (its kept uservalue, and so on up) has been
** freed: the view's memory is gone with it, which is no device reset. */
static int parent_freed(lua_State *L, int idx) {
  int freed = 0, depth = 0;
  lua_pushvalue(L, idx);
  while (!freed && depth < 64 && lua_getiuservalue(L, -1, 1) == LUA_TUSERDATA) {
    cjl_array *up = cjl_test_array(L, -1);
    if (!up) break;
    freed = cjl_array_buffer(up) == NULL;
    lua_remove(L, -2);
    depth++;
  }
  lua_pop(L, 2);
  return freed;
}

static int array_tostring(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  cujit_buffer *b = cjl_array_buffer(a);
  char type[80];
  cjl_format_type(type, sizeof type, a->dtype, a->ndim, a->shape);
  if (!b)
    lua_pushfstring(L, "cujit.device_array %s (freed)", type);
  else if (cujit_buffer_devptr(b) == 0 && parent_freed(L, 1))
    lua_pushfstring(L, "cujit.device_array %s (a view of an array that was freed)", type);
  else if (cujit_buffer_devptr(b) == 0)
    lua_pushfstring(L, "cujit.device_array %s (lost: its device was reset)", type);
  else if (cujit_device_ordinal(cujit_buffer_device(b)) == CUJIT_DEVICE_CPU)
    lua_pushfstring(L, "cujit.device_array %s on the CPU device", type);
  else
    lua_pushfstring(L, "cujit.device_array %s on device %d", type,
                    cujit_device_ordinal(cujit_buffer_device(b)));
  return 1;
}

/* a[i] (and a[i] = v) of managed memory (or mapped host memory), read and written by the host in
** place. After a launch from Lua the device's queued work is waited for first, once, so the host
** never races a kernel over the array (a kernel's fault is then raised here). */
static int host_visible_element(lua_State *L, cjl_array *a, int store) {
  cujit_buffer *b = cjl_array_buffer(a);
  char *host = b ? cujit_buffer_host_ptr(b) : NULL;
  if (!host)
    return luaL_error(L, b ? "device arrays are not indexed from Lua: copy to the host first "
                             "(a:copy_to_host() or a:totable()), or allocate it with "
                             "cuda.managed_array"
                           : "device array has been freed or lost");
  int exact = 0;
  lua_Integer i = lua_tointegerx(L, 2, &exact);
  if (!exact || i < 1 || (size_t)i > a->size)
    return luaL_error(L, "index %s is outside the managed array's 1..%d",
                      luaL_tolstring(L, 2, NULL), (int)a->size);
  if (a->synced != a->state->launches) {
    cjl_check_array_status(L, a, cujit_device_synchronize(cujit_buffer_device(b)));
    a->synced = a->state->launches;
  }
  size_t esize = cjl_elem_size(a->dtype);
  if (!store) {
    cjl_push_element(L, a->dtype, host + (size_t)(i - 1) * esize);
    return 1;
  }
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, 3, a->dtype, &v);
  if (why) return luaL_error(L, "cannot store into managed array at %d: %s", (int)i, why);
  cjl_store(a->dtype, v, host + (size_t)(i - 1) * esize);
  return 0;
}

static int array_newindex(lua_State *L) {
  return host_visible_element(L, luaL_checkudata(L, 1, CJL_ARRAY), 1);
}

/* Fields of a device array: methods first, then shape, dtype, size, ndim, nbytes, device. */
static int array_index(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  if (lua_type(L, 2) != LUA_TSTRING) return host_visible_element(L, a, 0);
  const char *key = lua_tostring(L, 2);
  if (lua_getfield(L, lua_upvalueindex(1), key) != LUA_TNIL) return 1;
  if (strcmp(key, "shape") == 0)
    cjl_push_shape(L, a->ndim, a->shape);
  else if (strcmp(key, "dtype") == 0)
    lua_pushstring(L, a->dtype == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(a->dtype));
  else if (strcmp(key, "size") == 0)
    lua_pushinteger(L, (lua_Integer)a->size);
  else if (strcmp(key, "ndim") == 0)
    lua_pushinteger(L, a->ndim);
  else if (strcmp(key, "nbytes") == 0)
    lua_pushinteger(L, (lua_Integer)cjl_array_bytes(a));
  else if (strcmp(key, "device") == 0) {
    cujit_buffer *b = cjl_array_buffer(a);
    if (b)
      lua_pushinteger(L, cujit_device_ordinal(cujit_buffer_device(b)));
    else
      lua_pushnil(L);
  } else
    lua_pushnil(L);
  return 1;
}

int cujit_lua_push_buffer(lua_State *L, cujit_buffer *buffer) {
  if (!buffer) return luaL_error(L, "cujit_lua_push_buffer: the buffer is NULL");
  if (luaL_getmetatable(L, CJL_ARRAY) != LUA_TTABLE)
    return luaL_error(L, "cujit_lua_push_buffer: call cujit_lua_open on this Lua state first");
  lua_pop(L, 1);
  cujit_dtype dtype = cujit_buffer_dtype(buffer);
  size_t n = cujit_buffer_size(buffer) / cjl_elem_size(dtype);
  if (n == 0) return luaL_error(L, "cujit_lua_push_buffer: the buffer holds no whole element");
  cjl_array *a = new_array_object(L, dtype, 1, &n);
  a->buffer = buffer;
  a->owns = 0; /* the C side frees it */
  return 1;
}

static const luaL_Reg array_meta[] = {
    {"__gc", array_free},           {"__close", array_free},        {"__len", array_len},
    {"__tostring", array_tostring}, {"__newindex", array_newindex}, {NULL, NULL}};
static const luaL_Reg array_methods[] = {{"copy", array_copy},       {"fill", array_fill},
                                         {"reshape", array_reshape}, {"devptr", array_devptr},
                                         {"free", array_free},       {NULL, NULL}};
static const luaL_Reg module_functions[] = {
    {"device_array", l_device_array}, {"zeros", l_zeros}, {"full", l_full}, {NULL, NULL}};

void cjl_open_arrays(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_ARRAY, array_meta, array_methods, array_index);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
