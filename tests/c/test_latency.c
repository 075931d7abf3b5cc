/*
** test_latency.c -- the wait policy and the memory pool (issue 15). The wait tests drive
** cj_backend_wait with a stand-in device whose work "finishes" when the test says, so they run
** without a GPU; the device tests (GPU 0, else the CPU device) interrupt a wait of seconds and free
** buffers that queued kernels still use (on the default stream and on a stream); on a GPU they also
** turn the pool off and run out of memory with the pool holding what the allocation needs (the
** CPU device has no pool: those skip there, saying so), reuse a freed block, and order small
** uploads and fills of the default stream before the work of every stream.
*/
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "gpu.h"
#include "expect.h"

static cujit_engine *engine;

static void open_engine(void) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------------------------------------
** The wait policy, on a stand-in device: no GPU needed.
** ------------------------------------------------------------------------------------------- */

typedef struct pretend_work {
  _Atomic int finished; /* the test's "kernel" is done */
  _Atomic long polls;
  _Atomic long late_polls; /* polls more than 2 ms after the first */
  long first_ns;
  cujit_status when_done;
} pretend_work;

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static cujit_status pretend_done(cujit_device *dev, void *handle) {
  (void)dev;
  pretend_work *w = handle;
  if (w->polls++ == 0) w->first_ns = now_ns();
  if (now_ns() - w->first_ns > 2000000L) w->late_polls++;
  return w->finished ? w->when_done : CUJIT_ERROR_NOT_READY;
}

/* Interrupts after 200 ms; should the wait ignore it, the work "finishes" after 3 s, so a broken
** wait fails the test (it returns OK) instead of hanging it. */
static void *interrupt_later(void *work) {
  sleep_ms(200);
  cujit_interrupt(engine);
  sleep_ms(3000);
  ((pretend_work *)work)->finished = 1;
  return NULL;
}

static void *finish_later(void *work) {
  sleep_ms(30); /* well past the spinning window: the wait is napping by then */
  ((pretend_work *)work)->finished = 1;
  return NULL;
}

static cujit_device stand_in(void) {
  cujit_device dev;
  memset(&dev, 0, sizeof dev);
  dev.engine = engine;
  dev.ordinal = 7;
  return dev;
}

Test(wait_policy, an_interrupt_cuts_a_long_wait_short, .init = open_engine, .fini = close_engine) {
  cujit_device dev = stand_in();
  static pretend_work never = {.when_done = CUJIT_OK};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, interrupt_later, &never), 0);
  pthread_detach(t);
  cujit_status st = cj_backend_wait(&dev, pretend_done, &never, "waiting for the test");
  cr_expect_eq(st, CUJIT_ERROR_INTERRUPTED, "%s", cujit_status_string(st));
  cr_expect(strstr(cujit_errmsg(engine), "waiting for the test was interrupted") != NULL, "%s",
            cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "device 7") != NULL, "%s", cujit_errmsg(engine));
  /* The interrupt was reported once: the next wait runs to its end. */
  pretend_work later = {.when_done = CUJIT_OK};
  cr_assert_eq(pthread_create(&t, NULL, finish_later, &later), 0);
  st = cj_backend_wait(&dev, pretend_done, &later, "the second wait");
  pthread_join(t, NULL);
  cr_expect_eq(st, CUJIT_OK, "%s: %s", cujit_status_string(st), cujit_errmsg(engine));
}

Test(wait_policy, the_work_s_own_answer_comes_back, .init = open_engine, .fini = close_engine) {
  cujit_device dev = stand_in();
  pretend_work done = {.finished = 1, .when_done = CUJIT_OK};
  cr_expect_eq(cj_backend_wait(&dev, pretend_done, &done, "w"), CUJIT_OK);
  cr_expect_eq(done.polls, 1, "work already done costs one poll, not %ld", (long)done.polls);
  pretend_work faulted = {.when_done = CUJIT_ERROR_DEVICE_FAULT};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, finish_later, &faulted), 0);
  cr_expect_eq(cj_backend_wait(&dev, pretend_done, &faulted, "w"), CUJIT_ERROR_DEVICE_FAULT);
  pthread_join(t, NULL);
}

/* A wait of 30 ms naps once past its first millisecond: naps last at least 20 us, so the last 28
** ms hold at most 1400 polls, where polling back to back makes tens of thousands. A count, not a
** time: a loaded machine can only lower it. */
Test(wait_policy, a_long_wait_naps, .init = open_engine, .fini = close_engine) {
  if (getenv("CUJIT_WAIT")) cr_skip_test("CUJIT_WAIT is set: the default policy is not in force");
  cujit_device dev = stand_in();
  pretend_work w = {.when_done = CUJIT_OK};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, finish_later, &w), 0);
  cr_expect_eq(cj_backend_wait(&dev, pretend_done, &w, "w"), CUJIT_OK);
  pthread_join(t, NULL);
  cr_expect_lt(w.late_polls, 2000, "%ld polls in the last 28 ms of a wait", (long)w.late_polls);
}

Test(pool_api, null_arguments_are_refused, .init = open_engine, .fini = close_engine) {
  size_t bytes = 1;
  cr_expect_eq(cujit_device_trim(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_pool_reserved(NULL, &bytes), CUJIT_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------------------------------------
** On a device: GPU 0, else the CPU device.
** ------------------------------------------------------------------------------------------- */

static cujit_device *gpu; /* the device the test runs on: a GPU or the CPU device */

static void open_gpu(void) {
  open_engine();
  CJ_NEED_DEVICE(engine);
  EXPECT_OK(cujit_current_device(engine, &gpu));
}

static int on_cpu(void) {
  return cujit_device_ordinal(gpu) == CUJIT_DEVICE_CPU;
}

/* What only the driver's memory pool does cannot be seen on the CPU device, which has none. */
static void need_pool(void) {
  if (on_cpu())
    cr_skip_test("the CPU device has no memory pool (a GPU's is the driver's stream-ordered "
                 "allocator): buffers are host memory, freed at once after the queued work");
}

/* The clock cycles each thread of an n-thread launch spins for the launch to take about `cycles`:
** a GPU runs the threads at once, the CPU device one after another on each core. */
static void open_gpu_without_pool(void) {
  setenv("CUJIT_POOL", "off", 1); /* read when the engine makes its device table */
  open_gpu();
  unsetenv("CUJIT_POOL");
}

/* Each thread waits `cycles` clocks, then writes twice its input: a kernel that is still reading
** its input long after the host has moved on. */
static const char slow_double_src[] = "long long start = clock64();\n"
                                      "while (clock64() - start < cycles) {}\n"
                                      "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                      "if (i < n) out[i] = 2.0f * in[i];\n";

static cujit_kernel *slow_double(void) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine,
                                "slow_double(const float *in, float *out, int n, long long cycles)",
                                slow_double_src, NULL, NULL, &k));
  return k;
}

static cujit_status launch_slow(cujit_kernel *k, cujit_buffer *in, cujit_buffer *out, int n,
                                long long cycles, cujit_stream *stream) {
  cujit_launch_config c = {.size = sizeof c,
                           .grid = {(unsigned)(n + 255) / 256, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = stream};
  cujit_arg args[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(out), CUJIT_ARG_I(n), CUJIT_ARG_I(cycles)};
  return cujit_launch(k, &c, args, 4);
}

/* Queues a slow kernel reading `in` on `kernel_stream`, frees `in` at once, and scribbles over
** fresh buffers of the same size (which the pool may hand the freed memory to) on
** `scribble_stream`, which nothing orders after the kernel but the pool's own ordering, while the
** kernel still runs: the kernel's output must still be twice the original input. */
static void free_while_in_use(cujit_stream *kernel_stream, cujit_stream *scribble_stream) {
  enum { N = 1 << 16 };
  static float host[N], got[N], junk[N];
  for (int i = 0; i < N; i++) host[i] = (float)(i % 977) - 300.0f, junk[i] = -12345.0f;
  cujit_kernel *k = slow_double();
  cujit_buffer *in, *out, *fresh[4];
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &in));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &out));
  EXPECT_OK(cujit_memcpy_htod(in, 0, host, sizeof host, NULL));
  EXPECT_OK(launch_slow(k, in, out, N, 200LL * 1000 * 1000, kernel_stream)); /* ~0.1 s */
  cujit_buffer_free(in);
  for (int j = 0; j < 4; j++) {
    EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &fresh[j]));
    EXPECT_OK(cujit_memcpy_htod(fresh[j], 0, junk, sizeof junk, scribble_stream));
  }
  EXPECT_OK(cujit_device_synchronize(gpu));
  EXPECT_OK(cujit_memcpy_dtoh(got, out, 0, sizeof got, NULL));
  int bad = -1;
  for (int i = 0; i < N && bad < 0; i++)
    if (got[i] != 2.0f * host[i]) bad = i;
  cr_expect_eq(bad, -1, "element %d is %g, wanted %g", bad, bad >= 0 ? got[bad] : 0.0,
               bad >= 0 ? 2.0 * host[bad] : 0.0);
  for (int j = 0; j < 4; j++) cujit_buffer_free(fresh[j]);
  cujit_buffer_free(out);
  cujit_kernel_free(k);
}

Test(pool_device, freeing_a_buffer_in_use_on_the_default_stream, .init = open_gpu,
     .fini = close_engine) {
  cujit_stream *stream;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  free_while_in_use(NULL, stream);
  cujit_stream_free(stream);
}

Test(pool_device, freeing_a_buffer_in_use_on_a_stream, .init = open_gpu, .fini = close_engine) {
  cujit_stream *stream;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  free_while_in_use(stream, NULL);
  cujit_stream_free(stream);
}

Test(pool_device, with_the_pool_off, .init = open_gpu_without_pool, .fini = close_engine) {
  cujit_stream *stream;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  free_while_in_use(stream, NULL);
  cujit_stream_free(stream);
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, 1 << 20, CUJIT_DTYPE_NONE, &b));
  cujit_buffer_free(b);
  size_t reserved = 1;
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  cr_expect_eq(reserved, 0, "no pool, yet it holds %zu bytes", reserved);
  EXPECT_OK(cujit_device_trim(gpu));
}

Test(pool_device, the_pool_keeps_and_trim_returns, .init = open_gpu, .fini = close_engine) {
  need_pool();
  size_t size = (size_t)64 << 20, reserved = 0;
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, size, CUJIT_DTYPE_NONE, &b));
  cr_expect_eq(cujit_device_allocated(gpu), size);
  cujit_buffer_free(b);
  cr_expect_eq(cujit_device_allocated(gpu), 0, "allocated counts live buffers only");
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  cr_expect_geq(reserved, size, "the pool kept %zu bytes of a freed %zu", reserved, size);
  EXPECT_OK(cujit_device_trim(gpu));
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  cr_expect_eq(reserved, 0, "after a trim with nothing live the pool holds %zu bytes", reserved);
}

/* Two freed blocks of 25% each stay in the pool; a block of 60% fits only once they go back (40%
** is left for other test processes sharing the GPU). */
Test(pool_device, out_of_memory_trims_first, .init = open_gpu, .fini = close_engine) {
  need_pool();
  size_t free_bytes = 0, total = 0, reserved = 0;
  EXPECT_OK(cujit_device_memory(gpu, &free_bytes, &total));
  size_t part = free_bytes / 100 * 25 & ~(size_t)0xFFFFF;
  cujit_buffer *a, *b, *big = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, part, CUJIT_DTYPE_NONE, &a));
  EXPECT_OK(cujit_buffer_alloc(engine, part, CUJIT_DTYPE_NONE, &b));
  cujit_buffer_free(a);
  cujit_buffer_free(b);
  EXPECT_OK(cujit_device_pool_reserved(gpu, &reserved));
  cr_expect_geq(reserved, 2 * part);
  size_t want = free_bytes / 100 * 60 & ~(size_t)0xFFFFF;
  EXPECT_OK(cujit_buffer_alloc(engine, want, CUJIT_DTYPE_NONE, &big));
  cujit_buffer_free(big);
  /* Past what the device has even after a trim: the usual message. */
  cujit_status st = cujit_buffer_alloc(engine, total + free_bytes, CUJIT_DTYPE_NONE, &big);
  cr_expect_eq(st, CUJIT_ERROR_DEVICE_MEMORY, "%s", cujit_status_string(st));
  cr_expect(strstr(cujit_errmsg(engine), "out of device memory: asked for") != NULL, "%s",
            cujit_errmsg(engine));
  EXPECT_OK(cujit_device_status(gpu));
}

static void *interrupt_after_200ms(void *unused) {
  (void)unused;
  sleep_ms(200);
  cujit_interrupt(engine);
  return NULL;
}

/* A kernel of seconds, and each kind of wait on it interrupted from another thread while it naps;
** afterwards the kernel still finishes and its result is right. */
Test(pool_device, interrupting_a_wait_of_seconds, .init = open_gpu, .fini = close_engine) {
  enum { N = 256 };
  float host[N], got[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  cujit_kernel *k = slow_double();
  cujit_buffer *in, *out;
  cujit_stream *stream;
  cujit_event *event;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  EXPECT_OK(cujit_event_create(engine, &event));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &in));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &out));
  EXPECT_OK(cujit_memcpy_htod(in, 0, host, sizeof host, NULL));
  /* ~2 s at 2 GHz, on the CPU device too: its time slices interleave a block's spinning threads */
  long long cycles = 4LL * 1000 * 1000 * 1000;
  for (int kind = 0; kind < 3; kind++) {
    EXPECT_OK(launch_slow(k, in, out, N, cycles, stream));
    EXPECT_OK(cujit_event_record(event, stream));
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, interrupt_after_200ms, NULL), 0);
    cujit_status st = kind == 0   ? cujit_stream_synchronize(stream)
                      : kind == 1 ? cujit_event_synchronize(event)
                                  : cujit_device_synchronize(gpu);
    pthread_join(t, NULL);
    cr_expect_eq(st, CUJIT_ERROR_INTERRUPTED, "wait %d: %s", kind, cujit_errmsg(engine));
    EXPECT_OK(cujit_stream_synchronize(stream));
  }
  EXPECT_OK(cujit_memcpy_dtoh(got, out, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++) cr_expect_eq(got[i], 2.0f * host[i], "element %d", i);
  cujit_buffer_free(in);
  cujit_buffer_free(out);
  cujit_event_free(event);
  cujit_stream_free(stream);
  cujit_kernel_free(k);
}

/* A freed block comes back for the next buffer of the same size (rounded): the pool's own cache,
** no driver call. */
Test(pool_copies, a_freed_block_is_handed_out_again, .init = open_gpu, .fini = close_engine) {
  need_pool();
  cujit_buffer *a, *b, *c;
  EXPECT_OK(cujit_buffer_alloc(engine, 4000, CUJIT_F32, &a));
  uint64_t first = cujit_buffer_devptr(a);
  cujit_buffer_free(a);
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_F32, &b)); /* 4000 and 4096 round alike */
  cr_expect_eq(cujit_buffer_devptr(b), first, "the freed block was not reused");
  EXPECT_OK(cujit_buffer_alloc(engine, 4000, CUJIT_F32, &c)); /* b holds it: another block */
  cr_expect_neq(cujit_buffer_devptr(c), first);
  cr_expect_eq(cujit_device_allocated(gpu), 4096 + 4000);
  cujit_buffer_free(b);
  cujit_buffer_free(c);
}

/* Uploads and downloads of many sizes on the default stream, around the staging buffers' limit
** (64 KiB) and more than the upload ring holds (1 MiB) in all, each of different bytes, each read
** back whole; then a download into the middle of a host array leaves its ends alone. */
Test(pool_copies, small_copies_each_way, .init = open_gpu, .fini = close_engine) {
  enum { MAX = 64 * 1024 + 512 };
  static unsigned char up[MAX], down[MAX + 2];
  static const size_t sizes[] = {1, 3, 512, 4096, 4097, 60000, 65535, 65536, 65537, MAX};
  enum { NSIZES = sizeof sizes / sizeof *sizes };
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, MAX, CUJIT_DTYPE_NONE, &b));
  for (int round = 0; round < 4; round++)
    for (int s = 0; s < NSIZES; s++) {
      size_t n = sizes[s];
      for (size_t i = 0; i < n; i++) up[i] = (unsigned char)(i * 7 + (size_t)s * 31 + round);
      EXPECT_OK(cujit_memcpy_htod(b, 0, up, n, NULL));
      memset(up, 0xEE, n); /* the upload's source may change at once */
      memset(down, 0x5A, sizeof down);
      EXPECT_OK(cujit_memcpy_dtoh(down + 1, b, 0, n, NULL));
      cr_assert_eq(down[0], 0x5A, "the download wrote before its destination");
      cr_assert_eq(down[n + 1], 0x5A, "the download of %zu bytes wrote past its end", n);
      for (size_t i = 0; i < n; i++)
        if (down[i + 1] != (unsigned char)(i * 7 + (size_t)s * 31 + round))
          cr_assert_fail("round %d, %zu bytes: byte %zu is %d", round, n, i, down[i + 1]);
    }
  cujit_buffer_free(b);
}

/* Each thread copies its element after spinning `cycles` clocks. */
static cujit_kernel *slow_copy(void) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine,
                                "slow_copy(const float *in, float *out, int n, long long cycles)",
                                "long long start = clock64();\n"
                                "while (clock64() - start < cycles) {}\n"
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) out[i] = in[i];\n",
                                NULL, NULL, &k));
  return k;
}

/* Small uploads on the default stream return before the device has the bytes (staged); queued
** behind a slow kernel, they must still reach a kernel on a stream made before them and one made
** after, and work on the default stream. More uploads than the staging ring holds (1 MiB), each
** of different values, so its segments are reused. */
Test(pool_device, small_uploads_reach_every_stream, .init = open_gpu, .fini = close_engine) {
  enum { N = 12 * 1024, UPLOADS = 40 }; /* 48 KiB each */
  static float host[N], got[N];
  cujit_kernel *copy = slow_copy();
  cujit_stream *before, *after;
  cujit_buffer *buf[UPLOADS], *out, *scratch;
  EXPECT_OK(cujit_stream_create(engine, &before));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &out));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &scratch));
  /* ~0.05 s on the default stream, which every upload below queues behind */
  long long cycles = on_cpu() ? 20000 : 100LL * 1000 * 1000;
  cujit_launch_config c = {.size = sizeof c,
                           .grid = {N / 256, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cujit_arg args[] = {CUJIT_ARG_BUF(scratch), CUJIT_ARG_BUF(scratch), CUJIT_ARG_I(N),
                      CUJIT_ARG_I(cycles)};
  EXPECT_OK(cujit_launch(copy, &c, args, 4));
  for (int u = 0; u < UPLOADS; u++) {
    for (int i = 0; i < N; i++) host[i] = (float)(u * 1000 + i % 997);
    EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &buf[u]));
    EXPECT_OK(cujit_memcpy_htod(buf[u], 0, host, sizeof host, NULL));
  }
  for (int i = 0; i < N; i++) host[i] = -1.0f; /* the uploads' source is free to change */
  EXPECT_OK(cujit_stream_create(engine, &after));
  cujit_stream *streams[] = {before, after, NULL};
  for (int s = 0; s < 3; s++) {
    int u = s == 2 ? UPLOADS - 1 : s * 17;
    cujit_launch_config on = {.size = sizeof on,
                              .grid = {N / 256, 1, 1},
                              .block = {256, 1, 1},
                              .shared_bytes = 0,
                              .stream = streams[s]};
    cujit_arg a[] = {CUJIT_ARG_BUF(buf[u]), CUJIT_ARG_BUF(out), CUJIT_ARG_I(N), CUJIT_ARG_I(0)};
    EXPECT_OK(cujit_launch(copy, &on, a, 4));
    EXPECT_OK(cujit_device_synchronize(gpu));
    EXPECT_OK(cujit_memcpy_dtoh(got, out, 0, sizeof got, NULL));
    for (int i = 0; i < N; i++)
      if (got[i] != (float)(u * 1000 + i % 997))
        cr_assert_fail("stream %d, upload %d, element %d: %g", s, u, i, (double)got[i]);
  }
  for (int u = 0; u < UPLOADS; u++) {
    EXPECT_OK(cujit_memcpy_dtoh(got, buf[u], 0, sizeof got, NULL));
    for (int i = 0; i < N; i++)
      if (got[i] != (float)(u * 1000 + i % 997))
        cr_assert_fail("upload %d, element %d: %g", u, i, (double)got[i]);
    cujit_buffer_free(buf[u]);
  }
  cujit_buffer_free(out);
  cujit_buffer_free(scratch);
  cujit_stream_free(before);
  cujit_stream_free(after);
  cujit_kernel_free(copy);
}

/* A fill on the default stream behind a slow kernel, then a kernel on a stream reading the filled
** buffer: the stream waits for the fill (it catches up with the default stream first). */
Test(pool_device, a_stream_sees_a_fill_of_the_default_stream, .init = open_gpu,
     .fini = close_engine) {
  enum { N = 4096 };
  static float host[N], got[N];
  for (int i = 0; i < N; i++) host[i] = 7.0f;
  cujit_kernel *copy = slow_copy();
  cujit_stream *stream;
  cujit_buffer *in, *out;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &in));
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &out));
  EXPECT_OK(cujit_memcpy_htod(in, 0, host, sizeof host, NULL));
  EXPECT_OK(cujit_memset(out, 0, 0, sizeof host, NULL));
  long long cycles = on_cpu() ? 20000 : 100LL * 1000 * 1000;
  cujit_launch_config c = {.size = sizeof c,
                           .grid = {N / 256, 1, 1},
                           .block = {256, 1, 1},
                           .shared_bytes = 0,
                           .stream = NULL};
  cujit_arg slow[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(out), CUJIT_ARG_I(N), CUJIT_ARG_I(cycles)};
  EXPECT_OK(cujit_launch(copy, &c, slow, 4));           /* out = 7 after ~0.05 s */
  EXPECT_OK(cujit_memset(in, 0, 0, sizeof host, NULL)); /* in = 0 after that */
  c.stream = stream;
  cujit_arg fast[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(out), CUJIT_ARG_I(N), CUJIT_ARG_I(0)};
  EXPECT_OK(cujit_launch(copy, &c, fast, 4)); /* out = 0, after both */
  EXPECT_OK(cujit_stream_synchronize(stream));
  EXPECT_OK(cujit_device_synchronize(gpu));
  EXPECT_OK(cujit_memcpy_dtoh(got, out, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], 0.0f, "element %d is %g", i, (double)got[i]);
  cujit_buffer_free(in);
  cujit_buffer_free(out);
  cujit_stream_free(stream);
  cujit_kernel_free(copy);
}
