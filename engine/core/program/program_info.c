/*
** program_info.c -- what a compiled program tells its user: its kernels, PTX, CUBIN and log, where
** it came from and how long that took, and its native module for the application's own driver
** calls (issue 24).
*/
#include "program.h"
#include "run/device.h"

size_t cujit_program_kernel_count(const cujit_program *program) {
  return program ? program->nkernels : 0;
}

const char *cujit_program_kernel_name(const cujit_program *program, size_t index) {
  return program && index < program->nkernels ? program->kernels[index].name : NULL;
}

const char *cujit_program_ptx(const cujit_program *program, size_t *len) {
  if (len) *len = program ? program->ptx_len : 0;
  return program ? program->ptx : NULL;
}

const void *cujit_program_cubin(const cujit_program *program, size_t *len) {
  if (len) *len = program ? program->cubin_len : 0;
  return program ? program->cubin : NULL;
}

const char *cujit_program_log(const cujit_program *program) {
  return program && program->log ? program->log : "";
}

int cujit_program_from_cache(const cujit_program *program) {
  return program ? program->from_cache : 0;
}

double cujit_program_milliseconds(const cujit_program *program) {
  return program ? program->ms : 0.0;
}

cujit_status cujit_program_module(cujit_program *program, void **native) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_program_module";
  if (!program || !native)
    return cj_fail(program ? program->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL",
                   fn, program ? "native" : "program");
  *native = NULL;
  cujit_device *dev;
  void *module = NULL;
  cujit_status st = cj_native_current(program->engine, fn, "modules", &dev);
  if (st == CUJIT_OK) st = cj_program_module(program, dev, &module);
  return st == CUJIT_OK ? dev->ops->module_native(dev, module, native) : st;
}
