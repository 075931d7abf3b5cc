/*
** kernel.h -- kernels: a compiled program's kernel with its signature, generic kernels and their
** specialisations, loading onto devices, argument packing and launching. Internal.
*/
#ifndef CUJIT_KERNEL_H
#define CUJIT_KERNEL_H

#include "compile.h"
#include "runtime.h"

/* What a kernel needs on one device, made on its first launch there. */
typedef struct cj_kernel_on_device {
  CUfunction fn;       /* the CUkernel cast, or the per-context function for attributes */
  unsigned generation; /* the device generation it was loaded at */
  int block_size;      /* occupancy suggestion, 0 until asked */
  int min_grid;
  int max_dynamic_shared; /* the opt-in already set with cuFuncSetAttribute */
} cj_kernel_on_device;

typedef struct cj_spec {
  cujit_dtype types[CJ_MAX_TYPE_VARS];
  struct cujit_kernel *kernel;
} cj_spec;

struct cujit_kernel {
  cj_link link;
  cujit_engine *engine;
  char *signature_text; /* formatted by cujit */
  cj_signature sig;
  cujit_program *program;         /* NULL while generic */
  CUkernel handle;                /* from the program's library, once loaded */
  cj_kernel_on_device *on_device; /* engine->device_count entries, lazily */

  /* Generic kernels keep what they need to specialise. */
  char *body, *preamble;
  cujit_compile_options options; /* deep copy (cj_options_copy) */
  void *options_storage;
  cj_spec *specs;
  size_t nspecs;
  pthread_mutex_t spec_lock;
  struct cujit_kernel *parent; /* a specialisation is owned by its generic kernel */
};

#endif
