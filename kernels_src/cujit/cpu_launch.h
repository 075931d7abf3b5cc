/*
** cujit/cpu_launch.h -- a launch on one of the CPU device's workers: the generated entries'
** template (a kernel's arguments unpacked, the launch-wide setup, the worker's blocks taken a few
** at a time), dynamic shared memory, which CUDA thread a fault happened in (cj_cpu_where), and
** what ends a launch from a kernel (__trap, __brkpt, assert). Included by cpu_prelude.h after
** cpu_warp.h.
*/
#pragma once

namespace cj_cpu {

/* A kernel's extern __shared__ array (cpu_source.c names it so): the block's dynamic shared memory,
** which begin_launch sizes. */
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
static inline int where_now(const regs *r, char *buf, size_t len) {
  if (!r || !r->ex || !buf || len == 0) return 0;
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
  w->regs = me(); /* for cj_cpu_where in a fault handler: here, outside any handler */
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
