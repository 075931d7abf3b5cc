/*
** lua_clock.c -- benchclock, the Lua benchmark scripts' helper module: a monotonic wall clock
** (os.clock() is CPU time, which is not what a launch costs the caller) and a raw launcher, the
** floor bench.lua measures cujit's Lua launches against in its own process.
**
**   clock.now() -> seconds, a float
**   clock.raw_launcher(image, kernel, grid, block, pattern, ...) -> launcher
**       loads `image` (a CUBIN, or PTX text such as k:ptx() returns) with cuLibraryLoadData in the
**       current context (cujit's, once it has launched), gets `kernel` as a CUfunction and prepares
**       its parameters once from `...`, one per letter of `pattern`: p a device pointer (an
**       integer, a:devptr()), i a 32-bit int, f a float.
**   launcher() -- exactly one cuLaunchKernel on the default stream with those parameters
**   clock.raw_c_loop(launcher, count) -> seconds that `count` such launches took in a C loop
**   launcher:free() -- unloads the library (also done by the garbage collector)
*/
#include "common.h"

#include <lauxlib.h>
#include <lua.h>

#include <limits.h>
#include <string.h>
#include <time.h>

int luaopen_benchclock(lua_State *L);

#define LAUNCHER "benchclock.raw_launcher"
enum { MAX_PARAMS = 32 };

typedef struct launcher {
  CUlibrary lib; /* NULL once freed */
  CUfunction fn;
  unsigned grid, block;
  union {
    CUdeviceptr p;
    int i;
    float f;
  } value[MAX_PARAMS];
  void *params[MAX_PARAMS];
} launcher;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_now(lua_State *L) {
  lua_pushnumber(L, (lua_Number)now_seconds());
  return 1;
}

static launcher *check_launcher(lua_State *L, int at) {
  launcher *l = luaL_checkudata(L, at, LAUNCHER);
  if (!l->lib) luaL_error(L, "this raw launcher was freed; make a new one with raw_launcher()");
  return l;
}

static unsigned dimension(lua_State *L, int at, const char *what) {
  lua_Integer v = luaL_checkinteger(L, at);
  luaL_argcheck(L, v >= 1 && v <= INT_MAX, at, what);
  return (unsigned)v;
}

/* The parameters, one per letter of the pattern; params[] is pointed at the values once they sit
** in the launcher's userdata, which never moves. Returns how many. */
static int read_values(lua_State *L, launcher *l, const char *pattern, int first) {
  size_t n = strlen(pattern);
  int given = lua_gettop(L) - first + 1;
  if (n > MAX_PARAMS)
    luaL_error(L, "raw_launcher: %d parameters at most, the pattern has %d", MAX_PARAMS, (int)n);
  if ((size_t)given != n)
    luaL_error(L, "raw_launcher: the pattern '%s' names %d parameters but %d values follow it",
               pattern, (int)n, given);
  for (size_t k = 0; k < n; k++) {
    int at = first + (int)k;
    if (pattern[k] == 'p')
      l->value[k].p = (CUdeviceptr)luaL_checkinteger(L, at);
    else if (pattern[k] == 'i') {
      lua_Integer v = luaL_checkinteger(L, at);
      luaL_argcheck(L, v >= INT_MIN && v <= INT_MAX, at, "does not fit a 32-bit int");
      l->value[k].i = (int)v;
    } else if (pattern[k] == 'f')
      l->value[k].f = (float)luaL_checknumber(L, at);
    else
      luaL_error(L, "raw_launcher: unknown letter '%c' in pattern '%s' (p pointer, i int, f float)",
                 pattern[k], pattern);
  }
  return (int)n;
}

static int bench_raw_launcher(lua_State *L) {
  size_t len = 0;
  const char *image = luaL_checklstring(L, 1, &len);
  const char *name = luaL_checkstring(L, 2);
  launcher v;
  memset(&v, 0, sizeof v);
  v.grid = dimension(L, 3, "grid: a block count from 1");
  v.block = dimension(L, 4, "block: a thread count from 1");
  int n = read_values(L, &v, luaL_checkstring(L, 5), 6);
  luaL_argcheck(L, len > 0, 1, "an empty image: pass a CUBIN or PTX text (k:ptx())");
  char why[512];
  CUcontext ctx = NULL;
  if (!bench_driver_open(why, sizeof why) ||
      !bench_cu_check(bench_cu.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent", why, sizeof why))
    return luaL_error(L, "raw_launcher: %s", why);
  if (!ctx)
    return luaL_error(L, "raw_launcher: no current CUDA context; launch a cujit kernel first, "
                         "so that the raw launches run in cujit's context");
  launcher *l = lua_newuserdatauv(L, sizeof *l, 0);
  *l = v;
  for (int k = 0; k < n; k++) l->params[k] = &l->value[k];
  l->lib = NULL; /* until loaded: the collector then has nothing to unload */
  luaL_setmetatable(L, LAUNCHER);
  if (!bench_cu_function(image, name, &l->lib, &l->fn, why, sizeof why))
    return luaL_error(L, "raw_launcher: %s (kernel '%s')", why, name);
  return 1;
}

static CUresult launch_once(launcher *l) {
  return bench_cu.cuLaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, NULL, l->params, NULL);
}

static int launch_failed(lua_State *L, CUresult rc) {
  char why[256];
  bench_cu_check(rc, "cuLaunchKernel", why, sizeof why);
  return luaL_error(L, "raw launcher: %s", why);
}

/* launcher(): one launch, and nothing else a floor should not pay for. */
static int launcher_call(lua_State *L) {
  CUresult rc = launch_once(check_launcher(L, 1));
  return rc == CUDA_SUCCESS ? 0 : launch_failed(L, rc);
}

static int bench_raw_c_loop(lua_State *L) {
  launcher *l = check_launcher(L, 1);
  lua_Integer count = luaL_checkinteger(L, 2);
  luaL_argcheck(L, count >= 0, 2, "a launch count from 0");
  CUresult rc = CUDA_SUCCESS;
  double t0 = now_seconds();
  for (lua_Integer k = 0; k < count; k++) {
    CUresult got = launch_once(l);
    if (got != CUDA_SUCCESS) rc = got; /* checked after the clock stops, as raw.c's loop does */
  }
  double spent = now_seconds() - t0;
  if (rc != CUDA_SUCCESS) return launch_failed(L, rc);
  lua_pushnumber(L, (lua_Number)spent);
  return 1;
}

static int launcher_free(lua_State *L) {
  launcher *l = luaL_checkudata(L, 1, LAUNCHER);
  if (l->lib) bench_cu.cuLibraryUnload(l->lib);
  l->lib = NULL;
  return 0;
}

static int launcher_tostring(lua_State *L) {
  launcher *l = luaL_checkudata(L, 1, LAUNCHER);
  lua_pushstring(L, l->lib ? "benchclock raw launcher" : "benchclock raw launcher (freed)");
  return 1;
}

int luaopen_benchclock(lua_State *L) {
  static const luaL_Reg meta[] = {{"__call", launcher_call},
                                  {"__gc", launcher_free},
                                  {"__close", launcher_free},
                                  {"__tostring", launcher_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"free", launcher_free}, {NULL, NULL}};
  static const luaL_Reg functions[] = {{"now", bench_now},
                                       {"raw_launcher", bench_raw_launcher},
                                       {"raw_c_loop", bench_raw_c_loop},
                                       {NULL, NULL}};
  luaL_newmetatable(L, LAUNCHER);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  return 1;
}
