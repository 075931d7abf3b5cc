/*
** image.h -- what a backend loads: a compiled program's code and the kernels in it, as the
** compile stack made it (a CUBIN and its PTX for a GPU, a shared object for the CPU device). The
** backend layer owns this type so that it needs nothing of the compiler; the program layer
** (program/program.c), where the compile stack and the run stack meet, fills one from a program
** for each load. Everything it points at belongs to the program and outlives the load. Internal.
*/
#ifndef CUJIT_IMAGE_H
#define CUJIT_IMAGE_H

#include "lang/signature.h"

#include <stddef.h>

typedef struct cj_image {
  const char *name;   /* for messages: "saxpy.cu", "<source>", the kernel name */
  const char *source; /* the translation unit compiled (the CPU device reads its type bindings) */
  const char *arch;   /* "sm_90", "compute_90", "cpu" */
  const char *ptx;    /* NUL-terminated; NULL for the CPU device */
  size_t ptx_len;
  const void *binary; /* the CUBIN, or the CPU device's shared object; NULL for compute_XX */
  size_t binary_len;
  const cj_signature *kernels; /* the extern "C" __global__ kernels, source order */
  size_t nkernels;
} cj_image;

#endif
