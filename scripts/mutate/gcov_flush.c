/*
** gcov_flush.c -- linked into every executable of the coverage build only
** (scripts/mutate/coverage.sh). gcov writes a process's counters when it exits normally. A
** process that ends otherwise loses them, and the map would call everything it ran executed by
** no test, its mutants "not covered". Three such ends, each made to write the counters first:
**  - execv (the REPL's :restart, the command starting itself again): -Wl,--wrap=execv.
**  - _exit and _Exit (a test's forked child, a CPU-check report inside a kernel's shared object):
**    defined here and exported (-Wl,--export-dynamic-symbol), so the executable, the engine linked
**    into it and every object it loads later end through these. glibc's exit() reaches its own
**    _exit by an internal name, not this one, after gcov's exit handler has written the counters.
**  - the default action of a fatal signal, which cujit's CPU device restores before a fault
**    outside any kernel re-runs and kills (test_cpu_signals' children): -Wl,--wrap=signal writes
**    the counters when SIG_DFL is set for such a signal, then zeroes them, so a process that lives
**    on adds only what it runs after.
*/
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void __gcov_dump(void);
extern void __gcov_reset(void);
extern int __real_execv(const char *path, char *const argv[]);
extern void (*__real_signal(int sig, void (*handler)(int)))(int);

int __wrap_execv(const char *path, char *const argv[]);
void (*__wrap_signal(int sig, void (*handler)(int)))(int);
void _exit(int status);
void _Exit(int status);

int __wrap_execv(const char *path, char *const argv[]) {
  __gcov_dump();
  int rc = __real_execv(path, argv);
  __gcov_reset(); /* exec failed and the process goes on: count from here, as gcc's own wrapper */
  return rc;
}

void (*__wrap_signal(int sig, void (*handler)(int)))(int) {
  int fatal = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
  if (fatal && handler == SIG_DFL) {
    __gcov_dump();
    __gcov_reset();
  }
  return __real_signal(sig, handler);
}

/* The system call itself, as glibc's _exit makes it: nothing else may run in a child that must
** not return (no atexit handlers, no stdio flush). */
void _exit(int status) {
  __gcov_dump();
  for (;;) syscall(SYS_exit_group, status);
}

void _Exit(int status) {
  _exit(status);
}
