/*
** elementwise.h -- the elementwise kernel builder (cujit_elementwise_define and _launch in
** cujit.h): the signature + body kernel it writes for an elementwise definition, which the tests
** read without compiling. Internal.
*/
#ifndef CUJIT_ELEMENTWISE_H
#define CUJIT_ELEMENTWISE_H

#include "base/base.h"

typedef struct cj_elementwise_kernel {
  char *signature;      /* "saxpy(float a, const float *__restrict__ x, ..., long long n)" */
  char *body;           /* the user's expression, then the grid-stride loops */
  const char *preamble; /* static: the includes the body needs */
} cj_elementwise_kernel;

/* Reads `params` ("scalar T a, T x, T y -> T z") and writes the kernel for `expr` named `name`.
** A mistake in them is CUJIT_ERROR_SIGNATURE (or INVALID_ARGUMENT for an empty expression) with
** the engine's message saying what to write. Free with cj_elementwise_text_free, also on
** failure. */
cujit_status cj_elementwise_text(cujit_engine *engine, const char *params, const char *expr,
                                 const char *name, cj_elementwise_kernel *out);
void cj_elementwise_text_free(cj_elementwise_kernel *text);

#endif
