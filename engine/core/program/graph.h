/*
** graph.h -- graphs (graph.c): stream capture over the launch path, instantiation, replay,
** replacing a kernel node's arguments through the launch path's checks, whole-graph update, and
** introspection, over the backend's graph operations. Internal.
*/
#ifndef CUJIT_GRAPH_H
#define CUJIT_GRAPH_H

#include "launch.h"

struct cujit_graph {
  cj_link link;
  cujit_device *device;
  unsigned generation;      /* the device's, when captured: a reset loses the graph */
  void *graph;              /* the backend's graph */
  void *exec;               /* the backend's launchable graph; NULL until instantiated */
  cj_graph_kernel *kernels; /* the kernel launches, in capture order */
  size_t nkernels;
  size_t counts[CUJIT_GRAPH_NODE_KINDS]; /* nodes of each kind, read once at capture end */
};

#endif
