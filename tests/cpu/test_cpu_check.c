/*
** test_cpu_check.c -- the CPU device's check build: kernels compiled with AddressSanitizer and
** UBSan. The parent builds the shared object once; each case runs in a child process (this same
** program with --check-child, the sanitizer runtime preloaded, as an instrumented object needs)
** whose exit status and report are checked: a clean barrier-and-shuffle kernel runs with no
** report (the fiber switches are announced to the sanitizer), and an out-of-bounds store, in plain
** mode and in fiber mode, is reported with the kernel, block, thread and line of its body; so is
** a signed overflow (UBSan).
*/
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int check_mode_tests(const char *self, const char *so, const char *which);

#define KERNEL(name, params, body)                                                                 \
  "#line 1 \"" name ":signature\"\nextern \"C\" __global__ void " name "(" params ") {\n"          \
  "#line 1 \"" name "\"\n" body "\n}\n"

static const char *const NAMES[] = {"clean", "oob", "oob_fiber", "ub"};
// clang-format off
static const char SRC[] =
    "#include <cujit/reduce.h>\n"
    KERNEL("clean", "const int *x, long long *out, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  long long v = i < n ? x[i] : 0;\n"
           "  v = cujit::block_sum(v);\n"
           "  if (threadIdx.x == 0) atomicAdd((unsigned long long *)out, (unsigned long long)v);")
    KERNEL("oob", "int *y, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i <= n) y[i] = 1;")
    KERNEL("oob_fiber", "int *y, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  __syncthreads();\n"
           "  if (i <= n) y[i] = 2;")
    KERNEL("ub", "int *y, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i == 700) y[i] = n * 3000000;");
// clang-format on

/* The child: one case, on the instrumented object; its exit status and output are the result. */
static int child(const char *so, const char *which) {
  char err[8192];
  cpu_module *m = cpu_open(so, err, sizeof err);
  if (!m) {
    printf("child: %s\n", err);
    return 3;
  }
  int n = 1000, *y = malloc(n * sizeof *y), *x = malloc(n * sizeof *x);
  long long out = 0, *po = &out;
  for (int i = 0; i < n; i++) x[i] = i + 1;
  void *clean_args[] = {&x, &po, &n}, *oob_args[] = {&y, &n};
  cpu_launch_opts o = {{4, 1, 1}, {256, 1, 1}, 0, 0, 0};
  int clean = strcmp(which, "clean") == 0;
  if (cpu_launch(m, which, &o, clean ? clean_args : oob_args, err, sizeof err) != 0) {
    printf("child: launch failed: %s\n", err);
    return 4;
  }
  if (clean && out != (long long)n * (n + 1) / 2) {
    printf("child: clean sum %lld\n", out);
    return 5;
  }
  free(x), free(y);
  cpu_unload(m);
  return 0;
}

static int run_child(const char *self, const char *so, const char *which, char *out, size_t len,
                     int *status) {
  char cmd[2048], preload[512] = "";
  FILE *p = popen("g++ -print-file-name=libasan.so", "r");
  if (!p || !fgets(preload, sizeof preload, p)) return -1;
  pclose(p);
  preload[strcspn(preload, "\n")] = '\0';
  /* UBSAN_OPTIONS is set, not inherited: the sanitizer suite's halt_on_error=1 would end the child
  ** inside UBSan's recoverable handler, before the check build's own line naming the thread. */
  snprintf(cmd, sizeof cmd,
           "LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 %s "
           "--check-child %s %s 2>&1",
           preload, self, so, which);
  p = popen(cmd, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  *status = pclose(p);
  return 0;
}

int check_mode_tests(const char *self, const char *so, const char *which) {
  if (!self) return child(so, which);
  static char err[65536];
  char lib[512];
  int failures = 0, status;
  if (cpu_build(SRC, NAMES, 4, 1, lib, sizeof lib, err, sizeof err) != 0) {
    printf("FAIL check build: %s\n", err);
    return 1;
  }
  static const struct {
    const char *kernel;
    int fails;
    const char *texts[3];
  } cases[] = {
      {"clean", 0, {NULL}},
      {"oob",
       1,
       {"heap-buffer-overflow",
        "cujit: the report above is from kernel 'oob': block (3,0,0) thread (232,0,0)",
        "line 2 of its body"}},
      {"oob_fiber",
       1,
       {"heap-buffer-overflow",
        "cujit: the report above is from kernel 'oob_fiber': block (3,0,0) thread (232,0,0)",
        "line 3 of its body"}},
      {"ub",
       1,
       {"ub:2", "runtime error: signed integer overflow",
        "cujit: the report above is from kernel 'ub': block (2,0,0) thread (188,0,0)"}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (run_child(self, lib, cases[c].kernel, err, sizeof err, &status) != 0) {
      printf("FAIL check mode %s: cannot run the child\n", cases[c].kernel);
      failures++;
      continue;
    }
    int failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    int ok = failed == cases[c].fails;
    for (int k = 0; k < 3 && cases[c].texts[k]; k++) ok = ok && strstr(err, cases[c].texts[k]);
    if (!ok) {
      printf("FAIL check mode %s (status %d): output\n%s\n", cases[c].kernel, status, err);
      failures++;
    }
  }
  remove(lib);
  return failures;
}
