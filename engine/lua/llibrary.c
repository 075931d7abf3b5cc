/*
** llibrary.c -- the Lua side of cujit's device library: random fills, reductions, the elementwise
** builder and PNG images. (Filled in with the workloads; until then it registers nothing.)
*/
#include "lcujit.h"

void cjl_open_library(lua_State *L, int module_index) {
  (void)L;
  (void)module_index;
}
