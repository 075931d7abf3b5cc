/*
** lview.h -- views of device arrays from Lua: a:slice and a:cols (views sharing memory; a column
** slice of a matrix is a cujit.strided_view, which only copies and fills), and the globals of a
** program or kernel as device arrays (m:global, k:global).
*/
#ifndef CUJIT_LVIEW_H
#define CUJIT_LVIEW_H

#include "lstate.h"

#define CJL_STRIDED "cujit.strided_view"

/* Adds slice and cols to device arrays, global to programs and kernels, and registers the
** strided view class. */
void cjl_open_views(lua_State *L);

#endif
