/*
** test_stub_ipc.c -- sharing memory and events between processes (cujit_buffer_ipc_handle and
** _open, cujit_event_ipc_handle and _open: run/ipc.c over the CUDA backend's cuda_ipc.c) against
** the stand-in driver (scripts/bench/stub_ipc.c; tests/CMakeLists.txt runs this program with it
** first on LD_LIBRARY_PATH, and nowhere else), so that the GPU-only path runs without a GPU: the
** handle's text is the driver's 64 bytes in lowercase hex after the dtype and size; a handle of
** this very process is refused as the driver refuses it, with cujit's message; a handle naming
** another process (forged here: the stand-in's memory is this process's) opens as a buffer of the
** dtype and size the text says, reads the exporter's bytes, and its free closes the handle without
** freeing the memory; events alike (only one made shareable, or the application's, is exported;
** a shareable one, made or opened, is refused a time, saying so);
** an open the driver fails otherwise than by refusing the handle is the driver's error;
** a driver without the entry points refuses the feature alone.
** lua.test_lua_managed opens a handle in a real second process on a GPU.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_ABSENT");
  cj_scratch_remove();
}

static long stub_ipc(const char *what) {
  long (*fn)(const char *) = (long (*)(const char *))cj_stub_symbol("cujit_stub_ipc");
  return fn(what);
}

/* The stand-in's handle (stub_ipc.h: magic, process id, address, little-endian) as cujit's hex. */
static void stub_hex(const char *magic, uint64_t pid, uint64_t address, char *hex) {
  unsigned char h[64] = {0};
  memcpy(h, magic, 8);
  for (int i = 0; i < 4; i++) h[8 + i] = (unsigned char)(pid >> (8 * i));
  for (int i = 0; i < 8; i++) h[16 + i] = (unsigned char)(address >> (8 * i));
  for (int i = 0; i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
}

Test(stub_ipc, memory_round_trip_through_the_text, .fini = close_engine) {
  cj_stub_open(&engine);
  float data[12], got[12] = {0};
  for (int i = 0; i < 12; i++) data[i] = (float)i * 1.5f - 4;
  cujit_buffer *exported;
  EXPECT_OK(cujit_buffer_alloc_shareable(engine, sizeof data, CUJIT_F32, &exported));
  EXPECT_OK(cujit_memcpy_htod(exported, 0, data, sizeof data, NULL));
  char text[CUJIT_IPC_HANDLE_MAX], want[CUJIT_IPC_HANDLE_MAX], hex[129];
  EXPECT_OK(cujit_buffer_ipc_handle(exported, text));
  stub_hex("cjstubmm", (uint64_t)getpid(), cujit_buffer_devptr(exported), hex);
  snprintf(want, sizeof want, "cujit-ipc-mem:f32:48:%s", hex);
  cr_assert_str_eq(text, want);

  /* the exporting process itself: the driver refuses, cujit says why */
  cujit_buffer *opened = (cujit_buffer *)1;
  EXPECT_REFUSED(cujit_buffer_ipc_open(engine, text, &opened), CUJIT_ERROR_INVALID_ARGUMENT,
                 "opening memory of another process on device 0: the driver refused the handle "
                 "(a handle opens in another process only, once per process, while the "
                 "exporting process still holds the memory)");
  cr_assert_null(opened);
  cr_assert_eq(stub_ipc("opened"), 0);

  /* the same handle as another process would hold it */
  stub_hex("cjstubmm", (uint64_t)getpid() + 1, cujit_buffer_devptr(exported), hex);
  snprintf(text, sizeof text, "cujit-ipc-mem:f32:48:%s", hex);
  EXPECT_OK(cujit_memcpy_dtoh(got, exported, 0, sizeof got, NULL)); /* the staging buffers made */
  long live = cj_stub_live_allocations();
  memset(got, 0, sizeof got);
  EXPECT_OK(cujit_buffer_ipc_open(engine, text, &opened));
  cr_assert_eq(stub_ipc("opened"), 1);
  cr_assert_eq(cujit_buffer_size(opened), sizeof data);
  cr_assert_eq(cujit_buffer_dtype(opened), CUJIT_F32);
  cr_assert_eq(cujit_buffer_devptr(opened), cujit_buffer_devptr(exported));
  EXPECT_OK(cujit_memcpy_dtoh(got, opened, 0, sizeof got, NULL));
  cr_assert_arr_eq(got, data, sizeof data);
  EXPECT_FAIL(cujit_buffer_ipc_handle(opened, text), CUJIT_ERROR_INVALID_ARGUMENT,
              "only a buffer allocated shareable can be exported");
  cujit_buffer_free(opened); /* closes the handle; the memory stays the exporter's */
  cr_assert_eq(stub_ipc("closed"), 1);
  cr_assert_eq(cj_stub_live_allocations(), live, "the opened buffer's free freed memory");
  memset(got, 0, sizeof got);
  EXPECT_OK(cujit_memcpy_dtoh(got, exported, 0, sizeof got, NULL));
  cr_assert_arr_eq(got, data, sizeof data);

  /* bytes (no dtype) and the size the text gives, not the exporter's */
  snprintf(text, sizeof text, "cujit-ipc-mem:bytes:8:%s", hex);
  EXPECT_OK(cujit_buffer_ipc_open(engine, text, &opened));
  cr_assert_eq(cujit_buffer_size(opened), 8);
  cr_assert_eq(cujit_buffer_dtype(opened), CUJIT_DTYPE_NONE);
  cujit_buffer_free(opened);
  cr_assert_eq(stub_ipc("closed"), 2);

  /* a handle the driver did not write: cujit's text is well formed, the driver refuses it */
  hex[0] = '0';
  snprintf(text, sizeof text, "cujit-ipc-mem:f32:48:%s", hex);
  EXPECT_FAIL(cujit_buffer_ipc_open(engine, text, &opened), CUJIT_ERROR_INVALID_ARGUMENT,
              "the driver refused the handle");
  cr_assert_eq(stub_ipc("opened"), 2);
  cujit_buffer_free(exported);
}

Test(stub_ipc, event_round_trip_through_the_text, .fini = close_engine) {
  cj_stub_open(&engine);
  cujit_event *shared, *opened = NULL;
  EXPECT_OK(cujit_event_create_shareable(engine, &shared));
  char text[CUJIT_IPC_HANDLE_MAX];
  EXPECT_OK(cujit_event_ipc_handle(shared, text));
  cr_assert_eq(strncmp(text, "cujit-ipc-event:", 16), 0, "%s", text);
  cr_assert_eq(strlen(text), 16 + 128, "%s", text);
  /* the exporter's own handle: refused by the driver, said with the call */
  EXPECT_REFUSED(cujit_event_ipc_open(engine, text, &opened), CUJIT_ERROR_INVALID_ARGUMENT,
                 "opening an event of another process on device 0: the driver refused the handle "
                 "(a handle opens in another process only, once per process, while the "
                 "exporting process still holds the event)");
  cr_assert_null(opened);
  /* the same handle from another process: the address in it is the event's */
  char forged[CUJIT_IPC_HANDLE_MAX];
  snprintf(forged, sizeof forged, "%s", text);
  unsigned pid = (unsigned)getpid() + 1;
  for (int i = 0; i < 4; i++) snprintf(forged + 16 + 16 + 2 * i, 3, "%02x", (pid >> (8 * i)) & 255);
  forged[16 + 24] = text[16 + 24]; /* snprintf's NUL after the last pair is overwritten back */
  cr_assert_eq(strlen(forged), strlen(text), "%s", forged);
  EXPECT_OK(cujit_event_ipc_open(engine, forged, &opened));
  cr_assert_eq(stub_ipc("events_opened"), 1);
  /* only an event made shareable is exported: an ordinary one, or one opened from a handle, is
  ** refused by cujit (the stand-in would export it; a driver refuses it in its own words) */
  static const char only_shareable[] =
      "cujit_event_ipc_handle: only an event made shareable can be exported (an ordinary one keeps "
      "timing, which a shared event cannot); make it with cujit_event_create_shareable (Lua: "
      "cuda.shareable_event())";
  char untouched[CUJIT_IPC_HANDLE_MAX] = "untouched";
  cujit_event *ordinary;
  EXPECT_OK(cujit_event_create(engine, &ordinary));
  EXPECT_REFUSED(cujit_event_ipc_handle(ordinary, untouched), CUJIT_ERROR_INVALID_ARGUMENT,
                 only_shareable);
  EXPECT_REFUSED(cujit_event_ipc_handle(opened, untouched), CUJIT_ERROR_INVALID_ARGUMENT,
                 only_shareable);
  cr_assert_str_eq(untouched, "untouched");
  /* an application's event may have been made for IPC: the driver decides */
  cujit_event *wrapped;
  void *native = NULL;
  EXPECT_OK(cujit_event_handle(ordinary, &native));
  EXPECT_OK(cujit_event_wrap(engine, native, &wrapped));
  EXPECT_OK(cujit_event_ipc_handle(wrapped, untouched));
  cr_assert_eq(strncmp(untouched, "cujit-ipc-event:", 16), 0, "%s", untouched);
  cujit_event_free(wrapped);
  /* a shareable event, made or opened, has no timing: cujit says so, whichever end it is (the
  ** driver's own answer would be "invalid resource handle") */
  EXPECT_OK(cujit_event_record(ordinary, NULL));
  EXPECT_OK(cujit_event_record(shared, NULL));
  float ms = -1;
  EXPECT_REFUSED(cujit_event_elapsed(ordinary, shared, &ms), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_elapsed: the end event is shareable between processes, and those "
                 "have no timing; time with events from cujit_event_create (Lua: cuda.event())");
  EXPECT_REFUSED(cujit_event_elapsed(opened, ordinary, &ms), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_elapsed: the start event is shareable between processes, and those "
                 "have no timing; time with events from cujit_event_create (Lua: cuda.event())");
  cr_expect_eq(ms, 0, "a refused elapsed time leaves 0 ms, not %g", ms);
  /* the same event wrapped as an application's: cujit cannot know it has no timing, the driver
  ** refuses, and cujit says what its refusal means */
  EXPECT_OK(cujit_event_handle(shared, &native));
  EXPECT_OK(cujit_event_wrap(engine, native, &wrapped));
  ms = -1;
  EXPECT_REFUSED(cujit_event_elapsed(ordinary, wrapped, &ms), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_event_elapsed: the driver cannot time these events (invalid resource "
                 "handle): a wrapped event made without timing (CU_EVENT_DISABLE_TIMING, "
                 "cudaEventDisableTiming) or never recorded has no time; time with events from "
                 "cujit_event_create, or record the wrapped ones");
  cujit_event_free(wrapped);
  cujit_event_free(ordinary);
  EXPECT_OK(cujit_stream_wait_event(NULL, opened));
  EXPECT_OK(cujit_event_synchronize(opened));
  cujit_event_free(opened);
  cujit_event_free(shared);
  /* uppercase hex is not what cujit writes */
  forged[16] = 'F', forged[17] = 'F';
  EXPECT_FAIL(cujit_event_ipc_open(engine, forged, &opened), CUJIT_ERROR_INVALID_ARGUMENT,
              "is not a cujit IPC handle");
}

/* An export the driver refuses is an error with the call's name, and no handle is written. */
Test(stub_ipc, an_export_the_driver_refuses_writes_no_handle, .fini = close_engine) {
  setenv("CUJIT_STUB_FAIL", "cuIpcGetMemHandle,cuIpcGetEventHandle", 1);
  setenv("CUJIT_STUB_FAIL_CODE", "1", 1); /* CUDA_ERROR_INVALID_VALUE */
  cj_stub_open(&engine);
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc_shareable(engine, 16, CUJIT_F32, &b));
  char text[CUJIT_IPC_HANDLE_MAX] = "untouched";
  EXPECT_FAIL(cujit_buffer_ipc_handle(b, text), CUJIT_ERROR_DRIVER,
              "exporting device memory (cuIpcGetMemHandle) failed");
  cr_expect_str_eq(text, "untouched");
  cujit_event *e;
  EXPECT_OK(cujit_event_create_shareable(engine, &e));
  EXPECT_FAIL(cujit_event_ipc_handle(e, text), CUJIT_ERROR_DRIVER,
              "exporting an event (cuIpcGetEventHandle) failed");
  cr_expect_str_eq(text, "untouched");
  cujit_event_free(e);
  cujit_buffer_free(b);
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
}

/* An open the driver refuses: its two refusals of a handle (CUDA_ERROR_INVALID_VALUE,
** CUDA_ERROR_INVALID_CONTEXT) are cujit's message of the rule; any other failure is the driver's,
** named with the call, not taken for a refused handle. */
Test(stub_ipc, an_open_the_driver_fails_says_which_way, .fini = close_engine) {
  setenv("CUJIT_STUB_FAIL", "cuIpcOpenMemHandle,cuIpcOpenEventHandle", 1);
  cj_stub_open(&engine);
  char text[CUJIT_IPC_HANDLE_MAX], hex[129];
  stub_hex("cjstubmm", (uint64_t)getpid() + 1, 4096, hex);
  snprintf(text, sizeof text, "cujit-ipc-mem:f32:16:%s", hex);
  char event_text[CUJIT_IPC_HANDLE_MAX];
  stub_hex("cjstubev", (uint64_t)getpid() + 1, 4096, hex);
  snprintf(event_text, sizeof event_text, "cujit-ipc-event:%s", hex);
  static const char *const refusals[] = {"1", "201"}; /* INVALID_VALUE, INVALID_CONTEXT */
  for (int i = 0; i < 2; i++) {
    setenv("CUJIT_STUB_FAIL_CODE", refusals[i], 1);
    cujit_buffer *b = (cujit_buffer *)&b;
    EXPECT_FAIL(cujit_buffer_ipc_open(engine, text, &b), CUJIT_ERROR_INVALID_ARGUMENT,
                "opening memory of another process on device 0: the driver refused the handle");
    cr_expect_null(b);
    cujit_event *e = (cujit_event *)&e;
    EXPECT_FAIL(cujit_event_ipc_open(engine, event_text, &e), CUJIT_ERROR_INVALID_ARGUMENT,
                "opening an event of another process on device 0: the driver refused the handle");
    cr_expect_null(e);
  }
  setenv("CUJIT_STUB_FAIL_CODE", "2", 1); /* CUDA_ERROR_OUT_OF_MEMORY */
  cujit_buffer *b = (cujit_buffer *)&b;
  cujit_status st = cujit_buffer_ipc_open(engine, text, &b);
  cr_expect_neq(st, CUJIT_OK);
  cr_expect_neq(st, CUJIT_ERROR_INVALID_ARGUMENT, "%s", cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), "opening memory of another process (cuIpcOpenMemHandle)"),
            "%s", cujit_errmsg(engine));
  cr_expect_null(strstr(cujit_errmsg(engine), "refused the handle"), "%s", cujit_errmsg(engine));
  cr_expect_null(b);
  setenv("CUJIT_STUB_FAIL_CODE", "999", 1); /* CUDA_ERROR_UNKNOWN */
  cujit_event *e = (cujit_event *)&e;
  EXPECT_FAIL(cujit_event_ipc_open(engine, event_text, &e), CUJIT_ERROR_DRIVER,
              "cuIpcOpenEventHandle");
  cr_expect_null(strstr(cujit_errmsg(engine), "refused the handle"), "%s", cujit_errmsg(engine));
  cr_expect_null(e);
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
}

Test(stub_ipc, a_driver_without_ipc_refuses_only_ipc, .fini = close_engine) {
  setenv("CUJIT_STUB_ABSENT", "cuIpcGetMemHandle,cuIpcOpenMemHandle,cuIpcGetEventHandle", 1);
  cj_stub_open(&engine);
  cujit_buffer *b, *opened;
  EXPECT_OK(cujit_buffer_alloc_shareable(engine, 16, CUJIT_F32, &b));
  char text[CUJIT_IPC_HANDLE_MAX], hex[129];
  EXPECT_FAIL(cujit_buffer_ipc_handle(b, text), CUJIT_ERROR_UNSUPPORTED,
              "sharing memory between processes");
  stub_hex("cjstubmm", (uint64_t)getpid() + 1, cujit_buffer_devptr(b), hex);
  snprintf(text, sizeof text, "cujit-ipc-mem:f32:16:%s", hex);
  EXPECT_FAIL(cujit_buffer_ipc_open(engine, text, &opened), CUJIT_ERROR_UNSUPPORTED,
              "opening memory of another process");
  cujit_event *e;
  EXPECT_OK(cujit_event_create_shareable(engine, &e));
  EXPECT_FAIL(cujit_event_ipc_handle(e, text), CUJIT_ERROR_UNSUPPORTED,
              "sharing an event between processes");
  cujit_event_free(e);
  float one = 1, back = 0; /* the rest of the device works */
  EXPECT_OK(cujit_memcpy_htod(b, 4, &one, 4, NULL));
  EXPECT_OK(cujit_memcpy_dtoh(&back, b, 4, 4, NULL));
  cr_assert_eq(back, 1.0f);
  cujit_buffer_free(b);
}
