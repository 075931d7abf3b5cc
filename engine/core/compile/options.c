/*
** options.c -- the table of compile options (options.h) made into rows, and everything made from
** it: the checks of the values, NVRTC's option list, the options' part of the CPU device's g++
** line, the memo key's options and the public description cujit_compile_option.
*/
#include "options.h"
#include "base/env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cj_cxx_as_nvrtc[] = "as NVRTC's";

/* --- the rows --------------------------------------------------------------------------------- */

#define ROW_TEXT(f, fallback_, lua, cli, value_, nvrtc_, cxx_, key_, check_, example_, other_,     \
                 doc_)                                                                             \
  {.info = {#f, lua, cli, value_, doc_, CUJIT_OPTION_TEXT, offsetof(cujit_compile_options, f), 0}, \
   .fallback = fallback_,                                                                          \
   .item = #f,                                                                                     \
   .nvrtc = nvrtc_,                                                                                \
   .cxx = cxx_,                                                                                    \
   .example = example_,                                                                            \
   .other = other_,                                                                                \
   .key = key_,                                                                                    \
   .check = check_},
#define ROW_SWITCH(f, lua, cli, nvrtc_, cxx_, env_, doc_)                                          \
  {.info = {#f, lua, cli, NULL, doc_, CUJIT_OPTION_SWITCH, offsetof(cujit_compile_options, f), 0}, \
   .item = #f,                                                                                     \
   .nvrtc = nvrtc_,                                                                                \
   .cxx = cxx_,                                                                                    \
   .env = env_,                                                                                    \
   .key = CJ_KEY_LINE},
#define ROW_LIST(f, count, item_, lua, cli, value_, nvrtc_, cxx_, key_, check_, example_, other_,  \
                 doc_)                                                                             \
  {.info = {#f, lua, cli, value_, doc_, CUJIT_OPTION_LIST, offsetof(cujit_compile_options, f),     \
            offsetof(cujit_compile_options, count)},                                               \
   .item = item_,                                                                                  \
   .nvrtc = nvrtc_,                                                                                \
   .cxx = cxx_,                                                                                    \
   .example = example_,                                                                            \
   .other = other_,                                                                                \
   .key = key_,                                                                                    \
   .check = check_},

const cj_option cj_options[] = {CJ_COMPILE_OPTIONS(ROW_TEXT, ROW_SWITCH, ROW_LIST)};
const size_t cj_option_count = sizeof cj_options / sizeof *cj_options;

/* The table covers the struct: a struct laid out from the rows alone, in their order, must be
** cujit_compile_options member for member. A member added to cujit.h without a row changes the
** size (or, dropped into padding, is caught by test_options' reading of the header). */
#define SHADOW_TEXT(f, ...) const char *f;
#define SHADOW_SWITCH(f, ...) int f;
#define SHADOW_LIST(f, count, ...)                                                                 \
  const char *const *f;                                                                            \
  size_t count;
struct shadow {
  size_t size;
  CJ_COMPILE_OPTIONS(SHADOW_TEXT, SHADOW_SWITCH, SHADOW_LIST)
};
_Static_assert(sizeof(struct shadow) == sizeof(cujit_compile_options),
               "cujit_compile_options has a member the option table (options.h) lacks: add its "
               "row to CJ_COMPILE_OPTIONS");
#define SAME(f, type)                                                                              \
  _Static_assert(offsetof(struct shadow, f) == offsetof(cujit_compile_options, f) &&               \
                     _Generic(((cujit_compile_options *)0)->f, type : 1, default : 0),             \
                 "the row of '" #f "' (options.h) is not where, or of the type, cujit.h says");
#define SAME_TEXT(f, ...) SAME(f, const char *)
#define SAME_SWITCH(f, ...) SAME(f, int)
#define SAME_LIST(f, count, ...) SAME(f, const char *const *) SAME(count, size_t)
CJ_COMPILE_OPTIONS(SAME_TEXT, SAME_SWITCH, SAME_LIST)

const cujit_compile_option_info *cujit_compile_option(size_t index) {
  return index < cj_option_count ? &cj_options[index].info : NULL;
}

const char *cj_option_text(const cj_option *row, const cujit_compile_options *op) {
  return op ? *(const char *const *)(const void *)((const char *)op + row->info.offset) : NULL;
}

/* The row's variable: 1 on, 0 off or unset, -1 a value not understood (why says so). Read at
** each use, not once: a program may set it between compiles, and getenv is cheap beside them. */
static int switch_env(const cj_option *row, char *why, size_t len) {
  int on = 0;
  if (!row->env) return 0;
  int got = cj_env_bool(row->env, &on, why, len);
  return got == CJ_ENV_BAD ? -1 : got == CJ_ENV_SET && on;
}

/* The switch as a compile sees it: the member, or its variable (a refused value reads as off
** here; cj_options_nvrtc refuses it before anything is compiled). */
static int option_switch(const cj_option *row, const cujit_compile_options *op) {
  char why[8];
  if (op && *(const int *)(const void *)((const char *)op + row->info.offset) != 0) return 1;
  return switch_env(row, why, sizeof why) == 1;
}

int cj_options_switch_on(const cujit_compile_options *op, size_t offset) {
  for (size_t r = 0; r < cj_option_count; r++)
    if (cj_options[r].info.kind == CUJIT_OPTION_SWITCH && cj_options[r].info.offset == offset)
      return option_switch(&cj_options[r], op);
  return 0;
}

const char *const *cj_option_items(const cj_option *row, const cujit_compile_options *op,
                                   size_t *count) {
  *count = 0;
  if (!op) return NULL;
  *count = *(const size_t *)(const void *)((const char *)op + row->info.count_offset);
  return *(const char *const *const *)(const void *)((const char *)op + row->info.offset);
}

/* --- lists ------------------------------------------------------------------------------------ */

void cj_option_list_add(cj_option_list *o, const char *flag, const char *value) {
  if (o->failed) return;
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 16;
    char **nv = realloc(o->v, cap * sizeof *nv);
    if (!nv) {
      o->failed = 1;
      return;
    }
    o->v = nv, o->cap = cap;
  }
  /* Concatenated, not formatted: every cache hit builds the list. */
  size_t fl = strlen(flag), vl = value ? strlen(value) : 0;
  char *s = malloc(fl + vl + 1);
  if (!s) {
    o->failed = 1;
    return;
  }
  memcpy(s, flag, fl);
  if (vl) memcpy(s + fl, value, vl);
  s[fl + vl] = '\0';
  o->v[o->n++] = s;
}

int cj_option_list_has(const cj_option_list *o, const char *flag) {
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->v[i], flag) == 0) return 1;
  return 0;
}

void cj_option_list_free(cj_option_list *o) {
  for (size_t i = 0; i < o->n; i++) free(o->v[i]);
  free(o->v);
  memset(o, 0, sizeof *o);
}

/* --- checks ----------------------------------------------------------------------------------- */

static int valid_define(const char *d) {
  if (!d || !(isalpha((unsigned char)*d) || *d == '_')) return 0;
  while (*d && *d != '=')
    if (!(isalnum((unsigned char)*d) || *d == '_'))
      return 0;
    else
      d++;
  return 1;
}

static int valid_std(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '+')) return 0;
  return 1;
}

/* 1 when value `v` (item `i` of a list) passes its row's check; else 0 and, with room, why. */
static int check_value(const cj_option *row, const char *v, size_t i, char *why, size_t len) {
  struct stat st;
  switch (row->check) {
  case CJ_CHECK_STD:
    if (valid_std(v)) return 1;
    snprintf(why, len, "%s '%s' is not a language standard: write c++17, c++20, ...", row->item, v);
    return 0;
  case CJ_CHECK_DEFINE:
    if (valid_define(v)) return 1;
    snprintf(why, len, "%s %zu ('%s') is not NAME or NAME=VALUE with NAME a C identifier",
             row->item, i, v ? v : "(NULL)");
    return 0;
  case CJ_CHECK_DIR:
    if (!v || !*v) break;
    if (stat(v, &st) != 0)
      snprintf(why, len, "%s '%s' cannot be used: %s", row->item, v, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
      snprintf(why, len, "%s '%s' is not a directory", row->item, v);
    else
      return 1;
    return 0;
  case CJ_CHECK_NONEMPTY:
    if (v && *v) return 1;
    break;
  default:
    return 1;
  }
  snprintf(why, len, "%s %zu is NULL or empty", row->item, i);
  return 0;
}

/* The name of a list's count member, for "define_count is 2 but defines is NULL". */
static const char *count_name(const cj_option *row) {
#define COUNT_NONE(f, ...)
#define COUNT_LIST(f, count, ...)                                                                  \
  if (row->info.offset == offsetof(cujit_compile_options, f)) return #count;
  CJ_COMPILE_OPTIONS(COUNT_NONE, COUNT_NONE, COUNT_LIST)
  return "its count";
}

/* --- the lines -------------------------------------------------------------------------------- */

cujit_status cj_options_nvrtc(cujit_engine *engine, const cujit_compile_options *op,
                              const char *arch, cj_option_list *out) {
  char why[PATH_MAX + 256];
  for (size_t r = 0; r < cj_option_count; r++) /* a variable not understood: nothing compiles */
    if (cj_options[r].info.kind == CUJIT_OPTION_SWITCH &&
        switch_env(&cj_options[r], why, sizeof why) < 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s; it turns %s on for every compile",
                     why, cj_options[r].info.field);
  for (size_t r = 0; r < cj_option_count; r++) { /* the TEXT rows first: -arch=, -std= */
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_TEXT || !row->nvrtc) continue;
    const char *v = row->key == CJ_KEY_TARGET ? arch : cj_option_text(row, op);
    if (!v) v = row->fallback;
    if (!v) continue;
    if (!check_value(row, v, 0, why, sizeof why))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s", why);
    cj_option_list_add(out, row->nvrtc, v);
  }
  for (size_t r = 0; r < cj_option_count; r++)
    if (cj_options[r].info.kind == CUJIT_OPTION_SWITCH && cj_options[r].nvrtc &&
        option_switch(&cj_options[r], op))
      cj_option_list_add(out, cj_options[r].nvrtc, NULL);
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_LIST || !row->nvrtc) continue;
    size_t n;
    const char *const *items = cj_option_items(row, op, &n);
    if (n && !items)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s is %zu but %s is NULL",
                     count_name(row), n, row->info.field);
    for (size_t i = 0; i < n; i++) {
      if (!check_value(row, items[i], i, why, sizeof why))
        return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s", why);
      cj_option_list_add(out, row->nvrtc, items[i]);
    }
  }
  if (out->failed) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  return CUJIT_OK;
}

/* An NVRTC flag that means the same to g++: macros, include paths and the standard. Others
** (-arch, --use_fast_math, -maxrregcount, ...) describe the GPU build. */
static void add_nvrtc_flag_for_cxx(cj_option_list *out, const char *flag, cj_buf *notes) {
  static const char *const kept[] = {"-D", "-U", "-I", "-std=", NULL};
  if (strncmp(flag, "--include-path=", 15) == 0) {
    cj_option_list_add(out, "-I", flag + 15);
    return;
  }
  for (size_t i = 0; kept[i]; i++)
    if (strncmp(flag, kept[i], strlen(kept[i])) == 0) {
      cj_option_list_add(out, flag, NULL);
      return;
    }
  cj_buf_printf(notes, "cujit: extra flag '%s' is for NVRTC; the CPU device leaves it out\n", flag);
}

void cj_options_cxx(const cujit_compile_options *op, cj_option_list *out, cj_buf *notes) {
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_TEXT || !row->cxx) continue;
    const char *v = cj_option_text(row, op);
    if (v || row->fallback) cj_option_list_add(out, row->cxx, v ? v : row->fallback);
  }
  size_t first_switch = out->n;
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_SWITCH || !row->cxx || !option_switch(row, op)) continue;
    int given = 0; /* -lineinfo and -G are both -g */
    for (size_t i = first_switch; i < out->n; i++) given |= strcmp(out->v[i], row->cxx) == 0;
    if (!given) cj_option_list_add(out, row->cxx, NULL);
  }
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_LIST || !row->cxx) continue;
    size_t n;
    const char *const *items = cj_option_items(row, op, &n);
    for (size_t i = 0; items && i < n; i++)
      if (row->cxx == CJ_CXX_AS_NVRTC)
        add_nvrtc_flag_for_cxx(out, items[i], notes);
      else
        cj_option_list_add(out, row->cxx, items[i]);
  }
}

int cj_options_ptxas_verbose(const char *const *flags, size_t n) {
  static const char *const to_ptxas[] = {"--ptxas-options=", "-Xptxas="};
  for (size_t i = 0; flags && i < n; i++)
    for (size_t k = 0; flags[i] && k < 2; k++) {
      size_t prefix = strlen(to_ptxas[k]);
      const char *value = flags[i] + prefix;
      if (strncmp(flags[i], to_ptxas[k], prefix) == 0 &&
          (strcmp(value, "-v") == 0 || strcmp(value, "--verbose") == 0))
        return 1;
    }
  return 0;
}

int cj_options_memo(cj_key_builder *kb, const cujit_compile_options *op) {
  char why[PATH_MAX + 256];
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind == CUJIT_OPTION_TEXT && row->key != CJ_KEY_TARGET) {
      const char *v = cj_option_text(row, op);
      if (v && !check_value(row, v, 0, why, sizeof why)) return 0;
      cj_key_add_str(kb, v);
    } else if (row->info.kind == CUJIT_OPTION_SWITCH) {
      if (switch_env(row, why, sizeof why) < 0) return 0;
      int on = option_switch(row, op); /* the variable's too: CUJIT_LINEINFO changes the code */
      cj_key_add(kb, &on, sizeof on);
    } else if (row->info.kind == CUJIT_OPTION_LIST) {
      size_t n;
      const char *const *items = cj_option_items(row, op, &n);
      if (n && !items) return 0;
      cj_key_add(kb, &n, sizeof n);
      for (size_t i = 0; i < n; i++) {
        if (!check_value(row, items[i], i, why, sizeof why)) return 0;
        cj_key_add_str(kb, items[i]);
      }
    }
  }
  return 1;
}

/* --- copies ----------------------------------------------------------------------------------- */

/* The rows a copy keeps: those of the unit (signatures, name expressions) describe the source
** given with them, and a defined kernel has its own. */
static int copied(const cj_option *row) {
  return row->key != CJ_KEY_UNIT && row->key != CJ_KEY_NONE &&
         row->info.kind != CUJIT_OPTION_SWITCH;
}

cujit_status cj_options_check_lists(cujit_engine *engine, const cujit_compile_options *op) {
  for (size_t r = 0; op && r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    if (row->info.kind != CUJIT_OPTION_LIST || !copied(row)) continue;
    size_t n;
    const char *const *items = cj_option_items(row, op, &n);
    if (n && !items)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "compile options: %s is %zu but %s is NULL", count_name(row), n,
                     row->info.field);
    for (size_t i = 0; i < n; i++)
      if (!items[i])
        return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "compile options: %s[%zu] is NULL",
                       row->info.field, i);
  }
  return CUJIT_OK;
}

/* Each list's pointer array starts aligned: the text before it may end anywhere. */
#define PTR_ALIGN(x) (((x) + sizeof(char *) - 1) & ~(sizeof(char *) - 1))

int cj_options_copy(const cujit_compile_options *src, cujit_compile_options *dst, void **storage) {
  *dst = (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  *storage = NULL;
  if (!src) return 1;
  *dst = *src;
  size_t total = 1;
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    size_t n = 0;
    const char *const *items = NULL;
    if (row->info.kind == CUJIT_OPTION_LIST) items = cj_option_items(row, src, &n);
    const char *text = row->info.kind == CUJIT_OPTION_TEXT ? cj_option_text(row, src) : NULL;
    if (!copied(row)) continue;
    if (text) total += strlen(text) + 1;
    if (n) total += sizeof(char *) - 1 + n * sizeof(char *);
    for (size_t i = 0; i < n; i++) total += strlen(items[i]) + 1;
  }
  char *mem = malloc(total), *cursor = mem;
  if (!mem) return 0;
  for (size_t r = 0; r < cj_option_count; r++) {
    const cj_option *row = &cj_options[r];
    char *at = (char *)dst + row->info.offset;
    if (row->info.kind == CUJIT_OPTION_SWITCH) continue;
    if (row->info.kind == CUJIT_OPTION_TEXT) {
      const char *text = cj_option_text(row, src);
      if (text && copied(row)) {
        *(const char **)(void *)at = strcpy(cursor, text);
        cursor += strlen(text) + 1;
      }
      continue;
    }
    size_t n;
    const char *const *items = cj_option_items(row, src, &n);
    const char **out = NULL;
    if (!copied(row)) {
      n = 0;
    } else if (n) {
      cursor = (char *)PTR_ALIGN((uintptr_t)cursor);
      out = (const char **)(void *)cursor;
      cursor += n * sizeof(char *);
    }
    for (size_t i = 0; i < n; i++) {
      out[i] = strcpy(cursor, items[i]);
      cursor += strlen(items[i]) + 1;
    }
    *(const char *const **)(void *)at = out;
    *(size_t *)(void *)((char *)dst + row->info.count_offset) = n;
  }
  *storage = mem;
  return 1;
}
