/*
** stub_memory.h -- the stand-in driver's managed, prefetched, advised, registered and mapped
** memory (stub_memory.c), named in stub_driver.c's table.
*/
#ifndef CJ_STUB_MEMORY_H
#define CJ_STUB_MEMORY_H

#include <cuda.h>

CUresult cj_stub_alloc_managed(CUdeviceptr *p, size_t bytes, unsigned flags);
CUresult cj_stub_prefetch(CUdeviceptr p, size_t bytes, CUmemLocation to, unsigned flags,
                          CUstream s);
CUresult cj_stub_advise(CUdeviceptr p, size_t bytes, CUmem_advise advice, CUmemLocation where);
CUresult cj_stub_host_register(void *p, size_t bytes, unsigned flags);
CUresult cj_stub_host_unregister(void *p);
CUresult cj_stub_host_device_pointer(CUdeviceptr *d, void *p, unsigned flags);

/* Writes its arguments into the map's 16 words: "cjstubtm", the data type, the rank, the address,
** dims[0..4] (words 4-8), the driver's strides (dimension 1 on; words 9-12), the box and the
** element strides 12 bits a dimension (words 13 and 14), and swizzle | interleave << 8 |
** L2 promotion << 16 | out-of-bounds fill << 24 (word 15). */
CUresult cj_stub_tensor_map(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                            void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                            const cuuint32_t *box, const cuuint32_t *element_strides,
                            CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);

/* CUJIT_STUB_DEFER_COPIES=1: cuMemcpyHtoDAsync from pinned memory lands at the next driver call
** (cj_stub_flush_copies, which cj_stub_cost calls), as a GPU reads it when the copy runs. */
CUresult cj_stub_copy_htod(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
void cj_stub_flush_copies(void);
int cj_stub_is_pinned(const void *p); /* stub_driver.c: p lies in a pinned block */
/* stub_driver.c: [p, p + bytes) in a block the stand-in made, or in registered host memory */
int cj_stub_is_driver_memory(CUdeviceptr p, size_t bytes);
/* [p, p + bytes) in registered host memory */
int cj_stub_is_registered(CUdeviceptr p, size_t bytes);
CUresult cj_stub_pool_trim_to(CUmemoryPool pool, size_t keep);
CUresult cj_stub_event_record(CUevent event, CUstream s);
CUresult cj_stub_stream_wait_event(CUstream s, CUevent event, unsigned flags);
void cj_stub_note_dtoh(const void *dst); /* a device-to-host copy into dst, counted */

/* For tests (dlsym it from libcuda.so.1): what the memory calls were last given: "prefetch" and
** "advise" (their counts), "prefetch.bytes", "prefetch.type" and "prefetch.id" (the location),
** "prefetch.stream" (nonzero: a stream was named), "advise.advice", "advise.type", "advise.id",
** "register.flags", "registered" (ranges registered now); the counts of calls "trim"
** (cuMemPoolTrimTo), "event_record" and "stream_wait"; "dtoh" (device-to-host copies) and
** "dtoh.pinned" (those into the stand-in's pinned memory); -1 for a name it does not know. */
long cujit_stub_memory_seen(const char *name);

#endif
