/*
** cujit/cpu_sync.h -- the CPU device's scheduler and what kernels call into it: __syncthreads and
** its _count/_and/_or forms, the warp shuffles and votes, __syncwarp, __activemask, __trap and
** assert, dynamic shared memory, and the generated entries' template (see cpu_exec.h for the
** scheme). Every failure names the kernel, the block, the thread and the line.
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

static inline bool complete_exited(exec *ex);

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

struct warp_result {
  unsigned long long value;
  unsigned ballot, members;
};
/* The open meeting of `what` with `mask` in warp W, or a free one; NULL when all are taken. */
static inline warp_group *meeting(warp *W, const char *what, unsigned mask, int combine,
                                  bool exited_drop) {
  warp_group *free_group = nullptr;
  for (int k = 0; k < groups_per_warp; k++) {
    warp_group *G = &W->g[k];
    if (!G->arrived) {
      if (!free_group) free_group = G;
    } else if ((G->mask == mask || (combine == W_COALESCE && G->combine == W_COALESCE)) &&
               (G->what == what || strcmp(G->what, what) == 0)) {
      /* coalesced_threads(): each lane's mask is the lanes still running when it arrives */
      return G;
    }
  }
  if (free_group)
    free_group->what = what, free_group->mask = mask, free_group->pred = 0,
    free_group->combine = combine, free_group->exited_drop = exited_drop;
  return free_group;
}
/* What every lane of a reduction or __match_all_sync gets, from the values of `arrived`. */
static inline unsigned long long combine_all(const warp_group *G, unsigned arrived) {
  int c = G->combine;
  if (c == W_SELECT || c == W_MATCH_ANY || c == W_COALESCE) return 0;
  unsigned first = (unsigned)__builtin_ctz(arrived), r = (unsigned)G->in[first];
  for (unsigned l = first + 1; l < 32; l++) {
    if (!(arrived >> l & 1u)) continue;
    unsigned v = (unsigned)G->in[l];
    if (c == W_MATCH_ALL && G->in[l] != G->in[first]) return 0;
    r = c == W_ADD     ? r + v
        : c == W_MIN_S ? ((int)v < (int)r ? v : r)
        : c == W_MIN_U ? (v < r ? v : r)
        : c == W_MAX_S ? ((int)v > (int)r ? v : r)
        : c == W_MAX_U ? (v > r ? v : r)
        : c == W_AND   ? r & v
        : c == W_OR    ? r | v
        : c == W_XOR   ? r ^ v
                       : r;
  }
  return c == W_MATCH_ALL ? arrived : r;
}
/* __match_any_sync: the lanes whose value equals lane l's. */
static inline unsigned match_any(const warp_group *G, unsigned arrived, unsigned l) {
  unsigned m = 0;
  for (unsigned j = 0; j < 32; j++)
    if ((arrived >> j & 1u) && G->in[j] == G->in[l]) m |= 1u << j;
  return m;
}
/* One warp operation: this lane offers `value` and `pred`, and wants the value of lane `src` (or,
** with another `combine`, the reduction of every lane's value). */
enum { S_SELF, S_IDX, S_UP, S_DOWN, S_XOR };
/* The source lane of each shuffle kind, as PTX's shfl.sync defines it for a segment `width`: only
** the low 5 bits of the lane, delta or lane mask count (bval = b[4:0]), so a delta of 33 moves by 1
** and a lane mask of -1 is 31. */
static inline unsigned source_lane(unsigned lane, int kind, unsigned arg, int width) {
  arg &= 31u;
  unsigned lo = lane & ~(unsigned)(width - 1), hi = lo | (unsigned)(width - 1);
  switch (kind) {
  case S_IDX:
    return lo | (arg & (unsigned)(width - 1));
  case S_UP:
    return lane >= arg && lane - arg >= lo ? lane - arg : lane;
  case S_DOWN:
    return lane + arg <= hi ? lane + arg : lane;
  case S_XOR:
    return (lane ^ arg) <= hi ? lane ^ arg : lane;
  default:
    return lane;
  }
}
/* The lanes of warp w that returned. */
static inline unsigned exited(const exec *ex, unsigned w) {
  unsigned m = 0;
  for (unsigned l = 0; l < 32 && (w << 5) + l < ex->n; l++)
    if (ex->state[(w << 5) + l] == T_DONE) m |= 1u << l;
  return m;
}
/* Completes meeting G of warp w once the lanes `need` have arrived: each arrived lane's results,
** and every lane but `self` (32: none) set running. False while it waits for more. */
static inline bool complete_if_met(exec *ex, unsigned w, warp_group *G, unsigned need,
                                   unsigned self) {
  if ((G->arrived & need) != need) return false;
  unsigned arrived = G->arrived;
  unsigned long long all = combine_all(G, arrived);
  for (unsigned l = 0; l < 32; l++) {
    if (!(arrived >> l & 1u)) continue;
    unsigned s = (unsigned)G->src[l];
    fiber *fl = &ex->fibers[(w << 5) + l];
    fl->wvalue = G->combine == W_SELECT      ? ((arrived >> s & 1u) ? G->in[s] : G->in[l])
                 : G->combine == W_MATCH_ANY ? match_any(G, arrived, l)
                                             : all;
    fl->wballot = G->pred & arrived, fl->wmembers = arrived;
    if (l != self) ex->state[(w << 5) + l] = T_RUN;
  }
  G->arrived = 0;
  return true;
}
/* From unblock, once no lane can go on: the votes, reductions, matches and __syncwarps whose other
** lanes returned (a meeting completes at its last lane's arrival otherwise, at no extra cost). */
static inline bool complete_exited(exec *ex) {
  bool released = false;
  for (unsigned w = 0; w < (ex->n + 31) / 32; w++)
    for (int k = 0; k < groups_per_warp; k++) {
      warp_group *G = &ex->warps[w].g[k];
      if (G->arrived && G->exited_drop)
        released |= complete_if_met(ex, w, G, G->mask & ~exited(ex, w), 32);
    }
  return released;
}
static inline warp_result warp_op(const char *file, int line, const char *what, unsigned mask,
                                  unsigned long long value, int kind, unsigned arg, int width,
                                  int pred, int combine = W_SELECT) {
  exec *ex = me()->ex;
  unsigned t = current(ex), w = t >> 5, lane = t & 31u, bit = 1u << lane;
  unsigned src = source_lane(lane, kind, arg, width);
  unsigned lanes = ex->n - (w << 5) < 32 ? ex->n - (w << 5) : 32;
  mask = (mask & (lanes == 32 ? ~0u : (1u << lanes) - 1u)) | bit;
  /* CUDA's votes, reductions, matches and __syncwarp take the non-exited lanes of the mask; a
  ** shuffle reading a lane that returned is reported below (its value is undefined on a GPU). */
  bool exited_drop = kind == S_SELF && combine != W_COALESCE;
  if (exited_drop && mask != bit) {
    if (ex->in_runner) runner_catch_up(ex, t);
    if ((mask & ~exited(ex, w)) == bit) mask = bit;
  }
  if (mask == bit) /* alone: its own value, and a match with itself */
    return warp_result{combine == W_MATCH_ANY || combine == W_MATCH_ALL ? bit : value,
                       pred ? bit : 0u, bit};
  char at[320];
  if (ex->in_runner) runner_catch_up(ex, t);
  if (ex->in_runner && !exited_drop)
    for (unsigned l = 0; l < lanes; l++)
      if ((mask >> l & 1u) && ex->state[(w << 5) + l] == T_DONE) {
        where(at, sizeof at, ex->L->kernel, file, line);
        set_error(ex, t,
                  "waits at %s (%s) for lane %u, which returned (a warp whose first lanes "
                  "finish before the others reach a warp operation)",
                  what, at, l);
        abandon(ex);
      }
  warp_group *G = meeting(&ex->warps[w], what, mask, combine, exited_drop);
  if (!G) {
    where(at, sizeof at, ex->L->kernel, file, line);
    set_error(ex, t, "%s (%s): more than %d different warp operations pending in one warp", what,
              at, (int)groups_per_warp);
    abandon(ex);
  }
  G->in[lane] = value, G->src[lane] = (signed char)(src & 31u);
  G->pred |= pred ? bit : 0u, G->arrived |= bit;
  fiber *f = &ex->fibers[t];
  if (!ex->in_runner && complete_if_met(ex, w, G, G->mask, lane))
    return warp_result{f->wvalue, f->wballot, f->wmembers};
  f->file = file, f->line = line, f->what = what, f->pred = 0, f->wmask = mask;
  wait_here(ex, t, T_WARP);
  return warp_result{f->wvalue, f->wballot, f->wmembers};
}

template <class T> static inline unsigned long long to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp shuffles take values of at most 8 bytes");
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <class T> static inline T from_bits(unsigned long long b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}
template <class T>
static inline T shfl(const char *file, int line, unsigned mask, T v, int src, int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_sync", mask, to_bits(v), S_IDX, (unsigned)src, width, 0).value);
}
template <class T>
static inline T shfl_up(const char *file, int line, unsigned mask, T v, unsigned d,
                        int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_up_sync", mask, to_bits(v), S_UP, d, width, 0).value);
}
template <class T>
static inline T shfl_down(const char *file, int line, unsigned mask, T v, unsigned d,
                          int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_down_sync", mask, to_bits(v), S_DOWN, d, width, 0).value);
}
template <class T>
static inline T shfl_xor(const char *file, int line, unsigned mask, T v, int m, int width = 32) {
  return from_bits<T>(
      warp_op(file, line, "__shfl_xor_sync", mask, to_bits(v), S_XOR, (unsigned)m, width, 0).value);
}
static inline unsigned vote(const char *file, int line, const char *what, unsigned mask, int p) {
  warp_result r = warp_op(file, line, what, mask, 0, S_SELF, 0, 32, p);
  if (what[2] == 'b') return r.ballot;                        /* __ballot_sync */
  if (what[2] == 'a' && what[3] == 'n') return r.ballot != 0; /* __any_sync */
  if (what[2] == 'a') return r.ballot == r.members;           /* __all_sync */
  return 0;                                                   /* __syncwarp */
}
/* sm_80's warp reductions over 32-bit integers, and __match_any_sync / __match_all_sync. */
#define CJ_REDUCE(fn, name, T, combine)                                                            \
  static inline T fn(const char *file, int line, unsigned mask, T v) {                             \
    return (T)warp_op(file, line, name, mask, (unsigned)v, S_SELF, 0, 32, 0, combine).value;       \
  }
CJ_REDUCE(reduce_add, "__reduce_add_sync", unsigned, W_ADD)
CJ_REDUCE(reduce_add, "__reduce_add_sync", int, W_ADD)
CJ_REDUCE(reduce_min, "__reduce_min_sync", unsigned, W_MIN_U)
CJ_REDUCE(reduce_min, "__reduce_min_sync", int, W_MIN_S)
CJ_REDUCE(reduce_max, "__reduce_max_sync", unsigned, W_MAX_U)
CJ_REDUCE(reduce_max, "__reduce_max_sync", int, W_MAX_S)
CJ_REDUCE(reduce_and, "__reduce_and_sync", unsigned, W_AND)
CJ_REDUCE(reduce_or, "__reduce_or_sync", unsigned, W_OR)
CJ_REDUCE(reduce_xor, "__reduce_xor_sync", unsigned, W_XOR)
#undef CJ_REDUCE
template <class T>
static inline unsigned match_any_sync(const char *file, int line, unsigned mask, T v) {
  return (unsigned)warp_op(file, line, "__match_any_sync", mask, to_bits(v), S_SELF, 0, 32, 0,
                           W_MATCH_ANY)
      .value;
}
template <class T>
static inline unsigned match_all_sync(const char *file, int line, unsigned mask, T v, int *pred) {
  unsigned r = (unsigned)warp_op(file, line, "__match_all_sync", mask, to_bits(v), S_SELF, 0, 32, 0,
                                 W_MATCH_ALL)
                   .value;
  *pred = r != 0;
  return r;
}
/* __syncwarp() and __syncwarp(mask) through one macro: syncwarp(file, line)(mask). */
struct syncwarp {
  const char *file;
  int line;
  void operator()(unsigned mask = 0xffffffffu) const {
    vote(file, line, "__syncwarp", mask, 0);
  }
};
/* The lanes of this warp that have not returned. */
static inline unsigned activemask() {
  exec *ex = me()->ex;
  unsigned t = current(ex), w = t >> 5, m = 0;
  if (ex->in_runner) runner_catch_up(ex, t);
  for (unsigned l = 0; l < 32 && (w << 5) + l < ex->n; l++)
    if (ex->state[(w << 5) + l] != T_DONE) m |= 1u << l;
  return m;
}
/* __activemask(): the lanes of the warp that reach this call together, as on a GPU (where it is
** the lanes converged there): a meeting as coalesced_threads()'s, which the scheduler closes once
** no lane of the warp can go on (coalesce), so lanes that returned, or have yet to return, or took
** another branch are not in it. `site` tells this call from another one. */
static inline unsigned activemask_at(const char *file, int line, const char *site) {
  return warp_op(file, line, site, activemask(), 0, S_SELF, 0, 32, 0, W_COALESCE).members;
}
static inline void *dyn_shared() {
  return me()->ex->dyn;
}

/* For cj_cpu_where (cpu_abi.h): the CUDA thread running on this OS thread, formatted by hand
** (a fault handler calls it). */
static inline size_t put_text(char *buf, size_t at, size_t len, const char *s) {
  for (; *s && at + 1 < len; s++) buf[at++] = *s;
  return at;
}
static inline size_t put_uint(char *buf, size_t at, size_t len, unsigned v) {
  char digits[12];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n > 0 && at + 1 < len) buf[at++] = digits[--n];
  return at;
}
static inline size_t put_hex(char *buf, size_t at, size_t len, uintptr_t v) {
  int shift = 60;
  while (shift > 0 && !(v >> shift & 15u)) shift -= 4;
  for (; shift >= 0 && at + 1 < len; shift -= 4) buf[at++] = "0123456789abcdef"[v >> shift & 15u];
  return at;
}
static inline size_t put_triple(char *buf, size_t at, size_t len, const char *name, uint3 v) {
  at = put_text(buf, at, len, name);
  at = put_uint(buf, at, len, v.x), at = put_text(buf, at, len, ",");
  at = put_uint(buf, at, len, v.y), at = put_text(buf, at, len, ",");
  at = put_uint(buf, at, len, v.z);
  return put_text(buf, at, len, ")");
}
static inline int where_now(char *buf, size_t len) {
  const regs *r = me();
  if (!r->ex || !buf || len == 0) return 0;
  size_t at = put_triple(buf, 0, len, "block (", r->bid);
  at = put_triple(buf, at, len, " thread (", r->tid);
#if defined(CJ_CPU_CHECK)
  /* The guard page under this thread's own stack (cpu_fiber.h own_guard): a crash at an address in
  ** it is this thread overflowing its stack. */
  const exec *ex = r->ex;
  int slot = ex->in_runner ? ex->runner_slot : ex->fibers[current(ex)].slot;
  if (slot >= 0) {
    uintptr_t lo = (uintptr_t)ex->pool.lo[slot];
    at = put_text(buf, at, len, " (an address in 0x");
    at = put_hex(buf, at, len, lo - guard_bytes);
    at = put_text(buf, at, len, "-0x");
    at = put_hex(buf, at, len, lo - 1);
    at = put_text(buf, at, len, " is its stack overflowing)");
  }
#endif
  buf[at] = '\0';
  return 1;
}

/* --- the generated entries --------------------------------------------------------------------
 */
template <class F> struct params;
template <class... P> struct params<void (*)(P...)> {
  typedef std::tuple<typename std::decay<P>::type...> tuple;
  template <size_t... I> static tuple unpack(void **a, std::index_sequence<I...>) {
    return tuple(*(const typename std::decay<P>::type *)a[I]...);
  }
  static tuple unpack(void **a) {
    return unpack(a, std::index_sequence_for<P...>());
  }
};
/* Each parameter's size and alignment as g++ lays it out, exported beside the entry (cjp_<name>,
** constant data in the object's file): cujit reads a struct passed by value from it
** (compile/verify.c), as it reads the PTX's .param list for a GPU. */
template <class F> struct layout;
template <class... P> struct layout<void (*)(P...)> {
  unsigned long long count = sizeof...(P);
  unsigned long long size[sizeof...(P) + 1] = {sizeof(typename std::decay<P>::type)..., 0};
  unsigned long long align[sizeof...(P) + 1] = {alignof(typename std::decay<P>::type)..., 0};
};
template <auto K, class Args> static void call(const void *a) {
  run_thread<K>(me()->ex, *(const Args *)a);
}

static inline exec *worker_exec(cj_cpu_worker *w) {
  if (!w->state) {
    void *m = calloc(1, sizeof(exec));
    if (!m) return nullptr;
    exec *ex = new (m) exec();
    ex->runner_slot = -1;
    for (unsigned t = 0; t < max_threads; t++) ex->fibers[t].slot = -1;
    w->state = ex;
  }
  return (exec *)w->state;
}
static inline void worker_release(cj_cpu_worker *w) {
  exec *ex = (exec *)w->state;
  if (!ex) return;
  ex->pool.release();
  free(ex->dyn);
  ex->~exec();
  free(ex);
  w->state = nullptr;
}

/* Launch-wide setup shared by every kernel's entry; false when the launch cannot run. */
static inline bool begin_launch(exec *ex, cj_cpu_launch *L) {
  ex->L = L;
  unsigned long long n = (unsigned long long)L->block[0] * L->block[1] * L->block[2];
  if (n == 0 || n > max_threads) {
    ex->n = 1, ex->bx = 1, ex->bxy = 1;
    set_error(ex, 0, "a block of %llu threads: the CPU device runs 1 to %u", n,
              (unsigned)max_threads);
    return false;
  }
#if defined(__SANITIZE_ADDRESS__)
  /* Exactly the launch's size, however large the last one was: AddressSanitizer's red zone then
  ** starts at the first byte past it (posix_memalign takes any size). The sanitizer gives 0 bytes
  ** one addressable byte, poisoned here, so that any use of extern __shared__ is reported. */
  if (!ex->dyn || L->shared_bytes != ex->dyn_cap) {
    free(ex->dyn);
    void *p = nullptr;
    ex->dyn = posix_memalign(&p, 256, L->shared_bytes) == 0 ? (char *)p : nullptr;
    if (ex->dyn && L->shared_bytes == 0) __asan_poison_memory_region(ex->dyn, 1);
#else
  if (L->shared_bytes > ex->dyn_cap) {
    free(ex->dyn);
    ex->dyn = (char *)aligned_alloc(256, (L->shared_bytes + 255u) & ~255u);
#endif
    ex->dyn_cap = ex->dyn ? L->shared_bytes : 0;
    if (!ex->dyn) {
      set_error(ex, 0, "no memory for %u bytes of dynamic shared memory", L->shared_bytes);
      return false;
    }
  }
  ex->n = (unsigned)n, ex->bx = L->block[0], ex->bxy = L->block[0] * L->block[1];
  ex->state_dirty = true; /* from an earlier launch, perhaps with more threads */
  R.ex = ex;
  R.bdim = dim3(L->block[0], L->block[1], L->block[2]);
  R.gdim = dim3(L->grid[0], L->grid[1], L->grid[2]);
  context_of_this_thread(&ex->sched);
  install_check_hooks();
  return true;
}

template <auto K> static void entry(cj_cpu_launch *L, cj_cpu_worker *w) {
  typedef params<decltype(K)> P;
  typedef typename P::tuple Args;
  exec *ex = worker_exec(w);
  if (!ex) {
    int expected = 0;
    if (__atomic_compare_exchange_n(&L->error_set, &expected, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      snprintf(L->error, sizeof L->error, "kernel '%s': out of host memory", L->kernel);
    return;
  }
#ifdef __FAST_MATH__
  ftz_scope ftz; /* cpu_pool.c restores the register too when a crash jumps past this */
#endif
  Args args = P::unpack(L->args);
  ex->args = &args, ex->call = &call<K, Args>, ex->plain = &plain_loop<K, Args>;
  if (!begin_launch(ex, L)) return;
  if (L->cluster_size > 1) { /* a cluster launch: this worker's rank of its group's clusters */
    run_clusters(ex, (unsigned)w->index);
    R.ex = nullptr;
    return;
  }
  ex->cgroup = nullptr;
  /* Blocks are taken a few at a time when there are many: one contended atomic per block would
  ** cost more than a small block's threads. */
  unsigned long long total = L->total_blocks, chunk = total / 256 > 32 ? 32 : total / 256;
  chunk = chunk ? chunk : 1;
  while (!failed(ex)) {
    unsigned long long k = __atomic_fetch_add(&L->next_block, chunk, __ATOMIC_RELAXED);
    if (k >= total) break;
    ex->kend = k + chunk < total ? k + chunk : total;
    for (ex->k = k; ex->k < ex->kend && !failed(ex); ex->k++) {
      set_block(ex, me());
      run_block(ex);
      if (L->cooperative) __atomic_add_fetch(&L->grid_done, 1, __ATOMIC_ACQ_REL);
    }
  }
  R.ex = nullptr;
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
#define __shfl_sync(...) ::cj_cpu::shfl(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cj_cpu::shfl_up(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cj_cpu::shfl_down(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cj_cpu::shfl_xor(__FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(m, p)                                                                        \
  ::cj_cpu::vote(__FILE__, __LINE__, "__ballot_sync", (m), ::cj_cpu::predicate(p))
#define __any_sync(m, p)                                                                           \
  ((int)::cj_cpu::vote(__FILE__, __LINE__, "__any_sync", (m), ::cj_cpu::predicate(p)))
#define __all_sync(m, p)                                                                           \
  ((int)::cj_cpu::vote(__FILE__, __LINE__, "__all_sync", (m), ::cj_cpu::predicate(p)))
#define __syncwarp(...) (::cj_cpu::syncwarp{__FILE__, __LINE__}(__VA_ARGS__))
#define CJ_SYNC_STR2(x) #x
#define CJ_SYNC_STR(x) CJ_SYNC_STR2(x)
#define __activemask()                                                                             \
  ::cj_cpu::activemask_at(__FILE__, __LINE__,                                                      \
                          "__activemask() of " __FILE__ ":" CJ_SYNC_STR(__LINE__))
#define __reduce_add_sync(m, v) ::cj_cpu::reduce_add(__FILE__, __LINE__, (m), (v))
#define __reduce_min_sync(m, v) ::cj_cpu::reduce_min(__FILE__, __LINE__, (m), (v))
#define __reduce_max_sync(m, v) ::cj_cpu::reduce_max(__FILE__, __LINE__, (m), (v))
#define __reduce_and_sync(m, v) ::cj_cpu::reduce_and(__FILE__, __LINE__, (m), (v))
#define __reduce_or_sync(m, v) ::cj_cpu::reduce_or(__FILE__, __LINE__, (m), (v))
#define __reduce_xor_sync(m, v) ::cj_cpu::reduce_xor(__FILE__, __LINE__, (m), (v))
#define __match_any_sync(m, v) ::cj_cpu::match_any_sync(__FILE__, __LINE__, (m), (v))
#define __match_all_sync(m, v, p) ::cj_cpu::match_all_sync(__FILE__, __LINE__, (m), (v), (p))
#define __trap() ::cj_cpu::fail_here(__FILE__, __LINE__, "__trap() was called")
#define __brkpt() ::cj_cpu::fail_here(__FILE__, __LINE__, "__brkpt() was called")

/* assert(): glibc's macro calls __assert_fail, which this hidden definition takes over inside the
** shared object, so the failure is a launch error naming the thread instead of an abort. */
extern "C" __attribute__((visibility("hidden"), noreturn)) void
__assert_fail(const char *expr, const char *file, unsigned line, const char *) noexcept {
  char what[256];
  snprintf(what, sizeof what, "assertion '%s' failed", expr);
  ::cj_cpu::fail_here(file, (int)line, what);
}
