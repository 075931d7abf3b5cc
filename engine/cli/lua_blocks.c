/*
** lua_blocks.c -- a cache of small freed blocks in front of the Lua state's allocator, for the
** `cujit` command's state. A Lua loop that makes a short-lived table each turn (a launch written
** k[{grid, block}](...)) frees and allocates the same few block sizes over and over, and each of
** those costs about a hundred instructions in the C library's allocator (a minor collection frees
** a thousand tables at once, more than its own small per-thread cache holds). Here a freed block
** of up to CLI_BLOCK_MAX bytes goes on a list of blocks of exactly its size and is handed out
** again for a request of exactly that size: a push and a pop. The blocks are the state's own
** allocator's (the cache is chained in front of it, never a second heap), so a block that came
** from it before the cache was installed is as good as one that came after, and what the cache
** does not take goes on to it unchanged. The cache holds at most CLI_BLOCK_CACHE_BYTES; past that
** a freed block goes back to the allocator at once, and a request the allocator refuses is asked
** again once the cache has given it everything back.
*/
#include "cli.h"

#include <stdlib.h>

enum {
  CLI_BLOCK_MAX = 128,                 /* the largest size cached: tables, closures, short arrays */
  CLI_BLOCK_CACHE_BYTES = 1024 * 1024, /* at most this much held back from the allocator */
};

/* A cached block's first bytes, while it is free. */
typedef struct free_block {
  struct free_block *next;
} free_block;

struct cli_block_cache {
  lua_Alloc next_alloc; /* the allocator in front of which the cache sits */
  void *next_ud;
  size_t cached_bytes;
  free_block *free[CLI_BLOCK_MAX + 1]; /* by exact size */
};

/* Sizes the cache takes: large enough to hold the link, small enough to be worth it. */
static int cacheable(size_t size) {
  return size >= sizeof(free_block) && size <= CLI_BLOCK_MAX;
}

/* Gives every cached block back to the allocator below. */
static void release_all(cli_block_cache *c) {
  for (size_t size = 0; size <= CLI_BLOCK_MAX; size++) {
    for (free_block *b = c->free[size], *next; b; b = next) {
      next = b->next;
      c->next_alloc(c->next_ud, b, size, 0);
    }
    c->free[size] = NULL;
  }
  c->cached_bytes = 0;
}

/* What the cache does not take, to the allocator below; a refused request is asked again once the
** cache has given back what it holds. Kept out of line (noinline), so that the cache's own paths
** in cached_alloc stay a few instructions with no frame to set up. */
__attribute__((noinline)) static void *pass_on(cli_block_cache *c, void *ptr, size_t osize,
                                               size_t nsize) {
  void *p = c->next_alloc(c->next_ud, ptr, osize, nsize);
  if (!p && nsize > 0 && c->cached_bytes > 0) {
    release_all(c);
    p = c->next_alloc(c->next_ud, ptr, osize, nsize);
  }
  return p;
}

/* The lua_Alloc contract: ptr NULL allocates nsize bytes (osize then names the kind of object);
** nsize 0 frees ptr, of osize bytes; else a resize, which never fails when shrinking. */
static void *cached_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  cli_block_cache *c = ud;
  if (!ptr && cacheable(nsize) && c->free[nsize]) {
    free_block *b = c->free[nsize];
    c->free[nsize] = b->next;
    c->cached_bytes -= nsize;
    return b;
  }
  if (ptr && nsize == 0 && cacheable(osize) && c->cached_bytes + osize <= CLI_BLOCK_CACHE_BYTES) {
    free_block *b = ptr;
    b->next = c->free[osize];
    c->free[osize] = b;
    c->cached_bytes += osize;
    return NULL;
  }
  return pass_on(c, ptr, osize, nsize);
}

cli_block_cache *cli_block_cache_install(lua_State *L) {
  cli_block_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL; /* the state works as well without; only slower */
  c->next_alloc = lua_getallocf(L, &c->next_ud);
  lua_setallocf(L, cached_alloc, c);
  return c;
}

void cli_block_cache_free(cli_block_cache *c) {
  if (!c) return;
  release_all(c);
  free(c);
}
