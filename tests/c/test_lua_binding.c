/*
** test_lua_binding.c -- the C side of the Lua binding: a program's own Lua state sharing the
** program's engine (cujit_lua_open), buffers made in C handed to Lua (cujit_lua_push_buffer),
** the lifetimes of both when the state closes, and DLPack tensors made in C imported by
** cuda.from_dlpack (their shape, their deleter run once, a refusal leaving them to the caller).
*/
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cujit_dlpack.h"
#include "cujit_lua.h"
#include "gpu.h"
#include "scratch.h"

int luaopen_cujit(lua_State *L);

static cujit_engine *engine;
static lua_State *L;

static void find_nvrtc(void) {
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
}

static void setup(void) {
  find_nvrtc();
  if (!getenv("CUJIT_CACHE_DIR")) setenv("CUJIT_CACHE_DIR", cj_scratch_make("lua-binding"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  L = luaL_newstate();
  cr_assert_not_null(L);
  luaL_openlibs(L);
}

static void teardown(void) {
  if (L) lua_close(L);
  cujit_close(engine);
  cj_scratch_remove();
}

/* Runs a chunk; returns NULL on success, else the error message (valid until the next call). */
static const char *run(const char *code) {
  static char msg[2048];
  if (luaL_dostring(L, code) == LUA_OK) {
    lua_settop(L, 0);
    return NULL;
  }
  snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1));
  lua_settop(L, 0);
  return msg;
}

static void need_nvrtc(void) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
}

static int open_other_engine(lua_State *S) {
  return cujit_lua_open(S, (cujit_engine *)lua_touserdata(S, 1));
}

static int push_buffer_early(lua_State *S) {
  return cujit_lua_push_buffer(S, (cujit_buffer *)lua_touserdata(S, 1));
}

TestSuite(lua_binding, .init = setup, .fini = teardown);

Test(lua_binding, open_leaves_the_module_and_makes_require_work) {
  cr_assert_eq(cujit_lua_open(L, engine), 1);
  cr_assert(lua_istable(L, -1), "the module is left on the stack");
  lua_setglobal(L, "from_c");
  const char *err = run("local cuda = require 'cujit'\n"
                        "assert(cuda == from_c, 'require gives the same table')\n"
                        "assert(type(cuda.jit) == 'function')\n"
                        "assert(cuda.version().cujit == '" CUJIT_VERSION_STRING "')\n");
  cr_assert_null(err, "%s", err);
}

Test(lua_binding, open_twice_with_the_same_engine_is_fine) {
  cr_assert_eq(cujit_lua_open(L, engine), 1);
  cr_assert_eq(cujit_lua_open(L, engine), 1);
  cr_assert(lua_rawequal(L, -1, -2), "the same module both times");
}

Test(lua_binding, a_second_engine_is_refused) {
  cujit_engine *other;
  cr_assert_eq(cujit_open(&other), CUJIT_OK);
  cr_assert_eq(cujit_lua_open(L, engine), 1);
  lua_pushcfunction(L, open_other_engine);
  lua_pushlightuserdata(L, other);
  cr_assert_neq(lua_pcall(L, 1, 1, 0), LUA_OK);
  cr_assert(strstr(lua_tostring(L, -1), "already has another cujit engine"), "%s",
            lua_tostring(L, -1));
  cujit_close(other);
}

Test(lua_binding, push_buffer_needs_the_module_first) {
  lua_pushcfunction(L, push_buffer_early);
  lua_pushlightuserdata(L, (void *)&engine); /* never dereferenced: the check comes first */
  cr_assert_neq(lua_pcall(L, 1, 1, 0), LUA_OK);
  cr_assert(strstr(lua_tostring(L, -1), "cujit_lua_open"), "%s", lua_tostring(L, -1));
}

Test(lua_binding, kernels_from_c_and_lua_share_the_engine) {
  need_nvrtc();
  cujit_compile_options opts = CUJIT_COMPILE_OPTIONS_INIT;
  opts.arch = "sm_90";
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "shared_k(float *y, int n)",
                                   "if (threadIdx.x < n) y[0] = n;", NULL, &opts, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_cache_stats before = CUJIT_CACHE_STATS_INIT, after = CUJIT_CACHE_STATS_INIT;
  cr_assert_eq(cujit_cache_stats_get(engine, &before), CUJIT_OK);
  cujit_lua_open(L, engine);
  const char *err = run("local cuda = require 'cujit'\n"
                        "local k = cuda.jit('shared_k(float *y, int n)', "
                        "'if (threadIdx.x < n) y[0] = n;', {arch = 'sm_90'})\n"
                        "assert(k:compile_info().from_cache, 'a hit in the shared engine')\n");
  cr_assert_null(err, "%s", err);
  cr_assert_eq(cujit_cache_stats_get(engine, &after), CUJIT_OK);
  cr_assert_eq(after.memory_hits, before.memory_hits + 1,
               "the Lua define hit the C engine's cache");
  cujit_kernel_free(k);
}

Test(lua_binding, closing_the_state_leaves_a_shared_engine_alone) {
  need_nvrtc();
  cujit_lua_open(L, engine);
  const char *err = run("local cuda = require 'cujit'\n"
                        "K = cuda.jit('left(int *y)', 'y[0] = 1;', {arch = 'sm_90'})\n"
                        "H = cuda.array({1, 2, 3}, 'f32')\n");
  cr_assert_null(err, "%s", err);
  lua_close(L);
  L = NULL;
  cujit_compile_options opts = CUJIT_COMPILE_OPTIONS_INIT;
  opts.arch = "sm_90";
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "left(int *y)", "y[0] = 1;", NULL, &opts, &k), CUJIT_OK,
               "the engine still works: %s", cujit_errmsg(engine));
  cujit_kernel_free(k);
}

/* Bytes the C heap hands out now (glibc): what a state that closes its engine must give back. */
static size_t heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

/* One Lua state that opens and owns its engine, with objects of every kind alive at its close. */
static void owned_engine_round(void) {
  lua_State *S = luaL_newstate();
  cr_assert_not_null(S);
  luaL_openlibs(S);
  luaL_requiref(S, "cujit", luaopen_cujit, 0);
  lua_pop(S, 1);
  const char *chunk =
      "local cuda = require 'cujit'\n"
      "A = cuda.array({1, 2, 3}, 'f64')\n"
      "H = cuda.host_array(1000, 'f32')\n"
      "F = cuda.device_function('__device__ int one() { return 1; }')\n"
      "K = cuda.jit('owned(int *y)', 'y[0] = one();', {arch = 'sm_90', uses = {F}})\n"
      "P = cuda.source('extern \"C\" __global__ void p(int *y) { y[0] = 2; }', "
      "{arch = 'sm_90'})\n"
      "G = cuda.jit('g(T *y)', 'y[0] = 1;', {arch = 'sm_90'})\n";
  cr_assert_eq(luaL_dostring(S, chunk), LUA_OK, "%s", lua_tostring(S, -1));
  lua_close(S);
}

Test(lua_binding, an_owned_engine_closes_with_its_state) {
  /* A plain require: the state opens and owns its engine; objects still alive at close must be
  ** released once, whatever order the finalizers run in (a second release would be a double free,
  ** which glibc aborts on), and the engine with them: the heap is back where it was. The first
  ** round pays what stays for the process (NVRTC's and the loader's one-time allocations). */
  need_nvrtc();
  owned_engine_round();
  size_t before = heap_in_use();
  for (int i = 0; i < 3; i++) owned_engine_round();
  size_t after = heap_in_use();
  cr_assert_leq(after, before + 16384,
                "three states leaked %zu bytes: the owned engine or its objects were not freed",
                after - before);
}

Test(lua_binding, a_c_buffer_is_seen_from_lua_and_not_freed_by_it) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *buf;
  cr_assert_eq(cujit_buffer_alloc(engine, 16 * sizeof(float), CUJIT_F32, &buf), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_lua_open(L, engine);
  lua_pop(L, 1);
  cr_assert_eq(cujit_lua_push_buffer(L, buf), 1);
  lua_setglobal(L, "buf");
  unsigned seed = 12345;
  float want[16];
  char code[1024];
  int used = snprintf(code, sizeof code,
                      "local cuda = require 'cujit'\n"
                      "assert(#buf == 16 and buf.dtype == 'f32')\n"
                      "buf:copy_from({");
  for (int i = 0; i < 16; i++) {
    want[i] = cj_test_randf(&seed);
    used +=
        snprintf(code + used, sizeof code - (size_t)used, "%s%.9g", i ? "," : "", (double)want[i]);
  }
  snprintf(code + used, sizeof code - (size_t)used,
           "})\nbuf:free()\nbuf = nil\ncollectgarbage()\n");
  const char *err = run(code);
  cr_assert_null(err, "%s", err);
  float got[16];
  cr_assert_eq(cujit_memcpy_dtoh(got, buf, 0, sizeof got, NULL), CUJIT_OK,
               "the C buffer is still alive after Lua let go: %s", cujit_errmsg(engine));
  for (int i = 0; i < 16; i++) cr_assert_eq(got[i], want[i], "element %d", i);
  cujit_buffer_free(buf);
}

/* --- DLPack tensors made in C, imported by Lua (ldlpack.c) ------------------------------------ */

typedef struct lua_tensor {
  DLManagedTensorVersioned m;
  int64_t shape[4];
  int deleted;
} lua_tensor;

static void lua_tensor_deleter(DLManagedTensorVersioned *self) {
  ((lua_tensor *)self->manager_ctx)->deleted++;
}

/* A float tensor of `ndim` dimensions over `data`, on the CPU (the engine's CPU device). */
static void make_lua_tensor(lua_tensor *t, float *data, int ndim, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  t->m.version.major = 1;
  t->m.manager_ctx = t;
  t->m.deleter = lua_tensor_deleter;
  t->m.dl_tensor.data = data;
  t->m.dl_tensor.device.device_type = kDLCPU;
  t->m.dl_tensor.ndim = ndim;
  t->m.dl_tensor.dtype.code = kDLFloat, t->m.dl_tensor.dtype.bits = 32;
  t->m.dl_tensor.dtype.lanes = 1;
  memcpy(t->shape, shape, (size_t)ndim * sizeof *shape);
  t->m.dl_tensor.shape = t->shape;
}

Test(lua_binding, dlpack_tensors_from_c_become_arrays_of_their_shape) {
  static float data[24];
  lua_tensor t;
  cujit_lua_open(L, engine);
  lua_pop(L, 1);
  make_lua_tensor(&t, data, 4, (const int64_t[]){2, 3, 2, 2});
  lua_pushlightuserdata(L, &t.m);
  lua_setglobal(L, "T");
  const char *err = run("require('cujit').from_dlpack(T)");
  cr_assert(err && strstr(err, "cuda.from_dlpack: the tensor has 4 dimensions and a Lua array at "
                               "most 3; reshape it first (the tensor is still yours)"),
            "%s", err ? err : "accepted");
  cr_assert_eq(t.deleted, 0, "a refused tensor stays the caller's");
  make_lua_tensor(&t, data, 2, (const int64_t[]){4, 6});
  lua_pushlightuserdata(L, &t.m);
  lua_setglobal(L, "T");
  lua_pushinteger(L, (lua_Integer)(uintptr_t)data);
  lua_setglobal(L, "ADDR");
  err = run("local a = require('cujit').from_dlpack(T)\n"
            "assert(a.ndim == 2 and a.shape[1] == 4 and a.shape[2] == 6, 'the shape')\n"
            "assert(a.dtype == 'f32' and a:devptr() == ADDR, 'the memory, no copy')\n"
            "a:free()\n");
  cr_assert_null(err, "%s", err);
  cr_assert_eq(t.deleted, 1, "a:free() runs the deleter once: %d", t.deleted);
  make_lua_tensor(&t, data, 0, (const int64_t[]){0});
  lua_pushlightuserdata(L, &t.m);
  lua_setglobal(L, "T");
  err = run("local a = require('cujit').from_dlpack(T)\n"
            "assert(a.ndim == 1 and a.size == 1, 'a scalar is one element')\n"
            "a = nil\ncollectgarbage()\ncollectgarbage()\n");
  cr_assert_null(err, "%s", err);
  cr_assert_eq(t.deleted, 1, "collection runs the deleter once: %d", t.deleted);
}
