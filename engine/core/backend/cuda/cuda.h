/*
** cuda.h -- what the CUDA backend's files share: a device's state behind dev->impl,
** turning driver results into statuses, the memory operations that cuda_memory.c gives
** the table of cuda_device.c, and the graph operations of cuda_graph.c (stream capture
** and graphs). Private to the backend layer.
*/
#ifndef CUJIT_BACKEND_CUDA_H
#define CUJIT_BACKEND_CUDA_H

#include "backend/backend.h"

/* A stream this backend made, with an event that orders the default stream behind it. */
typedef struct cuda_stream {
  CUstream stream;
  CUevent joined;
  int capturing; /* cj_cuda_stream_capturing: left out of synchronize and the pool's joins */
  int foreign;   /* the application's (cujit_stream_wrap): untracked at its free, not destroyed */
} cuda_stream;

/* cuda_pool.c: cujit's cache of device blocks over the driver's pool. */
#define CJ_CACHE_BINS 256
typedef struct cuda_block cuda_block;
typedef struct cuda_cache {
  pthread_mutex_t lock;
  cuda_block **by_addr; /* every block taken from the driver and not given back, by address */
  size_t nbuckets, nblocks;
  cuda_block *free[CJ_CACHE_BINS]; /* free blocks, by rounded size */
  unsigned long joins; /* joins of every stream into the default stream made for reuse */
} cuda_cache;

/* cuda_pool.c: the pinned ring small uploads are staged through. */
#define CJ_STAGE_SEGMENT (64 * 1024)
#define CJ_STAGE_SEGMENTS 16
typedef struct cuda_stage {
  pthread_mutex_t lock;
  unsigned char *ring; /* CJ_STAGE_SEGMENTS * CJ_STAGE_SEGMENT pinned bytes, made on first use */
  int unavailable;     /* the ring could not be made: uploads wait as before */
  int segment;         /* the segment being filled, `used` bytes of it so far */
  size_t used;
  CUevent left[CJ_STAGE_SEGMENTS]; /* recorded on the default stream when a segment is left */
  unsigned char recorded[CJ_STAGE_SEGMENTS];
  pthread_mutex_t down_lock; /* small downloads land in `down` (CJ_STAGE_SEGMENT pinned bytes) */
  unsigned char *down;
  int down_unavailable;
} cuda_stage;

typedef struct cuda_device {
  cj_driver *drv;
  CUdevice handle;
  CUcontext ctx;        /* the retained primary context; NULL until first needed (atomic) */
  int adopted;          /* ctx is the application's (cujit_device_use_context): never released */
  pthread_mutex_t lock; /* serialises retaining and resetting the context */
  CUmemoryPool pool;    /* the device's default pool, or NULL: CUJIT_POOL=off, or unsupported */
  /* The streams made here, for synchronize and for ordering the reuse of freed blocks against
  ** them (streams_lock). */
  pthread_mutex_t streams_lock;
  cuda_stream *streams;
  int nstreams, cap;
  cuda_cache cache;
  cuda_stage stage;
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

/* The CUmodule of a loaded library in the entered context (cuda_program.c). */
cujit_status cj_cuda_module_native(cujit_device *dev, void *module, void **native);

/* The application's stream, checked to be of the device's context and kept in the list. */
cujit_status cj_cuda_stream_adopt(cujit_device *dev, void *native, void **stream);

/* A cj_poll_fn for one stream (NULL: the default stream). */
cujit_status cj_cuda_stream_done(cujit_device *dev, void *stream);

/* cuda_pool.c: buffers from the pool (the table's alloc, free, pool_trim and
** pool_reserved), the device's pool made, given back before a reset and at cujit_close. */
cujit_status cj_cuda_alloc(cujit_device *dev, size_t bytes, uint64_t *addr);
void cj_cuda_free(cujit_device *dev, uint64_t addr);
cujit_status cj_cuda_pool_trim(cujit_device *dev);
cujit_status cj_cuda_pool_reserved(cujit_device *dev, size_t *bytes);
void cj_cuda_pool_init(cuda_device *c);
void cj_cuda_pool_forget(cuda_device *c);
void cj_cuda_pool_give_back(cujit_device *dev, int with_live_buffers);
void cj_cuda_pool_close(cuda_device *c);

/* A copy of `bytes` from host memory to dst on the default stream through the staging ring: 1
** when it took the copy (its status in *st: queued, and src free to change), 0 when the copy
** must go the ordinary way (too large, several GPUs, no ring). */
int cj_cuda_staged_upload(cujit_device *dev, uint64_t dst, const void *src, size_t bytes,
                          cujit_status *st);

/* A copy of `bytes` from src to host memory on the default stream through a pinned buffer: the
** copy queued, the default stream waited for (interruptibly), the bytes copied out. 1 when it took
** the copy (its status in *st), 0 when the copy must go the ordinary way. */
int cj_cuda_staged_download(cujit_device *dev, void *dst, uint64_t src, size_t bytes,
                            cujit_status *st);

/* Work just queued on the default stream comes before every stream's next work. */
static inline void cj_cuda_order_after_default(cujit_device *dev) {
  atomic_fetch_add_explicit(&dev->order_epoch, 1, memory_order_release);
}

/* cuda_memory.c: the other memory operations of the table. */
cujit_status cj_cuda_host_alloc(cujit_device *dev, size_t bytes, void **ptr);
void cj_cuda_host_free(cujit_device *dev, void *ptr);
cujit_status cj_cuda_copy(cujit_device *dev, cj_copy_kind kind, uint64_t dst, uint64_t src,
                          size_t bytes, void *stream);
cujit_status cj_cuda_memset8(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                             void *stream);
/* The driver of a CUDA device. */
cj_driver *cj_cuda_driver(cujit_device *dev);

/* The message for a call the driver refused because a stream was capturing (one of the
** CUDA_ERROR_STREAM_CAPTURE_* results, CUDA_ERROR_CAPTURED_EVENT), naming `what` and the way out.
*/
int cj_cuda_is_capture_error(CUresult rc);
cujit_status cj_cuda_capture_error(cujit_device *dev, CUresult rc, const char *what);

/* The graph operations of the table (cuda_graph.c); backend.h says what each does. */
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

/* Copies and access between two GPUs (cuda_peer.c); backend.h says what each does. */
cujit_status cj_cuda_copy_peer(cujit_device *dev, uint64_t dst, cujit_device *src_dev, uint64_t src,
                               size_t bytes, void *stream);
cujit_status cj_cuda_peer_enable(cujit_device *dev, cujit_device *peer);

/* An optional entry point the driver lacks: the feature is refused, not the engine. */
cujit_status cj_cuda_missing(cujit_device *dev, const char *entry, const char *feature);
#define CJ_CUDA_NEED(dev, entry, feature)                                                          \
  do {                                                                                             \
    if (!DRV(dev)->entry) return cj_cuda_missing(dev, #entry, feature);                            \
  } while (0)

/* cuda_tma.c: tensor maps (backend.h's tensor_map_encode). */
cujit_status cj_cuda_tensor_map_encode(cujit_device *dev, uint64_t address, cujit_dtype dtype,
                                       const cujit_tensor_map_desc *desc, void *map);

/* For queries: NOT_READY is an answer, not an error, and is not recorded. */
cujit_status cj_cuda_answer(cujit_device *dev, CUresult rc, const char *what);

/* A device attribute of dev, or a recorded failure. */
cujit_status cj_cuda_attribute(cujit_device *dev, CUdevice_attribute which, int *value);

/* cuda_memory.c: managed, mapped and registered memory (the table's entries; backend.h says what
 * each does). */
cujit_status cj_cuda_managed_alloc(cujit_device *dev, size_t bytes, uint64_t *addr);
void cj_cuda_managed_free(cujit_device *dev, uint64_t addr);
cujit_status cj_cuda_prefetch(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                              void *stream);
cujit_status cj_cuda_advise(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice);
cujit_status cj_cuda_host_map(cujit_device *dev, void *host, uint64_t *addr);
cujit_status cj_cuda_host_register(cujit_device *dev, void *host, size_t bytes);
void cj_cuda_host_unregister(cujit_device *dev, void *host);
/* cuda_memory.c: whether a foreign range is this device's memory (the table's pointer_check). */
cujit_status cj_cuda_pointer_check(cujit_device *dev, uint64_t addr, size_t bytes, const char *fn);

/* cuda_stream.c: streams and events (the table's entries). */
cujit_status cj_cuda_stream_create(cujit_device *dev, void **stream);
void cj_cuda_stream_destroy(cujit_device *dev, void *stream);
cujit_status cj_cuda_stream_query(cujit_device *dev, void *stream);
cujit_status cj_cuda_stream_synchronize(cujit_device *dev, void *stream);
cujit_status cj_cuda_stream_wait_event(cujit_device *dev, void *stream, void *event);
cujit_status cj_cuda_event_create(cujit_device *dev, void **event);
void cj_cuda_event_destroy(cujit_device *dev, void *event);
cujit_status cj_cuda_event_record(cujit_device *dev, void *event, void *stream);
cujit_status cj_cuda_event_query(cujit_device *dev, void *event);
cujit_status cj_cuda_event_synchronize(cujit_device *dev, void *event);
cujit_status cj_cuda_event_elapsed(cujit_device *dev, void *start, void *end, float *ms);

/* cuda_program.c: programs, launches, globals and cooperative launches (the table's entries). */
cujit_status cj_cuda_load(cujit_device *dev, const cj_image *image, void **module);
void cj_cuda_unload(cujit_device *dev, void *module);
cujit_status cj_cuda_get_function(cujit_device *dev, void *module, const char *name, void **fn);
cujit_status cj_cuda_launch(cujit_device *dev, void *fn, const unsigned grid[3],
                            const unsigned block[3], unsigned shared_bytes, void *stream,
                            void **args);
cujit_status cj_cuda_suggest_block(cujit_device *dev, void *fn, int *block_size, int *min_grid);
cujit_status cj_cuda_allow_shared(cujit_device *dev, void *fn, unsigned bytes);
cujit_status cj_cuda_attributes(cujit_device *dev, void *fn, cujit_kernel_attributes *attrs);
int cj_cuda_param_info(cujit_device *dev, void *fn, size_t index, size_t *offset, size_t *size);
cujit_status cj_cuda_get_global(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                                size_t *bytes);
cujit_status cj_cuda_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                       unsigned shared_bytes, unsigned long long *blocks);
cujit_status cj_cuda_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                        const unsigned block[3], unsigned shared_bytes,
                                        void *stream, void **args);
cujit_status cj_cuda_check_attrs(cujit_device *dev, void *fn, const unsigned grid[3],
                                 const unsigned block[3], unsigned shared_bytes,
                                 const cj_launch_attrs *attrs, int *clusters);
cujit_status cj_cuda_launch_ex(cujit_device *dev, void *fn, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes, void *stream,
                               void **args, const cj_launch_attrs *attrs);

/* cuda_ipc.c: sharing between processes (the table's entries). */
cujit_status cj_cuda_shareable_alloc(cujit_device *dev, size_t bytes, uint64_t *addr);
void cj_cuda_shareable_free(cujit_device *dev, uint64_t addr);
cujit_status cj_cuda_ipc_export(cujit_device *dev, uint64_t addr, unsigned char *handle);
cujit_status cj_cuda_ipc_open(cujit_device *dev, const unsigned char *handle, uint64_t *addr);
void cj_cuda_ipc_close(cujit_device *dev, uint64_t addr);
cujit_status cj_cuda_ipc_event_create(cujit_device *dev, void **event);
cujit_status cj_cuda_ipc_event_export(cujit_device *dev, void *event, unsigned char *handle);
cujit_status cj_cuda_ipc_event_open(cujit_device *dev, const unsigned char *handle, void **event);

#endif
