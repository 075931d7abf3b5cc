/*
** fuzz_scan.c -- the translation-unit scanner (scan.h): any text gives kernels or a message,
** never a crash; each kernel found is written back; and the translation unit with the kernels'
** checks (and markers between definitions) is written for the same text.
*/
#include "fuzz.h"
#include "compile/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *source = fuzz_cstring(data, size), err[512];
  cj_signature *kernels = NULL;
  size_t count = 0;
  if (cj_scan_kernels(source, &kernels, &count, err, sizeof err) == CUJIT_OK) {
    for (size_t i = 0; i < count; i++) {
      char *text = cj_signature_format(&kernels[i]);
      if (!text) abort();
      free(text);
      cj_signature_free(&kernels[i]);
    }
    free(kernels);
  }
  cj_scan scan;
  if (cj_scan_prepare(source, NULL, 0, &scan, err, sizeof err) == CUJIT_OK && !scan.text)
    abort(); /* a prepared scan always has the unit to compile */
  cj_scan_free(&scan);
  free(source);
  return 0;
}
