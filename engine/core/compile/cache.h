/*
** cache.h -- the memory + disk cache of compiled code, keyed by a hash of everything that reaches
** the compiler. Entries are written to a temporary file and renamed into place; each carries a
** verified header; a bad entry is a miss, removed with a warning (an entry that cannot be read
** for want of memory is a miss too, with a warning that says so, and is kept). The disk part is
** bounded by CUJIT_CACHE_MAX and evicts least recently used entries. Internal.
*/
#ifndef CUJIT_CACHE_H
#define CUJIT_CACHE_H

#include "base/base.h"

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
  char *names;       /* C++ kernels' lowered names: "EXPR\0LOWERED\0" pairs, or NULL */
  size_t names_len;
} cj_cache_entry;

/* The layout of an entry file, <hex key>.cjc: a 64-byte header of little-endian fields, then the
** PTX, the CUBIN and the log (the log's length counts, after a NUL, the lowered names of C++
** kernels when there are any: entries without names read as before, so no new schema). The NVRTC
*version is kept in the entry rather than in the key, so
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

/* A filled entry (owned by the caller, free with cj_cache_entry_free) on a hit: 1 when it was held
** in memory, 2 when it was read from disk; 0 on a miss. */
int cj_cache_get(cj_cache *cache, const cj_cache_key *key, cj_cache_entry *out);
/* As cj_cache_get, but a miss is not counted: a lookup the caller follows with another, which
** counts it (program.c's direct entries). */
int cj_cache_find(cj_cache *cache, const cj_cache_key *key, cj_cache_entry *out);
/* 1, counted as a memory hit, when the entry of `key` is held in memory (nothing is copied: for
** a caller that already holds what it decodes to); 0, counted as nothing, when it is not. */
int cj_cache_touch(cj_cache *cache, const cj_cache_key *key);
/* Stores an entry in memory and (when enabled) on disk. Failures to write are warnings. */
void cj_cache_put(cj_cache *cache, const cj_cache_key *key, const cj_cache_entry *entry);
void cj_cache_entry_free(cj_cache_entry *entry);
/* The lowered name recorded for a name expression ("&k"), or NULL. */
const char *cj_cache_entry_lowered(const cj_cache_entry *entry, const char *expr);

/* The same store for text (the include manifests): <key>.cjm files beside the entries, counted
** in neither the hits nor the entries of the stats. get: malloc'd text and its length, or NULL. */
char *cj_cache_get_text(cj_cache *cache, const cj_cache_key *key, size_t *len);
void cj_cache_put_text(cj_cache *cache, const cj_cache_key *key, const char *text);

/* The entry file for `key` (header, PTX, CUBIN, log): malloc'd, its size in *len; NULL when out
** of memory. */
unsigned char *cj_cache_entry_encode(const cj_cache_key *key, const cj_cache_entry *entry,
                                     size_t *len);
/* Why the first n bytes of a file of file_size bytes do not begin an entry for `key`; NULL when
** they do (the sizes they announce add up to the file's). Read before the rest of a file. */
const char *cj_cache_entry_check_header(const unsigned char *data, size_t n,
                                        const cj_cache_key *key, uint64_t file_size);
/* An entry file's bytes read back for `key`: NULL and a filled entry, or why they are not one
** (the header as above, then the checksum), or cj_cache_entry_no_memory (this very pointer) when
** an allocation failed: then the bytes may well be an entry, and the file must be kept. The entry
** is left empty on every failure. */
extern const char cj_cache_entry_no_memory[];
const char *cj_cache_entry_parse(const unsigned char *data, size_t len, const cj_cache_key *key,
                                 cj_cache_entry *out);
/* CUJIT_CACHE_MAX's syntax: bytes with an optional K, M, G or T (and B/iB). 1 if valid. */
int cj_cache_parse_size(const char *s, uint64_t *out);
/* The disk part's settings from the environment (cache_dir.c): *max_bytes from CUJIT_CACHE_MAX
** (the default when unset or not a size), *shared from CUJIT_CACHE_SHARED, and the directory in
** dir (len bytes, 64 of them kept for an entry's name), made when missing. 1 when the disk is
** used; 0 and dir empty when not: CUJIT_CACHE=off, or after one warning saying why. */
#define CJ_CACHE_DEFAULT_MAX_BYTES ((uint64_t)1 << 30)
int cj_cache_dir_choose(cujit_engine *engine, char *dir, size_t len, uint64_t *max_bytes,
                        int *shared);

const char *cj_cache_dir_path(const cj_cache *cache);
void cj_cache_stats(cj_cache *cache, cujit_cache_stats *stats);
cujit_status cj_cache_clear(cj_cache *cache);

#endif
