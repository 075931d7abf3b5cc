/*
** lgraph.c -- CUDA graphs from Lua. cuda.graph(fn [, mode]) calls fn(s) with a fresh stream that
** captures: every launch, copy and library call issued on s is recorded, not run. The graph keeps
** alive what it uses (its user value is the table of kernels and device arrays its launches
** took, handed over from the capturing stream), so collecting them early cannot break a replay.
** An error inside fn ends the capture, discards it, and is raised again with fn's traceback.
*/
#include "lgraph.h"

#include "larray.h"
#include "lstream.h"
#include "ltma.h"

#include <string.h>

typedef struct cjl_graph {
  cujit_graph *graph; /* NULL once freed */
  cjl_state *state;
} cjl_graph;

static cjl_graph *to_graph(lua_State *L, int idx) {
  cjl_graph *g = luaL_checkudata(L, idx, CJL_GRAPH);
  if (!g->graph) luaL_argerror(L, idx, "graph has been freed");
  return g;
}

static int graph_check(lua_State *L, const cjl_graph *g, cujit_status status) {
  if (status != CUJIT_OK) return cjl_error(L, g->state->engine);
  return 0;
}

/* --- capture ---------------------------------------------------------------------------------- */

/* The message handler of the capture function: a message gets the traceback to where it arose;
** any other error object (error({code = 7}), error(42)) comes back to the caller as it is, the same
*value,
** as pcall would give it. */
static int traceback(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING) return 1; /* the object itself, at 1 (a number too) */
  const char *msg = lua_tostring(L, 1);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Adds the keys of the table at `from` (if it is one) to the graph at `graph_idx`'s table. */
static void keep_all(lua_State *L, int graph_idx, int from) {
  from = lua_absindex(L, from);
  if (!lua_istable(L, from)) return;
  lua_getiuservalue(L, graph_idx, 1);
  lua_pushnil(L);
  while (lua_next(L, from)) {
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 1);
    lua_rawset(L, -4);
  }
  lua_pop(L, 1);
}

static const char *const mode_names[] = {"relaxed", "thread_local", "global", NULL};

/* cuda.graph(fn [, mode]) -> graph. Upvalue 1: cuda.stream. */
static int l_graph(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  cujit_capture_mode mode = (cujit_capture_mode)luaL_checkoption(L, 2, "relaxed", mode_names);
  cujit_engine *e = cjl_engine(L);
  lua_settop(L, 2);
  cjl_graph *g = lua_newuserdatauv(L, sizeof *g, 1); /* 3: the graph, owner of what it keeps */
  g->graph = NULL;
  g->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_GRAPH);
  lua_newtable(L);
  lua_setiuservalue(L, 3, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 0, 1); /* 4: the capturing stream */
  cjl_stream *s = luaL_checkudata(L, 4, CJL_STREAM);
  cjl_check(L, e, cujit_capture_begin(s->stream, mode));
  s->capturing = 1;
  /* No finalizer runs during the capture: freeing device memory is a call the stricter capture
  ** modes forbid, and would invalidate the capture. */
  int collecting = lua_gc(L, LUA_GCISRUNNING);
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, traceback);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 4);
  int failed = lua_pcall(L, 1, 0, 5); /* 6 on failure: the error with its traceback */
  if (collecting) lua_gc(L, LUA_GCRESTART);
  s->capturing = 0;
  cujit_status st = cujit_capture_end(s->stream, failed ? NULL : &g->graph);
  lua_getiuservalue(L, 4, 1); /* what the captured launches used */
  if (!failed && st == CUJIT_OK) keep_all(L, 3, -1);
  lua_pop(L, 1);
  cujit_stream_free(s->stream); /* the capture is over: the graph does not need it */
  s->stream = NULL;
  if (failed) return lua_error(L);
  cjl_check(L, e, st);
  lua_settop(L, 3);
  return 1;
}

/* --- replay ----------------------------------------------------------------------------------- */

/* The replay path tells graphs and streams by the metatables it holds as upvalues 1 and 2 (as
** the launcher does), not by a registry lookup: a replay of a small graph costs about a
** microsecond, and the lookups would show. */
#define GRAPH_MT lua_upvalueindex(1)
#define STREAM_MT lua_upvalueindex(2)

static cjl_graph *replay_graph(lua_State *L) {
  if (!lua_getmetatable(L, 1) || !lua_rawequal(L, -1, GRAPH_MT)) to_graph(L, 1); /* raises */
  lua_pop(L, 1);
  cjl_graph *g = lua_touserdata(L, 1);
  if (!g->graph) luaL_argerror(L, 1, "graph has been freed");
  return g;
}

static cujit_stream *replay_stream(lua_State *L, int idx) {
  if (lua_getmetatable(L, idx)) {
    int is_stream = lua_rawequal(L, -1, STREAM_MT);
    lua_pop(L, 1);
    cjl_stream *s = is_stream ? lua_touserdata(L, idx) : NULL;
    if (s && s->stream) return s->stream;
  }
  return cjl_opt_stream(L, idx); /* nil, or raises saying what is wrong */
}

/* g:launch([stream]): one replay, asynchronous like a launch. */
static int graph_launch(lua_State *L) {
  cjl_graph *g = replay_graph(L);
  return graph_check(L, g, cujit_graph_launch(g->graph, replay_stream(L, 2)));
}

/* g:replay(n [, stream]): n replays in one call. */
static int graph_replay(lua_State *L) {
  cjl_graph *g = replay_graph(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0, 2, "the number of replays must be >= 0");
  return graph_check(L, g, cujit_graph_replay(g->graph, replay_stream(L, 3), (size_t)n));
}

/* g:instantiate(): makes it launchable now (the first launch does otherwise). */
static int graph_instantiate(lua_State *L) {
  cjl_graph *g = to_graph(L, 1);
  return graph_check(L, g, cujit_graph_instantiate(g->graph));
}

/* --- changing a graph ------------------------------------------------------------------------- */

/* Argument `idx` for parameter `param` of kernel k as the engine takes it; the engine checks it
** against the signature (type, range, dtype) as for a launch. A string or a tensor map is a
** struct's bytes, only for a parameter of no scalar type (a struct, a vector type, a CUtensorMap),
** checked by the launch's own rule (cjl_struct_bytes). */
static void to_arg(lua_State *L, int idx, const cujit_kernel *k, size_t param, cujit_arg *out) {
  cujit_param_info info = CUJIT_PARAM_INFO_INIT;
  int known = cujit_kernel_param(k, param, &info) == CUJIT_OK;
  int takes_bytes = !known || (info.kind == CUJIT_PARAM_SCALAR && info.dtype == CUJIT_DTYPE_NONE);
  int type = lua_type(L, idx);
  if (type == LUA_TSTRING && !takes_bytes)
    luaL_argerror(
        L, idx,
        lua_pushfstring(L, "%s expected for '%s', got string",
                        info.kind == CUJIT_PARAM_POINTER ? "cujit.device_array" : "number",
                        info.name));
  if (type == LUA_TNUMBER) {
    if (lua_isinteger(L, idx))
      *out = (cujit_arg){.kind = CUJIT_ARG_INT, .v.i = (int64_t)lua_tointeger(L, idx)};
    else
      *out = (cujit_arg){.kind = CUJIT_ARG_FLOAT, .v.f = lua_tonumber(L, idx)};
  } else if (type == LUA_TBOOLEAN) {
    *out = (cujit_arg){.kind = CUJIT_ARG_INT, .v.i = lua_toboolean(L, idx)};
  } else if (cjl_test_array(L, idx)) {
    *out = (cujit_arg){.kind = CUJIT_ARG_BUFFER, .v.buffer = cjl_check_array(L, idx, NULL)};
  } else if (type == LUA_TSTRING || (takes_bytes && type == LUA_TUSERDATA)) {
    const void *bytes = NULL;
    const char *why = cjl_struct_bytes(L, idx, known ? info.size : 0, &bytes);
    if (why) luaL_argerror(L, idx, lua_pushfstring(L, "'%s': %s", info.name, why));
    *out = (cujit_arg){.kind = CUJIT_ARG_BYTES, .v.bytes = bytes};
  } else {
    luaL_argerror(L, idx,
                  lua_pushfstring(L,
                                  "a number, boolean, string, tensor map or cujit.device_array "
                                  "expected for '%s' (a graph takes no host arrays or tables), "
                                  "got %s",
                                  cujit_kernel_name(k), luaL_typename(L, idx)));
  }
}

/* g:set_args(i, ...): new arguments for kernel node i (counted from 1 in capture order). */
static int graph_set_args(lua_State *L) {
  cjl_graph *g = to_graph(L, 1);
  lua_Integer i = luaL_checkinteger(L, 2);
  cujit_kernel *k = i >= 1 ? cujit_graph_kernel(g->graph, (size_t)(i - 1)) : NULL;
  size_t nodes = cujit_graph_node_count(g->graph, CUJIT_GRAPH_NODE_KERNEL);
  if (!k && nodes == 0)
    return luaL_argerror(L, 2, "the graph has no kernel nodes: its capture launched no kernel");
  if (!k)
    return luaL_argerror(L, 2,
                         lua_pushfstring(L, "the graph has %d kernel node%s (1 to %d)", (int)nodes,
                                         nodes == 1 ? "" : "s", (int)nodes));
  const char *name = cujit_kernel_name(k);
  int nargs = lua_gettop(L) - 2;
  luaL_argcheck(L, nargs <= CJL_MAX_ARGS, 3, "too many arguments");
  cujit_arg args[CJL_MAX_ARGS];
  for (int j = 0; j < nargs; j++) to_arg(L, j + 3, k, (size_t)j, &args[j]);
  if (cujit_graph_set_args(g->graph, (size_t)(i - 1), args, (size_t)nargs) != CUJIT_OK) {
    const char *why;
    int n = cjl_failed_argument(g->state->engine, name, &why);
    cujit_param_info param = CUJIT_PARAM_INFO_INIT;
    if (n >= 1 && n <= nargs && cujit_kernel_param(k, (size_t)(n - 1), &param) == CUJIT_OK)
      return luaL_error(L, "bad argument #%d '%s' to 'set_args' of kernel '%s' (%s)", n + 1,
                        param.name, name, why);
    return cjl_error(L, g->state->engine);
  }
  for (int j = 0; j < nargs; j++) /* the arrays it now uses stay alive with it */
    if (cjl_test_array(L, j + 3)) {
      lua_getiuservalue(L, 1, 1);
      lua_pushvalue(L, j + 3);
      lua_pushboolean(L, 1);
      lua_rawset(L, -3);
      lua_pop(L, 1);
    }
  return 0;
}

/* g:update(g2): g takes the parameters of g2, a capture of the same shape. */
static int graph_update(lua_State *L) {
  cjl_graph *g = to_graph(L, 1), *from = to_graph(L, 2);
  graph_check(L, g, cujit_graph_update(g->graph, from->graph));
  lua_getiuservalue(L, 2, 1);
  keep_all(L, 1, -1);
  return 0;
}

/* --- introspection ---------------------------------------------------------------------------- */

/* g:nodes() -> {kernel = n, copy = n, memset = n, other = n, total = n} */
static int graph_nodes(lua_State *L) {
  cjl_graph *g = to_graph(L, 1);
  static const char *const kinds[] = {"kernel", "copy", "memset", "other", "total"};
  lua_createtable(L, 0, 5);
  for (int i = 0; i <= CUJIT_GRAPH_NODE_KINDS; i++) {
    lua_pushinteger(L, (lua_Integer)cujit_graph_node_count(g->graph, (cujit_graph_node_kind)i));
    lua_setfield(L, -2, kinds[i]);
  }
  return 1;
}

/* g:dot(path): Graphviz of the graph. */
static int graph_dot(lua_State *L) {
  cjl_graph *g = to_graph(L, 1);
  const char *path = cjl_check_text(L, 2, "the path");
  return graph_check(L, g, cujit_graph_dot(g->graph, path));
}

static int graph_free(lua_State *L) {
  cjl_graph *g = luaL_checkudata(L, 1, CJL_GRAPH);
  if (g->graph && !g->state->closed) cujit_graph_free(g->graph);
  g->graph = NULL;
  lua_pushnil(L); /* what it kept may go now */
  lua_setiuservalue(L, 1, 1);
  return 0;
}

static int graph_tostring(lua_State *L) {
  cjl_graph *g = luaL_checkudata(L, 1, CJL_GRAPH);
  if (!g->graph || g->state->closed) {
    lua_pushliteral(L, "cujit.graph (freed)");
    return 1;
  }
  size_t n = cujit_graph_node_count(g->graph, CUJIT_GRAPH_NODE_KERNEL);
  int ordinal = cujit_device_ordinal(cujit_graph_device(g->graph));
  if (ordinal == CUJIT_DEVICE_CPU)
    lua_pushfstring(L, "cujit.graph: %d kernel node%s on the CPU device", (int)n,
                    n == 1 ? "" : "s");
  else
    lua_pushfstring(L, "cujit.graph: %d kernel node%s on device %d", (int)n, n == 1 ? "" : "s",
                    ordinal);
  return 1;
}

static const luaL_Reg graph_meta[] = {
    {"__gc", graph_free}, {"__close", graph_free}, {"__tostring", graph_tostring}, {NULL, NULL}};

static const luaL_Reg graph_methods[] = {{"set_args", graph_set_args},
                                         {"update", graph_update},
                                         {"instantiate", graph_instantiate},
                                         {"nodes", graph_nodes},
                                         {"dot", graph_dot},
                                         {"free", graph_free},
                                         {NULL, NULL}};

static const luaL_Reg replay_methods[] = {
    {"launch", graph_launch}, {"replay", graph_replay}, {NULL, NULL}};

void cjl_open_graphs(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_GRAPH, graph_meta, graph_methods, NULL);
  luaL_getmetatable(L, CJL_GRAPH);
  lua_getfield(L, -1, "__index"); /* the methods table */
  luaL_getmetatable(L, CJL_GRAPH);
  luaL_getmetatable(L, CJL_STREAM);
  luaL_setfuncs(L, replay_methods, 2);
  lua_pop(L, 2);
  lua_getfield(L, module_index, "stream");
  lua_pushcclosure(L, l_graph, 1);
  lua_setfield(L, module_index, "graph");
}
