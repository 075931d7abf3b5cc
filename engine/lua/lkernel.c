/*
** lkernel.c -- kernels from Lua: defining them (cuda.jit, cuda.source, cuda.load, shared device
** functions), compile options, introspection, and the launch path k[{grid, block}](...) /
** k:forall(n)(...), which converts arguments by the kernel's signature into a cujit_arg array on
** the C stack and reuses the launcher of an unchanged configuration, so a launch from a Lua loop
** allocates nothing.
*/
#include "lconv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the launch path needs of a parameter, read once when the kernel is wrapped. */
typedef struct cjl_param {
  const char *name; /* owned by the kernel */
  cujit_param_kind kind;
  cujit_dtype dtype;
  int is_const;
  int type_var;
  int is_bool;
  int plain_number;        /* a scalar of a numeric dtype, not bool or generic: the fast path */
  cujit_arg_kind arg_kind; /* for plain_number: INT, UINT or FLOAT */
  size_t size;
} cjl_param;

/* User values of a kernel: the last grid/block launcher, the last forall launcher, and (for a
** specialisation) the generic kernel that owns it. */
enum { UV_LAUNCHER = 1, UV_FORALL, UV_PARENT, KERNEL_UVS = UV_PARENT };

typedef struct cjl_kernel {
  cujit_kernel *kernel;      /* NULL once freed */
  struct cjl_kernel *parent; /* the generic kernel that owns this specialisation, or NULL */
  cjl_state *state;
  struct cjl_launcher *launcher; /* the cached grid/block launcher (user value UV_LAUNCHER) */
  int owns;
  int nparams;
  char arch[24]; /* from the PTX's .target, "" for a generic kernel */
  cjl_param params[];
} cjl_kernel;

/* A kernel bound to a launch configuration; user values: the kernel, the stream. */
typedef struct cjl_launcher {
  cjl_kernel *kernel;
  cujit_launch_config config; /* config.stream is filled in at each call */
  cjl_stream *stream;         /* NULL: the default stream */
  size_t n;                   /* forall: the element count */
  int forall;
} cjl_launcher;

typedef struct cjl_program {
  cujit_program *program; /* NULL once freed */
  cjl_state *state;
} cjl_program;

/* Upvalues of the launcher's __call: the metatables it tells arguments apart by. */
#define LAUNCHER_MT lua_upvalueindex(1)
#define ARRAY_MT lua_upvalueindex(2)
#define HOST_MT lua_upvalueindex(3)

/* Usable: not freed, and not a specialisation whose generic kernel was freed (with it). */
static int kernel_alive(const cjl_kernel *k) {
  return k->kernel && (!k->parent || k->parent->kernel);
}

static const char *kernel_name(const cjl_kernel *k) {
  return kernel_alive(k) ? cujit_kernel_name(k->kernel) : "?";
}

/* ---------------------------------------------------------------------------------------------
** Compile options
** ------------------------------------------------------------------------------------------- */

#define OPTION_NAMES                                                                               \
  "arch, fast_math, line_info, debug, std, defines, include_dirs, flags, preamble, uses, name"

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
  return lua_tostring(L, -1);
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
    items[i] = lua_tostring(L, -1);
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

static void parse_option(lua_State *L, int arg, compile_opts *co, const char *key) {
  if (strcmp(key, "arch") == 0)
    co->o.arch = check_option_string(L, arg, key);
  else if (strcmp(key, "std") == 0)
    co->o.std = check_option_string(L, arg, key);
  else if (strcmp(key, "fast_math") == 0)
    co->o.fast_math = check_flag(L, arg, key);
  else if (strcmp(key, "line_info") == 0)
    co->o.line_info = check_flag(L, arg, key);
  else if (strcmp(key, "debug") == 0)
    co->o.debug = check_flag(L, arg, key);
  else if (strcmp(key, "defines") == 0)
    parse_defines(L, arg, co);
  else if (strcmp(key, "include_dirs") == 0)
    co->o.include_dirs = string_list(L, arg, co, key, &co->o.include_dir_count);
  else if (strcmp(key, "flags") == 0)
    co->o.extra_flags = string_list(L, arg, co, key, &co->o.extra_flag_count);
  else if (strcmp(key, "name") == 0)
    co->name = check_option_string(L, arg, key);
  else if (strcmp(key, "preamble") != 0 && strcmp(key, "uses") != 0)
    luaL_argerror(L, arg, lua_pushfstring(L, "unknown option '%s' (known: " OPTION_NAMES ")", key));
}

/* Reads the options table at `arg` (none/nil: defaults). Pushes two tables (anchor, pieces);
** what co points to stays valid while they, and the options table, are on the stack. Returns
** the preamble: the device functions of opts.uses (dependencies first), then opts.preamble;
** NULL when there is none. */
const char *cjl_parse_compile_options(lua_State *L, int arg, compile_opts *co) {
  memset(co, 0, sizeof *co);
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
    parse_option(L, arg, co, lua_tostring(L, -2));
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

/* ---------------------------------------------------------------------------------------------
** Kernel objects
** ------------------------------------------------------------------------------------------- */

/* The arch a program was built for, from the ".target sm_90" line of its PTX. */
static void read_arch(const cujit_kernel *kernel, char *arch, size_t len) {
  const cujit_program *p = cujit_kernel_program(kernel);
  const char *ptx = p ? cujit_program_ptx(p, NULL) : NULL;
  const char *target = ptx ? strstr(ptx, ".target") : NULL;
  arch[0] = '\0';
  if (!target) return;
  target += strlen(".target");
  while (*target == ' ' || *target == '\t') target++;
  size_t n = strcspn(target, " \t\r\n,");
  if (n >= len) n = len - 1;
  memcpy(arch, target, n);
  arch[n] = '\0';
}

static cjl_kernel *push_kernel(lua_State *L, cujit_kernel *kernel, int owns) {
  size_t n = cujit_kernel_param_count(kernel);
  if (n > CJL_MAX_ARGS) {
    if (owns) cujit_kernel_free(kernel);
    luaL_error(L, "cujit: kernels may have at most %d parameters", CJL_MAX_ARGS);
  }
  cjl_kernel *k = lua_newuserdatauv(L, sizeof *k + n * sizeof(cjl_param), KERNEL_UVS);
  memset(k, 0, sizeof *k);
  k->kernel = kernel;
  k->state = cjl_state_of(L);
  k->owns = owns;
  k->nparams = (int)n;
  for (size_t i = 0; i < n; i++) {
    cujit_param_info info;
    cjl_param *p = &k->params[i];
    memset(&info, 0, sizeof info);
    cujit_kernel_param(kernel, i, &info);
    p->name = info.name ? info.name : "?";
    p->kind = info.kind;
    p->dtype = info.dtype;
    p->is_const = info.is_const;
    p->type_var = info.type_var;
    p->size = info.size;
    p->is_bool = info.type && strcmp(info.type, "bool") == 0;
    p->plain_number = p->kind != CUJIT_PARAM_POINTER && !p->is_bool && p->type_var < 0 &&
                      p->dtype != CUJIT_DTYPE_NONE;
    p->arg_kind = cjl_is_float(p->dtype)      ? CUJIT_ARG_FLOAT
                  : cjl_is_unsigned(p->dtype) ? CUJIT_ARG_UINT
                                              : CUJIT_ARG_INT;
  }
  read_arch(kernel, k->arch, sizeof k->arch);
  luaL_setmetatable(L, CJL_KERNEL);
  return k;
}

static cjl_kernel *check_kernel(lua_State *L, int idx) {
  cjl_kernel *k = luaL_checkudata(L, idx, CJL_KERNEL);
  if (!kernel_alive(k)) luaL_argerror(L, idx, "kernel has been freed");
  return k;
}

static cujit_engine *kernel_engine(const cjl_kernel *k) {
  return k->state->engine;
}

/* cuda.jit(signature, body [, options]) -> kernel */
static int l_jit(lua_State *L) {
  const char *signature = luaL_checkstring(L, 1);
  const char *body = luaL_checkstring(L, 2);
  cujit_engine *e = cjl_engine(L);
  compile_opts co;
  const char *preamble = cjl_parse_compile_options(L, 3, &co);
  luaL_argcheck(L, !co.name, 3,
                "option 'name' is for cuda.source and cuda.load (a kernel is "
                "named by its signature)");
  cujit_kernel *kernel;
  if (cujit_kernel_define(e, signature, body, preamble, &co.o, &kernel) != CUJIT_OK)
    return cjl_error(L, e);
  push_kernel(L, kernel, 1);
  return 1;
}

static int kernel_gc(lua_State *L) {
  cjl_kernel *k = luaL_checkudata(L, 1, CJL_KERNEL);
  if (k->owns && k->kernel && !k->state->closed) cujit_kernel_free(k->kernel);
  k->kernel = NULL;
  return 0;
}

static int kernel_name_m(lua_State *L) {
  lua_pushstring(L, kernel_name(check_kernel(L, 1)));
  return 1;
}

static int kernel_signature(lua_State *L) {
  lua_pushstring(L, cujit_kernel_signature(check_kernel(L, 1)->kernel));
  return 1;
}

static int kernel_source(lua_State *L) {
  lua_pushstring(L, cujit_kernel_source(check_kernel(L, 1)->kernel));
  return 1;
}

static const cujit_program *concrete_program(lua_State *L, cjl_kernel *k) {
  const cujit_program *p = cujit_kernel_program(k->kernel);
  if (!p)
    luaL_error(L, "'%s' is generic: specialise it first, e.g. k:specialize('f32'):ptx()",
               kernel_name(k));
  return p;
}

static int kernel_ptx(lua_State *L) {
  size_t len = 0;
  const char *ptx = cujit_program_ptx(concrete_program(L, check_kernel(L, 1)), &len);
  lua_pushlstring(L, ptx ? ptx : "", ptx ? len : 0);
  return 1;
}

static int kernel_log(lua_State *L) {
  lua_pushstring(L, cujit_program_log(concrete_program(L, check_kernel(L, 1))));
  return 1;
}

/* k:compile_info() -> {milliseconds =, from_cache =, arch =} */
static int kernel_compile_info(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  const cujit_program *p = concrete_program(L, k);
  lua_createtable(L, 0, 3);
  lua_pushnumber(L, cujit_program_milliseconds(p));
  lua_setfield(L, -2, "milliseconds");
  lua_pushboolean(L, cujit_program_from_cache(p));
  lua_setfield(L, -2, "from_cache");
  lua_pushstring(L, k->arch);
  lua_setfield(L, -2, "arch");
  return 1;
}

/* k:params() -> list of {name, type, kind = "pointer"|"scalar", dtype, const, type_var} */
static int kernel_params(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  lua_createtable(L, k->nparams, 0);
  for (int i = 0; i < k->nparams; i++) {
    cujit_param_info info;
    if (cujit_kernel_param(k->kernel, (size_t)i, &info) != CUJIT_OK)
      return cjl_error(L, kernel_engine(k));
    lua_createtable(L, 0, 6);
    lua_pushstring(L, info.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, info.type);
    lua_setfield(L, -2, "type");
    lua_pushstring(L, info.kind == CUJIT_PARAM_POINTER ? "pointer" : "scalar");
    lua_setfield(L, -2, "kind");
    if (info.dtype != CUJIT_DTYPE_NONE) {
      lua_pushstring(L, cujit_dtype_name(info.dtype));
      lua_setfield(L, -2, "dtype");
    }
    lua_pushboolean(L, info.is_const);
    lua_setfield(L, -2, "const");
    if (info.type_var >= 0) {
      lua_pushstring(L, cujit_kernel_type_var(k->kernel, (size_t)info.type_var));
      lua_setfield(L, -2, "type_var");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int kernel_type_vars(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  size_t n = cujit_kernel_type_var_count(k->kernel);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, cujit_kernel_type_var(k->kernel, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* k:attributes() -> {registers, static_shared_bytes, const_bytes, local_bytes,
** max_threads_per_block, ptx_version, binary_version} on the current device. */
static int kernel_attributes(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  cujit_kernel_attributes a;
  if (cujit_kernel_attributes_get(k->kernel, &a) != CUJIT_OK) return cjl_error(L, kernel_engine(k));
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, a.registers);
  lua_setfield(L, -2, "registers");
  lua_pushinteger(L, a.static_shared_bytes);
  lua_setfield(L, -2, "static_shared_bytes");
  lua_pushinteger(L, a.const_bytes);
  lua_setfield(L, -2, "const_bytes");
  lua_pushinteger(L, a.local_bytes);
  lua_setfield(L, -2, "local_bytes");
  lua_pushinteger(L, a.max_threads_per_block);
  lua_setfield(L, -2, "max_threads_per_block");
  lua_pushinteger(L, a.ptx_version);
  lua_setfield(L, -2, "ptx_version");
  lua_pushinteger(L, a.binary_version);
  lua_setfield(L, -2, "binary_version");
  return 1;
}

/* k:suggest_block() -> block size, minimum grid (the occupancy API's, as forall uses). */
static int kernel_suggest_block(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  int block = 0, min_grid = 0;
  if (cujit_kernel_suggest_block(k->kernel, &block, &min_grid) != CUJIT_OK)
    return cjl_error(L, kernel_engine(k));
  lua_pushinteger(L, block);
  lua_pushinteger(L, min_grid);
  return 2;
}

/* k:specialize(dtype, ...) -> the concrete kernel for these type variable bindings. */
static int kernel_specialize(lua_State *L) {
  cjl_kernel *k = check_kernel(L, 1);
  size_t want = cujit_kernel_type_var_count(k->kernel);
  int given = lua_gettop(L) - 1;
  if (want == 0 || cujit_kernel_program(k->kernel)) /* a concrete kernel or a specialisation */
    return luaL_error(L, "'%s' is not generic (it has no type variables left to bind)",
                      kernel_name(k));
  if ((size_t)given != want)
    return luaL_error(L, "'%s' has %d type variable(s): give one dtype for each", kernel_name(k),
                      (int)want);
  cujit_dtype types[CJL_MAX_ARGS];
  for (int i = 0; i < given && i < CJL_MAX_ARGS; i++) types[i] = cjl_check_dtype(L, i + 2);
  cujit_kernel *concrete;
  if (cujit_kernel_specialize(k->kernel, types, want, &concrete) != CUJIT_OK)
    return cjl_error(L, kernel_engine(k));
  cjl_kernel *spec = push_kernel(L, concrete, 0); /* owned by the generic kernel */
  spec->parent = k;
  lua_pushvalue(L, 1); /* which it keeps alive */
  lua_setiuservalue(L, -2, UV_PARENT);
  return 1;
}

static int kernel_tostring(lua_State *L) {
  cjl_kernel *k = luaL_checkudata(L, 1, CJL_KERNEL);
  if (!kernel_alive(k)) {
    lua_pushliteral(L, "cujit.kernel (freed)");
    return 1;
  }
  const char *sig = cujit_kernel_signature(k->kernel);
  const cujit_program *p = cujit_kernel_program(k->kernel);
  if (!p) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "cujit.kernel %s generic in ", sig);
    luaL_addvalue(&b);
    for (size_t i = 0; i < cujit_kernel_type_var_count(k->kernel); i++) {
      if (i) luaL_addstring(&b, ", ");
      luaL_addstring(&b, cujit_kernel_type_var(k->kernel, i));
    }
    luaL_addstring(&b, " (compiled per element type on first launch)");
    luaL_pushresult(&b);
    return 1;
  }
  char ms[32];
  snprintf(ms, sizeof ms, "%.2f ms", cujit_program_milliseconds(p));
  lua_pushfstring(L, "cujit.kernel %s %s %s %s", sig, k->arch,
                  cujit_program_from_cache(p) ? "cache hit" : "compiled in", ms);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Launch configurations
** ------------------------------------------------------------------------------------------- */

static int config_error(lua_State *L, const cjl_kernel *k, const char *what) {
  return luaL_error(L,
                    "bad launch configuration for '%s': %s (use {grid, block} or {grid = {x, y}, "
                    "block = {x, y}, shared = bytes, stream = s})",
                    kernel_name(k), what);
}

static unsigned check_extent(lua_State *L, const cjl_kernel *k, int idx, const char *what) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, idx, &exact);
  if (lua_type(L, idx) != LUA_TNUMBER || !exact || v < 1 || v > (lua_Integer)UINT32_MAX) {
    const char *got =
        lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx);
    config_error(L, k, lua_pushfstring(L, "%s must be a positive integer, got %s", what, got));
  }
  return (unsigned)v;
}

/* grid or block: a positive integer or a table of 1 to 3 of them. */
static void parse_extents(lua_State *L, const cjl_kernel *k, int idx, unsigned dims[3],
                          const char *what) {
  dims[0] = dims[1] = dims[2] = 1;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    dims[0] = check_extent(L, k, idx, what);
    return;
  }
  if (!lua_istable(L, idx))
    config_error(L, k,
                 lua_pushfstring(L,
                                 "%s must be a positive integer or a table {x, y, z}, "
                                 "got %s",
                                 what, luaL_typename(L, idx)));
  lua_Unsigned n = lua_rawlen(L, idx);
  if (n < 1 || n > 3)
    config_error(L, k, lua_pushfstring(L, "%s must have 1 to 3 dimensions, got %d", what, (int)n));
  for (lua_Unsigned i = 0; i < n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    dims[i] = check_extent(L, k, lua_gettop(L), what);
    lua_pop(L, 1);
  }
}

/* Reads the configuration table at `cfg` (one pass over its entries; nothing allocated). */
static void parse_config(lua_State *L, const cjl_kernel *k, int cfg, cujit_launch_config *c,
                         cjl_stream **stream) {
  int have_grid = 0, have_block = 0;
  memset(c, 0, sizeof *c);
  *stream = NULL;
  lua_pushnil(L);
  while (lua_next(L, cfg)) {
    int value = lua_gettop(L);
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    lua_Integer pos = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (pos == 1 || (key && strcmp(key, "grid") == 0)) {
      if (have_grid++) config_error(L, k, "the grid is given twice");
      parse_extents(L, k, value, c->grid, "grid");
    } else if (pos == 2 || (key && strcmp(key, "block") == 0)) {
      if (have_block++) config_error(L, k, "the block is given twice");
      parse_extents(L, k, value, c->block, "block");
    } else if (key && strcmp(key, "shared") == 0) {
      int exact = 0;
      lua_Integer v = lua_tointegerx(L, value, &exact);
      if (lua_type(L, value) != LUA_TNUMBER || !exact || v < 0 || v > (lua_Integer)UINT32_MAX)
        config_error(L, k, "shared must be a byte count (an integer >= 0)");
      c->shared_bytes = (unsigned)v;
    } else if (key && strcmp(key, "stream") == 0) {
      cjl_stream *s = luaL_testudata(L, value, CJL_STREAM);
      if (!s)
        config_error(
            L, k,
            lua_pushfstring(L, "stream must be a cujit.stream, got %s", luaL_typename(L, value)));
      if (!s->stream) config_error(L, k, "the stream has been freed");
      *stream = s;
    } else {
      const char *name = luaL_tolstring(L, -2, NULL);
      config_error(L, k, lua_pushfstring(L, "unknown entry '%s'", name));
    }
    lua_settop(L, value - 1);
  }
  if (!have_grid || !have_block)
    config_error(L, k, have_grid ? "the block size is missing" : "the grid size is missing");
}

/* The form nearly every launch writes, {grid, block} with two positive integers and nothing else,
** read without the generic walk: two lookups, then a count of the entries (exactly two, and [1]
** and [2] are there, so there is no other). Returns 0 for anything else, which parse_config then
** reads, and reports on, as always. */
static int simple_config(lua_State *L, int cfg, cujit_launch_config *c) {
  int grid_ok = 0, block_ok = 0;
  lua_Integer grid = 0, block = 0;
  if (lua_rawgeti(L, cfg, 1) == LUA_TNUMBER) grid = lua_tointegerx(L, -1, &grid_ok);
  if (lua_rawgeti(L, cfg, 2) == LUA_TNUMBER) block = lua_tointegerx(L, -1, &block_ok);
  /* Both values stay on the stack: every index used here and after is absolute. */
  if (!grid_ok || !block_ok || grid < 1 || block < 1 || grid > (lua_Integer)UINT32_MAX ||
      block > (lua_Integer)UINT32_MAX)
    return 0;
  int entries = 0;
  lua_pushnil(L);
  while (lua_next(L, cfg)) {
    lua_pop(L, 1);
    if (++entries > 2) {
      lua_pop(L, 1);
      return 0;
    }
  }
  memset(c, 0, sizeof *c);
  c->grid[0] = (unsigned)grid, c->grid[1] = c->grid[2] = 1;
  c->block[0] = (unsigned)block, c->block[1] = c->block[2] = 1;
  return 1;
}

static int same_config(const cujit_launch_config *a, const cujit_launch_config *b) {
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i]) return 0;
  return a->shared_bytes == b->shared_bytes;
}

/* Pushes the launcher cached in user value `slot` of the kernel at 1, if any. */
static cjl_launcher *cached_launcher(lua_State *L, int slot) {
  if (lua_getiuservalue(L, 1, slot) == LUA_TUSERDATA) return lua_touserdata(L, -1);
  lua_pop(L, 1);
  return NULL;
}

/* A new launcher for the kernel at 1, made the cached one of `slot`; the stream (if any) is the
** value at stream_idx. */
static cjl_launcher *new_launcher(lua_State *L, int slot, int stream_idx) {
  cjl_launcher *ln = lua_newuserdatauv(L, sizeof *ln, 2);
  memset(ln, 0, sizeof *ln);
  ln->kernel = lua_touserdata(L, 1);
  luaL_setmetatable(L, CJL_LAUNCHER);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  if (stream_idx) {
    lua_pushvalue(L, stream_idx);
    lua_setiuservalue(L, -2, 2);
  }
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, slot);
  return ln;
}

/* k[cfg] -> the launcher of k with this configuration: the cached one when unchanged. The
** table is read afresh each time (never cached by identity): a hoisted table may be changed
** between launches. */
static int launcher_for_config(lua_State *L, cjl_kernel *k) {
  cujit_launch_config c;
  cjl_stream *s = NULL;
  if (!simple_config(L, 2, &c)) parse_config(L, k, 2, &c, &s);
  cjl_launcher *ln = k->launcher;
  if (ln && ln->stream == s && same_config(&ln->config, &c)) {
    lua_getiuservalue(L, 1, UV_LAUNCHER);
    return 1;
  }
  int stream_idx = 0;
  if (s) {
    lua_pushliteral(L, "stream");
    lua_rawget(L, 2);
    stream_idx = lua_gettop(L);
  }
  ln = new_launcher(L, UV_LAUNCHER, stream_idx);
  ln->config = c;
  ln->stream = s;
  k->launcher = ln;
  return 1;
}

/* k:forall(n [, stream]) -> launcher over n elements with the occupancy-suggested block size. */
static int kernel_forall(lua_State *L) {
  check_kernel(L, 1);
  int exact = 0;
  lua_Integer n = lua_tointegerx(L, 2, &exact);
  if (lua_type(L, 2) != LUA_TNUMBER || !exact || n < 1)
    return luaL_argerror(L, 2, "element count must be a positive integer");
  cjl_stream *s = NULL;
  if (!lua_isnoneornil(L, 3)) {
    cjl_opt_stream(L, 3);
    s = lua_touserdata(L, 3);
  }
  cjl_launcher *ln = cached_launcher(L, UV_FORALL);
  if (ln && ln->n == (size_t)n && ln->stream == s) return 1;
  ln = new_launcher(L, UV_FORALL, s ? 3 : 0);
  ln->forall = 1;
  ln->n = (size_t)n;
  ln->stream = s;
  return 1;
}

/* Indexing a kernel: a table is a launch configuration, a string a method. */
static int kernel_index(lua_State *L) {
  if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(2)))
    return luaL_typeerror(L, 1, CJL_KERNEL);
  cjl_kernel *k = lua_touserdata(L, 1); /* its metatable stays: what is returned is pushed last */
  switch (lua_type(L, 2)) {
  case LUA_TTABLE:
    if (!kernel_alive(k)) return luaL_error(L, "kernel has been freed");
    return launcher_for_config(L, k);
  case LUA_TSTRING:
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
  default:
    return luaL_error(L,
                      "a kernel is indexed by a launch configuration, as in "
                      "%s[{grid, block}](...), got %s",
                      kernel_name(k), luaL_typename(L, 2));
  }
}

/* ---------------------------------------------------------------------------------------------
** Launching
** ------------------------------------------------------------------------------------------- */

static int arg_error(lua_State *L, const cjl_kernel *k, int i, const char *why) {
  return luaL_error(L, "bad argument #%d '%s' to '%s' (%s)", i + 1, k->params[i].name,
                    kernel_name(k), why);
}

static int count_error(lua_State *L, const cjl_kernel *k, int got) {
  return luaL_error(L, "wrong number of arguments to '%s': expected %d, got %d (%s)",
                    kernel_name(k), k->nparams, got, cujit_kernel_signature(k->kernel));
}

static int dtype_fits(const cjl_param *p, cujit_dtype have) {
  return p->type_var >= 0 || p->dtype == CUJIT_DTYPE_NONE || have == CUJIT_DTYPE_NONE ||
         have == p->dtype;
}

static const char *array_mismatch(lua_State *L, const cjl_param *p, cujit_dtype have,
                                  const char *what) {
  return lua_pushfstring(L, "%s array expected, got %s %s", cujit_dtype_name(p->dtype),
                         have == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(have), what);
}

static const unsigned char bool_bytes[2] = {0, 1};

static void convert_scalar(lua_State *L, const cjl_kernel *k, int i, int idx, cujit_arg *arg) {
  const cjl_param *p = &k->params[i];
  int type = lua_type(L, idx);
  if (p->plain_number && type == LUA_TNUMBER) { /* the common case, one conversion call */
    cjl_scalar v;
    const char *why = cjl_number_to_scalar(L, idx, p->dtype, &v);
    if (why) arg_error(L, k, i, why);
    arg->kind = p->arg_kind;
    if (p->arg_kind == CUJIT_ARG_FLOAT)
      arg->v.f = v.f;
    else if (p->arg_kind == CUJIT_ARG_UINT)
      arg->v.u = v.u;
    else
      arg->v.i = v.i;
    return;
  }
  if (p->is_bool && type == LUA_TBOOLEAN) {
    int v = lua_toboolean(L, idx);
    if (p->dtype == CUJIT_DTYPE_NONE)
      arg->kind = CUJIT_ARG_BYTES, arg->v.bytes = &bool_bytes[v];
    else
      arg->kind = CUJIT_ARG_INT, arg->v.i = v;
    return;
  }
  if (p->type_var >= 0) { /* generic: the engine converts once the type is known */
    if (type != LUA_TNUMBER)
      arg_error(L, k, i, lua_pushfstring(L, "number expected, got %s", luaL_typename(L, idx)));
    if (lua_isinteger(L, idx))
      arg->kind = CUJIT_ARG_INT, arg->v.i = lua_tointeger(L, idx);
    else
      arg->kind = CUJIT_ARG_FLOAT, arg->v.f = lua_tonumber(L, idx);
    return;
  }
  if (p->dtype == CUJIT_DTYPE_NONE) { /* a struct or vector type: its bytes, from string.pack */
    size_t len = 0;
    const char *bytes = type == LUA_TSTRING ? lua_tolstring(L, idx, &len) : NULL;
    if (!bytes || len != p->size || p->size == 0)
      arg_error(L, k, i,
                lua_pushfstring(L,
                                "a string of its %d bytes expected (see string.pack), "
                                "got %s",
                                (int)p->size, luaL_typename(L, idx)));
    arg->kind = CUJIT_ARG_BYTES;
    arg->v.bytes = bytes;
    return;
  }
  cjl_scalar v;
  const char *why = cjl_to_scalar(L, idx, p->dtype, &v);
  if (why) arg_error(L, k, i, why);
  if (cjl_is_float(p->dtype))
    arg->kind = CUJIT_ARG_FLOAT, arg->v.f = v.f;
  else if (cjl_is_unsigned(p->dtype))
    arg->kind = CUJIT_ARG_UINT, arg->v.u = v.u;
  else
    arg->kind = CUJIT_ARG_INT, arg->v.i = v.i;
}

/* Converts argument `idx` for parameter i. Returns 1 when it is a host array or Lua table that
** must be copied to the device around the launch (args[i] is then filled in later). */
static int convert_arg(lua_State *L, const cjl_kernel *k, int i, int idx, cujit_arg *arg) {
  const cjl_param *p = &k->params[i];
  if (p->kind != CUJIT_PARAM_POINTER) {
    convert_scalar(L, k, i, idx, arg);
    return 0;
  }
  if (lua_getmetatable(L, idx)) {
    if (lua_rawequal(L, -1, ARRAY_MT)) {
      lua_pop(L, 1);
      const cjl_array *a = lua_touserdata(L, idx);
      cujit_buffer *b = cjl_array_buffer(a);
      if (!b) arg_error(L, k, i, "device array has been freed");
      if (!dtype_fits(p, a->dtype))
        arg_error(L, k, i, array_mismatch(L, p, a->dtype, "device array"));
      arg->kind = CUJIT_ARG_BUFFER;
      arg->v.buffer = b;
      return 0;
    }
    int host = lua_rawequal(L, -1, HOST_MT);
    lua_pop(L, 1);
    if (host) return 1;
  } else if (lua_istable(L, idx)) {
    return 1;
  }
  return arg_error(L, k, i,
                   lua_pushfstring(L,
                                   "cujit.device_array expected (or a host array or "
                                   "table, copied in and out), got %s",
                                   luaL_typename(L, idx)));
}

static cujit_status launch(cjl_launcher *ln, cujit_stream *stream, const cujit_arg *args,
                           size_t nargs) {
  if (ln->forall) return cujit_launch_n(ln->kernel->kernel, ln->n, stream, args, nargs);
  cujit_launch_config c = ln->config;
  c.stream = stream;
  return cujit_launch(ln->kernel->kernel, &c, args, nargs);
}

/* A host array or table argument copied through a temporary device array. */
typedef struct copy_slot {
  int param;
  int src;         /* stack index of the argument */
  cjl_array *temp; /* the device copy (a Lua value on the stack, so collected on error) */
  void *host;      /* the host elements (the host array's, or a scratch copy of the table) */
  cujit_dtype dtype;
  size_t count;
} copy_slot;

/* Checks a host array or table argument and gets its elements (reading a table into a scratch
** block), before anything is allocated on the device. */
static void prepare_copy(lua_State *L, const cjl_kernel *k, copy_slot *slot) {
  const cjl_param *p = &k->params[slot->param];
  int i = slot->param, idx = slot->src;
  luaL_checkstack(L, 8, "cujit: too many host arrays in one launch");
  cjl_host *h = cjl_test_host(L, idx);
  if (h) {
    if (!cjl_host_data(h)) arg_error(L, k, i, "host array has been freed");
    if (!dtype_fits(p, h->dtype)) arg_error(L, k, i, array_mismatch(L, p, h->dtype, "host array"));
    slot->dtype = h->dtype, slot->count = h->size, slot->host = cjl_host_data(h);
    return;
  }
  size_t shape[CJL_MAX_DIMS];
  int ndim;
  if (p->type_var >= 0 || p->dtype == CUJIT_DTYPE_NONE)
    arg_error(L, k, i,
              lua_pushfstring(L,
                              "a Lua table has no element type for '%s'; pass a "
                              "typed array, e.g. cuda.array(t, 'f32')",
                              p->name));
  const char *why = cjl_table_shape(L, idx, shape, &ndim);
  if (!why && ndim != 1) why = "a flat table (1-D) expected; use cuda.array for 2-D or 3-D";
  if (why) arg_error(L, k, i, why);
  slot->dtype = p->dtype, slot->count = shape[0];
  slot->host = lua_newuserdatauv(L, slot->count * cjl_elem_size(p->dtype), 0);
  why = cjl_table_read(L, idx, p->dtype, 1, shape, slot->host);
  if (why) arg_error(L, k, i, why);
}

/* Makes the device copy (a Lua value on the stack, so collected if an error intervenes). */
static void upload_copy(lua_State *L, const cjl_kernel *k, copy_slot *slot, cujit_arg *arg) {
  slot->temp = cjl_new_array(L, slot->dtype, 1, &slot->count);
  if (cujit_memcpy_htod(slot->temp->buffer, 0, slot->host, slot->count * cjl_elem_size(slot->dtype),
                        NULL) != CUJIT_OK)
    cjl_error(L, kernel_engine(k));
  arg->kind = CUJIT_ARG_BUFFER;
  arg->v.buffer = slot->temp->buffer;
}

static void copy_out(lua_State *L, const copy_slot *slot) {
  size_t esize = cjl_elem_size(slot->dtype);
  if (lua_istable(L, slot->src)) {
    for (size_t j = 0; j < slot->count; j++) {
      cjl_push_element(L, slot->dtype, (const char *)slot->host + j * esize);
      lua_rawseti(L, slot->src, (lua_Integer)j + 1);
    }
  }
}

static void release_copies(copy_slot *slots, int n) {
  for (int j = 0; j < n; j++) cjl_release_array(slots[j].temp);
}

/* The launch with host arrays or tables among the arguments: copied in, launched, waited for,
** copied back unless the parameter is const, as Numba does. */
static int launch_with_copies(lua_State *L, cjl_launcher *ln, cujit_stream *stream, cujit_arg *args,
                              int nargs) {
  const cjl_kernel *k = ln->kernel;
  cujit_engine *e = kernel_engine(k);
  copy_slot slots[CJL_MAX_ARGS];
  int n = 0;
  for (int i = 0; i < nargs; i++) {
    if (k->params[i].kind != CUJIT_PARAM_POINTER || cjl_test_array(L, i + 2)) continue;
    slots[n] = (copy_slot){.param = i, .src = i + 2};
    prepare_copy(L, k, &slots[n++]);
  }
  for (int j = 0; j < n; j++) upload_copy(L, k, &slots[j], &args[slots[j].param]);
  cujit_status status = launch(ln, stream, args, (size_t)nargs);
  if (status == CUJIT_OK)
    status = stream ? cujit_stream_synchronize(stream)
                    : cujit_device_synchronize(cujit_buffer_device(slots[0].temp->buffer));
  for (int j = 0; j < n && status == CUJIT_OK; j++) {
    if (k->params[slots[j].param].is_const) continue;
    status = cujit_memcpy_dtoh(slots[j].host, slots[j].temp->buffer, 0,
                               slots[j].count * cjl_elem_size(slots[j].dtype), NULL);
    if (status == CUJIT_OK) copy_out(L, &slots[j]);
  }
  release_copies(slots, n);
  if (status != CUJIT_OK) return cjl_error(L, e);
  return 0;
}

/* launcher(args...): the launch path. */
static int launcher_call(lua_State *L) {
  int nargs = lua_gettop(L) - 1;
  if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, LAUNCHER_MT))
    return luaL_error(L, "cujit.launcher expected");
  cjl_launcher *ln = lua_touserdata(L, 1); /* its metatable stays: arguments are 2 .. nargs + 1 */
  cjl_kernel *k = ln->kernel;
  if (!kernel_alive(k)) return luaL_error(L, "kernel has been freed");
  if (nargs != k->nparams) return count_error(L, k, nargs);
  cujit_arg args[CJL_MAX_ARGS];
  int copies = 0;
  for (int i = 0; i < nargs; i++) copies |= convert_arg(L, k, i, i + 2, &args[i]);
  cujit_stream *stream = NULL;
  if (ln->stream && !(stream = ln->stream->stream))
    return luaL_error(L, "the stream of this launch of '%s' has been freed", kernel_name(k));
  if (copies) return launch_with_copies(L, ln, stream, args, nargs);
  if (launch(ln, stream, args, (size_t)nargs) != CUJIT_OK) return cjl_error(L, kernel_engine(k));
  return 0;
}

static int launcher_tostring(lua_State *L) {
  cjl_launcher *ln = luaL_checkudata(L, 1, CJL_LAUNCHER);
  const cujit_launch_config *c = &ln->config;
  if (ln->forall)
    lua_pushfstring(L, "cujit.launcher %s forall(%d)", kernel_name(ln->kernel), (int)ln->n);
  else
    lua_pushfstring(L, "cujit.launcher %s grid {%d,%d,%d} block {%d,%d,%d} shared %d%s",
                    kernel_name(ln->kernel), (int)c->grid[0], (int)c->grid[1], (int)c->grid[2],
                    (int)c->block[0], (int)c->block[1], (int)c->block[2], (int)c->shared_bytes,
                    ln->stream ? " on a stream" : "");
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Programs: cuda.source and cuda.load
** ------------------------------------------------------------------------------------------- */

static cjl_program *check_program(lua_State *L, int idx) {
  cjl_program *p = luaL_checkudata(L, idx, CJL_PROGRAM);
  if (!p->program) luaL_argerror(L, idx, "program has been freed");
  return p;
}

/* Reads a whole file into a Lua string (pushed), or raises naming the file. */
static void push_file(lua_State *L, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) luaL_error(L, "cannot open '%s': %s", path, strerror(errno));
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t n;
  do {
    char *space = luaL_prepbuffer(&b);
    n = fread(space, 1, LUAL_BUFFERSIZE, f);
    luaL_addsize(&b, n);
  } while (n == LUAL_BUFFERSIZE);
  int failed = ferror(f);
  fclose(f);
  if (failed) luaL_error(L, "cannot read '%s'", path);
  luaL_pushresult(&b);
}

/* Wraps a compiled program, with one kernel object per kernel it defines. */
static void fill_program(lua_State *L, int idx, cjl_program *p) {
  cujit_engine *e = p->state->engine;
  size_t n = cujit_program_kernel_count(p->program);
  lua_createtable(L, 0, (int)n);
  for (size_t i = 0; i < n; i++) {
    const char *name = cujit_program_kernel_name(p->program, i);
    cujit_kernel *kernel;
    if (cujit_program_kernel(p->program, name, &kernel) != CUJIT_OK) cjl_error(L, e);
    push_kernel(L, kernel, 1);
    lua_setfield(L, -2, name);
  }
  lua_setiuservalue(L, idx, 1);
}

/* cuda.source(src [, options]) and cuda.load(path [, options]) -> program; m.name is a kernel. */
static int build_program(lua_State *L, int from_file) {
  const char *text = luaL_checkstring(L, 1);
  cujit_engine *e = cjl_engine(L);
  compile_opts co;
  const char *preamble = cjl_parse_compile_options(L, 2, &co);
  const char *name = co.name ? co.name : from_file ? text : NULL;
  cjl_program *p = lua_newuserdatauv(L, sizeof *p, 1);
  p->program = NULL;
  p->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_PROGRAM);
  int ud = lua_gettop(L);
  cujit_status status;
  if (from_file && !preamble) {
    status = cujit_program_compile_file(e, text, &co.o, &p->program);
  } else {
    if (from_file) push_file(L, text), text = lua_tostring(L, -1);
    if (preamble)
      text = lua_pushfstring(L, "%s\n#line 1 \"%s\"\n%s", preamble, name ? name : "<source>", text);
    status = cujit_program_compile(e, text, name, &co.o, &p->program);
  }
  if (status != CUJIT_OK) return cjl_error(L, e);
  fill_program(L, ud, p);
  lua_settop(L, ud);
  return 1;
}

static int l_source(lua_State *L) {
  return build_program(L, 0);
}

static int l_load(lua_State *L) {
  return build_program(L, 1);
}

static int program_gc(lua_State *L) {
  cjl_program *p = luaL_checkudata(L, 1, CJL_PROGRAM);
  if (p->program && !p->state->closed) cujit_program_free(p->program);
  p->program = NULL;
  return 0;
}

static int program_kernels(lua_State *L) {
  cjl_program *p = check_program(L, 1);
  size_t n = cujit_program_kernel_count(p->program);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, cujit_program_kernel_name(p->program, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static void push_kernel_names(lua_State *L, const cjl_program *p) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < cujit_program_kernel_count(p->program); i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addstring(&b, cujit_program_kernel_name(p->program, i));
  }
  luaL_pushresult(&b);
}

/* m:kernel(name) -> kernel; raises naming the kernels there are. */
static int program_kernel(lua_State *L) {
  cjl_program *p = check_program(L, 1);
  const char *name = luaL_checkstring(L, 2);
  lua_getiuservalue(L, 1, 1);
  if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
  push_kernel_names(L, p);
  return luaL_error(L, "the program has no kernel '%s' (it has: %s)", name, lua_tostring(L, -1));
}

static int program_ptx(lua_State *L) {
  size_t len = 0;
  const char *ptx = cujit_program_ptx(check_program(L, 1)->program, &len);
  lua_pushlstring(L, ptx ? ptx : "", ptx ? len : 0);
  return 1;
}

static int program_log(lua_State *L) {
  lua_pushstring(L, cujit_program_log(check_program(L, 1)->program));
  return 1;
}

/* m.name: a kernel of the program first, then a method. */
static int program_index(lua_State *L) {
  check_program(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_getiuservalue(L, 1, 1);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, -2) != LUA_TNIL) return 1;
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  }
  lua_settop(L, 2);
  return program_kernel(L);
}

static int program_tostring(lua_State *L) {
  cjl_program *p = luaL_checkudata(L, 1, CJL_PROGRAM);
  if (!p->program) {
    lua_pushliteral(L, "cujit.program (freed)");
    return 1;
  }
  char ms[32];
  snprintf(ms, sizeof ms, "%.2f ms", cujit_program_milliseconds(p->program));
  push_kernel_names(L, p);
  lua_pushfstring(L, "cujit.program with kernels %s, %s %s", lua_tostring(L, -1),
                  cujit_program_from_cache(p->program) ? "cache hit" : "compiled in", ms);
  return 1;
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
  const char *code = luaL_checkstring(L, 1);
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
      name = luaL_checkstring(L, -1);
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

/* ---------------------------------------------------------------------------------------------
** Opening
** ------------------------------------------------------------------------------------------- */

static const luaL_Reg kernel_meta[] = {
    {"__gc", kernel_gc}, {"__close", kernel_gc}, {"__tostring", kernel_tostring}, {NULL, NULL}};
static const luaL_Reg kernel_methods[] = {{"name", kernel_name_m},
                                          {"signature", kernel_signature},
                                          {"source", kernel_source},
                                          {"ptx", kernel_ptx},
                                          {"log", kernel_log},
                                          {"compile_info", kernel_compile_info},
                                          {"params", kernel_params},
                                          {"type_vars", kernel_type_vars},
                                          {"attributes", kernel_attributes},
                                          {"suggest_block", kernel_suggest_block},
                                          {"specialize", kernel_specialize},
                                          {"forall", kernel_forall},
                                          {"free", kernel_gc},
                                          {NULL, NULL}};
static const luaL_Reg program_meta[] = {
    {"__gc", program_gc}, {"__close", program_gc}, {"__tostring", program_tostring}, {NULL, NULL}};
static const luaL_Reg program_methods[] = {{"kernels", program_kernels}, {"kernel", program_kernel},
                                           {"ptx", program_ptx},         {"log", program_log},
                                           {"free", program_gc},         {NULL, NULL}};
static const luaL_Reg devfn_meta[] = {{"__tostring", devfn_tostring}, {NULL, NULL}};
static const luaL_Reg devfn_methods[] = {{"source", devfn_source}, {NULL, NULL}};
static const luaL_Reg module_functions[] = {{"jit", l_jit},
                                            {"source", l_source},
                                            {"load", l_load},
                                            {"device_function", l_device_function},
                                            {NULL, NULL}};

void cjl_open_kernels(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_KERNEL, kernel_meta, kernel_methods, kernel_index);
  cjl_new_class(L, CJL_PROGRAM, program_meta, program_methods, program_index);
  cjl_new_class(L, CJL_DEVFN, devfn_meta, devfn_methods, NULL);
  luaL_newmetatable(L, CJL_LAUNCHER);
  luaL_getmetatable(L, CJL_LAUNCHER);
  luaL_getmetatable(L, CJL_ARRAY);
  luaL_getmetatable(L, CJL_HOST);
  lua_pushcclosure(L, launcher_call, 3);
  lua_setfield(L, -2, "__call");
  lua_pushcfunction(L, launcher_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
