/*
** test_stub_pool.c -- the CUDA backend's memory pool (cuda_pool.c), whose bookkeeping only a GPU
** reached, against the stand-in driver (scripts/bench/stub_driver.c; its device blocks are counted
** while they live, CUJIT_STUB_MEMORY bounds them, and its cuMemPoolTrimTo, cuEventRecord and
** cuStreamWaitEvent calls are counted; tests/CMakeLists.txt runs this program with the stand-in
** first on LD_LIBRARY_PATH): a freed block kept and handed out again for its size, past the
** first table of blocks too; a trim giving every free block back and asking the pool to trim; out
** of memory answered by giving the pool's free blocks back and trying once more, then the usual
** message; a reused block joining the streams that had work since the last join, and no stream
** when none had; a stream freed with work queued handing that work to the default stream (an
** event recorded on it, waited for); small uploads through the pinned staging ring each landing
** with their own bytes when the driver reads pinned memory late (CUJIT_STUB_DEFER_COPIES);
** downloads of up to 64 KiB through one pinned segment, larger ones straight; and with
** CUJIT_POOL=off, each buffer the driver's own from its allocation to its free. Kernels do not
** run there: what is checked is what reaches the driver.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;
static cujit_device *gpu;

/* A count the stand-in keeps (cujit_stub_memory_seen): "trim", "event_record", "stream_wait". */
static long seen(const char *name) {
  return cj_stub_seen("cujit_stub_memory_seen", name);
}

static void open_engine(void) {
  gpu = cj_stub_open(&engine);
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_MEMORY");
  unsetenv("CUJIT_POOL");
  unsetenv("CUJIT_STUB_DEFER_COPIES");
  cj_scratch_remove();
}

TestSuite(stub_pool, .fini = close_engine); /* each test opens its engine, its settings first */

static int by_address(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* 150 blocks, more than the first table of blocks holds (64): every one found again at its free,
** kept, and handed out again; a trim gives them all back. */
Test(stub_pool, freed_blocks_are_kept_and_handed_out_again_past_the_first_table) {
  open_engine();
  enum { N = 150 };
  cujit_buffer *b[N];
  uint64_t first[N], again[N];
  long before = cj_stub_live_allocations();
  for (int i = 0; i < N; i++) {
    EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_F32, &b[i]));
    first[i] = cujit_buffer_devptr(b[i]);
  }
  cr_expect_eq(cj_stub_live_allocations(), before + N, "one driver block each");
  for (int i = 0; i < N; i++) cujit_buffer_free(b[i]);
  cr_expect_eq(cj_stub_live_allocations(), before + N, "the pool keeps freed blocks");
  size_t reserved = 0;
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  for (int i = 0; i < N; i++) {
    EXPECT_OK(cujit_buffer_alloc(engine, 4000, CUJIT_F32, &b[i])); /* rounded as 4096 is */
    again[i] = cujit_buffer_devptr(b[i]);
  }
  cr_expect_eq(cj_stub_live_allocations(), before + N,
               "every buffer got a kept block, none a new one");
  qsort(first, N, sizeof *first, by_address);
  qsort(again, N, sizeof *again, by_address);
  cr_expect_arr_eq(first, again, sizeof first, "the same blocks handed out again");
  for (int i = 0; i < N; i++) cujit_buffer_free(b[i]);

  long trims = seen("trim");
  EXPECT_OK(cujit_device_trim(gpu));
  cr_expect_eq(cj_stub_live_allocations(), before, "a trim gives every free block back");
  cr_expect_eq(seen("trim"), trims + 1, "and asks the driver's pool to trim");
  cujit_buffer *one;
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_F32, &one));
  cr_expect_eq(cj_stub_live_allocations(), before + 1, "after a trim a buffer is a new block");
  cujit_buffer_free(one);
}

/* Only the free blocks go back at a trim: a live buffer keeps its block and its bytes. */
Test(stub_pool, a_trim_leaves_live_buffers_alone) {
  open_engine();
  cujit_buffer *kept, *freed;
  unsigned char data[64], back[64];
  for (int i = 0; i < 64; i++) data[i] = (unsigned char)(7 * i + 1);
  /* The pinned staging blocks of small copies, made first: they stay. */
  EXPECT_OK(cujit_buffer_alloc(engine, 64, CUJIT_U8, &kept));
  EXPECT_OK(cujit_memcpy_htod(kept, 0, data, sizeof data, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(back, kept, 0, sizeof back, NULL));
  cujit_buffer_free(kept);
  EXPECT_OK(cujit_device_trim(gpu));
  long before = cj_stub_live_allocations();
  EXPECT_OK(cujit_buffer_alloc(engine, 1 << 20, CUJIT_U8, &kept));
  EXPECT_OK(cujit_buffer_alloc(engine, 1 << 20, CUJIT_U8, &freed));
  EXPECT_OK(cujit_memcpy_htod(kept, 1000, data, sizeof data, NULL));
  cujit_buffer_free(freed);
  EXPECT_OK(cujit_device_trim(gpu));
  cr_expect_eq(cj_stub_live_allocations(), before + 1);
  EXPECT_OK(cujit_memcpy_dtoh(back, kept, 1000, sizeof back, NULL));
  cr_expect_arr_eq(back, data, sizeof data);
  cujit_buffer_free(kept);
}

/* A device of 4 MiB: two freed blocks of 1.5 MiB stay in the pool, so 3 MiB fits only once they
** went back, which the allocation does itself before it gives up. */
Test(stub_pool, out_of_memory_gives_the_pools_free_blocks_back_and_tries_again) {
  setenv("CUJIT_STUB_MEMORY", "4194304", 1);
  open_engine();
  const size_t mib = (size_t)1 << 20;
  long before = cj_stub_live_allocations(), trims = seen("trim");
  cujit_buffer *a, *b, *big, *more = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 3 * mib / 2, CUJIT_U8, &a));
  EXPECT_OK(cujit_buffer_alloc(engine, 3 * mib / 2, CUJIT_U8, &b));
  cujit_buffer_free(a);
  cujit_buffer_free(b);
  cr_expect_eq(cj_stub_live_allocations(), before + 2, "the freed blocks stay in the pool");
  EXPECT_OK(cujit_buffer_alloc(engine, 3 * mib, CUJIT_U8, &big));
  cr_expect_eq(seen("trim"), trims + 1, "the pool trimmed once, on the way");
  cr_expect_eq(cj_stub_live_allocations(), before + 1, "only the new block lives");
  /* 3 MiB live, nothing free: 2 MiB does not fit even after a trim. */
  cr_expect_eq(cujit_buffer_alloc(engine, 2 * mib, CUJIT_U8, &more), CUJIT_ERROR_DEVICE_MEMORY);
  cr_expect(strstr(cujit_errmsg(engine), "out of device memory: asked for 2.0 MiB") != NULL, "%s",
            cujit_errmsg(engine));
  cr_expect_null(more);
  EXPECT_OK(cujit_device_status(gpu));
  cr_expect_eq(cj_stub_live_allocations(), before + 1, "nothing left behind by the refusal");
  cujit_buffer_free(big);
}

/* A freed block may still be in use by work queued on a stream; before it is handed out again
** for the default stream the streams that had work are joined (an event recorded on each and
** waited for), once, and not again while no stream got new work. */
/* *b freed and a buffer of its size made again, which takes its block: the streams joined on the
** way (their cuStreamWaitEvent calls). */
static long joins_at_reuse(cujit_buffer **b, size_t bytes) {
  cujit_buffer_free(*b);
  long waits = seen("stream_wait");
  EXPECT_OK(cujit_buffer_alloc(engine, bytes, CUJIT_U8, b));
  return seen("stream_wait") - waits;
}

Test(stub_pool, a_reused_block_joins_the_streams_that_had_work_once) {
  open_engine();
  cujit_stream *s1, *s2;
  EXPECT_OK(cujit_stream_create(engine, &s1));
  EXPECT_OK(cujit_stream_create(engine, &s2));
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_U8, &b));
  /* counted from the free: a stream's own wait for the default stream comes with its work */
  cr_expect_eq(joins_at_reuse(&b, 4096), 0, "no stream had work: no join");
  EXPECT_OK(cujit_memset(b, 0, 1, 4096, s1));
  EXPECT_OK(cujit_memset(b, 0, 2, 4096, s2));
  cr_expect_eq(joins_at_reuse(&b, 4096), 2, "both streams joined before the block came back");
  cr_expect_eq(joins_at_reuse(&b, 4096), 0, "no stream got work since: no second join");
  EXPECT_OK(cujit_memset(b, 0, 3, 4096, s2));
  cr_expect_eq(joins_at_reuse(&b, 4096), 2, "work again: every stream joined again");
  EXPECT_OK(cujit_memset(b, 0, 4, 4096, s1));
  cr_expect_eq(joins_at_reuse(&b, 8192), 0, "a new block: nothing to join");
  cujit_buffer_free(b);
  cujit_stream_free(s1);
  cujit_stream_free(s2);
}

/* A stream freed with work still queued: the default stream is made to wait for that work (an
** event recorded on the stream, waited for), so a device synchronize and the pool's reuse, which
** no longer see the stream, still come after it. One join for each stream freed. */
Test(stub_pool, a_freed_stream_hands_its_queued_work_to_the_default_stream) {
  open_engine();
  cujit_stream *s;
  cujit_buffer *b;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_U8, &b));
  EXPECT_OK(cujit_memset(b, 0, 7, 4096, s));
  long records = seen("event_record"), waits = seen("stream_wait");
  cujit_stream_free(s);
  cr_expect_eq(seen("event_record") - records, 1, "an event recorded on the freed stream");
  cr_expect_eq(seen("stream_wait") - waits, 1, "the default stream waits for it");
  cujit_buffer_free(b);
}

/* Small uploads go through the pinned staging ring and return at once; with the stand-in reading
** pinned memory only at its next call, as a GPU does when the copy runs, each upload must land
** with its own bytes: its own place in the ring, and a segment reused only after its copies ran
** (600 uploads of 4 KiB: the ring, 16 segments of 64 KiB, goes round twice). The caller's memory
** is written again at once after each call, as the API allows. */
Test(stub_pool, small_uploads_land_with_their_own_bytes_when_the_driver_reads_late) {
  setenv("CUJIT_STUB_DEFER_COPIES", "1", 1);
  open_engine();
  enum { N = 600, CHUNK = 1024 }; /* floats: 4 KiB each */
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, (size_t)N * CHUNK * 4, CUJIT_F32, &b));
  static float chunk[CHUNK], back[(size_t)N * CHUNK];
  for (int u = 0; u < N; u++) {
    for (int i = 0; i < CHUNK; i++) chunk[i] = (float)(u * CHUNK + i);
    EXPECT_OK(cujit_memcpy_htod(b, (size_t)u * CHUNK * 4, chunk, sizeof chunk, NULL));
    memset(chunk, 0xff, sizeof chunk); /* the caller's memory is its own again */
  }
  EXPECT_OK(cujit_memcpy_dtoh(back, b, 0, sizeof back, NULL));
  int bad = -1;
  for (int i = 0; i < N * CHUNK && bad < 0; i++)
    if (back[i] != (float)i) bad = i;
  cr_expect_eq(bad, -1, "float %d is %g (upload %d)", bad, bad >= 0 ? back[bad] : 0.0, bad / CHUNK);
  cujit_buffer_free(b);
}

/* The same with uploads of every size from 1 byte to 700, not whole 256-byte slots: each takes
** its size rounded up in the ring, never less, so none is overwritten by the next before the
** driver read it. */
Test(stub_pool, small_uploads_of_odd_sizes_land_whole_when_the_driver_reads_late) {
  setenv("CUJIT_STUB_DEFER_COPIES", "1", 1);
  open_engine();
  enum { N = 700 };
  static unsigned char want[N * (N + 1) / 2], back[sizeof want], chunk[N];
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof want, CUJIT_U8, &b));
  size_t at = 0;
  for (int u = 0; u < N; u++) {
    size_t bytes = 1 + (size_t)(u * 97) % N; /* 1 to 700, each once */
    for (size_t i = 0; i < bytes; i++) chunk[i] = want[at + i] = (unsigned char)(u * 131 + i);
    EXPECT_OK(cujit_memcpy_htod(b, at, chunk, bytes, NULL));
    memset(chunk, 0xff, bytes); /* the caller's memory is its own again */
    at += bytes;
  }
  cr_assert_eq(at, sizeof want);
  EXPECT_OK(cujit_memcpy_dtoh(back, b, 0, sizeof back, NULL));
  size_t bad = 0;
  while (bad < sizeof want && back[bad] == want[bad]) bad++;
  cr_expect_eq(bad, sizeof want, "byte %zu of %zu is %d, not %d", bad, sizeof want,
               bad < sizeof want ? back[bad] : 0, bad < sizeof want ? want[bad] : 0);
  cujit_buffer_free(b);
}

/* Downloads of up to 64 KiB (CJ_STAGE_SEGMENT) go through one pinned segment, made at the first
** of them and kept; a larger one goes straight to the caller's memory and pins nothing. Each
** brings its own bytes back. */
Test(stub_pool, downloads_of_up_to_64_KiB_share_one_pinned_segment_and_larger_ones_pin_nothing) {
  open_engine();
  enum { SEGMENT = 64 * 1024, BIG = 2 * SEGMENT };
  static unsigned char pattern[BIG], back[BIG];
  for (size_t i = 0; i < BIG; i++) pattern[i] = (unsigned char)(i * 7 + 3);
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, BIG, CUJIT_U8, &b));
  EXPECT_OK(cujit_memcpy_htod(b, 0, pattern, BIG, NULL)); /* larger than a segment: not staged */
  long live = cj_stub_live_allocations();
  EXPECT_OK(cujit_memcpy_dtoh(back, b, 0, SEGMENT + 1, NULL));
  cr_expect_eq(cj_stub_live_allocations(), live, "a download of 64 KiB + 1 pinned memory");
  cr_expect_eq(memcmp(back, pattern, SEGMENT + 1), 0, "64 KiB + 1 came back wrong");
  memset(back, 0, sizeof back);
  EXPECT_OK(cujit_memcpy_dtoh(back, b, 1, SEGMENT, NULL));
  cr_expect_eq(cj_stub_live_allocations(), live + 1,
               "a download of exactly 64 KiB made no pinned segment: it was not staged");
  cr_expect_eq(memcmp(back, pattern + 1, SEGMENT), 0, "64 KiB came back wrong");
  EXPECT_OK(cujit_memcpy_dtoh(back, b, BIG - 3, 3, NULL));
  cr_expect_eq(cj_stub_live_allocations(), live + 1, "the segment was not reused");
  cr_expect_eq(memcmp(back, pattern + BIG - 3, 3), 0, "the last 3 bytes came back wrong");
  cujit_buffer_free(b);
}

/* CUJIT_POOL=off: each buffer is the driver's from its allocation to its free; nothing is kept. */
Test(stub_pool, with_the_pool_off_a_free_gives_the_block_back) {
  setenv("CUJIT_POOL", "off", 1);
  open_engine();
  long before = cj_stub_live_allocations(), trims = seen("trim");
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_U8, &b));
  cr_expect_eq(cj_stub_live_allocations(), before + 1);
  cujit_buffer_free(b);
  cr_expect_eq(cj_stub_live_allocations(), before, "freed at once");
  size_t reserved = 1;
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  cr_expect_eq(reserved, 0);
  EXPECT_OK(cujit_device_trim(gpu));
  cr_expect_eq(seen("trim"), trims, "no pool to trim");
}
