/*
** test_dlpack.c -- issue 24's DLPack export and import through the public C API, on a device (a
** GPU, or the CPU device without one): what an export describes (version, device, dtype of every
** cujit dtype, shape, strides, no copy), the memory it holds past the buffer's free (also a view's
** owner's) until its deleter, which stays safe after cujit_close; an import's shape, byte offset
** and deleter run once at the buffer's free; every refusal of both calls with its message, a
** refused import leaving the producer's deleter alone; a round trip sharing the memory. Test
** tensors are made here as a producer would (their deleters count calls).
*/
#include "foreign.h"

TestSuite(dlpack, .init = cj_fixture_open, .fini = cj_fixture_close);

/* --- DLPack export ---------------------------------------------------------------------------- */

Test(dlpack, to_dlpack_describes_the_buffer_and_shares_its_memory) {
  need_device();
  cujit_buffer *b = cj_test_upload(NULL, 24 * sizeof(double), CUJIT_F64);
  void *out = NULL;
  OK(cujit_buffer_to_dlpack(b, 3, (const int64_t[]){2, 3, 4}, &out));
  DLManagedTensorVersioned *m = out;
  cr_assert_eq(m->version.major, 1);
  cr_assert_eq(m->version.minor, 0);
  cr_assert_eq(m->flags, 0, "writable, not a copy");
  cr_assert_not_null(m->deleter);
  const DLTensor *t = &m->dl_tensor;
  cr_assert_eq((uint64_t)(uintptr_t)t->data, cujit_buffer_devptr(b), "no copy");
  cr_assert_eq(t->byte_offset, 0);
  cr_assert_eq(t->device.device_type, on_gpu ? kDLCUDA : kDLCPU);
  cr_assert_eq(t->device.device_id, 0);
  cr_assert_eq(t->dtype.code, kDLFloat);
  cr_assert_eq(t->dtype.bits, 64);
  cr_assert_eq(t->dtype.lanes, 1);
  cr_assert_eq(t->ndim, 3);
  int64_t shape[] = {2, 3, 4}, strides[] = {12, 4, 1};
  cr_assert_arr_eq(t->shape, shape, sizeof shape);
  cr_assert_not_null(t->strides, "explicit strides");
  cr_assert_arr_eq(t->strides, strides, sizeof strides);
  m->deleter(m);
  /* Shape NULL: one dimension of the whole buffer, whatever ndim says. */
  OK(cujit_buffer_to_dlpack(b, 5, NULL, &out));
  m = out;
  cr_assert_eq(m->dl_tensor.ndim, 1);
  cr_assert_eq(m->dl_tensor.shape[0], 24);
  cr_assert_eq(m->dl_tensor.strides[0], 1);
  m->deleter(m);
  /* ndim 0 with a shape: a scalar, for a buffer of one element. */
  cujit_buffer *one = cj_test_upload(NULL, sizeof(int), CUJIT_I32);
  OK(cujit_buffer_to_dlpack(one, 0, (const int64_t[]){0}, &out));
  m = out;
  cr_assert_eq(m->dl_tensor.ndim, 0);
  cr_assert_eq(m->dl_tensor.dtype.code, kDLInt);
  cr_assert_eq(m->dl_tensor.dtype.bits, 32);
  m->deleter(m);
  cujit_buffer_free(one);
  cujit_buffer_free(b);
}

Test(dlpack, every_dtype_crosses_as_its_dlpack_code_and_bits_and_back) {
  need_device();
  static const struct {
    cujit_dtype dtype;
    uint8_t code, bits;
  } table[] = {
      {CUJIT_F16, kDLFloat, 16}, {CUJIT_F32, kDLFloat, 32}, {CUJIT_F64, kDLFloat, 64},
      {CUJIT_I8, kDLInt, 8},     {CUJIT_I16, kDLInt, 16},   {CUJIT_I32, kDLInt, 32},
      {CUJIT_I64, kDLInt, 64},   {CUJIT_U8, kDLUInt, 8},    {CUJIT_U16, kDLUInt, 16},
      {CUJIT_U32, kDLUInt, 32},  {CUJIT_U64, kDLUInt, 64},  {CUJIT_BF16, kDLBfloat, 16},
  };
  cr_assert_eq(sizeof table / sizeof *table, CUJIT_DTYPE_COUNT_ - 1, "every dtype but NONE");
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    cujit_buffer *b = cj_test_upload(NULL, 64, table[i].dtype), *back = NULL;
    void *out = NULL;
    OK(cujit_buffer_to_dlpack(b, 0, NULL, &out));
    DLDataType t = ((DLManagedTensorVersioned *)out)->dl_tensor.dtype;
    cr_assert(t.code == table[i].code && t.bits == table[i].bits && t.lanes == 1,
              "%s exported as code %u, %u bits, %u lanes", cujit_dtype_name(table[i].dtype), t.code,
              t.bits, t.lanes);
    cr_assert_eq(((DLManagedTensorVersioned *)out)->dl_tensor.shape[0],
                 (int64_t)(64 / cujit_dtype_size(table[i].dtype)));
    OK(cujit_buffer_from_dlpack(engine, out, &back, NULL, NULL));
    cr_assert_eq(cujit_buffer_dtype(back), table[i].dtype, "%s came back as %s",
                 cujit_dtype_name(table[i].dtype), cujit_dtype_name(cujit_buffer_dtype(back)));
    cr_assert_eq(cujit_buffer_size(back), 64);
    cujit_buffer_free(back);
    cujit_buffer_free(b);
  }
}

Test(dlpack, to_dlpack_refuses_untyped_buffers_bad_shapes_and_lost_views) {
  need_device();
  cujit_buffer *raw = cj_test_upload(NULL, 64, CUJIT_DTYPE_NONE);
  cujit_buffer *b = cj_test_upload(NULL, 6 * sizeof(float), CUJIT_F32), *v = NULL;
  void *out = (void *)&out;
  REFUSED(cujit_buffer_to_dlpack(raw, 0, NULL, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "untyped bytes (CUJIT_DTYPE_NONE)");
  cr_assert_null(out, "a refused export leaves *out NULL");
  REFUSED(cujit_buffer_to_dlpack(b, 2, (const int64_t[]){2, 4}, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "the shape holds more than 6 elements but the buffer 6");
  REFUSED(cujit_buffer_to_dlpack(b, 2, (const int64_t[]){1, 3}, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "the shape holds 3 elements but the buffer 6 f32 elements; a shape covers the whole "
          "buffer (export a cujit_buffer_view for a part)");
  REFUSED(cujit_buffer_to_dlpack(b, 2, (const int64_t[]){6, 0}, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "extent 0 of dimension 1");
  REFUSED(cujit_buffer_to_dlpack(b, 2, (const int64_t[]){-2, -3}, &out),
          CUJIT_ERROR_INVALID_ARGUMENT, "extent -2 of dimension 0");
  int64_t nine[9] = {6, 1, 1, 1, 1, 1, 1, 1, 1};
  REFUSED(cujit_buffer_to_dlpack(b, 9, nine, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "ndim 9 is outside 0..8");
  REFUSED(cujit_buffer_to_dlpack(b, 0, NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT, "out is NULL");
  OK(cujit_buffer_view(b, 0, 8, CUJIT_F32, &v));
  cujit_buffer_free(b);
  REFUSED(cujit_buffer_to_dlpack(v, 0, NULL, &out), CUJIT_ERROR_INVALID_ARGUMENT,
          "a view of memory that has been freed");
  cujit_buffer_free(v);
  /* A view of a host buffer's memory: no buffer to hold. */
  cujit_host_buffer *h;
  OK(cujit_host_alloc(engine, 64, &h));
  if (cujit_host_map(h, CUJIT_F32, &v) == CUJIT_OK) {
    REFUSED(cujit_buffer_to_dlpack(v, 0, NULL, &out), CUJIT_ERROR_INVALID_ARGUMENT,
            "views a host buffer or a program's global");
    cujit_buffer_free(v);
  }
  cujit_host_free(h);
  cujit_buffer_free(raw);
}

/* The tensor of an export, read back through an import of it (on a GPU the host cannot read
** device memory directly). */
static void expect_tensor_holds(DLManagedTensorVersioned *m, const float *want, int n) {
  cujit_buffer *in = NULL;
  OK(cujit_buffer_from_dlpack(engine, m, &in, NULL, NULL));
  float got[64];
  cr_assert_leq(n, 64);
  OK(cujit_memcpy_dtoh(got, in, 0, (size_t)n * sizeof(float), NULL));
  for (int i = 0; i < n; i++) cr_assert_eq(got[i], want[i], "element %d: %g", i, got[i]);
  cujit_buffer_free(in); /* calls m's deleter */
}

Test(dlpack, an_exported_buffer_freed_first_keeps_its_memory_until_the_deleter) {
  need_device();
  release_log log = {0, 0};
  float host[16];
  for (int i = 0; i < 16; i++) host[i] = (float)(i * i);
  cujit_buffer *b = wrap(foreign_alloc(sizeof host), sizeof host, CUJIT_F32, &log), *v = NULL;
  upload(b, host, sizeof host);
  OK(cujit_buffer_view(b, 0, 16, CUJIT_F32, &v));
  void *first = NULL, *second = NULL;
  OK(cujit_buffer_to_dlpack(b, 2, (const int64_t[]){4, 4}, &first));
  OK(cujit_buffer_to_dlpack(b, 0, NULL, &second));
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 0, "the memory was released while DLPack tensors hold it");
  float x;
  REFUSED(cujit_memcpy_dtoh(&x, v, 0, sizeof x, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
          "a view of memory that has been freed"); /* the handle is gone at once */
  cujit_buffer_free(v);
  expect_tensor_holds(first, host, 16); /* its deleter runs here; the second still holds */
  cr_assert_eq(log.calls, 0, "released with a tensor still alive");
  expect_tensor_holds(second, host, 16);
  cr_assert_eq(log.calls, 1, "the last deleter releases once: %d", log.calls);
}

Test(dlpack, exporting_a_view_holds_the_memory_of_the_buffer_it_views) {
  need_device();
  float host[32];
  for (int i = 0; i < 32; i++) host[i] = (float)i + 0.5f;
  cujit_buffer *b = cj_test_upload(host, sizeof host, CUJIT_F32), *v = NULL;
  OK(cujit_buffer_view(b, 8 * sizeof(float), 8 * sizeof(float), CUJIT_F32, &v));
  void *out = NULL;
  OK(cujit_buffer_to_dlpack(v, 0, NULL, &out));
  cr_assert_eq((uint64_t)(uintptr_t)((DLManagedTensorVersioned *)out)->dl_tensor.data,
               cujit_buffer_devptr(b) + 8 * sizeof(float));
  cujit_buffer_free(v);
  cujit_buffer_free(b);
  expect_tensor_holds(out, host + 8, 8);
}

Test(dlpack, a_deleter_after_close_frees_only_its_record) {
  need_device();
  release_log log = {0, 0};
  cujit_buffer *b = wrap(foreign_alloc(64), 64, CUJIT_F32, &log);
  void *out = NULL;
  OK(cujit_buffer_to_dlpack(b, 0, NULL, &out));
  cujit_buffer_free(b);
  cr_assert_eq(log.calls, 0);
  cujit_close(engine); /* frees what the tensor held */
  engine = NULL;
  cr_assert_eq(log.calls, 1, "close releases held memory once");
  DLManagedTensorVersioned *m = out;
  m->deleter(m);
  cr_assert_eq(log.calls, 1, "the deleter after close released again");
  OK(cujit_open(&engine));
}

/* --- DLPack import ---------------------------------------------------------------------------- */

/* A producer's tensor over `data`, counting its deleter's calls. */
typedef struct producer {
  DLManagedTensorVersioned m;
  int64_t shape[9], strides[9];
  int deleted;
} producer;

static void producer_deleter(DLManagedTensorVersioned *self) {
  ((producer *)self->manager_ctx)->deleted++;
}

static void make_tensor(producer *p, uint64_t data, DLDeviceType type, DLDataType dtype, int ndim,
                        const int64_t *shape) {
  memset(p, 0, sizeof *p);
  p->m.version.major = 1;
  p->m.version.minor = 1;
  p->m.manager_ctx = p;
  p->m.deleter = producer_deleter;
  p->m.dl_tensor.data = (void *)(uintptr_t)data;
  p->m.dl_tensor.device.device_type = type;
  p->m.dl_tensor.device.device_id = 0;
  p->m.dl_tensor.ndim = ndim;
  p->m.dl_tensor.dtype = dtype;
  memcpy(p->shape, shape, (size_t)ndim * sizeof *shape);
  p->m.dl_tensor.shape = p->shape;
}

static const DLDataType f32 = {kDLFloat, 32, 1};

Test(dlpack, from_dlpack_imports_shape_and_offset_and_deletes_once_at_free) {
  need_device();
  DLDeviceType here = on_gpu ? kDLCUDA : kDLCPU;
  uint64_t mem = foreign_alloc(64 * sizeof(float));
  float host[64];
  for (int i = 0; i < 64; i++) host[i] = (float)i;
  cujit_buffer *whole = NULL;
  OK(cujit_buffer_wrap(engine, mem, sizeof host, CUJIT_F32, NULL, NULL, &whole));
  upload(whole, host, sizeof host);
  producer p;
  make_tensor(&p, mem, here, f32, 2, (const int64_t[]){3, 4});
  p.m.dl_tensor.byte_offset = 8 * sizeof(float);
  cujit_buffer *b = NULL;
  int ndim = -1;
  int64_t shape[CUJIT_DLPACK_MAX_DIMS] = {0};
  OK(cujit_buffer_from_dlpack(engine, &p.m, &b, &ndim, shape));
  cr_assert_eq(cujit_buffer_devptr(b), mem + 8 * sizeof(float), "byte_offset honoured, no copy");
  cr_assert_eq(cujit_buffer_size(b), 12 * sizeof(float));
  cr_assert_eq(cujit_buffer_dtype(b), CUJIT_F32);
  cr_assert_eq(ndim, 2);
  cr_assert_eq(shape[0], 3);
  cr_assert_eq(shape[1], 4);
  float got[12];
  OK(cujit_memcpy_dtoh(got, b, 0, sizeof got, NULL));
  for (int i = 0; i < 12; i++) cr_assert_eq(got[i], (float)(i + 8));
  cr_assert_eq(p.deleted, 0);
  cujit_buffer_free(b);
  cr_assert_eq(p.deleted, 1, "the producer's deleter runs once at free: %d", p.deleted);
  /* Strides of a size-1 dimension are anything; the others compact. */
  make_tensor(&p, mem, here, f32, 3, (const int64_t[]){2, 1, 8});
  int64_t strides[] = {8, 77, 1};
  p.m.dl_tensor.strides = strides;
  OK(cujit_buffer_from_dlpack(engine, &p.m, &b, NULL, NULL));
  cujit_buffer_free(b);
  cr_assert_eq(p.deleted, 1, "deleted again? (counts restart per tensor made)");
  cujit_buffer_free(whole);
  foreign_free(mem);
}

Test(dlpack, from_dlpack_refuses_what_it_cannot_take_and_leaves_the_tensor_to_its_owner) {
  need_device();
  DLDeviceType here = on_gpu ? kDLCUDA : kDLCPU;
  uint64_t mem = foreign_alloc(256);
  producer p;
  cujit_buffer *b = NULL;
#define IMPORT_REFUSED(setup, status, text)                                                        \
  do {                                                                                             \
    make_tensor(&p, mem, here, f32, 1, (const int64_t[]){16});                                     \
    setup;                                                                                         \
    REFUSED(cujit_buffer_from_dlpack(engine, &p.m, &b, NULL, NULL), status, text);                 \
    cr_assert_null(b);                                                                             \
    cr_assert_eq(p.deleted, 0, "a failed import called the deleter (%s)", #setup);                 \
  } while (0)
  IMPORT_REFUSED(p.m.version.major = 0, CUJIT_ERROR_INVALID_ARGUMENT,
                 "the tensor is DLPack 0.1; cujit reads DLPack 1.x");
  IMPORT_REFUSED(p.m.version.major = 2, CUJIT_ERROR_INVALID_ARGUMENT, "max_version=(1, 0)");
  IMPORT_REFUSED(p.m.flags = DLPACK_FLAG_BITMASK_READ_ONLY, CUJIT_ERROR_INVALID_ARGUMENT,
                 "the tensor is read-only");
  IMPORT_REFUSED(p.m.dl_tensor.device.device_type = kDLCUDAHost, CUJIT_ERROR_INVALID_ARGUMENT,
                 "kDLCUDAHost, pinned host memory");
  IMPORT_REFUSED(p.m.dl_tensor.device.device_type = kDLROCM, CUJIT_ERROR_INVALID_ARGUMENT,
                 "device type is 10 (kDLROCM), which cujit cannot use; cujit takes kDLCUDA, "
                 "kDLCUDAManaged or kDLCPU (the CPU device): copy the tensor there first");
  IMPORT_REFUSED(p.m.dl_tensor.device.device_type = kDLOneAPI, CUJIT_ERROR_INVALID_ARGUMENT,
                 "device type is 14 (not CUDA)");
  IMPORT_REFUSED(p.m.dl_tensor.device.device_type = (DLDeviceType)0, CUJIT_ERROR_INVALID_ARGUMENT,
                 "device type is 0 (not CUDA)");
  IMPORT_REFUSED((p.m.dl_tensor.device.device_type = kDLCUDA, p.m.dl_tensor.device.device_id = 77),
                 CUJIT_ERROR_NO_DEVICE, "the tensor is on CUDA device 77");
  IMPORT_REFUSED(p.m.dl_tensor.dtype = ((DLDataType){kDLBool, 8, 1}), CUJIT_ERROR_INVALID_ARGUMENT,
                 "(code 6: bool, 8 bits, 1 lanes) has no cujit dtype");
  IMPORT_REFUSED(p.m.dl_tensor.dtype = ((DLDataType){kDLBfloat, 32, 1}),
                 CUJIT_ERROR_INVALID_ARGUMENT,
                 "(code 4: bfloat, 32 bits, 1 lanes) has no cujit dtype; cujit takes float "
                 "16/32/64, bfloat 16,");
  IMPORT_REFUSED(p.m.dl_tensor.dtype = ((DLDataType){kDLBfloat, 16, 2}),
                 CUJIT_ERROR_INVALID_ARGUMENT, "(code 4: bfloat, 16 bits, 2 lanes)");
  IMPORT_REFUSED(p.m.dl_tensor.dtype = ((DLDataType){kDLFloat, 32, 4}),
                 CUJIT_ERROR_INVALID_ARGUMENT, "32 bits, 4 lanes");
  IMPORT_REFUSED(p.m.dl_tensor.ndim = 9, CUJIT_ERROR_INVALID_ARGUMENT,
                 "the tensor has 9 dimensions; cujit takes 0 to 8");
  IMPORT_REFUSED(p.shape[0] = -4, CUJIT_ERROR_INVALID_ARGUMENT,
                 "extent -4 of dimension 0 is negative");
  IMPORT_REFUSED(p.shape[0] = -1, CUJIT_ERROR_INVALID_ARGUMENT,
                 "extent -1 of dimension 0 is negative");
  IMPORT_REFUSED((p.m.dl_tensor.ndim = 2, p.shape[1] = INT64_MAX), CUJIT_ERROR_INVALID_ARGUMENT,
                 "the tensor's shape holds more bytes than memory can");
  IMPORT_REFUSED(p.shape[0] = 0, CUJIT_ERROR_INVALID_ARGUMENT, "the tensor is empty (0 elements)");
  IMPORT_REFUSED(p.m.dl_tensor.data = NULL, CUJIT_ERROR_INVALID_ARGUMENT, "data is NULL");
  IMPORT_REFUSED(p.m.dl_tensor.byte_offset = 2, CUJIT_ERROR_INVALID_ARGUMENT,
                 "is not aligned to f32 elements");
  /* A transposed 4x4 (column-major strides) and a stepped vector are not compact. */
  int64_t transposed[] = {1, 4}, stepped[] = {2};
  IMPORT_REFUSED(
      (p.m.dl_tensor.ndim = 2, p.shape[0] = 4, p.shape[1] = 4, p.m.dl_tensor.strides = transposed),
      CUJIT_ERROR_INVALID_ARGUMENT,
      "strides (1, 4) are not compact row-major (4, 1): cujit buffers are contiguous; "
      "make the tensor contiguous first (PyTorch: t.contiguous())");
  IMPORT_REFUSED((p.shape[0] = 8, p.m.dl_tensor.strides = stepped), CUJIT_ERROR_INVALID_ARGUMENT,
                 "strides (2) are not compact row-major (1)");
  /* Broadcast (a stride of 0) and reversed (negative) views are not compact either. */
  int64_t broadcast[] = {0, 1}, reversed[] = {-4, 1};
  IMPORT_REFUSED(
      (p.m.dl_tensor.ndim = 2, p.shape[0] = 4, p.shape[1] = 4, p.m.dl_tensor.strides = broadcast),
      CUJIT_ERROR_INVALID_ARGUMENT, "strides (0, 1) are not compact row-major (4, 1)");
  IMPORT_REFUSED(
      (p.m.dl_tensor.ndim = 2, p.shape[0] = 4, p.shape[1] = 4, p.m.dl_tensor.strides = reversed),
      CUJIT_ERROR_INVALID_ARGUMENT, "strides (-4, 1) are not compact row-major (4, 1)");
  REFUSED(cujit_buffer_from_dlpack(engine, NULL, &b, NULL, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
          "the tensor is NULL");
  /* The CPU device's tensors on a GPU and a GPU's on the CPU device: the memory is checked. */
  if (!on_gpu)
    IMPORT_REFUSED(p.m.dl_tensor.device.device_type = kDLCUDA, CUJIT_ERROR_NO_DEVICE,
                   "which this engine does not have");
#undef IMPORT_REFUSED
  foreign_free(mem);
}

Test(dlpack, a_round_trip_through_dlpack_shares_the_memory) {
  need_device();
  enum { N = 32 };
  float host[N], got[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  cujit_buffer *a = cj_test_upload(host, sizeof host, CUJIT_F32), *back = NULL;
  void *out = NULL;
  OK(cujit_buffer_to_dlpack(a, 2, (const int64_t[]){4, 8}, &out));
  int ndim = 0;
  int64_t shape[CUJIT_DLPACK_MAX_DIMS];
  OK(cujit_buffer_from_dlpack(engine, out, &back, &ndim, shape));
  cr_assert_eq(cujit_buffer_devptr(back), cujit_buffer_devptr(a), "same address: no copy");
  cr_assert_eq(ndim, 2);
  cr_assert_eq(shape[0], 4);
  cr_assert_eq(shape[1], 8);
  cujit_kernel *k;
  OK(cujit_kernel_define(engine, "neg(float *y, int n)",
                         "int i = threadIdx.x; if (i < n) y[i] = -y[i];", NULL, NULL, &k));
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = N;
  cujit_arg args[] = {CUJIT_ARG_BUF(back), CUJIT_ARG_I(N)};
  OK(cujit_launch(k, &cfg, args, 2));
  cj_test_download(got, a, sizeof got);
  for (int i = 0; i < N; i++) cr_assert_eq(got[i], -host[i], "element %d: %g", i, got[i]);
  cujit_buffer_free(a); /* the import holds it through the export */
  OK(cujit_memcpy_dtoh(got, back, 0, sizeof got, NULL));
  cr_assert_eq(got[N - 1], -host[N - 1]);
  cujit_buffer_free(back); /* the export's deleter: the memory goes now */
}
