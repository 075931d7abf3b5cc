/*
** test_multi_gpu.c -- several devices and NCCL through the C API (issue 14): the calls that make
** objects on a given device, copies and launches across devices, peer access, the NCCL calls'
** checks (run anywhere: the CPU device, bad ids, the rendezvous file) and an all-reduce over two
** GPUs (CJ_NEED_GPUS: skipped with fewer, failed under CUJIT_REQUIRE_GPUS=2).
*/
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

TestSuite(multi_gpu, .init = cj_fixture_open, .fini = cj_fixture_close);

static cujit_device *cpu_device(void) {
  cujit_device *cpu;
  EXPECT_OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  return cpu;
}

Test(multi_gpu, objects_on_a_given_device) {
  cujit_buffer *b = NULL;
  cujit_stream *s = NULL;
  cujit_event *ev = NULL;
  /* Without a device there is no engine to hold a message: the status says it. */
  cr_expect_eq(cujit_buffer_alloc_on(NULL, 16, CUJIT_F32, &b), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_stream_create_on(NULL, &s), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_event_create_on(NULL, &ev), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_device *cpu = cpu_device();
  EXPECT_FAIL(cujit_buffer_alloc_on(cpu, 0, CUJIT_F32, &b), CUJIT_ERROR_INVALID_ARGUMENT,
              "a buffer of 0 bytes");
  EXPECT_OK(cujit_buffer_alloc_on(cpu, 64, CUJIT_F32, &b));
  EXPECT_OK(cujit_stream_create_on(cpu, &s));
  EXPECT_OK(cujit_event_create_on(cpu, &ev));
  cr_expect_eq(cujit_buffer_device(b), cpu);
  cr_expect_eq(cujit_stream_device(s), cpu);
  float in[16], out[16];
  for (int i = 0; i < 16; i++) in[i] = (float)i * 0.5f - 3.0f;
  cujit_buffer *c;
  EXPECT_OK(cujit_buffer_alloc_on(cpu, 64, CUJIT_F32, &c));
  EXPECT_OK(cujit_memcpy_htod(b, 0, in, sizeof in, s));
  EXPECT_OK(cujit_memcpy_dtod(c, 0, b, 0, sizeof in, s));
  EXPECT_OK(cujit_stream_synchronize(s));
  EXPECT_OK(cujit_memcpy_dtoh(out, c, 0, sizeof out, NULL));
  cr_expect_arr_eq(out, in, sizeof in);
  cujit_event_free(ev);
  cujit_stream_free(s);
  cujit_buffer_free(b);
  cujit_buffer_free(c);
}

Test(multi_gpu, peer_access_refuses_what_it_cannot_do) {
  cujit_device *cpu = cpu_device();
  EXPECT_FAIL(cujit_device_enable_peer(NULL, cpu), CUJIT_ERROR_INVALID_ARGUMENT, "device is NULL");
  EXPECT_FAIL(cujit_device_enable_peer(cpu, cpu), CUJIT_ERROR_INVALID_ARGUMENT, "the same device");
  cujit_device *gpu;
  if (cujit_device_get(engine, 0, &gpu) == CUJIT_OK)
    EXPECT_FAIL(cujit_device_enable_peer(gpu, cpu), CUJIT_ERROR_UNSUPPORTED,
                "the CPU device shares no memory with a GPU");
}

Test(multi_gpu, nccl_checks_before_nccl) {
  cujit_nccl_comm *comm = NULL;
  int cpu_list[] = {CUJIT_DEVICE_CPU}, twice[] = {0, 0};
  EXPECT_FAIL(cujit_nccl_comm_init_all(engine, cpu_list, 1, &comm), CUJIT_ERROR_UNSUPPORTED,
              "NCCL runs on GPUs, not on the CPU device");
  EXPECT_FAIL(cujit_nccl_comm_init_all(engine, twice, 2, &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "device 0 is listed twice");
  EXPECT_FAIL(cujit_nccl_comm_init_all(engine, cpu_list, 0, &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "no devices");
  cujit_device *cpu = cpu_device();
  char id[CUJIT_NCCL_ID_HEX];
  memset(id, 'f', 256);
  id[256] = '\0';
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 2, 2, id, &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_nccl_comm_init_rank: rank 2 of 2 ranks; ranks run from 0 to nranks - 1");
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 2, -1, id, &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "rank -1 of 2 ranks; ranks run from 0 to nranks - 1");
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 0, 0, id, &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "rank 0 of 0 ranks");
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 2, 1, "f00d", &comm), CUJIT_ERROR_INVALID_ARGUMENT,
              "a unique id is 256 hex digits, got 4 characters");
  /* blanks around the digits are not counted (a line read from a pipe or file) */
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 2, 1, " \t f00d\n", &comm),
              CUJIT_ERROR_INVALID_ARGUMENT, "a unique id is 256 hex digits, got 4 characters");
  EXPECT_FAIL(cujit_nccl_comm_init_rank(cpu, 2, 1, id, &comm), CUJIT_ERROR_UNSUPPORTED,
              "NCCL runs on GPUs");
  cr_expect_null(comm);
  cujit_buffer *bufs[1] = {NULL};
  cr_expect_eq(cujit_nccl_all_reduce(NULL, bufs, NULL, 1, CUJIT_NCCL_SUM, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect_eq(cujit_nccl_all_gather(NULL, bufs, NULL, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
}

Test(multi_gpu, rendezvous_file) {
  char id[CUJIT_NCCL_ID_HEX], back[CUJIT_NCCL_ID_HEX];
  for (int i = 0; i < 256; i++) id[i] = "0123456789ABCDEF"[(i * 7) % 16];
  id[256] = '\0';
  char dir[sizeof cj_scratch + 16]; /* inside the fixture's scratch, removed with it */
  snprintf(dir, sizeof dir, "%s/rendezvous", cj_scratch);
  cr_assert_eq(mkdir(dir, 0700), 0, "%s: %s", dir, strerror(errno));
  char path[1024], missing[1024];
  snprintf(path, sizeof path, "%s/id", dir);
  snprintf(missing, sizeof missing, "%s/never", dir);
  EXPECT_OK(cujit_nccl_id_write(engine, path, id));
  EXPECT_OK(cujit_nccl_id_read(engine, path, 1.0, back));
  cr_expect_str_eq(back, id);
  EXPECT_FAIL(cujit_nccl_id_read(engine, missing, 0.02, back), CUJIT_ERROR_IO,
              "did not appear within 0.02 s");
  EXPECT_FAIL(cujit_nccl_id_write(engine, path, "xyz"), CUJIT_ERROR_INVALID_ARGUMENT,
              "a unique id is 256 hex digits");
  char padded[CUJIT_NCCL_ID_HEX + 8]; /* as read from a file or a variable: blanks before it */
  snprintf(padded, sizeof padded, " \n\t%s\n", id);
  EXPECT_OK(cujit_nccl_id_write(engine, path, padded));
  back[0] = '\0';
  EXPECT_OK(cujit_nccl_id_read(engine, path, 1.0, back));
  cr_expect_str_eq(back, id, "the id written whole, without the blanks it was given with");
  FILE *f = fopen(path, "w"); /* blanks and newlines around the id, as an editor leaves them */
  cr_assert_not_null(f);
  fprintf(f, " \n\t%s\n\n", id);
  fclose(f);
  back[0] = '\0';
  EXPECT_OK(cujit_nccl_id_read(engine, path, 1.0, back));
  cr_expect_str_eq(back, id);
  f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("  0g", f);
  fclose(f);
  EXPECT_FAIL(cujit_nccl_id_read(engine, path, 1.0, back), CUJIT_ERROR_INVALID_ARGUMENT, path);
  /* A path that cannot be opened for another reason than its absence fails at once, saying why
  ** (here a file taken for a directory: also for root, who may read any file). */
  char under_a_file[1100];
  snprintf(under_a_file, sizeof under_a_file, "%s/id", path);
  back[0] = 'x';
  EXPECT_FAIL(cujit_nccl_id_read(engine, under_a_file, 30.0, back), CUJIT_ERROR_IO,
              "cujit_nccl_id_read: cannot read");
  cr_expect(strstr(cujit_errmsg(engine), "/id/id (Not a directory)"), "%s", cujit_errmsg(engine));
  cr_expect_eq(back[0], '\0', "no id given back");
}

/* --- two GPUs --------------------------------------------------------------------------------- */

static cujit_kernel *fill_kernel(void) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "fill(float *y, float v, int n)",
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) y[i] = v;",
                                NULL, NULL, &k));
  return k;
}

Test(multi_gpu, launches_and_copies_across_two_gpus) {
  CJ_NEED_GPUS(engine, 2);
  cujit_device *d0, *d1;
  EXPECT_OK(cujit_device_get(engine, 0, &d0));
  EXPECT_OK(cujit_device_get(engine, 1, &d1));
  EXPECT_OK(cujit_set_device(engine, 0));
  cujit_kernel *k = fill_kernel();
  enum { N = 1 << 16 };
  cujit_buffer *b0, *b1;
  EXPECT_OK(cujit_buffer_alloc_on(d0, N * sizeof(float), CUJIT_F32, &b0));
  EXPECT_OK(cujit_buffer_alloc_on(d1, N * sizeof(float), CUJIT_F32, &b1));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = N / 256, cfg.block[0] = 256;
  cujit_arg on1[] = {CUJIT_ARG_BUF(b1), CUJIT_ARG_F(2.5f), CUJIT_ARG_I(N)};
  EXPECT_FAIL(cujit_launch(k, &cfg, on1, 3), CUJIT_ERROR_ARGUMENT,
              "argument 1 'y' (float *): the buffer lives on device 1 but the launch is on "
              "device 0");
  cujit_stream *s1;
  EXPECT_OK(cujit_stream_create_on(d1, &s1));
  cfg.stream = s1; /* the launch runs on its stream's device: device 1 */
  EXPECT_OK(cujit_launch(k, &cfg, on1, 3));
  EXPECT_OK(cujit_memcpy_dtod(b0, 0, b1, 0, N * sizeof(float), s1));
  EXPECT_OK(cujit_stream_synchronize(s1));
  static float out[N];
  EXPECT_OK(cujit_memcpy_dtoh(out, b0, 0, sizeof out, NULL));
  for (int i = 0; i < N; i++) cr_assert_eq(out[i], 2.5f, "out[%d] = %g", i, (double)out[i]);
  cujit_stream_free(s1);
  cujit_buffer_free(b0);
  cujit_buffer_free(b1);
  cujit_kernel_free(k);
}

Test(multi_gpu, nccl_all_reduce_over_two_gpus) {
  CJ_NEED_GPUS(engine, 2);
  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  int version = 0;
  if (cujit_nccl_version(engine, &version) != CUJIT_OK || !nvls || strcmp(nvls, "0") != 0) {
    if (cj_test_gpus_required() >= 2)
      cr_assert_fail("GPUs are required but NCCL cannot be used: %s",
                     version ? "NCCL_NVLS_ENABLE is not 0" : cujit_errmsg(engine));
    cr_skip_test("NCCL cannot be used here (absent, or NCCL_NVLS_ENABLE is not 0)");
  }
  int ordinals[] = {0, 1};
  cujit_nccl_comm *comm;
  EXPECT_OK(cujit_nccl_comm_init_all(engine, ordinals, 2, &comm));
  cr_expect_eq(cujit_nccl_comm_ranks(comm), 2);
  cr_expect_eq(cujit_nccl_comm_local(comm), 2);
  cr_expect_eq(cujit_nccl_comm_rank(comm, 1), 1);
  enum { N = 1000 };
  static double a[N], b[N], got[N];
  cujit_buffer *bufs[2];
  for (int r = 0; r < 2; r++) {
    cujit_device *d = cujit_nccl_comm_device(comm, r);
    cr_assert_eq(cujit_device_ordinal(d), r);
    EXPECT_OK(cujit_buffer_alloc_on(d, sizeof a, CUJIT_F64, &bufs[r]));
  }
  for (int i = 0; i < N; i++) a[i] = i * 0.25, b[i] = 1000 - i;
  EXPECT_OK(cujit_memcpy_htod(bufs[0], 0, a, sizeof a, NULL));
  EXPECT_OK(cujit_memcpy_htod(bufs[1], 0, b, sizeof b, NULL));
  EXPECT_OK(cujit_nccl_all_reduce(comm, bufs, NULL, N, CUJIT_NCCL_MAX, NULL));
  for (int r = 0; r < 2; r++) {
    EXPECT_OK(cujit_memcpy_dtoh(got, bufs[r], 0, sizeof got, NULL));
    for (int i = 0; i < N; i++)
      cr_assert_eq(got[i], a[i] > b[i] ? a[i] : b[i], "rank %d [%d] = %g", r, i, got[i]);
  }
  cujit_buffer *swapped[2] = {bufs[1], bufs[0]};
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, swapped, NULL, N, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the send buffer of local rank 0 lives on device 1, but that rank runs on device 0");
  cujit_nccl_comm_free(comm);
  cujit_buffer_free(bufs[0]);
  cujit_buffer_free(bufs[1]);
}
