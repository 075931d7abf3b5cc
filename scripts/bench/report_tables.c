/*
** report_tables.c -- the benchmark report's tables, numbered as docs/benchmarks.md shows them:
** which case, variants and systems each holds, the floor each ratio is over, and its heading.
*/
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Table 1: each cujit figure over the raw floor measured in its own process, interleaved with
** it; the separate raw C process, CuPy and Numba as before. */
static void launch_table(void) {
  static const char *const variants[] = {"args1", "args4", "args12"};
  static const column cols[] = {
      {"raw", NULL},
      {"raw_c_same", NULL},
      {"cujit_c", "raw_c_same"},
      {"raw_c_in_lua", NULL},
      {"raw_lua_same", "raw_c_in_lua"},
      {"cujit_lua", "raw_c_in_lua"},
      {"cupy", "raw"},
      {"numba", "raw"},
  };
  column_table("1. Host time per async launch of an empty kernel, us (x: cujit C over raw C in "
               "its own process, cujit Lua and raw from Lua over raw C in the Lua process, both "
               "interleaved with the cujit launches; CuPy and Numba over raw C in a process of "
               "its own)",
               "launch", variants, 3, cols, sizeof cols / sizeof *cols, NULL, 0);
}

static const char *const bw_variants[] = {"vadd",   "saxpy",   "vadd4",
                                          "saxpy4", "vadd_ew", "saxpy_ew"};
enum { BW_VARIANTS = 6 };

static int any_figure(const char *bcase, const char *variant, double n) {
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].bcase, bcase) && !strcmp(rows[i].variant, variant) && rows[i].n == n)
      return 1;
  return 0;
}

static void bandwidth_table(void) {
  double n[SIZES];
  int count = sizes("bandwidth", n);
  out("\n### 5. Bandwidth, GB/s (bytes read + written / kernel time by events; %% of the device "
      "copy at the same size)\n\n| size | kernel | copy | raw C | cujit C | cujit Lua | CuPy | "
      "Numba |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < count; k++) {
    double copy = value("bandwidth", "raw", "copy", n[k]);
    for (int v = 0; v < BW_VARIANTS; v++) {
      if (v > 0 && !any_figure("bandwidth", bw_variants[v], n[k])) continue;
      out("| 2^%.0f | %s |", log2(n[k]), bw_variants[v]);
      if (v == 0)
        cell(find("bandwidth", "raw", "copy", n[k]), NAN, 0);
      else
        out(" |");
      for (int s = 0; s < NSYS; s++)
        if (strcmp(systems[s], "nvrtc") != 0)
          cell(find("bandwidth", systems[s], bw_variants[v], n[k]), copy, 1);
      out("\n");
    }
  }
  reasons("bandwidth");
}

void heading(void) {
  out("## cujit benchmark\n\n");
  for (int i = 0; i < nrows; i++)
    if (!strcmp(rows[i].status, "info"))
      out("- %s %s: %s\n", title_of(rows[i].system), rows[i].variant, rows[i].detail);
  out("\nEach figure is a median over repetitions after a warm-up; \"missing\" says the figure "
      "could "
      "not be measured (the reason is listed under the table).\n");
}

static void mc_table(void) {
  static const char *const variants[] = {"e2e", "setup", "kernel"};
  simple_table("7. Monte Carlo, European call, 2^24 paths, end to end with RNG setup, ms (speed-up "
               "over Numba's end to end)",
               "montecarlo", variants, 3, "numba", "e2e", 2);
}

/* Graphs: host time per node of a replay, against the raw graph in the same process (cujit C),
** or in the raw C process (cujit Lua, CuPy); then capture and instantiation; then the graphs
** example's step. */
static void graph_tables(void) {
  static const char *const nodes[] = {"nodes1", "nodes10", "nodes100", "nodes1000"};
  static const char *const setup[] = {"capture1",      "instantiate1",   "capture10",
                                      "instantiate10", "capture100",     "instantiate100",
                                      "capture1000",   "instantiate1000"};
  static const char *const step[] = {"launches", "graph"};
  static const column cols[] = {
      {"raw", NULL},        {"raw_c_same", NULL}, {"cujit_c", "raw_c_same"},
      {"cujit_lua", "raw"}, {"cupy", "raw"},      {"numba", NULL}};
  column_table("8. Graph replay: host time per kernel node of a replayed graph of N empty kernels, "
               "us (x: cujit C over the raw graph replayed in its own process, interleaved; cujit "
               "Lua, a g:launch() per replay from a Lua loop, and CuPy over the raw C process)",
               "graph", nodes, 4, cols, sizeof cols / sizeof *cols, NULL, 0);
  simple_table("9. Graph capture (begin, N launches, end) and instantiation, us (x: over raw C; "
               "CuPy instantiates inside end_capture)",
               "graph_setup", setup, 8, "raw", NULL, 0);
  simple_table("10. The graphs example's step (5 small kernels on 4096 cells), us per step end to "
               "end, as stream launches and as graph replays (20 steps a graph)",
               "graph_step", step, 2, NULL, NULL, 0);
}

/* Issue 15: a spin kernel of each length launched and waited for, per kind of wait (the driver's
** own wait of that kind is the floor), the CPU a one-second wait takes; then small operations
** against CuPy. */
static void latency_tables(void) {
  static const char *const kinds[] = {"stream", "device", "event"};
  static const int lengths[] = {0, 5, 20, 50, 200, 1000, 10000};
  enum { NL = sizeof lengths / sizeof *lengths };
  static char names[3 * NL + 1][24];
  const char *variants[3 * NL + 1];
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < NL; l++) {
      snprintf(names[k * NL + l], sizeof names[0], "rt%d_%s", lengths[l], kinds[k]);
      variants[k * NL + l] = names[k * NL + l];
    }
  variants[3 * NL] = "cpu_wait1s";
  static const column cols[] = {{"raw", NULL},
                                {"cujit_c", "raw"},
                                {"cujit_c_spin", "raw"},
                                {"cujit_lua", "raw"},
                                {"cupy", "raw"}};
  column_table("11. Launch of a spin kernel of N us + wait, us, by kind of wait (stream, device, "
               "event); cpu_wait1s: CPU time of a 1 s wait, % of a core (x: over the driver's "
               "own wait of the same kind; cujit C spin: the same with CUJIT_WAIT=spin)",
               "latency", variants, 3 * NL + 1, cols, sizeof cols / sizeof *cols, NULL, 0);
  static const char *const small[] = {"alloc_free", "zeros",  "sum1k",   "sum1m",
                                      "dtoh1k",     "htod1k", "table1k", "ew1k"};
  simple_table("12. Small operations, median us: allocate + free 4 KiB, zeros(1024), sum of 1 K "
               "and 1 M floats to a host number, 1 K floats from and to the host, a 1 K table "
               "to the device, an elementwise kernel on 1 K floats + synchronize (x: over CuPy)",
               "small", small, 8, "cupy", NULL, 0);
}

/* Issue 16: the read kernel over device, managed (prefetched or not) and mapped host memory,
** from Lua, each as a fraction of device memory. */
static void memory_table(void) {
  static const char *const where[] = {"device", "managed_prefetched", "managed", "mapped"};
  static const column cols[] = {{"cujit_lua", "cujit_lua"}};
  column_table("13. A kernel reading 2^26 floats (at most) from device memory, managed memory "
               "prefetched to the device, managed memory migrated by page faults, and mapped "
               "host memory, GB/s (%: of device memory)",
               "memory", where, 4, cols, 1, "device", 1);
}

/* Issue 9: what building again costs the host, in one process (cujit_bench_redefine). */
static void redefine_table(void) {
  static const char *const again[] = {"define", "compile"};
  static const column cols[] = {{"cujit_c", NULL}};
  column_table("14. Defining an already-defined kernel (cujit_kernel_define) and compiling an "
               "already-compiled program (cujit_program_compile) again in the same process, "
               "median us",
               "redefine", again, 2, cols, 1, NULL, 0);
}

/* Issue 25: a new process compiling a new kernel against a library kept as LTO-IR, or whole
** (cujit_bench_link); the kernel's run time both ways. */
static void link_table(void) {
  static const char *const v[] = {"library",   "linked",      "whole",     "linked_all",
                                  "whole_all", "linked_arch", "whole_arch"};
  static const char *const run[] = {"run_linked", "run_whole"};
  static const column cols[] = {{"cujit_c", NULL}};
  column_table("16. A new process compiling a kernel it never compiled, ms to the kernel ready: "
               "linked with a device library already kept as LTO-IR (link = {\"linklib.cu\"}) or "
               "compiled whole with the library's text (library: its own first compile); _all: the "
               "kernel calls the library's dispatcher, every function reachable; _arch: the "
               "device's arch given, so no device query before the compile",
               "link", v, 7, cols, 1, NULL, 0);
  column_table("17. That library's kernel run time, linked and compiled whole, us per launch",
               "link", run, 2, cols, 1, NULL, 0);
}

/* Issue 25: compiling at once, -minimal, a process's first compile (cujit_bench_compile). */
static void compile_table(void) {
  static const char *const ways[] = {"many8_serial",
                                     "many8_parallel",
                                     "many8_parallel_noworkers",
                                     "many8_parallel_first",
                                     "heavy8_serial",
                                     "heavy8_parallel",
                                     "heavy8_parallel_noworkers",
                                     "heavy8_parallel_first",
                                     "heavy8_nvrtc_serial",
                                     "heavy8_nvrtc_parallel",
                                     "heavy8_nopch_serial",
                                     "heavy8_nopch_parallel",
                                     "heavy8_nopch_parallel_noworkers",
                                     "heavy8_nopch_parallel_first",
                                     "many8_serial_cpu",
                                     "many8_parallel_cpu",
                                     "cpu_prelude_make",
                                     "cpu_prelude_off",
                                     "cpu_prelude_on",
                                     "minimal_off",
                                     "minimal_on",
                                     "first_nvrtc",
                                     "first_cujit",
                                     "first_cujit_device_first",
                                     "first_driver"};
  simple_table(
      "18. Compiling: eight programs one after another and at once (GPU: NVRTC, with "
      "worker processes and without; heavy8: each including <cooperative_groups.h>, with "
      "precompiled headers and without; heavy8_nvrtc: NVRTC alone in eight processes with a "
      "precompiled header each, the machine's floor for heavy8; cpu: the CPU device's g++; "
      "cpu_prelude: a CPU device "
      "compile with its precompiled prelude and without, and the one that makes it), a small "
      "kernel "
      "without and with -minimal, and a trivial "
      "kernel's first compile of a process until the driver is started (NVRTC alone; "
      "cujit with the arch given, the driver starting beside; cujit asking the device "
      "first; the driver alone, its floor), ms",
      "compile", ways, sizeof ways / sizeof *ways, NULL, NULL, 0);
}

void tables(void) {
  static const char *const rt[] = {"args4"};
  static const char *const vadd[] = {"vadd"};
  double n[SIZES];
  launch_table();
  simple_table("2. Launch + synchronize round trip, us (x: over raw C)", "roundtrip", rt, 1, "raw",
               NULL, 0);
  simple_table("3. Cold compile, source to first launch finished, empty caches, ms (x: over NVRTC "
               "alone)",
               "cold", vadd, 1, "nvrtc", NULL, 0);
  simple_table("4a. Warm disk cache in a new process, asking for the kernel to first launch "
               "finished, ms (raw C: the driver's own part, a CUBIN in memory loaded, launched "
               "once and waited for; x: over it)",
               "warm", vadd, 1, "raw", NULL, 0);
  simple_table("4b. Whole process, start to exit, of a script that launches one kernel and prints "
               "a value, ms (x: over CuPy)",
               "process", vadd, 1, "cupy", NULL, 0);
  bandwidth_table();
  int count = sizes("sum", n);
  for (int k = 0; k < count; k++) {
    static const char *const sum[] = {"read", "sum"};
    char title[160];
    snprintf(title, sizeof title,
             "6. Sum of 2^%.0f float32, GB/s of input read (%% of the raw "
             "read-only kernel)",
             log2(n[k]));
    simple_table(title, "sum", sum, 2, "raw", "read", 1);
  }
  /* f16: f16 inputs into f32 (cujit's tensor-core path; CuPy's cuBLAS writes f16), f16_simt:
  ** cujit's SIMT path forced (CUJIT_GEMM=simt); issue 26's floor is cuBLAS through CuPy */
  static const char *const gemm[] = {"f32", "f16", "bf16", "f16_simt"};
  simple_table("6b. Square n x n x n GEMM, TFLOP/s (device time; x: of CuPy's cuBLAS)", "gemm",
               gemm, 4, "cupy", NULL, 1);
  mc_table();
  graph_tables();
  latency_tables();
  memory_table();
  redefine_table();
  static const char *const cg[] = {"cg_first", "cg_second"}; /* issue 25 (cujit_bench_headers) */
  simple_table("15. Kernels including <cooperative_groups.h> in one process: the first (makes the "
               "PCH), later ones (median), ms (x: over NVRTC alone, the same process)",
               "pch", cg, 2, "nvrtc", NULL, 0);
  link_table();
  compile_table();
}
