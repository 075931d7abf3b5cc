/*
** test_embedding.c -- cujit inside an application that uses CUDA itself (issue 24): the caller's
** current context is the same after every call, a context given by the application is the one
** cujit works in (and is never destroyed), the application's streams and events wrapped, and
** cujit's native handles used by the application's own driver calls. The driver is called
** directly through cuGetProcAddress, as an application would.
** Run twice by ctest: as c.test_embedding (the real driver: on a GPU, or the CPU device's
** refusals without one) and as c.test_embedding.stub_driver against the stand-in driver
** (scripts/bench/stub_driver.c), where the same cases run without a GPU; the stand-in tells in
** which context cujit did its work (cujit_stub_work_context).
*/
#include <criterion/criterion.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "gpu.h"
#include "scratch.h"

static cujit_engine *engine;
static cujit_device *gpu;
static void *libcuda;

#define EXPECT_OK(call)                                                                            \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    cr_assert_eq(st_, CUJIT_OK, "%s failed: %s", #call, cujit_errmsg(engine));                     \
  } while (0)

/* The call fails with `status` and a message containing `part`. */
#define EXPECT_REFUSED(call, status, part)                                                         \
  do {                                                                                             \
    cujit_status st_ = (call);                                                                     \
    cr_expect_eq(st_, (status), "%s: %d (%s)", #call, st_, cujit_errmsg(engine));                  \
    cr_expect(strstr(cujit_errmsg(engine), (part)) != NULL, "%s: '%s' lacks '%s'", #call,          \
              cujit_errmsg(engine), (part));                                                       \
  } while (0)

/* --- the driver, as the application sees it ----------------------------------------------------
 */

static void *driver(const char *name, int version) {
  if (!libcuda) libcuda = dlopen("libcuda.so.1", RTLD_NOW);
  cr_assert_not_null(libcuda, "libcuda.so.1: %s", dlerror());
  CUresult (*get)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  *(void **)&get = dlsym(libcuda, "cuGetProcAddress_v2");
  cr_assert_not_null(get);
  void *fn = NULL;
  cr_assert_eq(get(name, &fn, version, 0, NULL), CUDA_SUCCESS, "%s", name);
  cr_assert_not_null(fn, "%s", name);
  return fn;
}

static int on_stub(void) {
  driver("cuInit", 2000);
  return dlsym(libcuda, "cujit_stub_live_allocations") != NULL;
}

static CUcontext current(void) {
  CUresult (*get)(CUcontext *) = (CUresult(*)(CUcontext *))driver("cuCtxGetCurrent", 4000);
  CUcontext c = NULL;
  cr_assert_eq(get(&c), CUDA_SUCCESS);
  return c;
}

static void set_current(CUcontext c) {
  CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))driver("cuCtxSetCurrent", 4000);
  cr_assert_eq(set(c), CUDA_SUCCESS);
}

/* A context of the application's own on `device` (made current, as cuCtxCreate does). */
static CUcontext app_context(int device) {
  ((CUresult(*)(unsigned))driver("cuInit", 2000))(0);
  PFN_cuCtxCreate_v12050 create = (PFN_cuCtxCreate_v12050)driver("cuCtxCreate", 12050);
  CUcontext c = NULL;
  cr_assert_eq(create(&c, NULL, 0, device), CUDA_SUCCESS);
  return c;
}

static void destroy_context(CUcontext c) {
  ((PFN_cuCtxDestroy_v4000)driver("cuCtxDestroy", 4000))(c);
}

/* The context cujit does its work in: that of a stream it makes now (cuStreamGetCtx), and on the
** stand-in also that of its last allocation or launch. (Memory from the driver's pool belongs to
** no context, so a pointer's own context tells nothing on a GPU.) */
static CUcontext work_context(void) {
  cujit_stream *s = NULL;
  cr_assert_eq(cujit_stream_create(engine, &s), CUJIT_OK, "%s", cujit_errmsg(engine));
  void *native = NULL;
  cr_assert_eq(cujit_stream_handle(s, &native), CUJIT_OK);
  CUcontext c = NULL;
  cr_assert_eq(((PFN_cuStreamGetCtx_v9020)driver("cuStreamGetCtx", 9020))((CUstream)native, &c),
               CUDA_SUCCESS);
  cujit_stream_free(s);
  return c;
}

/* On the stand-in: the context current at cujit's last allocation, launch or stream made. */
static CUcontext stub_work_context(void) {
  void *(*work)(void) = (void *(*)(void))dlsym(libcuda, "cujit_stub_work_context");
  cr_assert_not_null(work);
  return (CUcontext)work();
}

static void open_gpu(void) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  CJ_NEED_GPU(engine);
  EXPECT_OK(cujit_device_get(engine, 0, &gpu));
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  cj_scratch_remove();
}

#define FILL_SIG "fill(int *x, int v, int n)"
#define FILL_BODY "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v + i;"

static cujit_kernel *fill_kernel(void) {
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, FILL_SIG, FILL_BODY, NULL, NULL, &k));
  return k;
}

/* --- the caller's current context ---------------------------------------------------------------
 */

/* Every call below leaves the application's context current; cujit's work is done in the primary
** context all the same. */
Test(embedding, the_callers_context_is_current_again_after_every_call, .fini = close_engine) {
  open_gpu();
  CUcontext mine = app_context(0);
  void *primary = NULL;
#define KEPT(call)                                                                                 \
  do {                                                                                             \
    EXPECT_OK(call);                                                                               \
    cr_assert_eq(current(), mine, "%s left another context current", #call);                       \
  } while (0)
  KEPT(cujit_device_context(gpu, &primary));
  cr_assert_neq(primary, (void *)mine);
  cujit_buffer *b = NULL;
  KEPT(cujit_buffer_alloc(engine, 64 * sizeof(int), CUJIT_I32, &b));
  if (on_stub())
    cr_expect_eq(stub_work_context(), primary, "the allocation was not in the primary");
  int host[64] = {0};
  KEPT(cujit_memcpy_htod(b, 0, host, sizeof host, NULL));
  KEPT(cujit_memset(b, 0, 0, sizeof host, NULL));
  cujit_stream *s = NULL;
  KEPT(cujit_stream_create(engine, &s));
  cujit_kernel *k = NULL;
  KEPT(cujit_kernel_define(engine, FILL_SIG, FILL_BODY, NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(7), CUJIT_ARG_I(64)};
  KEPT(cujit_launch_n(k, 64, s, args, 3));
  if (on_stub()) cr_expect_eq(stub_work_context(), primary, "the launch was not in the primary");
  cr_expect_eq(work_context(), primary, "cujit's streams are not in the primary context");
  cr_assert_eq(current(), mine, "work_context's calls left another context current");
  cujit_event *e = NULL;
  KEPT(cujit_event_create(engine, &e));
  KEPT(cujit_event_record(e, s));
  KEPT(cujit_event_synchronize(e));
  KEPT(cujit_stream_synchronize(s));
  KEPT(cujit_device_synchronize(gpu));
  KEPT(cujit_memcpy_dtoh(host, b, 0, sizeof host, NULL));
  if (!on_stub()) cr_expect_eq(host[63], 7 + 63, "the kernel ran: %d", host[63]);
  size_t free_bytes = 0;
  KEPT(cujit_device_memory(gpu, &free_bytes, NULL));
  int block = 0;
  KEPT(cujit_kernel_suggest_block(k, &block, NULL));
  cujit_scalar sum = CUJIT_SCALAR_INIT;
  KEPT(cujit_reduce(b, CUJIT_REDUCE_SUM, 64, &sum, NULL));
  KEPT(cujit_device_trim(gpu));
  cujit_event_free(e);
  cr_assert_eq(current(), mine, "cujit_event_free");
  cujit_stream_free(s);
  cr_assert_eq(current(), mine, "cujit_stream_free");
  cujit_buffer_free(b);
  cr_assert_eq(current(), mine, "cujit_buffer_free");
  cujit_kernel_free(k);
  cr_assert_eq(current(), mine, "cujit_kernel_free");
  cujit_close(engine);
  engine = NULL;
  cr_assert_eq(current(), mine, "cujit_close");
#undef KEPT
  destroy_context(mine);
}

/* With none current, cujit's stays, as the runtime API leaves the primary context current. */
Test(embedding, with_no_context_current_the_primary_one_stays, .fini = close_engine) {
  open_gpu();
  set_current(NULL);
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 256, CUJIT_DTYPE_NONE, &b));
  void *primary = NULL;
  EXPECT_OK(cujit_device_context(gpu, &primary));
  cr_expect_eq(current(), primary);
  cujit_buffer_free(b);
}

/* --- a context the application gives ------------------------------------------------------------
 */

Test(embedding, a_context_given_is_where_cujit_works_and_it_outlives_the_engine,
     .fini = close_engine) {
  /* On the stand-in the primary context cannot be had at all: nothing may need it. */
  setenv("CUJIT_STUB_FAIL", "cuDevicePrimaryCtxRetain", 1);
  open_gpu();
  CUcontext mine = app_context(0);
  EXPECT_OK(cujit_device_use_context(gpu, mine));
  EXPECT_OK(cujit_device_use_context(gpu, mine)); /* the same one again: nothing changes */
  set_current(NULL);
  void *used = NULL;
  EXPECT_OK(cujit_device_context(gpu, &used));
  cr_expect_eq(used, (void *)mine);
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 64 * sizeof(int), CUJIT_I32, &b));
  if (on_stub()) cr_expect_eq(stub_work_context(), mine, "the allocation was not in the context");
  cujit_kernel *k = fill_kernel();
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(3), CUJIT_ARG_I(64)};
  EXPECT_OK(cujit_launch_n(k, 64, NULL, args, 3));
  if (on_stub()) cr_expect_eq(stub_work_context(), mine, "the launch ran in another context");
  cr_expect_eq(work_context(), mine, "cujit's streams are not in the context given");
  int host[64];
  EXPECT_OK(cujit_memcpy_dtoh(host, b, 0, sizeof host, NULL));
  if (!on_stub()) cr_expect_eq(host[10], 13);
  EXPECT_REFUSED(cujit_device_reset(gpu), CUJIT_ERROR_UNSUPPORTED,
                 "never destroys what it did not create");
  EXPECT_REFUSED(cujit_device_use_context(gpu, (void *)1), CUJIT_ERROR_UNSUPPORTED,
                 "call cujit_device_use_context right after cujit_open");
  cujit_close(engine);
  engine = NULL;
  /* still alive: the application can use it */
  set_current(mine);
  CUdeviceptr p = 0;
  PFN_cuMemAlloc_v3020 alloc = (PFN_cuMemAlloc_v3020)driver("cuMemAlloc", 3020);
  cr_expect_eq(alloc(&p, 256), CUDA_SUCCESS, "the context given was destroyed by cujit_close");
  ((PFN_cuMemFree_v3020)driver("cuMemFree", 3020))(p);
  destroy_context(mine);
  unsetenv("CUJIT_STUB_FAIL");
}

Test(embedding, a_context_refused_says_why, .fini = close_engine) {
  open_gpu();
  EXPECT_REFUSED(cujit_device_use_context(gpu, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "context is NULL");
  /* no engine to record a message in: the status says it */
  cr_expect_eq(cujit_device_use_context(NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_REFUSED(cujit_device_context(gpu, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "context is NULL");
  if (on_stub()) { /* the stand-in can make a context of a GPU it does not have */
    CUcontext other = app_context(1);
    EXPECT_REFUSED(cujit_device_use_context(gpu, other), CUJIT_ERROR_INVALID_ARGUMENT,
                   "belongs to another GPU (CUdevice 1), not to device 0");
    cr_expect_eq(current(), other, "the refusal left the caller's context current");
  }
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 256, CUJIT_DTYPE_NONE, &b));
  CUcontext mine = app_context(0);
  EXPECT_REFUSED(cujit_device_use_context(gpu, mine), CUJIT_ERROR_UNSUPPORTED,
                 "already runs on its primary context");
  cr_expect_eq(current(), mine);
  cujit_buffer_free(b);
  destroy_context(mine);
}

/* --- streams and events -------------------------------------------------------------------------
 */

/* A native stream made in `ctx` (current for the call, then the caller's again). */
static CUstream native_stream(CUcontext ctx) {
  CUcontext was = current();
  set_current(ctx);
  CUstream s = NULL;
  cr_assert_eq(
      ((PFN_cuStreamCreate_v2000)driver("cuStreamCreate", 2000))(&s, CU_STREAM_NON_BLOCKING),
      CUDA_SUCCESS);
  set_current(was);
  return s;
}

static int stream_alive(CUstream s) {
  CUcontext c = NULL;
  return ((PFN_cuStreamGetCtx_v9020)driver("cuStreamGetCtx", 9020))(s, &c) == CUDA_SUCCESS;
}

Test(embedding, the_applications_stream_runs_cujits_work_and_is_never_destroyed,
     .fini = close_engine) {
  open_gpu();
  void *primary = NULL;
  EXPECT_OK(cujit_device_context(gpu, &primary));
  CUstream native = native_stream(primary);
  cujit_stream *s = NULL;
  EXPECT_OK(cujit_stream_wrap(engine, native, &s));
  void *back = NULL;
  EXPECT_OK(cujit_stream_handle(s, &back));
  cr_expect_eq(back, (void *)native);
  cujit_stream *twice = NULL;
  EXPECT_REFUSED(cujit_stream_wrap_on(gpu, native, &twice), CUJIT_ERROR_INVALID_ARGUMENT,
                 "already a cujit stream");
  cr_expect_null(twice);
  /* cujit's kernel, then the application's own copy on the same stream: ordered */
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 4096 * sizeof(int), CUJIT_I32, &b));
  cujit_kernel *k = fill_kernel();
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(100), CUJIT_ARG_I(4096)};
  EXPECT_OK(cujit_launch_n(k, 4096, s, args, 3));
  static int host[4096];
  set_current(primary);
  PFN_cuMemcpyDtoHAsync_v3020 dtoh = (PFN_cuMemcpyDtoHAsync_v3020)driver("cuMemcpyDtoHAsync", 3020);
  cr_assert_eq(dtoh(host, (CUdeviceptr)cujit_buffer_devptr(b), sizeof host, native), CUDA_SUCCESS);
  /* an event of the application's, wrapped, recorded by cujit on the stream */
  CUevent native_event = NULL;
  cr_assert_eq(((PFN_cuEventCreate_v2000)driver("cuEventCreate", 2000))(&native_event, 0),
               CUDA_SUCCESS);
  cujit_event *e = NULL;
  EXPECT_OK(cujit_event_wrap(engine, native_event, &e));
  EXPECT_OK(cujit_event_handle(e, &back));
  cr_expect_eq(back, (void *)native_event);
  EXPECT_OK(cujit_event_record(e, s));
  EXPECT_OK(cujit_event_synchronize(e));
  if (!on_stub()) cr_expect_eq(host[4095], 100 + 4095, "the application's copy ran first");
  /* one the application made without timing: the driver refuses to time it, and cujit says why */
  CUevent untimed_native = NULL;
  cr_assert_eq(((PFN_cuEventCreate_v2000)driver("cuEventCreate", 2000))(&untimed_native,
                                                                        CU_EVENT_DISABLE_TIMING),
               CUDA_SUCCESS);
  cujit_event *untimed = NULL;
  EXPECT_OK(cujit_event_wrap(engine, untimed_native, &untimed));
  EXPECT_OK(cujit_event_record(untimed, s));
  EXPECT_OK(cujit_event_synchronize(untimed));
  float ms = -1;
  EXPECT_REFUSED(cujit_event_elapsed(e, untimed, &ms), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_elapsed: the driver cannot time these events (invalid resource "
                 "handle): a wrapped event made without timing (CU_EVENT_DISABLE_TIMING, "
                 "cudaEventDisableTiming) or never recorded has no time; time with events from "
                 "cujit_event_create, or record the wrapped ones");
  EXPECT_OK(cujit_event_record(e, s)); /* the application's timed event is timed, twice recorded */
  EXPECT_OK(cujit_event_synchronize(e));
  EXPECT_OK(cujit_event_elapsed(e, e, &ms));
  cr_expect_eq(ms, 0, "an event timed against itself: %g ms", ms);
  cujit_event_free(untimed);
  ((PFN_cuEventDestroy_v4000)driver("cuEventDestroy", 4000))(untimed_native);
  cujit_event_free(e);
  cr_expect_eq(((PFN_cuEventQuery_v2000)driver("cuEventQuery", 2000))(native_event), CUDA_SUCCESS,
               "the event was destroyed by cujit_event_free");
  cujit_stream_free(s);
  cr_expect(stream_alive(native), "cujit_stream_free destroyed the application's stream");
  /* freed, it may be wrapped again */
  EXPECT_OK(cujit_stream_wrap(engine, native, &s));
  cujit_stream_free(s);
  cujit_buffer_free(b);
  cujit_kernel_free(k);
  ((PFN_cuEventDestroy_v4000)driver("cuEventDestroy", 4000))(native_event);
  ((PFN_cuStreamDestroy_v4000)driver("cuStreamDestroy", 4000))(native);
}

/* Several of cujit's streams and of the application's (wrapped) at once, freed in an order
** unlike their making: each of cujit's own is destroyed at its free (the stand-in knows its
** handles no more), and not one of the application's is, whichever the device's list of streams
** held beside it. */
Test(embedding, streams_of_both_kinds_freed_in_any_order, .fini = close_engine) {
  open_gpu();
  void *primary = NULL;
  EXPECT_OK(cujit_device_context(gpu, &primary));
  enum { EACH = 4 };
  CUstream natives[EACH];
  cujit_stream *wrapped[EACH], *own[EACH];
  void *own_native[EACH];
  for (int i = 0; i < EACH; i++) { /* made in turn: the list holds them interleaved */
    natives[i] = native_stream(primary);
    EXPECT_OK(cujit_stream_wrap(engine, natives[i], &wrapped[i]));
    EXPECT_OK(cujit_stream_create(engine, &own[i]));
    EXPECT_OK(cujit_stream_handle(own[i], &own_native[i]));
  }
  static const int order[EACH] = {2, 0, 3, 1};
  for (int j = 0; j < EACH; j++) {
    int i = order[j];
    cujit_stream_free(own[i]);
    if (on_stub())
      cr_expect(!stream_alive((CUstream)own_native[i]), "cujit's stream %d lives on its free", i);
    for (int a = 0; a < EACH; a++)
      cr_expect(stream_alive(natives[a]), "the application's stream %d died at the free of %d", a,
                i);
  }
  for (int j = 0; j < EACH; j++) {
    int i = order[EACH - 1 - j];
    cujit_stream_free(wrapped[i]);
    for (int a = 0; a < EACH; a++)
      cr_expect(stream_alive(natives[a]), "the application's stream %d died at unwrapping %d", a,
                i);
  }
  EXPECT_OK(cujit_device_synchronize(gpu)); /* a list with no dead stream in it */
  for (int i = 0; i < EACH; i++)
    cr_expect_eq(((PFN_cuStreamDestroy_v4000)driver("cuStreamDestroy", 4000))(natives[i]),
                 CUDA_SUCCESS, "the application destroys its stream %d itself", i);
}

/* Graph capture on the application's stream, and the graph replayed there. */
Test(embedding, the_applications_stream_captures_and_replays_graphs, .fini = close_engine) {
  open_gpu();
  if (on_stub()) cr_skip_test("the stand-in driver runs no kernels: this case runs on a GPU");
  void *primary = NULL;
  EXPECT_OK(cujit_device_context(gpu, &primary));
  CUstream native = native_stream(primary);
  cujit_stream *s = NULL;
  EXPECT_OK(cujit_stream_wrap(engine, native, &s));
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 1024 * sizeof(int), CUJIT_I32, &b));
  cujit_kernel *k = fill_kernel();
  cujit_arg args[] = {CUJIT_ARG_BUF(b), CUJIT_ARG_I(40), CUJIT_ARG_I(1024)};
  EXPECT_OK(cujit_launch_n(k, 1024, s, args, 3)); /* loaded before the capture */
  EXPECT_OK(cujit_stream_synchronize(s));
  EXPECT_OK(cujit_memset(b, 0, 0, 1024 * sizeof(int), NULL));
  EXPECT_OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  EXPECT_OK(cujit_launch_n(k, 1024, s, args, 3));
  cujit_graph *g = NULL;
  EXPECT_OK(cujit_capture_end(s, &g));
  int host[1024];
  EXPECT_OK(cujit_memcpy_dtoh(host, b, 0, sizeof host, NULL));
  cr_expect_eq(host[1023], 0, "the captured launch ran during the capture");
  EXPECT_OK(cujit_graph_launch(g, s));
  EXPECT_OK(cujit_stream_synchronize(s));
  EXPECT_OK(cujit_memcpy_dtoh(host, b, 0, sizeof host, NULL));
  cr_expect_eq(host[1023], 40 + 1023, "the replay on the application's stream: %d", host[1023]);
  cujit_graph_free(g);
  cujit_stream_free(s);
  cr_expect(stream_alive(native));
  cujit_buffer_free(b);
  cujit_kernel_free(k);
  ((PFN_cuStreamDestroy_v4000)driver("cuStreamDestroy", 4000))(native);
}

Test(embedding, a_stream_or_event_refused_says_why, .fini = close_engine) {
  open_gpu();
  cujit_stream *s = (cujit_stream *)&s;
  EXPECT_REFUSED(cujit_stream_wrap(engine, NULL, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "the legacy default stream is cujit's NULL stream");
  cr_expect_eq(cujit_stream_wrap_on(NULL, (void *)1, &s), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_REFUSED(cujit_stream_wrap(engine, (void *)1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "out is NULL");
  cujit_event *e = NULL;
  EXPECT_REFUSED(cujit_event_wrap(engine, NULL, &e), CUJIT_ERROR_INVALID_ARGUMENT,
                 "pass an event made by cuEventCreate");
  cr_expect_eq(cujit_stream_handle(NULL, (void **)&s), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_stream *made = NULL;
  EXPECT_OK(cujit_stream_create(engine, &made));
  EXPECT_REFUSED(cujit_stream_handle(made, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "native is NULL");
  cujit_stream_free(made);
  /* a stream of another context */
  CUcontext mine = app_context(0);
  CUstream theirs = native_stream(mine);
  s = NULL;
  EXPECT_REFUSED(cujit_stream_wrap(engine, theirs, &s), CUJIT_ERROR_INVALID_ARGUMENT,
                 "belongs to another context than the one cujit uses on device 0");
  cr_expect_null(s);
  cr_expect_eq(current(), mine);
  ((PFN_cuStreamDestroy_v4000)driver("cuStreamDestroy", 4000))(theirs);
  destroy_context(mine);
}

/* --- native handles -----------------------------------------------------------------------------
 */

Test(embedding, a_kernels_function_and_module_serve_the_applications_own_launch,
     .fini = close_engine) {
  open_gpu();
  cujit_kernel *k = fill_kernel();
  void *fn = NULL, *module = NULL;
  EXPECT_OK(cujit_kernel_function(k, &fn));
  cr_assert_not_null(fn);
  cujit_program *p = NULL;
  EXPECT_OK(cujit_program_compile(
      engine, "extern \"C\" __global__ void twice(int *x) { x[threadIdx.x] *= 2; }", "twice.cu",
      NULL, &p));
  EXPECT_OK(cujit_program_module(p, &module));
  cr_assert_not_null(module);
  cujit_buffer *b = NULL;
  EXPECT_OK(cujit_buffer_alloc(engine, 32 * sizeof(int), CUJIT_I32, &b));
  void *primary = NULL;
  EXPECT_OK(cujit_device_context(gpu, &primary));
  set_current(primary);
  CUdeviceptr x = (CUdeviceptr)cujit_buffer_devptr(b);
  int v = 5, n = 32;
  void *params[] = {&x, &v, &n};
  PFN_cuLaunchKernel_v4000 launch = (PFN_cuLaunchKernel_v4000)driver("cuLaunchKernel", 4000);
  cr_assert_eq(launch((CUfunction)fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
  CUfunction twice = NULL;
  PFN_cuModuleGetFunction_v2000 get =
      (PFN_cuModuleGetFunction_v2000)driver("cuModuleGetFunction", 2000);
  if (!on_stub()) {
    cr_assert_eq(get(&twice, (CUmodule)module, "twice"), CUDA_SUCCESS);
    void *tparams[] = {&x};
    cr_assert_eq(launch(twice, 1, 1, 1, 32, 1, 1, 0, NULL, tparams, NULL), CUDA_SUCCESS);
    int host[32];
    EXPECT_OK(cujit_memcpy_dtoh(host, b, 0, sizeof host, NULL));
    cr_expect_eq(host[31], 2 * (5 + 31), "%d", host[31]);
  }
  cujit_buffer_free(b);
  cujit_program_free(p);
  cujit_kernel_free(k);
}

/* --- the CPU device has no native objects
 * ---------------------------------------------------------- */

Test(embedding, the_cpu_device_refuses_every_native_call, .fini = close_engine) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cujit_device *cpu = NULL;
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  cj_test_runs_on("CPU device");
  void *native = NULL;
  EXPECT_REFUSED(cujit_device_use_context(cpu, (void *)1), CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device has no native context");
  EXPECT_REFUSED(cujit_device_context(cpu, &native), CUJIT_ERROR_UNSUPPORTED,
                 "contexts exist on GPUs only");
  cujit_stream *s = NULL;
  EXPECT_REFUSED(cujit_stream_wrap(engine, (void *)1, &s), CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device has no native streams");
  cr_expect_null(s);
  cujit_event *e = NULL;
  EXPECT_REFUSED(cujit_event_wrap(engine, (void *)1, &e), CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device has no native events");
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_REFUSED(cujit_stream_handle(s, &native), CUJIT_ERROR_UNSUPPORTED,
                 "native handles exist on GPUs only");
  EXPECT_OK(cujit_event_create(engine, &e));
  EXPECT_REFUSED(cujit_event_handle(e, &native), CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device has no native events");
  cujit_kernel *k = fill_kernel();
  EXPECT_REFUSED(cujit_kernel_function(k, &native), CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device has no native functions");
  cr_expect_null(native);
  cujit_event_free(e);
  cujit_stream_free(s);
  cujit_kernel_free(k);
}
