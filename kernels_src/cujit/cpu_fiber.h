/*
** cujit/cpu_fiber.h -- user-level context switches and their stacks, for the CPU device's block
** executor (cpu_exec.h). On x86-64 a switch is a few instructions of our own: push the six
** callee-saved registers, swap stack pointers, pop, return; no system call (swapcontext makes one
** each time, ~185 ns against ~5 here) and no glibc longjmp check to trip over. Elsewhere it falls
** back to ucontext. Under AddressSanitizer every switch is announced to it, as its fiber API asks.
**
** Stacks come from a pool per worker, mapped on first need and reused across blocks and launches
** (see stack_pool for overflow detection). Consecutive stacks are a cache line more than a stack
** apart, so that their tops and their canaries do not all land in the same L1 set.
*/
#pragma once

#include <pthread.h>

/* CJ_CPU_UCONTEXT forces the portable switch (for testing it on x86-64). */
#if defined(__x86_64__) && !defined(CJ_CPU_UCONTEXT)
#define CJ_CPU_ASM_SWITCH 1
#else
#define CJ_CPU_ASM_SWITCH 0
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom,
                                               size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                                size_t *size_old);
extern "C" void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
extern "C" void __asan_poison_memory_region(void const volatile *addr, size_t size);
#endif

namespace cj_cpu {

#if defined(__SANITIZE_ADDRESS__)
enum { stack_bytes = 512 * 1024 }; /* instrumented frames are several times larger */
#else
enum { stack_bytes = 128 * 1024 };
#endif
enum { guard_bytes = 4096, slots_per_chunk = 32, max_slots = 1024 + 64 };
#if defined(CJ_CPU_CHECK)
/* The check build gives every stack a guard page of its own, right under it, and probes each page
** of a large frame as it is made (-fstack-clash-protection, cxx.c): a thread that overflows its
** stack faults there, named as the thread that crashed, before it writes into the stack below (a
** frame that jumps over a canary would silently overwrite another thread's locals). */
enum { own_guard = 1, slot_pitch = guard_bytes + stack_bytes };
#else
/* Consecutive stacks are one cache line more than a stack apart, so that their tops and their
** canaries (read at most switches) fall in different cache sets: at a power-of-two pitch those of
** a whole block would compete for one set of L1 and of L2. */
enum { own_guard = 0, slot_pitch = stack_bytes + 64 };
#endif

struct context {
#if CJ_CPU_ASM_SWITCH
  void *sp;
#else
  ucontext_t uc;
#endif
  const void *bottom; /* the stack's lowest address and size, for AddressSanitizer */
  size_t size;
  void *fake; /* AddressSanitizer's fake stack while switched away */
};

#if CJ_CPU_ASM_SWITCH
/* cj_cpu_swap(save, load): saves the callee-saved registers on the current stack and its pointer
** in *save, then resumes the stack `load`. A new stack starts in cj_cpu_boot, which calls
** r13(r12) and must never return. Local symbols: this translation unit only. */
asm(".text\n"
    ".p2align 4\n"
    "cj_cpu_swap:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    "cj_cpu_boot:\n"
    "  movq %r12, %rdi\n"
    "  callq *%r13\n"
    "  ud2\n");
extern "C" void cj_cpu_swap(void **save, void *load) __asm__("cj_cpu_swap");
extern "C" void cj_cpu_boot(void) __asm__("cj_cpu_boot");
#endif

/* Makes c start fn(arg) on the stack [lo, lo + size) when first switched to. */
/* A fiber that ends by switching away never returns through its last frames, so AddressSanitizer's
** marks on them stay in the shadow of its stack: clear them before the stack is used again (the
** top, where those frames are, each time; all of it after a failure left frames anywhere). */
static inline void stack_unpoison(char *lo, size_t size, bool all) {
#if defined(__SANITIZE_ADDRESS__)
  size_t top = all || size < 32768 ? size : 32768;
  __asan_unpoison_memory_region(lo + size - top, top);
#else
  (void)lo, (void)size, (void)all;
#endif
}

static inline void context_make(context *c, char *lo, size_t size, void (*fn)(void *), void *arg) {
  stack_unpoison(lo, size, false);
  c->bottom = lo, c->size = size, c->fake = nullptr;
#if CJ_CPU_ASM_SWITCH
  void **sp = (void **)((uintptr_t)(lo + size) & ~(uintptr_t)15) - 9; /* 16-aligned after ret */
  sp[0] = sp[1] = nullptr;                                            /* r15, r14 */
  sp[2] = (void *)fn, sp[3] = arg;                                    /* r13, r12 */
  sp[4] = sp[5] = nullptr;                                            /* rbx, rbp */
  sp[6] = (void *)&cj_cpu_boot, sp[7] = sp[8] = nullptr;
  c->sp = sp;
#else
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = lo;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, (void (*)())fn, 1, arg); /* one pointer argument: fine on LP64 glibc */
#endif
}

/* Switches from `from` (saved, resumable) to `to`. `from_ends`: from will never be resumed. */
static inline void context_switch(context *from, context *to, bool from_ends) {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(from_ends ? nullptr : &from->fake, to->bottom, to->size);
#else
  (void)from_ends;
#endif
#if CJ_CPU_ASM_SWITCH
  cj_cpu_swap(&from->sp, to->sp);
#else
  swapcontext(&from->uc, &to->uc);
#endif
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(from->fake, nullptr, nullptr);
#endif
}

/* The first thing a new context does: tell AddressSanitizer it has arrived. */
static inline void context_started() {
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}
/* c is the calling OS thread's own stack (the scheduler's): its bounds, for AddressSanitizer. */
static inline void context_of_this_thread(context *c) {
#if defined(__SANITIZE_ADDRESS__)
  pthread_attr_t attr;
  void *lo;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &size) == 0) c->bottom = lo, c->size = size;
    pthread_attr_destroy(&attr);
  }
#else
  (void)c;
#endif
}

/* Stacks are mapped 32 at a time, one guard page under each group, with a canary word at the
** bottom of every stack: a guard page per stack would cost two memory mappings per CUDA thread
** of a block, per worker and per loaded object, which a many-core host running many kernels would
** take past the kernel's limit on mappings (vm.max_map_count). An overflow is reported when the
** overflowing thread next switches, or when its block ends (stack_pool::intact). The check build
** pays for a guard page under every stack (own_guard); where the kernel refuses another mapping,
** that stack keeps only its canary. */
struct stack_pool {
  char *lo[max_slots]; /* each slot's stack: lo[s] (its canary) up to lo[s] + stack_bytes */
  unsigned nslots;
  unsigned free_list[max_slots];
  unsigned nfree;
  char *chunks[max_slots / slots_per_chunk + 1];
  unsigned nchunks;

  static unsigned long long canary(unsigned slot) {
    return 0x6375a1b2c3d4e5f6ull ^ slot;
  }
  bool intact(unsigned slot) const {
    return *(const volatile unsigned long long *)lo[slot] == canary(slot);
  }
  /* A free slot's index, or -1 when mapping another chunk failed. */
  int take() {
    if (nfree == 0 && !grow()) return -1;
    return (int)free_list[--nfree];
  }
  void mark(unsigned slot) { /* the canary again, after an overflow was reported */
    *(unsigned long long *)lo[slot] = canary(slot);
  }
  void give(unsigned slot) {
    mark(slot);
    free_list[nfree++] = slot;
  }
  bool grow() {
    if (nslots + slots_per_chunk > max_slots) return false;
    size_t bytes = guard_bytes + (size_t)slot_pitch * slots_per_chunk;
    void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    mprotect(m, guard_bytes, PROT_NONE);
    chunks[nchunks++] = (char *)m;
    for (unsigned i = 0; i < slots_per_chunk; i++) {
      lo[nslots] = (char *)m + guard_bytes + (size_t)i * slot_pitch;
      if (own_guard && i > 0) mprotect(lo[nslots] - guard_bytes, guard_bytes, PROT_NONE);
      *(unsigned long long *)lo[nslots] = canary(nslots);
      free_list[nfree++] = nslots++;
    }
    return true;
  }
  void release() {
    size_t bytes = guard_bytes + (size_t)slot_pitch * slots_per_chunk;
    for (unsigned i = 0; i < nchunks; i++) munmap(chunks[i], bytes);
    nchunks = nslots = nfree = 0;
  }
};

} // namespace cj_cpu
