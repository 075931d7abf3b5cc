/*
** cujit/cpu_prelude.h -- CUDA C++ on the host: what the CPU device's translation unit includes
** ahead of the kernels (engine/core/compile/cpu_source.c writes that unit; g++ compiles it into a shared
** object). This file maps the CUDA keywords, built-in variables and vector types onto C++17; the
** math (cpu_math.h), atomics (cpu_atomic.h), fibers (cpu_fiber.h), the block executor
** (cpu_exec.h), the check build's reports (cpu_check.h), clusters (cpu_cluster.h), the scheduler
** with the block barrier (cpu_sync.h), warp operations (cpu_warp.h) and the entries' template
** (cpu_launch.h) follow from here.
**
** Built-in variables are macros over one thread_local record, `cj_cpu::R`, that the executor
** rewrites before running each CUDA thread: in the thread loop a read of threadIdx.x is one load.
*/
#pragma once
#define __CUJIT_CPU__ 1
#define __CUDACC__ 1
/* The compiler's version, as NVRTC 13.0 and nvcc define it: code tests it before newer features. */
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800 /* kernels test it to take their device code path */
#endif

/* Every standard header the prelude or common kernels use, before the keyword macros below. */
#include <cassert>
#include <cfenv> /* the directed roundings of __fadd_rz... (cpu_math.h) */
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h> /* the type of a thrown exception that is not a std::exception */
#include <exception>
#include <limits>
#include <memory> /* before the keyword macros: its shared_ptr uses __noinline__ */
#include <math.h>
#include <new>
#include <sys/mman.h>
#include <sched.h> /* sched_yield: a block waiting at the grid barrier (cpu_exec.h) */
#include <unistd.h>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include <cujit/cpu_abi.h>

/* --- keywords ------------------------------------------------------------------------------ */
/* Kernels are hidden so that g++ may inline them into the generated entries. */
#define __global__ __attribute__((visibility("hidden")))
#define __device__
#define __host__
/* Written by the host (cujit_program_global) behind the compiler's back: "used" keeps a static
** one that no kernel writes from being folded to its initial value and removed. */
#define __constant__ __attribute__((used))
#define __managed__ __attribute__((used))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
/* Shared memory belongs to the block, and one OS thread runs one block at a time. */
#define __shared__ static thread_local
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))

/* --- vector types, as CUDA lays them out (size and alignment) ---------------------------------
 */
#define CJ_VEC1(name, T, al)                                                                       \
  struct __attribute__((aligned(al))) name {                                                       \
    T x;                                                                                           \
  };                                                                                               \
  static inline name make_##name(T x) {                                                            \
    name r = {x};                                                                                  \
    return r;                                                                                      \
  }
#define CJ_VEC2(name, T, al)                                                                       \
  struct __attribute__((aligned(al))) name {                                                       \
    T x, y;                                                                                        \
  };                                                                                               \
  static inline name make_##name(T x, T y) {                                                       \
    name r = {x, y};                                                                               \
    return r;                                                                                      \
  }
#define CJ_VEC3(name, T)                                                                           \
  struct name {                                                                                    \
    T x, y, z;                                                                                     \
  };                                                                                               \
  static inline name make_##name(T x, T y, T z) {                                                  \
    name r = {x, y, z};                                                                            \
    return r;                                                                                      \
  }
#define CJ_VEC4(name, T, al)                                                                       \
  struct __attribute__((aligned(al))) name {                                                       \
    T x, y, z, w;                                                                                  \
  };                                                                                               \
  static inline name make_##name(T x, T y, T z, T w) {                                             \
    name r = {x, y, z, w};                                                                         \
    return r;                                                                                      \
  }
#define CJ_VECS(p, T, a1, a2, a4)                                                                  \
  CJ_VEC1(p##1, T, a1) CJ_VEC2(p##2, T, a2) CJ_VEC3(p##3, T) CJ_VEC4(p##4, T, a4)
CJ_VECS(char, signed char, 1, 2, 4)
CJ_VECS(uchar, unsigned char, 1, 2, 4)
CJ_VECS(short, short, 2, 4, 8)
CJ_VECS(ushort, unsigned short, 2, 4, 8)
CJ_VECS(int, int, 4, 8, 16)
CJ_VECS(uint, unsigned, 4, 8, 16)
CJ_VECS(long, long, 8, 16, 16)
CJ_VECS(ulong, unsigned long, 8, 16, 16)
CJ_VECS(longlong, long long, 8, 16, 16)
CJ_VECS(ulonglong, unsigned long long, 8, 16, 16)
CJ_VECS(float, float, 4, 8, 16)
CJ_VECS(double, double, 8, 16, 16)
#undef CJ_VECS
#undef CJ_VEC1
#undef CJ_VEC2
#undef CJ_VEC3
#undef CJ_VEC4

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const {
    return uint3{x, y, z};
  }
};

/* --- the current CUDA thread ------------------------------------------------------------------
 */
namespace cj_cpu {
struct exec; /* cpu_exec.h */
struct regs {
  uint3 tid, bid;
  dim3 bdim, gdim;
  exec *ex; /* the block being run on this OS thread */
};
static thread_local regs R;
/* &R through a call g++ may hoist out of loops and merge (`const`: one value per OS thread, and a
** CUDA thread never changes OS thread), where a direct access to a thread_local of a dlopen'd
** object costs a __tls_get_addr call at each use inside the thread loop. */
__attribute__((const, noinline)) static regs *me() {
  return &R;
}
} // namespace cj_cpu

#define threadIdx (::cj_cpu::me()->tid)
#define blockIdx (::cj_cpu::me()->bid)
#define blockDim (::cj_cpu::me()->bdim)
#define gridDim (::cj_cpu::me()->gdim)
/* A constant, not a macro: host code reads a cudaDeviceProp's member of that name. */
static constexpr int warpSize = 32;

#include <cujit/cpu_math.h>
#include <cujit/cpu_atomic.h>
#include <cujit/cpu_fiber.h>
#include <cujit/cpu_exec.h>
#include <cujit/cpu_check.h>
#include <cujit/cpu_cluster.h>
#include <cujit/cpu_sync.h>
#include <cujit/cpu_warp.h>
#include <cujit/cpu_launch.h>
