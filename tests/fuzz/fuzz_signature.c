/*
** fuzz_signature.c -- the signature parser, with a round-trip property: a signature that parses
** is written back by cj_signature_format, and that text parses to the same signature.
*/
#include "fuzz.h"
#include "lang/signature.h"

#include <stdio.h>

static void same_or_abort(const cj_signature *a, const cj_signature *b, const char *text) {
  int same = strcmp(a->name, b->name) == 0 && a->nparams == b->nparams &&
             a->ntype_vars == b->ntype_vars && a->param_bytes == b->param_bytes;
  for (size_t i = 0; same && i < a->nparams; i++)
    same = strcmp(a->params[i].name, b->params[i].name) == 0 &&
           strcmp(a->params[i].type, b->params[i].type) == 0 &&
           a->params[i].is_const == b->params[i].is_const &&
           a->params[i].kind == b->params[i].kind && a->params[i].dtype == b->params[i].dtype &&
           a->params[i].size == b->params[i].size;
  if (!same) {
    fprintf(stderr, "round trip changed the signature: %s\n", text);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstring(data, size), err[512];
  cj_signature sig, again;
  if (cj_signature_parse(text, &sig, err, sizeof err) == CUJIT_OK) {
    char *back = cj_signature_format(&sig);
    if (!back) abort();
    if (cj_signature_parse(back, &again, err, sizeof err) != CUJIT_OK) {
      fprintf(stderr, "'%s' parsed, its written form '%s' did not: %s\n", text, back, err);
      abort();
    }
    same_or_abort(&sig, &again, back);
    char *twice = cj_signature_format(&again);
    if (!twice || strcmp(back, twice) != 0) abort();
    free(twice);
    free(back);
    cj_signature_free(&again);
    cj_signature_free(&sig);
  }
  free(text);
  return 0;
}
