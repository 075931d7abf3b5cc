/*
** repl_complete.c -- Tab completion for the REPL, through libedit's readline interface: global
** names, the fields of a table after '.', methods after ':' (cujit's kernels, arrays, streams...
** included: their methods are read from their metatables' __index at the time Tab is pressed,
** never listed here), string methods, and the option names of cuda.jit, cuda.source, cuda.load
** and cuda.elementwise inside their options table (from cuda.options, the binding's own list).
** Nothing is called while completing: tables are read raw, so no code of the user's runs.
*/
#include "repl.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include <editline/readline.h>

#define MAX_PATH 16      /* a.b.c...: components followed */
#define MAX_INDEX_HOPS 4 /* __index chains (tables, or C closures holding a methods table) */

static lua_State *complete_L; /* libedit's callback has no context argument */

/* Candidates collected for one Tab: malloc'd strings, returned to libedit, which frees them. */
typedef struct matches {
  char **items;
  size_t n, cap;
  int all_functions; /* every candidate is a function: '(' goes after a single one */
} matches;

static void add_match(matches *m, const char *prefix, size_t prefix_len, const char *name) {
  for (size_t i = 1; i <= m->n; i++)
    if (strcmp(m->items[i] + prefix_len, name) == 0) return;
  if (m->n + 2 >= m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    char **items = realloc(m->items, cap * sizeof *items);
    if (!items) return;
    m->items = items;
    m->cap = cap;
  }
  size_t len = strlen(name);
  char *s = malloc(prefix_len + len + 1);
  if (!s) return;
  memcpy(s, prefix, prefix_len);
  memcpy(s + prefix_len, name, len + 1);
  m->items[++m->n] = s; /* items[0] is the common prefix, filled in at the end */
}

static int is_name(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return 0;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

/* The string keys of the table at idx that start with `partial` (methods only: functions). */
static void add_keys(lua_State *L, int idx, const char *partial, int methods_only, matches *m,
                     const char *prefix, size_t prefix_len) {
  size_t plen = strlen(partial);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      const char *key = lua_tostring(L, -2);
      int is_function = lua_type(L, -1) == LUA_TFUNCTION;
      /* names starting with '_' (_G, _VERSION, __index...) only when asked for */
      if ((!methods_only || is_function) && (key[0] != '_' || partial[0] == '_') &&
          strncmp(key, partial, plen) == 0 && is_name(key)) {
        add_match(m, prefix, prefix_len, key);
        if (!is_function) m->all_functions = 0;
      }
    }
    lua_pop(L, 1);
  }
}

/* Pushes the table of methods behind a metatable's __index: the table itself, or the first
** upvalue of a C closure (how cujit's classes keep their methods), followed a few hops.
** Pushes nothing and returns 0 when there is none. */
static int push_methods(lua_State *L, int value) {
  value = lua_absindex(L, value);
  if (!lua_getmetatable(L, value)) return 0;
  lua_getfield(L, -1, "__index");
  lua_remove(L, -2);
  for (int hop = 0; hop < MAX_INDEX_HOPS; hop++) {
    if (lua_istable(L, -1)) return 1;
    if (!lua_iscfunction(L, -1) || !lua_getupvalue(L, -1, 1)) break;
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  return 0;
}

/* The field `name` of the value at idx, read without running code: a table raw, then its
** methods; a userdata or string through its methods table. Pushes nil when there is none. */
static void push_field(lua_State *L, int idx, const char *name) {
  idx = lua_absindex(L, idx);
  if (lua_istable(L, idx)) {
    lua_pushstring(L, name);
    if (lua_rawget(L, idx) != LUA_TNIL) return;
    lua_pop(L, 1);
  }
  if (push_methods(L, idx)) {
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    return;
  }
  lua_pushnil(L);
}

/* The candidates for `text`: "a.b.par" or "obj:par" (fields or methods of a.b / obj, resolved
** from the globals), or "par" (globals). */
static void complete_path(lua_State *L, const char *text, matches *m) {
  const char *sep = strpbrk(text, ".:");
  const char *last = NULL;
  for (const char *p = text; *p; p++)
    if (*p == '.' || *p == ':') last = p;
  lua_pushglobaltable(L);
  if (!sep) {
    static const char *const keywords[] = {
        "and", "break", "else",   "elseif", "end",  "false", "for",   "function", "goto", "local",
        "nil", "not",   "repeat", "return", "then", "true",  "until", "while",    NULL};
    add_keys(L, lua_gettop(L), text, 0, m, "", 0);
    for (int i = 0; keywords[i]; i++)
      if (strncmp(keywords[i], text, strlen(text)) == 0) add_match(m, "", 0, keywords[i]);
    m->all_functions = 0;
    return;
  }
  const char *p = text;
  for (int n = 0; p < last && n < MAX_PATH; n++) {
    size_t len = strcspn(p, ".:");
    if (p[len] == ':' && p + len != last) return; /* a ':' in the middle: not a path */
    lua_pushlstring(L, p, len);
    const char *name = lua_tostring(L, -1);
    push_field(L, -2, name);
    lua_remove(L, -2);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) return;
    p += len + 1;
  }
  int value = lua_gettop(L);
  int methods_only = *last == ':';
  size_t prefix_len = (size_t)(last - text) + 1;
  if (lua_istable(L, value)) add_keys(L, value, last + 1, methods_only, m, text, prefix_len);
  if (push_methods(L, value)) add_keys(L, lua_gettop(L), last + 1, 1, m, text, prefix_len);
}

/* Skips a Lua string starting at s (a quote or a long bracket), or returns s when none starts. */
static const char *skip_string(const char *s, const char *end) {
  if (*s == '"' || *s == '\'') {
    char q = *s++;
    while (s < end && *s != q) s += (*s == '\\' && s + 1 < end) ? 2 : 1;
    return s < end ? s + 1 : end;
  }
  if (*s == '[' && (s[1] == '[' || s[1] == '=')) {
    const char *p = s + 1;
    size_t level = 0;
    while (p < end && *p == '=') level++, p++;
    if (p >= end || *p != '[') return s;
    for (p++; p < end; p++) {
      if (*p != ']') continue;
      const char *q = p + 1;
      size_t l = 0;
      while (q < end && *q == '=') l++, q++;
      if (l == level && q < end && *q == ']') return q + 1;
    }
    return end;
  }
  return s;
}

/* 1 when the cursor is inside the options table of a call to jit/source/load/elementwise:
** the innermost open '{' follows a ',' inside the innermost open '(' after such a name. */
static int in_options_table(const char *line, size_t upto) {
  const char *end = line + upto;
  const char *opens[64];
  int depth = 0;
  for (const char *p = line; p < end;) {
    const char *after = skip_string(p, end);
    if (after != p) {
      p = after;
      continue;
    }
    if ((*p == '(' || *p == '{') && depth < 64)
      opens[depth++] = p;
    else if ((*p == ')' || *p == '}') && depth > 0)
      depth--;
    p++;
  }
  if (depth < 2 || *opens[depth - 1] != '{' || *opens[depth - 2] != '(') return 0;
  const char *call = opens[depth - 2];
  const char *q = opens[depth - 1];
  while (q > call && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n')) q--;
  if (q == call || q[-1] != ',') return 0;
  static const char *const makers[] = {"jit", "source", "load", "elementwise", NULL};
  for (int i = 0; makers[i]; i++) {
    size_t n = strlen(makers[i]);
    if ((size_t)(call - line) >= n && strncmp(call - n, makers[i], n) == 0 &&
        (call - n == line || call[-n - 1] == '.' || call[-n - 1] == ':'))
      return 1;
  }
  return 0;
}

/* The option names from the module's own list, cuda.options. */
static void complete_option(lua_State *L, const char *text, matches *m) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "cujit") != LUA_TTABLE || lua_getfield(L, -1, "options") != LUA_TTABLE)
    return;
  size_t len = strlen(text);
  for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
    const char *name = lua_tostring(L, -1);
    if (strncmp(name, text, len) == 0) add_match(m, "", 0, name);
    lua_pop(L, 1);
  }
  m->all_functions = 0;
}

/* items[0]: the longest prefix the candidates share, which libedit puts in place of the word. */
static char **finish(matches *m) {
  if (m->n == 0) {
    free(m->items);
    return NULL;
  }
  size_t common = strlen(m->items[1]);
  for (size_t i = 2; i <= m->n; i++) {
    size_t k = 0;
    while (k < common && m->items[i][k] == m->items[1][k]) k++;
    common = k;
  }
  m->items[0] = strndup(m->items[1], common);
  m->items[m->n + 1] = NULL;
  if (!m->items[0]) {
    for (size_t i = 1; i <= m->n; i++) free(m->items[i]);
    free(m->items);
    return NULL;
  }
  return m->items;
}

static char **complete(const char *text, int start, int end) {
  (void)end;
  rl_attempted_completion_over = 1; /* never file names */
  lua_State *L = complete_L;
  matches m = {.all_functions = 1};
  int top = lua_gettop(L);
  if (!lua_checkstack(L, 2 * MAX_PATH + LUA_MINSTACK)) return NULL;
  if (!strpbrk(text, ".:") && in_options_table(rl_line_buffer, (size_t)start))
    complete_option(L, text, &m);
  else
    complete_path(L, text, &m);
  lua_settop(L, top);
  rl_completion_append_character = (m.n == 1 && m.all_functions) ? '(' : '\0';
  return finish(&m);
}

void repl_complete_install(lua_State *L) {
  complete_L = L;
  /* '.' and ':' stay inside the word, so "cuda.ji" is completed as a whole. */
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#";
  rl_completer_word_break_characters = (char *)rl_basic_word_break_characters;
  rl_attempted_completion_function = complete;
}
