/*
** ltma.h -- tensor maps from Lua (issue 26): a:tensor_map{box = {...}, swizzle = ..., oob = ...},
** a cujit.tensor_map that a kernel takes as its `const __grid_constant__ CUtensorMap` parameter;
** and the bytes a by-value struct parameter takes from Lua, a string or a map.
*/
#ifndef CUJIT_LTMA_H
#define CUJIT_LTMA_H

#include "lstate.h"

/* The bytes the value at `idx` gives a by-value parameter of `size` bytes (a struct, a vector
** type, a CUtensorMap), for a launch as for g:set_args, in *bytes: a string of exactly that size
** (the engine copies `size` bytes: a shorter string would be read past its end) or a tensor map
** (its 128 bytes). Returns NULL, or why the value is neither (on Lua's stack). Size 0 (cujit
** could not size the type) takes any value, a string's bytes or NULL: the engine then says what
** to do. */
const char *cjl_struct_bytes(lua_State *L, int idx, size_t size, const void **bytes);

void cjl_open_tensor_maps(lua_State *L);

#endif
