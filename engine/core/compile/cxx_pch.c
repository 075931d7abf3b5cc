/*
** cxx_pch.c -- the CPU device's precompiled prelude (cxx_pch.h). Every CPU unit starts with
** #include <cujit/cpu_prelude.h>; g++ spends about 0.7 s of a 1.6 s compile parsing it. A PCH
** of it, made by the first compile that needs one, lives in <cache>/cxx-pch/<key>/cujit/, found by
** g++ through -I ahead of the unit's own headers. Unlike NVRTC's (pch.c), g++'s PCH is valid in
** any process, so it is kept on disk, under the disk cache's rules: made by this user in a
** directory of this user's, written under a temporary name and renamed into place, its XXH3-128
** checksum recorded beside it and checked before a process first uses it (a bad one is removed
** and made again). g++ cannot see that the header changed: the key holds the embedded headers'
** hash, so a cujit with other headers has another key. One process makes a key's PCH at a time
** (a lock file); the others compile without it meanwhile rather than wait.
*/
#include "cxx_pch.h"
#include "cache.h"
#include "source.h"
#include "base/env.h"
#include "base/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define ROOT "cxx-pch"
/* How long a failure to make a key's PCH stands before a compile tries again: a prelude that does
** not compile with the flags fails every time, a full disk or a killed compiler only once. */
#define FAILED_SECONDS 3600
#define PCH_NAME "cpu_prelude.h.gch"

/* A directory of this user's, no one else may write in: made 0700 or found so (not a link). */
static int own_dir(const char *path) {
  struct stat st;
  (void)mkdir(path, 0700); /* made now, there already, or not makeable: lstat says which */
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & 022) == 0;
}

static void hex128(const void *data, size_t len, char out[33]) {
  XXH128_hash_t h = XXH3_128bits(data, len);
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

/* --- checking a PCH ---------------------------------------------------------------------------
 */

/* Files whose checksum this process has seen right, by identity: a PCH is 30 MB, checked once. */
typedef struct seen_file {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
} seen_file;
#define SEEN 8
static seen_file seen[SEEN];
static unsigned seen_next;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_file(const seen_file *a, const struct stat *st) {
  return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
         a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static int seen_before(const struct stat *st) {
  int found = 0;
  pthread_mutex_lock(&seen_lock);
  for (int i = 0; i < SEEN && !found; i++) found = same_file(&seen[i], st);
  pthread_mutex_unlock(&seen_lock);
  return found;
}

static void remember(const struct stat *st) {
  pthread_mutex_lock(&seen_lock);
  seen_file *s = &seen[seen_next++ % SEEN];
  s->dev = st->st_dev, s->ino = st->st_ino, s->size = st->st_size, s->mtime = st->st_mtim;
  pthread_mutex_unlock(&seen_lock);
}

/* The checksum line of the file at fd ("<32 hex> <size>\n" in *line): 1, or 0 when unreadable. */
static int checksum_of(int fd, off_t size, char *line, size_t len) {
  if (size <= 0) return 0;
  void *data = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return 0;
  char hex[33];
  hex128(data, (size_t)size, hex);
  munmap(data, (size_t)size);
  snprintf(line, len, "%s %lld\n", hex, (long long)size);
  return 1;
}

/* 1 when keydir holds a PCH of this user's whose bytes are those its checksum file recorded;
** a PCH there that is not (another's, writable by others, changed) is removed. */
static int valid_pch(const char *keydir) {
  char path[PATH_MAX], sum[PATH_MAX];
  snprintf(path, sizeof path, "%s/cujit/" PCH_NAME, keydir);
  snprintf(sum, sizeof sum, "%s/sum", keydir);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 022) == 0;
  if (ok && !seen_before(&st)) {
    char want[96] = "", have[96] = "";
    FILE *f = fopen(sum, "re");
    ok = f && fgets(want, sizeof want, f) && checksum_of(fd, st.st_size, have, sizeof have) &&
         strcmp(want, have) == 0;
    if (f) fclose(f);
    if (ok) remember(&st), utimensat(AT_FDCWD, sum, NULL, 0); /* used now: kept longest */
  }
  close(fd);
  if (!ok) unlink(path), unlink(sum);
  return ok;
}

/* A later #include of the prelude (cujit/cpu_cg.h has one) is looked up in the PCH's directory
** first, where g++'s #pragma once then needs the header itself beside the .gch: keydir holds a
** copy of the embedded prelude (written under a temporary name when it is missing or differs).
** 1 when it is there. */
static int prelude_copy(const char *keydir) {
  const char *text = NULL;
  for (size_t i = 0; i < cj_embedded_header_count && !text; i++)
    if (strcmp(cj_embedded_header_names[i], "cujit/cpu_prelude.h") == 0)
      text = cj_embedded_header_sources[i];
  if (!text) return 0;
  size_t len = strlen(text);
  char path[PATH_MAX], tmp[PATH_MAX];
  snprintf(path, sizeof path, "%s/cujit/cpu_prelude.h", keydir);
  if (cj_file_holds(path, text, len)) return 1;
  snprintf(tmp, sizeof tmp, "%s/cujit/.prelude-XXXXXX", keydir);
  int fd = mkstemp(tmp);
  if (fd < 0) return 0;
  int ok = write(fd, text, len) == (ssize_t)len;
  ok = close(fd) == 0 && ok && rename(tmp, path) == 0;
  if (!ok) unlink(tmp);
  return ok;
}

/* --- the key's directory ----------------------------------------------------------------------
 */

/* <cache>/cxx-pch/<hash of key> in p->dir, made: 1; 0 when there is no disk cache of ours. */
static int key_dir(cujit_engine *engine, const char *key, cj_cxx_pch *p) {
  const char *cache = cj_cache_dir_path(engine->cache);
  char root[PATH_MAX / 2 - 48], hex[33], sub[PATH_MAX];
  if (!*cache || snprintf(root, sizeof root, "%s/" ROOT, cache) >= (int)sizeof root) return 0;
  hex128(key, strlen(key), hex);
  snprintf(p->dir, sizeof p->dir, "%s/%s", root, hex);
  snprintf(sub, sizeof sub, "%s/cujit", p->dir);
  return own_dir(root) && own_dir(p->dir) && own_dir(sub);
}

int cj_cxx_pch_open(cujit_engine *engine, const char *key, cj_cxx_pch *p) {
  char why[256];
  p->lock = -1;
  p->made[0] = '\0';
  int mode = cj_env_pch(why, sizeof why);
  if (mode < 0) cj_warn(engine, "%s; auto is used", why); /* as NVRTC's compiles say (pch.c) */
  if (mode == CJ_PCH_OFF || !key_dir(engine, key, p)) return CJ_CXX_PCH_NONE;
  if (valid_pch(p->dir) && prelude_copy(p->dir))
    return atomic_fetch_add(&engine->pch_used, 1), CJ_CXX_PCH_USE;
  char lock[PATH_MAX];
  snprintf(lock, sizeof lock, "%s/failed", p->dir);
  struct stat failed;
  if (stat(lock, &failed) == 0 && time(NULL) - failed.st_mtime < FAILED_SECONDS)
    return CJ_CXX_PCH_NONE; /* the compiler could not make it lately (cj_cxx_pch_made) */
  snprintf(lock, sizeof lock, "%s/lock", p->dir);
  p->lock = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (p->lock < 0) return CJ_CXX_PCH_NONE;
  if (flock(p->lock, LOCK_EX | LOCK_NB) != 0) { /* another compile is making it */
    close(p->lock);
    p->lock = -1;
    return CJ_CXX_PCH_NONE;
  }
  if (valid_pch(p->dir) && prelude_copy(p->dir)) { /* made while this one took the lock */
    close(p->lock);
    p->lock = -1;
    return atomic_fetch_add(&engine->pch_used, 1), CJ_CXX_PCH_USE;
  }
  snprintf(p->made, sizeof p->made, "%s/cujit/making", p->dir);
  unlink(p->made); /* a maker killed before it renamed */
  return CJ_CXX_PCH_MAKE;
}

/* The modification time of dir/name/sum, 0 when there is none (a key dir without a PCH). */
static time_t last_used(const char *dir, const char *name) {
  char path[PATH_MAX + 64];
  struct stat st;
  snprintf(path, sizeof path, "%s/%s/sum", dir, name);
  return lstat(path, &st) == 0 ? st.st_mtime : 0;
}

/* Removes the least recently used key directories of root beyond CJ_CXX_PCH_KEEP (never `keep`:
** a directory without a PCH counts as the oldest). */
static void evict(const char *root, const char *keep) {
  for (;;) {
    DIR *d = opendir(root);
    if (!d) return;
    char oldest[64] = "";
    time_t when = 0;
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
      if (strlen(de->d_name) != 32 || strspn(de->d_name, "0123456789abcdef") != 32) continue;
      count++;
      time_t t = last_used(root, de->d_name);
      if (strcmp(de->d_name, keep) != 0 && (!oldest[0] || t < when))
        memcpy(oldest, de->d_name, 33), when = t; /* 32 hex digits and the NUL, checked above */
    }
    closedir(d);
    if (count <= CJ_CXX_PCH_KEEP || !oldest[0]) return;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", root, oldest);
    cj_remove_tree(path);
  }
}

int cj_cxx_pch_made(cujit_engine *engine, cj_cxx_pch *p, int ok) {
  char path[PATH_MAX], sum[PATH_MAX], tmp[PATH_MAX], line[96];
  snprintf(path, sizeof path, "%s/cujit/" PCH_NAME, p->dir);
  snprintf(sum, sizeof sum, "%s/sum", p->dir);
  snprintf(tmp, sizeof tmp, "%s/sum.making", p->dir);
  if (!ok) { /* the prelude does not compile with these flags (-std=c++14, ...): the unit's own
             ** compile says why; later ones with the same key do not try again for a while */
    snprintf(tmp, sizeof tmp, "%s/failed", p->dir);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600); /* now */
    if (fd >= 0) close(fd);
    unlink(p->made);
    close(p->lock);
    p->lock = -1;
    return CJ_CXX_PCH_NONE;
  }
  int fd = open(p->made, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  ok = fd >= 0 && fstat(fd, &st) == 0 && fchmod(fd, 0600) == 0 &&
       checksum_of(fd, st.st_size, line, sizeof line);
  if (fd >= 0) close(fd);
  /* the user's alone, as the PCH and the cache's entries (fopen would make it 0666 - umask) */
  fd = ok ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
  size_t len = fd >= 0 ? strlen(line) : 0; /* line is written only when ok */
  ok = fd >= 0 && write(fd, line, len) == (ssize_t)len;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  /* the checksum first: a PCH in place always has its own beside it */
  ok = ok && prelude_copy(p->dir) && rename(tmp, sum) == 0 && rename(p->made, path) == 0;
  if (!ok) {
    cj_warn(engine,
            "the CPU device could not keep its precompiled prelude in '%s' (%s); compiles "
            "go on without it",
            p->dir, strerror(errno));
    unlink(p->made), unlink(tmp);
  }
  close(p->lock);
  p->lock = -1;
  if (!ok) return CJ_CXX_PCH_NONE;
  snprintf(tmp, sizeof tmp, "%s/failed", p->dir);
  unlink(tmp);
  atomic_fetch_add(&engine->pch_created, 1);
  char root[PATH_MAX];
  snprintf(root, sizeof root, "%s", p->dir);
  char *slash = strrchr(root, '/');
  *slash = '\0';
  evict(root, slash + 1);
  return CJ_CXX_PCH_USE;
}

void cj_cxx_pch_drop(const cj_cxx_pch *p) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/cujit/" PCH_NAME, p->dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/sum", p->dir);
  unlink(path);
}

int cj_cxx_pch_named(const char *log) {
  return log &&
         (strstr(log, ".gch") || strstr(log, "precompiled header") || strstr(log, "PCH file"));
}

void cj_cxx_pch_clear(const char *cache_dir) {
  char path[PATH_MAX];
  if (cache_dir && *cache_dir && snprintf(path, sizeof path, "%s/" ROOT, cache_dir) < PATH_MAX)
    cj_remove_tree(path);
}
