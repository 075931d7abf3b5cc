/*
** cpu_alloc.h -- the CPU device's memory blocks, and its record of the memory it gave out
** (address -> size). The record is not thread-safe: the caller holds its lock. Internal
** (cpu_device.c).
*/
#ifndef CUJIT_CPU_ALLOC_H
#define CUJIT_CPU_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* A block of `bytes` starting at a multiple of `alignment` (a power of two, at least
** sizeof(void *)), for free(); NULL when out of memory. Under AddressSanitizer it ends exactly at
** `bytes`, so that the sanitizer's red zone follows the caller's last byte, and under
** CUJIT_CPU_CHECK=1 too its bytes are all ones (0xff). */
void *cj_alloc_block(size_t alignment, size_t bytes);

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

/* Frees every recorded address (they came from cj_alloc_block) and empties the table. */
void cj_alloc_free_all(cj_alloc_table *t);

#endif
