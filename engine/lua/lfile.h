/*
** lfile.h -- writing a file from Lua by cujit's rule (cuda.write_file).
*/
#ifndef CUJIT_LFILE_H
#define CUJIT_LFILE_H

#include "lstate.h"

/* Adds cuda.write_file to the module table at `module_index`. */
void cjl_open_files(lua_State *L, int module_index);

#endif
