/*
** cache_entry.c -- what the cache stores, byte by byte: the key builder (XXH3-128 over the parts
** of a key), and the entry file format, encoded with its header and checked and decoded when read
** back. No I/O: cache.c reads and writes the files, the fuzzer feeds the decoder directly.
*/
#include "cache.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* Entries bigger than this are not ours, whatever their header says. */
#define ENTRY_MAX_BYTES ((uint64_t)1 << 30)

/* Small parts (lengths, options, names) are gathered in `pending` and handed to XXH3 a block at a
** time: each update call has a fixed cost, and a key is mostly small parts. The hash of the bytes
** is the same however they are split. */
struct cj_key_builder {
  XXH3_state_t *state;
  size_t npending;
  unsigned char pending[512];
};

cj_key_builder *cj_key_begin(void) {
  cj_key_builder *kb = malloc(sizeof *kb);
  if (!kb) return NULL;
  kb->npending = 0;
  kb->state = XXH3_createState();
  if (!kb->state || XXH3_128bits_reset(kb->state) != XXH_OK) {
    XXH3_freeState(kb->state);
    free(kb);
    return NULL;
  }
  return kb;
}

static void key_bytes(cj_key_builder *kb, const void *data, size_t len) {
  if (kb->npending + len > sizeof kb->pending) {
    XXH3_128bits_update(kb->state, kb->pending, kb->npending);
    kb->npending = 0;
  }
  if (len > sizeof kb->pending) {
    XXH3_128bits_update(kb->state, data, len);
  } else if (len) {
    memcpy(kb->pending + kb->npending, data, len);
    kb->npending += len;
  }
}

void cj_key_add(cj_key_builder *kb, const void *data, size_t len) {
  if (!kb) return;
  uint64_t n = len;
  key_bytes(kb, &n, sizeof n);
  key_bytes(kb, data, len);
}

void cj_key_add_str(cj_key_builder *kb, const char *s) {
  if (s)
    cj_key_add(kb, s, strlen(s));
  else
    cj_key_add(kb, "\xff(null)", 7); /* differs from every string, "" included */
}

cj_cache_key cj_key_end(cj_key_builder *kb) {
  cj_cache_key key;
  memset(&key, 0, sizeof key);
  if (!kb) return key;
  if (kb->npending) XXH3_128bits_update(kb->state, kb->pending, kb->npending);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(kb->state));
  memcpy(key.bytes, c.digest, sizeof key.bytes);
  XXH3_freeState(kb->state);
  free(kb);
  return key;
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* Names are pairs of NUL-terminated strings: the last byte must end one (so every strlen stays
** inside), and there is an even count of them. */
static int names_ok(const char *p, size_t n) {
  size_t strings = 0;
  for (size_t i = 0; i < n; i++) strings += p[i] == '\0';
  return p[n - 1] == '\0' && strings % 2 == 0;
}

/* Why a header does not announce an entry for `key` of `file_size` bytes; NULL if it does. */
const char *cj_cache_entry_check_header(const unsigned char *d, size_t n, const cj_cache_key *key,
                                        uint64_t file_size) {
  if (n < CJ_CACHE_HEADER_BYTES) return "truncated header";
  if (memcmp(d, CJ_CACHE_MAGIC, 8) != 0) return "not a cujit cache entry";
  if (get_u32(d + 8) != CJ_CACHE_SCHEMA) return "written by another cujit cache schema";
  if (memcmp(d + 16, key->bytes, 16) != 0) return "holds another key";
  uint64_t ptx = get_u64(d + 32), cubin = get_u64(d + 40), log = get_u64(d + 48);
  uint64_t payload = file_size - CJ_CACHE_HEADER_BYTES;
  if (ptx > ENTRY_MAX_BYTES || cubin > ENTRY_MAX_BYTES || log > ENTRY_MAX_BYTES)
    return "sizes do not match the file";
  if (ptx + cubin + log != payload)
    return ptx + cubin + log > payload ? "truncated" : "sizes do not match the file";
  return NULL;
}

const char cj_cache_entry_no_memory[] = "out of memory";

const char *cj_cache_entry_parse(const unsigned char *d, size_t n, const cj_cache_key *key,
                                 cj_cache_entry *out) {
  memset(out, 0, sizeof *out);
  const char *bad = cj_cache_entry_check_header(d, n, key, n);
  if (bad) return bad;
  const unsigned char *p = d + CJ_CACHE_HEADER_BYTES;
  size_t ptx = (size_t)get_u64(d + 32), cubin = (size_t)get_u64(d + 40),
         log = (size_t)get_u64(d + 48);
  if (XXH64(p, ptx + cubin + log, 0) != get_u64(d + 56)) return "checksum mismatch";
  out->ptx = cj_strndup((const char *)p, ptx);
  out->cubin = cubin ? malloc(cubin) : NULL;
  const char *logp = (const char *)p + ptx + cubin, *nul = memchr(logp, '\0', log);
  size_t names = nul ? log - (size_t)(nul + 1 - logp) : 0;
  out->log = cj_strndup(logp, nul ? (size_t)(nul - logp) : log);
  if (names && !names_ok(nul + 1, names)) {
    cj_cache_entry_free(out);
    return "malformed lowered names";
  }
  if (names && (out->names = malloc(names)) != NULL)
    memcpy(out->names, nul + 1, out->names_len = names);
  if (!out->ptx || (cubin && !out->cubin) || !out->log || (names && !out->names)) {
    cj_cache_entry_free(out);
    return cj_cache_entry_no_memory;
  }
  if (cubin) memcpy(out->cubin, p + ptx, cubin);
  out->ptx_len = ptx;
  out->cubin_len = cubin;
  out->nvrtc_version = (int)get_u32(d + 12);
  return NULL;
}

unsigned char *cj_cache_entry_encode(const cj_cache_key *key, const cj_cache_entry *e,
                                     size_t *len) {
  size_t text_len = strlen(e->log ? e->log : "");
  size_t log_len = text_len + (e->names_len ? 1 + e->names_len : 0);
  size_t payload = e->ptx_len + e->cubin_len + log_len;
  unsigned char *buf = malloc(CJ_CACHE_HEADER_BYTES + payload);
  if (!buf) return NULL;
  unsigned char *p = buf + CJ_CACHE_HEADER_BYTES;
  memcpy(p, e->ptx, e->ptx_len);
  if (e->cubin_len) memcpy(p + e->ptx_len, e->cubin, e->cubin_len);
  if (text_len) memcpy(p + e->ptx_len + e->cubin_len, e->log, text_len);
  if (e->names_len) {
    p[e->ptx_len + e->cubin_len + text_len] = '\0';
    memcpy(p + e->ptx_len + e->cubin_len + text_len + 1, e->names, e->names_len);
  }
  memset(buf, 0, CJ_CACHE_HEADER_BYTES);
  memcpy(buf, CJ_CACHE_MAGIC, 8);
  put_u32(buf + 8, CJ_CACHE_SCHEMA);
  put_u32(buf + 12, (uint32_t)e->nvrtc_version);
  memcpy(buf + 16, key->bytes, 16);
  put_u64(buf + 32, e->ptx_len);
  put_u64(buf + 40, e->cubin_len);
  put_u64(buf + 48, log_len);
  put_u64(buf + 56, XXH64(p, payload, 0));
  *len = CJ_CACHE_HEADER_BYTES + payload;
  return buf;
}

void cj_cache_entry_free(cj_cache_entry *entry) {
  if (!entry) return;
  free(entry->ptx);
  free(entry->cubin);
  free(entry->log);
  free(entry->names);
  memset(entry, 0, sizeof *entry);
}

const char *cj_cache_entry_lowered(const cj_cache_entry *entry, const char *expr) {
  const char *p = entry->names, *end = p ? p + entry->names_len : NULL;
  while (p && p < end) {
    const char *lowered = p + strlen(p) + 1;
    if (lowered >= end) return NULL;
    if (strcmp(p, expr) == 0) return lowered;
    p = lowered + strlen(lowered) + 1;
  }
  return NULL;
}
