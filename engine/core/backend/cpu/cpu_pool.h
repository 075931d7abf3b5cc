/*
** cpu_pool.h -- the CPU device's worker threads: one per core, made once and kept, that run a
** kernel's entry together (each takes blocks until none are left), with a crash in a kernel
** (SIGSEGV, SIGBUS, SIGFPE, SIGILL) caught on the thread that ran it and reported instead of
** ending the process. Internal.
*/
#ifndef CUJIT_CPU_POOL_H
#define CUJIT_CPU_POOL_H

#include <cujit/cpu_abi.h>
#include <stddef.h>

typedef struct cj_cpu_pool cj_cpu_pool;

/* What one launch runs: the entry on `launch`, worker i using workers[i]; `release` frees the
** state of a worker whose kernel crashed (its fibers were left mid-way). */
typedef struct cj_cpu_job {
  cj_cpu_entry_fn entry;
  cj_cpu_launch *launch;
  cj_cpu_worker *workers;
  void (*release)(cj_cpu_worker *worker);
  /* The shared object's cj_cpu_where, or NULL: called by the crash handler to name the block and
  ** thread that crashed. */
  cj_cpu_where_fn where;
} cj_cpu_job;

/* A pool of `threads` workers (the calling thread of cj_cpu_pool_run is worker 0, so threads - 1
** are made). NULL when out of memory or threads. */
cj_cpu_pool *cj_cpu_pool_new(int threads);
void cj_cpu_pool_free(cj_cpu_pool *pool);
int cj_cpu_pool_size(const cj_cpu_pool *pool);

/* Makes the calling thread able to catch a kernel's crash (an alternate signal stack and the
** handlers, installed once per process); for the thread that calls cj_cpu_pool_run. 0 on
** failure. cj_cpu_thread_end undoes the first part at the thread's end. */
int cj_cpu_thread_begin(void);
void cj_cpu_thread_end(void);

/* Runs the job on min(threads, blocks) workers and returns when all are done. A crash ends that
** worker's part: the launch's error then says which signal and where, and the others stop taking
** blocks. Returns 1 when a worker crashed. */
int cj_cpu_pool_run(cj_cpu_pool *pool, const cj_cpu_job *job);

/* Abandons the job that runs now, as a GPU's reset does: every worker inside the kernel leaves
** it (a signal whose handler jumps out, as from a crash), and workers enter no kernel until
** cj_cpu_pool_resume. The launch's error says the kernel was abandoned. Returns at once; the
** job's cj_cpu_pool_run returns when its workers are out. Locks the kernel held stay held. */
void cj_cpu_pool_abandon(cj_cpu_pool *pool);
void cj_cpu_pool_resume(cj_cpu_pool *pool);

#endif
