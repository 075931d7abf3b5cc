/*
** test_stub_memory.c -- managed memory, its prefetches and advice, and registered and mapped host
** memory through the CUDA backend (cuda_memory.c), against the stand-in driver
** (scripts/bench/stub_memory.c; tests/CMakeLists.txt runs this program with it first on
** LD_LIBRARY_PATH, and nowhere else), so that the GPU-only translation runs without a GPU: each
** cujit_advice reaches the driver as its CUmem_advise with the location it names, a prefetch
** names the device or the host, the bytes of the buffer or view and the stream; a device without
** managed memory refuses it, saying what to use; host memory registered once is registered
** portable and mapped, a second registration is refused with the reason, a mapped view is the
** host address (unified addressing), the free unregisters and so does cujit_close for a host
** buffer never freed; a download of at most 64 KiB is staged in pinned memory, a larger one not.
** Kernels do not run there.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_MANAGED");
  cj_scratch_remove();
}

static long seen(const char *name) {
  return cj_stub_seen("cujit_stub_memory_seen", name);
}

Test(stub_memory, managed_memory_prefetched_and_advised, .fini = close_engine) {
  cj_stub_open(&engine);
  cujit_buffer *m, *view, *plain;
  EXPECT_OK(cujit_buffer_alloc_managed(engine, 64, CUJIT_F32, &m));
  float *host = cujit_buffer_host_ptr(m), back[16];
  cr_assert_not_null(host);
  for (int i = 0; i < 16; i++) host[i] = (float)i + 0.25f;
  EXPECT_OK(cujit_memcpy_dtoh(back, m, 0, sizeof back, NULL));
  cr_assert_arr_eq(back, host, sizeof back);

  EXPECT_OK(cujit_buffer_prefetch(m, 0, NULL));
  cr_assert_eq(seen("prefetch"), 1);
  cr_assert_eq(seen("prefetch.bytes"), 64);
  cr_assert_eq(seen("prefetch.type"), CU_MEM_LOCATION_TYPE_DEVICE);
  cr_assert_eq(seen("prefetch.id"), 0);
  cr_assert_eq(seen("prefetch.stream"), 0);
  cujit_stream *s;
  EXPECT_OK(cujit_stream_create(engine, &s));
  EXPECT_OK(cujit_buffer_view(m, 16, 32, CUJIT_F32, &view));
  EXPECT_OK(cujit_buffer_prefetch(view, 7, s)); /* any nonzero to_host */
  cr_assert_eq(seen("prefetch"), 2);
  cr_assert_eq(seen("prefetch.bytes"), 32, "a view prefetches its own bytes");
  cr_assert_eq(seen("prefetch.type"), CU_MEM_LOCATION_TYPE_HOST);
  cr_assert_eq(seen("prefetch.stream"), 1);

  static const struct {
    cujit_advice advice;
    CUmem_advise driver;
    CUmemLocationType where;
  } advices[] = {
      {CUJIT_ADVISE_READ_MOSTLY, CU_MEM_ADVISE_SET_READ_MOSTLY, CU_MEM_LOCATION_TYPE_DEVICE},
      {CUJIT_ADVISE_PREFERRED_DEVICE, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
       CU_MEM_LOCATION_TYPE_DEVICE},
      {CUJIT_ADVISE_PREFERRED_HOST, CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
       CU_MEM_LOCATION_TYPE_HOST},
      {CUJIT_ADVISE_ACCESSED_BY, CU_MEM_ADVISE_SET_ACCESSED_BY, CU_MEM_LOCATION_TYPE_DEVICE},
      {CUJIT_ADVISE_UNSET_READ_MOSTLY, CU_MEM_ADVISE_UNSET_READ_MOSTLY,
       CU_MEM_LOCATION_TYPE_DEVICE},
      {CUJIT_ADVISE_UNSET_PREFERRED, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
       CU_MEM_LOCATION_TYPE_DEVICE},
      {CUJIT_ADVISE_UNSET_ACCESSED_BY, CU_MEM_ADVISE_UNSET_ACCESSED_BY,
       CU_MEM_LOCATION_TYPE_DEVICE},
  };
  for (size_t i = 0; i < sizeof advices / sizeof *advices; i++) {
    EXPECT_OK(cujit_buffer_advise(i % 2 ? view : m, advices[i].advice));
    cr_expect_eq(seen("advise"), (long)i + 1);
    cr_expect_eq(seen("advise.advice"), advices[i].driver, "cujit_advice %d", advices[i].advice);
    cr_expect_eq(seen("advise.type"), advices[i].where, "cujit_advice %d", advices[i].advice);
    cr_expect_eq(seen("advise.id"), 0, "cujit_advice %d", advices[i].advice);
  }
  EXPECT_REFUSED(cujit_buffer_advise(m, (cujit_advice)7), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_advise: 7 is not a cujit_advice");
  cr_assert_eq(seen("advise"), 7, "a refused advice reached the driver");

  EXPECT_OK(cujit_buffer_alloc(engine, 64, CUJIT_F32, &plain));
  EXPECT_REFUSED(cujit_buffer_prefetch(plain, 0, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_buffer_prefetch: the buffer is not managed memory; allocate it with "
                 "cujit_buffer_alloc_managed (Lua: cuda.managed_array)");
  cr_assert_null(cujit_buffer_host_ptr(plain));
  cr_assert_eq(seen("prefetch"), 2);
  cujit_buffer_free(plain);
  cujit_buffer_free(view);
  cujit_buffer_free(m);
  cujit_stream_free(s);
}

Test(stub_memory, a_device_without_managed_memory_refuses_it, .fini = close_engine) {
  setenv("CUJIT_STUB_MANAGED", "0", 1);
  cj_stub_open(&engine);
  cujit_buffer *m = (cujit_buffer *)1;
  EXPECT_REFUSED(cujit_buffer_alloc_managed(engine, 64, CUJIT_F32, &m), CUJIT_ERROR_UNSUPPORTED,
                 "device 0 does not support managed memory; use a device array and copies");
  cr_assert_null(m);
}

Test(stub_memory, host_memory_registered_once_and_mapped, .fini = close_engine) {
  cj_stub_open(&engine);
  const size_t bytes = 4096;
  float *mem = aligned_alloc(4096, bytes);
  cr_assert_not_null(mem);
  for (size_t i = 0; i < bytes / 4; i++) mem[i] = (float)i;
  cujit_host_buffer *h, *again = (cujit_host_buffer *)1;
  long before = seen("registered");
  EXPECT_OK(cujit_host_register(engine, mem, bytes, &h));
  cr_assert_eq(seen("registered"), before + 1);
  cr_assert_eq(seen("register.flags"), CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  cr_assert_eq(cujit_host_ptr(h), mem);
  EXPECT_REFUSED(cujit_host_register(engine, mem, bytes, &again), CUJIT_ERROR_INVALID_ARGUMENT,
                 "registering host memory: that memory is already registered (or pinned by "
                 "cujit); register each range once");
  cr_assert_null(again);
  cujit_buffer *view;
  EXPECT_OK(cujit_host_map(h, CUJIT_F32, &view));
  cr_assert_eq(cujit_buffer_devptr(view), (uint64_t)(uintptr_t)mem);
  cr_assert_eq(cujit_buffer_size(view), bytes);
  cr_assert_eq(cujit_buffer_host_ptr(view), mem);
  float back[4];
  EXPECT_OK(cujit_memcpy_dtoh(back, view, 64, sizeof back, NULL));
  cr_assert_arr_eq(back, mem + 16, sizeof back);
  cujit_buffer_free(view);
  cujit_host_free(h);
  cr_assert_eq(seen("registered"), before, "the free unregistered the memory");
  free(mem);
}

/* A registration the application never frees is undone by cujit_close (the engine tracks the host
** buffer), and so is one made while another engine's was alive: each close undoes its own. */
Test(stub_memory, host_memory_left_registered_undone_by_close, .fini = close_engine) {
  cj_stub_open(&engine);
  const size_t bytes = 8192;
  char *mem = aligned_alloc(4096, bytes);
  cr_assert_not_null(mem);
  long before = seen("registered");
  cujit_host_buffer *h, *tail;
  EXPECT_OK(cujit_host_register(engine, mem, 4096, &h));
  EXPECT_OK(cujit_host_register(engine, mem + 4096, 4096, &tail));
  cr_assert_eq(seen("registered"), before + 2);
  cujit_host_free(tail);
  cr_assert_eq(seen("registered"), before + 1);
  cujit_close(engine); /* h is still registered: the close unregisters it */
  engine = NULL;
  cr_assert_eq(seen("registered"), before, "cujit_close left host memory registered");
  /* The memory can be registered again by a new engine: nothing of the old one holds it. */
  cr_assert_eq(cujit_open(&engine), CUJIT_OK); /* the same scratch cache */
  EXPECT_OK(cujit_host_register(engine, mem, bytes, &h));
  cujit_host_free(h);
  cr_assert_eq(seen("registered"), before);
  free(mem);
}

/* A download of at most 64 KiB lands in cujit's pinned staging buffer (docs/ARCHITECTURE.md, "Small
** copies"), a larger one goes straight to the caller's memory; either way the bytes are the
** buffer's, at its end too. */
Test(stub_memory, downloads_up_to_64_KiB_staged_in_pinned_memory, .fini = close_engine) {
  cj_stub_open(&engine);
  const size_t limit = 64 * 1024, bytes = limit + 64;
  cujit_buffer *b;
  EXPECT_OK(cujit_buffer_alloc(engine, bytes, CUJIT_U8, &b));
  unsigned char *up = malloc(bytes), *back = malloc(bytes);
  cr_assert(up && back);
  for (size_t i = 0; i < bytes; i++) up[i] = (unsigned char)(i * 7 + 3);
  EXPECT_OK(cujit_memcpy_htod(b, 0, up, bytes, NULL));
  const size_t sizes[] = {1, 4096, limit - 1, limit, limit + 1, bytes};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    long copies = seen("dtoh"), pinned = seen("dtoh.pinned");
    memset(back, 0, bytes);
    EXPECT_OK(cujit_memcpy_dtoh(back, b, bytes - n, n, NULL));
    cr_assert_arr_eq(back, up + bytes - n, n, "the last %zu bytes downloaded", n);
    cr_assert_eq(seen("dtoh"), copies + 1, "%zu bytes: one copy from the device", n);
    cr_assert_eq(seen("dtoh.pinned"), pinned + (n <= limit), "%zu bytes: %s", n,
                 n <= limit ? "staged in pinned memory" : "not staged");
  }
  cujit_buffer_free(b);
  free(up);
  free(back);
}
