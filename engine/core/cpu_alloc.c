/*
** cpu_alloc.c -- the CPU device's record of the memory it gave out: an open-addressing table from
** address to size, so that a reset frees everything and a free after a reset is recognised.
*/
#include "cpu_alloc.h"

#include <stdlib.h>
#include <string.h>

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
