/*
** cujit_lua.h -- the C side of cujit's Lua 5.4 binding, for programs that open their own Lua
** state and want the `cujit` module in it, sharing their engine.
**
** These functions are not in libcujit: they are defined in libcujit-lua (link it with libcujit
** and liblua5.4); the `cujit` command and the `cujit.so` module carry them too. Everything else
** (engines, kernels, buffers) is declared by cujit.h, included here.
*/
#ifndef CUJIT_LUA_H
#define CUJIT_LUA_H

#include "cujit.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lua_State;

/* Makes the cujit module available in a Lua 5.4 state the program opened itself, sharing
** `engine` (which must outlive the state), so kernels and buffers made from C and from Lua meet.
** Afterwards `require "cujit"` returns the module; it is also left on the stack. Returns 1 (the
** module on the stack). */
CUJIT_API int cujit_lua_open(struct lua_State *L, cujit_engine *engine);

/* Wraps a buffer made from C as a Lua device array of `dtype` and 1-D length bytes/size, pushed
** on the stack; the Lua value does not own it (the C side frees it). Returns 1. */
CUJIT_API int cujit_lua_push_buffer(struct lua_State *L, cujit_buffer *buffer);

#ifdef __cplusplus
}
#endif

#endif /* CUJIT_LUA_H */
