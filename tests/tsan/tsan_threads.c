/*
** tsan_threads.c -- tests/c/threads.h as a plain program, for ThreadSanitizer (Criterion's arena
** cannot start under it). Built and registered as the ctest tsan.threads only when the build is
** configured with -DCUJIT_SANITIZE_THREAD=ON; exits 77 (skipped) without NVRTC.
*/
#include <stdio.h>
#include <stdlib.h>

#include "threads.h"

int main(void) {
  if (cujit_open(&engine) != CUJIT_OK) return 1;
  int rc = 77;
  char why[600] = "no NVRTC";
  if (nvrtc_available()) rc = run_threads(why, sizeof why);
  if (rc) fprintf(stderr, "%s%s\n", rc == 77 ? "skipped: " : "FAIL: ", why);
  cujit_close(engine);
  return rc;
}
