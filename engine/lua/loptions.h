/*
** loptions.h -- compile options tables from Lua ({arch = "sm_90", fast_math = true, defines =
** {...}, ...}) and the device functions (cuda.device_function) they bring in through `uses`.
*/
#ifndef CUJIT_LOPTIONS_H
#define CUJIT_LOPTIONS_H

#include "lstate.h"

#define CJL_DEVFN "cujit.device_function"

typedef struct cjl_compile_opts {
  cujit_compile_options o;
  int anchor; /* stack index of a table keeping made strings alive */
  int pieces; /* stack index of the preamble pieces (device functions, opts.preamble) */
  int npieces;
  const char *name; /* opts.name */
} cjl_compile_opts;

/* Reads the options table at `arg` (none or nil: defaults) into co, raising argument errors that
** name the option at fault (a wrong type, an unknown name, a string holding a NUL byte). Leaves
** two tables on the stack that keep the strings alive while the options are used. Returns the
** preamble made of opts.preamble and the device functions in opts.uses, or NULL when there is
** none. */
const char *cjl_parse_compile_options(lua_State *L, int arg, cjl_compile_opts *co);

/* Raises an argument error at `arg` when `given`: `option` (a translation unit's "name" or
** "signatures") is only for cuda.source and cuda.load; `what` says why it makes no sense here. */
void cjl_refuse_unit_option(lua_State *L, int arg, int given, const char *option, const char *what);

/* Registers the device function class and adds cuda.device_function to the module table. */
void cjl_open_options(lua_State *L, int module_index);

#endif
