/*
** interrupt.c -- what stops a wait and what must not stop a write: cujit_interrupt and the marks
** waits take (cj_interrupt_mark, cj_interrupted: lock-free, so a signal handler may interrupt),
** and SIGXFSZ held off while a thread writes a file, so that `ulimit -f` gives EFBIG instead of
** ending the process (cj_fsize_guard). Declared in base.h.
*/
#include "base.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

void cujit_interrupt(cujit_engine *engine) {
  if (engine) atomic_fetch_add(&engine->interrupts, 1); /* lock-free: fine in a signal handler */
}

/* Marks every interrupt so far as reported; `seen` is a count read earlier. The count only moves
** forward (modulo 2^32), so an older `seen` never undoes a newer report. */
static void mark_reported(cujit_engine *engine, unsigned seen) {
  unsigned old = atomic_load(&engine->reported);
  while ((int)(seen - old) > 0 && !atomic_compare_exchange_weak(&engine->reported, &old, seen)) {
  }
}

void cujit_interrupt_clear(cujit_engine *engine) {
  if (engine) mark_reported(engine, atomic_load(&engine->interrupts));
}

unsigned cj_interrupt_mark(cujit_engine *engine) {
  /* A pending interrupt (not reported yet) dates the mark before it, so the wait reports it. */
  return atomic_load(&engine->reported);
}

int cj_interrupted(cujit_engine *engine, unsigned mark) {
  unsigned now = atomic_load(&engine->interrupts);
  if (now == mark) return 0;
  mark_reported(engine, now);
  return 1;
}

void cj_fsize_guard(cj_fsize *g) {
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &g->old);
  /* One already pending (the caller's own, blocked before) is not ours to consume. */
  g->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
}

void cj_fsize_release(cj_fsize *g) {
  int saved = errno; /* the caller reads the write's errno after this */
  sigset_t xfsz, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  if (!g->was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ)) {
    struct timespec now = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &now) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &g->old, NULL);
  errno = saved;
}
