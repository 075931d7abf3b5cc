/*
** cujit/cpu_sync.h -- the CPU device's scheduler and the block barrier: how a block's threads start
** as fibers and run until they meet, what unblocks them (a completed barrier, a warp meeting whose
** other lanes returned, coalesced_threads' lanes) or names their divergence, a thread's time slice,
** and __syncthreads with its _count/_and/_or forms (see cpu_exec.h for the scheme). The warp
** operations follow in cpu_warp.h, the generated entries in cpu_launch.h. Every failure names the
** kernel, the block, the thread and the line.
*/
#pragma once

namespace cj_cpu {

/* --- starting and describing threads ----------------------------------------------------------
 */
static inline bool start_fiber(exec *ex, unsigned t) {
  int slot = ex->pool.take();
  if (slot < 0) {
    set_error(ex, t, "no memory left for the block's fiber stacks");
    return false;
  }
  ex->fibers[t].slot = slot;
  ex->fibers[t].tid = tid_of(ex, t);
  ex->state_dirty = true;
  context_make(&ex->fibers[t].ctx, ex->pool.lo[slot], stack_bytes, fiber_main, ex);
  ex->state[t] = T_RUN;
  return true;
}
static inline bool start_range(exec *ex, unsigned first, unsigned end) {
  for (unsigned t = first; t < end; t++)
    if (ex->state[t] == T_NEW && !start_fiber(ex, t)) return false;
  return true;
}
static inline void describe(const exec *ex, unsigned t, char *buf, size_t len) {
  const fiber *f = &ex->fibers[t];
  char w[320];
  if (ex->state[t] == T_DONE) {
    snprintf(buf, len, "returned");
  } else {
    where(w, sizeof w, ex->L->kernel, f->file, f->line);
    snprintf(buf, len, "waits at %s (%s)", f->what, w);
  }
}
static inline void thread_name(const exec *ex, unsigned t, char *buf, size_t len) {
  uint3 v = tid_of(ex, t);
  snprintf(buf, len, "thread (%u,%u,%u)", v.x, v.y, v.z);
}

/* --- the scheduler ----------------------------------------------------------------------------
 */
/* coalesced_threads() (cpu_cg.h): once no thread of the block can run, the lanes that reached the
** call are the group (the others took another branch, returned, or wait elsewhere), as on a GPU.
** The warp's other lanes have all started: a warp operation or barrier starts a whole warp. */
static inline bool coalesce(exec *ex) {
  bool released = false;
  for (unsigned w = 0; w < (ex->n + 31) / 32; w++)
    for (int k = 0; k < groups_per_warp; k++) {
      warp_group *G = &ex->warps[w].g[k];
      if (!G->arrived || G->combine != W_COALESCE) continue;
      for (unsigned l = 0; l < 32; l++)
        if (G->arrived >> l & 1u) {
          fiber *f = &ex->fibers[(w << 5) + l];
          f->wvalue = 0, f->wballot = 0, f->wmembers = G->arrived;
          ex->state[(w << 5) + l] = T_RUN;
        }
      G->arrived = 0, released = true;
    }
  return released;
}

static inline bool complete_exited(exec *ex); /* cpu_warp.h */

/* Nobody can run and someone waits: complete the barrier, start the rest of the block, or name
** the divergence. True when fibers may run again; false when all are done or on an error. */
static inline bool unblock(exec *ex, bool *error) {
  unsigned n = ex->n, nbar = 0, bar = n, warp_waiter = n, fresh = n, done = n;
  for (unsigned t = 0; t < n; t++) {
    unsigned char s = ex->state[t];
    if (s == T_BAR && nbar++ == 0) bar = t;
    if (s == T_WARP && warp_waiter == n) warp_waiter = t;
    if (s == T_NEW && fresh == n) fresh = t;
    if (s == T_DONE && done == n) done = t;
  }
  char a[400], b[400], who[64];
  *error = false;
  if (warp_waiter < n && (coalesce(ex) || complete_exited(ex))) return true;
  *error = true;
  if (warp_waiter < n) { /* a lane it needs returned, or waits elsewhere */
    unsigned w = warp_waiter >> 5, missing = 0;
    const fiber *f = &ex->fibers[warp_waiter];
    for (int k = 0; k < groups_per_warp; k++) {
      const warp_group *G = &ex->warps[w].g[k];
      if (G->arrived >> (warp_waiter & 31u) & 1u) missing = f->wmask & ~G->arrived;
    }
    unsigned lane = missing ? (unsigned)__builtin_ctz(missing) : 0;
    describe(ex, warp_waiter, a, sizeof a);
    describe(ex, w * 32 + lane, b, sizeof b);
    thread_name(ex, w * 32 + lane, who, sizeof who);
    set_error(ex, warp_waiter, "%s for lane %u, %s, which %s", a, lane, who, b);
    return false;
  }
  if (nbar == 0) {
    *error = false;
    return false;
  }
  describe(ex, bar, a, sizeof a);
  if (done < n) { /* "returned while 255 threads wait at __syncthreads (line 9)" */
    set_error(ex, done, "returned while %u thread%s wait%s%s", nbar, nbar == 1 ? "" : "s",
              nbar == 1 ? "s" : "", a + strlen("waits"));
    return false;
  }
  if (fresh < n) { /* a warp's fibers reached a barrier first: the whole block takes part */
    *error = !start_range(ex, 0, n);
    return !*error;
  }
  const fiber *f0 = &ex->fibers[bar];
  int count = 0;
  for (unsigned t = 0; t < n; t++) {
    const fiber *f = &ex->fibers[t];
    bool same = f->line == f0->line && (f->file == f0->file || strcmp(f->file, f0->file) == 0) &&
                (f->what == f0->what || strcmp(f->what, f0->what) == 0);
    if (!same || f->site != f0->site) { /* site: the check build's call path (barrier_site) */
      describe(ex, t, b, sizeof b);
      thread_name(ex, bar, who, sizeof who);
      set_error(ex, t, "%s while %s %s%s", b, who, a,
                same ? ", reached another way (another call of the same line, macro or function: "
                       "divergent barriers)"
                     : "");
      return false;
    }
    count += f->pred;
  }
  if (strcmp(f0->what, "grid_group::sync") == 0 && !grid_wait(ex, f0->file, f0->line)) return false;
  if (strcmp(f0->what, "cluster_group::sync") == 0 && !cluster_wait(ex, f0->file, f0->line))
    return false;
  ex->bar_result = strcmp(f0->what, "__syncthreads_and") == 0  ? count == (int)n
                   : strcmp(f0->what, "__syncthreads_or") == 0 ? count > 0
                                                               : count;
  ex->phase++;
  make_order(ex);
  memset(ex->state, T_RUN, n);
  *error = false;
  return true;
}

/* Runs the block's fibers until all are done; false on an error (recorded). */
static inline bool run_fibers(exec *ex) {
  ex->conv = CONV_NONE;
  for (;;) {
    unsigned i = 0, t = 0;
    for (; i < ex->n; i++) {
      t = ex->order ? ex->order[i] : i;
      if (ex->state[t] == T_RUN) break;
    }
    if (i < ex->n) { /* a sweep: the fibers pass control along until the end of the order */
      ex->sweep = i;
      resume(ex, t);
      if (ex->conv == CONV_FAIL) return false;
      continue;
    }
    bool error;
    if (!unblock(ex, &error)) return !error;
  }
}

static inline void give_back_fibers(exec *ex, bool failed_block) {
  for (unsigned t = 0; t < ex->n; t++) {
    int slot = ex->fibers[t].slot;
    if (slot < 0) continue;
    overflowed(ex, t, slot);
    stack_unpoison(ex->pool.lo[slot], stack_bytes, failed_block);
    ex->pool.give((unsigned)slot), ex->fibers[t].slot = -1;
  }
}

/* Runs block ex->block on this OS thread (and, in the runner's fast loop, the blocks after it up
** to ex->kend: ex->k says how far it got). */
static inline void run_block(exec *ex) {
  unsigned n = ex->n;
  ex->phase = 0, ex->pos = 0;
  make_order(ex);
  if (ex->state_dirty) {
    memset(ex->state, T_NEW, n);
    for (unsigned w = 0; w < (n + 31) / 32; w++) /* a failed block may have left some open */
      for (int k = 0; k < groups_per_warp; k++) ex->warps[w].g[k].arrived = 0;
    ex->state_dirty = false;
  }
  for (;;) {
    if (ex->runner_slot < 0) {
      ex->runner_slot = ex->pool.take();
      if (ex->runner_slot < 0) {
        set_error(ex, 0, "no memory left for the runner's stack");
        return;
      }
      context_make(&ex->runner, ex->pool.lo[ex->runner_slot], stack_bytes, runner_main, ex);
    }
    ex->in_runner = true;
    ex->conv = CONV_NONE;
    context_switch(&ex->sched, &ex->runner, false);
    ex->in_runner = false;
    if (ex->conv == CONV_NONE) { /* the loop ran every remaining thread */
      overflowed(ex, any_thread, ex->runner_slot);
      return;
    }
    if (ex->conv == CONV_FAIL) { /* the runner's stack is abandoned: reuse it */
      stack_unpoison(ex->pool.lo[ex->runner_slot], stack_bytes, true);
      ex->pool.give((unsigned)ex->runner_slot);
      ex->runner_slot = -1;
      return;
    }
    /* The runner's thread `cur` reached a barrier or warp operation: its stack is its fiber. */
    unsigned t = current(ex);
    runner_catch_up(ex, t);
    ex->fibers[t].slot = ex->runner_slot;
    ex->fibers[t].tid = tid_of(ex, t);
    ex->runner_slot = -1;
    ex->runner_gen++, ex->limit = 0;
    if (!ex->order) ex->pos = t;
    ex->pos++;
    bool ok = true;
    if (ex->conv != CONV_WARP) { /* a barrier, or a time slice's end: the whole block */
      ok = start_range(ex, 0, n);
    } else {
      unsigned first = t & ~31u, end = first + 32 < n ? first + 32 : n;
      ok = start_range(ex, first, end);
    }
    ok = ok && run_fibers(ex);
    give_back_fibers(ex, !ok);
    if (!ok) return;
  }
}

/* --- what kernels call --------------------------------------------------------------------- */
/* Thread t waits (T_BAR or T_WARP) until the scheduler or a warp's last lane lets it go on. In
** the runner, this is where the runner's stack becomes t's fiber. */
static inline void wait_here(exec *ex, unsigned t, unsigned char why) {
  fiber *f = &ex->fibers[t];
  ex->state[t] = why;
  if (ex->in_runner) {
    ex->conv = why == T_BAR ? CONV_BAR : CONV_WARP;
    f->ctx.bottom = ex->runner.bottom, f->ctx.size = ex->runner.size;
    context_switch(&f->ctx, &ex->sched, false);
  } else {
    switch_next(ex, t, false);
  }
}
/* The running thread's time slice is over (see cpu_exec.h): on to the next thread, which in the
** runner first makes the block fibers. Out of a kernel (a loop run when the object is loaded) or
** in a block of one thread there is nobody to yield to. Returns the next slice's iterations. */
__attribute__((noinline)) static unsigned slice_over() {
  exec *ex = me()->ex;
  if (!ex || ex->n < 2) return slice_iterations;
  unsigned t = current(ex);
  fiber *f = &ex->fibers[t];
  ex->state[t] = T_RUN;
  if (ex->in_runner) {
    ex->conv = CONV_YIELD;
    f->ctx.bottom = ex->runner.bottom, f->ctx.size = ex->runner.size;
    context_switch(&f->ctx, &ex->sched, false);
  } else {
    switch_next(ex, t, false, true);
  }
  return slice_iterations;
}
/* At the top of every loop body of the user's code (cpu_source.c writes the call and the loop's
** counter): one decrement per iteration. constexpr, and nothing at all in a constant evaluation,
** so that the loops of constexpr functions stay constant expressions. */
constexpr bool tick(unsigned &left) {
  if (!__builtin_is_constant_evaluated() && __builtin_expect(--left == 0, 0)) left = slice_over();
  return false;
}

#if defined(CJ_CPU_CHECK)
/* The check build's identity of a barrier call: the return addresses of the frames from here up
** to run_kernel's (the check build keeps frame pointers), so that two __syncthreads on one line,
** in one macro, or in one helper function called from two places are two barriers, as they are to
** CUDA, while every thread that calls one helper from one place, in a loop or not, meets the
** others there. The walk stays on this stack, below `top`. */
__attribute__((noinline, noclone, no_sanitize_address)) static unsigned long long
barrier_site(const void *top) {
  unsigned long long h = 0x243F6A8885A308D3ull;
  const void *const *f = (const void *const *)__builtin_frame_address(0);
  for (int depth = 0; depth < 256 && (const void *)f < top; depth++) {
    h = mix(h ^ (unsigned long long)(uintptr_t)f[1]);
    const void *const *up = (const void *const *)f[0];
    if (up <= f) break;
    f = up;
  }
  return h;
}
#endif

static inline int barrier(const char *file, int line, const char *what, int pred) {
  exec *ex = me()->ex;
  unsigned t = current(ex);
  fiber *f = &ex->fibers[t];
  f->file = file, f->line = line, f->what = what, f->pred = pred;
#if defined(CJ_CPU_CHECK)
  f->site = barrier_site(f->kframe);
#endif
  wait_here(ex, t, T_BAR);
  return ex->bar_result;
}

} // namespace cj_cpu

/* --- the CUDA names ---------------------------------------------------------------------------
 */
namespace cj_cpu {
/* A vote's or barrier's predicate as CUDA's `int predicate` parameter takes it: converted to int
** first (0.5f is 0, 1ll << 32 is 0, a pointer does not compile), then tested for non-zero. */
static inline int predicate(int p) {
  return p != 0;
}
} // namespace cj_cpu
#define __syncthreads() ((void)::cj_cpu::barrier(__FILE__, __LINE__, "__syncthreads", 0))
#define __syncthreads_count(p)                                                                     \
  ::cj_cpu::barrier(__FILE__, __LINE__, "__syncthreads_count", ::cj_cpu::predicate(p))
#define __syncthreads_and(p)                                                                       \
  ::cj_cpu::barrier(__FILE__, __LINE__, "__syncthreads_and", ::cj_cpu::predicate(p))
#define __syncthreads_or(p)                                                                        \
  ::cj_cpu::barrier(__FILE__, __LINE__, "__syncthreads_or", ::cj_cpu::predicate(p))
