/*
** lstream.c -- streams and events from Lua: cuda.stream([{device = d}]) with
** synchronize/query/wait, and cuda.event([{device = d}]) with record/synchronize/query/elapsed;
** the application's own as cuda.external_stream(address) and cuda.external_event(address), and
** each one's native handle as s:handle() and e:handle() (issue 24).
** A stream keeps alive the host memory its pending asynchronous copies use.
*/
#include "ldevice.h"
#include "lstream.h"

/* ---------------------------------------------------------------------------------------------
** Streams
** ------------------------------------------------------------------------------------------- */

/* An event's userdata, declared first because streams wait on events. */
typedef struct cjl_event {
  cujit_event *event; /* NULL once freed */
  cjl_state *state;
} cjl_event;

static cjl_stream *to_stream(lua_State *L, int idx) {
  cjl_stream *s = luaL_checkudata(L, idx, CJL_STREAM);
  if (!s->stream) luaL_argerror(L, idx, "stream has been freed");
  return s;
}

cujit_stream *cjl_opt_stream(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return NULL;
  cjl_stream *s = luaL_testudata(L, idx, CJL_STREAM);
  if (!s)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "cujit.stream expected, got %s", luaL_typename(L, idx)));
  if (!s->stream) luaL_argerror(L, idx, "stream has been freed");
  return s->stream;
}

/* The stream's user value is a table of what its pending asynchronous copies still use. */
void cjl_stream_keep(lua_State *L, int stream_idx, int value_idx) {
  stream_idx = lua_absindex(L, stream_idx);
  value_idx = lua_absindex(L, value_idx);
  if (lua_getiuservalue(L, stream_idx, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, stream_idx, 1);
  }
  lua_pushvalue(L, value_idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

static void stream_forget_pending(lua_State *L, int idx) {
  lua_pushnil(L);
  lua_setiuservalue(L, idx, 1);
}

static int l_stream(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *device = cjl_opt_device_option(L, 1); /* cuda.stream{device = d} */
  cjl_stream *s = lua_newuserdatauv(L, sizeof *s, 1);
  s->stream = NULL;
  s->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_STREAM);
  cjl_check(L, e,
            device ? cujit_stream_create_on(device, &s->stream)
                   : cujit_stream_create(e, &s->stream));
  return 1;
}

/* A native handle given from Lua: an integer address (or a light userdata), not 0. */
static void *check_handle(lua_State *L, int idx, const char *what) {
  if (lua_islightuserdata(L, idx)) {
    void *p = lua_touserdata(L, idx);
    if (!p) luaL_argerror(L, idx, lua_pushfstring(L, "the %s's address is NULL", what));
    return p;
  }
  int exact = 0; /* a number only: a string that reads as one is a mistake here */
  lua_Integer address = lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &exact) : 0;
  if (!exact)
    luaL_argerror(L, idx,
                  lua_pushfstring(L,
                                  "the %s's address (an integer, as s:handle() gives) expected, "
                                  "got %s",
                                  what, luaL_typename(L, idx)));
  if (address == 0)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "the %s's address is 0; %s", what,
                                  *what == 's' ? "the default stream is nil wherever a stream is "
                                                 "taken: pass nil instead"
                                               : "pass an event made by cuEventCreate"));
  return (void *)(uintptr_t)address;
}

/* cuda.external_stream(address [, {device = d}]): the application's CUstream as a stream. */
static int l_external_stream(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  void *native = check_handle(L, 1, "stream");
  cujit_device *device = cjl_opt_device_option(L, 2);
  cjl_stream *s = lua_newuserdatauv(L, sizeof *s, 1);
  s->stream = NULL;
  s->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_STREAM);
  cjl_check(L, e,
            device ? cujit_stream_wrap_on(device, native, &s->stream)
                   : cujit_stream_wrap(e, native, &s->stream));
  return 1;
}

/* s:handle() / e:handle() -> the native handle's address, an integer. */
static int push_handle(lua_State *L, cujit_engine *e, cujit_status status, void *native) {
  if (status != CUJIT_OK) return cjl_error(L, e);
  lua_pushinteger(L, (lua_Integer)(uintptr_t)native);
  return 1;
}

static int stream_handle(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  void *native = NULL;
  cujit_status status = cujit_stream_handle(s->stream, &native);
  return push_handle(L, s->state->engine, status, native);
}

static int stream_synchronize(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cujit_status status = cujit_stream_synchronize(s->stream);
  if (status != CUJIT_OK) return cjl_error(L, s->state->engine);
  stream_forget_pending(L, 1);
  return 0;
}

/* s:query() -> true when all its work is done, false while some is pending. */
static int stream_query(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cujit_status status = cujit_stream_query(s->stream);
  if (status == CUJIT_ERROR_NOT_READY) {
    lua_pushboolean(L, 0);
    return 1;
  }
  if (status != CUJIT_OK) return cjl_error(L, s->state->engine);
  stream_forget_pending(L, 1);
  lua_pushboolean(L, 1);
  return 1;
}

static int stream_wait(lua_State *L) {
  cjl_stream *s = to_stream(L, 1);
  cjl_event *ev = luaL_checkudata(L, 2, CJL_EVENT);
  luaL_argcheck(L, ev->event, 2, "event has been freed");
  if (cujit_stream_wait_event(s->stream, ev->event) != CUJIT_OK)
    return cjl_error(L, s->state->engine);
  return 0;
}

static int stream_free(lua_State *L) {
  cjl_stream *s = luaL_checkudata(L, 1, CJL_STREAM);
  if (s->stream && !s->state->closed) cujit_stream_free(s->stream);
  s->stream = NULL;
  return 0;
}

static int stream_tostring(lua_State *L) {
  cjl_stream *s = luaL_checkudata(L, 1, CJL_STREAM);
  if (!s->stream)
    lua_pushliteral(L, "cujit.stream (freed)");
  else if (cujit_device_ordinal(cujit_stream_device(s->stream)) == CUJIT_DEVICE_CPU)
    lua_pushliteral(L, "cujit.stream on the CPU device");
  else
    lua_pushfstring(L, "cujit.stream on device %d",
                    cujit_device_ordinal(cujit_stream_device(s->stream)));
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Events
** ------------------------------------------------------------------------------------------- */

static cjl_event *to_event(lua_State *L, int idx) {
  cjl_event *ev = luaL_checkudata(L, idx, CJL_EVENT);
  if (!ev->event) luaL_argerror(L, idx, "event has been freed");
  return ev;
}

cujit_event **cjl_new_event(lua_State *L) {
  cjl_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
  ev->event = NULL;
  ev->state = cjl_state_of(L);
  luaL_setmetatable(L, CJL_EVENT);
  return &ev->event;
}

cujit_event *cjl_check_event(lua_State *L, int idx) {
  return to_event(L, idx)->event;
}

static int l_event(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  cujit_device *device = cjl_opt_device_option(L, 1); /* cuda.event{device = d} */
  cujit_event **event = cjl_new_event(L);
  cjl_check(L, e, device ? cujit_event_create_on(device, event) : cujit_event_create(e, event));
  return 1;
}

/* cuda.external_event(address): the application's CUevent as an event. */
static int l_external_event(lua_State *L) {
  cujit_engine *e = cjl_engine(L);
  void *native = check_handle(L, 1, "event");
  cujit_event **event = cjl_new_event(L);
  cjl_check(L, e, cujit_event_wrap(e, native, event));
  return 1;
}

static int event_handle(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  void *native = NULL;
  cujit_status status = cujit_event_handle(ev->event, &native);
  return push_handle(L, ev->state->engine, status, native);
}

/* e:record([stream]) -> e, so `local t0 = cuda.event():record()` reads well. */
static int event_record(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  if (cujit_event_record(ev->event, stream) != CUJIT_OK) return cjl_error(L, ev->state->engine);
  lua_settop(L, 1);
  return 1;
}

static int event_synchronize(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  if (cujit_event_synchronize(ev->event) != CUJIT_OK) return cjl_error(L, ev->state->engine);
  return 0;
}

static int event_query(lua_State *L) {
  cjl_event *ev = to_event(L, 1);
  cujit_status status = cujit_event_query(ev->event);
  if (status != CUJIT_OK && status != CUJIT_ERROR_NOT_READY) return cjl_error(L, ev->state->engine);
  lua_pushboolean(L, status == CUJIT_OK);
  return 1;
}

/* start:elapsed(stop) and cuda.elapsed(start, stop) -> milliseconds from start to stop. */
static int event_elapsed(lua_State *L) {
  cjl_event *start = to_event(L, 1), *stop = to_event(L, 2);
  float ms = 0;
  if (cujit_event_elapsed(start->event, stop->event, &ms) != CUJIT_OK)
    return cjl_error(L, start->state->engine);
  lua_pushnumber(L, ms);
  return 1;
}

static int event_free(lua_State *L) {
  cjl_event *ev = luaL_checkudata(L, 1, CJL_EVENT);
  if (ev->event && !ev->state->closed) cujit_event_free(ev->event);
  ev->event = NULL;
  return 0;
}

static int event_tostring(lua_State *L) {
  cjl_event *ev = luaL_checkudata(L, 1, CJL_EVENT);
  lua_pushstring(L, ev->event ? "cujit.event" : "cujit.event (freed)");
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Opening
** ------------------------------------------------------------------------------------------- */

static const luaL_Reg stream_meta[] = {
    {"__gc", stream_free}, {"__close", stream_free}, {"__tostring", stream_tostring}, {NULL, NULL}};

static const luaL_Reg stream_methods[] = {
    {"synchronize", stream_synchronize}, {"query", stream_query}, {"wait", stream_wait},
    {"handle", stream_handle},           {"free", stream_free},   {NULL, NULL}};

static const luaL_Reg event_meta[] = {
    {"__gc", event_free}, {"__close", event_free}, {"__tostring", event_tostring}, {NULL, NULL}};

static const luaL_Reg event_methods[] = {{"record", event_record},
                                         {"synchronize", event_synchronize},
                                         {"query", event_query},
                                         {"elapsed", event_elapsed},
                                         {"handle", event_handle},
                                         {"free", event_free},
                                         {NULL, NULL}};
static const luaL_Reg module_functions[] = {{"stream", l_stream},
                                            {"event", l_event},
                                            {"elapsed", event_elapsed},
                                            {"external_stream", l_external_stream},
                                            {"external_event", l_external_event},
                                            {NULL, NULL}};

void cjl_open_streams(lua_State *L, int module_index) {
  cjl_new_class(L, CJL_STREAM, stream_meta, stream_methods, NULL);
  cjl_new_class(L, CJL_EVENT, event_meta, event_methods, NULL);
  lua_pushvalue(L, module_index);
  luaL_setfuncs(L, module_functions, 0);
  lua_pop(L, 1);
}
