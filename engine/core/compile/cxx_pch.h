/*
** cxx_pch.h -- the CPU device's precompiled prelude: g++'s precompiled header of
** <cujit/cpu_prelude.h> (the CUDA language on the host and the standard headers it includes,
** about 40 000 lines that every unit starts with), made once per compiler, flags and cujit build,
** kept in the disk cache and used by every later compile of any process. Internal.
*/
#ifndef CUJIT_CXX_PCH_H
#define CUJIT_CXX_PCH_H

#include "base/base.h"

#include <limits.h>

/* Where a unit's compile stands with the PCH of its key. */
typedef struct cj_cxx_pch {
  char dir[PATH_MAX / 2]; /* given to g++ as -I ahead of the unit's own include directory: it
                             holds cujit/cpu_prelude.h.gch and nothing else */
  char made[PATH_MAX];    /* CJ_CXX_PCH_MAKE: the file g++ writes the new PCH to */
  int lock;               /* CJ_CXX_PCH_MAKE: the key's lock, held until cj_cxx_pch_made */
} cj_cxx_pch;

enum { CJ_CXX_PCH_NONE, CJ_CXX_PCH_USE, CJ_CXX_PCH_MAKE };

/* What a compile does with the PCH of `key` (every flag the compiler gets but the unit's own -I,
** -D and -U, the compiler's identity and the embedded headers' hash; g++ itself checks the macros
** the unit defines against those the PCH was made with, and parses the prelude when they
** conflict):
**   NONE: compile without one (CUJIT_PCH=off, no disk cache of this user's, or another compile
**         is making it right now: this one does not wait);
**   USE:  a PCH whose bytes are those recorded when it was made: p->dir goes to g++;
**   MAKE: this compile makes it first (the lock is held): g++ -x c++-header writes p->made, then
**         cj_cxx_pch_made publishes it. */
int cj_cxx_pch_open(cujit_engine *engine, const char *key, cj_cxx_pch *p);

/* After MAKE: `ok` says the compiler made p->made. Records its checksum, puts it in place and
** releases the lock; CJ_CXX_PCH_USE when it is in place, CJ_CXX_PCH_NONE when not (a warning says
** why). Keeps the CJ_CXX_PCH_KEEP PCHs used last under the cache directory, removes older ones. */
int cj_cxx_pch_made(cujit_engine *engine, cj_cxx_pch *p, int ok);
#define CJ_CXX_PCH_KEEP 4

/* A compile given p->dir failed and g++'s output names a precompiled header: the PCH goes (the
** next compile makes it again), and the caller compiles once more without it. */
void cj_cxx_pch_drop(const cj_cxx_pch *p);
/* 1 when a compiler's output speaks of a precompiled header (what cj_cxx_pch_drop is for). */
int cj_cxx_pch_named(const char *log);

/* Removes every PCH under the cache directory `cache_dir` (cujit_cache_clear). */
void cj_cxx_pch_clear(const char *cache_dir);

#endif
