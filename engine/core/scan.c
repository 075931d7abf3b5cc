/*
** scan.c -- the kernels of a translation unit: reads the extern "C" __global__ functions of its
** text (comments, strings and preprocessor lines skipped), or takes the signatures the user gives,
** and writes the translation unit to compile with the checks that let NVRTC confirm them (the
** PTX side of the confirmation is in verify.c). See scan.h for the design.
*/
#include "scan.h"
#include "base.h"
#include "lexicon.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the source with comments, preprocessor lines and the insides of literals blanked to
** spaces (newlines kept, so positions stay), except the "C" of extern "C". */
static char *blank_source(const char *src) {
  size_t n = strlen(src);
  char *s = cj_strndup(src, n);
  if (!s) return NULL;
  int line_start = 1;
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c == '\n') {
      line_start = 1, i++;
      continue;
    }
    if (isspace((unsigned char)c)) {
      i++;
      continue;
    }
    if (c == '#' && line_start) {
      while (i < n && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n')
          s[i] = ' ', i += 2; /* a continued line: the directive goes on past the newline */
        else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*')
          break;
        else
          s[i++] = ' ';
      }
      continue;
    }
    line_start = 0;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') s[i++] = ' ';
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      s[i] = s[i + 1] = ' ', i += 2;
      while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
        if (s[i] != '\n') s[i] = ' ';
        i++;
      }
      if (i < n) s[i] = s[i + 1] = ' ', i += 2;
    } else if (c == 'R' && i + 1 < n && s[i + 1] == '"' &&
               (i == 0 || !cj_ident_char((unsigned char)s[i - 1]))) {
      /* R"delim( ... )delim" */
      size_t d = i + 2;
      while (d < n && s[d] != '(' && d - i < 20) d++;
      char close[24];
      snprintf(close, sizeof close, ")%.*s\"", (int)(d - i - 2), s + i + 2);
      const char *end = strstr(src + d, close);
      size_t stop = end ? (size_t)(end - src) + strlen(close) : n;
      for (; i < stop; i++)
        if (s[i] != '\n') s[i] = ' ';
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < n && s[j] != c && s[j] != '\n') j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
      int keep = c == '"' && j == i + 2 && s[i + 1] == 'C';
      for (size_t k = i + 1; k < j && k < n; k++)
        if (!keep) s[k] = ' ';
      i = j < n ? j + 1 : n;
    } else {
      i++;
    }
  }
  return s;
}

#define MAX_SCOPE 256

typedef struct definition_end {
  size_t pos;    /* just after the '}' closing a kernel's body */
  size_t kernel; /* its index in the scanner's kernels */
} definition_end;

typedef struct scanner {
  const char *text; /* blanked */
  cj_token *stmt;
  size_t nstmt, cap;
  char scope[MAX_SCOPE];                           /* 'E' extern "C", 'N' namespace, 'O' other */
  size_t head_from[MAX_SCOPE], head_to[MAX_SCOPE]; /* a namespace's head: "namespace a" */
  int depth;
  cj_scan_kernel *ks;
  size_t nks, kcap;
  definition_end *ends;
  size_t nends, ecap;
  size_t body_kernel; /* 1 + the kernel whose body is open, or 0 */
  int body_depth;
  int templates, mangled;
  cj_scan_template *tm; /* template kernels */
  size_t ntm, tmcap;
  char **td_names, **td_types; /* typedefs of the source ("uint" -> "unsigned int") */
  size_t ntd, tdcap;
  char *err;
  size_t err_len;
} scanner;

static int scope_open(const scanner *sc) {
  for (int i = 0; i < sc->depth && i < MAX_SCOPE; i++)
    if (sc->scope[i] == 'O') return 0;
  return 1;
}

static int scope_extern_c(const scanner *sc) {
  for (int i = 0; i < sc->depth && i < MAX_SCOPE; i++)
    if (sc->scope[i] == 'E') return 1;
  return 0;
}

static int stmt_is(const scanner *sc, size_t i, const char *s) {
  return i < sc->nstmt && cj_tok_is(sc->text, sc->stmt[i], s);
}

static int is_attribute(const char *s, size_t n) {
  static const char *const a[] = {
      "__launch_bounds__", "__maxnreg__", "__cluster_dims__",  "__attribute__", "__declspec",
      "alignas",           "__align__",   "__builtin_align__", "decltype",      NULL};
  return cj_in_list(a, s, n);
}

static size_t matching_paren(const scanner *sc, size_t i) {
  int depth = 0;
  for (; i < sc->nstmt; i++) {
    if (stmt_is(sc, i, "("))
      depth++;
    else if (stmt_is(sc, i, ")") && --depth == 0)
      return i;
  }
  return sc->nstmt;
}

/* Equal apart from spaces: "float*" and "float *". */
static int same_spelling(const char *a, const char *b) {
  for (;;) {
    while (isspace((unsigned char)*a)) a++;
    while (isspace((unsigned char)*b)) b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
    a++, b++;
  }
}

static int same_params(const cj_signature *a, const cj_signature *b) {
  if (a->nparams != b->nparams) return 0;
  for (size_t i = 0; i < a->nparams; i++)
    if (!same_spelling(a->params[i].type, b->params[i].type)) return 0;
  return 1;
}

/* The namespaces open around the statement, as the source opens them. */
static cujit_status scope_text(const scanner *sc, cj_scan_kernel *k) {
  cj_buf b = {0};
  for (int i = 0; i < sc->depth && i < MAX_SCOPE; i++)
    if (sc->scope[i] == 'N') {
      cj_buf_add(&b, sc->text + sc->head_from[i], sc->head_to[i] - sc->head_from[i]);
      cj_buf_puts(&b, " { ");
      k->scope_depth++;
    }
  if (b.failed) {
    cj_buf_free(&b);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  k->scope = b.data;
  return CUJIT_OK;
}

static cujit_status grow_kernels(scanner *sc) {
  if (sc->nks < sc->kcap) return CUJIT_OK;
  size_t cap = sc->kcap ? 2 * sc->kcap : 8;
  cj_scan_kernel *nk = realloc(sc->ks, cap * sizeof *nk);
  if (!nk) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  sc->ks = nk, sc->kcap = cap;
  return CUJIT_OK;
}

/* The name of a C++-linkage kernel with the namespaces open around it: "ns::k" (an unnamed
** namespace adds nothing: its names are reached unqualified). Malloc'd. */
static char *qualified_name(const scanner *sc, const char *name, size_t len) {
  cj_buf b = {0};
  for (int i = 0; i < sc->depth && i < MAX_SCOPE; i++) {
    if (sc->scope[i] != 'N') continue;
    size_t from = sc->head_from[i], to = sc->head_to[i];
    while (to > from && isspace((unsigned char)sc->text[to - 1])) to--;
    size_t w = to;
    while (w > from && cj_ident_char((unsigned char)sc->text[w - 1])) w--;
    if (to - w == 9 && memcmp(sc->text + w, "namespace", 9) == 0) continue;
    cj_buf_add(&b, sc->text + w, to - w);
    cj_buf_puts(&b, "::");
  }
  cj_buf_add(&b, name, len);
  if (b.failed) cj_buf_free(&b);
  return b.data;
}

/* `text` with each whole word in names[] replaced by its types[] entry, and words cut at top
** level (not inside parentheses) of the parameter list kept as they are. Malloc'd or NULL. */
static char *replace_words(const char *text, size_t len, char *const *names, char *const *types,
                           size_t n) {
  cj_buf b = {0};
  for (size_t i = 0; i < len;) {
    if (cj_ident_start((unsigned char)text[i]) &&
        (i == 0 || !cj_ident_char((unsigned char)text[i - 1]))) {
      size_t e = i;
      while (e < len && cj_ident_char((unsigned char)text[e])) e++;
      size_t k = 0;
      while (k < n && !(strlen(names[k]) == e - i && memcmp(names[k], text + i, e - i) == 0)) k++;
      if (k < n)
        cj_buf_puts(&b, types[k]);
      else
        cj_buf_add(&b, text + i, e - i);
      i = e;
    } else {
      cj_buf_add(&b, text + i++, 1);
    }
  }
  if (b.failed || !b.data) {
    cj_buf_free(&b);
    return cj_strndup("", 0);
  }
  return b.data;
}

/* Parses a kernel's parameters (the source's typedefs and, for a template's instantiation, its
** arguments put in) into *sig, named `qualified` when given, else by the name token. */
static cujit_status read_params(scanner *sc, const char *qualified, const char *name, size_t nlen,
                                const char *params, size_t plen, const char *shown,
                                cj_signature *sig) {
  char *typed = replace_words(params, plen, sc->td_names, sc->td_types, sc->ntd);
  cj_buf b = {0};
  cj_buf_add(&b, name, nlen);
  cj_buf_puts(&b, "(");
  cj_buf_puts(&b, typed ? typed : "");
  cj_buf_puts(&b, ")");
  free(typed);
  if (b.failed || !typed) {
    cj_buf_free(&b);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  char why[1024];
  cujit_status st = cj_signature_parse_lenient(b.data, sig, why, sizeof why);
  b.data[nlen] = '\0'; /* the name alone, for the message */
  if (st == CUJIT_ERROR_SIGNATURE && sc->err)
    snprintf(sc->err, sc->err_len, "kernel '%s' of the source cannot be launched by cujit: %s",
             shown       ? shown
             : qualified ? qualified
                         : b.data,
             why);
  cj_buf_free(&b);
  if (st == CUJIT_OK && qualified) {
    char *q = cj_strdup(qualified);
    if (!q) {
      cj_signature_free(sig);
      return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
    free(sig->name);
    sig->name = q;
  }
  return st;
}

/* `typedef WORDS NAME;` or `using NAME = WORDS;` at namespace scope, WORDS being words and stars
** only: remembered, so that a kernel's `uint *p` reads as `unsigned int *p`. */
static cujit_status note_typedef(scanner *sc) {
  size_t from, to, name;
  if (sc->nstmt >= 3 && stmt_is(sc, 0, "typedef"))
    from = 1, to = sc->nstmt - 1, name = sc->nstmt - 1;
  else if (sc->nstmt >= 4 && stmt_is(sc, 0, "using") && stmt_is(sc, 2, "="))
    from = 3, to = sc->nstmt, name = 1;
  else
    return CUJIT_OK;
  if (sc->stmt[name].kind != CJ_TK_IDENT || from >= to) return CUJIT_OK;
  for (size_t i = from; i < to; i++)
    if (sc->stmt[i].kind != CJ_TK_IDENT && !stmt_is(sc, i, "*")) return CUJIT_OK;
  cj_token first = sc->stmt[from], last = sc->stmt[to - 1], nt = sc->stmt[name];
  char *type = replace_words(sc->text + first.pos, last.pos + last.len - first.pos, sc->td_names,
                             sc->td_types, sc->ntd); /* typedefs of typedefs */
  char *tname = cj_strndup(sc->text + nt.pos, nt.len);
  if (sc->ntd == sc->tdcap) {
    size_t cap = sc->tdcap ? 2 * sc->tdcap : 8;
    char **nn = realloc(sc->td_names, cap * sizeof *nn);
    if (nn) sc->td_names = nn;
    char **nt2 = nn ? realloc(sc->td_types, cap * sizeof *nt2) : NULL;
    if (nt2) sc->td_types = nt2, sc->tdcap = cap;
  }
  if (!type || !tname || sc->ntd == sc->tdcap) {
    free(type), free(tname);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (char *c = type; *c; c++)
    if (isspace((unsigned char)*c)) *c = ' ';
  sc->td_names[sc->ntd] = tname, sc->td_types[sc->ntd++] = type;
  return CUJIT_OK;
}

static void free_template(cj_scan_template *t) {
  for (size_t i = 0; i < t->ntparams; i++) free(t->tparams[i]), free(t->tdefaults[i]);
  free(t->tparams), free(t->tdefaults), free(t->name), free(t->params), free(t->scope);
}

/* `template <class T, int N = 4> __global__ void name(...)`: remembered for name expressions. */
static cujit_status add_template(scanner *sc) {
  size_t lt = 0;
  while (lt < sc->nstmt && !stmt_is(sc, lt, "template")) lt++;
  if (++lt >= sc->nstmt || !stmt_is(sc, lt, "<")) return CUJIT_OK;
  size_t gt = lt + 1;
  for (int depth = 1; gt < sc->nstmt; gt++) {
    if (stmt_is(sc, gt, "<")) depth++;
    if (stmt_is(sc, gt, ">") && --depth == 0) break;
  }
  size_t fn = gt + 1;
  while (fn + 1 < sc->nstmt && !(sc->stmt[fn].kind == CJ_TK_IDENT && stmt_is(sc, fn + 1, "(") &&
                                 !is_attribute(sc->text + sc->stmt[fn].pos, sc->stmt[fn].len)))
    fn = stmt_is(sc, fn + 1, "(") ? matching_paren(sc, fn + 1) : fn + 1;
  if (gt >= sc->nstmt || fn + 1 >= sc->nstmt) return CUJIT_OK;
  size_t close = matching_paren(sc, fn + 1);
  if (close >= sc->nstmt) return CUJIT_OK;
  if (sc->ntm == sc->tmcap) {
    size_t cap = sc->tmcap ? 2 * sc->tmcap : 4;
    cj_scan_template *nt = realloc(sc->tm, cap * sizeof *nt);
    if (!nt) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    sc->tm = nt, sc->tmcap = cap;
  }
  cj_scan_template *t = &sc->tm[sc->ntm];
  memset(t, 0, sizeof *t);
  cj_token nt = sc->stmt[fn];
  size_t ps = sc->stmt[fn + 1].pos + 1, pe = sc->stmt[close].pos;
  t->name = qualified_name(sc, sc->text + nt.pos, nt.len);
  t->params = cj_strndup(sc->text + ps, pe - ps);
  cj_scan_kernel scope = {0};
  cujit_status st = t->name && t->params ? scope_text(sc, &scope) : CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  t->scope = scope.scope, t->scope_depth = scope.scope_depth;
  size_t cap = gt - lt; /* at most that many parameters */
  t->tparams = calloc(cap, sizeof *t->tparams);
  t->tdefaults = calloc(cap, sizeof *t->tdefaults);
  if (st == CUJIT_OK && (!t->tparams || !t->tdefaults)) st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  /* Each parameter: its name is the last word before its '=' (or its end). */
  for (size_t i = lt + 1, start = i; st == CUJIT_OK && i <= gt; i++) {
    int depth = 0;
    size_t eq = 0;
    for (i = start; i < gt; i++) {
      if (stmt_is(sc, i, "<") || stmt_is(sc, i, "(")) depth++;
      if ((stmt_is(sc, i, ">") || stmt_is(sc, i, ")")) && depth > 0) depth--;
      if (depth == 0 && stmt_is(sc, i, "=") && !eq) eq = i;
      if (depth == 0 && stmt_is(sc, i, ",")) break;
    }
    size_t name_end = eq ? eq : i;
    if (name_end > start && sc->stmt[name_end - 1].kind == CJ_TK_IDENT) {
      cj_token w = sc->stmt[name_end - 1];
      t->tparams[t->ntparams] = cj_strndup(sc->text + w.pos, w.len);
      if (eq && eq + 1 < i) {
        cj_token a = sc->stmt[eq + 1], b = sc->stmt[i - 1];
        t->tdefaults[t->ntparams] = cj_strndup(sc->text + a.pos, b.pos + b.len - a.pos);
      }
      if (!t->tparams[t->ntparams++]) st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
    start = i + 1;
  }
  sc->ntm++;
  return st;
}

/* Reads the kernel whose name is stmt[name_i] and parameters stmt[open_i..close_i]; *index is its
** entry: a new one, or the one with the same name and parameter list read before (a declaration
** and its definition; the definition's parameter names win). */
static cujit_status add_kernel(scanner *sc, size_t name_i, size_t open_i, size_t close_i,
                               int definition, int cxx, size_t *index) {
  cj_token nt = sc->stmt[name_i];
  size_t ps = sc->stmt[open_i].pos + 1, pe = sc->stmt[close_i].pos;
  if (grow_kernels(sc) != CUJIT_OK) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  cj_scan_kernel *k = &sc->ks[sc->nks];
  memset(k, 0, sizeof *k);
  k->cxx = cxx;
  char *qualified = cxx ? qualified_name(sc, sc->text + nt.pos, nt.len) : NULL;
  if (cxx && !qualified) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  cujit_status st =
      read_params(sc, qualified, sc->text + nt.pos, nt.len, sc->text + ps, pe - ps, NULL, &k->sig);
  free(qualified);
  if (st != CUJIT_OK) return st;
  for (size_t i = 0; i < sc->nks; i++)
    if (strcmp(sc->ks[i].sig.name, k->sig.name) == 0 && same_params(&sc->ks[i].sig, &k->sig)) {
      if (definition) {
        cj_signature_free(&sc->ks[i].sig);
        sc->ks[i].sig = k->sig;
      } else {
        cj_signature_free(&k->sig);
      }
      *index = i;
      return CUJIT_OK;
    }
  if ((st = scope_text(sc, k)) != CUJIT_OK) {
    cj_signature_free(&k->sig);
    return st;
  }
  *index = sc->nks++;
  return CUJIT_OK;
}

/* A declaration or definition at namespace scope: is it an extern "C" __global__ kernel? */
static cujit_status consider(scanner *sc, int definition) {
  int global = 0, extern_c = scope_extern_c(sc), templ = 0;
  for (size_t i = 0; i < sc->nstmt; i++) {
    if (stmt_is(sc, i, "__global__"))
      global = 1;
    else if (stmt_is(sc, i, "template"))
      templ = 1;
    else if (stmt_is(sc, i, "extern") && stmt_is(sc, i + 1, "\"C\""))
      extern_c = 1;
  }
  if (!global) return note_typedef(sc);
  if (templ) return sc->templates++, add_template(sc);
  if (!extern_c) sc->mangled++;
  for (size_t i = 0; i < sc->nstmt; i++) {
    cj_token t = sc->stmt[i];
    if (stmt_is(sc, i, "[") && stmt_is(sc, i + 1, "[")) {
      while (i < sc->nstmt && !(stmt_is(sc, i, "]") && stmt_is(sc, i + 1, "]"))) i++;
      i++;
      continue;
    }
    if (t.kind != CJ_TK_IDENT || !stmt_is(sc, i + 1, "(")) continue;
    size_t close = matching_paren(sc, i + 1);
    if (close >= sc->nstmt) return CUJIT_OK;
    if (is_attribute(sc->text + t.pos, t.len)) {
      i = close;
      continue;
    }
    size_t index;
    cujit_status st = add_kernel(sc, i, i + 1, close, definition, !extern_c, &index);
    if (st == CUJIT_OK && definition) sc->body_kernel = index + 1, sc->body_depth = sc->depth;
    return st;
  }
  return CUJIT_OK;
}

static char brace_kind(const scanner *sc) {
  if (sc->nstmt == 2 && stmt_is(sc, 0, "extern") && stmt_is(sc, 1, "\"C\"")) return 'E';
  if (sc->nstmt >= 1 && stmt_is(sc, 0, "namespace")) return 'N';
  if (sc->nstmt >= 2 && stmt_is(sc, 0, "inline") && stmt_is(sc, 1, "namespace")) return 'N';
  return 'O';
}

static cujit_status note_definition_end(scanner *sc, size_t pos) {
  if (sc->nends == sc->ecap) {
    size_t cap = sc->ecap ? 2 * sc->ecap : 8;
    definition_end *ne = realloc(sc->ends, cap * sizeof *ne);
    if (!ne) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    sc->ends = ne, sc->ecap = cap;
  }
  sc->ends[sc->nends++] = (definition_end){pos, sc->body_kernel - 1};
  sc->body_kernel = 0;
  return CUJIT_OK;
}

/* At a '{', ';' or '}' outside parentheses: the statement before it is complete. */
static cujit_status end_statement(scanner *sc, cj_token t) {
  char c = sc->text[t.pos];
  cujit_status st = CUJIT_OK;
  if (c != '}' && scope_open(sc)) st = consider(sc, c == '{');
  if (st != CUJIT_OK) return st;
  if (c == '{') {
    if (sc->depth < MAX_SCOPE) {
      sc->scope[sc->depth] = brace_kind(sc);
      sc->head_from[sc->depth] = sc->nstmt ? sc->stmt[0].pos : t.pos;
      sc->head_to[sc->depth] = t.pos;
    }
    sc->depth++;
  } else if (c == '}' && sc->depth > 0) {
    sc->depth--;
    if (sc->body_kernel && sc->depth == sc->body_depth) st = note_definition_end(sc, t.pos + 1);
  }
  sc->nstmt = 0;
  return st;
}

static cujit_status scan_tokens(scanner *sc) {
  size_t len = strlen(sc->text), pos = 0;
  int parens = 0;
  for (;;) {
    cj_token t = cj_next_token(sc->text, &pos, len);
    if (t.kind == CJ_TK_END) return CUJIT_OK;
    const char *s = sc->text + t.pos;
    int punct = t.kind == CJ_TK_PUNCT && t.len == 1;
    if (punct && *s == '(') parens++;
    if (punct && *s == ')' && parens > 0) parens--;
    if (parens == 0 && punct && (*s == '{' || *s == ';' || *s == '}')) {
      cujit_status st = end_statement(sc, t);
      if (st != CUJIT_OK) return st;
      continue;
    }
    if (!scope_open(sc)) continue; /* inside a function body or a class: not needed */
    if (sc->nstmt == sc->cap) {
      size_t cap = sc->cap ? 2 * sc->cap : 64;
      cj_token *nt = realloc(sc->stmt, cap * sizeof *nt);
      if (!nt) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      sc->stmt = nt, sc->cap = cap;
    }
    sc->stmt[sc->nstmt++] = t;
  }
}

static void free_kernels(cj_scan_kernel *ks, size_t n) {
  for (size_t i = 0; i < n; i++) cj_signature_free(&ks[i].sig), free(ks[i].scope);
  free(ks);
}

/* Numbers the parameter lists of each name that has several (1, 2, ...). */
static void number_variants(cj_scan_kernel *ks, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int seen = 0, later = 0;
    for (size_t j = 0; j < n; j++)
      if (j != i && strcmp(ks[j].sig.name, ks[i].sig.name) == 0) (j < i ? seen++ : later++);
    ks[i].variant = seen || later ? seen + 1 : 0;
  }
}

static cujit_status read_source(const char *source, scanner *sc, char *err, size_t err_len) {
  memset(sc, 0, sizeof *sc);
  sc->err = err, sc->err_len = err_len;
  char *blank = blank_source(source);
  if (!blank) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  sc->text = blank;
  cujit_status st = scan_tokens(sc);
  free(sc->stmt);
  free(blank);
  for (size_t i = 0; i < sc->ntd; i++) free(sc->td_names[i]), free(sc->td_types[i]);
  free(sc->td_names), free(sc->td_types);
  sc->text = NULL, sc->stmt = NULL, sc->td_names = sc->td_types = NULL, sc->ntd = 0;
  if (st == CUJIT_OK) number_variants(sc->ks, sc->nks);
  if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY && err && err_len)
    snprintf(err, err_len, "out of memory reading the kernels of the source");
  return st;
}

void cj_scan_none_message(int templates, int mangled, char *err, size_t err_len) {
  if (err && err_len)
    snprintf(err, err_len, "no __global__ kernel in the source%s",
             templates ? " other than templates: name their instantiations in the "
                         "name_expressions option, such as {\"scale<float>\"}"
             : mangled ? " that cujit could read"
                       : "");
}

cujit_status cj_scan_kernels(const char *source, cj_signature **out, size_t *count, char *err,
                             size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!out || !count) return CUJIT_ERROR_INVALID_ARGUMENT;
  *out = NULL, *count = 0;
  if (!source) return CUJIT_ERROR_INVALID_ARGUMENT;
  scanner sc;
  cujit_status st = read_source(source, &sc, err, err_len);
  free(sc.ends);
  cj_signature *sigs = st == CUJIT_OK && sc.nks ? calloc(sc.nks, sizeof *sigs) : NULL;
  if (st == CUJIT_OK && sc.nks && !sigs) {
    st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    if (err && err_len) snprintf(err, err_len, "out of memory reading the kernels of the source");
  }
  if (st == CUJIT_OK && sc.nks == 0) {
    cj_scan_none_message(sc.templates, sc.mangled, err, err_len);
    st = CUJIT_ERROR_NOT_FOUND;
  }
  if (st == CUJIT_OK) {
    for (size_t i = 0; i < sc.nks; i++) sigs[i] = sc.ks[i].sig;
    for (size_t i = 0; i < sc.nks; i++) memset(&sc.ks[i].sig, 0, sizeof sc.ks[i].sig);
    *out = sigs, *count = sc.nks;
  }
  free_kernels(sc.ks, sc.nks);
  for (size_t i = 0; i < sc.ntm; i++) free_template(&sc.tm[i]);
  free(sc.tm);
  return st;
}

/* --- the translation unit to compile ------------------------------------------------------------
 */

/* A #line file name may hold no quote or backslash. */
static void add_line_name(cj_buf *b, const char *text) {
  for (; *text; text++) cj_buf_add(b, *text == '"' || *text == '\\' ? "'" : text, 1);
}

static int has_opaque_param(const cj_signature *sig) {
  for (size_t i = 0; i < sig->nparams; i++)
    if (sig->params[i].size == 0) return 1;
  return 0;
}

static void add_param_types(cj_buf *b, const cj_signature *sig) {
  for (size_t i = 0; i < sig->nparams; i++)
    cj_buf_printf(b, "%s%s", i ? ", " : "", sig->params[i].type);
}

/* The redeclaration NVRTC refuses when the kernel it compiles has other parameter types, under a
** #line whose file name tells the user what happened and what to do. */
/* Whether two types are the same, for the checks of C++-linkage kernels (no <type_traits>:
** NVRTC finds it only in the toolkit's libcu++). */
static const char same_type[] =
    "#ifndef CJ_SAME_TYPE_\n#define CJ_SAME_TYPE_\n"
    "template <class A, class B> struct cj_same_type_ { static const bool v = false; };\n"
    "template <class A> struct cj_same_type_<A, A> { static const bool v = true; };\n#endif\n";

static void add_check(cj_buf *b, const cj_scan_kernel *k, int given) {
  if (k->cxx) { /* no redeclaration with C linkage: the kernel's own type must match */
    char *text = cj_signature_format(&k->sig);
    cj_buf_puts(b, "#line 1 \"");
    cj_buf_printf(b, "cujit: the source compiles C++ kernel '%s' with other parameters than ",
                  k->sig.name);
    add_line_name(b, text ? text : k->sig.name);
    cj_buf_puts(b, ", read from its text (or it is overloaded): give its signature in the "
                   "signatures option\"\n");
    free(text);
    cj_buf_printf(b, "static_assert(cj_same_type_<decltype(&%s), void (*)(", k->sig.name);
    add_param_types(b, &k->sig);
    cj_buf_printf(b, ")>::v, \"cujit: kernel parameters differ\");\n");
    return;
  }
  char *text = cj_signature_format(&k->sig);
  cj_buf_puts(b, "#line 1 \"");
  if (given) {
    cj_buf_printf(b,
                  "cujit: kernel '%s' is not compiled with the parameters of the signature "
                  "given for it, ",
                  k->sig.name);
    add_line_name(b, text ? text : k->sig.name);
    cj_buf_puts(b, ": correct it in the signatures option");
  } else {
    cj_buf_printf(b, "cujit: the source compiles kernel '%s' with other parameters than ",
                  k->sig.name);
    add_line_name(b, text ? text : k->sig.name);
    cj_buf_puts(b, ", read from its text (a macro or a preprocessor condition decides them): give "
                   "its signature in the signatures option");
  }
  free(text);
  cj_buf_printf(b, "\"\n%sextern \"C\" { __global__ void %s(", k->scope ? k->scope : "",
                k->sig.name);
  add_param_types(b, &k->sig);
  cj_buf_puts(b, "); }");
  for (int i = 0; i < k->scope_depth; i++) cj_buf_puts(b, " }");
  cj_buf_puts(b, "\n");
}

/* The marker after a definition of a kernel whose name has several parameter lists: the PTX holds
** it only when the preprocessor kept that place. The redeclaration beside it is a second guard
** that the kernel compiled there has these parameters. (A closing brace shared by two openings
** under #if leaves the reader inside the first body for good: no marker, and the check at the end
** refuses what it did not read.) */
static void add_marker(cj_buf *b, const cj_scan_kernel *k) {
  cj_buf_puts(b, " extern \"C\" { ");
  if (!has_opaque_param(&k->sig) && !k->cxx) {
    cj_buf_printf(b, "__global__ void %s(", k->sig.name);
    add_param_types(b, &k->sig);
    cj_buf_puts(b, "); ");
  }
  cj_buf_printf(b, "__device__ char cj_variant_%s_%d; }", k->sig.name, k->variant);
}

static int by_position(const void *a, const void *b) {
  size_t x = ((const definition_end *)a)->pos, y = ((const definition_end *)b)->pos;
  return x < y ? -1 : x > y;
}

/* The source with a marker after each definition of a kernel of several parameter lists, then a
** check for each kernel whose parameters cujit can all size (the others cannot be launched). */
static char *unit_text(const char *source, const cj_scan_kernel *ks, size_t n, definition_end *ends,
                       size_t nends, int given) {
  cj_buf b = {0};
  size_t from = 0;
  if (nends) qsort(ends, nends, sizeof *ends, by_position);
  for (size_t i = 0; i < nends; i++) {
    const cj_scan_kernel *k = &ks[ends[i].kernel];
    if (k->variant == 0) continue;
    cj_buf_add(&b, source + from, ends[i].pos - from);
    add_marker(&b, k);
    from = ends[i].pos;
  }
  cj_buf_puts(&b, source + from);
  if (n) cj_buf_puts(&b, "\n\n"); /* a last line ending in a backslash joins only the first */
  for (size_t i = 0; i < n; i++)
    if (ks[i].cxx) {
      cj_buf_puts(&b, same_type);
      break;
    }
  for (size_t i = 0; i < n; i++)
    if (ks[i].variant == 0 && !has_opaque_param(&ks[i].sig)) add_check(&b, &ks[i], given);
  if (b.failed || !b.data) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* The kernels named by explicit signatures, each parsed as cj_signature_parse does. */
static cujit_status read_given(const char *const *signatures, size_t count, scanner *sc, char *err,
                               size_t err_len) {
  memset(sc, 0, sizeof *sc);
  if (!signatures) {
    snprintf(err, err_len, "signature_count is %zu but signatures is NULL", count);
    return CUJIT_ERROR_INVALID_ARGUMENT;
  }
  if (!(sc->ks = calloc(count, sizeof *sc->ks))) {
    snprintf(err, err_len, "out of memory reading the signatures");
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t i = 0; i < count; i++) {
    char why[1024];
    cj_scan_kernel *k = &sc->ks[i];
    cujit_status st = cj_signature_parse(signatures[i], &k->sig, why, sizeof why);
    if (st == CUJIT_OK && cj_signature_is_generic(&k->sig)) {
      snprintf(why, sizeof why, "type variable %s: a program's kernels take concrete types",
               k->sig.type_vars[0]);
      cj_signature_free(&k->sig);
      st = CUJIT_ERROR_SIGNATURE;
    }
    for (size_t j = 0; st == CUJIT_OK && j < i; j++)
      if (strcmp(sc->ks[j].sig.name, k->sig.name) == 0) {
        snprintf(why, sizeof why, "kernel '%s' is given twice", k->sig.name);
        cj_signature_free(&k->sig);
        st = CUJIT_ERROR_SIGNATURE;
      }
    if (st != CUJIT_OK) {
      snprintf(err, err_len, "signatures[%zu]: %s", i, why);
      return st;
    }
    sc->nks++;
  }
  return CUJIT_OK;
}

cujit_status cj_scan_prepare(const char *source, const char *const *signatures,
                             size_t signature_count, cj_scan *out, char *err, size_t err_len) {
  if (err && err_len) err[0] = '\0';
  memset(out, 0, sizeof *out);
  if (!source || !err || !err_len) return CUJIT_ERROR_INVALID_ARGUMENT;
  scanner sc;
  out->given = signature_count > 0;
  cujit_status st = out->given ? read_given(signatures, signature_count, &sc, err, err_len)
                               : read_source(source, &sc, err, err_len);
  out->kernels = sc.ks, out->count = sc.nks;
  out->templates = sc.templates, out->mangled = sc.mangled;
  out->tmpls = sc.tm, out->ntmpls = sc.ntm;
  if (st == CUJIT_OK &&
      !(out->text = unit_text(source, sc.ks, sc.nks, sc.ends, sc.nends, out->given))) {
    snprintf(err, err_len, "out of memory writing the translation unit");
    st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  free(sc.ends);
  return st;
}

void cj_scan_free(cj_scan *scan) {
  if (!scan) return;
  free_kernels(scan->kernels, scan->count);
  for (size_t i = 0; i < scan->ntmpls; i++) free_template(&scan->tmpls[i]);
  free(scan->tmpls);
  free(scan->text);
  memset(scan, 0, sizeof *scan);
}

static int all_blank(const char *s, const char *end) {
  for (; s < end; s++)
    if (!isspace((unsigned char)*s)) return 0;
  return 1;
}

/* --- name expressions ------------------------------------------------------------------------ */

static char *trimmed(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return cj_strndup(s, n);
}

/* The template arguments of "scale<float, 4>" into args (malloc'd strings), up to max. */
static size_t template_args(const char *lt, const char *end, char **args, size_t max) {
  size_t n = 0;
  int depth = 0;
  const char *start = lt + 1;
  for (const char *c = lt + 1; c < end && n < max; c++) {
    if (*c == '<' || *c == '(') depth++;
    if ((*c == '>' || *c == ')') && depth > 0) depth--;
    if (depth == 0 && *c == ',') args[n++] = trimmed(start, (size_t)(c - start)), start = c + 1;
  }
  if (n < max && !all_blank(start, end)) args[n++] = trimmed(start, (size_t)(end - start));
  return n;
}

/* The kernel instantiated by one name expression, added to the scan. */
static cujit_status instantiate(cj_scan *scan, scanner *sc, const char *expr, char *err,
                                size_t err_len) {
  const char *lt = strchr(expr, '<'), *gt = strrchr(expr, '>');
  size_t base_len = lt ? (size_t)(lt - expr) : strlen(expr);
  char *base = trimmed(expr, base_len);
  if (!base) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  for (size_t i = 0; i < scan->count; i++) /* a C++-linkage kernel read already */
    if (strcmp(scan->kernels[i].sig.name, expr) == 0 && scan->kernels[i].cxx) {
      free(base);
      return CUJIT_OK;
    }
  const cj_scan_template *t = NULL;
  for (size_t i = 0; lt && gt > lt && !t && i < scan->ntmpls; i++)
    if (strcmp(scan->tmpls[i].name, base) == 0) t = &scan->tmpls[i];
  free(base);
  if (!t) {
    cj_buf names = {0};
    for (size_t i = 0; i < scan->ntmpls; i++)
      cj_buf_printf(&names, "%s%s", i ? ", " : "", scan->tmpls[i].name);
    snprintf(err, err_len,
             "name expression '%s' names no template kernel of the source (%s%s); write "
             "NAME<ARGS>, such as \"scale<float>\"",
             expr, names.data ? "it has " : "it has none", names.data ? names.data : "");
    cj_buf_free(&names);
    return CUJIT_ERROR_NOT_FOUND;
  }
  char *args[CJ_MAX_TYPE_VARS * 4] = {0};
  size_t nargs = template_args(lt, gt, args, sizeof args / sizeof args[0]);
  cujit_status st = CUJIT_OK;
  for (size_t i = nargs; i < t->ntparams && st == CUJIT_OK; i++)
    if (i < sizeof args / sizeof args[0] && t->tdefaults[i] &&
        !(args[nargs++] = cj_strdup(t->tdefaults[i])))
      st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  if (st == CUJIT_OK && nargs != t->ntparams) {
    snprintf(err, err_len,
             "name expression '%s': template kernel '%s' takes %zu argument(s), not %zu", expr,
             t->name, t->ntparams, nargs);
    st = CUJIT_ERROR_SIGNATURE;
  }
  char *params =
      st == CUJIT_OK ? replace_words(t->params, strlen(t->params), t->tparams, args, nargs) : NULL;
  for (size_t i = 0; i < nargs; i++) free(args[i]);
  if (st != CUJIT_OK) return st;
  if (!params || grow_kernels(sc) != CUJIT_OK) {
    free(params);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  cj_scan_kernel *k = &sc->ks[sc->nks];
  memset(k, 0, sizeof *k);
  k->cxx = 1;
  sc->err = err, sc->err_len = err_len;
  st = read_params(sc, expr, "cj_k", 4, params, strlen(params), expr, &k->sig);
  free(params);
  if (st == CUJIT_OK) sc->nks++;
  return st;
}

cujit_status cj_scan_instantiate(cj_scan *scan, const char *const *exprs, size_t count, char *err,
                                 size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!count) return CUJIT_OK;
  if (!exprs) {
    snprintf(err, err_len, "name_expression_count is %zu but name_expressions is NULL", count);
    return CUJIT_ERROR_INVALID_ARGUMENT;
  }
  scanner sc;
  memset(&sc, 0, sizeof sc);
  sc.ks = scan->kernels, sc.nks = sc.kcap = scan->count;
  size_t first = scan->count;
  cujit_status st = CUJIT_OK;
  for (size_t i = 0; i < count && st == CUJIT_OK; i++) {
    if (!exprs[i] || !*exprs[i]) {
      snprintf(err, err_len, "name expression %zu is NULL or empty", i + 1);
      st = CUJIT_ERROR_INVALID_ARGUMENT;
    } else {
      for (size_t j = 0; j < sc.nks && st == CUJIT_OK; j++)
        if (strcmp(sc.ks[j].sig.name, exprs[i]) == 0 && j >= first) {
          snprintf(err, err_len, "name expression '%s' is given twice", exprs[i]);
          st = CUJIT_ERROR_INVALID_ARGUMENT;
        }
      if (st == CUJIT_OK) st = instantiate(scan, &sc, exprs[i], err, err_len);
    }
    scan->kernels = sc.ks, scan->count = sc.nks;
  }
  if (st != CUJIT_OK) return st;
  cj_buf b = {0};
  cj_buf_puts(&b, scan->text);
  cj_buf_puts(&b, "\n");
  cj_buf_puts(&b, same_type);
  for (size_t i = first; i < scan->count; i++)
    if (!has_opaque_param(&scan->kernels[i].sig))
      add_check(&b, &scan->kernels[i], 0);
    else /* no check: the name expression joins the text (and so the key) all the same */
      cj_buf_printf(&b, "/* cujit name expression: %s */\n", scan->kernels[i].sig.name);
  if (b.failed) {
    cj_buf_free(&b);
    snprintf(err, err_len, "out of memory writing the translation unit");
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  free(scan->text);
  scan->text = b.data;
  return CUJIT_OK;
}

cujit_status cj_scan_copy_kernels(const cj_scan *scan, cj_signature **kernels, size_t *count) {
  *kernels = NULL, *count = 0;
  cj_signature *out = calloc(scan->count ? scan->count : 1, sizeof *out);
  if (!out) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  size_t n = 0;
  for (size_t i = 0; i < scan->count; i++) {
    size_t j = 0;
    while (j < n && strcmp(out[j].name, scan->kernels[i].sig.name) != 0) j++;
    if (j < n) continue;
    if (cj_signature_copy(&scan->kernels[i].sig, &out[n]) != CUJIT_OK) {
      for (size_t k = 0; k < n; k++) cj_signature_free(&out[k]);
      free(out);
      return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
    n++;
  }
  *kernels = out, *count = n;
  return CUJIT_OK;
}
