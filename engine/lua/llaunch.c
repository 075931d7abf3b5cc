/*
** llaunch.c -- the launch path from Lua: launch configurations (k[{grid, block}], k:forall(n)),
** launchers cached per configuration, and the conversion of Lua arguments into a cujit_arg
** array on the C stack by the kernel's signature (host arrays and tables copied to the device and
** back around the launch). A launch from a Lua loop allocates nothing.
*/
#include "larray.h"
#include "lconv.h"
#include "lhost.h"
#include "lkernel.h"
#include "llaunch.h"
#include "lstream.h"
#include "ltma.h"

#include <string.h>

/* A kernel bound to a launch configuration; user values: the kernel, the stream. */
typedef struct cjl_launcher {
  cjl_kernel *kernel;
  cujit_launch_config config; /* config.stream is filled in at each call */
  cjl_stream *stream;         /* NULL: the default stream */
  size_t n;                   /* forall: the element count */
  int forall;
  int cooperative; /* {..., cooperative = true}: cujit_launch_cooperative */
} cjl_launcher;

/* Upvalues of the launcher's __call: the addresses (light userdata) of the metatables it tells
** arguments apart by. */
#define LAUNCHER_MT lua_upvalueindex(1)
#define ARRAY_MT lua_upvalueindex(2)
#define HOST_MT lua_upvalueindex(3)

/* Whether the value at idx has the metatable whose address is the light userdata at `mt`: a
** pointer compare, cheaper on the launch path than lua_rawequal on the metatables themselves.
** The metatables live in the registry for the life of the state, so the addresses stay valid. */
static int has_metatable(lua_State *L, int idx, const void *mt) {
  if (!lua_getmetatable(L, idx)) return 0;
  int same = lua_topointer(L, -1) == mt;
  lua_pop(L, 1);
  return same;
}

/* has_metatable for the value at 1 of a metamethod, which leaves the metatable on the stack (one
** API call fewer on the launch path; the callers index the stack absolutely, and return values
** they push after it). */
static int self_has_metatable(lua_State *L, const void *mt) {
  return lua_getmetatable(L, 1) && lua_topointer(L, -1) == mt;
}

static void push_metatable_address(lua_State *L, const char *name) {
  luaL_getmetatable(L, name);
  lua_pushlightuserdata(L, (void *)lua_topointer(L, -1));
  lua_remove(L, -2);
}

/* ---------------------------------------------------------------------------------------------
** Launch configurations
** ------------------------------------------------------------------------------------------- */

static int config_error(lua_State *L, const cjl_kernel *k, const char *what) {
  return luaL_error(L,
                    "bad launch configuration for '%s': %s (use {grid, block} or {grid = {x, y}, "
                    "block = {x, y}, shared = bytes, stream = s, cooperative = true, cluster = "
                    "{x, y, z}, pdl = true, priority = n})",
                    cjl_kernel_name(k), what);
}

static unsigned check_extent(lua_State *L, const cjl_kernel *k, int idx, const char *what) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, idx, &exact);
  if (lua_type(L, idx) != LUA_TNUMBER || !exact || v < 1 || v > (lua_Integer)UINT32_MAX) {
    const char *got =
        lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL) : luaL_typename(L, idx);
    config_error(L, k, lua_pushfstring(L, "%s must be a positive integer, got %s", what, got));
  }
  return (unsigned)v;
}

/* grid or block: a positive integer or a table of 1 to 3 of them. */
static void parse_extents(lua_State *L, const cjl_kernel *k, int idx, unsigned dims[3],
                          const char *what) {
  dims[0] = dims[1] = dims[2] = 1;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    dims[0] = check_extent(L, k, idx, what);
    return;
  }
  if (!lua_istable(L, idx))
    config_error(L, k,
                 lua_pushfstring(L,
                                 "%s must be a positive integer or a table {x, y, z}, "
                                 "got %s",
                                 what, luaL_typename(L, idx)));
  lua_Unsigned n = lua_rawlen(L, idx);
  if (n < 1 || n > 3)
    config_error(L, k, lua_pushfstring(L, "%s must have 1 to 3 dimensions, got %d", what, (int)n));
  for (lua_Unsigned i = 0; i < n; i++) {
    lua_rawgeti(L, idx, (lua_Integer)i + 1);
    dims[i] = check_extent(L, k, lua_gettop(L), what);
    lua_pop(L, 1);
  }
}

/* Reads the configuration table at `cfg` (one pass over its entries; nothing allocated). */
static void parse_config(lua_State *L, const cjl_kernel *k, int cfg, cujit_launch_config *c,
                         cjl_stream **stream, int *cooperative) {
  int have_grid = 0, have_block = 0;
  *c = (cujit_launch_config)CUJIT_LAUNCH_CONFIG_INIT;
  *stream = NULL;
  lua_pushnil(L);
  while (lua_next(L, cfg)) {
    int value = lua_gettop(L);
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    lua_Integer pos = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (pos == 1 || (key && strcmp(key, "grid") == 0)) {
      if (have_grid++) config_error(L, k, "the grid is given twice");
      parse_extents(L, k, value, c->grid, "grid");
    } else if (pos == 2 || (key && strcmp(key, "block") == 0)) {
      if (have_block++) config_error(L, k, "the block is given twice");
      parse_extents(L, k, value, c->block, "block");
    } else if (key && strcmp(key, "shared") == 0) {
      int exact = 0;
      lua_Integer v = lua_tointegerx(L, value, &exact);
      if (lua_type(L, value) != LUA_TNUMBER || !exact || v < 0 || v > (lua_Integer)UINT32_MAX)
        config_error(L, k, "shared must be a byte count (an integer >= 0)");
      c->shared_bytes = (unsigned)v;
    } else if (key && strcmp(key, "stream") == 0) {
      cjl_stream *s = luaL_testudata(L, value, CJL_STREAM);
      if (!s)
        config_error(
            L, k,
            lua_pushfstring(L, "stream must be a cujit.stream, got %s", luaL_typename(L, value)));
      if (!s->stream) config_error(L, k, "the stream has been freed");
      *stream = s;
    } else if (key && strcmp(key, "cooperative") == 0) {
      if (!lua_isboolean(L, value)) config_error(L, k, "cooperative must be true or false");
      *cooperative = lua_toboolean(L, value);
    } else if (key && strcmp(key, "cluster") == 0) { /* launch attributes (issue 26) */
      parse_extents(L, k, value, c->cluster, "cluster");
    } else if (key && strcmp(key, "pdl") == 0) {
      if (!lua_isboolean(L, value)) config_error(L, k, "pdl must be true or false");
      c->programmatic = lua_toboolean(L, value);
    } else if (key && strcmp(key, "priority") == 0) {
      int exact = 0;
      lua_Integer v = lua_tointegerx(L, value, &exact);
      if (lua_type(L, value) != LUA_TNUMBER || !exact || v < INT32_MIN || v > INT32_MAX)
        config_error(L, k, "priority must be an integer (lower is more urgent)");
      c->priority = (int)v;
    } else {
      const char *name = luaL_tolstring(L, -2, NULL);
      config_error(L, k, lua_pushfstring(L, "unknown entry '%s'", name));
    }
    lua_settop(L, value - 1);
  }
  if (!have_grid || !have_block)
    config_error(L, k, have_grid ? "the block size is missing" : "the grid size is missing");
}

/* The form nearly every launch writes, {grid, block} with two positive integers and nothing else,
** read without the generic walk: two lookups, then a count of the entries (exactly two, and [1]
** and [2] are there, so there is no other). Returns 0 for anything else, which parse_config then
** reads, and reports on, as always. */
static int simple_config(lua_State *L, int cfg, cujit_launch_config *c) {
  int grid_ok = 0, block_ok = 0;
  lua_Integer grid = 0, block = 0;
  if (lua_rawgeti(L, cfg, 1) == LUA_TNUMBER) grid = lua_tointegerx(L, -1, &grid_ok);
  if (lua_rawgeti(L, cfg, 2) == LUA_TNUMBER) block = lua_tointegerx(L, -1, &block_ok);
  /* Both values stay on the stack: every index used here and after is absolute. */
  if (!grid_ok || !block_ok || grid < 1 || block < 1 || grid > (lua_Integer)UINT32_MAX ||
      block > (lua_Integer)UINT32_MAX)
    return 0;
  int entries = 0;
  lua_pushnil(L);
  while (lua_next(L, cfg)) {
    lua_pop(L, 1);
    if (++entries > 2) {
      lua_pop(L, 1);
      return 0;
    }
  }
  *c = (cujit_launch_config)CUJIT_LAUNCH_CONFIG_INIT;
  c->grid[0] = (unsigned)grid, c->grid[1] = c->grid[2] = 1;
  c->block[0] = (unsigned)block, c->block[1] = c->block[2] = 1;
  return 1;
}

static int same_config(const cujit_launch_config *a, const cujit_launch_config *b) {
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i] || a->cluster[i] != b->cluster[i])
      return 0;
  return a->shared_bytes == b->shared_bytes && a->programmatic == b->programmatic &&
         a->priority == b->priority;
}

/* Pushes the launcher cached in user value `slot` of the kernel at 1, if any. */
static cjl_launcher *cached_launcher(lua_State *L, int slot) {
  if (lua_getiuservalue(L, 1, slot) == LUA_TUSERDATA) return lua_touserdata(L, -1);
  lua_pop(L, 1);
  return NULL;
}

/* A new launcher for the kernel at 1, made the cached one of `slot`; the stream (if any) is the
** value at stream_idx. */
static cjl_launcher *new_launcher(lua_State *L, int slot, int stream_idx) {
  cjl_launcher *ln = lua_newuserdatauv(L, sizeof *ln, 2);
  memset(ln, 0, sizeof *ln);
  ln->kernel = lua_touserdata(L, 1);
  luaL_setmetatable(L, CJL_LAUNCHER);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  if (stream_idx) {
    lua_pushvalue(L, stream_idx);
    lua_setiuservalue(L, -2, 2);
  }
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, 1, slot);
  return ln;
}

/* k[cfg] -> the launcher of k with this configuration: the cached one when unchanged. The
** table is read afresh each time (never cached by identity): a hoisted table may be changed
** between launches. */
static int launcher_for_config(lua_State *L, cjl_kernel *k) {
  cujit_launch_config c;
  cjl_stream *s = NULL;
  int cooperative = 0;
  if (!simple_config(L, 2, &c)) parse_config(L, k, 2, &c, &s, &cooperative);
  cjl_launcher *ln = k->launcher;
  if (ln && ln->stream == s && ln->cooperative == cooperative && same_config(&ln->config, &c)) {
    lua_getiuservalue(L, 1, CJL_UV_LAUNCHER);
    return 1;
  }
  int stream_idx = 0;
  if (s) {
    lua_pushliteral(L, "stream");
    lua_rawget(L, 2);
    stream_idx = lua_gettop(L);
  }
  ln = new_launcher(L, CJL_UV_LAUNCHER, stream_idx);
  ln->config = c;
  ln->stream = s;
  ln->cooperative = cooperative;
  k->launcher = ln;
  return 1;
}

/* k:forall(n [, stream]) -> launcher over n elements with the occupancy-suggested block size. */
static int kernel_forall(lua_State *L) {
  cjl_check_kernel(L, 1);
  int exact = 0;
  lua_Integer n = lua_tointegerx(L, 2, &exact);
  if (lua_type(L, 2) != LUA_TNUMBER || !exact || n < 1)
    return luaL_argerror(L, 2, "element count must be a positive integer");
  if (n > INT32_MAX)
    return luaL_argerror(L, 2,
                         lua_pushfstring(L,
                                         "element count %I is over %d: forall gives each "
                                         "element a thread, and the usual index (blockIdx.x * "
                                         "blockDim.x + threadIdx.x, in an int) stops there; "
                                         "launch an explicit grid with a grid-stride loop",
                                         n, INT32_MAX));
  cjl_stream *s = NULL;
  if (!lua_isnoneornil(L, 3)) {
    cjl_opt_stream(L, 3);
    s = lua_touserdata(L, 3);
  }
  cjl_launcher *ln = cached_launcher(L, CJL_UV_FORALL);
  if (ln && ln->n == (size_t)n && ln->stream == s) return 1;
  ln = new_launcher(L, CJL_UV_FORALL, s ? 3 : 0);
  ln->forall = 1;
  ln->n = (size_t)n;
  ln->stream = s;
  return 1;
}

/* Indexing a kernel: a table is a launch configuration, a string a method. */
static int kernel_index(lua_State *L) {
  if (!self_has_metatable(L, lua_touserdata(L, lua_upvalueindex(2))))
    return luaL_typeerror(L, 1, CJL_KERNEL);
  cjl_kernel *k = lua_touserdata(L, 1);
  switch (lua_type(L, 2)) {
  case LUA_TTABLE:
    if (!cjl_kernel_alive(k)) return luaL_error(L, "kernel has been freed");
    return launcher_for_config(L, k);
  case LUA_TSTRING:
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
  default:
    return luaL_error(L,
                      "a kernel is indexed by a launch configuration, as in "
                      "%s[{grid, block}](...), got %s",
                      cjl_kernel_name(k), luaL_typename(L, 2));
  }
}

/* ---------------------------------------------------------------------------------------------
** Launching
** ------------------------------------------------------------------------------------------- */

static int arg_error(lua_State *L, const cjl_kernel *k, int i, const char *why) {
  return luaL_error(L, "bad argument #%d '%s' to '%s' (%s)", i + 1, k->params[i].name,
                    cjl_kernel_name(k), why);
}

static int count_error(lua_State *L, const cjl_kernel *k, int got) {
  return luaL_error(L, "wrong number of arguments to '%s': expected %d, got %d (%s)",
                    cjl_kernel_name(k), k->nparams, got, cujit_kernel_signature(k->kernel));
}

static int dtype_fits(const cjl_param *p, cujit_dtype have) {
  return p->type_var >= 0 || p->dtype == CUJIT_DTYPE_NONE || have == CUJIT_DTYPE_NONE ||
         have == p->dtype;
}

static const char *array_mismatch(lua_State *L, const cjl_param *p, cujit_dtype have,
                                  const char *what) {
  return lua_pushfstring(L, "%s array expected, got %s %s", cujit_dtype_name(p->dtype),
                         have == CUJIT_DTYPE_NONE ? "bytes" : cujit_dtype_name(have), what);
}

static const unsigned char bool_bytes[2] = {0, 1};

static void convert_bool(lua_State *L, const cjl_kernel *k, int i, int idx, cujit_arg *arg) {
  int v = 0;
  const char *why = cjl_to_bool(L, idx, &v);
  if (why) arg_error(L, k, i, why);
  if (k->params[i].dtype == CUJIT_DTYPE_NONE)
    *arg = (cujit_arg){.kind = CUJIT_ARG_BYTES, .v.bytes = &bool_bytes[v]};
  else
    *arg = CUJIT_ARG_I(v);
}

/* A scalar goes to the engine as Lua holds it, an integer or a float: the engine converts it for
** the parameter's type and checks its range and exactness, for Lua as for C (one rule, and one
** message per mistake, which launch_failed puts in Lua's words). Only what is not a number at
** all is refused here. */
static void convert_scalar(lua_State *L, const cjl_kernel *k, int i, int idx, cujit_arg *arg) {
  const cjl_param *p = &k->params[i];
  int type = lua_type(L, idx);
  if (type == LUA_TNUMBER && !p->is_bool && (p->dtype != CUJIT_DTYPE_NONE || p->type_var >= 0)) {
    if (lua_isinteger(L, idx))
      *arg = CUJIT_ARG_I(lua_tointeger(L, idx));
    else
      *arg = CUJIT_ARG_F(lua_tonumber(L, idx));
    return;
  }
  if (p->is_bool) {
    convert_bool(L, k, i, idx, arg);
    return;
  }
  if (p->dtype == CUJIT_DTYPE_NONE && p->type_var < 0) { /* a struct or vector: its bytes */
    const void *bytes = NULL;
    const char *why = cjl_struct_bytes(L, idx, p->size, &bytes);
    if (why) arg_error(L, k, i, why);
    *arg = (cujit_arg){.kind = CUJIT_ARG_BYTES, .v.bytes = bytes};
    return;
  }
  arg_error(L, k, i, lua_pushfstring(L, "number expected, got %s", luaL_typename(L, idx)));
}

/* Converts argument `idx` for parameter i (array_mt: the device arrays' metatable's address).
** Returns 1 when it is a host array or Lua table that must be copied to the device around the
** launch (args[i] is then filled in later). */
static int convert_arg(lua_State *L, const cjl_kernel *k, int i, int idx, const void *array_mt,
                       cujit_arg *arg) {
  const cjl_param *p = &k->params[i];
  if (p->kind != CUJIT_PARAM_POINTER) {
    convert_scalar(L, k, i, idx, arg);
    return 0;
  }
  if (has_metatable(L, idx, array_mt)) {
    const cjl_array *a = lua_touserdata(L, idx);
    cujit_buffer *b = cjl_array_buffer(a);
    if (!b) arg_error(L, k, i, "device array has been freed");
    if (!dtype_fits(p, a->dtype))
      arg_error(L, k, i, array_mismatch(L, p, a->dtype, "device array"));
    arg->kind = CUJIT_ARG_BUFFER;
    arg->v.buffer = b;
    return 0;
  }
  if (lua_isnil(L, idx)) { /* a null pointer: the engine refuses it where the nonnull option says */
    *arg = (cujit_arg){.kind = CUJIT_ARG_BUFFER, .v.buffer = NULL};
    return 0;
  }
  if (has_metatable(L, idx, lua_touserdata(L, HOST_MT)) || lua_istable(L, idx)) return 1;
  return arg_error(L, k, i,
                   lua_pushfstring(L,
                                   "cujit.device_array expected (or a host array or "
                                   "table, copied in and out), got %s",
                                   luaL_getmetafield(L, idx, "__name") == LUA_TSTRING
                                       ? lua_tostring(L, -1)
                                       : luaL_typename(L, idx)));
}

static cujit_status launch(cjl_launcher *ln, cujit_stream *stream, const cujit_arg *args,
                           size_t nargs) {
  ln->kernel->state->launches++;
  if (ln->forall) return cujit_launch_n(ln->kernel->kernel, ln->n, stream, args, nargs);
  cujit_launch_config c = ln->config;
  c.stream = stream;
  if (ln->cooperative) return cujit_launch_cooperative(ln->kernel->kernel, &c, args, nargs);
  return cujit_launch(ln->kernel->kernel, &c, args, nargs);
}

/* Raises the engine's message for a failed launch, in the words of the checks made here when it
** is about one argument. */
static int launch_failed(lua_State *L, const cjl_kernel *k) {
  const char *why;
  int n = cjl_failed_argument(k->state->engine, cjl_kernel_name(k), &why);
  if (n >= 1 && n <= k->nparams) return arg_error(L, k, n - 1, why);
  return cjl_error(L, k->state->engine);
}

/* A host array or table argument copied through a temporary device array. */
typedef struct copy_slot {
  int param;
  int src;         /* stack index of the argument */
  cjl_array *temp; /* the device copy (a Lua value on the stack, so collected on error) */
  void *host;      /* the host elements (the host array's, or a scratch copy of the table) */
  cujit_dtype dtype;
  size_t count;
} copy_slot;

/* Checks a host array or table argument and gets its elements (reading a table into a scratch
** block), before anything is allocated on the device. */
static void prepare_copy(lua_State *L, const cjl_kernel *k, copy_slot *slot) {
  const cjl_param *p = &k->params[slot->param];
  int i = slot->param, idx = slot->src;
  luaL_checkstack(L, 8, "cujit: too many host arrays in one launch");
  cjl_host *h = cjl_test_host(L, idx);
  if (h) {
    if (!cjl_host_data(h)) arg_error(L, k, i, "host array has been freed");
    if (!dtype_fits(p, h->dtype)) arg_error(L, k, i, array_mismatch(L, p, h->dtype, "host array"));
    slot->dtype = h->dtype, slot->count = h->size, slot->host = cjl_host_data(h);
    return;
  }
  size_t shape[CJL_MAX_DIMS];
  int ndim;
  if (p->type_var >= 0 || p->dtype == CUJIT_DTYPE_NONE)
    arg_error(L, k, i,
              lua_pushfstring(L,
                              "a Lua table has no element type for '%s'; pass a "
                              "typed array, e.g. cuda.array(t, 'f32')",
                              p->name));
  const char *why = cjl_table_shape(L, idx, shape, &ndim);
  if (!why && ndim != 1) why = "a flat table (1-D) expected; use cuda.array for 2-D or 3-D";
  if (why) arg_error(L, k, i, why);
  slot->dtype = p->dtype, slot->count = shape[0];
  slot->host = lua_newuserdatauv(L, slot->count * cjl_elem_size(p->dtype), 0);
  why = cjl_table_read(L, idx, p->dtype, 1, shape, slot->host);
  if (why) arg_error(L, k, i, why);
}

/* Makes the device copy (a Lua value on the stack, so collected if an error intervenes). */
static void upload_copy(lua_State *L, const cjl_kernel *k, copy_slot *slot, cujit_arg *arg) {
  slot->temp = cjl_new_array(L, slot->dtype, 1, &slot->count);
  if (cujit_memcpy_htod(slot->temp->buffer, 0, slot->host, slot->count * cjl_elem_size(slot->dtype),
                        NULL) != CUJIT_OK)
    cjl_error(L, k->state->engine);
  arg->kind = CUJIT_ARG_BUFFER;
  arg->v.buffer = slot->temp->buffer;
}

static void copy_out(lua_State *L, const copy_slot *slot) {
  size_t esize = cjl_elem_size(slot->dtype);
  if (lua_istable(L, slot->src)) {
    for (size_t j = 0; j < slot->count; j++) {
      cjl_push_element(L, slot->dtype, (const char *)slot->host + j * esize);
      lua_rawseti(L, slot->src, (lua_Integer)j + 1);
    }
  }
}

static void release_copies(copy_slot *slots, int n) {
  for (int j = 0; j < n; j++) cjl_release_array(slots[j].temp);
}

static int have_device(const cjl_kernel *k) {
  cujit_device *dev;
  return cujit_current_device(k->state->engine, &dev) == CUJIT_OK;
}

/* The launch with host arrays or tables among the arguments: copied in, launched, waited for,
** copied back unless the parameter is const, as Numba does. */
static int launch_with_copies(lua_State *L, cjl_launcher *ln, cujit_stream *stream, cujit_arg *args,
                              int nargs) {
  const cjl_kernel *k = ln->kernel;
  copy_slot slots[CJL_MAX_ARGS];
  int n = 0;
  for (int i = 0; i < nargs; i++) {
    if (k->params[i].kind != CUJIT_PARAM_POINTER || cjl_test_array(L, i + 2) || lua_isnil(L, i + 2))
      continue;
    slots[n] = (copy_slot){.param = i, .src = i + 2};
    prepare_copy(L, k, &slots[n++]);
  }
  if (!stream && !cujit_kernel_is_generic(k->kernel) && !have_device(k)) {
    /* Nothing can be copied, and the launch cannot run. The engine checks the arguments before
    ** it looks for a device, so it is asked to, with placeholders for the copies (which it never
    ** uses, having no device): a mistake in them is reported as such, not as the missing GPU. */
    for (int j = 0; j < n; j++)
      args[slots[j].param] = (cujit_arg){.kind = CUJIT_ARG_DEVPTR, .v.devptr = 0};
    launch(ln, NULL, args, (size_t)nargs);
    return launch_failed(L, k);
  }
  for (int j = 0; j < n; j++) upload_copy(L, k, &slots[j], &args[slots[j].param]);
  cujit_status status = launch(ln, stream, args, (size_t)nargs);
  if (status == CUJIT_OK)
    status = stream ? cujit_stream_synchronize(stream)
                    : cujit_device_synchronize(cujit_buffer_device(slots[0].temp->buffer));
  for (int j = 0; j < n && status == CUJIT_OK; j++) {
    if (k->params[slots[j].param].is_const) continue;
    status = cujit_memcpy_dtoh(slots[j].host, slots[j].temp->buffer, 0,
                               slots[j].count * cjl_elem_size(slots[j].dtype), NULL);
    if (status == CUJIT_OK) copy_out(L, &slots[j]);
  }
  release_copies(slots, n);
  if (status != CUJIT_OK) return launch_failed(L, k);
  return 0;
}

/* A launch recorded into a graph: its kernel and device arrays stay alive as long as the
** capturing stream, from which lgraph.c hands them to the graph (the launcher's user values are
** the kernel and the stream). */
static void keep_captured(lua_State *L, int nargs) {
  lua_getiuservalue(L, 1, 2);
  int stream_idx = lua_gettop(L);
  lua_getiuservalue(L, 1, 1);
  cjl_stream_keep(L, stream_idx, -1);
  for (int i = 0; i < nargs; i++)
    if (cjl_test_array(L, i + 2)) cjl_stream_keep(L, stream_idx, i + 2);
  lua_pop(L, 2);
}

/* launcher(args...): the launch path. */
static int launcher_call(lua_State *L) {
  int nargs = lua_gettop(L) - 1;
  if (!self_has_metatable(L, lua_touserdata(L, LAUNCHER_MT)))
    return luaL_error(L, "cujit.launcher expected");
  cjl_launcher *ln = lua_touserdata(L, 1);
  cjl_kernel *k = ln->kernel;
  if (!cjl_kernel_alive(k)) return luaL_error(L, "kernel has been freed");
  if (nargs != k->nparams) return count_error(L, k, nargs);
  cujit_arg args[CJL_MAX_ARGS];
  int copies = 0;
  const void *array_mt = lua_touserdata(L, ARRAY_MT);
  for (int i = 0; i < nargs; i++) copies |= convert_arg(L, k, i, i + 2, array_mt, &args[i]);
  cujit_stream *stream = NULL;
  if (ln->stream && !(stream = ln->stream->stream))
    return luaL_error(L, "the stream of this launch of '%s' has been freed", cjl_kernel_name(k));
  if (copies && ln->stream && ln->stream->capturing)
    return luaL_error(L,
                      "'%s' cannot be captured into a graph with a host array or table argument: "
                      "it is copied in and back around each launch, which a replay cannot do; "
                      "pass device arrays (cuda.to_device)",
                      cjl_kernel_name(k));
  if (copies) return launch_with_copies(L, ln, stream, args, nargs);
  if (launch(ln, stream, args, (size_t)nargs) != CUJIT_OK) return launch_failed(L, k);
  if (ln->stream && ln->stream->capturing) keep_captured(L, nargs);
  return 0;
}

static int launcher_tostring(lua_State *L) {
  cjl_launcher *ln = luaL_checkudata(L, 1, CJL_LAUNCHER);
  const cujit_launch_config *c = &ln->config;
  if (ln->forall)
    lua_pushfstring(L, "cujit.launcher %s forall(%I)", cjl_kernel_name(ln->kernel),
                    (lua_Integer)ln->n);
  else
    lua_pushfstring(L, "cujit.launcher %s grid {%d,%d,%d} block {%d,%d,%d} shared %d%s",
                    cjl_kernel_name(ln->kernel), (int)c->grid[0], (int)c->grid[1], (int)c->grid[2],
                    (int)c->block[0], (int)c->block[1], (int)c->block[2], (int)c->shared_bytes,
                    ln->stream ? " on a stream" : "");
  return 1;
}

/* ---------------------------------------------------------------------------------------------
** Opening
** ------------------------------------------------------------------------------------------- */

static const luaL_Reg kernel_methods[] = {{"forall", kernel_forall}, {NULL, NULL}};

void cjl_open_launchers(lua_State *L) {
  luaL_newmetatable(L, CJL_LAUNCHER);
  push_metatable_address(L, CJL_LAUNCHER);
  push_metatable_address(L, CJL_ARRAY);
  push_metatable_address(L, CJL_HOST);
  lua_pushcclosure(L, launcher_call, 3);
  lua_setfield(L, -2, "__call");
  lua_pushcfunction(L, launcher_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  /* Kernels: k[cfg] gives a launcher, k.name a method. The __index closure keeps the methods
  ** table and the metatable (to recognise kernels without a registry lookup). */
  cjl_add_methods(L, CJL_KERNEL, kernel_methods);
  luaL_getmetatable(L, CJL_KERNEL);
  lua_getfield(L, -1, "__index");
  push_metatable_address(L, CJL_KERNEL);
  lua_pushcclosure(L, kernel_index, 2);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}
