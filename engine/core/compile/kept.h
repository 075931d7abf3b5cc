/*
** kept.h -- the files a line table names (line_info, CUJIT_LINEINFO): a program read from a file
** names that file; text given as a string (a kernel's body, a source string) is kept on disk and
** the line table names the kept copy, so that profilers and debuggers (compute-sanitizer, Nsight
** Compute, cuda-gdb) can open the user's source. Internal.
*/
#ifndef CUJIT_KEPT_H
#define CUJIT_KEPT_H

#include "base/base.h"
#include "includes.h"

/* For an NVRTC compile with line info on: the text to compile instead of `source` in *out
** (malloc'd; the caller frees it), whose #line directives name real files:
**   - a kernel's unit (cj_source_is_kernel): each part (body, preamble, signature, the code
**     cujit generates) is written to DIR/NAME.cu, DIR/NAME.preamble.cu, ... and named there, with
**     the whole unit as compiled in DIR/unit.cu;
**   - `name` a file whose bytes are `source` (cujit_program_compile_file, cuda.load): that file,
**     by its absolute path;
**   - any other text: kept as DIR/<the last part of name>, and that copy named.
** DIR is <the kept root>/<a hash of name and source>: the root is <cache dir>/sources with the
** disk cache on, else a directory of the engine's own under $TMPDIR (or /tmp), removed by
** cj_kept_close. Files are written 0600 in directories 0700, to a temporary name then renamed,
** and rewritten when missing (a cache hit writes them again after `cujit cache clear`).
** Fails (naming the path) when the directory or a file cannot be written. */
cujit_status cj_kept_source(cujit_engine *engine, const char *source, const char *name, int kernel,
                            char **out);

/* For an NVRTC compile with line info on: the text to give NVRTC for the in-memory header
** `name` (an embedded <cujit/...> header, a stand-in standard header), its copy kept as
** <root>/<hash of name and text>/<name> and named by a #line before `text`, in *out (malloc'd).
** *out stays NULL for a header read from a file (an absolute name), which names itself. */
cujit_status cj_kept_header(cujit_engine *engine, const char *name, const char *text, char **out);

/* With line info on (`line_info`: -lineinfo or -G in NVRTC's list), the headers NVRTC is given in
** memory (those without an absolute name: cujit's, the stand-ins) each begin with a #line naming
** a kept copy (cj_kept_header), so that the line table names no file that does not exist. *out:
** NULL when off, else an array of inc->header_count texts, each a new one (malloc'd) or inc's
** own; the caller frees the new ones and the array. */
cujit_status cj_kept_headers(cujit_engine *engine, const cj_includes *inc, int line_info,
                             char ***out);

/* Removes the engine's private root (not the cache's) and forgets the root. At cujit_close. */
void cj_kept_close(cujit_engine *engine);

#endif
