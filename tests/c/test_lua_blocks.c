/*
** test_lua_blocks.c -- the `cujit` command's cache of small freed blocks in front of its Lua
** state's allocator (engine/cli/lua_blocks.c), against a counting allocator under it: a freed
** small block comes back for a request of its exact size without a call below, what the cache
** does not take goes below unchanged, the cache never holds more than its limit, Lua runs right
** on top of it, and every block goes back below when the state and the cache are freed.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cli.h"

/* The allocator under the cache: realloc and free, counted. */
typedef struct counts {
  size_t calls; /* every call */
  size_t live_blocks;
  size_t live_bytes;
  int refuse_until_free; /* refuses every request for memory until a block is freed */
} counts;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  counts *c = ud;
  c->calls++;
  if (ptr) c->live_blocks--, c->live_bytes -= osize;
  if (nsize == 0) {
    if (ptr) c->refuse_until_free = 0;
    free(ptr);
    return NULL;
  }
  if (c->refuse_until_free) {
    if (ptr) c->live_blocks++, c->live_bytes += osize;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    c->live_blocks++, c->live_bytes += nsize;
  else if (ptr)
    c->live_blocks++, c->live_bytes += osize; /* the old block stays */
  return p;
}

static counts below;
static lua_State *L;
static cli_block_cache *cache;

static void setup(void) {
  memset(&below, 0, sizeof below);
  L = lua_newstate(counting_alloc, &below);
  cr_assert_not_null(L);
  luaL_openlibs(L);
  cache = cli_block_cache_install(L);
  cr_assert_not_null(cache);
}

/* Closes the state, frees the cache: nothing may be left below. */
static void close_all(void) {
  lua_close(L);
  L = NULL;
  cli_block_cache_free(cache);
  cache = NULL;
  cr_assert_eq(below.live_blocks, 0, "%zu blocks never went back below", below.live_blocks);
  cr_assert_eq(below.live_bytes, 0, "%zu bytes never went back below", below.live_bytes);
}

static void teardown(void) {
  if (L) close_all();
}

TestSuite(lua_blocks, .init = setup, .fini = teardown);

/* The state's allocator, which is now the cache. */
static void *alloc(void *ptr, size_t osize, size_t nsize) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  return f(ud, ptr, osize, nsize);
}

Test(lua_blocks, a_freed_block_comes_back_for_its_exact_size_only) {
  void *a = alloc(NULL, LUA_TTABLE, 48);
  cr_assert_not_null(a);
  memset(a, 0xab, 48);
  size_t calls = below.calls;
  alloc(a, 48, 0);
  cr_assert_eq(below.calls, calls, "a small block freed goes to the cache, not below");
  void *b = alloc(NULL, LUA_TTABLE, 40);
  cr_assert_neq(b, a, "a block of 48 bytes is not handed out for 40");
  cr_assert_eq(below.calls, calls + 1, "the request of 40 went below");
  void *c = alloc(NULL, LUA_TTABLE, 48);
  cr_assert_eq(c, a, "the block of 48 came back for 48");
  cr_assert_eq(below.calls, calls + 1, "without a call below");
  alloc(b, 40, 0);
  alloc(c, 48, 0);
}

Test(lua_blocks, what_the_cache_does_not_take_goes_below) {
  size_t calls = below.calls;
  void *big = alloc(NULL, LUA_TSTRING, 4096);
  void *tiny = alloc(NULL, LUA_TSTRING, 4); /* smaller than the cache's link */
  cr_assert_eq(below.calls, calls + 2);
  big = alloc(big, 4096, 8192); /* a resize always goes below */
  cr_assert_not_null(big);
  cr_assert_eq(below.calls, calls + 3);
  alloc(big, 8192, 0);
  alloc(tiny, 4, 0);
  cr_assert_eq(below.calls, calls + 5, "a large or tiny block is freed below at once");
}

Test(lua_blocks, out_of_memory_below_gives_the_cached_blocks_back_and_asks_again) {
  void *a = alloc(NULL, LUA_TTABLE, 48);
  cr_assert_not_null(a);
  alloc(a, 48, 0); /* held by the cache */
  size_t live = below.live_blocks;
  below.refuse_until_free = 1;
  void *big = alloc(NULL, LUA_TSTRING, 4096);
  cr_assert_not_null(big, "refused below, asked again after the cache gave its block back");
  cr_assert_eq(below.live_blocks, live, "the cached block went below, the new one came from it");
  below.refuse_until_free = 1;
  cr_assert_null(alloc(NULL, LUA_TSTRING, 4096), "with nothing cached, a refusal stands");
  below.refuse_until_free = 0;
  alloc(big, 4096, 0);
}

Test(lua_blocks, lua_runs_right_on_it_and_the_cache_has_a_limit) {
  /* Short-lived tables of several sizes, as a launch loop makes them, with their contents checked
  ** (a block handed out twice, or of the wrong size, shows as a wrong sum or a crash). */
  const char *churn = "local total = 0\n"
                      "for i = 1, 200000 do\n"
                      "  local t = {i, i + 1, n = i % 7}\n"
                      "  local s = {tostring(i)}\n"
                      "  total = total + t[1] + t[2] + t.n + #s[1]\n"
                      "end\n"
                      "return total";
  size_t calls = below.calls;
  cr_assert_eq(luaL_dostring(L, churn), LUA_OK, "%s", lua_tostring(L, -1));
  lua_Integer want = 0;
  for (lua_Integer i = 1; i <= 200000; i++) {
    char digits[32];
    want +=
        i + (i + 1) + i % 7 + (lua_Integer)snprintf(digits, sizeof digits, "%lld", (long long)i);
  }
  cr_assert_eq(lua_tointeger(L, -1), want);
  lua_settop(L, 0);
  /* 200000 turns make 600000 small blocks or more; most come from the cache. */
  cr_assert_lt(below.calls - calls, 200000, "%zu calls below: the cache took few of them",
               below.calls - calls);
  /* 60000 live tables, then all garbage at once: far more than the limit; the cache keeps at most
  ** its limit, what Lua no longer uses past that went below. */
  cr_assert_eq(luaL_dostring(L, "local keep = {} for i = 1, 60000 do keep[i] = {i} end\n"
                                "keep = nil collectgarbage() collectgarbage()"),
               LUA_OK, "%s", lua_tostring(L, -1));
  size_t in_use = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  cr_assert_leq(below.live_bytes, in_use + 1024 * 1024, "%zu bytes below, %zu in use by Lua",
                below.live_bytes, in_use);
  close_all();
}
