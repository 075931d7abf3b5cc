/*
** lhost.c -- host arrays from Lua: typed C memory (optionally pinned) indexed from 1 like a
** table, with a dtype and a 1-3-D row-major shape; cuda.host_array, cuda.array, h[i], h:get/set,
** fill, totable, reshape. Copies to and from the device are lcopy.c's.
*/
#include "lconv.h"
#include "lhost.h"

#include <string.h>

/* Host arrays keep their elements right after the header, aligned for any dtype. */
#define HOST_HEADER ((sizeof(cjl_host) + 15) & ~(size_t)15)

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
  size_t n = cjl_shape_size(ndim, shape), nbytes = n * cjl_elem_size(dtype);
  cjl_host *h = lua_newuserdatauv(L, pinned ? sizeof *h : HOST_HEADER + nbytes, 1);
  memset(h, 0, sizeof *h);
  h->state = cjl_state_of(L);
  h->dtype = dtype;
  cjl_set_shape(&h->ndim, h->shape, &h->size, ndim, shape);
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

/* The elements of a host array as `dtype`: its own memory, or a converted scratch copy (pushed,
** or nothing pushed when no conversion is needed). */
const void *cjl_host_as(lua_State *L, int idx, cjl_host *h, cujit_dtype dtype) {
  const void *data = cjl_host_data(h);
  if (h->dtype == dtype) return data;
  void *copy = cjl_scratch(L, h->size * cjl_elem_size(dtype));
  convert_elements(L, idx, dtype, copy, h->dtype, data, h->size);
  return copy;
}

static int pinned_option(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 0;
  luaL_checktype(L, idx, LUA_TTABLE);
  int pinned = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    /* mapped: pinned memory is mapped for the device as well (h:mapped(), lmanaged.c) */
    if (strcmp(key, "pinned") != 0 && strcmp(key, "mapped") != 0)
      luaL_argerror(L, idx, lua_pushfstring(L, "unknown option '%s' (known: pinned, mapped)", key));
    pinned = pinned || lua_toboolean(L, -1);
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
      cjl_push_shape(L, h->ndim, h->shape);
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

static int host_reshape(lua_State *L) {
  cjl_host *h = host_self(L);
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_reshape_args(L, 2, h->size, shape);
  cjl_host *view = lua_newuserdatauv(L, sizeof *view, 1);
  memset(view, 0, sizeof *view);
  view->state = h->state;
  view->dtype = h->dtype;
  view->base = h->base ? h->base : h;
  cjl_set_shape(&view->ndim, view->shape, &view->size, ndim, shape);
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

static const luaL_Reg host_meta[] = {{"__gc", host_gc},
                                     {"__close", host_free},
                                     {"__len", host_len},
                                     {"__newindex", host_newindex},
                                     {"__pairs", host_pairs},
                                     {"__tostring", host_tostring},
                                     {NULL, NULL}};
static const luaL_Reg host_methods[] = {
    {"get", host_get},   {"set", host_set},         {"totable", host_totable},
    {"fill", host_fill}, {"reshape", host_reshape}, {"free", host_free},
    {NULL, NULL}};
static const luaL_Reg module_functions[] = {
    {"host_array", l_host_array}, {"array", l_array}, {NULL, NULL}};

void cjl_open_hosts(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_HOST, host_meta, host_methods, host_index);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
