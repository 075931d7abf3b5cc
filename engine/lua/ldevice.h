/*
** ldevice.h -- the engine's devices, versions and compile cache as seen from Lua.
*/
#ifndef CUJIT_LDEVICE_H
#define CUJIT_LDEVICE_H

#include "lstate.h"

/* Adds cuda.devices, has_gpu, device, memory, allocated, synchronize, status, reset, version,
** cache_stats, cache_dir and clear_cache to the module table at `module_index`. */
void cjl_open_devices(lua_State *L, int module_index);

#endif
