/*
** test_cpu_alloc.c -- the CPU device's record of the memory it gave out
** (engine/core/backend/cpu/cpu_alloc.c, an open-addressing table from address to size) and its
** blocks, by their contracts in cpu_alloc.h: every address recorded is found exactly once by
** cj_alloc_take and then no more, through collisions, removals and the table's growth; an address
** never recorded is not found; cj_alloc_free_all gives every block back and empties the table
** (LeakSanitizer holds the sanitizer build to it); a block starts at its alignment, and a size the
** rounding would overflow is refused. The device frees a buffer only when the record finds it, so
** a record that loses one keeps the buffer's memory until the device closes, which nothing else
** shows.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend/cpu/cpu_alloc.h"

/* Distinct addresses of 256-byte-aligned blocks, scattered as a heap's are. */
static uint64_t address(size_t i) {
  return 0x7f0000000000ull + (uint64_t)((i * 2654435761u) % 1000003u) * 256u + 256u * 1000003u;
}

Test(cpu_alloc, every_address_is_found_once_through_collisions_and_growth) {
  enum { N = 5000 };
  cj_alloc_table t = {0};
  for (size_t i = 0; i < N; i++) cr_assert(cj_alloc_put(&t, address(i), i + 1), "put %zu", i);
  cr_expect_geq(t.cap, 2 * N, "the table stays at most half full");
  cr_expect_eq(cj_alloc_take(&t, address(N) + 64), 0, "an address never recorded");
  for (size_t i = 0; i < N; i += 2)
    cr_expect_eq(cj_alloc_take(&t, address(i)), 1, "address %zu (of %zu slots) not found", i,
                 t.cap);
  for (size_t i = 0; i < N; i += 2)
    cr_expect_eq(cj_alloc_take(&t, address(i)), 0, "address %zu found after it was taken", i);
  for (size_t i = N; i < 2 * N; i++) cr_assert(cj_alloc_put(&t, address(i), 1)); /* past removed */
  for (size_t i = 1; i < N; i += 2)
    cr_expect_eq(cj_alloc_take(&t, address(i)), 1, "address %zu lost after removals and growth", i);
  for (size_t i = N; i < 2 * N; i++)
    cr_expect_eq(cj_alloc_take(&t, address(i)), 1, "address %zu, recorded after removals", i);
  cr_expect_eq(cj_alloc_take(&t, address(1)), 0);
  free(t.slots);
}

/* An address taken and recorded again is found again, once. */
Test(cpu_alloc, an_address_recorded_again_after_its_take_is_found_again) {
  cj_alloc_table t = {0};
  for (int round = 0; round < 200; round++) {
    cr_assert(cj_alloc_put(&t, address(7), 64));
    cr_assert(cj_alloc_put(&t, address(round + 100), 64));
    cr_expect_eq(cj_alloc_take(&t, address(7)), 1, "round %d", round);
    cr_expect_eq(cj_alloc_take(&t, address(7)), 0, "round %d", round);
  }
  for (int round = 0; round < 200; round++)
    cr_expect_eq(cj_alloc_take(&t, address(round + 100)), 1, "round %d's other address", round);
  free(t.slots);
}

Test(cpu_alloc, free_all_gives_every_block_back_and_empties_the_table) {
  cj_alloc_table t = {0};
  void *blocks[300];
  for (int i = 0; i < 300; i++) {
    blocks[i] = cj_alloc_block(64, (size_t)(i + 1) * 24);
    cr_assert_not_null(blocks[i]);
    cr_assert(cj_alloc_put(&t, (uint64_t)(uintptr_t)blocks[i], (size_t)(i + 1) * 24));
  }
  for (int i = 0; i < 300; i += 3) { /* some freed by their owner first, as buffers are */
    cr_assert_eq(cj_alloc_take(&t, (uint64_t)(uintptr_t)blocks[i]), 1);
    free(blocks[i]);
  }
  cj_alloc_free_all(&t); /* the rest: a leak here fails the sanitizer build */
  cr_expect_null(t.slots);
  cr_expect_eq(t.cap, 0);
  cr_expect_eq(t.used, 0);
  cr_expect_eq(cj_alloc_take(&t, (uint64_t)(uintptr_t)blocks[1]), 0,
               "an emptied table finds nothing");
  cr_assert(cj_alloc_put(&t, address(3), 8), "and records again");
  cr_expect_eq(cj_alloc_take(&t, address(3)), 1);
  free(t.slots);
}

Test(cpu_alloc, blocks_start_at_their_alignment_and_an_overflowing_size_is_refused) {
  static const size_t alignments[] = {8, 16, 64, 256, 4096};
  for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++)
    for (size_t bytes = 1; bytes < 5000; bytes += 997) {
      unsigned char *p = cj_alloc_block(alignments[a], bytes);
      cr_assert_not_null(p);
      cr_expect_eq((uintptr_t)p % alignments[a], 0, "%zu bytes at alignment %zu: %p", bytes,
                   alignments[a], (void *)p);
      p[bytes - 1] = 1; /* the last byte asked for is the caller's */
      free(p);
    }
  cr_expect_null(cj_alloc_block(64, SIZE_MAX - 10), "a size whose rounding overflows");
}
