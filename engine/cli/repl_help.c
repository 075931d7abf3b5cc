/*
** repl_help.c -- `:help NAME` in the REPL: the short reference of a cujit function, method or
** option, read from docs/lua.md, which the build embeds (cmake/embed_text.cmake), so the REPL
** and the manual say the same thing. Entries are the "### cuda.name(...)" headings (with their
** first paragraph) and the rows of the reference tables whose first cell names a call
** (`cuda.memory()`, `k:ptx()`, `a:fill(value)`) or an option (`arch = "sm_90"`).
*/
#include "repl.h"

#include <string.h>

extern const unsigned char repl_lua_doc[]; /* docs/lua.md, embedded at build time */

#define WRAP 96
#define MAX_NAMES 8

typedef struct entry {
  char names[MAX_NAMES][64]; /* "cuda.jit", "k:ptx", "arch" */
  int count;
  const char *text; /* where its text starts in the document */
  size_t len;
  int heading; /* a "###" heading: its text runs to the end of the first paragraph */
  char section[96];
} entry;

static int name_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void add_name(entry *e, const char *s, size_t len) {
  if (e->count >= MAX_NAMES || len == 0 || len >= sizeof e->names[0]) return;
  memcpy(e->names[e->count], s, len);
  e->names[e->count][len] = '\0';
  e->count++;
}

/* The names in `line` (up to `end`): every "cuda.x(", "cuda.x.y(" (a table of the module:
** cuda.nccl.comm) and "v:x(" (calls; "{" too, Lua's call with a table), or in an options row,
** the "x" of each "`x = ...`". */
static void collect_names(entry *e, const char *line, const char *end, int options) {
  for (const char *p = line; p < end; p++) {
    if (options) {
      if (*p != '`' || p + 1 >= end || !name_char(p[1])) continue;
      const char *n = p + 1, *q = n;
      while (q < end && name_char(*q)) q++;
      if (q + 2 < end && q[0] == ' ' && q[1] == '=' && q[2] == ' ') add_name(e, n, (size_t)(q - n));
      p = q;
      continue;
    }
    if (p > line && name_char(p[-1])) continue; /* names start at a word start */
    const char *q = p;
    while (q < end && name_char(*q)) q++;
    if (q == p || q >= end || (*q != '.' && *q != ':')) continue;
    const char *r = q + 1;
    while (r < end && name_char(*r)) r++;
    if (*q == '.' && r + 1 < end && *r == '.' && name_char(r[1]) && strncmp(p, "cuda.", 5) == 0)
      for (r++; r < end && name_char(*r);) r++; /* cuda.nccl.comm */
    if (r > q + 1 && r < end && (*r == '(' || *r == '{') &&
        (*q == ':' || (q - p == 4 && strncmp(p, "cuda", 4) == 0)))
      add_name(e, p, (size_t)(r - p));
    p = r;
  }
}

static const char *line_end(const char *s) {
  const char *nl = strchr(s, '\n');
  return nl ? nl : s + strlen(s);
}

/* Calls `found` on each entry of the document; stops when it returns nonzero. */
static void each_entry(int (*found)(const entry *, void *), void *ctx) {
  char chapter[96] = "", section[96] = ""; /* the last "##" and the last heading */
  int in_code = 0, options_table = 0;
  for (const char *line = (const char *)repl_lua_doc; *line;) {
    const char *end = line_end(line), *next = *end ? end + 1 : end;
    size_t len = (size_t)(end - line);
    if (len >= 3 && strncmp(line, "```", 3) == 0) in_code = !in_code;
    if (in_code || len == 0) {
      line = next;
      continue;
    }
    entry e = {.count = 0};
    if (line[0] == '#') {
      const char *title = line;
      while (*title == '#') title++;
      while (*title == ' ') title++;
      snprintf(section, sizeof section, "%.*s", (int)(end - title), title);
      if (strncmp(line, "## ", 3) == 0) snprintf(chapter, sizeof chapter, "%s", section);
      options_table = 0;
      if (strncmp(line, "### ", 4) == 0) {
        collect_names(&e, title, end, 0);
        e.heading = 1;
        e.text = title;
      }
    } else if (line[0] == '|') {
      if (strncmp(line, "| option |", 10) == 0) options_table = 1;
      const char *cell_end = memchr(line + 1, '|', len - 1);
      if (cell_end) collect_names(&e, line + 1, cell_end, options_table);
      e.text = line;
      e.len = len;
    }
    if (e.count > 0) {
      if (e.heading) { /* the heading and the paragraph after it */
        const char *p = next;
        while (*p == '\n') p++;
        const char *stop = p;
        while (*stop && *stop != '\n' && *stop != '#' && *stop != '|' && strncmp(stop, "```", 3))
          stop = *line_end(stop) ? line_end(stop) + 1 : line_end(stop);
        e.len = (size_t)(stop - e.text);
      }
      snprintf(e.section, sizeof e.section, "%s", e.heading ? chapter : section);
      if (found(&e, ctx)) return;
    }
    line = next;
  }
}

/* Prints markdown as plain text: no backticks, no **, table cells as "first: rest", wrapped;
** `column` is where the cursor stands. */
static void print_text(const char *s, size_t len, int table_row, size_t column) {
  char out[4096];
  size_t n = 0, link_end = 0;
  int cell = 0;
  for (size_t i = 0; i < len && n + 4 < sizeof out; i++) {
    char c = s[i];
    if (c == '`') continue;
    if (c == '[') { /* a link [text](where): its text only; other brackets (m[i]) stay */
      size_t j = i + 1;
      while (j < len && s[j] != ']' && s[j] != '[' && s[j] != '\n') j++;
      if (j + 1 < len && s[j] == ']' && s[j + 1] == '(') {
        link_end = j;
        continue;
      }
    }
    if (link_end && i == link_end) {
      while (i < len && s[i] != ')') i++;
      link_end = 0;
      continue;
    }
    if (c == '*' && i + 1 < len && s[i + 1] == '*') {
      i++;
      continue;
    }
    if (table_row && c == '|' && (i == 0 || s[i - 1] != '\\')) {
      cell++;
      while (n > 0 && out[n - 1] == ' ') n--;
      if (cell == 2)
        out[n++] = ':';
      else if (cell > 2 && i + 1 < len)
        out[n++] = ';';
      continue;
    }
    if (c == '\n') c = ' ';
    if (c == ' ' && n > 0 && out[n - 1] == ' ') continue;
    if (c == ' ' && n == 0) continue;
    out[n++] = c;
  }
  while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == ';')) n--;
  out[n] = '\0';
  /* Word wrap at WRAP columns, continuation lines indented. */
  size_t col = column;
  for (char *word = strtok(out, " "); word; word = strtok(NULL, " ")) {
    size_t w = strlen(word);
    if (col > column && col + 1 + w > WRAP) {
      fputs("\n    ", stdout);
      col = 4;
    } else if (col > column) {
      fputc(' ', stdout);
      col++;
    }
    fputs(word, stdout);
    col += w;
  }
  fputc('\n', stdout);
}

typedef struct query {
  const char *prefix; /* "cuda", "k", "saxpy", or NULL for a bare name */
  size_t prefix_len;
  char sep;           /* '.', ':' or 0 */
  const char *member; /* "jit", "ptx" */
  const char *whole;  /* the name as asked: "cuda.jit", "nccl.comm" */
  int shown;
} query;

static int member_matches(const query *q, const char *name) {
  /* cuda.nccl.comm: also as "nccl.comm" and, bare, as "comm" */
  if (strncmp(name, "cuda.", 5) == 0 && strchr(name + 5, '.')) {
    if (strcmp(name + 5, q->whole) == 0) return 1;
    if (!q->sep && strcmp(strrchr(name, '.') + 1, q->member) == 0) return 1;
  }
  const char *sep = strpbrk(name, ".:");
  const char *member = sep ? sep + 1 : name;
  if (strcmp(member, q->member) != 0) return 0;
  if (!q->sep) return 1;
  if (q->sep == '.' && q->prefix_len == 4 && strncmp(q->prefix, "cuda", 4) == 0)
    return sep && *sep == '.';
  if (sep && strncmp(name, q->prefix, q->prefix_len) == 0 && name + q->prefix_len == sep)
    return 1;                                 /* exactly as the manual writes it: k:ptx */
  return q->sep == ':' && sep && *sep == ':'; /* saxpy:ptx, kernel:ptx: any method so named */
}

static int show_if_matching(const entry *e, void *ctx) {
  query *q = ctx;
  for (int i = 0; i < e->count; i++) {
    if (!member_matches(q, e->names[i])) continue;
    if (e->heading) { /* the heading on a line of its own, then its paragraph */
      const char *end = line_end(e->text);
      printf("%.*s\n    ", (int)(end - e->text), e->text);
      print_text(end, e->len - (size_t)(end - e->text), 0, 4);
    } else {
      print_text(e->text, e->len, 1, 0);
    }
    printf("    (docs/lua.md, %s)\n", e->section);
    q->shown++;
    break;
  }
  return 0;
}

typedef struct name_list {
  char text[16384];
  size_t len;
} name_list;

static int list_names(const entry *e, void *ctx) {
  name_list *l = ctx;
  for (int i = 0; i < e->count; i++) {
    if (!strchr(e->names[i], '.') && !strchr(e->names[i], ':')) continue; /* options */
    int n =
        snprintf(l->text + l->len, sizeof l->text - l->len, "%s%s", l->len ? " " : "", e->names[i]);
    if (n < 0 || (size_t)n >= sizeof l->text - l->len) return 1;
    l->len += (size_t)n;
  }
  return 0;
}

int repl_help(const char *name) {
  char word[128];
  snprintf(word, sizeof word, "%s", name);
  size_t len = strlen(word);
  if (len >= 2 && strcmp(word + len - 2, "()") == 0) word[len - 2] = '\0';
  char whole[128];
  snprintf(whole, sizeof whole, "%s", word);
  query q = {.member = word, .whole = whole};
  char *sep = strpbrk(word, ".:");
  if (sep) {
    q.prefix = word;
    q.prefix_len = (size_t)(sep - word);
    q.sep = *sep;
    q.member = sep + 1;
  }
  if (*q.member) each_entry(show_if_matching, &q);
  if (q.shown) return 1;
  name_list l = {.len = 0};
  each_entry(list_names, &l);
  printf("no reference for '%s' in docs/lua.md; it documents: %s (and the options of cuda.jit: "
         ":help arch, ...)\n",
         name, l.text);
  return 0;
}
