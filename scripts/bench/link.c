/*
** link.c -- the `link` case (issue 25): a new process compiling a kernel it has never compiled
** (cold) against a device library already in the disk cache as LTO-IR (kernels/linklib.cu through
** the `link` option), beside a new process compiling the same kernel with the library's text in
** front of it (a full compile, what a user without link= does); and, with a GPU, the kernel's run
** time linked and compiled whole. Needs NVRTC and nvJitLink; without a GPU it compiles for the
** arch given (default sm_90) and the run-time rows are missing.
**   usage: cujit_bench_link KERNELS_DIR [processes, default 5] [arch, default: the GPU's, else
*sm_90]
** Each figure is the median over `processes` new processes (this program run again, each with a
** kernel of its own: a counter in its text), each timing cujit_open to the kernel ready (compiled,
** and with a GPU loaded and launched once). Variants: `linked` and `whole` for a kernel calling
** three library functions (link-time optimisation drops the rest), `linked_all` and `whole_all`
** for one calling the library's dispatcher (every function reachable); `linked_arch` and
** `whole_arch` as `linked` and `whole` with the device's arch given (what a user who names it
** gets: no device query before the compile, so the driver starts beside it instead of before it);
** `library` the library's own first compile to LTO-IR; `run_linked` and `run_whole` the kernel's
** time, us per launch.
*/
#include "common.h"

#include "cujit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernels, each made new by `nonce`; `all` calls the dispatcher. */
static void kernel_text(char *buf, size_t len, int all, long nonce) {
  snprintf(buf, len,
           "extern __device__ float lib_eval(float x, int k);\n"
           "extern __device__ float lib_poly3(float x);\n"
           "extern __device__ float lib_normal(unsigned seed, unsigned index);\n"
           "extern __device__ float lib_tile32_sum(float v);\n"
           "extern \"C\" __global__ void use(float *y, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i >= n) return;\n"
           "  float v = y[i] + %ld.0f;\n"
           "  %s\n"
           "}\n",
           nonce,
           all ? "y[i] = lib_eval(v, i);"
               : "y[i] = lib_tile32_sum(lib_poly3(v) + lib_normal(7u, (unsigned)i));");
}

/* The run-time figure's kernel: a loop over a light library function (inlined by link-time
** optimisation as by a whole compile) and a heavier one. */
static const char *run_kernel =
    "extern __device__ float lib_step(float x, float a);\n"
    "extern __device__ float lib_poly3(float x);\n"
    "extern \"C\" __global__ void run(float *y, int n, int iters) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  float v = y[i];\n"
    "  for (int k = 0; k < iters; k++) v = lib_step(v, 0.5f) + 0.01f * lib_poly3(v);\n"
    "  y[i] = v;\n"
    "}\n";

static int has_gpu(cujit_engine *e) {
  cujit_device *d;
  return cujit_device_get(e, 0, &d) == CUJIT_OK;
}

/* Compiles `source` (with the library linked, or its text in front) and, with a GPU, launches its
** kernel once; the time from cujit_open, ms, or a negative number (message on stderr). With
** `arch_given` the arch is named and the device asked for only after the compile. */
static double child(const char *lib_path, const char *arch, int linked, int arch_given,
                    const char *source) {
  double t0 = bench_now_us();
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return -1;
  int gpu = arch_given ? 0 : has_gpu(e);
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = gpu ? NULL : arch;
  const char *files[] = {lib_path};
  char *whole = NULL;
  if (linked) {
    o.link = files, o.link_count = 1;
  } else {
    char *lib = bench_read_file(lib_path);
    size_t n = lib ? strlen(lib) + strlen(source) + 2 : 0;
    if (!lib || !(whole = malloc(n))) return -1;
    snprintf(whole, n, "%s\n%s", lib, source);
    free(lib);
  }
  cujit_program *p;
  if (cujit_program_compile(e, linked ? source : whole, "use.cu", &o, &p) != CUJIT_OK) {
    fprintf(stderr, "cujit_bench_link: %s\n", cujit_errmsg(e));
    return -1;
  }
  if (arch_given) gpu = has_gpu(e);
  if (gpu) {
    cujit_kernel *k;
    cujit_buffer *y;
    cujit_device *d;
    cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
    cfg.grid[0] = 1, cfg.block[0] = 32;
    if (cujit_program_kernel(p, "use", &k) != CUJIT_OK ||
        cujit_buffer_alloc(e, 32 * sizeof(float), CUJIT_F32, &y) != CUJIT_OK)
      return -1;
    cujit_arg args[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_I(32)};
    if (cujit_launch(k, &cfg, args, 2) != CUJIT_OK || cujit_current_device(e, &d) != CUJIT_OK ||
        cujit_device_synchronize(d) != CUJIT_OK)
      return -1;
  }
  double ms = (bench_now_us() - t0) / 1000;
  free(whole);
  return ms;
}

/* The run-time rows: `run` linked and whole, us per launch over 2^24 elements (median of 7). */
static void run_time(const char *lib_path) {
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK || !has_gpu(e)) {
    bench_missing("link", "cujit_c", "run_linked", 0, "no GPU");
    bench_missing("link", "cujit_c", "run_whole", 0, "no GPU");
    return;
  }
  enum { N = 1 << 24, REPS = 7, LAUNCHES = 20 };
  double us[2][REPS];
  cujit_buffer *y;
  cujit_device *d;
  if (cujit_buffer_alloc(e, (size_t)N * sizeof(float), CUJIT_F32, &y) != CUJIT_OK ||
      cujit_current_device(e, &d) != CUJIT_OK)
    return;
  for (int linked = 1; linked >= 0; linked--) {
    cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
    const char *files[] = {lib_path};
    char *text = NULL, *lib = NULL;
    if (linked)
      o.link = files, o.link_count = 1;
    else if ((lib = bench_read_file(lib_path)) &&
             (text = malloc(strlen(lib) + strlen(run_kernel) + 2)))
      sprintf(text, "%s\n%s", lib, run_kernel);
    cujit_program *p;
    cujit_kernel *k;
    if (cujit_program_compile(e, linked ? run_kernel : text, "run.cu", &o, &p) != CUJIT_OK ||
        cujit_program_kernel(p, "run", &k) != CUJIT_OK) {
      fprintf(stderr, "cujit_bench_link: %s\n", cujit_errmsg(e));
      return;
    }
    cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
    cfg.grid[0] = N / 256, cfg.block[0] = 256;
    cujit_arg args[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_I(N), CUJIT_ARG_I(64)};
    for (int r = -1; r < REPS; r++) { /* one warm-up */
      double t0 = bench_now_us();
      for (int l = 0; l < LAUNCHES; l++) cujit_launch(k, &cfg, args, 3);
      cujit_device_synchronize(d);
      if (r >= 0) us[linked][r] = (bench_now_us() - t0) / LAUNCHES;
    }
    free(text), free(lib);
  }
  bench_row("link", "cujit_c", "run_linked", N, bench_median(us[1], REPS), "us");
  bench_row("link", "cujit_c", "run_whole", N, bench_median(us[0], REPS), "us");
  printf("kernel run time: linked %.1f us, whole %.1f us per launch\n", bench_median(us[1], REPS),
         bench_median(us[0], REPS));
}

/* The timed variants, each a child mode (the header comment says what each is). */
static const char *const modes[] = {"linked",    "whole",       "linked_all",
                                    "whole_all", "linked_arch", "whole_arch"};
#define MODES (sizeof modes / sizeof *modes)

/* This program again, in a new process: its one line, the time in ms. */
static double spawn(const char *self, const char *mode, const char *kernels, const char *arch,
                    long nonce) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' --child %s '%s' %s %ld", self, mode, kernels, arch, nonce);
  FILE *f = popen(cmd, "r");
  double ms = -1;
  if (f) {
    if (fscanf(f, "%lf", &ms) != 1) ms = -1;
    pclose(f);
  }
  return ms;
}

int main(int argc, char **argv) {
  char lib_path[2048], source[2048];
  if (argc >= 6 && !strcmp(argv[1], "--child")) { /* --child MODE KERNELS ARCH NONCE */
    const char *mode = argv[2];
    snprintf(lib_path, sizeof lib_path, "%s/linklib.cu", argv[3]);
    kernel_text(source, sizeof source, strstr(mode, "_all") != NULL, atol(argv[5]));
    printf("%.3f\n", child(lib_path, argv[4], !strncmp(mode, "linked", 6),
                           strstr(mode, "_arch") != NULL, source));
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: cujit_bench_link KERNELS_DIR [processes] [arch]\n");
    return 2;
  }
  const char *kernels = argv[1];
  int procs = argc > 2 ? atoi(argv[2]) : 5;
  char arch[32] = "sm_90"; /* given, else the GPU's, else sm_90 */
  if (argc > 3) {
    snprintf(arch, sizeof arch, "%s", argv[3]);
  } else {
    cujit_engine *e;
    cujit_device *d;
    if (cujit_open(&e) == CUJIT_OK) {
      char got[32];
      if (cujit_device_get(e, 0, &d) == CUJIT_OK &&
          cujit_device_arch(d, got, sizeof got) == CUJIT_OK && !strncmp(got, "sm_", 3))
        snprintf(arch, sizeof arch, "%s", got);
      cujit_close(e);
    }
  }
  if (procs < 1) procs = 1;
  snprintf(lib_path, sizeof lib_path, "%s/linklib.cu", kernels);
  char self[2048];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = '\0';
  /* A cache of its own, empty: the library's first compile is cold, every later one warm. */
  char cache[1024];
  const char *tmp = getenv("TMPDIR");
  snprintf(cache, sizeof cache, "%s/cujit-bench-link-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(cache)) return 1;
  setenv("CUJIT_CACHE_DIR", cache, 1);
  long nonce = (long)getpid() * 1000;
  double lib_ms = spawn(self, "linked", kernels, arch, nonce++); /* the library's LTO-IR, cold */
  if (lib_ms < 0) {
    bench_missing("link", "cujit_c", "library", 0, "the first linked compile failed (see stderr)");
    for (size_t m = 0; m < MODES; m++)
      bench_missing("link", "cujit_c", modes[m], 0, "the first linked compile failed (see stderr)");
    snprintf(self, sizeof self, "rm -rf '%s'", cache);
    return system(self) == 0 ? 0 : 1;
  }
  bench_row("link", "cujit_c", "library", 1, lib_ms, "ms");
  printf("library to LTO-IR + first kernel linked: %.1f ms\n", lib_ms);
  for (size_t m = 0; m < MODES; m++) {
    double *ms = malloc((size_t)procs * sizeof *ms);
    int got = 0;
    for (int i = 0; ms && i < procs; i++) {
      double t = spawn(self, modes[m], kernels, arch, nonce++);
      if (t >= 0) ms[got++] = t;
    }
    if (got == 0) {
      bench_missing("link", "cujit_c", modes[m], 0, "every process failed (see stderr)");
    } else {
      double med = bench_median(ms, got);
      bench_row("link", "cujit_c", modes[m], got, med, "ms");
      printf("%-10s median %8.1f ms over %d new processes\n", modes[m], med, got);
    }
    free(ms);
  }
  run_time(lib_path);
  snprintf(self, sizeof self, "rm -rf '%s'", cache);
  return system(self) == 0 ? 0 : 1;
}
