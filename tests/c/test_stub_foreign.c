/*
** test_stub_foreign.c -- the CUDA backend's checks of foreign memory (cujit_buffer_wrap and
** cujit_buffer_from_dlpack on a GPU: cuPointerGetAttributes) against the stand-in driver
** (scripts/bench/stub_driver.c; tests/CMakeLists.txt runs this program with it first on
** LD_LIBRARY_PATH, and nowhere else), so that they run without a GPU: device and managed memory
** of the context cujit uses are taken (the primary one, or one given by cujit_device_use_context);
** host memory (plain or pinned), another device's memory, another context's, an address the
** driver never allocated and a range past its allocation are refused with messages saying which
** and what to do; a driver without cuPointerGetAttributes refuses the feature alone; the CPU
** device refuses a GPU's device memory (its kernels cannot reach it) when the driver can say so,
** and takes host memory. The stand-in makes blocks of each kind (cujit_stub_block). Kernels do
** not run there: nothing here launches.
*/
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "cujit.h"
#include "cujit_dlpack.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;

#define OK(call) cr_assert_eq((call), CUJIT_OK, "%s failed: %s", #call, cujit_errmsg(engine))
#define REFUSED(call, status, text)                                                                \
  do {                                                                                             \
    cr_assert_eq((call), (status), "%s should be refused (%s)", #call, cujit_errmsg(engine));      \
    cr_assert(strstr(cujit_errmsg(engine), (text)), "message lacks '%s': %s", (text),              \
              cujit_errmsg(engine));                                                               \
  } while (0)

enum { STUB_DEVICE, STUB_PINNED, STUB_MANAGED, STUB_OTHER_CONTEXT }; /* the stand-in's kinds */

static void *(*stub_block)(size_t, int, int);
static void (*stub_block_free)(void *);

static void open_stub(const char *absent) {
  if (absent) setenv("CUJIT_STUB_ABSENT", absent, 1);
  unsetenv("CUJIT_DEVICE");
  cj_stub_open(&engine);
  OK(cujit_set_device(engine, 0));
  *(void **)&stub_block = cj_stub_symbol("cujit_stub_block");
  *(void **)&stub_block_free = cj_stub_symbol("cujit_stub_block_free");
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_ABSENT");
  cj_scratch_remove();
}

TestSuite(stub_foreign, .fini = close_engine);

static int releases, deleted;
static void count_delete(DLManagedTensorVersioned *self) {
  (void)self;
  deleted++;
}

static void count_release(void *user, uint64_t address) {
  (void)user, (void)address;
  releases++;
}

static uint64_t block(size_t bytes, int kind, int ordinal) {
  void *p = stub_block(bytes, kind, ordinal);
  cr_assert_not_null(p);
  return (uint64_t)(uintptr_t)p;
}

Test(stub_foreign, device_and_managed_memory_of_the_context_are_taken) {
  open_stub(NULL);
  cujit_buffer *b = NULL;
  uint64_t dev = block(256, STUB_DEVICE, 0), managed = block(256, STUB_MANAGED, 0);
  releases = 0;
  OK(cujit_buffer_wrap(engine, dev, 256, CUJIT_F32, count_release, NULL, &b));
  cr_assert_eq(cujit_buffer_devptr(b), dev);
  cujit_buffer_free(b);
  OK(cujit_buffer_wrap(engine, dev + 64, 192, CUJIT_F32, count_release, NULL, &b)); /* its end */
  cujit_buffer_free(b);
  OK(cujit_buffer_wrap(engine, managed, 128, CUJIT_U8, count_release, NULL, &b));
  cujit_buffer_free(b);
  cr_assert_eq(releases, 3);
  /* cujit's own allocation (from its pool) is device memory of the context too. */
  cujit_buffer *own = NULL;
  OK(cujit_buffer_alloc(engine, 512, CUJIT_F64, &own));
  OK(cujit_buffer_wrap(engine, cujit_buffer_devptr(own), 512, CUJIT_F64, NULL, NULL, &b));
  cujit_buffer_free(b);
  cujit_buffer_free(own);
  stub_block_free((void *)(uintptr_t)dev);
  stub_block_free((void *)(uintptr_t)managed);
}

Test(stub_foreign, host_other_device_other_context_and_unknown_memory_are_refused) {
  open_stub(NULL);
  cujit_buffer *b = NULL;
  releases = 0;
  double *heap = malloc(64);
  REFUSED(
      cujit_buffer_wrap(engine, (uint64_t)(uintptr_t)heap, 64, CUJIT_F64, count_release, NULL, &b),
      CUJIT_ERROR_INVALID_ARGUMENT,
      "is not memory the CUDA driver allocated (host memory from malloc, memory already "
      "freed, or a wrong address); pass device memory of device 0");
  cr_assert_null(b);
  free(heap);
  uint64_t pinned = block(64, STUB_PINNED, 0);
  REFUSED(cujit_buffer_wrap(engine, pinned, 64, CUJIT_F32, count_release, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT,
          "is pinned host memory, not device memory; give it to cujit with cujit_host_register "
          "and cujit_host_map");
  cujit_host_buffer *h = NULL; /* cujit's own pinned memory is host memory too */
  OK(cujit_host_alloc(engine, 64, &h));
  REFUSED(cujit_buffer_wrap(engine, (uint64_t)(uintptr_t)cujit_host_ptr(h), 64, CUJIT_F32, NULL,
                            NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "is pinned host memory");
  cujit_host_free(h);
  uint64_t other = block(64, STUB_DEVICE, 1);
  REFUSED(cujit_buffer_wrap(engine, other, 64, CUJIT_F32, count_release, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT,
          "is memory of device 1, not device 0; wrap it on device 1 (cujit_buffer_wrap_on)");
  uint64_t foreign_ctx = block(64, STUB_OTHER_CONTEXT, 0);
  REFUSED(cujit_buffer_wrap(engine, foreign_ctx, 64, CUJIT_F32, count_release, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT,
          "belongs to another CUDA context of device 0 than the one cujit uses (the device's "
          "primary context, which the CUDA runtime uses too); allocate it there, or copy it");
  cr_assert_eq(releases, 0, "a refused wrap called release");
  stub_block_free((void *)(uintptr_t)pinned);
  stub_block_free((void *)(uintptr_t)other);
  stub_block_free((void *)(uintptr_t)foreign_ctx);
}

/* A context of the application's own on device 0, made current (the stand-in's cuCtxCreate). */
static void *app_context(void) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CUresult (*get)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  *(void **)&get = dlsym(cuda, "cuGetProcAddress_v2");
  dlclose(cuda);
  PFN_cuCtxCreate_v12050 create = NULL;
  cr_assert_eq(get("cuCtxCreate", (void **)&create, 12050, 0, NULL), CUDA_SUCCESS);
  CUcontext c = NULL;
  cr_assert_eq(create(&c, NULL, 0, 0), CUDA_SUCCESS);
  return c;
}

Test(stub_foreign, with_a_context_given_its_memory_is_taken_and_the_primary_contexts_refused) {
  open_stub(NULL);
  cujit_device *gpu;
  OK(cujit_device_get(engine, 0, &gpu));
  uint64_t primary = block(64, STUB_DEVICE, 0); /* of the primary context */
  void *mine = app_context();
  OK(cujit_device_use_context(gpu, mine));
  cujit_buffer *own = NULL, *b = NULL;
  OK(cujit_buffer_alloc(engine, 64, CUJIT_F32, &own)); /* allocated in `mine` */
  OK(cujit_buffer_wrap(engine, cujit_buffer_devptr(own), 64, CUJIT_F32, NULL, NULL, &b));
  cujit_buffer_free(b);
  REFUSED(cujit_buffer_wrap(engine, primary, 64, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT,
          "belongs to another CUDA context of device 0 than the one cujit uses (the one given to "
          "cujit_device_use_context); allocate it there, or copy it");
  cujit_buffer_free(own);
  stub_block_free((void *)(uintptr_t)primary);
}

Test(stub_foreign, a_range_past_its_allocation_is_refused_with_what_fits) {
  open_stub(NULL);
  cujit_buffer *b = NULL;
  uint64_t dev = block(256, STUB_DEVICE, 0);
  REFUSED(cujit_buffer_wrap(engine, dev, 260, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "260 bytes from 0x");
  cr_assert(strstr(cujit_errmsg(engine), "run past the allocation they start in"), "%s",
            cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "256 bytes); wrap at most 256 bytes from there"), "%s",
            cujit_errmsg(engine));
  REFUSED(cujit_buffer_wrap(engine, dev + 128, 132, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "wrap at most 128 bytes from there");
  stub_block_free((void *)(uintptr_t)dev);
  /* Freed: the driver no longer knows the address. */
  REFUSED(cujit_buffer_wrap(engine, dev, 64, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "is not memory the CUDA driver allocated");
}

Test(stub_foreign, dlpack_on_a_gpu_names_cuda_and_imports_only_its_memory) {
  open_stub(NULL);
  cujit_buffer *b = NULL;
  OK(cujit_buffer_alloc(engine, 64, CUJIT_I16, &b));
  void *out = NULL;
  OK(cujit_buffer_to_dlpack(b, 0, NULL, &out));
  DLManagedTensorVersioned *m = out;
  cr_assert_eq(m->dl_tensor.device.device_type, kDLCUDA);
  cr_assert_eq(m->dl_tensor.device.device_id, 0);
  cr_assert_eq(m->dl_tensor.dtype.code, kDLInt);
  cr_assert_eq(m->dl_tensor.dtype.bits, 16);
  cr_assert_eq(m->dl_tensor.shape[0], 32);
  cujit_buffer *in = NULL;
  OK(cujit_buffer_from_dlpack(engine, m, &in, NULL, NULL));
  cr_assert_eq(cujit_buffer_devptr(in), cujit_buffer_devptr(b));
  cujit_buffer_free(b);
  cujit_buffer_free(in); /* the export's deleter, then the memory */
  /* A tensor that says kDLCUDA over host memory: the pointer check refuses it, and the tensor
  ** stays its owner's (the deleter is not called). */
  deleted = 0;
  float host[8];
  int64_t shape[] = {8};
  DLManagedTensorVersioned lie;
  memset(&lie, 0, sizeof lie);
  lie.version.major = 1;
  lie.deleter = count_delete;
  lie.dl_tensor.data = host;
  lie.dl_tensor.device.device_type = kDLCUDA;
  lie.dl_tensor.ndim = 1;
  lie.dl_tensor.dtype.code = kDLFloat, lie.dl_tensor.dtype.bits = 32, lie.dl_tensor.dtype.lanes = 1;
  lie.dl_tensor.shape = shape;
  REFUSED(cujit_buffer_from_dlpack(engine, &lie, &in, NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
          "cujit_buffer_from_dlpack: address 0x");
  cr_assert(strstr(cujit_errmsg(engine), "is not memory the CUDA driver allocated"), "%s",
            cujit_errmsg(engine));
  cr_assert_eq(deleted, 0);
}

Test(stub_foreign, the_cpu_device_refuses_a_gpus_device_memory_and_takes_host_memory) {
  open_stub(NULL);
  cujit_device *cpu;
  OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  cujit_buffer *b = NULL;
  uint64_t dev = block(64, STUB_DEVICE, 0), pinned = block(64, STUB_PINNED, 0);
  uint64_t managed = block(64, STUB_MANAGED, 0);
  REFUSED(cujit_buffer_wrap_on(cpu, dev, 64, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "cujit_buffer_wrap_on: address 0x");
  cr_assert(strstr(cujit_errmsg(engine),
                   "is device memory of GPU 0, which the CPU device cannot reach; wrap it on that "
                   "GPU (cujit_buffer_wrap_on), or copy it to host memory"),
            "%s", cujit_errmsg(engine));
  OK(cujit_buffer_wrap_on(cpu, pinned, 64, CUJIT_F32, NULL, NULL, &b)); /* host memory */
  cujit_buffer_free(b);
  OK(cujit_buffer_wrap_on(cpu, managed, 64, CUJIT_F32, NULL, NULL, &b)); /* the host reaches it */
  cujit_buffer_free(b);
  float heap[16];
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)heap, sizeof heap, CUJIT_F32, NULL, NULL, &b));
  cujit_buffer_free(b);
  stub_block_free((void *)(uintptr_t)dev);
  stub_block_free((void *)(uintptr_t)pinned);
  stub_block_free((void *)(uintptr_t)managed);
}

Test(stub_foreign, a_driver_without_pointer_attributes_refuses_only_wrapping) {
  open_stub("cuPointerGetAttributes");
  cujit_buffer *own = NULL, *b = NULL;
  OK(cujit_buffer_alloc(engine, 64, CUJIT_F32, &own)); /* the rest of the engine works */
  REFUSED(cujit_buffer_wrap(engine, cujit_buffer_devptr(own), 64, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_UNSUPPORTED,
          "cujit_buffer_wrap: this CUDA driver lacks cuPointerGetAttributes, so cujit cannot check "
          "that the memory is device 0's; update the driver");
  cujit_buffer_free(own);
  cujit_device *cpu; /* the CPU device takes host memory without the driver's word */
  float heap[4];
  OK(cujit_device_get(engine, CUJIT_DEVICE_CPU, &cpu));
  OK(cujit_buffer_wrap_on(cpu, (uint64_t)(uintptr_t)heap, sizeof heap, CUJIT_F32, NULL, NULL, &b));
  cujit_buffer_free(b);
}

/* The driver refusing the question: INVALID_VALUE is its answer for an address no allocation
** holds (some drivers), so the memory is unknown; any other refusal is the driver's error, said. */
Test(stub_foreign, a_pointer_query_the_driver_refuses) {
  setenv("CUJIT_STUB_FAIL", "cuPointerGetAttributes", 1);
  setenv("CUJIT_STUB_FAIL_CODE", "1", 1); /* CUDA_ERROR_INVALID_VALUE */
  open_stub(NULL);
  uint64_t mem = block(64, STUB_DEVICE, 0);
  cujit_buffer *b = NULL;
  REFUSED(cujit_buffer_wrap(engine, mem, 64, CUJIT_F32, NULL, NULL, &b),
          CUJIT_ERROR_INVALID_ARGUMENT, "is not memory the CUDA driver allocated");
  cr_assert_null(b);
  close_engine();
  setenv("CUJIT_STUB_FAIL_CODE", "201", 1); /* CUDA_ERROR_INVALID_CONTEXT */
  open_stub(NULL);
  char want[96];
  snprintf(want, sizeof want, "asking the driver about address 0x%llx", (unsigned long long)mem);
  REFUSED(cujit_buffer_wrap(engine, mem, 64, CUJIT_F32, NULL, NULL, &b), CUJIT_ERROR_DRIVER, want);
  cr_assert_null(b);
  stub_block_free((void *)(uintptr_t)mem);
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
}
