/*
** test_stub_driver.c -- what the CUDA backend does around a device's context, against the
** stand-in driver (scripts/bench/stub_driver.c; tests/CMakeLists.txt runs this program with it
** first on LD_LIBRARY_PATH, and nowhere else): a primary context that cannot be retained (the
** GPU full of other processes) is a clear error and a clean close, and a reset or a close gives
** back every block and pinned buffer the backend cached, counted by the stand-in, even when the
** context faulted; a kernel of 32000 bytes of parameters refused on an older driver or GPU (the
** stand-in made one by CUJIT_STUB_DRIVER_VERSION and CUJIT_STUB_CC) and launched on a newer
** one; pinned host memory refused, said with its size; CUJIT_DEVICE past the GPUs.
** CUJIT_STUB_FAIL is read when the engine opens the driver: each case sets it before cujit_open
** (every case runs in a process of its own).
*/
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "scratch.h"
#include "stub.h"
#include "expect.h"

static cujit_engine *engine;
static cujit_device *gpu;

/* The engine, with the stand-in failing the calls named (NULL: none) with `code`. */
static void open_failing(const char *calls, const char *code) {
  if (calls) setenv("CUJIT_STUB_FAIL", calls, 1);
  if (code) setenv("CUJIT_STUB_FAIL_CODE", code, 1);
  gpu = cj_stub_open(&engine);
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
  cj_scratch_remove();
}

/* Device and pinned blocks the stand-in handed out and got no free for. */
/* A buffer of `bytes` from the pool, filled through the staging ring and read back through the
** pinned download buffer (both are made at their first use). */
static cujit_buffer *used_buffer(size_t bytes) {
  unsigned char data[512], got[512];
  cr_assert_leq(bytes, sizeof data);
  for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)(i * 7 + 1);
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, bytes, CUJIT_DTYPE_NONE, &b));
  EXPECT_OK(cujit_memcpy_htod(b, 0, data, bytes, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(got, b, 0, bytes, NULL));
  cr_assert_arr_eq(got, data, bytes);
  return b;
}

Test(stub_context, a_context_that_cannot_be_made_is_an_error_and_a_clean_close,
     .fini = cj_scratch_remove) {
  open_failing("cuDevicePrimaryCtxRetain", NULL);
  cujit_buffer *b = NULL;
  for (int attempt = 0; attempt < 2; attempt++) { /* the second asks again, and fails the same */
    cr_expect_eq(cujit_buffer_alloc(engine, 256, CUJIT_DTYPE_NONE, &b), CUJIT_ERROR_DEVICE_MEMORY);
    const char *msg = cujit_errmsg(engine);
    cr_expect(strstr(msg, "retaining the primary context of device 0 failed") != NULL, "%s", msg);
    cr_expect(strstr(msg, "out of memory") != NULL, "%s", msg);
    cr_expect(strstr(msg, "free memory is") == NULL, "no context to ask: %s", msg);
  }
  cr_expect_null(b);
  cujit_stream *s = NULL;
  cr_expect_eq(cujit_stream_create(engine, &s), CUJIT_ERROR_DEVICE_MEMORY);
  cr_expect_eq(cujit_device_trim(gpu), CUJIT_OK, "nothing was made: nothing to trim");
  cujit_close(engine);
  engine = NULL;
  /* The driver stays mapped after cujit_close: its threads and exit handlers outlive the engine
  ** (unmapping it crashed the process at exit on the H200 after this very failure). */
  void *still = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  cr_expect_not_null(still, "cujit_close unmapped the CUDA driver");
  if (still) dlclose(still);
  unsetenv("CUJIT_STUB_FAIL");
}

Test(stub_context, close_gives_back_the_pool_and_the_staging_buffers, .fini = close_engine) {
  open_failing(NULL, NULL);
  long before = cj_stub_live_allocations();
  cujit_buffer *kept = used_buffer(512);
  cujit_buffer_free(used_buffer(256)); /* a free block in the pool's cache */
  cr_assert_gt(cj_stub_live_allocations(), before + 2,
               "two blocks, the ring and the download buffer");
  (void)kept; /* freed by cujit_close */
  cujit_close(engine);
  engine = NULL;
  cr_expect_eq(cj_stub_live_allocations(), before,
               "cujit_close left blocks or pinned buffers behind");
}

Test(stub_context, a_reset_gives_back_the_pool_and_the_staging_buffers, .fini = close_engine) {
  open_failing(NULL, NULL);
  long before = cj_stub_live_allocations();
  cujit_buffer *lost = used_buffer(512);
  cujit_buffer_free(used_buffer(256));
  cr_assert_gt(cj_stub_live_allocations(), before + 2);
  EXPECT_OK(cujit_device_reset(gpu));
  /* The stand-in's reset frees nothing: what is still counted, cujit left to the context. */
  cr_expect_eq(cj_stub_live_allocations(), before,
               "the reset left blocks or pinned buffers behind");
  cujit_buffer_free(lost); /* lost: freed without a driver call */
  cr_expect_eq(cj_stub_live_allocations(), before);
  cujit_buffer *again = used_buffer(512); /* the pool and the staging buffers, made anew */
  cr_expect_gt(cj_stub_live_allocations(), before);
  cujit_buffer_free(again);
}

/* A stream's and an event's native handle after a reset: the object is lost, said by name, and
** no stale handle is given out. */
Test(stub_context, native_handles_of_objects_lost_in_a_reset, .fini = close_engine) {
  open_failing(NULL, NULL);
  cujit_stream *s;
  cujit_event *e;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_event_create(engine, &e));
  void *native = NULL;
  EXPECT_OK(cujit_stream_handle(s, &native));
  cr_assert_not_null(native, "a live stream's handle");
  EXPECT_OK(cujit_event_handle(e, &native));
  cr_assert_not_null(native, "a live event's handle");
  EXPECT_OK(cujit_device_reset(gpu));
  native = &native;
  EXPECT_FAIL(cujit_stream_handle(s, &native), CUJIT_ERROR_BUFFER_LOST,
              "cujit_stream_handle: the stream was made on device 0 before the device was reset");
  cr_expect_null(native, "no stale stream handle");
  native = &native;
  EXPECT_FAIL(cujit_event_handle(e, &native), CUJIT_ERROR_BUFFER_LOST,
              "cujit_event_handle: the event was made on device 0 before the device was reset");
  cr_expect_null(native, "no stale event handle");
  cujit_event_free(e);
  cujit_stream_free(s);
}

Test(stub_context, a_faulted_reset_still_gives_back, .fini = close_engine) {
  open_failing("cuStreamQuery", "700"); /* CUDA_ERROR_ILLEGAL_ADDRESS at the first wait */
  long before = cj_stub_live_allocations();
  cujit_buffer *b;
  unsigned char data[256] = {1}, got[256];
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof data, CUJIT_DTYPE_NONE, &b));
  EXPECT_OK(cujit_memcpy_htod(b, 0, data, sizeof data, NULL));
  cr_assert_eq(cujit_memcpy_dtoh(got, b, 0, sizeof got, NULL), CUJIT_ERROR_DEVICE_FAULT);
  /* the driver's description and name of the fault, what saw it, the way out */
  cr_expect_str_eq(cujit_errmsg(engine),
                   "device 0 faulted: stub error text (stub error name), seen by "
                   "cujit_stream_synchronize; the device refuses further work until reset: call "
                   "cujit_device_reset (Lua: cuda.reset()), which loses the device's buffers, "
                   "streams and events (host data is untouched)");
  cr_assert_eq(cujit_device_status(gpu), CUJIT_ERROR_DEVICE_FAULT);
  cr_assert_gt(cj_stub_live_allocations(), before + 2,
               "the block, the ring and the download buffer");
  EXPECT_OK(cujit_device_reset(gpu));
  EXPECT_OK(cujit_device_status(gpu));
  cr_expect_eq(cj_stub_live_allocations(), before,
               "a faulted reset left blocks or pinned buffers behind");
  cujit_buffer_free(b);
}

/* Frees a faulted context refuses are forgotten: nothing stale is handed out after the reset. */
Test(stub_context, frees_refused_at_a_reset_are_forgotten, .fini = close_engine) {
  open_failing("cuMemFreeAsync,cuMemFreeHost", "700");
  cujit_buffer *old = used_buffer(512);
  uint64_t old_ptr = cujit_buffer_devptr(old);
  cujit_buffer_free(old);
  EXPECT_OK(cujit_device_reset(gpu));
  EXPECT_OK(cujit_device_status(gpu));
  cujit_buffer *fresh = used_buffer(512); /* works, in a block of the new context */
  cr_expect_neq(cujit_buffer_devptr(fresh), old_ptr, "a block of the old context came back");
  cujit_buffer_free(fresh);
}

/* Pinned host memory the driver cannot give: out of memory says how much and what to do
** instead; any other refusal names the call and the size. */
Test(stub_context, pinned_memory_refused_says_how_much, .fini = close_engine) {
  open_failing("cuMemHostAlloc", NULL); /* CUDA_ERROR_OUT_OF_MEMORY */
  cujit_host_buffer *h = NULL;
  EXPECT_FAIL(cujit_host_alloc(engine, (size_t)3 << 20, &h), CUJIT_ERROR_OUT_OF_HOST_MEMORY,
              "cujit_host_alloc: cannot pin 3.0 MiB of host memory; ask for less, or use ordinary "
              "(pageable) memory");
  cr_expect_null(h);
  setenv("CUJIT_STUB_FAIL_CODE", "1", 1); /* CUDA_ERROR_INVALID_VALUE, read at each call */
  cr_expect_neq(cujit_host_alloc(engine, 1536, &h), CUJIT_OK);
  cr_expect(strstr(cujit_errmsg(engine), "cuMemHostAlloc of 1.5 KiB"), "%s", cujit_errmsg(engine));
  cr_expect_null(h);
}

/* CUJIT_DEVICE naming a GPU past the machine's: the variable, the device and what there is. */
static void close_unset_device(void) {
  unsetenv("CUJIT_DEVICE");
  close_engine();
}

Test(stub_context, cujit_device_past_the_gpus_says_which_there_are, .fini = close_unset_device) {
  setenv("CUJIT_DEVICE", "3", 1);
  open_failing(NULL, NULL);
  cujit_device *current = gpu;
  EXPECT_FAIL(cujit_current_device(engine, &current), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE=3 names device 3, which does not exist: this machine has 1 GPU (0..0)");
  cr_expect_null(current);
  cujit_buffer *b = NULL;
  EXPECT_FAIL(cujit_buffer_alloc(engine, 64, CUJIT_F32, &b), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE=3 names device 3");
  EXPECT_OK(cujit_set_device(engine, 0)); /* the program's choice wins over the variable's */
  EXPECT_OK(cujit_current_device(engine, &current));
  cr_expect_eq(current, gpu);
}

/* An ordinal past the GPUs, or below 0 and not the CPU device's, given by the program: refused
** with what there is, and the current device stays as it was. */
Test(stub_context, cujit_set_device_past_the_gpus_says_which_there_are, .fini = close_engine) {
  open_failing(NULL, NULL);
  static const char there[] =
      " does not exist: this machine has 1 GPU (0..0); set CUJIT_DEVICE or call cujit_set_device "
      "with one of those, or with CUJIT_DEVICE_CPU (CUJIT_DEVICE=cpu) for the CPU device";
  char want[300];
  snprintf(want, sizeof want, "device 1%s", there);
  EXPECT_REFUSED(cujit_set_device(engine, 1), CUJIT_ERROR_NO_DEVICE, want);
  snprintf(want, sizeof want, "device -5%s", there);
  EXPECT_REFUSED(cujit_set_device(engine, -5), CUJIT_ERROR_NO_DEVICE, want);
  cujit_device *d = gpu;
  snprintf(want, sizeof want, "device 2%s", there);
  EXPECT_REFUSED(cujit_device_get(engine, 2, &d), CUJIT_ERROR_NO_DEVICE, want);
  cr_expect_null(d);
  cujit_device *current = NULL;
  EXPECT_OK(cujit_current_device(engine, &current));
  cr_expect_eq(current, gpu, "still device 0");
}

/* The variable is read in base 10 (a 9 is a digit, 19 is nineteen) and at most 4 digits. */
Test(stub_context, cujit_device_is_read_in_base_10, .fini = close_unset_device) {
  setenv("CUJIT_DEVICE", "19", 1);
  open_failing(NULL, NULL);
  cujit_device *current = gpu;
  EXPECT_FAIL(cujit_current_device(engine, &current), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE=19 names device 19, which does not exist");
  close_engine();
  setenv("CUJIT_DEVICE", "0009", 1);
  open_failing(NULL, NULL);
  EXPECT_FAIL(cujit_current_device(engine, &current), CUJIT_ERROR_NO_DEVICE,
              "names device 9, which does not exist");
  close_engine();
  setenv("CUJIT_DEVICE", "1024", 1); /* the largest number taken */
  open_failing(NULL, NULL);
  EXPECT_FAIL(cujit_current_device(engine, &current), CUJIT_ERROR_NO_DEVICE,
              "CUJIT_DEVICE=1024 names device 1024, which does not exist");
  close_engine();
  setenv("CUJIT_DEVICE", "1025", 1);
  open_failing(NULL, NULL);
  cr_expect_neq(cujit_current_device(engine, &current), CUJIT_OK);
  cr_expect_null(strstr(cujit_errmsg(engine), "names device 1025"), "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "CUJIT_DEVICE"), "%s", cujit_errmsg(engine));
  close_engine();
  setenv("CUJIT_DEVICE", "00000", 1); /* five digits: not a device number */
  open_failing(NULL, NULL);
  cujit_status st = cujit_current_device(engine, &current);
  cr_expect_neq(st, CUJIT_OK, "CUJIT_DEVICE=00000 was taken");
  cr_expect(strstr(cujit_errmsg(engine), "CUJIT_DEVICE"), "%s", cujit_errmsg(engine));
}

/* Past the classic 4096 bytes of parameters a kernel needs CUDA 12.1+ and compute capability
** 7.0+: on an older driver or GPU it is refused when first loaded there, naming both and the
** limit; on a newer one it launches (the stand-in runs nothing). */
static cujit_status launch_32000_bytes(const char *driver, const char *cc) {
  setenv("CUJIT_STUB_DRIVER_VERSION", driver, 1);
  setenv("CUJIT_STUB_CC", cc, 1);
  open_failing(NULL, NULL);
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  static const char src[] = "struct Table { float v[8000]; };\n"
                            "__global__ void total(Table t, float *out) { out[0] = t.v[7999]; }\n";
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_program *p;
  cujit_kernel *k;
  EXPECT_OK(cujit_program_compile(engine, src, "big.cu", &o, &p));
  EXPECT_OK(cujit_program_kernel(p, "total", &k));
  cujit_program_free(p);
  static float table[8000];
  cujit_buffer *out;
  EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_F32, &out));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  cujit_arg args[] = {{.kind = CUJIT_ARG_BYTES, .v.bytes = table}, CUJIT_ARG_BUF(out)};
  cujit_status st = cujit_launch(k, &cfg, args, 2);
  cujit_buffer_free(out);
  cujit_kernel_free(k);
  return st;
}

static void close_versions(void) {
  unsetenv("CUJIT_STUB_DRIVER_VERSION");
  unsetenv("CUJIT_STUB_CC");
  close_engine();
}

Test(stub_context, a_32000_byte_parameter_list_on_cuda_12_1_and_volta, .fini = close_versions) {
  EXPECT_OK(launch_32000_bytes("12010", "7"));
}

Test(stub_context, a_32000_byte_parameter_list_refused_on_an_older_driver, .fini = close_versions) {
  cr_assert_eq(launch_32000_bytes("12000", "9"), CUJIT_ERROR_UNSUPPORTED);
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "kernel 'total'") && strstr(m, "32008 bytes") && strstr(m, "driver 12.0") &&
                strstr(m, "at most 4096") && strstr(m, "CUDA 12.1"),
            "%s", m);
}

Test(stub_context, a_32000_byte_parameter_list_refused_before_volta, .fini = close_versions) {
  cr_assert_eq(launch_32000_bytes("13000", "6"), CUJIT_ERROR_UNSUPPORTED);
  const char *m = cujit_errmsg(engine);
  cr_assert(strstr(m, "compute capability 6.") && strstr(m, "Volta"), "%s", m);
}
