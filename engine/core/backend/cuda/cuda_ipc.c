/*
** cuda_ipc.c -- the CUDA backend's sharing between processes (backend.h): memory allocated outside
** the pool so that it can be exported, IPC handles of memory and events (cuIpc*), opened and
** closed. Every entry point is an optional one of the loader: a driver without it refuses.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- sharing between processes ---------------------------------------------------------------- */

cujit_status cj_cuda_shareable_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuMemAlloc(&p, bytes);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return cj_cuda_out_of_memory(dev, NULL, bytes);
  *addr = p;
  return cj_cuda_check(dev, rc, "allocating shareable device memory (cuMemAlloc)");
}

void cj_cuda_shareable_free(cujit_device *dev, uint64_t addr) {
  DRV(dev)->cuMemFree((CUdeviceptr)addr);
}

cujit_status cj_cuda_ipc_export(cujit_device *dev, uint64_t addr, unsigned char *handle) {
  CJ_CUDA_NEED(dev, cuIpcGetMemHandle, "sharing memory between processes");
  CUipcMemHandle h;
  CUresult rc = DRV(dev)->cuIpcGetMemHandle(&h, (CUdeviceptr)addr);
  if (rc == CUDA_SUCCESS) memcpy(handle, h.reserved, CJ_IPC_HANDLE_BYTES);
  return cj_cuda_check(dev, rc, "exporting device memory (cuIpcGetMemHandle)");
}

/* The driver's refusal of a handle this process cannot open, said with cujit's rule. */
static cujit_status refused_handle(cujit_device *dev, const char *what, const char *holds) {
  return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "opening %s of another process on device %d: the driver refused the handle (a "
                 "handle opens in another process only, once per process, while the exporting "
                 "process still %s)",
                 what, dev->ordinal, holds);
}

cujit_status cj_cuda_ipc_open(cujit_device *dev, const unsigned char *handle, uint64_t *addr) {
  CJ_CUDA_NEED(dev, cuIpcOpenMemHandle, "opening memory of another process");
  CUipcMemHandle h;
  memcpy(h.reserved, handle, CJ_IPC_HANDLE_BYTES);
  CUdeviceptr p = 0;
  CUresult rc = DRV(dev)->cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_INVALID_VALUE)
    return refused_handle(dev, "memory", "holds the memory");
  *addr = p;
  return cj_cuda_check(dev, rc, "opening memory of another process (cuIpcOpenMemHandle)");
}

void cj_cuda_ipc_close(cujit_device *dev, uint64_t addr) {
  if (DRV(dev)->cuIpcCloseMemHandle) DRV(dev)->cuIpcCloseMemHandle((CUdeviceptr)addr);
}

cujit_status cj_cuda_ipc_event_create(cujit_device *dev, void **event) {
  CUevent e = NULL;
  CUresult rc = DRV(dev)->cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING);
  *event = e;
  return cj_cuda_check(dev, rc, "creating an interprocess event (cuEventCreate)");
}

cujit_status cj_cuda_ipc_event_export(cujit_device *dev, void *event, unsigned char *handle) {
  CJ_CUDA_NEED(dev, cuIpcGetEventHandle, "sharing an event between processes");
  CUipcEventHandle h;
  CUresult rc = DRV(dev)->cuIpcGetEventHandle(&h, (CUevent)event);
  if (rc == CUDA_SUCCESS) memcpy(handle, h.reserved, CJ_IPC_HANDLE_BYTES);
  return cj_cuda_check(dev, rc, "exporting an event (cuIpcGetEventHandle)");
}

cujit_status cj_cuda_ipc_event_open(cujit_device *dev, const unsigned char *handle, void **event) {
  CJ_CUDA_NEED(dev, cuIpcOpenEventHandle, "opening an event of another process");
  CUipcEventHandle h;
  memcpy(h.reserved, handle, CJ_IPC_HANDLE_BYTES);
  CUevent e = NULL;
  CUresult rc = DRV(dev)->cuIpcOpenEventHandle(&e, h);
  if (rc == CUDA_ERROR_INVALID_CONTEXT || rc == CUDA_ERROR_INVALID_VALUE)
    return refused_handle(dev, "an event", "holds the event");
  *event = e;
  return cj_cuda_check(dev, rc, "opening an event of another process (cuIpcOpenEventHandle)");
}
