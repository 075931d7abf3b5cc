/*
** embed.c -- a C program with its own Lua state in which cujit is available, sharing the
** program's engine: a buffer made in C is handed to a Lua script (script.lua), which defines a
** kernel and launches it on that buffer; C then checks the result.
**
**   usage: example_embed [script.lua]
**
** It runs on the current device (CUJIT_DEVICE, else GPU 0), and with no GPU on the CPU device
** (docs/cpu.md), saying so on its "runs on:" line; CUJIT_EXAMPLE_NO_CPU=1 skips instead (exit 77,
** as test runners count it) and CUJIT_REQUIRE_GPU=1 fails. With CUJIT_EXAMPLE_COMPILE_ONLY=1 the
** script only compiles its kernel, for sm_90, which needs NVRTC but no GPU.
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

/* 1 when there is a device to run on, made current: the current one, else (no GPU) the CPU device;
** 0 to stop with *rc. */
static int choose_device(cujit_engine *e, int *rc) {
  cujit_device *dev;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  if (cujit_current_device(e, &dev) == CUJIT_OK && cujit_device_info_get(dev, &info) == CUJIT_OK) {
    printf(info.ordinal == CUJIT_DEVICE_CPU ? "runs on: CPU device (%s)\n" : "runs on: GPU (%s)\n",
           info.name);
    return 1;
  }
  char why[512];
  snprintf(why, sizeof why, "%s", cujit_errmsg(e));
  why[strcspn(why, "\n")] = '\0'; /* the reason, without the advice that follows it */
  if (is_set("CUJIT_REQUIRE_GPU")) {
    fprintf(stderr, "embed: CUJIT_REQUIRE_GPU=1 but there is no GPU: %s\n", why);
    *rc = 1;
  } else if (is_set("CUJIT_EXAMPLE_NO_CPU")) {
    printf("no GPU (%s): skipped\n", why);
    *rc = 77;
  } else if (cujit_set_device(e, CUJIT_DEVICE_CPU) != CUJIT_OK) {
    fprintf(stderr, "embed: %s\n", cujit_errmsg(e));
    *rc = 1;
  } else {
    printf("runs on: CPU device (no GPU: %s)\n", why);
  }
  return *rc == 0;
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

  int rc = 0;
  int run = !is_set("CUJIT_EXAMPLE_COMPILE_ONLY") && choose_device(e, &rc);
  if (rc != 0) {
    lua_close(L);
    cujit_close(e);
    return rc;
  }
  cujit_buffer *buf = NULL;
  float *before = malloc(N * sizeof *before);
  if (!before) return 1;
  for (int i = 0; i < N; i++) before[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  if (run) {
    if (cujit_buffer_alloc(e, N * sizeof(float), CUJIT_F32, &buf) != CUJIT_OK ||
        cujit_memcpy_htod(buf, 0, before, N * sizeof(float), NULL) != CUJIT_OK) {
      fprintf(stderr, "embed: %s\n", cujit_errmsg(e));
      return 1;
    }
    cujit_lua_push_buffer(L, buf); /* a Lua device array that C keeps owning */
    lua_setglobal(L, "data");
  }

  rc = run_script(L, script);
  if (rc == 0 && run) {
    int ok_scale, ok_shift;
    float scale = (float)lua_tonumberx(L, -2, &ok_scale),
          shift = (float)lua_tonumberx(L, -1, &ok_shift);
    if (!ok_scale || !ok_shift) fprintf(stderr, "embed: the script must return scale, shift\n");
    rc = ok_scale && ok_shift ? check(e, buf, before, scale, shift) : 1;
  }

  lua_close(L);           /* the state goes first: it does not close the shared engine */
  cujit_buffer_free(buf); /* C made the buffer, C frees it */
  cujit_close(e);
  free(before);
  return rc;
}
