/*
** source.h -- the translation unit for a signature + body kernel (with #line directives naming
** each part), reading the compiler's log back into the user's terms, and the embedded device
** headers. Knows nothing of devices or compilers. Internal.
*/
#ifndef CUJIT_SOURCE_H
#define CUJIT_SOURCE_H

#include "lang/signature.h"

/* The embedded device headers from kernels_src/ ("cujit/grid.h" -> its text), and one hash over
** all of them, made at build time. */
extern const char *const cj_embedded_header_names[];
extern const char *const cj_embedded_header_sources[];
extern const size_t cj_embedded_header_count;
extern const char cj_embedded_headers_hash[]; /* hex */
extern const char cj_cpu_writer_hash[]; /* hex: the CPU device's unit writer (cpu_source, cxx.c) */
extern const char cj_reader_hash[];     /* hex: what reads kernels out of a source (lang/, ...) */

/* Builds the translation unit of a signature + body kernel, with #line directives so NVRTC's
** diagnostics point into `body` (as "<kernel name>", line N) and `preamble`. type_values, when
** the signature is generic, are the C types bound to its type variables ("float", ...).
** Returns a malloc'd string or NULL (out of memory). */
char *cj_source_for_kernel(const cj_signature *sig, const char *body, const char *preamble,
                           const char *const *type_values);

/* The parts of a kernel's unit, each under its own #line file name, "NAME" + suffix. With line
** info on, kept.c names each part's kept copy instead, "DIR/NAME" + kept, a real file whose
** lines are the part's (the body's line 1 is the body's first line); the messages read both. */
typedef struct cj_source_part {
  const char *suffix, *kept;
} cj_source_part;
extern const cj_source_part cj_source_parts[];
extern const size_t cj_source_part_count;

/* 1 if `source` was made by cj_source_for_kernel for a kernel called `name` (its parts named
** either way). */
int cj_source_is_kernel(const char *source, const char *name);

/* The message for a failed compile of the program `name`: the first error placed in the user's
** terms ("kernel 'saxpy' failed to compile: line 3 of its body: error: ..."; "'a.cu' failed to
** compile: a.cu:7: error: ..."), a blank line, then NVRTC's whole log. Malloc'd, or NULL. */
char *cj_compile_error_message(const char *name, const char *source, const char *log);

#endif
