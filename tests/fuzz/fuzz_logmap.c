/*
** fuzz_logmap.c -- the compile-log mapper: a program name, its source and an NVRTC log (the input
** split at NUL bytes) always give a message that holds the whole log.
*/
#include "compile/compile.h"
#include "program/program.h"
#include "fuzz.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *name = fuzz_part(&data, &size);
  char *source = fuzz_part(&data, &size);
  char *log = fuzz_part(&data, &size);
  char *msg = cj_compile_error_message(name, source, log);
  if (!msg || !strstr(msg, log)) {
    fprintf(stderr, "the message lost the log\n");
    abort();
  }
  free(msg);
  free(log);
  free(source);
  free(name);
  return 0;
}
