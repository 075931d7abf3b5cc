/*
** ldevice.c -- the engine's devices, versions and compile cache from Lua: cuda.devices(),
** cuda.device(), memory and fault status, cuda.version(), cuda.cache_stats() and friends.
*/
#include "ldevice.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
** Devices
** ------------------------------------------------------------------------------------------- */

static cujit_device *current_device(lua_State *L, cujit_engine *e) {
  cujit_device *dev;
  cjl_check(L, e, cujit_current_device(e, &dev));
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
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  char arch[32];
  cjl_check(L, e, cujit_device_info_get(dev, &info));
  cjl_check(L, e, cujit_device_arch(dev, arch, sizeof arch));
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
    cjl_check(L, e, cujit_device_get(e, i < count ? i : CUJIT_DEVICE_CPU, &dev));
    push_device_info(L, e, dev);
    lua_rawseti(L, -2, i + 1);
  }
  if (!gpus) lua_insert(L, -2);
  return gpus ? 1 : 2;
}

/* cuda.has_gpu() -> true, or false and the reason. Whether there is a GPU, whichever device is
** current: the CPU device (CUJIT_DEVICE=cpu) is not one. */
static int l_has_gpu(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  int count = 0;
  cujit_status st = cujit_device_count(e, &count);
  if (st == CUJIT_OK && count > 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  char why[1024]; /* kept: asking for the current device below sets the message anew */
  snprintf(why, sizeof why, "%s", st == CUJIT_OK ? "the driver sees no GPU" : cujit_errmsg(e));
  cujit_device *dev;
  if (cujit_current_device(e, &dev) == CUJIT_OK && cujit_device_ordinal(dev) == CUJIT_DEVICE_CPU)
    lua_pushfstring(L, "%s; kernels run on the CPU device, the current device", why);
  else
    lua_pushfstring(L,
                    "%s; to run kernels on the CPU device instead, set CUJIT_DEVICE=cpu (Lua: "
                    "cuda.device(\"cpu\"))",
                    why);
  return 2;
}

/* The ordinal at `idx`: 0, 1, ..., or "cpu" / -1 for the CPU device. */
static int check_ordinal(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    luaL_argcheck(L, strcmp(lua_tostring(L, idx), "cpu") == 0, idx,
                  "a device is an ordinal (0, 1, ...) or \"cpu\"");
    return CUJIT_DEVICE_CPU;
  }
  lua_Integer ordinal = luaL_checkinteger(L, idx);
  luaL_argcheck(L, (ordinal >= 0 && ordinal <= INT32_MAX) || ordinal == CUJIT_DEVICE_CPU, idx,
                "device ordinals start at 0 (the CPU device: \"cpu\" or -1)");
  return (int)ordinal;
}

cujit_device *cjl_check_device(lua_State *L, int idx) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *dev;
  cjl_check(L, e, cujit_device_get(e, check_ordinal(L, idx), &dev));
  return dev;
}

cujit_device *cjl_opt_device_option(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return NULL;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_getfield(L, idx, "device");
  cujit_device *dev = NULL;
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING && !lua_isinteger(L, -1))
      luaL_argerror(L, idx, "option 'device' is an ordinal (0, 1, ...) or \"cpu\"");
    dev = cjl_check_device(L, lua_gettop(L));
  }
  lua_pop(L, 1);
  return dev;
}

/* cuda.device([ordinal | "cpu"]) -> info of the current device, after making that one current. */
static int l_device(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  if (!lua_isnoneornil(L, 1)) cjl_check(L, e, cujit_set_device(e, check_ordinal(L, 1)));
  push_device_info(L, e, current_device(L, e));
  return 1;
}

/* cuda.enable_peer(device, peer): kernels on `device` may then take arrays of `peer`. */
static int l_enable_peer(lua_State *L) {
  cujit_device *dev = cjl_check_device(L, 1), *peer = cjl_check_device(L, 2);
  cjl_check(L, cjl_engine(L), cujit_device_enable_peer(dev, peer));
  return 0;
}

/* cuda.memory() -> free, total bytes of the current device, and the bytes its memory pool holds
** (in live arrays or kept for the next allocation). */
static int l_memory(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *device = current_device(L, e);
  size_t free_bytes, total_bytes, reserved;
  cjl_check(L, e, cujit_device_memory(device, &free_bytes, &total_bytes));
  cjl_check(L, e, cujit_device_pool_reserved(device, &reserved));
  lua_pushinteger(L, (lua_Integer)free_bytes);
  lua_pushinteger(L, (lua_Integer)total_bytes);
  lua_pushinteger(L, (lua_Integer)reserved);
  return 3;
}

/* cuda.trim(): the pool's unused memory back to the device (after the queued work). */
static int l_trim(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cjl_check(L, e, cujit_device_trim(current_device(L, e)));
  return 0;
}

static int l_allocated(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  lua_pushinteger(L, (lua_Integer)cujit_device_allocated(current_device(L, e)));
  return 1;
}

/* cuda.synchronize([device]): the current device's work, or that device's. */
static int l_synchronize(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *dev = lua_isnoneornil(L, 1) ? current_device(L, e) : cjl_check_device(L, 1);
  cjl_check(L, e, cujit_device_synchronize(dev));
  return 0;
}

/* cuda.status() -> true, or false and the fault (which kernel, how to recover). */
/* cuda.status() -> true, or false and the reason: the current device's health, and with no
** device to be had (no driver, no GPU), false and why rather than an error. */
static int l_status(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *dev;
  if (cujit_current_device(e, &dev) != CUJIT_OK || cujit_device_status(dev) != CUJIT_OK) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, cujit_errmsg(e));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_reset(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cjl_check(L, e, cujit_device_reset(current_device(L, e)));
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
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cjl_check(L, e, cujit_cache_stats_get(e, &s));
  lua_createtable(L, 0, 9);
  set_int(L, "memory_hits", (lua_Integer)s.memory_hits);
  set_int(L, "disk_hits", (lua_Integer)s.disk_hits);
  set_int(L, "misses", (lua_Integer)s.misses);
  set_int(L, "entries", (lua_Integer)s.entries);
  set_int(L, "bytes", (lua_Integer)s.bytes);
  set_int(L, "max_bytes", (lua_Integer)s.max_bytes);
  set_int(L, "pch_created", (lua_Integer)s.pch_created); /* precompiled headers (CUJIT_PCH) */
  set_int(L, "pch_used", (lua_Integer)s.pch_used);
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
  cjl_check(L, e, cujit_cache_clear(e));
  return 0;
}

static const luaL_Reg module_functions[] = {{"devices", l_devices},
                                            {"has_gpu", l_has_gpu},
                                            {"device", l_device},
                                            {"enable_peer", l_enable_peer},
                                            {"memory", l_memory},
                                            {"allocated", l_allocated},
                                            {"trim", l_trim},
                                            {"synchronize", l_synchronize},
                                            {"status", l_status},
                                            {"reset", l_reset},
                                            {"version", l_version},
                                            {"cache_stats", l_cache_stats},
                                            {"cache_dir", l_cache_dir},
                                            {"clear_cache", l_clear_cache},
                                            {NULL, NULL}};

void cjl_open_devices(lua_State *L, int module_index) {
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
