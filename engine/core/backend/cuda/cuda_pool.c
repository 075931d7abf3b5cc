/*
** cuda_pool.c -- the CUDA backend's memory pool (issue 15): cujit's own cache of device
** blocks over the driver's stream-ordered pool, so that allocating and freeing a buffer costs no
** driver call in the common case, and the pinned staging ring that lets a small upload return
** without waiting for the device.
**
** The cache keeps every block it took from the driver (cuMemAllocFromPoolAsync on the default
** stream) in a table by address; a freed block goes on a free list by size (rounded up to 512
** bytes, as CuPy's pool does) and is handed out again for the same size. Buffers belong to no
** stream, so reuse is made safe by stream order in two steps, both without waiting on the host:
**   - a block freed while the backend has streams is handed out again only after one join: the
**     default stream waits for what every stream had queued (an event each). One join serves
**     every block freed before it, so a loop of temporaries pays it once per round, not per block;
**   - a block handed out (again, or fresh from the driver's pool, which reuses in stream order on
**     the default stream) bumps the device's order_epoch: each stream waits for the default
**     stream before its next work (cj_stream_queue), once per bump, not per block.
** Nothing is given back to the driver until pool_trim (cujit_device_trim, cuda.trim(), an
** allocation that finds the device full), a reset or cujit_close (cj_cuda_pool_give_back: every
** block and the staging buffers, even from a faulted context). CUJIT_POOL=off bypasses all of it
** (cuMemAlloc, cuMemFree).
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAIN 512 /* sizes are rounded up to a multiple of it */

/* A block the cache took from the driver: in use by a buffer, or free. */
struct cuda_block {
  uint64_t addr;
  size_t size;           /* rounded */
  unsigned long after;   /* free: reusable once cache.joins >= after (0: at once) */
  int in_use;            /* handed out to a buffer */
  cuda_block *next;      /* in its address bucket */
  cuda_block *next_free; /* in its free list, while free */
};

static size_t rounded(size_t bytes) {
  return bytes > SIZE_MAX - GRAIN ? bytes : (bytes + GRAIN - 1) / GRAIN * GRAIN;
}

static size_t addr_bucket(const cuda_cache *k, uint64_t addr) {
  return (size_t)((addr / GRAIN) * 0x9E3779B97F4A7C15ull >> 32) & (k->nbuckets - 1);
}

static cuda_block **free_list(cuda_cache *k, size_t size) {
  return &k->free[(size / GRAIN) & (CJ_CACHE_BINS - 1)];
}

static cuda_block *find(const cuda_cache *k, uint64_t addr) {
  if (!k->nbuckets) return NULL;
  cuda_block *b = k->by_addr[addr_bucket(k, addr)];
  while (b && b->addr != addr) b = b->next;
  return b;
}

/* Doubles the address table when it holds more blocks than buckets; 0 when out of host memory. */
static int make_room(cuda_cache *k) {
  if (k->nblocks < k->nbuckets) return 1;
  size_t n = k->nbuckets ? 2 * k->nbuckets : 64;
  cuda_block **table = calloc(n, sizeof *table);
  if (!table) return 0;
  cuda_block **old = k->by_addr;
  size_t old_n = k->nbuckets;
  k->by_addr = table, k->nbuckets = n;
  for (size_t i = 0; i < old_n; i++)
    for (cuda_block *b = old[i], *next; b; b = next) {
      next = b->next;
      size_t j = addr_bucket(k, b->addr);
      b->next = table[j], table[j] = b;
    }
  free(old);
  return 1;
}

static void unlink_addr(cuda_cache *k, cuda_block *b) {
  cuda_block **p = &k->by_addr[addr_bucket(k, b->addr)];
  while (*p != b) p = &(*p)->next;
  *p = b->next;
  k->nblocks--;
}

/* The default stream waits for what every stream holds now (capturing ones aside: their work
** runs at replays, ordered by the stream they replay on). */
static CUresult join_streams(cuda_device *c) {
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&c->streams_lock);
  for (int i = 0; i < c->nstreams && rc == CUDA_SUCCESS; i++) {
    if (c->streams[i].capturing) continue;
    rc = c->drv->cuEventRecord(c->streams[i].joined, c->streams[i].stream);
    if (rc == CUDA_SUCCESS) rc = c->drv->cuStreamWaitEvent((CUstream)0, c->streams[i].joined, 0);
  }
  pthread_mutex_unlock(&c->streams_lock);
  return rc;
}

/* join_streams when some stream got work since the last one; nothing at all when every stream sat
 *idle, the common case of a program that
 ** made a stream once. The flag is cleared before the join: work marked after that is seen by the
 ** next one, work marked before it was queued before the join's events. */
static CUresult join_streams_if_used(cujit_device *dev) {
  if (!atomic_exchange_explicit(&dev->stream_work, 0, memory_order_acq_rel)) return CUDA_SUCCESS;
  CUresult rc = join_streams(CU(dev));
  if (rc != CUDA_SUCCESS) atomic_store(&dev->stream_work, 1);
  return rc;
}

static int has_streams(cuda_device *c) {
  pthread_mutex_lock(&c->streams_lock);
  int n = c->nstreams;
  pthread_mutex_unlock(&c->streams_lock);
  return n > 0;
}

/* A free block of exactly `size`, taken off its list (joined first when it needs it), or NULL. */
static CUresult take(cujit_device *dev, size_t size, cuda_block **out) {
  cuda_cache *k = &CU(dev)->cache;
  *out = NULL;
  cuda_block **p = free_list(k, size);
  while (*p && (*p)->size != size) p = &(*p)->next_free;
  cuda_block *b = *p;
  if (!b) return CUDA_SUCCESS;
  if (b->after > k->joins) {
    CUresult rc = join_streams_if_used(dev);
    if (rc != CUDA_SUCCESS) return rc;
    k->joins++; /* every block freed so far is now behind the default stream */
  }
  *p = b->next_free;
  b->in_use = 1;
  *out = b;
  return CUDA_SUCCESS;
}

/* Gives every free block back to the driver's pool (in stream order on the default stream, after
** one join when some still wait for one). Called with the cache locked. */
static CUresult release_free(cujit_device *dev) {
  cuda_device *c = CU(dev);
  cuda_cache *k = &c->cache;
  CUresult rc = CUDA_SUCCESS;
  for (int i = 0; i < CJ_CACHE_BINS; i++)
    for (cuda_block *b = k->free[i]; b; b = b->next_free)
      if (b->after > k->joins && rc == CUDA_SUCCESS &&
          (rc = join_streams_if_used(dev)) == CUDA_SUCCESS)
        k->joins++;
  if (rc != CUDA_SUCCESS) return rc;
  for (int i = 0; i < CJ_CACHE_BINS; i++) {
    for (cuda_block *b = k->free[i], *next; b; b = next) {
      next = b->next_free;
      c->drv->cuMemFreeAsync((CUdeviceptr)b->addr, (CUstream)0);
      unlink_addr(k, b);
      free(b);
    }
    k->free[i] = NULL;
  }
  return CUDA_SUCCESS;
}

/* A new block from the driver's pool, on the default stream, recorded in the cache. */
static CUresult fresh(cujit_device *dev, size_t size, uint64_t *addr) {
  cuda_device *c = CU(dev);
  CUdeviceptr ptr = 0;
  CUresult rc = c->drv->cuMemAllocFromPoolAsync(&ptr, size, c->pool, (CUstream)0);
  if (rc != CUDA_SUCCESS) return rc;
  cuda_block *b = calloc(1, sizeof *b);
  pthread_mutex_lock(&c->cache.lock);
  int room = b && make_room(&c->cache);
  if (room) {
    cuda_cache *k = &c->cache;
    *b = (cuda_block){.addr = ptr, .size = size, .in_use = 1};
    size_t j = addr_bucket(k, ptr);
    b->next = k->by_addr[j], k->by_addr[j] = b;
    k->nblocks++;
  }
  pthread_mutex_unlock(&c->cache.lock);
  if (!room) {
    free(b);
    c->drv->cuMemFreeAsync(ptr, (CUstream)0);
    return CUDA_ERROR_OUT_OF_MEMORY; /* of the host's, but the caller's message is the same */
  }
  *addr = ptr;
  return CUDA_SUCCESS;
}

static CUresult alloc_once(cujit_device *dev, size_t bytes, uint64_t *addr) {
  cuda_device *c = CU(dev);
  if (!c->pool) {
    CUdeviceptr ptr = 0;
    CUresult rc = c->drv->cuMemAlloc(&ptr, bytes);
    *addr = ptr;
    return rc;
  }
  size_t size = rounded(bytes);
  cuda_block *b = NULL;
  pthread_mutex_lock(&c->cache.lock);
  CUresult rc = take(dev, size, &b);
  pthread_mutex_unlock(&c->cache.lock);
  if (rc == CUDA_SUCCESS && b) *addr = b->addr;
  if (rc == CUDA_SUCCESS && !b) rc = fresh(dev, size, addr);
  if (rc == CUDA_SUCCESS) cj_cuda_order_after_default(dev);
  return rc;
}

/* Out of memory: first the pool's unused memory goes back (after the frees still queued), then
** one more try, then the usual message. */
cujit_status cj_cuda_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  cuda_device *c = CU(dev);
  *addr = 0;
  CUresult rc = alloc_once(dev, bytes, addr);
  if (rc == CUDA_ERROR_OUT_OF_MEMORY && c->pool && cj_cuda_pool_trim(dev) == CUJIT_OK)
    rc = alloc_once(dev, bytes, addr);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  if (rc == CUDA_ERROR_OUT_OF_MEMORY) return cj_cuda_out_of_memory(dev, NULL, bytes);
  char what[96], asked[32];
  snprintf(what, sizeof what, "%s of %s on device %d", c->pool ? "cuMemAllocAsync" : "cuMemAlloc",
           cj_bytes_text(bytes, asked, sizeof asked), dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

/* Back on its free list: no driver call. A block the cache does not know (none should reach
** here) goes to the driver in stream order after every stream, as before the cache. */
void cj_cuda_free(cujit_device *dev, uint64_t addr) {
  cuda_device *c = CU(dev);
  if (!c->pool) {
    c->drv->cuMemFree((CUdeviceptr)addr);
    return;
  }
  unsigned long after = has_streams(c) ? 1 : 0;
  cuda_cache *k = &c->cache;
  pthread_mutex_lock(&k->lock);
  cuda_block *b = find(k, addr);
  if (b && b->in_use) {
    b->in_use = 0;
    b->after = after ? k->joins + 1 : 0;
    cuda_block **list = free_list(k, b->size);
    b->next_free = *list, *list = b;
  }
  pthread_mutex_unlock(&k->lock);
  if (b) return;
  if (join_streams(c) != CUDA_SUCCESS ||
      c->drv->cuMemFreeAsync((CUdeviceptr)addr, (CUstream)0) != CUDA_SUCCESS)
    c->drv->cuMemFree((CUdeviceptr)addr);
}

cujit_status cj_cuda_pool_trim(cujit_device *dev) {
  cuda_device *c = CU(dev);
  if (!c->pool) return CUJIT_OK;
  pthread_mutex_lock(&c->cache.lock);
  CUresult rc = release_free(dev);
  pthread_mutex_unlock(&c->cache.lock);
  cujit_status st =
      cj_cuda_check(dev, rc, "giving the pool's free blocks back (cujit_device_trim)");
  if (st == CUJIT_OK) st = cj_cuda_synchronize(dev); /* frees still queued hold their blocks */
  /* A free counts as outstanding until the host has observed its completion through a
  ** synchronize; a query does not count (the trim left every block otherwise). The work is done
  ** by now, so this returns at once. */
  if (st == CUJIT_OK) st = cj_cuda_check(dev, c->drv->cuCtxSynchronize(), "cujit_device_trim");
  return st == CUJIT_OK ? cj_cuda_check(dev, c->drv->cuMemPoolTrimTo(c->pool, 0), "cuMemPoolTrimTo")
                        : st;
}

cujit_status cj_cuda_pool_reserved(cujit_device *dev, size_t *bytes) {
  cuda_device *c = CU(dev);
  cuuint64_t reserved = 0;
  *bytes = 0;
  if (!c->pool) return CUJIT_OK;
  CUresult rc =
      c->drv->cuMemPoolGetAttribute(c->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
  *bytes = (size_t)reserved;
  return cj_cuda_check(dev, rc, "reading the memory pool's size (cuMemPoolGetAttribute)");
}

/* --- the staging ring for small uploads --------------------------------------------------------
** A copy of at most CJ_STAGE_SEGMENT bytes from host memory on the default stream is copied into
** the next free place of a pinned ring and queued from there (cuMemcpyHtoDAsync from pinned
** memory does not wait), so the caller's memory may change as soon as the call returns, as the
** API promises, without a wait for the device. The ring's segments are reused in turn; each one
** left gets an event, and is waited for (almost always already done) before it is written again.
** Only with one GPU: with several, work on another device (peer access) is not ordered behind
** this device's default stream, and the upload waits as it did. */

static cujit_status segment_done(cujit_device *dev, void *event) {
  CUresult rc = DRV(dev)->cuEventQuery((CUevent)event);
  if (rc == CUDA_ERROR_NOT_READY) return CUJIT_ERROR_NOT_READY;
  return cj_cuda_check(dev, rc, "cujit_memcpy_htod (waiting for a staging segment)");
}

/* While a stream captures a graph, pinned memory is not made (the driver may refuse it, or end
** the capture): the copy goes the ordinary way. */
static int capturing(cuda_device *c) {
  int any = 0;
  pthread_mutex_lock(&c->streams_lock);
  for (int i = 0; i < c->nstreams; i++) any |= c->streams[i].capturing;
  pthread_mutex_unlock(&c->streams_lock);
  return any;
}

/* The ring and its events, made at the first staged upload; 0 when they cannot be. */
static int have_ring(cuda_device *c) {
  cuda_stage *r = &c->stage;
  if (r->ring) return 1;
  if (r->unavailable || capturing(c)) return 0;
  void *ring = NULL;
  int ok = c->drv->cuMemHostAlloc(&ring, (size_t)CJ_STAGE_SEGMENTS * CJ_STAGE_SEGMENT,
                                  CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS;
  for (int i = 0; ok && i < CJ_STAGE_SEGMENTS; i++)
    ok = c->drv->cuEventCreate(&r->left[i], CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
  if (!ok) {
    for (int i = 0; i < CJ_STAGE_SEGMENTS; i++)
      if (r->left[i]) c->drv->cuEventDestroy(r->left[i]), r->left[i] = NULL;
    if (ring) c->drv->cuMemFreeHost(ring);
    r->unavailable = 1;
    return 0;
  }
  r->ring = ring;
  return 1;
}

int cj_cuda_staged_upload(cujit_device *dev, uint64_t dst, const void *src, size_t bytes,
                          cujit_status *st) {
  cuda_device *c = CU(dev);
  if (bytes > CJ_STAGE_SEGMENT ||
      __atomic_load_n(&dev->engine->device_count, __ATOMIC_ACQUIRE) != 1)
    return 0;
  cuda_stage *r = &c->stage;
  pthread_mutex_lock(&r->lock);
  if (!have_ring(c)) {
    pthread_mutex_unlock(&r->lock);
    return 0;
  }
  *st = CUJIT_OK;
  CUresult rc = CUDA_SUCCESS;
  if (r->used + bytes > CJ_STAGE_SEGMENT) { /* on to the next segment, once its copies are done */
    int next = (r->segment + 1) % CJ_STAGE_SEGMENTS;
    rc = c->drv->cuEventRecord(r->left[r->segment], (CUstream)0);
    if (rc == CUDA_SUCCESS) r->recorded[r->segment] = 1;
    if (rc == CUDA_SUCCESS && r->recorded[next])
      *st = cj_backend_wait(dev, segment_done, r->left[next], "cujit_memcpy_htod");
    if (rc == CUDA_SUCCESS && *st == CUJIT_OK) /* an interrupted wait leaves the ring as it was */
      r->recorded[next] = 0, r->segment = next, r->used = 0;
  }
  if (rc == CUDA_SUCCESS && *st == CUJIT_OK) {
    unsigned char *slot = r->ring + (size_t)r->segment * CJ_STAGE_SEGMENT + r->used;
    memcpy(slot, src, bytes);
    rc = c->drv->cuMemcpyHtoDAsync(dst, slot, bytes, (CUstream)0);
    r->used += (bytes + 255) / 256 * 256;
  }
  pthread_mutex_unlock(&r->lock);
  if (rc != CUDA_SUCCESS) {
    char what[96], size[32];
    snprintf(what, sizeof what, "cuMemcpyHtoD of %s on device %d",
             cj_bytes_text(bytes, size, sizeof size), dev->ordinal);
    *st = cj_cuda_check(dev, rc, what);
  } else if (*st == CUJIT_OK) {
    cj_cuda_order_after_default(dev); /* streams see the upload before their next work */
  }
  return 1;
}

/* Small downloads: cuMemcpyDtoHAsync into pinned memory returns at once, and the wait for it is
** cujit's (interruptible, the wait policy's), where a copy into pageable memory would first need
** a wait of cujit's for the work ahead (the driver's own spins uninterruptibly), then the copy,
** then a query: one driver call fewer. An interrupted wait leaves the copy queued; the next
** download's copy lands after it in stream order, and is waited for before it is read. */
int cj_cuda_staged_download(cujit_device *dev, void *dst, uint64_t src, size_t bytes,
                            cujit_status *st) {
  cuda_device *c = CU(dev);
  cuda_stage *r = &c->stage;
  if (bytes > CJ_STAGE_SEGMENT) return 0;
  pthread_mutex_lock(&r->down_lock);
  if (!r->down && !r->down_unavailable && !capturing(c)) {
    void *down = NULL;
    if (c->drv->cuMemHostAlloc(&down, CJ_STAGE_SEGMENT, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS)
      r->down = down;
    else
      r->down_unavailable = 1;
  }
  if (!r->down) {
    pthread_mutex_unlock(&r->down_lock);
    return 0;
  }
  CUresult rc = c->drv->cuMemcpyDtoHAsync(r->down, src, bytes, (CUstream)0);
  if (rc == CUDA_SUCCESS) {
    *st = cj_backend_wait(dev, cj_cuda_stream_done, NULL, "cujit_memcpy_dtoh");
    if (*st == CUJIT_OK) memcpy(dst, r->down, bytes);
  } else {
    char what[96], size[32];
    snprintf(what, sizeof what, "cuMemcpyDtoH of %s on device %d",
             cj_bytes_text(bytes, size, sizeof size), dev->ordinal);
    *st = cj_cuda_check(dev, rc, what);
  }
  pthread_mutex_unlock(&r->down_lock);
  return 1;
}

/* --- the device's lifetime ----------------------------------------------------------------------
 */

void cj_cuda_pool_init(cuda_device *c) {
  pthread_mutex_init(&c->cache.lock, NULL);
  pthread_mutex_init(&c->stage.lock, NULL);
  pthread_mutex_init(&c->stage.down_lock, NULL);
}

/* Only the records: what they named is given back already (cj_cuda_pool_give_back) or lives in
** no context any more. */
void cj_cuda_pool_forget(cuda_device *c) {
  cuda_cache *k = &c->cache;
  pthread_mutex_lock(&k->lock);
  for (size_t i = 0; i < k->nbuckets; i++)
    for (cuda_block *b = k->by_addr[i], *next; b; b = next) next = b->next, free(b);
  free(k->by_addr);
  k->by_addr = NULL, k->nbuckets = k->nblocks = 0, k->joins = 0;
  memset(k->free, 0, sizeof k->free);
  pthread_mutex_unlock(&k->lock);
  pthread_mutex_lock(&c->stage.lock);
  cuda_stage *r = &c->stage;
  r->ring = NULL, r->unavailable = 0, r->segment = 0, r->used = 0;
  memset(r->left, 0, sizeof r->left);
  memset(r->recorded, 0, sizeof r->recorded);
  pthread_mutex_unlock(&c->stage.lock);
  pthread_mutex_lock(&r->down_lock);
  r->down = NULL, r->down_unavailable = 0;
  pthread_mutex_unlock(&r->down_lock);
}

/* Before the context is reset (with_live_buffers) or let go (cujit_close), with it current: the
** blocks the cache holds go back to the driver, and the staging buffers. Left to the context's
** destruction they would be freed too, but memory checkers report them leaked there, and a
** program that closes an engine and opens another would keep them. At a reset the blocks of live
** buffers go too: the reset loses those buffers, and a lost buffer never reaches the driver again.
** At cujit_close every buffer was freed already (a block still in use would be left to the
** context's release). A healthy context first finishes its work (copies
** still read the ring, and freed blocks may still be in use on the streams); a faulted one is not
** waited for, its frees may fail, and they are tried anyway: the pointers are forgotten either
** way. */
void cj_cuda_pool_give_back(cujit_device *dev, int with_live_buffers) {
  cuda_device *c = CU(dev);
  cj_driver *drv = c->drv;
  if (!cj_device_faulted(dev)) drv->cuCtxSynchronize();
  cuda_cache *k = &c->cache;
  pthread_mutex_lock(&k->lock);
  for (size_t i = 0; i < k->nbuckets; i++)
    for (cuda_block *b = k->by_addr[i]; b; b = b->next)
      if (with_live_buffers || !b->in_use) drv->cuMemFreeAsync((CUdeviceptr)b->addr, (CUstream)0);
  pthread_mutex_unlock(&k->lock);
  cuda_stage *r = &c->stage;
  pthread_mutex_lock(&r->lock);
  for (int i = 0; i < CJ_STAGE_SEGMENTS; i++)
    if (r->left[i]) drv->cuEventDestroy(r->left[i]);
  if (r->ring) drv->cuMemFreeHost(r->ring);
  pthread_mutex_unlock(&r->lock);
  pthread_mutex_lock(&r->down_lock);
  if (r->down) drv->cuMemFreeHost(r->down);
  pthread_mutex_unlock(&r->down_lock);
  cj_cuda_pool_forget(c);
}

/* The device's records and locks go (after cj_cuda_pool_give_back, or with nothing to give). */
void cj_cuda_pool_close(cuda_device *c) {
  cj_cuda_pool_forget(c);
  pthread_mutex_destroy(&c->cache.lock);
  pthread_mutex_destroy(&c->stage.lock);
  pthread_mutex_destroy(&c->stage.down_lock);
}
