/*
** lexicon.c -- the C words cujit reads: one tokenizer for signatures, translation units and
** elementwise parameter lists; the types cujit can size (scalars, CUDA's vector types, __half,
** __nv_bfloat16); the reserved words; and the one rule for type variables.
*/
#include "lexicon.h"
#include "base/base.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const cj_type_desc named_types[] = {
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
    /* The standard typedefs, as CUDA's 64-bit targets and x86-64 Linux (LP64) both size them,
    ** spelled by their own name so that the kernel's checks in the translation unit name the
    ** type the source declared (NVRTC's libcu++ makes intptr_t a long long, glibc a long). Not
    ** here: int_fast16_t and int_fast32_t, 2 and 4 bytes under NVRTC's libcu++ but 8 under glibc,
    ** so no one size is right on both devices: on a GPU the PTX sizes them. */
    {"clock_t", CUJIT_I64, 8, 8},
    {"time_t", CUJIT_I64, 8, 8},
    {"ssize_t", CUJIT_I64, 8, 8},
    {"intptr_t", CUJIT_I64, 8, 8},
    {"uintptr_t", CUJIT_U64, 8, 8},
    {"intmax_t", CUJIT_I64, 8, 8},
    {"uintmax_t", CUJIT_U64, 8, 8},
    {"int_least8_t", CUJIT_I8, 1, 1},
    {"int_least16_t", CUJIT_I16, 2, 2},
    {"int_least32_t", CUJIT_I32, 4, 4},
    {"int_least64_t", CUJIT_I64, 8, 8},
    {"uint_least8_t", CUJIT_U8, 1, 1},
    {"uint_least16_t", CUJIT_U16, 2, 2},
    {"uint_least32_t", CUJIT_U32, 4, 4},
    {"uint_least64_t", CUJIT_U64, 8, 8},
    {"int_fast8_t", CUJIT_I8, 1, 1},
    {"int_fast64_t", CUJIT_I64, 8, 8},
    {"uint_fast8_t", CUJIT_U8, 1, 1},
    {"uint_fast64_t", CUJIT_U64, 8, 8},
    {"__half", CUJIT_F16, 2, 2},
    {"__half2", CUJIT_DTYPE_NONE, 4, 4},
    {"__nv_bfloat16", CUJIT_BF16, 2, 2},
    {"__nv_bfloat162", CUJIT_DTYPE_NONE, 4, 4},
    {"void", CUJIT_DTYPE_NONE, 0, 1},
};

/* The short names of sys/types.h and CUDA code, written as the integer type they name so that a
** kernel's checks compile with or without their typedef (which NVRTC does not have). */
static const struct {
  const char *name, *integer;
} short_names[] = {
    {"uint", "unsigned int"},   {"ushort", "unsigned short"}, {"uchar", "unsigned char"},
    {"ulong", "unsigned long"}, {"longlong", "long long"},    {"ulonglong", "unsigned long long"},
};

/* The integer types spelled with several keywords, once normalised. */
static const cj_type_desc integer_types[] = {
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

/* In strcmp order (cj_is_reserved_word searches it by halves). */
static const char *const reserved_words[] = {"_Bool",        "__constant__",
                                             "__device__",   "__forceinline__",
                                             "__global__",   "__grid_constant__",
                                             "__host__",     "__launch_bounds__",
                                             "__managed__",  "__noinline__",
                                             "__restrict",   "__restrict__",
                                             "__shared__",   "alignas",
                                             "alignof",      "and",
                                             "asm",          "auto",
                                             "bool",         "break",
                                             "case",         "catch",
                                             "char",         "char16_t",
                                             "char32_t",     "char8_t",
                                             "class",        "const",
                                             "const_cast",   "consteval",
                                             "constexpr",    "constinit",
                                             "continue",     "decltype",
                                             "default",      "delete",
                                             "do",           "double",
                                             "dynamic_cast", "else",
                                             "enum",         "explicit",
                                             "export",       "extern",
                                             "false",        "float",
                                             "for",          "friend",
                                             "goto",         "if",
                                             "inline",       "int",
                                             "long",         "mutable",
                                             "namespace",    "new",
                                             "noexcept",     "not",
                                             "nullptr",      "operator",
                                             "or",           "private",
                                             "protected",    "public",
                                             "register",     "reinterpret_cast",
                                             "requires",     "restrict",
                                             "return",       "short",
                                             "signed",       "sizeof",
                                             "static",       "static_assert",
                                             "static_cast",  "struct",
                                             "switch",       "template",
                                             "this",         "thread_local",
                                             "throw",        "true",
                                             "try",          "typedef",
                                             "typeid",       "typename",
                                             "union",        "unsigned",
                                             "using",        "virtual",
                                             "void",         "volatile",
                                             "wchar_t",      "while"};

int cj_in_list(const char *const *list, const char *s, size_t n) {
  for (; *list; list++) /* stops at the first differing byte: no strlen of every word */
    if ((*list)[0] == s[0] && strncmp(*list, s, n) == 0 && (*list)[n] == '\0') return 1;
  return 0;
}

int cj_is_qualifier(const char *s, size_t n) {
  static const char *const q[] = {"const",    "volatile",   "__restrict__",
                                  "restrict", "__restrict", NULL};
  return cj_in_list(q, s, n);
}

int cj_is_restrict(const char *s, size_t n) {
  return cj_is_qualifier(s, n) && s[0] != 'c' && s[0] != 'v';
}

int cj_is_integer_word(const char *s, size_t n) {
  static const char *const w[] = {"signed", "unsigned", "char", "short", "int", "long", NULL};
  return cj_in_list(w, s, n);
}

/* T, U, T2: one upper-case letter, then digits. */
int cj_is_type_var_name(const char *s, size_t n) {
  if (n == 0 || !isupper((unsigned char)s[0])) return 0;
  for (size_t i = 1; i < n; i++)
    if (!isdigit((unsigned char)s[i])) return 0;
  return 1;
}

static int vector_type(const char *s, size_t n, cj_type_desc *out) {
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

/* A type named by one word: bool, float4, uint32_t, half (as __half), nv_bfloat16 (as
** __nv_bfloat16), ... */
int cj_named_type(const char *s, size_t n, cj_type_desc *out) {
  if (n == 4 && memcmp(s, "half", 4) == 0)
    s = "__half", n = 6;
  else if (n == 5 && memcmp(s, "half2", 5) == 0)
    s = "__half2", n = 7;
  else if (n == 11 && memcmp(s, "nv_bfloat16", 11) == 0)
    s = "__nv_bfloat16", n = 13;
  else if (n == 12 && memcmp(s, "nv_bfloat162", 12) == 0)
    s = "__nv_bfloat162", n = 14;
  for (size_t i = 0; i < sizeof named_types / sizeof *named_types; i++)
    if (named_types[i].spelling[0] == s[0] && strncmp(named_types[i].spelling, s, n) == 0 &&
        named_types[i].spelling[n] == '\0') {
      *out = named_types[i];
      return 1;
    }
  for (size_t i = 0; i < sizeof short_names / sizeof *short_names; i++)
    if (strlen(short_names[i].name) == n && memcmp(short_names[i].name, s, n) == 0)
      return cj_integer_type(short_names[i].integer, out);
  return vector_type(s, n, out);
}

int cj_is_type_name(const char *s, size_t n) {
  cj_type_desc d;
  return cj_named_type(s, n, &d) || cj_is_integer_word(s, n);
}

/* --- tokens ------------------------------------------------------------------------------------
 */

/* The cj_token at text[*pos], stopping at end. */
cj_token cj_next_token(const char *text, size_t *pos, size_t end) {
  size_t i = *pos;
  while (i < end && isspace((unsigned char)text[i])) i++;
  cj_token t = {CJ_TK_END, i, 0};
  if (i >= end) {
    *pos = i;
    return t;
  }
  unsigned char c = (unsigned char)text[i];
  size_t j = i + 1;
  if (cj_ident_start(c) || isdigit(c)) {
    while (j < end && cj_ident_char((unsigned char)text[j])) j++;
    t.kind = isdigit(c) ? CJ_TK_NUMBER : CJ_TK_IDENT;
  } else if (c == '"') {
    while (j < end && text[j] != '"') j++;
    if (j < end) j++;
    t.kind = CJ_TK_STRING;
  } else {
    if (c == ':' && j < end && text[j] == ':')
      j++;
    else if (c == '.' && j + 1 < end && text[j] == '.' && text[j + 1] == '.')
      j += 2;
    t.kind = CJ_TK_PUNCT;
  }
  t.len = j - i;
  *pos = j;
  return t;
}

int cj_integer_type(const char *spelling, cj_type_desc *out) {
  for (size_t i = 0; i < sizeof integer_types / sizeof *integer_types; i++)
    if (strcmp(integer_types[i].spelling, spelling) == 0) {
      *out = integer_types[i];
      return 1;
    }
  return 0;
}

/* By halves: the signature parser asks about every parameter name twice. */
int cj_is_reserved_word(const char *s, size_t n) {
  size_t lo = 0, hi = sizeof reserved_words / sizeof *reserved_words;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *w = reserved_words[mid];
    int c = strncmp(w, s, n);
    if (c == 0) c = w[n] != '\0'; /* w longer than s sorts after it */
    if (c == 0) return 1;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

char *cj_replace_words(const char *text, size_t len, const char *const *names,
                       const char *const *with, size_t n) {
  if (n == 0) return cj_strndup(text, len); /* no typedef: most sources */
  cj_buf b = {0};
  for (size_t i = 0; i < len;) {
    if (cj_ident_start((unsigned char)text[i]) &&
        (i == 0 || !cj_ident_char((unsigned char)text[i - 1]))) {
      size_t e = i, k = 0;
      while (e < len && cj_ident_char((unsigned char)text[e])) e++;
      while (k < n && !(strlen(names[k]) == e - i && memcmp(names[k], text + i, e - i) == 0)) k++;
      if (k < n)
        cj_buf_puts(&b, with[k]);
      else
        cj_buf_add(&b, text + i, e - i);
      i = e;
    } else {
      cj_buf_add(&b, text + i++, 1);
    }
  }
  if (!b.failed && !b.data) return cj_strdup("");
  if (b.failed) cj_buf_free(&b);
  return b.data;
}

int cj_entry_identifier(const char *name, char *buf, size_t len) {
  int plain = cj_ident_start((unsigned char)*name);
  for (const char *c = name; *c && plain; c++) plain = cj_ident_char((unsigned char)*c);
  if (plain) return snprintf(buf, len, "%s", name) < (int)len;
  /* A qualified name or a template's: "ns::k", "scale<float, 4>", "k<unsigned int *>". Nothing
  ** that could end the expression it is written into ("k; system(...)"). */
  for (const char *c = name; *c; c++)
    if (!cj_ident_char((unsigned char)*c) && !strchr(":<>, *&-+.", *c)) return 0;
  size_t used = (size_t)snprintf(buf, len, "cjx__");
  for (const char *c = name; *c && used < len; c++)
    used += (size_t)(isalnum((unsigned char)*c)
                         ? snprintf(buf + used, len - used, "%c", *c)
                         : snprintf(buf + used, len - used, "_%02x", (unsigned)(unsigned char)*c));
  return used < len;
}
