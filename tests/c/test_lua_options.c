/*
** test_lua_options.c -- the Lua options table and the docs against the one table of compile
** options (compile/options.h): every option, set alone by its Lua name to its row's example, is
** taken by cuda.source and compiles anew (its row's key holds it); cuda.options lists every one;
** docs/lua.md's options table and docs/cli.md's `cujit compile` table name every option and
** flag, and no other. NVRTC compiles for sm_90 (no GPU needed).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "compile/options.h"
#include "cujit_lua.h"
#include "scratch.h"

static cujit_engine *engine;
static lua_State *L;

static void setup(void) {
  const char *lib = "/usr/local/cuda/lib64/libnvrtc.so.13";
  if (!getenv("CUJIT_NVRTC") && access(lib, R_OK) == 0) setenv("CUJIT_NVRTC", lib, 1);
  unsetenv("CUJIT_CACHE");
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("lua-options"), 1);
  cj_scratch_example_link(cj_scratch); /* the link option's example names it, relative */
  cr_assert_eq(chdir(cj_scratch), 0);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  L = luaL_newstate();
  luaL_openlibs(L);
  cujit_lua_open(L, engine);
  lua_setglobal(L, "cuda");
}

static void teardown(void) {
  lua_close(L);
  cujit_close(engine);
  cj_scratch_remove();
}

TestSuite(lua_options, .init = setup, .fini = teardown, .timeout = 300);

static const char *source =
    "template <typename T> __global__ void tstore(T *y) { y[threadIdx.x] = T(5); }\n"
    "extern \"C\" __global__ void store(int *y) { y[threadIdx.x] = 7; }\n";

/* cuda.source(source, opts) with opts = {arch = "sm_90"} plus `row` set to its example (none:
** the baseline); returns tostring of the program ("... compiled in ..." / "... cache hit ..."). */
static const char *compile(const cj_option *row, char *out, size_t len) {
  lua_getglobal(L, "cuda");
  lua_getfield(L, -1, "source");
  lua_pushstring(L, source);
  lua_newtable(L);
  lua_pushstring(L, "sm_90");
  lua_setfield(L, -2, "arch");
  if (row) {
    if (row->info.kind == CUJIT_OPTION_SWITCH)
      lua_pushboolean(L, 1);
    else if (row->info.kind == CUJIT_OPTION_TEXT)
      lua_pushstring(L, row->example);
    else {
      lua_newtable(L);
      lua_pushstring(L, row->example);
      lua_rawseti(L, -2, 1);
    }
    lua_setfield(L, -2, row->info.lua_name);
  }
  int rc = lua_pcall(L, 2, 1, 0);
  snprintf(out, len, "%s", rc == LUA_OK ? luaL_tolstring(L, -1, NULL) : lua_tostring(L, -1));
  lua_settop(L, 0);
  cr_assert_eq(rc, LUA_OK, "option '%s': %s", row ? row->info.lua_name : "(none)", out);
  return out;
}

Test(lua_options, every_option_is_taken_by_its_lua_name) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  char got[1024];
  cr_expect_not_null(strstr(compile(NULL, got, sizeof got), "compiled in"), "%s", got);
  cr_expect_not_null(strstr(compile(NULL, got, sizeof got), "cache hit"), "%s", got);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    compile(row, got, sizeof got);
    if (row->key == CJ_KEY_LINE || row->key == CJ_KEY_TARGET)
      cr_expect_not_null(strstr(got, "compiled in"),
                         "option '%s' was handed the program compiled without it: %s",
                         row->info.lua_name, got);
  }
}

Test(lua_options, cuda_options_lists_every_option) {
  cr_assert_eq(luaL_dostring(L, "return table.concat(cuda.options, ' ')"), LUA_OK);
  char names[1024];
  snprintf(names, sizeof names, " %s ", lua_tostring(L, -1));
  for (size_t r = 0; r < cj_option_count; r++) {
    char want[80];
    snprintf(want, sizeof want, " %s ", cj_options[r].info.lua_name);
    cr_expect_not_null(strstr(names, want), "cuda.options lacks '%s': %s",
                       cj_options[r].info.lua_name, names);
  }
}

/* The lines of the Markdown table that follows `heading` in docs/<page>, joined. */
static char *doc_table(const char *page, const char *heading) {
  char path[1024];
  snprintf(path, sizeof path, "%s/docs/%s", getenv("CUJIT_SOURCE_DIR"), page);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "cannot read %s (CUJIT_SOURCE_DIR)", path);
  static char text[1 << 20], table[1 << 16];
  text[fread(text, 1, sizeof text - 1, f)] = '\0';
  fclose(f);
  char *at = strstr(text, heading);
  cr_assert_not_null(at, "%s has no '%s'", page, heading);
  at = strstr(at, "\n|");
  cr_assert_not_null(at, "no table after '%s' in %s", heading, page);
  size_t used = 0;
  table[0] = '\0';
  for (char *line = at + 1; *line == '|'; line = strchr(line, '\n') + 1) {
    size_t n = strcspn(line, "\n");
    used += (size_t)snprintf(table + used, sizeof table - used, "%.*s\n", (int)n, line);
    if (!line[n]) break;
  }
  return table;
}

/* Every row's first column's `name = ...` / `flag` entries. */
static int documented(const char *table, const char *open, const char *name, const char *close) {
  char want[96];
  snprintf(want, sizeof want, "%s%s%s", open, name, close);
  return strstr(table, want) != NULL;
}

Test(lua_options, the_docs_tables_name_every_option) {
  const char *lua = doc_table("lua.md", "**Options**");
  for (size_t r = 0; r < cj_option_count; r++)
    cr_expect(documented(lua, "`", cj_options[r].info.lua_name, " ="),
              "docs/lua.md's options table does not give '%s'", cj_options[r].info.lua_name);
  /* And names nothing the binding does not take. */
  for (const char *p = strstr(lua, "`"); p; p = strstr(p + 1, "`")) {
    size_t n = strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_");
    if (n == 0 || strncmp(p + 1 + n, " =", 2) != 0) continue;
    char code[160];
    snprintf(code, sizeof code,
             "for _, o in ipairs(cuda.options) do if o == '%.*s' then return "
             "true end end return false",
             (int)n, p + 1);
    cr_assert_eq(luaL_dostring(L, code), LUA_OK);
    cr_expect(lua_toboolean(L, -1), "docs/lua.md gives '%.*s', which the binding does not take",
              (int)n, p + 1);
    lua_settop(L, 0);
  }
  const char *cli = doc_table("cli.md", "### `cujit compile FILE.cu`");
  for (size_t r = 0; r < cj_option_count; r++)
    if (cj_options[r].info.cli_flag)
      cr_expect(documented(cli, "`", cj_options[r].info.cli_flag, ""),
                "docs/cli.md's compile table does not give '%s'", cj_options[r].info.cli_flag);
}
