/*
** source.c -- the translation unit for a signature + body kernel, with #line directives that name
** each part, and the reading of NVRTC's log back into the user's terms ("line 3 of its body").
*/
#include "source.h"
#include "base/base.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has_embedded_header(const char *name) {
  for (size_t i = 0; i < cj_embedded_header_count; i++)
    if (strcmp(cj_embedded_header_names[i], name) == 0) return 1;
  return 0;
}

/* The C type bound to type variable i, or NULL when still unbound. */
static const char *bound_type(const cj_signature *sig, const char *const *type_values, size_t i) {
  if (type_values) return type_values[i];
  if (sig->specialized) return cujit_dtype_ctype(sig->bound[i]);
  return NULL;
}

/* Whether a parameter's type, or a type variable's bound type, names `type` (__half, or
** __nv_bfloat16): the unit then includes the toolkit header that defines it. */
static int mentions_type(const cj_signature *sig, const char *const *type_values,
                         const char *type) {
  for (size_t i = 0; i < sig->nparams; i++)
    if (strstr(sig->params[i].type, type)) return 1;
  for (size_t i = 0; i < sig->ntype_vars; i++) {
    const char *t = bound_type(sig, type_values, i);
    if (t && strstr(t, type)) return 1;
  }
  return 0;
}

static void add_text(cj_buf *b, const char *text) {
  size_t n = strlen(text);
  cj_buf_add(b, text, n);
  if (n == 0 || text[n - 1] != '\n') cj_buf_puts(b, "\n");
}

char *cj_source_for_kernel(const cj_signature *sig, const char *body, const char *preamble,
                           const char *const *type_values) {
  if (!sig || !sig->name || !body) return NULL;
  char *formatted = cj_signature_format(sig);
  if (!formatted) return NULL;
  cj_buf b = {0};
  cj_buf_printf(&b, "#line 1 \"%s:generated\"\n", sig->name);
  if (has_embedded_header("cujit/prelude.h")) cj_buf_puts(&b, "#include <cujit/prelude.h>\n");
  if (mentions_type(sig, type_values, "half")) cj_buf_puts(&b, "#include <cuda_fp16.h>\n");
  if (mentions_type(sig, type_values, "__nv_bfloat16")) cj_buf_puts(&b, "#include <cuda_bf16.h>\n");
  for (size_t i = 0; i < sig->ntype_vars; i++) {
    const char *t = bound_type(sig, type_values, i);
    if (t) cj_buf_printf(&b, "typedef %s %s;\n", t, sig->type_vars[i]);
  }
  if (preamble && *preamble) {
    cj_buf_printf(&b, "#line 1 \"%s:preamble\"\n", sig->name);
    add_text(&b, preamble);
  }
  cj_buf_printf(&b, "#line 1 \"%s:signature\"\n", sig->name);
  cj_buf_printf(&b, "extern \"C\" __global__ void %s {\n", formatted);
  cj_buf_printf(&b, "#line 1 \"%s\"\n", sig->name);
  add_text(&b, body);
  cj_buf_puts(&b, "}\n");
  free(formatted);
  if (b.failed) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
}

const cj_source_part cj_source_parts[] = {{"", ".cu"},
                                          {":preamble", ".preamble.cu"},
                                          {":signature", ".signature.cu"},
                                          {":generated", ".generated.cu"}};
const size_t cj_source_part_count = sizeof cj_source_parts / sizeof *cj_source_parts;

/* Whether the file name `f` (f_len bytes) is the part `suffix` of kernel `name`: "NAME:suffix",
** or its kept copy ".../NAME" + kept. */
static int names_part(const char *f, size_t f_len, const char *name, const char *suffix) {
  size_t nl = strlen(name), sl = strlen(suffix);
  if (f_len == nl + sl && memcmp(f, name, nl) == 0 && memcmp(f + nl, suffix, sl) == 0) return 1;
  for (size_t i = 0; i < cj_source_part_count; i++) {
    if (strcmp(cj_source_parts[i].suffix, suffix) != 0) continue;
    size_t kl = strlen(cj_source_parts[i].kept), tail = nl + kl;
    return f_len > tail && f[f_len - tail - 1] == '/' && memcmp(f + f_len - tail, name, nl) == 0 &&
           memcmp(f + f_len - kl, cj_source_parts[i].kept, kl) == 0;
  }
  return 0;
}

int cj_source_is_kernel(const char *source, const char *name) {
  if (!source || !name) return 0;
  static const char mark[] = "\n#line 1 \""; /* then the body's file name, '"' and a newline */
  size_t ml = sizeof mark - 1;
  for (const char *p = strstr(source, mark); p; p = strstr(p + 1, mark)) {
    const char *end = strstr(p + ml, "\"\n"), *nl = strchr(p + ml, '\n');
    if (end && (!nl || end < nl) && names_part(p + ml, (size_t)(end - p - ml), name, "")) return 1;
  }
  return 0;
}

/* One diagnostic line of NVRTC: "FILE(LINE): error: TEXT". */
typedef struct diag {
  const char *file;
  size_t file_len;
  long line;
  const char *text; /* from "error: ..." to the end of the line */
  size_t text_len;
} diag;

static int parse_diag(const char *s, size_t n, diag *d) {
  const char *close = NULL;
  for (size_t i = 0; i + 2 < n; i++)
    if (s[i] == ')' && s[i + 1] == ':' && s[i + 2] == ' ') close = s + i;
  if (!close) return 0;
  const char *open = close;
  while (open > s && isdigit((unsigned char)open[-1])) open--;
  if (open == close || open == s || open[-1] != '(') return 0;
  const char *text = close + 3;
  size_t tl = n - (size_t)(text - s);
  if (!(tl >= 5 && memcmp(text, "error", 5) == 0) &&
      !(tl >= 18 && memcmp(text, "catastrophic error", 18) == 0))
    return 0;
  d->file = s;
  d->file_len = (size_t)(open - 1 - s);
  d->line = strtol(open, NULL, 10);
  d->text = text;
  d->text_len = tl;
  return 1;
}

static int file_is(const diag *d, const char *name, const char *suffix) {
  return names_part(d->file, d->file_len, name, suffix);
}

static void describe(cj_buf *b, const diag *d, const char *name, int kernel) {
  if (kernel && file_is(d, name, ""))
    cj_buf_printf(b, "line %ld of its body", d->line);
  else if (kernel && file_is(d, name, ":preamble"))
    cj_buf_printf(b, "line %ld of its preamble", d->line);
  else if (kernel && file_is(d, name, ":signature"))
    cj_buf_puts(b, "its signature");
  else if (kernel && file_is(d, name, ":generated"))
    cj_buf_printf(b, "line %ld of the code cujit generates around it", d->line);
  else
    cj_buf_printf(b, "%.*s:%ld", (int)d->file_len, d->file, d->line);
}

char *cj_compile_error_message(const char *name, const char *source, const char *log) {
  if (!name) name = "<source>";
  if (!log) log = "";
  int kernel = cj_source_is_kernel(source, name);
  cj_buf b = {0};
  if (kernel)
    cj_buf_printf(&b, "kernel '%s' failed to compile", name);
  else
    cj_buf_printf(&b, "'%s' failed to compile", name);
  diag d;
  int found = 0;
  for (const char *s = log; *s && !found;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (parse_diag(s, n, &d)) found = 1;
    s += n + (e ? 1 : 0);
  }
  if (found) {
    cj_buf_puts(&b, ": ");
    describe(&b, &d, name, kernel);
    cj_buf_printf(&b, ": %.*s", (int)d.text_len, d.text);
  }
  cj_buf_printf(&b, "\n\n%s", *log ? log : "(NVRTC wrote no log)");
  if (b.failed) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
}
