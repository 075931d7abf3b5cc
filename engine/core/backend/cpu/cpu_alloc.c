/*
** cpu_alloc.c -- the CPU device's memory blocks and its record of those it gave out: an
** open-addressing table from address to size, so that a reset frees everything and a free after a
** reset is recognised.
*/
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "cpu_alloc.h"
#include "base/env.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* 1 when AddressSanitizer's runtime is in the process (CUJIT_CPU_CHECK=1 kernels load only
** then). Its allocator puts a red zone right after the size asked for, to the byte. */
static int asan_present(void) {
  static int known = -1;
  int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (v < 0) {
    v = dlsym(RTLD_DEFAULT, "__asan_init") != NULL;
    __atomic_store_n(&known, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* Without the sanitizer a block is rounded up to a multiple of the alignment (aligned_alloc's
** rule); under it the block ends exactly where the caller's bytes end, so that x[n] is reported
** for every n and element size, not only when n * size is a multiple of the alignment
** (posix_memalign takes any size). */
void *cj_alloc_block(size_t alignment, size_t bytes) {
  void *p = NULL;
  if (asan_present()) {
    if (posix_memalign(&p, alignment, bytes) != 0) return NULL;
    /* The check build cannot report a read of memory nothing wrote (g++ has no MemorySanitizer):
    ** all-ones bytes (NaN as float and double, -1 as integers) make one show in the results,
    ** where fresh pages would read as plausible zeros. */
    if (cj_env_cpu_check()) memset(p, 0xff, bytes);
    return p;
  }
  if (bytes > SIZE_MAX - alignment) return NULL;
  return aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}

static size_t slot_of(const cj_alloc_table *t, uint64_t addr) {
  return (size_t)((addr >> 8) * 0x9E3779B97F4A7C15ull) & (t->cap - 1);
}

int cj_alloc_put(cj_alloc_table *t, uint64_t addr, size_t size) {
  if ((t->used + 1) * 2 > t->cap) {
    cj_alloc_table bigger = {calloc(t->cap ? 2 * t->cap : 64, sizeof(cj_alloc_slot)),
                             t->cap ? 2 * t->cap : 64, 0};
    if (!bigger.slots) return 0;
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i].addr > 1) cj_alloc_put(&bigger, t->slots[i].addr, t->slots[i].size);
    free(t->slots);
    *t = bigger;
  }
  size_t i = slot_of(t, addr);
  while (t->slots[i].addr > 1) i = (i + 1) & (t->cap - 1);
  if (t->slots[i].addr == 0) t->used++;
  t->slots[i].addr = addr, t->slots[i].size = size;
  return 1;
}

int cj_alloc_take(cj_alloc_table *t, uint64_t addr) {
  if (!t->cap) return 0;
  for (size_t i = slot_of(t, addr); t->slots[i].addr != 0; i = (i + 1) & (t->cap - 1))
    if (t->slots[i].addr == addr) {
      t->slots[i].addr = 1;
      return 1;
    }
  return 0;
}

void cj_alloc_free_all(cj_alloc_table *t) {
  for (size_t i = 0; i < t->cap; i++)
    if (t->slots[i].addr > 1) free((void *)(uintptr_t)t->slots[i].addr);
  free(t->slots);
  memset(t, 0, sizeof *t);
}
