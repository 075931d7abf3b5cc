/*
** signature_store.c -- kernel signatures as bytes and back, every field as the reader left it,
** so that a cache hit by the text as given (program.c's direct entries) can hand out the kernels
** without reading the source again. The bytes hold no NUL (numbers in decimal, each string after
** its length), and reading them back trusts nothing: any count, kind, dtype or offset out of its
** range makes the whole text unreadable, and the caller reads the source instead.
*/
#include "signature.h"
#include "base/base.h"

#include <stdlib.h>
#include <string.h>

#define STORE_TAG "cujit kernels 1 "

static void put_number(cj_buf *b, unsigned long long v) {
  cj_buf_printf(b, "%llu ", v);
}

static void put_string(cj_buf *b, const char *s) {
  size_t n = strlen(s);
  cj_buf_printf(b, "%zu:", n);
  cj_buf_add(b, s, n);
}

void cj_signatures_store(cj_buf *b, const cj_signature *sigs, size_t count) {
  cj_buf_puts(b, STORE_TAG);
  put_number(b, count);
  for (size_t k = 0; k < count; k++) {
    const cj_signature *s = &sigs[k];
    put_string(b, s->name);
    put_number(b, s->symbol != NULL);
    if (s->symbol) put_string(b, s->symbol);
    put_number(b, s->ntype_vars);
    for (size_t t = 0; t < s->ntype_vars; t++) put_string(b, s->type_vars[t]);
    put_number(b, s->param_bytes);
    put_number(b, (unsigned)s->specialized);
    for (size_t t = 0; t < CJ_MAX_TYPE_VARS; t++) put_number(b, (unsigned)s->bound[t]);
    put_number(b, s->nparams);
    for (size_t i = 0; i < s->nparams; i++) {
      const cj_param *p = &s->params[i];
      put_string(b, p->name);
      put_string(b, p->type);
      put_number(b, (unsigned)p->kind);
      put_number(b, (unsigned)p->dtype);
      put_number(b, (unsigned)p->is_const);
      put_number(b, p->size);
      put_number(b, p->align);
      put_number(b, p->offset);
      put_number(b, (unsigned long long)(p->type_var + 1)); /* -1: none */
      put_number(b, (unsigned)p->nullable);
      put_number(b, (unsigned)p->nonnull);
      put_number(b, (unsigned)p->boolean);
    }
  }
}

/* A cursor over the stored text; `bad` once anything did not read. */
typedef struct reader {
  const char *at, *end;
  int bad;
} reader;

static unsigned long long get_number(reader *r, unsigned long long max) {
  unsigned long long v = 0;
  const char *start = r->at;
  while (!r->bad && r->at < r->end && *r->at >= '0' && *r->at <= '9') {
    v = v * 10 + (unsigned)(*r->at++ - '0');
    if (v > max) r->bad = 1;
  }
  if (r->at == start || r->at >= r->end || *r->at != ' ') r->bad = 1;
  r->at += !r->bad;
  return r->bad ? 0 : v;
}

/* A malloc'd copy of the next string, or NULL (r->bad set unless out of memory: then *oom). */
static char *get_string(reader *r, int *oom) {
  size_t n = 0;
  const char *start = r->at;
  while (!r->bad && r->at < r->end && *r->at >= '0' && *r->at <= '9' && n < 65536)
    n = n * 10 + (size_t)(*r->at++ - '0');
  if (r->bad || r->at == start || r->at >= r->end || *r->at != ':' ||
      (size_t)(r->end - r->at - 1) < n) {
    r->bad = 1;
    return NULL;
  }
  r->at++;
  if (memchr(r->at, '\0', n)) {
    r->bad = 1;
    return NULL;
  }
  char *s = malloc(n + 1);
  if (!s) return *oom = 1, r->bad = 1, NULL;
  memcpy(s, r->at, n);
  s[n] = '\0';
  r->at += n;
  return s;
}

static int get_param(reader *r, cj_param *p, size_t ntype_vars, int *oom) {
  p->name = get_string(r, oom);
  p->type = get_string(r, oom);
  p->kind = (cujit_param_kind)get_number(r, CUJIT_PARAM_POINTER);
  p->dtype = (cujit_dtype)get_number(r, CUJIT_DTYPE_COUNT_ - 1);
  p->is_const = (int)get_number(r, 1);
  p->size = (size_t)get_number(r, CJ_MAX_PARAM_BYTES);
  p->align = (size_t)get_number(r, CJ_MAX_PARAM_BYTES);
  p->offset = (size_t)get_number(r, CJ_MAX_PARAM_BYTES);
  p->type_var = (int)get_number(r, ntype_vars) - 1;
  p->nullable = (int)get_number(r, 1);
  p->nonnull = (int)get_number(r, 1);
  p->boolean = (int)get_number(r, 1);
  return !r->bad && p->offset + p->size <= CJ_MAX_PARAM_BYTES;
}

static int get_signature(reader *r, cj_signature *s, int *oom) {
  memset(s, 0, sizeof *s);
  s->name = get_string(r, oom);
  if (get_number(r, 1)) s->symbol = get_string(r, oom);
  size_t ntype_vars = (size_t)get_number(r, CJ_MAX_TYPE_VARS);
  for (; !r->bad && s->ntype_vars < ntype_vars; s->ntype_vars++)
    s->type_vars[s->ntype_vars] = get_string(r, oom);
  s->param_bytes = (size_t)get_number(r, CJ_MAX_PARAM_BYTES);
  s->specialized = (int)get_number(r, 1);
  for (size_t t = 0; t < CJ_MAX_TYPE_VARS; t++)
    s->bound[t] = (cujit_dtype)get_number(r, CUJIT_DTYPE_COUNT_ - 1);
  size_t nparams = (size_t)get_number(r, CJ_MAX_PARAMS);
  if (!r->bad && nparams && !(s->params = calloc(nparams, sizeof *s->params))) return *oom = 1, 0;
  for (; !r->bad && s->nparams < nparams; s->nparams++)
    if (!get_param(r, &s->params[s->nparams], s->ntype_vars, oom)) {
      s->nparams++; /* freed with the others */
      break;
    }
  for (size_t i = 0; !r->bad && i < s->nparams; i++)
    if (s->params[i].offset + s->params[i].size > s->param_bytes) r->bad = 1;
  return !r->bad;
}

cujit_status cj_signatures_load(const char *text, size_t len, cj_signature **out, size_t *count) {
  *out = NULL, *count = 0;
  reader r = {text, text + len, 0};
  size_t tag = strlen(STORE_TAG);
  if (len < tag || memcmp(text, STORE_TAG, tag) != 0) return CUJIT_ERROR_INVALID_ARGUMENT;
  r.at += tag;
  size_t n = (size_t)get_number(&r, 65536);
  cj_signature *sigs = !r.bad && n ? calloc(n, sizeof *sigs) : NULL;
  int oom = !r.bad && n && !sigs;
  size_t got = 0;
  while (sigs && got < n && !r.bad) get_signature(&r, &sigs[got++], &oom);
  if (r.bad || oom || r.at != r.end || (n && !sigs)) {
    for (size_t i = 0; i < got; i++) cj_signature_free(&sigs[i]);
    free(sigs);
    return oom ? CUJIT_ERROR_OUT_OF_HOST_MEMORY : CUJIT_ERROR_INVALID_ARGUMENT;
  }
  *out = sigs, *count = n;
  return CUJIT_OK;
}
