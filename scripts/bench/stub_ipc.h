/*
** stub_ipc.h -- the stand-in driver's IPC entry points (stub_ipc.c), named in stub_driver.c's
** table, and the layout of the handles they write, which tests forge (see stub_ipc.c).
*/
#ifndef CJ_STUB_IPC_H
#define CJ_STUB_IPC_H

#include <cuda.h>

/* A handle's 64 bytes: the magic (8 bytes), the exporting process's id (4, little-endian), 4
** zero bytes, the address of the memory or event (8, little-endian), then zeros. */
#define CJ_STUB_IPC_MEM_MAGIC "cjstubmm"
#define CJ_STUB_IPC_EVENT_MAGIC "cjstubev"
enum { CJ_STUB_IPC_PID_AT = 8, CJ_STUB_IPC_ADDRESS_AT = 16 };

CUresult cj_stub_ipc_get_mem(CUipcMemHandle *handle, CUdeviceptr address);
CUresult cj_stub_ipc_open_mem(CUdeviceptr *address, CUipcMemHandle handle, unsigned flags);
CUresult cj_stub_ipc_close_mem(CUdeviceptr address);
CUresult cj_stub_ipc_get_event(CUipcEventHandle *handle, CUevent event);
CUresult cj_stub_ipc_open_event(CUevent *event, CUipcEventHandle handle);

/* For tests (dlsym it from libcuda.so.1): how many memory handles were opened ("opened"), closed
** ("closed"), event handles opened ("events_opened"); -1 for another name. */
long cujit_stub_ipc(const char *what);

#endif
