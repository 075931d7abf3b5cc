/*
** pch.h -- NVRTC's precompiled headers (NVRTC 12.8+) inside a process: whether an NVRTC compile
** runs with automatic PCH (CUJIT_PCH and the policy below), in which directory, the process's PCH
** heap, and what the compile's log says about it. A PCH never changes what is compiled: its
** options join NVRTC's list after both cache keys were made, and the directory a compile is given
** is named by a hash of every header's name and bytes and of the options, so that a header edited
** after a PCH was made never meets that PCH. Internal.
*/
#ifndef CUJIT_PCH_H
#define CUJIT_PCH_H

#include "includes.h"
#include "options.h"

/* One compile's PCH state, between cj_pch_start and cj_pch_end. */
typedef struct cj_pch {
  int on;       /* the PCH options were added and the heap's read lock is held */
  size_t added; /* how many options were added to the list (at its end) */
} cj_pch;

/* Whether a program whose includes were resolved (`inc`), with NVRTC's list `o` complete (the
** keys made from it), compiles with automatic PCH, by CUJIT_PCH and this policy:
**   - off: never;
**   - on: every compile whose includes were resolved and NVRTC has the PCH calls;
**   - auto (default, or CUJIT_PCH unset): those whose own text (the source, the user's headers,
**     cujit's; not the toolkit's, under `toolkit`, the toolkit's include directory or NULL)
**     includes the toolkit's heavy headers (cooperative groups, cuRAND's kernels, libcu++, CUB,
**     Thrust), cujit's device library (<cujit/random.h>, reduce.h, half.h; not cujit's own
**     library programs, which include <cujit/library_kernels.h>), or whose user headers outweigh
**     the source (at least 64 KiB and four times the source's bytes).
** Never when NVRTC lacks the PCH calls, line info is on (its #line directives stop NVRTC's PCH),
** the source's leading directives hold a #line (a kernel's unit: NVRTC makes no PCH after one),
** or the caller's flags already name a PCH option. A CUJIT_PCH value not understood is a warning
** naming it, and auto is used. */
int cj_pch_wanted(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc,
                  const cj_option_list *o, const char *toolkit);

/* Before nvrtcCompileProgram of a program that cj_pch_wanted said compiles with PCH (in this
** process, or in a worker process with the engine it made: remote.h): adds the PCH options to `o`,
** the directory this engine's for the set of headers and options. Never fails: without its
** directory, the compile runs without PCH (one warning per engine). */
void cj_pch_start(cujit_engine *engine, cj_nvrtc *nv, const cj_includes *inc, cj_option_list *o,
                  cj_pch *pch);

/* The process's PCH heap: its size as NVRTC last said or was told (0 when not known yet: NVRTC's
** default, or no PCH calls), read without calling NVRTC, so never waiting for a compile running in
** the process; and grown to at least `bytes` (a worker process takes the size its engine's
** process needed, so that its first PCH is made rather than refused for want of heap). */
size_t cj_pch_heap_size(void);
void cj_pch_heap_reserve(cj_nvrtc *nv, size_t bytes);

/* After nvrtcCompileProgram and its log (`log`, NUL-terminated, may be NULL): counts a PCH made
** or used (cujit_cache_stats' pch_created, pch_used), takes NVRTC's PCH messages out of the log,
** releases the heap, and when NVRTC ran out of PCH heap, grows the process's heap to what it asked
** for: the compile's result stands (the PCH changes nothing in it) and the next compile with these
** headers makes the PCH. Removes the options cj_pch_start added from `o`. The log of a compile
** that used a PCH lacks the warnings the headers themselves gave: NVRTC gave them to the compile
** that made it. */
void cj_pch_end(cujit_engine *engine, cj_nvrtc *nv, nvrtcProgram prog, cj_option_list *o,
                cj_pch *pch, char *log);

/* The engine's PCH directory (made 0700 under $TMPDIR, else /tmp, at its first PCH compile), or
** NULL before; removed with everything in it at cujit_close. For tests and `cujit compile -v`. */
const char *cj_pch_dir(cujit_engine *engine);

#endif
