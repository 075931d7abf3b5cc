/*
** backend_cpu_graph.h -- the CPU device's answers to the memory-pool and graph operations of
** backend.h: it keeps no pool (freed memory goes back to the C library at once), and it does not
** capture graphs yet, which it says plainly instead of recording. Private to the backend layer.
*/
#ifndef CUJIT_BACKEND_CPU_GRAPH_H
#define CUJIT_BACKEND_CPU_GRAPH_H

#include "backend.h"

cujit_status cj_cpu_pool_trim(cujit_device *dev);
cujit_status cj_cpu_pool_reserved(cujit_device *dev, size_t *bytes);
cujit_status cj_cpu_capture_begin(cujit_device *dev, void *stream, int mode);
cujit_status cj_cpu_capture_last_node(cujit_device *dev, void *stream, void **node);
cujit_status cj_cpu_capture_end(cujit_device *dev, void *stream, void **graph);
void cj_cpu_graph_destroy(cujit_device *dev, void *graph);
cujit_status cj_cpu_graph_nodes(cujit_device *dev, void *graph, size_t *counts);
cujit_status cj_cpu_graph_instantiate(cujit_device *dev, void *graph, void **exec);
void cj_cpu_exec_destroy(cujit_device *dev, void *exec);
cujit_status cj_cpu_graph_launch(cujit_device *dev, void *exec, void *stream);
cujit_status cj_cpu_graph_set_kernel(cujit_device *dev, void *exec, void *node, void *fn,
                                     const unsigned grid[3], const unsigned block[3],
                                     unsigned shared_bytes, void **args);
cujit_status cj_cpu_graph_update(cujit_device *dev, void *exec, void *graph);
cujit_status cj_cpu_graph_dot(cujit_device *dev, void *graph, const char *path);

#endif
