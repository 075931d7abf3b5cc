/*
** launch.c -- launching kernels: checking arguments against the signature and packing them (the
** core's one scalar-conversion policy: ranges, exactness, dtypes), checking the launch
** configuration against the device, and the launch path itself, which takes no lock, allocates
** nothing and does no hashing or string work once the kernel is ready on the device; a
** configuration with launch attributes (clusters, programmatic launch, priority: launch_attrs.c)
** goes to the backend's launch_ex, any other to its plain launch. Also the queries that need a
** kernel on the current device (block suggestion, attributes).
*/
#include "launch.h"
#include "resources.h"
#include "backend/backend.h"
#include "base/structs.h"
#include "run/peer.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- arguments -------------------------------------------------------------------------------- */

static const char *arg_kind_name(cujit_arg_kind kind) {
  switch (kind) {
  case CUJIT_ARG_INT:
    return "an integer";
  case CUJIT_ARG_UINT:
    return "an unsigned integer";
  case CUJIT_ARG_FLOAT:
    return "a float";
  case CUJIT_ARG_BUFFER:
    return "a buffer";
  case CUJIT_ARG_DEVPTR:
    return "a device pointer";
  case CUJIT_ARG_BYTES:
    return "raw bytes";
  }
  return "an unknown kind of argument";
}

static cujit_status arg_error(const cujit_kernel *k, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cujit_status arg_error(const cujit_kernel *k, size_t i, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  const cj_param *p = &k->sig.params[i];
  return cj_fail(k->engine, CUJIT_ERROR_ARGUMENT, "kernel '%s', argument %zu '%s' (%s): %s",
                 k->sig.name, i + 1, p->name, p->type, detail);
}

static int int_range(cujit_dtype d, int64_t *lo, uint64_t *hi) {
  switch (d) {
  case CUJIT_I8:
    *lo = INT8_MIN, *hi = INT8_MAX;
    return 1;
  case CUJIT_I16:
    *lo = INT16_MIN, *hi = INT16_MAX;
    return 1;
  case CUJIT_I32:
    *lo = INT32_MIN, *hi = INT32_MAX;
    return 1;
  case CUJIT_I64:
    *lo = INT64_MIN, *hi = INT64_MAX;
    return 1;
  case CUJIT_U8:
    *lo = 0, *hi = UINT8_MAX;
    return 1;
  case CUJIT_U16:
    *lo = 0, *hi = UINT16_MAX;
    return 1;
  case CUJIT_U32:
    *lo = 0, *hi = UINT32_MAX;
    return 1;
  case CUJIT_U64:
    *lo = 0, *hi = UINT64_MAX;
    return 1;
  default:
    return 0;
  }
}

static void store_int(void *dst, cujit_dtype d, uint64_t bits) {
  switch (cujit_dtype_size(d)) {
  case 1:
    *(uint8_t *)dst = (uint8_t)bits;
    break;
  case 2:
    *(uint16_t *)dst = (uint16_t)bits;
    break;
  case 4:
    *(uint32_t *)dst = (uint32_t)bits;
    break;
  default:
    *(uint64_t *)dst = bits;
    break;
  }
}

/* Integer parameters: the value must fit, and a float must be an exact integer. */
static cujit_status pack_int(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst) {
  cujit_dtype d = k->sig.params[i].dtype;
  int64_t lo = 0;
  uint64_t hi = 0;
  if (!int_range(d, &lo, &hi)) return arg_error(k, i, "cujit cannot pass this scalar type");
  if (k->sig.params[i].boolean) hi = 1; /* another byte is no bool on the device */
  switch (a->kind) {
  case CUJIT_ARG_INT:
    if (a->v.i < lo || (a->v.i > 0 && (uint64_t)a->v.i > hi))
      return arg_error(k, i, "%lld does not fit (range %lld..%llu)", (long long)a->v.i,
                       (long long)lo, (unsigned long long)hi);
    store_int(dst, d, (uint64_t)a->v.i);
    return CUJIT_OK;
  case CUJIT_ARG_UINT:
    if (a->v.u > hi)
      return arg_error(k, i, "%llu does not fit (range %lld..%llu)", (unsigned long long)a->v.u,
                       (long long)lo, (unsigned long long)hi);
    store_int(dst, d, a->v.u);
    return CUJIT_OK;
  case CUJIT_ARG_FLOAT: {
    double f = a->v.f;
    if (!isfinite(f) || f != floor(f))
      return arg_error(k, i, "%.17g is not an integer; round it first", f);
    if (f < (double)lo || f >= 18446744073709551616.0 || (f >= 0 && (uint64_t)f > hi))
      return arg_error(k, i, "%.17g does not fit (range %lld..%llu)", f, (long long)lo,
                       (unsigned long long)hi);
    store_int(dst, d, f < 0 ? (uint64_t)(int64_t)f : (uint64_t)f);
    return CUJIT_OK;
  }
  default:
    return arg_error(k, i, "expects a number, got %s", arg_kind_name(a->kind));
  }
}

/* A 16-bit float with `exp_bits` of exponent (5: IEEE binary16, __half; 8: bfloat16,
** __nv_bfloat16) from a double, rounding to nearest even straight from the double's 52-bit
** mantissa (through float first, a value just below a tie between two halves could round twice).
** NaN stays a (quiet) NaN of its sign. */
static uint16_t narrow_float_bits(double v, unsigned exp_bits) {
  unsigned man_bits = 15 - exp_bits, drop = 52 - man_bits;
  int bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
  uint64_t x;
  memcpy(&x, &v, sizeof x);
  uint64_t sign = (x >> 48) & 0x8000u, mant = x & ((UINT64_C(1) << 52) - 1);
  uint64_t inf = (uint64_t)top << man_bits;
  int exp = (int)((x >> 52) & 0x7ff);
  if (exp == 0x7ff) return (uint16_t)(sign | inf | (mant ? UINT64_C(1) << (man_bits - 1) : 0));
  int e = exp - 1023 + bias;
  if (e >= top) return (uint16_t)(sign | inf);
  if (e <= 0) { /* a subnormal result, or zero */
    if (e < -(int)man_bits) return (uint16_t)sign;
    mant |= UINT64_C(1) << 52;
    unsigned shift = (unsigned)((int)drop + 1 - e);
    uint64_t bits = mant >> shift, rest = mant & ((UINT64_C(1) << shift) - 1);
    uint64_t mid = UINT64_C(1) << (shift - 1);
    if (rest > mid || (rest == mid && (bits & 1u))) bits++;
    return (uint16_t)(sign | bits);
  }
  uint64_t bits = sign | ((uint64_t)e << man_bits) | (mant >> drop),
           rest = mant & ((UINT64_C(1) << drop) - 1);
  uint64_t mid = UINT64_C(1) << (drop - 1);
  if (rest > mid || (rest == mid && (bits & 1u))) bits++; /* a carry moves into the exponent */
  return (uint16_t)bits;
}

/* The one rule for a float parameter (the Lua binding's host arrays follow it too): a value is
** rounded to the nearest value of the type, and refused only when that would be infinity: from
** half an ulp past the largest finite value (65504 + 16 for __half, 2^128 - 2^120 + 2^119 for
** __nv_bfloat16, FLT_MAX + 2^103 for float). Infinity and NaN passed as such are passed on. */
static double largest_finite(cujit_dtype d) {
  return d == CUJIT_F16 ? 65504.0 : d == CUJIT_BF16 ? ldexp(255.0, 120) : (double)FLT_MAX;
}
static double overflow_threshold(cujit_dtype d) {
  return d == CUJIT_F16    ? 65520.0
         : d == CUJIT_BF16 ? ldexp(511.0, 119)
                           : (double)FLT_MAX + ldexp(1.0, 103);
}

static cujit_status pack_float(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst) {
  double f;
  switch (a->kind) {
  case CUJIT_ARG_FLOAT:
    f = a->v.f;
    break;
  case CUJIT_ARG_INT:
    f = (double)a->v.i;
    break;
  case CUJIT_ARG_UINT:
    f = (double)a->v.u;
    break;
  default:
    return arg_error(k, i, "expects a number, got %s", arg_kind_name(a->kind));
  }
  cujit_dtype d = k->sig.params[i].dtype;
  if (d != CUJIT_F64 && isfinite(f) && fabs(f) >= overflow_threshold(d))
    return arg_error(k, i,
                     "%.17g is out of range for %s (it would become infinity; the largest is %.9g)",
                     f, cujit_dtype_name(d), largest_finite(d));
  if (d == CUJIT_F64)
    memcpy(dst, &f, sizeof f);
  else if (d == CUJIT_F32) {
    float v = (float)f;
    memcpy(dst, &v, sizeof v);
  } else {
    uint16_t h = narrow_float_bits(f, d == CUJIT_BF16 ? 8 : 5);
    memcpy(dst, &h, sizeof h);
  }
  return CUJIT_OK;
}

/* A buffer of another device, refused before the driver sees it (issue 14). */
static cujit_status foreign_buffer(const cujit_kernel *k, size_t i, const cujit_device *home,
                                   const cujit_device *dev) {
  char have[32], want[32];
  if (home->engine !=
      dev->engine) /* "lives on the CPU device but the launch is on the CPU device" */
    return arg_error(k, i,
                     "the buffer belongs to another engine (another cujit_open, or another Lua "
                     "state's module): buffers, kernels and streams work only within the engine "
                     "that made them; make the buffer with this kernel's engine, or copy the data "
                     "through host memory");
  return arg_error(k, i,
                   "the buffer lives on %s but the launch is on %s; copy it there "
                   "(cujit_memcpy_dtod; Lua: a:copy_to(device)), or between two GPUs enable peer "
                   "access (cujit_device_enable_peer; Lua: cuda.enable_peer)",
                   cj_device_name(home, have, sizeof have), cj_device_name(dev, want, sizeof want));
}

static cujit_status pack_pointer(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst,
                                 const cujit_device *dev) {
  const cj_param *p = &k->sig.params[i];
  char name[32];
  uint64_t addr;
  if (a->kind == CUJIT_ARG_DEVPTR)
    addr = a->v.devptr;
  else if (a->kind != CUJIT_ARG_BUFFER)
    return arg_error(k, i, "expects a device buffer, got %s", arg_kind_name(a->kind));
  else if (!a->v.buffer)
    addr = 0; /* real code passes NULL for an optional input; the kernel checks for it */
  else {
    const cujit_buffer *b = a->v.buffer;
    /* With no device (none could be had), the launch fails for that reason right after. */
    if (dev && b->device != dev && !cj_peer_enabled(dev, b->device)) /* peer.c */
      return foreign_buffer(k, i, b->device, dev);
    if (b->orphaned)
      return arg_error(k, i,
                       "the buffer is a view of memory that has been freed; keep the "
                       "array it views alive while the view is used");
    if (dev && b->generation != b->device->generation)
      return arg_error(k, i, "the buffer was lost when %s was reset; make a new one",
                       cj_device_name(b->device, name, sizeof name));
    if (p->dtype != CUJIT_DTYPE_NONE && b->dtype != CUJIT_DTYPE_NONE && b->dtype != p->dtype)
      return arg_error(k, i, "the buffer holds %s but the parameter points to %s",
                       cujit_dtype_name(b->dtype), cujit_dtype_name(p->dtype));
    addr = b->ptr;
  }
  if (addr == 0 && p->nonnull) /* one test, on the null pointer's path only */
    return arg_error(k, i,
                     "a null pointer (Lua nil, a NULL buffer or address 0) was passed, but the "
                     "program's nonnull option says this parameter must not be null: pass a "
                     "device array (a nil here is often a misspelt or unset variable)");
  memcpy(dst, &addr, sizeof addr);
  return CUJIT_OK;
}

static cujit_status pack_one(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst,
                             const cujit_device *dev) {
  const cj_param *p = &k->sig.params[i];
  if (p->kind == CUJIT_PARAM_POINTER) return pack_pointer(k, i, a, dst, dev);
  if (p->size == 0)
    return arg_error(k, i,
                     "cujit cannot size this type (it reads sizes it does not know from the "
                     "PTX, which the CPU device has not); give the kernel's signature with C "
                     "types in the signatures option, or pass the value through a pointer "
                     "(docs/cuda-code.md)");
  if (p->dtype == CUJIT_DTYPE_NONE || a->kind == CUJIT_ARG_BYTES) {
    if (a->kind != CUJIT_ARG_BYTES || !a->v.bytes)
      return arg_error(k, i, "expects %zu raw bytes (CUJIT_ARG_BYTES), got %s", p->size,
                       arg_kind_name(a->kind));
    memcpy(dst, a->v.bytes, p->size);
    return CUJIT_OK;
  }
  if (p->dtype == CUJIT_F16 || p->dtype == CUJIT_BF16 || p->dtype == CUJIT_F32 ||
      p->dtype == CUJIT_F64)
    return pack_float(k, i, a, dst);
  return pack_int(k, i, a, dst);
}

/* --- launching -------------------------------------------------------------------------------- */

static cujit_status check_config(const cujit_kernel *k, const cujit_device *dev,
                                 const cujit_launch_config *c, unsigned grid[3],
                                 unsigned block[3]) {
  const cujit_device_info *info = &dev->info;
  char name[32]; /* "device 0", "the CPU device" */
  static const char axis[3] = {'x', 'y', 'z'};
  unsigned threads = 1;
  for (int d = 0; d < 3; d++) {
    grid[d] = (d > 0 && c->grid[d] == 0) ? 1 : c->grid[d];
    block[d] = (d > 0 && c->block[d] == 0) ? 1 : c->block[d];
    if (grid[d] == 0 || block[d] == 0)
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': %s.%c is 0; every launch needs at least one block of one thread",
                     k->sig.name, grid[d] == 0 ? "grid" : "block", axis[d]);
    if (grid[d] > (unsigned)info->max_grid_dim[d] || block[d] > (unsigned)info->max_block_dim[d])
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': %s.%c = %u is over %s's limit of %d", k->sig.name,
                     grid[d] > (unsigned)info->max_grid_dim[d] ? "grid" : "block", axis[d],
                     grid[d] > (unsigned)info->max_grid_dim[d] ? grid[d] : block[d],
                     cj_device_name(dev, name, sizeof name),
                     grid[d] > (unsigned)info->max_grid_dim[d] ? info->max_grid_dim[d]
                                                               : info->max_block_dim[d]);
    threads *= block[d];
  }
  if (threads > (unsigned)info->max_threads_per_block)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': a block of %u threads is over %s's limit of %d", k->sig.name,
                   threads, cj_device_name(dev, name, sizeof name), info->max_threads_per_block);
  if (c->shared_bytes > (unsigned)info->max_shared_per_block_optin)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': %u bytes of dynamic shared memory is over %s's limit of "
                   "%d bytes per block",
                   k->sig.name, c->shared_bytes, cj_device_name(dev, name, sizeof name),
                   info->max_shared_per_block_optin);
  return CUJIT_OK;
}

/* Shared memory beyond the default 48 KiB needs an opt-in, once per kernel and size. */
static cujit_status allow_shared(cujit_device *dev, cj_kernel_on_device *on, unsigned bytes) {
  if (bytes <= (unsigned)dev->info.max_shared_per_block ||
      bytes <= (unsigned)__atomic_load_n(&on->max_dynamic_shared, __ATOMIC_RELAXED))
    return CUJIT_OK;
  cujit_status st = dev->ops->allow_shared(dev, on->fn, bytes);
  if (st == CUJIT_OK) __atomic_store_n(&on->max_dynamic_shared, (int)bytes, __ATOMIC_RELAXED);
  return st;
}

cujit_status cj_launch_pack(const cujit_kernel *k, const cujit_arg *args, size_t nargs,
                            const cujit_device *dev, unsigned char *params, void **pointers) {
  for (size_t i = 0; i < nargs; i++) {
    void *dst = params + k->sig.params[i].offset;
    cujit_status st = pack_one(k, i, &args[i], dst, dev);
    if (st != CUJIT_OK) return st;
    pointers[i] = dst;
  }
  /* The driver reads as many pointers as the kernel's image says it has; the list still ends
  ** visibly, for a reader that cannot see the image (the stand-in driver records what a graph's
  ** node was given), instead of in whatever the caller's stack held. */
  if (nargs < CJ_MAX_PARAMS) pointers[nargs] = NULL;
  return CUJIT_OK;
}

static cujit_status place_captured(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **on);

/* The device of the launch, with the kernel loaded there. When no device can be had, the
** arguments are checked first, so a mistake in them is reported as such even with no GPU. */
static cujit_status place(cujit_kernel *k, cujit_stream *stream, const cujit_arg *args,
                          size_t nargs, cujit_device **dev, cj_kernel_on_device **on) {
  cujit_status st = cj_stream_device(k->engine, stream, dev);
  if (st != CUJIT_OK) {
    _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
    void *pointers[CJ_MAX_PARAMS];
    cujit_status args_st = cj_launch_pack(k, args, nargs, NULL, params, pointers);
    return args_st != CUJIT_OK ? args_st : st;
  }
  if (stream && stream->capture) return place_captured(k, *dev, on);
  return cj_kernel_on(k, *dev, on);
}

/* A kernel's first load on a device cannot be recorded into a graph: during a capture the kernel
** must be ready there already (the launch path's check, without the load). */
static cujit_status place_captured(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **on) {
  if ((*on = cj_kernel_ready(k, dev))) return CUJIT_OK;
  char name[32];
  return cj_fail(k->engine, CUJIT_ERROR_UNSUPPORTED,
                 "kernel '%s' cannot be launched into a graph: it is not loaded on %s yet, "
                 "and compiling or loading a kernel cannot be captured; launch it once (for a "
                 "generic kernel, with these dtypes) or call cujit_kernel_suggest_block before "
                 "cujit_capture_begin",
                 k->sig.name, cj_device_name(dev, name, sizeof name));
}

/* Records the launch just issued on a capturing stream as the capture's next kernel node. */
static cujit_status note_captured(cujit_kernel *k, cujit_device *dev, cujit_stream *stream,
                                  const unsigned grid[3], const unsigned block[3],
                                  unsigned shared_bytes) {
  cj_capture *c = stream->capture;
  if (c->count == c->capacity) {
    size_t capacity = c->capacity ? 2 * c->capacity : 16;
    cj_graph_kernel *more = realloc(c->kernels, capacity * sizeof *more);
    if (!more)
      return cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "out of host memory recording kernel '%s' into a graph", k->sig.name);
    c->kernels = more, c->capacity = capacity;
  }
  cj_graph_kernel *n = &c->kernels[c->count];
  cujit_status st = dev->ops->capture_last_node(dev, stream->handle, &n->node);
  if (st != CUJIT_OK) return st;
  n->kernel = k, n->shared_bytes = shared_bytes;
  memcpy(n->grid, grid, sizeof n->grid);
  memcpy(n->block, block, sizeof n->block);
  c->count++;
  return CUJIT_OK;
}

static cujit_status check_cooperative(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                      const cujit_launch_config *config, const unsigned grid[3],
                                      const unsigned block[3]);

/* The launch itself, once the kernel is concrete and loaded on `dev`; cooperative: all blocks at
** once (cujit_launch_cooperative). */
static cujit_status launch_placed(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                  const cujit_launch_config *config, const cujit_arg *args,
                                  size_t nargs, int cooperative) {
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  unsigned grid[3], block[3];
  cj_launch_attrs attrs;
  int attributed = cj_launch_has_attrs(config); /* else the plain launch, as before them */
  cujit_status st = cj_launch_pack(k, args, nargs, dev, params, pointers);
  if (st == CUJIT_OK) st = check_config(k, dev, config, grid, block);
  if (st == CUJIT_OK) st = allow_shared(dev, on, config->shared_bytes);
  if (st == CUJIT_OK && attributed)
    st = cj_launch_attrs_check(k, dev, on, config, grid, block, cooperative, &attrs);
  if (st == CUJIT_OK && cooperative) st = check_cooperative(k, dev, on, config, grid, block);
  if (st != CUJIT_OK) return st;
  __atomic_store_n(&dev->last_kernel, k->sig.name, __ATOMIC_RELAXED);
  cj_trace_push_kernel(k->trace, k->sig.name); /* a test of k->trace without a profiler */
  void *stream = cj_stream_queue(config->stream);
  if (cooperative)
    st = dev->ops->launch_cooperative(dev, on->fn, grid, block, config->shared_bytes, stream,
                                      pointers);
  else if (attributed)
    st = dev->ops->launch_ex(dev, on->fn, grid, block, config->shared_bytes, stream, pointers,
                             &attrs);
  else
    st = dev->ops->launch(dev, on->fn, grid, block, config->shared_bytes, stream, pointers);
  cj_stream_queued(config->stream);
  cj_trace_pop_kernel(k->trace);
  if (st == CUJIT_OK && !cooperative && config->stream && config->stream->capture)
    return note_captured(k, dev, config->stream, grid, block, config->shared_bytes);
  return st;
}

/* cujit_launch, or (cooperative) cujit_launch_cooperative. */
static cujit_status launch_checked(cujit_kernel *kernel, const cujit_launch_config *config,
                                   const cujit_arg *args, size_t nargs, int cooperative) {
  if (!kernel || !config || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s needs a kernel, a launch configuration and the arguments",
                   cooperative ? "cujit_launch_cooperative" : "cujit_launch");
  cujit_launch_config mine; /* a layout other than this library's made this one (cujit.h) */
  if (config->size != sizeof mine) {
    cujit_status bad =
        cj_struct_in(kernel->engine, cooperative ? "cujit_launch_cooperative" : "cujit_launch",
                     "cujit_launch_config", config, &mine, sizeof mine, CJ_LAUNCH_CONFIG_V1);
    if (bad != CUJIT_OK) return bad;
    config = &mine;
  }
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = cj_kernel_resolve(&kernel, args, nargs);
  if (st == CUJIT_OK) st = place(kernel, config->stream, args, nargs, &dev, &on);
  return st == CUJIT_OK ? launch_placed(kernel, dev, on, config, args, nargs, cooperative) : st;
}

cujit_status cujit_launch(cujit_kernel *kernel, const cujit_launch_config *config,
                          const cujit_arg *args, size_t nargs) {
  CJ_KEEP_CALLER_CONTEXT;
  return launch_checked(kernel, config, args, nargs, 0);
}

/* --- cooperative launches (issue 16) ---------------------------------------------------------- */

static cujit_status check_cooperative(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                      const cujit_launch_config *config, const unsigned grid[3],
                                      const unsigned block[3]) {
  if (config->stream && config->stream->capture)
    return cj_fail(k->engine, CUJIT_ERROR_UNSUPPORTED,
                   "kernel '%s': a cooperative launch cannot be captured into a graph by cujit; "
                   "launch it outside the capture",
                   k->sig.name);
  unsigned long long fit = 0;
  unsigned threads = block[0] * block[1] * block[2];
  unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  cujit_status st = dev->ops->coresident_blocks(dev, on->fn, threads, config->shared_bytes, &fit);
  if (st != CUJIT_OK || blocks <= fit) return st;
  char name[32], why[96];
  if (dev->ordinal == CUJIT_DEVICE_CPU) /* a block holds its worker to its end */
    snprintf(why, sizeof why, "one block per worker x %d workers (CUJIT_CPU_THREADS)",
             dev->info.multiprocessors);
  else
    snprintf(why, sizeof why, "blocks per SM x %d SMs", dev->info.multiprocessors);
  return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                 "kernel '%s': a cooperative launch of %llu blocks of %u threads does not fit on "
                 "%s at once: at most %llu such blocks are co-resident (%s); launch at most %llu "
                 "blocks and loop over the data in the kernel",
                 k->sig.name, blocks, threads, cj_device_name(dev, name, sizeof name), fit, why,
                 fit);
}

cujit_status cujit_launch_cooperative(cujit_kernel *kernel, const cujit_launch_config *config,
                                      const cujit_arg *args, size_t nargs) {
  CJ_KEEP_CALLER_CONTEXT;
  return launch_checked(kernel, config, args, nargs, 1);
}

/* The backend's block size for the kernel on `dev`, asked once; the block size is published
** after the grid, so a reader that sees it sees both. */
static cujit_status suggest(cujit_device *dev, cj_kernel_on_device *on, int *block_size,
                            int *min_grid) {
  *block_size = __atomic_load_n(&on->block_size, __ATOMIC_ACQUIRE);
  if (*block_size) {
    *min_grid = __atomic_load_n(&on->min_grid, __ATOMIC_RELAXED);
    return CUJIT_OK;
  }
  int grid = 0, block = 0;
  cujit_status st = dev->ops->suggest_block(dev, on->fn, &block, &grid);
  if (st != CUJIT_OK) return st;
  *block_size = block > 0 ? block : 256, *min_grid = grid;
  __atomic_store_n(&on->min_grid, grid, __ATOMIC_RELAXED);
  __atomic_store_n(&on->block_size, *block_size, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

cujit_status cujit_launch_n(cujit_kernel *kernel, size_t n, cujit_stream *stream,
                            const cujit_arg *args, size_t nargs) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_launch_n needs a kernel and the arguments");
  cujit_status st = cj_kernel_resolve(&kernel, args, nargs);
  if (st != CUJIT_OK || n == 0) return st; /* nothing to cover is no error, as an empty loop */
  cujit_device *dev;
  cj_kernel_on_device *on;
  char name[32];
  int block_size, min_grid;
  if ((st = place(kernel, stream, args, nargs, &dev, &on)) != CUJIT_OK) return st;
  if ((st = suggest(dev, on, &block_size, &min_grid)) != CUJIT_OK) return st;
  size_t blocks = (n + (size_t)block_size - 1) / (size_t)block_size;
  if (blocks > (size_t)dev->info.max_grid_dim[0])
    return cj_fail(kernel->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': %zu elements need %zu blocks of %d, over %s's grid limit "
                   "of %d; use a grid-stride loop and an explicit grid",
                   kernel->sig.name, n, blocks, block_size, cj_device_name(dev, name, sizeof name),
                   dev->info.max_grid_dim[0]);
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {(unsigned)blocks, 1, 1},
                           .block = {(unsigned)block_size, 1, 1},
                           .shared_bytes = 0,
                           .stream = stream};
  return launch_placed(kernel, dev, on, &c, args, nargs, 0);
}

/* A concrete kernel loaded on the current device, for the queries that need one there. */
static cujit_status loaded_on_current(cujit_kernel *k, cujit_device **dev,
                                      cj_kernel_on_device **on) {
  if (!k->program)
    return cj_fail(k->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' is generic: specialise it first (cujit_kernel_specialize)",
                   k->sig.name);
  cujit_status st = cj_stream_device(k->engine, NULL, dev);
  return st == CUJIT_OK ? cj_kernel_on(k, *dev, on) : st;
}

/* --- native handles (issue 24) ------------------------------------------------------------------
 */

cujit_status cujit_kernel_function(cujit_kernel *kernel, void **native) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_kernel_function";
  if (!kernel || !native)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: %s is NULL",
                   fn, kernel ? "native" : "kernel");
  *native = NULL;
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = cj_current_device(kernel->engine, &dev); /* refused before any load */
  if (st == CUJIT_OK) st = cj_native_check(dev, fn, "functions");
  if (st == CUJIT_OK) st = loaded_on_current(kernel, &dev, &on); /* enters it, once */
  if (st == CUJIT_OK) *native = on->fn;
  return st;
}

cujit_status cujit_kernel_suggest_block(cujit_kernel *kernel, int *block_size, int *min_grid) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || !block_size)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_suggest_block needs a kernel and an output pointer");
  cujit_device *dev;
  cj_kernel_on_device *on;
  int grid = 0;
  cujit_status st = loaded_on_current(kernel, &dev, &on);
  if (st == CUJIT_OK) st = suggest(dev, on, block_size, &grid);
  if (st == CUJIT_OK && min_grid) *min_grid = grid;
  return st;
}

cujit_status cujit_kernel_max_cooperative_blocks(cujit_kernel *kernel, unsigned block_threads,
                                                 unsigned shared_bytes,
                                                 unsigned long long *blocks) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || !blocks || block_threads == 0)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_max_cooperative_blocks needs a kernel, a block of at least one "
                   "thread and an output pointer");
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = loaded_on_current(kernel, &dev, &on);
  return st == CUJIT_OK
             ? dev->ops->coresident_blocks(dev, on->fn, block_threads, shared_bytes, blocks)
             : st;
}

cujit_status cujit_kernel_attributes_get(cujit_kernel *kernel, cujit_kernel_attributes *attrs) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || !attrs)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_attributes_get needs a kernel and an output pointer");
  size_t room;
  cujit_status st =
      cj_struct_room(kernel->engine, "cujit_kernel_attributes_get", "cujit_kernel_attributes",
                     attrs, sizeof *attrs, CJ_KERNEL_ATTRIBUTES_V1, &room);
  cujit_device *dev;
  cj_kernel_on_device *on;
  if (st == CUJIT_OK) st = loaded_on_current(kernel, &dev, &on);
  if (st != CUJIT_OK) return st;
  cujit_kernel_attributes all; /* this layout, then the caller's part of it */
  memset(&all, 0, sizeof all); /* padding too: no stack bytes reach the caller */
  st = dev->ops->attributes(dev, on->fn, &all);
  cujit_kernel_attributes reported; /* the spills: the device does not know them, ptxas did */
  cj_resources_read(kernel->program, cj_signature_symbol(&kernel->sig), &reported);
  all.spill_store_bytes = reported.spill_store_bytes,
  all.spill_load_bytes = reported.spill_load_bytes;
  if (st == CUJIT_OK) cj_struct_out(attrs, room, &all);
  return st;
}
