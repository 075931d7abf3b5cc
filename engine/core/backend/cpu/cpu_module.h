/*
** cpu_module.h -- the CPU device's programs: a compiled shared object loaded from memory, and its
** kernels, each with its entry and parameter layout. Internal (cpu_device.c).
*/
#ifndef CUJIT_CPU_MODULE_H
#define CUJIT_CPU_MODULE_H

#include "backend/image.h"
#include "base/base.h"
#include "cpu_pool.h"

typedef struct cj_cpu_module cj_cpu_module;

typedef struct cj_cpu_function {
  char *name;
  cj_cpu_entry_fn entry; /* NULL until cj_cpu_module_function finds it */
  cj_cpu_module *module;
  size_t nparams, param_bytes;
  size_t *offsets, *sizes; /* in the parameter buffer, as the kernel layer packs it */
  unsigned cluster[3];     /* its __cluster_dims__ (issue 26), all 0 when it has none */
} cj_cpu_function;

struct cj_cpu_module {
  void *handle;
  int fd; /* the memfd it was loaded from, open while it is loaded: its name stays unique */
  void (*release)(cj_cpu_worker *worker); /* the shared object's cj_cpu_worker_release */
  cj_cpu_where_fn where;                  /* its cj_cpu_where, NULL when it has none */
  cj_cpu_worker *workers;                 /* one per pool worker */
  int nworkers;
  cj_cpu_function *functions; /* one per kernel of the program, in its order */
  size_t nfunctions;
};

/* Loads the program (compiled for arch "cpu") with a worker record for each of `workers`;
** refuses another arch, a damaged image, another ABI version, and a checked build when
** AddressSanitizer's runtime is not loaded, each with a message saying what to do. */
cujit_status cj_cpu_module_load(cujit_engine *engine, const cj_image *image, int workers,
                                cj_cpu_module **module);

/* Releases the workers' state and closes the shared object; no launch may be running it. */
void cj_cpu_module_free(cj_cpu_module *module);

/* The kernel called `name` and its entry cjk_<name>, or NOT_FOUND. */
cujit_status cj_cpu_module_function(cujit_engine *engine, cj_cpu_module *module, const char *name,
                                    cj_cpu_function **fn);

#endif
