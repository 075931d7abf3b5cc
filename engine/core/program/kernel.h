/*
** kernel.h -- kernel objects: a program's kernel with its signature, generic kernels and their
** specialisations, and a kernel's function on each device, found on first need. Launching is
** launch.c's. Internal.
*/
#ifndef CUJIT_KERNEL_H
#define CUJIT_KERNEL_H

#include "run/memory.h"
#include "program.h"

/* What a kernel has on one device, made on its first use there. `fn` is published last (release)
** and cleared first when remade after a reset, so a reader that sees fn != NULL with a generation
** read before it equal to the device's has a function of the current context. */
typedef struct cj_kernel_on_device {
  void *fn;            /* the backend's function (atomic access) */
  unsigned generation; /* the device generation it was found at (atomic access) */
  int block_size;      /* occupancy suggestion, 0 until asked (atomic access) */
  int min_grid;
  int max_dynamic_shared; /* the shared-memory opt-in already made (atomic access) */
  /* The launch attributes and shape last found to fit by the backend's check_attrs (launch.c's
  ** attrs_key; 0: none yet), so that a loop of attributed launches asks the device once. */
  unsigned long long attrs_checked; /* atomic access */
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
  cj_kernel_on_device *on_device; /* engine->device_count entries, made once (atomic access) */

  /* Generic kernels keep what they need to specialise. */
  char *body, *preamble;
  cujit_compile_options options; /* deep copy (options_copy) */
  void *options_storage;
  cj_spec *specs;
  size_t nspecs;
  pthread_mutex_t lock;        /* guards specs and nspecs, and making on_device entries */
  struct cujit_kernel *parent; /* a specialisation is owned by its generic kernel */
  void *trace;                 /* its name registered for launch ranges (trace.h); NULL: none */
};

/* The concrete kernel for these arguments: a generic one specialised from the dtypes of the
** buffers passed (under the generic kernel's lock); the argument count checked. The launch path's
** common case, a concrete kernel given the right count, is decided here without a call. */
cujit_status cj_kernel_resolve_slow(cujit_kernel **k, const cujit_arg *args, size_t nargs);
static inline cujit_status cj_kernel_resolve(cujit_kernel **k, const cujit_arg *args,
                                             size_t nargs) {
  if ((*k)->program && nargs == (*k)->sig.nparams) return CUJIT_OK;
  return cj_kernel_resolve_slow(k, args, nargs);
}

/* The kernel's state on `dev` (entered), finding its function there first if needed. */
cujit_status cj_kernel_find_on(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **out);

/* The kernel's state on `dev` when its function there is current, else NULL: no lock, no call. */
static inline cj_kernel_on_device *cj_kernel_ready(cujit_kernel *k, const cujit_device *dev) {
  cj_kernel_on_device *all = __atomic_load_n(&k->on_device, __ATOMIC_ACQUIRE);
  if (all) {
    cj_kernel_on_device *on = &all[cj_device_slot(dev)];
    unsigned generation = __atomic_load_n(&on->generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&on->fn, __ATOMIC_ACQUIRE) &&
        generation == __atomic_load_n(&dev->generation, __ATOMIC_ACQUIRE))
      return on;
  }
  return NULL;
}

/* The launch path's check: no lock and no call when the kernel is ready on `dev`. */
static inline cujit_status cj_kernel_on(cujit_kernel *k, cujit_device *dev,
                                        cj_kernel_on_device **out) {
  if ((*out = cj_kernel_ready(k, dev))) return CUJIT_OK;
  return cj_kernel_find_on(k, dev, out);
}

#endif
