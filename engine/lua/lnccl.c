/*
** lnccl.c -- NCCL from Lua (cuda.nccl): whether it is there, unique ids and the rendezvous file,
** communicators over several devices of this process (cuda.nccl.comm{0, 1}) or one rank per
** process (cuda.nccl.comm_rank), and their collectives on device arrays, one array per local rank.
*/
#include "larray.h"
#include "ldevice.h"
#include "lnccl.h"
#include "lstream.h"

#include <string.h>

#define CJL_NCCL_COMM "cujit.nccl_comm"
#define MAX_LOCAL 64 /* local ranks a Lua call passes, each an array and a stream */

typedef struct cjl_comm {
  cujit_nccl_comm *comm; /* NULL once freed */
  cjl_state *state;
} cjl_comm;

static cjl_comm *check_comm(lua_State *L, int idx) {
  cjl_comm *c = luaL_checkudata(L, idx, CJL_NCCL_COMM);
  if (!c->comm) luaL_argerror(L, idx, "the NCCL communicator has been freed");
  return c;
}

/* cuda.nccl.available() -> true, version | false, why (what to install or set). */
static int l_available(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  int version = 0;
  if (cujit_nccl_version(e, &version) != CUJIT_OK) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, cujit_errmsg(e));
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_pushinteger(L, version);
  return 2;
}

static int l_unique_id(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  char hex[CUJIT_NCCL_ID_HEX];
  cjl_check(L, e, cujit_nccl_unique_id(e, hex));
  lua_pushstring(L, hex);
  return 1;
}

/* cuda.nccl.write_id(path, id): the rendezvous file, written whole. */
static int l_write_id(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  const char *path = cjl_check_text(L, 1, "the path");
  cjl_check(L, e, cujit_nccl_id_write(e, path, cjl_check_text(L, 2, "the unique id")));
  return 0;
}

/* cuda.nccl.read_id(path [, timeout_s = 60]) -> id, once the file is there. */
static int l_read_id(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  const char *path = cjl_check_text(L, 1, "the path");
  double timeout = luaL_optnumber(L, 2, 60);
  char hex[CUJIT_NCCL_ID_HEX];
  cjl_check(L, e, cujit_nccl_id_read(e, path, timeout, hex));
  lua_pushstring(L, hex);
  return 1;
}

static void push_comm(lua_State *L, cujit_nccl_comm *comm) {
  cjl_comm *c = lua_newuserdatauv(L, sizeof *c, 0);
  c->comm = comm;
  c->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_NCCL_COMM);
}

/* cuda.nccl.comm({d0, d1, ...}) -> a communicator with one rank per listed device. */
static int l_comm(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  int ordinals[MAX_LOCAL];
  lua_Integer n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= MAX_LOCAL, 1, "a list of 1 to 64 device ordinals expected");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    cujit_device *dev = cjl_check_device(L, lua_gettop(L));
    ordinals[i - 1] = cujit_device_ordinal(dev);
    lua_pop(L, 1);
  }
  cujit_nccl_comm *comm;
  cjl_check(L, e, cujit_nccl_comm_init_all(e, ordinals, (int)n, &comm));
  push_comm(L, comm);
  return 1;
}

/* cuda.nccl.comm_rank{device = d, ranks = n, rank = r, id = hex} -> this process's rank r of n;
** blocks until every rank has joined. */
static int l_comm_rank(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_getfield(L, 1, "device") != LUA_TSTRING && !lua_isinteger(L, -1))
    return luaL_argerror(L, 1, "option 'device' is an ordinal (0, 1, ...) or \"cpu\"");
  cujit_device *dev = cjl_check_device(L, lua_gettop(L));
  lua_getfield(L, 1, "ranks");
  lua_getfield(L, 1, "rank");
  lua_getfield(L, 1, "id");
  int top = lua_gettop(L);
  if (!lua_isinteger(L, top - 2) || !lua_isinteger(L, top - 1) || !lua_isstring(L, top))
    return luaL_argerror(L, 1,
                         "{device = d, ranks = n, rank = r, id = hex} expected: integers ranks "
                         "and rank, the id from cuda.nccl.unique_id() on rank 0");
  lua_Integer ranks = lua_tointeger(L, top - 2), rank = lua_tointeger(L, top - 1);
  luaL_argcheck(L, ranks > 0 && ranks <= INT32_MAX && rank >= 0 && rank < ranks, 1,
                "rank must be in 0 .. ranks - 1");
  const char *id = cjl_text(L, top, 1, "option 'id'");
  cujit_nccl_comm *comm;
  cjl_check(L, e, cujit_nccl_comm_init_rank(dev, (int)ranks, (int)rank, id, &comm));
  push_comm(L, comm);
  return 1;
}

/* --- collectives ------------------------------------------------------------------------------ */

/* The buffers at `idx` for the communicator's local ranks: a list of device arrays, one per
** local rank, or one array when there is one local rank. */
static void check_arrays(lua_State *L, int idx, const cujit_nccl_comm *comm, cujit_buffer **out) {
  int local = cujit_nccl_comm_local(comm);
  if (!lua_istable(L, idx)) {
    if (local != 1)
      luaL_argerror(
          L, idx,
          lua_pushfstring(L, "a list of %d device arrays expected (one per local rank)", local));
    out[0] = cjl_check_array(L, idx, NULL);
    return;
  }
  if (luaL_len(L, idx) != local)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "%d device arrays expected (one per local rank), got %d",
                                  local, (int)luaL_len(L, idx)));
  for (int i = 0; i < local; i++) {
    lua_geti(L, idx, i + 1);
    out[i] = cjl_check_array(L, lua_gettop(L), NULL);
    lua_pop(L, 1);
  }
}

/* The streams at `idx`: none/nil (the default streams), one stream (one local rank), or a list of
** streams (or false for a default stream), one per local rank. NULL when none. */
static cujit_stream **opt_streams(lua_State *L, int idx, const cujit_nccl_comm *comm,
                                  cujit_stream **out) {
  int local = cujit_nccl_comm_local(comm);
  if (lua_isnoneornil(L, idx)) return NULL;
  if (!lua_istable(L, idx)) {
    luaL_argcheck(L, local == 1, idx, "a list of streams expected (one per local rank)");
    out[0] = cjl_opt_stream(L, idx);
    return out;
  }
  luaL_argcheck(L, luaL_len(L, idx) == local, idx, "one stream per local rank expected");
  for (int i = 0; i < local; i++) {
    lua_geti(L, idx, i + 1);
    out[i] = lua_toboolean(L, -1) ? cjl_opt_stream(L, lua_gettop(L)) : NULL;
    lua_pop(L, 1);
  }
  return out;
}

static cujit_nccl_op check_op(lua_State *L, int idx) {
  static const char *const names[] = {"sum", "prod", "min", "max", "avg", NULL};
  return (cujit_nccl_op)luaL_checkoption(L, idx, "sum", names);
}

/* The elements of rank 0's send array: the count for in-place collectives. */
static size_t elements(const cujit_buffer *b) {
  return cujit_buffer_size(b) / cujit_dtype_size(cujit_buffer_dtype(b));
}

/* What a collective's Lua call gives: the communicator (argument 1), the arrays (argument 2),
** the output arrays, and the streams. */
typedef struct call {
  cjl_comm *c;
  cujit_buffer *send[MAX_LOCAL], *recv[MAX_LOCAL];
  cujit_stream *stream_list[MAX_LOCAL];
  cujit_buffer **out;     /* recv, or NULL: in place */
  cujit_stream **streams; /* stream_list, or NULL: the default streams */
} call;

/* Reads the call: the output arrays at `out_idx` (required or not), the streams at
** `streams_idx`. */
static void read_call(lua_State *L, call *k, int out_idx, int out_required, int streams_idx) {
  k->c = check_comm(L, 1);
  check_arrays(L, 2, k->c->comm, k->send);
  k->out = NULL;
  if (out_required || !lua_isnoneornil(L, out_idx)) {
    check_arrays(L, out_idx, k->c->comm, k->recv);
    k->out = k->recv;
  }
  k->streams = opt_streams(L, streams_idx, k->c->comm, k->stream_list);
}

static int check_root(lua_State *L, int idx) {
  lua_Integer root = luaL_checkinteger(L, idx);
  luaL_argcheck(L, root >= 0 && root <= INT32_MAX, idx, "a rank expected");
  return (int)root;
}

/* comm:all_reduce(arrays [, op = "sum" [, out_arrays [, streams]]]); in place without out. */
static int comm_all_reduce(lua_State *L) {
  call k;
  read_call(L, &k, 4, 0, 5);
  cjl_check(L, k.c->state->engine,
            cujit_nccl_all_reduce(k.c->comm, k.send, k.out, elements(k.send[0]), check_op(L, 3),
                                  k.streams));
  return 0;
}

/* comm:broadcast(arrays, root [, out_arrays [, streams]]); in place without out. */
static int comm_broadcast(lua_State *L) {
  call k;
  read_call(L, &k, 4, 0, 5);
  cjl_check(L, k.c->state->engine,
            cujit_nccl_broadcast(k.c->comm, k.send, k.out, elements(k.send[0]), check_root(L, 3),
                                 k.streams));
  return 0;
}

/* comm:reduce(arrays, op, root [, out_arrays [, streams]]); in place without out. */
static int comm_reduce(lua_State *L) {
  call k;
  read_call(L, &k, 5, 0, 6);
  cjl_check(L, k.c->state->engine,
            cujit_nccl_reduce(k.c->comm, k.send, k.out, elements(k.send[0]), check_op(L, 3),
                              check_root(L, 4), k.streams));
  return 0;
}

/* comm:all_gather(arrays, out_arrays [, streams]): each out holds ranks * #array elements. */
static int comm_all_gather(lua_State *L) {
  call k;
  read_call(L, &k, 3, 1, 4);
  cjl_check(L, k.c->state->engine,
            cujit_nccl_all_gather(k.c->comm, k.send, k.out, elements(k.send[0]), k.streams));
  return 0;
}

/* comm:reduce_scatter(arrays, out_arrays [, op = "sum" [, streams]]): each array holds ranks *
** #out elements. */
static int comm_reduce_scatter(lua_State *L) {
  call k;
  read_call(L, &k, 3, 1, 5);
  cjl_check(L, k.c->state->engine,
            cujit_nccl_reduce_scatter(k.c->comm, k.send, k.out, elements(k.recv[0]), check_op(L, 4),
                                      k.streams));
  return 0;
}

/* --- the communicator object ------------------------------------------------------------------ */

/* comm:devices() -> the ordinals of the local ranks, in order. */
static int comm_devices(lua_State *L) {
  cjl_comm *c = check_comm(L, 1);
  int local = cujit_nccl_comm_local(c->comm);
  lua_createtable(L, local, 0);
  for (int i = 0; i < local; i++) {
    lua_pushinteger(L, cujit_device_ordinal(cujit_nccl_comm_device(c->comm, i)));
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int comm_free(lua_State *L) {
  cjl_comm *c = luaL_checkudata(L, 1, CJL_NCCL_COMM);
  if (c->comm && !c->state->closed) cujit_nccl_comm_free(c->comm);
  c->comm = NULL;
  return 0;
}

static int comm_tostring(lua_State *L) {
  cjl_comm *c = luaL_checkudata(L, 1, CJL_NCCL_COMM);
  if (!c->comm)
    lua_pushliteral(L, "cujit.nccl_comm (freed)");
  else
    lua_pushfstring(L, "cujit.nccl_comm of %d ranks, %d here (first rank %d)",
                    cujit_nccl_comm_ranks(c->comm), cujit_nccl_comm_local(c->comm),
                    cujit_nccl_comm_rank(c->comm, 0));
  return 1;
}

/* Fields: ranks (in the communicator), local (ranks here), rank (of the first local rank). */
static int comm_index(lua_State *L) {
  cjl_comm *c = luaL_checkudata(L, 1, CJL_NCCL_COMM);
  const char *key = luaL_checkstring(L, 2);
  if (lua_getfield(L, lua_upvalueindex(1), key) != LUA_TNIL) return 1;
  if (!c->comm) return 1; /* nil */
  if (strcmp(key, "ranks") == 0)
    lua_pushinteger(L, cujit_nccl_comm_ranks(c->comm));
  else if (strcmp(key, "local") == 0)
    lua_pushinteger(L, cujit_nccl_comm_local(c->comm));
  else if (strcmp(key, "rank") == 0)
    lua_pushinteger(L, cujit_nccl_comm_rank(c->comm, 0));
  else
    lua_pushnil(L);
  return 1;
}

static const luaL_Reg comm_meta[] = {
    {"__gc", comm_free}, {"__close", comm_free}, {"__tostring", comm_tostring}, {NULL, NULL}};
static const luaL_Reg comm_methods[] = {{"all_reduce", comm_all_reduce},
                                        {"broadcast", comm_broadcast},
                                        {"reduce", comm_reduce},
                                        {"all_gather", comm_all_gather},
                                        {"reduce_scatter", comm_reduce_scatter},
                                        {"devices", comm_devices},
                                        {"free", comm_free},
                                        {NULL, NULL}};
static const luaL_Reg nccl_functions[] = {{"available", l_available},
                                          {"unique_id", l_unique_id},
                                          {"write_id", l_write_id},
                                          {"read_id", l_read_id},
                                          {"comm", l_comm},
                                          {"comm_rank", l_comm_rank},
                                          {NULL, NULL}};

void cjl_open_nccl(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_NCCL_COMM, comm_meta, comm_methods, comm_index);
  luaL_newlib(L, nccl_functions);
  lua_setfield(L, module_index, "nccl");
}
