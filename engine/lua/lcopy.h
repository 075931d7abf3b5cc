/*
** lcopy.h -- copies between Lua tables, host arrays and device arrays.
*/
#ifndef CUJIT_LCOPY_H
#define CUJIT_LCOPY_H

#include "lstate.h"

/* Adds the copy methods to the device and host array classes (registered before) and
** cuda.to_device / cuda.to_device_async to the module table at `module_index`. */
void cjl_open_copies(lua_State *L, int module_index);

#endif
