/*
** ldevice.h -- the engine's devices, versions and compile cache as seen from Lua.
*/
#ifndef CUJIT_LDEVICE_H
#define CUJIT_LDEVICE_H

#include "lstate.h"

/* The device named at `idx`: an ordinal (0, 1, ...), or "cpu" / -1 for the CPU device; raises
** when it is malformed or does not exist (with the engine's message, naming those there are). */
cujit_device *cjl_check_device(lua_State *L, int idx);

/* The `device` field of the options table at `idx` (none, nil or no field: NULL). */
cujit_device *cjl_opt_device_option(lua_State *L, int idx);

/* Adds cuda.devices, has_gpu, device, enable_peer, memory, allocated, synchronize, status, reset,
 *version,
 ** cache_stats, cache_dir and clear_cache to the module table at `module_index`. */
void cjl_open_devices(lua_State *L, int module_index);

#endif
