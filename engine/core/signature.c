/*
** signature.c -- reads kernel signatures ("saxpy(float a, const float *x, int n)") into typed
** parameters with their launch buffer layout, and finds the extern "C" __global__ kernels of a
** whole translation unit.
*/
#include "signature.h"
#include "base.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the types cujit can size ------------------------------------------------------------------
 */

typedef struct type_desc {
  const char *spelling; /* normalised */
  cujit_dtype dtype;
  size_t size, align;
} type_desc;

static const type_desc named_types[] = {
    {"bool", CUJIT_U8, 1, 1},
    {"float", CUJIT_F32, 4, 4},
    {"double", CUJIT_F64, 8, 8},
    {"size_t", CUJIT_U64, 8, 8},
    {"ptrdiff_t", CUJIT_I64, 8, 8},
    {"int8_t", CUJIT_I8, 1, 1},
    {"int16_t", CUJIT_I16, 2, 2},
    {"int32_t", CUJIT_I32, 4, 4},
    {"int64_t", CUJIT_I64, 8, 8},
    {"uint8_t", CUJIT_U8, 1, 1},
    {"uint16_t", CUJIT_U16, 2, 2},
    {"uint32_t", CUJIT_U32, 4, 4},
    {"uint64_t", CUJIT_U64, 8, 8},
    {"__half", CUJIT_F16, 2, 2},
    {"__half2", CUJIT_DTYPE_NONE, 4, 4},
    {"void", CUJIT_DTYPE_NONE, 0, 1},
};

/* The integer types spelled with several keywords, once normalised. */
static const type_desc integer_types[] = {
    {"char", CUJIT_I8, 1, 1},
    {"signed char", CUJIT_I8, 1, 1},
    {"unsigned char", CUJIT_U8, 1, 1},
    {"short", CUJIT_I16, 2, 2},
    {"unsigned short", CUJIT_U16, 2, 2},
    {"int", CUJIT_I32, 4, 4},
    {"unsigned int", CUJIT_U32, 4, 4},
    {"long", CUJIT_I64, 8, 8},
    {"unsigned long", CUJIT_U64, 8, 8},
    {"long long", CUJIT_I64, 8, 8},
    {"unsigned long long", CUJIT_U64, 8, 8},
};

/* CUDA's vector types (vector_types.h): name prefix and element size. */
static const struct {
  const char *prefix;
  size_t elem;
} vector_bases[] = {
    {"char", 1}, {"uchar", 1}, {"short", 2},    {"ushort", 2},    {"int", 4},   {"uint", 4},
    {"long", 8}, {"ulong", 8}, {"longlong", 8}, {"ulonglong", 8}, {"float", 4}, {"double", 8},
};

static const char *const reserved_words[] = {
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "char8_t",
    "class",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "_Bool",
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__restrict__",
    "__restrict",
    "__forceinline__",
    "__noinline__",
    "__launch_bounds__",
    "__grid_constant__",
    NULL,
};

/* Names the body would lose if a parameter shadowed them. */
static const char *const builtin_variables[] = {"threadIdx", "blockIdx", "blockDim",
                                                "gridDim",   "warpSize", NULL};

static int in_list(const char *const *list, const char *s, size_t n) {
  for (; *list; list++)
    if (strlen(*list) == n && memcmp(*list, s, n) == 0) return 1;
  return 0;
}

static int is_qualifier(const char *s, size_t n) {
  static const char *const q[] = {"const",    "volatile",   "__restrict__",
                                  "restrict", "__restrict", NULL};
  return in_list(q, s, n);
}

static int is_restrict(const char *s, size_t n) {
  return is_qualifier(s, n) && s[0] != 'c' && s[0] != 'v';
}

static int is_integer_word(const char *s, size_t n) {
  static const char *const w[] = {"signed", "unsigned", "char", "short", "int", "long", NULL};
  return in_list(w, s, n);
}

/* T, U, T2: one upper-case letter, then digits. */
static int is_type_var_name(const char *s, size_t n) {
  if (n == 0 || !isupper((unsigned char)s[0])) return 0;
  for (size_t i = 1; i < n; i++)
    if (!isdigit((unsigned char)s[i])) return 0;
  return 1;
}

static int vector_type(const char *s, size_t n, type_desc *out) {
  for (size_t i = 0; i < sizeof vector_bases / sizeof *vector_bases; i++) {
    size_t pl = strlen(vector_bases[i].prefix);
    if (n <= pl || memcmp(s, vector_bases[i].prefix, pl) != 0) continue;
    const char *rest = s + pl;
    size_t rn = n - pl, e = vector_bases[i].elem;
    if (rn == 1 && rest[0] >= '1' && rest[0] <= '4') {
      size_t k = (size_t)(rest[0] - '0');
      out->size = k * e;
      out->align = k == 3 ? e : (k * e > 16 ? 16 : k * e);
    } else if (rn == 5 && e == 8 && memcmp(rest, "4_16a", 5) == 0) {
      out->size = 32, out->align = 16;
    } else if (rn == 5 && e == 8 && memcmp(rest, "4_32a", 5) == 0) {
      out->size = 32, out->align = 32;
    } else {
      continue;
    }
    out->spelling = NULL;
    out->dtype = CUJIT_DTYPE_NONE;
    return 1;
  }
  return 0;
}

/* A type named by one word: bool, float4, uint32_t, half, ... */
static int named_type(const char *s, size_t n, type_desc *out) {
  if (n == 4 && memcmp(s, "half", 4) == 0)
    s = "__half", n = 6;
  else if (n == 5 && memcmp(s, "half2", 5) == 0)
    s = "__half2", n = 7;
  for (size_t i = 0; i < sizeof named_types / sizeof *named_types; i++)
    if (strlen(named_types[i].spelling) == n && memcmp(named_types[i].spelling, s, n) == 0) {
      *out = named_types[i];
      return 1;
    }
  return vector_type(s, n, out);
}

static int is_type_name(const char *s, size_t n) {
  type_desc d;
  return named_type(s, n, &d) || is_integer_word(s, n);
}

/* --- tokens ------------------------------------------------------------------------------------
 */

enum { TK_END, TK_IDENT, TK_NUMBER, TK_PUNCT, TK_STRING };

typedef struct token {
  int kind;
  size_t pos, len; /* in the text */
} token;

static int ident_start(int c) {
  return isalpha(c) || c == '_';
}

static int ident_char(int c) {
  return isalnum(c) || c == '_';
}

/* The token at text[*pos], stopping at end. */
static token next_token(const char *text, size_t *pos, size_t end) {
  size_t i = *pos;
  while (i < end && isspace((unsigned char)text[i])) i++;
  token t = {TK_END, i, 0};
  if (i >= end) {
    *pos = i;
    return t;
  }
  unsigned char c = (unsigned char)text[i];
  size_t j = i + 1;
  if (ident_start(c) || isdigit(c)) {
    while (j < end && ident_char((unsigned char)text[j])) j++;
    t.kind = isdigit(c) ? TK_NUMBER : TK_IDENT;
  } else if (c == '"') {
    while (j < end && text[j] != '"') j++;
    if (j < end) j++;
    t.kind = TK_STRING;
  } else {
    if (c == ':' && j < end && text[j] == ':')
      j++;
    else if (c == '.' && j + 1 < end && text[j] == '.' && text[j + 1] == '.')
      j += 2;
    t.kind = TK_PUNCT;
  }
  t.len = j - i;
  *pos = j;
  return t;
}

static int tok_is(const char *text, token t, const char *s) {
  return t.kind != TK_END && strlen(s) == t.len && memcmp(text + t.pos, s, t.len) == 0;
}

/* --- errors ------------------------------------------------------------------------------------
 */

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

/* --- one parameter -----------------------------------------------------------------------------
 */

#define MAX_PARAM_TOKENS 32

typedef struct param_text {
  token tok[MAX_PARAM_TOKENS];
  int n;
  size_t start, end;
} param_text;

static cujit_status tokenize_param(parser *p, param_text *pt) {
  size_t pos = pt->start;
  pt->n = 0;
  for (;;) {
    token t = next_token(p->text, &pos, pt->end);
    if (t.kind == TK_END) return CUJIT_OK;
    const char *s = p->text + t.pos;
    if (t.kind == TK_NUMBER)
      return sig_error(p, t.pos, "'%.*s' is not a C identifier", (int)t.len, s);
    if (t.kind == TK_STRING) return sig_error(p, t.pos, "unexpected string in a parameter");
    if (t.kind == TK_PUNCT && *s != '*') {
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
    if (pt->n == MAX_PARAM_TOKENS)
      return sig_error(p, t.pos, "this parameter is too long to be a type and a name");
    pt->tok[pt->n++] = t;
  }
}

/* Appends a word to a normalised type spelling, one space between words. */
static void type_add(char *buf, size_t len, const char *s, size_t n) {
  size_t used = strlen(buf);
  snprintf(buf + used, len - used, "%s%.*s", used ? " " : "", (int)n, s);
}

/* Reads the base type words (all qualifiers already removed). */
static cujit_status base_type(parser *p, const param_text *pt, const int *words, int nwords,
                              const char *pname, type_desc *out, int *is_tvar) {
  *is_tvar = 0;
  const char *text = p->text;
  token first = pt->tok[words[0]];
  if (nwords == 1 && named_type(text + first.pos, first.len, out)) return CUJIT_OK;
  if (nwords == 1 && !p->lenient && is_type_var_name(text + first.pos, first.len)) {
    *is_tvar = 1;
    out->spelling = NULL, out->dtype = CUJIT_DTYPE_NONE, out->size = 0, out->align = 1;
    return CUJIT_OK;
  }
  int counts[6] = {0}; /* signed unsigned char short int long */
  static const char *const names[] = {"signed", "unsigned", "char", "short", "int", "long"};
  int all_integer = 1;
  for (int i = 0; i < nwords && all_integer; i++) {
    token t = pt->tok[words[i]];
    all_integer = 0;
    for (int k = 0; k < 6; k++)
      if (tok_is(text, t, names[k])) counts[k]++, all_integer = 1;
  }
  size_t from = first.pos, to = pt->tok[words[nwords - 1]].pos + pt->tok[words[nwords - 1]].len;
  if (!all_integer) {
    token second = pt->tok[words[1 < nwords ? 1 : 0]];
    if (nwords > 1 && is_type_name(text + first.pos, first.len) &&
        !is_integer_word(text + second.pos, second.len))
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
  for (size_t i = 0; i < sizeof integer_types / sizeof *integer_types; i++)
    if (strcmp(integer_types[i].spelling, spelling) == 0) *out = integer_types[i];
  return CUJIT_OK;
}

static int add_type_var(cj_signature *sig, const char *s, size_t n) {
  for (size_t i = 0; i < sig->ntype_vars; i++)
    if (strlen(sig->type_vars[i]) == n && memcmp(sig->type_vars[i], s, n) == 0) return (int)i;
  if (sig->ntype_vars == CJ_MAX_TYPE_VARS) return -2;
  if (!(sig->type_vars[sig->ntype_vars] = cj_strndup(s, n))) return -3;
  return (int)sig->ntype_vars++;
}

/* Which token is the parameter's name, or -1 (with an error made) when it has none. */
static int find_name(parser *p, const param_text *pt, size_t index) {
  const char *text = p->text;
  token last = pt->tok[pt->n - 1];
  const char *ls = text + last.pos;
  int nstars = 0;
  for (int i = 0; i < pt->n; i++) nstars += tok_is(text, pt->tok[i], "*");
  int others = 0; /* non-qualifier words before the last token */
  for (int i = 0; i + 1 < pt->n; i++)
    if (pt->tok[i].kind == TK_IDENT && !is_qualifier(text + pt->tok[i].pos, pt->tok[i].len))
      others++;
  size_t at = pt->tok[0].pos;
  size_t tlen = last.pos + last.len - at;
  if (last.kind != TK_IDENT || is_qualifier(ls, last.len)) {
    sig_error(p, last.pos + last.len, "parameter %zu ('%.*s') has no name: write it as 'type name'",
              index + 1, (int)tlen, text + at);
    return -1;
  }
  int type_like = is_type_name(ls, last.len) || in_list(reserved_words, ls, last.len) ||
                  (!p->lenient && is_type_var_name(ls, last.len));
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
  if (is_integer_word(ls, last.len) && nstars == 0) {
    int all_int = 1;
    for (int i = 0; i + 1 < pt->n; i++) {
      token t = pt->tok[i];
      if (!is_integer_word(text + t.pos, t.len) && !is_qualifier(text + t.pos, t.len)) all_int = 0;
    }
    if (all_int) {
      sig_error(p, last.pos + last.len,
                "parameter %zu ('%.*s') has no name: write it as 'type name'", index + 1, (int)tlen,
                text + at);
      return -1;
    }
  }
  if (in_list(reserved_words, ls, last.len)) {
    sig_error(p, last.pos, "'%.*s' is a reserved word and cannot name a parameter", (int)last.len,
              ls);
    return -1;
  }
  if (is_type_name(ls, last.len)) {
    sig_error(p, last.pos, "'%.*s' is a type and cannot name a parameter", (int)last.len, ls);
    return -1;
  }
  if (in_list(builtin_variables, ls, last.len)) {
    sig_error(p, last.pos,
              "'%.*s' is a CUDA built-in variable; a parameter of that name would hide it",
              (int)last.len, ls);
    return -1;
  }
  return pt->n - 1;
}

static cujit_status parse_param(parser *p, param_text *pt, size_t index, cj_signature *sig,
                                cj_param *out) {
  const char *text = p->text;
  cujit_status st = tokenize_param(p, pt);
  if (st != CUJIT_OK) return st;
  int name_tok = find_name(p, pt, index);
  if (name_tok < 0) return CUJIT_ERROR_SIGNATURE;
  token nt = pt->tok[name_tok];
  char pname[128];
  snprintf(pname, sizeof pname, "%.*s", (int)nt.len, text + nt.pos);

  /* Base: words before the first star; qualifiers there apply to what is pointed at. */
  int words[MAX_PARAM_TOKENS], nwords = 0, base_const = 0, base_volatile = 0, i = 0;
  for (; i < name_tok && !tok_is(text, pt->tok[i], "*"); i++) {
    token t = pt->tok[i];
    if (tok_is(text, t, "const"))
      base_const = 1;
    else if (tok_is(text, t, "volatile"))
      base_volatile = 1;
    else if (is_restrict(text + t.pos, t.len))
      return sig_error(p, t.pos, "'%.*s' applies to pointers: write 'T *%.*s %s'", (int)t.len,
                       text + t.pos, (int)t.len, text + t.pos, pname);
    else
      words[nwords++] = i;
  }
  if (nwords == 0) return sig_error(p, pt->tok[0].pos, "parameter '%s' has no type", pname);
  type_desc base;
  int is_tvar;
  st = base_type(p, pt, words, nwords, pname, &base, &is_tvar);
  if (st != CUJIT_OK) return st;

  /* The pointer part: stars, each followed by its own qualifiers. */
  char type[160] = "";
  if (base_const) type_add(type, sizeof type, "const", 5);
  if (base_volatile) type_add(type, sizeof type, "volatile", 8);
  token w0 = pt->tok[words[0]];
  if (is_tvar)
    type_add(type, sizeof type, text + w0.pos, w0.len);
  else
    type_add(type, sizeof type, base.spelling ? base.spelling : text + w0.pos,
             base.spelling ? strlen(base.spelling) : w0.len);
  int stars = 0;
  for (; i < name_tok; i++) {
    token t = pt->tok[i];
    size_t used = strlen(type);
    if (tok_is(text, t, "*")) {
      stars++;
      snprintf(type + used, sizeof type - used, "%s*", type[used - 1] == '*' ? "" : " ");
    } else if (is_qualifier(text + t.pos, t.len)) {
      const char *q = is_restrict(text + t.pos, t.len) ? "__restrict__" : NULL;
      snprintf(type + used, sizeof type - used, "%s%.*s", type[used - 1] == '*' ? "" : " ",
               q ? (int)strlen(q) : (int)t.len, q ? q : text + t.pos);
    } else {
      return sig_error(p, t.pos, "unexpected '%.*s' in parameter '%s': a parameter is 'type name'",
                       (int)t.len, text + t.pos, pname);
    }
  }
  if (stars == 0 && base.size == 0 && !is_tvar && base.spelling &&
      strcmp(base.spelling, "void") == 0)
    return sig_error(p, w0.pos, "parameter '%s' has type void; only 'void *' can be passed", pname);

  memset(out, 0, sizeof *out);
  out->type_var = -1;
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
  out->size = stars ? 8 : base.size;
  out->align = stars ? 8 : base.align;
  out->name = cj_strdup(pname);
  out->type = cj_strdup(type);
  if (!out->name || !out->type) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  return CUJIT_OK;
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
  while (ns > s && ident_char((unsigned char)p->text[ns - 1])) ns--;
  char name[32];
  if (ns < e && ns > s && ident_start((unsigned char)p->text[ns])) {
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
  return out->name && out->type ? CUJIT_OK : CUJIT_ERROR_OUT_OF_HOST_MEMORY;
}

/* --- whole signatures --------------------------------------------------------------------------
 */

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
                     "the parameters take %zu bytes; kernels take at most %d: pass big data "
                     "through a pointer",
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
      return sig_error(p, start, "more than %d parameters", CJ_MAX_PARAMS);
    if (sig->nparams == cap) {
      cj_param *np = realloc(sig->params, 2 * cap * sizeof *np);
      if (!np) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      memset(np + cap, 0, cap * sizeof *np);
      sig->params = np, cap *= 2;
    }
    param_text pt = {.start = start, .end = i};
    cj_param *pr = &sig->params[sig->nparams];
    cujit_status st = parse_param(p, &pt, sig->nparams, sig, pr);
    if (st == CUJIT_ERROR_SIGNATURE && p->lenient) {
      free(pr->name), free(pr->type);
      st = opaque_param(p, &pt, sig->nparams, pr);
    }
    sig->nparams++; /* counted even on failure, so cj_signature_free frees it */
    if (st != CUJIT_OK) return st;
    for (size_t k = 0; k + 1 < sig->nparams; k++)
      if (strcmp(sig->params[k].name, pr->name) == 0 && !p->lenient) {
        size_t at = start;
        while (at < i && !(strncmp(text + at, pr->name, strlen(pr->name)) == 0 &&
                           !ident_char((unsigned char)text[at + strlen(pr->name)]) &&
                           (at == start || !ident_char((unsigned char)text[at - 1]))))
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
  token name = next_token(text, &pos, len);
  if (name.kind == TK_END) return sig_error(p, 0, "empty signature: write 'name(type a, ...)'");
  if (tok_is(text, name, "(")) return sig_error(p, name.pos, "missing kernel name before '('");
  if (name.kind == TK_NUMBER)
    return sig_error(p, name.pos, "'%.*s' is not a C identifier", (int)name.len, text + name.pos);
  if (name.kind != TK_IDENT)
    return sig_error(p, name.pos, "expected the kernel name, found '%.*s'", (int)name.len,
                     text + name.pos);
  if (in_list(reserved_words, text + name.pos, name.len) || is_type_name(text + name.pos, name.len))
    return sig_error(p, name.pos, "'%.*s' is a reserved word and cannot name a kernel",
                     (int)name.len, text + name.pos);
  token open = next_token(text, &pos, len);
  if (open.kind == TK_END)
    return sig_error(p, open.pos, "missing '(' after the kernel name '%.*s'", (int)name.len,
                     text + name.pos);
  if (!tok_is(text, open, "("))
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
  token junk = next_token(text, &after, len);
  if (junk.kind != TK_END)
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

void cj_signature_free(cj_signature *sig) {
  if (!sig) return;
  for (size_t i = 0; i < sig->nparams; i++) free(sig->params[i].name), free(sig->params[i].type);
  free(sig->params);
  for (size_t i = 0; i < sig->ntype_vars; i++) free(sig->type_vars[i]);
  free(sig->name);
  memset(sig, 0, sizeof *sig);
}

cujit_status cj_signature_copy(const cj_signature *sig, cj_signature *out) {
  memset(out, 0, sizeof *out);
  *out = *sig;
  out->name = NULL, out->params = NULL, out->nparams = 0, out->ntype_vars = 0;
  if (!(out->name = cj_strdup(sig->name))) goto oom;
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

/* "const T *" with T bound to "float" gives "const float *". */
static char *replace_word(const char *type, const char *word, const char *with) {
  cj_buf b = {0};
  size_t wl = strlen(word);
  for (const char *s = type; *s;) {
    if (ident_start((unsigned char)*s)) {
      const char *e = s;
      while (ident_char((unsigned char)*e)) e++;
      if ((size_t)(e - s) == wl && memcmp(s, word, wl) == 0)
        cj_buf_puts(&b, with);
      else
        cj_buf_add(&b, s, (size_t)(e - s));
      s = e;
    } else {
      cj_buf_add(&b, s++, 1);
    }
  }
  if (b.failed || !b.data) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
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
  if (cj_signature_copy(generic, out) != CUJIT_OK) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  out->specialized = 1;
  for (size_t i = 0; i < ntypes; i++) out->bound[i] = types[i];
  size_t off = 0;
  for (size_t i = 0; i < out->nparams; i++) {
    cj_param *pr = &out->params[i];
    if (pr->type_var >= 0) {
      cujit_dtype d = types[pr->type_var];
      char *t = replace_word(pr->type, out->type_vars[pr->type_var], cujit_dtype_ctype(d));
      if (!t) {
        cj_signature_free(out);
        return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      }
      free(pr->type);
      pr->type = t;
      pr->dtype = pr->kind == CUJIT_PARAM_POINTER && strstr(t, "**") ? CUJIT_DTYPE_NONE : d;
      if (pr->kind == CUJIT_PARAM_SCALAR) pr->size = pr->align = cujit_dtype_size(d);
    }
    off = align_up(off, pr->align);
    pr->offset = off;
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
}

char *cj_signature_format(const cj_signature *sig) {
  if (!sig || !sig->name) return NULL;
  cj_buf b = {0};
  cj_buf_printf(&b, "%s(", sig->name);
  for (size_t i = 0; i < sig->nparams; i++) {
    const char *t = sig->params[i].type;
    size_t tl = strlen(t);
    cj_buf_printf(&b, "%s%s%s%s", i ? ", " : "", t, tl && t[tl - 1] == '*' ? "" : " ",
                  sig->params[i].name);
  }
  cj_buf_puts(&b, ")");
  if (b.failed) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* --- translation units -------------------------------------------------------------------------
 */

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
          s[i++] = ' ';
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
               (i == 0 || !ident_char((unsigned char)s[i - 1]))) {
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

typedef struct scanner {
  const char *text; /* blanked */
  token *stmt;
  size_t nstmt, cap;
  char scope[256]; /* 'E' extern "C" block, 'N' namespace, 'O' anything else */
  int depth;
  cj_signature *sigs;
  size_t nsigs, sigcap;
  int templates; /* template kernels skipped, for the message when none is left */
  int mangled;   /* __global__ kernels without extern "C" */
} scanner;

static int scope_open(const scanner *sc) {
  for (int i = 0; i < sc->depth && i < (int)sizeof sc->scope; i++)
    if (sc->scope[i] == 'O') return 0;
  return 1;
}

static int scope_extern_c(const scanner *sc) {
  for (int i = 0; i < sc->depth && i < (int)sizeof sc->scope; i++)
    if (sc->scope[i] == 'E') return 1;
  return 0;
}

static int stmt_is(const scanner *sc, size_t i, const char *s) {
  return i < sc->nstmt && tok_is(sc->text, sc->stmt[i], s);
}

static int is_attribute(const char *s, size_t n) {
  static const char *const a[] = {
      "__launch_bounds__", "__maxnreg__", "__cluster_dims__",  "__attribute__", "__declspec",
      "alignas",           "__align__",   "__builtin_align__", "decltype",      NULL};
  return in_list(a, s, n);
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

static cujit_status add_kernel(scanner *sc, size_t name_i, size_t open_i, size_t close_i) {
  token nt = sc->stmt[name_i];
  for (size_t k = 0; k < sc->nsigs; k++)
    if (strlen(sc->sigs[k].name) == nt.len &&
        memcmp(sc->sigs[k].name, sc->text + nt.pos, nt.len) == 0)
      return CUJIT_OK; /* a declaration and its definition */
  size_t ps = sc->stmt[open_i].pos + 1, pe = sc->stmt[close_i].pos;
  cj_buf b = {0};
  cj_buf_add(&b, sc->text + nt.pos, nt.len);
  cj_buf_puts(&b, "(");
  cj_buf_add(&b, sc->text + ps, pe - ps);
  cj_buf_puts(&b, ")");
  if (b.failed) {
    cj_buf_free(&b);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  if (sc->nsigs == sc->sigcap) {
    size_t cap = sc->sigcap ? 2 * sc->sigcap : 8;
    cj_signature *ns = realloc(sc->sigs, cap * sizeof *ns);
    if (!ns) {
      cj_buf_free(&b);
      return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
    sc->sigs = ns, sc->sigcap = cap;
  }
  cj_signature *sig = &sc->sigs[sc->nsigs];
  memset(sig, 0, sizeof *sig);
  parser p = {b.data, NULL, 0, 1};
  cujit_status st = parse_signature(&p, sig);
  if (st == CUJIT_ERROR_SIGNATURE) {
    /* Only limits get here (too many parameters or bytes): keep the kernel, with no layout. */
    st = sig->name ? CUJIT_OK : CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  cj_buf_free(&b);
  if (st != CUJIT_OK) {
    cj_signature_free(sig);
    return st;
  }
  sc->nsigs++;
  return CUJIT_OK;
}

/* A declaration or definition at namespace scope: is it an extern "C" __global__ kernel? */
static cujit_status consider(scanner *sc) {
  int global = 0, extern_c = scope_extern_c(sc), templ = 0;
  for (size_t i = 0; i < sc->nstmt; i++) {
    if (stmt_is(sc, i, "__global__"))
      global = 1;
    else if (stmt_is(sc, i, "template"))
      templ = 1;
    else if (stmt_is(sc, i, "extern") && stmt_is(sc, i + 1, "\"C\""))
      extern_c = 1;
  }
  if (!global) return CUJIT_OK;
  if (templ) return sc->templates++, CUJIT_OK;
  if (!extern_c) return sc->mangled++, CUJIT_OK;
  for (size_t i = 0; i < sc->nstmt; i++) {
    token t = sc->stmt[i];
    if (stmt_is(sc, i, "[") && stmt_is(sc, i + 1, "[")) {
      while (i < sc->nstmt && !(stmt_is(sc, i, "]") && stmt_is(sc, i + 1, "]"))) i++;
      i++;
      continue;
    }
    if (t.kind != TK_IDENT || !stmt_is(sc, i + 1, "(")) continue;
    size_t close = matching_paren(sc, i + 1);
    if (close >= sc->nstmt) return CUJIT_OK;
    if (is_attribute(sc->text + t.pos, t.len)) {
      i = close;
      continue;
    }
    return add_kernel(sc, i, i + 1, close);
  }
  return CUJIT_OK;
}

static char brace_kind(const scanner *sc) {
  if (sc->nstmt == 2 && stmt_is(sc, 0, "extern") && stmt_is(sc, 1, "\"C\"")) return 'E';
  if (sc->nstmt >= 1 && stmt_is(sc, 0, "namespace")) return 'N';
  if (sc->nstmt >= 2 && stmt_is(sc, 0, "inline") && stmt_is(sc, 1, "namespace")) return 'N';
  return 'O';
}

static cujit_status scan_tokens(scanner *sc) {
  size_t len = strlen(sc->text), pos = 0;
  int parens = 0;
  for (;;) {
    token t = next_token(sc->text, &pos, len);
    if (t.kind == TK_END) return CUJIT_OK;
    const char *s = sc->text + t.pos;
    int punct = t.kind == TK_PUNCT && t.len == 1;
    if (punct && *s == '(') parens++;
    if (punct && *s == ')' && parens > 0) parens--;
    if (parens == 0 && punct && (*s == '{' || *s == ';' || *s == '}')) {
      cujit_status st = CUJIT_OK;
      if (*s != '}' && scope_open(sc)) st = consider(sc);
      if (st != CUJIT_OK) return st;
      if (*s == '{') {
        if (sc->depth < (int)sizeof sc->scope) sc->scope[sc->depth] = brace_kind(sc);
        sc->depth++;
      } else if (*s == '}' && sc->depth > 0) {
        sc->depth--;
      }
      sc->nstmt = 0;
      continue;
    }
    if (!scope_open(sc)) continue; /* inside a function body or a class: not needed */
    if (sc->nstmt == sc->cap) {
      size_t cap = sc->cap ? 2 * sc->cap : 64;
      token *nt = realloc(sc->stmt, cap * sizeof *nt);
      if (!nt) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      sc->stmt = nt, sc->cap = cap;
    }
    sc->stmt[sc->nstmt++] = t;
  }
}

cujit_status cj_signature_scan(const char *source, cj_signature **out, size_t *count, char *err,
                               size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!out || !count) return CUJIT_ERROR_INVALID_ARGUMENT;
  *out = NULL, *count = 0;
  if (!source) return CUJIT_ERROR_INVALID_ARGUMENT;
  scanner sc;
  memset(&sc, 0, sizeof sc);
  char *blank = blank_source(source);
  if (!blank) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  sc.text = blank;
  cujit_status st = scan_tokens(&sc);
  free(sc.stmt);
  free(blank);
  if (st != CUJIT_OK) {
    for (size_t i = 0; i < sc.nsigs; i++) cj_signature_free(&sc.sigs[i]);
    free(sc.sigs);
    if (err && err_len) snprintf(err, err_len, "out of memory reading the kernels of the source");
    return st;
  }
  if (sc.nsigs == 0) {
    free(sc.sigs);
    if (err && err_len)
      snprintf(err, err_len,
               "no extern \"C\" __global__ kernel in the source%s; cujit finds kernels by their C "
               "name: write them as extern \"C\" __global__ void name(...)",
               sc.templates ? " (template kernels cannot be launched by name)"
               : sc.mangled ? " (a __global__ function without extern \"C\" has a mangled name)"
                            : "");
    return CUJIT_ERROR_NOT_FOUND;
  }
  *out = sc.sigs;
  *count = sc.nsigs;
  return CUJIT_OK;
}
