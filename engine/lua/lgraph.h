/*
** lgraph.h -- CUDA graphs from Lua: cuda.graph(function(s) ... end) captures the work issued on
** the stream it is given, and the graph replays it (g:launch, g:replay), takes new arguments for
** one kernel node (g:set_args), is updated from a new capture (g:update), and writes Graphviz.
*/
#ifndef CUJIT_LGRAPH_H
#define CUJIT_LGRAPH_H

#include "lstate.h"

#define CJL_GRAPH "cujit.graph"

/* Registers the graph class and adds cuda.graph to the module table at `module_index` (whose
** cuda.stream makes the capturing streams: open the streams first). */
void cjl_open_graphs(lua_State *L, int module_index);

#endif
