/*
** lconv.c -- conversions between Lua values and typed elements: range and exactness checks by
** dtype, half precision and bfloat16 in C, nested Lua tables to and from row-major memory, and
** shapes.
*/
#include "lconv.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int cjl_is_float(cujit_dtype dtype) {
  return dtype == CUJIT_F16 || dtype == CUJIT_BF16 || dtype == CUJIT_F32 || dtype == CUJIT_F64;
}

int cjl_is_unsigned(cujit_dtype dtype) {
  return dtype == CUJIT_U8 || dtype == CUJIT_U16 || dtype == CUJIT_U32 || dtype == CUJIT_U64 ||
         dtype == CUJIT_DTYPE_NONE;
}

size_t cjl_elem_size(cujit_dtype dtype) {
  return dtype == CUJIT_DTYPE_NONE ? 1 : cujit_dtype_size(dtype);
}

static void int_limits(cujit_dtype dtype, int64_t *min, uint64_t *max) {
  switch (dtype) {
  case CUJIT_I8:
    *min = INT8_MIN, *max = INT8_MAX;
    break;
  case CUJIT_I16:
    *min = INT16_MIN, *max = INT16_MAX;
    break;
  case CUJIT_I32:
    *min = INT32_MIN, *max = INT32_MAX;
    break;
  case CUJIT_I64:
    *min = INT64_MIN, *max = INT64_MAX;
    break;
  case CUJIT_U16:
    *min = 0, *max = UINT16_MAX;
    break;
  case CUJIT_U32:
    *min = 0, *max = UINT32_MAX;
    break;
  case CUJIT_U64:
    *min = 0, *max = UINT64_MAX;
    break;
  default:
    *min = 0, *max = UINT8_MAX;
    break; /* u8 and untyped bytes */
  }
}

static const char *dtype_label(cujit_dtype dtype) {
  return dtype == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(dtype);
}

static const char *out_of_range(lua_State *L, int idx, cujit_dtype dtype) {
  int64_t min;
  uint64_t max;
  char range[64];
  int_limits(dtype, &min, &max);
  snprintf(range, sizeof range, "%" PRId64 " to %" PRIu64, min, max);
  const char *value = luaL_tolstring(L, idx, NULL);
  return lua_pushfstring(L, "value %s out of range for %s (%s)", value, dtype_label(dtype), range);
}

static const char *to_integer(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out) {
  int64_t min;
  uint64_t max;
  int_limits(dtype, &min, &max);
  int exact = 0; /* an integer, or a float with an integer value in lua_Integer's range */
  lua_Integer v = lua_tointegerx(L, idx, &exact);
  if (exact) {
    if (v < min || (v > 0 && (uint64_t)v > max)) return out_of_range(L, idx, dtype);
    if (cjl_is_unsigned(dtype))
      out->u = (uint64_t)v;
    else
      out->i = v;
    return NULL;
  }
  double d = lua_tonumber(L, idx); /* past lua_Integer's range, or not integral */
  if (isinf(d) || d != floor(d))   /* NaN fails d == floor(d) */
    return lua_pushstring(L, "number has no integer representation");
  /* Integral but past lua_Integer's range (lua_tointegerx took every value inside it): only an
  ** unsigned type of 64 bits may hold it, up to 2^64. */
  if (!cjl_is_unsigned(dtype) || d < 0 || d >= 18446744073709551616.0 || (uint64_t)d > max)
    return out_of_range(L, idx, dtype);
  out->u = (uint64_t)d;
  return NULL;
}

/* The smallest magnitude that rounds to infinity in each float type. One rule with a scalar
** argument (launch.c's pack_float): round to the nearest value, refuse only what would become
** infinity; so a[1] = 65510 on an f16 array stores 65504, as a __half argument of 65510 passes.
** bf16: half an ulp past its largest, 2^128 - 2^120. */
static double overflow_threshold(cujit_dtype dtype) {
  if (dtype == CUJIT_F16) return 65520.0;
  if (dtype == CUJIT_BF16) return ldexp(511.0, 119);
  if (dtype == CUJIT_F32) return (double)FLT_MAX + ldexp(1.0, 103);
  return INFINITY;
}

static const char *to_float(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out) {
  double d = lua_tonumber(L, idx);
  if (isfinite(d) && fabs(d) >= overflow_threshold(dtype)) {
    const char *value = luaL_tolstring(L, idx, NULL);
    return lua_pushfstring(L, "value %s out of range for %s (it would become infinity)", value,
                           cujit_dtype_name(dtype));
  }
  out->f = d;
  return NULL;
}

const char *cjl_number_to_scalar(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out) {
  return cjl_is_float(dtype) ? to_float(L, idx, dtype, out) : to_integer(L, idx, dtype, out);
}

const char *cjl_to_scalar(lua_State *L, int idx, cujit_dtype dtype, cjl_scalar *out) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    return lua_pushfstring(L, "number expected, got %s", luaL_typename(L, idx));
  return cjl_number_to_scalar(L, idx, dtype, out);
}

const char *cjl_to_bool(lua_State *L, int idx, int *out) {
  if (lua_type(L, idx) == LUA_TBOOLEAN) {
    *out = lua_toboolean(L, idx);
    return NULL;
  }
  if (lua_type(L, idx) == LUA_TNUMBER && (lua_tonumber(L, idx) == 0 || lua_tonumber(L, idx) == 1)) {
    *out = lua_tonumber(L, idx) == 1;
    return NULL;
  }
  const char *got =
      lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx);
  return lua_pushfstring(L, "true or false expected (or 0 or 1), got %s", got);
}

/* Stores `v` as a value of type T at dst; memcpy keeps unaligned destinations safe. */
#define STORE(T, v)                                                                                \
  do {                                                                                             \
    T x_ = (T)(v);                                                                                 \
    memcpy(dst, &x_, sizeof x_);                                                                   \
  } while (0)

void cjl_store(cujit_dtype dtype, cjl_scalar value, void *dst) {
  switch (dtype) {
  case CUJIT_F16:
    STORE(uint16_t, cjl_f16_from_double(value.f));
    break;
  case CUJIT_BF16:
    STORE(uint16_t, cjl_bf16_from_double(value.f));
    break;
  case CUJIT_F32:
    STORE(float, value.f);
    break;
  case CUJIT_F64:
    STORE(double, value.f);
    break;
  case CUJIT_I8:
    STORE(int8_t, value.i);
    break;
  case CUJIT_I16:
    STORE(int16_t, value.i);
    break;
  case CUJIT_I32:
    STORE(int32_t, value.i);
    break;
  case CUJIT_I64:
    STORE(int64_t, value.i);
    break;
  case CUJIT_U16:
    STORE(uint16_t, value.u);
    break;
  case CUJIT_U32:
    STORE(uint32_t, value.u);
    break;
  case CUJIT_U64:
    STORE(uint64_t, value.u);
    break;
  default:
    STORE(uint8_t, value.u);
    break;
  }
}

#define LOAD(T, var)                                                                               \
  T var;                                                                                           \
  memcpy(&var, src, sizeof var)

void cjl_push_element(lua_State *L, cujit_dtype dtype, const void *src) {
  switch (dtype) {
  case CUJIT_F16: {
    LOAD(uint16_t, x);
    lua_pushnumber(L, cjl_f16_to_double(x));
    break;
  }
  case CUJIT_BF16: {
    LOAD(uint16_t, x);
    lua_pushnumber(L, cjl_bf16_to_double(x));
    break;
  }
  case CUJIT_F32: {
    LOAD(float, x);
    lua_pushnumber(L, x);
    break;
  }
  case CUJIT_F64: {
    LOAD(double, x);
    lua_pushnumber(L, x);
    break;
  }
  case CUJIT_I8: {
    LOAD(int8_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_I16: {
    LOAD(int16_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_I32: {
    LOAD(int32_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_I64: {
    LOAD(int64_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_U16: {
    LOAD(uint16_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_U32: {
    LOAD(uint32_t, x);
    lua_pushinteger(L, x);
    break;
  }
  case CUJIT_U64: {
    LOAD(uint64_t, x);
    lua_pushinteger(L, (lua_Integer)x);
    break;
  }
  default: {
    LOAD(uint8_t, x);
    lua_pushinteger(L, x);
    break;
  }
  }
}

/* --- half precision and bfloat16 ------------------------------------------------------------ */

/* A 16-bit float of `exp_bits` exponent bits (5: IEEE half, 8: bfloat16) and 15 - exp_bits
** mantissa bits, rounding to nearest even; NaN stays a quiet NaN, infinities are kept, and what
** rounds past the largest finite value becomes infinity. */
static uint16_t narrow_from_double(double value, int exp_bits) {
  int man_bits = 15 - exp_bits, bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
  uint16_t sign = signbit(value) ? 0x8000 : 0, inf = (uint16_t)(top << man_bits);
  double a = fabs(value);
  if (isnan(value)) return sign | inf | (uint16_t)(1 << (man_bits - 1));
  if (isinf(value)) return sign | inf;
  if (a < ldexp(1.0, 1 - bias)) {
    /* Subnormal: a multiple of 2^(1 - bias - man_bits); rint rounds to nearest even, and
    ** 2^man_bits becomes the smallest normal number, whose bits are exactly that. */
    return sign | (uint16_t)rint(ldexp(a, bias - 1 + man_bits));
  }
  int e;
  double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exponent = e - 1 + bias;
  double mantissa = rint(ldexp(m * 2.0 - 1.0, man_bits));
  if (mantissa >= ldexp(1.0, man_bits)) mantissa = 0.0, exponent++;
  if (exponent >= top) return sign | inf;
  return sign | (uint16_t)(exponent << man_bits) | (uint16_t)mantissa;
}

static double widen_to_double(uint16_t bits, int exp_bits) {
  int man_bits = 15 - exp_bits, bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
  int exponent = (bits >> man_bits) & top;
  int mantissa = bits & ((1 << man_bits) - 1);
  double v;
  if (exponent == 0)
    v = ldexp(mantissa, 1 - bias - man_bits);
  else if (exponent == top)
    v = mantissa ? NAN : INFINITY;
  else
    v = ldexp(mantissa + (1 << man_bits), exponent - bias - man_bits);
  return (bits & 0x8000) ? -v : v;
}

uint16_t cjl_f16_from_double(double value) {
  return narrow_from_double(value, 5);
}
double cjl_f16_to_double(uint16_t bits) {
  return widen_to_double(bits, 5);
}
uint16_t cjl_bf16_from_double(double value) {
  return narrow_from_double(value, 8);
}
double cjl_bf16_to_double(uint16_t bits) {
  return widen_to_double(bits, 8);
}

/* --- Lua tables ---------------------------------------------------------------------------- */

static const char *element_error(lua_State *L, const size_t *path, int depth, const char *what) {
  char where[96];
  size_t used = 0;
  for (int i = 0; i < depth && used < sizeof where; i++)
    used += (size_t)snprintf(where + used, sizeof where - used, "[%zu]", path[i]);
  return lua_pushfstring(L, "element %s: %s", where, what);
}

const char *cjl_table_shape(lua_State *L, int idx, size_t shape[CJL_MAX_DIMS], int *ndim) {
  int n = 0;
  lua_pushvalue(L, idx);
  for (;;) {
    size_t len = lua_rawlen(L, -1);
    if (len == 0)
      return lua_pushstring(L, n == 0 ? "empty table (an array needs at least one element)"
                                      : "empty row (an array needs at least one element)");
    shape[n++] = len;
    int type = lua_rawgeti(L, -1, 1);
    if (type == LUA_TNUMBER) break;
    if (type != LUA_TTABLE) {
      static const size_t firsts[CJL_MAX_DIMS] = {1, 1, 1};
      const char *what = lua_pushfstring(L, "number expected, got %s", luaL_typename(L, -1));
      return element_error(L, firsts, n, what);
    }
    if (n == CJL_MAX_DIMS)
      return lua_pushstring(L, "tables nest at most 3 deep (arrays have 1 to 3 dimensions)");
    lua_remove(L, -2);
  }
  lua_pop(L, 2);
  for (int i = n; i < CJL_MAX_DIMS; i++) shape[i] = 1;
  *ndim = n;
  return NULL;
}

typedef struct table_reader {
  lua_State *L;
  cujit_dtype dtype;
  int ndim;
  const size_t *shape;
  size_t path[CJL_MAX_DIMS];
  char *dst;
  size_t elem;
} table_reader;

/* Reads the table on top of the stack at nesting `level`; returns a reason on failure. */
static const char *read_level(table_reader *r, int level) {
  if (level < 0 || level >= CJL_MAX_DIMS) return "a table nested deeper than 3 dimensions";
  lua_State *L = r->L;
  int t = lua_gettop(L);
  size_t n = r->shape[level];
  if (lua_rawlen(L, t) != n) {
    const char *what = lua_pushfstring(L, "row of %d elements where %d were expected (ragged rows)",
                                       (int)lua_rawlen(L, t), (int)n);
    return element_error(L, r->path, level, what);
  }
  for (size_t i = 0; i < n; i++) {
    r->path[level] = i + 1;
    lua_rawgeti(L, t, (lua_Integer)i + 1);
    /* ndim <= CJL_MAX_DIMS; the second test only tells the compiler the recursion is bounded. */
    if (level + 1 < r->ndim && level + 1 < CJL_MAX_DIMS) {
      if (!lua_istable(L, -1)) {
        const char *what =
            lua_pushfstring(L, "row (a table) expected, got %s", luaL_typename(L, -1));
        return element_error(L, r->path, level + 1, what);
      }
      const char *why = read_level(r, level + 1);
      if (why) return why;
    } else {
      cjl_scalar v;
      const char *why = cjl_to_scalar(L, -1, r->dtype, &v);
      if (why) return element_error(L, r->path, level + 1, why);
      cjl_store(r->dtype, v, r->dst);
      r->dst += r->elem;
    }
    lua_pop(L, 1);
  }
  return NULL;
}

const char *cjl_table_read(lua_State *L, int idx, cujit_dtype dtype, int ndim, const size_t *shape,
                           void *dst) {
  table_reader r = {L, dtype, ndim, shape, {0, 0, 0}, dst, cjl_elem_size(dtype)};
  luaL_checkstack(L, 2 * CJL_MAX_DIMS + 4, "cujit: reading a table");
  lua_pushvalue(L, idx);
  const char *why = read_level(&r, 0);
  if (!why) lua_pop(L, 1);
  return why;
}

static const char *push_level(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape,
                              int level, const char *src) {
  size_t n = shape[level], elem = cjl_elem_size(dtype);
  lua_createtable(L, n > INT32_MAX ? 0 : (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    if (level + 1 < ndim)
      src = push_level(L, dtype, ndim, shape, level + 1, src);
    else
      cjl_push_element(L, dtype, src), src += elem;
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return src;
}

void cjl_push_table(lua_State *L, cujit_dtype dtype, int ndim, const size_t *shape,
                    const void *src) {
  luaL_checkstack(L, CJL_MAX_DIMS + 2, "cujit: building a table");
  push_level(L, dtype, ndim, shape, 0, src);
}

void cjl_format_type(char *buf, size_t len, cujit_dtype dtype, int ndim, const size_t *shape) {
  size_t used = (size_t)snprintf(buf, len, "%s[", dtype_label(dtype));
  for (int i = 0; i < ndim && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, i ? ",%zu" : "%zu", shape[i]);
  if (used < len) snprintf(buf + used, len - used, "]");
}

/* --- shapes and scratch blocks ----------------------------------------------------------- */

size_t cjl_shape_size(int ndim, const size_t *shape) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

void cjl_set_shape(int *ndim_out, size_t *shape_out, size_t *size_out, int ndim,
                   const size_t *shape) {
  *ndim_out = ndim;
  for (int i = 0; i < CJL_MAX_DIMS; i++) shape_out[i] = i < ndim ? shape[i] : 1;
  *size_out = cjl_shape_size(ndim, shape);
}

void cjl_push_shape(lua_State *L, int ndim, const size_t *shape) {
  lua_createtable(L, ndim, 0);
  for (int i = 0; i < ndim; i++)
    lua_pushinteger(L, (lua_Integer)shape[i]), lua_rawseti(L, -2, i + 1);
}

/* A scratch block of `bytes` owned by Lua (collected even if an error interrupts its use). */
void *cjl_scratch(lua_State *L, size_t bytes) {
  return lua_newuserdatauv(L, bytes ? bytes : 1, 0);
}

/* Reads a Lua table at `idx` as `dtype` into a new scratch block (pushed); fills ndim/shape. */
void *cjl_table_to_scratch(lua_State *L, int idx, cujit_dtype dtype, int *ndim, size_t *shape) {
  idx = lua_absindex(L, idx);
  const char *why = cjl_table_shape(L, idx, shape, ndim);
  if (why) luaL_argerror(L, idx, why);
  void *data = cjl_scratch(L, cjl_shape_size(*ndim, shape) * cjl_elem_size(dtype));
  why = cjl_table_read(L, idx, dtype, *ndim, shape, data);
  if (why) luaL_argerror(L, idx, why);
  return data;
}

int cjl_reshape_args(lua_State *L, int first, size_t have, size_t *shape) {
  if (lua_gettop(L) > first || !lua_istable(L, first)) {
    int n = lua_gettop(L) - first + 1;
    luaL_argcheck(L, n >= 1 && n <= CJL_MAX_DIMS, first, "reshape takes 1 to 3 dimensions");
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) lua_pushvalue(L, first + i), lua_rawseti(L, -2, i + 1);
    lua_replace(L, first);
    lua_settop(L, first);
  }
  int ndim = cjl_check_shape(L, first, shape);
  if (cjl_shape_size(ndim, shape) != have)
    luaL_error(L, "cannot reshape %d elements into a shape of %d", (int)have,
               (int)cjl_shape_size(ndim, shape));
  return ndim;
}
