/*
** lprogram.h -- programs from Lua: cuda.source, cuda.load and cuda.compile_all.
*/
#ifndef CUJIT_LPROGRAM_H
#define CUJIT_LPROGRAM_H

#include "lstate.h"

#define CJL_PROGRAM "cujit.program"

/* The program at `idx`; raises if it is not one or was freed. */
cujit_program *cjl_check_program(lua_State *L, int idx);

/* Registers the program class and adds cuda.source, cuda.load and cuda.compile_all to the module
 * table. */
void cjl_open_programs(lua_State *L, int module_index);

#endif
