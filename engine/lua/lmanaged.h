/*
** lmanaged.h -- managed, mapped and registered memory and sharing between processes from Lua:
** cuda.managed_array, a:prefetch, a:advise, h:mapped, cuda.register, cuda.shareable_array,
** a:ipc_handle, cuda.ipc_open, cuda.shareable_event, e:ipc_handle, cuda.ipc_open_event.
*/
#ifndef CUJIT_LMANAGED_H
#define CUJIT_LMANAGED_H

#include "lstate.h"

/* Adds the module functions to the table at `module_index` and the methods to device arrays,
** host arrays and events. */
void cjl_open_managed(lua_State *L, int module_index);

#endif
