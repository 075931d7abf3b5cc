/*
** repl_print.c -- how the REPL shows values: strings as they are and numbers as Lua writes them
** (as lua.c prints them), tables as nested readable values, {1, 2, x = 3, sub = {...}}, one line
** when that fits and one entry a line when not, within a depth and a length limit that are
** always said, never silent; objects with a __tostring through it, and small device arrays with
** their first elements, fetched through their own copy_to_host and the host array's __tostring.
*/
#include "repl.h"

#include <string.h>

#include <lauxlib.h>

#define MAX_DEPTH 4       /* tables nested deeper show as {...} */
#define MAX_ENTRIES 24    /* entries shown per table; the rest are counted */
#define MAX_STRING 200    /* bytes of a string shown inside a table; the rest are counted */
#define LINE_WIDTH 96     /* a table longer than this on one line gets one entry a line */
#define SMALL_DEVICE 4096 /* device arrays up to this many elements show their first ones */
#define SORT_UP_TO 512    /* hash keys are sorted when a table has at most this many */

static void render(lua_State *L, int idx, int seen, int depth, int indent);

static int is_name_char(char c, int first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (!first && c >= '0' && c <= '9');
}

static int is_identifier(const char *s, size_t len) {
  static const char *const reserved[] = {"and",   "break", "do",       "else",  "elseif", "end",
                                         "false", "for",   "function", "goto",  "if",     "in",
                                         "local", "nil",   "not",      "or",    "repeat", "return",
                                         "then",  "true",  "until",    "while", NULL};
  if (len == 0) return 0;
  for (size_t i = 0; i < len; i++)
    if (!is_name_char(s[i], i == 0)) return 0;
  for (int i = 0; reserved[i]; i++)
    if (strcmp(s, reserved[i]) == 0) return 0;
  return 1;
}

/* A string inside a table: quoted, escaped, and cut at MAX_STRING bytes with the length said. */
static void push_quoted(lua_State *L, int idx) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '"');
  size_t shown = len > MAX_STRING ? MAX_STRING : len;
  for (size_t i = 0; i < shown; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      luaL_addchar(&b, '\\');
      luaL_addchar(&b, (char)c);
    } else if (c == '\n') {
      luaL_addstring(&b, "\\n");
    } else if (c == '\t') {
      luaL_addstring(&b, "\\t");
    } else if (c < 32 || c == 127) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\%03u", c);
      luaL_addstring(&b, esc);
    } else {
      luaL_addchar(&b, (char)c);
    }
  }
  luaL_addchar(&b, '"');
  if (shown < len) {
    char more[64];
    snprintf(more, sizeof more, "...(%zu bytes in all)", len);
    luaL_addstring(&b, more);
  }
  luaL_pushresult(&b);
}

/* tostring(v), through __tostring/__name as print does. */
static void push_tostring(lua_State *L, int idx) {
  luaL_tolstring(L, idx, NULL);
}

/* 1 when the value at idx has the metatable registered under `name`. */
static int has_class(lua_State *L, int idx, const char *name) {
  if (!lua_getmetatable(L, idx)) return 0;
  luaL_getmetatable(L, name);
  int same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

static int copy_to_host(lua_State *L) {
  lua_getfield(L, 1, "copy_to_host");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  luaL_tolstring(L, -1, NULL);
  return 1;
}

/* A small device array: its __tostring, then the elements its host copy shows. A device that
** cannot copy (faulted, lost, freed) leaves just the __tostring. */
static void push_device_array(lua_State *L, int idx) {
  push_tostring(L, idx);
  lua_getfield(L, idx, "size");
  lua_Integer size = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (size <= 0 || size > SMALL_DEVICE) return;
  lua_pushcfunction(L, copy_to_host);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return;
  }
  const char *elements = strstr(lua_tostring(L, -1), " {");
  if (elements)
    lua_pushfstring(L, "%s%s", lua_tostring(L, -2), elements);
  else
    lua_pushvalue(L, -2);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

/* "key = " for an identifier, "[key] = " for anything else. */
static void push_key(lua_State *L, int key, int seen, int depth) {
  size_t len;
  if (lua_type(L, key) == LUA_TSTRING) {
    const char *s = lua_tolstring(L, key, &len);
    if (is_identifier(s, len)) {
      lua_pushfstring(L, "%s = ", s);
      return;
    }
  }
  render(L, key, seen, depth + 1, 0);
  lua_pushfstring(L, "[%s] = ", lua_tostring(L, -1));
  lua_remove(L, -2);
}

static int compare_entries(lua_State *L, int a, int b) {
  return strcmp(lua_tostring(L, a), lua_tostring(L, b));
}

/* Sorts the strings at stack slots first..last (few: insertion sort) for a stable output. */
static void sort_slots(lua_State *L, int first, int last) {
  for (int i = first + 1; i <= last; i++) {
    lua_pushvalue(L, i);
    int j = i - 1;
    while (j >= first && compare_entries(L, j, -1) > 0) {
      lua_pushvalue(L, j);
      lua_replace(L, j + 1);
      j--;
    }
    lua_replace(L, j + 1);
  }
}

/* Joins the `n` strings above `base` into one: "{a, b}" when short; else the first `packed`
** (the array part) filling lines, and the rest one a line. */
static void join_entries(lua_State *L, int base, int n, int packed, int indent) {
  size_t total = 2; /* the braces, then each entry and the ", " between two */
  int multiline = 0;
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *s = lua_tolstring(L, base + i, &len);
    total += len + (i < n ? 2 : 0);
    if (memchr(s, '\n', len)) multiline = 1;
  }
  if ((size_t)indent + total > LINE_WIDTH) multiline = 1;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '{');
  size_t column = 0;
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *s = lua_tolstring(L, base + i, &len);
    int fits = i <= packed && i > 1 && !memchr(s, '\n', len) && column + len + 2 <= LINE_WIDTH;
    if (multiline && fits) {
      luaL_addchar(&b, ' ');
      column++;
    } else if (multiline) {
      luaL_addchar(&b, '\n');
      for (int k = 0; k < indent + 2; k++) luaL_addchar(&b, ' ');
      column = (size_t)indent + 2;
    }
    lua_pushvalue(L, base + i);
    luaL_addvalue(&b);
    column += len + 1;
    if (i < n) luaL_addstring(&b, multiline ? "," : ", ");
  }
  if (multiline) {
    luaL_addchar(&b, '\n');
    for (int k = 0; k < indent; k++) luaL_addchar(&b, ' ');
  }
  luaL_addchar(&b, '}');
  luaL_pushresult(&b);
  lua_replace(L, base + 1);
  lua_settop(L, base + 1);
}

/* A plain table (no __tostring): its array part in order, then its other keys sorted. */
static void render_table(lua_State *L, int t, int seen, int depth, int indent) {
  if (lua_rawgetp(L, seen, lua_topointer(L, t)) != LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushliteral(L, "<cycle>");
    return;
  }
  lua_pop(L, 1);
  lua_Integer array = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) count++, lua_pop(L, 1);
  while (lua_rawgeti(L, t, array + 1) != LUA_TNIL) array++, lua_pop(L, 1);
  lua_pop(L, 1);
  if (count == 0) {
    lua_pushliteral(L, "{}");
    return;
  }
  if (depth >= MAX_DEPTH) {
    lua_pushfstring(L, "{...%I %s}", count, count == 1 ? "entry" : "entries");
    return;
  }
  lua_pushboolean(L, 1);
  lua_rawsetp(L, seen, lua_topointer(L, t));
  luaL_checkstack(L, MAX_ENTRIES + LUA_MINSTACK, "table too deep to print");
  int base = lua_gettop(L), n = 0;
  for (lua_Integer i = 1; i <= array && n < MAX_ENTRIES; i++, n++) {
    lua_rawgeti(L, t, i);
    render(L, lua_gettop(L), seen, depth + 1, indent + 2);
    lua_remove(L, -2);
  }
  int packed = n, sorted_from = base + n + 1;
  /* With few keys, all are rendered and sorted before the first MAX_ENTRIES are kept, so what
  ** shows does not depend on the hash order; with many, the first met are shown, sorted. */
  int limit = count <= SORT_UP_TO ? (int)count : MAX_ENTRIES;
  luaL_checkstack(L, limit + LUA_MINSTACK, "table too large to print");
  lua_pushnil(L);
  while (n < limit && lua_next(L, t)) {
    if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= array) {
      lua_pop(L, 1);
      continue;
    }
    int key = lua_gettop(L) - 1;
    push_key(L, key, seen, depth);
    render(L, key + 1, seen, depth + 1, indent + 2);
    lua_concat(L, 2);
    lua_insert(L, key); /* below the key and value, which go on with lua_next */
    lua_pop(L, 1);
    n++;
  }
  if (n == limit && lua_gettop(L) > base + n) lua_pop(L, 1); /* the key lua_next left */
  sort_slots(L, sorted_from, base + n);
  if (n > MAX_ENTRIES) {
    lua_settop(L, base + MAX_ENTRIES);
    n = MAX_ENTRIES;
  }
  if (count > n) {
    lua_pushfstring(L, "...(%I more)", count - n);
    n++;
  }
  lua_pushnil(L);
  lua_rawsetp(L, seen, lua_topointer(L, t));
  join_entries(L, base, n, packed, indent);
}

/* Pushes the text of the value at idx; `seen` holds the tables being printed, for cycles. */
static void render(lua_State *L, int idx, int seen, int depth, int indent) {
  luaL_checkstack(L, LUA_MINSTACK, "value too deep to print");
  switch (lua_type(L, idx)) {
  case LUA_TSTRING:
    push_quoted(L, idx);
    break;
  case LUA_TTABLE:
    if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL ||
        luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
      lua_pop(L, 1);
      push_tostring(L, idx);
    } else {
      render_table(L, idx, seen, depth, indent);
    }
    break;
  case LUA_TUSERDATA:
    if (has_class(L, idx, "cujit.device_array"))
      push_device_array(L, idx);
    else
      push_tostring(L, idx);
    break;
  default:
    push_tostring(L, idx);
  }
}

/* In protected mode: the values, then print's own way of writing them out. */
static int print_all(lua_State *L) {
  int n = lua_gettop(L);
  lua_newtable(L);
  int seen = n + 1;
  luaL_Buffer b;
  for (int i = 1; i <= n; i++) {
    if (lua_type(L, i) == LUA_TSTRING)
      lua_pushvalue(L, i);
    else
      render(L, i, seen, 0, 0);
  }
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    lua_pushvalue(L, seen + i);
    luaL_addvalue(&b);
    luaL_addchar(&b, i < n ? '\t' : '\n');
  }
  luaL_pushresult(&b);
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  fwrite(text, 1, len, stdout);
  fflush(stdout);
  return 0;
}

void repl_print_values(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_pushcfunction(L, print_all);
  lua_insert(L, base + 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) {
    cli_message(lua_pushfstring(L, "error printing the values (%s)", lua_tostring(L, -1)));
  }
  lua_settop(L, base);
}
