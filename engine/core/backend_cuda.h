/*
** backend_cuda.h -- what the CUDA backend's files share: backend_cuda.c (devices, memory, streams,
** programs, launches, and the table of operations) gives its driver results to messages and its
** driver to backend_cuda_graph.c (stream capture and graphs), whose operations the table names.
** Internal to the CUDA backend.
*/
#ifndef CUJIT_BACKEND_CUDA_H
#define CUJIT_BACKEND_CUDA_H

#include "backend.h"

/* The driver of a CUDA device. */
cj_driver *cj_cuda_driver(cujit_device *dev);

/* A driver result as a status, recorded with a message naming `what` (sticky errors poison the
** device, as for every other call of the backend). */
cujit_status cj_cuda_check(cujit_device *dev, CUresult rc, const char *what);

/* The message for a call the driver refused because a stream was capturing (one of the
** CUDA_ERROR_STREAM_CAPTURE_* results, CUDA_ERROR_CAPTURED_EVENT), naming `what` and the way out.
*/
int cj_cuda_is_capture_error(CUresult rc);
cujit_status cj_cuda_capture_error(cujit_device *dev, CUresult rc, const char *what);

/* The graph operations of the table (backend_cuda_graph.c); backend.h says what each does. */
cujit_status cj_cuda_capture_begin(cujit_device *dev, void *stream, int mode);
cujit_status cj_cuda_capture_last_node(cujit_device *dev, void *stream, void **node);
cujit_status cj_cuda_capture_end(cujit_device *dev, void *stream, void **graph);
void cj_cuda_graph_destroy(cujit_device *dev, void *graph);
cujit_status cj_cuda_graph_nodes(cujit_device *dev, void *graph, size_t *counts);
cujit_status cj_cuda_graph_instantiate(cujit_device *dev, void *graph, void **exec);
void cj_cuda_exec_destroy(cujit_device *dev, void *exec);
cujit_status cj_cuda_graph_launch(cujit_device *dev, void *exec, void *stream);
cujit_status cj_cuda_graph_set_kernel(cujit_device *dev, void *exec, void *node, void *fn,
                                      const unsigned grid[3], const unsigned block[3],
                                      unsigned shared_bytes, void **args);
cujit_status cj_cuda_graph_update(cujit_device *dev, void *exec, void *graph);
cujit_status cj_cuda_graph_dot(cujit_device *dev, void *graph, const char *path);

#endif
