/*
** minimal.c -- when NVRTC compiles with -minimal (minimal.h): a unit that includes only cujit's
** in-memory headers and names nothing -minimal leaves out. The rule reads words, not meaning: a
** comment saying "texture" costs the saving, never a wrong compile; and an undefined identifier
** after all is compiled again without it.
*/
#include "minimal.h"
#include "base/env.h"

#include <stdlib.h>
#include <string.h>

#define MINIMAL_NVRTC 12040 /* NVRTC 12.4 added -minimal */

static int word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether the word at `p` begins with `start`, and with `then` (when not NULL) holding the
** character after it. */
static int begins(const char *p, const char *start, int (*then)(char)) {
  size_t n = strlen(start);
  return strncmp(p, start, n) == 0 && (!then || then(p[n]));
}

static int digit_or_upper(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

/* Whether `text` has a word -minimal might take away, outside comments: one beginning with cuda or
** CUDA (cudaError_t, cudaMalloc, CUDART_VERSION), a texture or surface function (tex or surf then
** a digit or a capital: tex2D, tex1Dfetch, texCubemap, surf2Dwrite; not "text" or "surface"),
** the macro -minimal defines (__CUDACC_RTC_MINIMAL__: a unit that reads it would change under
** it), or a launch from device code. Preprocessor lines and literals are read too. */
static int names_omitted(const char *text) {
  if (strstr(text, "<<<") || strstr(text, "__CUDACC_RTC_MINIMAL__")) return 1;
  for (const char *p = text; *p; p++) {
    if (p[0] == '/' && p[1] == '/') { /* to the end of the line */
      while (p[1] && p[1] != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      if (!end) return 0;
      p = end + 1;
    } else if (word_char(*p) && (p == text || !word_char(p[-1]))) {
      if (begins(p, "cuda", NULL) || begins(p, "CUDA", NULL) || begins(p, "tex", digit_or_upper) ||
          begins(p, "surf", digit_or_upper))
        return 1;
    }
  }
  return 0;
}

static int has_minimal(const cj_option_list *o) {
  return cj_option_list_has(o, "-minimal") || cj_option_list_has(o, "--minimal");
}

int cj_minimal_add(cujit_engine *engine, int nvrtc_version, const cj_includes *inc,
                   cj_option_list *o, cujit_status *status) {
  char why[256];
  int on = 1;
  *status = CUJIT_OK;
  if (cj_env_bool("CUJIT_MINIMAL", &on, why, sizeof why) == CJ_ENV_BAD)
    return *status = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s", why), 0;
  if (!on || nvrtc_version < MINIMAL_NVRTC || !inc->source || !inc->cacheable || inc->file_count ||
      has_minimal(o) || names_omitted(inc->source))
    return 0;
  for (size_t i = 0; i < inc->header_count; i++)
    if (names_omitted(inc->header_sources[i])) return 0;
  cj_option_list_add(o, "-minimal", NULL);
  if (o->failed)
    return *status = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory"), 0;
  return 1;
}

int cj_minimal_retry(cj_option_list *o, char **log) {
  if (!*log || !strstr(*log, "is undefined")) return 0;
  for (size_t i = 0; i < o->n; i++)
    if (strcmp(o->v[i], "-minimal") == 0) {
      free(o->v[i]);
      memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof *o->v);
      o->n--;
      break;
    }
  free(*log);
  *log = NULL;
  return 1;
}
