/*
** test_cpu_signals.c -- the CPU device's crash handlers (cpu_pool.c) leave the application's own
** crashes as they were: once a kernel has run (which installs cujit's handlers for SIGSEGV,
** SIGBUS, SIGFPE and SIGILL), a fault outside any kernel goes to the handler the application had
** installed before (a plain one or an SA_SIGINFO one, told the faulting address), or, where it
** had none, takes the default action and ends the process by that signal, as without cujit. Each
** case runs in a child process (the default action must be free to kill it); the parent reads how
** the child ended. Inside a kernel, each of those signals is the kernel's fault, its message naming
** the signal and what it means. The signal that abandons a kernel (SIGRTMAX-2), once cujit's
** handler for it is installed, still reaches the application's own handler outside a kernel; with
** none, it still ends the process (a real-time signal's default action), and ignored, it is still
** ignored.
*/
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cujit.h"
#include "scratch.h"

/* A page the child may not touch: its write faults with SIGSEGV without being undefined
** behaviour (a null pointer's would be, and UBSan would stop the child first). */
static volatile int *volatile forbidden; /* set before the write: the handler reads it */

static void plain_handler(int sig) {
  _exit(sig == SIGSEGV ? 42 : 1);
}

static void info_handler(int sig, siginfo_t *info, void *context) {
  (void)context;
  _exit(sig == SIGSEGV && info && info->si_addr == (void *)forbidden ? 43 : 2);
}

enum { PLAIN, SIGINFO, DEFAULT, IGNORE };

/* In a child: the application's SIGSEGV disposition, then (with_kernel) a kernel run on the CPU
** device, then a write to a page it may not touch, outside any kernel. Returns the wait status. */
static int child_fault(int disposition, int with_kernel) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (disposition == PLAIN) sa.sa_handler = plain_handler;
    if (disposition == SIGINFO) sa.sa_sigaction = info_handler, sa.sa_flags = SA_SIGINFO;
    if (disposition == DEFAULT) sa.sa_handler = SIG_DFL;
    if (sigaction(SIGSEGV, &sa, NULL) != 0) _exit(90);
    cujit_engine *e = NULL;
    cujit_kernel *k = NULL;
    cujit_buffer *b = NULL;
    if (with_kernel) {
      cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
      c.grid[0] = 2, c.block[0] = 32;
      if (cujit_open(&e) != CUJIT_OK || cujit_set_device(e, CUJIT_DEVICE_CPU) != CUJIT_OK ||
          cujit_kernel_define(e, "one(int *x)", "x[blockIdx.x * blockDim.x + threadIdx.x] = 1;",
                              NULL, NULL, &k) != CUJIT_OK ||
          cujit_buffer_alloc(e, 64 * 4, CUJIT_I32, &b) != CUJIT_OK)
        _exit(91);
      cujit_arg a[] = {CUJIT_ARG_BUF(b)};
      int back[64] = {0};
      if (cujit_launch(k, &c, a, 1) != CUJIT_OK ||
          cujit_memcpy_dtoh(back, b, 0, sizeof back, NULL) != CUJIT_OK || back[33] != 1)
        _exit(92);
      /* the engine stays open: its workers and handlers live on */
    }
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) _exit(93);
    forbidden = page;
    *forbidden = 1;
    _exit(0); /* a handler that returned without fixing anything */
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return status;
}

static void expect_exit(int status, int code, const char *what) {
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == code, "%s: the child %s %d, want exit %d",
            what, WIFEXITED(status) ? "exited" : "was killed by signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), code);
}

Test(cpu_signals, a_plain_handler_of_the_application_still_gets_its_faults) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  expect_exit(child_fault(PLAIN, 0), 42, "without cujit");
  expect_exit(child_fault(PLAIN, 1), 42, "after a CPU-device kernel");
}

Test(cpu_signals, an_siginfo_handler_of_the_application_still_gets_its_faults) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  expect_exit(child_fault(SIGINFO, 0), 43, "without cujit");
  expect_exit(child_fault(SIGINFO, 1), 43, "after a CPU-device kernel");
}

Test(cpu_signals, without_a_handler_a_fault_still_ends_the_process_by_its_signal) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  for (int with_kernel = 0; with_kernel < 2; with_kernel++) {
    int status = child_fault(DEFAULT, with_kernel);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
              "%s: the child %s %d, want killed by SIGSEGV (%d)",
              with_kernel ? "after a CPU-device kernel" : "without cujit",
              WIFEXITED(status) ? "exited" : "was killed by signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), SIGSEGV);
  }
}

/* Inside a kernel each signal the handlers catch is that kernel's fault, named by the signal and
** what it means: SIGILL from an illegal instruction, and SIGBUS and SIGFPE sent to the thread (the
** divisions the GPU defines are resumed with its values, test_cpu_divide); the device works again
** after a reset. */
Test(cpu_signals, each_signal_inside_a_kernel_is_its_fault_named) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cujit_engine *e = NULL;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cr_assert_eq(cujit_set_device(e, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_device *dev = NULL;
  cr_assert_eq(cujit_current_device(e, &dev), CUJIT_OK);
  static const struct {
    const char *body, *says;
  } cases[] = {
      {"if (threadIdx.x == 3) __builtin_trap();", "with SIGILL, an illegal instruction"},
      {"if (threadIdx.x == 3) raise(SIGBUS);", "with SIGBUS, a misaligned or unmapped access"},
      {"if (threadIdx.x == 3) raise(SIGFPE);",
       "with SIGFPE, an integer division by zero or overflow"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char name[32], source[512];
    snprintf(name, sizeof name, "sig%zu", i);
    snprintf(
        source, sizeof source,
        "#include <signal.h>\nextern \"C\" __global__ void %s(int *x) {\n  %s\n  x[threadIdx.x] = "
        "1;\n}\n",
        name, cases[i].body);
    cujit_program *p = NULL;
    cr_assert_eq(cujit_program_compile(e, source, NULL, NULL, &p), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_kernel *k = NULL;
    cr_assert_eq(cujit_program_kernel(p, name, &k), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_buffer *b = NULL;
    cr_assert_eq(cujit_buffer_alloc(e, 32 * 4, CUJIT_I32, &b), CUJIT_OK);
    cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
    c.grid[0] = 1, c.block[0] = 32;
    cujit_arg a[] = {CUJIT_ARG_BUF(b)};
    cujit_status st = cujit_launch(k, &c, a, 1);
    if (st == CUJIT_OK) st = cujit_device_synchronize(dev);
    cr_expect_eq(st, CUJIT_ERROR_DEVICE_FAULT, "%s: %s", cases[i].body, cujit_errmsg(e));
    char want[96];
    snprintf(want, sizeof want, "kernel '%s' crashed on the CPU device", name);
    cr_expect(strstr(cujit_errmsg(e), want), "%s", cujit_errmsg(e));
    cr_expect(strstr(cujit_errmsg(e), cases[i].says), "%s: %s", cases[i].says, cujit_errmsg(e));
    cr_expect(strstr(cujit_errmsg(e), "thread (3,0,0)"), "the thread named: %s", cujit_errmsg(e));
    cr_assert_eq(cujit_device_reset(dev), CUJIT_OK, "%s", cujit_errmsg(e));
    cujit_kernel_free(k);
    cujit_program_free(p);
  }
  cujit_close(e);
}

/* --- the abandon signal (SIGRTMAX-2, cpu_pool.c) -------------------------------------------- */

static volatile sig_atomic_t abandon_got;

static void abandon_plain(int sig) {
  abandon_got = sig;
}

static void abandon_info(int sig, siginfo_t *info, void *context) {
  (void)context;
  abandon_got = info && info->si_signo == sig ? sig : -1;
}

/* In a child: the application's disposition for SIGRTMAX-2 (a handler, the default, or ignored),
** then a kernel that never ends, abandoned by a reset (which installs cujit's handler in its
** place), then the signal sent to the main thread, outside any kernel. Exits 44 when the
** application's handler got it, 45 when the child went on without a handler getting it, 70 when
** the reset abandoned nothing (cujit's handler not installed: the check would prove nothing). */
static int child_abandon(int disposition) {
  fflush(NULL);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    const int sig = SIGRTMAX - 2;
    struct sigaction sa, now;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (disposition == PLAIN) sa.sa_handler = abandon_plain;
    if (disposition == SIGINFO) sa.sa_sigaction = abandon_info, sa.sa_flags = SA_SIGINFO;
    if (disposition == DEFAULT) sa.sa_handler = SIG_DFL;
    if (disposition == IGNORE) sa.sa_handler = SIG_IGN;
    if (sigaction(sig, &sa, NULL) != 0) _exit(90);
    cujit_engine *e = NULL;
    cujit_kernel *k = NULL;
    cujit_buffer *b = NULL;
    cujit_device *dev = NULL;
    cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
    c.grid[0] = 1, c.block[0] = 1;
    if (cujit_open(&e) != CUJIT_OK || cujit_set_device(e, CUJIT_DEVICE_CPU) != CUJIT_OK ||
        cujit_current_device(e, &dev) != CUJIT_OK ||
        cujit_kernel_define(e, "forever(volatile int *x)", "while (x[0] == 0) x[1]++;", NULL, NULL,
                            &k) != CUJIT_OK ||
        cujit_buffer_alloc(e, 64, CUJIT_I32, &b) != CUJIT_OK ||
        cujit_memset(b, 0, 0, 64, NULL) != CUJIT_OK)
      _exit(91);
    cujit_arg a[] = {CUJIT_ARG_BUF(b)};
    if (cujit_launch(k, &c, a, 1) != CUJIT_OK) _exit(92);
    /* the CPU device's memory is the host's: wait until the kernel counts, up to 20 s */
    volatile int *seen = (volatile int *)(uintptr_t)cujit_buffer_devptr(b);
    for (int i = 0; i < 2000 && seen[1] == 0; i++) usleep(10 * 1000);
    if (seen[1] == 0) _exit(95);
    if (cujit_device_reset(dev) != CUJIT_OK) _exit(93);
    if (sigaction(sig, NULL, &now) != 0) _exit(94);
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == abandon_info) _exit(70);
    if (!(now.sa_flags & SA_SIGINFO) &&
        (now.sa_handler == abandon_plain || now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN))
      _exit(70);
    abandon_got = 0;
    raise(sig);
    _exit(abandon_got == sig ? 44 : abandon_got == 0 ? 45 : 3);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return status;
}

Test(cpu_signals, the_abandon_signal_outside_a_kernel_reaches_the_applications_handler) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  expect_exit(child_abandon(PLAIN), 44, "a plain handler");
  expect_exit(child_abandon(SIGINFO), 44, "an SA_SIGINFO handler");
}

Test(cpu_signals, the_abandon_signal_outside_a_kernel_keeps_the_default_action_or_is_ignored) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  int status = child_abandon(DEFAULT);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGRTMAX - 2,
            "no handler: the child %s %d, want killed by SIGRTMAX-2 (%d), as without cujit",
            WIFEXITED(status) ? "exited" : "was killed by signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), SIGRTMAX - 2);
  expect_exit(child_abandon(IGNORE), 45, "the signal ignored");
}
