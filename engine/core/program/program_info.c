/*
** program_info.c -- what a program tells about itself through the public API: its kernels' names,
** its PTX and CUBIN, its compile log, whether it came from the cache and how long getting it took.
** Reads only the program record (program.h).
*/
#include "program.h"

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
