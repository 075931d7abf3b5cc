/*
** dlpack.c -- DLPack 1.x tensors to and from cujit buffers, sharing the memory: an export is a
** DLManagedTensorVersioned whose record holds the buffer's memory (memory_foreign.c's holds) until
** its deleter runs; an import is a wrapped buffer (cujit_buffer_wrap_on, with its pointer checks)
** whose release calls the producer's deleter. The ABI is cujit_dlpack.h's.
*/
#include "backend/backend.h"
#include "memory.h"

#include "cujit_dlpack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- dtypes ----------------------------------------------------------------------------------- */

static const struct {
  cujit_dtype dtype;
  uint8_t code, bits;
} dtypes[] = {
    {CUJIT_F16, kDLFloat, 16}, {CUJIT_F32, kDLFloat, 32}, {CUJIT_F64, kDLFloat, 64},
    {CUJIT_I8, kDLInt, 8},     {CUJIT_I16, kDLInt, 16},   {CUJIT_I32, kDLInt, 32},
    {CUJIT_I64, kDLInt, 64},   {CUJIT_U8, kDLUInt, 8},    {CUJIT_U16, kDLUInt, 16},
    {CUJIT_U32, kDLUInt, 32},  {CUJIT_U64, kDLUInt, 64},  {CUJIT_BF16, kDLBfloat, 16},
};
#define NDTYPES (sizeof dtypes / sizeof *dtypes)

static int to_dl_dtype(cujit_dtype dtype, DLDataType *out) {
  for (size_t i = 0; i < NDTYPES; i++)
    if (dtypes[i].dtype == dtype) {
      out->code = dtypes[i].code, out->bits = dtypes[i].bits, out->lanes = 1;
      return 1;
    }
  return 0;
}

static const char *code_name(uint8_t code) {
  static const char *const names[] = {"int",    "uint",    "float", "opaque handle",
                                      "bfloat", "complex", "bool"};
  return code < sizeof names / sizeof *names ? names[code] : "unknown";
}

static cujit_status from_dl_dtype(cujit_engine *engine, const char *fn, DLDataType t,
                                  cujit_dtype *out) {
  if (t.lanes == 1)
    for (size_t i = 0; i < NDTYPES; i++)
      if (dtypes[i].code == t.code && dtypes[i].bits == t.bits) {
        *out = dtypes[i].dtype;
        return CUJIT_OK;
      }
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the tensor's dtype (code %u: %s, %u bits, %u lanes) has no cujit dtype; "
                 "cujit takes float 16/32/64, bfloat 16, int and uint 8/16/32/64 of one lane "
                 "(convert the tensor first, e.g. a bool tensor to uint8)",
                 fn, t.code, code_name(t.code), t.bits, t.lanes);
}

/* --- export ----------------------------------------------------------------------------------- */

typedef struct export_record {
  DLManagedTensorVersioned tensor; /* first: the deleter's self is the record */
  int64_t shape[CUJIT_DLPACK_MAX_DIMS], strides[CUJIT_DLPACK_MAX_DIMS];
  cj_hold *hold;
} export_record;

static void export_deleter(DLManagedTensorVersioned *self) {
  if (!self) return;
  export_record *r = (export_record *)self;
  cj_hold_drop(r->hold);
  free(r);
}

/* The shape given (or the whole buffer as one dimension) into the record, checked. */
static cujit_status export_shape(cujit_engine *engine, const cujit_buffer *b, int ndim,
                                 const int64_t *shape, export_record *r) {
  static const char fn[] = "cujit_buffer_to_dlpack";
  size_t elems = b->size / cujit_dtype_size(b->dtype);
  if (!shape) {
    r->tensor.dl_tensor.ndim = 1;
    r->shape[0] = (int64_t)elems;
    r->strides[0] = 1;
    return CUJIT_OK;
  }
  if (ndim < 0 || ndim > CUJIT_DLPACK_MAX_DIMS)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: ndim %d is outside 0..%d; pass at most %d dimensions (or shape NULL for "
                   "one of the whole buffer)",
                   fn, ndim, CUJIT_DLPACK_MAX_DIMS, CUJIT_DLPACK_MAX_DIMS);
  uint64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] <= 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: extent %" PRId64 " of dimension %d; every extent must be at least 1", fn,
                     shape[i], i);
    /* count * extent > elems, asked without overflowing: then say "more than the buffer". */
    if ((uint64_t)shape[i] > elems / count) {
      count = elems + 1;
      break;
    }
    count *= (uint64_t)shape[i];
  }
  if (count != elems)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the shape holds %s%" PRIu64 " elements but the buffer %zu %s elements; a "
                   "shape covers the whole buffer (export a cujit_buffer_view for a part)",
                   fn, count > elems ? "more than " : "", count > elems ? (uint64_t)elems : count,
                   elems, cujit_dtype_name(b->dtype));
  r->tensor.dl_tensor.ndim = ndim;
  int64_t stride = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    r->shape[i] = shape[i];
    r->strides[i] = stride;
    stride *= shape[i];
  }
  return CUJIT_OK;
}

cujit_status cujit_buffer_to_dlpack(cujit_buffer *buffer, int ndim, const int64_t *shape,
                                    void **out) {
  static const char fn[] = "cujit_buffer_to_dlpack";
  if (!buffer || !out)
    return cj_fail(buffer ? buffer->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn, buffer ? "out" : "buffer");
  *out = NULL;
  cujit_device *device = buffer->device;
  cujit_engine *engine = device->engine;
  if (buffer->orphaned) return cj_buffer_orphan_error(engine, fn);
  if (!cj_device_current(device, buffer->generation))
    return cj_check_alive(device, buffer->generation, "cujit_buffer_to_dlpack: the buffer");
  /* The memory a view shares is its owner's: the export holds that. */
  cujit_buffer *holder = buffer->kind == CJ_BUFFER_VIEW ? buffer->root : buffer;
  if (!holder)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the buffer views a host buffer or a program's global, whose memory no "
                   "DLPack tensor can hold; copy it into a cujit buffer and export that",
                   fn);
  export_record *r = calloc(1, sizeof *r);
  if (!r)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory exporting a buffer");
  DLTensor *t = &r->tensor.dl_tensor;
  cujit_status st = CUJIT_OK;
  if (!to_dl_dtype(buffer->dtype, &t->dtype))
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the buffer is untyped bytes (CUJIT_DTYPE_NONE), which DLPack cannot name; "
                 "export a typed view of it (cujit_buffer_view with CUJIT_U8, CUJIT_F32, ...)",
                 fn);
  if (st == CUJIT_OK) st = export_shape(engine, buffer, ndim, shape, r);
  if (st == CUJIT_OK) st = cj_buffer_hold(holder, &r->hold);
  if (st != CUJIT_OK) {
    free(r);
    return st;
  }
  r->tensor.version.major = 1;
  r->tensor.version.minor = 0;
  r->tensor.manager_ctx = r;
  r->tensor.deleter = export_deleter;
  r->tensor.flags = 0;
  t->data = (void *)(uintptr_t)buffer->ptr;
  t->device.device_type = device->ordinal == CUJIT_DEVICE_CPU ? kDLCPU : kDLCUDA;
  t->device.device_id = device->ordinal == CUJIT_DEVICE_CPU ? 0 : device->ordinal;
  t->shape = r->shape;
  t->strides = r->strides;
  t->byte_offset = 0;
  *out = &r->tensor;
  return CUJIT_OK;
}

/* --- import ----------------------------------------------------------------------------------- */

static void import_release(void *user, uint64_t address) {
  (void)address;
  DLManagedTensorVersioned *m = user;
  if (m->deleter) m->deleter(m);
}

/* The engine's device the tensor's memory is on. */
static cujit_status import_device(cujit_engine *engine, const char *fn, DLDevice where,
                                  cujit_device **out) {
  int type = (int)where.device_type;
  if (type == kDLCPU) {
    return cujit_device_get(engine, CUJIT_DEVICE_CPU, out);
  }
  if (type == kDLCUDA || type == kDLCUDAManaged) {
    if (where.device_id >= 0 && cujit_device_get(engine, where.device_id, out) == CUJIT_OK)
      return CUJIT_OK;
    int gpus = 0;
    if (cujit_device_count(engine, &gpus) != CUJIT_OK) gpus = 0;
    return cj_fail(engine, CUJIT_ERROR_NO_DEVICE,
                   "%s: the tensor is on CUDA device %d, which this engine does not have (%d "
                   "GPU%s); import it where it was made, or copy it to the CPU first",
                   fn, (int)where.device_id, gpus, gpus == 1 ? "" : "s");
  }
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: the tensor's device type is %d (%s), which cujit cannot use; cujit takes "
                 "kDLCUDA, kDLCUDAManaged or kDLCPU (the CPU device): copy the tensor there first",
                 fn, type,
                 type == kDLCUDAHost ? "kDLCUDAHost, pinned host memory"
                 : type == kDLROCM   ? "kDLROCM"
                                     : "not CUDA");
}

/* The tensor's shape into ndim/shape (when given), checked compact; its element count. */
static cujit_status import_shape(cujit_engine *engine, const char *fn, const DLTensor *t,
                                 size_t elem, size_t *bytes) {
  if (t->ndim < 0 || t->ndim > CUJIT_DLPACK_MAX_DIMS)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the tensor has %d dimensions; cujit takes 0 to %d (reshape it first)", fn,
                   (int)t->ndim, CUJIT_DLPACK_MAX_DIMS);
  if (t->ndim > 0 && !t->shape)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the tensor's shape is NULL", fn);
  uint64_t count = 1, expect = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: extent %" PRId64 " of dimension %d is negative", fn, t->shape[i], i);
    if (t->shape[i] != 0 && count > (SIZE_MAX / elem) / (uint64_t)t->shape[i])
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the tensor's shape holds more bytes than memory can", fn);
    count *= (uint64_t)t->shape[i];
  }
  if (count == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the tensor is empty (0 elements); a cujit buffer holds at least one", fn);
  for (int i = t->ndim - 1; t->strides && i >= 0; i--) {
    if (t->shape[i] != 1 && t->strides[i] != (int64_t)expect) {
      char got[160] = "", want[160] = "";
      for (int k = 0, gl = 0, wl = 0; k < t->ndim && gl < 130 && wl < 130; k++) {
        int64_t w = 1;
        for (int j = k + 1; j < t->ndim; j++) w *= t->shape[j];
        gl +=
            snprintf(got + gl, sizeof got - (size_t)gl, "%s%" PRId64, k ? ", " : "", t->strides[k]);
        wl += snprintf(want + wl, sizeof want - (size_t)wl, "%s%" PRId64, k ? ", " : "", w);
      }
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the tensor's strides (%s) are not compact row-major (%s): cujit buffers "
                     "are contiguous; make the tensor contiguous first (PyTorch: t.contiguous())",
                     fn, got, want);
    }
    expect *= (uint64_t)t->shape[i];
  }
  *bytes = (size_t)count * elem;
  return CUJIT_OK;
}

cujit_status cujit_buffer_from_dlpack(cujit_engine *engine, void *managed_versioned,
                                      cujit_buffer **out, int *ndim, int64_t *shape) {
  static const char fn[] = "cujit_buffer_from_dlpack";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_buffer");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  DLManagedTensorVersioned *m = managed_versioned;
  if (!m)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the tensor is NULL; pass a DLManagedTensorVersioned *", fn);
  if (m->version.major != 1)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the tensor is DLPack %u.%u; cujit reads DLPack 1.x "
                   "(DLManagedTensorVersioned): ask the producer for version 1 (Python: "
                   "__dlpack__(max_version=(1, 0)))",
                   fn, m->version.major, m->version.minor);
  if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and cujit "
                   "buffers are writable; pass a writable tensor, or a copy",
                   fn);
  const DLTensor *t = &m->dl_tensor;
  cujit_device *device = NULL;
  cujit_dtype dtype = CUJIT_DTYPE_NONE;
  size_t bytes = 0;
  if ((st = import_device(engine, fn, t->device, &device)) != CUJIT_OK) return st;
  if ((st = from_dl_dtype(engine, fn, t->dtype, &dtype)) != CUJIT_OK) return st;
  if ((st = import_shape(engine, fn, t, cujit_dtype_size(dtype), &bytes)) != CUJIT_OK) return st;
  if (!t->data)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the tensor's data is NULL", fn);
  uint64_t address = (uint64_t)(uintptr_t)t->data + t->byte_offset;
  st = cj_buffer_wrap(engine, device, address, bytes, dtype, import_release, m, fn, out);
  if (st != CUJIT_OK) return st;
  if (ndim) *ndim = (int)t->ndim;
  if (shape)
    for (int i = 0; i < t->ndim; i++) shape[i] = t->shape[i];
  return CUJIT_OK;
}
