/*
** cpu_alloc.h -- the CPU device's record of the memory it gave out (address -> size). Not
** thread-safe: the caller holds its lock. Internal (backend_cpu.c).
*/
#ifndef CUJIT_CPU_ALLOC_H
#define CUJIT_CPU_ALLOC_H

#include <stddef.h>
#include <stdint.h>

typedef struct cj_alloc_slot {
  uint64_t addr; /* 0 empty, 1 removed */
  size_t size;
} cj_alloc_slot;

typedef struct cj_alloc_table {
  cj_alloc_slot *slots;
  size_t cap, used; /* a power of two; used counts removed slots too */
} cj_alloc_table;

/* Records addr (never 0 or 1); 0 when out of memory. */
int cj_alloc_put(cj_alloc_table *t, uint64_t addr, size_t size);

/* 1, and the record removed, when addr is recorded; 0 otherwise. */
int cj_alloc_take(cj_alloc_table *t, uint64_t addr);

/* Frees every recorded address (they came from aligned_alloc or posix_memalign) and empties the table. */
void cj_alloc_free_all(cj_alloc_table *t);

#endif
