/*
** linit.c -- the top of the cujit Lua binding: the module's entry points, luaopen_cujit (for
** `require "cujit"`) and cujit_lua_open (for a C program sharing its engine). It opens each part
** of the module in order, each on the ones opened before it; no other file calls into this one.
*/
#include "cujit_lua.h"
#include "larray.h"
#include "lcoop.h"
#include "lcopy.h"
#include "ltma.h"
#include "ldevice.h"
#include "ldlpack.h"
#include "lfile.h"
#include "lgraph.h"
#include "lhost.h"
#include "limage.h"
#include "lkernel.h"
#include "llaunch.h"
#include "llibrary.h"
#include "lmanaged.h"
#include "lnccl.h"
#include "loptions.h"
#include "lprogram.h"
#include "lstream.h"
#include "lview.h"

#define CJL_EXPORT __attribute__((visibility("default")))

LUAMOD_API CJL_EXPORT int luaopen_cujit(lua_State *L);

LUAMOD_API CJL_EXPORT int luaopen_cujit(lua_State *L) {
  luaL_checkversion(L);
  cjl_state_of(L); /* made now so it is finalized after every object (see lstate.c) */
  lua_newtable(L);
  int module = lua_gettop(L);
  lua_pushliteral(L, CUJIT_VERSION_STRING);
  lua_setfield(L, module, "_VERSION");
  cjl_open_devices(L, module);
  cjl_open_streams(L, module);
  cjl_open_hosts(L, module);
  cjl_open_arrays(L, module);
  cjl_open_copies(L, module);
  cjl_open_tensor_maps(L);
  cjl_open_nccl(L, module);
  cjl_open_options(L, module);
  cjl_open_kernels(L, module);
  cjl_open_launchers(L);
  cjl_open_programs(L, module);
  cjl_open_library(L, module);
  cjl_open_images(L, module);
  cjl_open_files(L, module);
  cjl_open_graphs(L, module);
  cjl_open_views(L);
  cjl_open_managed(L, module);
  cjl_open_dlpack(L, module);
  cjl_open_cooperative(L);
  lua_settop(L, module);
  return 1;
}

int cujit_lua_open(lua_State *L, cujit_engine *engine) {
  if (!engine) return luaL_error(L, "cujit_lua_open: the engine is NULL");
  cjl_state *st = cjl_state_of(L);
  if (st->engine && st->engine != engine)
    return luaL_error(L, "cujit_lua_open: this Lua state already has another cujit engine");
  st->engine = engine;
  st->owns_engine = 0;
  luaL_requiref(L, "cujit", luaopen_cujit, 0);
  return 1;
}
