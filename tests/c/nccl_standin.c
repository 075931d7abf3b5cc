/*
** nccl_standin.c -- a stand-in NCCL for tests (CUJIT_NCCL=<this library>): it exports every entry
** point cujit resolves, reports the version in $CJ_TEST_NCCL_VERSION (an NCCL_VERSION_CODE, 22703
** for 2.27.3; 22703 when unset) and fails every other call. So the suite sees cujit's checks of
** the library it opens (engine/core/collective/nccl_lib.c) without NCCL or a GPU. Built twice:
** nccl_standin_old (CJ_NCCL_STANDIN_OLD) lacks ncclReduceScatter, as an NCCL too old for cujit.
*/
#include <stddef.h>
#include <stdlib.h>

enum { INTERNAL_ERROR = 3 }; /* ncclInternalError */

int ncclGetVersion(int *version) {
  const char *v = getenv("CJ_TEST_NCCL_VERSION");
  *version = v && *v ? atoi(v) : 22703;
  return 0;
}

const char *ncclGetErrorString(int result) {
  return result ? "the stand-in NCCL does nothing" : "no error";
}

int ncclGetUniqueId(void *id) {
  (void)id;
  return INTERNAL_ERROR;
}

int ncclCommInitRank(void **comm, int nranks, char id[128], int rank) {
  (void)comm, (void)nranks, (void)id, (void)rank;
  return INTERNAL_ERROR;
}

int ncclCommInitAll(void **comms, int ndev, const int *devlist) {
  (void)comms, (void)ndev, (void)devlist;
  return INTERNAL_ERROR;
}

int ncclCommDestroy(void *comm) {
  (void)comm;
  return INTERNAL_ERROR;
}

int ncclCommAbort(void *comm) {
  (void)comm;
  return INTERNAL_ERROR;
}

int ncclGroupStart(void) {
  return INTERNAL_ERROR;
}

int ncclGroupEnd(void) {
  return INTERNAL_ERROR;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, void *comm,
                  void *stream) {
  (void)send, (void)recv, (void)count, (void)dtype, (void)op, (void)comm, (void)stream;
  return INTERNAL_ERROR;
}

int ncclBroadcast(const void *send, void *recv, size_t count, int dtype, int root, void *comm,
                  void *stream) {
  (void)send, (void)recv, (void)count, (void)dtype, (void)root, (void)comm, (void)stream;
  return INTERNAL_ERROR;
}

int ncclReduce(const void *send, void *recv, size_t count, int dtype, int op, int root, void *comm,
               void *stream) {
  (void)send, (void)recv, (void)count, (void)dtype, (void)op, (void)root, (void)comm, (void)stream;
  return INTERNAL_ERROR;
}

int ncclAllGather(const void *send, void *recv, size_t count, int dtype, void *comm, void *stream) {
  (void)send, (void)recv, (void)count, (void)dtype, (void)comm, (void)stream;
  return INTERNAL_ERROR;
}

#ifndef CJ_NCCL_STANDIN_OLD
int ncclReduceScatter(const void *send, void *recv, size_t count, int dtype, int op, void *comm,
                      void *stream) {
  (void)send, (void)recv, (void)count, (void)dtype, (void)op, (void)comm, (void)stream;
  return INTERNAL_ERROR;
}
#endif
