/*
** cujit/cpu_exec.h -- the CPU device's block executor: how the CUDA threads of a block run on one
** OS thread, with barriers, warp operations and the errors a GPU would not report.
**
** Lazy fibers. Each block starts as a plain loop over its threads on a "runner" stack, with the
** kernel inlined into the loop: a barrier-free kernel never switches context. When a thread
** reaches __syncthreads or a warp operation while in that loop, the runner's stack becomes that
** thread's fiber (its continuation is right there), the other threads that must meet it (the whole
** block for a barrier, its warp for a warp operation) start as fibers on stacks of their own, and
** a round-robin scheduler on the worker's stack runs them between barriers in schedule order.
** Threads that already finished in the loop cannot take part, so a barrier reached after one of
** them returned is barrier divergence, reported as such; afterwards the loop goes on with a fresh
** runner for whatever has not run.
**
** Time slices. A thread that runs a long loop without a barrier (the accumulation of a grid-stride
** reduction) would otherwise run all of it before the next thread starts, so each cache line of
** the input would be fetched once per thread that reads part of it, and a stride through a large
** array misses the TLB at every step. cpu_source.c gives every loop of the user's code a counter
** and a tick at the top of its body; after `slice_iterations` iterations of one loop, a thread
** yields to the next one (in the runner, that makes the block fibers, as a barrier does). The
** threads of a block then advance through their loops side by side, as a GPU's do, and share the
** lines they read. A thread whose loops are shorter never yields.
**
** Warp operations deposit each lane's value in per-warp scratch; the last lane to arrive computes
** every lane's result (an implicit warp barrier), so shuffles, votes and __syncwarp are one
** mechanism. Lanes are 32 consecutive linear thread ids, as on the GPU.
*/
#pragma once

namespace cj_cpu {

enum : unsigned char { T_NEW, T_DONE, T_RUN, T_BAR, T_WARP };
enum { CONV_NONE, CONV_BAR, CONV_WARP, CONV_YIELD, CONV_FAIL };
enum { max_threads = 1024 };
/* Loop iterations a thread runs before it yields: few enough that the lines a block's slices of
** a grid-stride loop read stay in L1 and L2, enough that the switch (a few ns) costs little
** against the slice's work; not a power of two, so that the inner loop of a tiled kernel (16, 32
** or 64 iterations between barriers) does not yield once per tile for nothing. */
enum : unsigned { slice_iterations = 48 };

struct fiber {
  context ctx;
  uint3 tid; /* its threadIdx, computed once when it starts */
  int slot;
  const char *file; /* where it waits, and what */
  int line;
  const char *what;
  int pred;
  unsigned wmask;            /* the member mask of the warp operation it waits in */
  unsigned long long wvalue; /* that operation's results for this lane */
  unsigned wballot, wmembers;
  unsigned long long site; /* check build: the call path to the barrier it waits at */
  const void *kframe;      /* check build: run_kernel's frame, where that path starts */
};

/* Lanes meet in a warp operation when they name the same operation and member mask, as PTX's
** shfl.sync and vote.sync define it; a warp may have a few such meetings open at once (lanes
** 0-7 in one reduction, 8-31 already in the next shuffle). */
enum {
  W_SELECT,
  W_ADD,
  W_MIN_S,
  W_MIN_U,
  W_MAX_S,
  W_MAX_U,
  W_AND,
  W_OR,
  W_XOR,
  W_MATCH_ANY,
  W_MATCH_ALL,
  W_COALESCE /* coalesced_threads() (cpu_cg.h): the lanes that arrive, once no other lane can */
};
struct warp_group {
  const char *what;
  int combine;      /* W_SELECT: each lane takes lane src's value; else what all lanes get */
  bool exited_drop; /* a vote, reduction, match or __syncwarp: lanes that returned are not in it */
  unsigned mask, arrived, pred;
  signed char src[32];
  unsigned long long in[32];
};
/* Tiles of 2 (cpu_cg.h) are 16 groups of one warp, each with a meeting of its own open at once. */
enum { groups_per_warp = 16 };
struct warp {
  warp_group g[groups_per_warp];
};

struct exec {
  /* the launch */
  cj_cpu_launch *L;
  const void *args;               /* the kernel's arguments, unpacked */
  void (*call)(const void *args); /* runs the kernel once for the current thread */
  void (*plain)(exec *);          /* the runner's loop, with the kernel inlined */
  char *dyn;                      /* dynamic shared memory */
  size_t dyn_cap;
  /* the block */
  unsigned n, bx, bxy;               /* threads; blockDim.x; blockDim.x * blockDim.y */
  unsigned long long k, kend, block; /* this worker's blocks k..kend-1 in launch order; block k */
  /* a cluster launch (cpu_cluster.h): this worker's group, its rank there, and how many clusters
  ** the group finished before the current one */
  cj_cpu_cluster_group *cgroup;
  unsigned crank;
  unsigned long long cround;
  unsigned pos;                      /* the runner's position in `order` */
  unsigned sweep;                    /* the running fiber's position in `order` */
  unsigned phase;                    /* barrier phases completed */
  unsigned *order;                   /* schedule order of this phase; NULL: forward */
  bool in_runner;
  bool state_dirty;    /* state[] holds more than T_NEW (the fast loop leaves it untouched) */
  int conv;            /* why the runner (or a failing fiber) came back */
  unsigned runner_gen; /* bumped when the runner's stack becomes a fiber */
  unsigned limit;      /* the fast loop's bound (0 after a conversion) */
  int runner_slot;     /* -1: no runner */
  int bar_result;
  context sched, runner;
  unsigned char state[max_threads];
  fiber fibers[max_threads];
  warp warps[max_threads / 32];
  unsigned order_buf[max_threads];
  stack_pool pool;
};

/* --- messages ---------------------------------------------------------------------------------
 */
static inline uint3 tid_of(const exec *ex, unsigned t) {
  if (ex->n == ex->bx) return uint3{t, 0, 0};
  return uint3{t % ex->bx, (t % ex->bxy) / ex->bx, t / ex->bxy};
}
/* The linear id of the CUDA thread running now (the loops write only threadIdx). */
static inline unsigned current(const exec *ex) {
  const regs *r = me();
  return r->tid.x + ex->bx * r->tid.y + ex->bxy * r->tid.z;
}
/* The runner's fast loop does not mark the threads it finishes; in forward order they are those
** before the current one. Called where a thread's state matters while the runner runs. */
static inline void runner_catch_up(exec *ex, unsigned t) {
  ex->state_dirty = true;
  if (!ex->order)
    for (unsigned u = ex->pos; u < t; u++) ex->state[u] = T_DONE;
}
/* "line 7" for the kernel's own body (#line names it after the kernel, and its preamble
** "kernel:preamble", as source.c writes them), else "file:7". */
static inline void where(char *buf, size_t len, const char *kernel, const char *file, int line) {
  size_t kl = kernel ? strlen(kernel) : 0;
  if (file && kernel && strcmp(file, kernel) == 0)
    snprintf(buf, len, "line %d", line);
  else if (file && kernel && strncmp(file, kernel, kl) == 0 && strcmp(file + kl, ":preamble") == 0)
    snprintf(buf, len, "line %d of its preamble", line);
  else
    snprintf(buf, len, "%s:%d", file ? file : "?", line);
}
/* Writes launch->error once: "kernel 'k': block (x,y,z) thread (a,b,c): <text>", without the
** thread for any_thread. */
enum : unsigned { any_thread = ~0u };
__attribute__((format(printf, 3, 4))) static inline void set_error(exec *ex, unsigned t,
                                                                   const char *fmt, ...) {
  int expected = 0;
  cj_cpu_launch *L = ex->L;
  if (!__atomic_compare_exchange_n(&L->error_set, &expected, 1, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  uint3 b = R.bid, th = tid_of(ex, t == any_thread ? 0 : t);
  int k = t == any_thread ? snprintf(L->error, sizeof L->error,
                                     "kernel '%s': block (%u,%u,%u): ", L->kernel, b.x, b.y, b.z)
                          : snprintf(L->error, sizeof L->error,
                                     "kernel '%s': block (%u,%u,%u) thread (%u,%u,%u): ", L->kernel,
                                     b.x, b.y, b.z, th.x, th.y, th.z);
  va_list ap;
  va_start(ap, fmt);
  if (k > 0 && (size_t)k < sizeof L->error) vsnprintf(L->error + k, sizeof L->error - k, fmt, ap);
  va_end(ap);
}
static inline bool failed(const exec *ex) {
  return __atomic_load_n(&ex->L->error_set, __ATOMIC_RELAXED) != 0;
}

/* Blocks on OS threads of their own meeting at a barrier (the grid of a cooperative launch, a
** cluster), once this whole block waits at it: `total` blocks, counted at `*arrived` for phase
** `*phase`, of which `*done - done_base` returned. False (recorded) when a block failed, or
** returned without reaching it (`whose`: the group, `rule`: what a GPU requires).
** A waiter that still sees the phase after reading `*arrived` and `*done` read no block of a later
** phase there (those arrive, or return, only after the phase moved on, which the acquire loads then
** show), so what it counts waits or returned in this phase; except that `*arrived` reads `total`
** from the last block's arrival until its release resets it: that block is releasing the barrier,
** not missing from it (a waiter on another core reads it there often enough to fail launches). */
static inline bool blocks_meet(exec *ex, unsigned long long *arrived, unsigned long long *phase,
                               const unsigned long long *done, unsigned long long done_base,
                               unsigned long long total, const char *file, int line,
                               const char *what, const char *whose, const char *rule) {
  unsigned long long now = __atomic_load_n(phase, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL) == total) {
    __atomic_store_n(arrived, 0, __ATOMIC_RELAXED); /* before the phase: seen with it */
    __atomic_store_n(phase, now + 1, __ATOMIC_RELEASE);
    return true;
  }
  while (__atomic_load_n(phase, __ATOMIC_ACQUIRE) == now) {
    if (failed(ex)) return false;
    unsigned long long waiting = __atomic_load_n(arrived, __ATOMIC_ACQUIRE);
    if (waiting < total &&
        waiting + (__atomic_load_n(done, __ATOMIC_ACQUIRE) - done_base) >= total &&
        __atomic_load_n(phase, __ATOMIC_ACQUIRE) == now) {
      char w[320];
      where(w, sizeof w, ex->L->kernel, file, line);
      set_error(ex, any_thread,
                "waits at %s (%s) for a block of %s that returned without reaching it: %s, as on "
                "a GPU",
                what, w, whose, rule);
      return false;
    }
    sched_yield();
  }
  return true;
}

/* this_grid().sync() of a cooperative launch (cpu_cg.h): the grid's other blocks, each on a
** worker of its own (cpu_abi.h). */
static inline bool grid_wait(exec *ex, const char *file, int line) {
  cj_cpu_launch *L = ex->L;
  return blocks_meet(ex, &L->grid_arrived, &L->grid_phase, &L->grid_done, 0, L->total_blocks, file,
                     line, "grid_group::sync", "the grid",
                     "every block must reach each grid-wide barrier");
}

/* cluster_group::sync() (cpu_cg.h): the other blocks of the cluster, each on a worker of its group
** (cpu_cluster.h); the group's blocks that returned before this cluster are not its own. */
static inline bool cluster_wait(exec *ex, const char *file, int line) {
  cj_cpu_cluster_group *G = ex->cgroup;
  if (!G) return true; /* no cluster: the block is a cluster of one */
  unsigned long long size = ex->L->cluster_size;
  return blocks_meet(ex, &G->arrived, &G->phase, &G->done, ex->cround * size, size, file, line,
                     "cluster_group::sync", "its cluster",
                     "every block of a cluster must reach each cluster barrier");
}

/* --- schedules --------------------------------------------------------------------------------
 */
static inline unsigned long long mix(unsigned long long x) { /* splitmix64's finaliser */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
/* The order threads run in during the current phase: NULL (forward), reversed, or shuffled. */
static inline void make_order(exec *ex) {
  cj_cpu_launch *L = ex->L;
  if (L->schedule == CJ_CPU_FORWARD) {
    ex->order = nullptr;
    return;
  }
  unsigned n = ex->n, *o = ex->order_buf;
  for (unsigned i = 0; i < n; i++) o[i] = L->schedule == CJ_CPU_REVERSE ? n - 1 - i : i;
  if (L->schedule == CJ_CPU_RANDOM) {
    unsigned long long s = mix(L->schedule_seed ^ mix(ex->block * 0x100000001ull + ex->phase));
    for (unsigned i = n - 1; i > 0; i--) {
      s = mix(s);
      unsigned j = (unsigned)(s % (i + 1)), tmp = o[i];
      o[i] = o[j], o[j] = tmp;
    }
  }
  ex->order = o;
}
/* Block k of the launch in schedule order: forward, reversed, or an affine permutation. */
static inline unsigned long long block_at(const cj_cpu_launch *L, unsigned long long k) {
  unsigned long long n = L->total_blocks;
  if (L->schedule == CJ_CPU_REVERSE) return n - 1 - k;
  if (L->schedule != CJ_CPU_RANDOM || n < 2) return k;
  unsigned long long a = (mix(L->schedule_seed) | 1) % n, b = mix(L->schedule_seed + 1) % n;
  for (;; a = (a + 1) % n) { /* a must be coprime with n */
    unsigned long long x = a, y = n;
    while (y) x %= y, std::swap(x, y);
    if (a != 0 && x == 1) break;
  }
  return (unsigned long long)(((unsigned __int128)a * k + b) % n);
}

/* Block k of this worker's range becomes the current one: its index in blockIdx. */
static inline void set_block(exec *ex, regs *r) {
  const cj_cpu_launch *L = ex->L;
  unsigned long long b = block_at(L, ex->k);
  unsigned gx = L->grid[0], gxy = L->grid[0] * L->grid[1];
  ex->block = b;
#if defined(CJ_CPU_CHECK)
  /* Each block's dynamic shared memory starts as all-ones bytes (NaN, -1), not as what the last
  ** block left: a read of shared memory the block did not write shows in its results. */
  if (ex->dyn_cap) memset(ex->dyn, 0xff, ex->dyn_cap);
#endif
  r->bid = gx == L->total_blocks
               ? uint3{(unsigned)b, 0, 0}
               : uint3{(unsigned)(b % gx), (unsigned)(b % gxy / gx), (unsigned)(b / gxy)};
}

/* --- switching --------------------------------------------------------------------------------
 */
/* The current thread (plain or fiber) stops for good: back to the scheduler. */
[[noreturn]] static inline void abandon(exec *ex) {
  ex->conv = CONV_FAIL;
  context dead;
  context_switch(&dead, &ex->sched, true);
  __builtin_unreachable();
}
[[noreturn]] static inline void fail_here(const char *file, int line, const char *what) {
  exec *ex = me()->ex;
  char w[320];
  where(w, sizeof w, ex->L->kernel, file, line);
  set_error(ex, current(ex), "%s (%s)", what, w);
  abandon(ex);
}

/* "its stack overflowed" when thread t's stack (slot) lost its canary: true if so (recorded).
** Without a guard page of its own under each stack (own_guard), the canary may also have been
** hit by a thread whose stack lies above this one and whose frame jumped over its own canary:
** the message says so, and how to have the thread that overflowed named. */
static inline bool overflowed(exec *ex, unsigned t, int slot) {
  if (slot < 0 || ex->pool.intact((unsigned)slot)) return false;
  set_error(ex, t,
            "%s stack overflowed: more than %u KiB of local variables and calls (each CUDA "
            "thread's stack on the CPU device)%s",
            t == any_thread ? "a thread's" : "its", (unsigned)(stack_bytes / 1024),
            own_guard ? ""
                      : ", or another thread's stack overflowed into it; CUJIT_CPU_CHECK=1 "
                        "names the thread that overflowed");
  ex->pool.mark((unsigned)slot);
  return true;
}

/* Fiber t stops (it waits, or `ends`): straight on to the next runnable fiber of this sweep, or
** back to the scheduler when there is none: one switch per thread per barrier. A thread that
** only yields its time slice is checked for a stack overflow at its next wait or return. */
static inline void switch_next(exec *ex, unsigned t, bool ends, bool yields = false) {
  if (!yields && overflowed(ex, t, ex->fibers[t].slot)) abandon(ex);
  unsigned n = ex->n, i = ex->sweep + 1, u = 0;
  for (; i < n; i++) {
    u = ex->order ? ex->order[i] : i;
    if (ex->state[u] == T_RUN) break;
  }
  if (i < n) {
    ex->sweep = i;
    me()->tid = ex->fibers[u].tid;
    context_switch(&ex->fibers[t].ctx, &ex->fibers[u].ctx, ends);
  } else {
    context_switch(&ex->fibers[t].ctx, &ex->sched, ends);
  }
}
static inline void fiber_exit(exec *ex, unsigned t) {
  ex->state[t] = T_DONE;
  switch_next(ex, t, true);
  __builtin_unreachable();
}
static void fiber_main(void *p) {
  exec *ex = (exec *)p;
  unsigned t = current(ex);
  context_started();
  ex->call(ex->args);
  fiber_exit(ex, t);
}
static void runner_main(void *p) {
  exec *ex = (exec *)p;
  context_started();
  for (;;) {
    ex->plain(ex);
    ex->conv = CONV_NONE;
    context_switch(&ex->runner, &ex->sched, false);
  }
}

#if defined(CJ_CPU_CHECK)
/* The check build's one way into a kernel, from a fiber and from the runner alike (not inlined,
** not cloned: one copy): its frame is where the call path a barrier is told apart by starts
** (barrier_site), so that the executor's frames around it, which differ between the runner and a
** fiber, never count. */
template <auto K, class Args>
__attribute__((noinline, noclone)) static void run_kernel(exec *ex, const Args &a) {
  ex->fibers[current(ex)].kframe = __builtin_frame_address(0);
  std::apply(K, a);
}
#define CJ_RUN_KERNEL(ex, K, Args, a) run_kernel<K, Args>((ex), (a))
#else
#define CJ_RUN_KERNEL(ex, K, Args, a) std::apply(K, a)
#endif

/* A C++ exception that leaves a CUDA thread (std::vector::at, std::bad_alloc from new, a throw
** in a header): a GPU has no exceptions, so it is the kernel's fault instead of std::terminate's
** abort of the whole process. The catch block ends before the thread is abandoned: an exception
** still being handled would stay on this OS thread's list for good. */
[[noreturn]] __attribute__((noinline, cold)) static void threw(const char *what) {
  exec *ex = me()->ex;
  set_error(ex, current(ex),
            "threw a C++ exception: %s (a GPU has no exceptions: NVRTC refuses exception handling "
            "in device code)",
            what);
  abandon(ex);
}
template <auto K, class Args> static inline void run_thread(exec *ex, const Args &a) {
  (void)ex; /* the check build's way in takes it */
  char what[160];
  try {
    CJ_RUN_KERNEL(ex, K, Args, a);
    return;
  } catch (const std::exception &e) {
    snprintf(what, sizeof what, "%s", e.what());
  } catch (...) {
    const std::type_info *t = abi::__cxa_current_exception_type();
    int status = -1;
    char *name = t ? abi::__cxa_demangle(t->name(), nullptr, nullptr, &status) : nullptr;
    snprintf(what, sizeof what, "an exception of type '%s'",
             name ? name
             : t  ? t->name()
                  : "unknown");
    free(name);
  }
  threw(what);
}

/* The runner's loop for kernel K: every not-yet-run thread in order, K inlined. */
template <auto K, class Args> static void plain_loop(exec *ex) {
  const Args &a = *(const Args *)ex->args;
  const unsigned gen = ex->runner_gen, n = ex->n;
  regs *r = me();
  if (!ex->order && ex->pos == 0 && n == ex->bx) { /* the common case: a fresh 1-D block */
    for (;;) {
      /* The bound is read from ex: a conversion sets it to 0, so that the stack that became a
      ** fiber leaves the loop when its thread returns (one test per thread for both). */
      ex->limit = n;
      r->tid = uint3{0, 0, 0};
      for (unsigned t = 0; t < ex->limit; t++) {
        r->tid.x = t;
        run_thread<K>(ex, a);
      }
      if (__builtin_expect(ex->runner_gen != gen, 0)) fiber_exit(ex, current(ex));
      ex->pos = n;
      if (overflowed(ex, any_thread, ex->runner_slot)) return;
      /* On to the worker's next block without a switch: nothing of this one is left to undo. */
      if (ex->k + 1 >= ex->kend || failed(ex)) return;
      ex->k++, ex->pos = 0;
      set_block(ex, r);
    }
  }
  ex->state_dirty = true;
  for (; ex->pos < n; ex->pos++) {
    unsigned t = ex->order ? ex->order[ex->pos] : ex->pos;
    if (ex->state[t] != T_NEW) continue;
    r->tid = tid_of(ex, t);
    run_thread<K>(ex, a);
    if (__builtin_expect(ex->runner_gen != gen, 0)) fiber_exit(ex, t);
    ex->state[t] = T_DONE;
  }
}

static inline void resume(exec *ex, unsigned t) {
  me()->tid = ex->fibers[t].tid;
  ex->in_runner = false;
  context_switch(&ex->sched, &ex->fibers[t].ctx, false);
}

} // namespace cj_cpu
