/*
** cxx_scratch.h -- the CPU device compiler's private scratch directories under TMPDIR: making one
** whose name says which process made it, removing it, and collecting the ones of cujit processes
** that died in a compile (kill -9, the OOM killer, a CI timeout). Internal.
*/
#ifndef CUJIT_CXX_SCRATCH_H
#define CUJIT_CXX_SCRATCH_H

#include <stddef.h>

/* The inode of this process's pid namespace ("pid:[4026531836]"), 0 when /proc cannot say: a pid
** in a directory's name means something only within it (pch.c's directories use it too). */
unsigned long long cj_pid_namespace(void);

/* Makes $TMPDIR/cujit-cxx-<pid namespace>-<pid>-XXXXXX (mode 0700) and its tmp/ (the compiler's
** own TMPDIR) into dir (len bytes); the first call of the process first collects the litter of
** dead processes. 0, or an errno. */
int cj_cxx_scratch_make(char *dir, size_t len);

/* Removes a scratch directory: the files cujit writes (tu.cpp, k.so, the embedded headers), the
** regular files in its tmp/ (only the compiler writes there), then the directories. Anything
** else found there stays, and so does the directory then. */
void cj_cxx_scratch_remove(const char *dir);

#endif
