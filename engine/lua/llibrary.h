/*
** llibrary.h -- the Lua side of cujit's device library: random fills, reductions, elementwise.
*/
#ifndef CUJIT_LLIBRARY_H
#define CUJIT_LLIBRARY_H

#include "lstate.h"

/* Adds the reductions to the device array class (registered first), and cuda.random,
** cuda.elementwise and cuda.clock to the module table at `module_index`. */
void cjl_open_library(lua_State *L, int module_index);

#endif
