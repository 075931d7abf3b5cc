/*
** backend_toolbox.h -- the backend operations of issue 16's toolbox, in a table of their own that
** each backend's table points at (cj_backend.toolbox): managed memory, mapping and registering
** host memory, a program's globals, cooperative launches and sharing memory and events between
** processes. The CUDA backend's are in backend_cuda_toolbox.c, the CPU device's in
** backend_cpu_toolbox.c (host memory for managed and mapped memory, dlsym for globals,
** cooperative launches of one block per worker, a refusal with a message for IPC). The rules of
*backend.h hold: the core calls
** each with the device entered, failures are recorded, releases record nothing. Internal.
*/
#ifndef CUJIT_BACKEND_TOOLBOX_H
#define CUJIT_BACKEND_TOOLBOX_H

#include "backend.h"

/* The size of an exported handle (CUipcMemHandle and CUipcEventHandle are 64 bytes). */
#define CJ_IPC_HANDLE_BYTES 64

typedef enum cj_advice {
  CJ_ADVISE_READ_MOSTLY,
  CJ_ADVISE_PREFERRED_DEVICE,
  CJ_ADVISE_PREFERRED_HOST,
  CJ_ADVISE_ACCESSED_BY,
  CJ_ADVISE_UNSET_READ_MOSTLY,
  CJ_ADVISE_UNSET_PREFERRED,
  CJ_ADVISE_UNSET_ACCESSED_BY,
} cj_advice;

struct cj_backend_toolbox {
  /* Managed memory, reachable from the host at the same address. managed_free records nothing. */
  cujit_status (*managed_alloc)(cujit_device *dev, size_t bytes, uint64_t *addr);
  void (*managed_free)(cujit_device *dev, uint64_t addr);
  /* Migrates [addr, addr+bytes) of managed memory to the device (to_host 0) or the host, queued
  ** on stream (NULL: the default stream). advise: a hint for that range. */
  cujit_status (*prefetch)(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                           void *stream);
  cujit_status (*advise)(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice);
  /* The device address of page-locked host memory (host_alloc's, or registered). */
  cujit_status (*host_map)(cujit_device *dev, void *host, uint64_t *addr);
  /* Page-locks (and maps) memory allocated elsewhere; host_unregister records nothing. */
  cujit_status (*host_register)(cujit_device *dev, void *host, size_t bytes);
  void (*host_unregister)(cujit_device *dev, void *host);
  /* The address and size of a __device__ or __constant__ variable of a loaded module; NOT_FOUND
  ** (recorded, naming it) when the program has none of that name. */
  cujit_status (*get_global)(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                             size_t *bytes);
  /* How many blocks of `threads` threads and `shared_bytes` of dynamic shared memory the whole
  ** device holds at once (occupancy per SM times SMs); a cooperative launch may not ask more.
  ** A backend that cannot run a grid's blocks at once refuses, saying so. */
  cujit_status (*coresident_blocks)(cujit_device *dev, void *fn, unsigned threads,
                                    unsigned shared_bytes, unsigned long long *blocks);
  cujit_status (*launch_cooperative)(cujit_device *dev, void *fn, const unsigned grid[3],
                                     const unsigned block[3], unsigned shared_bytes, void *stream,
                                     void **args);
  /* Memory another process may open: allocated outside any pool (pool memory cannot be
  ** exported by a handle); freed by shareable_free, which records nothing. */
  cujit_status (*shareable_alloc)(cujit_device *dev, size_t bytes, uint64_t *addr);
  void (*shareable_free)(cujit_device *dev, uint64_t addr);
  cujit_status (*ipc_export)(cujit_device *dev, uint64_t addr, unsigned char *handle);
  cujit_status (*ipc_open)(cujit_device *dev, const unsigned char *handle, uint64_t *addr);
  void (*ipc_close)(cujit_device *dev, uint64_t addr);
  /* An event that another process may wait on (no timing), its handle, and the opening of one. */
  cujit_status (*ipc_event_create)(cujit_device *dev, void **event);
  cujit_status (*ipc_event_export)(cujit_device *dev, void *event, unsigned char *handle);
  cujit_status (*ipc_event_open)(cujit_device *dev, const unsigned char *handle, void **event);
};

extern const cj_backend_toolbox cj_cuda_toolbox;
extern const cj_backend_toolbox cj_cpu_toolbox;

#endif
