/*
** cache.h -- the memory + disk cache of compiled code, keyed by a hash of everything that reaches
** the compiler. Entries are written to a temporary file and renamed into place; each carries a
** verified header; a bad entry is a miss, removed with a warning. The disk part is bounded by
** CUJIT_CACHE_MAX and evicts least recently used entries. Internal.
*/
#ifndef CUJIT_CACHE_H
#define CUJIT_CACHE_H

#include "base.h"

#include <stdint.h>

typedef struct cj_cache_key {
  uint8_t bytes[16]; /* XXH3-128 */
} cj_cache_key;

/* What is stored for a key. */
typedef struct cj_cache_entry {
  char *ptx;      /* NUL-terminated */
  size_t ptx_len; /* without the NUL */
  void *cubin;
  size_t cubin_len;
  char *log;         /* compile log, may be "" */
  int nvrtc_version; /* of the NVRTC that built it (major*1000 + minor*10) */
} cj_cache_entry;

/* The layout of an entry file, <hex key>.cjc: a 64-byte header of little-endian fields, then the
** PTX, the CUBIN and the log. The NVRTC version is kept in the entry rather than in the key, so
** that a hit never has to open NVRTC (5-140 ms) to learn it; the compile layer treats an entry
** from another NVRTC as a miss whenever NVRTC is open. */
#define CJ_CACHE_SCHEMA 1
#define CJ_CACHE_MAGIC "CUJITCC"
#define CJ_CACHE_HEADER_BYTES 64

/* Opens the cache from the environment (CUJIT_CACHE, CUJIT_CACHE_DIR, XDG_CACHE_HOME, HOME,
** CUJIT_CACHE_MAX). Never fails: an unusable directory gives a memory-only cache and one warning.
** Returns NULL only when out of memory. */
cj_cache *cj_cache_open(cujit_engine *engine);
void cj_cache_close(cj_cache *cache);

/* Hash of the parts of a key, fed in order. */
typedef struct cj_key_builder cj_key_builder;
cj_key_builder *cj_key_begin(void);
void cj_key_add(cj_key_builder *kb, const void *data, size_t len); /* also adds len, so parts
                                                                     cannot run together */
void cj_key_add_str(cj_key_builder *kb, const char *s);
cj_cache_key cj_key_end(cj_key_builder *kb); /* frees kb */

/* 1 and a filled entry (owned by the caller, free with cj_cache_entry_free) on a hit in memory or
** on disk; 0 on a miss. */
int cj_cache_get(cj_cache *cache, const cj_cache_key *key, cj_cache_entry *out);
/* Stores an entry in memory and (when enabled) on disk. Failures to write are warnings. */
void cj_cache_put(cj_cache *cache, const cj_cache_key *key, const cj_cache_entry *entry);
void cj_cache_entry_free(cj_cache_entry *entry);

const char *cj_cache_dir_path(const cj_cache *cache);
void cj_cache_stats(cj_cache *cache, cujit_cache_stats *stats);
cujit_status cj_cache_clear(cj_cache *cache);

#endif
