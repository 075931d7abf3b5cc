/*
** compile.c -- case "compile" (issue 25): what compiling costs, cujit's own ways of making it cost
** less, each beside the plain way in the same run. Prints one line and one results.csv row per
** figure (case "compile"; ms, medians):
**   many      eight independent programs compiled at once (cujit_program_compile_many, threads:
**             CUJIT_COMPILE_THREADS else the cores) against one after another (the same call with
**             CUJIT_COMPILE_THREADS=1): variants many8_parallel (NVRTC's compiles in worker
**             processes beside the process's own), many8_parallel_noworkers
**             (CUJIT_NVRTC_WORKER=off: in the process alone), many8_serial, and
**             many8_parallel_first (the first round, its workers started in it); with an arch
**             other than sm_90, _ARCH after them: many8_parallel_cpu for the CPU device's g++;
**   many-heavy  the same, each program including <cooperative_groups.h> (heavy8_*; with
**             CUJIT_PCH=off, heavy8_nopch_*: one after another then pays the whole front end
**             each time, as the worker processes do);
**   heavy-floor  the machine's own floor for many-heavy with PCH: NVRTC alone (no cujit) in eight
**             processes, each having made its PCH (--pch, a directory of its own) with an untimed
**             compile, each compiling one new heavy text at once (heavy8_nvrtc_parallel, system
**             nvrtc), against one such process compiling eight one after another
**             (heavy8_nvrtc_serial): what independent processes with a PCH each get from this
**             machine's cores, which cujit's worker processes are;
**   minimal   a small kernel (cujit_kernel_define) with NVRTC's -minimal, as cujit now compiles
**             it, and with CUJIT_MINIMAL=off: minimal_on, minimal_off;
**   cpu-prelude  the CPU device's compile of a new text with its precompiled prelude, kept in
**             the disk cache (CUJIT_CACHE_DIR: this figure turns the cache on), and without
**             (CUJIT_PCH=off): cpu_prelude_on, cpu_prelude_off, and cpu_prelude_make (the
**             compile that makes it);
**   first-cujit, first-cujit-device, first-nvrtc, first-driver
**             ONE figure per process (run.sh runs several processes and takes the median): a
**             trivial kernel's first compile of a process, from main() until the program is
**             compiled and the driver is started (cuInit, device 0). first_cujit: the arch given
**             (--arch), so the compile starts at once and the driver starts beside it on its own
**             thread (cujit_current_device then waits for it); first_cujit_device_first: no arch,
**             so the device is asked first and the compile follows; first_nvrtc (system nvrtc):
**             NVRTC alone, which NVRTC 13 starts the driver inside, then cuInit and cuDeviceGet;
**             first_driver (system raw): cuInit and cuDeviceGet alone, nothing compiled: the
**             floor of first_cujit, whose compile runs beside them.
** Every compile is a real one: the disk cache off (CUJIT_CACHE=off, but for cpu-prelude) and each
*text made new with
** the process id and a counter, so neither cujit's caches nor NVRTC's own can answer.
**   usage: cujit_bench_compile [--short] [--arch ARCH]
*many|many-heavy|heavy-floor|minimal|cpu-prelude|first-cujit|first-cujit-device|
**                              first-nvrtc|first-driver
*/
#include "common.h"

#include "cujit.h"

#include <nvrtc.h>

#include <dlfcn.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CASE "compile"
#define MANY 8

static int counter; /* makes every text new */

/* A kernel of some substance (a loop, a device function, a reduction step), new each call. */
static void kernel_text(char *buf, size_t len, const char *name) {
  snprintf(
      buf, len,
      "// %ld %d\n"
      "__device__ float poly_%s(float x) { return ((0.5f * x + 1.0f) * x - 2.0f) * x + 3.0f; }\n"
      "extern \"C\" __global__ void %s(const float *x, float *y, int n, float a) {\n"
      "  __shared__ float part[256];\n"
      "  float s = 0.0f;\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
      "    s += a * poly_%s(x[i]) + sinf(x[i]);\n"
      "  part[threadIdx.x] = s;\n"
      "  __syncthreads();\n"
      "  for (int k = blockDim.x / 2; k > 0; k /= 2) {\n"
      "    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];\n"
      "    __syncthreads();\n"
      "  }\n"
      "  if (threadIdx.x == 0) y[blockIdx.x] = part[0];\n"
      "}\n",
      (long)getpid(), counter++, name, name, name);
}

/* One figure of `system` (cujit_c, nvrtc, raw): a line and a CSV row; `detail` holds no comma
** (it is the row's last field). */
static void row_of(const char *system, const char *variant, const char *arch, double *ms, int n,
                   const char *detail) {
  int other = strcmp(arch, "sm_90") != 0;
  char v[64];
  snprintf(v, sizeof v, "%s%s%s", variant, other ? "_" : "", other ? arch : "");
  double median = bench_median(ms, n);
  printf("%-28s %9.2f ms  (median of %d; %s)\n", v, median, n, detail);
  printf(CASE ",%s,%s,%d,%.6g,ms,ok,median of %d; %s\n", system, v, n, median, n, detail);
}

static void row(const char *variant, const char *arch, double *ms, int n, const char *detail) {
  row_of("cujit_c", variant, arch, ms, n, detail);
}

/* The ways of `many`: one after another, at once (NVRTC's in worker processes beside the
** process's own: compile/remote.h), and at once in the process alone (CUJIT_NVRTC_WORKER=off, as
** before the workers: NVRTC ran them one at a time). */
enum { SERIAL, AT_ONCE, AT_ONCE_HERE, WAYS };
static const char *const way_name[WAYS] = {"serial", "parallel", "parallel_noworkers"};

/* One round of `way`: eight new texts compiled by one cujit_program_compile_many, in ms (< 0
** failed). `heavy`: each text includes <cooperative_groups.h>, as real kernels do. */
static double many_round(cujit_engine *e, const cujit_compile_options *o, int way, int heavy) {
  static char texts[MANY][2400];
  const char *srcs[MANY];
  const cujit_compile_options *opts[MANY];
  cujit_program *progs[MANY];
  for (int i = 0; i < MANY; i++) {
    char name[32];
    snprintf(name, sizeof name, "k%d", i);
    int at = heavy ? snprintf(texts[i], sizeof texts[i],
                              "#include <cooperative_groups.h>\n"
                              "namespace cg = cooperative_groups;\n")
                   : 0;
    kernel_text(texts[i] + at, sizeof texts[i] - (size_t)at, name);
    srcs[i] = texts[i], opts[i] = o;
  }
  const char *threads = getenv("CUJIT_COMPILE_THREADS");
  char *kept = threads ? strdup(threads) : NULL;
  if (way == SERIAL) setenv("CUJIT_COMPILE_THREADS", "1", 1);
  double t0 = bench_now_us();
  cujit_status st = cujit_program_compile_many(e, MANY, srcs, NULL, opts, progs, NULL);
  double ms = (bench_now_us() - t0) / 1000;
  kept ? setenv("CUJIT_COMPILE_THREADS", kept, 1) : unsetenv("CUJIT_COMPILE_THREADS");
  free(kept);
  for (int i = 0; i < MANY; i++) cujit_program_free(progs[i]);
  return st == CUJIT_OK ? ms : -1;
}

static int many(const char *arch, int reps, int heavy) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  double ms[WAYS][16], first = 0;
  const char *threads = getenv("CUJIT_COMPILE_THREADS");
  char detail[160];
  snprintf(detail, sizeof detail, "%d programs%s; threads: %s; cores: %ld; PCH: %s", MANY,
           heavy ? " including cooperative_groups.h" : "",
           threads && *threads ? threads : "the cores", sysconf(_SC_NPROCESSORS_ONLN),
           getenv("CUJIT_PCH") ? getenv("CUJIT_PCH") : "auto");
  cujit_engine *e[2]; /* [0] with workers, [1] without: the pool reads the variable once */
  setenv("CUJIT_NVRTC_WORKER", "off", 1);
  if (cujit_open(&e[1]) != CUJIT_OK) return 1;
  unsetenv("CUJIT_NVRTC_WORKER");
  if (cujit_open(&e[0]) != CUJIT_OK) return 1;
  int failed = 0;
  const char *pch = getenv("CUJIT_PCH");
  const char *prefix = !heavy ? "many8_" : pch && !strcmp(pch, "off") ? "heavy8_nopch_" : "heavy8_";
  for (int r = 0; r < reps && !failed; r++)
    for (int k = 0; k < WAYS && !failed; k++) { /* rotated, so drift touches every way alike */
      int way = (k + r) % WAYS;
      if (way == AT_ONCE_HERE) setenv("CUJIT_NVRTC_WORKER", "off", 1);
      double t = many_round(e[way == AT_ONCE_HERE], &o, way, heavy);
      unsetenv("CUJIT_NVRTC_WORKER");
      if (t < 0) {
        char v[64];
        snprintf(v, sizeof v, "%s%s", prefix, way_name[way]);
        bench_missing(CASE, "cujit_c", v, MANY, cujit_errmsg(e[way == AT_ONCE_HERE]));
        failed = 1;
      }
      if (way == AT_ONCE && first == 0) first = t; /* its workers started in this round */
      ms[way][r] = t;
    }
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e[0], &s);
  for (int way = 0; way < WAYS && !failed; way++) {
    char v[64], d[320];
    snprintf(v, sizeof v, "%s%s", prefix, way_name[way]);
    snprintf(d, sizeof d, "%s%s", detail,
             way == AT_ONCE ? "; workers kept from the first round" : "");
    row(v, arch, ms[way], reps, d);
  }
  if (!failed) {
    char v[64], d[320];
    snprintf(v, sizeof v, "%sparallel_first", prefix);
    snprintf(d, sizeof d,
             "%s; the first round: its workers started; %llu compiles in workers in all", detail,
             (unsigned long long)s.compiles_in_workers);
    row(v, arch, &first, 1, d);
  }
  cujit_close(e[0]);
  cujit_close(e[1]);
  return failed;
}

static int minimal(cujit_engine *e, const char *arch, int reps) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  double on[32], off[32];
  for (int r = 0; r < reps; r++)
    for (int way = 0; way < 2; way++) {
      int without = (way + r) % 2;
      char body[256];
      snprintf(body, sizeof body,
               "int i = blockIdx.x * blockDim.x + threadIdx.x; // %ld %d\n"
               "if (i < n) y[i] = a * x[i] + y[i];\n",
               (long)getpid(), counter++);
      setenv("CUJIT_MINIMAL", without ? "off" : "on", 1);
      cujit_kernel *k;
      double t0 = bench_now_us();
      cujit_status st = cujit_kernel_define(e, "saxpy(float a, const float *x, float *y, int n)",
                                            body, NULL, &o, &k);
      (without ? off : on)[r] = (bench_now_us() - t0) / 1000;
      if (st != CUJIT_OK) {
        bench_missing(CASE, "cujit_c", "minimal_on", 1, cujit_errmsg(e));
        return 0;
      }
      cujit_kernel_free(k);
    }
  unsetenv("CUJIT_MINIMAL");
  row("minimal_off", arch, off, reps, "a small kernel; CUJIT_MINIMAL=off");
  row("minimal_on", arch, on, reps, "the same with -minimal (cujit's default where it fits)");
  return 0;
}

/* ---- the CPU device's precompiled prelude ------------------------------------------------------
 */

/* The CPU device's compile of a new text (kernel_text) with its precompiled prelude (CUJIT_PCH
** unset: kept in the disk cache, the caller's CUJIT_CACHE_DIR) and without (CUJIT_PCH=off),
** interleaved; first the compile that makes it, after the cache was cleared. Every text is new,
** so no cache entry answers. */
static int cpu_prelude(int reps) {
  unsetenv("CUJIT_CACHE"); /* the disk cache on: the prelude's PCH lives there */
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "cpu";
  double made = 0, on[16], off[16];
  for (int r = -1; r < reps; r++)
    for (int way = 0; way < 2; way++) {
      int without = r >= 0 && (way + r) % 2;
      if (r < 0 && way == 1) continue; /* the first round: only the compile that makes it */
      if (r < 0) cujit_cache_clear(e);
      without ? setenv("CUJIT_PCH", "off", 1) : unsetenv("CUJIT_PCH");
      char src[2048];
      kernel_text(src, sizeof src, "prelude");
      cujit_program *p;
      double t0 = bench_now_us();
      cujit_status st = cujit_program_compile(e, src, "prelude.cu", &o, &p);
      double ms = (bench_now_us() - t0) / 1000;
      if (st != CUJIT_OK) {
        bench_missing(CASE, "cujit_c", "cpu_prelude_on", 1, cujit_errmsg(e));
        cujit_close(e);
        return 0;
      }
      cujit_program_free(p);
      if (r < 0)
        made = ms;
      else
        (without ? off : on)[r] = ms;
    }
  unsetenv("CUJIT_PCH");
  cujit_cache_stats s = CUJIT_CACHE_STATS_INIT;
  cujit_cache_stats_get(e, &s);
  cujit_close(e);
  char d[160];
  snprintf(d, sizeof d, "the CPU device's g++; %llu compiles used the precompiled prelude",
           (unsigned long long)s.pch_used);
  row("cpu_prelude_make", "sm_90", &made, 1, "the first compile: makes the precompiled prelude");
  row("cpu_prelude_off", "sm_90", off, reps, "the CPU device's g++; CUJIT_PCH=off");
  row("cpu_prelude_on", "sm_90", on, reps, d);
  return 0;
}

/* ---- the machine's floor for eight heavy programs at once ------------------------------------ */

/* NVRTC alone, with its automatic precompiled headers as cujit's compiles use them. */
static struct {
  __typeof__(&nvrtcCreateProgram) create;
  __typeof__(&nvrtcCompileProgram) compile;
  __typeof__(&nvrtcDestroyProgram) destroy;
  __typeof__(&nvrtcGetPCHCreateStatus) pch_status;
  __typeof__(&nvrtcGetPCHHeapSizeRequired) pch_heap_required;
  __typeof__(&nvrtcSetPCHHeapSize) set_pch_heap;
} floor_nv;

static int floor_open(void) {
  char why[256];
  void *h = bench_nvrtc_library(why, sizeof why);
  if (!h) return 0;
  *(void **)&floor_nv.create = dlsym(h, "nvrtcCreateProgram");
  *(void **)&floor_nv.compile = dlsym(h, "nvrtcCompileProgram");
  *(void **)&floor_nv.destroy = dlsym(h, "nvrtcDestroyProgram");
  *(void **)&floor_nv.pch_status = dlsym(h, "nvrtcGetPCHCreateStatus");
  *(void **)&floor_nv.pch_heap_required = dlsym(h, "nvrtcGetPCHHeapSizeRequired");
  *(void **)&floor_nv.set_pch_heap = dlsym(h, "nvrtcSetPCHHeapSize");
  return floor_nv.create && floor_nv.compile && floor_nv.destroy && floor_nv.pch_status &&
         floor_nv.pch_heap_required && floor_nv.set_pch_heap;
}

/* A heavy text (as many_round's), new each call, compiled by NVRTC alone with the options cujit
** gives it (the arch, the toolkit's include directories) and PCH on in `pch_dir`. In ms, < 0 when
** it failed. When NVRTC could not make the PCH for want of heap, the heap is set to what it
** asked for and the text compiled again, as cujit does (engine/core/compile/pch.c). */
static double floor_compile(const char *arch, const char *pch_dir) {
  char text[2400], a[64], dir[600];
  int at = snprintf(text, sizeof text,
                    "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n");
  kernel_text(text + at, sizeof text - (size_t)at, "heavy");
  snprintf(a, sizeof a, "--gpu-architecture=%s", arch);
  snprintf(dir, sizeof dir, "--pch-dir=%s", pch_dir);
  const char *opts[5] = {a, "--pch", dir};
  int nopts = 3 + bench_nvrtc_include_options(opts + 3);
  for (int attempt = 0; attempt < 2; attempt++) {
    nvrtcProgram p;
    if (floor_nv.create(&p, text, "floor.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
    double t0 = bench_now_us();
    nvrtcResult r = floor_nv.compile(p, nopts, opts);
    double ms = (bench_now_us() - t0) / 1000;
    size_t need = 0;
    int grow = r == NVRTC_SUCCESS && attempt == 0 &&
               floor_nv.pch_status(p) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED &&
               floor_nv.pch_heap_required(p, &need) == NVRTC_SUCCESS;
    floor_nv.destroy(&p);
    if (r != NVRTC_SUCCESS) return -1;
    if (!grow) return ms;
    floor_nv.set_pch_heap(need);
  }
  return -1;
}

/* Removes a PCH directory: NVRTC writes its files directly in it. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *f; d && (f = readdir(d));) {
    char path[1024];
    if (strcmp(f->d_name, ".") && strcmp(f->d_name, "..") &&
        snprintf(path, sizeof path, "%s/%s", dir, f->d_name) < (int)sizeof path)
      remove(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

static volatile sig_atomic_t floor_stopped;

static void floor_stop(int sig) {
  (void)sig;
  floor_stopped = 1;
}

/* A floor process: makes its PCH (two untimed compiles: the first makes it, the second is the
** first to use it), writes their two times (doubles; < 0: failed) on `out`, then answers each
** request on `in` until it closes: 'P' one compile, 'S' MANY one after another, with the ms (a
** double) they took. Its PCH directory goes however it ends: run.sh's time limit sends SIGTERM to
** the whole process group, and a parent gone makes the next write fail (SIGPIPE ignored), so it
** finishes the compile at hand and removes the directory (seen: eight left under load). */
static void floor_child(const char *arch, int in, int out) {
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, floor_stop);
  char dir[512];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/cujit-bench-pch-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int ok = mkdtemp(dir) != NULL;
  double made = ok ? floor_compile(arch, dir) : -1,
         used = made >= 0 ? floor_compile(arch, dir) : -1;
  double ready[2] = {made, used};
  if (!floor_stopped && write(out, ready, sizeof ready) == (ssize_t)sizeof ready && used >= 0) {
    char what;
    while (!floor_stopped && read(in, &what, 1) == 1) {
      double ms = 0;
      for (int i = 0; i < (what == 'S' ? MANY : 1) && ms >= 0; i++) {
        double t = floor_compile(arch, dir);
        ms = t < 0 ? -1 : ms + t;
      }
      if (write(out, &ms, sizeof ms) != (ssize_t)sizeof ms) break;
    }
  }
  if (ok) remove_dir(dir);
  _exit(0);
}

/* Asks floor processes [0, n) for `what` at once; the wall time until all answered, in ms (< 0
** when one failed). */
static double floor_round(int n, const int *to, const int *from, char what) {
  double t0 = bench_now_us(), ms = 0;
  for (int i = 0; i < n; i++)
    if (write(to[i], &what, 1) != 1) return -1;
  for (int i = 0; i < n; i++)
    if (read(from[i], &ms, sizeof ms) != (ssize_t)sizeof ms || ms < 0) return -1;
  return (bench_now_us() - t0) / 1000;
}

static int heavy_floor(const char *arch, int reps) {
  if (!floor_open())
    return bench_missing(CASE, "nvrtc", "heavy8_nvrtc_parallel", MANY,
                         "no NVRTC with precompiled headers (12.8 or later)"),
           0;
  int to[MANY], from[MANY], started = 0;
  pid_t pid[MANY];
  fflush(stdout); /* the children leave through _exit: nothing of the parent's printed twice */
  for (; started < MANY; started++) {
    int down[2], up[2];
    if (pipe(down) != 0) break;
    if (pipe(up) != 0) {
      close(down[0]), close(down[1]);
      break;
    }
    pid_t child = fork();
    if (child == 0) {
      for (int i = 0; i < started; i++) close(to[i]), close(from[i]);
      close(down[1]), close(up[0]);
      floor_child(arch, down[0], up[1]);
    }
    close(down[0]), close(up[1]);
    if (child < 0) {
      close(down[1]), close(up[0]);
      break;
    }
    pid[started] = child, to[started] = down[1], from[started] = up[0];
  }
  int ok = started == MANY;
  double made = 0, used = 0;
  for (int i = 0; i < started && ok; i++) { /* they make their PCHs at once */
    double ready[2];
    ok = read(from[i], ready, sizeof ready) == (ssize_t)sizeof ready && ready[1] >= 0;
    if (ok) made = ready[0], used = ready[1]; /* the last process's, for the detail */
  }
  double serial[16], parallel[16];
  for (int r = 0; r < reps && ok; r++) /* interleaved, so drift touches both alike */
    ok = (serial[r] = floor_round(1, to, from, 'S')) >= 0 &&
         (parallel[r] = floor_round(MANY, to, from, 'P')) >= 0;
  for (int i = 0; i < started; i++) close(to[i]), close(from[i]), waitpid(pid[i], NULL, 0);
  if (!ok)
    return bench_missing(CASE, "nvrtc", "heavy8_nvrtc_parallel", MANY,
                         "a floor process's compile failed"),
           0;
  char d[240];
  snprintf(d, sizeof d,
           "NVRTC alone in %d processes with a PCH each (made in %.0f ms; a compile with it %.0f "
           "ms); cores: %ld",
           MANY, made, used, sysconf(_SC_NPROCESSORS_ONLN));
  row_of("nvrtc", "heavy8_nvrtc_serial", arch, serial, reps, d);
  row_of("nvrtc", "heavy8_nvrtc_parallel", arch, parallel, reps, d);
  return 0;
}

/* ---- a process's first compile --------------------------------------------------------------- */

static int first_cujit(const char *arch, int device_first, double t0) {
  const char *variant = device_first ? "first_cujit_device_first" : "first_cujit";
  char src[2048];
  kernel_text(src, sizeof src, "first");
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return bench_missing(CASE, "cujit_c", variant, 1, "no engine"), 0;
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = device_first ? NULL : arch;
  cujit_device *dev = NULL;
  cujit_program *p = NULL;
  cujit_status st = device_first ? cujit_current_device(e, &dev) : CUJIT_OK;
  if (st == CUJIT_OK) st = cujit_program_compile(e, src, "first.cu", &o, &p);
  if (st == CUJIT_OK && !device_first) st = cujit_current_device(e, &dev); /* the driver, ready */
  double ms = (bench_now_us() - t0) / 1000;
  if (st != CUJIT_OK)
    bench_missing(CASE, "cujit_c", variant, 1, cujit_errmsg(e));
  else
    row(variant, "sm_90", &ms, 1,
        device_first ? "device first; then the compile"
                     : "the arch given: the driver starts beside");
  cujit_program_free(p);
  cujit_close(e);
  return 0; /* a figure not measured is a "missing" row, not a failure */
}

/* The driver started as a program's first use of it does: cuInit, then device 0; 0 with `why`. */
static int start_driver(char *why, size_t len) {
  CUdevice dev;
  return bench_driver_open(why, len) && bench_cu_check(bench_cu.cuInit(0), "cuInit", why, len) &&
         bench_cu_check(bench_cu.cuDeviceGet(&dev, 0), "cuDeviceGet", why, len);
}

static int first_nvrtc(const char *arch, double t0) {
  static const char variant[] = "first_nvrtc";
  char src[2048], why[512], opt[64];
  kernel_text(src, sizeof src, "first");
  snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
  void *h = bench_nvrtc_library(why, sizeof why);
  __typeof__(&nvrtcCreateProgram) create = NULL;
  __typeof__(&nvrtcCompileProgram) compile = NULL;
  __typeof__(&nvrtcGetCUBINSize) size = NULL;
  __typeof__(&nvrtcDestroyProgram) destroy = NULL;
  if (h) { /* as raw.c resolves them: through the pointer's bytes, which ISO C allows */
    *(void **)&create = dlsym(h, "nvrtcCreateProgram");
    *(void **)&compile = dlsym(h, "nvrtcCompileProgram");
    *(void **)&size = dlsym(h, "nvrtcGetCUBINSize");
    *(void **)&destroy = dlsym(h, "nvrtcDestroyProgram");
  }
  if (!create || !compile || !size || !destroy)
    return bench_missing(CASE, "nvrtc", variant, 1, h ? "NVRTC lacks a basic call" : why), 0;
  nvrtcProgram prog;
  const char *opts[] = {opt};
  size_t bytes = 0;
  int ok = create(&prog, src, "first.cu", 0, NULL, NULL) == NVRTC_SUCCESS;
  if (ok) ok = compile(prog, 1, opts) == NVRTC_SUCCESS && size(prog, &bytes) == NVRTC_SUCCESS;
  if (ok) destroy(&prog);
  if (!ok) return bench_missing(CASE, "nvrtc", variant, 1, "NVRTC failed"), 0;
  if (!start_driver(why, sizeof why)) return bench_missing(CASE, "nvrtc", variant, 1, why), 0;
  double ms = (bench_now_us() - t0) / 1000;
  row_of("nvrtc", variant, "sm_90", &ms, 1,
         "NVRTC (which starts the driver inside); then cuInit and cuDeviceGet");
  return 0;
}

/* The driver alone in a new process: what first_cujit cannot go below, its compile running beside
** the driver's start. */
static int first_driver(double t0) {
  static const char variant[] = "first_driver";
  char why[512];
  if (!start_driver(why, sizeof why)) return bench_missing(CASE, "raw", variant, 1, why), 0;
  double ms = (bench_now_us() - t0) / 1000;
  row_of("raw", variant, "sm_90", &ms, 1,
         "the driver alone: cuInit and cuDeviceGet; nothing compiled");
  return 0;
}

int main(int argc, char **argv) {
  double t0 = bench_now_us();
  const char *arch = "sm_90", *what = NULL;
  int short_mode = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--short") == 0)
      short_mode = 1;
    else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
      arch = argv[++i];
    else if (!what && argv[i][0] != '-')
      what = argv[i];
    else
      what = NULL, i = argc;
  }
  if (!what) {
    fprintf(stderr,
            "usage: %s [--short] [--arch ARCH] "
            "many|many-heavy|heavy-floor|minimal|cpu-prelude|first-cujit|"
            "first-cujit-device|first-nvrtc|first-driver\n",
            argv[0]);
    return 2;
  }
  setenv("CUJIT_CACHE", "off", 1); /* every compile a real one */
  if (strcmp(what, "first-nvrtc") == 0) return first_nvrtc(arch, t0);
  if (strcmp(what, "first-driver") == 0) return first_driver(t0);
  if (strcmp(what, "first-cujit") == 0) return first_cujit(arch, 0, t0);
  if (strcmp(what, "first-cujit-device") == 0) return first_cujit(arch, 1, t0);
  int cpu = strcmp(arch, "cpu") == 0; /* g++ takes a second a program: fewer rounds on the CPU */
  if (strcmp(what, "many") == 0) return many(arch, short_mode ? 1 : cpu ? 3 : 5, 0);
  if (strcmp(what, "many-heavy") == 0) return many(arch, short_mode ? 1 : cpu ? 1 : 3, 1);
  if (strcmp(what, "heavy-floor") == 0) return heavy_floor(arch, short_mode ? 1 : 3);
  if (strcmp(what, "cpu-prelude") == 0) return cpu_prelude(short_mode ? 2 : 6);
  cujit_engine *e;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  int rc = 2;
  if (strcmp(what, "minimal") == 0) rc = minimal(e, arch, short_mode ? 2 : 15);
  cujit_close(e);
  if (rc == 2) fprintf(stderr, "%s: unknown figure '%s'\n", argv[0], what);
  return rc;
}
