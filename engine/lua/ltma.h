/*
** ltma.h -- tensor maps from Lua (issue 26): a:tensor_map{box = {...}, swizzle = ..., oob = ...},
** a cujit.tensor_map that a kernel takes as its `const __grid_constant__ CUtensorMap` parameter.
*/
#ifndef CUJIT_LTMA_H
#define CUJIT_LTMA_H

#include "lstate.h"

/* The 128 bytes of the tensor map at `idx`, or NULL when the value is no tensor map. */
const void *cjl_test_tensor_map(lua_State *L, int idx);

void cjl_open_tensor_maps(lua_State *L);

#endif
