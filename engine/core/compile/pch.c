/*
** pch.c -- NVRTC's automatic precompiled headers inside a process (pch.h). NVRTC reuses a PCH
** whose initial directives match a later program's, but it cannot see that an in-memory header
** changed (cujit hands it every header in memory): each header set therefore gets a directory of
** its own, named by a hash of the headers' names and bytes and of the options. A PCH holds
** addresses in NVRTC's PCH heap, so it is valid only in the process (and NVRTC instance) that
** made it: the directories live under one private root per engine, removed at cujit_close, or at
** the process's exit when it ends without one.
*/
#include "pch.h"
#include "cache.h"
#include "cxx_scratch.h"
#include "base/env.h"
#include "base/files.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's PCH heap: every PCH compile reads it; resizing it frees it and allocates another
** (which makes every PCH made before unusable: NVRTC then says so and makes a new one). So
** compiles hold it shared, and a resize waits for them. */
static pthread_rwlock_t heap_lock = PTHREAD_RWLOCK_INITIALIZER;

/* The heap's size as NVRTC last said or was told (0: not asked yet, so NVRTC's default). Kept
** because NVRTC 13 runs its calls one at a time in a process: asking it while a compile runs here
** waits for that compile, and a compile sent to a worker, which asked it for its request, waited so
** for the one in the process (on the H200 host eight heavy programs at once took 326 ms, and
** 164 ms once neither this nor NVRTC's archs, loader.h, was asked per compile). Asked by a PCH
** compile of this process before it begins (heap_read); set under the heap's write lock. A request
** for a worker only reads it (cj_pch_heap_size): when it too asked NVRTC while this was still 0,
** it could read 0 just as the process's first compile read 0, asked, stored and began, and then
** ask NVRTC during that compile and wait for all of it (c.test_nvrtc_worker failed so once). */
static _Atomic size_t heap_bytes;

/* The heap's size, asking NVRTC the first time: only for a compile about to run in this process,
** whose own NVRTC calls wait for any compile running here anyway. */
static size_t heap_read(cj_nvrtc *nv) {
  size_t have = atomic_load(&heap_bytes);
  if (!have && nv->nvrtcGetPCHHeapSize && nv->nvrtcGetPCHHeapSize(&have) == NVRTC_SUCCESS)
    atomic_store(&heap_bytes, have);
  return have;
}

/* The most header sets an engine keeps a directory for: each PCH is a file of about 100 MB, and a
** header edited again and again in a session makes a new set each time. Past it, the set used
** least recently goes. */
#define PCH_SETS 8

/* The engine's own: its root directory, made on first need, and its header sets' directories. */
typedef struct pch_state {
  pthread_mutex_t lock;
  char root[PATH_MAX];
  int made, failed;        /* failed: the root could not be made (said once) */
  pid_t pid;               /* the process that made the root: a child of fork() makes its own */
  char sets[PCH_SETS][33]; /* each set's directory name under root ("" when free) */
  unsigned long long used[PCH_SETS], tick; /* when each was last used */
} pch_state;

static const char pch_tag = 0; /* its address names the slot */

/* The roots of this process's engines not yet removed, so that a process ending without
** cujit_close removes them at its exit all the same: Lua's os.exit() does not close the Lua state
** (the examples end so in compile-only runs, leaving 100 MB a PCH in TMPDIR until a later PCH
** compile collected them), and a C program may exit() with engines open. A root made past the
** table's end is left to collect_litter. In a library, atexit's handler runs at the library's
** unloading too (glibc: __cxa_atexit with the object's handle), when no engine is left. */
#define EXIT_ROOTS 64
static pthread_mutex_t exit_lock = PTHREAD_MUTEX_INITIALIZER;
static const pch_state *exit_roots[EXIT_ROOTS];

static void remove_at_exit(void) {
  pthread_mutex_lock(&exit_lock);
  for (int i = 0; i < EXIT_ROOTS; i++)
    if (exit_roots[i] && exit_roots[i]->pid == getpid()) /* a fork's child: its parent's */
      cj_remove_tree(exit_roots[i]->root), exit_roots[i] = NULL;
  pthread_mutex_unlock(&exit_lock);
}

static void remember_root(const pch_state *s) {
  static int registered;
  pthread_mutex_lock(&exit_lock);
  if (!registered) registered = atexit(remove_at_exit) == 0 ? 1 : -1;
  for (int i = 0; i < EXIT_ROOTS; i++)
    if (!exit_roots[i]) {
      exit_roots[i] = s;
      break;
    }
  pthread_mutex_unlock(&exit_lock);
}

static void forget_root(const pch_state *s) {
  pthread_mutex_lock(&exit_lock);
  for (int i = 0; i < EXIT_ROOTS; i++)
    if (exit_roots[i] == s) exit_roots[i] = NULL;
  pthread_mutex_unlock(&exit_lock);
}

static void state_init(void *p, cujit_engine *engine) {
  (void)engine;
  pthread_mutex_init(&((pch_state *)p)->lock, NULL);
}

static void state_destroy(void *p) {
  pch_state *s = p;
  forget_root(s);
  if (s->made && s->pid == getpid()) /* never a parent's; never following a link */
    cj_remove_tree(s->root);
  pthread_mutex_destroy(&s->lock);
}

#define ROOT_PREFIX "cujit-pch-"
#define TEMPLATE_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

static const char *tmp_root(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

/* 1 when `name` is exactly a root's name of a process of this pid namespace that is gone. */
static int dead_ones(const char *name, unsigned long long ns) {
  unsigned long long their_ns;
  long pid;
  char rest[8], again[128];
  if (strncmp(name, ROOT_PREFIX, sizeof ROOT_PREFIX - 1) != 0 ||
      sscanf(name + sizeof ROOT_PREFIX - 1, "%llu-%ld-%7s", &their_ns, &pid, rest) != 3)
    return 0;
  snprintf(again, sizeof again, ROOT_PREFIX "%llu-%ld-%s", their_ns, pid, rest);
  if (strcmp(again, name) != 0 || strlen(rest) != 6 || strspn(rest, TEMPLATE_CHARS) != 6) return 0;
  if (their_ns != ns || pid <= 0 || (pid_t)pid == getpid()) return 0;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH; /* EPERM: alive, another user's */
}

/* A process killed before its cujit_close (kill -9, the OOM killer) leaves its root behind, about
** 100 MB a PCH: the first PCH compile of every later process removes those of processes that are
** gone, directories of this user's, mode 0700, named exactly so, never through a link. */
static void collect_litter(void) {
  DIR *d = opendir(tmp_root());
  if (!d) return;
  unsigned long long ns = cj_pid_namespace();
  char path[PATH_MAX];
  struct stat st;
  for (struct dirent *e; (e = readdir(d));)
    if (dead_ones(e->d_name, ns) &&
        snprintf(path, sizeof path, "%s/%s", tmp_root(), e->d_name) < (int)sizeof path &&
        lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
        (st.st_mode & 0777) == 0700)
      cj_remove_tree(path);
  closedir(d);
}

static pthread_once_t collected = PTHREAD_ONCE_INIT;

/* The root, made now when it is not yet: 1, or 0 (said once per engine). */
static int make_root(cujit_engine *engine, pch_state *s) {
  int ok, warn = 0;
  char path[PATH_MAX];
  pthread_mutex_lock(&s->lock);
  if (s->made && s->pid != getpid()) { /* forked: the parent's PCHs are its own to use and remove */
    s->made = 0;
    memset(s->sets, 0, sizeof s->sets);
  }
  if (!s->made && !s->failed) {
    pthread_once(&collected, collect_litter);
    snprintf(path, sizeof path, "%s/" ROOT_PREFIX "%llu-%ld-XXXXXX", tmp_root(), cj_pid_namespace(),
             (long)getpid());
    if (mkdtemp(path)) { /* 0700, a new name: no other engine or process shares it */
      snprintf(s->root, sizeof s->root, "%s", path), s->made = 1, s->pid = getpid();
      remember_root(s);
    } else
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
  const char *root = s->made && s->pid == getpid() ? s->root : NULL;
  pthread_mutex_unlock(&s->lock);
  return root;
}

/* --- the policy ------------------------------------------------------------------------------- */

/* What the #include directives of the program's own text name (the source, the user's headers
** and cujit's, not the toolkit's: theirs include, under #if branches NVRTC never takes, what a
** host compiler would read, and cujit resolves every branch). */
typedef struct includes_seen {
  int heavy;   /* the toolkit's heavy headers */
  int library; /* cujit's device library */
  int own;     /* cujit's own library programs' header */
} includes_seen;

/* Headers whose parsing is most of a compile (about a second each on an H200 host): cooperative
** groups, cuRAND's kernels, and libcu++, CUB and Thrust (the toolkit's cccl directory), by their
** name under the toolkit's include directory `tk` (real path) or, elsewhere (a CCCL of the
** user's), by a part of their path. */
static void classify(const char *name, size_t n, const char *tk, includes_seen *seen) {
  static const char *const toolkit[] = {
      "cooperative_groups", "curand_kernel", "cccl/cuda/", "cccl/cub/",
      "cccl/thrust/",       "cuda/",         "cub/",       "thrust/"};
  static const char *const parts[] = {"/cooperative_groups", "/curand_kernel", "/cuda/std/",
                                      "/cub/", "/thrust/"};
  static const char *const library[] = {"cujit/random.h", "cujit/reduce.h", "cujit/half.h"};
  size_t tl = tk ? strlen(tk) : 0;
  if (tl && n > tl && strncmp(name, tk, tl) == 0 && name[tl] == '/') {
    for (size_t i = 0; i < sizeof toolkit / sizeof *toolkit; i++)
      if (strncmp(name + tl + 1, toolkit[i], strlen(toolkit[i])) == 0) seen->heavy = 1;
    return;
  }
  char copy[PATH_MAX];
  snprintf(copy, sizeof copy, "%.*s", (int)n, name);
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    if (strstr(copy, parts[i]) || strncmp(copy, parts[i] + 1, strlen(parts[i]) - 1) == 0)
      seen->heavy = 1;
  for (size_t i = 0; i < sizeof library / sizeof *library; i++)
    if (strcmp(copy, library[i]) == 0) seen->library = 1;
  if (strcmp(copy, "cujit/library_kernels.h") == 0) seen->own = 1;
}

/* Every #include <...> or "..." line of `text`, active or not. */
static void scan_includes(const char *text, const char *tk, includes_seen *seen) {
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    while (*p == ' ' || *p == '\t') p++;
    if (*p != '#') continue;
    p++;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "include", 7) != 0) continue;
    for (p += 7; *p == ' ' || *p == '\t';) p++;
    if (*p != '<' && *p != '"') continue;
    const char *end = strchr(p + 1, *p == '<' ? '>' : '"'), *nl = strchr(p, '\n');
    if (end && (!nl || end < nl)) classify(p + 1, (size_t)(end - p - 1), tk, seen);
  }
}

/* The policy of auto. cujit's own library programs (random fills, reductions, elementwise: they
** include <cujit/library_kernels.h>) are left out: each defines its element type before the
** include, so no two share a PCH, and their header is light (measured: four of them made three
** PCHs, used one, and took 0.98 s against 0.66 s without). Of the bytes, only the user's headers
** count: the toolkit's others are fast for NVRTC (cuda_fp16.h's 330 KB about 40 ms). */
static int heavy(const cj_includes *inc, const char *toolkit) {
  char tk[PATH_MAX];
  if (!toolkit || !realpath(toolkit, tk)) tk[0] = '\0';
  size_t tl = strlen(tk), bytes = 0;
  includes_seen seen = {0};
  scan_includes(inc->source, tk, &seen);
  for (size_t i = 0; i < inc->header_count; i++) {
    const char *name = inc->header_names[i];
    if ((tl && strncmp(name, tk, tl) == 0 && name[tl] == '/') || !strncmp(name, "cujit/std/", 10))
      continue; /* the toolkit's, or a stand-in for a standard header (reached from anywhere) */
    scan_includes(inc->header_sources[i], tk, &seen);
    if (name[0] == '/') bytes += strlen(inc->header_sources[i]);
  }
  if (seen.heavy || (seen.library && !seen.own)) return 1;
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

/* Line info or debug info asked for in any spelling: line info names the headers by #line
** directives (compile.c's kept copies), and no PCH is made for a build whose debug information
** would then come from two compiles. */
static int debug_info(const char *flag) {
  static const char *const names[] = {"-lineinfo", "--generate-line-info", "-G", "--device-debug"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(flag, names[i]) == 0) return 1;
  return 0;
}

int cj_pch_wanted(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc,
                  const cj_option_list *o, const char *toolkit) {
  char why[256];
  int mode = cj_env_pch(why, sizeof why);
  if (mode < 0) cj_warn(engine, "%s; auto is used", why), mode = CJ_PCH_AUTO;
  if (mode == CJ_PCH_OFF || !inc->cacheable || !inc->source || !nv->nvrtcGetPCHCreateStatus ||
      !nv->nvrtcGetPCHHeapSize || !nv->nvrtcSetPCHHeapSize || !nv->nvrtcGetPCHHeapSizeRequired)
    return 0;
  for (size_t i = 0; i < o->n; i++)
    if (pch_option(o->v[i]) || debug_info(o->v[i])) return 0;
  if (line_in_prefix(inc->source)) return 0;
  return mode == CJ_PCH_ON || heavy(inc, toolkit);
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
      cj_remove_tree(gone);
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

void cj_pch_start(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc, cj_option_list *o,
                  cj_pch *pch) {
  memset(pch, 0, sizeof *pch);
  if (o->failed) return;
  pch_state *s = cj_slot_get(engine, &pch_tag, sizeof *s, state_init, state_destroy);
  char dir[PATH_MAX + 40];
  if (!s || !make_root(engine, s) || !set_dir(s, inc, o, dir, sizeof dir)) return;
  size_t n0 = o->n;
  cj_option_list_add(o, "--pch", NULL);
  cj_option_list_add(o, "--pch-dir=", dir);
  /* the log says nothing of the PCH: NVRTC's messages about it are taken out (cj_pch_end counts
  ** them first), its warnings about PCHs it could not make or use (630, 639: heap too small,
  ** 20282: made before a heap resize, 20283: after a #line) are not said */
  cj_option_list_add(o, "--pch-messages=true", NULL);
  cj_option_list_add(o, "--pch-verbose=false", NULL);
  cj_option_list_add(o, "--diag-suppress=630,639,20282,20283", NULL);
  if (o->failed) {
    drop_added(o, n0);
    return;
  }
  pch->on = 1, pch->added = o->n - n0;
  pthread_rwlock_rdlock(&heap_lock);
  heap_read(nv); /* known before this compile starts, for the requests of workers beside it */
}

/* No NVRTC call and no lock (a resize holds the write lock while it calls NVRTC): a request for a
** worker waits for nothing of this process. 0, not asked yet, leaves the worker NVRTC's default,
** which this process's heap then still is (every change goes through cj_pch_heap_reserve); a size
** read just before a resize only leaves the worker to grow its heap itself. */
size_t cj_pch_heap_size(void) {
  return atomic_load(&heap_bytes);
}

void cj_pch_heap_reserve(cj_nvrtc *nv, size_t bytes) {
  if (!nv->nvrtcGetPCHHeapSize || !nv->nvrtcSetPCHHeapSize) return;
  pthread_rwlock_wrlock(&heap_lock); /* no PCH compile runs while the heap is replaced */
  size_t have = 0;
  if (nv->nvrtcGetPCHHeapSize(&have) == NVRTC_SUCCESS && have < bytes &&
      nv->nvrtcSetPCHHeapSize(bytes) == NVRTC_SUCCESS)
    have = bytes;
  if (have) atomic_store(&heap_bytes, have);
  pthread_rwlock_unlock(&heap_lock);
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
  size_t need = 0;
  int exhausted = nv->nvrtcGetPCHCreateStatus(prog) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED &&
                  nv->nvrtcGetPCHHeapSizeRequired(prog, &need) == NVRTC_SUCCESS && need > 0;
  pthread_rwlock_unlock(&heap_lock);
  if (log) take_messages(engine, log);
  drop_added(o, o->n - pch->added);
  pch->on = 0;
  if (exhausted) cj_pch_heap_reserve(nv, need + need / 4); /* room for headers a little larger */
}
