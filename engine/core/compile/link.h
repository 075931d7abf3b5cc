/*
** link.h -- device code linked at run time (the `link` compile option): the program compiled to
** LTO-IR, each .cu link file compiled to LTO-IR once and kept in the cache like any compiled unit,
** the binary files (.ptx, .ltoir, .fatbin, .cubin, .a) read as they are, all linked by nvJitLink,
** and the linked program cached under a key over every input's contents. Without nvJitLink, and on
** the CPU device, .cu link files are compiled as one unit with the program instead. Internal.
*/
#ifndef CUJIT_LINK_H
#define CUJIT_LINK_H

#include "compile.h"
#include "options.h"
#include "base/loader.h"

/* The compile of one unit a link is made of: compile.c's NVRTC or g++ compile (the compiler's own,
** not cj_compile, which comes here for options with link files). */
typedef cujit_status (*cj_unit_compile)(cujit_engine *engine, const cj_scan *scan, const char *name,
                                        const cujit_compile_options *options, const char *arch,
                                        cj_compiled *out);

/* 1 when the options name link files, or hold a -dlto flag of the caller's (refused), so that the
** program compiles through cj_link_compile. */
int cj_link_wanted(const cujit_compile_options *options);

/* cj_compile's work for a program with link files: each unit is compiled by the arch's compiler
** (cj_compiler_for's own compile, not cj_compile, so never coming back here). Fills `out` as
** cj_compile does, out->pure 0 (files were read). The failures are those cujit.h lists under
** cujit_compile_options.link. */
cujit_status cj_link_compile(cujit_engine *engine, const cj_scan *scan, const char *name,
                             const cujit_compile_options *options, const char *arch,
                             cj_compiled *out);

/* 1 when NVRTC's list `o` asks for LTO-IR (-dlto): the unit's outputs are then cj_link_ltoir's. */
int cj_link_lto_list(const cj_option_list *o);

/* After a successful NVRTC compile with -dlto: its LTO-IR in e->cubin, e->ptx "" (NVRTC makes no
** PTX then). */
cujit_status cj_link_ltoir(cujit_engine *engine, cj_nvrtc *nv, nvrtcProgram prog,
                           cj_cache_entry *e);

#endif
