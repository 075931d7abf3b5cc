/*
** test_runtime_args.c -- the runtime layer's calls that never reach a device, so they need no
** driver (CI): without a driver every call that needs one fails cleanly and says why; null
** handles are no-ops or refused, and bad sizes and dtypes are refused with what was wrong, the
** same with a driver or without. The runtime on a device: test_runtime.c.
*/
#include <criterion/criterion.h>
#include <stddef.h>

#include "case_engine.h"
#include "cujit.h"
#include "expect.h"

/* ---------------------------------------------------------------------------------------------
** No driver (CI): every call that needs the driver fails cleanly and says why.
** ------------------------------------------------------------------------------------------- */

static void skip_if_driver(void) {
  int version = 0;
  if (cujit_driver_version(engine, &version) == CUJIT_OK)
    cr_skip_test("a CUDA driver is present (version %d): the no-driver tests need a machine "
                 "without libcuda.so.1",
                 version);
}

Test(runtime_cpu, no_driver_device_calls, .init = open_engine, .fini = close_engine) {
  skip_if_driver();
  int count = 7;
  EXPECT_FAIL(cujit_device_count(engine, &count), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_eq(count, 0);
  cujit_device *device = poison_ptr();
  EXPECT_FAIL(cujit_device_get(engine, 0, &device), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_null(device);
  device = poison_ptr();
  EXPECT_FAIL(cujit_current_device(engine, &device), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_null(device);
  EXPECT_FAIL(cujit_set_device(engine, 0), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
}

Test(runtime_cpu, no_driver_object_calls, .init = open_engine, .fini = close_engine) {
  skip_if_driver();
  cujit_buffer *buffer = poison_ptr();
  EXPECT_FAIL(cujit_buffer_alloc(engine, 1024, CUJIT_F32, &buffer), CUJIT_ERROR_NO_DRIVER,
              "libcuda.so.1");
  cr_expect_null(buffer);
  cujit_stream *stream = poison_ptr();
  EXPECT_FAIL(cujit_stream_create(engine, &stream), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_null(stream);
  cujit_event *event = poison_ptr();
  EXPECT_FAIL(cujit_event_create(engine, &event), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_null(event);
  cujit_host_buffer *host = poison_ptr();
  EXPECT_FAIL(cujit_host_alloc(engine, 64, &host), CUJIT_ERROR_NO_DRIVER, "libcuda.so.1");
  cr_expect_null(host);
  /* Asking again gives the same answer, not a crash or a different error. */
  EXPECT_FAIL(cujit_buffer_alloc(engine, 4, CUJIT_DTYPE_NONE, &buffer), CUJIT_ERROR_NO_DRIVER,
              "libcuda.so.1");
}

/* ---------------------------------------------------------------------------------------------
** Argument checks: these never reach the driver, so they behave the same with or without one.
** ------------------------------------------------------------------------------------------- */

Test(runtime_cpu, null_handles_are_noops) {
  cujit_buffer_free(NULL);
  cujit_host_free(NULL);
  cujit_stream_free(NULL);
  cujit_event_free(NULL);
  cujit_interrupt(NULL);
  cr_expect_eq(cujit_buffer_size(NULL), 0);
  cr_expect_eq(cujit_buffer_dtype(NULL), CUJIT_DTYPE_NONE);
  cr_expect_null(cujit_buffer_device(NULL));
  cr_expect_eq(cujit_buffer_devptr(NULL), 0);
  cr_expect_null(cujit_host_ptr(NULL));
  cr_expect_eq(cujit_host_size(NULL), 0);
  cr_expect_null(cujit_stream_device(NULL));
  cr_expect_eq(cujit_device_ordinal(NULL), -1);
  cr_expect_eq(cujit_device_allocated(NULL), 0);
}

Test(runtime_cpu, null_engine_and_out) {
  int count;
  cujit_device *device;
  cujit_buffer *buffer;
  cujit_stream *stream;
  cujit_event *event;
  cujit_host_buffer *host;
  cr_expect_eq(cujit_device_count(NULL, &count), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_get(NULL, 0, &device), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_current_device(NULL, &device), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_set_device(NULL, 0), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_buffer_alloc(NULL, 16, CUJIT_F32, &buffer), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_host_alloc(NULL, 16, &host), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_stream_create(NULL, &stream), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_create(NULL, &event), CUJIT_ERROR_INVALID_ARGUMENT);

  open_engine();
  EXPECT_FAIL(cujit_device_count(engine, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "count is NULL");
  EXPECT_FAIL(cujit_device_get(engine, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_FAIL(cujit_current_device(engine, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_FAIL(cujit_buffer_alloc(engine, 16, CUJIT_F32, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "out is NULL");
  EXPECT_FAIL(cujit_host_alloc(engine, 16, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_FAIL(cujit_stream_create(engine, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_FAIL(cujit_event_create(engine, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  close_engine();
}

Test(runtime_cpu, bad_sizes_and_dtypes, .init = open_engine, .fini = close_engine) {
  cujit_buffer *buffer = poison_ptr();
  EXPECT_FAIL(cujit_buffer_alloc(engine, 0, CUJIT_F32, &buffer), CUJIT_ERROR_INVALID_ARGUMENT,
              "0 bytes");
  cr_expect_null(buffer);
  EXPECT_FAIL(cujit_buffer_alloc(engine, 7, CUJIT_F32, &buffer), CUJIT_ERROR_INVALID_ARGUMENT,
              "not a whole number of f32");
  EXPECT_FAIL(cujit_buffer_alloc(engine, 16, (cujit_dtype)99, &buffer),
              CUJIT_ERROR_INVALID_ARGUMENT, "not a cujit_dtype");
  EXPECT_FAIL(cujit_buffer_alloc(engine, 16, (cujit_dtype)-1, &buffer),
              CUJIT_ERROR_INVALID_ARGUMENT, "not a cujit_dtype");
  cujit_host_buffer *host = poison_ptr();
  EXPECT_FAIL(cujit_host_alloc(engine, 0, &host), CUJIT_ERROR_INVALID_ARGUMENT, "0 bytes");
  cr_expect_null(host);
}

Test(runtime_cpu, null_handles_in_calls) {
  char host[8] = {0};
  float ms = 1;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  char arch[16];
  size_t free_bytes, total;
  cr_expect_eq(cujit_memcpy_htod(NULL, 0, host, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_memcpy_dtoh(host, NULL, 0, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_memcpy_dtod(NULL, 0, NULL, 0, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_memset(NULL, 0, 1, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_info_get(NULL, &info), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_arch(NULL, arch, sizeof arch), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_memory(NULL, &free_bytes, &total), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_synchronize(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_status(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_device_reset(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_stream_synchronize(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_stream_query(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_stream_wait_event(NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_record(NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_synchronize(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_query(NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_elapsed(NULL, NULL, &ms), CUJIT_ERROR_INVALID_ARGUMENT);
}

Test(runtime_cpu, close_with_nothing_made) {
  open_engine();
  int count;
  cujit_device_count(engine, &count); /* may fail without a driver; close must still be clean */
  close_engine();
}
