/*
** cpu_pool.c -- the CPU device's worker threads and the catching of a kernel's crash. A kernel
** that touches a wild pointer would end the whole process; on a GPU it only faults the device.
** So each worker runs the entry behind sigsetjmp, and the handler (on an alternate stack, since
** the fault may be a stack overflow or lie on a fiber's stack) jumps back when the faulting
** thread is a worker inside a kernel; any other fault goes to the handler that was there before.
** Abandoning a kernel (a reset or cujit_close that cannot wait for it) takes the same way out: the
** pool sends its threads ABANDON_SIGNAL, whose handler jumps back when the thread is in a kernel.
*/
#include "cpu_pool.h"
#include "cpu_divide.h"
#include "base/env.h"

#include <fenv.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALT_STACK_BYTES (64 * 1024)
/* Installed only when a kernel is first abandoned; a real-time signal, unlikely to be in use. */
#define ABANDON_SIGNAL (SIGRTMAX - 2)

struct cj_cpu_pool {
  pthread_mutex_t lock;
  pthread_cond_t start, finished;
  int threads;          /* workers, the caller of cj_cpu_pool_run included */
  pthread_t *made;      /* threads - 1 of them */
  unsigned long job_id; /* bumped per job; a worker runs each id once */
  int wanted;           /* workers 0 .. wanted-1 take part in the current job */
  int running;          /* workers still in the current job */
  int stop;
  int crashed;
  int abandoning; /* atomic: workers leave the kernel they run, and enter none */
  int has_caller; /* caller: the thread of cj_cpu_pool_run (worker 0), once it ran a job */
  pthread_t caller;
  cj_cpu_job job;
};

typedef struct worker_arg {
  cj_cpu_pool *pool;
  int index;
} worker_arg;

/* --- catching crashes ------------------------------------------------------------------------- */

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NCAUGHT (sizeof caught / sizeof *caught)
static struct sigaction previous[NCAUGHT];
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

/* Set while this thread runs a kernel; the handler jumps to it. */
static __thread sigjmp_buf *kernel_jump;
static __thread int (*kernel_where)(char *buf, size_t len);
static __thread int crash_signal;
static __thread void *crash_address;
static __thread char crash_where[256]; /* "block (x,y,z) thread (a,b,c)[ (...)]", or "" */
static __thread void *alt_stack;
static __thread cj_cpu_pool *kernel_pool; /* the pool of the kernel this thread runs */
static struct sigaction previous_abandon;
static pthread_once_t abandon_once = PTHREAD_ONCE_INIT;

static void pass_on(int sig, siginfo_t *info, void *context) {
  for (size_t i = 0; i < NCAUGHT; i++) {
    if (caught[i] != sig) continue;
    const struct sigaction *old = &previous[i];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
      old->sa_sigaction(sig, info, context);
    } else if (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN) {
      /* Returning re-runs the faulting instruction, which now takes the default action. */
      signal(sig, SIG_DFL);
    } else {
      old->sa_handler(sig);
    }
    return;
  }
}

static void on_crash(int sig, siginfo_t *info, void *context) {
  sigjmp_buf *jump = kernel_jump;
  if (!jump) {
    pass_on(sig, info, context);
    return;
  }
  if (sig == SIGFPE && info && cj_div_resume(info->si_code, context)) return; /* GPU's value */
  kernel_jump = NULL;
  crash_signal = sig;
  crash_address = info ? info->si_addr : NULL;
  crash_where[0] = '\0';
  if (kernel_where && !kernel_where(crash_where, sizeof crash_where)) crash_where[0] = '\0';
  siglongjmp(*jump, 1);
}

/* Jumps out of the kernel when its pool is abandoning; any other arrival (the kernel already
** ended, or someone else's signal of this number) goes to the previous handler, if any. */
static void on_abandon(int sig, siginfo_t *info, void *context) {
  sigjmp_buf *jump = kernel_jump;
  cj_cpu_pool *pool = kernel_pool;
  if (!jump || !pool || !__atomic_load_n(&pool->abandoning, __ATOMIC_SEQ_CST)) {
    if ((previous_abandon.sa_flags & SA_SIGINFO) && previous_abandon.sa_sigaction)
      previous_abandon.sa_sigaction(sig, info, context);
    else if (previous_abandon.sa_handler != SIG_DFL && previous_abandon.sa_handler != SIG_IGN)
      previous_abandon.sa_handler(sig);
    return;
  }
  kernel_jump = NULL;
  crash_signal = sig;
  crash_address = NULL;
  crash_where[0] = '\0';
  if (kernel_where && !kernel_where(crash_where, sizeof crash_where)) crash_where[0] = '\0';
  siglongjmp(*jump, 1);
}

static void install_abandon(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_abandon;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(ABANDON_SIGNAL, &sa, &previous_abandon);
}

static void install_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < NCAUGHT; i++) sigaction(caught[i], &sa, &previous[i]);
}

int cj_cpu_thread_begin(void) {
  pthread_once(&handlers_once, install_handlers);
  sigset_t abandon; /* the creating thread's mask is inherited: this signal must get through */
  sigemptyset(&abandon);
  sigaddset(&abandon, ABANDON_SIGNAL);
  pthread_sigmask(SIG_UNBLOCK, &abandon, NULL);
  if (alt_stack) return 1;
  stack_t ss = {.ss_sp = malloc(ALT_STACK_BYTES), .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
  if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0) {
    free(ss.ss_sp);
    return 0;
  }
  alt_stack = ss.ss_sp;
  return 1;
}

void cj_cpu_thread_end(void) {
  if (!alt_stack) return;
  stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
  sigaltstack(&ss, NULL);
  free(alt_stack);
  alt_stack = NULL;
}

static const char *signal_meaning(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV, an access to memory the kernel may not touch";
  case SIGBUS:
    return "SIGBUS, a misaligned or unmapped access";
  case SIGFPE:
    return "SIGFPE, an integer division by zero or overflow";
  default:
    return "SIGILL, an illegal instruction";
  }
}

/* The first failure wins the launch's error slot; the others keep theirs out. */
static void report_crash(cj_cpu_launch *launch) {
  int expected = 0;
  if (!__atomic_compare_exchange_n(&launch->error_set, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return;
  if (crash_signal == ABANDON_SIGNAL) {
    snprintf(launch->error, sizeof launch->error,
             "kernel '%s' was abandoned on the CPU device%s%s while it still ran (a reset, or "
             "cujit_close after waiting for it): its work is unfinished",
             launch->kernel ? launch->kernel : "?", crash_where[0] ? " in " : "", crash_where);
    return;
  }
  /* Under the check build the sanitizer already watched every buffer: what still crashes is a
  ** stack overflow (the address in the thread's guard page, which the check build's where names)
  ** or an address outside any buffer. */
  snprintf(launch->error, sizeof launch->error,
           "kernel '%s' crashed on the CPU device%s%s with %s (address %p); %s",
           launch->kernel ? launch->kernel : "?", crash_where[0] ? " in " : "", crash_where,
           signal_meaning(crash_signal), crash_address,
           cj_env_cpu_check()
               ? "under CUJIT_CPU_CHECK=1 that is a stack overflow or a pointer "
                 "outside every buffer, which AddressSanitizer does not report"
               : "run it with CUJIT_CPU_CHECK=1 to have AddressSanitizer name the line");
}

/* Worker `index`'s part of the job. volatile: read after a siglongjmp. The abandoning flag is
** read after kernel_jump is set, and cj_cpu_pool_abandon sets it before signalling: either the
** part never starts, or the signal finds it in the kernel. The floating-point environment (a
** fast-math kernel's flush to zero, a rounding mode a kernel set) is the kernel's own, as on a
** GPU: put back after it, also when a crash jumped out of it (Linux starts a signal handler
** with the default environment; elsewhere the kernel's could stay). */
static int run_part(cj_cpu_pool *pool, const cj_cpu_job *job, int index) {
  sigjmp_buf jump;
  cj_cpu_worker *volatile worker = &job->workers[index];
  fenv_t fenv;
  fegetenv(&fenv);
  if (sigsetjmp(jump, 1) == 0) {
    kernel_where = job->where;
    kernel_pool = pool;
    kernel_jump = &jump;
    atomic_signal_fence(memory_order_seq_cst);
    if (!__atomic_load_n(&pool->abandoning, __ATOMIC_SEQ_CST)) {
      job->entry(job->launch, worker);
      kernel_jump = NULL;
      fesetenv(&fenv);
      return 0;
    }
    kernel_jump = NULL;
    crash_signal = ABANDON_SIGNAL, crash_where[0] = '\0';
    report_crash(job->launch);
    return 1;
  }
  fesetenv(&fenv);
  report_crash(job->launch);
  if (job->release) job->release(worker); /* its fibers stopped mid-way */
  return 1;
}

/* --- the pool ----------------------------------------------------------------------------------
 */

static void *worker_main(void *p) {
  worker_arg arg = *(worker_arg *)p;
  free(p);
  cj_cpu_pool *pool = arg.pool;
  cj_cpu_thread_begin();
  unsigned long seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && pool->job_id == seen) pthread_cond_wait(&pool->start, &pool->lock);
    if (pool->stop) break;
    seen = pool->job_id;
    if (arg.index >= pool->wanted) continue;
    cj_cpu_job job = pool->job;
    pthread_mutex_unlock(&pool->lock);
    int crashed = run_part(pool, &job, arg.index);
    pthread_mutex_lock(&pool->lock);
    pool->crashed |= crashed;
    if (--pool->running == 0) pthread_cond_signal(&pool->finished);
  }
  pthread_mutex_unlock(&pool->lock);
  cj_cpu_thread_end();
  return NULL;
}

cj_cpu_pool *cj_cpu_pool_new(int threads) {
  if (threads < 1) threads = 1;
  cj_cpu_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->made = calloc((size_t)threads, sizeof *pool->made);
  if (!pool->made) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->start, NULL);
  pthread_cond_init(&pool->finished, NULL);
  pool->threads = 1;
  for (int i = 1; i < threads; i++) {
    worker_arg *arg = malloc(sizeof *arg);
    if (!arg) break;
    arg->pool = pool, arg->index = i;
    if (pthread_create(&pool->made[i - 1], NULL, worker_main, arg) != 0) {
      free(arg);
      break; /* fewer workers than cores still works */
    }
    pool->threads++;
  }
  return pool;
}

void cj_cpu_pool_free(cj_cpu_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->lock);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i + 1 < pool->threads; i++) pthread_join(pool->made[i], NULL);
  pthread_cond_destroy(&pool->start);
  pthread_cond_destroy(&pool->finished);
  pthread_mutex_destroy(&pool->lock);
  free(pool->made);
  free(pool);
}

int cj_cpu_pool_size(const cj_cpu_pool *pool) {
  return pool ? pool->threads : 0;
}

int cj_cpu_pool_run(cj_cpu_pool *pool, const cj_cpu_job *job) {
  unsigned long long blocks = job->launch->total_blocks;
  int wanted = blocks < (unsigned long long)pool->threads ? (int)blocks : pool->threads;
  if (wanted < 1) wanted = 1;
  pthread_mutex_lock(&pool->lock);
  pool->job = *job;
  pool->wanted = wanted;
  pool->running = wanted - 1;
  pool->crashed = 0;
  pool->caller = pthread_self(), pool->has_caller = 1;
  pool->job_id++;
  if (wanted > 1) pthread_cond_broadcast(&pool->start);
  pthread_mutex_unlock(&pool->lock);
  int crashed = run_part(pool, job, 0);
  pthread_mutex_lock(&pool->lock);
  while (pool->running > 0) pthread_cond_wait(&pool->finished, &pool->lock);
  crashed |= pool->crashed;
  pthread_mutex_unlock(&pool->lock);
  return crashed;
}

void cj_cpu_pool_abandon(cj_cpu_pool *pool) {
  pthread_once(&abandon_once, install_abandon);
  __atomic_store_n(&pool->abandoning, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&pool->lock);
  for (int i = 0; i + 1 < pool->threads; i++) pthread_kill(pool->made[i], ABANDON_SIGNAL);
  if (pool->has_caller) pthread_kill(pool->caller, ABANDON_SIGNAL);
  pthread_mutex_unlock(&pool->lock);
}

void cj_cpu_pool_resume(cj_cpu_pool *pool) {
  __atomic_store_n(&pool->abandoning, 0, __ATOMIC_SEQ_CST);
}
