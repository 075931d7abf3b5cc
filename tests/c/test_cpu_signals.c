/*
** test_cpu_signals.c -- the CPU device's crash handlers take only the faults of its own kernels.
** Once the device has run a kernel its handlers for SIGSEGV and the like stay installed for the
** process; a fault in the program's own code afterwards must reach the handler the program had
** before, or kill the process as it would have without cujit (never be swallowed, never loop).
** Each test runs in a process of its own (Criterion's). Needs g++ only.
*/
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"

/* Runs one kernel on the CPU device (its queue thread starts and installs the handlers), checks
** its result, and closes the engine: what the test does next is the program's own code. */
static void run_a_kernel_and_close(void) {
  cujit_engine *engine;
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cpu_signals"), 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  EXPECT_OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, "ones(int *y)", "y[threadIdx.x] = 1;", NULL, NULL, &k));
  cujit_buffer *y;
  EXPECT_OK(cujit_buffer_alloc(engine, 32 * sizeof(int), CUJIT_I32, &y));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 32;
  cujit_arg a[] = {CUJIT_ARG_BUF(y)};
  EXPECT_OK(cujit_launch(k, &cfg, a, 1));
  int got[32] = {0};
  EXPECT_OK(cujit_memcpy_dtoh(got, y, 0, sizeof got, NULL));
  for (int i = 0; i < 32; i++) cr_assert_eq(got[i], 1, "y[%d] = %d", i, got[i]);
  cujit_buffer_free(y);
  cujit_kernel_free(k);
  cujit_close(engine);
  cj_scratch_remove();
}

/* A page no one may touch: a real SIGSEGV at a known address, which no sanitizer reports first
** (a store through NULL is UndefinedBehaviorSanitizer's). */
static void *forbidden;

static void fault_here(void) {
  forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(forbidden, MAP_FAILED);
  *(volatile int *)forbidden = 7;
}

static void programs_handler(int sig, siginfo_t *info, void *context) {
  (void)context;
  _exit(sig == SIGSEGV && info && info->si_addr == forbidden ? 42 : 43);
}

Test(cpu_signals, a_fault_outside_a_kernel_reaches_the_programs_own_handler, .exit_code = 42,
     .timeout = 60) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = programs_handler;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
  run_a_kernel_and_close();
  struct sigaction now;
  cr_assert_eq(sigaction(SIGSEGV, NULL, &now), 0);
  cr_assert_neq(now.sa_sigaction, programs_handler, "cujit's handler is installed over it");
  fault_here();
  cr_assert_fail("the fault outside a kernel was swallowed");
}

Test(cpu_signals, a_fault_outside_a_kernel_kills_as_without_cujit, .signal = SIGSEGV,
     .timeout = 60) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL; /* a sanitizer's own handler, if any, out of the way */
  sigemptyset(&sa.sa_mask);
  cr_assert_eq(sigaction(SIGSEGV, &sa, NULL), 0);
  run_a_kernel_and_close();
  fault_here();
  cr_assert_fail("the fault outside a kernel was swallowed");
}
