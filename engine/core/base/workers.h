/*
** workers.h -- running independent jobs on threads made for the call: the caller's thread works
** too, and every thread made is joined before the call returns, so no thread of cujit's outlives
** it. What the compile of many programs at once (program/program_many.c) stands on. Internal.
*/
#ifndef CUJIT_WORKERS_H
#define CUJIT_WORKERS_H

#include <stddef.h>

/* Runs job(user, i) once for each i in [0, count), on up to `threads` threads, the calling
** thread among them (threads <= 1, or count <= 1: all on the calling thread, in order). Items are
** handed out in index order as threads become free. A thread that cannot be made leaves its share
** to the others, so every item runs whatever happens. Returns the number of threads that ran
** items (1 when the caller ran them alone). */
int cj_workers_run(size_t count, int threads, void (*job)(void *user, size_t index), void *user);

/* The number of threads a compile of many programs uses: CUJIT_COMPILE_THREADS (1 to 1024), else
** the cores this process may run on. 0 with `why` filled when the variable holds anything else. */
int cj_compile_threads(char *why, size_t len);

#endif
