/*
** lcujit.h -- what the files of the cujit Lua binding share: the engine of a Lua state, errors,
** and the userdata of device arrays, host arrays and streams, with the functions that check and
** push them. llibrary.c (random fills, reductions, elementwise, images) builds on these.
** The binding uses only the public C API (cujit.h), never the engine's internals.
*/
#ifndef CUJIT_LCUJIT_H
#define CUJIT_LCUJIT_H

#include <stddef.h>
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "cujit_lua.h"

/* Everything declared here is internal to the module: hidden from its exported symbols. */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* Metatable names, as luaL_newmetatable registers them. */
#define CJL_ARRAY "cujit.device_array"
#define CJL_HOST "cujit.host_array"
#define CJL_KERNEL "cujit.kernel"
#define CJL_LAUNCHER "cujit.launcher"
#define CJL_PROGRAM "cujit.program"
#define CJL_DEVFN "cujit.device_function"
#define CJL_STREAM "cujit.stream"
#define CJL_EVENT "cujit.event"

#define CJL_MAX_DIMS 3
#define CJL_MAX_ARGS 128 /* kernel parameters; the engine refuses more anyway */

/* ---------------------------------------------------------------------------------------------
** The engine of a Lua state
** ------------------------------------------------------------------------------------------- */

/* One per Lua state, kept in the registry. Every userdata that holds engine objects points here,
** so its finalizer can tell whether the engine (and with it the object) is already gone. */
typedef struct cjl_state {
  cujit_engine *engine; /* NULL until first needed (or given by cujit_lua_open) */
  int owns_engine;      /* 1: closed with the state; 0: shared from C, the C side closes it */
  int closed;           /* the owned engine was closed: every object in it is already freed */
} cjl_state;

/* The state's record, made on first call. */
cjl_state *cjl_state_of(lua_State *L);

/* The state's engine, opened on first call (raises if it cannot be opened). Opening needs no GPU;
** only the calls that use one fail without it. */
cujit_engine *cjl_engine(lua_State *L);

/* Raises a Lua error carrying the engine's last message (cujit_errmsg), which says what went
** wrong and what to do. Never returns; typed int for `return cjl_error(L, e);`. */
int cjl_error(lua_State *L, cujit_engine *engine);

/* ---------------------------------------------------------------------------------------------
** Types and shapes
** ------------------------------------------------------------------------------------------- */

/* The dtype named by the string at `idx` ("f32", ...); raises an argument error naming the valid
** ones otherwise. cjl_opt_dtype gives `def` when the argument is none or nil. */
cujit_dtype cjl_check_dtype(lua_State *L, int idx);
cujit_dtype cjl_opt_dtype(lua_State *L, int idx, cujit_dtype def);

/* A shape at `idx`: a positive integer (1-D) or a table of 1 to 3 of them. Fills shape, returns
** the number of dimensions; raises an argument error otherwise. */
int cjl_check_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS]);

/* Element size of a dtype as stored by the binding (1 for untyped bytes). */
size_t cjl_elem_size(cujit_dtype dtype);

/* ---------------------------------------------------------------------------------------------
** Device arrays (userdata CJL_ARRAY)
** ------------------------------------------------------------------------------------------- */

typedef struct cjl_array {
  cujit_buffer *buffer;   /* NULL once freed; a view reads its base's instead */
  struct cjl_array *base; /* the array a view (reshape) shares memory with, or NULL */
  cjl_state *state;
  cujit_dtype dtype; /* CUJIT_DTYPE_NONE for untyped bytes pushed from C */
  int ndim;
  int owns; /* frees the buffer when released; 0 for views and buffers pushed from C */
  size_t shape[CJL_MAX_DIMS];
  size_t size; /* elements */
} cjl_array;

/* The device array at `idx` and its buffer; raises an argument error if it is not one or if it
** has been freed. `out` may be NULL. */
cujit_buffer *cjl_check_array(lua_State *L, int idx, cjl_array **out);

/* The device array at `idx`, or NULL if the value is something else. */
cjl_array *cjl_test_array(lua_State *L, int idx);

/* The buffer behind an array (its base's for a view); NULL once freed. */
cujit_buffer *cjl_array_buffer(const cjl_array *a);

/* Pushes a new device array owning `buffer` (freed when the array is freed or collected) with
** the given dtype and shape (ndim 1..3; the element count must match the buffer's size). */
cjl_array *cjl_push_array(lua_State *L, cujit_buffer *buffer, cujit_dtype dtype, int ndim,
                          const size_t *shape);

/* Allocates a buffer on the current device and pushes it as a new device array. Raises on
** failure (no GPU, out of memory) with the engine's message. */
cjl_array *cjl_new_array(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape);

/* Frees the array's buffer now if the array owns it; idempotent. */
void cjl_release_array(cjl_array *a);

/* ---------------------------------------------------------------------------------------------
** Host arrays (userdata CJL_HOST): typed C memory indexed from 1, optionally pinned
** ------------------------------------------------------------------------------------------- */

typedef struct cjl_host {
  void *data;                /* NULL once freed; a view reads its base's instead */
  cujit_host_buffer *pinned; /* the page-locked allocation, when pinned */
  struct cjl_host *base;     /* the array a view (reshape) shares memory with, or NULL */
  cjl_state *state;
  cujit_dtype dtype;
  int ndim;
  size_t shape[CJL_MAX_DIMS];
  size_t size; /* elements */
} cjl_host;

/* Pushes a new zeroed host array (pinned through cujit_host_alloc when asked). */
cjl_host *cjl_push_host(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape, int pinned);

/* The host array at `idx` (raises if it is not one, or was freed), or NULL from cjl_test_host. */
cjl_host *cjl_check_host(lua_State *L, int idx);
cjl_host *cjl_test_host(lua_State *L, int idx);

/* The memory of a host array (its base's for a view); NULL once freed. */
void *cjl_host_data(const cjl_host *h);

/* ---------------------------------------------------------------------------------------------
** Streams (userdata CJL_STREAM)
** ------------------------------------------------------------------------------------------- */

typedef struct cjl_stream {
  cujit_stream *stream; /* NULL once freed */
  cjl_state *state;
} cjl_stream;

/* The stream at `idx`, NULL for none or nil; raises for anything else or a freed stream. */
cujit_stream *cjl_opt_stream(lua_State *L, int idx);

/* Keeps the value at `value_idx` alive until the stream at `stream_idx` is synchronized, for
** host memory an asynchronous copy still reads or writes. */
void cjl_stream_keep(lua_State *L, int stream_idx, int value_idx);

/* ---------------------------------------------------------------------------------------------
** Compile options tables ({arch = "sm_90", fast_math = true, defines = {...}, ...}), lkernel.c
** ------------------------------------------------------------------------------------------- */

typedef struct cjl_compile_opts {
  cujit_compile_options o;
  int anchor; /* stack index of a table keeping made strings alive */
  int pieces; /* stack index of the preamble pieces (device functions, opts.preamble) */
  int npieces;
  const char *name; /* opts.name */
} cjl_compile_opts;

/* Reads the options table at `arg` (none or nil: defaults) into co, raising argument errors that
** name the option at fault. Leaves two tables on the stack that keep the strings alive while
** the options are used. Returns the preamble made of opts.preamble and the device functions in
** opts.uses, or NULL when there is none. */
const char *cjl_parse_compile_options(lua_State *L, int arg, cjl_compile_opts *co);

/* ---------------------------------------------------------------------------------------------
** Opening the parts of the module; each adds its functions to the module table at `module_index`
** ------------------------------------------------------------------------------------------- */

/* Registers metatable `name` with the functions `meta`, and an __index: the table of `methods`,
** or, when `index` is given, that function with two upvalues (the methods table and the
** metatable itself, to recognise its objects without a registry lookup). */
void cjl_new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods,
                   lua_CFunction index);

void cjl_open_kernels(lua_State *L, int module_index); /* lkernel.c */
void cjl_open_arrays(lua_State *L, int module_index);  /* larray.c */
void cjl_open_library(lua_State *L, int module_index); /* llibrary.c */
void cjl_open_images(lua_State *L, int module_index);  /* limage.c */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
