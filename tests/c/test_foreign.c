/*
** test_foreign.c -- issue 24's foreign memory through the public C API, on a device (a GPU, or the
** CPU device without one): a wrapped allocation used by launches, copies, fills, views,
** reductions, elementwise kernels and graphs; its release called exactly once in every way the
** last reference can go (free, close, a view outliving it, a reset, deleters of DLPack exports
** racing the free on other threads), only after the work queued on it is done, and never for a
** refused wrap; every refusal of cujit_buffer_wrap with its message. DLPack is test_dlpack.c's;
** the CUDA pointer checks against the stand-in driver are test_stub_foreign.c's.
*/
#include <pthread.h>

#include "foreign.h"

TestSuite(foreign, .init = cj_fixture_open, .fini = cj_fixture_close);

/* --- cujit_buffer_wrap ------------------------------------------------------------------------ */

Test(foreign, a_wrapped_buffer_is_used_by_launches_copies_fills_views_and_reductions) {
  need_device();
  enum { N = 64 };
  release_log log = {0, 0};
  uint64_t mem = foreign_alloc(N * sizeof(float));
  cujit_buffer *b = wrap(mem, N * sizeof(float), CUJIT_F32, &log);
  cr_assert_eq(cujit_buffer_devptr(b), mem, "the buffer is the memory given, not a copy");
  cr_assert_eq(cujit_buffer_size(b), N * sizeof(float));
  cr_assert_eq(cujit_buffer_dtype(b), CUJIT_F32);
  float host[N], got[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  upload(b, host, sizeof host);
  cujit_kernel *k;
  OK(cujit_kernel_define(engine, "twice(float *y, int n)",
                         "int i = threadIdx.x; if (i < n) y[i] *= 2;", NULL, NULL, &k));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = N;
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(N)};
  OK(cujit_launch(k, &cfg, args, 2));
  cujit_buffer *v = NULL, *copy = cj_test_upload(NULL, N * sizeof(float), CUJIT_F32);
  OK(cujit_buffer_view(b, 8 * sizeof(float), 8 * sizeof(float), CUJIT_F32, &v));
  OK(cujit_memset(v, 0, 0, 4 * sizeof(float), NULL)); /* elements 8..11 */
  OK(cujit_memcpy_dtod(copy, 0, b, 0, N * sizeof(float), NULL));
  cj_test_download(got, copy, sizeof got);
  double sum = 0;
  for (int i = 0; i < N; i++) {
    float want = i >= 8 && i < 12 ? 0.0f : 2.0f * (float)i;
    cr_assert_eq(got[i], want, "element %d: %g, want %g", i, got[i], want);
    sum += want;
  }
  cujit_scalar s = CUJIT_SCALAR_INIT;
  OK(cujit_reduce(b, CUJIT_REDUCE_SUM, N, &s, NULL));
  cr_assert_eq(s.v.f, sum, "the reduction read the wrapped memory: %g, want %g", s.v.f, sum);
  cr_assert_eq(log.calls, 0, "release before the buffer was freed");
  cujit_buffer_free(v); /* a view frees nothing */
  cr_assert_eq(log.calls, 0, "freeing a view released the memory");
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 1, "release calls after free: %d", log.calls);
  cr_assert_eq(log.address, mem);
  cujit_buffer_free(copy);
  cr_assert_eq(log.calls, 1);
}

Test(foreign, a_wrapped_buffer_is_captured_into_graphs_and_taken_by_elementwise_kernels) {
  need_device();
  enum { N = 256 };
  release_log log = {0, 0};
  cujit_buffer *b = wrap(foreign_alloc(N * sizeof(float)), N * sizeof(float), CUJIT_F32, &log);
  float host[N], got[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  upload(b, host, sizeof host);
  cujit_kernel *inc;
  OK(cujit_elementwise_define(engine, "T x -> T y", "y = x + 1", "inc", NULL, &inc));
  cujit_stream *s;
  OK(cujit_stream_create(engine, &s));
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_BUF(b)};
  OK(cujit_elementwise_launch(inc, N, s, args, 2)); /* loads it, outside the capture */
  OK(cujit_stream_synchronize(s));
  OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  OK(cujit_elementwise_launch(inc, N, s, args, 2));
  cujit_graph *g;
  OK(cujit_capture_end(s, &g));
  OK(cujit_graph_replay(g, s, 3));
  OK(cujit_stream_synchronize(s));
  OK(cujit_memcpy_dtoh(got, b, 0, sizeof got, NULL));
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], (float)i + 4, "element %d: %g", i, got[i]);
  cujit_graph_free(g);
  cujit_stream_free(s);
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 1);
}

/* Deleters on other threads race the buffer's free on this one: the memory goes once. */
static void *run_deleter(void *tensor) {
  DLManagedTensorVersioned *m = tensor;
  m->deleter(m);
  return NULL;
}

Test(foreign, deleters_racing_the_free_on_other_threads_release_exactly_once) {
  need_device();
  enum { ROUNDS = 100, EXPORTS = 4 };
  for (int round = 0; round < ROUNDS; round++) {
    release_log log = {0, 0};
    cujit_buffer *b = wrap(foreign_alloc(64), 64, CUJIT_F32, &log);
    void *tensors[EXPORTS];
    pthread_t threads[EXPORTS];
    for (int i = 0; i < EXPORTS; i++) OK(cujit_buffer_to_dlpack(b, 0, NULL, &tensors[i]));
    for (int i = 0; i < EXPORTS; i++)
      cr_assert_eq(pthread_create(&threads[i], NULL, run_deleter, tensors[i]), 0);
    cujit_buffer_free(b);
    for (int i = 0; i < EXPORTS; i++) pthread_join(threads[i], NULL);
    cr_assert_eq(log.calls, 1, "round %d: %d releases", round, log.calls);
  }
}

Test(foreign, wrap_refuses_what_is_not_a_buffer_saying_what_to_do) {
  need_device();
  uint64_t mem = foreign_alloc(256);
  release_log log = {0, 0};
  cujit_buffer *b = (cujit_buffer *)&log;
  REFUSED(cujit_buffer_wrap(engine, 0, 64, CUJIT_F32, release_and_free, &log, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "the address is 0");
  cr_assert_null(b, "a refused wrap leaves *out NULL");
  REFUSED(cujit_buffer_wrap(engine, mem, 0, CUJIT_F32, release_and_free, &log, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "0 bytes");
  REFUSED(cujit_buffer_wrap(engine, mem, 10, CUJIT_F32, release_and_free, &log, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "10 bytes is not a whole number of f32 elements");
  REFUSED(cujit_buffer_wrap(engine, mem + 2, 16, CUJIT_F32, release_and_free, &log, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "is not aligned to f32 elements (4 bytes)");
  REFUSED(cujit_buffer_wrap(engine, mem, 16, (cujit_dtype)99, release_and_free, &log, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "99 is not a cujit_dtype");
  REFUSED(cujit_buffer_wrap(engine, mem, 16, CUJIT_F32, release_and_free, &log, NULL),
          CUJIT_ERROR_INVALID_ARGUMENT, "cujit_buffer_wrap");
  cr_assert_eq(cujit_buffer_wrap_on(NULL, mem, 16, CUJIT_F32, NULL, NULL, &b),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_eq(log.calls, 0, "a failed wrap never calls release: the memory stays the caller's");
  /* Bytes as any dtype (NONE) and odd addresses are fine for bytes. */
  OK(cujit_buffer_wrap(engine, mem + 3, 5, CUJIT_DTYPE_NONE, NULL, NULL, &b));
  cujit_buffer_free(b);
  foreign_free(mem);
}

Test(foreign, wrap_on_the_cpu_device_takes_host_memory_whatever_the_current_device) {
  need_device();
  cujit_device *cpu;
  OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  int *host = malloc(16 * sizeof(int));
  for (int i = 0; i < 16; i++) host[i] = i;
  cujit_buffer *b = NULL;
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)host, 16 * sizeof(int), CUJIT_I32, NULL, NULL,
                          &b));
  cr_assert_eq(cujit_buffer_device(b), cpu);
  cr_assert_eq(cujit_buffer_devptr(b), (uint64_t)(uintptr_t)host);
  OK(cujit_memset(b, 0, 0, 4 * sizeof(int), NULL));
  cr_assert_eq(host[0], 0);
  cr_assert_eq(host[3], 0);
  cr_assert_eq(host[4], 4, "the fill wrote the memory given, in place");
  cujit_buffer_free(b); /* release NULL: nothing called */
  free(host);
}

Test(foreign, release_runs_once_at_close_for_a_buffer_left_alive) {
  need_device();
  release_log log = {0, 0};
  uint64_t mem = foreign_alloc(128);
  wrap(mem, 128, CUJIT_U8, &log);
  cujit_close(engine);
  engine = NULL;
  cr_assert_eq(log.calls, 1, "release calls at close: %d", log.calls);
  cr_assert_eq(log.address, mem);
  OK(cujit_open(&engine)); /* for the fixture's close */
}

Test(foreign, a_view_outliving_its_wrapped_buffer_is_lost_and_releases_nothing_more) {
  need_device();
  release_log log = {0, 0};
  cujit_buffer *b = wrap(foreign_alloc(64), 64, CUJIT_F32, &log), *v = NULL;
  OK(cujit_buffer_view(b, 16, 16, CUJIT_F32, &v));
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 1, "the buffer's free releases, views or not");
  float x[4];
  REFUSED(cujit_memcpy_dtoh(x, v, 0, sizeof x, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
          "a view of memory that has been freed");
  cujit_buffer_free(v);
  cr_assert_eq(log.calls, 1, "freeing the view released again");
}

/* On the CPU device, whatever the machine: a reset and a kernel still running there are the CPU
** device's own, and host memory survives both. */
Test(foreign, a_reset_loses_a_wrapped_buffer_which_still_releases_once_at_free) {
  need_device();
  cujit_device *cpu = cpu_device();
  release_log before = {0, 0}, after = {0, 0};
  float *old_mem = malloc(64), *new_mem = malloc(64), x[16];
  cujit_buffer *old_buf, *new_buf;
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)old_mem, 64, CUJIT_F32, release_and_free_host,
                          &before, &old_buf));
  OK(cujit_device_reset(cpu));
  REFUSED(cujit_memcpy_dtoh(x, old_buf, 0, sizeof x, NULL), CUJIT_ERROR_BUFFER_LOST, "reset");
  cr_assert_eq(cujit_buffer_devptr(old_buf), 0, "a lost buffer has no address");
  cr_assert_eq(before.calls, 0, "the reset released the memory of a buffer still alive");
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)new_mem, 64, CUJIT_F32, release_and_free_host,
                          &after, &new_buf));
  OK(cujit_memset(new_buf, 0, 0, 64, NULL)); /* made after the reset: usable */
  OK(cujit_memcpy_dtoh(x, new_buf, 0, sizeof x, NULL));
  cujit_buffer_free(old_buf);
  cr_assert_eq(before.calls, 1, "a lost buffer's free releases once: %d", before.calls);
  cr_assert_eq(before.address, (uint64_t)(uintptr_t)old_mem);
  cujit_buffer_free(new_buf);
  cr_assert_eq(after.calls, 1);
}

/* What the memory held when release ran: the work queued before the free must be done by then. */
static float seen_at_release[64];
static void release_after_reading(void *user, uint64_t address) {
  memcpy(seen_at_release, (const void *)(uintptr_t)address, sizeof seen_at_release);
  release_and_free_host(user, address);
}

Test(foreign, release_runs_after_the_work_queued_on_the_memory) {
  need_device();
  cujit_device *cpu = cpu_device();
  OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  release_log log = {0, 0};
  float *mem = calloc(64, sizeof(float));
  cujit_buffer *b;
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)mem, 64 * sizeof(float), CUJIT_F32,
                          release_after_reading, &log, &b));
  cujit_kernel *k; /* slow on purpose: the free comes while it still runs */
  OK(cujit_kernel_define(engine, "slow_fill(float *y, int n)",
                         "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "volatile float s = 0;\n"
                         "for (int r = 0; r < 2000000; r++) s = s + 1;\n"
                         "if (i < n) y[i] = s + i;",
                         NULL, NULL, &k));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 2, cfg.block[0] = 32;
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(64)};
  OK(cujit_launch(k, &cfg, args, 2)); /* returns at once */
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 1);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(seen_at_release[i], 2000000.0f + (float)i,
                 "element %d was %g when release ran: the launch was not done", i,
                 seen_at_release[i]);
}
