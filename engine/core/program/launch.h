/*
** launch.h -- launching kernels (launch.c): the public cujit_launch* calls and the kernel queries
** that need the kernel on the current device; what a launch on a capturing stream records for
** graph.c, and the argument packing graph.c reuses to replace a kernel node's arguments. The
** library launches through the public calls. Internal.
*/
#ifndef CUJIT_LAUNCH_H
#define CUJIT_LAUNCH_H

#include "kernel.h"
#include "run/memory.h"
#include "backend/backend.h"

/* A kernel launch recorded into a graph: the concrete kernel, the backend's node, and the
** configuration it was launched with (which replacing its arguments keeps). */
typedef struct cj_graph_kernel {
  cujit_kernel *kernel;
  void *node;
  unsigned grid[3], block[3], shared_bytes;
} cj_graph_kernel;

/* What a stream records while it captures (stream->capture, made and freed by graph.c): the
** kernel launches in capture order, appended by the launch path. */
typedef struct cj_capture {
  cj_graph_kernel *kernels;
  size_t count, capacity;
} cj_capture;

/* Checks `args` against the concrete kernel's signature and packs them at its offsets into
** params (CJ_MAX_PARAM_BYTES, 16-byte aligned), pointers[i] at argument i, as a launch does,
** and pointers[nargs] NULL where there is room (pointers holds CJ_MAX_PARAMS entries, as params
** holds CJ_MAX_PARAM_BYTES, whatever the kernel's count); dev NULL skips the checks that need
** the device. */
cujit_status cj_launch_pack(const cujit_kernel *k, const cujit_arg *args, size_t nargs,
                            const cujit_device *dev, unsigned char *params, void **pointers);

/* Whether a configuration asks for launch attributes (the launch then goes to launch_ex). */
static inline int cj_launch_has_attrs(const cujit_launch_config *c) {
  return (c->cluster[0] | c->cluster[1] | c->cluster[2] | (unsigned)c->programmatic |
          (unsigned)c->priority) != 0;
}

/* launch_attrs.c: the configuration's attributes into *attrs (the cluster's unset axes made 1),
** checked for the kernel on `dev` (the device asked once per kernel, attributes and shape);
** grid and block as check_config made them. */
cujit_status cj_launch_attrs_check(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                   const cujit_launch_config *c, const unsigned grid[3],
                                   const unsigned block[3], int cooperative,
                                   cj_launch_attrs *attrs);

#endif
