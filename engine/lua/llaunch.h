/*
** llaunch.h -- launching kernels from Lua: k[{grid, block}](...) and k:forall(n)(...).
*/
#ifndef CUJIT_LLAUNCH_H
#define CUJIT_LLAUNCH_H

#include "lstate.h"

#define CJL_LAUNCHER "cujit.launcher"

/* Registers the launcher class and makes kernels launchable: indexing a kernel with a launch
** configuration, and the k:forall method. The kernel class must be registered first. */
void cjl_open_launchers(lua_State *L);

#endif
