/*
** program_source.c -- reading a program's kernels out of the source a build was given: the host
** code elided (both compilers get, and the keys hash, the elided text), the kernels of the source
** and of the headers it includes by quoted name scanned (scan.h), name expressions instantiated,
** and after the compile each C++-linkage kernel's lowered name taken from the entry. What
** program.c's build does before and after the compile when no record answers for the text.
*/
#include "program.h"
#include "compile/host_code.h"
#include "compile/includes.h"
#include "compile/scan.h"
#include "compile/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernels defined in the headers the source includes by quoted name (found as the compiler finds
** them: the source's directory, then include_dirs and -I flags) are the program's too.
** Whether the source has an #include "..." (most include none: no resolving, no file read). */
static int includes_quoted(const char *source) {
  int quoted = 0;
  for (const char *at = strstr(source, "include"); at && !quoted; at = strstr(at + 7, "include")) {
    const char *q = at + 7;
    while (*q == ' ' || *q == '\t') q++;
    quoted = *q == '"';
  }
  return quoted;
}

/* The source's includes resolved as the options find them (`elide`: the user's headers read
** without their host code); 0 when out of memory (inc then freed). */
static int resolve_headers(const char *source, const char *name, const cujit_compile_options *op,
                           int elide, cj_includes *inc) {
  size_t ndirs = op ? op->include_dir_count : 0, nflags = op ? op->extra_flag_count : 0;
  char **flags = calloc(ndirs + nflags + 1, sizeof *flags);
  int ok = flags != NULL;
  for (size_t i = 0; ok && i < ndirs; i++) {
    size_t n = strlen(op->include_dirs[i] ? op->include_dirs[i] : "") + 16;
    if ((ok = (flags[i] = malloc(n)) != NULL))
      snprintf(flags[i], n, "--include-path=%s", op->include_dirs[i] ? op->include_dirs[i] : "");
  }
  for (size_t i = 0; ok && i < nflags; i++) flags[ndirs + i] = (char *)op->extra_flags[i];
  cj_include_request rq = {.source = source,
                           .name = name,
                           .flags = (const char *const *)flags,
                           .flag_count = ndirs + nflags,
                           .builtin_names = cj_embedded_header_names,
                           .builtin_sources = cj_embedded_header_sources,
                           .builtin_count = cj_embedded_header_count,
                           .elide_host_code = elide};
  ok = ok && cj_includes_resolve(&rq, inc);
  for (size_t i = 0; flags && i < ndirs; i++) free(flags[i]);
  free(flags);
  return ok;
}

static cujit_status read_headers(cujit_engine *engine, const char *source, const char *name,
                                 const cujit_compile_options *op, cj_scan *scan, char *err) {
  if (!includes_quoted(source)) return CUJIT_OK;
  cj_includes inc = {0};
  int ok = resolve_headers(source, name, op, 0, &inc);
  const char **texts = ok ? calloc(inc.header_count + 1, sizeof *texts) : NULL;
  size_t n = 0;
  for (size_t i = 0; texts && i < inc.header_count; i++)
    if (inc.header_names[i][0] == '/') texts[n++] = inc.header_sources[i]; /* not <cujit/...> */
  cujit_status st = texts ? cj_scan_headers(scan, texts, n, err, 1024)
                          : (snprintf(err, 1024, "out of memory reading headers"),
                             CUJIT_ERROR_OUT_OF_HOST_MEMORY);
  free(texts);
  if (ok) cj_includes_free(&inc);
  return st;
}

/* Each C++-linkage kernel's symbol: the lowered name NVRTC gave its name expression, kept in the
** entry (the CPU device's entries are named from the kernel's name: no lowered names there). */
cujit_status cj_program_lowered_names(cujit_engine *engine, const char *name, cj_scan *scan,
                                      const cj_cache_entry *e) {
  for (size_t i = 0; i < scan->count; i++) {
    cj_signature *sig = &scan->kernels[i].sig;
    if (!scan->kernels[i].cxx || !e->ptx_len) continue;
    char expr[1024];
    snprintf(expr, sizeof expr, "&%s", sig->name);
    const char *lowered = cj_cache_entry_lowered(e, expr);
    if (!lowered)
      return cj_fail(engine, CUJIT_ERROR_COMPILE,
                     "'%s': the compiled program has no lowered name for kernel '%s'; clear the "
                     "cache (cujit cache clear) and compile again",
                     name, sig->name);
    free(sig->symbol);
    if (!(sig->symbol = cj_strdup(lowered)))
      return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  return CUJIT_OK;
}

/* -default-device makes functions without an execution space device code: none is elided. */
static int default_device(const cujit_compile_options *op) {
  for (size_t i = 0; op && op->extra_flags && i < op->extra_flag_count; i++)
    if (op->extra_flags[i] && strstr(op->extra_flags[i], "default-device")) return 1;
  return 0;
}

/* The source without its host-only code, in *out (NULL when there was none to elide). Text the
** elision cannot read is compiled as it is; when it holds a launch (<<<), host code surely
** reaches the compiler, and a warning says why it was left. */
static cujit_status elide_host_code(cujit_engine *engine, const char *source, const char *name,
                                    char **out) {
  char why[256];
  size_t n = 0;
  char *text = cj_host_code_elide(source, &n, why, sizeof why);
  if (!text) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (why[0] && strstr(source, "<<<"))
    cj_warn(engine,
            "'%s': host code is not elided: %s; the source is compiled as it is (make its braces "
            "balance in each #if branch, or guard the host code with #ifndef __CUDACC_RTC__)",
            name, why);
  if (n)
    *out = text;
  else
    free(text);
  return CUJIT_OK;
}

/* The source elided again knowing what its headers keep (elided knowing *elided): a type it
** declares for a kernel of a header it includes (struct Params, then #include "kernels.cuh")
** stays. The compile resolves the headers again from the result: it keeps more, never less. */
static cujit_status elide_among_headers(const char *source, const char *name,
                                        const cujit_compile_options *op, char **elided) {
  cj_includes inc = {0};
  if (!resolve_headers(*elided, name, op, 1, &inc)) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  const char **texts = calloc(inc.header_count + 1, sizeof *texts);
  size_t n = 0, k = 0;
  for (size_t i = 0; texts && i < inc.header_count; i++)
    if (inc.header_names[i][0] == '/') texts[n++] = inc.header_sources[i]; /* not <cujit/...> */
  char why[8];
  char *text = texts ? cj_host_code_elide_among(source, texts, n, &k, why, sizeof why) : NULL;
  free(texts);
  cj_includes_free(&inc);
  if (!text) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  free(*elided);
  *elided = text;
  return CUJIT_OK;
}

cujit_status cj_program_scan(cujit_engine *engine, const char *source, const char *name,
                             const cujit_compile_options *options, cj_scan *scan) {
  char scan_err[1024];
  int kernel_source = cj_source_is_kernel(source, name); /* cujit_kernel's, not the user's */
  int given = options && options->signature_count && !kernel_source;
  char *elided = NULL; /* host code elided (host_code.h): what both compilers get, and hash */
  cujit_status st;
  if (!kernel_source && !default_device(options) &&
      (st = elide_host_code(engine, source, name, &elided)) != CUJIT_OK)
    return st;
  if (elided && includes_quoted(source) &&
      (st = elide_among_headers(source, name, options, &elided)) != CUJIT_OK)
    return free(elided), cj_fail(engine, st, "out of memory");
  if (elided) source = elided;
  st = cj_scan_prepare(source, given ? options->signatures : NULL,
                       given ? options->signature_count : 0, scan, scan_err, sizeof scan_err);
  if (st == CUJIT_OK && !given && !kernel_source)
    st = read_headers(engine, source, name, options, scan, scan_err);
  if (st == CUJIT_OK && options && options->name_expression_count && !kernel_source)
    st = cj_scan_instantiate(scan, options->name_expressions, options->name_expression_count,
                             scan_err, sizeof scan_err);
  free(elided);
  if (st != CUJIT_OK) {
    cj_scan_free(scan);
    return cj_fail(engine, st, "'%s': %s", name, scan_err);
  }
  return CUJIT_OK;
}
