/*
** lprogram.c -- programs from Lua: cuda.source(src) and cuda.load(path) compile a translation
** unit with one or more kernels (their signatures read from the source, or given with the
** `signatures` option), each a field of the program object; m:kernels(), m:ptx(), m:log().
** cuda.compile_all({src, ...}) compiles many at once.
*/
#include "lkernel.h"
#include "loptions.h"
#include "lprogram.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct cjl_program {
  cujit_program *program; /* NULL once freed */
  cjl_state *state;
} cjl_program;

static cjl_program *check_program(lua_State *L, int idx) {
  cjl_program *p = luaL_checkudata(L, idx, CJL_PROGRAM);
  if (!p->program) luaL_argerror(L, idx, "program has been freed");
  return p;
}

cujit_program *cjl_check_program(lua_State *L, int idx) {
  return check_program(L, idx)->program;
}

/* Reads a whole file into a Lua string (pushed and returned), or raises naming the file. */
static const char *push_file(lua_State *L, const char *path) {
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
  size_t len = 0;
  const char *text = lua_tolstring(L, -1, &len);
  if (memchr(text, '\0', len)) /* as cujit_program_compile_file says it */
    luaL_error(L, "'%s' holds NUL bytes: it is not a CUDA source file", path);
  return text;
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
    cjl_push_kernel(L, kernel, 1);
    lua_setfield(L, -2, name);
  }
  lua_setiuservalue(L, idx, 1);
}

/* cuda.source(src [, options]) and cuda.load(path [, options]) -> program; m.name is a kernel. */
static int build_program(lua_State *L, int from_file) {
  const char *text = cjl_check_text(L, 1, from_file ? "the path" : "the source");
  cujit_engine *e = cjl_engine(L);
  cjl_compile_opts co;
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
    if (from_file) text = push_file(L, text);
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

/* cuda.compile_all({src, ...} [, options]) -> {program, ...}: the sources compiled at once
** (cujit_program_compile_many), each as cuda.source(src, options) would; an error listing every
** source that failed, by its place in the list. */
static int l_compile_all(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  cujit_engine *e = cjl_engine(L);
  cjl_compile_opts co;
  const char *preamble = cjl_parse_compile_options(L, 2, &co);
  cjl_refuse_unit_option(L, 2, co.name != NULL, "name",
                         "cuda.compile_all names each source by its place in the list");
  cjl_refuse_unit_option(L, 2, co.o.signature_count != 0, "signatures",
                         "each source of cuda.compile_all has kernels of its own");
  lua_Integer len = luaL_len(L, 1);
  size_t n = len > 0 ? (size_t)len : 0;
  lua_newtable(L); /* keeps the texts made with the preamble */
  int texts = lua_gettop(L);
  const char **srcs = lua_newuserdatauv(L, (n ? n : 1) * sizeof *srcs, 0);
  const cujit_compile_options **opts = lua_newuserdatauv(L, (n ? n : 1) * sizeof *opts, 0);
  cujit_program **progs = lua_newuserdatauv(L, (n ? n : 1) * sizeof *progs, 0);
  cujit_status *statuses = lua_newuserdatauv(L, (n ? n : 1) * sizeof *statuses, 0);
  for (size_t i = 0; i < n; i++) {
    size_t bytes;
    if (lua_geti(L, 1, (lua_Integer)i + 1) != LUA_TSTRING)
      return luaL_argerror(L, 1,
                           lua_pushfstring(L, "item [%d] is a %s, not a source string", (int)i + 1,
                                           luaL_typename(L, -1)));
    const char *text = lua_tolstring(L, -1, &bytes);
    if (memchr(text, '\0', bytes))
      return luaL_argerror(L, 1, lua_pushfstring(L, "item [%d] holds a NUL byte", (int)i + 1));
    if (preamble) text = lua_pushfstring(L, "%s\n#line 1 \"<source>\"\n%s", preamble, text);
    lua_rawseti(L, texts, (lua_Integer)i + 1);
    srcs[i] = text, opts[i] = &co.o;
  }
  cujit_status st = cujit_program_compile_many(e, n, srcs, NULL, opts, progs, statuses);
  if (st != CUJIT_OK && !cujit_program_compile_many_message(e, 0)) return cjl_error(L, e);
  lua_createtable(L, (int)n, 0);
  int result = lua_gettop(L);
  for (size_t i = 0; i < n; i++) { /* every program owned by a userdata first, then filled */
    if (!progs[i]) continue;
    cjl_program *p = lua_newuserdatauv(L, sizeof *p, 1);
    p->program = progs[i], p->state = cjl_state_of(L);
    luaL_setmetatable(L, CJL_PROGRAM);
    lua_rawseti(L, result, (lua_Integer)i + 1);
  }
  if (st != CUJIT_OK) return cjl_many_failed(L, e, "cuda.compile_all", "sources", statuses, n);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, result, (lua_Integer)i + 1);
    fill_program(L, lua_gettop(L), lua_touserdata(L, -1));
    lua_pop(L, 1);
  }
  lua_settop(L, result);
  return 1;
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
  const char *name = cjl_check_text(L, 2, "the kernel name");
  lua_getiuservalue(L, 1, 1);
  if (lua_getfield(L, -1, name) != LUA_TNIL) return 1;
  push_kernel_names(L, p);
  return luaL_error(L, "the program has no kernel '%s' (it has: %s)%s", name, lua_tostring(L, -1),
                    strchr(name, '<') ? "; name a template's instantiations in the "
                                        "name_expressions option of cuda.source"
                                      : "");
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

static const luaL_Reg program_meta[] = {
    {"__gc", program_gc}, {"__close", program_gc}, {"__tostring", program_tostring}, {NULL, NULL}};

static const luaL_Reg program_methods[] = {{"kernels", program_kernels}, {"kernel", program_kernel},
                                           {"ptx", program_ptx},         {"log", program_log},
                                           {"free", program_gc},         {NULL, NULL}};
static const luaL_Reg module_functions[] = {
    {"source", l_source}, {"load", l_load}, {"compile_all", l_compile_all}, {NULL, NULL}};

void cjl_open_programs(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_PROGRAM, program_meta, program_methods, program_index);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
