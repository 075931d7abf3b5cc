/*
** host_text.c -- the preprocessor's lines in host code elision (host_code.h): where they are
** (a '#' first on its line outside comments and literals), and the blanking that spares those
** that shape the program, so every #if of a blanked definition still pairs; the source's #defines;
** the quick look that gives a kernel's source back without reading it as declarations; the sets
** of words kept code names; and the elision of a unit's headers together (cj_host_code_elide_unit).
*/
#include "host_code.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "lang/lexicon.h"
#include "scan.h"

#define MAX_NEST 512

const char *const cj_host_device_words[] = {"__global__",  "__device__", "__constant__",
                                            "__managed__", "__shared__", NULL};

/* Whether h (a blanked head) is extern "..." and the brace at p opens its block. */
static int extern_block(const char *h, const char *p) {
  if (strncmp(h, "extern", 6) != 0) return 0;
  for (h += 6; *h == ' ' || *h == '\t' || *h == '\n'; h++) {
  }
  const char *q = *h == '"' ? strchr(h + 1, '"') : NULL;
  if (!q || q > p) return 0;
  for (q++; *q == ' ' || *q == '\t' || *q == '\n'; q++) {
  }
  return q == p;
}

/* Where the preprocessor lines start: a '#' first on its line outside comments and literals. */
void cj_host_mark_directives(const char *s, const char *blanked, size_t n, char *dir) {
  int line_start = 1;
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      line_start |= c == '\n', i++;
    } else if (c == '#' && line_start) {
      dir[i] = 1, line_start = 0;
      while (i < n && s[i] != '\n') { /* a comment may open on it and run on */
        if (s[i] == '/' && s[i + 1] == '*') break;
        i += (s[i] == '\\' && s[i + 1] == '\n') ? 2 : 1;
      }
    } else if (c == '/' && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') i += (s[i] == '\\' && s[i + 1] == '\n') ? 2 : 1;
    } else if (c == '/' && s[i + 1] == '*') {
      const char *e = strstr(s + i + 2, "*/");
      i = e ? (size_t)(e - s) + 2 : n;
    } else if (c == '"' || c == '\'') {
      line_start = 0;
      if (c == '"' && i > 0 && s[i - 1] == 'R' && blanked[i] == ' ') { /* R"d( ... )d" */
        size_t d = i + 1;
        while (d < n && s[d] != '(' && d - i < 20) d++;
        char close[24];
        snprintf(close, sizeof close, ")%.*s\"", (int)(d - i - 1), s + i + 1);
        const char *e = strstr(s + d, close);
        i = e ? (size_t)(e - s) + strlen(close) : n;
        continue;
      }
      for (i++; i < n && s[i] != c && s[i] != '\n'; i += s[i] == '\\' && i + 1 < n ? 2 : 1) {
      }
      if (i < n && s[i] == c) i++;
    } else {
      line_start = 0, i++;
    }
  }
}

/* Blanks [from, to) of out but newlines and the preprocessor lines that shape the program (#if,
** #define, ...): a #pragma or #include inside a blanked definition goes with it. */
void cj_host_blank(const char *s, const char *dir, char *out, size_t from, size_t to) {
  static const char *const kept[] = {"if",   "ifdef", "ifndef", "elif",  "elifdef", "elifndef",
                                     "else", "endif", "define", "undef", "line",    NULL};
  for (size_t i = from; i < to;) {
    size_t ls = i;
    while (ls > 0 && s[ls - 1] != '\n') ls--;
    size_t p = ls;
    while (s[p] == ' ' || s[p] == '\t') p++;
    size_t e = i; /* this line's end, continued lines joined */
    while (s[e] && s[e] != '\n') e += (s[e] == '\\' && s[e + 1] == '\n') ? 2 : 1;
    int keep = 0;
    if (dir && dir[p] && p >= i) {
      size_t q = p + 1;
      while (s[q] == ' ' || s[q] == '\t') q++;
      for (const char *const *k = kept; *k && !keep; k++) {
        size_t n = strlen(*k);
        keep = !strncmp(s + q, *k, n) && !cj_ident_char((unsigned char)s[q + n]);
      }
    }
    for (; i < to && i < e; i++)
      if (!keep && s[i] != '\n') out[i] = ' ';
    if (i < to && s[i] == '\n') i++;
  }
}

/* 0 when the blanked text surely holds no host code: every declaration at namespace scope says a
** device word before its body (a kernel's source), read with no token, no allocation; 1 when it may
** (then the full reading decides). Braces of namespace and extern "C" blocks are seen through. */
int cj_host_may_hold_host_code(const char *b) {
  unsigned char open[MAX_NEST]; /* for each brace open: 1 a namespace's (seen through) */
  int depth = 0, device = 0, text = 0;
  const char *seg = b;
  for (const char *p = b;;) {
    if (depth > 0 && !open[depth - 1])
      p += strcspn(p, "{}"); /* inside a body: only its braces matter */
    else
      while (*p && !cj_ident_char((unsigned char)*p) && *p != '{' && *p != '}' && *p != ';' &&
             *p != '(')
        p++;
    if (!*p) return text && !device;
    if (cj_ident_char((unsigned char)*p)) {
      const char *w = p;
      while (cj_ident_char((unsigned char)*p)) p++;
      if (depth == 0 || open[depth - 1]) {
        text = 1;
        for (const char *const *d = cj_host_device_words; *d && !device; d++)
          device = (size_t)(p - w) == strlen(*d) && !memcmp(w, *d, (size_t)(p - w));
      }
      continue;
    }
    int outside = depth == 0 || open[depth - 1];
    if (*p == '(' && outside) text = 1;
    if (*p == ';' && outside) {
      if (text && !device) return 1;
      text = device = 0, seg = p + 1;
    } else if (*p == '{') {
      if (depth == MAX_NEST) return 1;
      const char *h = seg; /* namespace x {, inline namespace {, extern "C" { */
      while (*h == ' ' || *h == '\n' || *h == '\t' || *h == '\r') h++;
      if (!strncmp(h, "inline", 6) && !cj_ident_char((unsigned char)h[6])) h += 6;
      while (*h == ' ' || *h == '\n' || *h == '\t' || *h == '\r') h++;
      int through =
          outside && ((!strncmp(h, "namespace", 9) && !cj_ident_char((unsigned char)h[9])) ||
                      extern_block(h, p));
      if (through) text = device = 0, seg = p + 1;
      open[depth++] = (unsigned char)through;
    } else if (*p == '}') {
      if (depth == 0) return 1; /* the full reading says where */
      int through = open[--depth];
      if (depth == 0 || open[depth - 1]) { /* a body or block closed at namespace scope */
        if (text && !device && !through) return 1;
        text = device = 0, seg = p + 1;
      }
    }
    p++;
  }
}

/* Each #define of the source: its name and replacement, read from the source itself (the blanked
** copy has blanked its preprocessor lines). */
int cj_host_read_macros(const char *s, const char *dir, cj_host_macro **out, size_t *count) {
  size_t n = strlen(s), cap = 0;
  *out = NULL, *count = 0;
  for (size_t i = 0; i < n;) {
    size_t e = i; /* the line's end, continued lines joined */
    while (e < n && s[e] != '\n') e += (s[e] == '\\' && e + 1 < n && s[e + 1] == '\n') ? 2 : 1;
    size_t p = i;
    while (p < e && (s[p] == ' ' || s[p] == '\t')) p++;
    /* a directive, unless the blanked copy kept text there (a '#' inside code or a literal) */
    if (p < e && dir[p]) {
      p++;
      while (p < e && (s[p] == ' ' || s[p] == '\t')) p++;
      if (e - p > 6 && !strncmp(s + p, "define", 6) && (s[p + 6] == ' ' || s[p + 6] == '\t')) {
        p += 6;
        while (p < e && (s[p] == ' ' || s[p] == '\t')) p++;
        size_t at = p;
        while (p < e && cj_ident_char((unsigned char)s[p])) p++;
        if (p > at) {
          cj_host_macro m = {at, p - at, p, e, 0, 0};
          if (p < e && s[p] == '(') { /* function-like: the replacement follows the ')' */
            while (p < e && s[p] != ')') p++;
            m.body = p < e ? p + 1 : e;
          }
          if (*count == cap) {
            cap = cap ? 2 * cap : 16;
            cj_host_macro *g = realloc(*out, cap * sizeof *g);
            if (!g) return 0;
            *out = g;
          }
          (*out)[(*count)++] = m;
        }
      }
    }
    i = e < n ? e + 1 : n;
  }
  return 1;
}

/* --- sets of words ---------------------------------------------------------------------------- */

static size_t hash(const char *s, size_t n) {
  uint64_t x = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) x = (x ^ (unsigned char)s[i]) * 1099511628211ull;
  return (size_t)x;
}

int cj_host_set_has(const cj_host_set *st, const char *s, size_t n) {
  if (!st->cap) return 0;
  for (size_t i = hash(s, n) & (st->cap - 1);; i = (i + 1) & (st->cap - 1)) {
    if (!st->w[i].s) return 0;
    if (st->w[i].n == n && !memcmp(st->w[i].s, s, n)) return 1;
  }
}

int cj_host_set_add(cj_host_set *st, const char *s, size_t n) {
  if (cj_host_set_has(st, s, n)) return 0;
  if (2 * (st->n + 1) > st->cap) {
    size_t cap = st->cap ? 2 * st->cap : 64;
    cj_host_word *w = calloc(cap, sizeof *w);
    if (!w) return -1;
    for (size_t i = 0; i < st->cap; i++)
      if (st->w[i].s)
        for (size_t j = hash(st->w[i].s, st->w[i].n) & (cap - 1);; j = (j + 1) & (cap - 1))
          if (!w[j].s) {
            w[j] = st->w[i];
            break;
          }
    free(st->w);
    st->w = w, st->cap = cap;
  }
  size_t i = hash(s, n) & (st->cap - 1);
  while (st->w[i].s) i = (i + 1) & (st->cap - 1);
  st->w[i] = (cj_host_word){s, n};
  st->n++;
  return 1;
}

/* --- a unit's files together ------------------------------------------------------------------ */

char *cj_host_code_elide(const char *source, size_t *elided, char *why, size_t why_len) {
  return cj_host_code_elide_in(source, NULL, NULL, elided, why, why_len);
}

/* The words of text (blanked into *b, which they point into), and those called (followed by '('
** or '<'): once a round, not once a header, so a round costs the unit's length once. */
static int outside_words(const char *text, char **b, cj_host_set *named, cj_host_set *called) {
  size_t n = strlen(text), p = 0;
  if (!(*b = cj_blank_source(text))) return 0;
  for (cj_token t = cj_next_token(*b, &p, n), next; t.kind != CJ_TK_END; t = next) {
    next = cj_next_token(*b, &p, n);
    int call = next.len == 1 && ((*b)[next.pos] == '(' || (*b)[next.pos] == '<');
    if (t.kind == CJ_TK_IDENT && cj_host_set_add(call ? called : named, *b + t.pos, t.len) < 0)
      return 0;
  }
  return 1;
}

/* Each round elides every text from what it was given, knowing main and the texts of the round
** before (the first round: main alone); what is kept only grows, so the rounds end when none
** changes. A text cujit cannot read comes back as it was: the compiler says why. */
int cj_host_code_elide_unit(const char *main, char **texts, size_t n) {
  char **given = calloc(n ? n : 1, sizeof *given), why[8];
  int ok = given != NULL;
  for (size_t i = 0; i < n && ok; i++) given[i] = texts[i], texts[i] = NULL;
  for (int changed = 1; changed && ok;) {
    cj_buf all = {0};
    cj_host_set named = {0}, called = {0};
    char *b = NULL;
    cj_buf_puts(&all, main);
    for (size_t i = 0; i < n; i++)
      if (texts[i]) cj_buf_puts(&all, "\n"), cj_buf_puts(&all, texts[i]);
    ok = !all.failed && outside_words(all.data, &b, &named, &called);
    changed = 0;
    for (size_t i = 0; i < n && ok; i++) {
      size_t elided = 0;
      char *text = cj_host_code_elide_in(given[i], &named, &called, &elided, why, sizeof why);
      if (!(ok = text != NULL) || (texts[i] && !strcmp(text, texts[i]))) {
        free(text);
        continue;
      }
      free(texts[i]);
      texts[i] = text, changed = 1;
    }
    free(named.w), free(called.w), free(b);
    cj_buf_free(&all);
  }
  for (size_t i = 0; i < n && given; i++) { /* each slot owns one text, elided or as given */
    if (!texts[i]) texts[i] = given[i], given[i] = NULL;
    free(given[i]);
  }
  free(given);
  return ok;
}

char *cj_host_code_elide_among(const char *source, const char *const *others, size_t n,
                               size_t *elided, char *why, size_t why_len) {
  cj_buf all = {0};
  cj_host_set named = {0}, none = {0};
  char *b = NULL, *text = NULL;
  for (size_t i = 0; i < n; i++) cj_buf_puts(&all, "\n"), cj_buf_puts(&all, others[i]);
  /* Every word named, none called: the headers' device code names the source's types, constants
  ** and templates (Vec<float>), but calls no host function of it; a header kernel's own name
  ** must not keep a host wrapper of that name in the source. */
  if (!all.failed && outside_words(all.data ? all.data : "", &b, &named, &named))
    text = cj_host_code_elide_in(source, &named, &none, elided, why, why_len);
  free(named.w), free(b);
  cj_buf_free(&all);
  return text;
}
