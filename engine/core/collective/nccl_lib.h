/*
** nccl_lib.h -- NCCL (libnccl.so.2) opened at run time, as the driver and NVRTC are: the types and
** entry points cujit calls, transcribed from nccl.h (NCCL 2.x; checked against the header of the
** nvidia-nccl-cu13 2.32 wheel), since no NCCL header is needed to build cujit. Internal.
*/
#ifndef CUJIT_NCCL_LIB_H
#define CUJIT_NCCL_LIB_H

#include <stddef.h>

/* ncclResult_t: ncclSuccess 0, ncclUnhandledCudaError 1, ncclSystemError 2, ncclInternalError 3,
** ncclInvalidArgument 4, ncclInvalidUsage 5, ncclRemoteError 6, ncclInProgress 7. C enums have
** the size of int. */
typedef int cj_nccl_result;
#define CJ_NCCL_SUCCESS 0

/* ncclDataType_t: ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5,
** ncclFloat16 6, ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9. */
enum {
  CJ_NCCL_INT8 = 0,
  CJ_NCCL_UINT8 = 1,
  CJ_NCCL_INT32 = 2,
  CJ_NCCL_UINT32 = 3,
  CJ_NCCL_INT64 = 4,
  CJ_NCCL_UINT64 = 5,
  CJ_NCCL_FLOAT16 = 6,
  CJ_NCCL_FLOAT32 = 7,
  CJ_NCCL_FLOAT64 = 8,
  CJ_NCCL_BFLOAT16 = 9
};

/* ncclRedOp_t: ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4 (NCCL 2.10 and later). */
enum { CJ_NCCL_SUM = 0, CJ_NCCL_PROD = 1, CJ_NCCL_MAX = 2, CJ_NCCL_MIN = 3, CJ_NCCL_AVG = 4 };

#define CJ_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
typedef struct cj_nccl_id {
  char internal[CJ_NCCL_ID_BYTES];
} cj_nccl_id; /* ncclUniqueId, passed by value to ncclCommInitRank */

typedef void *cj_nccl_comm_t; /* ncclComm_t: struct ncclComm * */
typedef void *cj_nccl_stream; /* cudaStream_t, the same handle as a CUstream */

typedef struct cj_nccl {
  void *handle;
  char path[512]; /* what was opened */
  int version;    /* ncclGetVersion: major*10000 + minor*100 + patch (NCCL 2.9 and later) */
  cj_nccl_result (*GetVersion)(int *version);
  const char *(*GetErrorString)(cj_nccl_result result);
  const char *(*GetLastError)(cj_nccl_comm_t comm); /* NULL before NCCL 2.13 */
  cj_nccl_result (*GetUniqueId)(cj_nccl_id *id);
  cj_nccl_result (*CommInitRank)(cj_nccl_comm_t *comm, int nranks, cj_nccl_id id, int rank);
  cj_nccl_result (*CommInitAll)(cj_nccl_comm_t *comms, int ndev, const int *devlist);
  cj_nccl_result (*CommDestroy)(cj_nccl_comm_t comm);
  cj_nccl_result (*CommAbort)(cj_nccl_comm_t comm);
  cj_nccl_result (*GroupStart)(void);
  cj_nccl_result (*GroupEnd)(void);
  cj_nccl_result (*AllReduce)(const void *send, void *recv, size_t count, int dtype, int op,
                              cj_nccl_comm_t comm, cj_nccl_stream stream);
  cj_nccl_result (*Broadcast)(const void *send, void *recv, size_t count, int dtype, int root,
                              cj_nccl_comm_t comm, cj_nccl_stream stream);
  cj_nccl_result (*Reduce)(const void *send, void *recv, size_t count, int dtype, int op, int root,
                           cj_nccl_comm_t comm, cj_nccl_stream stream);
  cj_nccl_result (*AllGather)(const void *send, void *recv, size_t send_count, int dtype,
                              cj_nccl_comm_t comm, cj_nccl_stream stream);
  cj_nccl_result (*ReduceScatter)(const void *send, void *recv, size_t recv_count, int dtype,
                                  int op, cj_nccl_comm_t comm, cj_nccl_stream stream);
} cj_nccl;

/* NCCL, opened once per process on first call: $CUJIT_NCCL when set (a path to libnccl.so.2),
** else libnccl.so.2 from the loader's search path. NULL when it cannot be: `why` then says what
** to install or set. Never closed: NCCL keeps threads and handlers that would outlive its code. */
const cj_nccl *cj_nccl_open(char *why, size_t why_len);

#endif
