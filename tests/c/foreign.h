/*
** foreign.h -- what test_foreign.c and test_dlpack.c share: the suite's checks (OK, REFUSED with
** the message's text) and memory of another allocator on the device the test runs on: host memory
** on the CPU device, cuMemAlloc memory of the primary context on a GPU (the driver opened here and
** the context made current, as a host program has it), with a release callback that counts its
** calls and frees the memory as its owner would.
*/
#ifndef CUJIT_TEST_FOREIGN_H
#define CUJIT_TEST_FOREIGN_H

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cujit_dlpack.h"
#include "fixture.h"
#include "gpu.h"

#define OK(call) cr_assert_eq((call), CUJIT_OK, "%s", cujit_errmsg(engine))
#define REFUSED(call, status, text)                                                                \
  do {                                                                                             \
    cr_assert_eq((call), (status), "%s should be refused", #call);                                 \
    cr_assert(strstr(cujit_errmsg(engine), (text)), "message lacks '%s': %s", (text),              \
              cujit_errmsg(engine));                                                               \
  } while (0)

/* --- memory of another allocator ------------------------------------------------------------- */

static int on_gpu;
static void *cuda;
static int (*cu_mem_alloc)(uint64_t *, size_t);
static int (*cu_mem_free)(uint64_t);

/* The device (GPU or the CPU device) and, on a GPU, the driver's allocator in its primary
** context, current on this thread as a runtime-API program has it. */
static inline void need_device(void) {
  CJ_NEED_DEVICE(engine);
  on_gpu = !cj_test_on_cpu(engine);
  if (!on_gpu) return;
  cuda = dlopen("libcuda.so.1", RTLD_NOW);
  cr_assert_not_null(cuda, "libcuda.so.1: %s", dlerror());
  int (*retain)(void **, int) = (int (*)(void **, int))dlsym(cuda, "cuDevicePrimaryCtxRetain");
  int (*set_current)(void *) = (int (*)(void *))dlsym(cuda, "cuCtxSetCurrent");
  cu_mem_alloc = (int (*)(uint64_t *, size_t))dlsym(cuda, "cuMemAlloc_v2");
  cu_mem_free = (int (*)(uint64_t))dlsym(cuda, "cuMemFree_v2");
  cr_assert(retain && set_current && cu_mem_alloc && cu_mem_free, "driver entry points missing");
  void *ctx = NULL;
  cr_assert_eq(retain(&ctx, 0), 0);
  cr_assert_eq(set_current(ctx), 0);
}

static inline uint64_t foreign_alloc(size_t bytes) {
  if (!on_gpu) {
    void *p = aligned_alloc(256, (bytes + 255) / 256 * 256);
    cr_assert_not_null(p);
    return (uint64_t)(uintptr_t)p;
  }
  uint64_t p = 0;
  cr_assert_eq(cu_mem_alloc(&p, bytes), 0, "cuMemAlloc of %zu bytes", bytes);
  return p;
}

static inline void foreign_free(uint64_t p) {
  if (on_gpu)
    cu_mem_free(p);
  else
    free((void *)(uintptr_t)p);
}

/* What release saw: how often, and the address. It frees the memory, as an owner would. */
typedef struct release_log {
  int calls;
  uint64_t address;
} release_log;

static inline void release_and_free(void *user, uint64_t address) {
  release_log *log = user;
  log->calls++;
  log->address = address;
  foreign_free(address);
}

static inline cujit_buffer *wrap(uint64_t addr, size_t bytes, cujit_dtype dtype, release_log *log) {
  cujit_buffer *b = NULL;
  OK(cujit_buffer_wrap(engine, addr, bytes, dtype, release_and_free, log, &b));
  return b;
}

static inline void upload(cujit_buffer *b, const void *data, size_t bytes) {
  OK(cujit_memcpy_htod(b, 0, data, bytes, NULL));
}

static inline cujit_device *cpu_device(void) {
  cujit_device *cpu;
  OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  return cpu;
}

static inline void release_and_free_host(void *user, uint64_t address) {
  ((release_log *)user)->calls++;
  ((release_log *)user)->address = address;
  free((void *)(uintptr_t)address);
}

#endif
