/*
** ldlpack.c -- memory of other libraries as device arrays, and DLPack, from Lua:
** cuda.wrap(address, shape, dtype [, {owner = obj, device = d}]) is a device array over memory
** someone else allocated (kept alive through `owner`), a:to_dlpack() exports an array as a
** DLManagedTensorVersioned * (a light userdata) sharing its memory, cuda.from_dlpack(ptr) imports
** one as an array of the tensor's shape, cuda.dlpack_delete(ptr) gives back a tensor no consumer
** took. All of it through cujit.h's foreign memory and DLPack calls.
*/
#include "cujit_dlpack.h"
#include "larray.h"
#include "lconv.h"
#include "ldevice.h"
#include "ldlpack.h"

/* An address argument: an integer (a:devptr(), another library's pointer as a number) or a light
** userdata. */
static uint64_t check_address(lua_State *L, int idx, const char *what) {
  if (lua_islightuserdata(L, idx)) return (uint64_t)(uintptr_t)lua_touserdata(L, idx);
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, idx, &exact);
  if (!exact || lua_type(L, idx) != LUA_TNUMBER)
    return (uint64_t)luaL_argerror(
        L, idx,
        lua_pushfstring(L, "%s must be an integer address or a light userdata, not %s", what,
                        luaL_typename(L, idx)));
  return (uint64_t)v;
}

/* cuda.wrap(address, shape, dtype [, {owner = obj, device = d}]) -> a device array over memory
** allocated elsewhere; cujit never frees it. `owner` (any value) is kept alive by the array
** until the array is collected; `device` (default: the current one) is where the memory is. */
static int l_wrap(lua_State *L) {
  uint64_t address = check_address(L, 1, "the address");
  size_t shape[CJL_MAX_DIMS];
  int ndim = cjl_check_shape(L, 2, shape);
  cujit_dtype dtype = cjl_opt_dtype(L, 3, CUJIT_F32);
  cujit_device *device = NULL;
  if (!lua_isnoneornil(L, 4)) {
    luaL_checktype(L, 4, LUA_TTABLE);
    device = cjl_opt_device_option(L, 4);
    lua_getfield(L, 4, "owner");
  } else
    lua_pushnil(L);
  int owner = lua_gettop(L);
  cujit_engine *e = cjl_engine(L);
  /* The userdata first, so that the buffer always has an owner the collector will see. */
  cjl_array *a = cjl_wrap_buffer(L, NULL, dtype, ndim, shape, 1, lua_isnil(L, owner) ? 0 : owner);
  size_t bytes = cjl_array_bytes(a);
  cjl_check(L, e,
            device ? cujit_buffer_wrap_on(device, address, bytes, dtype, NULL, NULL, &a->buffer)
                   : cujit_buffer_wrap(e, address, bytes, dtype, NULL, NULL, &a->buffer));
  return 1;
}

/* a:to_dlpack() -> a DLManagedTensorVersioned * (light userdata) of the array's shape, sharing
** its memory, which stays valid until the consumer (or cuda.dlpack_delete) calls its deleter,
** even after the array is freed. */
static int array_to_dlpack(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  int64_t shape[CJL_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) shape[i] = (int64_t)a->shape[i];
  void *tensor = NULL;
  cjl_check_array_status(L, a,
                         cujit_buffer_to_dlpack(cjl_array_buffer(a), a->ndim, shape, &tensor));
  lua_pushlightuserdata(L, tensor);
  return 1;
}

/* cuda.from_dlpack(ptr) -> a device array of the tensor's shape over its memory (no copy). The
** array owns the tensor: its deleter runs when the array is freed or collected. A tensor cujit
** refuses stays the caller's. */
static int l_from_dlpack(lua_State *L) {
  DLManagedTensorVersioned *m =
      (DLManagedTensorVersioned *)(uintptr_t)check_address(L, 1, "the DLPack tensor");
  if (!m) return luaL_argerror(L, 1, "the DLPack tensor is NULL");
  /* Read before the import, so that a refusal leaves the tensor with its owner. */
  if (m->version.major == 1 && m->dl_tensor.ndim > CJL_MAX_DIMS)
    return luaL_error(L,
                      "cuda.from_dlpack: the tensor has %d dimensions and a Lua array at most %d; "
                      "reshape it first (the tensor is still yours)",
                      (int)m->dl_tensor.ndim, CJL_MAX_DIMS);
  cujit_engine *e = cjl_engine(L);
  cjl_array *a = cjl_wrap_buffer(L, NULL, CUJIT_U8, 1, (size_t[]){1}, 1, 0);
  int ndim = 0;
  int64_t dims[CUJIT_DLPACK_MAX_DIMS];
  cjl_check(L, e, cujit_buffer_from_dlpack(e, m, &a->buffer, &ndim, dims));
  size_t shape[CJL_MAX_DIMS] = {1, 1, 1};
  for (int i = 0; i < ndim; i++) shape[i] = (size_t)dims[i];
  a->dtype = cujit_buffer_dtype(a->buffer);
  cjl_set_shape(&a->ndim, a->shape, &a->size, ndim > 0 ? ndim : 1, shape);
  return 1;
}

/* cuda.dlpack_delete(ptr): calls the tensor's deleter, for an export no consumer took. */
static int l_dlpack_delete(lua_State *L) {
  DLManagedTensorVersioned *m =
      (DLManagedTensorVersioned *)(uintptr_t)check_address(L, 1, "the DLPack tensor");
  if (!m) return luaL_argerror(L, 1, "the DLPack tensor is NULL");
  if (m->deleter) m->deleter(m);
  return 0;
}

static const luaL_Reg array_methods[] = {{"to_dlpack", array_to_dlpack}, {NULL, NULL}};
static const luaL_Reg module_functions[] = {{"wrap", l_wrap},
                                            {"from_dlpack", l_from_dlpack},
                                            {"dlpack_delete", l_dlpack_delete},
                                            {NULL, NULL}};

void cjl_open_dlpack(lua_State *L, int module_index) {
  cjl_add_methods(L, CJL_ARRAY, array_methods);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
