/*
** lexicon.h -- the C words cujit reads in kernel signatures, translation units and elementwise
** parameter lists: one tokenizer, the types cujit can size, the reserved words, and the one rule
** for type variables (T, U, T2). Shared by signature.c, scan.c and elementwise.c. Internal.
*/
#ifndef CUJIT_LEXICON_H
#define CUJIT_LEXICON_H

#include "cujit.h"

#include <stddef.h>
#include <string.h>

/* --- tokens --- */

enum { CJ_TK_END, CJ_TK_IDENT, CJ_TK_NUMBER, CJ_TK_PUNCT, CJ_TK_STRING };

typedef struct cj_token {
  int kind;
  size_t pos, len; /* in the text */
} cj_token;

/* Inline: the scanners call these for every character and token. */
static inline int cj_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int cj_ident_char(int c) {
  return cj_ident_start(c) || (c >= '0' && c <= '9');
}

/* The token at text[*pos] (spaces skipped), stopping at end; *pos moves past it. "::" and "..."
** are one punctuation token; a string runs to its closing quote. */
cj_token cj_next_token(const char *text, size_t *pos, size_t end);

/* 1 if the token spells s exactly. */
static inline int cj_tok_is(const char *text, cj_token t, const char *s) {
  return t.kind != CJ_TK_END && strlen(s) == t.len && memcmp(text + t.pos, s, t.len) == 0;
}

/* --- words --- */

typedef struct cj_type_desc {
  const char *spelling; /* normalised; NULL for vector types, which keep the user's spelling */
  cujit_dtype dtype;    /* NONE for void, vector types and __half2 */
  size_t size, align;
} cj_type_desc;

/* A type named by one word: bool, float, float4, uint32_t, half (as __half), nv_bfloat16, ... */
int cj_named_type(const char *s, size_t n, cj_type_desc *out);

/* The integer type of a normalised several-keyword spelling ("unsigned long long"). */
int cj_integer_type(const char *spelling, cj_type_desc *out);

/* signed, unsigned, char, short, int, long. */
int cj_is_integer_word(const char *s, size_t n);

/* A one-word type or an integer keyword. */
int cj_is_type_name(const char *s, size_t n);

/* const, volatile, restrict, __restrict, __restrict__; and whether it is one of the restricts. */
int cj_is_qualifier(const char *s, size_t n);
int cj_is_restrict(const char *s, size_t n);

/* A C++ keyword or a CUDA declaration specifier (__global__, __restrict__, ...). */
int cj_is_reserved_word(const char *s, size_t n);

/* The one rule for type variables: one upper-case letter, then digits only (T, U, T2). */
int cj_is_type_var_name(const char *s, size_t n);

/* 1 if s[0..n) is one of the NULL-terminated list. */
int cj_in_list(const char *const *list, const char *s, size_t n);

/* text[0..len) with each whole word that is names[k] replaced by with[k] (typedefs, template
** arguments, type variables). Malloc'd, or NULL when out of memory. */
char *cj_replace_words(const char *text, size_t len, const char *const *names,
                       const char *const *with, size_t n);

/* An identifier for any kernel name, for the CPU device's exported entries (cjk_<it>): a C
** identifier is itself; "scale<float>" or "ns::k" become "cjx__" and their characters with each
** one other than a letter or digit written _XX (hex). 0 when it does not fit in len bytes, or
** when the name holds what no such name holds (';', '(', quotes, ...). */
int cj_entry_identifier(const char *name, char *buf, size_t len);

#endif
