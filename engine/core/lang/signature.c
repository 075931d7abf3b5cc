/*
** signature.c -- reads one kernel signature ("saxpy(float a, const float *x, int n)") into typed
** parameters with their launch buffer layout, with a message saying where and what is wrong when
** it cannot; specialises generic signatures; writes signatures back as text.
*/
#include "signature.h"
#include "base/base.h"
#include "lexicon.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names the body would lose if a parameter shadowed them. */
static const char *const builtin_variables[] = {"threadIdx", "blockIdx", "blockDim",
                                                "gridDim",   "warpSize", NULL};

/* --- errors ----------------------------------------------------------------------------------- */

typedef struct parser {
  const char *text;
  char *err;
  size_t err_len;
  int lenient; /* scanning a translation unit: unknown types are opaque, not errors */
} parser;

#define SHOWN_MAX 72 /* a longer signature is shown as a window around the column */

/* "signature 'TEXT': WHAT (column N)" then the text and a caret under the column. */
static cujit_status sig_error(parser *p, size_t pos, const char *fmt, ...) {
  if (!p->err || p->err_len == 0) return CUJIT_ERROR_SIGNATURE;
  size_t n = strlen(p->text);
  if (pos > n) pos = n;
  size_t from = 0, to = n;
  if (n > SHOWN_MAX) {
    from = pos > SHOWN_MAX / 2 ? pos - SHOWN_MAX / 2 : 0;
    to = from + SHOWN_MAX < n ? from + SHOWN_MAX : n;
  }
  char shown[SHOWN_MAX + 8];
  int lead = from > 0 ? 3 : 0;
  snprintf(shown, sizeof shown, "%s%.*s%s", lead ? "..." : "", (int)(to - from), p->text + from,
           to < n ? "..." : "");
  for (char *c = shown; *c; c++)
    if (isspace((unsigned char)*c)) *c = ' ';
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(p->err, p->err_len, "signature '%s': %s (column %zu)\n  %s\n  %*s^", shown, what,
           pos + 1, shown, (int)(pos - from) + lead, "");
  return CUJIT_ERROR_SIGNATURE;
}

/* --- one parameter ---------------------------------------------------------------------------- */

/* A parameter's tokens; as many as it has: in `small` while they fit (most parameters), else
** malloc'd (freed by the caller when tok is not small). */
typedef struct param_text {
  cj_token *tok;
  int n, cap;
  size_t start, end;
  cj_token small[16];
} param_text;

static cujit_status tokenize_param(parser *p, param_text *pt) {
  size_t pos = pt->start;
  pt->n = 0;
  for (;;) {
    cj_token t = cj_next_token(p->text, &pos, pt->end);
    if (t.kind == CJ_TK_END) return CUJIT_OK;
    const char *s = p->text + t.pos;
    if (t.kind == CJ_TK_NUMBER)
      return sig_error(p, t.pos, "'%.*s' is not a C identifier", (int)t.len, s);
    if (t.kind == CJ_TK_STRING) return sig_error(p, t.pos, "unexpected string in a parameter");
    if (t.kind == CJ_TK_PUNCT && *s != '*') {
      switch (*s) {
      case '&':
        return sig_error(p, t.pos,
                         "references are not supported: pass a pointer ('T *x') or a "
                         "value");
      case '[':
        return sig_error(p, t.pos, "array parameters are not supported: use a pointer ('T *x')");
      case '(':
        return sig_error(p, t.pos, "function pointer parameters are not supported");
      case '=':
        return sig_error(p, t.pos, "default arguments are not supported");
      case '<':
        return sig_error(p, t.pos,
                         "template types are not supported: use a type variable such as "
                         "'T'");
      case ':':
        return sig_error(p, t.pos, "qualified names ('::') are not supported");
      case '.':
        return sig_error(p, t.pos, "variadic kernels ('...') are not supported");
      default:
        return sig_error(p, t.pos, "unexpected character '%.*s'", (int)t.len, s);
      }
    }
    if (!pt->tok) pt->tok = pt->small, pt->cap = (int)(sizeof pt->small / sizeof *pt->small);
    if (pt->n == pt->cap) {
      int cap = 2 * pt->cap;
      cj_token *nt = realloc(pt->tok == pt->small ? NULL : pt->tok, (size_t)cap * sizeof *nt);
      if (!nt) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      if (pt->tok == pt->small) memcpy(nt, pt->small, sizeof pt->small);
      pt->tok = nt, pt->cap = cap;
    }
    pt->tok[pt->n++] = t;
  }
}

/* Appends a word to a normalised type spelling: a space before it, except after a star. */
static void type_add(cj_buf *b, const char *s, size_t n) {
  if (b->len && b->data[b->len - 1] != '*') cj_buf_puts(b, " ");
  cj_buf_add(b, s, n);
}

/* Reads the base type words (all qualifiers already removed). */
static cujit_status base_type(parser *p, const param_text *pt, const int *words, int nwords,
                              const char *pname, cj_type_desc *out, int *is_tvar) {
  *is_tvar = 0;
  const char *text = p->text;
  cj_token first = pt->tok[words[0]];
  if (nwords == 1 && cj_named_type(text + first.pos, first.len, out)) return CUJIT_OK;
  if (nwords == 1 && !p->lenient && cj_is_type_var_name(text + first.pos, first.len)) {
    *is_tvar = 1;
    out->spelling = NULL, out->dtype = CUJIT_DTYPE_NONE, out->size = 0, out->align = 1;
    return CUJIT_OK;
  }
  int counts[6] = {0}; /* signed unsigned char short int long */
  static const char *const names[] = {"signed", "unsigned", "char", "short", "int", "long"};
  int all_integer = 1;
  for (int i = 0; i < nwords && all_integer; i++) {
    cj_token t = pt->tok[words[i]];
    all_integer = 0;
    for (int k = 0; k < 6; k++)
      if (cj_tok_is(text, t, names[k])) counts[k]++, all_integer = 1;
  }
  size_t from = first.pos, to = pt->tok[words[nwords - 1]].pos + pt->tok[words[nwords - 1]].len;
  if (!all_integer) {
    cj_token second = pt->tok[words[1 < nwords ? 1 : 0]];
    if (nwords > 1 && cj_is_type_name(text + first.pos, first.len) &&
        !cj_is_integer_word(text + second.pos, second.len))
      return sig_error(p, second.pos, "unexpected '%.*s' in '%.*s %s': a parameter is 'type name'",
                       (int)second.len, text + second.pos, (int)(to - from), text + from, pname);
    if (nwords == 1)
      return sig_error(p, first.pos, "unknown type '%.*s' for parameter '%s'", (int)first.len,
                       text + first.pos, pname);
    return sig_error(p, first.pos, "unknown type '%.*s' for parameter '%s'", (int)(to - from),
                     text + from, pname);
  }
  int sign = counts[0], unsig = counts[1], ch = counts[2], sh = counts[3], in = counts[4],
      lo = counts[5];
  int bad = (sign && unsig) || sign > 1 || unsig > 1 || ch > 1 || sh > 1 || in > 1 || lo > 2 ||
            (ch && (sh || in || lo)) || (sh && lo);
  if (bad)
    return sig_error(p, first.pos, "'%.*s' is not a valid type (parameter '%s')", (int)(to - from),
                     text + from, pname);
  const char *spelling = ch        ? (unsig  ? "unsigned char"
                                      : sign ? "signed char"
                                             : "char")
                         : sh      ? (unsig ? "unsigned short" : "short")
                         : lo == 2 ? (unsig ? "unsigned long long" : "long long")
                         : lo      ? (unsig ? "unsigned long" : "long")
                                   : (unsig ? "unsigned int" : "int");
  cj_integer_type(spelling, out);
  return CUJIT_OK;
}

static int add_type_var(cj_signature *sig, const char *s, size_t n) {
  for (size_t i = 0; i < sig->ntype_vars; i++)
    if (strlen(sig->type_vars[i]) == n && memcmp(sig->type_vars[i], s, n) == 0) return (int)i;
  if (sig->ntype_vars == CJ_MAX_TYPE_VARS) return -2;
  if (!(sig->type_vars[sig->ntype_vars] = cj_strndup(s, n))) return -3;
  return (int)sig->ntype_vars++;
}

/* Which cj_token is the parameter's name, or -1 (with an error made) when it has none. */
static int find_name(parser *p, const param_text *pt, size_t index) {
  const char *text = p->text;
  cj_token last = pt->tok[pt->n - 1];
  const char *ls = text + last.pos;
  int nstars = 0;
  for (int i = 0; i < pt->n; i++) nstars += cj_tok_is(text, pt->tok[i], "*");
  int others = 0; /* non-qualifier words before the last cj_token */
  for (int i = 0; i + 1 < pt->n; i++)
    if (pt->tok[i].kind == CJ_TK_IDENT && !cj_is_qualifier(text + pt->tok[i].pos, pt->tok[i].len))
      others++;
  size_t at = pt->tok[0].pos;
  size_t tlen = last.pos + last.len - at;
  if (last.kind != CJ_TK_IDENT || cj_is_qualifier(ls, last.len)) {
    sig_error(p, last.pos + last.len, "parameter %zu ('%.*s') has no name: write it as 'type name'",
              index + 1, (int)tlen, text + at);
    return -1;
  }
  int type_name = cj_is_type_name(ls, last.len), reserved = cj_is_reserved_word(ls, last.len);
  int type_like = type_name || reserved || (!p->lenient && cj_is_type_var_name(ls, last.len));
  if (nstars == 0 && others == 0) {
    if (type_like) {
      sig_error(p, last.pos + last.len,
                "parameter %zu ('%.*s') has no name: write it as 'type name'", index + 1, (int)tlen,
                text + at);
    } else {
      sig_error(p, last.pos, "parameter '%.*s' has no type: write it as 'type %.*s'", (int)last.len,
                ls, (int)last.len, ls);
    }
    return -1;
  }
  if (cj_is_integer_word(ls, last.len) && nstars == 0) {
    int all_int = 1;
    for (int i = 0; i + 1 < pt->n; i++) {
      cj_token t = pt->tok[i];
      if (!cj_is_integer_word(text + t.pos, t.len) && !cj_is_qualifier(text + t.pos, t.len))
        all_int = 0;
    }
    if (all_int) {
      sig_error(p, last.pos + last.len,
                "parameter %zu ('%.*s') has no name: write it as 'type name'", index + 1, (int)tlen,
                text + at);
      return -1;
    }
  }
  if (reserved) {
    sig_error(p, last.pos, "'%.*s' is a reserved word and cannot name a parameter", (int)last.len,
              ls);
    return -1;
  }
  if (type_name) {
    sig_error(p, last.pos, "'%.*s' is a type and cannot name a parameter", (int)last.len, ls);
    return -1;
  }
  if (cj_in_list(builtin_variables, ls, last.len)) {
    sig_error(p, last.pos,
              "'%.*s' is a CUDA built-in variable; a parameter of that name would hide it",
              (int)last.len, ls);
    return -1;
  }
  return pt->n - 1;
}

/* The normalised type of a parameter: base qualifiers, the base type, then the pointer part (stars,
** each followed by its own qualifiers). `from` is the first token after the base words. */
static cujit_status write_type(parser *p, const param_text *pt, int from, int name_tok,
                               int base_const, int base_volatile, const char *base, size_t base_len,
                               const char *pname, cj_buf *type, int *stars) {
  const char *text = p->text;
  if (base_const) type_add(type, "const", 5);
  if (base_volatile) type_add(type, "volatile", 8);
  type_add(type, base, base_len);
  *stars = 0;
  for (int i = from; i < name_tok; i++) {
    cj_token t = pt->tok[i];
    if (cj_tok_is(text, t, "*")) {
      (*stars)++;
      type_add(type, "*", 1);
    } else if (cj_is_qualifier(text + t.pos, t.len)) {
      int restrict_ = cj_is_restrict(text + t.pos, t.len);
      type_add(type, restrict_ ? "__restrict__" : text + t.pos, restrict_ ? 12 : t.len);
    } else {
      return sig_error(p, t.pos, "unexpected '%.*s' in parameter '%s': a parameter is 'type name'",
                       (int)t.len, text + t.pos, pname);
    }
  }
  return type->failed ? CUJIT_ERROR_OUT_OF_HOST_MEMORY : CUJIT_OK;
}

/* Reads one parameter into out, whose name is set first (so that it is freed with it). */
static cujit_status read_param(parser *p, param_text *pt, int name_tok, int *words,
                               cj_signature *sig, cj_param *out) {
  const char *text = p->text;
  const char *pname = out->name;
  /* Base: words before the first star; qualifiers there apply to what is pointed at. */
  int nwords = 0, base_const = 0, base_volatile = 0, i = 0;
  for (; i < name_tok && !cj_tok_is(text, pt->tok[i], "*"); i++) {
    cj_token t = pt->tok[i];
    if (cj_tok_is(text, t, "const"))
      base_const = 1;
    else if (cj_tok_is(text, t, "volatile"))
      base_volatile = 1;
    else if (cj_is_restrict(text + t.pos, t.len))
      return sig_error(p, t.pos, "'%.*s' applies to pointers: write 'T *%.*s %s'", (int)t.len,
                       text + t.pos, (int)t.len, text + t.pos, pname);
    else
      words[nwords++] = i;
  }
  if (nwords == 0) return sig_error(p, pt->tok[0].pos, "parameter '%s' has no type", pname);
  cj_type_desc base;
  int is_tvar, stars;
  cujit_status st = base_type(p, pt, words, nwords, pname, &base, &is_tvar);
  if (st != CUJIT_OK) return st;
  cj_token w0 = pt->tok[words[0]];
  int spelled = !is_tvar && base.spelling;
  cj_buf type = {0};
  st = write_type(p, pt, i, name_tok, base_const, base_volatile,
                  spelled ? base.spelling : text + w0.pos, spelled ? strlen(base.spelling) : w0.len,
                  pname, &type, &stars);
  out->type = type.data; /* freed with the parameter, also on failure */
  if (st != CUJIT_OK) return st;
  if (stars == 0 && base.size == 0 && spelled && strcmp(base.spelling, "void") == 0)
    return sig_error(p, w0.pos, "parameter '%s' has type void; only 'void *' can be passed", pname);
  if (is_tvar) {
    int tv = add_type_var(sig, text + w0.pos, w0.len);
    if (tv == -2)
      return sig_error(p, w0.pos, "too many type variables (at most %d)", CJ_MAX_TYPE_VARS);
    if (tv == -3) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    out->type_var = tv;
  }
  out->kind = stars ? CUJIT_PARAM_POINTER : CUJIT_PARAM_SCALAR;
  out->dtype = stars > 1 ? CUJIT_DTYPE_NONE : base.dtype;
  out->is_const = stars > 0 && base_const;
  out->boolean = stars == 0 && spelled && strcmp(base.spelling, "bool") == 0;
  out->size = stars ? 8 : base.size;
  out->align = stars ? 8 : base.align;
  return CUJIT_OK;
}

static cujit_status parse_param(parser *p, param_text *pt, size_t index, cj_signature *sig,
                                cj_param *out) {
  memset(out, 0, sizeof *out);
  out->type_var = -1;
  cujit_status st = tokenize_param(p, pt);
  if (st != CUJIT_OK) return st;
  if (pt->n == 0) /* nothing before its '=': the default value of no parameter */
    return sig_error(p, pt->end,
                     "parameter %zu has a default value but no type and name: write it "
                     "as 'type name = value'",
                     index + 1);
  int name_tok = find_name(p, pt, index);
  if (name_tok < 0) return CUJIT_ERROR_SIGNATURE;
  cj_token nt = pt->tok[name_tok];
  int few[16], *words = pt->n <= 16 ? few : malloc((size_t)pt->n * sizeof *words);
  if (!words || !(out->name = cj_strndup(p->text + nt.pos, nt.len))) {
    if (words != few) free(words);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  st = read_param(p, pt, name_tok, words, sig, out);
  if (words != few) free(words);
  return st;
}

/* In a scanned translation unit a parameter cujit cannot read is kept, opaque. */
static cujit_status opaque_param(parser *p, const param_text *pt, size_t index, cj_param *out) {
  memset(out, 0, sizeof *out);
  out->type_var = -1;
  out->kind = CUJIT_PARAM_SCALAR;
  out->dtype = CUJIT_DTYPE_NONE;
  out->align = 1;
  size_t s = pt->start, e = pt->end;
  while (s < e && isspace((unsigned char)p->text[s])) s++;
  while (e > s && isspace((unsigned char)p->text[e - 1])) e--;
  /* The name is the last identifier, when the parameter ends with one. */
  size_t ns = e;
  while (ns > s && cj_ident_char((unsigned char)p->text[ns - 1])) ns--;
  char name[32];
  int named = ns < e && ns > s && cj_ident_start((unsigned char)p->text[ns]);
  if (named) {
    out->name = cj_strndup(p->text + ns, e - ns);
    e = ns;
    while (e > s && isspace((unsigned char)p->text[e - 1])) e--;
  } else {
    snprintf(name, sizeof name, "arg%zu", index + 1);
    out->name = cj_strdup(name);
  }
  out->type = cj_strndup(p->text + s, e - s);
  for (char *c = out->type; c && *c; c++)
    if (isspace((unsigned char)*c)) *c = ' ';
  if (!out->name || !out->type) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  /* A pointer is a pointer, whatever it points to (a user struct, a typedef, a template): an
  ** untyped one, which takes any buffer. */
  size_t t = strlen(out->type);
  for (;;) {
    while (t > 0 && out->type[t - 1] == ' ') t--;
    size_t w = t;
    while (w > 0 && cj_ident_char((unsigned char)out->type[w - 1])) w--;
    if (w == t || !cj_is_qualifier(out->type + w, t - w)) break;
    t = w;
  }
  if (t > 0 && out->type[t - 1] == '*' && named) {
    out->kind = CUJIT_PARAM_POINTER;
    out->size = out->align = 8;
    out->is_const = strncmp(out->type, "const ", 6) == 0;
  }
  return CUJIT_OK;
}

/* Where a parameter's default value begins (its top-level '='), or `end` when it has none. */
static size_t default_at(const char *text, size_t start, size_t end) {
  int depth = 0;
  for (size_t i = start; i < end; i++) {
    char c = text[i];
    if (c == '(' || c == '[' || c == '{')
      depth++;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0)
      depth--;
    else if (c == '=' && depth == 0)
      return i;
  }
  return end;
}

/* A default value: "= NULL" (nullptr, 0) on a pointer makes it take a null pointer (nil in Lua);
** any other is ignored in a translation unit (every argument is passed) and refused in a
** signature, where it could only mislead. */
static cujit_status read_default(parser *p, cj_param *pr, size_t eq, size_t end) {
  size_t s = eq + 1;
  while (s < end && isspace((unsigned char)p->text[s])) s++;
  while (end > s && isspace((unsigned char)p->text[end - 1])) end--;
  size_t n = end - s;
  const char *v = p->text + s;
  int null = (n == 4 && memcmp(v, "NULL", 4) == 0) || (n == 7 && memcmp(v, "nullptr", 7) == 0) ||
             (n == 1 && *v == '0');
  if (pr->kind == CUJIT_PARAM_POINTER && null) {
    pr->nullable = 1;
    return CUJIT_OK;
  }
  if (p->lenient) return CUJIT_OK;
  return sig_error(p, eq,
                   "default arguments are not supported, except '= NULL' on a pointer parameter "
                   "(it then takes nil, or a NULL buffer from C)");
}

/* --- whole signatures ------------------------------------------------------------------------- */

static size_t align_up(size_t n, size_t a) {
  return a ? (n + a - 1) / a * a : n;
}

static cujit_status layout(parser *p, cj_signature *sig, size_t close_pos) {
  size_t off = 0;
  for (size_t i = 0; i < sig->nparams; i++) {
    cj_param *pr = &sig->params[i];
    off = align_up(off, pr->align);
    pr->offset = off;
    off += pr->size;
  }
  sig->param_bytes = off;
  if (off > CJ_MAX_PARAM_BYTES)
    return sig_error(p, close_pos,
                     "the parameters take %zu bytes; kernels take at most %d (CUDA 12.1+ on a "
                     "Volta or newer GPU, 4096 before): pass big data through a pointer",
                     off, CJ_MAX_PARAM_BYTES);
  return CUJIT_OK;
}

static int all_space(const char *s, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    if (!isspace((unsigned char)s[i])) return 0;
  return 1;
}

/* Splits the parameter list at top-level commas and reads each. */
static cujit_status parse_params(parser *p, size_t open, size_t close, cj_signature *sig) {
  const char *text = p->text;
  size_t start = open + 1;
  if (all_space(text, start, close)) return CUJIT_OK;
  size_t vs = start, ve;
  while (isspace((unsigned char)text[vs])) vs++;
  ve = vs + 4;
  if (ve <= close && memcmp(text + vs, "void", 4) == 0 && all_space(text, ve, close))
    return CUJIT_OK;
  size_t cap = 8;
  sig->params = calloc(cap, sizeof *sig->params);
  if (!sig->params) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  int depth = 0;
  for (size_t i = start; i <= close; i++) {
    char c = i < close ? text[i] : ',';
    if (c == '(' || c == '[' || c == '<')
      depth++;
    else if ((c == ')' || c == ']' || c == '>') && depth > 0)
      depth--;
    if (c != ',' || (depth > 0 && i < close)) continue;
    if (all_space(text, start, i))
      return sig_error(p, i < close ? i : close,
                       i < close ? "empty parameter (a stray comma?)"
                                 : "empty parameter after the last comma");
    if (sig->nparams == CJ_MAX_PARAMS)
      return sig_error(p, start,
                       "more than %d parameters, the most cujit launches: pass arrays through "
                       "pointers",
                       CJ_MAX_PARAMS);
    if (sig->nparams == cap) {
      cj_param *np = realloc(sig->params, 2 * cap * sizeof *np);
      if (!np) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      memset(np + cap, 0, cap * sizeof *np);
      sig->params = np, cap *= 2;
    }
    size_t eq = default_at(text, start, i);
    param_text pt = {.start = start, .end = eq};
    cj_param *pr = &sig->params[sig->nparams];
    cujit_status st = parse_param(p, &pt, sig->nparams, sig, pr);
    if (st == CUJIT_ERROR_SIGNATURE && p->lenient) {
      free(pr->name), free(pr->type);
      st = opaque_param(p, &pt, sig->nparams, pr);
    }
    if (st == CUJIT_OK && eq < i) st = read_default(p, pr, eq, i);
    if (pt.tok != pt.small) free(pt.tok);
    sig->nparams++; /* counted even on failure, so cj_signature_free frees it */
    if (st != CUJIT_OK) return st;
    for (size_t k = 0; k + 1 < sig->nparams; k++)
      if (strcmp(sig->params[k].name, pr->name) == 0 && !p->lenient) {
        size_t at = start;
        while (at < i && !(strncmp(text + at, pr->name, strlen(pr->name)) == 0 &&
                           !cj_ident_char((unsigned char)text[at + strlen(pr->name)]) &&
                           (at == start || !cj_ident_char((unsigned char)text[at - 1]))))
          at++;
        return sig_error(p, at, "parameter '%s' is declared twice", pr->name);
      }
    start = i + 1;
  }
  return CUJIT_OK;
}

static cujit_status parse_signature(parser *p, cj_signature *out) {
  const char *text = p->text;
  size_t len = strlen(text), pos = 0;
  cj_token name = cj_next_token(text, &pos, len);
  if (name.kind == CJ_TK_END) return sig_error(p, 0, "empty signature: write 'name(type a, ...)'");
  if (cj_tok_is(text, name, "(")) return sig_error(p, name.pos, "missing kernel name before '('");
  if (name.kind == CJ_TK_NUMBER)
    return sig_error(p, name.pos, "'%.*s' is not a C identifier", (int)name.len, text + name.pos);
  if (name.kind != CJ_TK_IDENT)
    return sig_error(p, name.pos, "expected the kernel name, found '%.*s'", (int)name.len,
                     text + name.pos);
  if (cj_is_reserved_word(text + name.pos, name.len))
    return sig_error(p, name.pos, "'%.*s' is a reserved word and cannot name a kernel",
                     (int)name.len, text + name.pos);
  /* A translation unit that does not include the type's header may use its name (NVRTC judges);
  ** cujit's own kernels include them all. */
  if (!p->lenient && cj_is_type_name(text + name.pos, name.len))
    return sig_error(p, name.pos,
                     "'%.*s' names a CUDA type, which the kernel's code sees; a kernel of that "
                     "name would clash with it: choose another name",
                     (int)name.len, text + name.pos);
  cj_token open = cj_next_token(text, &pos, len);
  if (open.kind == CJ_TK_END)
    return sig_error(p, open.pos, "missing '(' after the kernel name '%.*s'", (int)name.len,
                     text + name.pos);
  if (!cj_tok_is(text, open, "("))
    return sig_error(p, open.pos, "expected '(' after the kernel name '%.*s', found '%.*s'",
                     (int)name.len, text + name.pos, (int)open.len, text + open.pos);
  size_t close = open.pos + 1;
  int depth = 1;
  for (; close < len; close++) {
    if (text[close] == '(')
      depth++;
    else if (text[close] == ')' && --depth == 0)
      break;
  }
  if (close >= len) return sig_error(p, len, "missing ')' at the end of the parameter list");
  size_t after = close + 1;
  cj_token junk = cj_next_token(text, &after, len);
  if (junk.kind != CJ_TK_END)
    return sig_error(p, junk.pos, "unexpected text after the parameter list: '%s'",
                     text + junk.pos);
  if (!(out->name = cj_strndup(text + name.pos, name.len))) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  cujit_status st = parse_params(p, open.pos, close, out);
  if (st != CUJIT_OK) return st;
  return layout(p, out, close);
}

cujit_status cj_signature_parse(const char *text, cj_signature *out, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!out) return CUJIT_ERROR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  if (!text) {
    if (err && err_len) snprintf(err, err_len, "no signature (NULL): write 'name(type a, ...)'");
    return CUJIT_ERROR_SIGNATURE;
  }
  parser p = {text, err, err_len, 0};
  cujit_status st = parse_signature(&p, out);
  if (st != CUJIT_OK) {
    if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY && err && err_len)
      snprintf(err, err_len, "out of memory reading signature '%s'", text);
    cj_signature_free(out);
  }
  return st;
}

cujit_status cj_signature_parse_lenient(const char *text, cj_signature *out, char *err,
                                        size_t err_len) {
  if (err && err_len) err[0] = '\0';
  memset(out, 0, sizeof *out);
  parser p = {text, err, err_len, 1};
  cujit_status st = parse_signature(&p, out);
  if (st != CUJIT_OK) cj_signature_free(out);
  return st;
}

void cj_signature_free(cj_signature *sig) {
  if (!sig) return;
  for (size_t i = 0; i < sig->nparams; i++) free(sig->params[i].name), free(sig->params[i].type);
  free(sig->params);
  for (size_t i = 0; i < sig->ntype_vars; i++) free(sig->type_vars[i]);
  free(sig->name);
  free(sig->symbol);
  memset(sig, 0, sizeof *sig);
}

cujit_status cj_signature_copy(const cj_signature *sig, cj_signature *out) {
  memset(out, 0, sizeof *out);
  *out = *sig;
  out->name = NULL, out->symbol = NULL, out->params = NULL, out->nparams = 0, out->ntype_vars = 0;
  if (!(out->name = cj_strdup(sig->name))) goto oom;
  if (sig->symbol && !(out->symbol = cj_strdup(sig->symbol))) goto oom;
  for (size_t i = 0; i < sig->ntype_vars; i++, out->ntype_vars++)
    if (!(out->type_vars[i] = cj_strdup(sig->type_vars[i]))) goto oom;
  if (sig->nparams && !(out->params = calloc(sig->nparams, sizeof *out->params))) goto oom;
  for (size_t i = 0; i < sig->nparams; i++, out->nparams++) {
    out->params[i] = sig->params[i];
    out->params[i].name = cj_strdup(sig->params[i].name);
    out->params[i].type = cj_strdup(sig->params[i].type);
    if (!out->params[i].name || !out->params[i].type) {
      out->nparams++;
      goto oom;
    }
  }
  return CUJIT_OK;
oom:
  cj_signature_free(out);
  return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
}

int cj_signature_is_generic(const cj_signature *sig) {
  return sig && sig->ntype_vars > 0 && !sig->specialized;
}

cujit_status cj_signature_specialize(const cj_signature *generic, const cujit_dtype *types,
                                     size_t ntypes, cj_signature *out, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  memset(out, 0, sizeof *out);
  if (!generic || (ntypes && !types)) return CUJIT_ERROR_INVALID_ARGUMENT;
  if (ntypes != generic->ntype_vars) {
    snprintf(err, err_len, "kernel '%s' has %zu type variable(s) but %zu type(s) were given",
             generic->name, generic->ntype_vars, ntypes);
    return CUJIT_ERROR_ARGUMENT;
  }
  for (size_t i = 0; i < ntypes; i++)
    if (types[i] <= CUJIT_DTYPE_NONE || types[i] >= CUJIT_DTYPE_COUNT_) {
      snprintf(err, err_len,
               "kernel '%s': type variable %s needs an element type (f32, i64, ...), not %s",
               generic->name, generic->type_vars[i],
               types[i] == CUJIT_DTYPE_NONE ? "untyped bytes" : "an unknown dtype");
      return CUJIT_ERROR_ARGUMENT;
    }
  if (cj_signature_copy(generic, out) != CUJIT_OK) goto oom;
  out->specialized = 1;
  for (size_t i = 0; i < ntypes; i++) out->bound[i] = types[i];
  size_t off = 0;
  for (size_t i = 0; i < out->nparams; i++) {
    cj_param *pr = &out->params[i];
    if (pr->type_var >= 0) {
      cujit_dtype d = types[pr->type_var];
      const char *var = out->type_vars[pr->type_var], *ctype = cujit_dtype_ctype(d);
      char *t = cj_replace_words(pr->type, strlen(pr->type), &var, &ctype, 1); /* T* -> float* */
      if (!t) goto oom;
      free(pr->type);
      pr->type = t;
      pr->dtype = pr->kind == CUJIT_PARAM_POINTER && strstr(t, "**") ? CUJIT_DTYPE_NONE : d;
      if (pr->kind == CUJIT_PARAM_SCALAR) pr->size = pr->align = cujit_dtype_size(d);
    }
    pr->offset = off = align_up(off, pr->align);
    off += pr->size;
  }
  out->param_bytes = off;
  if (off > CJ_MAX_PARAM_BYTES) {
    snprintf(err, err_len, "kernel '%s': the parameters take %zu bytes, more than %d", out->name,
             off, CJ_MAX_PARAM_BYTES);
    cj_signature_free(out);
    return CUJIT_ERROR_SIGNATURE;
  }
  return CUJIT_OK;
oom: /* said in err too, which the callers record; a copy that failed left out zeroed */
  cj_signature_free(out);
  snprintf(err, err_len, "kernel '%s': out of host memory", generic->name);
  return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
}

void cj_signature_write(struct cj_buf *b, const cj_signature *sig) {
  cj_buf_puts(b, sig->name);
  cj_buf_add(b, "(", 1);
  for (size_t i = 0; i < sig->nparams; i++) {
    const char *t = sig->params[i].type;
    size_t tl = strlen(t);
    if (i) cj_buf_add(b, ", ", 2);
    cj_buf_add(b, t, tl);
    cj_buf_add(b, " ", tl && t[tl - 1] == '*' ? 0 : 1);
    cj_buf_puts(b, sig->params[i].name);
  }
  cj_buf_add(b, ")", 1);
}

char *cj_signature_format(const cj_signature *sig) {
  if (!sig || !sig->name) return NULL;
  cj_buf b = {0};
  cj_signature_write(&b, sig);
  if (b.failed) cj_buf_free(&b); /* data NULL */
  return b.data;
}
