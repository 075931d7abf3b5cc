/*
** tsan_reset.c -- faults and resets of the CPU device at once, under ThreadSanitizer: thread 0
** launches a kernel that traps and waits for it, round after round (the device's worker records
** the fault and its message under the engine's lock, backend.c); thread 1 resets the device at the
** same time, which clears the fault and its message, under the same lock (device.c). Each call may
** fail (a launch on a faulted device, a wait that sees the fault, a reset of a kernel half run):
** only a race ThreadSanitizer sees fails the run (its exit status, 66), or a device that does not
** work after the last reset, or a run with no fault seen or no reset done. Built only with
*-DCUJIT_SANITIZE_THREAD=ON, registered as
** tsan.reset; needs the CPU device's C++ compiler (one small kernel), skips (77) without it.
*/
#include <stdio.h>
#include <string.h>

#include "cujit.h"

#define THREADS 2
#define ROUNDS 200

static cujit_engine *engine;
static cujit_device *cpu;
static cujit_kernel *trap_at;
static int faults_seen, resets_done; /* each written by one thread, read after the join */

#include "jobs.h"

static void *work(void *arg) {
  job *j = arg;
  for (int r = 0; r < ROUNDS; r++) {
    if (j->id == 0) {
      cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {32, 1, 1}};
      cujit_arg at[] = {CUJIT_ARG_I(r % 32)};
      (void)cujit_launch(trap_at, &c, at, 1); /* refused while the device is faulted */
      if (cujit_device_synchronize(cpu) == CUJIT_ERROR_DEVICE_FAULT) faults_seen++;
    } else if (cujit_device_reset(cpu) == CUJIT_OK) {
      resets_done++;
    }
  }
  return NULL;
}

int main(void) {
  if (cujit_open(&engine) != CUJIT_OK) return 1;
  int rc = 1;
  cujit_program *p = NULL;
  cujit_compile_options o = {.size = sizeof o, .arch = "cpu"};
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) != CUJIT_OK ||
      cujit_current_device(engine, &cpu) != CUJIT_OK) {
    fprintf(stderr, "FAIL: the CPU device: %s\n", cujit_errmsg(engine));
  } else if (cujit_program_compile(engine,
                                   "extern \"C\" __global__ void trap_at(int at) {\n"
                                   "  if ((int)threadIdx.x == at) __trap();\n"
                                   "}\n",
                                   "trap_at.cu", &o, &p) != CUJIT_OK) {
    fprintf(stderr, "skipped: the CPU device cannot compile: %s\n", cujit_errmsg(engine));
    rc = 77;
  } else if (cujit_program_kernel(p, "trap_at", &trap_at) != CUJIT_OK) {
    fprintf(stderr, "FAIL: %s\n", cujit_errmsg(engine));
  } else if ((rc = run_jobs(work)) == 0 && (faults_seen == 0 || resets_done == 0)) {
    fprintf(stderr, "FAIL: %d faults seen, %d resets: they never met\n", faults_seen, resets_done);
    rc = 1;
  } else if (rc == 0) {
    printf("%d faults seen and %d resets, %d rounds each\n", faults_seen, resets_done, ROUNDS);
    /* after a last reset the device works: a launch that does not trap runs and is waited for */
    cujit_launch_config c = {.size = sizeof c, .grid = {1, 1, 1}, .block = {32, 1, 1}};
    cujit_arg none[] = {CUJIT_ARG_I(-1)};
    if (cujit_device_reset(cpu) != CUJIT_OK || cujit_launch(trap_at, &c, none, 1) != CUJIT_OK ||
        cujit_device_synchronize(cpu) != CUJIT_OK) {
      fprintf(stderr, "FAIL: the device after the last reset: %s\n", cujit_errmsg(engine));
      rc = 1;
    }
  }
  if (trap_at) cujit_kernel_free(trap_at);
  if (p) cujit_program_free(p);
  cujit_close(engine);
  return rc;
}
