/*
** blank.c -- the text the kernel reader (scan.c) reads: a copy of a translation unit with its
** comments, preprocessor lines and the insides of its literals blanked to spaces, positions kept.
** Apart from scan.c because its byte loop is the part of every cache hit that grows with the
** source's length.
*/
#include "base/base.h"
#include "lang/lexicon.h"
#include "scan.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Whether the R at s[i] (before a '"') opens a raw string: it starts a word, or follows an
** encoding prefix (u8R"(...)", uR, UR, LR); any other word ending in R is a name. */
static int raw_string_opens(const char *s, size_t i) {
  size_t w = i;
  while (w > 0 && cj_ident_char((unsigned char)s[w - 1])) w--;
  return i == w || (i - w == 1 && strchr("uUL", s[w])) || (i - w == 2 && !strncmp(s + w, "u8", 2));
}

/* A copy of the source with comments, preprocessor lines and the insides of literals blanked to
** spaces (newlines kept, so positions stay), except the "C" of extern "C". */
char *cj_blank_source(const char *src) {
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
    if (!line_start && !strchr("/R\"'", c)) { /* within a line only these open anything */
      i += 1 + strcspn(s + i + 1, "\n/R\"'");
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
    } else if (c == 'R' && i + 1 < n && s[i + 1] == '"' && raw_string_opens(s, i)) {
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
