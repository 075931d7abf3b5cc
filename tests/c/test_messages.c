/*
** test_messages.c -- messages that must say what is true on the CPU device (issue 23): a buffer
** of another engine is named as such (not "lives on the CPU device but the launch is on the CPU
** device"), launch limits name "the CPU device" (not "device -1"), views of one array that
** overlap are placed within that array, cujit_device_allocated counts the bytes asked for; and
** the strict readers of the environment (env.c), value by value. Needs g++ only: runs on CI.
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "case_engine.h"
#include "expect.h"

TestSuite(messages, .init = open_cpu, .fini = close_engine, .timeout = 120);

Test(messages, a_buffer_of_another_engine_is_named_so) {
  cujit_engine *other;
  cr_assert_eq(cujit_open(&other), CUJIT_OK);
  cr_assert_eq(cujit_set_device(other, CUJIT_DEVICE_CPU), CUJIT_OK);
  cujit_buffer *theirs;
  cr_assert_eq(cujit_buffer_alloc(other, 16, CUJIT_F32, &theirs), CUJIT_OK);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "put(float *x)", "x[0] = 1;", NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_BUF(theirs)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = cfg.block[0] = 1;
  EXPECT_FAIL(cujit_launch(k, &cfg, args, 1), CUJIT_ERROR_ARGUMENT,
              "the buffer belongs to another engine");
  cr_expect(strstr(cujit_errmsg(engine), "lives on") == NULL, "%s", cujit_errmsg(engine));
  cujit_close(other);
}

/* Two engines' CPU devices are two devices: each message says which is whose, never "the CPU
** device but ... the CPU device" (or "device -1 ... device -1"). */
Test(messages, another_engines_stream_and_buffer_are_named_so) {
  cujit_engine *other;
  cr_assert_eq(cujit_open(&other), CUJIT_OK);
  cr_assert_eq(cujit_set_device(other, CUJIT_DEVICE_CPU), CUJIT_OK);
  cujit_buffer *mine, *theirs;
  cujit_stream *their_stream;
  cujit_event *ev;
  float host[4] = {1, 2, 3, 4};
  EXPECT_OK(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &mine));
  cr_assert_eq(cujit_buffer_alloc(other, sizeof host, CUJIT_F32, &theirs), CUJIT_OK);
  cr_assert_eq(cujit_stream_create(other, &their_stream), CUJIT_OK);
  EXPECT_OK(cujit_event_create(engine, &ev));
  EXPECT_FAIL(cujit_memcpy_htod(mine, 0, host, sizeof host, their_stream),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the stream is on the CPU device of another engine but the buffer is on the CPU "
              "device;");
  EXPECT_FAIL(cujit_event_record(ev, their_stream), CUJIT_ERROR_INVALID_ARGUMENT,
              "the event is on the CPU device but the stream on the CPU device of another engine");
  cujit_scalar r =
      CUJIT_SCALAR_INIT; /* their buffer, my stream: the message is kept by the buffer's engine */
  cujit_stream *my_stream;
  EXPECT_OK(cujit_stream_create(engine, &my_stream));
  cr_expect_eq(cujit_reduce(theirs, CUJIT_REDUCE_SUM, 4, &r, my_stream),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_expect(strstr(cujit_errmsg(other), "the buffer lives on the CPU device but the work would "
                                        "run on the CPU device of another engine;"),
            "%s", cujit_errmsg(other));
  cr_expect(strstr(cujit_errmsg(engine), "device -1") == NULL, "%s", cujit_errmsg(engine));
  cujit_close(other);
}

Test(messages, launch_limits_name_the_cpu_device) {
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "nop(int n)", "(void)n;", NULL, NULL, &k));
  cujit_arg args[] = {CUJIT_ARG_I(1)};
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.grid[1] = 70000, cfg.block[0] = 1;
  EXPECT_FAIL(cujit_launch(k, &cfg, args, 1), CUJIT_ERROR_LAUNCH_CONFIG,
              "grid.y = 70000 is over the CPU device's limit of");
  cfg.grid[1] = 1, cfg.block[0] = 2048;
  EXPECT_FAIL(cujit_launch(k, &cfg, args, 1), CUJIT_ERROR_LAUNCH_CONFIG, "the CPU device's limit");
  cfg.block[0] = 1, cfg.shared_bytes = 1u << 30;
  EXPECT_FAIL(cujit_launch(k, &cfg, args, 1), CUJIT_ERROR_LAUNCH_CONFIG, "the CPU device's limit");
  cr_expect(strstr(cujit_errmsg(engine), "device -1") == NULL, "%s", cujit_errmsg(engine));
}

Test(messages, overlapping_views_are_placed_in_their_array) {
  cujit_buffer *a, *v1, *v2;
  EXPECT_OK(cujit_buffer_alloc(engine, 400, CUJIT_F32, &a));
  EXPECT_OK(cujit_buffer_view(a, 0, 32, CUJIT_F32, &v1));  /* elements 1..8 */
  EXPECT_OK(cujit_buffer_view(a, 16, 32, CUJIT_F32, &v2)); /* elements 5..12 */
  EXPECT_FAIL(cujit_memcpy_dtod(v1, 0, v2, 0, 32, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "views of one array and overlap: bytes [16, 48) and [0, 32) of that array");
  cujit_buffer *v3; /* a view of a view counts from the array too */
  EXPECT_OK(cujit_buffer_view(v2, 8, 16, CUJIT_F32, &v3));
  EXPECT_FAIL(cujit_memcpy_dtod(v3, 0, a, 20, 16, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "bytes [20, 36) and [24, 40) of that array");
  EXPECT_FAIL(cujit_memcpy_dtod(a, 0, a, 8, 32, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "the source [8, 40) and destination [0, 32) overlap in the same buffer");
  EXPECT_OK(cujit_memcpy_dtod(v1, 0, v2, 16, 16, NULL)); /* [32, 48) onto [0, 16): apart */
}

Test(messages, allocated_counts_the_bytes_asked_for) {
  cujit_device *dev;
  EXPECT_OK(cujit_current_device(engine, &dev));
  size_t before = cujit_device_allocated(dev);
  cujit_buffer *b[10];
  for (int i = 0; i < 10; i++) EXPECT_OK(cujit_buffer_alloc(engine, 4, CUJIT_F32, &b[i]));
  cr_expect_eq(cujit_device_allocated(dev) - before, 40, "10 four-byte buffers: %zu bytes",
               cujit_device_allocated(dev) - before);
  cujit_buffer *v;
  EXPECT_OK(cujit_buffer_view(b[0], 0, 4, CUJIT_F32, &v));
  cr_expect_eq(cujit_device_allocated(dev) - before, 40, "a view allocates nothing");
  for (int i = 0; i < 10; i++) cujit_buffer_free(b[i]);
  cr_expect_eq(cujit_device_allocated(dev), before);
}

/* --- env.c, value by value ----------------------------------------------------------------- */

static int bool_of(const char *value, int *got, char *why) {
  setenv("CJ_TEST_FLAG", value, 1);
  *got = -7;
  return cj_env_bool("CJ_TEST_FLAG", got, why, 256);
}

Test(env, booleans) {
  char why[256];
  int v;
  const char *on[] = {"1", "on", "ON", "yes", "Yes", "true", "TRUE"};
  const char *off[] = {"0", "off", "Off", "no", "NO", "false", "False"};
  for (size_t i = 0; i < 7; i++) {
    cr_expect_eq(bool_of(on[i], &v, why), CJ_ENV_SET, "%s", on[i]);
    cr_expect_eq(v, 1, "%s is on", on[i]);
    cr_expect_eq(bool_of(off[i], &v, why), CJ_ENV_SET, "%s", off[i]);
    cr_expect_eq(v, 0, "%s is off", off[i]);
  }
  const char *bad[] = {"2", "-1", "maybe", "1 ", " on", "truee", "o", "enabled"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(bool_of(bad[i], &v, why), CJ_ENV_BAD, "'%s' refused", bad[i]);
    cr_expect_eq(v, -7, "'%s' leaves the value alone", bad[i]);
    char want[64];
    snprintf(want, sizeof want, "CJ_TEST_FLAG='%s' is not understood", bad[i]);
    cr_expect(strstr(why, want) && strstr(why, "1, on, yes or true") &&
                  strstr(why, "0, off, no or false"),
              "%s", why);
  }
  cr_expect_eq(bool_of("", &v, why), CJ_ENV_UNSET, "empty is unset");
  unsetenv("CJ_TEST_FLAG");
  cr_expect_eq(cj_env_bool("CJ_TEST_FLAG", &v, why, sizeof why), CJ_ENV_UNSET);
}

Test(env, whole_numbers) {
  char why[256];
  unsigned long long n;
  struct {
    const char *text;
    int want;
    unsigned long long value;
  } cases[] = {{"1", CJ_ENV_SET, 1},
               {"1024", CJ_ENV_SET, 1024},
               {"007", CJ_ENV_SET, 7},
               {"0", CJ_ENV_BAD, 0},
               {"1025", CJ_ENV_BAD, 0},
               {"4abc", CJ_ENV_BAD, 0},
               {"abc", CJ_ENV_BAD, 0},
               {"+4", CJ_ENV_BAD, 0},
               {"-4", CJ_ENV_BAD, 0},
               {" 4", CJ_ENV_BAD, 0},
               {"4 ", CJ_ENV_BAD, 0},
               {"4.0", CJ_ENV_BAD, 0},
               {"0x10", CJ_ENV_BAD, 0},
               {"18446744073709551617", CJ_ENV_BAD, 0},
               {"99999999999999999999999999999", CJ_ENV_BAD, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("CJ_TEST_N", cases[i].text, 1);
    n = 12345;
    int got = cj_env_uint("CJ_TEST_N", 1, 1024, &n, why, sizeof why);
    cr_expect_eq(got, cases[i].want, "'%s': %d", cases[i].text, got);
    if (cases[i].want == CJ_ENV_SET)
      cr_expect_eq(n, cases[i].value, "'%s' is %llu", cases[i].text, n);
    else
      cr_expect(n == 12345 &&
                    strstr(why, "is not understood: it takes a whole number from 1 to 1024"),
                "'%s': %s", cases[i].text, why);
  }
  unsetenv("CJ_TEST_N");
}

Test(env, schedules) {
  char why[256];
  unsigned long long seed = 99;
  int drawn;
  struct {
    const char *text;
    int want;
  } cases[] = {{"forward", 0},    {"reverse", 1},    {"random", 2},    {"random:5", 2},
               {"revers", -1},    {"Reverse", -1},   {"random:", -1},  {"random:x", -1},
               {"random:-1", -1}, {"random: 5", -1}, {"forward ", -1}, {"random5", -1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("CUJIT_CPU_SCHEDULE", cases[i].text, 1);
    seed = 99;
    int got = cj_env_cpu_schedule(&seed, &drawn, why, sizeof why);
    cr_expect_eq(got, cases[i].want, "'%s': %d (%s)", cases[i].text, got, why);
    if (got < 0) cr_expect(strstr(why, "is not understood"), "%s", why);
  }
  setenv("CUJIT_CPU_SCHEDULE", "random:18446744073709551615", 1);
  cr_expect_eq(cj_env_cpu_schedule(&seed, &drawn, why, sizeof why), 2);
  cr_expect(seed == 18446744073709551615ULL && !drawn, "the seed given is taken: %llu", seed);
  setenv("CUJIT_CPU_SCHEDULE", "random", 1);
  seed = 99;
  cr_expect_eq(cj_env_cpu_schedule(&seed, &drawn, why, sizeof why), 2);
  cr_expect(seed == 99 && drawn, "a bare random keeps the caller's seed, to be told");
  setenv("CUJIT_CPU_SCHEDULE", "revers", 1);
  cj_env_cpu_schedule(&seed, &drawn, why, sizeof why);
  cr_expect(strstr(why, "forward, reverse or random, or random:SEED"), "%s", why);
  unsetenv("CUJIT_CPU_SCHEDULE");
  cr_expect_eq(cj_env_cpu_schedule(&seed, &drawn, why, sizeof why), 0, "unset: forward");
}
