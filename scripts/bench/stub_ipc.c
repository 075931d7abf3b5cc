/*
** stub_ipc.c -- the stand-in driver's sharing between processes (CUDA IPC), so that cujit's IPC
** code, otherwise GPU-only, runs in tests without a GPU. cuIpcGetMemHandle and
** cuIpcGetEventHandle write a handle naming the address and the exporting process (stub_ipc.h);
** the open calls refuse a handle they did not write (CUDA_ERROR_INVALID_VALUE) and one of their
** own process (CUDA_ERROR_INVALID_CONTEXT, as the real driver refuses it), and "open" one naming
** another process by handing back the address in it. The stand-in's memory is this process's, so
** a test forges such a handle (another process id in the text cujit made) to reach cujit's
** opened buffers and events with one process. Opens and closes are counted (cujit_stub_ipc).
*/
#include "stub_ipc.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void cj_stub_cost(void); /* stub_driver.c */

static long opened, closed, events_opened;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count(long *counter) {
  pthread_mutex_lock(&count_lock);
  (*counter)++;
  pthread_mutex_unlock(&count_lock);
}

long cujit_stub_ipc(const char *what) {
  long *counter = strcmp(what, "opened") == 0          ? &opened
                  : strcmp(what, "closed") == 0        ? &closed
                  : strcmp(what, "events_opened") == 0 ? &events_opened
                                                       : NULL;
  if (!counter) return -1;
  pthread_mutex_lock(&count_lock);
  long n = *counter;
  pthread_mutex_unlock(&count_lock);
  return n;
}

static void put_le(unsigned char *at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) at[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | at[i];
  return v;
}

static void make(char *reserved, const char *magic, uint64_t address) {
  unsigned char *h = (unsigned char *)reserved;
  memset(h, 0, CU_IPC_HANDLE_SIZE);
  memcpy(h, magic, 8);
  put_le(h + CJ_STUB_IPC_PID_AT, (uint64_t)getpid(), 4);
  put_le(h + CJ_STUB_IPC_ADDRESS_AT, address, 8);
}

/* The address a handle names, or the driver's refusal. */
static CUresult open_handle(const char *reserved, const char *magic, uint64_t *address) {
  const unsigned char *h = (const unsigned char *)reserved;
  if (memcmp(h, magic, 8) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (get_le(h + CJ_STUB_IPC_PID_AT, 4) == (uint64_t)getpid()) return CUDA_ERROR_INVALID_CONTEXT;
  *address = get_le(h + CJ_STUB_IPC_ADDRESS_AT, 8);
  return CUDA_SUCCESS;
}

CUresult cj_stub_ipc_get_mem(CUipcMemHandle *handle, CUdeviceptr address) {
  cj_stub_cost();
  make(handle->reserved, CJ_STUB_IPC_MEM_MAGIC, address);
  return CUDA_SUCCESS;
}

CUresult cj_stub_ipc_open_mem(CUdeviceptr *address, CUipcMemHandle handle, unsigned flags) {
  cj_stub_cost();
  if (flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) return CUDA_ERROR_INVALID_VALUE;
  uint64_t a = 0;
  CUresult rc = open_handle(handle.reserved, CJ_STUB_IPC_MEM_MAGIC, &a);
  if (rc == CUDA_SUCCESS) *address = (CUdeviceptr)a, count(&opened);
  return rc;
}

CUresult cj_stub_ipc_close_mem(CUdeviceptr address) {
  cj_stub_cost();
  (void)address;
  count(&closed);
  return CUDA_SUCCESS;
}

CUresult cj_stub_ipc_get_event(CUipcEventHandle *handle, CUevent event) {
  cj_stub_cost();
  make(handle->reserved, CJ_STUB_IPC_EVENT_MAGIC, (uint64_t)(uintptr_t)event);
  return CUDA_SUCCESS;
}

CUresult cj_stub_ipc_open_event(CUevent *event, CUipcEventHandle handle) {
  cj_stub_cost();
  uint64_t a = 0;
  CUresult rc = open_handle(handle.reserved, CJ_STUB_IPC_EVENT_MAGIC, &a);
  if (rc == CUDA_SUCCESS) *event = (CUevent)(uintptr_t)a, count(&events_opened);
  return rc;
}
