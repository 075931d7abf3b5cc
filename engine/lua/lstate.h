/*
** lstate.h -- the ground floor of the cujit Lua binding: the engine of a Lua state, errors,
** class registration, and the argument checks every other file uses (dtypes, shapes, and strings
** that must reach the engine whole). Every other file of engine/lua builds on this one; it calls
** none of them. The binding uses only the public C API (cujit.h), never the engine's internals.
*/
#ifndef CUJIT_LSTATE_H
#define CUJIT_LSTATE_H

#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "cujit.h"

#define CJL_MAX_DIMS 3
#define CJL_MAX_ARGS 128 /* kernel parameters; the engine refuses more anyway */

/* One per Lua state, kept in the registry. Every userdata that holds engine objects points here,
** so its finalizer can tell whether the engine (and with it the object) is already gone. */
typedef struct cjl_state {
  cujit_engine *engine; /* NULL until first needed (or given by cujit_lua_open) */
  int owns_engine;      /* 1: closed with the state; 0: shared from C, the C side closes it */
  int closed;           /* the owned engine was closed: every object in it is already freed */
  unsigned long
      launches; /* kernel launches made from Lua: managed arrays wait after one (larray.c) */
} cjl_state;

/* The state's record, made on first call. */
cjl_state *cjl_state_of(lua_State *L);

/* The state's engine, opened on first call (raises if it cannot be opened). Opening needs no GPU;
** only the calls that use one fail without it. */
cujit_engine *cjl_engine(lua_State *L);

/* Raises a Lua error carrying the engine's last message (cujit_errmsg), which says what went
** wrong and what to do. Never returns; typed int for `return cjl_error(L, e);`. */
int cjl_error(lua_State *L, cujit_engine *engine);

/* When the engine's last failure is about one launch argument of kernel `kernel` (it writes
** "kernel 'K', argument N 'P' (type): why"), returns N, counted from 1, and points *why at the
** reason, for a message in Lua's words ("bad argument #N 'P' to 'K' (why)"); else returns 0. */
int cjl_failed_argument(cujit_engine *engine, const char *kernel, const char **why);

/* Raises with the engine's message when status is not CUJIT_OK. */
void cjl_check(lua_State *L, cujit_engine *engine, cujit_status status);

/* Registers metatable `name` with the functions `meta`, and an __index: the table of `methods`,
** or, when `index` is given, that function with two upvalues (the methods table and the
** metatable itself, to recognise its objects without a registry lookup). */
void cjl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods,
                   lua_CFunction index);

/* Adds `methods` to the methods table of class `name` (registered by cjl_new_class), for a file
** that builds on that class. */
void cjl_add_methods(lua_State *L, const char *name, const luaL_Reg *methods);

/* The string at `idx`, which the engine will read as C text: a NUL byte inside it would cut it
** short there without a word, so one is an argument error at `arg` naming `what` ("the body",
** "option '%s'", formatted as lua_pushfstring does only when it is needed). The value must be a
** string (the caller checks its type). */
const char *cjl_text(lua_State *L, int idx, int arg, const char *what, ...);

/* luaL_checkstring for text that reaches the engine: a string argument without NUL bytes. */
const char *cjl_check_text(lua_State *L, int arg, const char *what);

/* The dtype named by the string at `idx` ("f32", ...); raises an argument error naming the valid
** ones otherwise. cjl_opt_dtype gives `def` when the argument is none or nil. */
cujit_dtype cjl_check_dtype(lua_State *L, int idx);
cujit_dtype cjl_opt_dtype(lua_State *L, int idx, cujit_dtype def);

/* A shape at `idx`: a positive integer (1-D) or a table of 1 to 3 of them. Fills shape, returns
** the number of dimensions; raises an argument error otherwise. */
int cjl_check_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS]);

#endif
