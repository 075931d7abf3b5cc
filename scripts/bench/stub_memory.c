/*
** stub_memory.c -- the stand-in driver's managed memory (cuMemAllocManaged: a block the pointer
** attributes call managed; the device says it supports managed memory unless
** CUJIT_STUB_MANAGED=0), its prefetches and advice (noted, as they do nothing on host memory),
** and registered and mapped host memory (cuMemHostRegister keeps the ranges and refuses one
** registered twice, as the real driver does; a mapped address is the host address, as under
** unified addressing). cujit_stub_memory_seen tells tests what the calls were given, so that the
** CUDA backend's translation of cujit's advice and locations is checked without a GPU. Also
** cuTensorMapEncodeTiled, which writes what it was given into the map (stub_memory.h's layout),
** and the pool's trims and the stream-ordering calls (cuEventRecord, cuStreamWaitEvent), counted;
** with CUJIT_STUB_DEFER_COPIES=1 a copy from pinned memory lands at the next driver call.
*/
#include "stub_memory.h"

#include "stub_events.h"
#include "stub_graph.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

void cj_stub_cost(void);                                     /* stub_driver.c */
int cj_stub_env_int(const char *name, int fallback);         /* stub_driver.c */
void *cujit_stub_block(size_t bytes, int kind, int ordinal); /* stub_driver.c */
enum { STUB_MANAGED = 2 };                                   /* stub_driver.c's CJ_STUB_MANAGED */

enum {
  SEEN_PREFETCH,
  SEEN_PREFETCH_BYTES,
  SEEN_PREFETCH_TYPE,
  SEEN_PREFETCH_ID,
  SEEN_PREFETCH_STREAM,
  SEEN_ADVISE,
  SEEN_ADVISE_ADVICE,
  SEEN_ADVISE_TYPE,
  SEEN_ADVISE_ID,
  SEEN_REGISTER_FLAGS,
  SEEN_REGISTERED,
  SEEN_TRIM,
  SEEN_EVENT_RECORD,
  SEEN_STREAM_WAIT,
  SEEN_DTOH,
  SEEN_DTOH_PINNED,
  SEEN_COUNT
};
static const char *const seen_names[SEEN_COUNT] = {
    "prefetch",        "prefetch.bytes", "prefetch.type", "prefetch.id",
    "prefetch.stream", "advise",         "advise.advice", "advise.type",
    "advise.id",       "register.flags", "registered",    "trim",
    "event_record",    "stream_wait",    "dtoh",          "dtoh.pinned"};
static long seen[SEEN_COUNT];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_REGISTERED 64
static void *registered[MAX_REGISTERED];
static size_t registered_bytes[MAX_REGISTERED];

long cujit_stub_memory_seen(const char *name) {
  long v = -1;
  pthread_mutex_lock(&seen_lock);
  for (int i = 0; i < SEEN_COUNT; i++)
    if (seen_names[i] && strcmp(seen_names[i], name) == 0) v = seen[i];
  pthread_mutex_unlock(&seen_lock);
  return v;
}

CUresult cj_stub_alloc_managed(CUdeviceptr *p, size_t bytes, unsigned flags) {
  cj_stub_cost();
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
  void *block = bytes ? cujit_stub_block(bytes, STUB_MANAGED, 0) : NULL;
  if (!block) return bytes ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
  *p = (CUdeviceptr)(uintptr_t)block;
  return CUDA_SUCCESS;
}

CUresult cj_stub_prefetch(CUdeviceptr p, size_t bytes, CUmemLocation to, unsigned flags,
                          CUstream s) {
  cj_stub_cost();
  (void)p, (void)flags;
  pthread_mutex_lock(&seen_lock);
  seen[SEEN_PREFETCH]++;
  seen[SEEN_PREFETCH_BYTES] = (long)bytes;
  seen[SEEN_PREFETCH_TYPE] = to.type;
  seen[SEEN_PREFETCH_ID] = to.id;
  seen[SEEN_PREFETCH_STREAM] = s != NULL;
  pthread_mutex_unlock(&seen_lock);
  return CUDA_SUCCESS;
}

CUresult cj_stub_advise(CUdeviceptr p, size_t bytes, CUmem_advise advice, CUmemLocation where) {
  cj_stub_cost();
  (void)p, (void)bytes;
  pthread_mutex_lock(&seen_lock);
  seen[SEEN_ADVISE]++;
  seen[SEEN_ADVISE_ADVICE] = advice;
  seen[SEEN_ADVISE_TYPE] = where.type;
  seen[SEEN_ADVISE_ID] = where.id;
  pthread_mutex_unlock(&seen_lock);
  return CUDA_SUCCESS;
}

void cj_stub_note_dtoh(const void *dst) {
  int pinned = cj_stub_is_pinned(dst);
  pthread_mutex_lock(&seen_lock);
  seen[SEEN_DTOH]++;
  seen[SEEN_DTOH_PINNED] += pinned;
  pthread_mutex_unlock(&seen_lock);
}

CUresult cj_stub_host_register(void *p, size_t bytes, unsigned flags) {
  cj_stub_cost();
  if (!p || !bytes) return CUDA_ERROR_INVALID_VALUE;
  CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&seen_lock);
  int free_slot = -1, twice = 0;
  for (int i = 0; i < MAX_REGISTERED; i++) {
    twice = twice || registered[i] == p;
    if (!registered[i] && free_slot < 0) free_slot = i;
  }
  if (twice) {
    rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  } else if (free_slot >= 0) {
    registered[free_slot] = p, registered_bytes[free_slot] = bytes;
    seen[SEEN_REGISTER_FLAGS] = flags;
    seen[SEEN_REGISTERED]++;
    rc = CUDA_SUCCESS;
  }
  pthread_mutex_unlock(&seen_lock);
  return rc;
}

CUresult cj_stub_host_unregister(void *p) {
  cj_stub_cost();
  CUresult rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  pthread_mutex_lock(&seen_lock);
  for (int i = 0; i < MAX_REGISTERED; i++)
    if (p && registered[i] == p) registered[i] = NULL, seen[SEEN_REGISTERED]--, rc = CUDA_SUCCESS;
  pthread_mutex_unlock(&seen_lock);
  return rc;
}

int cj_stub_is_registered(CUdeviceptr p, size_t bytes) {
  int in = 0;
  pthread_mutex_lock(&seen_lock);
  for (int i = 0; i < MAX_REGISTERED && !in; i++) {
    uintptr_t start = (uintptr_t)registered[i];
    in = start && p >= start && p - start <= registered_bytes[i] &&
         bytes <= registered_bytes[i] - (p - start);
  }
  pthread_mutex_unlock(&seen_lock);
  return in;
}

CUresult cj_stub_host_device_pointer(CUdeviceptr *d, void *p, unsigned flags) {
  cj_stub_cost();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult cj_stub_tensor_map(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                            void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                            const cuuint32_t *box, const cuuint32_t *element_strides,
                            CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  cj_stub_cost();
  if (rank < 1 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
  uint64_t w[16] = {0};
  memcpy(&w[0], "cjstubtm", 8);
  w[1] = type, w[2] = rank, w[3] = (uint64_t)(uintptr_t)address;
  for (cuuint32_t d = 0; d < rank; d++) {
    w[4 + d] = dims[d];
    if (d + 1 < rank) w[9 + d] = strides[d];
    w[13] |= (uint64_t)box[d] << (12 * d);
    w[14] |= (uint64_t)element_strides[d] << (12 * d);
  }
  w[15] = (uint64_t)swizzle | (uint64_t)interleave << 8 | (uint64_t)l2 << 16 | (uint64_t)oob << 24;
  memcpy(map, w, sizeof w);
  return CUDA_SUCCESS;
}

/* The pool's trims, and the events and waits that order streams (cuda_pool.c's joins): counted. */
static CUresult count(int what) {
  cj_stub_cost();
  pthread_mutex_lock(&seen_lock);
  seen[what]++;
  pthread_mutex_unlock(&seen_lock);
  return CUDA_SUCCESS;
}

CUresult cj_stub_pool_trim_to(CUmemoryPool pool, size_t keep) {
  (void)pool, (void)keep;
  return count(SEEN_TRIM);
}

CUresult cj_stub_event_record(CUevent event, CUstream s) {
  (void)s;
  cj_stub_event_recorded(event);
  return count(SEEN_EVENT_RECORD);
}

CUresult cj_stub_stream_wait_event(CUstream s, CUevent event, unsigned flags) {
  (void)s, (void)event, (void)flags;
  return count(SEEN_STREAM_WAIT);
}

/* CUJIT_STUB_DEFER_COPIES=1: a copy from pinned host memory to the device is done at the next
** driver call, not at once, as a GPU reads pinned memory only when the copy runs in its stream: a
** caller that writes the source again before a driver call (an event, a query, a wait, another
** copy) has changed what lands. Copies from other host memory are done at once, as the real
** driver stages pageable memory before it returns. */
static struct {
  CUdeviceptr dst;
  const void *src;
  size_t bytes;
} pending[64];
static int npending, defer = -1;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

void cj_stub_flush_copies(void) {
  int on = __atomic_load_n(&defer, __ATOMIC_RELAXED);
  if (on < 0) /* read once; every thread reads the same value */
    __atomic_store_n(&defer, on = cj_stub_env_int("CUJIT_STUB_DEFER_COPIES", 0), __ATOMIC_RELAXED);
  if (!on) return;
  pthread_mutex_lock(&pending_lock);
  for (int i = 0; i < npending; i++)
    memmove((void *)(uintptr_t)pending[i].dst, pending[i].src, pending[i].bytes);
  npending = 0;
  pthread_mutex_unlock(&pending_lock);
}

CUresult cj_stub_copy_htod(CUdeviceptr dst, const void *src, size_t bytes, CUstream s) {
  cj_stub_cost(); /* which does the copies queued before, and reads the variable */
  if (!cj_stub_is_driver_memory(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  CUresult captured = cj_stub_capture_other(s, CU_GRAPH_NODE_TYPE_MEMCPY);
  if (captured != CUDA_SUCCESS) return captured;
  pthread_mutex_lock(&pending_lock);
  int later = __atomic_load_n(&defer, __ATOMIC_RELAXED) && cj_stub_is_pinned(src) &&
              npending < (int)(sizeof pending / sizeof *pending);
  if (later)
    pending[npending].dst = dst, pending[npending].src = src, pending[npending++].bytes = bytes;
  pthread_mutex_unlock(&pending_lock);
  if (!later) memmove((void *)(uintptr_t)dst, src, bytes);
  return CUDA_SUCCESS;
}
