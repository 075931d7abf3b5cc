/*
** loptions.c -- compile options from Lua: the options table every kernel-making call takes, read
** into a cujit_compile_options by cujit's own table of options (cujit_compile_option: arch,
** fast_math, ..., by their Lua names) plus the binding's own (preamble, uses, name), and the device
** functions that `uses` brings in (cuda.device_function), placed ahead of the kernel with what
** they use first.
*/
#include "loptions.h"

#include <string.h>

/* The options of the Lua table that are not compile options: the binding's own. The compile
** options are cujit's table's (cujit_compile_option), by their Lua names. */
static const char *const lua_only[] = {"preamble", "uses", "name", NULL};

typedef cjl_compile_opts compile_opts;

static void anchor_string(lua_State *L, compile_opts *co) {
  lua_rawseti(L, co->anchor, (lua_Integer)lua_rawlen(L, co->anchor) + 1);
}

static int check_flag(lua_State *L, int arg, const char *key) {
  if (!lua_isboolean(L, -1))
    luaL_argerror(
        L, arg,
        lua_pushfstring(L, "option '%s' must be a boolean, got %s", key, luaL_typename(L, -1)));
  return lua_toboolean(L, -1);
}

static const char *check_option_string(lua_State *L, int arg, const char *key) {
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_argerror(
        L, arg,
        lua_pushfstring(L, "option '%s' must be a string, got %s", key, luaL_typename(L, -1)));
  return cjl_text(L, -1, arg, "option '%s'", key);
}

/* A list option (a table of strings) on top of the stack as a C array kept in a scratch block. */
static const char *const *string_list(lua_State *L, int arg, compile_opts *co, const char *key,
                                      size_t *count) {
  if (!lua_istable(L, -1))
    luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be a table of strings", key));
  int list = lua_gettop(L);
  size_t n = lua_rawlen(L, list);
  const char **items = lua_newuserdatauv(L, (n ? n : 1) * sizeof *items, 0);
  for (size_t i = 0; i < n; i++) {
    if (lua_rawgeti(L, list, (lua_Integer)i + 1) != LUA_TSTRING)
      luaL_argerror(L, arg,
                    lua_pushfstring(L, "option '%s'[%d] must be a string, got %s", key, (int)i + 1,
                                    luaL_typename(L, -1)));
    items[i] = cjl_text(L, -1, arg, "option '%s'[%d]", key, (int)i + 1);
    lua_pop(L, 1);
  }
  anchor_string(L, co);
  *count = n;
  return items;
}

/* defines: a list {"A", "B=2"} and/or a map {A = true, B = 2, C = "x"}. */
static void parse_defines(lua_State *L, int arg, compile_opts *co) {
  if (!lua_istable(L, -1))
    luaL_argerror(L, arg,
                  "option 'defines' must be a table ({'NAME', 'NAME=value'} or "
                  "{NAME = value})");
  int t = lua_gettop(L);
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) n++, lua_pop(L, 1);
  const char **items = lua_newuserdatauv(L, (n ? n : 1) * sizeof *items, 0);
  anchor_string(L, co);
  size_t i = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    /* Both halves are checked before "NAME=value" is made: formatting would stop at a NUL. */
    if (lua_type(L, -2) == LUA_TSTRING) cjl_text(L, -2, arg, "a name in option 'defines'");
    if (lua_type(L, -1) == LUA_TSTRING && lua_type(L, -2) == LUA_TNUMBER)
      cjl_text(L, -1, arg, "option 'defines'[%I]", lua_tointeger(L, -2));
    else if (lua_type(L, -1) == LUA_TSTRING)
      cjl_text(L, -1, arg, "a value in option 'defines'");
    if (lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TSTRING) {
      lua_pushvalue(L, -1);
    } else if (lua_type(L, -2) == LUA_TSTRING && lua_isboolean(L, -1) && lua_toboolean(L, -1)) {
      lua_pushvalue(L, -2);
    } else if (lua_type(L, -2) == LUA_TSTRING &&
               (lua_type(L, -1) == LUA_TNUMBER || lua_type(L, -1) == LUA_TSTRING)) {
      const char *value = luaL_tolstring(L, -1, NULL);
      lua_pushfstring(L, "%s=%s", lua_tostring(L, -3), value);
      lua_remove(L, -2);
    } else {
      luaL_argerror(L, arg,
                    "option 'defines' must hold strings 'NAME' / 'NAME=value', or "
                    "NAME = value (a string, number or true)");
    }
    items[i++] = lua_tostring(L, -1);
    anchor_string(L, co);
    lua_pop(L, 1);
  }
  co->o.defines = items;
  co->o.define_count = i;
}

/* Adds a device function and, first, what it uses, once each, to the preamble pieces. */
static void add_device_function(lua_State *L, compile_opts *co, int visited, int fn) {
  lua_pushvalue(L, fn);
  if (lua_rawget(L, visited) != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushvalue(L, fn);
  lua_pushboolean(L, 1);
  lua_rawset(L, visited);
  luaL_checkstack(L, 8, "cujit: device functions nested too deep");
  lua_getiuservalue(L, fn, 2); /* its own uses */
  int uses = lua_gettop(L);
  for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, uses); i++) {
    lua_rawgeti(L, uses, i);
    add_device_function(L, co, visited, lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_getiuservalue(L, fn, 3);
  lua_getiuservalue(L, fn, 1);
  lua_pushfstring(L, "#line 1 \"%s\"\n%s\n", lua_tostring(L, -2), lua_tostring(L, -1));
  lua_rawseti(L, co->pieces, ++co->npieces);
  lua_pop(L, 2);
}

static void parse_uses(lua_State *L, int arg, compile_opts *co) {
  if (!lua_istable(L, -1))
    luaL_argerror(L, arg, "option 'uses' must be a table of cuda.device_function objects");
  int uses = lua_gettop(L);
  lua_newtable(L);
  int visited = lua_gettop(L);
  for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, uses); i++) {
    lua_rawgeti(L, uses, i);
    if (!luaL_testudata(L, -1, CJL_DEVFN))
      luaL_argerror(L, arg,
                    lua_pushfstring(L,
                                    "option 'uses'[%d] must be a cujit.device_function, "
                                    "got %s",
                                    (int)i, luaL_typename(L, -1)));
    add_device_function(L, co, visited, lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* Pushes the names an options table takes: "arch, fast_math, ..., preamble, uses, name". */
static void push_option_names(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  const cujit_compile_option_info *info;
  for (size_t i = 0; (info = cujit_compile_option(i)) != NULL; i++) {
    luaL_addstring(&b, info->lua_name);
    luaL_addstring(&b, ", ");
  }
  for (size_t i = 0; lua_only[i]; i++) {
    luaL_addstring(&b, lua_only[i]);
    if (lua_only[i + 1]) luaL_addstring(&b, ", ");
  }
  luaL_pushresult(&b);
}

/* The compile option whose Lua name is `key`, or NULL. */
static const cujit_compile_option_info *find_option(const char *key) {
  const cujit_compile_option_info *info;
  for (size_t i = 0; (info = cujit_compile_option(i)) != NULL; i++)
    if (strcmp(info->lua_name, key) == 0) return info;
  return NULL;
}

/* Stores the value on top of the stack as the option `key`, by its kind in cujit's table. */
static void parse_option(lua_State *L, int arg, compile_opts *co, const char *key) {
  const cujit_compile_option_info *info = find_option(key);
  char *at = info ? (char *)&co->o + info->offset : NULL;
  if (info && info->kind == CUJIT_OPTION_TEXT)
    *(const char **)(void *)at = check_option_string(L, arg, key);
  else if (info && info->kind == CUJIT_OPTION_SWITCH)
    *(int *)(void *)at = check_flag(L, arg, key);
  else if (info && strcmp(info->field, "defines") == 0) /* also takes a map {N = 4} */
    parse_defines(L, arg, co);
  else if (info && strcmp(info->field, "nonnull") == 0 && lua_isboolean(L, -1)) {
    static const char *const every[] = {"*"}; /* nonnull = true: every pointer not "= NULL" */
    co->o.nonnull = lua_toboolean(L, -1) ? every : NULL;
    co->o.nonnull_count = lua_toboolean(L, -1) ? 1 : 0;
  } else if (info)
    *(const char *const **)(void *)at =
        string_list(L, arg, co, key, (size_t *)(void *)((char *)&co->o + info->count_offset));
  else if (strcmp(key, "name") == 0)
    co->name = check_option_string(L, arg, key);
  else if (strcmp(key, "preamble") != 0 && strcmp(key, "uses") != 0) {
    push_option_names(L);
    luaL_argerror(L, arg,
                  lua_pushfstring(L, "unknown option '%s' (known: %s)", key, lua_tostring(L, -1)));
  }
}

/* Reads the options table at `arg` (none/nil: defaults). Pushes two tables (anchor, pieces);
** what co points to stays valid while they, and the options table, are on the stack. Returns
** the preamble: the device functions of opts.uses (dependencies first), then opts.preamble;
** NULL when there is none. */
const char *cjl_parse_compile_options(lua_State *L, int arg, compile_opts *co) {
  memset(co, 0, sizeof *co);
  co->o = (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  lua_newtable(L);
  co->anchor = lua_gettop(L);
  lua_newtable(L);
  co->pieces = lua_gettop(L);
  if (lua_isnoneornil(L, arg)) return NULL;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_argerror(L, arg, "options are named: {arch = 'sm_90', fast_math = true, ...}");
    parse_option(L, arg, co, cjl_text(L, -2, arg, "an option name"));
    lua_pop(L, 1);
  }
  if (lua_getfield(L, arg, "uses") != LUA_TNIL) parse_uses(L, arg, co);
  lua_pop(L, 1);
  if (lua_getfield(L, arg, "preamble") != LUA_TNIL) {
    check_option_string(L, arg, "preamble");
    if (co->npieces)
      lua_pushfstring(L, "#line 1 \"preamble\"\n%s\n", lua_tostring(L, -1));
    else
      lua_pushvalue(L, -1);
    lua_rawseti(L, co->pieces, ++co->npieces);
  }
  lua_pop(L, 1);
  if (co->npieces == 0) return NULL;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= co->npieces; i++) {
    lua_rawgeti(L, co->pieces, i);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  const char *preamble = lua_tostring(L, -1);
  anchor_string(L, co);
  return preamble;
}

void cjl_refuse_unit_option(lua_State *L, int arg, int given, const char *option,
                            const char *what) {
  if (given)
    luaL_argerror(
        L, arg,
        lua_pushfstring(L, "option '%s' is for cuda.source and cuda.load (%s)", option, what));
}

/* ---------------------------------------------------------------------------------------------
** Device functions shared by kernels
** ------------------------------------------------------------------------------------------- */

/* The name of the first __device__ function in `code`, for #line; "device_function" if none. */
static const char *default_function_name(const char *code, char *buf, size_t len) {
  const char *dev = strstr(code, "__device__");
  const char *paren = dev ? strchr(dev, '(') : NULL;
  if (paren) {
    const char *end = paren;
    while (end > dev && (end[-1] == ' ' || end[-1] == '\t')) end--;
    const char *start = end;
    while (start > dev && (start[-1] == '_' || (start[-1] >= '0' && start[-1] <= '9') ||
                           ((start[-1] | 32) >= 'a' && (start[-1] | 32) <= 'z')))
      start--;
    if (end > start && (size_t)(end - start) < len) {
      memcpy(buf, start, (size_t)(end - start));
      buf[end - start] = '\0';
      return buf;
    }
  }
  return "device_function";
}

/* cuda.device_function(code [, {name = ..., uses = {...}}]) -> device function object, for
** cuda.jit(..., {uses = {f}}). */
static int l_device_function(lua_State *L) {
  const char *code = cjl_check_text(L, 1, "the code");
  lua_settop(L, 2);
  char buf[64];
  const char *name = default_function_name(code, buf, sizeof buf);
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
      const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
      if (strcmp(key, "name") != 0 && strcmp(key, "uses") != 0)
        luaL_argerror(L, 2, lua_pushfstring(L, "unknown option '%s' (known: name, uses)", key));
      lua_pop(L, 1);
    }
    if (lua_getfield(L, 2, "name") != LUA_TNIL) {
      luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 2, "option 'name' must be a string");
      name = cjl_text(L, -1, 2, "option 'name'");
      luaL_argcheck(L, strpbrk(name, "\"\\\n") == NULL, 2,
                    "name may not hold quotes, '\\' or newlines");
    }
  }
  lua_newuserdatauv(L, 1, 3);
  int fn = lua_gettop(L);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, fn, 1);
  lua_newtable(L); /* uses, copied so later changes to the caller's table do not matter */
  int uses = lua_gettop(L);
  if (!lua_isnoneornil(L, 2)) {
    if (lua_getfield(L, 2, "uses") != LUA_TNIL) {
      luaL_argcheck(L, lua_istable(L, -1), 2, "option 'uses' must be a table of device functions");
      for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        if (!luaL_testudata(L, -1, CJL_DEVFN))
          luaL_argerror(L, 2,
                        lua_pushfstring(L,
                                        "option 'uses'[%d] must be a "
                                        "cujit.device_function",
                                        (int)i));
        lua_rawseti(L, uses, i);
      }
    }
    lua_pop(L, 1);
  }
  lua_setiuservalue(L, fn, 2);
  lua_pushstring(L, name);
  lua_setiuservalue(L, fn, 3);
  luaL_setmetatable(L, CJL_DEVFN);
  lua_settop(L, fn);
  return 1;
}

static int devfn_source(lua_State *L) {
  luaL_checkudata(L, 1, CJL_DEVFN);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

static int devfn_tostring(lua_State *L) {
  luaL_checkudata(L, 1, CJL_DEVFN);
  lua_getiuservalue(L, 1, 3);
  lua_pushfstring(L, "cujit.device_function %s", lua_tostring(L, -1));
  return 1;
}

static const luaL_Reg devfn_meta[] = {{"__tostring", devfn_tostring}, {NULL, NULL}};

static const luaL_Reg devfn_methods[] = {{"source", devfn_source}, {NULL, NULL}};

void cjl_open_options(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_DEVFN, devfn_meta, devfn_methods, NULL);
  lua_pushcfunction(L, l_device_function);
  lua_setfield(L, module_index, "device_function");
  /* cuda.options: the names an options table takes, as the errors list them (the REPL completes
  ** them): cujit's compile options, then the binding's own. */
  lua_newtable(L);
  const cujit_compile_option_info *info;
  lua_Integer n = 0;
  for (size_t i = 0; (info = cujit_compile_option(i)) != NULL; i++) {
    lua_pushstring(L, info->lua_name);
    lua_rawseti(L, -2, ++n);
  }
  for (size_t i = 0; lua_only[i]; i++) {
    lua_pushstring(L, lua_only[i]);
    lua_rawseti(L, -2, ++n);
  }
  lua_setfield(L, module_index, "options");
}
