/*
** test_runtime.c -- the runtime layer on a device: devices, device and pinned memory, copies,
** streams, events, waits, resets. The tests go through CJ_NEED_DEVICE (GPU 0, else the CPU
** device) and check every result against host data on random inputs with poisoned outputs. What
** only a driver has (its memory pool) is checked on the GPU; the CPU device's side of it is checked
** against the host's own accounting. The calls that never reach a device (no driver, null handles,
** bad arguments): test_runtime_args.c.
*/
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_engine.h"
#include "cujit.h"
#include "expect.h"
#include "gpu.h"
#include "heap.h"

static cujit_device *dev; /* the device the test runs on: a GPU or the CPU device */

static void open_device(void) {
  open_engine();
  CJ_NEED_DEVICE(engine);
  EXPECT_OK(cujit_current_device(engine, &dev));
}

static int on_cpu(void) {
  return cujit_device_ordinal(dev) == CUJIT_DEVICE_CPU;
}

static void fill_random(void *data, size_t bytes, unsigned seed) {
  unsigned char *p = data;
  unsigned state = seed | 1;
  for (size_t i = 0; i < bytes; i++) {
    cj_test_randf(&state);
    p[i] = (unsigned char)(state >> 11);
  }
}

static cujit_buffer *alloc(size_t bytes, cujit_dtype dtype) {
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, bytes, dtype, &b));
  cr_assert_not_null(b);
  return b;
}

/* A buffer holding random bytes; `host` (bytes long) gets a copy. */
static cujit_buffer *random_buffer(size_t bytes, unsigned seed, unsigned char *host) {
  cujit_buffer *b = alloc(bytes, CUJIT_DTYPE_NONE);
  fill_random(host, bytes, seed);
  EXPECT_OK(cujit_memcpy_htod(b, 0, host, bytes, NULL));
  return b;
}

static void expect_device_holds(const cujit_buffer *b, const unsigned char *want, size_t bytes) {
  unsigned char *got = malloc(bytes);
  cr_assert_not_null(got);
  memset(got, 0xA5, bytes);
  EXPECT_OK(cujit_memcpy_dtoh(got, b, 0, bytes, NULL));
  size_t first_bad = bytes;
  for (size_t i = 0; i < bytes && first_bad == bytes; i++)
    if (got[i] != want[i]) first_bad = i;
  cr_expect_eq(first_bad, bytes, "byte %zu differs: got 0x%02x, wanted 0x%02x", first_bad,
               first_bad < bytes ? got[first_bad] : 0, first_bad < bytes ? want[first_bad] : 0);
  free(got);
}

/* What every device reports, a GPU (compute capability, "sm_XY") or the CPU device ("cpu"). */
static void expect_sane_info(cujit_device *device, int ordinal) {
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(device, &info));
  cr_expect_eq(cujit_device_ordinal(device), ordinal);
  cr_expect_eq(info.ordinal, ordinal);
  cr_expect_gt(strlen(info.name), 0);
  cr_expect_gt(info.multiprocessors, 0);
  cr_expect_gt(info.total_memory, (size_t)256 << 20);
  cr_expect_geq(info.max_threads_per_block, 512);
  cr_expect_geq(info.max_block_dim[0], 512);
  cr_expect_geq(info.max_grid_dim[0], 65535);
  cr_expect_geq(info.max_shared_per_block, 16384);
  cr_expect_geq(info.max_shared_per_block_optin, info.max_shared_per_block);
  cr_expect_eq(info.warp_size, 32);
  char arch[16], want[16];
  EXPECT_OK(cujit_device_arch(device, arch, sizeof arch));
  if (ordinal == CUJIT_DEVICE_CPU) {
    snprintf(want, sizeof want, "cpu");
    cr_expect(strncmp(info.name, "CPU (", 5) == 0, "the CPU device is called %s", info.name);
  } else {
    cr_expect_geq(info.cc_major, 5, "compute capability %d.%d", info.cc_major, info.cc_minor);
    snprintf(want, sizeof want, "sm_%d%d", info.cc_major, info.cc_minor);
  }
  cr_expect_str_eq(arch, want);
  EXPECT_FAIL(cujit_device_arch(device, arch, 3), CUJIT_ERROR_INVALID_ARGUMENT, "too small");
  size_t free_bytes = 0, total = 0;
  EXPECT_OK(cujit_device_memory(device, &free_bytes, &total));
  cr_expect_gt(free_bytes, 0);
  cr_expect_leq(free_bytes, total);
  cr_expect_eq(cujit_device_status(device), CUJIT_OK);
}

/* Every GPU there is, and the CPU device beside them (alone without a driver). */
Test(runtime_device, device_info_is_sane, .init = open_device, .fini = close_engine) {
  int count = 0;
  if (on_cpu()) {
    cr_expect_neq(cujit_device_count(engine, &count), CUJIT_OK, "no GPU, yet a device count");
    cr_expect_eq(count, 0);
  } else {
    EXPECT_OK(cujit_device_count(engine, &count));
    cr_assert_geq(count, 1);
  }
  for (int i = 0; i < count; i++) {
    cujit_device *device;
    EXPECT_OK(cujit_device_get(engine, i, &device));
    expect_sane_info(device, i);
  }
  cujit_device *cpu;
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  expect_sane_info(cpu, CUJIT_DEVICE_CPU);
}

/* A missing GPU is named, and says how to choose one; without a driver, every GPU ordinal is
** refused with the reason and the way to the CPU device. Neither changes the current device. */
Test(runtime_device, missing_devices_are_named, .init = open_device, .fini = close_engine) {
  int count = 0;
  int driver = cujit_device_count(engine, &count) == CUJIT_OK;
  cujit_device *device = poison_ptr();
  if (driver) {
    EXPECT_FAIL(cujit_device_get(engine, count, &device), CUJIT_ERROR_NO_DEVICE, "does not exist");
    cr_expect(strstr(cujit_errmsg(engine), "CUJIT_DEVICE") != NULL, "%s", cujit_errmsg(engine));
    EXPECT_FAIL(cujit_device_get(engine, -2, &device), CUJIT_ERROR_NO_DEVICE, "device -2");
    EXPECT_FAIL(cujit_set_device(engine, count + 5), CUJIT_ERROR_NO_DEVICE, "does not exist");
  } else {
    EXPECT_FAIL(cujit_device_get(engine, 0, &device), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
    EXPECT_FAIL(cujit_set_device(engine, 5), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  }
  cr_expect_null(device);
  cujit_device *current;
  EXPECT_OK(cujit_current_device(engine, &current));
  cr_expect_eq(current, dev, "a refused cujit_set_device must not change the current device");
  EXPECT_OK(cujit_set_device(engine, cujit_device_ordinal(dev)));
}

/* The device a test may choose when CUJIT_DEVICE names none: GPU 0, else the CPU device (asked
** of an engine of its own, so that the test's engine keeps CUJIT_DEVICE's choice). */
static int usable_ordinal(void) {
  cujit_engine *probe;
  cr_assert_eq(cujit_open(&probe), CUJIT_OK);
  CJ_NEED_DEVICE(probe);
  int ordinal = cj_test_on_cpu(probe) ? CUJIT_DEVICE_CPU : 0;
  cujit_close(probe);
  return ordinal;
}

/* A malformed CUJIT_DEVICE is named, with what it takes, whether or not there are GPUs (no "set
** CUJIT_DEVICE=cpu" advice for a value the user meant as a device). Choosing a device in code
** then works. */
Test(runtime_device, malformed_cujit_device) {
  setenv("CUJIT_DEVICE", "first", 1); /* each test runs in its own process */
  open_engine();
  int ordinal = usable_ordinal();
  cujit_device *device = poison_ptr();
  EXPECT_FAIL(cujit_current_device(engine, &device), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE='first' is not understood: it takes a GPU ordinal (0, 1, ...: digits "
              "only) or cpu");
  cr_expect(strstr(cujit_errmsg(engine), "set CUJIT_DEVICE=cpu") == NULL, "%s",
            cujit_errmsg(engine));
  cr_expect_null(device);
  cujit_buffer *b;
  EXPECT_FAIL(cujit_buffer_alloc(engine, 16, CUJIT_F32, &b), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE='first' is not understood");
  EXPECT_OK(cujit_set_device(engine, ordinal));
  b = alloc(16, CUJIT_F32);
  cujit_buffer_free(b);
  close_engine();
}

Test(runtime_device, cujit_device_out_of_range) {
  setenv("CUJIT_DEVICE", "999", 1);
  open_engine();
  int ordinal = usable_ordinal();
  cujit_device *device;
  if (ordinal == 0)
    EXPECT_FAIL(cujit_current_device(engine, &device), CUJIT_ERROR_NO_DEVICE,
                "CUJIT_DEVICE=999 names device 999");
  else
    EXPECT_FAIL(cujit_current_device(engine, &device), CUJIT_ERROR_NO_DRIVER, "CUJIT_DEVICE=cpu");
  close_engine();
}

Test(runtime_device, htod_dtoh_round_trip, .init = open_device, .fini = close_engine) {
  const size_t n = 4097;
  float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
  cr_assert(in && out);
  unsigned state = 12345;
  for (size_t i = 0; i < n; i++) in[i] = cj_test_randf(&state);
  cujit_buffer *b = alloc(n * sizeof(float), CUJIT_F32);
  cr_expect_eq(cujit_buffer_size(b), n * sizeof(float));
  cr_expect_eq(cujit_buffer_dtype(b), CUJIT_F32);
  cr_expect_eq(cujit_buffer_device(b), dev);
  cr_expect_neq(cujit_buffer_devptr(b), 0);
  EXPECT_OK(cujit_memset(b, 0, 0xEE, n * sizeof(float), NULL)); /* poison the device side */
  EXPECT_OK(cujit_memcpy_htod(b, 0, in, n * sizeof(float), NULL));
  memset(out, 0xA5, n * sizeof *out); /* and the host side */
  EXPECT_OK(cujit_memcpy_dtoh(out, b, 0, n * sizeof(float), NULL));
  cr_expect_arr_eq(out, in, n * sizeof(float));
  cujit_buffer_free(b);
  free(in);
  free(out);
}

Test(runtime_device, memset_part_of_a_buffer, .init = open_device, .fini = close_engine) {
  enum { N = 1000 };
  unsigned char want[N];
  cujit_buffer *b = random_buffer(N, 777, want);
  EXPECT_OK(cujit_memset(b, 100, 0x5A, 200, NULL));
  memset(want + 100, 0x5A, 200);
  EXPECT_OK(cujit_memset(b, N - 1, 0x11, 1, NULL)); /* the very last byte */
  want[N - 1] = 0x11;
  EXPECT_OK(cujit_memset(b, N, 0x22, 0, NULL)); /* nothing, at the end: fine */
  expect_device_holds(b, want, N);
  cujit_buffer_free(b);
}

Test(runtime_device, dtod_with_offsets, .init = open_device, .fini = close_engine) {
  enum { N = 2048 };
  unsigned char src_host[N], want[N];
  cujit_buffer *src = random_buffer(N, 4242, src_host);
  cujit_buffer *dst = alloc(N, CUJIT_DTYPE_NONE);
  EXPECT_OK(cujit_memset(dst, 0, 0xCC, N, NULL));
  memset(want, 0xCC, N);
  EXPECT_OK(cujit_memcpy_dtod(dst, 64, src, 128, 512, NULL));
  memcpy(want + 64, src_host + 128, 512);
  /* Non-overlapping ranges of one buffer are fine. */
  EXPECT_OK(cujit_memcpy_dtod(dst, 1500, dst, 64, 100, NULL));
  memcpy(want + 1500, want + 64, 100);
  expect_device_holds(dst, want, N);
  /* Offsets on the host side of htod / dtoh. */
  unsigned char part[300];
  memset(part, 0xA5, sizeof part);
  EXPECT_OK(cujit_memcpy_dtoh(part, src, N - 300, 300, NULL));
  cr_expect_arr_eq(part, src_host + N - 300, 300);
  fill_random(part, sizeof part, 99);
  EXPECT_OK(cujit_memcpy_htod(dst, 7, part, sizeof part, NULL));
  memcpy(want + 7, part, sizeof part);
  expect_device_holds(dst, want, N);
  cujit_buffer_free(src);
  cujit_buffer_free(dst);
}

Test(runtime_device, out_of_range_copies_are_refused, .init = open_device, .fini = close_engine) {
  enum { N = 256 };
  unsigned char want[N], host[2 * N];
  fill_random(host, sizeof host, 5);
  cujit_buffer *b = random_buffer(N, 31337, want);
  cujit_buffer *c = alloc(N, CUJIT_DTYPE_NONE);
  EXPECT_FAIL(cujit_memcpy_htod(b, N - 3, host, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "copy of 8 bytes at offset 253 runs past the end of a destination buffer of 256");
  EXPECT_FAIL(cujit_memcpy_htod(b, 0, host, N + 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "runs past the end");
  EXPECT_FAIL(cujit_memcpy_htod(b, SIZE_MAX, host, 2, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "runs past the end");
  EXPECT_FAIL(cujit_memcpy_htod(b, 2, host, SIZE_MAX, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "runs past the end");
  EXPECT_FAIL(cujit_memcpy_htod(b, 0, NULL, 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "src is NULL");
  EXPECT_FAIL(cujit_memcpy_dtoh(host, b, 1, N, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "source buffer of 256");
  EXPECT_FAIL(cujit_memcpy_dtoh(NULL, b, 0, 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "dst is NULL");
  EXPECT_FAIL(cujit_memcpy_dtod(c, 0, b, SIZE_MAX - 1, 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "runs past the end");
  EXPECT_FAIL(cujit_memcpy_dtod(c, 200, b, 0, 100, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "destination buffer");
  EXPECT_FAIL(cujit_memcpy_dtod(b, 10, b, 0, 100, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "overlap");
  EXPECT_FAIL(cujit_memcpy_dtod(c, 0, NULL, 0, 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "src is NULL");
  EXPECT_FAIL(cujit_memset(b, 100, 0, N, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "runs past the end");
  EXPECT_FAIL(cujit_memset(b, SIZE_MAX, 0, SIZE_MAX, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "runs past the end");
  /* Zero bytes anywhere inside (or at the end) is a no-op, and fine. */
  EXPECT_OK(cujit_memcpy_htod(b, N, host, 0, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(host, b, 0, 0, NULL));
  /* Nothing refused may have written anything. */
  expect_device_holds(b, want, N);
  cujit_buffer_free(b);
  cujit_buffer_free(c);
}

Test(runtime_device, async_copies_with_pinned_memory, .init = open_device, .fini = close_engine) {
  const size_t bytes = (size_t)3 << 20;
  cujit_host_buffer *in, *out;
  cujit_stream *stream;
  cujit_event *start, *end;
  EXPECT_OK(cujit_host_alloc(engine, bytes, &in));
  EXPECT_OK(cujit_host_alloc(engine, bytes, &out));
  cr_assert_not_null(cujit_host_ptr(in));
  cr_expect_eq(cujit_host_size(in), bytes);
  EXPECT_OK(cujit_stream_create(engine, &stream));
  cr_expect_eq(cujit_stream_device(stream), dev);
  EXPECT_OK(cujit_event_create(engine, &start));
  EXPECT_OK(cujit_event_create(engine, &end));
  fill_random(cujit_host_ptr(in), bytes, 2024);
  memset(cujit_host_ptr(out), 0xA5, bytes);
  cujit_buffer *a = alloc(bytes, CUJIT_U8), *b = alloc(bytes, CUJIT_U8);
  EXPECT_OK(cujit_event_record(start, stream));
  EXPECT_OK(cujit_memset(b, 0, 0x77, bytes, stream));
  EXPECT_OK(cujit_memcpy_htod(a, 0, cujit_host_ptr(in), bytes, stream));
  EXPECT_OK(cujit_memcpy_dtod(b, 0, a, 0, bytes, stream));
  EXPECT_OK(cujit_memcpy_dtoh(cujit_host_ptr(out), b, 0, bytes, stream));
  EXPECT_OK(cujit_event_record(end, stream));
  EXPECT_OK(cujit_event_synchronize(end));
  EXPECT_OK(cujit_event_query(end));
  EXPECT_OK(cujit_stream_synchronize(stream));
  EXPECT_OK(cujit_stream_query(stream));
  cr_expect_arr_eq(cujit_host_ptr(out), cujit_host_ptr(in), bytes);
  float ms = -1;
  EXPECT_OK(cujit_event_elapsed(start, end, &ms));
  cr_expect_geq(ms, 0.0f);
  EXPECT_OK(cujit_device_synchronize(dev));
  cujit_buffer_free(a);
  cujit_buffer_free(b);
  cujit_event_free(start);
  cujit_event_free(end);
  cujit_stream_free(stream);
  cujit_host_free(in);
  cujit_host_free(out);
}

/* A producer stream writes a four times; `consumer` (NULL: the default stream of the event's
** device, as for cujit_event_record) waits for its event, then copies a to b: b holds the last
** value, not an earlier one nor the first fill. */
static void consumer_waits_for_event(cujit_stream *consumer) {
  const size_t bytes = (size_t)64 << 20;
  cujit_stream *producer;
  cujit_event *done;
  EXPECT_OK(cujit_stream_create(engine, &producer));
  EXPECT_OK(cujit_event_create(engine, &done));
  cujit_buffer *a = alloc(bytes, CUJIT_DTYPE_NONE), *b = alloc(bytes, CUJIT_DTYPE_NONE);
  EXPECT_OK(cujit_memset(a, 0, 0x01, bytes, NULL));
  EXPECT_OK(cujit_memset(b, 0, 0x01, bytes, NULL));
  EXPECT_OK(cujit_device_synchronize(dev));
  for (int i = 0; i < 4; i++)
    EXPECT_OK(cujit_memset(a, 0, (unsigned char)(0x40 + i), bytes, producer));
  EXPECT_OK(cujit_event_record(done, producer));
  EXPECT_OK(cujit_stream_wait_event(consumer, done));
  EXPECT_OK(cujit_memcpy_dtod(b, 0, a, 0, bytes, consumer));
  if (consumer) EXPECT_OK(cujit_stream_synchronize(consumer));
  unsigned char *got = malloc(bytes);
  cr_assert_not_null(got);
  memset(got, 0xA5, bytes);
  EXPECT_OK(cujit_memcpy_dtoh(got, b, 0, bytes, NULL));
  size_t bad = 0;
  for (size_t i = 0; i < bytes; i++) bad += got[i] != 0x43;
  cr_expect_eq(bad, 0, "%zu bytes were not the producer's last value", bad);
  free(got);
  cujit_buffer_free(a);
  cujit_buffer_free(b);
  cujit_event_free(done);
  cujit_stream_free(producer);
}

Test(runtime_device, stream_waits_for_event, .init = open_device, .fini = close_engine) {
  cujit_stream *consumer;
  EXPECT_OK(cujit_stream_create(engine, &consumer));
  consumer_waits_for_event(consumer);
  cujit_stream_free(consumer);
}

Test(runtime_device, default_stream_waits_for_event, .init = open_device, .fini = close_engine) {
  consumer_waits_for_event(NULL);
}

Test(runtime_device, event_misuse, .init = open_device, .fini = close_engine) {
  cujit_event *a, *b;
  EXPECT_OK(cujit_event_create(engine, &a));
  EXPECT_OK(cujit_event_create(engine, &b));
  float ms = 5;
  EXPECT_FAIL(cujit_event_elapsed(a, b, &ms), CUJIT_ERROR_INVALID_ARGUMENT, "never recorded");
  EXPECT_OK(cujit_event_record(a, NULL));
  EXPECT_FAIL(cujit_event_elapsed(a, b, &ms), CUJIT_ERROR_INVALID_ARGUMENT, "end event");
  EXPECT_FAIL(cujit_event_elapsed(a, b, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "ms is NULL");
  EXPECT_OK(cujit_event_record(b, NULL));
  EXPECT_OK(cujit_event_synchronize(b));
  EXPECT_OK(cujit_event_elapsed(a, b, &ms));
  cr_expect_geq(ms, 0.0f);
  cujit_event_free(a);
  cujit_event_free(b);
}

Test(runtime_device, allocation_beyond_free_memory, .init = open_device, .fini = close_engine) {
#ifdef __SANITIZE_ADDRESS__ /* the CPU device's buffers come from AddressSanitizer's allocator */
  const char *asan = getenv("ASAN_OPTIONS");
  if (on_cpu() && !(asan && strstr(asan, "allocator_may_return_null=1")))
    cr_skip_test("AddressSanitizer ends the process on an allocation it cannot make: run with "
                 "ASAN_OPTIONS=allocator_may_return_null=1 (scripts/sanitize.sh does)");
#endif
  size_t free_bytes = 0, total = 0;
  EXPECT_OK(cujit_device_memory(dev, &free_bytes, &total));
  size_t before = cujit_device_allocated(dev);
  cujit_buffer *b = poison_ptr();
  /* The CPU device's message speaks of the host's available memory, a GPU's of its free memory. */
  EXPECT_FAIL(cujit_buffer_alloc(engine, total + free_bytes, CUJIT_DTYPE_NONE, &b),
              CUJIT_ERROR_DEVICE_MEMORY, on_cpu() ? "available of" : "free of");
  cr_expect(strstr(cujit_errmsg(engine), "asked for") != NULL, "%s", cujit_errmsg(engine));
  cr_expect_null(b);
  cr_expect_eq(cujit_device_allocated(dev), before);
  /* (Free memory is not compared: other test processes share the GPU and change it.) */
  cr_expect_eq(cujit_device_status(dev), CUJIT_OK, "running out of memory is not a fault");
  cujit_buffer *ok = alloc(4096, CUJIT_DTYPE_NONE); /* and the device still works */
  cujit_buffer_free(ok);
}

Test(runtime_device, memory_accounting, .init = open_device, .fini = close_engine) {
  size_t before = cujit_device_allocated(dev);
  size_t sizes[] = {4, 1000, (size_t)1 << 20, 12345};
  cujit_buffer *b[4];
  size_t sum = 0;
  for (int i = 0; i < 4; i++) {
    b[i] = alloc(sizes[i], CUJIT_DTYPE_NONE);
    sum += sizes[i];
    cr_expect_eq(cujit_device_allocated(dev), before + sum);
  }
  cujit_buffer_free(b[1]);
  cr_expect_eq(cujit_device_allocated(dev), before + sum - sizes[1]);
  cujit_buffer_free(b[0]);
  cujit_buffer_free(b[2]);
  cujit_buffer_free(b[3]);
  cr_expect_eq(cujit_device_allocated(dev), before);
}

Test(runtime_device, reset_loses_old_objects, .init = open_device, .fini = close_engine) {
  enum { N = 512 };
  unsigned char data[N], got[N];
  cujit_buffer *old = random_buffer(N, 8, data);
  cujit_stream *old_stream;
  cujit_event *old_event;
  cujit_host_buffer *old_host;
  EXPECT_OK(cujit_stream_create(engine, &old_stream));
  EXPECT_OK(cujit_event_create(engine, &old_event));
  EXPECT_OK(cujit_host_alloc(engine, 64, &old_host));
  cr_expect_geq(cujit_device_allocated(dev), (size_t)N);

  EXPECT_OK(cujit_device_reset(dev));
  EXPECT_OK(cujit_device_status(dev));
  cr_expect_eq(cujit_device_allocated(dev), 0);
  cr_expect_eq(cujit_buffer_devptr(old), 0);
  cr_expect_eq(cujit_buffer_size(old), (size_t)N, "a lost buffer still says what it was");
  cr_expect_null(cujit_host_ptr(old_host));
  EXPECT_FAIL(cujit_memcpy_dtoh(got, old, 0, N, NULL), CUJIT_ERROR_BUFFER_LOST, "lost");
  EXPECT_FAIL(cujit_memcpy_htod(old, 0, data, N, NULL), CUJIT_ERROR_BUFFER_LOST, "reset");
  EXPECT_FAIL(cujit_memset(old, 0, 0, N, NULL), CUJIT_ERROR_BUFFER_LOST, "lost");
  EXPECT_FAIL(cujit_stream_synchronize(old_stream), CUJIT_ERROR_BUFFER_LOST, "the stream");
  EXPECT_FAIL(cujit_stream_query(old_stream), CUJIT_ERROR_BUFFER_LOST, "lost");
  EXPECT_FAIL(cujit_event_record(old_event, NULL), CUJIT_ERROR_BUFFER_LOST, "the event");
  /* every call that takes an old object says which it was and why it is lost, and makes nothing */
  static const char lost[] = " before the device was reset, so it is lost; make a new one";
  cujit_buffer *view = (cujit_buffer *)&view;
  EXPECT_FAIL(cujit_buffer_view(old, 0, 8, CUJIT_DTYPE_NONE, &view), CUJIT_ERROR_BUFFER_LOST,
              "cujit_buffer_view: the buffer was made on ");
  EXPECT_FAIL(cujit_buffer_view(old, 0, 8, CUJIT_DTYPE_NONE, &view), CUJIT_ERROR_BUFFER_LOST, lost);
  cr_expect_null(view, "no view of a lost buffer");
  cujit_buffer *mapped = (cujit_buffer *)&mapped;
  EXPECT_FAIL(cujit_host_map(old_host, CUJIT_U8, &mapped), CUJIT_ERROR_BUFFER_LOST,
              "cujit_host_map: the host buffer was made on ");
  EXPECT_FAIL(cujit_host_map(old_host, CUJIT_U8, &mapped), CUJIT_ERROR_BUFFER_LOST, lost);
  cr_expect_null(mapped, "no mapping of a lost host buffer");
  void *tensor = &tensor;
  EXPECT_FAIL(cujit_buffer_to_dlpack(old, 1, (const int64_t[]){N}, &tensor),
              CUJIT_ERROR_BUFFER_LOST, "cujit_buffer_to_dlpack: the buffer was made on ");
  EXPECT_FAIL(cujit_buffer_prefetch(old, 0, NULL), CUJIT_ERROR_BUFFER_LOST,
              "cujit_buffer_prefetch: the buffer was made on ");

  /* New objects work, old ones free without touching the driver's stale handles. */
  unsigned char fresh[N];
  cujit_buffer *b = random_buffer(N, 9, fresh);
  cr_expect_eq(cujit_device_allocated(dev), (size_t)N);
  cujit_buffer *c = alloc(N, CUJIT_DTYPE_NONE);
  EXPECT_FAIL(cujit_memcpy_dtod(c, 0, old, 0, N, NULL), CUJIT_ERROR_BUFFER_LOST, "source");
  EXPECT_OK(cujit_memcpy_dtod(c, 0, b, 0, N, NULL));
  expect_device_holds(c, fresh, N);
  cujit_stream *stream;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  EXPECT_OK(cujit_memset(c, 0, 0x3C, N, stream));
  EXPECT_OK(cujit_stream_synchronize(stream));
  memset(fresh, 0x3C, N);
  expect_device_holds(c, fresh, N);
  cujit_buffer_free(old);
  cujit_stream_free(old_stream);
  cujit_event_free(old_event);
  cujit_host_free(old_host);
  cr_expect_eq(cujit_device_allocated(dev), (size_t)2 * N, "freeing lost buffers counts nothing");
  EXPECT_OK(cujit_device_synchronize(dev));
  cujit_stream_free(stream);
  cujit_buffer_free(b);
  cujit_buffer_free(c);
  cr_expect_eq(cujit_device_allocated(dev), 0);
}

/* Enough queued work that the first poll of a wait cannot find it finished. */
static void queue_lots_of_work(cujit_buffer *big, cujit_stream *stream) {
  for (int i = 0; i < 32; i++)
    EXPECT_OK(cujit_memset(big, 0, (unsigned char)i, cujit_buffer_size(big), stream));
}

Test(runtime_device, waits_are_interruptible, .init = open_device, .fini = close_engine) {
  cujit_stream *stream;
  cujit_event *event;
  EXPECT_OK(cujit_stream_create(engine, &stream));
  EXPECT_OK(cujit_event_create(engine, &event));
  /* 32 fills of 1 GiB keep a GPU busy for milliseconds; of 64 MiB, the host for as long. */
  cujit_buffer *big = alloc(on_cpu() ? (size_t)64 << 20 : (size_t)1 << 30, CUJIT_DTYPE_NONE);

  queue_lots_of_work(big, stream);
  cujit_interrupt(engine);
  EXPECT_FAIL(cujit_stream_synchronize(stream), CUJIT_ERROR_INTERRUPTED, "interrupted");
  EXPECT_OK(cujit_stream_synchronize(stream)); /* the flag cleared; the work finishes */

  queue_lots_of_work(big, stream);
  EXPECT_OK(cujit_event_record(event, stream));
  cujit_interrupt(engine);
  EXPECT_FAIL(cujit_event_synchronize(event), CUJIT_ERROR_INTERRUPTED, "interrupted");
  EXPECT_OK(cujit_event_synchronize(event));

  queue_lots_of_work(big, stream);
  cujit_interrupt(engine);
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_INTERRUPTED,
              on_cpu() ? "the CPU device" : "device 0");
  EXPECT_OK(cujit_device_synchronize(dev));
  EXPECT_OK(cujit_stream_query(stream));
  cujit_buffer_free(big);
  cujit_event_free(event);
  cujit_stream_free(stream);
}

/* What holds a closed engine's leftover buffer until it is given back: on a GPU, the device's
** memory pool (the driver's default pool, one per device), watched from a second engine and
** trimmed first, so a leaked buffer stays reserved; on the CPU device, the host's heap. */
static size_t held_bytes(cujit_engine *watch, cujit_device *seen, int trim) {
  if (!seen) return cj_test_heap_bytes();
  size_t bytes = 0;
  if (trim) cr_assert_eq(cujit_device_trim(seen), CUJIT_OK, "%s", cujit_errmsg(watch));
  cr_assert_eq(cujit_device_pool_reserved(seen, &bytes), CUJIT_OK, "%s", cujit_errmsg(watch));
  return bytes;
}

Test(runtime_device, close_frees_leftovers) {
  open_engine();
  CJ_NEED_DEVICE(engine);
  cujit_buffer *b;
  cujit_stream *s;
  cujit_event *e;
  cujit_host_buffer *h;
  cujit_device *used, *seen = NULL;
  cujit_engine *watch = NULL;
  EXPECT_OK(cujit_current_device(engine, &used));
  if (cujit_device_ordinal(used) != CUJIT_DEVICE_CPU) {
    cr_assert_eq(cujit_open(&watch), CUJIT_OK);
    cr_assert_eq(cujit_device_get(watch, cujit_device_ordinal(used), &seen), CUJIT_OK, "%s",
                 cujit_errmsg(watch));
  }
  const size_t big = (size_t)256 << 20;
  size_t before = held_bytes(watch, seen, 1);
  EXPECT_OK(cujit_buffer_alloc(engine, big, CUJIT_F64, &b));
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_event_create(engine, &e));
  EXPECT_OK(cujit_host_alloc(engine, 1 << 16, &h));
  EXPECT_OK(cujit_memset(b, 0, 1, big, s));
  EXPECT_OK(cujit_event_record(e, s));
  size_t during = held_bytes(watch, seen, 0);
  close_engine(); /* everything above is freed here */
  size_t after = held_bytes(watch, seen, 1);
  if (during == 0) { /* CUJIT_POOL=off: no pool to watch */
    cr_assert_eq(after, 0);
  } else {
    cr_assert_geq(during, before + big, "the %s holds the buffer: %zu, then %zu",
                  seen ? "pool" : "heap", before, during);
    cr_assert_lt(after + big, during + 1,
                 "the leftover buffer was given back: %zu before close, %zu after", during, after);
  }
  cujit_close(watch);
}
