/*
** program_globals.c -- a program's __device__, __constant__ and __managed__ variables by name
** (cujit_program_global), static ones and those of namespaces too: the address the backend finds
** in the program's module on the current
** device, as a buffer view, and the dtype and shape read from the variable's declaration in the
** translation unit (`__constant__ float taps[3][3];`).
*/
#include "backend/backend.h"
#include "lang/lexicon.h"
#include "lang/symbols.h"
#include "run/memory.h"
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct declared {
  cujit_dtype dtype;
  int ndim;
  size_t shape[3];
} declared;

static int is_specifier(const char *text, cj_token t) {
  return cj_tok_is(text, t, "__device__") || cj_tok_is(text, t, "__constant__") ||
         cj_tok_is(text, t, "__managed__");
}

/* The type words between the specifiers and the name: one named type, or integer keywords. */
static cujit_dtype type_of(const char *text, const cj_token *words, int n) {
  char spelling[64] = "";
  size_t len = 0;
  int integer = 0;
  cj_type_desc desc;
  for (int i = 0; i < n; i++) {
    const char *w = text + words[i].pos;
    size_t wl = words[i].len;
    if (cj_is_qualifier(w, wl) || is_specifier(text, words[i]) ||
        cj_tok_is(text, words[i], "static") || cj_tok_is(text, words[i], "extern"))
      continue;
    if (cj_is_integer_word(w, wl)) {
      if (len + wl + 2 > sizeof spelling) return CUJIT_DTYPE_NONE;
      if (len) spelling[len++] = ' ';
      memcpy(spelling + len, w, wl);
      spelling[len += wl] = '\0';
      integer = 1;
    } else if (n == 1 || !integer) {
      if (cj_named_type(w, wl, &desc) && desc.spelling) return desc.dtype;
      return CUJIT_DTYPE_NONE;
    }
  }
  if (integer && cj_integer_type(spelling, &desc)) return desc.dtype;
  return integer && cj_named_type(spelling, len, &desc) ? desc.dtype : CUJIT_DTYPE_NONE;
}

/* Finds `name`'s declaration with a __device__-like specifier; 0 if none read. (The size the
** device gives is checked against it: a function's parameter of that name does not mislead.) */
static int read_declaration(const char *text, const char *name, declared *out) {
  size_t pos = 0, end = strlen(text);
  cj_token words[16];
  int nwords = 0, specified = 0, depth = 0;
  for (cj_token t = cj_next_token(text, &pos, end); t.kind != CJ_TK_END;
       t = cj_next_token(text, &pos, end)) {
    if (t.kind == CJ_TK_PUNCT && (text[t.pos] == '{' || text[t.pos] == '}' || text[t.pos] == ';')) {
      depth += text[t.pos] == '{' ? 1 : text[t.pos] == '}' ? -1 : 0;
      nwords = 0, specified = 0;
      continue;
    }
    if (t.kind == CJ_TK_PUNCT && text[t.pos] == '#') { /* a directive: its line is not C */
      const char *eol = strchr(text + pos, '\n');
      pos = eol ? (size_t)(eol - text) : end;
      nwords = 0, specified = 0;
      continue;
    }
    if (t.kind != CJ_TK_IDENT) continue; /* at any depth: a namespace's variables too */
    if (is_specifier(text, t)) specified = 1, nwords = 0; /* the type follows the specifiers */
    if (!specified || !cj_tok_is(text, t, name)) {
      if (nwords < 16) words[nwords++] = t;
      continue;
    }
    out->dtype = type_of(text, words, nwords);
    out->ndim = 0;
    cj_token next = cj_next_token(text, &pos, end);
    while (cj_tok_is(text, next, "[") && out->ndim < 3) {
      cj_token number = cj_next_token(text, &pos, end);
      cj_token close = cj_next_token(text, &pos, end);
      if (number.kind != CJ_TK_NUMBER || !cj_tok_is(text, close, "]")) {
        /* [MAX_TAPS], [2 * N]: the element type is known, the count is the device's bytes over
        ** its size (describe) */
        out->ndim = 1, out->shape[0] = 0;
        return out->dtype != CUJIT_DTYPE_NONE;
      }
      out->shape[out->ndim++] = strtoull(text + number.pos, NULL, 0);
      next = cj_next_token(text, &pos, end);
    }
    return out->dtype != CUJIT_DTYPE_NONE;
  }
  return 0;
}

/* What the declaration says when it agrees with the driver's size, else bytes (or elements). */
static void describe(const cujit_program *program, const char *name, size_t bytes, declared *d) {
  declared read;
  const char *last = strrchr(name, ':'); /* "ns::taps" is declared as "taps" in its namespace */
  if (read_declaration(program->source, last ? last + 1 : name, &read)) {
    size_t n = cujit_dtype_size(read.dtype);
    for (int i = 0; i < read.ndim; i++) n *= read.shape[i];
    if (read.ndim == 0) read.shape[0] = 1, read.ndim = 1;
    if (n == bytes) {
      *d = read;
      return;
    }
    if (bytes % cujit_dtype_size(read.dtype) == 0) {
      d->dtype = read.dtype, d->ndim = 1, d->shape[0] = bytes / cujit_dtype_size(read.dtype);
      return;
    }
  }
  d->dtype = CUJIT_DTYPE_NONE, d->ndim = 1, d->shape[0] = bytes;
}

static int is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

/* The variable the PTX line [line, end) declares in global or constant memory at module scope
** (`.visible .global .align 4 .u32 name;`, `.const .align 4 .b8 _ZL4taps[64];`, `.global ... name
** = {..}`): its name's length, at *at; 0 when the line declares none. */
static size_t declared_name(const char *line, const char *end, const char **at) {
  while (line < end && (*line == ' ' || *line == '\t')) line++;
  static const char *const starts[] = {".visible ", ".extern ", ".weak ", ".global ", ".const "};
  int module_scope = 0; /* a directive at module scope, not an instruction or a parameter */
  for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
    module_scope |= strncmp(line, starts[i], strlen(starts[i])) == 0;
  if (!module_scope) return 0;
  const char *p = NULL;
  for (const char *q = line; q < end && !p; q++)
    if (strncmp(q, ".global ", 8) == 0 || strncmp(q, ".const ", 7) == 0) p = q + 1;
  if (!p) return 0;
  const char *stop = p;
  while (stop < end && *stop != ';' && *stop != '[' && *stop != '=') stop++;
  while (stop > p && stop[-1] == ' ') stop--;
  const char *name = stop;
  while (name > p && is_ident_char(name[-1])) name--;
  if (name == stop || name[-1] != ' ') return 0;
  *at = name;
  return (size_t)(stop - name);
}

/* The symbol of the variable a GPU program's PTX declares under `name` as the source names it
** (cj_symbol_names_variable: a static one, one in a namespace, named or anonymous, has a mangled
** or local name there); how many fit. The driver is not asked about other names: for a kernel's
** name cuLibraryGetGlobal does not answer NOT_FOUND (seen on the H200), and a function is not a
** variable on any device. */
static int ptx_variable(const char *ptx, const char *name, char *symbol, size_t len) {
  int count = 0;
  for (const char *line = ptx; *line;) {
    const char *end = strchr(line, '\n'), *at = NULL;
    if (!end) end = line + strlen(line);
    size_t n = declared_name(line, end, &at);
    if (n && cj_symbol_names_variable(at, n, name) && count++ == 0)
      snprintf(symbol, len, "%.*s", (int)n, at);
    line = *end ? end + 1 : end;
  }
  return count;
}

cujit_status cujit_program_global(cujit_program *program, const char *name, cujit_buffer **out,
                                  cujit_dtype *dtype, int *ndim, size_t shape[3]) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_program_global";
  if (out) *out = NULL;
  if (!program || !name || !out)
    return cj_fail(program ? program->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s needs a program, a variable name and an output pointer", fn);
  *out = NULL;
  cujit_engine *engine = program->engine;
  cujit_device *dev = NULL;
  void *module = NULL;
  uint64_t addr = 0;
  size_t bytes = 0;
  char symbol[512];
  const char *symbol_name =
      name; /* the CPU device finds it by the source's name (cpu_get_global) */
  if (strncmp(program->arch, "sm_", 3) == 0 || strncmp(program->arch, "compute_", 8) == 0) {
    int fits = program->ptx && *name ? ptx_variable(program->ptx, name, symbol, sizeof symbol) : 0;
    if (fits == 0 || strlen(symbol) + 1 >= sizeof symbol)
      return cj_fail(engine, CUJIT_ERROR_NOT_FOUND,
                     "the program has no __device__ or __constant__ variable '%s'; name one as "
                     "the source does ('taps', 'ns::taps')",
                     name);
    if (fits > 1)
      return cj_fail(engine, CUJIT_ERROR_NOT_FOUND,
                     "the name '%s' fits %d variables of the program (in anonymous namespaces or "
                     "static ones of its headers): qualify it with its namespace",
                     name, fits);
    symbol_name = symbol;
  }
  cujit_status st = cj_current_device(engine, &dev);
  if (st == CUJIT_OK) st = cj_device_enter(dev);
  if (st == CUJIT_OK) st = cj_program_module(program, dev, &module);
  if (st == CUJIT_OK) st = dev->ops->get_global(dev, module, symbol_name, &addr, &bytes);
  if (st == CUJIT_OK && bytes == 0)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the variable '%s' has no bytes", fn,
                 name);
  if (st != CUJIT_OK) return st;
  declared d;
  describe(program, name, bytes, &d);
  st = cj_buffer_new_view(engine, dev, __atomic_load_n(&dev->generation, __ATOMIC_ACQUIRE), addr,
                          bytes, d.dtype, NULL, out);
  if (st != CUJIT_OK) return st;
  if (dtype) *dtype = d.dtype;
  if (ndim) *ndim = d.ndim;
  if (shape)
    for (int i = 0; i < 3; i++) shape[i] = i < d.ndim ? d.shape[i] : 1;
  return CUJIT_OK;
}
