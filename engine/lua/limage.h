/*
** limage.h -- PNG images from Lua (cuda.image.read, cuda.image.write).
*/
#ifndef CUJIT_LIMAGE_H
#define CUJIT_LIMAGE_H

#include "lstate.h"

/* Adds the cuda.image table to the module table at `module_index`. */
void cjl_open_images(lua_State *L, int module_index);

#endif
