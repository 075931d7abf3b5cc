/*
** program.c -- programs on devices: building one for the current device's arch (through the map
** of built programs and its memo of what each build was given), references, loading the
** program's module onto each device on first need (through the backend) and unloading it with
** the last reference, and the public cujit_program_* calls.
*/
#include "program.h"
#include "base/files.h"
#include "base/structs.h"
#include "compile/kept.h"
#include "compile/link.h"
#include "compile/options.h"
#include "compile/scan.h"
#include "compile/source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SOURCE_BYTES ((size_t)256 << 20)

/* What the programs of one cache key share: the compiled bytes, the kernels read from the
** source, and the module on each device. The map holds one reference while it lists the record,
** each program one more. */
typedef struct cj_code {
  cj_cache_key key;
  _Atomic int refs;
  struct cj_code *next; /* in its bucket of the map */
  cujit_engine *engine;
  char *name, *source;
  char arch[16];
  char *ptx;
  size_t ptx_len;
  void *cubin;
  size_t cubin_len;
  cj_signature *kernels;
  size_t nkernels;
  char *log;                 /* the compile log, which every program of the key is given */
  int nvrtc_version;         /* of the NVRTC that built it; 0 for the CPU device's */
  void **modules;            /* cj_device_slots entries once loaded anywhere (atomic) */
  pthread_mutex_t load_lock; /* guards making modules */
} cj_code;

/* The memo (under the map's lock): what a build was given (cj_compile_memo_key) to the cache key
** it compiled to, for builds that read no file (cj_compiled.pure), so building the same again
** skips the scan, the options and the cache key. Direct-mapped: a build whose slot another took
** goes the whole way, as it would without the memo. */
#define MEMO_SLOTS 1024

typedef struct memo_slot {
  cj_cache_key given, key, held; /* held: the byte cache's key of the entry (a direct key) */
  int used;
} memo_slot;

struct cj_program_map {
  pthread_mutex_t lock;
  cj_code **buckets;
  size_t nbuckets, count;
  memo_slot memo[MEMO_SLOTS];
};

/* --- shared records --------------------------------------------------------------------------- */

static void code_release(cj_code *k);

/* A record of the compiled bytes in `c` (which it takes), with the kernels of `scan` confirmed
** against what the compiler built (scan.h, verify.h), in *out. A failure is recorded, and
** returned. */
static cujit_status code_new(cujit_engine *engine, const char *source, const char *name,
                             cj_compiled *c, cj_scan *scan, cj_code **out) {
  *out = NULL;
  cj_code *k = calloc(1, sizeof *k);
  if (!k) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  atomic_init(&k->refs, 1);
  pthread_mutex_init(&k->load_lock, NULL);
  k->engine = engine;
  k->key = c->key;
  memcpy(k->arch, c->arch, sizeof k->arch);
  k->ptx = c->entry.ptx, k->ptx_len = c->entry.ptx_len;
  k->cubin = c->entry.cubin, k->cubin_len = c->entry.cubin_len;
  c->entry.ptx = NULL, c->entry.cubin = NULL; /* the record owns them now */
  k->name = cj_strdup(name);
  k->source = cj_strdup(source);
  k->log = cj_strdup(c->entry.log ? c->entry.log : "");
  k->nvrtc_version = c->entry.nvrtc_version;
  char err[1024];
  cujit_status st =
      !k->name || !k->source || !k->log
          ? cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory")
          : cj_compiler_for(k->arch)->verify(scan, k->ptx, k->cubin, k->cubin_len, &k->kernels,
                                             &k->nkernels, err, sizeof err);
  if (st == CUJIT_OK) {
    *out = k;
    return CUJIT_OK;
  }
  code_release(k);
  /* The verifier has no engine: its out of memory is recorded here too. (Left unrecorded, the
  ** caller read the thread's last error back, an older call's: out of memory became "no CUDA
  ** driver" on the CPU device.) */
  return st == CUJIT_ERROR_OUT_OF_HOST_MEMORY ? cj_fail(engine, st, "'%s': out of memory", name)
                                              : cj_fail(engine, st, "'%s': %s", name, err);
}

/* Unloads from every device the record was loaded on: modules outlive resets (a CUlibrary belongs
** to no context), so this runs whatever state the device is in. */
static void code_release(cj_code *k) {
  if (!k || atomic_fetch_sub(&k->refs, 1) != 1) return;
  cujit_engine *e = k->engine;
  for (int i = 0, n = cj_device_slots(e); k->modules && i < n; i++) {
    cujit_device *dev = cj_device_in_slot(e, i);
    if (k->modules[i] && dev) dev->ops->unload(dev, k->modules[i]);
  }
  free(k->modules);
  for (size_t i = 0; i < k->nkernels; i++) cj_signature_free(&k->kernels[i]);
  free(k->kernels);
  free(k->name);
  free(k->source);
  free(k->log);
  free(k->ptx);
  free(k->cubin);
  pthread_mutex_destroy(&k->load_lock);
  free(k);
}

/* --- the map of loaded programs --------------------------------------------------------------- */

#define MAP_FIRST_BUCKETS 64
#define MAP_MAX_RECORDS 1024 /* past it, records no program uses any more are dropped */

cj_program_map *cj_program_map_open(void) {
  cj_program_map *m = calloc(1, sizeof *m);
  if (m && !(m->buckets = calloc(MAP_FIRST_BUCKETS, sizeof *m->buckets))) {
    free(m);
    return NULL;
  }
  if (m) {
    m->nbuckets = MAP_FIRST_BUCKETS;
    pthread_mutex_init(&m->lock, NULL);
  }
  return m;
}

void cj_program_map_close(cj_program_map *m) {
  if (!m) return;
  for (size_t b = 0; b < m->nbuckets; b++)
    for (cj_code *k = m->buckets[b], *next; k; k = next) next = k->next, code_release(k);
  free(m->buckets);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

static size_t bucket_of(const cj_program_map *m, const cj_cache_key *key) {
  uint64_t h;
  memcpy(&h, key->bytes, sizeof h); /* a slice of a 128-bit hash: already uniform */
  return (size_t)(h % m->nbuckets);
}

/* The record for `key`, with a reference for the caller, or NULL. */
static cj_code *map_find(cj_program_map *m, const cj_cache_key *key) {
  pthread_mutex_lock(&m->lock);
  cj_code *k = m->buckets[bucket_of(m, key)];
  while (k && memcmp(k->key.bytes, key->bytes, sizeof key->bytes) != 0) k = k->next;
  if (k) atomic_fetch_add(&k->refs, 1);
  pthread_mutex_unlock(&m->lock);
  return k;
}

static void grow(cj_program_map *m) {
  size_t n = m->nbuckets * 2;
  cj_code **b = calloc(n, sizeof *b);
  if (!b) return; /* longer chains, still correct */
  for (size_t i = 0; i < m->nbuckets; i++)
    for (cj_code *k = m->buckets[i], *next; k; k = next) {
      next = k->next;
      uint64_t h;
      memcpy(&h, k->key.bytes, sizeof h);
      k->next = b[h % n], b[h % n] = k;
    }
  free(m->buckets);
  m->buckets = b, m->nbuckets = n;
}

/* Unlinks the records no program holds (the map's is the only reference); they are released by
** the caller, outside the lock. Returns the list, linked through next. */
static cj_code *unlink_idle(cj_program_map *m) {
  cj_code *idle = NULL;
  for (size_t b = 0; b < m->nbuckets; b++)
    for (cj_code **p = &m->buckets[b]; *p;) {
      cj_code *k = *p;
      if (atomic_load(&k->refs) == 1) {
        *p = k->next, k->next = idle, idle = k, m->count--;
      } else {
        p = &k->next;
      }
    }
  return idle;
}

/* Lists `k` under its key (taking a reference for the map), in place of an older record of the
** same key (the cache was cleared and the code rebuilt), which its programs keep. */
static void map_put(cj_program_map *m, cj_code *k) {
  atomic_fetch_add(&k->refs, 1);
  pthread_mutex_lock(&m->lock);
  cj_code *drop = NULL;
  for (cj_code **p = &m->buckets[bucket_of(m, &k->key)]; *p; p = &(*p)->next)
    if (memcmp((*p)->key.bytes, k->key.bytes, sizeof k->key.bytes) == 0) {
      drop = *p, *p = drop->next, drop->next = NULL, m->count--;
      break;
    }
  size_t b = bucket_of(m, &k->key);
  k->next = m->buckets[b], m->buckets[b] = k, m->count++;
  if (m->count > MAP_MAX_RECORDS) {
    cj_code *idle = unlink_idle(m);
    while (idle) {
      cj_code *next = idle->next;
      idle->next = drop, drop = idle, idle = next;
    }
  }
  if (m->count > 2 * m->nbuckets) grow(m);
  pthread_mutex_unlock(&m->lock);
  for (cj_code *next; drop; drop = next) next = drop->next, code_release(drop);
}

/* --- the memo --------------------------------------------------------------------------------- */

static memo_slot *memo_slot_of(cj_program_map *m, const cj_cache_key *given) {
  uint64_t h;
  memcpy(&h, given->bytes, sizeof h);
  return &m->memo[h % MEMO_SLOTS];
}

static void memo_put(cj_program_map *m, const cj_cache_key *given, const cj_cache_key *key,
                     const cj_cache_key *held) {
  pthread_mutex_lock(&m->lock);
  memo_slot *s = memo_slot_of(m, given);
  s->given = *given, s->key = *key, s->held = *held, s->used = 1;
  pthread_mutex_unlock(&m->lock);
}

/* The record a build given `given` made before (a reference for the caller), while building it
** again would find the same: it is still in the map, the byte cache still holds its entry in memory
** (as the lookup it stands for would have found it, counted as that hit; so cujit_cache_clear
** means compiling again), and an NVRTC opened since is the one that built it. Else NULL. */
static cj_code *memo_find(cujit_engine *engine, const cj_cache_key *given) {
  cj_program_map *m = engine->programs;
  pthread_mutex_lock(&m->lock);
  memo_slot *s = memo_slot_of(m, given);
  cj_cache_key key = s->key, held = s->held;
  int used = s->used && memcmp(s->given.bytes, given->bytes, sizeof given->bytes) == 0;
  pthread_mutex_unlock(&m->lock);
  cj_code *k = used ? map_find(m, &key) : NULL;
  if (!k) return NULL;
  if (!cj_compiler_for(k->arch)->current(engine, k->nvrtc_version) ||
      !cj_cache_touch(engine->cache, &held)) {
    code_release(k);
    return NULL;
  }
  cj_trace_mark("cujit: cache hit (memory)"); /* the record was still held: nothing read */
  return k;
}

/* --- building --------------------------------------------------------------------------------- */

cujit_status cj_program_arch(cujit_engine *engine, const cujit_compile_options *options, char *arch,
                             size_t len) {
  char device_arch[32] = "";
  if (!(options && options->arch)) {
    cujit_device *dev;
    if (cj_current_device(engine, &dev) != CUJIT_OK) {
      /* The CPU device that could not be made, or a CUJIT_DEVICE not understood: its own words
      ** (no "no GPU" framing: the user did not ask for a GPU). */
      if (__atomic_load_n(&engine->current_device, __ATOMIC_RELAXED) < 0)
        return cujit_errcode(engine);
      char why[1024]; /* its first line says why; the lines after, how to run without a GPU */
      snprintf(why, sizeof why, "%s", cujit_errmsg(engine));
      int first = (int)strcspn(why, "\n");
      return cj_fail(engine, cujit_errcode(engine),
                     "no GPU to take the arch from (%.*s); pass an explicit arch such as sm_90 to "
                     "compile without one%s",
                     first, why, why + first);
    }
    snprintf(device_arch, sizeof device_arch, "%s", dev->arch);
  }
  return cj_compile_arch(engine, options, device_arch, arch, len);
}

/* A program of the shared record `k` (whose reference it takes over). */
static cujit_status program_new(cujit_engine *engine, cj_code *k, int from_cache, double t0,
                                cujit_program **out) {
  cujit_program *p = calloc(1, sizeof *p);
  /* The log comes with the entry, so a hit shows the warnings a cold compile printed. */
  if (!p || !(p->log = cj_strdup(k->log))) {
    free(p);
    code_release(k);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  p->name = k->name, p->source = k->source;
  memcpy(p->arch, k->arch, sizeof p->arch);
  p->ptx = k->ptx, p->ptx_len = k->ptx_len;
  p->cubin = k->cubin, p->cubin_len = k->cubin_len;
  p->kernels = k->kernels, p->nkernels = k->nkernels;
  p->from_cache = from_cache;
  p->engine = engine;
  atomic_init(&p->refs, 1);
  p->code = k;
  p->ms = cj_now_ms() - t0;
  *out = p;
  return CUJIT_OK;
}

/* --- direct entries ---------------------------------------------------------------------------
** A build that came out pure (it read no file) is kept in the cache under its direct key (the
** memo key with the process's constants, cj_compile_direct_key) instead of its full key: the
** compiled bytes, and among the entry's names a record of the full key, the arch, the unit it
** compiled and the kernels as confirmed against the compiled code (signature_store.c). A new
** process given the same then reads one file and skips the host code elision, the scan, the
** options, the key and the verification, the entry checked as any (a damaged one is the usual
** warning, a miss, and the whole way). Builds that read a file go the whole way: the manifest
** checks them. */
#define DIRECT_TAG "cujit direct 1"

static int direct_wanted(const cujit_compile_options *options) {
  return !cj_options_switch_on(options, offsetof(cujit_compile_options, line_info)) &&
         !cj_options_switch_on(options, offsetof(cujit_compile_options, debug)) &&
         !cj_link_wanted(options); /* kept copies and linked files: read from disk */
}

static void direct_put(cujit_engine *engine, const cj_cache_key *direct, const cj_code *k) {
  cj_buf b = {0};
  cj_buf_add(&b, DIRECT_TAG, sizeof DIRECT_TAG); /* a name and its value, as lowered names */
  for (int i = 0; i < 16; i++) cj_buf_printf(&b, "%02x", k->key.bytes[i]);
  cj_buf_printf(&b, "\n%s\n%zu:", k->arch, strlen(k->source));
  cj_buf_puts(&b, k->source);
  cj_signatures_store(&b, k->kernels, k->nkernels);
  cj_buf_add(&b, "", 1);
  cj_cache_entry e = {.ptx = k->ptx,
                      .ptx_len = k->ptx_len,
                      .cubin = k->cubin,
                      .cubin_len = k->cubin_len,
                      .log = k->log,
                      .nvrtc_version = k->nvrtc_version,
                      .names = b.data,
                      .names_len = b.len};
  if (!b.failed && k->ptx) cj_cache_put(engine->cache, direct, &e);
  cj_buf_free(&b);
}

static int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* What a direct entry's record says (by hand: sscanf costs thousands of instructions a call);
** 0 when it does not read as one. */
static int direct_parse(const char *t, cj_code *k) {
  const char *end = t + strlen(t);
  if (end - t < 34) return 0;
  for (int i = 0; i < 16; i++, t += 2) {
    int hi = hex_digit(t[0]), lo = hex_digit(t[1]);
    if (hi < 0 || lo < 0) return 0;
    k->key.bytes[i] = (uint8_t)(hi << 4 | lo);
  }
  const char *arch = ++t, *nl = strchr(t, '\n');
  if (t[-1] != '\n' || !nl || nl == arch || (size_t)(nl - arch) >= sizeof k->arch) return 0;
  memcpy(k->arch, arch, (size_t)(nl - arch));
  size_t unit = 0;
  for (t = nl + 1; *t >= '0' && *t <= '9' && unit <= (size_t)(end - t); t++)
    unit = unit * 10 + (size_t)(*t - '0');
  if (*t++ != ':' || unit > (size_t)(end - t)) return 0;
  k->source = cj_strndup(t, unit);
  t += unit;
  return k->source &&
         cj_signatures_load(t, (size_t)(end - t), &k->kernels, &k->nkernels) == CUJIT_OK;
}

/* The record a direct entry holds, with a reference for the caller: the map's, else one made from
** the entry. NULL when it is missing, damaged (warned of by the cache), stale or unreadable: the
** whole way then. */
static cj_code *direct_lookup(cujit_engine *engine, const cj_cache_key *direct, const char *name) {
  cj_cache_entry e;
  if (!cj_cache_find(engine->cache, direct, &e)) return NULL;
  const char *record = cj_cache_entry_lowered(&e, DIRECT_TAG);
  cj_code *k = record ? calloc(1, sizeof *k) : NULL;
  if (!k) return cj_cache_entry_free(&e), NULL;
  atomic_init(&k->refs, 1);
  pthread_mutex_init(&k->load_lock, NULL);
  k->engine = engine;
  int ok = direct_parse(record, k) && cj_compiler_for(k->arch)->current(engine, e.nvrtc_version);
  cj_code *known = ok ? map_find(engine->programs, &k->key) : NULL;
  if (known) { /* held here already (the memo's slot was taken) */
    cj_cache_entry_free(&e);
    code_release(k);
    atomic_fetch_add(&engine->direct_hits, 1);
    cj_trace_mark("cujit: cache hit (memory)");
    return known;
  }
  if (ok) {
    k->ptx = e.ptx, k->ptx_len = e.ptx_len, k->cubin = e.cubin, k->cubin_len = e.cubin_len;
    k->log = e.log, k->nvrtc_version = e.nvrtc_version;
    e.ptx = NULL, e.cubin = NULL, e.log = NULL; /* the record owns them now */
    ok = (k->name = cj_strdup(name)) != NULL;
  }
  cj_cache_entry_free(&e);
  if (!ok) return code_release(k), NULL;
  map_put(engine->programs, k);
  atomic_fetch_add(&engine->direct_hits, 1);
  cj_trace_mark("cujit: cache hit (disk, direct)");
  return k;
}

/* direct_lookup inside the profilers' "cache lookup" range, as the whole way's lookup is. */
static cj_code *direct_find(cujit_engine *engine, const cj_cache_key *direct, const char *name) {
  cj_trace_push("cujit: cache lookup");
  cj_code *k = direct_lookup(engine, direct, name);
  cj_trace_pop();
  return k;
}

static cujit_status build(cujit_engine *engine, const char *source, const char *name,
                          const cujit_compile_options *options, cujit_program **out) {
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (!out) return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (!source) return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "source is NULL");
  if (!name) name = "<source>";
  double t0 = cj_now_ms();
  char arch[32];
  cj_compiled c;
  cujit_status st = cj_program_arch(engine, options, arch, sizeof arch);
  if (st != CUJIT_OK) return st;
  if (!(options && options->arch)) cj_arch_make_specific(source, arch, sizeof arch);
  cj_cache_key asked, direct;
  static const cj_cache_key zero;
  int memo = cj_compile_memo_key(engine, source, name, options, arch, &asked);
  cj_code *known = memo ? memo_find(engine, &asked) : NULL;
  if (known) return program_new(engine, known, 1, t0, out);
  int use_direct = memo && direct_wanted(options);
  if (use_direct) direct = cj_compile_direct_key(&asked);
  use_direct = use_direct && memcmp(direct.bytes, zero.bytes, sizeof zero.bytes) != 0;
  if (use_direct && (known = direct_find(engine, &direct, name)) != NULL) {
    memo_put(engine->programs, &asked, &known->key, &direct);
    return program_new(engine, known, 1, t0, out);
  }
  /* What is compiled and hashed: the source with the checks of its kernels (scan.h). */
  cj_scan scan;
  if ((st = cj_program_scan(engine, source, name, options, &scan)) != CUJIT_OK) return st;
  c.direct = use_direct; /* a pure result is kept under `direct` (below), not its full key */
  st = cj_compile(engine, &scan, name, options, arch, &c);
  if (st == CUJIT_OK) st = cj_program_lowered_names(engine, name, &scan, &c.entry);
  if (st != CUJIT_OK) {
    cj_cache_entry_free(&c.entry);
    cj_scan_free(&scan);
    return st;
  }
  /* A hit in the byte cache whose record is already here skips the verification and the loads. */
  cj_code *k = c.from_cache ? map_find(engine->programs, &c.key) : NULL;
  if (!k) {
    if ((st = code_new(engine, scan.text, name, &c, &scan, &k)) != CUJIT_OK) {
      cj_cache_entry_free(&c.entry);
      cj_scan_free(&scan);
      return st;
    }
    map_put(engine->programs, k);
  }
  cj_scan_free(&scan);
  int kept_direct = use_direct && c.pure && c.keyed;
  if (kept_direct) direct_put(engine, &direct, k);
  if (memo && c.pure) memo_put(engine->programs, &asked, &k->key, kept_direct ? &direct : &k->key);
  st = program_new(engine, k, c.from_cache, t0, out);
  cj_cache_entry_free(&c.entry);
  return st;
}

/* With line info on (line_info, or debug's -G, which has it too), NVRTC compiles the text
** kept.h makes, whose line table names real files (the CPU device's g++ has its own way). The
** whole of getting a program is a profiler's range (trace.h): a compile or a cache read shows
** inside it, a hit as a mark. */
cujit_status cj_program_build(cujit_engine *engine, const char *source, const char *name,
                              const cujit_compile_options *options, cujit_program **out) {
  char arch[32], *kept = NULL;
  if (engine && source && out &&
      (cj_options_switch_on(options, offsetof(cujit_compile_options, line_info)) ||
       cj_options_switch_on(options, offsetof(cujit_compile_options, debug))) &&
      cj_program_arch(engine, options, arch, sizeof arch) == CUJIT_OK && strcmp(arch, "cpu")) {
    const char *as = name ? name : "<source>";
    cujit_status st = cj_kept_source(engine, source, as, cj_source_is_kernel(source, as), &kept);
    if (st != CUJIT_OK) return *out = NULL, st;
  }
  cj_trace_push("cujit: program %s", name ? name : "<source>");
  cujit_status st = build(engine, kept ? kept : source, name, options, out);
  cj_trace_pop();
  free(kept);
  return st;
}

/* --- references and modules ------------------------------------------------------------------- */

void cj_program_retain(cujit_program *program) {
  if (program) atomic_fetch_add(&program->refs, 1);
}

void cj_program_release(cujit_program *program) {
  if (!program || atomic_fetch_sub(&program->refs, 1) != 1) return;
  code_release(program->code);
  free(program->log);
  free(program->nonnull);
  free(program);
}

static cujit_status load(cj_code *k, cujit_program *p, cujit_device *dev, void **module) {
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&k->load_lock);
  void **modules = k->modules;
  if (!modules && (modules = calloc((size_t)cj_device_slots(k->engine), sizeof *modules)) != NULL)
    __atomic_store_n(&k->modules, modules, __ATOMIC_RELEASE);
  if (!modules)
    st = cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  else if (!modules[cj_device_slot(dev)]) {
    /* The backend sees the program's code as an image: the compile stack's record stays here. */
    const cj_image image = {.name = p->name,
                            .source = p->source,
                            .arch = p->arch,
                            .ptx = p->ptx,
                            .ptx_len = p->ptx_len,
                            .binary = p->cubin,
                            .binary_len = p->cubin_len,
                            .kernels = p->kernels,
                            .nkernels = p->nkernels};
    cj_trace_push("cujit: load %s", p->name);
    if ((st = dev->ops->load(dev, &image, module)) == CUJIT_OK)
      __atomic_store_n(&modules[cj_device_slot(dev)], *module, __ATOMIC_RELEASE);
    cj_trace_pop();
  }
  if (st == CUJIT_OK) *module = modules[cj_device_slot(dev)];
  pthread_mutex_unlock(&k->load_lock);
  return st;
}

cujit_status cj_program_module(cujit_program *program, cujit_device *dev, void **module) {
  cj_code *k = program->code;
  void **modules = __atomic_load_n(&k->modules, __ATOMIC_ACQUIRE);
  if (modules &&
      (*module = __atomic_load_n(&modules[cj_device_slot(dev)], __ATOMIC_ACQUIRE)) != NULL)
    return CUJIT_OK;
  return load(k, program, dev, module);
}

/* --- the public functions --------------------------------------------------------------------- */

static void program_destroy(cj_link *link) {
  cj_program_release((cujit_program *)(void *)((char *)link - offsetof(cujit_program, link)));
}

/* The nonnull option kept with the program for its kernels (cujit_program_kernel), each name
** checked to be a pointer parameter of one of them: a misspelt name would protect nothing. */
static cujit_status keep_nonnull(cujit_program *p, const cujit_compile_options *o) {
  if (!o || !o->nonnull_count) return CUJIT_OK;
  size_t bytes = o->nonnull_count * sizeof(char *);
  for (size_t i = 0; i < o->nonnull_count; i++) {
    const char *n = o->nonnull ? o->nonnull[i] : NULL;
    size_t k = 0;
    while (n && k < p->nkernels && !cj_signature_has_pointer(&p->kernels[k], n)) k++;
    if (!n || k == p->nkernels) {
      cj_buf all = {0};
      for (k = 0; k < p->nkernels; k++)
        for (size_t j = 0; j < p->kernels[k].nparams; j++)
          if (p->kernels[k].params[j].kind == CUJIT_PARAM_POINTER)
            cj_buf_printf(&all, "%s%s.%s", all.len ? ", " : "", p->kernels[k].name,
                          p->kernels[k].params[j].name);
      cj_fail(p->engine, CUJIT_ERROR_INVALID_ARGUMENT,
              "'%s': the nonnull option names '%s', which is no pointer parameter of its kernels; "
              "name one of %s, or \"*\" for all",
              p->name, n ? n : "(NULL)", all.data ? all.data : "(none: no kernel takes a pointer)");
      cj_buf_free(&all);
      return CUJIT_ERROR_INVALID_ARGUMENT;
    }
    bytes += strlen(n) + 1;
  }
  char **names = malloc(bytes);
  if (!names) return cj_fail(p->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char *text = (char *)(names + o->nonnull_count);
  for (size_t i = 0; i < o->nonnull_count; i++)
    names[i] = strcpy(text, o->nonnull[i]), text += strlen(o->nonnull[i]) + 1;
  p->nonnull = names, p->nnonnull = o->nonnull_count;
  return CUJIT_OK;
}

cujit_status cujit_program_compile(cujit_engine *engine, const char *source, const char *name,
                                   const cujit_compile_options *options, cujit_program **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_program_compile: out is NULL; pass the address of a cujit_program *");
  *out = NULL;
  if (!source)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_program_compile: source is NULL; pass the CUDA C++ text to compile");
  cujit_compile_options mine; /* the caller's layout made this library's (cujit.h) */
  cujit_status bad = options
                         ? cj_struct_in(engine, "cujit_program_compile", "cujit_compile_options",
                                        options, &mine, sizeof mine, CJ_COMPILE_OPTIONS_V1)
                         : CUJIT_OK;
  if (bad != CUJIT_OK) return bad;
  cujit_status st = cj_program_build(engine, source, name, options ? &mine : NULL, out);
  if (st == CUJIT_OK && (st = keep_nonnull(*out, options ? &mine : NULL)) != CUJIT_OK) {
    cj_program_release(*out);
    *out = NULL;
  }
  if (st == CUJIT_OK) cj_track(engine, &(*out)->link, program_destroy);
  return st;
}

cujit_status cujit_program_compile_file(cujit_engine *engine, const char *path,
                                        const cujit_compile_options *options, cujit_program **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (!out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_program_compile_file: out is NULL; pass the address of a "
                   "cujit_program *");
  *out = NULL;
  if (!path || !*path)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_program_compile_file: path is NULL or empty");
  cujit_compile_options mine; /* checked before the file is read */
  cujit_status bad =
      options ? cj_struct_in(engine, "cujit_program_compile_file", "cujit_compile_options", options,
                             &mine, sizeof mine, CJ_COMPILE_OPTIONS_V1)
              : CUJIT_OK;
  if (bad != CUJIT_OK) return bad;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return cj_fail(engine, CUJIT_ERROR_IO, "cannot read '%s': %s", path, strerror(EISDIR));
  char *source;
  cujit_status s = cj_file_read(engine, path, MAX_SOURCE_BYTES, &source);
  if (s != CUJIT_OK) return s;
  s = cujit_program_compile(engine, source, path, options ? &mine : NULL, out);
  free(source);
  return s;
}

void cujit_program_free(cujit_program *program) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!program) return;
  cj_untrack(program->engine, &program->link);
  cj_program_release(program);
}
