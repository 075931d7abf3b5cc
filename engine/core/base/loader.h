/*
** loader.h -- the CUDA driver, NVRTC and nvJitLink, opened at run time.
**
** Nothing in cujit links libcuda, libnvrtc or libnvJitLink. The driver's entry points are resolved
*through
** cuGetProcAddress with the ABI version of each PFN_* typedef in cudaTypedefs.h (a plain dlsym of
** "cuMemAlloc" would return the legacy v1 ABI). NVRTC has one ABI per soname, so dlsym suffices.
*/
#ifndef CUJIT_LOADER_H
#define CUJIT_LOADER_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvJitLink.h>
#include <nvrtc.h>

/* X(name, abi): every driver entry point cujit calls, with the ABI version it was written for.
** Several graph names are cuda.h macros for versioned symbols (cuStreamBeginCapture ->
** cuStreamBeginCapture_v2, cuGraphExecUpdate -> _v2,
** cuGraphExecKernelNodeSetParams -> _v2 taking CUDA_KERNEL_NODE_PARAMS_v2): the ABI named here is
** the one those macros stand for, so the field cuda.h's rename gives and the PFN agree. */
#define CJ_DRIVER_FUNCTIONS(X)                                                                     \
  X(cuInit, 2000)                                                                                  \
  X(cuDriverGetVersion, 2020)                                                                      \
  X(cuGetErrorName, 6000)                                                                          \
  X(cuGetErrorString, 6000)                                                                        \
  X(cuDeviceGetCount, 2000)                                                                        \
  X(cuDeviceGet, 2000)                                                                             \
  X(cuDeviceGetName, 2000)                                                                         \
  X(cuDeviceGetAttribute, 2000)                                                                    \
  X(cuDeviceTotalMem, 3020)                                                                        \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                \
  X(cuDevicePrimaryCtxRelease, 11000)                                                              \
  X(cuDevicePrimaryCtxReset, 11000)                                                                \
  X(cuCtxSetCurrent, 4000)                                                                         \
  X(cuCtxGetCurrent, 4000)                                                                         \
  X(cuCtxSynchronize, 2000)                                                                        \
  X(cuMemAlloc, 3020)                                                                              \
  X(cuMemFree, 3020)                                                                               \
  X(cuMemGetInfo, 3020)                                                                            \
  X(cuMemcpyHtoD, 3020)                                                                            \
  X(cuMemcpyDtoH, 3020)                                                                            \
  X(cuMemcpyDtoD, 3020)                                                                            \
  X(cuMemcpyHtoDAsync, 3020)                                                                       \
  X(cuMemcpyDtoHAsync, 3020)                                                                       \
  X(cuMemcpyDtoDAsync, 3020)                                                                       \
  X(cuMemcpyPeer, 4000)                                                                            \
  X(cuMemcpyPeerAsync, 4000)                                                                       \
  X(cuDeviceCanAccessPeer, 4000)                                                                   \
  X(cuCtxEnablePeerAccess, 4000)                                                                   \
  X(cuMemsetD8, 3020)                                                                              \
  X(cuMemsetD8Async, 3020)                                                                         \
  X(cuMemHostAlloc, 2020)                                                                          \
  X(cuMemFreeHost, 2000)                                                                           \
  X(cuDeviceGetDefaultMemPool, 11020)                                                              \
  X(cuMemAllocFromPoolAsync, 11020)                                                                \
  X(cuMemFreeAsync, 11020)                                                                         \
  X(cuMemPoolSetAttribute, 11020)                                                                  \
  X(cuMemPoolGetAttribute, 11020)                                                                  \
  X(cuMemPoolTrimTo, 11020)                                                                        \
  X(cuMemPoolSetAccess, 11020)                                                                     \
  X(cuStreamCreate, 2000)                                                                          \
  X(cuStreamDestroy, 4000)                                                                         \
  X(cuStreamSynchronize, 2000)                                                                     \
  X(cuStreamQuery, 2000)                                                                           \
  X(cuStreamWaitEvent, 3020)                                                                       \
  X(cuEventCreate, 2000)                                                                           \
  X(cuEventDestroy, 4000)                                                                          \
  X(cuEventRecord, 2000)                                                                           \
  X(cuEventSynchronize, 2000)                                                                      \
  X(cuEventQuery, 2000)                                                                            \
  X(cuEventElapsedTime, 2000)                                                                      \
  X(cuLibraryLoadData, 12000)                                                                      \
  X(cuLibraryUnload, 12000)                                                                        \
  X(cuLibraryGetKernel, 12000)                                                                     \
  X(cuKernelGetFunction, 12000)                                                                    \
  X(cuFuncGetAttribute, 2020)                                                                      \
  X(cuFuncSetAttribute, 9000)                                                                      \
  X(cuLaunchKernel, 4000)                                                                          \
  X(cuOccupancyMaxPotentialBlockSize, 6050)                                                        \
  X(cuStreamBeginCapture, 10010)                                                                   \
  X(cuStreamEndCapture, 10000)                                                                     \
  X(cuStreamGetCaptureInfo, 11030)                                                                 \
  X(cuGraphInstantiateWithFlags, 11040)                                                            \
  X(cuGraphLaunch, 10000)                                                                          \
  X(cuGraphExecDestroy, 10000)                                                                     \
  X(cuGraphDestroy, 10000)                                                                         \
  X(cuGraphGetNodes, 10000)                                                                        \
  X(cuGraphNodeGetType, 10000)                                                                     \
  X(cuGraphExecKernelNodeSetParams, 12000)                                                         \
  X(cuGraphExecUpdate, 12000)                                                                      \
  X(cuGraphDebugDotPrint, 11030)

/* Entry points that older drivers may lack; NULL when absent, and callers check. */
/* Issue 16's toolbox (backend_cuda_toolbox.c) is optional too: a driver without one of them
** refuses that feature alone, saying so. */
#define CJ_DRIVER_OPTIONAL_FUNCTIONS(X)                                                            \
  X(cuFuncGetParamInfo, 12040)                                                                     \
  X(cuMemAllocManaged, 6000)                                                                       \
  X(cuMemPrefetchAsync, 12020)                                                                     \
  X(cuMemAdvise, 12020)                                                                            \
  X(cuMemHostGetDevicePointer, 3020)                                                               \
  X(cuMemHostRegister, 6050)                                                                       \
  X(cuMemHostUnregister, 4000)                                                                     \
  X(cuLibraryGetGlobal, 12000)                                                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)                                             \
  X(cuLaunchCooperativeKernel, 9000)                                                               \
  X(cuIpcGetMemHandle, 4010)                                                                       \
  X(cuIpcOpenMemHandle, 11000)                                                                     \
  X(cuIpcCloseMemHandle, 4010)                                                                     \
  X(cuIpcGetEventHandle, 4010)                                                                     \
  X(cuIpcOpenEventHandle, 4010)                                                                    \
  X(cuCtxGetDevice, 2000)                                                                          \
  X(cuStreamGetCtx, 9020)                                                                          \
  X(cuLibraryGetModule, 12000)                                                                     \
  X(cuPointerGetAttributes, 7000)                                                                  \
  X(cuTensorMapEncodeTiled, 12000)                                                                 \
  X(cuLaunchKernelEx, 11060)                                                                       \
  X(cuOccupancyMaxActiveClusters, 11070)

/* Pasted directly so that cuda.h's renames (cuMemAlloc -> cuMemAlloc_v2) touch only the field
** name, consistently with every use of it, and never the PFN typedef's name. */
#define CJ_DRIVER_FIELD_(name, abi) PFN_##name##_v##abi name;

typedef struct cj_driver {
  void *handle; /* dlopen of libcuda.so.1 */
  int version;  /* cuDriverGetVersion */
  CJ_DRIVER_FUNCTIONS(CJ_DRIVER_FIELD_)
  CJ_DRIVER_OPTIONAL_FUNCTIONS(CJ_DRIVER_FIELD_)
} cj_driver;

/* X(name): every NVRTC function cujit calls. */
#define CJ_NVRTC_FUNCTIONS(X)                                                                      \
  X(nvrtcVersion)                                                                                  \
  X(nvrtcGetErrorString)                                                                           \
  X(nvrtcGetNumSupportedArchs)                                                                     \
  X(nvrtcGetSupportedArchs)                                                                        \
  X(nvrtcCreateProgram)                                                                            \
  X(nvrtcDestroyProgram)                                                                           \
  X(nvrtcCompileProgram)                                                                           \
  X(nvrtcGetPTXSize)                                                                               \
  X(nvrtcGetPTX)                                                                                   \
  X(nvrtcGetCUBINSize)                                                                             \
  X(nvrtcGetCUBIN)                                                                                 \
  X(nvrtcGetProgramLogSize)                                                                        \
  X(nvrtcGetProgramLog)                                                                            \
  X(nvrtcAddNameExpression)                                                                        \
  X(nvrtcGetLoweredName)

/* X(name): NVRTC functions that older NVRTCs lack; NULL when absent, and callers check. The
** precompiled-header calls came with NVRTC 12.8 (without them, no PCH: compile/pch.h); the
** LTO-IR ones only device code linked at run time needs (compile/link.c, which says so). */
#define CJ_NVRTC_OPTIONAL_FUNCTIONS(X)                                                             \
  X(nvrtcGetPCHHeapSize)                                                                           \
  X(nvrtcSetPCHHeapSize)                                                                           \
  X(nvrtcGetPCHCreateStatus)                                                                       \
  X(nvrtcGetPCHHeapSizeRequired)                                                                   \
  X(nvrtcGetLTOIRSize)                                                                             \
  X(nvrtcGetLTOIR)

#define CJ_NVRTC_FIELD_(name) __typeof__(&name) name;

typedef struct cj_nvrtc {
  void *handle;
  char path[256]; /* what was opened, for `cujit --version` */
  int version;    /* major*1000 + minor*10 */
  int arch_count; /* the sm_XX it supports, asked once at open (0: it could not say): NVRTC 13
                  ** runs a process's calls one at a time, so a call per compile would wait for
                  ** any compile running in the process */
  int archs[256];
  CJ_NVRTC_FUNCTIONS(CJ_NVRTC_FIELD_)
  CJ_NVRTC_OPTIONAL_FUNCTIONS(CJ_NVRTC_FIELD_)
} cj_nvrtc;

/* X(name): every nvJitLink function cujit calls (the link option, compile/link.c). The library
** exports these plain names beside versioned ones (__nvJitLinkCreate_13_0) that its header's
** inline wrappers call; the plain ones are the soname's stable ABI. */
#define CJ_NVJITLINK_FUNCTIONS(X)                                                                  \
  X(nvJitLinkVersion)                                                                              \
  X(nvJitLinkCreate)                                                                               \
  X(nvJitLinkDestroy)                                                                              \
  X(nvJitLinkAddData)                                                                              \
  X(nvJitLinkComplete)                                                                             \
  X(nvJitLinkGetLinkedCubinSize)                                                                   \
  X(nvJitLinkGetLinkedCubin)                                                                       \
  X(nvJitLinkGetLinkedPtxSize)                                                                     \
  X(nvJitLinkGetLinkedPtx)                                                                         \
  X(nvJitLinkGetErrorLogSize)                                                                      \
  X(nvJitLinkGetErrorLog)                                                                          \
  X(nvJitLinkGetInfoLogSize)                                                                       \
  X(nvJitLinkGetInfoLog)

typedef struct cj_nvjitlink {
  void *handle;
  char path[512]; /* what was opened */
  int version;    /* major*1000 + minor*10 */
  CJ_NVJITLINK_FUNCTIONS(CJ_NVRTC_FIELD_)
} cj_nvjitlink;

/* Open the driver and call cuInit(0). On failure, write why into `why` (a sentence that says what
** is missing and what to do) and return 0. */
int cj_driver_open(cj_driver *drv, char *why, size_t why_len);
void cj_driver_close(cj_driver *drv);

/* Open NVRTC: $CUJIT_NVRTC if set, else libnvrtc.so.13, then libnvrtc.so.12. */
int cj_nvrtc_open(cj_nvrtc *nv, char *why, size_t why_len);
void cj_nvrtc_close(cj_nvrtc *nv);

/* Open nvJitLink: $CUJIT_NVJITLINK if set (and nothing else then), else libnvJitLink.so.13, then
** .so.12, by the loader's search path, then the same names in $CUDA_HOME/lib64, $CUDA_PATH/lib64
** and /usr/local/cuda/lib64 (a toolkit whose lib directory is not on LD_LIBRARY_PATH). On failure
** `why` says what was tried and what to do, and 0. Never closed by cujit (one per process). */
int cj_nvjitlink_open(cj_nvjitlink *lk, char *why, size_t why_len);

#endif
