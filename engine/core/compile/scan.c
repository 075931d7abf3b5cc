/*
** scan.c -- the kernels of a translation unit: reads the extern "C" __global__ functions of its
** text (comments, strings and preprocessor lines skipped), or takes the signatures the user gives,
** and writes the translation unit to compile with the checks that let NVRTC confirm them (the
** PTX side of the confirmation is in verify.c). See scan.h for the design.
*/
#include "scan.h"
#include "host_code.h"
#include "base/base.h"
#include "lang/lexicon.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCOPE 256

typedef struct scanner {
  const char *text; /* blanked */
  cj_token *stmt;
  size_t nstmt, cap;
  char scope[MAX_SCOPE];                           /* 'E' extern "C", 'N' namespace, 'O' other */
  size_t head_from[MAX_SCOPE], head_to[MAX_SCOPE]; /* a namespace's head: "namespace a" */
  int depth;
  cj_scan_kernel *ks;
  size_t nks, kcap;
  cj_definition_end *ends;
  size_t nends, ecap;
  size_t body_kernel; /* 1 + the kernel whose body is open, or 0 */
  int body_depth;
  int templates, mangled, macros;
  cj_scan_template *tm; /* template kernels */
  size_t ntm, tmcap;
  char **td_names, **td_types; /* typedefs of the source ("uint" -> "unsigned int") */
  size_t ntd, tdcap;
  char *err;
  size_t err_len;
} scanner;

/* Whether a brace of this kind is open around the statement ('O': a body or a class, which
** holds no kernel of interest; 'E': extern "C"). */
static int scope_holds(const scanner *sc, char kind) {
  for (int i = 0; i < sc->depth && i < MAX_SCOPE; i++)
    if (sc->scope[i] == kind) return 1;
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

/* Parses a kernel's parameters (the source's typedefs and, for a template's instantiation, its
** arguments put in) into *sig, named `qualified` when given, else by the name token. */
static cujit_status read_params(char **td_names, char **td_types, size_t ntd, const char *qualified,
                                const char *name, size_t nlen, const char *params, size_t plen,
                                const char *shown, cj_signature *sig, char *err, size_t err_len) {
  char *typed = cj_replace_words(params, plen, (const char *const *)td_names,
                                 (const char *const *)td_types, ntd);
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
  if (st == CUJIT_ERROR_SIGNATURE && err)
    snprintf(err, err_len, "kernel '%s' of the source cannot be launched by cujit: %s",
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
  char *type = cj_replace_words(sc->text + first.pos, last.pos + last.len - first.pos,
                                (const char *const *)sc->td_names,
                                (const char *const *)sc->td_types, sc->ntd); /* of typedefs */
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
      read_params(sc->td_names, sc->td_types, sc->ntd, qualified, sc->text + nt.pos, nt.len,
                  sc->text + ps, pe - ps, NULL, &k->sig, sc->err, sc->err_len);
  free(qualified);
  if (st == CUJIT_OK && !(k->params = cj_strndup(sc->text + ps, pe - ps))) {
    cj_signature_free(&k->sig);
    st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (st != CUJIT_OK) return st;
  for (size_t i = 0; i < sc->nks; i++)
    if (strcmp(sc->ks[i].sig.name, k->sig.name) == 0 && same_params(&sc->ks[i].sig, &k->sig)) {
      if (definition) {
        cj_signature_free(&sc->ks[i].sig);
        free(sc->ks[i].params);
        sc->ks[i].sig = k->sig, sc->ks[i].params = k->params;
      } else {
        cj_signature_free(&k->sig);
        free(k->params);
      }
      *index = i;
      return CUJIT_OK;
    }
  if ((st = scope_text(sc, k)) != CUJIT_OK) {
    cj_signature_free(&k->sig);
    free(k->params);
    return st;
  }
  *index = sc->nks++;
  return CUJIT_OK;
}

/* A declaration or definition at namespace scope: is it an extern "C" __global__ kernel? */
static cujit_status consider(scanner *sc, int definition) {
  int extern_c = scope_holds(sc, 'E'), templ = 0;
  size_t global_at = SIZE_MAX; /* the first __global__, if any */
  for (size_t i = 0; i < sc->nstmt; i++) {
    if (stmt_is(sc, i, "__global__")) {
      if (global_at == SIZE_MAX) global_at = i;
    } else if (stmt_is(sc, i, "template"))
      templ = 1;
    else if (stmt_is(sc, i, "extern") && stmt_is(sc, i + 1, "\"C\""))
      extern_c = 1;
  }
  if (global_at == SIZE_MAX) return note_typedef(sc);
  if (templ) return sc->templates++, add_template(sc);
  if (!extern_c) sc->mangled++;
  /* The name follows __global__ (a specifier: `__global__ void k(`, `void __global__ k(`); what
  ** comes before it in the statement may be macro calls that end without a `;`, such as
  ** `KERNEL(a, float)` before `extern "C" __global__ void b(...)`, which are not its name. */
  for (size_t i = global_at + 1; i < sc->nstmt; i++) {
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

static cujit_status note_cj_definition_end(scanner *sc, size_t pos) {
  if (sc->nends == sc->ecap) {
    size_t cap = sc->ecap ? 2 * sc->ecap : 8;
    cj_definition_end *ne = realloc(sc->ends, cap * sizeof *ne);
    if (!ne) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    sc->ends = ne, sc->ecap = cap;
  }
  sc->ends[sc->nends++] = (cj_definition_end){pos, sc->body_kernel - 1};
  sc->body_kernel = 0;
  return CUJIT_OK;
}

/* At a '{', ';' or '}' outside parentheses: the statement before it is complete. */
static cujit_status end_statement(scanner *sc, cj_token t) {
  char c = sc->text[t.pos];
  cujit_status st = CUJIT_OK;
  if (c != '}' && !scope_holds(sc, 'O')) st = consider(sc, c == '{');
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
    if (sc->body_kernel && sc->depth == sc->body_depth) st = note_cj_definition_end(sc, t.pos + 1);
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
    if (scope_holds(sc, 'O')) continue; /* inside a function body or a class: not needed */
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
  for (size_t i = 0; i < n; i++)
    cj_signature_free(&ks[i].sig), free(ks[i].scope), free(ks[i].params);
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

/* How many #defines say __global__ in their replacement: kernels a macro writes, which the scan
** cannot read (it skips preprocessor lines and does not expand macros). The directives are found
** as host code elision finds them (host_text.c: comments, literals and continued lines as the
** preprocessor sees them). Asked only when no kernel was read, for the message; 0 when out of
** memory (the message then goes without the hint). */
static int global_macros(const char *source, const char *blanked) {
  size_t n = strlen(source), count = 0;
  if (!memchr(source, '#', n)) return 0;
  char *dir = calloc(n, 1);
  cj_host_macro *macros = NULL;
  int found = 0;
  if (dir) cj_host_mark_directives(source, blanked, n, dir);
  if (dir && cj_host_read_macros(source, dir, &macros, &count))
    for (size_t i = 0; i < count; i++) {
      size_t pos = macros[i].body;
      cj_token t;
      while ((t = cj_next_token(source, &pos, macros[i].end)).kind != CJ_TK_END &&
             !cj_tok_is(source, t, "__global__")) {
      }
      found += t.kind != CJ_TK_END;
    }
  free(macros);
  free(dir);
  return found;
}

static cujit_status read_source(const char *source, scanner *sc, char *err, size_t err_len) {
  memset(sc, 0, sizeof *sc);
  sc->err = err, sc->err_len = err_len;
  char *blank = cj_blank_source(source);
  sc->text = blank;
  cujit_status st = blank ? scan_tokens(sc) : CUJIT_ERROR_OUT_OF_HOST_MEMORY; /* message below */
  if (st == CUJIT_OK && sc->nks == 0) sc->macros = global_macros(source, blank);
  free(sc->stmt);
  free(blank);
  sc->text = NULL, sc->stmt = NULL;
  if (st == CUJIT_OK) number_variants(sc->ks, sc->nks);
  if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY && err && err_len)
    snprintf(err, err_len, "out of memory reading the kernels of the source");
  return st;
}

void cj_scan_none_message(int templates, int mangled, int macros, char *err, size_t err_len) {
  if (err && err_len)
    snprintf(err, err_len, "no __global__ kernel in the source%s",
             templates ? " other than templates: name their instantiations in the "
                         "name_expressions option, such as {\"scale<float>\"}"
             : macros  ? " that cujit could read: a #define writes __global__, and cujit does "
                         "not expand macros; give the kernels' signatures in the signatures "
                         "option, such as {\"scale(float *x, int n)\"}"
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
    cj_scan_none_message(sc.templates, sc.mangled, sc.macros, err, err_len);
    st = CUJIT_ERROR_NOT_FOUND;
  }
  if (st == CUJIT_OK) {
    for (size_t i = 0; i < sc.nks; i++) sigs[i] = sc.ks[i].sig;
    for (size_t i = 0; i < sc.nks; i++) memset(&sc.ks[i].sig, 0, sizeof sc.ks[i].sig);
    *out = sigs, *count = sc.nks;
  }
  cj_scan rest = {.tmpls = sc.tm,
                  .ntmpls = sc.ntm,
                  .td_names = sc.td_names,
                  .td_types = sc.td_types,
                  .ntd = sc.ntd};
  cj_scan_free(&rest);
  free_kernels(sc.ks, sc.nks);
  return st;
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
  out->templates = sc.templates, out->mangled = sc.mangled, out->macros = sc.macros;
  out->tmpls = sc.tm, out->ntmpls = sc.ntm;
  out->td_names = sc.td_names, out->td_types = sc.td_types, out->ntd = sc.ntd;
  if (st == CUJIT_OK &&
      !(out->text = cj_unit_text(source, sc.ks, sc.nks, sc.ends, sc.nends, out->given))) {
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
  for (size_t i = 0; i < scan->ntd; i++) free(scan->td_names[i]), free(scan->td_types[i]);
  free(scan->td_names), free(scan->td_types);
  free(scan->text);
  memset(scan, 0, sizeof *scan);
}

cujit_status cj_scan_read_params(const cj_scan *scan, const char *name, const char *params,
                                 cj_signature *sig, char *err, size_t err_len) {
  return read_params(scan->td_names, scan->td_types, scan->ntd, name, "cj_k", 4, params,
                     strlen(params), name, sig, err, err_len);
}

/* Moves n items of `size` bytes from src to the end of *dst (holding *count); 0 when out of
** memory (src is then left as it was). */
static int append(void **dst, size_t *count, void *src, size_t n, size_t size) {
  if (!n) return 1;
  char *grown = realloc(*dst, (*count + n) * size);
  if (!grown) return 0;
  memcpy(grown + *count * size, src, n * size);
  *dst = grown, *count += n;
  return 1;
}

cujit_status cj_scan_headers(cj_scan *scan, const char *const *texts, size_t count, char *err,
                             size_t err_len) {
  size_t first = scan->count;
  cujit_status st = CUJIT_OK;
  for (size_t h = 0; h < count && st == CUJIT_OK; h++) {
    scanner sc;
    st = read_source(texts[h], &sc, err, err_len);
    free(sc.ends);
    size_t kept = 0; /* a kernel the source declares and the header defines is read once */
    for (size_t i = 0; st == CUJIT_OK && i < sc.nks; i++) {
      size_t j = 0;
      while (j < scan->count && !(strcmp(scan->kernels[j].sig.name, sc.ks[i].sig.name) == 0 &&
                                  same_params(&scan->kernels[j].sig, &sc.ks[i].sig)))
        j++;
      if (j < scan->count)
        cj_signature_free(&sc.ks[i].sig), free(sc.ks[i].scope), free(sc.ks[i].params);
      else
        sc.ks[kept++] = sc.ks[i];
    }
    if (st == CUJIT_OK) sc.nks = kept; /* else every kernel read is freed below */
    if (st == CUJIT_OK &&
        append((void **)&scan->kernels, &scan->count, sc.ks, sc.nks, sizeof *sc.ks))
      sc.nks = 0; /* moved */
    if (st == CUJIT_OK &&
        append((void **)&scan->tmpls, &scan->ntmpls, sc.tm, sc.ntm, sizeof *sc.tm))
      sc.ntm = 0;
    size_t ntd = scan->ntd;
    if (st == CUJIT_OK &&
        append((void **)&scan->td_names, &ntd, sc.td_names, sc.ntd, sizeof(char *))) {
      if (append((void **)&scan->td_types, &scan->ntd, sc.td_types, sc.ntd, sizeof(char *)))
        sc.ntd = 0; /* both moved; else the names array is longer than ntd says, harmlessly */
    }
    if (st == CUJIT_OK && (sc.nks || sc.ntm || sc.ntd)) st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    scan->templates += sc.templates, scan->mangled += sc.mangled;
    cj_scan rest = {0}; /* what was not moved */
    rest.kernels = sc.ks, rest.count = sc.nks, rest.tmpls = sc.tm, rest.ntmpls = sc.ntm;
    rest.td_names = sc.td_names, rest.td_types = sc.td_types, rest.ntd = sc.ntd;
    cj_scan_free(&rest);
  }
  /* The source's kernels again, with the headers' typedefs: `uint *` from a shared header. */
  for (size_t i = 0; st == CUJIT_OK && scan->ntd && i < first; i++) {
    cj_signature again;
    cj_scan_kernel *k = &scan->kernels[i];
    if (k->params && cj_scan_read_params(scan, k->sig.name, k->params, &again, NULL, 0) == CUJIT_OK)
      cj_signature_free(&k->sig), k->sig = again;
  }
  if (st == CUJIT_OK && scan->count > first &&
      !cj_unit_add_checks(&scan->text, scan->kernels, first, scan->count))
    st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY) snprintf(err, err_len, "out of memory reading headers");
  return st;
}
