/*
** backend_cpu_graph.c -- the CPU device's memory-pool and graph operations. The pool's are true
** answers (no pool: nothing to trim, nothing reserved). Graph capture is refused with a message
** naming the way out, at capture_begin, so no later graph operation is reached with a graph of
** this device; they refuse the same way should one be.
*/
#include "backend_cpu_graph.h"

static cujit_status no_graphs(cujit_device *dev, const char *what) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s: CUDA graphs are not available on the CPU device yet; launch the kernels "
                 "directly there (on a GPU, capture them with cujit_capture_begin / cuda.graph)",
                 what);
}

cujit_status cj_cpu_pool_trim(cujit_device *dev) {
  (void)dev;
  return CUJIT_OK;
}

cujit_status cj_cpu_pool_reserved(cujit_device *dev, size_t *bytes) {
  (void)dev;
  *bytes = 0;
  return CUJIT_OK;
}

cujit_status cj_cpu_capture_begin(cujit_device *dev, void *stream, int mode) {
  (void)stream, (void)mode;
  return no_graphs(dev, "cujit_capture_begin");
}

cujit_status cj_cpu_capture_last_node(cujit_device *dev, void *stream, void **node) {
  (void)stream, (void)node;
  return no_graphs(dev, "a captured launch");
}

cujit_status cj_cpu_capture_end(cujit_device *dev, void *stream, void **graph) {
  (void)stream;
  *graph = NULL;
  return no_graphs(dev, "cujit_capture_end");
}

void cj_cpu_graph_destroy(cujit_device *dev, void *graph) {
  (void)dev, (void)graph;
}

cujit_status cj_cpu_graph_nodes(cujit_device *dev, void *graph, size_t *counts) {
  (void)graph, (void)counts;
  return no_graphs(dev, "cujit_graph_node_count");
}

cujit_status cj_cpu_graph_instantiate(cujit_device *dev, void *graph, void **exec) {
  (void)graph;
  *exec = NULL;
  return no_graphs(dev, "cujit_graph_instantiate");
}

void cj_cpu_exec_destroy(cujit_device *dev, void *exec) {
  (void)dev, (void)exec;
}

cujit_status cj_cpu_graph_launch(cujit_device *dev, void *exec, void *stream) {
  (void)exec, (void)stream;
  return no_graphs(dev, "cujit_graph_launch");
}

cujit_status cj_cpu_graph_set_kernel(cujit_device *dev, void *exec, void *node, void *fn,
                                     const unsigned grid[3], const unsigned block[3],
                                     unsigned shared_bytes, void **args) {
  (void)exec, (void)node, (void)fn, (void)grid, (void)block, (void)shared_bytes, (void)args;
  return no_graphs(dev, "cujit_graph_set_args");
}

cujit_status cj_cpu_graph_update(cujit_device *dev, void *exec, void *graph) {
  (void)exec, (void)graph;
  return no_graphs(dev, "cujit_graph_update");
}

cujit_status cj_cpu_graph_dot(cujit_device *dev, void *graph, const char *path) {
  (void)graph, (void)path;
  return no_graphs(dev, "cujit_graph_dot");
}
