/*
** test_cpu_backend.c -- the CPU device's operations (cj_backend_cpu) driven directly, on a device
** set up by hand, with kernels compiled by the system C++ compiler (cxx.c): memory and copies,
** stream order, events, interrupted waits, launch failures and crashes as device faults, reset,
** loading, and compile errors placed at the user's line. Needs g++ only: runs on CI.
*/
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "run/device.h"
#include "compile/compile.h"
#include "program/program.h"
#include "compile/cxx.h"
#include "compile/scan.h"
#include "expect.h"
#include "scratch.h"

static const char kernels_source[] =
    "extern \"C\" __global__ void affine(const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void wait_flag(int *flag) {\n"
    "  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void last_block_waits(int *flag, int *done) {\n"
    "  if (blockIdx.x + 1 < gridDim.x)\n"
    "    for (volatile int spin = 0; spin < 1000000; spin = spin + 1) {\n"
    "    }\n"
    "  else\n"
    "    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {\n"
    "    }\n"
    "  __atomic_store_n(&done[blockIdx.x], 1, __ATOMIC_RELEASE);\n"
    "}\n"
    "extern \"C\" __global__ void trap_at(int which) {\n"
    "  if ((int)(blockIdx.x * blockDim.x + threadIdx.x) == which) __trap();\n"
    "}\n"
    "extern \"C\" __global__ void wild(int *p) {\n"
    "  p[threadIdx.x] = 1;\n"
    "}\n";

static cujit_engine *engine;
static cujit_device *dev;
/* A compiled program as the backend takes it (a cj_image), with the parts this test owns. */
typedef struct test_program {
  cj_signature *kernels;
  size_t nkernels;
  void *binary;
  size_t binary_len;
  cj_image image;
} test_program;
static test_program program;
static void *module;
static const cj_backend *ops = &cj_backend_cpu;

static void open_device(void) {
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  EXPECT_OK(cj_cpu_device(engine, &dev));
}

static void compile_into(const char *source, const char *name, test_program *p) {
  memset(p, 0, sizeof *p);
  char err[1024];
  cr_assert_eq(cj_scan_kernels(source, &p->kernels, &p->nkernels, err, sizeof err), CUJIT_OK, "%s",
               err);
  cj_cache_entry e;
  EXPECT_OK(cj_cxx_compile(engine, source, name, NULL, p->kernels, NULL, p->nkernels, &e));
  p->binary = e.cubin, p->binary_len = e.cubin_len;
  p->image = (cj_image){.name = name,
                        .source = source,
                        .arch = "cpu",
                        .binary = p->binary,
                        .binary_len = p->binary_len,
                        .kernels = p->kernels,
                        .nkernels = p->nkernels};
  free(e.ptx);
  free(e.log);
}

static void free_program(test_program *p) {
  free(p->binary);
  for (size_t i = 0; i < p->nkernels; i++) cj_signature_free(&p->kernels[i]);
  free(p->kernels);
  memset(p, 0, sizeof *p);
}

static void open_all(void) {
  open_device();
  compile_into(kernels_source, "cpu_test.cu", &program);
  EXPECT_OK(ops->load(dev, &program.image, &module));
}

static void close_all(void) {
  if (module) ops->unload(dev, module);
  module = NULL;
  ops->release(dev);
  free(dev);
  free_program(&program);
  cujit_close(engine);
  engine = NULL;
}

static void *function(const char *name) {
  void *fn = NULL;
  EXPECT_OK(ops->get_function(dev, module, name, &fn));
  return fn;
}

static cujit_status launch(const char *name, unsigned blocks, unsigned threads, void *stream,
                           void **args) {
  unsigned grid[3] = {blocks, 1, 1}, block[3] = {threads, 1, 1};
  return ops->launch(dev, function(name), grid, block, 0, stream, args);
}

static uint64_t addr(const void *p) {
  return (uint64_t)(uintptr_t)p;
}

/* --- memory ------------------------------------------------------------------------------------
 */

Test(cpu_backend, memory_copies_and_fills, .init = open_device, .fini = close_all) {
  enum { N = 1000 };
  uint64_t a = 0, b = 0;
  EXPECT_OK(ops->alloc(dev, N, &a));
  EXPECT_OK(ops->alloc(dev, N, &b));
  cr_expect_eq(a % 256, 0, "device memory is aligned to 256 bytes");
  cr_expect_eq(b % 256, 0);
  unsigned char host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 7 + 3);
  EXPECT_OK(ops->copy(dev, CJ_COPY_HTOD, a, addr(host), N, NULL));
  EXPECT_OK(ops->copy(dev, CJ_COPY_DTOD, b, a, N, NULL));
  memset(back, 0, N);
  EXPECT_OK(ops->copy(dev, CJ_COPY_DTOH, addr(back), b, N, NULL));
  cr_expect_arr_eq(back, host, N);
  void *stream = NULL;
  EXPECT_OK(ops->stream_create(dev, &stream));
  EXPECT_OK(ops->memset8(dev, b + 100, 0xab, 50, stream));
  EXPECT_OK(ops->copy(dev, CJ_COPY_DTOH, addr(back), b, N, stream));
  EXPECT_OK(ops->stream_synchronize(dev, stream));
  for (int i = 0; i < N; i++)
    cr_expect_eq(back[i], i >= 100 && i < 150 ? 0xab : host[i], "byte %d", i);
  size_t free_bytes = 0, total = 0;
  EXPECT_OK(ops->mem_info(dev, &free_bytes, &total));
  cr_expect_gt(total, 0);
  cr_expect_leq(free_bytes, total);
  cr_expect_eq(dev->info.total_memory, total);
  ops->stream_destroy(dev, stream);
  ops->free(dev, a);
  ops->free(dev, b);
}

Test(cpu_backend, staged_upload_lets_the_caller_reuse_its_memory, .init = open_all,
     .fini = close_all) {
  int flag = 0;
  uint64_t d = 0;
  EXPECT_OK(ops->alloc(dev, sizeof(int), &d));
  void *stream = NULL;
  EXPECT_OK(ops->stream_create(dev, &stream));
  uint64_t flag_addr = addr(&flag);
  void *args[] = {&flag_addr};
  EXPECT_OK(launch("wait_flag", 1, 1, stream, args)); /* holds the queue */
  int value = 42;
  EXPECT_OK(ops->copy(dev, CJ_COPY_HTOD, d, addr(&value), sizeof value, stream));
  value = -1; /* after the call: the upload must keep 42 */
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  EXPECT_OK(ops->stream_synchronize(dev, stream));
  cr_expect_eq(*(int *)(uintptr_t)d, 42);
  ops->stream_destroy(dev, stream);
  ops->free(dev, d);
}

/* --- launches and order ------------------------------------------------------------------------
 */

Test(cpu_backend, launch_then_copy_on_one_stream, .init = open_all, .fini = close_all) {
  enum { N = 100000 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  uint64_t dx = 0, dy = 0;
  EXPECT_OK(ops->alloc(dev, N * sizeof *x, &dx));
  EXPECT_OK(ops->alloc(dev, N * sizeof *y, &dy));
  for (int i = 0; i < N; i++) x[i] = (float)(i % 1000) * 0.5f, y[i] = -7.0f;
  EXPECT_OK(ops->copy(dev, CJ_COPY_HTOD, dx, addr(x), N * sizeof *x, NULL));
  EXPECT_OK(ops->copy(dev, CJ_COPY_HTOD, dy, addr(y), N * sizeof *y, NULL));
  void *stream = NULL;
  EXPECT_OK(ops->stream_create(dev, &stream));
  int n = N;
  void *args[] = {&dx, &dy, &n};
  EXPECT_OK(launch("affine", (N + 255) / 256, 256, stream, args));
  EXPECT_OK(ops->copy(dev, CJ_COPY_DTOH, addr(y), dy, N * sizeof *y, stream));
  EXPECT_OK(ops->stream_synchronize(dev, stream));
  EXPECT_OK(ops->stream_query(dev, stream));
  for (int i = 0; i < N; i++)
    if (y[i] != 2.0f * x[i] + 1.0f) cr_assert_fail("y[%d] = %g, want %g", i, y[i], 2 * x[i] + 1);
  ops->stream_destroy(dev, stream);
  ops->free(dev, dx);
  ops->free(dev, dy);
  free(x);
  free(y);
}

/* Two events and a stream of the device. */
static void events_and_stream(void **start, void **end, void **stream) {
  *start = *end = *stream = NULL;
  EXPECT_OK(ops->event_create(dev, start));
  EXPECT_OK(ops->event_create(dev, end));
  EXPECT_OK(ops->stream_create(dev, stream));
}

Test(cpu_backend, work_is_asynchronous_and_events_follow_it, .init = open_all, .fini = close_all) {
  int flag = 0;
  uint64_t flag_addr = addr(&flag);
  void *args[] = {&flag_addr};
  void *start, *end, *stream;
  events_and_stream(&start, &end, &stream);
  EXPECT_OK(ops->event_record(dev, start, stream));
  EXPECT_OK(launch("wait_flag", 1, 1, stream, args));
  EXPECT_OK(ops->event_record(dev, end, stream));
  /* The kernel cannot finish before the flag is set: everything behind it is pending. */
  cr_expect_eq(ops->stream_query(dev, stream), CUJIT_ERROR_NOT_READY);
  cr_expect_eq(ops->event_query(dev, end), CUJIT_ERROR_NOT_READY);
  cr_expect_eq(ops->stream_query(dev, NULL), CUJIT_ERROR_NOT_READY,
               "the default stream is ordered after the other streams' work");
  float ms = -1;
  EXPECT_FAIL(ops->event_elapsed(dev, start, end, &ms), CUJIT_ERROR_NOT_READY, "synchronize");
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  EXPECT_OK(ops->event_synchronize(dev, end));
  EXPECT_OK(ops->event_query(dev, end));
  EXPECT_OK(ops->event_query(dev, start));
  EXPECT_OK(ops->event_elapsed(dev, start, end, &ms));
  cr_expect_geq(ms, 0.0f);
  EXPECT_OK(ops->stream_wait_event(dev, stream, end));
  EXPECT_OK(ops->synchronize(dev));
  ops->event_destroy(dev, start);
  ops->event_destroy(dev, end);
  ops->stream_destroy(dev, stream);
}

static double host_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* An event's time is when the queue reached it, in milliseconds: the time between two events lies
** within what the host saw of them. The start is seen done before the host waits 100 ms and lets
** the kernel go, so the events are at least that far apart; both happened between the host's
** first and last reading, so they are at most that far apart. */
Test(cpu_backend, elapsed_time_lies_within_what_the_host_saw, .init = open_all, .fini = close_all) {
  int flag = 0;
  uint64_t flag_addr = addr(&flag);
  void *args[] = {&flag_addr};
  void *start, *end, *stream;
  events_and_stream(&start, &end, &stream);
  double before = host_ms();
  EXPECT_OK(ops->event_record(dev, start, stream));
  EXPECT_OK(launch("wait_flag", 1, 1, stream, args));
  EXPECT_OK(ops->event_record(dev, end, stream));
  EXPECT_OK(ops->event_synchronize(dev, start));
  double start_seen = host_ms();
  struct timespec nap = {0, 100 * 1000 * 1000};
  nanosleep(&nap, NULL);
  double released = host_ms();
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  EXPECT_OK(ops->event_synchronize(dev, end));
  double after = host_ms();
  float ms = -1;
  EXPECT_OK(ops->event_elapsed(dev, start, end, &ms));
  cr_expect_geq(ms, released - start_seen - 0.01, "%g ms between the events, at least %g", ms,
                released - start_seen);
  cr_expect_leq(ms, after - before + 0.01, "%g ms between the events, at most %g", ms,
                after - before);
  float back = 1;
  EXPECT_OK(ops->event_elapsed(dev, end, start, &back));
  cr_expect_eq(back, -ms, "the other way round: %g, want %g", back, -ms);
  ops->event_destroy(dev, start);
  ops->event_destroy(dev, end);
  ops->stream_destroy(dev, stream);
}

Test(cpu_backend, event_destroyed_while_pending, .init = open_all, .fini = close_all) {
  int flag = 0;
  uint64_t flag_addr = addr(&flag);
  void *args[] = {&flag_addr};
  void *event = NULL;
  EXPECT_OK(ops->event_create(dev, &event));
  EXPECT_OK(launch("wait_flag", 1, 1, NULL, args));
  EXPECT_OK(ops->event_record(dev, event, NULL));
  ops->event_destroy(dev, event); /* the queued record still holds it */
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  EXPECT_OK(ops->synchronize(dev));
}

static void open_all_with_four_workers(void) {
  setenv("CUJIT_CPU_THREADS", "4", 1);
  open_all();
  unsetenv("CUJIT_CPU_THREADS");
}

/* A launch of fewer blocks than workers is done when its last block is: a worker left out of it
** must not count as one that finished (the launch would end while a block still runs). */
Test(cpu_backend, a_launch_of_fewer_blocks_than_workers_waits_for_each,
     .init = open_all_with_four_workers, .fini = close_all) {
  void *stream = NULL;
  EXPECT_OK(ops->stream_create(dev, &stream));
  /* Which worker takes which block varies: ten launches give a wrong early end ten chances. */
  for (int round = 0; round < 10; round++) {
    int flag = 0, done[2] = {0, 0};
    uint64_t flag_addr = addr(&flag), done_addr = addr(done);
    void *args[] = {&flag_addr, &done_addr};
    EXPECT_OK(launch("last_block_waits", 2, 1, stream, args));
    while (!__atomic_load_n(&done[0], __ATOMIC_ACQUIRE)) {
    }
    /* Time for a wrongly finished launch to show; the right answer does not depend on it. */
    nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    cr_expect_eq(ops->stream_query(dev, stream), CUJIT_ERROR_NOT_READY,
                 "round %d: the last block still waits", round);
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    EXPECT_OK(ops->synchronize(dev));
    cr_expect_eq(done[1], 1, "round %d", round);
  }
  ops->stream_destroy(dev, stream);
}

Test(cpu_backend, interrupted_wait, .init = open_all, .fini = close_all) {
  int flag = 0;
  uint64_t flag_addr = addr(&flag);
  void *args[] = {&flag_addr};
  EXPECT_OK(launch("wait_flag", 1, 1, NULL, args));
  cujit_interrupt(engine);
  EXPECT_FAIL(ops->synchronize(dev), CUJIT_ERROR_INTERRUPTED, "interrupted");
  cr_expect_eq(ops->stream_query(dev, NULL), CUJIT_ERROR_NOT_READY, "the kernel goes on");
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  EXPECT_OK(ops->synchronize(dev));
}

static void *release_flag_later(void *flag) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  __atomic_store_n((int *)flag, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* A free is queued behind the work queued before (which may still use the memory), as a GPU's
** stream-ordered pool does: it returns while that work runs. */
Test(cpu_backend, free_is_queued_behind_the_work_queued_before, .init = open_all,
     .fini = close_all) {
  int flag = 0;
  uint64_t flag_addr = addr(&flag), d = 0, h = 0;
  EXPECT_OK(ops->alloc(dev, 4096, &d));
  EXPECT_OK(ops->alloc(dev, 4096, &h));
  void *args[] = {&flag_addr};
  EXPECT_OK(launch("wait_flag", 1, 1, NULL, args)); /* may still use d, as far as free knows */
  ops->free(dev, d);
  cr_expect_eq(ops->stream_query(dev, NULL), CUJIT_ERROR_NOT_READY, "free waited for the kernel");
  ops->free(dev, d); /* a second free of the same address is recognised, and ignored */
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, release_flag_later, &flag), 0);
  EXPECT_OK(ops->synchronize(dev));
  pthread_join(t, NULL);
  ops->free(dev, h); /* the queue idle: at once */
}

/* --- failures ----------------------------------------------------------------------------------
 */

Test(cpu_backend, trap_faults_the_device_until_reset, .init = open_all, .fini = close_all) {
  int which = 700;
  void *args[] = {&which};
  EXPECT_OK(launch("trap_at", 4, 256, NULL, args));
  EXPECT_FAIL(ops->synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, "kernel 'trap_at'");
  cr_expect(strstr(cujit_errmsg(engine), "block (2,0,0) thread (188,0,0)"), "%s",
            cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "__trap"), "%s", cujit_errmsg(engine));
  uint64_t a = 0;
  EXPECT_FAIL(ops->alloc(dev, 64, &a), CUJIT_ERROR_DEVICE_FAULT, "until reset");
  EXPECT_FAIL(ops->enter(dev), CUJIT_ERROR_DEVICE_FAULT, "trap_at");
  cr_expect_eq(ops->enter_quiet(dev), 0);
  /* The pool's calls too: the fault, not an empty pool. */
  size_t reserved = 7;
  EXPECT_FAIL(cujit_device_pool_reserved(dev, &reserved), CUJIT_ERROR_DEVICE_FAULT, "trap_at");
  cr_expect_eq(reserved, 0);
  EXPECT_FAIL(cujit_device_trim(dev), CUJIT_ERROR_DEVICE_FAULT, "trap_at");
  unsigned generation = dev->generation;
  EXPECT_OK(cujit_device_reset(dev));
  cr_expect_neq(dev->generation, generation, "a reset makes older objects lost");
  EXPECT_OK(ops->enter(dev));
  EXPECT_OK(cujit_device_pool_reserved(dev, &reserved));
  EXPECT_OK(cujit_device_trim(dev));
  EXPECT_OK(ops->alloc(dev, 64, &a));
  which = -1; /* no thread traps now */
  EXPECT_OK(launch("trap_at", 4, 256, NULL, args));
  EXPECT_OK(ops->synchronize(dev));
}

Test(cpu_backend, crash_is_a_fault_naming_the_kernel, .init = open_all, .fini = close_all) {
  uint64_t wild = 16;
  void *args[] = {&wild};
  EXPECT_OK(launch("wild", 8, 32, NULL, args));
  EXPECT_FAIL(ops->synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, "kernel 'wild' crashed");
  cr_expect(strstr(cujit_errmsg(engine), "SIGSEGV"), "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "in block (") &&
                strstr(cujit_errmsg(engine), "thread (0,"),
            "the crash names the block and thread: %s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "CUJIT_CPU_CHECK=1"), "%s", cujit_errmsg(engine));
  EXPECT_OK(cujit_device_reset(dev));
  int target[32] = {0};
  uint64_t good = addr(target);
  args[0] = &good;
  EXPECT_OK(launch("wild", 1, 32, NULL, args));
  EXPECT_OK(ops->synchronize(dev));
  for (int i = 0; i < 32; i++) cr_expect_eq(target[i], 1, "element %d", i);
}

Test(cpu_backend, reset_frees_memory_and_later_frees_are_harmless, .init = open_device,
     .fini = close_all) {
  uint64_t a = 0;
  void *h = NULL;
  EXPECT_OK(ops->alloc(dev, 4096, &a));
  EXPECT_OK(ops->host_alloc(dev, 4096, &h));
  memset(h, 1, 4096);
  EXPECT_OK(ops->reset(dev));
  ops->free(dev, a); /* already freed by the reset: ignored */
  ops->host_free(dev, h);
  EXPECT_OK(ops->alloc(dev, 4096, &a));
  ops->free(dev, a);
}

/* --- programs ----------------------------------------------------------------------------------
 */

Test(cpu_backend, load_and_functions, .init = open_all, .fini = close_all) {
  void *fn = NULL;
  EXPECT_FAIL(ops->get_function(dev, module, "missing", &fn), CUJIT_ERROR_NOT_FOUND, "'missing'");
  EXPECT_OK(ops->get_function(dev, module, "affine", &fn));
  cujit_kernel_attributes attrs = CUJIT_KERNEL_ATTRIBUTES_INIT;
  EXPECT_OK(ops->attributes(dev, fn, &attrs));
  cr_expect_eq(attrs.max_threads_per_block, 1024);
  int block = 0, grid = 0;
  EXPECT_OK(ops->suggest_block(dev, fn, &block, &grid));
  cr_expect_eq(block, 256);
  EXPECT_OK(ops->allow_shared(dev, fn, 100 * 1024));
  EXPECT_FAIL(ops->allow_shared(dev, fn, 300 * 1024), CUJIT_ERROR_LAUNCH_CONFIG, "at most");
  cj_image bad = program.image;
  char junk[64] = "not a shared object";
  bad.binary = junk, bad.binary_len = sizeof junk;
  void *other = NULL;
  EXPECT_FAIL(ops->load(dev, &bad, &other), CUJIT_ERROR_DRIVER, "no shared object");
  bad.arch = "sm_90";
  EXPECT_FAIL(ops->load(dev, &bad, &other), CUJIT_ERROR_INVALID_ARGUMENT, "compiled for sm_90");
  /* A second load of the same image is independent of the first. */
  EXPECT_OK(ops->load(dev, &program.image, &other));
  ops->unload(dev, other);
  cr_expect(strstr(dev->info.name, "CPU ("), "%s", dev->info.name);
  cr_expect_eq(dev->info.max_threads_per_block, 1024);
  cr_expect_eq(dev->info.warp_size, 32);
}

/* g++ works in a scratch directory under TMPDIR (the source, the headers, the object): all of it
** goes once the compile is done. */
Test(cpu_backend, a_compile_leaves_nothing_in_tmpdir, .init = open_device, .fini = close_all) {
  const char *scratch = cj_scratch_make("cxx");
  char *tmpdir = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", scratch, 1);
  compile_into(kernels_source, "clean.cu", &program);
  if (tmpdir)
    setenv("TMPDIR", tmpdir, 1);
  else
    unsetenv("TMPDIR");
  free(tmpdir);
  DIR *d = opendir(scratch);
  cr_assert_not_null(d);
  for (struct dirent *entry; (entry = readdir(d));)
    cr_expect(strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0,
              "left in TMPDIR: %s", entry->d_name);
  closedir(d);
}

/* A program built for another version of the CPU device's ABI (a cache entry written by another
** cujit) is refused, saying which version it has: its entry points may take other arguments. */
Test(cpu_backend, another_abi_version_is_refused, .init = open_device, .fini = close_all) {
  static const char older[] = "extern \"C\" __global__ void one(int *x) { x[0] = 1; }\n"
                              "#undef CJ_CPU_ABI_VERSION\n"
                              "#define CJ_CPU_ABI_VERSION 1\n";
  compile_into(older, "older.cu", &program);
  void *m = NULL;
  EXPECT_FAIL(ops->load(dev, &program.image, &m), CUJIT_ERROR_DRIVER,
              "another version of the CPU device's ABI (it says 1, this library needs");
  cr_expect_null(m);
}

static const char other_source[] = "extern \"C\" __global__ void negate(int *x, int n) {\n"
                                   "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "  if (i < n) x[i] = -x[i];\n"
                                   "}\n";

/* Each load is its own shared object, though every one is named /proc/self/fd/N. */
Test(cpu_backend, programs_loaded_together_and_in_turn_stay_apart, .init = open_all,
     .fini = close_all) {
  test_program second;
  compile_into(other_source, "other.cu", &second);
  void *m2 = NULL, *fn = NULL;
  EXPECT_OK(ops->load(dev, &second.image, &m2));
  EXPECT_OK(ops->get_function(dev, m2, "negate", &fn));
  EXPECT_FAIL(ops->get_function(dev, m2, "affine", &fn), CUJIT_ERROR_NOT_FOUND, "affine");
  EXPECT_OK(ops->get_function(dev, module, "affine", &fn));
  ops->unload(dev, module);
  module = NULL;
  ops->unload(dev, m2);
  for (int round = 0; round < 3; round++) { /* fd numbers come back: names must not */
    EXPECT_OK(ops->load(dev, round % 2 ? &program.image : &second.image, &m2));
    EXPECT_OK(ops->get_function(dev, m2, round % 2 ? "affine" : "negate", &fn));
    ops->unload(dev, m2);
  }
  int x[3] = {1, -2, 3}, n = 3;
  uint64_t dx = addr(x);
  void *args[] = {&dx, &n};
  EXPECT_OK(ops->load(dev, &second.image, &m2));
  EXPECT_OK(ops->get_function(dev, m2, "negate", &fn));
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  EXPECT_OK(ops->launch(dev, fn, grid, block, 0, NULL, args));
  EXPECT_OK(ops->synchronize(dev));
  cr_expect(x[0] == -1 && x[1] == 2 && x[2] == -3, "%d %d %d", x[0], x[1], x[2]);
  ops->unload(dev, m2);
  free_program(&second);
}

/* --- the compiler ------------------------------------------------------------------------------
 */

Test(cpu_backend, compile_error_at_the_users_line, .init = open_device, .fini = close_all) {
  cj_signature sig;
  char err[512];
  cr_assert_eq(cj_signature_parse("broken(float *y, int n)", &sig, err, sizeof err), CUJIT_OK);
  char *source = cj_source_for_kernel(
      &sig, "int i = threadIdx.x;\nif (i < n) y[i] = undefined_thing;", NULL, NULL);
  cr_assert_not_null(source);
  cj_cache_entry e;
  EXPECT_FAIL(cj_cxx_compile(engine, source, "broken", NULL, &sig, NULL, 1, &e),
              CUJIT_ERROR_COMPILE, "kernel 'broken' failed to compile: line 2 of its body: error:");
  cr_expect(strstr(cujit_errmsg(engine), "undefined_thing"), "%s", cujit_errmsg(engine));
  cr_expect_null(e.cubin);
  free(source);
  cj_signature_free(&sig);
}

Test(cpu_backend, identity_and_missing_compiler, .init = open_device, .fini = close_all) {
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  EXPECT_OK(cujit_device_info_get(dev, &info));
  cr_expect_eq(info.pci_bus_id, -1, "the CPU device has no PCI bus");
  const char *plain = NULL, *checked = NULL;
  EXPECT_OK(cj_cxx_identity(engine, 0, &plain));
  EXPECT_OK(cj_cxx_identity(engine, 1, &checked));
  cr_expect(strstr(plain, "-O2") && !strstr(plain, "sanitize"), "%s", plain);
  cr_expect(strstr(checked, "-fsanitize=address,undefined"), "%s", checked);
  setenv("CUJIT_CXX", "/nonexistent/g++", 1);
  EXPECT_FAIL(cj_cxx_identity(engine, 0, &plain), CUJIT_ERROR_COMPILE, "was not found");
  cr_expect(strstr(cujit_errmsg(engine), "CUJIT_CXX"), "%s", cujit_errmsg(engine));
  unsetenv("CUJIT_CXX");
}

/* A program `name` in the scratch directory, `text` its script: its path (valid for a while). */
static const char *program_file(const char *name, const char *text) {
  cj_scratch_write(name, text);
  const char *path = cj_scratch_path(name);
  cr_assert_eq(chmod(path, 0755), 0, "%s", path);
  return path;
}

/* CUJIT_CXX set to `cxx`: asking for the compiler's identity is refused with `status` and the
** message `want`, exactly. */
static void expect_identity_refused(const char *cxx, cujit_status status, const char *want) {
  const char *identity = NULL;
  setenv("CUJIT_CXX", cxx, 1);
  EXPECT_REFUSED(cj_cxx_identity(engine, 0, &identity), status, want);
}

/* Each way the C++ compiler named by CUJIT_CXX can fail, told apart: it cannot be run (not
** executable), `--version` fails, the variable is blank, or it answers `--version` but fails the
** compile without a word. Nothing is left cached: the real compiler works again after. */
Test(cpu_backend, each_way_the_compiler_can_fail, .init = open_device, .fini = close_all) {
  const char *dir = cj_scratch_make("cxx");
  char plain_file[600], want[1400];
  snprintf(plain_file, sizeof plain_file, "%s/not-executable", dir);
  cj_scratch_write("not-executable", "g++ \"$@\"\n"); /* mode 0644: not a program */
  snprintf(want, sizeof want,
           "the CPU device could not run the C++ compiler '%s': Permission denied; set CUJIT_CXX "
           "to a C++17 compiler that can be run",
           plain_file);
  expect_identity_refused(plain_file, CUJIT_ERROR_COMPILE, want);
  const char *refusing =
      program_file("refusing-cxx", "#!/bin/sh\necho \"unknown option $1\" >&2\nexit 2\n");
  snprintf(want, sizeof want,
           "'%s --version' failed (exit status 2); set CUJIT_CXX to a C++17 compiler. It said:\n"
           "unknown option --version\n",
           refusing);
  expect_identity_refused(refusing, CUJIT_ERROR_COMPILE, want);
  expect_identity_refused(
      " \t ", CUJIT_ERROR_INVALID_ARGUMENT,
      "CUJIT_CXX is blank: set it to a C++17 compiler such as g++, or unset it");
  /* g++ for everything but a compile of a translation unit, which fails with nothing said */
  const char *silent = program_file("silent-g++", "#!/bin/sh\n"
                                                  "case \"$*\" in *.cpp*) exit 3 ;; esac\n"
                                                  "exec g++ \"$@\"\n");
  setenv("CUJIT_CXX", silent, 1);
  cj_signature *sig = NULL;
  size_t n = 0;
  char err[256];
  const char *src = "extern \"C\" __global__ void quiet(float *x) { x[0] = 1.0f; }\n";
  cr_assert_eq(cj_scan_kernels(src, &sig, &n, err, sizeof err), CUJIT_OK, "%s", err);
  cj_cache_entry e = {0};
  snprintf(want, sizeof want,
           "'quiet.cu' failed to compile for the CPU device: %s exited with status 3\n\n"
           "(the compiler wrote nothing)",
           silent);
  EXPECT_REFUSED(cj_cxx_compile(engine, src, "quiet.cu", NULL, sig, NULL, n, &e),
                 CUJIT_ERROR_COMPILE, want);
  cr_expect_null(e.cubin, "no object from a failed compile");
  unsetenv("CUJIT_CXX");
  EXPECT_OK(cj_cxx_compile(engine, src, "quiet.cu", NULL, sig, NULL, n, &e));
  cr_expect_not_null(e.cubin, "g++ itself compiles it");
  cj_cache_entry_free(&e);
  for (size_t i = 0; i < n; i++) cj_signature_free(&sig[i]);
  free(sig);
  cj_scratch_remove();
}

Test(cpu_backend, checked_build_needs_the_sanitizer_runtime_first, .init = open_device,
     .fini = close_all) {
  setenv("CUJIT_CPU_CHECK", "1", 1);
  compile_into(kernels_source, "checked.cu", &program);
  unsetenv("CUJIT_CPU_CHECK");
  cr_expect(memmem(program.binary, program.binary_len, "libasan.so", 10) != NULL,
            "a checked build links AddressSanitizer");
  if (!dlsym(RTLD_DEFAULT, "__asan_init")) {
    void *m = NULL;
    EXPECT_FAIL(ops->load(dev, &program.image, &m), CUJIT_ERROR_UNSUPPORTED, "LD_PRELOAD");
    cr_expect_null(m);
    return;
  }
  /* Run with LD_PRELOAD=$(g++ -print-file-name=libasan.so): the checked kernel runs. */
  EXPECT_OK(ops->load(dev, &program.image, &module));
  float x[300], y[300];
  for (int i = 0; i < 300; i++) x[i] = (float)i;
  uint64_t dx = addr(x), dy = addr(y);
  int n = 300;
  void *args[] = {&dx, &dy, &n};
  EXPECT_OK(launch("affine", 2, 256, NULL, args));
  EXPECT_OK(ops->synchronize(dev));
  for (int i = 0; i < 300; i++) cr_expect_eq(y[i], 2.0f * x[i] + 1.0f, "y[%d]", i);
}
