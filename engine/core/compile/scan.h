/*
** scan.h -- the kernels of a translation unit: read from its text (or taken from signatures the
** user gives), then confirmed against what NVRTC compiled, so that every kernel handed out has
** the parameters of the code that runs. Internal.
**
** The source text is not what the preprocessor leaves, so reading it alone can be wrong: a kernel
** inside #if 0, two definitions under #ifdef / #else, a kernel written by a macro. So:
**  - cj_scan_prepare reads the kernels and writes the translation unit to compile: the source,
**    then for each kernel a redeclaration with the parameter types cujit read
**    (extern "C" { __global__ void scale(float *, int); }), which NVRTC (or g++) refuses when
**    the compiled definition differs, under a #line naming the kernel and the way out. A name
**    with several parameter lists gets, after each definition, a one-byte marker variable
**    (cj_variant_NAME_N) that reaches the PTX only from the definition the preprocessor kept.
**  - cj_verify_ptx (verify.h) then keeps the kernels the PTX has (.entry), the variant whose
**    marker it holds, and checks each one's parameter count and sizes against its .param list;
**    cj_verify_object does the same against the CPU device's shared object (its symbols).
*/
#ifndef CUJIT_SCAN_H
#define CUJIT_SCAN_H

#include "lang/signature.h"

/* One parameter list of a kernel name, as read from the source or given. */
typedef struct cj_scan_kernel {
  cj_signature sig;
  int variant; /* 0: the only parameter list of its name; 1, 2, ...: one of several */
  char *scope; /* the namespaces around it as the source opens them ("namespace a { "), or NULL */
  int scope_depth; /* the braces `scope` opens */
  char *params; /* the parameter list as written (read again once a header's typedefs are known) */
  int cxx; /* C++ linkage (no extern "C", or a template's instantiation): NVRTC is given the name
            ** expression "&NAME" and the lowered name it answers is the kernel's symbol */
} cj_scan_kernel;

/* A template kernel of the source: instantiated by cj_scan_instantiate for a name expression. */
typedef struct cj_scan_template {
  char *name;       /* qualified by its namespaces: "scale", "ns::scale" */
  char **tparams;   /* the template's parameter names, in order */
  char **tdefaults; /* their default arguments, or NULL */
  size_t ntparams;
  char *params; /* the function's parameter list as written (comments blanked) */
  char *scope;
  int scope_depth;
} cj_scan_template;

typedef struct cj_scan {
  cj_scan_kernel *kernels; /* source order */
  size_t count;
  int given;     /* from explicit signatures, not read from the source */
  int templates; /* template kernels seen (for the message when no kernel is found) */
  int mangled;   /* __global__ functions without extern "C" seen (likewise) */
  int macros;    /* #defines that write __global__ (likewise; counted only when none was read) */
  char *text;    /* the translation unit to compile and hash: source, markers, checks */
  cj_scan_template *tmpls; /* the template kernels, for name expressions */
  size_t ntmpls;
  char **td_names, **td_types; /* the source's typedefs ("uint" -> "unsigned int") */
  size_t ntd;
} cj_scan;

/* Reads the kernels of `source` (or parses `signatures`, when signature_count > 0) and writes the
** translation unit to compile into out->text. Finding no kernel is not an error here: the compile
** comes first, so that its errors are reported; cj_verify_ptx says NOT_FOUND. Errors (a
** signature that does not parse, a kernel past the parameter limits, out of memory) write a
** message into err. Free with cj_scan_free, also on failure. */
cujit_status cj_scan_prepare(const char *source, const char *const *signatures,
                             size_t signature_count, cj_scan *out, char *err, size_t err_len);

void cj_scan_free(cj_scan *scan);

/* Adds the kernels (and templates, typedefs) defined in headers the source includes (their texts,
** read by the caller), after the source's, with their checks. A kernel of a header with several
** parameter lists under #if is not supported there (no marker can follow its definition). */
cujit_status cj_scan_headers(cj_scan *scan, const char *const *texts, size_t count, char *err,
                             size_t err_len);

/* Adds the kernels named by name expressions ("scale<float>", or a C++-linkage kernel's name) to
** a prepared scan: each template instantiation's parameters are the template's with the
** arguments put in for its parameters, checked in the text like any kernel's. A name that is no
** template kernel of the source is an error naming those it has. */
cujit_status cj_scan_instantiate(cj_scan *scan, const char *const *exprs, size_t count, char *err,
                                 size_t err_len);

/* The kernels of a scan as the CPU device builds them: one per name, the first parameter list
** read, copied into *kernels, and in *cxx (malloc'd, one per kernel) whether the name has C++
** linkage (cxx above, in any of its parameter lists). The shared object g++ makes is then read
** for the kernels and variants it holds (cj_verify_object). */
cujit_status cj_scan_copy_kernels(const cj_scan *scan, cj_signature **kernels, int **cxx,
                                  size_t *count);

/* The message for a source without a kernel cujit can launch, with the reason when it saw
** template kernels, __global__ functions without extern "C" or a #define that writes one. */
void cj_scan_none_message(int templates, int mangled, int macros, char *err, size_t err_len);

/* Reads the kernels of a translation unit without compiling: every extern "C" __global__ function
** (comments, strings and preprocessor lines skipped), one entry per distinct parameter list, into
** *out (malloc'd; free each with cj_signature_free, the array with free). Kernels whose parameters
** use types cujit cannot size are listed with kind SCALAR, dtype NONE and size 0: launching them
** is refused with a clear message. No kernel at all is CUJIT_ERROR_NOT_FOUND. */
cujit_status cj_scan_kernels(const char *source, cj_signature **out, size_t *count, char *err,
                             size_t err_len);

/* --- between scan.c (reading), unit.c (the text written) and names.c (name expressions) --- */

/* A copy of the source with comments, preprocessor lines and the insides of literals blanked to
** spaces (newlines kept, so positions stay), except the "C" of extern "C" (blank.c). Malloc'd,
** NULL when out of memory. */
char *cj_blank_source(const char *src);

typedef struct cj_definition_end {
  size_t pos;    /* just after the '}' closing a kernel's body */
  size_t kernel; /* its index in the scan's kernels */
} cj_definition_end;

/* The source with a marker after each definition of a kernel of several parameter lists, then a
** check for each kernel whose parameters cujit can all size. Malloc'd, NULL when out of memory. */
char *cj_unit_text(const char *source, const cj_scan_kernel *ks, size_t n, cj_definition_end *ends,
                   size_t nends, int given);

/* Appends to *text the checks of ks[from, to) (instantiated by name); 0 when out of memory. */
int cj_unit_add_checks(char **text, const cj_scan_kernel *ks, size_t from, size_t to);

/* Reads the parameter list `params` (the source's typedefs put in) as kernel `name`'s. */
cujit_status cj_scan_read_params(const cj_scan *scan, const char *name, const char *params,
                                 cj_signature *sig, char *err, size_t err_len);

#endif
