/*
** test_stub_peer.c -- several GPUs through the CUDA backend (cuda_peer.c, run/peer.c), against the
** stand-in driver's several devices (scripts/bench/stub_devices.c; CUJIT_STUB_DEVICES is set here
** before each engine opens; tests/CMakeLists.txt runs this program with the stand-in first on
** LD_LIBRARY_PATH), so that what only two GPUs reach runs without one: peer access from one device
** to another (the driver asked whether it can, the access enabled from the device's own context
** to the peer's, the peer's memory pool opened to the device, a second call harmless), a launch
** taking another device's buffer refused before it, in the other direction, and after a reset of
** either device; each refusal of cujit_device_enable_peer by its message; copies between two GPUs
** (cuMemcpyPeer with no stream, the async one on a stream of either device, a stream of a third
** device or of a reset one refused, offsets kept) and between a GPU and the CPU device; the
** library's calls (random fills, reductions, dot products, GEMM) refusing a buffer of another
** device than the one their work runs on, with or without peer access. Kernels
** do not run there: what is checked is what reaches the driver and what cujit answers.
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;
static cujit_device *gpu[3];
static cujit_kernel *kernel;

/* What the stand-in noted under `name` (cujit_stub_peer_seen). */
static long seen(const char *name) {
  return cj_stub_seen("cujit_stub_peer_seen", name);
}

static void open_gpus(int count) {
  char n[8];
  snprintf(n, sizeof n, "%d", count);
  setenv("CUJIT_STUB_DEVICES", n, 1);
  gpu[0] = cj_stub_open(&engine);
  int got = 0;
  EXPECT_OK(cujit_device_count(engine, &got));
  cr_assert_eq(got, count, "the stand-in has %d devices, cujit counts %d", count, got);
  for (int i = 1; i < count; i++) EXPECT_OK(cujit_device_get(engine, i, &gpu[i]));
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  EXPECT_OK(
      cujit_kernel_define(engine, "fill(float *x)", "x[threadIdx.x] = 1.0f;", NULL, NULL, &kernel));
}

static void open_two(void) {
  open_gpus(2);
}

static void open_three(void) {
  open_gpus(3);
}

static void close_engine(void) {
  cujit_kernel_free(kernel);
  kernel = NULL;
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_DEVICES");
  unsetenv("CUJIT_STUB_PEER");
  cj_scratch_remove();
}

TestSuite(stub_peer, .init = open_two, .fini = close_engine);

/* The message holds `part`. */
static void expect_message(const char *msg, const char *part) {
  cr_expect(strstr(msg, part) != NULL, "message \"%s\" lacks \"%s\"", msg, part);
}

#define EXPECT_MSG(part) expect_message(cujit_errmsg(engine), (part))

static char launch_msg[1024]; /* the last refused launch's message */

/* `kernel` on `dev` (a stream of it) taking `b`. */
static cujit_status launch_on(cujit_device *dev, cujit_buffer *b) {
  cujit_stream *s = NULL;
  EXPECT_OK(cujit_stream_create_on(dev, &s));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 1, c.block[0] = 32, c.stream = s;
  cujit_arg args[] = {CUJIT_ARG_BUF(b)};
  cujit_status st = cujit_launch(kernel, &c, args, 1);
  snprintf(launch_msg, sizeof launch_msg, "%s", st == CUJIT_OK ? "" : cujit_errmsg(engine));
  cr_expect_eq(cujit_stream_synchronize(s), CUJIT_OK);
  cujit_stream_free(s);
  return st;
}

static void expect_refused_as_foreign(cujit_device *dev, cujit_buffer *b, int home, int at) {
  char want[96];
  cujit_status st = launch_on(dev, b);
  cr_expect_eq(st, CUJIT_ERROR_ARGUMENT, "a buffer of device %d on %d: %s (%s)", home, at,
               cujit_status_string(st), launch_msg);
  snprintf(want, sizeof want, "lives on device %d but the launch is on device %d", home, at);
  expect_message(launch_msg, want);
  expect_message(launch_msg, "cujit_device_enable_peer");
}

Test(stub_peer, peer_access_lets_a_launch_take_the_peers_buffer_one_way) {
  cujit_buffer *on1 = NULL, *on0 = NULL;
  EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 256, CUJIT_F32, &on1));
  EXPECT_OK(cujit_buffer_alloc_on(gpu[0], 256, CUJIT_F32, &on0));
  cr_expect_eq(launch_on(gpu[0], on0), CUJIT_OK, "its own buffer: %s", cujit_errmsg(engine));
  expect_refused_as_foreign(gpu[0], on1, 1, 0);
  cr_expect_eq(seen("on.0.1"), 0);

  EXPECT_OK(cujit_device_enable_peer(gpu[0], gpu[1]));
  cr_expect_eq(seen("enable"), 1);
  cr_expect_eq(seen("on.0.1"), 1, "enabled from device 0's context to device 1's");
  cr_expect_eq(seen("on.1.0"), 0, "not the other way");
  cr_expect_eq(seen("pool_access"), 1, "device 1's memory pool opened");
  cr_expect_eq(seen("pool_access.id"), 0, "to device 0");
  cr_expect_eq(seen("pool_access.flags"), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  cr_expect_eq(launch_on(gpu[0], on1), CUJIT_OK, "after enable_peer: %s", cujit_errmsg(engine));
  expect_refused_as_foreign(gpu[1], on0, 0, 1); /* one way only */

  EXPECT_OK(cujit_device_enable_peer(gpu[0], gpu[1])); /* the driver: already enabled */
  cr_expect_eq(seen("enable"), 1);
  cr_expect_eq(launch_on(gpu[0], on1), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer_free(on1);
  cujit_buffer_free(on0);
}

/* A reset of either device drops the access, in cujit's table as in the driver. */
Test(stub_peer, a_reset_of_either_device_drops_peer_access) {
  for (int which = 0; which < 2; which++) {
    cujit_buffer *on1 = NULL;
    EXPECT_OK(cujit_device_enable_peer(gpu[0], gpu[1]));
    EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64, CUJIT_F32, &on1));
    cr_expect_eq(launch_on(gpu[0], on1), CUJIT_OK, "%s", cujit_errmsg(engine));
    cujit_buffer_free(on1);
    EXPECT_OK(cujit_device_reset(gpu[which]));
    cr_expect_eq(seen("on.0.1"), 0, "the driver dropped it with device %d's context", which);
    EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64, CUJIT_F32, &on1));
    expect_refused_as_foreign(gpu[0], on1, 1, 0);
    cujit_buffer_free(on1);
  }
  long enables = seen("enable");
  EXPECT_OK(cujit_device_enable_peer(gpu[0], gpu[1])); /* enabled again after the resets */
  cr_expect_eq(seen("enable"), enables + 1);
  cujit_buffer *on1 = NULL;
  EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64, CUJIT_F32, &on1));
  cr_expect_eq(launch_on(gpu[0], on1), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer_free(on1);
}

Test(stub_peer, enable_peer_refusals_say_why) {
  cr_expect_eq(cujit_device_enable_peer(NULL, gpu[1]), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("cujit_device_enable_peer: device is NULL");
  cr_expect_eq(cujit_device_enable_peer(gpu[0], NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("cujit_device_enable_peer: peer is NULL");
  cr_expect_eq(cujit_device_enable_peer(gpu[1], gpu[1]), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("device 1 and its peer are the same device");

  cujit_device *cpu = NULL;
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  cr_expect_eq(cujit_device_enable_peer(gpu[0], cpu), CUJIT_ERROR_UNSUPPORTED);
  EXPECT_MSG("the CPU device shares no memory with a GPU");
  cr_expect_eq(cujit_device_enable_peer(cpu, gpu[0]), CUJIT_ERROR_UNSUPPORTED);
  EXPECT_MSG("the CPU device shares no memory with a GPU");

  cujit_engine *other = NULL;
  cujit_device *other_gpu = NULL;
  cr_assert_eq(cujit_open(&other), CUJIT_OK);
  EXPECT_OK(cujit_device_get(other, 1, &other_gpu));
  cr_expect_eq(cujit_device_enable_peer(gpu[0], other_gpu), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("the devices belong to two engines");
  cujit_close(other);

  setenv("CUJIT_STUB_PEER", "0", 1); /* no NVLink or PCIe path between them */
  cr_expect_eq(cujit_device_enable_peer(gpu[0], gpu[1]), CUJIT_ERROR_UNSUPPORTED);
  EXPECT_MSG("device 0 cannot access device 1's memory directly");
  EXPECT_MSG("cujit_memcpy_peer");
  cr_expect_eq(seen("enable"), 0, "the access is not asked for when the driver says it cannot");
  cr_expect_eq(seen("pool_access"), 0);
  cujit_buffer *on1 = NULL;
  EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64, CUJIT_F32, &on1));
  expect_refused_as_foreign(gpu[0], on1, 1, 0);
  cujit_buffer_free(on1);
}

/* n floats counting from `first`, on `dev`. */
static cujit_buffer *counting(cujit_device *dev, size_t n, float first) {
  cujit_buffer *b = NULL;
  float *host = malloc(n * sizeof *host);
  cr_assert_not_null(host);
  for (size_t i = 0; i < n; i++) host[i] = first + (float)i;
  EXPECT_OK(cujit_buffer_alloc_on(dev, n * sizeof *host, CUJIT_F32, &b));
  EXPECT_OK(cujit_memcpy_htod(b, 0, host, n * sizeof *host, NULL));
  free(host);
  return b;
}

/* dst[dst_at + i] == src's first value + src_at + i for i < count; the rest of dst untouched. */
static void expect_copied(cujit_buffer *dst, size_t n, float dst_first, size_t dst_at,
                          float src_first, size_t src_at, size_t count) {
  float got[64];
  cr_assert_leq(n, 64);
  EXPECT_OK(cujit_memcpy_dtoh(got, dst, 0, n * sizeof *got, NULL));
  for (size_t i = 0; i < n; i++) {
    float want = i >= dst_at && i < dst_at + count ? src_first + (float)(src_at + i - dst_at)
                                                   : dst_first + (float)i;
    cr_expect_eq(got[i], want, "dst[%zu] = %g, want %g", i, got[i], want);
  }
}

Test(stub_peer, copies_between_two_gpus_go_to_the_driver_whole_and_placed) {
  const size_t n = 32;
  cujit_buffer *a = counting(gpu[0], n, 0), *b = counting(gpu[1], n, 1000);
  EXPECT_OK(cujit_memcpy_dtod(b, 3 * 4, a, 5 * 4, 10 * 4, NULL));
  cr_expect_eq(seen("peer_copy"), 1);
  cr_expect_eq(seen("peer_copy.bytes"), 40);
  cr_expect_eq(seen("peer_copy.src"), 0, "the source's context is device 0's");
  cr_expect_eq(seen("peer_copy.dst"), 1, "the destination's context is device 1's");
  cr_expect_eq(seen("peer_copy.stream"), 0, "no stream: cuMemcpyPeer, then both waited for");
  expect_copied(b, n, 1000, 3, 0, 5, 10);

  cujit_stream *s0 = NULL, *s1 = NULL;
  EXPECT_OK(cujit_stream_create_on(gpu[0], &s0));
  EXPECT_OK(cujit_stream_create_on(gpu[1], &s1));
  EXPECT_OK(cujit_memcpy_dtod(a, 0, b, 0, 3 * 4, s0)); /* on the destination's device */
  EXPECT_OK(cujit_stream_synchronize(s0));
  cr_expect_eq(seen("peer_copy"), 2);
  cr_expect_eq(seen("peer_copy.stream"), 1, "a stream: cuMemcpyPeerAsync");
  cr_expect_eq(seen("peer_copy.src"), 1);
  cr_expect_eq(seen("peer_copy.dst"), 0);
  expect_copied(a, n, 0, 0, 1000, 0, 3);               /* b's own values before 3 */
  EXPECT_OK(cujit_memcpy_dtod(b, 0, a, 4 * 4, 4, s1)); /* on the source's device */
  EXPECT_OK(cujit_stream_synchronize(s1));
  cr_expect_eq(seen("peer_copy"), 3);
  cr_expect_eq(seen("peer_copy.bytes"), 4);

  EXPECT_OK(cujit_memcpy_dtod(b, 0, a, 0, 0, NULL)); /* nothing to copy: no call */
  cr_expect_eq(seen("peer_copy"), 3);
  cr_expect_eq(cujit_memcpy_dtod(b, 4, a, 0, n * 4, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
               "past the destination's end");
  cr_expect_eq(seen("peer_copy"), 3);

  /* A stream of a device that was reset is lost, and the copy refused before the driver. */
  EXPECT_OK(cujit_device_reset(gpu[0]));
  cr_expect_neq(cujit_memcpy_dtod(b, 0, b, 4, 4, s0), CUJIT_OK);
  cujit_stream_free(s0);
  cujit_stream_free(s1);
  cujit_buffer_free(a);
  cujit_buffer_free(b);
}

Test(stub_peer3, a_copy_between_two_gpus_on_a_third_ones_stream_is_refused, .init = open_three,
     .fini = close_engine) {
  cujit_buffer *a = counting(gpu[0], 8, 0), *b = counting(gpu[1], 8, 100);
  cujit_stream *s2 = NULL;
  EXPECT_OK(cujit_stream_create_on(gpu[2], &s2));
  cr_expect_eq(cujit_memcpy_dtod(b, 0, a, 0, 32, s2), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("the stream is on device 2 but the copy goes from device 0 to device 1");
  cr_expect_eq(seen("peer_copy"), 0);
  expect_copied(b, 8, 100, 0, 0, 0, 0);
  cujit_stream_free(s2);
  cujit_buffer_free(a);
  cujit_buffer_free(b);
}

/* The CPU device's memory is host memory: a GPU copies to and from it as to host memory, on a
** stream of the GPU only. */
Test(stub_peer, copies_between_a_gpu_and_the_cpu_device) {
  cujit_device *cpu = NULL;
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  const size_t n = 16;
  cujit_buffer *g = counting(gpu[1], n, 0), *c = counting(cpu, n, 500);
  EXPECT_OK(cujit_memcpy_dtod(c, 2 * 4, g, 4 * 4, 6 * 4, NULL));
  expect_copied(c, n, 500, 2, 0, 4, 6);
  cujit_stream *on_cpu = NULL, *on_gpu = NULL;
  EXPECT_OK(cujit_stream_create_on(cpu, &on_cpu));
  EXPECT_OK(cujit_stream_create_on(gpu[1], &on_gpu));
  cr_expect_eq(cujit_memcpy_dtod(g, 0, c, 0, 4, on_cpu), CUJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_MSG("a copy between the CPU device and device 1 runs on the GPU; pass a stream of "
             "device 1, or none");
  EXPECT_OK(cujit_memcpy_dtod(g, 0, c, 0, 8, on_gpu));
  EXPECT_OK(cujit_stream_synchronize(on_gpu));
  expect_copied(g, n, 0, 0, 500, 0, 2);
  cr_expect_eq(seen("peer_copy"), 0, "no peer copy for host memory");
  cujit_stream_free(on_cpu);
  cujit_stream_free(on_gpu);
  cujit_buffer_free(g);
  cujit_buffer_free(c);
}

/* cj_library_work_device's refusal: `fn`'s buffer on device `have`, the work on `want`. */
static const char *elsewhere(const char *fn, int have, int want) {
  static char text[512];
  snprintf(text, sizeof text,
           "%s: the buffer lives on device %d but the work would run on device %d; pass a stream "
           "of the buffer's device or make it current (cujit_set_device)",
           fn, have, want);
  return text;
}

/* The library's calls (random fills, reductions, dot products, GEMM) run on the stream's device, or
** the current one: a buffer of another device is refused before anything is compiled or queued,
** naming the call, the operand and both devices; peer access does not change that. */
Test(stub_peer, library_calls_refuse_a_buffer_of_another_device) {
  cujit_buffer *here = NULL, *there = NULL, *c_there = NULL, *c_here = NULL;
  EXPECT_OK(cujit_buffer_alloc_on(gpu[0], 64 * sizeof(float), CUJIT_F32, &here));
  EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64 * sizeof(float), CUJIT_F32, &there));
  EXPECT_OK(cujit_buffer_alloc_on(gpu[1], 64 * sizeof(float), CUJIT_F32, &c_there));
  EXPECT_OK(cujit_buffer_alloc_on(gpu[0], 64 * sizeof(float), CUJIT_F32, &c_here));
  EXPECT_OK(cujit_set_device(engine, 0));
  long launches = cj_stub_seen("cujit_stub_seen", "cuLaunchKernel");
  cujit_scalar r = CUJIT_SCALAR_INIT;
  EXPECT_REFUSED(cujit_random_uniform(there, 1, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_random_uniform", 1, 0));
  EXPECT_REFUSED(cujit_random_normal(there, 1, 0, 0, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_random_normal", 1, 0));
  EXPECT_REFUSED(cujit_reduce(there, CUJIT_REDUCE_SUM, 64, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_reduce", 1, 0));
  EXPECT_REFUSED(cujit_dot(here, there, 64, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_dot", 1, 0)); /* the second buffer checked too */
  EXPECT_REFUSED(cujit_dot(there, here, 64, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_dot", 1, 0));
  cujit_gemm_options o = CUJIT_GEMM_OPTIONS_INIT;
  o.m = o.n = o.k = 8;
  EXPECT_REFUSED(cujit_gemm(here, here, c_there, &o, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_gemm (c)", 1, 0));
  EXPECT_REFUSED(cujit_gemm(here, there, c_here, &o, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_gemm (b)", 1, 0));
  cujit_gemm_kernel which;
  EXPECT_REFUSED(cujit_gemm_kernel_for(there, here, c_here, &o, NULL, &which),
                 CUJIT_ERROR_INVALID_ARGUMENT, elsewhere("cujit_gemm (a)", 1, 0));
  /* a stream of the other device: the current device's buffer is the stranger now */
  cujit_stream *s1 = NULL;
  EXPECT_OK(cujit_stream_create_on(gpu[1], &s1));
  EXPECT_REFUSED(cujit_random_uniform(here, 1, 0, s1), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_random_uniform", 0, 1));
  EXPECT_REFUSED(cujit_reduce(here, CUJIT_REDUCE_MAX, 64, &r, s1), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_reduce", 0, 1));
  EXPECT_OK(cujit_device_enable_peer(gpu[0], gpu[1]));
  EXPECT_REFUSED(cujit_reduce(there, CUJIT_REDUCE_MAX, 64, &r, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 elsewhere("cujit_reduce", 1, 0));
  cr_expect_eq(cj_stub_seen("cujit_stub_seen", "cuLaunchKernel"), launches,
               "a refused call launched nothing");
  cujit_stream_free(s1);
  cujit_buffer_free(here), cujit_buffer_free(there);
  cujit_buffer_free(c_here), cujit_buffer_free(c_there);
}
