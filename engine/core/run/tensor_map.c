/*
** tensor_map.c -- cujit_tensor_map_encode: a buffer described as a tiled tensor for the Tensor
** Memory Accelerator. Every rule the driver has for a tiled map is checked here first, so that a
** refusal names the field, its value and the bound (the driver's own answer is only "invalid
** value"), and so that no map can reach past the buffer: TMA reads and writes what the map says.
*/
#include "backend/backend.h"
#include "base/structs.h"
#include "device.h"
#include "memory.h"

#include <inttypes.h>
#include <stdio.h>

static const char fn[] = "cujit_tensor_map_encode";

static cujit_status bad(cujit_engine *engine, const char *what) {
  return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s", fn, what);
}

/* The span of a swizzle mode in bytes (0: none). */
static unsigned swizzle_span(cujit_tensor_swizzle s) {
  return s == CUJIT_SWIZZLE_32B    ? 32
         : s == CUJIT_SWIZZLE_64B  ? 64
         : s == CUJIT_SWIZZLE_128B ? 128
                                   : 0;
}

/* The dimensions, strides (filled in where 0: packed) and boxes of `d`, checked; `bytes` is
** what the tensor spans from its first element. */
static cujit_status check_shape(cujit_engine *engine, cujit_tensor_map_desc *d, size_t elem,
                                uint64_t *bytes) {
  char why[320];
  if (d->rank < 1 || d->rank > CUJIT_TENSOR_MAX_RANK) {
    snprintf(why, sizeof why, "rank %u: a tensor map has 1 to %d dimensions", d->rank,
             CUJIT_TENSOR_MAX_RANK);
    return bad(engine, why);
  }
  uint64_t below = elem; /* bytes of one index of the dimension under d, packed */
  *bytes = 0;
  for (unsigned i = 0; i < d->rank; i++) {
    if (d->dims[i] == 0 || d->dims[i] > ((uint64_t)1 << 32)) {
      snprintf(why, sizeof why, "dims[%u] is %" PRIu64 ": each dimension holds 1 to 2^32 elements",
               i, d->dims[i]);
      return bad(engine, why);
    }
    if (i == 0) d->strides[0] = elem;
    if (i > 0 && d->strides[i] == 0) d->strides[i] = below;
    if (i > 0 && (d->strides[i] % 16 || d->strides[i] < below || d->strides[i] >> 40)) {
      snprintf(why, sizeof why,
               "strides[%u] is %" PRIu64 " bytes: a stride is a multiple of 16 bytes, at least "
               "the %" PRIu64 " bytes of the dimension below, and under 2^40 (pad the rows to a "
               "multiple of 16 bytes, or copy into a buffer that is)",
               i, d->strides[i], below);
      return bad(engine, why);
    }
    if (d->box[i] < 1 || d->box[i] > 256 || d->box[i] > d->dims[i]) {
      snprintf(why, sizeof why,
               "box[%u] is %u: a box dimension is 1 to 256 elements and at most its dimension "
               "(%" PRIu64 ")",
               i, d->box[i], d->dims[i]);
      return bad(engine, why);
    }
    *bytes += (d->dims[i] - 1) * d->strides[i];
    below = d->dims[i] * d->strides[i];
  }
  *bytes += elem;
  size_t row = d->box[0] * elem, span = swizzle_span(d->swizzle);
  if (row % 16 || (span && row > span)) {
    snprintf(why, sizeof why,
             "a box row of %u elements is %zu bytes: it must be a multiple of 16 bytes%s%s",
             d->box[0], row, span ? " and at most the swizzle's " : "",
             span ? (span == 32   ? "32"
                     : span == 64 ? "64"
                                  : "128")
                  : "");
    return bad(engine, why);
  }
  return CUJIT_OK;
}

cujit_status cujit_tensor_map_encode(cujit_buffer *buffer, const cujit_tensor_map_desc *desc,
                                     cujit_tensor_map *map) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!buffer || !desc || !map)
    return cj_fail(buffer ? buffer->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %s is NULL", fn,
                   !buffer ? "buffer"
                   : !desc ? "desc"
                           : "map");
  cujit_device *dev = buffer->device;
  cujit_engine *engine = dev->engine;
  cujit_tensor_map_desc d;
  cujit_status st =
      cj_struct_in(engine, fn, "cujit_tensor_map_desc", desc, &d, sizeof d, CJ_TENSOR_MAP_DESC_V1);
  if (st != CUJIT_OK) return st;
  if (buffer->orphaned) return cj_buffer_orphan_error(engine, fn);
  if (!cj_device_current(dev, buffer->generation))
    return cj_check_alive(dev, buffer->generation, "cujit_tensor_map_encode: the buffer");
  char name[32], why[320];
  if (!dev->ops->tensor_map_encode || dev->info.cc_major < 9) {
    snprintf(why, sizeof why,
             "%s has no Tensor Memory Accelerator (compute capability 9.0 and newer GPUs have "
             "one): copy tiles with ordinary loads there",
             cj_device_name(dev, name, sizeof name));
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED, "%s: %s", fn, why);
  }
  size_t elem = cujit_dtype_size(buffer->dtype);
  if (buffer->dtype == CUJIT_DTYPE_NONE)
    return bad(engine, "the buffer is untyped bytes: give it a dtype (a typed view of it, "
                       "cujit_buffer_view) so the map knows its elements");
  if ((unsigned)d.swizzle > CUJIT_SWIZZLE_128B) {
    snprintf(why, sizeof why, "swizzle %d is none of CUJIT_SWIZZLE_NONE, _32B, _64B, _128B",
             (int)d.swizzle);
    return bad(engine, why);
  }
  if (d.oob_nan && buffer->dtype != CUJIT_F16 && buffer->dtype != CUJIT_BF16 &&
      buffer->dtype != CUJIT_F32 && buffer->dtype != CUJIT_F64)
    return bad(engine, "oob_nan fills with NaN, which only a float dtype has; leave it 0 (zeros)");
  uint64_t span = 0;
  if ((st = check_shape(engine, &d, elem, &span)) != CUJIT_OK) return st;
  uint64_t address = buffer->ptr + d.offset;
  if (address % 16) {
    snprintf(why, sizeof why,
             "the tensor starts at an address that is not a multiple of 16 (offset %zu into the "
             "buffer); TMA needs 16-byte alignment",
             d.offset);
    return bad(engine, why);
  }
  if (d.offset > buffer->size || span > buffer->size - d.offset) {
    snprintf(why, sizeof why,
             "the tensor spans %" PRIu64 " bytes from offset %zu, past the buffer's %zu bytes",
             span, d.offset, buffer->size);
    return bad(engine, why);
  }
  if ((st = cj_device_enter(dev)) != CUJIT_OK) return st;
  return dev->ops->tensor_map_encode(dev, address, buffer->dtype, &d, map->opaque);
}
