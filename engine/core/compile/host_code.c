/*
** host_code.c -- host code elided (host_code.h has the rules): the declarations at namespace scope
** read from the blanked text (blank.c), each marked device, host or kept-as-is, then what kept
** code names kept too, until nothing more is; what is left is blanked in a copy of the source.
** Knows no compiler: both devices compile what this leaves, so they see the same program.
*/
#include "host_code.h"
#include "base/base.h"
#include "lang/lexicon.h"
#include "scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX
#define MAX_NAMES 16
#define MAX_NEST 512

enum { R_KEEP, R_DEVICE, R_CALLED, R_NAMED }; /* an item's role */

typedef struct item {
  size_t t0, t1; /* its tokens, [t0, t1) */
  int role;      /* R_KEEP, R_DEVICE: kept; R_CALLED: a host function, kept when kept code calls
                 ** it; R_NAMED: a host type, variable or prototype, kept when kept code names it */
  size_t paren;  /* a function's parameter list (its '(' token), whose names are its own */
  size_t body, body_end; /* a class's body: its members' names are no references */
  size_t names[MAX_NAMES];
  int nnames, kept, overflow; /* overflow: more names than it can hold, so it is kept */
} item;

typedef struct hc {
  const char *src, *b; /* the source; the blanked copy */
  char *dir;           /* 1 at the '#' of each preprocessor line of the source */
  cj_token *t;         /* the blanked copy's tokens, */
  size_t nt;           /* how many */
  item *it;            /* the declarations read */
  size_t nit, capit;
  cj_host_macro *m; /* the source's #defines */
  size_t nm;
  cj_host_set named, called; /* the words kept code names, and those it calls */
  cj_host_set device_fns;    /* the names of device functions (device_names) */
  int bad, oom;
  char *why;
  size_t why_len;
} hc;

/* --- tokens and words ------------------------------------------------------------------------- */

static int is(const hc *h, size_t i, const char *s) {
  return i < h->nt && h->b[h->t[i].pos] == *s && cj_tok_is(h->b, h->t[i], s);
}

/* Whether token i is the one punctuation character c: the scanner's most asked question. */
static int pc(const hc *h, size_t i, char c) {
  return i < h->nt && h->t[i].len == 1 && h->b[h->t[i].pos] == c;
}

static int ident(const hc *h, size_t i) {
  return i < h->nt && h->t[i].kind == CJ_TK_IDENT;
}

static int in_list(const hc *h, size_t i, const char *const *list) {
  for (; *list; list++)
    if (is(h, i, *list)) return 1;
  return 0;
}

/* Words whose parenthesised argument is part of a declaration's head, not its parameters. */
static const char *const attribute_words[] = {
    "__attribute__",    "__declspec",  "alignas",  "__align__", "__launch_bounds__",
    "__cluster_dims__", "__maxnreg__", "decltype", "_Alignas",  "__builtin_align__",
    "noexcept",         "throw",       NULL};
/* Words after a parameter list that still belong to the function's head. */
static const char *const trailing_words[] = {"const",    "volatile", "noexcept", "throw",   "try",
                                             "override", "final",    "requires", "mutable", NULL};
/* Words before a function's name that are not its return type. */
static const char *const specifiers[] = {
    "static",          "inline",       "extern",     "constexpr",
    "consteval",       "virtual",      "explicit",   "friend",
    "__forceinline__", "__noinline__", "__inline__", "__host__",
    "thread_local",    "register",     "template",   NULL};
static const char *const class_keys[] = {"class", "struct", "union", "enum", NULL};

static size_t line_of(const hc *h, size_t pos) {
  size_t line = 1;
  for (size_t i = 0; i < pos && h->src[i]; i++) line += h->src[i] == '\n';
  return line;
}

static void fail(hc *h, size_t tok, const char *what) {
  if (h->bad) return;
  h->bad = 1;
  size_t pos = tok < h->nt ? h->t[tok].pos : strlen(h->src);
  snprintf(h->why, h->why_len, "%s at line %zu", what, line_of(h, pos));
}

/* --- the source's macros ---------------------------------------------------------------------- */

static cj_host_macro *find_macro(const hc *h, const char *s, size_t n) {
  for (size_t i = h->nm; i-- > 0;)
    if (h->m[i].len == n && !memcmp(h->src + h->m[i].at, s, n)) return &h->m[i];
  return NULL;
}

static int device_word(const hc *h, const char *s, size_t n) {
  for (const char *const *w = cj_host_device_words; *w; w++)
    if (strlen(*w) == n && !memcmp(*w, s, n)) return 1;
  cj_host_macro *m = find_macro(h, s, n);
  return m && m->device;
}

/* A macro is a device word when its replacement says one, itself or through another macro. */
static void mark_device_macros(hc *h) {
  for (int round = 0, changed = 1; changed && round < 8; round++) {
    changed = 0;
    for (size_t i = 0; i < h->nm; i++) {
      cj_host_macro *m = &h->m[i];
      for (size_t p = m->body; !m->device && p < m->end;) {
        cj_token t = cj_next_token(h->src, &p, m->end);
        if (t.kind == CJ_TK_END) break;
        if (t.kind == CJ_TK_IDENT &&
            !(t.len == m->len && !memcmp(h->src + t.pos, h->src + m->at, t.len)))
          changed |= m->device = device_word(h, h->src + t.pos, t.len);
      }
    }
  }
}

/* --- kept code's words ------------------------------------------------------------------------ */

static void add_word(hc *h, const char *s, size_t n, int call);

/* The words of a macro's replacement, once, when kept code names the macro. */
static void add_macro_words(hc *h, cj_host_macro *m) {
  if (m->used) return;
  m->used = 1;
  for (size_t p = m->body; p < m->end;) {
    cj_token t = cj_next_token(h->src, &p, m->end);
    if (t.kind == CJ_TK_END) break;
    if (t.kind != CJ_TK_IDENT) continue;
    size_t q = p;
    while (q < m->end && (h->src[q] == ' ' || h->src[q] == '\t')) q++;
    add_word(h, h->src + t.pos, t.len, q < m->end && (h->src[q] == '(' || h->src[q] == '<'));
  }
}

static void add_word(hc *h, const char *s, size_t n, int call) {
  int added = cj_host_set_add(&h->named, s, n);
  if (added > 0) {
    cj_host_macro *m = find_macro(h, s, n);
    if (m) add_macro_words(h, m);
  }
  if (added < 0 || (call && cj_host_set_add(&h->called, s, n) < 0)) h->oom = 1;
}

/* The last identifier of each parameter of the list opened at token `paren` (its own names, which
** shadow any host name), at most `max` of them into params; how many. */
static int param_names(const hc *h, size_t paren, size_t *params, int max) {
  int depth = 0, n = 0;
  size_t last = NONE;
  for (size_t i = paren; paren != NONE && i < h->nt; i++) {
    if (pc(h, i, '(') || pc(h, i, '[') || pc(h, i, '<') || pc(h, i, '{'))
      depth++;
    else if (pc(h, i, ')') || pc(h, i, ']') || pc(h, i, '>') || pc(h, i, '}'))
      depth--;
    if (depth == 0 || (depth == 1 && (pc(h, i, ',') || pc(h, i, '=')))) {
      if (last != NONE && n < max) params[n++] = last;
      last = NONE;
      if (depth == 0) break;
    } else if (depth == 1 && ident(h, i))
      last = i;
  }
  return n;
}

/* Whether the identifier at token i is declared there rather than used: given a value (`int i =
** 0`, which device code never does to a host variable), or a member's name in a class body. */
static int declared_here(const hc *h, const item *x, size_t i) {
  if (pc(h, i + 1, '=') && !pc(h, i + 2, '=')) return 1;
  return x->body != NONE && i > x->body && i < x->body_end &&
         (pc(h, i + 1, ';') || pc(h, i + 1, ',') || pc(h, i + 1, '[') || pc(h, i + 1, ':') ||
          pc(h, i + 1, '{'));
}

static int same_word(const hc *h, size_t a, size_t b) {
  return h->t[a].len == h->t[b].len && !memcmp(h->b + h->t[a].pos, h->b + h->t[b].pos, h->t[a].len);
}

/* The words tokens [from, to) of kept item x use (not its parameters, not what it declares). */
static void add_range(hc *h, const item *x, size_t from, size_t to) {
  size_t params[64];
  int np = param_names(h, x->paren, params, 64);
  for (size_t i = from; i < to && !h->oom; i++) {
    if (!ident(h, i) || declared_here(h, x, i)) continue;
    int own = 0;
    for (int k = 0; k < np && !own && i > x->paren; k++) own = same_word(h, i, params[k]);
    if (own) continue;
    int call = pc(h, i + 1, '(') || pc(h, i + 1, '<') || (i > 0 && pc(h, i - 1, '&'));
    add_word(h, h->b + h->t[i].pos, h->t[i].len, call);
  }
}

static size_t walk_members(hc *h, const item *x, char *out);

static void keep(hc *h, item *x) {
  x->kept = 1;
  if (x->body == NONE) {
    add_range(h, x, x->t0, x->t1);
    return;
  }
  add_range(h, x, x->t0, x->body + 1); /* a class: its head, its members, its declarators */
  walk_members(h, x, NULL);
  add_range(h, x, x->body_end - 1, x->t1);
}

/* --- declarations ----------------------------------------------------------------------------- */

/* Past the group opened at token i ('(', '[' or '{'), or NONE when it is never closed or another
** bracket closes it. */
static size_t skip_group(hc *h, size_t i) {
  char stack[MAX_NEST];
  int depth = 0;
  for (; i < h->nt; i++) {
    const char *c = h->b + h->t[i].pos;
    if (h->t[i].kind != CJ_TK_PUNCT || h->t[i].len != 1) continue;
    if (*c == '(' || *c == '[' || *c == '{') {
      if (depth == MAX_NEST) return fail(h, i, "brackets nested too deep"), NONE;
      stack[depth++] = *c == '(' ? ')' : *c == '[' ? ']' : '}';
    } else if (*c == ')' || *c == ']' || *c == '}') {
      if (stack[depth - 1] != *c) return fail(h, i, "a bracket closed by the wrong one"), NONE;
      if (--depth == 0) return i + 1;
    }
  }
  return fail(h, i, "a bracket never closed (opened before the end)"), NONE;
}

/* Past template <...> (its '<' at token i). */
static size_t skip_angle(hc *h, size_t i) {
  int depth = 0;
  for (; i < h->nt; i++) {
    if (pc(h, i, '(') || pc(h, i, '[')) {
      if ((i = skip_group(h, i)) == NONE) return NONE;
      i--;
    } else if (pc(h, i, '<'))
      depth++;
    else if (pc(h, i, '>') && --depth == 0)
      return i + 1;
    else if (pc(h, i, ';') || pc(h, i, '{') || pc(h, i, '}'))
      return i; /* a comparison, not a template's list: read on from there */
  }
  return i;
}

static item *add_item(hc *h, size_t t0, size_t t1, int role) {
  if (h->nit == h->capit) {
    size_t cap = h->capit ? 2 * h->capit : 64;
    item *g = realloc(h->it, cap * sizeof *g);
    if (!g) return h->oom = 1, NULL;
    h->it = g, h->capit = cap;
  }
  item *x = &h->it[h->nit++];
  memset(x, 0, sizeof *x);
  x->t0 = t0, x->t1 = t1, x->role = role, x->paren = x->body = x->body_end = NONE;
  return x;
}

static void add_name(item *x, size_t tok) {
  if (tok == NONE) return;
  if (x->nnames < MAX_NAMES)
    x->names[x->nnames++] = tok;
  else
    x->overflow = 1;
}

/* The name before the '(' at token p: an identifier, past a template's argument list. */
static size_t name_before(const hc *h, size_t t0, size_t p) {
  size_t i = p;
  if (i > t0 && pc(h, i - 1, '>')) { /* f<int>( */
    int depth = 0;
    while (i-- > t0) {
      if (pc(h, i, '>'))
        depth++;
      else if (pc(h, i, '<') && --depth == 0)
        break;
    }
    if (i == SIZE_MAX || i < t0) return NONE;
  }
  return i > t0 && ident(h, i - 1) ? i - 1 : NONE;
}

/* Whether a word before the name at `name` may be a qualifier written by a header's macro: an
** unknown upper-case word followed by another type word (CUDA_CALLABLE float f()). */
static int unknown_qualifier(const hc *h, size_t t0, size_t name) {
  for (size_t i = t0; i + 1 < name; i++) {
    if (!ident(h, i) || h->t[i].len < 2) continue;
    const char *s = h->b + h->t[i].pos;
    int upper = 1;
    for (size_t k = 0; k < h->t[i].len && upper; k++)
      upper = (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') || s[k] == '_';
    if (upper && !find_macro(h, s, h->t[i].len) && ident(h, i + 1) && !is(h, i - 1, "::") &&
        !is(h, i + 1, "const"))
      return 1;
  }
  return 0;
}

/* The declarator names of tokens [from, to): the last identifier before each '=', '[', '(' or '{'
** of a declarator, declarators split at commas outside brackets and template lists. */
static void declarator_names(hc *h, item *x, size_t from, size_t to) {
  size_t last = NONE;
  int angle = 0, done = 0;
  for (size_t i = from; i < to; i++) {
    if (pc(h, i, '(') || pc(h, i, '[') || pc(h, i, '{')) {
      if (!done && pc(h, i, '(') && pc(h, i + 1, '*')) { /* void (*fp)(int): the name inside */
        size_t e = skip_group(h, i);
        for (size_t k = i + 1; e != NONE && k + 1 < e; k++)
          if (ident(h, k)) last = k;
      }
      if (!done) add_name(x, last), done = 1;
      if ((i = skip_group(h, i)) == NONE) return;
      i--;
    } else if (pc(h, i, '<') && i > from && ident(h, i - 1) && !done)
      angle++;
    else if (pc(h, i, '>') && angle > 0)
      angle--;
    else if (pc(h, i, '=') && !done)
      add_name(x, last), done = 1;
    else if (pc(h, i, ',') && angle == 0) {
      if (!done) add_name(x, last);
      done = 0, last = NONE;
    } else if (ident(h, i) && !done && angle == 0)
      last = i;
  }
  if (!done) add_name(x, last);
}

/* Whether the '=' at token k spells part of an operator's name (operator=, operator==, <=). */
static int operator_symbol(const hc *h, size_t from, size_t k) {
  while (k > from && h->t[k - 1].len == 1 && strchr("=<>!+-*/%^&|~", h->b[h->t[k - 1].pos])) k--;
  return k > from && is(h, k - 1, "operator");
}

/* Whether the group from '(' at `open` to `end` (past its ')') declares a pointer to a function or
** an array, as in void (*fp)(int) or int (*rows)[4]: a '*' or '&' first, no parameter list inside
** (void (*handler(int))(int) is a function returning one), and a list or bounds after it (FOO(*x);
** is a macro's invocation, kept as such). */
static int pointer_declarator(const hc *h, size_t open, size_t end) {
  if (!pc(h, open + 1, '*') && !pc(h, open + 1, '&')) return 0;
  for (size_t k = open + 1; k + 1 < end; k++)
    if (pc(h, k, '(')) return 0;
  return pc(h, end, '(') || pc(h, end, '[');
}

/* Reads one declaration from token i0 and records it; returns the token after it. */
static size_t parse_scope(hc *h, size_t i, int depth);

static size_t parse_item(hc *h, size_t i0, int depth) {
  size_t j = i0 + is(h, i0, "inline");
  if (is(h, j, "namespace")) { /* namespace a::b { ... }: its declarations are read inside */
    size_t k = j + 1;
    while (ident(h, k) || is(h, k, "::")) k++;
    if (pc(h, k, '{')) {
      add_item(h, i0, k + 1, R_KEEP);
      size_t e = parse_scope(h, k + 1, depth + 1);
      add_item(h, e, e + 1, R_KEEP);
      return e + 1;
    }
  }
  if (is(h, i0, "extern") && i0 + 2 < h->nt && h->t[i0 + 1].kind == CJ_TK_STRING &&
      pc(h, i0 + 2, '{')) { /* extern "C" { ... } */
    add_item(h, i0, i0 + 3, R_KEEP);
    size_t e = parse_scope(h, i0 + 3, depth + 1);
    add_item(h, e, e + 1, R_KEEP);
    return e + 1;
  }
  /* A macro's invocation: NAME(...) followed by another declaration's word, the end of the scope,
  ** or nothing (KERNEL(scale) int main() ...): kept as it is. */
  if (ident(h, i0) && pc(h, i0 + 1, '(') && !in_list(h, i0, attribute_words)) {
    size_t e = skip_group(h, i0 + 1);
    if (e == NONE) return h->nt;
    if (e >= h->nt || pc(h, e, '}') ||
        ((ident(h, e) || pc(h, e, '[')) && !in_list(h, e, trailing_words))) {
      add_item(h, i0, e, R_KEEP);
      return e;
    }
  }
  size_t paren = NONE, body = NONE, end = NONE, eq = NONE;
  int class_key = 0, ctor_init = 0, pointer = 0;
  size_t i = i0;
  for (; i < h->nt && end == NONE; i++) {
    if (is(h, i, "template") && pc(h, i + 1, '<')) {
      if ((i = skip_angle(h, i + 1)) == NONE) return h->nt;
      i--;
    } else if (pc(h, i, '(') || pc(h, i, '[')) {
      size_t e = skip_group(h, i);
      if (e == NONE) return h->nt;
      if (pc(h, i, '(') && paren == NONE && !pointer && eq == NONE && body == NONE && i > i0 &&
          !in_list(h, i - 1, attribute_words)) {
        if (pointer_declarator(h, i, e))
          pointer = 1; /* void (*fp)(int): a variable; the list after it is the pointee's */
        else
          paren = i;
      }
      i = e - 1;
    } else if (pc(h, i, ')') || pc(h, i, ']')) {
      fail(h, i, "a bracket that closes nothing");
      return h->nt;
    } else if (pc(h, i, ';')) {
      end = i + 1;
    } else if (pc(h, i, '}')) {
      break; /* the scope ends inside it: an invocation without ';', kept as it is */
    } else if (pc(h, i, ':') && paren != NONE && eq == NONE && body == NONE) {
      ctor_init = 1;
    } else if (pc(h, i, '=') && eq == NONE && !operator_symbol(h, i0, i)) {
      eq = i;
    } else if (in_list(h, i, class_keys) && paren == NONE && eq == NONE) {
      class_key = 1;
    } else if (pc(h, i, '{')) {
      size_t e = skip_group(h, i);
      if (e == NONE) return h->nt;
      int init = eq != NONE || (ctor_init && i > i0 && (ident(h, i - 1) || pc(h, i - 1, '>')));
      if (!init && paren != NONE) {
        body = i, end = e; /* a function's definition */
      } else {
        if (class_key && body == NONE && eq == NONE) body = i;
        i = e - 1; /* a class's body or an initializer: the declaration goes on to its ';' */
      }
    }
  }
  if (end == NONE) { /* no ';' before the scope's end: kept as it is */
    add_item(h, i0, i, R_KEEP);
    return i;
  }
  item *x = add_item(h, i0, end, R_NAMED);
  if (!x) return h->nt;
  if (class_key && paren == NONE && body != NONE) x->body = body, x->body_end = skip_group(h, body);
  /* What the head says: device words decide; in a class, anything in its body. */
  size_t head_end = class_key ? end : body != NONE ? body : eq != NONE ? eq : end;
  for (size_t k = i0; k < head_end; k++)
    if (ident(h, k) && device_word(h, h->b + h->t[k].pos, h->t[k].len)) {
      x->role = R_DEVICE;
      x->paren = paren != NONE && body != NONE && !class_key ? paren : NONE;
      if (paren != NONE && !class_key) /* a device function's name: a host one of that name and */
        add_name(x, name_before(h, i0, paren)); /* another parameter list is not called by it */
      return end;
    }
  if (in_list(h, i0,
              (const char *const[]){"static_assert", "asm", "__asm__", "namespace",
                                    "_Static_assert", NULL}) ||
      (is(h, i0, "using") && !(ident(h, i0 + 1) && pc(h, i0 + 2, '=')))) {
    x->role = R_KEEP;
    return end;
  }
  if (is(h, i0, "using")) { /* using alias = ...; */
    add_name(x, i0 + 1);
    return end;
  }
  if (class_key && paren == NONE) { /* a type, and any variables it declares after its body */
    size_t k = i0;
    int is_enum = 0;
    while (k < end && !in_list(h, k, class_keys))
      k = is(h, k, "template") && pc(h, k + 1, '<') ? skip_angle(h, k + 1) : k + 1;
    is_enum = is(h, k, "enum");
    for (k++; k < end && !pc(h, k, '{') && !pc(h, k, ':') && !pc(h, k, ';'); k++)
      if (pc(h, k, '('))
        k = skip_group(h, k) - 1; /* __align__(16) */
      else if (ident(h, k) && !in_list(h, k, (const char *const[]){"class", "final", NULL}))
        add_name(x, k);
    if (body != NONE) { /* an enum's enumerators are its names too */
      size_t e = skip_group(h, body);
      for (k = body + 1; e != NONE && k + 1 < e; k++)
        if (is_enum && ident(h, k) && (pc(h, k - 1, '{') || pc(h, k - 1, ','))) add_name(x, k);
      if (e != NONE) declarator_names(h, x, e, end - 1);
    }
    return end;
  }
  if (paren != NONE) {
    size_t name = NONE;
    for (size_t k = i0; k < paren; k++) /* operator+ and friends are named "operator" */
      if (is(h, k, "operator")) name = k;
    if (name == NONE) name = name_before(h, i0, paren);
    size_t first = i0; /* the words before the name: a return type, or none (a macro) */
    while (first < h->nt && is(h, first, "template") && pc(h, first + 1, '<'))
      first = skip_angle(h, first + 1);
    while (first < h->nt && in_list(h, first, specifiers)) first++;
    int typed = name != NONE && (name > first || is(h, name - 1, "::") || pc(h, name - 1, '~'));
    if (!typed || unknown_qualifier(h, first, name) || is(h, i0, "typedef")) {
      if (is(h, i0, "typedef"))
        declarator_names(h, x, i0 + 1, end - 1);
      else
        x->role = R_KEEP;
      return end;
    }
    add_name(x, name);
    if (body != NONE) x->role = R_CALLED, x->paren = paren;
    return end;
  }
  declarator_names(h, x, i0 + is(h, i0, "typedef"), end - 1);
  if (!x->nnames) x->role = R_KEEP;
  int constant = is(h, i0, "typedef");
  for (size_t k = i0; k < (eq != NONE ? eq : end) && !constant; k++)
    constant = is(h, k, "const") || is(h, k, "constexpr");
  if (!constant && x->role != R_KEEP) /* a host variable device code may not read: it goes */
    x->nnames = 0, x->overflow = 0;
  return end;
}

static size_t parse_scope(hc *h, size_t i, int depth) {
  while (i < h->nt && !h->bad && !h->oom) {
    if (pc(h, i, '}')) {
      if (depth == 0) fail(h, i, "a '}' that closes nothing");
      return i;
    }
    if (pc(h, i, ';')) {
      i++;
      continue;
    }
    i = parse_item(h, i, depth);
  }
  if (depth > 0) fail(h, i, "a namespace or extern \"C\" block never closed");
  return i;
}

/* The members of kept class x. With `out`: its member functions without a device word go unless
** kept code calls them (NVRTC refuses even the declaration of a host member), heads, bodies and
** all; constructors and destructors stay (device code may construct one; the compiler then names
** it); how many went. Without: adds the words its members use, a host member's body left out. */
static size_t walk_members(hc *h, const item *x, char *out) {
  size_t n = 0, i = x->body + 1, end = x->body_end - 1, cls = NONE, c = x->t0;
  while (c < x->body && !in_list(h, c, class_keys)) /* the class's name: its constructors' */
    c = is(h, c, "template") && pc(h, c + 1, '<') ? skip_angle(h, c + 1) : c + 1;
  for (; c < x->body && !pc(h, c, ':'); c++)
    if (ident(h, c) && !pc(h, c + 1, '(') && !is(h, c, "final")) cls = c;
  while (i < end && !h->bad) {
    if (in_list(h, i, (const char *const[]){"public", "private", "protected", NULL}) &&
        pc(h, i + 1, ':')) {
      i += 2;
      continue;
    }
    size_t m0 = i, paren = NONE, fbody = NONE, mend = NONE, eq = NONE;
    int ctor_init = 0;
    for (size_t k = i; k < end && mend == NONE; k++) {
      if (is(h, k, "template") && pc(h, k + 1, '<')) {
        k = skip_angle(h, k + 1) - 1;
      } else if (pc(h, k, '(') || pc(h, k, '[')) {
        if (pc(h, k, '(') && paren == NONE && eq == NONE && k > m0 &&
            !in_list(h, k - 1, attribute_words))
          paren = k;
        if ((k = skip_group(h, k)) == NONE) return n;
        k--;
      } else if (pc(h, k, ':') && paren != NONE) {
        ctor_init = 1;
      } else if (pc(h, k, '=') && eq == NONE && !operator_symbol(h, m0, k)) {
        eq = k;
      } else if (pc(h, k, '{')) {
        size_t e = skip_group(h, k);
        if (e == NONE) return n;
        if (paren != NONE && eq == NONE && !(ctor_init && (ident(h, k - 1) || pc(h, k - 1, '>'))))
          fbody = k, mend = e;
        else
          k = e - 1;
      } else if (pc(h, k, ';')) {
        mend = k + 1;
      }
    }
    if (mend == NONE) { /* past the members cujit can read: the rest stays */
      if (!out) add_range(h, x, m0, end);
      break;
    }
    i = mend;
    /* No '(' before any '=' (paren is taken only while eq is unset): a data member, as one
    ** whose '(' starts a pointer to function. */
    if (paren == NONE || pc(h, paren + 1, '*')) {
      if (!out) add_range(h, x, m0, mend); /* data */
      continue;
    }
    int device = 0; /* a data member, a pointer to function: stays; a function, unless... */
    for (size_t k = m0; k < (fbody != NONE ? fbody : mend) && !device; k++)
      device = ident(h, k) && device_word(h, h->b + h->t[k].pos, h->t[k].len);
    size_t name = NONE;
    for (size_t k = m0; k < paren; k++)
      if (is(h, k, "operator")) name = k;
    if (name == NONE) name = name_before(h, m0, paren);
    int host = !device && name != NONE && !pc(h, name - 1, '~') &&
               !(cls != NONE && same_word(h, name, cls));
    if (!out) { /* kept code's words: a host member's head only, as it may go */
      add_range(h, x, m0, name != NONE ? name : m0);
      add_range(h, x, name != NONE ? name + 1 : m0, host && fbody != NONE ? fbody : mend);
      continue;
    }
    if (!host || cj_host_set_has(&h->called, h->b + h->t[name].pos, h->t[name].len)) continue;
    cj_host_blank(h->src, h->dir, out, h->t[m0].pos, h->t[mend - 1].pos + h->t[mend - 1].len);
    n++;
  }
  return n;
}

/* --- the elision ---------------------------------------------------------------------------- */

/* The words the rest of the unit's kept text names (cj_host_code_elide_unit), as if kept code of
** this file named them: what they name here stays (a kernel elsewhere taking a header's type). */
static void add_outside(hc *h, const cj_host_set *named, const cj_host_set *called) {
  for (size_t i = 0; i < named->cap && !h->oom; i++)
    if (named->w[i].s) add_word(h, named->w[i].s, named->w[i].n, 0);
  for (size_t i = 0; i < called->cap && !h->oom; i++)
    if (called->w[i].s) add_word(h, called->w[i].s, called->w[i].n, 1);
}

/* The names of the device functions (a kernel, a __device__ function, a template of either). A
** host function of the same name (reduce(int size, ...) that launches reduce<256><<<...>>>) is
** another declaration, which device code cannot call: kept code saying the name calls the device
** one, so the host one is not kept for it (device code that calls it could not compile anyway). */
static void device_names(hc *h) {
  for (size_t i = 0; i < h->nit && !h->oom; i++)
    for (int k = 0; h->it[i].role == R_DEVICE && k < h->it[i].nnames; k++)
      if (cj_host_set_add(&h->device_fns, h->b + h->t[h->it[i].names[k]].pos,
                          h->t[h->it[i].names[k]].len) < 0)
        h->oom = 1;
}

char *cj_host_code_elide_in(const char *source, const cj_host_set *named, const cj_host_set *called,
                            size_t *elided, char *why, size_t why_len) {
  hc h = {.src = source, .why = why, .why_len = why_len};
  if (why_len) why[0] = 0;
  *elided = 0;
  size_t n = strlen(source), cap = 0;
  char *out = cj_strndup(source, n);
  char *b = out ? cj_blank_source(source) : NULL;
  if (!b) {
    free(out);
    return NULL;
  }
  h.b = b;
  if (!cj_host_may_hold_host_code(b)) { /* a kernel's source: given back as it is */
    free(b);
    return out;
  }
  /* Without a '#' there is no preprocessor line (most kernels' sources): no map, no macros. */
  if (strchr(source, '#') && !(h.dir = calloc(n + 1, 1))) {
    free(out), free(b);
    return NULL;
  }
  if (h.dir) cj_host_mark_directives(source, b, n, h.dir);
  for (size_t p = 0; !h.oom;) { /* the tokens, once */
    cj_token t = cj_next_token(b, &p, n);
    if (t.kind == CJ_TK_END) break;
    cj_token *g = h.nt < cap ? h.t : realloc(h.t, (cap = cap ? 2 * cap : n / 4 + 16) * sizeof t);
    if (!(h.oom = !g)) h.t = g, h.t[h.nt++] = t;
  }
  if (!h.oom && h.dir && !cj_host_read_macros(source, h.dir, &h.m, &h.nm)) h.oom = 1;
  if (!h.oom) mark_device_macros(&h);
  if (!h.oom) parse_scope(&h, 0, 0);
  int host = 0; /* a declaration that may go: else (a kernel's source) nothing more to do */
  for (size_t i = 0; i < h.nit && !host; i++)
    host = ((h.it[i].role == R_CALLED || h.it[i].role == R_NAMED) && !h.it[i].overflow) ||
           h.it[i].body != NONE; /* a class: its host members may go */
  if (!h.oom && !h.bad && host) {
    if (named && called) add_outside(&h, named, called);
    for (size_t i = 0; i < h.nit; i++)
      if (h.it[i].role == R_KEEP || h.it[i].role == R_DEVICE || h.it[i].overflow)
        keep(&h, &h.it[i]);
    device_names(&h);
    for (int changed = 1; changed && !h.oom;) { /* what kept code names is kept, and so on */
      changed = 0;
      for (size_t i = 0; i < h.nit; i++) {
        item *x = &h.it[i];
        const cj_host_set *st = x->role == R_CALLED ? &h.called : &h.named;
        for (int k = 0; !x->kept && k < x->nnames; k++) {
          const char *w = b + h.t[x->names[k]].pos;
          size_t wn = h.t[x->names[k]].len;
          if (cj_host_set_has(st, w, wn) &&
              !(x->role == R_CALLED && cj_host_set_has(&h.device_fns, w, wn)))
            keep(&h, x), changed = 1;
        }
      }
    }
    for (size_t i = 0; i < h.nit && !h.oom; i++) {
      item *x = &h.it[i];
      if (x->kept && x->body != NONE) *elided += walk_members(&h, x, out);
      if (x->kept) continue;
      cj_token last = h.t[x->t1 - 1];
      cj_host_blank(source, h.dir, out, h.t[x->t0].pos, last.pos + last.len);
      (*elided)++;
    }
  }
  if (h.bad) memcpy(out, source, n), *elided = 0;
  free(h.named.w), free(h.called.w), free(h.device_fns.w), free(h.t), free(h.it), free(h.m),
      free(b), free(h.dir);
  if (h.oom) free(out);
  return h.oom ? NULL : out;
}
