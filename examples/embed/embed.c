/*
** embed.c -- a C program with its own Lua state in which cujit is available, sharing the
** program's engine: a buffer made in C is handed to a Lua script (script.lua), which defines a
** kernel and launches it on that buffer; C then checks the result.
**
**   usage: example_embed [script.lua]
**
** With no GPU the script still compiles its kernel (for sm_90) and the launch is skipped, exiting
** 77 so test runners count it as skipped (1 under CUJIT_REQUIRE_GPU=1);
** CUJIT_EXAMPLE_COMPILE_ONLY=1 makes that part a test of its own.
**
** cujit_lua.h declares the two functions that hand the engine to Lua; they live in libcujit-lua.
*/
#include <cujit_lua.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 100000 };

static int is_set(const char *name) {
  const char *v = getenv(name);
  return v && *v == '1';
}

/* Runs the script; its return values are left on the stack. Returns 0 or prints the error. */
static int run_script(lua_State *L, const char *path) {
  if (luaL_loadfile(L, path) != LUA_OK || lua_pcall(L, 0, LUA_MULTRET, 0) != LUA_OK) {
    fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
    return 1;
  }
  return 0;
}

/* y[i] = scale * y[i] + shift, as the script's kernel computes it in float. */
static int check(cujit_engine *e, cujit_buffer *buf, const float *before, float scale,
                 float shift) {
  float *after = malloc(N * sizeof *after);
  if (!after || cujit_memcpy_dtoh(after, buf, 0, N * sizeof *after, NULL) != CUJIT_OK) {
    fprintf(stderr, "embed: %s\n", after ? cujit_errmsg(e) : "out of memory");
    free(after);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < N; i++) { /* the device may fuse the multiply-add: allow its last bit */
    float want = scale * before[i] + shift;
    bad += fabsf(after[i] - want) > 1e-6f * fmaxf(1.0f, fabsf(want));
  }
  printf("C sees the script's result on %d floats: %s (%d mismatches)\n", N, bad ? "FAILED" : "ok",
         bad);
  free(after);
  return bad != 0;
}

int main(int argc, char **argv) {
  const char *script = argc > 1 ? argv[1] : "script.lua";
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  lua_State *L = luaL_newstate();
  if (!L) return 1;
  luaL_openlibs(L);
  cujit_lua_open(L, e); /* `require "cujit"` in the script now gives this engine's module */
  lua_pop(L, 1);

  cujit_device *dev;
  char no_gpu[512] = "";
  int gpu = !is_set("CUJIT_EXAMPLE_COMPILE_ONLY") && cujit_current_device(e, &dev) == CUJIT_OK;
  if (!gpu) /* the message's first line: why there is no GPU */
    snprintf(no_gpu, sizeof no_gpu, "%.*s", (int)strcspn(cujit_errmsg(e), "\n"), cujit_errmsg(e));
  cujit_buffer *buf = NULL;
  float *before = malloc(N * sizeof *before);
  if (!before) return 1;
  for (int i = 0; i < N; i++) before[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  if (gpu) {
    if (cujit_buffer_alloc(e, N * sizeof(float), CUJIT_F32, &buf) != CUJIT_OK ||
        cujit_memcpy_htod(buf, 0, before, N * sizeof(float), NULL) != CUJIT_OK) {
      fprintf(stderr, "embed: %s\n", cujit_errmsg(e));
      return 1;
    }
    cujit_lua_push_buffer(L, buf); /* a Lua device array that C keeps owning */
    lua_setglobal(L, "data");
  }

  int rc = run_script(L, script);
  if (rc == 0 && gpu) {
    int ok_scale, ok_shift;
    float scale = (float)lua_tonumberx(L, -2, &ok_scale),
          shift = (float)lua_tonumberx(L, -1, &ok_shift);
    if (!ok_scale || !ok_shift) fprintf(stderr, "embed: the script must return scale, shift\n");
    rc = ok_scale && ok_shift ? check(e, buf, before, scale, shift) : 1;
  } else if (rc == 0 && !is_set("CUJIT_EXAMPLE_COMPILE_ONLY")) {
    printf("no GPU (%s): launch skipped\n", no_gpu);
    rc = is_set("CUJIT_REQUIRE_GPU") ? 1 : 77;
  }

  lua_close(L);           /* the state goes first: it does not close the shared engine */
  cujit_buffer_free(buf); /* C made the buffer, C frees it */
  cujit_close(e);
  free(before);
  return rc;
}
