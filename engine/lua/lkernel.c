/*
** lkernel.c -- kernel objects from Lua: cuda.jit (a kernel from a signature and a body), the
** objects that wrap kernels of every origin (their parameters read once for the launch path),
** introspection (params, ptx, attributes, ...) and specialisation of generic kernels. Launching
** them is llaunch.c's; programs (cuda.source, cuda.load) are lprogram.c's.
*/
#include "lkernel.h"
#include "loptions.h"

#include <stdio.h>
#include <string.h>

int cjl_kernel_alive(const cjl_kernel *k) {
  return k->kernel && (!k->parent || k->parent->kernel);
}

const char *cjl_kernel_name(const cjl_kernel *k) {
  return cjl_kernel_alive(k) ? cujit_kernel_name(k->kernel) : "?";
}

/* The arch a program was built for, from the ".target sm_90" line of its PTX; "cpu" for the CPU
** device's, which has no PTX and whose binary is a host shared object: an ELF file whose machine
** (e_machine, bytes 18-19, little-endian) is not EM_CUDA (190), which every CUBIN's is. */
static void read_arch(const cujit_kernel *kernel, char *arch, size_t len) {
  const cujit_program *p = cujit_kernel_program(kernel);
  const char *ptx = p ? cujit_program_ptx(p, NULL) : NULL;
  const char *target = ptx ? strstr(ptx, ".target") : NULL;
  arch[0] = '\0';
  size_t bin_len = 0;
  const void *bin = p && !target ? cujit_program_cubin(p, &bin_len) : NULL;
  const unsigned char *b = bin;
  if (b && bin_len >= 20 && memcmp(b, "\177ELF", 4) == 0 && (b[18] | b[19] << 8) != 190) {
    snprintf(arch, len, "cpu");
    return;
  }
  if (!target) return;
  target += strlen(".target");
  while (*target == ' ' || *target == '\t') target++;
  size_t n = strcspn(target, " \t\r\n,");
  if (n >= len) n = len - 1;
  memcpy(arch, target, n);
  arch[n] = '\0';
}

cjl_kernel *cjl_push_kernel(lua_State *L, cujit_kernel *kernel, int owns) {
  size_t n = cujit_kernel_param_count(kernel);
  if (n > CJL_MAX_ARGS) {
    if (owns) cujit_kernel_free(kernel);
    luaL_error(L, "cujit: kernels may have at most %d parameters", CJL_MAX_ARGS);
  }
  cjl_kernel *k = lua_newuserdatauv(L, sizeof *k + n * sizeof(cjl_param), CJL_KERNEL_UVS);
  memset(k, 0, sizeof *k);
  k->kernel = kernel;
  k->state = cjl_state_of(L);
  k->owns = owns;
  k->nparams = (int)n;
  for (size_t i = 0; i < n; i++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    cjl_param *p = &k->params[i];
    cujit_kernel_param(kernel, i, &info);
    p->name = info.name ? info.name : "?";
    p->kind = info.kind;
    p->dtype = info.dtype;
    p->is_const = info.is_const;
    p->type_var = info.type_var;
    p->size = info.size;
    p->is_bool = info.type && strcmp(info.type, "bool") == 0;
  }
  read_arch(kernel, k->arch, sizeof k->arch);
  luaL_setmetatable(L, CJL_KERNEL);
  return k;
}

cjl_kernel *cjl_check_kernel(lua_State *L, int idx) {
  cjl_kernel *k = luaL_checkudata(L, idx, CJL_KERNEL);
  if (!cjl_kernel_alive(k)) luaL_argerror(L, idx, "kernel has been freed");
  return k;
}

static cujit_engine *kernel_engine(const cjl_kernel *k) {
  return k->state->engine;
}

/* cuda.jit(signature, body [, options]) -> kernel */
static int l_jit(lua_State *L) {
  const char *signature = cjl_check_text(L, 1, "the signature");
  const char *body = cjl_check_text(L, 2, "the body");
  cujit_engine *e = cjl_engine(L);
  cjl_compile_opts co;
  const char *preamble = cjl_parse_compile_options(L, 3, &co);
  cjl_refuse_unit_option(L, 3, co.name != NULL, "name", "a kernel is named by its signature");
  cjl_refuse_unit_option(L, 3, co.o.signatures != NULL, "signatures",
                         "a kernel of cuda.jit has its signature already");
  cjl_refuse_unit_option(L, 3, co.o.name_expressions != NULL, "name_expressions",
                         "template kernels are instantiated by cuda.source");
  cujit_kernel *kernel;
  if (cujit_kernel_define(e, signature, body, preamble, &co.o, &kernel) != CUJIT_OK)
    return cjl_error(L, e);
  cjl_push_kernel(L, kernel, 1);
  return 1;
}

static int kernel_gc(lua_State *L) {
  cjl_kernel *k = luaL_checkudata(L, 1, CJL_KERNEL);
  if (k->owns && k->kernel && !k->state->closed) cujit_kernel_free(k->kernel);
  k->kernel = NULL;
  return 0;
}

static int kernel_name_m(lua_State *L) {
  lua_pushstring(L, cjl_kernel_name(cjl_check_kernel(L, 1)));
  return 1;
}

static int kernel_signature(lua_State *L) {
  lua_pushstring(L, cujit_kernel_signature(cjl_check_kernel(L, 1)->kernel));
  return 1;
}

static int kernel_source(lua_State *L) {
  lua_pushstring(L, cujit_kernel_source(cjl_check_kernel(L, 1)->kernel));
  return 1;
}

static const cujit_program *concrete_program(lua_State *L, cjl_kernel *k) {
  const cujit_program *p = cujit_kernel_program(k->kernel);
  if (!p)
    luaL_error(L, "'%s' is generic: specialise it first, e.g. k:specialize('f32'):ptx()",
               cjl_kernel_name(k));
  return p;
}

static int kernel_ptx(lua_State *L) {
  size_t len = 0;
  const char *ptx = cujit_program_ptx(concrete_program(L, cjl_check_kernel(L, 1)), &len);
  lua_pushlstring(L, ptx ? ptx : "", ptx ? len : 0);
  return 1;
}

static int kernel_log(lua_State *L) {
  lua_pushstring(L, cujit_program_log(concrete_program(L, cjl_check_kernel(L, 1))));
  return 1;
}

/* k:compile_info() -> {milliseconds =, from_cache =, arch =} */
static int kernel_compile_info(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
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
  cjl_kernel *k = cjl_check_kernel(L, 1);
  lua_createtable(L, k->nparams, 0);
  for (int i = 0; i < k->nparams; i++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
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
    lua_pushinteger(L, (lua_Integer)info.size);
    lua_setfield(L, -2, "size");
    if (info.nullable) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "nullable");
    }
    if (info.type_var >= 0) {
      lua_pushstring(L, cujit_kernel_type_var(k->kernel, (size_t)info.type_var));
      lua_setfield(L, -2, "type_var");
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int kernel_type_vars(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
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
  cjl_kernel *k = cjl_check_kernel(L, 1);
  cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
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

/* Sets t[name] = v, leaving it nil when v is -1 (not known). */
static void set_known(lua_State *L, const char *name, int v) {
  if (v < 0) return;
  lua_pushinteger(L, v);
  lua_setfield(L, -2, name);
}

/* k:info() -> {registers, spill_stores, spill_loads, local_bytes, static_shared_bytes,
** max_threads_per_block, from}: the device's attributes (from = "device") with the spills of
** ptxas's report when the compile made one, else, with no device to ask, the report alone
** (from = "compiler"). A value not known is nil. */
static int kernel_info(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
  const char *from = "device";
  if (cujit_kernel_attributes_get(k->kernel, &a) != CUJIT_OK) {
    const char *why = cujit_errmsg(kernel_engine(k)); /* its first line: the hints are long */
    lua_pushlstring(L, why, strcspn(why, "\n"));
    a = (cujit_kernel_attributes)CUJIT_KERNEL_ATTRIBUTES_INIT;
    if (cujit_kernel_resources_get(k->kernel, &a) != CUJIT_OK)
      return luaL_error(L,
                        "k:info(): no attributes from the device (%s), nor from the compiler "
                        "(%s)",
                        lua_tostring(L, -1), cujit_errmsg(kernel_engine(k)));
    lua_pop(L, 1);
    from = "compiler";
  }
  lua_createtable(L, 0, 7);
  set_known(L, "registers", a.registers);
  set_known(L, "spill_stores", a.spill_store_bytes);
  set_known(L, "spill_loads", a.spill_load_bytes);
  set_known(L, "local_bytes", a.local_bytes);
  set_known(L, "static_shared_bytes", a.static_shared_bytes);
  set_known(L, "max_threads_per_block", a.max_threads_per_block);
  lua_pushstring(L, from);
  lua_setfield(L, -2, "from");
  return 1;
}

/* k:suggest_block() -> block size, minimum grid (the occupancy API's, as forall uses). */
static int kernel_suggest_block(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  int block = 0, min_grid = 0;
  if (cujit_kernel_suggest_block(k->kernel, &block, &min_grid) != CUJIT_OK)
    return cjl_error(L, kernel_engine(k));
  lua_pushinteger(L, block);
  lua_pushinteger(L, min_grid);
  return 2;
}

/* The error of a call of many items: "WHAT: K of N ITEMS failed:" and each failure's message,
** "[i] ...", i counted from 1 as the Lua list is. Never returns. */
int cjl_many_failed(lua_State *L, cujit_engine *e, const char *what, const char *items,
                    const cujit_status *statuses, size_t n) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  size_t failed = 0;
  for (size_t i = 0; i < n; i++) failed += statuses[i] != CUJIT_OK;
  lua_pushfstring(L, "%s: %d of %d %s failed:", what, (int)failed, (int)n, items);
  luaL_addvalue(&b);
  for (size_t i = 0; i < n; i++)
    if (statuses[i] != CUJIT_OK) {
      const char *m = cujit_program_compile_many_message(e, i);
      lua_pushfstring(L, "\n[%d] %s", (int)i + 1, m && *m ? m : cujit_status_string(statuses[i]));
      luaL_addvalue(&b);
    }
  luaL_pushresult(&b);
  return lua_error(L);
}

/* One item of k:specialize_all's list: a dtype name (one type variable) or a list of `want`. */
static void item_types(lua_State *L, const char *name, size_t i, size_t want, cujit_dtype *types) {
  int item = lua_gettop(L);
  int table = lua_type(L, item) == LUA_TTABLE;
  if (!(table ? luaL_len(L, item) == (lua_Integer)want
              : lua_type(L, item) == LUA_TSTRING && want == 1))
    luaL_argerror(L, 2,
                  want == 1 ? lua_pushfstring(L, "item [%d] is a %s: give a dtype name for '%s'",
                                              (int)i + 1, luaL_typename(L, item), name)
                            : lua_pushfstring(L,
                                              "item [%d] is a %s: give a list of %d dtype names "
                                              "for '%s' (one per type variable)",
                                              (int)i + 1, luaL_typename(L, item), (int)want, name));
  for (size_t t = 0; t < want; t++) {
    if (table) lua_geti(L, item, (lua_Integer)t + 1);
    const char *dt = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if ((types[t] = dt ? cujit_dtype_from_name(dt) : CUJIT_DTYPE_NONE) == CUJIT_DTYPE_NONE)
      luaL_argerror(L, 2,
                    lua_pushfstring(L,
                                    "item [%d]: %s is not a dtype (use one of f16, bf16, f32, "
                                    "f64, i8, i16, i32, i64, u8, u16, u32, u64)",
                                    (int)i + 1,
                                    dt ? lua_pushfstring(L, "'%s'", dt) : luaL_typename(L, -1)));
    if (table) lua_pop(L, 1);
  }
  lua_settop(L, item - 1);
}

/* k:specialize_all{dtype, ...} or {{dtype, ...}, ...} -> the specialisations, compiled at once
** (cujit_kernel_specialize_many) ahead of their first launches. */
static int kernel_specialize_all(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t want = cujit_kernel_type_var_count(k->kernel);
  if (want == 0 || cujit_kernel_program(k->kernel))
    return luaL_error(L, "'%s' is not generic (it has no type variables left to bind)",
                      cjl_kernel_name(k));
  lua_Integer len = luaL_len(L, 2);
  size_t n = len > 0 ? (size_t)len : 0;
  cujit_dtype *types = lua_newuserdatauv(L, (n ? n : 1) * want * sizeof *types, 0);
  cujit_kernel **out = lua_newuserdatauv(L, (n ? n : 1) * sizeof *out, 0);
  cujit_status *statuses = lua_newuserdatauv(L, (n ? n : 1) * sizeof *statuses, 0);
  for (size_t i = 0; i < n; i++) {
    lua_geti(L, 2, (lua_Integer)i + 1);
    item_types(L, cjl_kernel_name(k), i, want, types + i * want);
  }
  cujit_status st = cujit_kernel_specialize_many(k->kernel, n, types, out, statuses);
  if (st != CUJIT_OK && !cujit_program_compile_many_message(kernel_engine(k), 0))
    return cjl_error(L, kernel_engine(k));
  if (st != CUJIT_OK)
    return cjl_many_failed(L, kernel_engine(k), "k:specialize_all", "type lists", statuses, n);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    cjl_kernel *spec = cjl_push_kernel(L, out[i], 0); /* owned by the generic kernel */
    spec->parent = k;
    lua_pushvalue(L, 1); /* which it keeps alive */
    lua_setiuservalue(L, -2, CJL_UV_PARENT);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* k:specialize(dtype, ...) -> the concrete kernel for these type variable bindings. */
static int kernel_specialize(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  size_t want = cujit_kernel_type_var_count(k->kernel);
  int given = lua_gettop(L) - 1;
  if (want == 0 || cujit_kernel_program(k->kernel)) /* a concrete kernel or a specialisation */
    return luaL_error(L, "'%s' is not generic (it has no type variables left to bind)",
                      cjl_kernel_name(k));
  if ((size_t)given != want)
    return luaL_error(L, "'%s' has %d type variable(s): give one dtype for each",
                      cjl_kernel_name(k), (int)want);
  cujit_dtype types[CJL_MAX_ARGS];
  for (int i = 0; i < given && i < CJL_MAX_ARGS; i++) types[i] = cjl_check_dtype(L, i + 2);
  cujit_kernel *concrete;
  if (cujit_kernel_specialize(k->kernel, types, want, &concrete) != CUJIT_OK)
    return cjl_error(L, kernel_engine(k));
  cjl_kernel *spec = cjl_push_kernel(L, concrete, 0); /* owned by the generic kernel */
  spec->parent = k;
  lua_pushvalue(L, 1); /* which it keeps alive */
  lua_setiuservalue(L, -2, CJL_UV_PARENT);
  return 1;
}

static int kernel_tostring(lua_State *L) {
  cjl_kernel *k = luaL_checkudata(L, 1, CJL_KERNEL);
  if (!cjl_kernel_alive(k)) {
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
                                          {"info", kernel_info},
                                          {"suggest_block", kernel_suggest_block},
                                          {"specialize", kernel_specialize},
                                          {"specialize_all", kernel_specialize_all},
                                          {"free", kernel_gc},
                                          {NULL, NULL}};

void cjl_open_kernels(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_KERNEL, kernel_meta, kernel_methods, NULL);
  lua_pushcfunction(L, l_jit);
  lua_setfield(L, module_index, "jit");
}
