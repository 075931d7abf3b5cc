/*
** axpb.h -- the kernel the graph suites capture and replay, x[i] = a * x[i] + b over n elements,
** and its launch on a stream in blocks of 128 threads. The suite chooses the element type: "float",
** or "T" for a generic kernel specialised by the buffers' dtype. Reads the suite's `engine`
** (fixture.h) through expect.h.
*/
#ifndef CUJIT_TEST_AXPB_H
#define CUJIT_TEST_AXPB_H

#include <stdio.h>

#include "cujit.h"
#include "expect.h"

static cujit_kernel *cj_axpb_define(const char *element_type) {
  char signature[128];
  snprintf(signature, sizeof signature, "axpb(%s *x, %s a, %s b, int n)", element_type,
           element_type, element_type);
  cujit_kernel *k;
  EXPECT_OK(cujit_kernel_define(engine, signature,
                                "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "if (i < n) x[i] = a * x[i] + b;",
                                NULL, NULL, &k));
  return k;
}

static cujit_status cj_axpb_launch(cujit_kernel *k, cujit_buffer *x, double a, double b, int n,
                                   cujit_stream *s) {
  cujit_launch_config c = {.size = sizeof c,
                           .grid = {((unsigned)n + 127) / 128, 1, 1},
                           .block = {128, 1, 1},
                           .shared_bytes = 0,
                           .stream = s};
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_F(a), CUJIT_ARG_F(b), CUJIT_ARG_I(n)};
  return cujit_launch(k, &c, args, 4);
}

#endif
