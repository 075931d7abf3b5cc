/*
** lconv.h -- conversions between Lua values and typed elements, shared by host arrays, device
** arrays and kernel arguments: range and exactness checks by dtype, half precision, and nested
** Lua tables to and from row-major memory.
*/
#ifndef CUJIT_LCONV_H
#define CUJIT_LCONV_H

#include "lstate.h"

/* A value converted for a dtype: i for signed integers, u for unsigned ones, f for floats. */
typedef union cjl_scalar {
  int64_t i;
  uint64_t u;
  double f;
} cjl_scalar;

/* Element size of a dtype as stored by the binding (1 for untyped bytes). */
size_t cjl_elem_size(cujit_dtype dtype);

int cjl_is_float(cujit_dtype dtype);    /* f16 f32 f64 */
int cjl_is_unsigned(cujit_dtype dtype); /* u8 .. u64 (and untyped bytes, stored as u8) */

/* Converts the Lua value at `idx` for `dtype`: it must be a number; for an integer dtype it must
** have an exact integer value in range; for f16/f32 a finite value must not overflow. Returns NULL
** on success, else a reason ("number has no integer representation", "value 300 out of range for
** u8 (0 to 255)") pushed on the stack for the caller's error message. */
const char *cjl_to_scalar(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out);

/* cjl_to_scalar for a value the caller knows is a number (lua_type is LUA_TNUMBER). */
const char *cjl_number_to_scalar(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out);

/* Converts the Lua value at `idx` for a C bool: true or false, or the numbers 0 and 1 (any other
** byte would be an invalid bool on the device). Returns NULL and sets *out, else a reason pushed on
** the stack. */
const char *cjl_to_bool(lua_State *L, int idx, int *out);

/* Stores a converted value as one element of `dtype` at dst. */
void cjl_store(cujit_dtype dtype, cjl_scalar value, void *dst);

/* Pushes the element of `dtype` at src as a Lua number (integers as integers; u64 values above
** math.maxinteger wrap, as Lua's own unsigned conventions do). */
void cjl_push_element(lua_State *L, cujit_dtype dtype, const void *src);

/* IEEE half precision, rounding to nearest even; NaN and infinities kept. */
uint16_t cjl_f16_from_double(double value);
double cjl_f16_to_double(uint16_t bits);
/* bfloat16 (8 exponent bits, 7 mantissa bits), the same way. */
uint16_t cjl_bf16_from_double(double value);
double cjl_bf16_to_double(uint16_t bits);

/* The shape of a Lua table of numbers nested up to 3 deep ({1,2}, {{1,2},{3,4}}): fills shape
** and *ndim from the first element of each level. Returns NULL, or a reason pushed on the stack
** (an empty table, a first element that is neither a number nor a table, nesting too deep).
** Raggedness is found by cjl_table_read. */
const char *cjl_table_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS], int *ndim);

/* Reads the table at `idx`, of that shape, into dst as `dtype`. Returns NULL, or a reason pushed
** on the stack that names the element at fault ("element [2][3]: number expected, got string",
** a hole, a ragged row, a value out of range). */
const char *cjl_table_read(lua_State *L, int idx, cujit_dtype dtype, int ndim, const size_t *shape,
                           void *dst);

/* Pushes a Lua table (nested by shape) holding the elements at src. */
void cjl_push_table(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape,
                    const void *src);

/* Shapes: the element count; a shape copied into an object's fields (unused dimensions 1); a
** shape pushed as a Lua table. */
size_t cjl_shape_size(int ndim, const size_t *shape);
void cjl_set_shape(int *ndim_out, size_t *shape_out, size_t *size_out, int ndim,
                   const size_t *shape);
void cjl_push_shape(lua_State *L, int ndim, const size_t *shape);

/* The shape given to reshape: a table, or 1 to 3 integers from argument `first` on; raises unless
** it holds exactly `have` elements. Returns the number of dimensions. */
int cjl_reshape_args(lua_State *L, int first, size_t have, size_t *shape);

/* A scratch block of `bytes` owned by Lua (pushed; collected even if an error interrupts its
** use). */
void *cjl_scratch(lua_State *L, size_t bytes);

/* Reads the Lua table at `idx` as `dtype` into a new scratch block (pushed); fills ndim and shape.
** Raises an argument error at `idx` naming the element at fault. */
void *cjl_table_to_scratch(lua_State *L, int idx, cujit_dtype dtype, int *ndim, size_t *shape);

/* Writes "f32[4,5]" into buf. */
void cjl_format_type(char *buf, size_t len, cujit_dtype dtype, int ndim, const size_t *shape);

#endif
