/*
** cache_dir.c -- where the disk cache lives and how it is bounded, from the environment:
** CUJIT_CACHE (on or off), CUJIT_CACHE_DIR, XDG_CACHE_HOME or HOME for the directory (made 0700
** when missing; refused when another user owns it or others may write it, unless
** CUJIT_CACHE_SHARED=1), CUJIT_CACHE_MAX's size. Each setting not understood warns once, saying
** what is used instead. cache.c asks on the cache's first use.
*/
#include "cache.h"
#include "base/env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* CUJIT_CACHE_MAX: bytes, with an optional K, M, G or T (powers of 1024, "KB"/"KiB" too). */
int cj_cache_parse_size(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (!isdigit((unsigned char)*s)) return 0;
  unsigned long long n = strtoull(s, &end, 10);
  if (errno || end == s) return 0;
  uint64_t mult = 1;
  if (*end) {
    const char *units = "KMGT";
    const char *u = strchr(units, toupper((unsigned char)*end));
    if (!u) return 0;
    for (const char *k = units; k <= u; k++) mult *= 1024;
    end++;
    if (strcmp(end, "B") == 0 || strcmp(end, "b") == 0 || strcmp(end, "iB") == 0) end = "";
    if (*end) return 0;
  }
  if (n == 0 || n > UINT64_MAX / mult) return 0;
  *out = n * mult;
  return 1;
}

/* CUJIT_CACHE: off (0, no, false) or on; "disabled", an older spelling, is off too. A value not
** understood warns and keeps the disk cache on (what an unset variable means). */
static int env_off(cujit_engine *engine) {
  const char *v = getenv("CUJIT_CACHE");
  if (v && strcasecmp(v, "disabled") == 0) return 1;
  int on = 1;
  char why[256];
  if (cj_env_bool("CUJIT_CACHE", &on, why, sizeof why) == CJ_ENV_BAD) {
    cj_warn(engine, "%s; the disk cache stays on", why);
    on = 1;
  }
  return !on;
}

/* The directory exists and is writable: 0 and its *st, else an errno. */
static int usable_dir(const char *path, struct stat *st) {
  if (stat(path, st) != 0) return errno;
  if (!S_ISDIR(st->st_mode)) return ENOTDIR;
  if (access(path, W_OK | X_OK) != 0) return errno;
  return 0;
}

/* mkdir -p; returns 0 or an errno. An existing directory (the usual case) costs no mkdir. */
static int make_dirs(const char *path, struct stat *st) {
  if (usable_dir(path, st) == 0) return 0;
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return ENAMETOOLONG;
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      int made = mkdir(buf, 0700) == 0;
      if (!made && errno != EEXIST) return errno;
      *p = c;
      if (c == '\0') {
        if (made && chmod(buf, 0700) != 0) return errno; /* 0700 whatever the umask */
        break;
      }
    }
  }
  return usable_dir(path, st);
}

/* The directory and the variable it came from; NULL when none is set. Room is left for an
** entry's name after the directory, so a path that does not fit is refused, never cut. */
static const char *where_from(char *dir, size_t len, int *too_long) {
  static const char *const vars[] = {"CUJIT_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  static const char *const suffixes[] = {"", "/cujit", "/.cache/cujit"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(vars[i]);
    if (!v || !*v || (i == 1 && *v != '/')) continue;
    *too_long = (size_t)snprintf(dir, len, "%s%s", v, suffixes[i]) + 64 >= len;
    return vars[i];
  }
  return NULL;
}

/* 0, or why a directory that others may write is not used: whoever can write it chooses the
** code the GPU runs (entries are checked for integrity, not authenticity). */
static const char *unsafe_dir(const struct stat *st) {
  if (st->st_uid != geteuid()) return "it belongs to another user";
  if (st->st_mode & (S_IWGRP | S_IWOTH)) return "group or others may write it";
  return NULL;
}

int cj_cache_dir_choose(cujit_engine *engine, char *dir, size_t len, uint64_t *max_bytes,
                        int *shared) {
  dir[0] = '\0';
  *shared = 0;
  const char *v = getenv("CUJIT_CACHE_MAX");
  if (v && *v && !cj_cache_parse_size(v, max_bytes)) {
    *max_bytes = CJ_CACHE_DEFAULT_MAX_BYTES;
    cj_warn(engine,
            "CUJIT_CACHE_MAX='%s' is not a size; using 1G. Write bytes with an "
            "optional K, M or G, such as 512M",
            v);
  }
  if (env_off(engine)) return 0;
  int too_long = 0;
  const char *from = where_from(dir, len, &too_long);
  if (from && too_long) {
    cj_warn(engine,
            "cache directory from %s is too long (the limit is %d bytes); compiled kernels are "
            "kept in memory only. Set CUJIT_CACHE_DIR to a shorter path",
            from, (int)len - 64);
    dir[0] = '\0';
    return 0;
  }
  if (!from) {
    dir[0] = '\0';
    cj_warn(engine, "no cache directory: neither CUJIT_CACHE_DIR, XDG_CACHE_HOME nor HOME is "
                    "set; compiled kernels are kept in memory only. Set CUJIT_CACHE_DIR to a "
                    "writable directory (or CUJIT_CACHE=off to silence this)");
    return 0;
  }
  struct stat st; /* of the directory, as make_dirs found it usable */
  int err = make_dirs(dir, &st);
  if (err) {
    cj_warn(engine,
            "cache directory '%s' (from %s) cannot be used: %s; compiled kernels are kept in "
            "memory only. Set CUJIT_CACHE_DIR to a writable directory (or CUJIT_CACHE=off to "
            "silence this)",
            dir, from, strerror(err));
    dir[0] = '\0';
    return 0;
  }
  char why[256];
  if (cj_env_bool("CUJIT_CACHE_SHARED", shared, why, sizeof why) == CJ_ENV_BAD) {
    cj_warn(engine, "%s; the cache is not shared", why);
    *shared = 0;
  }
  const char *unsafe = *shared ? NULL : unsafe_dir(&st);
  if (unsafe) {
    cj_warn(engine,
            "cache directory '%s' (from %s) is not used: %s, and whoever can write it chooses "
            "the code your GPU runs; compiled kernels are kept in memory only. Use a directory "
            "of your own (chmod 700 '%s'), or set CUJIT_CACHE_SHARED=1 to share it knowingly",
            dir, from, unsafe, dir);
    dir[0] = '\0';
    return 0;
  }
  return 1;
}
