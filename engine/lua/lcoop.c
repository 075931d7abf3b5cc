/*
** lcoop.c -- cooperative launches from Lua, besides the configuration key cooperative = true that
** llaunch.c reads: k:max_cooperative_blocks(block [, shared]), the most blocks of that many
** threads (and bytes of dynamic shared memory) a cooperative launch of k may have on the current
** device, which a kernel that synchronises the grid sizes its grid by.
*/
#include "lcoop.h"
#include "lkernel.h"

static int kernel_max_cooperative_blocks(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  lua_Integer block = luaL_checkinteger(L, 2), shared = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, block >= 1 && block <= 1 << 20, 2, "a block of 1 to 1048576 threads");
  luaL_argcheck(L, shared >= 0 && shared <= 1 << 30, 3, "a byte count from 0 to 2^30");
  unsigned long long blocks = 0;
  cjl_check(
      L, k->state->engine,
      cujit_kernel_max_cooperative_blocks(k->kernel, (unsigned)block, (unsigned)shared, &blocks));
  lua_pushinteger(L, (lua_Integer)blocks);
  return 1;
}

static const luaL_Reg kernel_methods[] = {{"max_cooperative_blocks", kernel_max_cooperative_blocks},
                                          {NULL, NULL}};

void cjl_open_cooperative(lua_State *L) {
  cjl_add_methods(L, CJL_KERNEL, kernel_methods);
}
