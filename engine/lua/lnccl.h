/*
** lnccl.h -- NCCL from Lua: the cuda.nccl table and the communicator class.
*/
#ifndef CUJIT_LNCCL_H
#define CUJIT_LNCCL_H

#include "lstate.h"

/* Registers the communicator class and sets cuda.nccl (available, unique_id, write_id, read_id,
** comm, comm_rank) in the module table at `module_index`. */
void cjl_open_nccl(lua_State *L, int module_index);

#endif
