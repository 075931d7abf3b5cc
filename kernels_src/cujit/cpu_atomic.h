/*
** cujit/cpu_atomic.h -- CUDA's atomics, fences, clocks and cache-hinted loads on the host, for the
** CPU device (included by cpu_prelude.h). Blocks run at the same time on several OS threads, so
** these are real atomic read-modify-writes (GCC's __atomic builtins); floating-point ones are a
** compare-and-swap loop, as on GPUs before native float atomics. Relaxed ordering, as on the GPU;
** __threadfence orders the way the GPU's fence does.
*/
#pragma once

namespace cj_cpu {
template <class T> static inline T cas(T *p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected; /* the old value: equal to `expected` when the swap happened */
}
/* An update f(old) applied atomically through a compare-and-swap on the bits. */
template <class T, class F> static inline T update(T *p, F f) {
  typedef typename std::conditional<sizeof(T) == 8, unsigned long long, unsigned>::type B;
  static_assert(sizeof(T) == sizeof(B), "4- or 8-byte atomics only");
  B *bp = (B *)p, old = __atomic_load_n(bp, __ATOMIC_RELAXED);
  for (;;) {
    T o;
    memcpy(&o, &old, sizeof o);
    T n = f(o);
    B nb;
    memcpy(&nb, &n, sizeof nb);
    if (__atomic_compare_exchange_n(bp, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return o;
  }
}
template <class T> using if_int = typename std::enable_if<std::is_integral<T>::value, T>::type;
template <class T>
using if_float = typename std::enable_if<std::is_floating_point<T>::value, T>::type;
} // namespace cj_cpu

/* Integer atomics on 32- and 64-bit types; the second argument converts to the pointee's type. */
template <class T> static inline cj_cpu::if_int<T> atomicAdd(T *p, cj_cpu::if_int<T> v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline cj_cpu::if_int<T> atomicSub(T *p, cj_cpu::if_int<T> v) {
  return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline cj_cpu::if_int<T> atomicAnd(T *p, cj_cpu::if_int<T> v) {
  return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline cj_cpu::if_int<T> atomicOr(T *p, cj_cpu::if_int<T> v) {
  return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline cj_cpu::if_int<T> atomicXor(T *p, cj_cpu::if_int<T> v) {
  return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
}
template <class T> static inline cj_cpu::if_int<T> atomicMin(T *p, cj_cpu::if_int<T> v) {
  return cj_cpu::update(p, [v](T o) { return v < o ? v : o; });
}
template <class T> static inline cj_cpu::if_int<T> atomicMax(T *p, cj_cpu::if_int<T> v) {
  return cj_cpu::update(p, [v](T o) { return v > o ? v : o; });
}
/* Floating-point add, sub, exchange; min and max as sm_90 defines them for float/double. */
template <class T> static inline cj_cpu::if_float<T> atomicAdd(T *p, cj_cpu::if_float<T> v) {
  return cj_cpu::update(p, [v](T o) { return o + v; });
}
template <class T> static inline cj_cpu::if_float<T> atomicSub(T *p, cj_cpu::if_float<T> v) {
  return cj_cpu::update(p, [v](T o) { return o - v; });
}
template <class T> static inline cj_cpu::if_float<T> atomicMin(T *p, cj_cpu::if_float<T> v) {
  return cj_cpu::update(p, [v](T o) { return fmin(o, v); });
}
template <class T> static inline cj_cpu::if_float<T> atomicMax(T *p, cj_cpu::if_float<T> v) {
  return cj_cpu::update(p, [v](T o) { return fmax(o, v); });
}
/* Every other pointee (CUDA's __half, __half2, __nv_bfloat16 adds, a struct): a clear refusal
** rather than g++'s list of overloads that do not match. */
template <class T, class U>
static inline typename std::enable_if<!std::is_arithmetic<T>::value, T>::type atomicAdd(T *, U) {
  static_assert(sizeof(T) == 0, "cujit: atomicAdd on this type (__half, __half2, __nv_bfloat16 or "
                                "another non-arithmetic type) is not supported on the CPU device; "
                                "add in float (atomicAdd(float *, float)) or run on a GPU");
  return T();
}
template <class T> static inline T atomicExch(T *p, typename std::common_type<T>::type v) {
  return cj_cpu::update(p, [v](T) { return v; });
}
template <class T>
static inline T atomicCAS(T *p, typename std::common_type<T>::type compare,
                          typename std::common_type<T>::type v) {
  return cj_cpu::cas(p, compare, v);
}
/* ((old >= limit) ? 0 : old + 1) and ((old == 0 || old > limit) ? limit : old - 1), as CUDA. */
static inline unsigned atomicInc(unsigned *p, unsigned limit) {
  return cj_cpu::update(p, [limit](unsigned o) { return o >= limit ? 0u : o + 1u; });
}
static inline unsigned atomicDec(unsigned *p, unsigned limit) {
  return cj_cpu::update(p, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1u; });
}

/* The _block and _system scopes are the same operation here: host memory is coherent. */
#define CJ_SCOPES(op)                                                                              \
  template <class T, class... A> static inline T op##_block(T *p, A... a) {                        \
    return op(p, a...);                                                                            \
  }                                                                                                \
  template <class T, class... A> static inline T op##_system(T *p, A... a) {                       \
    return op(p, a...);                                                                            \
  }
CJ_SCOPES(atomicAdd)
CJ_SCOPES(atomicSub)
CJ_SCOPES(atomicAnd)
CJ_SCOPES(atomicOr)
CJ_SCOPES(atomicXor)
CJ_SCOPES(atomicMin)
CJ_SCOPES(atomicMax)
CJ_SCOPES(atomicExch)
CJ_SCOPES(atomicCAS)
CJ_SCOPES(atomicInc)
CJ_SCOPES(atomicDec)
#undef CJ_SCOPES

static inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_block() {
  __atomic_signal_fence(__ATOMIC_SEQ_CST); /* one block runs on one OS thread */
}
static inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline long long clock64() {
  unsigned long long t;
#if defined(__x86_64__) || defined(__i386__)
  t = __builtin_ia32_rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
#endif
  return (long long)t;
}
static inline void __nanosleep(unsigned) {}

/* Cache-hinted loads and stores are plain accesses on the host. */
#define CJ_LOAD(name)                                                                              \
  template <class T> static inline T name(const T *p) {                                            \
    return *p;                                                                                     \
  }
#define CJ_STORE(name)                                                                             \
  template <class T> static inline void name(T *p, T v) {                                          \
    *p = v;                                                                                        \
  }
CJ_LOAD(__ldg)
CJ_LOAD(__ldcg)
CJ_LOAD(__ldca)
CJ_LOAD(__ldcs)
CJ_LOAD(__ldlu)
CJ_LOAD(__ldcv)
CJ_STORE(__stwb)
CJ_STORE(__stcg)
CJ_STORE(__stcs)
CJ_STORE(__stwt)
#undef CJ_LOAD
#undef CJ_STORE
