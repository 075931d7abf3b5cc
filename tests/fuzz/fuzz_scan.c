/*
** fuzz_scan.c -- the translation-unit scanner (every extern "C" __global__ kernel of a source):
** any text gives kernels or a message, never a crash; each kernel found is written back and
** parsed again.
*/
#include "fuzz.h"
#include "signature.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *source = fuzz_cstring(data, size), err[512];
  cj_signature *kernels = NULL;
  size_t count = 0;
  if (cj_signature_scan(source, &kernels, &count, err, sizeof err) == CUJIT_OK) {
    for (size_t i = 0; i < count; i++) {
      char *text = cj_signature_format(&kernels[i]);
      if (!text) abort();
      free(text);
      cj_signature_free(&kernels[i]);
    }
    free(kernels);
  }
  free(source);
  return 0;
}
