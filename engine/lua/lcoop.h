/*
** lcoop.h -- what cooperative launches need from Lua besides the configuration key
** (k[{grid, block, cooperative = true}], llaunch.c): k:max_cooperative_blocks(block [, shared]).
*/
#ifndef CUJIT_LCOOP_H
#define CUJIT_LCOOP_H

#include "lstate.h"

/* Adds max_cooperative_blocks to kernels. */
void cjl_open_cooperative(lua_State *L);

#endif
