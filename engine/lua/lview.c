/*
** lview.c -- views of device arrays from Lua, over cujit_buffer_view: a:slice(first, last)
*(1-based,
** inclusive, as string.sub) of a vector's elements or a matrix's rows, and a:cols(first, last) of
** a matrix's columns. A view shares its array's memory and keeps the array alive; freeing the
** array leaves the view lost (every use then says so). Columns that are not contiguous give a
** cujit.strided_view, which a kernel cannot take (it needs contiguous memory) but which copies
** (v:copy() gives a contiguous array, v:copy_to_host(), v:copy_from(x)) and fills row by row.
** Also m:global(name) and k:global(name): a program's __device__ / __constant__ variable.
*/
#include "larray.h"
#include "lconv.h"
#include "lkernel.h"
#include "lprogram.h"
#include "lview.h"

#include <string.h>

/* A column slice: `rows` rows of `cols` elements, `stride` elements apart, in `span` (a view from
** the first element to the last). User value 1: the array viewed. */
typedef struct cjl_strided {
  cujit_buffer *span; /* NULL once freed */
  cjl_state *state;
  cujit_dtype dtype;
  size_t rows, cols, stride;
} cjl_strided;

/* first..last (1-based, inclusive; negative counts from the end, as string.sub) within 1..n. */
static void check_range(lua_State *L, int idx, size_t n, size_t *first, size_t *count) {
  lua_Integer f = luaL_checkinteger(L, idx);
  lua_Integer l = luaL_optinteger(L, idx + 1, (lua_Integer)n);
  if (f < 0) f += (lua_Integer)n + 1;
  if (l < 0) l += (lua_Integer)n + 1;
  if (f < 1 || l > (lua_Integer)n || f > l)
    luaL_error(L, /* %I: the values whole, never cut to an int (2^32 + 1 is not 1) */
               "slice %I..%I is outside 1..%I or empty: give first <= last within the "
               "dimension (negative counts from the end)",
               luaL_checkinteger(L, idx), luaL_optinteger(L, idx + 1, (lua_Integer)n),
               (lua_Integer)n);
  *first = (size_t)(f - 1);
  *count = (size_t)(l - f + 1);
}

/* A device array viewing `count` elements of `a` (at 1) from element `offset`, shaped `shape`. */
static void push_view(lua_State *L, cjl_array *a, size_t offset, size_t count, int ndim,
                      const size_t *shape) {
  size_t esize = cjl_elem_size(a->dtype);
  cujit_buffer *view = NULL;
  cjl_check_array_status(
      L, a, cujit_buffer_view(cjl_array_buffer(a), offset * esize, count * esize, a->dtype, &view));
  cjl_wrap_buffer(L, view, a->dtype, ndim, shape, 1, 1);
}

/* a:slice(first [, last]) -> a view of elements (1-D) or rows (2-D, 3-D). */
static int array_slice(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  size_t first, count, row = a->size / a->shape[0];
  check_range(L, 2, a->shape[0], &first, &count);
  size_t shape[CJL_MAX_DIMS];
  memcpy(shape, a->shape, sizeof shape);
  shape[0] = count;
  push_view(L, a, first * row, count * row, a->ndim, shape);
  return 1;
}

/* a:cols(first [, last]) -> columns of a matrix: a view when contiguous (one row, or every
** column), else a strided view. */
static int array_cols(lua_State *L) {
  cjl_array *a = cjl_live_array(L, 1);
  if (a->ndim != 2)
    return luaL_error(L, "a:cols needs a 2-D array, this one has %d dimension%s (use a:slice)",
                      a->ndim, a->ndim == 1 ? "" : "s");
  size_t rows = a->shape[0], width = a->shape[1], first, count;
  check_range(L, 2, width, &first, &count);
  size_t shape[CJL_MAX_DIMS] = {rows, count, 1};
  if (rows == 1 || count == width) {
    push_view(L, a, first, rows * count, 2, shape);
    return 1;
  }
  cjl_strided *v = lua_newuserdatauv(L, sizeof *v, 1);
  memset(v, 0, sizeof *v);
  v->state = a->state;
  v->dtype = a->dtype;
  v->rows = rows, v->cols = count, v->stride = width;
  luaL_setmetatable(L, CJL_STRIDED);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  size_t esize = cjl_elem_size(a->dtype), span = ((rows - 1) * width + count) * esize;
  cjl_check_array_status(
      L, a, cujit_buffer_view(cjl_array_buffer(a), first * esize, span, a->dtype, &v->span));
  return 1;
}

/* --- strided views ---------------------------------------------------------------------------- */

static cjl_strided *check_strided(lua_State *L, int idx) {
  cjl_strided *v = luaL_checkudata(L, idx, CJL_STRIDED);
  if (!v->span) luaL_argerror(L, idx, "the strided view has been freed");
  return v;
}

/* Row by row between the strided view and a contiguous array of its shape. */
static void copy_rows(lua_State *L, cjl_strided *v, cujit_buffer *contiguous, int into_view) {
  size_t esize = cjl_elem_size(v->dtype), row = v->cols * esize;
  for (size_t r = 0; r < v->rows; r++) {
    size_t at_view = r * v->stride * esize, at_array = r * row;
    cujit_status st = into_view
                          ? cujit_memcpy_dtod(v->span, at_view, contiguous, at_array, row, NULL)
                          : cujit_memcpy_dtod(contiguous, at_array, v->span, at_view, row, NULL);
    if (st != CUJIT_OK) cjl_error(L, v->state->engine);
  }
}

/* v:copy() -> a new contiguous device array with the view's elements. */
static int strided_copy(lua_State *L) {
  cjl_strided *v = check_strided(L, 1);
  size_t shape[CJL_MAX_DIMS] = {v->rows, v->cols, 1};
  cjl_array *a = cjl_new_array(L, v->dtype, 2, shape);
  copy_rows(L, v, a->buffer, 0);
  return 1;
}

/* Calls method `name` of the contiguous array at the top with the arguments from 2 on. */
static int call_on_copy(lua_State *L, const char *name) {
  int nargs = lua_gettop(L) - 2;
  lua_getfield(L, -1, name);
  lua_insert(L, 2);
  lua_insert(L, 3); /* method, array, args... */
  lua_call(L, nargs + 1, LUA_MULTRET);
  return lua_gettop(L) - 1;
}

static int strided_copy_to_host(lua_State *L) {
  strided_copy(L);
  return call_on_copy(L, "copy_to_host");
}

static int strided_totable(lua_State *L) {
  strided_copy(L);
  return call_on_copy(L, "totable");
}

/* v:copy_from(x) and v:fill(value): through a contiguous array, then row by row into the view. */
static int through_copy(lua_State *L, const char *name) {
  cjl_strided *v = check_strided(L, 1);
  size_t shape[CJL_MAX_DIMS] = {v->rows, v->cols, 1};
  lua_settop(L, 2);
  cjl_array *a = cjl_new_array(L, v->dtype, 2, shape);
  lua_getfield(L, -1, name);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 0);
  copy_rows(L, v, a->buffer, 1);
  cjl_release_array(a);
  lua_settop(L, 1);
  return 1;
}

static int strided_copy_from(lua_State *L) {
  return through_copy(L, "copy_from");
}

static int strided_fill(lua_State *L) {
  return through_copy(L, "fill");
}

static int strided_free(lua_State *L) {
  cjl_strided *v = luaL_checkudata(L, 1, CJL_STRIDED);
  if (v->span && !v->state->closed) cujit_buffer_free(v->span);
  v->span = NULL;
  return 0;
}

static int strided_index(lua_State *L) {
  cjl_strided *v = luaL_checkudata(L, 1, CJL_STRIDED);
  const char *key = lua_tostring(L, 2);
  if (lua_type(L, 2) == LUA_TSTRING && lua_getfield(L, lua_upvalueindex(1), key) != LUA_TNIL)
    return 1;
  size_t shape[2] = {v->rows, v->cols};
  if (key && strcmp(key, "shape") == 0)
    cjl_push_shape(L, 2, shape);
  else if (key && strcmp(key, "dtype") == 0)
    lua_pushstring(L, cujit_dtype_name(v->dtype));
  else if (key && strcmp(key, "size") == 0)
    lua_pushinteger(L, (lua_Integer)(v->rows * v->cols));
  else if (key && strcmp(key, "ndim") == 0)
    lua_pushinteger(L, 2);
  else if (key && strcmp(key, "contiguous") == 0)
    lua_pushboolean(L, 0);
  else
    return luaL_error(L,
                      "a strided view (columns of a matrix) has no '%s': kernels, reductions "
                      "and elementwise kernels need contiguous memory; v:copy() makes a "
                      "contiguous array",
                      key ? key : luaL_typename(L, 2));
  return 1;
}

static int strided_tostring(lua_State *L) {
  cjl_strided *v = luaL_checkudata(L, 1, CJL_STRIDED);
  size_t shape[2] = {v->rows, v->cols};
  char type[80];
  cjl_format_type(type, sizeof type, v->dtype, 2, shape);
  lua_pushfstring(L, "cujit.strided_view %s (columns, row stride %d)%s", type, (int)v->stride,
                  v->span ? "" : " (freed)");
  return 1;
}

/* --- globals ---------------------------------------------------------------------------------- */

/* The global `name` of `program` as a device array keeping the value at 1 alive; dtype and shape
** from the declaration, or from the arguments at 3 (dtype) and 4 (shape). */
static int push_global(lua_State *L, cujit_program *program) {
  const char *name = cjl_check_text(L, 2, "the variable name");
  cujit_engine *e = cjl_engine(L);
  cujit_buffer *global = NULL;
  cujit_dtype dtype;
  int ndim;
  size_t shape[3];
  cjl_check(L, e, cujit_program_global(program, name, &global, &dtype, &ndim, shape));
  if (lua_isnoneornil(L, 3)) {
    cjl_wrap_buffer(L, global, dtype, ndim, shape, 1, 1);
    return 1;
  }
  size_t bytes = cujit_buffer_size(global);
  cujit_dtype want = cjl_check_dtype(L, 3);
  size_t want_shape[CJL_MAX_DIMS] = {bytes / cjl_elem_size(want), 1, 1};
  int want_ndim = lua_isnoneornil(L, 4) ? 1 : cjl_check_shape(L, 4, want_shape);
  size_t want_bytes = cjl_shape_size(want_ndim, want_shape) * cjl_elem_size(want);
  cujit_buffer *view = NULL;
  cujit_status st = want_bytes <= bytes ? cujit_buffer_view(global, 0, want_bytes, want, &view)
                                        : CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_buffer_free(global);
  if (st != CUJIT_OK && want_bytes > bytes)
    return luaL_error(L,
                      "the global '%s' holds %d bytes, fewer than the %d bytes of the dtype and "
                      "shape given",
                      name, (int)bytes, (int)want_bytes);
  cjl_check(L, e, st);
  cjl_wrap_buffer(L, view, want, want_ndim, want_shape, 1, 1);
  return 1;
}

/* m:global(name [, dtype [, shape]]) -> device array over the variable. */
static int program_global(lua_State *L) {
  return push_global(L, cjl_check_program(L, 1));
}

/* k:global(name [, dtype [, shape]]): the same for a kernel's program (cuda.jit's preamble). */
static int kernel_global(lua_State *L) {
  cjl_kernel *k = cjl_check_kernel(L, 1);
  const cujit_program *p = cujit_kernel_program(k->kernel);
  if (!p)
    return luaL_error(L,
                      "kernel '%s' is generic: specialise it first (k:specialize{...}), "
                      "each specialisation has its own globals",
                      cjl_kernel_name(k));
  return push_global(L, (cujit_program *)p);
}

static const luaL_Reg array_methods[] = {
    {"slice", array_slice}, {"cols", array_cols}, {NULL, NULL}};
static const luaL_Reg program_methods[] = {{"global", program_global}, {NULL, NULL}};
static const luaL_Reg kernel_methods[] = {{"global", kernel_global}, {NULL, NULL}};
static const luaL_Reg strided_meta[] = {{"__gc", strided_free},
                                        {"__close", strided_free},
                                        {"__tostring", strided_tostring},
                                        {NULL, NULL}};
static const luaL_Reg strided_methods[] = {{"copy", strided_copy},
                                           {"copy_to_host", strided_copy_to_host},
                                           {"totable", strided_totable},
                                           {"copy_from", strided_copy_from},
                                           {"fill", strided_fill},
                                           {"free", strided_free},
                                           {NULL, NULL}};

void cjl_open_views(lua_State *L) {
  cjl_new_class(L, CJL_STRIDED, strided_meta, strided_methods, strided_index);
  /* What a type error elsewhere says of it (luaL_typeerror reads __name): why it is refused. */
  luaL_getmetatable(L, CJL_STRIDED);
  lua_pushliteral(L, "cujit.strided_view (columns of a matrix, not contiguous: v:copy() makes a "
                     "contiguous array)");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  cjl_add_methods(L, CJL_ARRAY, array_methods);
  cjl_add_methods(L, CJL_PROGRAM, program_methods);
  cjl_add_methods(L, CJL_KERNEL, kernel_methods);
}
