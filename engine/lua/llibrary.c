/*
** llibrary.c -- the Lua side of cujit's device library: random fills (cuda.random.uniform and
** cuda.random.normal), reductions as device array methods (a:sum(), a:min(), a:max(), a:dot(b)),
** matrix products (cuda.gemm) and the elementwise builder (cuda.elementwise). Everything here is a
*thin layer over the
** "Library" section of cujit.h.
*/
#include "larray.h"
#include "llibrary.h"
#include "loptions.h"
#include "lstream.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CJL_ELEMENTWISE "cujit.elementwise"
#define MAX_TYPE_VARS 16

/* ---------------------------------------------------------------------------------------------
** Shared checks
** ------------------------------------------------------------------------------------------- */

/* An exact integer at `idx` (a float with an integral value is fine). */
static lua_Integer check_integer(lua_State *L, int idx, const char *what) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, idx, &exact);
  if (lua_type(L, idx) != LUA_TNUMBER || !exact)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "%s must be an integer, got %s", what,
                                  lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL)
                                                                  : luaL_typename(L, idx)));
  return v;
}

static uint64_t opt_offset(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return 0;
  lua_Integer v = check_integer(L, idx, "the offset");
  luaL_argcheck(L, v >= 0, idx, "the offset must be >= 0 (it counts numbers already drawn)");
  return (uint64_t)v;
}

static double opt_finite(lua_State *L, int idx, double def, const char *what) {
  if (lua_isnoneornil(L, idx)) return def;
  double v = luaL_checknumber(L, idx);
  if (!(v - v == 0)) luaL_argerror(L, idx, lua_pushfstring(L, "%s must be a finite number", what));
  return v;
}

static const char *dtype_name(cujit_dtype d) {
  return d == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(d);
}

/* A live device array with an element type (not untyped bytes pushed from C). */
static cujit_buffer *check_typed_array(lua_State *L, int idx, cjl_array **out) {
  cujit_buffer *b = cjl_check_array(L, idx, out);
  if ((*out)->dtype == CUJIT_DTYPE_NONE)
    luaL_argerror(L, idx, "the array holds untyped bytes; give it an element type");
  return b;
}

/* ---------------------------------------------------------------------------------------------
** Random fills
** ------------------------------------------------------------------------------------------- */

static cujit_buffer *check_float_array(lua_State *L, int idx) {
  cjl_array *a;
  cujit_buffer *b = cjl_check_array(L, idx, &a);
  if (a->dtype != CUJIT_F32 && a->dtype != CUJIT_F64)
    luaL_argerror(L, idx,
                  lua_pushfstring(L,
                                  "f32 or f64 device array expected, got %s (random "
                                  "fills make floating-point numbers)",
                                  dtype_name(a->dtype)));
  return b;
}

/* The seed: any integer, negative ones taken as their 64-bit two's complement. */
static uint64_t check_seed(lua_State *L, int idx) {
  return (uint64_t)check_integer(L, idx, "the seed");
}

/* cuda.random.uniform(array, seed [, offset [, stream]]) -> array, filled with (0, 1]. */
static int l_uniform(lua_State *L) {
  cujit_buffer *b = check_float_array(L, 1);
  uint64_t seed = check_seed(L, 2);
  uint64_t offset = opt_offset(L, 3);
  cujit_stream *stream = cjl_opt_stream(L, 4);
  if (cujit_random_uniform(b, seed, offset, stream) != CUJIT_OK) return cjl_error(L, cjl_engine(L));
  lua_settop(L, 1);
  return 1;
}

/* cuda.random.normal(array, seed [, mean [, std [, offset [, stream]]]]) -> array. */
static int l_normal(lua_State *L) {
  cujit_buffer *b = check_float_array(L, 1);
  uint64_t seed = check_seed(L, 2);
  double mean = opt_finite(L, 3, 0.0, "the mean");
  double std = opt_finite(L, 4, 1.0, "the standard deviation");
  luaL_argcheck(L, std >= 0, 4, "the standard deviation must be >= 0");
  uint64_t offset = opt_offset(L, 5);
  cujit_stream *stream = cjl_opt_stream(L, 6);
  if (cujit_random_normal(b, seed, offset, mean, std, stream) != CUJIT_OK)
    return cjl_error(L, cjl_engine(L));
  lua_settop(L, 1);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Reductions: device array methods
** ------------------------------------------------------------------------------------------- */

/* Integers stay exact as Lua integers (u64 sums past math.maxinteger wrap, as Lua's own unsigned
** conventions do); floating results are Lua floats. */
static void push_scalar(lua_State *L, const cujit_scalar *r) {
  if (r->dtype == CUJIT_I64)
    lua_pushinteger(L, (lua_Integer)r->v.i);
  else if (r->dtype == CUJIT_U64)
    lua_pushinteger(L, (lua_Integer)r->v.u);
  else
    lua_pushnumber(L, r->v.f);
}

static int reduce(lua_State *L, cujit_reduce_op op) {
  cjl_array *a;
  cujit_buffer *b = check_typed_array(L, 1, &a);
  cujit_stream *stream = cjl_opt_stream(L, 2);
  cujit_scalar r = CUJIT_SCALAR_INIT;
  if (cujit_reduce(b, op, a->size, &r, stream) != CUJIT_OK) return cjl_error(L, cjl_engine(L));
  push_scalar(L, &r);
  return 1;
}

static int array_sum(lua_State *L) {
  return reduce(L, CUJIT_REDUCE_SUM);
}

static int array_min(lua_State *L) {
  return reduce(L, CUJIT_REDUCE_MIN);
}

static int array_max(lua_State *L) {
  return reduce(L, CUJIT_REDUCE_MAX);
}

/* a:dot(b [, stream]): both of one dtype and one element count. */
static int array_dot(lua_State *L) {
  cjl_array *a, *other;
  cujit_buffer *ba = check_typed_array(L, 1, &a);
  cujit_buffer *bb = check_typed_array(L, 2, &other);
  if (a->dtype != other->dtype || a->size != other->size)
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "dot of a %s array of %I elements with a %s "
                                         "array of %I: same dtype and size needed",
                                         dtype_name(a->dtype), (lua_Integer)a->size,
                                         dtype_name(other->dtype), (lua_Integer)other->size));
  cujit_stream *stream = cjl_opt_stream(L, 3);
  cujit_scalar r = CUJIT_SCALAR_INIT;
  if (cujit_dot(ba, bb, a->size, &r, stream) != CUJIT_OK) return cjl_error(L, cjl_engine(L));
  push_scalar(L, &r);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Matrix products: cuda.gemm(a, b, c [, options]) -> c
** ------------------------------------------------------------------------------------------- */

static const char *const gemm_option_names[] = {"trans_a", "trans_b",   "alpha",  "beta", "bias",
                                                "relu",    "relu_mask", "stream", NULL};

/* The 2-D array at `idx`, its rows and columns; `what` says what it stands for. */
static cujit_buffer *check_matrix(lua_State *L, int idx, const char *name, const char *what,
                                  size_t rc[2]) {
  cjl_array *a;
  cujit_buffer *b = check_typed_array(L, idx, &a);
  if (a->ndim != 2)
    luaL_argerror(L, idx,
                  lua_pushfstring(L, "%s must be a 2-D array (%s), got %d-D", name, what, a->ndim));
  rc[0] = a->shape[0], rc[1] = a->shape[1];
  return b;
}

/* An optional array in the options table at `opts`: its field `name`, which the caller pushed. */
static cujit_buffer *gemm_option_array(lua_State *L, int opts, const char *name, cjl_array **out) {
  if (lua_isnil(L, -1)) return NULL;
  cujit_buffer *b = (*out = cjl_test_array(L, -1)) ? cjl_array_buffer(*out) : NULL;
  if (!*out)
    luaL_argerror(
        L, opts,
        lua_pushfstring(L, "%s must be a device array, got %s", name, luaL_typename(L, -1)));
  if (!b) luaL_argerror(L, opts, lua_pushfstring(L, "%s: the device array has been freed", name));
  return b;
}

static double gemm_option_number(lua_State *L, int opts, const char *name, double def) {
  if (lua_isnil(L, -1)) return def;
  if (lua_type(L, -1) != LUA_TNUMBER)
    luaL_argerror(L, opts,
                  lua_pushfstring(L, "%s must be a number, got %s", name, luaL_typename(L, -1)));
  return lua_tonumber(L, -1);
}

/* A true/false option (nil: false); a number is refused, since 0 would read as true in Lua. */
static int gemm_flag(lua_State *L, int opts, const char *name) {
  if (!lua_istable(L, opts)) return 0;
  lua_getfield(L, opts, name);
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    luaL_argerror(
        L, opts,
        lua_pushfstring(L, "%s must be true or false, got %s", name, luaL_typename(L, -1)));
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

/* Reads the options table at `opts` into o (bias, relu_mask and the stream stay on the stack,
** alive through the call) and checks the arrays' shapes against o's m and n. */
static cujit_stream *gemm_options(lua_State *L, int opts, cujit_gemm_options *o) {
  if (lua_isnoneornil(L, opts)) return NULL;
  luaL_checktype(L, opts, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, opts)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    int known = 0;
    for (int i = 0; gemm_option_names[i]; i++)
      known = known || strcmp(key, gemm_option_names[i]) == 0;
    if (!known)
      luaL_argerror(L, opts,
                    lua_pushfstring(L,
                                    "unknown option '%s' (known: trans_a, trans_b, alpha, beta, "
                                    "bias, relu, relu_mask, stream)",
                                    key));
    lua_pop(L, 1);
  }
  cjl_array *arr;
  lua_getfield(L, opts, "alpha");
  o->alpha = gemm_option_number(L, opts, "alpha", 1.0);
  lua_getfield(L, opts, "beta");
  o->beta = gemm_option_number(L, opts, "beta", 0.0);
  o->relu = gemm_flag(L, opts, "relu");
  lua_getfield(L, opts, "bias");
  if ((o->bias = gemm_option_array(L, opts, "bias", &arr)) && arr->size != (size_t)o->n)
    luaL_argerror(L, opts,
                  lua_pushfstring(L, "bias has %I elements; it needs one per column of c (%I)",
                                  (lua_Integer)arr->size, (lua_Integer)o->n));
  lua_getfield(L, opts, "relu_mask");
  if ((o->relu_mask = gemm_option_array(L, opts, "relu_mask", &arr)) &&
      (arr->ndim != 2 || arr->shape[0] != (size_t)o->m || arr->shape[1] != (size_t)o->n))
    luaL_argerror(L, opts,
                  lua_pushfstring(L, "relu_mask must have c's shape, %I x %I", (lua_Integer)o->m,
                                  (lua_Integer)o->n));
  lua_getfield(L, opts, "stream");
  if (!lua_isnil(L, -1) && !luaL_testudata(L, -1, CJL_STREAM))
    luaL_argerror(
        L, opts, lua_pushfstring(L, "stream must be a cujit.stream, got %s", luaL_typename(L, -1)));
  return cjl_opt_stream(L, lua_gettop(L));
}

/* The arguments of cuda.gemm and cuda.gemm_kernel read into cujit_gemm's: the matrices (their
** shapes give m, n and k) and the options table at index 4; returns the stream. */
static cujit_stream *gemm_args(lua_State *L, cujit_buffer **abc, cujit_gemm_options *o) {
  o->trans_a = gemm_flag(L, 4, "trans_a");
  o->trans_b = gemm_flag(L, 4, "trans_b");
  size_t sa[2], sb[2], sc[2];
  abc[0] = check_matrix(L, 1, "a", o->trans_a ? "k x m" : "m x k", sa);
  abc[1] = check_matrix(L, 2, "b", o->trans_b ? "n x k" : "k x n", sb);
  abc[2] = check_matrix(L, 3, "c", "m x n", sc);
  size_t m = sa[o->trans_a], k = sa[!o->trans_a], kb = sb[o->trans_b], n = sb[!o->trans_b];
  if (kb != k)
    luaL_argerror(L, 2,
                  lua_pushfstring(L,
                                  "op(a) is %I x %I but op(b) is %I x %I: the inner sizes differ",
                                  (lua_Integer)m, (lua_Integer)k, (lua_Integer)kb, (lua_Integer)n));
  if (sc[0] != m || sc[1] != n)
    luaL_argerror(L, 3,
                  lua_pushfstring(L, "c is %I x %I but op(a) op(b) is %I x %I", (lua_Integer)sc[0],
                                  (lua_Integer)sc[1], (lua_Integer)m, (lua_Integer)n));
  o->m = (int64_t)m, o->n = (int64_t)n, o->k = (int64_t)k;
  return gemm_options(L, 4, o);
}

/* cuda.gemm(a, b, c [, {trans_a=, trans_b=, alpha=, beta=, bias=, relu=, relu_mask=, stream=}])
** -> c: c = alpha * op(a) op(b) + beta * c, then the epilogue, on 2-D arrays (cujit_gemm). */
static int l_gemm(lua_State *L) {
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  cujit_buffer *abc[3];
  cujit_stream *stream = gemm_args(L, abc, &o);
  if (cujit_gemm(abc[0], abc[1], abc[2], &o, stream) != CUJIT_OK)
    return cjl_error(L, cjl_engine(L));
  lua_settop(L, 3);
  return 1;
}

/* cuda.gemm_kernel(a, b, c [, options]) -> "simt" or "tensor": the kernel cuda.gemm would run
** with these arguments (cujit_gemm_kernel_for), nothing run. */
static int l_gemm_kernel(lua_State *L) {
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  cujit_buffer *abc[3];
  cujit_stream *stream = gemm_args(L, abc, &o);
  cujit_gemm_kernel kernel;
  if (cujit_gemm_kernel_for(abc[0], abc[1], abc[2], &o, stream, &kernel) != CUJIT_OK)
    return cjl_error(L, cjl_engine(L));
  lua_pushstring(L, kernel == CUJIT_GEMM_KERNEL_TENSOR ? "tensor" : "simt");
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Elementwise kernels: cuda.elementwise(params, expr [, name] [, options]) -> callable
** ------------------------------------------------------------------------------------------- */

typedef struct ew_param {
  const char *name;  /* owned by the kernel */
  cujit_dtype dtype; /* NONE for a type variable */
  int type_var;      /* -1 when concrete */
  int array, output;
} ew_param;

typedef struct cjl_elementwise {
  cujit_kernel *kernel; /* NULL once freed */
  cjl_state *state;
  int nparams; /* without the trailing n */
  int noutputs;
  ew_param params[];
} cjl_elementwise;

static cjl_elementwise *check_ew(lua_State *L, int idx) {
  cjl_elementwise *ew = luaL_checkudata(L, idx, CJL_ELEMENTWISE);
  if (!ew->kernel) luaL_argerror(L, idx, "elementwise kernel has been freed");
  return ew;
}

static const char *ew_name(const cjl_elementwise *ew) {
  return cujit_kernel_name(ew->kernel);
}

/* Wraps a defined kernel, reading its parameters once. */
static cjl_elementwise *push_ew(lua_State *L, cujit_kernel *kernel) {
  size_t n = cujit_kernel_param_count(kernel);
  n = n ? n - 1 : 0; /* the trailing `long long n` is the launch's, not the caller's */
  cjl_elementwise *ew = lua_newuserdatauv(L, sizeof *ew + n * sizeof(ew_param), 0);
  memset(ew, 0, sizeof *ew);
  ew->state = cjl_state_of(L);
  ew->nparams = (int)n;
  for (size_t i = 0; i < n; i++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    ew_param *p = &ew->params[i];
    cujit_kernel_param(kernel, i, &info);
    p->name = info.name ? info.name : "?";
    p->dtype = info.dtype;
    p->type_var = info.type_var;
    p->array = info.kind == CUJIT_PARAM_POINTER;
    p->output = p->array && !info.is_const;
    ew->noutputs += p->output;
  }
  ew->kernel = kernel; /* last: a failure above must not leave a half-read object owning it */
  luaL_setmetatable(L, CJL_ELEMENTWISE);
  return ew;
}

static int l_elementwise(lua_State *L) {
  const char *params = cjl_check_text(L, 1, "the parameter list");
  const char *expr = cjl_check_text(L, 2, "the expression");
  int opts = 4;
  const char *name = NULL;
  if (lua_istable(L, 3) && lua_isnoneornil(L, 4))
    opts = 3; /* (params, expr, options) */
  else if (lua_type(L, 3) == LUA_TSTRING)
    name = cjl_text(L, 3, 3, "the kernel name");
  else if (!lua_isnoneornil(L, 3))
    return luaL_argerror(L, 3,
                         lua_pushfstring(L,
                                         "kernel name (a string) or options table "
                                         "expected, got %s",
                                         luaL_typename(L, 3)));
  cjl_compile_opts co;
  if (cjl_parse_compile_options(L, opts, &co))
    return luaL_argerror(L, opts, "an elementwise kernel takes no preamble or device functions");
  cjl_refuse_unit_option(L, opts, co.o.signatures != NULL, "signatures",
                         "an elementwise kernel's signature comes from its parameter list");
  if (co.o.nonnull)
    return luaL_argerror(L, opts,
                         "option 'nonnull' is for cuda.source, cuda.load and cuda.jit: an "
                         "elementwise kernel's arrays refuse nil already");
  if (co.name) name = co.name;
  cujit_engine *e = cjl_engine(L);
  cujit_kernel *kernel;
  if (cujit_elementwise_define(e, params, expr, name, &co.o, &kernel) != CUJIT_OK)
    return cjl_error(L, e);
  /* Should making the userdata raise (out of memory), the kernel stays a live object of the
  ** engine, which frees it when it closes. */
  push_ew(L, kernel);
  return 1;
}

static int ew_arg_error(lua_State *L, const cjl_elementwise *ew, int i, const char *why) {
  return luaL_error(L, "bad argument #%d '%s' to elementwise '%s' (%s)", i + 1, ew->params[i].name,
                    ew_name(ew), why);
}

/* What one call has gathered from its arguments. */
typedef struct ew_call {
  cujit_arg args[CJL_MAX_ARGS];
  cujit_dtype binding[MAX_TYPE_VARS]; /* the dtype of each type variable, from the arrays */
  const cjl_array *first;             /* the first array: its size is n, its shape the outputs' */
  int first_param;
} ew_call;

static void bind_type_var(lua_State *L, const cjl_elementwise *ew, ew_call *c, int i,
                          cujit_dtype have) {
  const ew_param *p = &ew->params[i];
  if (p->type_var < 0 || p->type_var >= MAX_TYPE_VARS) return;
  cujit_dtype *bound = &c->binding[p->type_var];
  if (*bound == CUJIT_DTYPE_NONE)
    *bound = have;
  else if (*bound != have)
    ew_arg_error(L, ew, i,
                 lua_pushfstring(L,
                                 "%s array, but its type variable is %s from an "
                                 "earlier argument",
                                 dtype_name(have), dtype_name(*bound)));
}

static void convert_array(lua_State *L, const cjl_elementwise *ew, ew_call *c, int i, int idx) {
  const ew_param *p = &ew->params[i];
  cjl_array *a = cjl_test_array(L, idx);
  if (!a)
    ew_arg_error(L, ew, i,
                 lua_pushfstring(L,
                                 "device array expected (copy host data with "
                                 "cuda.to_device), got %s",
                                 luaL_typename(L, idx)));
  cujit_buffer *b = cjl_array_buffer(a);
  if (!b) ew_arg_error(L, ew, i, "device array has been freed");
  if (p->type_var < 0 && p->dtype != CUJIT_DTYPE_NONE && a->dtype != p->dtype)
    ew_arg_error(L, ew, i,
                 lua_pushfstring(L, "%s array expected, got %s", dtype_name(p->dtype),
                                 dtype_name(a->dtype)));
  bind_type_var(L, ew, c, i, a->dtype);
  if (!c->first) {
    c->first = a;
    c->first_param = i;
  } else if (a->size != c->first->size) {
    ew_arg_error(L, ew, i,
                 lua_pushfstring(L,
                                 "it has %I elements but '%s' has %I: all arrays "
                                 "must have the same size",
                                 (lua_Integer)a->size, ew->params[c->first_param].name,
                                 (lua_Integer)c->first->size));
  }
  c->args[i] = CUJIT_ARG_BUF(b);
}

/* Scalars go to the engine as they are; it converts them for the parameter's type, with range and
** exactness checks. */
static void convert_scalar(lua_State *L, const cjl_elementwise *ew, ew_call *c, int i, int idx) {
  if (lua_type(L, idx) == LUA_TBOOLEAN)
    c->args[i] = CUJIT_ARG_I(lua_toboolean(L, idx));
  else if (lua_isinteger(L, idx))
    c->args[i] = CUJIT_ARG_I(lua_tointeger(L, idx));
  else if (lua_type(L, idx) == LUA_TNUMBER)
    c->args[i] = CUJIT_ARG_F(lua_tonumber(L, idx));
  else
    ew_arg_error(
        L, ew, i,
        lua_pushfstring(L, "number expected (a scalar parameter), got %s", luaL_typename(L, idx)));
}

/* Allocates output i, shaped as the first array, its dtype the parameter's or its type
** variable's; the array is left on the stack. */
static void allocate_output(lua_State *L, const cjl_elementwise *ew, ew_call *c, int i) {
  const ew_param *p = &ew->params[i];
  cujit_dtype dtype = p->dtype;
  if (p->type_var >= 0) dtype = p->type_var < MAX_TYPE_VARS ? c->binding[p->type_var] : dtype;
  if (dtype == CUJIT_DTYPE_NONE)
    ew_arg_error(L, ew, i,
                 "missing: its type variable is not set by any input array; pass the "
                 "output array");
  cjl_array *out = cjl_new_array(L, dtype, c->first->ndim, c->first->shape);
  c->args[i] = CUJIT_ARG_BUF(out->buffer);
}

/* ew(inputs... [, outputs...] [, stream]) -> the outputs (the ones passed, or new arrays shaped
** as the first input array when they are left out). */
static int ew_call_m(lua_State *L) {
  cjl_elementwise *ew = check_ew(L, 1);
  int top = lua_gettop(L);
  cujit_stream *stream = NULL;
  if (top > 1 && luaL_testudata(L, top, CJL_STREAM)) stream = cjl_opt_stream(L, top--);
  int given = top - 1, ninputs = ew->nparams - ew->noutputs;
  if (given != ew->nparams && given != ninputs)
    return luaL_error(L,
                      "elementwise '%s' takes %d arguments, or %d without the outputs (then "
                      "allocated and returned), got %d: %s",
                      ew_name(ew), ew->nparams, ninputs, given, cujit_kernel_signature(ew->kernel));
  ew_call c;
  memset(&c, 0, sizeof c);
  for (int i = 0; i < given; i++) {
    if (ew->params[i].array)
      convert_array(L, ew, &c, i, i + 2);
    else
      convert_scalar(L, ew, &c, i, i + 2);
  }
  if (!c.first)
    return luaL_error(L,
                      "elementwise '%s': no array among the arguments, so no element count; "
                      "pass the output arrays",
                      ew_name(ew));
  int results = lua_gettop(L);
  if (given == ew->nparams) /* return the outputs passed */
    for (int i = ninputs; i < ew->nparams; i++) lua_pushvalue(L, i + 2);
  else
    for (int i = ninputs; i < ew->nparams; i++) allocate_output(L, ew, &c, i);
  if (cujit_elementwise_launch(ew->kernel, c.first->size, stream, c.args, (size_t)ew->nparams) !=
      CUJIT_OK) {
    const char *why; /* a scalar the engine refused: said as for a kernel launch */
    int n = cjl_failed_argument(cjl_engine(L), ew_name(ew), &why);
    if (n >= 1 && n <= ew->nparams) return ew_arg_error(L, ew, n - 1, why);
    return cjl_error(L, cjl_engine(L));
  }
  return lua_gettop(L) - results;
}

static int ew_gc(lua_State *L) {
  cjl_elementwise *ew = luaL_checkudata(L, 1, CJL_ELEMENTWISE);
  if (ew->kernel && !ew->state->closed) cujit_kernel_free(ew->kernel);
  ew->kernel = NULL;
  return 0;
}

static int ew_name_m(lua_State *L) {
  lua_pushstring(L, ew_name(check_ew(L, 1)));
  return 1;
}

static int ew_signature(lua_State *L) {
  lua_pushstring(L, cujit_kernel_signature(check_ew(L, 1)->kernel));
  return 1;
}

static int ew_source(lua_State *L) {
  lua_pushstring(L, cujit_kernel_source(check_ew(L, 1)->kernel));
  return 1;
}

static int ew_tostring(lua_State *L) {
  cjl_elementwise *ew = luaL_checkudata(L, 1, CJL_ELEMENTWISE);
  if (!ew->kernel)
    lua_pushliteral(L, "cujit.elementwise (freed)");
  else
    lua_pushfstring(L, "cujit.elementwise %s", cujit_kernel_signature(ew->kernel));
  return 1;
}

/* cuda.clock() -> seconds of a monotonic wall clock, for timing host-side work (os.clock is CPU
** time; GPU work is timed with events). */
static int l_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Opening
** ------------------------------------------------------------------------------------------- */

static const luaL_Reg array_methods[] = {
    {"sum", array_sum}, {"min", array_min}, {"max", array_max}, {"dot", array_dot}, {NULL, NULL}};
static const luaL_Reg random_functions[] = {
    {"uniform", l_uniform}, {"normal", l_normal}, {NULL, NULL}};
static const luaL_Reg ew_meta[] = {{"__call", ew_call_m},
                                   {"__gc", ew_gc},
                                   {"__close", ew_gc},
                                   {"__tostring", ew_tostring},
                                   {NULL, NULL}};
static const luaL_Reg ew_methods[] = {{"name", ew_name_m},
                                      {"signature", ew_signature},
                                      {"source", ew_source},
                                      {"free", ew_gc},
                                      {NULL, NULL}};

void cjl_open_library(lua_State *L, int module_index) {
  cjl_add_methods(L, CJL_ARRAY, array_methods);
  cjl_new_class(L, CJL_ELEMENTWISE, ew_meta, ew_methods, NULL);
  luaL_newlib(L, random_functions);
  lua_setfield(L, module_index, "random");
  lua_pushcfunction(L, l_elementwise);
  lua_setfield(L, module_index, "elementwise");
  lua_pushcfunction(L, l_clock);
  lua_setfield(L, module_index, "clock");
  lua_pushcfunction(L, l_gemm);
  lua_setfield(L, module_index, "gemm");
  lua_pushcfunction(L, l_gemm_kernel);
  lua_setfield(L, module_index, "gemm_kernel");
}
