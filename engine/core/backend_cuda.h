/*
** backend_cuda.h -- what the CUDA backend's files share: a device's state behind dev->impl,
** turning driver results into statuses, the memory operations that backend_cuda_memory.c gives
** the table of backend_cuda.c, and the graph operations of backend_cuda_graph.c (stream capture
** and graphs). Private to the backend layer.
*/
#ifndef CUJIT_BACKEND_CUDA_H
#define CUJIT_BACKEND_CUDA_H

#include "backend.h"

/* A stream this backend made, with an event that orders the default stream behind it. */
typedef struct cuda_stream {
  CUstream stream;
  CUevent joined;
  int capturing; /* cj_cuda_stream_capturing: left out of synchronize and the pool's joins */
} cuda_stream;

typedef struct cuda_device {
  cj_driver *drv;
  CUdevice handle;
  CUcontext ctx;        /* the retained primary context; NULL until first needed (atomic) */
  pthread_mutex_t lock; /* serialises retaining and resetting the context */
  CUmemoryPool pool;    /* the device's default pool, or NULL: CUJIT_POOL=off, or unsupported */
  /* The streams made here, for synchronize and for ordering pool frees and allocations against
  ** them (streams_lock); `allocated` is recorded on the default stream after a pool allocation. */
  pthread_mutex_t streams_lock;
  cuda_stream *streams;
  int nstreams, cap;
  CUevent allocated;
} cuda_device;

#define CU(dev) ((cuda_device *)(dev)->impl)
#define DRV(dev) (CU(dev)->drv)

/* A driver result as a status, recorded with a message naming `what` (sticky errors poison). */
cujit_status cj_cuda_check(cujit_device *dev, CUresult rc, const char *what);

/* The one out-of-memory message: for an allocation of `bytes` (> 0), or for the call `what`. */
cujit_status cj_cuda_out_of_memory(cujit_device *dev, const char *what, size_t bytes);

/* Waits (cj_backend_wait) for the default stream and every stream made here. */
cujit_status cj_cuda_synchronize(cujit_device *dev);

/* Marks a stream made here as capturing a graph, or no longer (for stream capture's begin and
** end): while it captures, device synchronize and the pool's joins leave it out, since a query of
** it or an event recorded on it would be refused by the driver or recorded into the graph. */
void cj_cuda_stream_capturing(cujit_device *dev, void *stream, int capturing);

/* A cj_poll_fn for one stream (NULL: the default stream). */
cujit_status cj_cuda_stream_done(cujit_device *dev, void *stream);

/* backend_cuda_memory.c: the memory operations of the table, and the pool's. */
cujit_status cj_cuda_alloc(cujit_device *dev, size_t bytes, uint64_t *addr);
void cj_cuda_free(cujit_device *dev, uint64_t addr);
cujit_status cj_cuda_host_alloc(cujit_device *dev, size_t bytes, void **ptr);
void cj_cuda_host_free(cujit_device *dev, void *ptr);
cujit_status cj_cuda_copy(cujit_device *dev, cj_copy_kind kind, uint64_t dst, uint64_t src,
                          size_t bytes, void *stream);
cujit_status cj_cuda_memset8(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                             void *stream);
cujit_status cj_cuda_pool_trim(cujit_device *dev);
cujit_status cj_cuda_pool_reserved(cujit_device *dev, size_t *bytes);

/* The driver of a CUDA device. */
cj_driver *cj_cuda_driver(cujit_device *dev);

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

/* Copies and access between two GPUs (backend_cuda_peer.c); backend.h says what each does. */
cujit_status cj_cuda_copy_peer(cujit_device *dev, uint64_t dst, cujit_device *src_dev, uint64_t src,
                               size_t bytes, void *stream);
cujit_status cj_cuda_peer_enable(cujit_device *dev, cujit_device *peer);

#endif
