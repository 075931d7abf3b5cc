/*
** symbols.c -- the compiled names of a source's variables (symbols.h): a mangled name read back
** into the source's words, and an ELF64 image's symbol table searched for them. Every offset and
** size read from the image is checked against its length before use: the bytes come from the
** disk cache.
*/
#include "symbols.h"

#include <ctype.h>
#include <elf.h>
#include <string.h>

/* A scope the compiler adds, which the source does not name. */
static int added_scope(const char *c, size_t n, int first) {
  return (n > 11 && memcmp(c, "_GLOBAL__N_", 11) == 0) ||
         (n > 10 && memcmp(c, "_INTERNAL_", 10) == 0) ||
         (first && n == 4 && memcmp(c, "__cj", 4) == 0);
}

int cj_symbol_names_variable(const char *sym, size_t len, const char *name) {
  if (name[0] == ':' && name[1] == ':') name += 2;
  if (len < 2 || sym[0] != '_' || sym[1] != 'Z')
    return strlen(name) == len && memcmp(sym, name, len) == 0;
  size_t i = 2;
  int nested = i < len && sym[i] == 'N';
  i += (size_t)nested;
  const char *want = name;
  for (int first = 1; i < len && sym[i] != 'E'; first = 0) {
    if (sym[i] == 'L') i++;
    size_t n = 0;
    if (i >= len || !isdigit((unsigned char)sym[i])) return 0; /* a template, a substitution */
    while (i < len && isdigit((unsigned char)sym[i]) && n < len)
      n = 10 * n + (size_t)(sym[i++] - '0');
    if (n > len - i) return 0;
    const char *c = sym + i;
    i += n;
    if (added_scope(c, n, first)) continue;
    if (want != name) { /* each scope after the first is written after a "::" */
      if (want[0] != ':' || want[1] != ':') return 0;
      want += 2;
    }
    if (strncmp(want, c, n) != 0) return 0;
    want += n;
    if (!nested) break;
  }
  if (nested && (i >= len || sym[i] != 'E' || i + 1 != len)) return 0;
  if (!nested && i != len) return 0;
  return want != name && *want == '\0';
}
