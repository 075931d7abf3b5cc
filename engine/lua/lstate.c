/*
** lstate.c -- the ground floor of the cujit Lua binding: the engine of each Lua state, errors,
** class registration, and the shared argument checks (NUL-free text, dtypes, shapes).
*/
#include "lstate.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------
** The engine of a Lua state
** ------------------------------------------------------------------------------------------- */

static const char state_key = 's'; /* its address is the registry key of the state record */

/* The record's finalizer: runs when the state closes, after every object made later (Lua calls
** finalizers in reverse order of creation), and the `closed` flag covers any other order. */
static int state_gc(lua_State *L) {
  cjl_state *st = lua_touserdata(L, 1);
  if (st->owns_engine && st->engine && !st->closed) {
    cujit_close(st->engine);
    st->closed = 1;
  }
  st->engine = NULL;
  return 0;
}

static cjl_state *new_state(lua_State *L) {
  cjl_state *st = lua_newuserdatauv(L, sizeof *st, 0);
  memset(st, 0, sizeof *st);
  st->owns_engine = 1;
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, state_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "cujit.state");
  lua_setfield(L, -2, "__name");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
  return st;
}

cjl_state *cjl_state_of(lua_State *L) {
  cjl_state *st;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key) == LUA_TUSERDATA)
    st = lua_touserdata(L, -1);
  else
    st = NULL;
  lua_pop(L, 1);
  return st ? st : new_state(L);
}

cujit_engine *cjl_engine(lua_State *L) {
  cjl_state *st = cjl_state_of(L);
  if (st->engine) return st->engine;
  if (st->closed) luaL_error(L, "cujit: the engine of this Lua state has been closed");
  cujit_status status = cujit_open(&st->engine);
  if (status != CUJIT_OK)
    luaL_error(L, "cujit: cannot open the engine: %s", cujit_status_string(status));
  return st->engine;
}

/* The engine's messages name the fields of cujit_compile_options, as a C caller wrote them; the
** one the Lua options table spells otherwise (`flags`, not extra_flags) is named the Lua way. */
int cjl_error(lua_State *L, cujit_engine *engine) {
  const char *msg = cujit_errmsg(engine);
  if (!msg || !*msg) msg = cujit_status_string(cujit_errcode(engine));
  if (strstr(msg, "check extra_flags")) msg = luaL_gsub(L, msg, "check extra_flags", "check flags");
  return luaL_error(L, "%s", msg);
}

int cjl_failed_argument(cujit_engine *engine, const char *kernel, const char **why) {
  const char *msg = cujit_errmsg(engine);
  size_t len = strlen(kernel);
  if (cujit_errcode(engine) != CUJIT_ERROR_ARGUMENT || strncmp(msg, "kernel '", 8) != 0 ||
      strncmp(msg + 8, kernel, len) != 0 || strncmp(msg + 8 + len, "', argument ", 12) != 0)
    return 0;
  char *end;
  long n = strtol(msg + 20 + len, &end, 10);
  const char *param = strncmp(end, " '", 2) == 0 ? strchr(end + 2, '\'') : NULL;
  const char *reason = param && strncmp(param, "' (", 3) == 0 ? strstr(param, "): ") : NULL;
  if (!reason || n < 1 || n > INT32_MAX) return 0;
  *why = reason + 3;
  return (int)n;
}

void cjl_check(lua_State *L, cujit_engine *engine, cujit_status status) {
  if (status != CUJIT_OK) cjl_error(L, engine);
}

/* ---------------------------------------------------------------------------------------------
** Classes
** ------------------------------------------------------------------------------------------- */

void cjl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods,
                   lua_CFunction index) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  if (index) {
    lua_pushvalue(L, -2); /* the metatable too, to recognise its objects cheaply */
    lua_pushcclosure(L, index, 2);
  }
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void cjl_add_methods(lua_State *L, const char *name, const luaL_Reg *methods) {
  if (luaL_getmetatable(L, name) != LUA_TTABLE)
    luaL_error(L, "cujit: class %s is not registered yet", name);
  int type = lua_getfield(L, -1, "__index");
  if (type == LUA_TFUNCTION) {
    if (!lua_getupvalue(L, -1, 1) || !lua_istable(L, -1))
      luaL_error(L, "cujit: class %s has no methods table", name);
  } else if (type != LUA_TTABLE) {
    luaL_error(L, "cujit: class %s has no __index", name);
  } else {
    lua_pushvalue(L, -1);
  }
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 3);
}

/* ---------------------------------------------------------------------------------------------
** Argument checks
** ------------------------------------------------------------------------------------------- */

const char *cjl_text(lua_State *L, int idx, int arg, const char *what, ...) {
  size_t len = 0;
  const char *s = lua_tolstring(L, idx, &len);
  const char *nul = s ? memchr(s, '\0', len) : NULL;
  if (nul) {
    va_list ap;
    va_start(ap, what);
    const char *name = lua_pushvfstring(L, what, ap);
    va_end(ap);
    luaL_argerror(L, arg,
                  lua_pushfstring(L,
                                  "%s holds a NUL byte (at byte %I of %I), which would end the "
                                  "text there; remove it",
                                  name, (lua_Integer)(nul - s) + 1, (lua_Integer)len));
  }
  return s;
}

const char *cjl_check_text(lua_State *L, int arg, const char *what) {
  luaL_checkstring(L, arg);
  return cjl_text(L, arg, arg, "%s", what);
}

#define DTYPE_LIST "f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64"

cujit_dtype cjl_check_dtype(lua_State *L, int idx) {
  const char *name = cjl_check_text(L, idx, "the dtype");
  cujit_dtype dtype = cujit_dtype_from_name(name);
  if (dtype == CUJIT_DTYPE_NONE)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "unknown dtype '%s' (use one of " DTYPE_LIST ")", name));
  return dtype;
}

cujit_dtype cjl_opt_dtype(lua_State *L, int idx, cujit_dtype def) {
  return lua_isnoneornil(L, idx) ? def : cjl_check_dtype(L, idx);
}

/* A positive integer dimension from the value at the top of the stack (popped). */
static size_t check_dim(lua_State *L, int arg, int which) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, -1, &exact);
  if (!exact || v < 1 || (uint64_t)v > (uint64_t)UINT32_MAX * 64) {
    const char *got =
        lua_type(L, -1) == LUA_TNUMBER ? luaL_tolstring(L, -1, NULL) : luaL_typename(L, -1);
    luaL_argerror(L, arg,
                  which ? lua_pushfstring(L,
                                          "dimension %d of the shape must be a positive "
                                          "integer, got %s",
                                          which, got)
                        : lua_pushfstring(L,
                                          "shape must be a positive integer or a table of 1 to "
                                          "3 of them, got %s",
                                          got));
  }
  lua_pop(L, 1);
  return (size_t)v;
}

int cjl_check_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS]) {
  int ndim;
  shape[0] = shape[1] = shape[2] = 1;
  if (lua_istable(L, idx)) {
    size_t n = lua_rawlen(L, idx);
    if (n < 1 || n > CJL_MAX_DIMS)
      luaL_argerror(L, idx,
                    lua_pushfstring(L, "shape must have 1 to 3 dimensions, got %d", (int)n));
    for (size_t i = 0; i < n; i++) {
      lua_rawgeti(L, idx, (lua_Integer)i + 1);
      shape[i] = check_dim(L, idx, (int)i + 1);
    }
    ndim = (int)n;
  } else {
    lua_pushvalue(L, idx);
    shape[0] = check_dim(L, idx, 0);
    ndim = 1;
  }
  /* Keep the element count times 8 bytes well inside size_t. */
  if ((double)shape[0] * (double)shape[1] * (double)shape[2] > (double)(SIZE_MAX / 16))
    luaL_argerror(L, idx, "shape too large");
  return ndim;
}
