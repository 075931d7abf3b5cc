/*
** ldlpack.h -- foreign memory and DLPack from Lua: cuda.wrap, a:to_dlpack, cuda.from_dlpack and
** cuda.dlpack_delete.
*/
#ifndef CUJIT_LDLPACK_H
#define CUJIT_LDLPACK_H

#include "lstate.h"

/* Adds the module functions to the table at `module_index` and a:to_dlpack to device arrays. */
void cjl_open_dlpack(lua_State *L, int module_index);

#endif
