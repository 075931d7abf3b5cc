/*
** ltma.c -- tensor maps from Lua (ltma.h): a:tensor_map{...} describes a contiguous device array
** to the Tensor Memory Accelerator in the array's own order (box = {rows, cols} for a matrix, as
** a.shape), which cujit_tensor_map_encode takes the other way round (the contiguous dimension
** first). The map keeps its array alive (its uservalue), since it holds the array's address.
** Also the rule for a struct's bytes from Lua (a string or a map), for launches and g:set_args.
*/
#include "ltma.h"
#include "larray.h"
#include "lconv.h"

#include <stdio.h>
#include <string.h>

#define CJL_TENSOR_MAP "cujit.tensor_map"

typedef struct cjl_tensor_map {
  cujit_tensor_map map;
  int ndim;
  size_t shape[CJL_MAX_DIMS];
  unsigned box[CJL_MAX_DIMS];
  cujit_dtype dtype;
  int swizzle;
} cjl_tensor_map;

static const char *const swizzle_names[] = {"none", "32B", "64B", "128B", NULL};

const char *cjl_struct_bytes(lua_State *L, int idx, size_t size, const void **bytes) {
  size_t len = 0;
  /* a string, the common case on a launch, costs no registry lookup */
  int type = lua_type(L, idx);
  cjl_tensor_map *m = type == LUA_TUSERDATA ? luaL_testudata(L, idx, CJL_TENSOR_MAP) : NULL;
  *bytes = NULL;
  if (m)
    *bytes = m->map.opaque, len = sizeof m->map.opaque;
  else if (type == LUA_TSTRING)
    *bytes = lua_tolstring(L, idx, &len);
  if (size == 0 || (*bytes && len == size)) return NULL;
  const char *got = !*bytes ? luaL_typename(L, idx)
                    : m     ? "a tensor map (128 bytes)"
                            : lua_pushfstring(L, "a string of %d bytes", (int)len);
  *bytes = NULL;
  return lua_pushfstring(L,
                         "a string of its %d bytes expected (see string.pack; a CUtensorMap "
                         "takes a:tensor_map{...}), got %s",
                         (int)size, got);
}

/* opts.box: one positive integer per dimension of the array, outermost first. */
static void read_box(lua_State *L, const cjl_array *a, cjl_tensor_map *m) {
  if (lua_getfield(L, 2, "box") != LUA_TTABLE)
    luaL_error(L,
               "a:tensor_map: box = {...} expected (a tile's elements in each of the array's "
               "%d dimensions, in a.shape's order), got %s",
               a->ndim, luaL_typename(L, -1));
  if (luaL_len(L, -1) != a->ndim)
    luaL_error(L, "a:tensor_map: box has %d sizes for an array of %d dimensions",
               (int)luaL_len(L, -1), a->ndim);
  for (int i = 0; i < a->ndim; i++) {
    lua_geti(L, -1, i + 1);
    int ok;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 1 || v > 256)
      luaL_error(L, "a:tensor_map: box[%d] must be an integer from 1 to 256, got %s", i + 1,
                 luaL_tolstring(L, -1, NULL));
    m->box[i] = (unsigned)v;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* opts.swizzle and opts.oob, by name. */
static int read_name(lua_State *L, const char *field, const char *const *names, const char *def) {
  lua_getfield(L, 2, field);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushstring(L, def);
  }
  const char *given = lua_tostring(L, -1);
  for (int i = 0; given && names[i]; i++)
    if (strcmp(given, names[i]) == 0) return lua_pop(L, 1), i;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; names[i]; i++) {
    luaL_addstring(&b, i ? ", " : "");
    luaL_addstring(&b, names[i]);
  }
  luaL_pushresult(&b);
  const char *list = lua_tostring(L, -1);
  const char *got = luaL_tolstring(L, -2, NULL); /* pushes: `list` stays where it was */
  return luaL_error(L, "a:tensor_map: %s must be one of %s; got %s", field, list, got);
}

static int array_tensor_map(lua_State *L) {
  cjl_array *a;
  cujit_buffer *buf = cjl_check_array(L, 1, &a);
  luaL_checktype(L, 2, LUA_TTABLE);
  cjl_tensor_map *m = lua_newuserdatauv(L, sizeof *m, 1);
  memset(m, 0, sizeof *m);
  read_box(L, a, m);
  static const char *const oob_names[] = {"zero", "nan", NULL};
  m->swizzle = read_name(L, "swizzle", swizzle_names, "none");
  int oob = read_name(L, "oob", oob_names, "zero");
  cujit_tensor_map_desc d = CUJIT_TENSOR_MAP_DESC_INIT;
  d.rank = (unsigned)a->ndim;
  for (int i = 0; i < a->ndim; i++) { /* the contiguous dimension first */
    d.dims[i] = a->shape[a->ndim - 1 - i];
    d.box[i] = m->box[a->ndim - 1 - i];
  }
  d.swizzle = (cujit_tensor_swizzle)m->swizzle, d.oob_nan = oob;
  cjl_check(L, cjl_engine(L), cujit_tensor_map_encode(buf, &d, &m->map));
  m->ndim = a->ndim, m->dtype = a->dtype;
  memcpy(m->shape, a->shape, sizeof m->shape);
  luaL_setmetatable(L, CJL_TENSOR_MAP);
  lua_pushvalue(L, 1); /* the array lives while the map does */
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int map_bytes(lua_State *L) {
  cjl_tensor_map *m = luaL_checkudata(L, 1, CJL_TENSOR_MAP);
  lua_pushlstring(L, (const char *)m->map.opaque, sizeof m->map.opaque);
  return 1;
}

static int map_array(lua_State *L) {
  luaL_checkudata(L, 1, CJL_TENSOR_MAP);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

static int map_tostring(lua_State *L) {
  cjl_tensor_map *m = luaL_checkudata(L, 1, CJL_TENSOR_MAP);
  char type[96], box[64] = "";
  cjl_format_type(type, sizeof type, m->dtype, m->ndim, m->shape);
  for (int i = 0, at = 0; i < m->ndim; i++)
    at += snprintf(box + at, sizeof box - (size_t)at, "%s%u", i ? "x" : "", m->box[i]);
  lua_pushfstring(L, "cujit.tensor_map (%s, box %s, swizzle %s)", type, box,
                  swizzle_names[m->swizzle]);
  return 1;
}

static const luaL_Reg array_methods[] = {{"tensor_map", array_tensor_map}, {NULL, NULL}};
static const luaL_Reg map_meta[] = {{"__tostring", map_tostring}, {NULL, NULL}};
static const luaL_Reg map_methods[] = {{"bytes", map_bytes}, {"array", map_array}, {NULL, NULL}};

void cjl_open_tensor_maps(lua_State *L) {
  cjl_new_class(L, CJL_TENSOR_MAP, map_meta, map_methods, NULL);
  cjl_add_methods(L, CJL_ARRAY, array_methods);
}
