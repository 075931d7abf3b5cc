/*
** cpu_pool.c -- the CPU device's worker threads and the catching of a kernel's crash. A kernel
** that touches a wild pointer would end the whole process; on a GPU it only faults the device.
** So each worker runs the entry behind sigsetjmp, and the handler (on an alternate stack, since
** the fault may be a stack overflow or lie on a fiber's stack) jumps back when the faulting
** thread is a worker inside a kernel; any other fault goes to the handler that was there before.
** Abandoning a kernel (a reset or cujit_close that cannot wait for it) takes the same way out: the
** pool sends its threads ABANDON_SIGNAL, whose handler jumps back when the thread is in a kernel.
*/
#define _GNU_SOURCE /* pthread_sigqueue */
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
#include <unistd.h>

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

/* What a worker's handler needs while the worker runs a kernel, on run_part's stack. */
typedef struct kernel_run {
  sigjmp_buf jump; /* the handler jumps here */
  cj_cpu_pool *pool;
  const cj_cpu_job *job;
  cj_cpu_worker *worker;
  struct signal_stack *stack; /* the thread's alternate stack, whose header points here */
  int signal;                 /* what ended the kernel, set by the handler */
  void *address;
  char where[256]; /* "block (x,y,z) thread (a,b,c)[ (...)]", or "" */
} kernel_run;

/* A worker's alternate signal stack begins with this header, which says which kernel the thread
** runs. The handlers find it through sigaltstack, a system call: they read no thread-local, for
** the first read of one in a thread (of cujit when it is dlopen'd, as the Lua module is) may go
** through __tls_get_addr, and that may call malloc or free after any dlopen or dlclose in the
** process (the CPU device loads and unloads kernels' objects all the time): neither may be
** called in a signal handler. */
typedef struct signal_stack {
  unsigned long long magic;        /* SIGNAL_STACK_MAGIC: one of ours, not another library's */
  const struct signal_stack *self; /* and where it is */
  kernel_run *running;             /* the run of the kernel the thread is in, else NULL */
} signal_stack;
#define SIGNAL_STACK_MAGIC 0x636a5f616c747374ull /* "cj_altst" */

static __thread signal_stack *alt_stack; /* this thread's, read outside the handlers only */

/* The run of the kernel the interrupted thread is in, from its alternate stack's header; NULL
** when it runs none or its alternate stack is not ours. Async-signal-safe: the header lies at
** the lowest address of the registered stack, mapped memory whoever registered it. */
static kernel_run *running_here(void) {
  stack_t ss;
  if (sigaltstack(NULL, &ss) != 0 || (ss.ss_flags & SS_DISABLE) || !ss.ss_sp ||
      ss.ss_size < sizeof(signal_stack))
    return NULL;
  const signal_stack *header = ss.ss_sp;
  if (header->magic != SIGNAL_STACK_MAGIC || header->self != header) return NULL;
  return header->running;
}

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

/* Leaves the kernel of `run`, saying why and where: its block and thread from the shared
** object's cj_cpu_where, which reads only what the entry stored in the worker. */
_Noreturn static void leave_kernel(kernel_run *run, int sig, void *address) {
  run->stack->running = NULL;
  run->signal = sig;
  run->address = address;
  run->where[0] = '\0';
  const cj_cpu_job *job = run->job;
  if (job->where && !job->where(run->worker, run->where, sizeof run->where)) run->where[0] = '\0';
  siglongjmp(run->jump, 1);
}

static void on_crash(int sig, siginfo_t *info, void *context) {
  kernel_run *run = running_here();
  if (!run) {
    pass_on(sig, info, context);
    return;
  }
  if (sig == SIGFPE && info && cj_div_resume(info->si_code, context)) return; /* GPU's value */
  leave_kernel(run, sig, info ? info->si_addr : NULL);
}

/* What cujit's own abandon signals carry (pthread_sigqueue), so that one arriving after its kernel
** ended is told from the application's signal of the same number, or another process's. */
static char abandon_cookie;

static int sent_by_cujit(const siginfo_t *info) {
  return info && info->si_code == SI_QUEUE && info->si_pid == getpid() &&
         info->si_value.sival_ptr == (void *)&abandon_cookie;
}

/* Jumps out of the kernel when its pool is abandoning. Any other arrival goes where it would have
** gone without cujit: cujit's own signal, late (its kernel already ended), is dropped; someone
** else's goes to the previous handler, or takes the default action (a real-time signal's ends the
** process), or is ignored, as the previous disposition says. */
static void on_abandon(int sig, siginfo_t *info, void *context) {
  kernel_run *run = running_here();
  if (run && __atomic_load_n(&run->pool->abandoning, __ATOMIC_SEQ_CST))
    leave_kernel(run, sig, NULL);
  if (sent_by_cujit(info)) return;
  if ((previous_abandon.sa_flags & SA_SIGINFO) && previous_abandon.sa_sigaction) {
    previous_abandon.sa_sigaction(sig, info, context);
  } else if (previous_abandon.sa_handler == SIG_DFL) {
    signal(sig, SIG_DFL); /* delivered once this handler returns and unblocks it */
    raise(sig);
  } else if (previous_abandon.sa_handler != SIG_IGN) {
    previous_abandon.sa_handler(sig);
  }
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
  signal_stack *header = malloc(ALT_STACK_BYTES); /* the handlers' frames begin at its top */
  if (!header) return 0;
  *header = (signal_stack){.magic = SIGNAL_STACK_MAGIC, .self = header, .running = NULL};
  stack_t ss = {.ss_sp = header, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) {
    free(header);
    return 0;
  }
  alt_stack = header;
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
static int claim_error(cj_cpu_launch *launch) {
  int expected = 0;
  return __atomic_compare_exchange_n(&launch->error_set, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
}

static void report_crash(const kernel_run *run) {
  cj_cpu_launch *launch = run->job->launch;
  if (!claim_error(launch)) return;
  if (run->signal == ABANDON_SIGNAL) {
    snprintf(launch->error, sizeof launch->error,
             "kernel '%s' was abandoned on the CPU device%s%s while it still ran (a reset, or "
             "cujit_close after waiting for it): its work is unfinished",
             launch->kernel ? launch->kernel : "?", run->where[0] ? " in " : "", run->where);
    return;
  }
  /* Under the check build the sanitizer already watched every buffer: what still crashes is a
  ** stack overflow (the address in the thread's guard page, which the check build's where names)
  ** or an address outside any buffer. */
  snprintf(launch->error, sizeof launch->error,
           "kernel '%s' crashed on the CPU device%s%s with %s (address %p); %s",
           launch->kernel ? launch->kernel : "?", run->where[0] ? " in " : "", run->where,
           signal_meaning(run->signal), run->address,
           cj_env_cpu_check()
               ? "under CUJIT_CPU_CHECK=1 that is a stack overflow or a pointer "
                 "outside every buffer, which AddressSanitizer does not report"
               : "run it with CUJIT_CPU_CHECK=1 to have AddressSanitizer name the line");
}

/* Worker `index`'s part of the job. `run` lives in memory (its address is published), and what
** the handler writes into it is read after the siglongjmp. The abandoning flag is read after
** `running` is set, and cj_cpu_pool_abandon sets it before signalling: either the
** part never starts, or the signal finds it in the kernel. The floating-point environment (a
** fast-math kernel's flush to zero, a rounding mode a kernel set) is the kernel's own, as on a
** GPU: put back after it, also when a crash jumped out of it (Linux starts a signal handler
** with the default environment; elsewhere the kernel's could stay). */
static int run_part(cj_cpu_pool *pool, const cj_cpu_job *job, int index) {
  kernel_run run = {.pool = pool, .job = job, .worker = &job->workers[index]};
  if (!alt_stack && !cj_cpu_thread_begin()) { /* made as the thread began, unless out of memory */
    if (claim_error(job->launch))
      snprintf(job->launch->error, sizeof job->launch->error,
               "kernel '%s': out of host memory for a CPU worker's signal stack",
               job->launch->kernel ? job->launch->kernel : "?");
    return 1;
  }
  run.stack = alt_stack;
  run.worker->regs = NULL; /* the entry stores this thread's when it starts */
  fenv_t fenv;
  fegetenv(&fenv);
  if (sigsetjmp(run.jump, 1) == 0) {
    run.stack->running = &run;
    atomic_signal_fence(memory_order_seq_cst);
    if (!__atomic_load_n(&pool->abandoning, __ATOMIC_SEQ_CST)) {
      job->entry(job->launch, run.worker);
      run.stack->running = NULL;
      fesetenv(&fenv);
      return 0;
    }
    run.stack->running = NULL;
    run.signal = ABANDON_SIGNAL;
    report_crash(&run);
    return 1;
  }
  fesetenv(&fenv);
  report_crash(&run);
  if (job->release) job->release(run.worker); /* its fibers stopped mid-way */
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
  const union sigval ours = {.sival_ptr = &abandon_cookie};
  for (int i = 0; i + 1 < pool->threads; i++) pthread_sigqueue(pool->made[i], ABANDON_SIGNAL, ours);
  if (pool->has_caller) pthread_sigqueue(pool->caller, ABANDON_SIGNAL, ours);
  pthread_mutex_unlock(&pool->lock);
}

void cj_cpu_pool_resume(cj_cpu_pool *pool) {
  __atomic_store_n(&pool->abandoning, 0, __ATOMIC_SEQ_CST);
}
