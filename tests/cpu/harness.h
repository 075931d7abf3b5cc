/*
** harness.h -- runs CPU-device kernels without the engine: cj_cpu_translation_unit, the system
** C++ compiler, dlopen, and a pool of two worker threads calling the generated entries. For the
** CPU-device tests (test_cpu_device.c) and the CPU benchmark (scripts/bench/cpu).
*/
#ifndef CUJIT_TEST_CPU_HARNESS_H
#define CUJIT_TEST_CPU_HARNESS_H

#include <stddef.h>

typedef struct cpu_module cpu_module;

/* Compiles `source` (as cujit hands it to NVRTC) with the kernels named; NULL with a message in
** err (the rewriter's refusal or the compiler's output). check: AddressSanitizer + UBSan. */
cpu_module *cpu_compile(const char *source, const char *const *kernels, size_t nkernels, int check,
                        char *err, size_t err_len);
void cpu_unload(cpu_module *m);
/* The two halves of cpu_compile: build the shared object at a fresh path (so), and open it. */
int cpu_build(const char *source, const char *const *kernels, size_t nkernels, int check, char *so,
              size_t so_len, char *err, size_t err_len);
cpu_module *cpu_open(const char *so, char *err, size_t err_len);

typedef struct cpu_launch_opts {
  unsigned grid[3], block[3], shared_bytes;
  int schedule; /* enum cj_cpu_schedule */
  unsigned long long seed;
} cpu_launch_opts;

/* Runs one launch on the module's workers and waits for it; 0, or -1 with launch->error in err. */
int cpu_launch(cpu_module *m, const char *kernel, const cpu_launch_opts *o, void **args, char *err,
               size_t err_len);

/* The shared object's cj_cpu_where for worker `worker`'s record (-1: none), called on this
** thread. */
int cpu_where(cpu_module *m, int worker, char *buf, size_t len);

#endif
