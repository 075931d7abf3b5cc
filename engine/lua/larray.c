/*
** larray.c -- arrays from Lua: typed device arrays (cujit buffers with a dtype and a 1-3-D
** row-major shape) and typed host arrays (C memory, optionally pinned, indexed from 1), with the
** copies between them and Lua tables.
*/
#include "lconv.h"

#include <stdlib.h>
#include <string.h>

/* Host arrays keep their elements right after the header, aligned for any dtype. */
#define HOST_HEADER ((sizeof(cjl_host) + 15) & ~(size_t)15)
#define FILL_CHUNK ((size_t)1 << 20)

static size_t shape_size(int ndim, const size_t *shape) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static void set_shape(int *ndim_out, size_t *shape_out, size_t *size_out, int ndim,
                      const size_t *shape) {
  *ndim_out = ndim;
  for (int i = 0; i < CJL_MAX_DIMS; i++) shape_out[i] = i < ndim ? shape[i] : 1;
  *size_out = shape_size(ndim, shape);
}

static void push_shape(lua_State *L, int ndim, const size_t *shape) {
  lua_createtable(L, ndim, 0);
  for (int i = 0; i < ndim; i++)
    lua_pushinteger(L, (lua_Integer)shape[i]), lua_rawseti(L, -2, i + 1);
}

/* A scratch block of `bytes` owned by Lua (collected even if an error interrupts its use). */
static void *scratch(lua_State *L, size_t bytes) {
  return lua_newuserdatauv(L, bytes ? bytes : 1, 0);
}

/* Reads a Lua table at `idx` as `dtype` into a new scratch block (pushed); fills ndim/shape. */
static void *table_to_scratch(lua_State *L, int idx, cujit_dtype dtype, int *ndim, size_t *shape) {
  idx = lua_absindex(L, idx);
  const char *why = cjl_table_shape(L, idx, shape, ndim);
  if (why) luaL_argerror(L, idx, why);
  void *data = scratch(L, shape_size(*ndim, shape) * cjl_elem_size(dtype));
  why = cjl_table_read(L, idx, dtype, *ndim, shape, data);
  if (why) luaL_argerror(L, idx, why);
  return data;
}

/* Copies n elements converting from one dtype to another through Lua numbers, with the same
** range checks as any store. */
static void convert_elements(lua_State *L, int arg, cujit_dtype to, void *dst, cujit_dtype from,
                             const void *src, size_t n) {
  size_t to_size = cjl_elem_size(to), from_size = cjl_elem_size(from);
  for (size_t i = 0; i < n; i++) {
    cjl_scalar v;
    cjl_push_element(L, from, (const char *)src + i * from_size);
    const char *why = cjl_to_scalar(L, -1, to, &v);
    if (why) luaL_argerror(L, arg, lua_pushfstring(L, "element %d: %s", (int)i + 1, why));
    cjl_store(to, v, (char *)dst + i * to_size);
    lua_pop(L, 1);
  }
}

/* ---------------------------------------------------------------------------------------------
** Device arrays
** ------------------------------------------------------------------------------------------- */

cjl_array *cjl_test_array(lua_State *L, int idx) {
  return luaL_testudata(L, idx, CJL_ARRAY);
}

cujit_buffer *cjl_array_buffer(const cjl_array *a) {
  return a->base ? a->base->buffer : a->buffer;
}

cujit_buffer *cjl_check_array(lua_State *L, int idx, cjl_array **out) {
  cjl_array *a = cjl_test_array(L, idx);
  if (!a)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "cujit.device_array expected, got %s", luaL_typename(L, idx)));
  cujit_buffer *b = cjl_array_buffer(a);
  if (!b) luaL_argerror(L, idx, "device array has been freed");
  if (out) *out = a;
  return b;
}

static cjl_array *new_array_object(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape) {
  cjl_array *a = lua_newuserdatauv(L, sizeof *a, 1);
  memset(a, 0, sizeof *a);
  a->state = cjl_state_of(L);
  a->dtype = dtype;
  set_shape(&a->ndim, a->shape, &a->size, ndim, shape);
  luaL_setmetatable(L, CJL_ARRAY);
  return a;
}

cjl_array *cjl_push_array(lua_State *L, cujit_buffer *buffer, cujit_dtype dtype, int ndim,
                          const size_t *shape) {
  cjl_array *a = new_array_object(L, dtype, ndim, shape);
  a->buffer = buffer;
  a->owns = 1;
  return a;
}

cjl_array *cjl_new_array(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape) {
  cujit_engine *e = cjl_engine(L);
  /* The userdata first, so that the buffer always has an owner that the collector will see. */
  cjl_array *a = new_array_object(L, dtype, ndim, shape);
  a->owns = 1;
  if (cujit_buffer_alloc(e, a->size * cjl_elem_size(dtype), dtype, &a->buffer) != CUJIT_OK)
    cjl_error(L, e);
  return a;
}

void cjl_release_array(cjl_array *a) {
  if (a->owns && a->buffer && !a->state->closed) cujit_buffer_free(a->buffer);
  a->buffer = NULL;
  a->base = NULL;
}

static size_t array_bytes(const cjl_array *a) {
  return a->size * cjl_elem_size(a->dtype);
}

static cujit_engine *array_engine(const cjl_array *a) {
  return a->state->engine;
}

static void check_copy(lua_State *L, const cjl_array *a, cujit_status status) {
  if (status != CUJIT_OK) cjl_error(L, array_engine(a));
}

/* Fills the array with one value, by memset when all its bytes are equal, else by copying a
** chunk of repeated elements. */
static void fill_array(lua_State *L, cjl_array *a, int value_idx) {
  unsigned char elem[8];
  size_t esize = cjl_elem_size(a->dtype), nbytes = array_bytes(a);
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, value_idx, a->dtype, &v);
  if (why) luaL_argerror(L, value_idx, why);
  cjl_store(a->dtype, v, elem);
  int uniform = 1;
  for (size_t i = 1; i < esize; i++) uniform &= elem[i] == elem[0];
  cujit_buffer *b = cjl_array_buffer(a);
  if (uniform) {
    check_copy(L, a, cujit_memset(b, 0, elem[0], nbytes, NULL));
    return;
  }
  size_t chunk = nbytes < FILL_CHUNK ? nbytes : FILL_CHUNK / esize * esize;
  unsigned char *block = scratch(L, chunk);
  for (size_t i = 0; i < chunk; i += esize) memcpy(block + i, elem, esize);
  for (size_t off = 0; off < nbytes; off += chunk) {
    size_t n = nbytes - off < chunk ? nbytes - off : chunk;
    check_copy(L, a, cujit_memcpy_htod(b, off, block, n, NULL));
  }
  lua_pop(L, 1);
}

/* cuda.device_array(shape [, dtype]) -> uninitialized device array (dtype default f32). */
static int l_device_array(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cjl_new_array(L, cjl_opt_dtype(L, 2, CUJIT_F32), ndim, shape);
  return 1;
}

static int l_zeros(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cjl_array *a = cjl_new_array(L, cjl_opt_dtype(L, 2, CUJIT_F32), ndim, shape);
  check_copy(L, a, cujit_memset(a->buffer, 0, 0, array_bytes(a), NULL));
  return 1;
}

/* cuda.full(shape, value [, dtype]) */
static int l_full(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_dtype dtype = cjl_opt_dtype(L, 3, CUJIT_F32);
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, 2, dtype, &v); /* before allocating */
  if (why) luaL_argerror(L, 2, why);
  cjl_array *a = cjl_new_array(L, dtype, ndim, shape);
  fill_array(L, a, 2);
  return 1;
}

/* The elements of a host array as `dtype`: its own memory, or a converted scratch copy (pushed,
** or nothing pushed when no conversion is needed). */
static const void *host_as(lua_State *L, int idx, cjl_host *h, cujit_dtype dtype) {
  const void *data = cjl_host_data(h);
  if (h->dtype == dtype) return data;
  void *copy = scratch(L, h->size * cjl_elem_size(dtype));
  convert_elements(L, idx, dtype, copy, h->dtype, data, h->size);
  return copy;
}

/* cuda.to_device(x [, dtype]): x a Lua table (nested for 2-D/3-D; dtype required), a host array
** (dtype defaults to its own) or a device array (a copy). */
static int l_to_device(lua_State *L) {
  cjl_host *h;
  cjl_array *src;
  size_t shape[CJL_MAX_DIMS];
  int ndim;
  if (lua_istable(L, 1)) {
    if (lua_isnoneornil(L, 2))
      return luaL_argerror(L, 2,
                           "dtype expected: a Lua table has no element type (use 'f32', "
                           "'f64', 'i32', ...)");
    cujit_dtype dtype = cjl_check_dtype(L, 2);
    void *data = table_to_scratch(L, 1, dtype, &ndim, shape);
    cjl_array *a = cjl_new_array(L, dtype, ndim, shape);
    check_copy(L, a, cujit_memcpy_htod(a->buffer, 0, data, array_bytes(a), NULL));
  } else if ((h = cjl_test_host(L, 1)) != NULL) {
    h = cjl_check_host(L, 1);
    cujit_dtype dtype = cjl_opt_dtype(L, 2, h->dtype);
    const void *data = host_as(L, 1, h, dtype);
    cjl_array *a = cjl_new_array(L, dtype, h->ndim, h->shape);
    check_copy(L, a, cujit_memcpy_htod(a->buffer, 0, data, array_bytes(a), NULL));
  } else if ((src = cjl_test_array(L, 1)) != NULL) {
    cujit_buffer *b = cjl_check_array(L, 1, &src);
    luaL_argcheck(L, lua_isnoneornil(L, 2) || cjl_check_dtype(L, 2) == src->dtype, 2,
                  "a device array is copied with its own dtype");
    cjl_array *a = cjl_new_array(L, src->dtype, src->ndim, src->shape);
    check_copy(L, a, cujit_memcpy_dtod(a->buffer, 0, b, 0, array_bytes(a), NULL));
  } else {
    return luaL_argerror(L, 1,
                         lua_pushfstring(L,
                                         "table, cujit.host_array or cujit.device_array "
                                         "expected, got %s",
                                         luaL_typename(L, 1)));
  }
  return 1;
}

/* cuda.to_device_async(host_array, stream) -> device array; the host array must not change
** until the stream is synchronized (the stream keeps it alive until then). */
static int l_to_device_async(lua_State *L) {
  cjl_host *h = cjl_check_host(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  luaL_argcheck(L, stream, 2, "cujit.stream expected (use cuda.to_device for a synchronous copy)");
  cjl_array *a = cjl_new_array(L, h->dtype, h->ndim, h->shape);
  check_copy(L, a, cujit_memcpy_htod(a->buffer, 0, cjl_host_data(h), array_bytes(a), stream));
  cjl_stream_keep(L, 2, 1);
  return 1;
}

static cjl_array *check_live_array(lua_State *L, int idx) {
  cjl_array *a;
  cjl_check_array(L, idx, &a);
  return a;
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
      (a->dtype != CUJIT_DTYPE_NONE && h->dtype != a->dtype)) {
    char want[64], got[64];
    cjl_format_type(want, sizeof want, a->dtype, a->ndim, a->shape);
    cjl_format_type(got, sizeof got, h->dtype, h->ndim, h->shape);
    luaL_argerror(L, idx,
                  lua_pushfstring(L,
                                  "host array %s does not match device array %s "
                                  "(same dtype and element count needed)",
                                  got, want));
  }
  lua_pushvalue(L, idx);
  return h;
}

static int array_copy_to_host(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  cjl_host *h = target_host(L, a, 2, 0);
  check_copy(L, a,
             cujit_memcpy_dtoh(cjl_host_data(h), cjl_array_buffer(a), 0, array_bytes(a), NULL));
  return 1;
}

/* a:copy_to_host_async(stream [, host_array]) -> host array (pinned when made here); read it
** only after the stream is synchronized. */
static int array_copy_to_host_async(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  luaL_argcheck(L, stream, 2,
                "cujit.stream expected (use a:copy_to_host() for a synchronous copy)");
  cjl_host *h = target_host(L, a, 3, 1);
  check_copy(L, a,
             cujit_memcpy_dtoh(cjl_host_data(h), cjl_array_buffer(a), 0, array_bytes(a), stream));
  cjl_stream_keep(L, 2, -1);
  return 1;
}

/* a:totable() -> Lua table, nested by shape. */
static int array_totable(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  void *data = scratch(L, array_bytes(a));
  check_copy(L, a, cujit_memcpy_dtoh(data, cjl_array_buffer(a), 0, array_bytes(a), NULL));
  cjl_push_table(L, a->dtype, a->ndim, a->shape, data);
  return 1;
}

/* a:copy_from(x [, stream]): x a device array, host array or Lua table with as many elements
** (and, for arrays, the same dtype). Returns a. */
static int array_copy_from(lua_State *L) {
  cjl_array *a = check_live_array(L, 1), *src;
  cujit_buffer *dst = cjl_array_buffer(a);
  cujit_stream *stream = cjl_opt_stream(L, 3);
  size_t nbytes = array_bytes(a);
  cjl_host *h;
  if (lua_istable(L, 2)) {
    size_t shape[CJL_MAX_DIMS];
    int ndim;
    void *data = table_to_scratch(L, 2, a->dtype, &ndim, shape);
    if (shape_size(ndim, shape) != a->size)
      return luaL_argerror(L, 2,
                           lua_pushfstring(L, "table has %d elements, the array %d",
                                           (int)shape_size(ndim, shape), (int)a->size));
    check_copy(L, a, cujit_memcpy_htod(dst, 0, data, nbytes, stream));
    if (stream) cjl_stream_keep(L, 3, -1);
  } else if ((h = cjl_test_host(L, 2)) != NULL) {
    h = cjl_check_host(L, 2);
    if (h->size != a->size)
      return luaL_argerror(L, 2,
                           lua_pushfstring(L, "host array has %d elements, the array %d",
                                           (int)h->size, (int)a->size));
    const void *data = host_as(L, 2, h, a->dtype);
    check_copy(L, a, cujit_memcpy_htod(dst, 0, data, nbytes, stream));
    if (stream) cjl_stream_keep(L, 3, data == cjl_host_data(h) ? 2 : -1);
  } else if (cjl_test_array(L, 2)) {
    cujit_buffer *b = cjl_check_array(L, 2, &src);
    if (src->size != a->size || src->dtype != a->dtype) {
      char want[64], got[64];
      cjl_format_type(want, sizeof want, a->dtype, a->ndim, a->shape);
      cjl_format_type(got, sizeof got, src->dtype, src->ndim, src->shape);
      return luaL_argerror(L, 2,
                           lua_pushfstring(L,
                                           "cannot copy %s into %s (same dtype and element "
                                           "count needed)",
                                           got, want));
    }
    check_copy(L, a, cujit_memcpy_dtod(dst, 0, b, 0, nbytes, stream));
  } else {
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "table, cujit.host_array or cujit.device_array "
                                         "expected, got %s",
                                         luaL_typename(L, 2)));
  }
  lua_settop(L, 1);
  return 1;
}

/* a:copy() -> a new device array with the same contents. */
static int array_copy(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  cjl_array *b = cjl_new_array(L, a->dtype, a->ndim, a->shape);
  check_copy(L, a, cujit_memcpy_dtod(b->buffer, 0, cjl_array_buffer(a), 0, array_bytes(a), NULL));
  return 1;
}

static int array_fill(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  fill_array(L, a, 2);
  lua_settop(L, 1);
  return 1;
}

/* The shape given to reshape: a table, or 1 to 3 integers from `first` on. */
static int reshape_args(lua_State *L, int first, size_t *shape) {
  if (lua_gettop(L) > first || !lua_istable(L, first)) {
    int n = lua_gettop(L) - first + 1;
    luaL_argcheck(L, n >= 1 && n <= CJL_MAX_DIMS, first, "reshape takes 1 to 3 dimensions");
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) lua_pushvalue(L, first + i), lua_rawseti(L, -2, i + 1);
    lua_replace(L, first);
    lua_settop(L, first);
  }
  return cjl_check_shape(L, first, shape);
}

static void check_reshape(lua_State *L, size_t have, int ndim, const size_t *shape) {
  if (shape_size(ndim, shape) != have)
    luaL_error(L, "cannot reshape %d elements into a shape of %d", (int)have,
               (int)shape_size(ndim, shape));
}

/* a:reshape(d1 [, d2 [, d3]]) or a:reshape{...} -> a view sharing a's memory. */
static int array_reshape(lua_State *L) {
  cjl_array *a = check_live_array(L, 1);
  size_t shape[CJL_MAX_DIMS];
  int ndim = reshape_args(L, 2, shape);
  check_reshape(L, a->size, ndim, shape);
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
  cjl_array *a = check_live_array(L, 1);
  lua_pushinteger(L, (lua_Integer)cujit_buffer_devptr(cjl_array_buffer(a)));
  return 1;
}

static int array_len(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  lua_pushinteger(L, (lua_Integer)a->size);
  return 1;
}

static int array_tostring(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  cujit_buffer *b = cjl_array_buffer(a);
  char type[80];
  cjl_format_type(type, sizeof type, a->dtype, a->ndim, a->shape);
  if (!b)
    lua_pushfstring(L, "cujit.device_array %s (freed)", type);
  else if (cujit_buffer_devptr(b) == 0)
    lua_pushfstring(L, "cujit.device_array %s (lost: its device was reset)", type);
  else
    lua_pushfstring(L, "cujit.device_array %s on device %d", type,
                    cujit_device_ordinal(cujit_buffer_device(b)));
  return 1;
}

/* Fields of a device array: methods first, then shape, dtype, size, ndim, nbytes, device. */
static int array_index(lua_State *L) {
  cjl_array *a = luaL_checkudata(L, 1, CJL_ARRAY);
  const char *key = lua_tostring(L, 2);
  if (lua_type(L, 2) != LUA_TSTRING)
    return luaL_error(L, "device arrays are not indexed from Lua: copy to the host first "
                         "(a:copy_to_host() or a:totable())");
  if (lua_getfield(L, lua_upvalueindex(1), key) != LUA_TNIL) return 1;
  if (strcmp(key, "shape") == 0)
    push_shape(L, a->ndim, a->shape);
  else if (strcmp(key, "dtype") == 0)
    lua_pushstring(L, a->dtype == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(a->dtype));
  else if (strcmp(key, "size") == 0)
    lua_pushinteger(L, (lua_Integer)a->size);
  else if (strcmp(key, "ndim") == 0)
    lua_pushinteger(L, a->ndim);
  else if (strcmp(key, "nbytes") == 0)
    lua_pushinteger(L, (lua_Integer)array_bytes(a));
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

/* ---------------------------------------------------------------------------------------------
** Host arrays
** ------------------------------------------------------------------------------------------- */

cjl_host *cjl_test_host(lua_State *L, int idx) {
  return luaL_testudata(L, idx, CJL_HOST);
}

void *cjl_host_data(const cjl_host *h) {
  return h->base ? h->base->data : h->data;
}

cjl_host *cjl_check_host(lua_State *L, int idx) {
  cjl_host *h = cjl_test_host(L, idx);
  if (!h)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "cujit.host_array expected, got %s", luaL_typename(L, idx)));
  if (!cjl_host_data(h)) luaL_argerror(L, idx, "host array has been freed");
  return h;
}

cjl_host *cjl_push_host(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape,
                        int pinned) {
  size_t n = shape_size(ndim, shape), nbytes = n * cjl_elem_size(dtype);
  cjl_host *h = lua_newuserdatauv(L, pinned ? sizeof *h : HOST_HEADER + nbytes, 1);
  memset(h, 0, sizeof *h);
  h->state = cjl_state_of(L);
  h->dtype = dtype;
  set_shape(&h->ndim, h->shape, &h->size, ndim, shape);
  luaL_setmetatable(L, CJL_HOST);
  if (pinned) {
    cujit_engine *e = cjl_engine(L);
    if (cujit_host_alloc(e, nbytes, &h->pinned) != CUJIT_OK) cjl_error(L, e);
    h->data = cujit_host_ptr(h->pinned);
  } else {
    h->data = (char *)h + HOST_HEADER;
  }
  memset(h->data, 0, nbytes);
  return h;
}

static int pinned_option(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 0;
  luaL_checktype(L, idx, LUA_TTABLE);
  int pinned = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (strcmp(key, "pinned") != 0)
      luaL_argerror(L, idx, lua_pushfstring(L, "unknown option '%s' (known: pinned)", key));
    pinned = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  return pinned;
}

/* cuda.host_array(shape [, dtype [, {pinned = true}]]) -> zeroed host array (dtype default f32). */
static int l_host_array(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 1, shape);
  cujit_dtype dtype = cjl_opt_dtype(L, 2, CUJIT_F32);
  cjl_push_host(L, dtype, ndim, shape, pinned_option(L, 3));
  return 1;
}

/* cuda.array(table, dtype [, {pinned = true}]) -> host array holding the table's numbers. */
static int l_array(lua_State *L) {
  size_t shape[CJL_MAX_DIMS];
  int ndim;
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_isnoneornil(L, 2))
    return luaL_argerror(L, 2,
                         "dtype expected: a Lua table has no element type (use 'f32', "
                         "'f64', 'i32', ...)");
  cujit_dtype dtype = cjl_check_dtype(L, 2);
  int pinned = pinned_option(L, 3);
  const char *why = cjl_table_shape(L, 1, shape, &ndim);
  if (why) return luaL_argerror(L, 1, why);
  cjl_host *h = cjl_push_host(L, dtype, ndim, shape, pinned);
  why = cjl_table_read(L, 1, dtype, ndim, shape, h->data);
  if (why) return luaL_argerror(L, 1, why);
  return 1;
}

static cjl_host *host_self(lua_State *L) {
  return cjl_check_host(L, 1);
}

static char *host_element(cjl_host *h, size_t index) {
  return (char *)cjl_host_data(h) + index * cjl_elem_size(h->dtype);
}

/* A 1-based integer position from the key at `idx`, or 0 when it is not one. */
static lua_Integer integer_key(lua_State *L, int idx) {
  int exact = 0;
  lua_Integer i = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &exact) : 0;
  return exact ? i : 0;
}

/* h[i]: the element (1-based, over all elements in row-major order), nil outside 1..#h as for a
** table; h.name: methods and the fields shape, dtype, size, ndim, nbytes, pinned. */
static int host_index(lua_State *L) {
  if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(2)))
    return luaL_typeerror(L, 1, CJL_HOST); /* checked without a registry lookup: h[i] is hot */
  lua_pop(L, 1);
  cjl_host *h = lua_touserdata(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING) {
    const char *key = lua_tostring(L, 2);
    if (lua_getfield(L, lua_upvalueindex(1), key) != LUA_TNIL) return 1;
    if (strcmp(key, "shape") == 0)
      push_shape(L, h->ndim, h->shape);
    else if (strcmp(key, "dtype") == 0)
      lua_pushstring(L, cujit_dtype_name(h->dtype));
    else if (strcmp(key, "size") == 0)
      lua_pushinteger(L, (lua_Integer)h->size);
    else if (strcmp(key, "ndim") == 0)
      lua_pushinteger(L, h->ndim);
    else if (strcmp(key, "nbytes") == 0)
      lua_pushinteger(L, (lua_Integer)(h->size * cjl_elem_size(h->dtype)));
    else if (strcmp(key, "pinned") == 0)
      lua_pushboolean(L, (h->base ? h->base : h)->pinned != NULL);
    else
      lua_pushnil(L);
    return 1;
  }
  lua_Integer i = integer_key(L, 2);
  if (i < 1 || (size_t)i > h->size || !cjl_host_data(h)) {
    if (!cjl_host_data(h)) return luaL_error(L, "host array has been freed");
    lua_pushnil(L);
    return 1;
  }
  cjl_push_element(L, h->dtype, host_element(h, (size_t)i - 1));
  return 1;
}

static void store_element(lua_State *L, cjl_host *h, size_t index, int value_idx,
                          const char *where) {
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, value_idx, h->dtype, &v);
  if (why) luaL_error(L, "cannot store into host array at %s: %s", where, why);
  cjl_store(h->dtype, v, host_element(h, index));
}

/* h[i] = v: converted and range-checked for the dtype; i must be within 1..#h. */
static int host_newindex(lua_State *L) {
  cjl_host *h = host_self(L);
  lua_Integer i = integer_key(L, 2);
  if (i < 1 || (size_t)i > h->size) {
    if (lua_type(L, 2) == LUA_TSTRING)
      return luaL_error(L, "cannot set field '%s' of a host array", lua_tostring(L, 2));
    const char *key = luaL_tolstring(L, 2, NULL);
    return luaL_error(L, "index %s out of range for a host array of %d elements (1 to %d)", key,
                      (int)h->size, (int)h->size);
  }
  store_element(L, h, (size_t)i - 1, 3, lua_pushfstring(L, "index %I", i));
  return 0;
}

/* The flat position of h:get/h:set indices at first..first+ndim-1 (1-based, one per dimension). */
static size_t flat_index(lua_State *L, cjl_host *h, int first) {
  size_t flat = 0;
  for (int d = 0; d < h->ndim; d++) {
    lua_Integer i = luaL_checkinteger(L, first + d);
    if (i < 1 || (size_t)i > h->shape[d])
      luaL_argerror(L, first + d,
                    lua_pushfstring(L,
                                    "index %I out of range for dimension %d (1 "
                                    "to %d)",
                                    i, d + 1, (int)h->shape[d]));
    flat = flat * h->shape[d] + (size_t)i - 1;
  }
  return flat;
}

/* h:get(i [, j [, k]]) -> element, one index per dimension. */
static int host_get(lua_State *L) {
  cjl_host *h = host_self(L);
  luaL_argcheck(L, lua_gettop(L) == 1 + h->ndim, 2,
                lua_pushfstring(L, "%d indices expected (one per dimension)", h->ndim));
  cjl_push_element(L, h->dtype, host_element(h, flat_index(L, h, 2)));
  return 1;
}

/* h:set(i [, j [, k]], value) */
static int host_set(lua_State *L) {
  cjl_host *h = host_self(L);
  luaL_argcheck(L, lua_gettop(L) == 2 + h->ndim, 2,
                lua_pushfstring(L, "%d indices and a value expected", h->ndim));
  size_t flat = flat_index(L, h, 2);
  store_element(L, h, flat, 2 + h->ndim, lua_pushfstring(L, "element %d", (int)flat + 1));
  return 0;
}

static int host_len(lua_State *L) {
  cjl_host *h = luaL_checkudata(L, 1, CJL_HOST);
  lua_pushinteger(L, (lua_Integer)h->size);
  return 1;
}

/* pairs(h) iterates 1..#h like ipairs. */
static int host_next(lua_State *L) {
  cjl_host *h = host_self(L);
  lua_Integer i = luaL_checkinteger(L, 2) + 1;
  if (i < 1 || (size_t)i > h->size) return 0;
  lua_pushinteger(L, i);
  cjl_push_element(L, h->dtype, host_element(h, (size_t)i - 1));
  return 2;
}

static int host_pairs(lua_State *L) {
  host_self(L);
  lua_pushcfunction(L, host_next);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

static int host_totable(lua_State *L) {
  cjl_host *h = host_self(L);
  cjl_push_table(L, h->dtype, h->ndim, h->shape, cjl_host_data(h));
  return 1;
}

static int host_fill(lua_State *L) {
  cjl_host *h = host_self(L);
  unsigned char elem[8];
  size_t esize = cjl_elem_size(h->dtype);
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, 2, h->dtype, &v);
  if (why) return luaL_argerror(L, 2, why);
  cjl_store(h->dtype, v, elem);
  for (size_t i = 0; i < h->size; i++) memcpy(host_element(h, i), elem, esize);
  lua_settop(L, 1);
  return 1;
}

/* h:copy_from(x): x a table, host array or device array with as many elements. Returns h. */
static int host_copy_from(lua_State *L) {
  cjl_host *h = host_self(L), *src;
  cjl_array *a;
  size_t nbytes = h->size * cjl_elem_size(h->dtype);
  if (lua_istable(L, 2)) {
    size_t shape[CJL_MAX_DIMS];
    int ndim;
    void *data = table_to_scratch(L, 2, h->dtype, &ndim, shape);
    if (shape_size(ndim, shape) != h->size)
      return luaL_argerror(L, 2,
                           lua_pushfstring(L, "table has %d elements, the array %d",
                                           (int)shape_size(ndim, shape), (int)h->size));
    memcpy(cjl_host_data(h), data, nbytes);
  } else if ((src = cjl_test_host(L, 2)) != NULL) {
    src = cjl_check_host(L, 2);
    if (src->size != h->size)
      return luaL_argerror(L, 2,
                           lua_pushfstring(L, "host array has %d elements, this one %d",
                                           (int)src->size, (int)h->size));
    memmove(cjl_host_data(h), host_as(L, 2, src, h->dtype), nbytes);
  } else if ((a = cjl_test_array(L, 2)) != NULL) {
    cujit_buffer *b = cjl_check_array(L, 2, &a);
    if (a->size != h->size || a->dtype != h->dtype)
      return luaL_argerror(L, 2, "device array must have the same dtype and element count");
    check_copy(L, a, cujit_memcpy_dtoh(cjl_host_data(h), b, 0, nbytes, NULL));
  } else {
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "table, cujit.host_array or cujit.device_array "
                                         "expected, got %s",
                                         luaL_typename(L, 2)));
  }
  lua_settop(L, 1);
  return 1;
}

/* h:to_device() -> device array with h's dtype, shape and contents. */
static int host_to_device(lua_State *L) {
  cjl_host *h = host_self(L);
  cjl_array *a = cjl_new_array(L, h->dtype, h->ndim, h->shape);
  check_copy(L, a, cujit_memcpy_htod(a->buffer, 0, cjl_host_data(h), array_bytes(a), NULL));
  return 1;
}

static int host_reshape(lua_State *L) {
  cjl_host *h = host_self(L);
  size_t shape[CJL_MAX_DIMS];
  int ndim = reshape_args(L, 2, shape);
  check_reshape(L, h->size, ndim, shape);
  cjl_host *view = lua_newuserdatauv(L, sizeof *view, 1);
  memset(view, 0, sizeof *view);
  view->state = h->state;
  view->dtype = h->dtype;
  view->base = h->base ? h->base : h;
  set_shape(&view->ndim, view->shape, &view->size, ndim, shape);
  luaL_setmetatable(L, CJL_HOST);
  if (h->base)
    lua_getiuservalue(L, 1, 1);
  else
    lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

/* Releases pinned memory now; afterwards (for any host array) using it is an error. */
static int host_free(lua_State *L) {
  cjl_host *h = luaL_checkudata(L, 1, CJL_HOST);
  if (h->pinned && !h->state->closed) cujit_host_free(h->pinned);
  h->pinned = NULL;
  h->data = NULL;
  h->base = NULL;
  return 0;
}

static int host_gc(lua_State *L) {
  cjl_host *h = luaL_checkudata(L, 1, CJL_HOST);
  if (h->pinned && !h->state->closed) cujit_host_free(h->pinned);
  h->pinned = NULL;
  return 0;
}

#define TOSTRING_ITEMS 8

static int host_tostring(lua_State *L) {
  cjl_host *h = luaL_checkudata(L, 1, CJL_HOST);
  char type[80];
  luaL_Buffer b;
  cjl_format_type(type, sizeof type, h->dtype, h->ndim, h->shape);
  if (!cjl_host_data(h)) {
    lua_pushfstring(L, "cujit.host_array %s (freed)", type);
    return 1;
  }
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "cujit.host_array %s%s {", type,
                  (h->base ? h->base : h)->pinned ? " pinned" : "");
  luaL_addvalue(&b);
  for (size_t i = 0; i < h->size && i < TOSTRING_ITEMS; i++) {
    if (i) luaL_addstring(&b, ", ");
    cjl_push_element(L, h->dtype, host_element(h, i));
    luaL_tolstring(L, -1, NULL);
    lua_remove(L, -2);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, h->size > TOSTRING_ITEMS ? ", ...}" : "}");
  luaL_pushresult(&b);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Buffers from C, and opening
** ------------------------------------------------------------------------------------------- */

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

static const luaL_Reg array_meta[] = {{"__gc", array_free},
                                      {"__close", array_free},
                                      {"__len", array_len},
                                      {"__tostring", array_tostring},
                                      {NULL, NULL}};
static const luaL_Reg array_methods[] = {{"copy_to_host", array_copy_to_host},
                                         {"copy_to_host_async", array_copy_to_host_async},
                                         {"totable", array_totable},
                                         {"copy_from", array_copy_from},
                                         {"copy", array_copy},
                                         {"fill", array_fill},
                                         {"reshape", array_reshape},
                                         {"devptr", array_devptr},
                                         {"free", array_free},
                                         {NULL, NULL}};
static const luaL_Reg host_meta[] = {{"__gc", host_gc},
                                     {"__close", host_free},
                                     {"__len", host_len},
                                     {"__newindex", host_newindex},
                                     {"__pairs", host_pairs},
                                     {"__tostring", host_tostring},
                                     {NULL, NULL}};
static const luaL_Reg host_methods[] = {{"get", host_get},
                                        {"set", host_set},
                                        {"totable", host_totable},
                                        {"fill", host_fill},
                                        {"copy_from", host_copy_from},
                                        {"to_device", host_to_device},
                                        {"reshape", host_reshape},
                                        {"free", host_free},
                                        {NULL, NULL}};
static const luaL_Reg module_functions[] = {{"device_array", l_device_array},
                                            {"zeros", l_zeros},
                                            {"full", l_full},
                                            {"to_device", l_to_device},
                                            {"to_device_async", l_to_device_async},
                                            {"host_array", l_host_array},
                                            {"array", l_array},
                                            {NULL, NULL}};

void cjl_open_arrays(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_ARRAY, array_meta, array_methods, array_index);
  cjl_new_class(L, CJL_HOST, host_meta, host_methods, host_index);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
