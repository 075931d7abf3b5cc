/*
** cache.c -- the memory + disk cache of compiled code. A small bounded table in memory; on disk,
** one verified file per key, written whole to a temporary file and renamed into place so that
** readers (other threads, other processes) only ever see complete entries; least recently used
** entries are evicted past CUJIT_CACHE_MAX.
*/
#include "cache.h"
#include "base/env.h"
#include "base/structs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MEM_SLOTS 64
#define MEM_MAX_BYTES ((size_t)64 << 20)

typedef struct mem_slot {
  int used;
  cj_cache_key key;
  cj_cache_entry entry;
  size_t bytes;
  uint64_t tick; /* last use, for LRU */
} mem_slot;

struct cj_cache {
  cujit_engine *engine;
  pthread_mutex_t lock;
  int disk_state; /* 0 not set up yet, 1 on, -1 off (by choice or for want of a directory) */
  int warned_write;
  int shared; /* CUJIT_CACHE_SHARED=1: entries readable by others */
  char dir[PATH_MAX];
  uint64_t max_bytes;
  uint64_t memory_hits, disk_hits, misses;
  uint64_t tick;
  mem_slot mem[MEM_SLOTS];
};

/* By table, not snprintf: it is on the path of every cache hit. */
static void key_hex(const cj_cache_key *key, char out[33]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[2 * i] = digits[key->bytes[i] >> 4];
    out[2 * i + 1] = digits[key->bytes[i] & 15];
  }
  out[32] = '\0';
}

/* --- setting up --------------------------------------------------------------------------------
 */

/* Done on first use rather than in cj_cache_open, so that a warning reaches the handler the
** program installs right after cujit_open (cache_dir.c). Called with the lock held. */
static void setup_disk(cj_cache *c) {
  if (c->disk_state != 0) return;
  c->disk_state =
      cj_cache_dir_choose(c->engine, c->dir, sizeof c->dir, &c->max_bytes, &c->shared) ? 1 : -1;
}

cj_cache *cj_cache_open(cujit_engine *engine) {
  cj_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->engine = engine;
  pthread_mutex_init(&c->lock, NULL);
  c->max_bytes = CJ_CACHE_DEFAULT_MAX_BYTES;
  return c;
}

void cj_cache_close(cj_cache *cache) {
  if (!cache) return;
  for (int i = 0; i < MEM_SLOTS; i++) cj_cache_entry_free(&cache->mem[i].entry);
  pthread_mutex_destroy(&cache->lock);
  free(cache);
}

/* --- memory ------------------------------------------------------------------------------------
 */

static int entry_copy(cj_cache_entry *dst, const cj_cache_entry *src) {
  memset(dst, 0, sizeof *dst);
  dst->ptx = malloc(src->ptx_len + 1);
  dst->cubin = src->cubin_len ? malloc(src->cubin_len) : NULL;
  dst->log = cj_strdup(src->log ? src->log : "");
  if (!dst->ptx || (src->cubin_len && !dst->cubin) || !dst->log) {
    cj_cache_entry_free(dst);
    return 0;
  }
  if (src->ptx_len) memcpy(dst->ptx, src->ptx, src->ptx_len);
  dst->ptx[src->ptx_len] = '\0';
  if (src->cubin_len) memcpy(dst->cubin, src->cubin, src->cubin_len);
  if (src->names_len && !(dst->names = malloc(src->names_len))) {
    cj_cache_entry_free(dst);
    return 0;
  }
  if (src->names_len) memcpy(dst->names, src->names, dst->names_len = src->names_len);
  dst->ptx_len = src->ptx_len;
  dst->cubin_len = src->cubin_len;
  dst->nvrtc_version = src->nvrtc_version;
  return 1;
}

static mem_slot *mem_find(cj_cache *c, const cj_cache_key *key) {
  for (int i = 0; i < MEM_SLOTS; i++)
    if (c->mem[i].used && memcmp(c->mem[i].key.bytes, key->bytes, 16) == 0) return &c->mem[i];
  return NULL;
}

static void mem_drop(mem_slot *s) {
  cj_cache_entry_free(&s->entry);
  s->used = 0;
  s->bytes = 0;
}

static void mem_put(cj_cache *c, const cj_cache_key *key, const cj_cache_entry *entry) {
  size_t bytes = entry->ptx_len + entry->cubin_len + strlen(entry->log ? entry->log : "");
  if (bytes > MEM_MAX_BYTES) return;
  mem_slot *s = mem_find(c, key);
  if (s) mem_drop(s);
  for (;;) { /* make room: a free slot, and the byte bound */
    size_t total = bytes;
    mem_slot *oldest = NULL, *free_slot = NULL;
    for (int i = 0; i < MEM_SLOTS; i++) {
      mem_slot *m = &c->mem[i];
      if (!m->used) {
        if (!free_slot) free_slot = m;
        continue;
      }
      total += m->bytes;
      if (!oldest || m->tick < oldest->tick) oldest = m;
    }
    if (free_slot && total <= MEM_MAX_BYTES) {
      s = free_slot;
      break;
    }
    if (!oldest) return;
    mem_drop(oldest);
  }
  if (!entry_copy(&s->entry, entry)) return;
  s->used = 1;
  s->key = *key;
  s->bytes = bytes;
  s->tick = ++c->tick;
}

/* --- disk --------------------------------------------------------------------------------------
 */

/* Compiled code is <key>.cjc; an include manifest (cj_cache_put_text) is <key>.cjm. */
static void entry_path(const cj_cache *c, const cj_cache_key *key, int text, char *path,
                       size_t len) {
  size_t dl = strnlen(c->dir, sizeof c->dir); /* setup_disk keeps 64 bytes free for the name */
  if (dl + 38 > len) {
    path[0] = '\0';
    return;
  }
  memcpy(path, c->dir, dl);
  path[dl] = '/';
  key_hex(key, path + dl + 1);
  memcpy(path + dl + 33, text ? ".cjm" : ".cjc", 5);
}

static int read_full(int fd, unsigned char *buf, size_t n, size_t *got) {
  *got = 0;
  while (*got < n) {
    ssize_t r = read(fd, buf + *got, n - *got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r == 0;
    *got += (size_t)r;
  }
  return 1;
}

/* Past this size an entry is read in two steps: the header, and the rest only once the header
** announces an entry for the key of exactly the file's size. A smaller file is read whole in one
** call (a hit then costs one read per file), its header checked before anything else is used. */
#define WHOLE_READ_BYTES ((size_t)1 << 20)
#define READ_NO_MEMORY (-3)

/* Reads the entry at `path`. Never blocks (a FIFO is not opened for reading whole). 0: absent or
** unreadable; 1: *data filled; -1: *bad says why it is not an entry; -2: not a regular file,
** *bad says what it is; READ_NO_MEMORY: no memory to read it into, which says nothing of the
** entry. */
static int read_entry(const char *path, const cj_cache_key *key, unsigned char **data, size_t *len,
                      struct stat *info, const char **bad) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0 && errno == ELOOP) return *bad = "a symbolic link", -2;
  if (fd < 0) return 0;
  unsigned char head[CJ_CACHE_HEADER_BYTES], *buf = head;
  size_t got = 0, size = 0;
  int result = -1;
  if (fstat(fd, info) != 0) {
    result = 0;
  } else if (!S_ISREG(info->st_mode)) {
    *bad = S_ISDIR(info->st_mode) ? "a directory" : "not a regular file", result = -2;
  } else if ((size = (size_t)info->st_size) <= WHOLE_READ_BYTES &&
             !(buf = malloc(size ? size : 1))) {
    result = READ_NO_MEMORY;
  } else if (!read_full(fd, buf, buf == head ? sizeof head : size, &got) ||
             (*bad = cj_cache_entry_check_header(buf, got, key, (uint64_t)size)) != NULL) {
    if (!*bad) *bad = "unreadable";
  } else if (buf != head) { /* read whole */
    result = got == size ? 1 : -1;
    if (result == 1)
      *data = buf, *len = size, buf = NULL;
    else
      *bad = "truncated";
  } else if (!(*data = malloc(size))) {
    result = READ_NO_MEMORY;
  } else {
    memcpy(*data, head, sizeof head);
    result =
        read_full(fd, *data + sizeof head, size - sizeof head, &got) && got == size - sizeof head
            ? 1
            : -1;
    *len = size;
    if (result != 1) free(*data), *bad = "truncated";
  }
  if (buf != head) free(buf);
  close(fd);
  return result;
}

#define LRU_RESOLUTION_SECONDS 3600
#define TEMP_GRACE_SECONDS 60

/* An allocation failed, not the entry: it stays for a later lookup with memory to spare. */
static void warn_no_memory(cj_cache *c, const char *entry) {
  cj_warn(c->engine,
          "cache entry %s could not be read: out of host memory; the entry is kept and this "
          "lookup is a miss (the kernel is compiled instead). Free memory, or lower the memory "
          "this process uses",
          entry);
}

/* 1: a hit; 0: a miss; NO_MEMORY_MISS: a miss for want of memory, warned of, the entry kept. */
#define NO_MEMORY_MISS (-1)
static int disk_get(cj_cache *c, const cj_cache_key *key, int text, cj_cache_entry *out) {
  char path[PATH_MAX + 40];
  entry_path(c, key, text, path, sizeof path);
  unsigned char *d = NULL;
  size_t n = 0;
  struct stat info;
  const char *bad = NULL;
  int got = read_entry(path, key, &d, &n, &info, &bad);
  if (got == 1) {
    bad = cj_cache_entry_parse(d, n, key, out);
    free(d);
  }
  if (got == -2 && strcmp(bad, "a directory") == 0) {
    cj_warn(c->engine,
            "cache entry %s is a directory; it was left alone and is not used. Remove it", path);
    return 0;
  }
  if (got == -2) { /* a FIFO, a socket, a device, a link: not cujit's, never read or replaced */
    cj_warn(c->engine,
            "cache entry %s is %s; it was left alone and is not used (the kernel is compiled "
            "and kept in memory only). Remove it",
            path, bad);
    return 0;
  }
  if (got == 0) return 0; /* ENOENT: a plain miss */
  if (got == READ_NO_MEMORY || bad == cj_cache_entry_no_memory)
    return warn_no_memory(c, path), NO_MEMORY_MISS;
  if (bad) {
    if (unlink(path) == 0 || errno == ENOENT)
      cj_warn(c->engine, "cache entry %s is corrupt (%s); removed, recompiling", path, bad);
    else
      cj_warn(c->engine,
              "cache entry %s is corrupt (%s) and could not be removed (%s); "
              "recompiling",
              path, bad, strerror(errno));
    return 0;
  }
  /* Recently used, for LRU. An hour's resolution is plenty for eviction, and skipping the
  ** metadata write on hot entries keeps a hit to reads only. */
  if (time(NULL) - info.st_mtime > LRU_RESOLUTION_SECONDS) utimensat(AT_FDCWD, path, NULL, 0);
  return 1;
}

static int write_all(int fd, const void *data, size_t n) {
  const unsigned char *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    p += w, n -= (size_t)w;
  }
  return 1;
}

static void warn_write(cj_cache *c, const char *path, int err) {
  if (c->warned_write) return;
  c->warned_write = 1;
  cj_warn(c->engine,
          "could not write cache entry %s: %s; kernels are still compiled, only not kept on "
          "disk. Free space or set CUJIT_CACHE_DIR to a writable directory",
          path, strerror(err));
}

static int disk_put(cj_cache *c, const cj_cache_key *key, int text, const cj_cache_entry *e) {
  char path[PATH_MAX + 40], tmp[PATH_MAX + 80], hex[33];
  entry_path(c, key, text, path, sizeof path);
  key_hex(key, hex);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned rnd = (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)&ts ^ (unsigned)c->tick;
  snprintf(tmp, sizeof tmp, "%s/.%s.%ld.%08x.tmp", c->dir, hex, (long)getpid(), rnd);
  size_t len;
  unsigned char *buf = cj_cache_entry_encode(key, e, &len);
  if (!buf) return 0;
  /* 0600 whatever the umask: only the owner may read what only the owner may write. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, c->shared ? 0644 : 0600);
  cj_fsize limit; /* past ulimit -f: EFBIG and the warning below, not SIGXFSZ */
  cj_fsize_guard(&limit);
  int ok = fd >= 0 && (c->shared || fchmod(fd, 0600) == 0) && write_all(fd, buf, len);
  int err = errno;
  cj_fsize_release(&limit);
  if (fd >= 0 && close(fd) != 0 && ok) ok = 0, err = errno;
  struct stat there; /* what is not cujit's own regular file is never renamed over */
  if (ok && lstat(path, &there) == 0 && !S_ISREG(there.st_mode)) {
    unlink(tmp);
    free(buf);
    return 0;
  }
  if (ok && rename(tmp, path) != 0) ok = 0, err = errno;
  if (!ok) {
    if (fd >= 0) unlink(tmp);
    warn_write(c, fd >= 0 ? path : tmp, err);
  }
  free(buf);
  return ok;
}

typedef struct disk_file {
  char name[48];
  off_t size;
  struct timespec mtime;
} disk_file;

static int is_entry_name(const char *n) {
  size_t l = strlen(n);
  return l == 36 && (strcmp(n + 32, ".cjc") == 0 || strcmp(n + 32, ".cjm") == 0) &&
         strspn(n, "0123456789abcdef") == 32;
}

static int is_temp_name(const char *n) {
  size_t l = strlen(n);
  return n[0] == '.' && l > 37 && strcmp(n + l - 4, ".tmp") == 0 &&
         strspn(n + 1, "0123456789abcdef") == 32;
}

/* The entries on disk (sizes, mtimes); NULL with *count 0 when none or on failure. */
static disk_file *list_entries(const cj_cache *c, size_t *count, uint64_t *bytes) {
  *count = 0, *bytes = 0;
  DIR *d = opendir(c->dir);
  if (!d) return NULL;
  disk_file *files = NULL;
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!is_entry_name(de->d_name)) continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue; /* only cujit's own regular files are counted and evicted */
    if (*count == cap) {
      cap = cap ? 2 * cap : 64;
      disk_file *nf = realloc(files, cap * sizeof *nf);
      if (!nf) break;
      files = nf;
    }
    disk_file *f = &files[(*count)++];
    snprintf(f->name, sizeof f->name, "%.40s", de->d_name);
    f->size = st.st_size;
    f->mtime = st.st_mtim;
    *bytes += (uint64_t)st.st_size;
  }
  closedir(d);
  return files;
}

static int older(const void *a, const void *b) {
  const disk_file *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Removes least recently used entries until the disk part fits CUJIT_CACHE_MAX; the entry just
** written (keep) goes last, only if it alone is too big. */
static void evict(cj_cache *c, const cj_cache_key *keep, int text) {
  size_t n;
  uint64_t total;
  disk_file *files = list_entries(c, &n, &total);
  if (total <= c->max_bytes) {
    free(files);
    return;
  }
  char keep_name[48], hex[33];
  key_hex(keep, hex);
  snprintf(keep_name, sizeof keep_name, "%s.%s", hex, text ? "cjm" : "cjc");
  qsort(files, n, sizeof *files, older);
  for (int pass = 0; pass < 2 && total > c->max_bytes; pass++)
    for (size_t i = 0; i < n && total > c->max_bytes; i++) {
      if ((strcmp(files[i].name, keep_name) == 0) != (pass == 1)) continue;
      char path[PATH_MAX + 48];
      snprintf(path, sizeof path, "%s/%s", c->dir, files[i].name);
      if (unlink(path) == 0 || errno == ENOENT) total -= (uint64_t)files[i].size;
    }
  free(files);
}

/* --- the interface -----------------------------------------------------------------------------
 */

/* A hit or a miss; `text` entries (manifests) are kept apart on disk and not counted, nor are
** the misses of a `quiet` lookup. */
static int get(cj_cache *cache, const cj_cache_key *key, int text, int quiet, cj_cache_entry *out) {
  if (!cache || !key || !out) return 0;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&cache->lock);
  setup_disk(cache);
  int hit = 0, disk = 0;
  mem_slot *s = mem_find(cache, key);
  if (s && entry_copy(out, &s->entry)) {
    s->tick = ++cache->tick;
    cache->memory_hits += !text;
    hit = 1;
  } else if (cache->disk_state == 1 && (disk = disk_get(cache, key, text, out)) == 1) {
    cache->disk_hits += !text;
    mem_put(cache, key, out);
    hit = 2;
  } else {
    if (s && disk != NO_MEMORY_MISS) { /* held, but not copied (unless the disk said so) */
      char hex[33], held[64];
      key_hex(key, hex);
      snprintf(held, sizeof held, "%s (held in memory)", hex);
      warn_no_memory(cache, held);
    }
    cache->misses += !text && !quiet;
  }
  pthread_mutex_unlock(&cache->lock);
  return hit;
}

static void put(cj_cache *cache, const cj_cache_key *key, int text, const cj_cache_entry *entry) {
  if (!cache || !key || !entry || !entry->ptx) return;
  pthread_mutex_lock(&cache->lock);
  setup_disk(cache);
  mem_put(cache, key, entry);
  if (cache->disk_state == 1 && disk_put(cache, key, text, entry)) evict(cache, key, text);
  pthread_mutex_unlock(&cache->lock);
}

int cj_cache_get(cj_cache *cache, const cj_cache_key *key, cj_cache_entry *out) {
  return get(cache, key, 0, 0, out);
}

int cj_cache_find(cj_cache *cache, const cj_cache_key *key, cj_cache_entry *out) {
  return get(cache, key, 0, 1, out);
}

int cj_cache_touch(cj_cache *cache, const cj_cache_key *key) {
  if (!cache || !key) return 0;
  pthread_mutex_lock(&cache->lock);
  mem_slot *s = mem_find(cache, key);
  if (s) s->tick = ++cache->tick, cache->memory_hits++;
  pthread_mutex_unlock(&cache->lock);
  return s != NULL;
}

void cj_cache_put(cj_cache *cache, const cj_cache_key *key, const cj_cache_entry *entry) {
  put(cache, key, 0, entry);
}

char *cj_cache_get_text(cj_cache *cache, const cj_cache_key *key, size_t *len) {
  cj_cache_entry e;
  if (!get(cache, key, 1, 0, &e)) return NULL;
  *len = e.ptx_len;
  char *t = e.ptx;
  e.ptx = NULL;
  cj_cache_entry_free(&e);
  return t;
}

void cj_cache_put_text(cj_cache *cache, const cj_cache_key *key, const char *text) {
  cj_cache_entry e = {.ptx = (char *)text, .ptx_len = text ? strlen(text) : 0, .log = ""};
  put(cache, key, 1, &e);
}

const char *cj_cache_dir_path(const cj_cache *cache) {
  if (!cache) return "";
  cj_cache *c = (cj_cache *)cache;
  pthread_mutex_lock(&c->lock);
  setup_disk(c);
  pthread_mutex_unlock(&c->lock);
  return c->disk_state == 1 ? c->dir : "";
}

void cj_cache_stats(cj_cache *cache, cujit_cache_stats *stats) {
  memset(stats, 0, sizeof *stats);
  if (!cache) return;
  pthread_mutex_lock(&cache->lock);
  setup_disk(cache);
  stats->memory_hits = cache->memory_hits;
  stats->disk_hits = cache->disk_hits;
  stats->misses = cache->misses;
  stats->max_bytes = cache->max_bytes;
  stats->disk_enabled = cache->disk_state == 1;
  if (cache->disk_state == 1) {
    size_t n;
    uint64_t bytes;
    disk_file *files = list_entries(cache, &n, &bytes);
    for (size_t i = 0; i < n; i++) stats->entries += strcmp(files[i].name + 32, ".cjc") == 0;
    free(files);
    stats->bytes = bytes;
  }
  pthread_mutex_unlock(&cache->lock);
}

cujit_status cj_cache_clear(cj_cache *cache) {
  if (!cache) return CUJIT_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&cache->lock);
  setup_disk(cache);
  for (int i = 0; i < MEM_SLOTS; i++)
    if (cache->mem[i].used) mem_drop(&cache->mem[i]);
  cujit_status st = CUJIT_OK;
  if (cache->disk_state == 1) {
    DIR *d = opendir(cache->dir);
    if (!d) {
      st = cj_fail(cache->engine, CUJIT_ERROR_CACHE,
                   "cannot clear the cache: cannot read '%s' (%s)", cache->dir, strerror(errno));
    } else {
      struct dirent *de;
      while ((de = readdir(d)) != NULL) {
        struct stat info;
        if (!is_entry_name(de->d_name) && !is_temp_name(de->d_name)) continue;
        /* another process's entry being written: its rename will need the file */
        if (is_temp_name(de->d_name) && fstatat(dirfd(d), de->d_name, &info, 0) == 0 &&
            time(NULL) - info.st_mtime < TEMP_GRACE_SECONDS)
          continue;
        if (fstatat(dirfd(d), de->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(info.st_mode))
          continue; /* a link, a FIFO, a device named like an entry: not cujit's to remove */
        if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT && st == CUJIT_OK)
          st = cj_fail(cache->engine, CUJIT_ERROR_CACHE,
                       "cannot clear the cache: removing '%s/%s' failed (%s); check the "
                       "directory's permissions",
                       cache->dir, de->d_name, strerror(errno));
      }
      closedir(d);
    }
  }
  pthread_mutex_unlock(&cache->lock);
  return st;
}

const char *cujit_cache_dir(cujit_engine *engine) {
  return engine ? cj_cache_dir_path(engine->cache) : "";
}

cujit_status cujit_cache_stats_get(cujit_engine *engine, cujit_cache_stats *stats) {
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_cache_stats all; /* filled whole, then the caller's part of it (cujit.h) */
  size_t room;
  cujit_status st = cj_struct_room(engine, "cujit_cache_stats_get", "cujit_cache_stats", stats,
                                   sizeof all, CJ_CACHE_STATS_V1, &room);
  if (st == CUJIT_OK) cj_cache_stats(engine->cache, &all), all.pch_created = engine->pch_created;
  if (st == CUJIT_OK)
    all.pch_used = engine->pch_used, all.compiles_in_workers = engine->compiles_in_workers;
  if (st == CUJIT_OK) cj_struct_out(stats, room, &all);
  return st;
}

/* cujit_cache_clear is kept.c's: it removes the kept sources of line info too. */
