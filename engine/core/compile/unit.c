/*
** unit.c -- the translation unit cujit compiles for a scan (scan.h): the source with a marker
** after each definition of a kernel of several parameter lists, then a check per kernel that
** NVRTC (or g++) refuses when the kernel it compiles has other parameters than cujit read: a
** redeclaration with C linkage for an extern "C" kernel, a static_assert on the kernel's type
** for a C++-linkage one or a template's instantiation; and for a C++ kernel of several parameter
** lists, a use of its bare name that fails, saying it is overloaded, when more than one compiles.
*/
#include "base/base.h"
#include "scan.h"

#include <stdlib.h>
#include <string.h>

/* The kernel's signature as text in a #line file name, which may hold no quote or backslash:
** written in place, each such byte then replaced by one quote mark. */
static void add_line_name(cj_buf *b, const cj_signature *sig) {
  size_t from = b->len;
  cj_signature_write(b, sig);
  for (size_t i = from; !b->failed && i < b->len; i++)
    if (b->data[i] == '"' || b->data[i] == '\\') b->data[i] = '\'';
}

static int has_opaque_param(const cj_signature *sig) {
  for (size_t i = 0; i < sig->nparams; i++)
    if (sig->params[i].size == 0) return 1;
  return 0;
}

static void add_param_types(cj_buf *b, const cj_signature *sig) {
  for (size_t i = 0; i < sig->nparams; i++) {
    if (i) cj_buf_add(b, ", ", 2);
    cj_buf_puts(b, sig->params[i].type);
  }
}

/* The redeclaration NVRTC refuses when the kernel it compiles has other parameter types, under a
** #line whose file name tells the user what happened and what to do. */
/* Whether two types are the same, for the checks of C++-linkage kernels (no <type_traits>:
** NVRTC finds it only in the toolkit's libcu++). */
static const char same_type[] =
    "#ifndef CJ_SAME_TYPE_\n#define CJ_SAME_TYPE_\n"
    "template <class A, class B> struct cj_same_type_ { static const bool v = false; };\n"
    "template <class A> struct cj_same_type_<A, A> { static const bool v = true; };\n#endif\n";

/* Built with cj_buf_puts, not a format: a cache hit writes this for every kernel. */
static void add_check(cj_buf *b, const cj_scan_kernel *k, int given) {
  const char *name = k->sig.name;
  cj_buf_puts(b, "#line 1 \"");
  if (given) {
    cj_buf_puts(b, "cujit: kernel '");
    cj_buf_puts(b, name);
    cj_buf_puts(b, "' is not compiled with the parameters of the signature given for it, ");
    add_line_name(b, &k->sig);
    cj_buf_puts(b, ": correct it in the signatures option");
  } else {
    cj_buf_puts(b, k->cxx ? "cujit: the source compiles C++ kernel '"
                          : "cujit: the source compiles kernel '");
    cj_buf_puts(b, name);
    cj_buf_puts(b, "' with other parameters than ");
    add_line_name(b, &k->sig);
    cj_buf_puts(b, k->cxx ? ", read from its text (or it is overloaded, or an #if removes it)"
                          : ", read from its text (a macro or a preprocessor condition decides "
                            "them)");
    cj_buf_puts(b, ": give its signature in the signatures option");
  }
  /* In the kernel's namespaces, where the types of its parameters are declared. A C++ kernel
  ** cannot be redeclared with C linkage: its own type must match instead. */
  cj_buf_puts(b, "\"\n");
  if (k->scope) cj_buf_puts(b, k->scope);
  cj_buf_puts(b, k->cxx ? "static_assert(cj_same_type_<decltype(&"
                        : "extern \"C\" { __global__ void ");
  cj_buf_puts(b, name);
  cj_buf_puts(b, k->cxx ? "), void (*)(" : "(");
  add_param_types(b, &k->sig);
  cj_buf_puts(b, k->cxx ? ")>::v, \"cujit: kernel parameters differ\");" : "); }");
  for (int i = 0; i < k->scope_depth; i++) cj_buf_puts(b, " }");
  cj_buf_puts(b, "\n");
}

/* The marker after a definition of a kernel whose name has several parameter lists: the PTX holds
** it only when the preprocessor kept that place. The redeclaration beside it is a second guard
** that the kernel compiled there has these parameters. (A closing brace shared by two openings
** under #if leaves the reader inside the first body for good: no marker, and the check at the end
** refuses what it did not read.) */
static void add_marker(cj_buf *b, const cj_scan_kernel *k) {
  cj_buf_puts(b, " extern \"C\" { ");
  if (!has_opaque_param(&k->sig) && !k->cxx) {
    cj_buf_printf(b, "__global__ void %s(", k->sig.name);
    add_param_types(b, &k->sig);
    cj_buf_puts(b, "); ");
  }
  cj_buf_printf(b, "__device__ char cj_variant_%s_%d; }", k->sig.name, k->variant);
}

/* A C++ kernel of several parameter lists that are all compiled is overloaded: cujit names a
** kernel by its name alone (the name expression &k), which cannot tell them apart. `&k` without a
** target type fails then, under a #line whose file name says so, with each parameter list; it
** compiles when an #if keeps one of them. Once per name, at its first parameter list. */
static void add_overload_check(cj_buf *b, const cj_scan_kernel *ks, size_t n, size_t first) {
  const cj_scan_kernel *k = &ks[first];
  cj_buf_puts(b, "#line 1 \"cujit: C++ kernel '");
  cj_buf_puts(b, k->sig.name);
  cj_buf_puts(b, "' is overloaded, and cujit names a kernel by its name alone:");
  for (size_t i = first, m = 0; i < n; i++)
    if (!strcmp(ks[i].sig.name, k->sig.name)) {
      cj_buf_puts(b, m++ ? " and " : " ");
      add_line_name(b, &ks[i].sig);
    }
  cj_buf_puts(b, ". Give each its own name (extern 'C' names keep them apart too), or keep one "
                 "under an #if\"\n");
  if (k->scope) cj_buf_puts(b, k->scope);
  cj_buf_puts(b, "static_assert(sizeof(&");
  cj_buf_puts(b, k->sig.name);
  cj_buf_puts(b, ") != 0, \"cujit: overloaded kernel\");");
  for (int i = 0; i < k->scope_depth; i++) cj_buf_puts(b, " }");
  cj_buf_puts(b, "\n");
}

static int by_position(const void *a, const void *b) {
  size_t x = ((const cj_definition_end *)a)->pos, y = ((const cj_definition_end *)b)->pos;
  return x < y ? -1 : x > y;
}

/* The source with a marker after each definition of a kernel of several parameter lists, then a
** check for each kernel whose parameters cujit can all size (the others cannot be launched). */
char *cj_unit_text(const char *source, const cj_scan_kernel *ks, size_t n, cj_definition_end *ends,
                   size_t nends, int given) {
  cj_buf b = {0};
  size_t from = 0;
  if (nends) qsort(ends, nends, sizeof *ends, by_position);
  for (size_t i = 0; i < nends; i++) {
    const cj_scan_kernel *k = &ks[ends[i].kernel];
    if (k->variant == 0) continue;
    cj_buf_add(&b, source + from, ends[i].pos - from);
    add_marker(&b, k);
    from = ends[i].pos;
  }
  cj_buf_puts(&b, source + from);
  if (n) cj_buf_puts(&b, "\n\n"); /* a last line ending in a backslash joins only the first */
  for (size_t i = 0; i < n; i++)
    if (ks[i].cxx) {
      cj_buf_puts(&b, same_type);
      break;
    }
  for (size_t i = 0; i < n; i++)
    if (ks[i].variant == 0 && !has_opaque_param(&ks[i].sig)) add_check(&b, &ks[i], given);
  for (size_t i = 0; i < n; i++)
    if (ks[i].variant == 1 && ks[i].cxx && !given) add_overload_check(&b, ks, n, i);
  if (b.failed || !b.data) {
    cj_buf_free(&b);
    return NULL;
  }
  return b.data;
}

int cj_unit_add_checks(char **text, const cj_scan_kernel *ks, size_t from, size_t to) {
  cj_buf b = {0};
  cj_buf_puts(&b, *text);
  cj_buf_puts(&b, "\n");
  cj_buf_puts(&b, same_type);
  for (size_t i = from; i < to; i++)
    if (!has_opaque_param(&ks[i].sig) && ks[i].variant == 0)
      add_check(&b, &ks[i], 0);
    else /* no check: the name (a name expression) joins the text, and the key, all the same */
      cj_buf_printf(&b, "/* cujit kernel: %s */\n", ks[i].sig.name);
  if (b.failed) {
    cj_buf_free(&b);
    return 0;
  }
  free(*text);
  *text = b.data;
  return 1;
}
