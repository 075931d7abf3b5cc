/*
** lcujit.c -- the cujit Lua module: its entry points (luaopen_cujit, cujit_lua_open), the engine
** of each Lua state, errors, dtypes and shapes, and the functions for devices, streams, events,
** versions and the compile cache.
*/
#include "lcujit.h"

#include <stdint.h>
#include <string.h>

#define CJL_EXPORT __attribute__((visibility("default")))

LUAMOD_API CJL_EXPORT int luaopen_cujit(lua_State *L);

/* ---------------------------------------------------------------------------------------------
** The engine of a Lua state
** ------------------------------------------------------------------------------------------- */

static const char state_key = 's'; /* its address is the registry key of the state record */

/* The record's finalizer: runs when the state closes, after every object made later (Lua calls
** finalizers in reverse order of creation), and the `closed` flag covers any other order. */
static int state_gc(lua_State *L) {
  cjl_state *st = lua_touserdata(L, 1);
  if (st->owns_engine && st->engine && !st->closed) {
    cujit_close(st->engine);
    st->closed = 1;
  }
  st->engine = NULL;
  return 0;
}

static cjl_state *new_state(lua_State *L) {
  cjl_state *st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st);
  st->owns_engine = 1;
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "cujit.state");
  lua_setfield(L, -2, "__name");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
  return st;
}

cjl_state *cjl_state_of(lua_State *L) {
  cjl_state *st;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key) == LUA_TUSERDATA)
    st = lua_touserdata(L, -1);
  else
    st = NULL;
  lua_pop(L, 1);
  return st ? st : new_state(L);
}

cujit_engine *cjl_engine(lua_State *L) {
  cjl_state *st = cjl_state_of(L);
  if (st->engine) return st->engine;
  if (st->closed) luaL_error(L, "cujit: the engine of this Lua state has been closed");
  cujit_status status = cujit_open(&st->engine);
  if (status != CUJIT_OK)
    luaL_error(L, "cujit: cannot open the engine: %s", cujit_status_string(status));
  return st->engine;
}

int cjl_error(lua_State *L, cujit_engine *engine) {
  const char *msg = cujit_errmsg(engine);
  if (!msg || !*msg) msg = cujit_status_string(cujit_errcode(engine));
  return luaL_error(L, "%s", msg);
}

/* Checks a status of the state's engine: raises on failure. */
static void check(lua_State *L, cujit_engine *engine, cujit_status status) {
  if (status != CUJIT_OK) cjl_error(L, engine);
}

/* ---------------------------------------------------------------------------------------------
** Dtypes and shapes
** ------------------------------------------------------------------------------------------- */

#define DTYPE_LIST "f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64"

cujit_dtype cjl_check_dtype(lua_State *L, int idx) {
  const char *name = luaL_checkstring(L, idx);
  cujit_dtype dtype = cujit_dtype_from_name(name);
  if (dtype == CUJIT_DTYPE_NONE)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "unknown dtype '%s' (use one of " DTYPE_LIST ")", name));
  return dtype;
}

cujit_dtype cjl_opt_dtype(lua_State *L, int idx, cujit_dtype def) {
  return lua_isnoneornil(L, idx) ? def : cjl_check_dtype(L, idx);
}

/* A positive integer dimension from the value at the top of the stack (popped). */
static size_t check_dim(lua_State *L, int arg, int which) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, -1, &exact);
  if (!exact || v < 1 || (uint64_t)v > (uint64_t)UINT32_MAX * 64) {
    const char *got =
        lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1);
    luaL_argerror(L, arg,
                  which ? lua_pushfstring(L,
                                          "dimension %d of the shape must be a positive "
                                          "integer, got %s",
                                          which, got)
                        : lua_pushfstring(L,
                                          "shape must be a positive integer or a table of 1 to "
                                          "3 of them, got %s",
                                          got));
  }
  lua_pop(L, 1);
  return (size_t)v;
}

int cjl_check_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS]) {
  int ndim;
  shape[0] = shape[1] = shape[2] = 1;
  if (lua_istable(L, idx)) {
    size_t n = lua_rawlen(L, idx);
    if (n < 1 || n > CJL_MAX_DIMS)
      luaL_argerror(L, idx,
                    lua_pushfstring(L, "shape must have 1 to 3 dimensions, got %d", (int)n));
    for (size_t i = 0; i < n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      shape[i] = check_dim(L, idx, (int)i + 1);
    }
    ndim = (int)n;
  } else {
    lua_pushvalue(L, idx);
    shape[0] = check_dim(L, idx, 0);
    ndim = 1;
  }
  /* Keep the element count times 8 bytes well inside size_t. */
  if ((double)shape[0] * (double)shape[1] * (double)shape[2] > (double)(SIZE_MAX / 16))
    luaL_argerror(L, idx, "shape too large");
  return ndim;
}

/* ---------------------------------------------------------------------------------------------
** Devices
** ------------------------------------------------------------------------------------------- */

static cujit_device *current_device(lua_State *L, cujit_engine *e) {
  cujit_device *dev;
  check(L, e, cujit_current_device(e, &dev));
  return dev;
}

static void set_int(lua_State *L, const char *key, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}

static void set_triple(lua_State *L, const char *key, const int *v) {
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; i++) lua_pushinteger(L, v[i]), lua_rawseti(L, -2, i + 1);
  lua_setfield(L, -2, key);
}

static void push_device_info(lua_State *L, cujit_engine *e, cujit_device *dev) {
  cujit_device_info info;
  char arch[32];
  check(L, e, cujit_device_info_get(dev, &info));
  check(L, e, cujit_device_arch(dev, arch, sizeof arch));
  lua_createtable(L, 0, 20);
  set_int(L, "ordinal", info.ordinal);
  lua_pushstring(L, info.name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, arch);
  lua_setfield(L, -2, "arch");
  lua_pushfstring(L, "%d.%d", info.cc_major, info.cc_minor);
  lua_setfield(L, -2, "compute_capability");
  set_int(L, "cc_major", info.cc_major);
  set_int(L, "cc_minor", info.cc_minor);
  set_int(L, "multiprocessors", info.multiprocessors);
  set_int(L, "total_memory", (lua_Integer)info.total_memory);
  set_int(L, "max_threads_per_block", info.max_threads_per_block);
  set_triple(L, "max_block_dim", info.max_block_dim);
  set_triple(L, "max_grid_dim", info.max_grid_dim);
  set_int(L, "max_shared_per_block", info.max_shared_per_block);
  set_int(L, "max_shared_per_block_optin", info.max_shared_per_block_optin);
  set_int(L, "warp_size", info.warp_size);
  set_int(L, "clock_khz", info.clock_khz);
  set_int(L, "memory_clock_khz", info.memory_clock_khz);
  set_int(L, "memory_bus_width", info.memory_bus_width);
  set_int(L, "pci_bus_id", info.pci_bus_id);
}

/* cuda.devices() -> list of info tables, the GPUs then the CPU device (arch "cpu"); without a
** driver or GPU: {cpu}, the reason there is no GPU. */
static int l_devices(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  int count = 0, gpus = cujit_device_count(e, &count) == CUJIT_OK;
  if (!gpus) lua_pushstring(L, cujit_errmsg(e));
  lua_createtable(L, count + 1, 0);
  for (int i = 0; i <= count; i++) {
    cujit_device *dev;
    check(L, e, cujit_device_get(e, i < count ? i : CUJIT_DEVICE_CPU, &dev));
    push_device_info(L, e, dev);
    lua_rawseti(L, -2, i + 1);
  }
  if (!gpus) lua_insert(L, -2);
  return gpus ? 1 : 2;
}

/* cuda.has_gpu() -> true, or false and the reason. */
static int l_has_gpu(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *dev;
  if (cujit_current_device(e, &dev) != CUJIT_OK) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, cujit_errmsg(e));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* cuda.device([ordinal | "cpu"]) -> info of the current device, after making that one current. */
static int l_device(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  if (lua_type(L, 1) == LUA_TSTRING) {
    luaL_argcheck(L, strcmp(lua_tostring(L, 1), "cpu") == 0, 1,
                  "a device is an ordinal (0, 1, ...) or \"cpu\"");
    check(L, e, cujit_set_device(e, CUJIT_DEVICE_CPU));
  } else if (!lua_isnoneornil(L, 1)) {
    lua_Integer ordinal = luaL_checkinteger(L, 1);
    luaL_argcheck(L, (ordinal >= 0 && ordinal <= INT32_MAX) || ordinal == CUJIT_DEVICE_CPU, 1,
                  "device ordinals start at 0 (the CPU device: \"cpu\" or -1)");
    check(L, e, cujit_set_device(e, (int)ordinal));
  }
  push_device_info(L, e, current_device(L, e));
  return 1;
}

/* cuda.memory() -> free, total bytes of the current device. */
static int l_memory(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  size_t free_bytes, total_bytes;
  check(L, e, cujit_device_memory(current_device(L, e), &free_bytes, &total_bytes));
  lua_pushinteger(L, (lua_Integer)free_bytes);
  lua_pushinteger(L, (lua_Integer)total_bytes);
  return 2;
}

static int l_allocated(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  lua_pushinteger(L, (lua_Integer)cujit_device_allocated(current_device(L, e)));
  return 1;
}

static int l_synchronize(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  check(L, e, cujit_device_synchronize(current_device(L, e)));
  return 0;
}

/* cuda.status() -> true, or false and the fault (which kernel, how to recover). */
static int l_status(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  if (cujit_device_status(current_device(L, e)) != CUJIT_OK) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, cujit_errmsg(e));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_reset(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  check(L, e, cujit_device_reset(current_device(L, e)));
  return 0;
}

/* ---------------------------------------------------------------------------------------------
** Versions and the cache
** ------------------------------------------------------------------------------------------- */

/* Sets field `key` to the version, or leaves it absent when that library is missing. */
static void set_version(lua_State *L, const char *key, cujit_status (*get)(cujit_engine *, int *),
                        cujit_engine *e) {
  int version = 0;
  if (get(e, &version) != CUJIT_OK || version == 0) return;
  lua_pushinteger(L, version);
  lua_setfield(L, -2, key);
}

/* cuda.version() -> {cujit = "0.1.0", driver = 13000 | nil, nvrtc = 13000 | nil, lua = ...} */
static int l_version(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  lua_createtable(L, 0, 4);
  lua_pushstring(L, cujit_version());
  lua_setfield(L, -2, "cujit");
  set_version(L, "driver", cujit_driver_version, e);
  set_version(L, "nvrtc", cujit_nvrtc_version, e);
  lua_pushliteral(L, LUA_VERSION_MAJOR "." LUA_VERSION_MINOR);
  lua_setfield(L, -2, "lua");
  return 1;
}

static int l_cache_stats(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_cache_stats s;
  check(L, e, cujit_cache_stats_get(e, &s));
  lua_createtable(L, 0, 7);
  set_int(L, "memory_hits", (lua_Integer)s.memory_hits);
  set_int(L, "disk_hits", (lua_Integer)s.disk_hits);
  set_int(L, "misses", (lua_Integer)s.misses);
  set_int(L, "entries", (lua_Integer)s.entries);
  set_int(L, "bytes", (lua_Integer)s.bytes);
  set_int(L, "max_bytes", (lua_Integer)s.max_bytes);
  lua_pushboolean(L, s.disk_enabled);
  lua_setfield(L, -2, "disk_enabled");
  return 1;
}

/* cuda.cache_dir() -> the directory, or nil and why when the disk cache is off. */
static int l_cache_dir(lua_State *L) {
  const char *dir = cujit_cache_dir(cjl_engine(L));
  if (!dir || !*dir) {
    lua_pushnil(L);
    lua_pushliteral(L, "the disk cache is off (CUJIT_CACHE=off, or no writable directory)");
    return 2;
  }
  lua_pushstring(L, dir);
  return 1;
}

static int l_clear_cache(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  check(L, e, cujit_cache_clear(e));
  return 0;
}

/* ---------------------------------------------------------------------------------------------
** Streams
** ------------------------------------------------------------------------------------------- */

/* An event's userdata; declared here because streams wait on events. */
typedef struct cjl_event {
  cujit_event *event; /* NULL once freed */
  cjl_state *state;
} cjl_event;

static cjl_stream *to_stream(lua_State *L, int idx) {
  cjl_stream *s = luaL_checkudata(L, idx, CJL_STREAM);
  if (!s->stream) luaL_argerror(L, idx, "stream has been freed");
  return s;
}

cujit_stream *cjl_opt_stream(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return NULL;
  cjl_stream *s = luaL_testudata(L, idx, CJL_STREAM);
  if (!s)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "cujit.stream expected, got %s", luaL_typename(L, idx)));
  if (!s->stream) luaL_argerror(L, idx, "stream has been freed");
  return s->stream;
}

/* The stream's user value is a table of what its pending asynchronous copies still use. */
void cjl_stream_keep(lua_State *L, int stream_idx, int value_idx) {
  stream_idx = lua_absindex(L, stream_idx);
  value_idx = lua_absindex(L, value_idx);
  if (lua_getiuservalue(L, stream_idx, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, stream_idx, 1);
  }
  lua_pushvalue(L, value_idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

static void stream_forget_pending(lua_State *L, int idx) {
  lua_pushnil(L);
  lua_setiuservalue(L, idx, 1);
}

static int l_stream(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cjl_stream *s = lua_newuserdatauv(L, sizeof *s, 1);
  s->stream = NULL;
  s->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_STREAM);
  check(L, e, cujit_stream_create(e, &s->stream));
  return 1;
}

static int stream_synchronize(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cujit_status status = cujit_stream_synchronize(s->stream);
  if (status != CUJIT_OK) return cjl_error(L, s->state->engine);
  stream_forget_pending(L, 1);
  return 0;
}

/* s:query() -> true when all its work is done, false while some is pending. */
static int stream_query(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cujit_status status = cujit_stream_query(s->stream);
  if (status == CUJIT_ERROR_NOT_READY) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (status != CUJIT_OK) return cjl_error(L, s->state->engine);
  stream_forget_pending(L, 1);
  lua_pushboolean(L, 1);
  return 1;
}

static int stream_wait(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cjl_event *ev = luaL_checkudata(L, 2, CJL_EVENT);
  luaL_argcheck(L, ev->event, 2, "event has been freed");
  if (cujit_stream_wait_event(s->stream, ev->event) != CUJIT_OK)
    return cjl_error(L, s->state->engine);
  return 0;
}

static int stream_free(lua_State *L) {
  cjl_stream *s = luaL_checkudata(L, 1, CJL_STREAM);
  if (s->stream && !s->state->closed) cujit_stream_free(s->stream);
  s->stream = NULL;
  return 0;
}

static int stream_tostring(lua_State *L) {
  cjl_stream *s = luaL_checkudata(L, 1, CJL_STREAM);
  if (!s->stream)
    lua_pushliteral(L, "cujit.stream (freed)");
  else
    lua_pushfstring(L, "cujit.stream on device %d",
                    cujit_device_ordinal(cujit_stream_device(s->stream)));
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Events
** ------------------------------------------------------------------------------------------- */

static cjl_event *to_event(lua_State *L, int idx) {
  cjl_event *ev = luaL_checkudata(L, idx, CJL_EVENT);
  if (!ev->event) luaL_argerror(L, idx, "event has been freed");
  return ev;
}

static int l_event(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cjl_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
  ev->event = NULL;
  ev->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_EVENT);
  check(L, e, cujit_event_create(e, &ev->event));
  return 1;
}

/* e:record([stream]) -> e, so `local t0 = cuda.event():record()` reads well. */
static int event_record(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  if (cujit_event_record(ev->event, stream) != CUJIT_OK) return cjl_error(L, ev->state->engine);
  lua_settop(L, 1);
  return 1;
}

static int event_synchronize(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  if (cujit_event_synchronize(ev->event) != CUJIT_OK) return cjl_error(L, ev->state->engine);
  return 0;
}

static int event_query(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  cujit_status status = cujit_event_query(ev->event);
  if (status != CUJIT_OK && status != CUJIT_ERROR_NOT_READY) return cjl_error(L, ev->state->engine);
  lua_pushboolean(L, status == CUJIT_OK);
  return 1;
}

/* start:elapsed(stop) and cuda.elapsed(start, stop) -> milliseconds from start to stop. */
static int event_elapsed(lua_State *L) {
  cjl_event *start = to_event(L, 1), *stop = to_event(L, 2);
  float ms = 0;
  if (cujit_event_elapsed(start->event, stop->event, &ms) != CUJIT_OK)
    return cjl_error(L, start->state->engine);
  lua_pushnumber(L, ms);
  return 1;
}

static int event_free(lua_State *L) {
  cjl_event *ev = luaL_checkudata(L, 1, CJL_EVENT);
  if (ev->event && !ev->state->closed) cujit_event_free(ev->event);
  ev->event = NULL;
  return 0;
}

static int event_tostring(lua_State *L) {
  cjl_event *ev = luaL_checkudata(L, 1, CJL_EVENT);
  lua_pushstring(L, ev->event ? "cujit.event" : "cujit.event (freed)");
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Opening the module
** ------------------------------------------------------------------------------------------- */

void cjl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods,
                   lua_CFunction index) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  if (index) {
    lua_pushvalue(L, -2); /* the metatable too, to recognise its objects cheaply */
    lua_pushcclosure(L, index, 2);
  }
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

static const luaL_Reg stream_meta[] = {
    {"__gc", stream_free}, {"__close", stream_free}, {"__tostring", stream_tostring}, {NULL, NULL}};
static const luaL_Reg stream_methods[] = {{"synchronize", stream_synchronize},
                                          {"query", stream_query},
                                          {"wait", stream_wait},
                                          {"free", stream_free},
                                          {NULL, NULL}};
static const luaL_Reg event_meta[] = {
    {"__gc", event_free}, {"__close", event_free}, {"__tostring", event_tostring}, {NULL, NULL}};
static const luaL_Reg event_methods[] = {
    {"record", event_record}, {"synchronize", event_synchronize},
    {"query", event_query},   {"elapsed", event_elapsed},
    {"free", event_free},     {NULL, NULL}};

static const luaL_Reg module_functions[] = {
    {"devices", l_devices},     {"has_gpu", l_has_gpu},
    {"device", l_device},       {"memory", l_memory},
    {"allocated", l_allocated}, {"synchronize", l_synchronize},
    {"status", l_status},       {"reset", l_reset},
    {"version", l_version},     {"cache_stats", l_cache_stats},
    {"cache_dir", l_cache_dir}, {"clear_cache", l_clear_cache},
    {"stream", l_stream},       {"event", l_event},
    {"elapsed", event_elapsed}, {NULL, NULL}};

LUAMOD_API CJL_EXPORT int luaopen_cujit(lua_State *L) {
  luaL_checkversion(L);
  cjl_state_of(L); /* made now so it is finalized after every object (see state_gc) */
  cjl_new_class(L, CJL_STREAM, stream_meta, stream_methods, NULL);
  cjl_new_class(L, CJL_EVENT, event_meta, event_methods, NULL);
  luaL_newlib(L, module_functions);
  int module = lua_gettop(L);
  lua_pushliteral(L, CUJIT_VERSION_STRING);
  lua_setfield(L, module, "_VERSION");
  cjl_open_arrays(L, module);
  cjl_open_kernels(L, module);
  cjl_open_library(L, module);
  lua_settop(L, module);
  return 1;
}

int cujit_lua_open(lua_State *L, cujit_engine *engine) {
  if (!engine) return luaL_error(L, "cujit_lua_open: the engine is NULL");
  cjl_state *st = cjl_state_of(L);
  if (st->engine && st->engine != engine)
    return luaL_error(L, "cujit_lua_open: this Lua state already has another cujit engine");
  st->engine = engine;
  st->owns_engine = 0;
  luaL_requiref(L, "cujit", luaopen_cujit, 0);
  return 1;
}
