/*
** program_many.c -- compiling many independent programs at once: cujit_program_compile_many
** (each item as cujit_program_compile, on the workers of base/workers.h) and
** cujit_kernel_specialize_many (a generic kernel's type lists compiled at once, then taken as
** cujit_kernel_specialize takes them). Each item's status and message are kept for the caller
** (cj_items_keep), since a worker's failure is recorded on the worker's thread.
*/
#include "kernel.h"
#include "base/workers.h"
#include "compile/source.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call's items, shared by its workers: each worker writes only its items' entries. */
typedef struct batch {
  cujit_engine *engine;
  size_t count;
  const char *const *sources, *const *names;
  const cujit_compile_options *const *options;
  cujit_program **programs;
  cujit_status *statuses;
  char **messages;
  size_t *order;       /* the items of this round, by index into the arrays above */
  size_t *repeat_of;   /* an earlier item given the same (SIZE_MAX: none) */
  const char **texts;  /* cujit_kernel_specialize_many: the generated source of each list */
  cujit_kernel *owner; /* ... and its generic kernel */
} batch;

static const char *item_name(const batch *b, size_t i) {
  return b->names && b->names[i] ? b->names[i] : NULL;
}

static const cujit_compile_options *item_options(const batch *b, size_t i) {
  return b->options ? b->options[i] : NULL;
}

/* The worker's message for item i, copied: the worker's own error slot is its thread's. */
static void keep_failure(batch *b, size_t i, cujit_status st) {
  b->statuses[i] = st;
  const char *m = cujit_errmsg(b->engine);
  b->messages[i] = cj_strdup(m && *m ? m : cujit_status_string(st));
}

static void compile_item(void *user, size_t k) {
  batch *b = user;
  size_t i = b->order[k];
  cujit_status st;
  if (b->texts) { /* a generic kernel's list: the program is only made, for the map and memo */
    cujit_program *p = NULL;
    st = cj_program_build(b->engine, b->texts[i], b->owner->sig.name, &b->owner->options, &p);
    if (p) cj_program_release(p);
  } else {
    st = cujit_program_compile(b->engine, b->sources[i], item_name(b, i), item_options(b, i),
                               &b->programs[i]);
  }
  if (st != CUJIT_OK) keep_failure(b, i, st);
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a: only to skip most comparisons */
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int same_text(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* Marks each item given again after an earlier one (same source, name and options pointer):
** compiled in a second round, it is then a memory-cache hit instead of a second compile of the
** same text racing the first. */
static void find_repeats(batch *b, const char *const *texts) {
  uint64_t *h = malloc(b->count * sizeof *h);
  for (size_t i = 0; h && i < b->count; i++) h[i] = text_hash(texts[i]);
  for (size_t i = 0; i < b->count; i++) {
    b->repeat_of[i] = SIZE_MAX;
    for (size_t j = 0; h && j < i && b->repeat_of[i] == SIZE_MAX; j++)
      if (h[j] == h[i] && b->repeat_of[j] == SIZE_MAX && same_text(texts[j], texts[i]) &&
          same_text(item_name(b, j), item_name(b, i)) && item_options(b, j) == item_options(b, i))
        b->repeat_of[i] = j;
  }
  free(h);
}

/* Runs the items `todo` says (all when NULL) in two rounds, firsts then repeats. */
static void run_rounds(batch *b, int threads, const int *todo) {
  for (int round = 0; round < 2; round++) {
    size_t n = 0;
    for (size_t i = 0; i < b->count; i++)
      if ((!todo || todo[i]) && (b->repeat_of[i] == SIZE_MAX) == (round == 0)) b->order[n++] = i;
    cj_workers_run(n, threads, compile_item, b);
  }
}

/* The call's result: every item's message kept for cujit_program_compile_many_message, and the
** first failure, with the count, as the call's own error. */
static cujit_status finish(batch *b, const char *fn, const char *what) {
  size_t failed = 0, first = 0;
  for (size_t i = b->count; i-- > 0;)
    if (b->statuses[i] != CUJIT_OK) failed++, first = i;
  cujit_status st = failed ? b->statuses[first] : CUJIT_OK;
  if (failed) {
    const char *m = b->messages[first] ? b->messages[first] : cujit_status_string(st);
    cj_fail(b->engine, st, "%s: %zu of %zu %s failed; the first, item %zu: %s", fn, failed,
            b->count, what, first, m);
  }
  cj_items_keep(b->engine, b->messages, b->count);
  b->messages = NULL;
  return st;
}

/* The items' arrays, statuses included (the caller's, or one of ours when it passed none). */
static cujit_status batch_open(batch *b, cujit_engine *engine, size_t count,
                               cujit_status *statuses) {
  memset(b, 0, sizeof *b);
  b->engine = engine, b->count = count;
  b->messages = calloc(count, sizeof *b->messages);
  b->order = calloc(count, sizeof *b->order);
  b->repeat_of = calloc(count, sizeof *b->repeat_of);
  b->statuses = statuses ? statuses : calloc(count, sizeof *b->statuses);
  if (!b->messages || !b->order || !b->repeat_of || !b->statuses)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  for (size_t i = 0; i < count; i++) b->statuses[i] = CUJIT_OK;
  return CUJIT_OK;
}

static void batch_close(batch *b, const cujit_status *callers) {
  for (size_t i = 0; b->messages && i < b->count; i++) free(b->messages[i]);
  free(b->messages);
  free(b->order);
  free(b->repeat_of);
  if (b->statuses != callers) free(b->statuses);
}

/* CUJIT_COMPILE_THREADS, or 0 with the failure recorded for `fn`. */
static int threads_for(cujit_engine *engine, const char *fn) {
  char why[256];
  int threads = cj_compile_threads(why, sizeof why);
  if (!threads) cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s", fn, why);
  return threads;
}

cujit_status cujit_program_compile_many(cujit_engine *engine, size_t count,
                                        const char *const *sources, const char *const *names,
                                        const cujit_compile_options *const *options,
                                        cujit_program **programs, cujit_status *statuses) {
  static const char fn[] = "cujit_program_compile_many";
  if (!engine) return CUJIT_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; programs && i < count; i++) programs[i] = NULL;
  cj_items_keep(engine, NULL, 0); /* a refusal below leaves no messages of an earlier call */
  if (!count) return CUJIT_OK;
  if (!sources || !programs)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL; pass an array of %zu %s",
                   fn, sources ? "programs" : "sources", count,
                   sources ? "cujit_program * to fill" : "source texts");
  int threads = threads_for(engine, fn);
  if (!threads) return CUJIT_ERROR_INVALID_ARGUMENT;
  batch b;
  cujit_status st = batch_open(&b, engine, count, statuses);
  if (st == CUJIT_OK) {
    b.sources = sources, b.names = names, b.options = options, b.programs = programs;
    find_repeats(&b, sources);
    run_rounds(&b, threads, NULL);
    st = finish(&b, fn, "programs");
  }
  batch_close(&b, statuses);
  return st;
}

const char *cujit_program_compile_many_message(const cujit_engine *engine, size_t index) {
  return cj_item_message(engine, index);
}

/* --- a generic kernel's type lists at once ---------------------------------------------------- */

/* Whether the generic kernel already has a specialisation for `types`. */
static int specialised(cujit_kernel *g, const cujit_dtype *types) {
  size_t n = g->sig.ntype_vars;
  pthread_mutex_lock(&g->lock);
  int found = 0;
  for (size_t i = 0; i < g->nspecs && !found; i++)
    found = memcmp(g->specs[i].types, types, n * sizeof *types) == 0;
  pthread_mutex_unlock(&g->lock);
  return found;
}

static int concrete(const cujit_dtype *types, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (types[i] <= CUJIT_DTYPE_NONE || types[i] >= CUJIT_DTYPE_COUNT_) return 0;
  return 1;
}

/* Compiles, at once, the lists of `b` not yet specialised (made into sources in b->texts), so
** that specialising each afterwards finds its program built. */
static cujit_status compile_lists(batch *b, const cujit_dtype *types, int threads) {
  cujit_kernel *g = b->owner;
  size_t n = g->sig.ntype_vars;
  char **texts = calloc(b->count, sizeof *texts);
  int *todo = calloc(b->count, sizeof *todo);
  if (!texts || !todo) {
    free(texts);
    free(todo);
    return cj_fail(b->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  for (size_t i = 0; i < b->count; i++) {
    const cujit_dtype *list = types + i * n;
    if (!concrete(list, n) || specialised(g, list)) continue; /* refused or found below */
    const char *values[CJ_MAX_TYPE_VARS];
    for (size_t t = 0; t < n; t++) values[t] = cujit_dtype_ctype(list[t]);
    todo[i] = (texts[i] = cj_source_for_kernel(&g->sig, g->body, g->preamble, values)) != NULL;
  }
  b->texts = (const char **)texts;
  find_repeats(b, b->texts);
  run_rounds(b, threads, todo);
  for (size_t i = 0; i < b->count; i++) free(texts[i]);
  free(texts);
  free(todo);
  b->texts = NULL;
  return CUJIT_OK;
}

cujit_status cujit_kernel_specialize_many(cujit_kernel *kernel, size_t lists,
                                          const cujit_dtype *types, cujit_kernel **out,
                                          cujit_status *statuses) {
  static const char fn[] = "cujit_kernel_specialize_many";
  if (!kernel) return CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_engine *engine = kernel->engine;
  for (size_t i = 0; out && i < lists; i++) out[i] = NULL;
  cj_items_keep(engine, NULL, 0);
  if (kernel->program)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: kernel '%s' (%s) is not generic: it has no type variables to bind", fn,
                   kernel->sig.name, kernel->signature_text);
  if (!lists) return CUJIT_OK;
  if (!types)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: types is NULL; pass %zu lists of %zu dtypes, one after another", fn, lists,
                   kernel->sig.ntype_vars);
  int threads = threads_for(engine, fn);
  if (!threads) return CUJIT_ERROR_INVALID_ARGUMENT;
  batch b;
  cujit_status st = batch_open(&b, engine, lists, statuses);
  if (st == CUJIT_OK) {
    b.owner = kernel;
    st = compile_lists(&b, types, threads);
  }
  for (size_t i = 0; st == CUJIT_OK && i < lists; i++) {
    if (b.statuses[i] != CUJIT_OK) continue; /* its compile failed: that message stands */
    cujit_kernel *k = NULL;
    cujit_status s = cujit_kernel_specialize(kernel, types + i * kernel->sig.ntype_vars,
                                             kernel->sig.ntype_vars, &k);
    if (s != CUJIT_OK) keep_failure(&b, i, s);
    if (out) out[i] = k;
  }
  if (st == CUJIT_OK) st = finish(&b, fn, "type lists");
  batch_close(&b, statuses);
  return st;
}
