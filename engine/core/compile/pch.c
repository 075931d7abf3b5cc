/*
** pch.c -- NVRTC's automatic precompiled headers inside a process (pch.h). NVRTC reuses a PCH
** whose initial directives match a later program's, but it cannot see that an in-memory header
** changed (cujit hands it every header in memory): each header set therefore gets a directory of
** its own, named by a hash of the headers' names and bytes and of the options. A PCH holds
** addresses in NVRTC's PCH heap, so it is valid only in the process (and NVRTC instance) that
** made it: the directories live under one private root per engine, removed at cujit_close.
*/
#define _XOPEN_SOURCE 700 /* nftw */
#include "pch.h"
#include "cache.h"
#include "base/env.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The process's PCH heap: every PCH compile reads it; resizing it frees it and allocates another
** (which makes every PCH made before unusable: NVRTC then says so and makes a new one). So
** compiles hold it shared, and a resize waits for them. */
static pthread_rwlock_t heap_lock = PTHREAD_RWLOCK_INITIALIZER;

/* The most header sets an engine keeps a directory for: each PCH is a file of about 100 MB, and a
** header edited again and again in a session makes a new set each time. Past it, the set used
** least recently goes. */
#define PCH_SETS 8

/* The engine's own: its root directory, made on first need, and its header sets' directories. */
typedef struct pch_state {
  pthread_mutex_t lock;
  char root[PATH_MAX];
  int made, failed;                        /* failed: the root could not be made (said once) */
  char sets[PCH_SETS][33];                 /* each set's directory name under root ("" when free) */
  unsigned long long used[PCH_SETS], tick; /* when each was last used */
} pch_state;

static const char pch_tag = 0; /* its address names the slot */

static void state_init(void *p, cujit_engine *engine) {
  (void)engine;
  pthread_mutex_init(&((pch_state *)p)->lock, NULL);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void state_destroy(void *p) {
  pch_state *s = p;
  if (s->made) nftw(s->root, remove_one, 16, FTW_DEPTH | FTW_PHYS); /* never follows a link */
  pthread_mutex_destroy(&s->lock);
}

/* The root, made now when it is not yet: 1, or 0 (said once per engine). */
static int make_root(cujit_engine *engine, pch_state *s) {
  int ok, warn = 0;
  char path[PATH_MAX];
  pthread_mutex_lock(&s->lock);
  if (!s->made && !s->failed) {
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/cujit-pch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(path)) /* 0700, a new name: no other engine or process shares it */
      snprintf(s->root, sizeof s->root, "%s", path), s->made = 1;
    else
      s->failed = warn = 1;
  }
  ok = s->made;
  pthread_mutex_unlock(&s->lock);
  if (warn)
    cj_warn(engine,
            "precompiled headers are off for this engine: cannot make '%s' (%s); set TMPDIR to a "
            "directory of your own",
            path, strerror(errno));
  return ok;
}

const char *cj_pch_dir(cujit_engine *engine) {
  pch_state *s = cj_slot_get(engine, &pch_tag, sizeof *s, state_init, state_destroy);
  if (!s) return NULL;
  pthread_mutex_lock(&s->lock);
  const char *root = s->made ? s->root : NULL;
  pthread_mutex_unlock(&s->lock);
  return root;
}

/* --- the policy ------------------------------------------------------------------------------- */

/* Headers whose parsing is most of a compile (about a second each on an H200 host): cooperative
** groups, cuRAND's kernels, and what the toolkit's cccl directory holds (libcu++, CUB, Thrust). */
static int heavy_name(const char *name) {
  static const char *const parts[] = {
      "/cooperative_groups", "/curand",      "/cccl/", "/cub/", "/thrust/",
      "/cuda/std/",          "/cuda/barrier"};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    if (strstr(name, parts[i])) return 1;
  /* cujit's device library, not the prelude every kernel gets nor the stand-ins */
  return strncmp(name, "cujit/", 6) == 0 && strncmp(name, "cujit/std/", 10) != 0 &&
         strcmp(name, "cujit/prelude.h") != 0 && strcmp(name, "cujit/grid.h") != 0;
}

static int heavy(const cj_includes *inc) {
  size_t bytes = 0;
  for (size_t i = 0; i < inc->header_count; i++) {
    if (heavy_name(inc->header_names[i])) return 1;
    bytes += strlen(inc->header_sources[i]);
  }
  return bytes >= ((size_t)64 << 10) && bytes / 4 >= strlen(inc->source);
}

/* Whether the source's leading directives (NVRTC's PCH prefix) hold a #line, after which NVRTC
** makes no PCH (its warning 20283-D). Reads lines that are blank or start with '#' or "//". */
static int line_in_prefix(const char *s) {
  while (*s) {
    const char *p = s;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '#') {
      p++;
      while (*p == ' ' || *p == '\t') p++;
      if (strncmp(p, "line", 4) == 0 || (*p >= '0' && *p <= '9')) return 1;
    } else if (*p != '\n' && strncmp(p, "//", 2) != 0 && *p != '\r') {
      return 0;
    }
    const char *nl = strchr(p, '\n');
    if (!nl) return 0;
    s = nl + 1;
  }
  return 0;
}

/* A PCH option of the caller's own (--pch, -create-pch=..., --use-pch=..., ...): then the caller
** decides. */
static int pch_option(const char *flag) {
  static const char *const names[] = {"pch", "create-pch", "use-pch",
                                      "instantiate-templates-in-pch"};
  while (*flag == '-') flag++;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strncmp(flag, names[i], strlen(names[i])) == 0) return 1;
  return 0;
}

static int wanted(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc,
                  const cj_option_list *o) {
  char why[256];
  int mode = cj_env_pch(why, sizeof why);
  if (mode < 0) cj_warn(engine, "%s; auto is used", why), mode = CJ_PCH_AUTO;
  if (mode == CJ_PCH_OFF || !inc->cacheable || !inc->source || !nv->nvrtcGetPCHCreateStatus ||
      !nv->nvrtcGetPCHHeapSize || !nv->nvrtcSetPCHHeapSize || !nv->nvrtcGetPCHHeapSizeRequired)
    return 0;
  for (size_t i = 0; i < o->n; i++)
    if (pch_option(o->v[i]) || !strcmp(o->v[i], "-lineinfo") || !strcmp(o->v[i], "-G")) return 0;
  if (line_in_prefix(inc->source)) return 0;
  return mode == CJ_PCH_ON || heavy(inc);
}

/* --- a compile -------------------------------------------------------------------------------- */

/* Takes set `name` into the engine's list, making its directory root/name (0700) when it is new;
** when the list is full, the set used least recently is forgotten and its directory removed,
** while no PCH compile runs (under the heap's write lock: none reads a file being removed) and no
** other compile takes a set (the engine's lock, always taken before the heap's). */
static int take_set(pch_state *s, const char *name, const char *dir) {
  int at = -1, oldest = 0, ok = 1;
  pthread_mutex_lock(&s->lock);
  for (int i = 0; i < PCH_SETS && at < 0; i++)
    if (strcmp(s->sets[i], name) == 0) at = i;
  if (at < 0) {
    for (int i = 0; i < PCH_SETS; i++)
      if (!s->sets[i][0] || s->used[i] < s->used[oldest]) oldest = i;
    at = oldest;
    if (s->sets[at][0]) {
      char gone[PATH_MAX + 40];
      snprintf(gone, sizeof gone, "%s/%s", s->root, s->sets[at]);
      pthread_rwlock_wrlock(&heap_lock);
      nftw(gone, remove_one, 16, FTW_DEPTH | FTW_PHYS);
      pthread_rwlock_unlock(&heap_lock);
    }
    snprintf(s->sets[at], sizeof s->sets[at], "%s", name);
    ok = mkdir(dir, 0700) == 0 || errno == EEXIST;
  }
  s->used[at] = ++s->tick;
  pthread_mutex_unlock(&s->lock);
  return ok;
}

/* The directory of this header set: root/<hash of every header's name and bytes and of the
** options>. NVRTC itself checks that a PCH's leading directives match the program's. */
static int set_dir(pch_state *st, const cj_includes *inc, const cj_option_list *o, char *dir,
                   size_t len) {
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "cujit pch");
  for (size_t i = 0; i < inc->header_count; i++) {
    cj_key_add_str(kb, inc->header_names[i]);
    cj_key_add_str(kb, inc->header_sources[i]);
  }
  cj_key_add(kb, &o->n, sizeof o->n);
  for (size_t i = 0; i < o->n; i++) cj_key_add_str(kb, o->v[i]);
  cj_cache_key key = cj_key_end(kb);
  char name[33];
  for (size_t i = 0; i < sizeof key.bytes; i++) snprintf(name + 2 * i, 3, "%02x", key.bytes[i]);
  snprintf(dir, len, "%s/%s", st->root, name);
  return take_set(st, name, dir);
}

static void drop_added(cj_option_list *o, size_t from) {
  for (size_t i = from; i < o->n; i++) free(o->v[i]);
  o->n = from;
  o->failed = 0;
}

void cj_pch_begin(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc, cj_option_list *o,
                  cj_pch *pch) {
  memset(pch, 0, sizeof *pch);
  if (o->failed || !wanted(engine, nv, inc, o)) return;
  pch_state *s = cj_slot_get(engine, &pch_tag, sizeof *s, state_init, state_destroy);
  char dir[PATH_MAX + 40];
  if (!s || !make_root(engine, s) || !set_dir(s, inc, o, dir, sizeof dir)) return;
  size_t n0 = o->n;
  cj_option_list_add(o, "--pch", NULL);
  cj_option_list_add(o, "--pch-dir=", dir);
  /* the log of a compile with PCH is the log without: NVRTC's messages about the PCH are taken
  ** out (cj_pch_end counts them first), its warnings about PCHs it could not make or use (630,
  ** 639: heap too small, 20282: made before a heap resize, 20283: after a #line) are not said */
  cj_option_list_add(o, "--pch-messages=true", NULL);
  cj_option_list_add(o, "--pch-verbose=false", NULL);
  cj_option_list_add(o, "--diag-suppress=630,639,20282,20283", NULL);
  if (o->failed) {
    drop_added(o, n0);
    return;
  }
  pch->on = 1, pch->added = o->n - n0;
  pthread_rwlock_rdlock(&heap_lock);
}

/* Counts NVRTC's "NAME": creating|using precompiled header file "PATH" lines and takes them out
** of the log. */
static void take_messages(cujit_engine *engine, char *log) {
  static const char *const says[] = {"\": creating precompiled header file \"",
                                     "\": using precompiled header file \""};
  char *line = log;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
    int which = -1;
    for (int i = 0; i < 2 && line[0] == '"'; i++) {
      char *at = strstr(line, says[i]);
      if (at && at < line + n) which = i;
    }
    if (which < 0) {
      line += n;
      continue;
    }
    atomic_fetch_add(which == 0 ? &engine->pch_created : &engine->pch_used, 1);
    memmove(line, line + n, strlen(line + n) + 1);
  }
}

void cj_pch_end(cujit_engine *engine, cj_nvrtc *nv, nvrtcProgram prog, cj_option_list *o,
                cj_pch *pch, char *log) {
  if (!pch->on) return;
  size_t need = 0, have = 0;
  int exhausted = nv->nvrtcGetPCHCreateStatus(prog) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED &&
                  nv->nvrtcGetPCHHeapSizeRequired(prog, &need) == NVRTC_SUCCESS && need > 0;
  pthread_rwlock_unlock(&heap_lock);
  if (log) take_messages(engine, log);
  drop_added(o, o->n - pch->added);
  pch->on = 0;
  if (!exhausted) return;
  pthread_rwlock_wrlock(&heap_lock); /* no PCH compile runs while the heap is replaced */
  if (nv->nvrtcGetPCHHeapSize(&have) == NVRTC_SUCCESS && have < need)
    nv->nvrtcSetPCHHeapSize(need + need / 4); /* room for headers a little larger */
  pthread_rwlock_unlock(&heap_lock);
}
