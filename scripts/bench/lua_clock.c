/*
** lua_clock.c -- benchclock, a Lua module with one function: now() returns seconds from a monotonic
** wall clock as a float. The Lua benchmark scripts need it because os.clock() is CPU time, which is
** not what a launch costs the caller.
*/
#include <lauxlib.h>
#include <lua.h>

#include <time.h>

int luaopen_benchclock(lua_State *L);

static int bench_now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

int luaopen_benchclock(lua_State *L) {
  static const luaL_Reg functions[] = {{"now", bench_now}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
