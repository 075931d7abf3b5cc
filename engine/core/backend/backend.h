/*
** backend.h -- the seam between the device-independent core and what runs kernels. Each device
** carries a pointer to one table of operations; the CUDA backend (backend_cuda.c, over the Driver
** API) is the first implementation and the CPU device (backend_cpu*.c) the second. Nothing above
** this seam branches on which backend a device has: it calls through the table.
**
** Handles are opaque to the core: a device address is a uint64_t (a CUdeviceptr on CUDA, a host
** address on the CPU device); streams, events, modules and functions are void pointers the
** backend made. A NULL stream is the device's default stream, in-order with every other stream
** as CUDA's legacy default stream is.
**
** The core calls every operation but enter, enter_quiet, reset and release with the device
** entered on the calling thread. Every operation returns CUJIT_OK or a failure already recorded
*with cj_fail (message saying
** what failed and what to do), except the release operations, which record nothing so that a
** free never clobbers cujit_errmsg. Waits (synchronize, event_synchronize) honour
** cujit_interrupt: each takes cj_interrupt_mark when it starts and returns
** CUJIT_ERROR_INTERRUPTED once cj_interrupted says so (cj_backend_wait does both). Copies on a NULL
*stream return when done, as the public API promises; a fill
** (memset8) on a NULL stream may return at once, but must be ordered before all later work on
** every stream of the device (the CPU device may simply finish it).
**
** The layer stands on lang (an image names its kernels' signatures) and base, not on the
** compiler: load takes a cj_image (image.h) that the program layer fills; it is below device, which
*is the
** first to call through the table. backend.c holds what every backend shares. Internal.
*/
#ifndef CUJIT_BACKEND_H
#define CUJIT_BACKEND_H

#include "base/base.h"
#include "image.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cj_backend cj_backend;

/* A device: what is common to every backend, then the backend's own state behind impl. */
struct cujit_device {
  cujit_engine *engine;
  const cj_backend *ops; /* the backend running this device's work */
  void *impl;            /* its state (backend_cuda.c: the CUdevice and primary context) */
  int ordinal;
  cujit_device_info info; /* read once when the device table is made */
  char arch[16];          /* what compiles for it target: "sm_90", "cpu" (set by the backend) */
  unsigned generation;    /* bumped by each reset; objects made before it are lost */
  cujit_status fault;     /* CUJIT_OK, or DEVICE_FAULT after a sticky error */
  char fault_msg[2048];   /* the fault, the kernel that caused it, and how to recover */
  int unrecoverable;      /* a reset did not clear the fault: the driver keeps it for the process */
  const char *last_kernel; /* the kernel last launched here, to blame on a fault (atomic access) */
  _Atomic size_t allocated;
  /* Bumped (release) by the backend after it queues work on the default stream that later work
  ** on every stream must follow (a pool block handed out again, a fill, a staged upload); a
  ** stream behind it waits for the default stream before its next work (cj_stream_queue). */
  _Atomic unsigned long order_epoch;
  /* Set after work is queued on a stream (stream.h, cj_stream_queued): `stream_work` is cleared
  ** by the pool when it makes the default stream wait for every stream, `streams_busy` by device
  ** synchronize once it saw every stream done. */
  _Atomic int stream_work, streams_busy;
};

typedef enum cj_copy_kind { CJ_COPY_HTOD, CJ_COPY_DTOH, CJ_COPY_DTOD } cj_copy_kind;

/* A hint on a range of managed memory (advise). */
typedef enum cj_advice {
  CJ_ADVISE_READ_MOSTLY,
  CJ_ADVISE_PREFERRED_DEVICE,
  CJ_ADVISE_PREFERRED_HOST,
  CJ_ADVISE_ACCESSED_BY,
  CJ_ADVISE_UNSET_READ_MOSTLY,
  CJ_ADVISE_UNSET_PREFERRED,
  CJ_ADVISE_UNSET_ACCESSED_BY,
} cj_advice;

/* A launch's attributes (cujit_launch_config's, issue 26): cluster all 0 for none, else each
** axis at least 1; programmatic and priority 0 for none. */
typedef struct cj_launch_attrs {
  unsigned cluster[3];
  int programmatic;
  int priority;
} cj_launch_attrs;

/* The size of an exported handle (CUipcMemHandle and CUipcEventHandle are 64 bytes). */
#define CJ_IPC_HANDLE_BYTES 64

struct cj_backend {
  const char *name; /* "cuda", "cpu" */
  int native;       /* 1 when its handles are the driver's, which the application may use */

  /* --- devices -------------------------------------------------------------------------------
  ** enter: makes the device usable on this thread (the CUDA backend retains the primary context
  ** on first use and makes it current); cheap when already so: the launch path calls it.
  ** enter_quiet: the same for releases: 1 when usable, 0 otherwise, records nothing.
  ** reset: drops everything made on the device (objects made before read as lost). */
  cujit_status (*enter)(cujit_device *dev);
  int (*enter_quiet)(cujit_device *dev);
  /* use_context: the application's native context (a CUcontext of this device, checked) used in
  ** place of the one the backend would make, before anything was made on the device; never
  ** released or reset by cujit. context: the native context in use (made now if it was not).
  ** NULL in a backend without native contexts (the CPU device), as the other native operations
  ** below (stream_adopt, module_native): the core refuses those calls there, saying so. */
  cujit_status (*use_context)(cujit_device *dev, void *context);
  cujit_status (*context)(cujit_device *dev, void **context);
  cujit_status (*mem_info)(cujit_device *dev, size_t *free_bytes, size_t *total_bytes);
  /* synchronize: waits (interruptibly, cj_backend_wait) for all work queued on the device: its
  ** default stream and every stream made by stream_create; the core asks nothing else first. */
  cujit_status (*synchronize)(cujit_device *dev);
  cujit_status (*reset)(cujit_device *dev);
  void (*release)(cujit_device *dev); /* at cujit_close */

  /* --- memory --------------------------------------------------------------------------------
  ** Host pointers in copies are passed as (uint64_t)(uintptr_t). host_alloc gives page-locked
  ** memory on CUDA, plain memory on the CPU device. */
  cujit_status (*alloc)(cujit_device *dev, size_t bytes, uint64_t *addr);
  void (*free)(cujit_device *dev, uint64_t addr);
  cujit_status (*host_alloc)(cujit_device *dev, size_t bytes, void **ptr);
  void (*host_free)(cujit_device *dev, void *ptr);
  cujit_status (*copy)(cujit_device *dev, cj_copy_kind kind, uint64_t dst, uint64_t src,
                       size_t bytes, void *stream);
  cujit_status (*memset8)(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                          void *stream);
  /* Managed memory, reachable from the host at the same address (the CPU device: host memory).
  ** managed_free records nothing. prefetch migrates [addr, addr+bytes) of it to the device
  ** (to_host 0) or the host, queued on stream (NULL: the default stream); advise: a hint for that
  ** range. */
  cujit_status (*managed_alloc)(cujit_device *dev, size_t bytes, uint64_t *addr);
  void (*managed_free)(cujit_device *dev, uint64_t addr);
  cujit_status (*prefetch)(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                           void *stream);
  cujit_status (*advise)(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice);
  /* host_map: the device address of page-locked host memory (host_alloc's, or registered).
  ** host_register page-locks (and maps) memory allocated elsewhere; host_unregister records
  ** nothing. */
  cujit_status (*host_map)(cujit_device *dev, void *host, uint64_t *addr);
  cujit_status (*host_register)(cujit_device *dev, void *host, size_t bytes);
  void (*host_unregister)(cujit_device *dev, void *host);

  /* --- the memory pool (issue 15) ------------------------------------------------------------
  ** alloc may serve from a pool and free may return to it, ordered after all work queued so far
  ** on the device's streams (freeing memory that queued work still uses is safe), without waiting
  ** for the device. An allocation that finds the device full first trims and retries.
  ** pool_trim: gives the pool's unused memory back to the device (the CUDA backend: waits for the
  ** device's queued frees, then cuMemPoolTrimTo 0); OK when there is no pool.
  ** pool_reserved: the bytes the pool holds now, in use or not (0 without a pool).
  ** The CPU device has no pool: pool_trim returns CUJIT_OK, pool_reserved sets 0 and returns
  ** CUJIT_OK. */
  cujit_status (*pool_trim)(cujit_device *dev);
  cujit_status (*pool_reserved)(cujit_device *dev, size_t *bytes);

  /* --- streams and events ------------------------------------------------------------------
  ** stream_query / event_query return CUJIT_OK when done, CUJIT_ERROR_NOT_READY when not (without
  ** recording it as an error), or a recorded failure. */
  cujit_status (*stream_create)(cujit_device *dev, void **stream);
  void (*stream_destroy)(cujit_device *dev, void *stream);
  /* stream_adopt: the application's native stream (checked to belong to the device's context) as
  ** a stream of the device, handle = native; stream_destroy then forgets it without destroying
  ** it. Called entered. */
  cujit_status (*stream_adopt)(cujit_device *dev, void *native, void **stream);
  cujit_status (*stream_query)(cujit_device *dev, void *stream);
  cujit_status (*stream_synchronize)(cujit_device *dev, void *stream);
  cujit_status (*stream_wait_event)(cujit_device *dev, void *stream, void *event);
  cujit_status (*event_create)(cujit_device *dev, void **event);
  void (*event_destroy)(cujit_device *dev, void *event);
  cujit_status (*event_record)(cujit_device *dev, void *event, void *stream);
  cujit_status (*event_query)(cujit_device *dev, void *event);
  cujit_status (*event_synchronize)(cujit_device *dev, void *event);
  cujit_status (*event_elapsed)(cujit_device *dev, void *start, void *end, float *ms);

  /* --- programs and launches ---------------------------------------------------------------
  ** load: the program's image (CUBIN/PTX on CUDA, a shared object on the CPU device) made usable
  ** on the device; unload releases it. get_function finds an extern "C" kernel by name.
  ** launch: args is the array cuLaunchKernel takes (one pointer per parameter, each pointing at
  ** the parameter's bytes), grid and block already checked against dev->info. */
  cujit_status (*load)(cujit_device *dev, const cj_image *image, void **module);
  void (*unload)(cujit_device *dev, void *module); /* entered or not, faulted or not */
  cujit_status (*get_function)(cujit_device *dev, void *module, const char *name, void **fn);
  /* module_native: the native module of a loaded one in the entered context. */
  cujit_status (*module_native)(cujit_device *dev, void *module, void **native);
  cujit_status (*launch)(cujit_device *dev, void *fn, const unsigned grid[3],
                         const unsigned block[3], unsigned shared_bytes, void *stream, void **args);
  cujit_status (*suggest_block)(cujit_device *dev, void *fn, int *block_size, int *min_grid);
  cujit_status (*allow_shared)(cujit_device *dev, void *fn, unsigned bytes);
  cujit_status (*attributes)(cujit_device *dev, void *fn, cujit_kernel_attributes *attrs);
  /* param_info: the compiled kernel's own view of parameter `index` (offset and size in the
  ** parameter buffer): 1 when the backend knows it, 0 when it cannot tell (records nothing). */
  int (*param_info)(cujit_device *dev, void *fn, size_t index, size_t *offset, size_t *size);
  /* get_global: the address and size of a __device__ or __constant__ variable of a loaded
  ** module; NOT_FOUND (recorded, naming it) when the program has none of that name. */
  cujit_status (*get_global)(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                             size_t *bytes);
  /* coresident_blocks: how many blocks of `threads` threads and `shared_bytes` of dynamic shared
  ** memory the whole device holds at once (occupancy per SM times SMs); a cooperative launch may
  ** not ask more. A backend that cannot run a grid's blocks at once refuses, saying so.
  ** launch_cooperative: launch's arguments, every block running at once (grid sync allowed). */
  cujit_status (*coresident_blocks)(cujit_device *dev, void *fn, unsigned threads,
                                    unsigned shared_bytes, unsigned long long *blocks);
  cujit_status (*launch_cooperative)(cujit_device *dev, void *fn, const unsigned grid[3],
                                     const unsigned block[3], unsigned shared_bytes, void *stream,
                                     void **args);
  /* Launch attributes (issue 26). check_attrs: what the device makes of `attrs` for this
  ** kernel and shape: refuses what it cannot do, saying why (CUDA: clusters and programmatic
  ** launches below sm_90, a cluster larger than the device allows); makes the kernel able to
  ** take it (CUDA: non-portable cluster sizes allowed); and sets *clusters to how many such
  ** clusters run at once (0: none fits; 1 when attrs has no cluster). The core calls it once per
  ** kernel, attributes and shape, not per launch. launch_ex: launch's arguments with attrs. */
  cujit_status (*check_attrs)(cujit_device *dev, void *fn, const unsigned grid[3],
                              const unsigned block[3], unsigned shared_bytes,
                              const cj_launch_attrs *attrs, int *clusters);
  cujit_status (*launch_ex)(cujit_device *dev, void *fn, const unsigned grid[3],
                            const unsigned block[3], unsigned shared_bytes, void *stream,
                            void **args, const cj_launch_attrs *attrs);

  /* --- graphs (graph.c) ----------------------------------------------------------------------
  ** Stream capture: between capture_begin and capture_end, the launches, copies and fills issued
  ** on `stream` (through the operations above, with that stream) are recorded into a graph
  ** instead of run; work on other streams runs as usual. The core refuses, before calling the
  ** backend, what it knows cannot be captured (a kernel not yet loaded, a reduction returning to
  ** the host); a wait on a capturing stream (stream_query, stream_synchronize, or a copy that must
  ** complete) must fail in the backend with a message naming the call and saying the stream is
  ** capturing. A graph is a handle of the backend; an exec is a graph made launchable.
  ** capture_begin: mode is a cujit_capture_mode (which calls of other threads may run meanwhile;
  **   a backend without that notion ignores it).
  ** capture_last_node: the node the last launch on the capturing stream became, a handle that
  **   graph_set_kernel takes back to address that kernel node.
  ** capture_end: ends the capture (also when it fails: the stream no longer captures) and gives
  **   the graph; a capture invalidated by a refused call fails here, saying so.
  ** graph_nodes: counts[kind] += the graph's nodes of each cujit_graph_node_kind.
  ** graph_launch: one replay of exec on stream (NULL: the default stream), asynchronous like a
  **   launch; replays run in order with the stream's other work.
  ** graph_set_kernel: the kernel node's arguments (args as for launch, copied before it returns)
  **   and configuration for the exec's later replays. graph_update: the exec takes every node's
  **   parameters from `graph`, of the same topology (else CUJIT_ERROR_INVALID_ARGUMENT saying
  **   what differs). graph_dot: a description of the graph written to `path` (CUDA: Graphviz).
  ** The destroy operations record nothing, as the other releases. */
  cujit_status (*capture_begin)(cujit_device *dev, void *stream, int mode);
  cujit_status (*capture_last_node)(cujit_device *dev, void *stream, void **node);
  cujit_status (*capture_end)(cujit_device *dev, void *stream, void **graph);
  void (*graph_destroy)(cujit_device *dev, void *graph);
  cujit_status (*graph_nodes)(cujit_device *dev, void *graph, size_t *counts);
  cujit_status (*graph_instantiate)(cujit_device *dev, void *graph, void **exec);
  void (*exec_destroy)(cujit_device *dev, void *exec);
  cujit_status (*graph_launch)(cujit_device *dev, void *exec, void *stream);
  cujit_status (*graph_set_kernel)(cujit_device *dev, void *exec, void *node, void *fn,
                                   const unsigned grid[3], const unsigned block[3],
                                   unsigned shared_bytes, void **args);
  cujit_status (*graph_update)(cujit_device *dev, void *exec, void *graph);
  cujit_status (*graph_dot)(cujit_device *dev, void *graph, const char *path);

  /* --- between devices (issue 14; peer.c) ---------------------------------------------------
  ** host_addressed: 1 when the device's addresses are host addresses (the CPU device), so a copy
  **   to or from it is the other device's host copy.
  ** copy_peer: `bytes` from src on src_dev to dst on dev, two devices of this backend, with the
  **   stream's device entered (a stream of dev or src_dev; NULL: returns when done, ordered after
  **   the work queued on both devices' default streams). NULL in a backend of one device.
  ** peer_enable: lets kernels running on dev read and write peer's memory; UNSUPPORTED (recorded)
  **   when the hardware cannot. Called with dev entered. NULL in a backend of one device. */
  int host_addressed;
  cujit_status (*copy_peer)(cujit_device *dev, uint64_t dst, cujit_device *src_dev, uint64_t src,
                            size_t bytes, void *stream);
  cujit_status (*peer_enable)(cujit_device *dev, cujit_device *peer);

  /* --- between processes (ipc.c, stream.c) -------------------------------------------------
  ** shareable_alloc: memory another process may open, allocated outside any pool (pool memory
  ** cannot be exported by a handle); shareable_free records nothing. ipc_export writes
  ** CJ_IPC_HANDLE_BYTES bytes; ipc_open maps another process's exported memory, ipc_close unmaps
  ** it (records nothing). ipc_event_create: an event another process may wait on (no timing);
  ** ipc_event_export its handle; ipc_event_open another process's. The CPU device refuses each
  ** with the reason. */
  cujit_status (*shareable_alloc)(cujit_device *dev, size_t bytes, uint64_t *addr);
  void (*shareable_free)(cujit_device *dev, uint64_t addr);
  cujit_status (*ipc_export)(cujit_device *dev, uint64_t addr, unsigned char *handle);
  cujit_status (*ipc_open)(cujit_device *dev, const unsigned char *handle, uint64_t *addr);
  void (*ipc_close)(cujit_device *dev, uint64_t addr);
  cujit_status (*ipc_event_create)(cujit_device *dev, void **event);
  cujit_status (*ipc_event_export)(cujit_device *dev, void *event, unsigned char *handle);
  cujit_status (*ipc_event_open)(cujit_device *dev, const unsigned char *handle, void **event);

  /* --- memory of other allocators (issue 24; memory_foreign.c) -------------------------------
  ** pointer_check: whether [addr, addr + bytes) (addr > 0, bytes > 0) is memory that work on dev
  **   may use as its own: on CUDA device or managed memory of the context cujit uses on dev,
  **   inside one allocation. Refusals are recorded as INVALID_ARGUMENT with a message that starts
  **   with `fn`, says what the memory is instead and what to do; UNSUPPORTED when the driver
  **   cannot answer. Called with dev entered. The CPU device (host memory) accepts any range
  **   but a GPU's device memory, when the driver is open to say so. */
  cujit_status (*pointer_check)(cujit_device *dev, uint64_t addr, size_t bytes, const char *fn);

  /* --- tensor maps (issue 26; run/tensor_map.c) -----------------------------------------------
  ** tensor_map_encode: the 128 bytes of a tiled tensor map of `desc` (checked by the caller) over
  **   device memory at `address` of elements of `dtype`, into `map`. NULL where the device has no
  **   TMA (the CPU device): the core refuses, saying so. */
  cujit_status (*tensor_map_encode)(cujit_device *dev, uint64_t address, cujit_dtype dtype,
                                    const cujit_tensor_map_desc *desc, void *map);
};

extern const cj_backend cj_backend_cuda;
extern const cj_backend cj_backend_cpu;

/* The CUDA devices the driver sees, as a table of `*count` devices (malloc'd; ordinals from 0,
** ops = &cj_backend_cuda, info filled). Opens the driver; a failure is recorded. */
cujit_status cj_cuda_devices(cujit_engine *engine, cujit_device **devices, int *count);

/* The CPU device, as a record of one device (malloc'd; ordinal CUJIT_DEVICE_CPU, ops =
** &cj_backend_cpu, info filled: one worker per core, or CUJIT_CPU_THREADS). Needs no driver; its
** threads start with its first work. backend_cpu.c. */
cujit_status cj_cpu_device(cujit_engine *engine, cujit_device **device);

/* --- what every backend shares (backend.c) ---------------------------------------------------- */

/* Poisons the device with a sticky fault: the first report's message (printf-style) is kept,
** later ones keep it; returns cj_device_refuse. */
cujit_status cj_device_fault(cujit_device *dev, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the device's fault as this thread's error and returns DEVICE_FAULT. */
cujit_status cj_device_refuse(cujit_device *dev);

/* The device has a sticky fault: everything but releases is refused. Read without the engine's
** lock, beside a reset that clears it under the lock: hence the atomic load. */
static inline int cj_device_faulted(const cujit_device *dev) {
  return __atomic_load_n(&dev->fault, __ATOMIC_ACQUIRE) != CUJIT_OK;
}

/* --- the caller's current context (issue 24) ---------------------------------------------------
** A program that embeds cujit may have its own context current on a thread (a context it made, or
** another device's); every public call leaves it as it found it. A public call that reaches a
** device opens a scope first (CJ_KEEP_CALLER_CONTEXT, run/device.h); a backend's enter that makes
** its own context current in place of another calls cj_backend_switched with the one it replaced,
** and when the outermost scope of the thread closes, that backend's restore puts it back. Only
** the first switch of a scope is kept (it is the caller's), so a call that enters several devices
** restores the one it found. Inside a scope a restore costs nothing when nothing was switched:
** one thread-local load. A context that was NULL (none current) is not restored: the backend's
** stays current, as the CUDA runtime leaves the primary context current, so that the runtime-API
** code of the same thread finds the context cujit uses. */
void cj_backend_scope_open(void);
void cj_backend_scope_close(void);
/* Called by a backend's enter when it replaced `prior` (not NULL) on this thread; restore(user,
** prior) is called at the outermost scope's close (`user` must live until then: the engine's
** driver does, cujit_close closing its scope before the driver). Outside any scope it keeps
** nothing. */
void cj_backend_switched(void (*restore)(void *user, void *prior), void *user, void *prior);

/* Waits until done(dev, handle) stops saying CUJIT_ERROR_NOT_READY (which it must not record),
** by the wait policy of backend.c (spin, then yield, then naps proportional to the time waited;
** CUJIT_WAIT), so that cujit_interrupt cuts the wait short (INTERRUPTED, naming `what` and the
** device) and a long wait does not hold a core. */
typedef cujit_status (*cj_poll_fn)(cujit_device *dev, void *handle);
cujit_status cj_backend_wait(cujit_device *dev, cj_poll_fn done, void *handle, const char *what);

#endif
