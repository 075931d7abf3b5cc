/*
** cpu_graph.h -- the CPU device's answers to the memory-pool and graph operations of
** backend.h (it keeps no pool: freed memory goes back to the C library at once), and what
** cpu_device.c hands to the graph side: ops issued on a capturing stream, a replay's op when it
** has run, and the check that an event was not last recorded into a capture. Private to the
** backend layer.
*/
#ifndef CUJIT_BACKEND_CPU_GRAPH_H
#define CUJIT_BACKEND_CPU_GRAPH_H

#include "cpu.h"

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

/* An op issued on a capturing stream (cj_cpu_enqueue hands it over): recorded into the capture,
** or refused; takes the op. */
cujit_status cj_cpu_capture_op(cujit_device *dev, cpu_op *op, void *stream);
/* A copy issued on a capturing stream: recorded, or refused when it touches pageable host
** memory (which invalidates the capture, as CUDA's driver does). */
cujit_status cj_cpu_capture_copy(cujit_device *dev, cj_copy_kind kind, void *dst, const void *src,
                                 size_t bytes, void *stream);
/* Frees a capture in progress (a stream destroyed while it captures); NULL is fine. */
void cj_cpu_capture_free(void *capture);
/* CUJIT_OK, or a recorded refusal when the event was last recorded on a capturing stream. */
cujit_status cj_cpu_event_uncaptured(cujit_device *dev, void *event, const char *fn);
/* Under the device's lock, when a replay's op has run: releases its plan, keeps the op. */
void cj_cpu_replay_done(cpu_dev *c, cpu_op *op);
/* Frees the kept replay ops (at the device's release). */
void cj_cpu_replay_spares_free(cpu_dev *c);

#endif
