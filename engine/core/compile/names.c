/*
** names.c -- kernels named by name expressions (CuPy's name_expressions, jitify): a template
** kernel's instantiation "scale<float>" becomes a kernel whose parameters are the template's
** with the arguments put in for its parameters, checked in the translation unit like any kernel
** (unit.c); NVRTC is given "&scale<float>" and answers its lowered name (compile.c).
*/
#include "base/base.h"
#include "lang/lexicon.h"
#include "scan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int all_blank(const char *s, const char *end) {
  for (; s < end; s++)
    if (!isspace((unsigned char)*s)) return 0;
  return 1;
}

static char *trimmed(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  return cj_strndup(s, n);
}

/* The template arguments of "scale<float, 4>" into args (malloc'd strings), up to max. */
static size_t template_args(const char *lt, const char *end, char **args, size_t max) {
  size_t n = 0;
  int depth = 0;
  const char *start = lt + 1;
  for (const char *c = lt + 1; c < end && n < max; c++) {
    if (*c == '<' || *c == '(') depth++;
    if ((*c == '>' || *c == ')') && depth > 0) depth--;
    if (depth == 0 && *c == ',') args[n++] = trimmed(start, (size_t)(c - start)), start = c + 1;
  }
  if (n < max && !all_blank(start, end)) args[n++] = trimmed(start, (size_t)(end - start));
  return n;
}

/* The kernel instantiated by one name expression, added to the scan. */
static cujit_status instantiate(cj_scan *scan, const char *expr, char *err, size_t err_len) {
  char entry[320];
  if (!cj_entry_identifier(expr, entry, sizeof entry)) {
    snprintf(err, err_len,
             "name expression '%s' is not a kernel's name: write NAME<ARGS>, such as "
             "\"scale<float>\" or \"ns::transpose<double, 32>\" (at most 150 characters)",
             expr);
    return CUJIT_ERROR_INVALID_ARGUMENT;
  }
  const char *lt = strchr(expr, '<'), *gt = strrchr(expr, '>');
  size_t base_len = lt ? (size_t)(lt - expr) : strlen(expr);
  char *base = trimmed(expr, base_len);
  if (!base) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  for (size_t i = 0; i < scan->count; i++) /* a C++-linkage kernel read already */
    if (strcmp(scan->kernels[i].sig.name, expr) == 0 && scan->kernels[i].cxx) {
      free(base);
      return CUJIT_OK;
    }
  const cj_scan_template *t = NULL;
  for (size_t i = 0; lt && gt > lt && !t && i < scan->ntmpls; i++)
    if (strcmp(scan->tmpls[i].name, base) == 0) t = &scan->tmpls[i];
  free(base);
  if (!t) {
    cj_buf names = {0};
    for (size_t i = 0; i < scan->ntmpls; i++)
      cj_buf_printf(&names, "%s%s", i ? ", " : "", scan->tmpls[i].name);
    snprintf(err, err_len,
             "name expression '%s' names no template kernel of the source (%s%s); write "
             "NAME<ARGS>, such as \"scale<float>\"",
             expr, names.data ? "it has " : "it has none", names.data ? names.data : "");
    cj_buf_free(&names);
    return CUJIT_ERROR_NOT_FOUND;
  }
  char *args[CJ_MAX_TYPE_VARS * 4] = {0};
  size_t nargs = template_args(lt, gt, args, sizeof args / sizeof args[0]);
  cujit_status st = CUJIT_OK;
  /* The trailing arguments left out take their defaults, up to the first parameter without one;
  ** a default may name the parameters before it (`typename U = T`): those are put in first. */
  for (; nargs < t->ntparams && nargs < sizeof args / sizeof args[0] && t->tdefaults[nargs] &&
         st == CUJIT_OK;
       nargs++)
    if (!(args[nargs] =
              cj_replace_words(t->tdefaults[nargs], strlen(t->tdefaults[nargs]),
                               (const char *const *)t->tparams, (const char *const *)args, nargs)))
      st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  if (st == CUJIT_OK && nargs != t->ntparams) {
    snprintf(err, err_len,
             "name expression '%s': template kernel '%s' takes %zu argument(s), not %zu", expr,
             t->name, t->ntparams, nargs);
    st = CUJIT_ERROR_SIGNATURE;
  }
  char *params = st == CUJIT_OK ? cj_replace_words(t->params, strlen(t->params),
                                                   (const char *const *)t->tparams,
                                                   (const char *const *)args, nargs)
                                : NULL;
  for (size_t i = 0; i < nargs; i++) free(args[i]);
  if (st != CUJIT_OK) return st;
  cj_scan_kernel *ks = params ? realloc(scan->kernels, (scan->count + 1) * sizeof *ks) : NULL;
  if (!ks) {
    free(params);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  scan->kernels = ks;
  cj_scan_kernel *k = &ks[scan->count];
  memset(k, 0, sizeof *k);
  k->cxx = 1;
  k->scope_depth = t->scope_depth; /* its check goes where the template's types are declared */
  if (t->scope && !(k->scope = cj_strdup(t->scope))) st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  if (st == CUJIT_OK) st = cj_scan_read_params(scan, expr, params, &k->sig, err, err_len);
  free(params);
  if (st == CUJIT_OK)
    scan->count++;
  else
    free(k->scope);
  return st;
}

cujit_status cj_scan_instantiate(cj_scan *scan, const char *const *exprs, size_t count, char *err,
                                 size_t err_len) {
  if (err && err_len) err[0] = '\0';
  if (!count) return CUJIT_OK;
  if (!exprs) {
    snprintf(err, err_len, "name_expression_count is %zu but name_expressions is NULL", count);
    return CUJIT_ERROR_INVALID_ARGUMENT;
  }
  size_t first = scan->count;
  cujit_status st = CUJIT_OK;
  for (size_t i = 0; i < count && st == CUJIT_OK; i++) {
    if (!exprs[i] || !*exprs[i]) {
      snprintf(err, err_len, "name expression %zu is NULL or empty", i + 1);
      st = CUJIT_ERROR_INVALID_ARGUMENT;
    }
    for (size_t j = first; j < scan->count && st == CUJIT_OK; j++)
      if (strcmp(scan->kernels[j].sig.name, exprs[i]) == 0) {
        snprintf(err, err_len, "name expression '%s' is given twice", exprs[i]);
        st = CUJIT_ERROR_INVALID_ARGUMENT;
      }
    if (st == CUJIT_OK) st = instantiate(scan, exprs[i], err, err_len);
  }
  if (st != CUJIT_OK) return st;
  if (!cj_unit_add_checks(&scan->text, scan->kernels, first, scan->count)) {
    snprintf(err, err_len, "out of memory writing the translation unit");
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  return CUJIT_OK;
}

cujit_status cj_scan_copy_kernels(const cj_scan *scan, cj_signature **kernels, int **cxx,
                                  size_t *count) {
  *kernels = NULL, *cxx = NULL, *count = 0;
  cj_signature *out = calloc(scan->count ? scan->count : 1, sizeof *out);
  int *linkage = calloc(scan->count ? scan->count : 1, sizeof *linkage);
  if (!out || !linkage) {
    free(out);
    free(linkage);
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  size_t n = 0;
  for (size_t i = 0; i < scan->count; i++) {
    size_t j = 0;
    while (j < n && strcmp(out[j].name, scan->kernels[i].sig.name) != 0) j++;
    if (j < n) { /* another parameter list of the same name: C++ linkage if any of them has it */
      linkage[j] |= scan->kernels[i].cxx;
      continue;
    }
    if (cj_signature_copy(&scan->kernels[i].sig, &out[n]) != CUJIT_OK) {
      for (size_t k = 0; k < n; k++) cj_signature_free(&out[k]);
      free(out);
      free(linkage);
      return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
    linkage[n++] = scan->kernels[i].cxx;
  }
  *kernels = out, *cxx = linkage, *count = n;
  return CUJIT_OK;
}
