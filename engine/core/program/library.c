/*
** library.c -- the host side of cujit's device library: random fills, reductions and dot products,
** running the kernels of kernels_src/cujit/library_kernels.h.
**
** Library kernels are compiled once per engine and element type and kept in a small per-engine
** record, the engine's slot for this file (cj_slot_get). Defining them again on every call would
** find their programs loaded already (program.c keeps a map of them), but would still make kernel
** objects and find their functions each time. cujit_close frees the record; the
** kernels and buffers it points to are live objects of their own and are freed by cujit_close
** before it.
*/
#include "launch.h"
#include "library.h"
#include "base/structs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the per-engine record ----------------------------------------------------------------------
 */

/* The extern "C" kernels of the library programs: they wrap the bodies of library_kernels.h and
** are written into the translation unit, where cujit reads kernel signatures. */
typedef struct lib_kernel_text {
  const char *name, *params, *args;
} lib_kernel_text;

#define RED_PARAMS "const void *x, unsigned long long n, void *partials", "x, n, partials"
#define FINAL_PARAMS                                                                               \
  "const void *partials, unsigned long long count, void *out", "partials, count, out"
#define FILL_PARAMS                                                                                \
  "void *out, unsigned long long n, unsigned long long seed, unsigned long long offset, "          \
  "int normal, double mean, double std",                                                           \
      "out, n, seed, offset, normal, mean, std"

enum { RED_SUM, RED_MIN, RED_MAX, RED_DOT, RED_SUM_FINAL, RED_MIN_FINAL, RED_MAX_FINAL, RED_COUNT };
static const lib_kernel_text reduce_texts[RED_COUNT] = {
    {"cj_sum", RED_PARAMS},
    {"cj_min", RED_PARAMS},
    {"cj_max", RED_PARAMS},
    {"cj_dot", "const void *x, const void *y, unsigned long long n, void *partials",
     "x, y, n, partials"},
    {"cj_sum_final", FINAL_PARAMS},
    {"cj_min_final", FINAL_PARAMS},
    {"cj_max_final", FINAL_PARAMS},
};
static const lib_kernel_text fill_texts[2] = {{"cj_fill_f32", FILL_PARAMS},
                                              {"cj_fill_f64", FILL_PARAMS}};

#define LIB_BLOCKS_PER_SM 8   /* 2048 threads: a full SM on sm_80 and later */
#define LIB_MAX_PARTIALS 4096 /* stage-1 blocks of a reduction, at most */
#define LIB_SCRATCH_BYTES ((LIB_MAX_PARTIALS + 1) * 8) /* the partials, then the result */

typedef struct lib_state {
  cujit_engine *engine;
  pthread_mutex_t lock; /* guards what follows, and is held through a whole reduction */
  /* Per kind of device: [0] GPUs (PTX loads on any of them), [1] the CPU device (a shared object):
  ** an engine may switch between the two, and a program runs only on the kind it was built for. */
  cujit_kernel *reduce[2][CUJIT_DTYPE_COUNT_][RED_COUNT];
  cujit_kernel *fill[2][2];    /* [kind][f32, f64] */
  cujit_buffer **scratch;      /* per device ordinal */
  cujit_host_buffer **results; /* per device ordinal: 8 pinned bytes the result is read into */
  int nscratch;
} lib_state;

static void state_init(void *state, cujit_engine *e) {
  lib_state *s = state;
  s->engine = e;
  pthread_mutex_init(&s->lock, NULL);
}

static void state_destroy(void *state) {
  lib_state *s = state;
  pthread_mutex_destroy(&s->lock);
  free(s->scratch);
  free(s->results);
}

static const char state_tag = 'L'; /* its address names this file's slot of an engine */

static cujit_status state_get(cujit_engine *e, lib_state **out) {
  *out = cj_slot_get(e, &state_tag, sizeof **out, state_init, state_destroy);
  return *out ? CUJIT_OK : CUJIT_ERROR_OUT_OF_HOST_MEMORY;
}

/* Compiles a library program and takes the named kernels from it; all or none. */
static cujit_status build_kernels(cujit_engine *e, const cujit_device *dev, const char *source,
                                  const char *what, const lib_kernel_text *texts, size_t count,
                                  cujit_kernel **out) {
  cujit_program *prog;
  cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
  options.arch = dev->arch; /* the device the work runs on, whichever is current */
  cujit_status st = cujit_program_compile(e, source, what, &options, &prog);
  if (st != CUJIT_OK) return st;
  size_t got = 0;
  while (got < count && (st = cujit_program_kernel(prog, texts[got].name, &out[got])) == CUJIT_OK)
    got++;
  if (st != CUJIT_OK)
    while (got > 0) cujit_kernel_free(out[--got]), out[got] = NULL;
  cujit_program_free(prog);
  return st;
}

/* --- devices and buffers ------------------------------------------------------------------------
 */

cujit_status cj_library_work_device(cujit_engine *e, const char *fn, cujit_stream *stream,
                                    cujit_buffer *const *bufs, size_t nbufs, cujit_device **out) {
  cujit_device *dev = stream ? stream->device : NULL;
  cujit_status st;
  if (!dev && (st = cujit_current_device(e, &dev)) != CUJIT_OK) return st;
  char have[64], want[64];
  for (size_t i = 0; i < nbufs; i++)
    if (bufs[i]->device != dev)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the buffer lives on %s but the work would run on %s; pass a stream of "
                     "the buffer's device or make it current (cujit_set_device)",
                     fn, cj_device_name_in(bufs[i]->device, e, have, sizeof have),
                     cj_device_name_in(dev, e, want, sizeof want));
  *out = dev;
  return CUJIT_OK;
}

static size_t buffer_elements(const cujit_buffer *b) {
  size_t size = cujit_dtype_size(b->dtype);
  return size ? b->size / size : 0;
}

/* A grid that covers `units` threads' worth of work, at most LIB_BLOCKS_PER_SM per SM and `cap`:
** grid-stride loops do the rest. */
static unsigned grid_for(uint64_t units, const cujit_device *dev, unsigned cap) {
  uint64_t blocks = (units + CJ_LIBRARY_BLOCK - 1) / CJ_LIBRARY_BLOCK;
  uint64_t most =
      (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * LIB_BLOCKS_PER_SM;
  if (blocks > most) blocks = most;
  if (blocks > cap) blocks = cap;
  return blocks ? (unsigned)blocks : 1u;
}

cujit_status cj_library_launch_1d(cujit_kernel *k, unsigned grid, cujit_stream *stream,
                                  const cujit_arg *args, size_t nargs) {
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {grid, 1, 1},
                           .block = {CJ_LIBRARY_BLOCK, 1, 1},
                           .shared_bytes = 0,
                           .stream = stream};
  return cujit_launch(k, &c, args, nargs);
}

/* --- random fills -------------------------------------------------------------------------------
 */

static int device_kind(const cujit_device *dev) {
  return dev->ordinal == CUJIT_DEVICE_CPU;
}

static cujit_status fill_kernel(lib_state *s, const cujit_device *dev, cujit_dtype dtype,
                                cujit_kernel **out) {
  cujit_status st = CUJIT_OK;
  cujit_kernel **fill = s->fill[device_kind(dev)];
  pthread_mutex_lock(&s->lock);
  if (!fill[0]) {
    char *src = cj_library_source(1, CUJIT_F32);
    st = src ? build_kernels(s->engine, dev, src, "cujit random", fill_texts, 2, fill)
             : cj_fail(s->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(src);
  }
  *out = fill[dtype == CUJIT_F64];
  pthread_mutex_unlock(&s->lock);
  return st;
}

static cujit_status random_fill(const char *fn, cujit_buffer *buf, uint64_t seed, uint64_t offset,
                                int normal, double mean, double std, cujit_stream *stream) {
  if (!buf) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the buffer is NULL", fn);
  cujit_engine *e = buf->device->engine;
  if (buf->dtype != CUJIT_F32 && buf->dtype != CUJIT_F64)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the buffer holds %s; random fills need an f32 or f64 buffer", fn,
                   cujit_dtype_name(buf->dtype));
  if (normal && (!isfinite(mean) || !isfinite(std) || std < 0))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: mean %g and std %g: both must be finite and std must be >= 0", fn, mean,
                   std);
  uint64_t n = buffer_elements(buf);
  if (n == 0) return CUJIT_OK;
  if (offset > UINT64_MAX - (n - 1))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: offset %llu + %llu elements runs past the generator's 2^64 counters", fn,
                   (unsigned long long)offset, (unsigned long long)n);
  cujit_device *dev = NULL;
  lib_state *s = NULL;
  cujit_kernel *k = NULL;
  cujit_status st;
  if ((st = cj_library_work_device(e, fn, stream, &buf, 1, &dev)) != CUJIT_OK) return st;
  if ((st = state_get(e, &s)) != CUJIT_OK) return st;
  if ((st = fill_kernel(s, dev, buf->dtype, &k)) != CUJIT_OK) return st;
  unsigned per_block = buf->dtype == CUJIT_F32 ? 4 : 2; /* elements per Philox block */
  uint64_t blocks = (offset + n - 1) / per_block - offset / per_block + 1;
  cujit_arg args[] = {CUJIT_ARG_BUF(buf),  CUJIT_ARG_U(n),      CUJIT_ARG_U(seed),
                      CUJIT_ARG_U(offset), CUJIT_ARG_I(normal), CUJIT_ARG_F(mean),
                      CUJIT_ARG_F(std)};
  return cj_library_launch_1d(k, grid_for(blocks, dev, UINT32_MAX / 2), stream, args, 7);
}

cujit_status cujit_random_uniform(cujit_buffer *buffer, uint64_t seed, uint64_t offset,
                                  cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  return random_fill("cujit_random_uniform", buffer, seed, offset, 0, 0.0, 1.0, stream);
}

cujit_status cujit_random_normal(cujit_buffer *buffer, uint64_t seed, uint64_t offset, double mean,
                                 double std, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  return random_fill("cujit_random_normal", buffer, seed, offset, 1, mean, std, stream);
}

/* --- reductions ---------------------------------------------------------------------------------
 */

static int is_float(cujit_dtype d) {
  return d == CUJIT_F16 || d == CUJIT_BF16 || d == CUJIT_F32 || d == CUJIT_F64;
}
static int is_signed(cujit_dtype d) {
  return d == CUJIT_I8 || d == CUJIT_I16 || d == CUJIT_I32 || d == CUJIT_I64;
}

/* The type min and max work in: shuffles have no 8- or 16-bit forms, and half and bfloat16 go
** through float. */
static const char *minmax_type(cujit_dtype d) {
  switch (d) {
  case CUJIT_F16:
  case CUJIT_BF16:
  case CUJIT_F32:
    return "float";
  case CUJIT_F64:
    return "double";
  case CUJIT_I64:
    return "long long";
  case CUJIT_U64:
    return "unsigned long long";
  default:
    return is_signed(d) ? "int" : "unsigned int";
  }
}

static void minmax_identities(cujit_dtype d, const char **max, const char **lowest) {
  static const char finf[] = "__int_as_float(0x7f800000)",
                    fninf[] = "(-__int_as_float(0x7f800000))";
  static const char dinf[] = "__longlong_as_double(0x7ff0000000000000LL)",
                    dninf[] = "(-__longlong_as_double(0x7ff0000000000000LL))";
  switch (d) {
  case CUJIT_F16:
  case CUJIT_BF16:
  case CUJIT_F32:
    *max = finf, *lowest = fninf;
    break;
  case CUJIT_F64:
    *max = dinf, *lowest = dninf;
    break;
  case CUJIT_I64:
    *max = "9223372036854775807LL", *lowest = "(-9223372036854775807LL - 1)";
    break;
  case CUJIT_U64:
    *max = "18446744073709551615ULL", *lowest = "0ULL";
    break;
  default:
    if (is_signed(d))
      *max = "2147483647", *lowest = "(-2147483647 - 1)";
    else
      *max = "4294967295U", *lowest = "0U";
  }
}

static cujit_dtype result_dtype(cujit_dtype d) {
  return is_float(d) ? CUJIT_F64 : is_signed(d) ? CUJIT_I64 : CUJIT_U64;
}

char *cj_library_source(int program, cujit_dtype d) {
  cj_buf src = {0};
  const lib_kernel_text *texts = program ? fill_texts : reduce_texts;
  size_t count = program ? 2 : RED_COUNT;
  if (program) {
    cj_buf_puts(&src, "#define CJ_RANDOM 1\n");
  } else {
    const char *max, *lowest;
    minmax_identities(d, &max, &lowest);
    cj_buf_printf(&src,
                  "#define CJ_REDUCE 1\n#define CJ_T %s\n#define CJ_SUM %s\n#define CJ_MM %s\n"
                  "#define CJ_MM_MAX %s\n#define CJ_MM_LOWEST %s\n",
                  cujit_dtype_ctype(d),
                  is_float(d)    ? "double"
                  : is_signed(d) ? "long long"
                                 : "unsigned long long",
                  minmax_type(d), max, lowest);
  }
  if (!program && d == CUJIT_BF16) cj_buf_puts(&src, "#include <cujit/bf16.h>\n");
  cj_buf_puts(&src, "#include <cujit/library_kernels.h>\n");
  for (size_t i = 0; i < count; i++)
    cj_buf_printf(&src, "extern \"C\" __global__ void %s(%s) { %s_body(%s); }\n", texts[i].name,
                  texts[i].params, texts[i].name, texts[i].args);
  if (src.failed) cj_buf_free(&src);
  return src.data;
}

static cujit_status reduce_kernels(lib_state *s, const cujit_device *dev, cujit_dtype d,
                                   cujit_kernel ***out) {
  cujit_status st = CUJIT_OK;
  cujit_kernel **reduce = s->reduce[device_kind(dev)][d];
  if (!reduce[0]) {
    char *src = cj_library_source(0, d), what[64];
    snprintf(what, sizeof what, "cujit reduce %s", cujit_dtype_name(d));
    st = src ? build_kernels(s->engine, dev, src, what, reduce_texts, RED_COUNT, reduce)
             : cj_fail(s->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(src);
  }
  *out = reduce;
  return st;
}

/* The device's scratch buffer and pinned result, made on first use (and again after a reset). */
static cujit_status scratch_buffer(lib_state *s, cujit_device *dev, cujit_buffer **out,
                                   cujit_host_buffer **result) {
  cujit_engine *e = s->engine;
  int at = cj_device_slot(dev);
  if (at >= s->nscratch) {
    size_t n = (size_t)(at + 1);
    cujit_buffer **grown = realloc(s->scratch, n * sizeof *grown);
    if (grown) s->scratch = grown;
    cujit_host_buffer **results = grown ? realloc(s->results, n * sizeof *results) : NULL;
    if (!results) return cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    s->results = results;
    for (int i = s->nscratch; i <= at; i++) grown[i] = NULL, results[i] = NULL;
    s->nscratch = at + 1;
  }
  cujit_buffer **slot = &s->scratch[at];
  cujit_host_buffer **pinned = &s->results[at];
  if (*slot && (*slot)->generation != dev->generation) { /* lost in a reset */
    cujit_buffer_free(*slot);
    cujit_host_free(*pinned);
    *slot = NULL, *pinned = NULL;
  }
  if (!*slot) {
    cujit_device *current;
    cujit_status st = cujit_current_device(e, &current);
    if (st != CUJIT_OK) return st;
    char name[64];
    if (current != dev)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "reductions on %s need it to be the current device the first time "
                     "(cujit_set_device)",
                     cj_device_name_in(dev, e, name, sizeof name));
    if (!*pinned && (st = cujit_host_alloc(e, 8, pinned)) != CUJIT_OK) return st;
    if ((st = cujit_buffer_alloc(e, LIB_SCRATCH_BYTES, CUJIT_DTYPE_NONE, slot)) != CUJIT_OK)
      return st;
  }
  *out = *slot;
  *result = *pinned;
  return CUJIT_OK;
}

/* Stage 1 over the input(s), stage 2 over the partials (not when stage 1 ran as one block: it
** wrote the result), then the 8-byte result to the host through pinned memory. */
static cujit_status run_reduction(lib_state *s, cujit_device *dev, cujit_kernel **ks, int op,
                                  cujit_buffer *a, cujit_buffer *b, uint64_t count,
                                  cujit_stream *stream, void *result8) {
  cujit_buffer *scratch = NULL;
  cujit_host_buffer *pinned = NULL;
  cujit_status st = scratch_buffer(s, dev, &scratch, &pinned);
  if (st != CUJIT_OK) return st;
  uint64_t partials = cujit_buffer_devptr(scratch), outp = partials + 8 * LIB_MAX_PARTIALS;
  uint64_t vectors =
      (count + 16 / cujit_dtype_size(a->dtype) - 1) / (16 / cujit_dtype_size(a->dtype));
  unsigned grid = grid_for(vectors, dev, LIB_MAX_PARTIALS);
  cujit_arg dev_partials = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = partials};
  cujit_arg dev_out = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = outp};
  if (op == RED_DOT) {
    cujit_arg args[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(b), CUJIT_ARG_U(count), dev_partials};
    st = cj_library_launch_1d(ks[RED_DOT], grid, stream, args, 4);
  } else {
    cujit_arg args[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_U(count), dev_partials};
    st = cj_library_launch_1d(ks[op], grid, stream, args, 3);
  }
  if (st != CUJIT_OK) return st;
  size_t at = 0; /* where the result is: the first partial after one block */
  if (grid > 1) {
    int final = op == RED_MIN ? RED_MIN_FINAL : op == RED_MAX ? RED_MAX_FINAL : RED_SUM_FINAL;
    cujit_arg fargs[] = {dev_partials, CUJIT_ARG_U(grid), dev_out};
    if ((st = cj_library_launch_1d(ks[final], 1, stream, fargs, 3)) != CUJIT_OK) return st;
    at = 8 * LIB_MAX_PARTIALS;
  }
  void *host = cujit_host_ptr(pinned);
  if ((st = cujit_memcpy_dtoh(host, scratch, at, 8, stream)) != CUJIT_OK) return st;
  if (stream && (st = cujit_stream_synchronize(stream)) != CUJIT_OK) return st;
  memcpy(result8, host, 8);
  return CUJIT_OK;
}

static cujit_status check_count(cujit_engine *e, const char *fn, const cujit_buffer *b,
                                size_t count) {
  if (b->dtype == CUJIT_DTYPE_NONE)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the buffer holds untyped bytes; allocate it with an element type", fn);
  if (count > buffer_elements(b))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: count %zu is more than the %zu %s elements the buffer holds", fn, count,
                   buffer_elements(b), cujit_dtype_name(b->dtype));
  return CUJIT_OK;
}

/* Fills the caller's result, `room` bytes of it (cj_struct_room). */
static void store_result(cujit_dtype d, const unsigned char *raw, cujit_scalar *result,
                         size_t room) {
  cujit_scalar all;
  memset(&all, 0, sizeof all); /* padding too: no stack bytes reach the caller */
  all.dtype = result_dtype(d);
  if (all.dtype == CUJIT_F64)
    memcpy(&all.v.f, raw, 8);
  else if (all.dtype == CUJIT_I64)
    memcpy(&all.v.i, raw, 8);
  else
    memcpy(&all.v.u, raw, 8);
  cj_struct_out(result, room, &all);
}

static cujit_status reduce_common(const char *fn, int op, cujit_buffer *a, cujit_buffer *b,
                                  size_t count, cujit_scalar *result, cujit_stream *stream) {
  cujit_engine *e = a->device->engine;
  size_t room;
  cujit_status st =
      cj_struct_room(e, fn, "cujit_scalar", result, sizeof *result, CJ_SCALAR_V1, &room);
  if (st != CUJIT_OK) return st;
  if (cujit_stream_capturing(stream)) /* its copy to the host would be recorded, not done */
    return cj_fail(e, CUJIT_ERROR_UNSUPPORTED,
                   "%s cannot be captured into a graph: it returns its value to the host, which "
                   "a replay cannot do; reduce before cujit_capture_begin or after "
                   "cujit_capture_end, or on another stream",
                   fn);
  if ((st = check_count(e, fn, a, count)) != CUJIT_OK) return st;
  if (b && (st = check_count(e, fn, b, count)) != CUJIT_OK) return st;
  if (b && b->dtype != a->dtype)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the buffers hold %s and %s; they must match", fn,
                   cujit_dtype_name(a->dtype), cujit_dtype_name(b->dtype));
  unsigned char raw[8] = {0};
  if (count == 0) {
    if (op == RED_MIN || op == RED_MAX)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the %s of no elements is undefined; check the length first", fn,
                     op == RED_MIN ? "minimum" : "maximum");
    store_result(a->dtype, raw, result, room); /* all-zero bytes are 0 in every result type */
    return CUJIT_OK;
  }
  cujit_buffer *bufs[2] = {a, b};
  cujit_device *dev = NULL;
  lib_state *s = NULL;
  cujit_kernel **ks = NULL;
  if ((st = cj_library_work_device(e, fn, stream, bufs, b ? 2 : 1, &dev)) != CUJIT_OK) return st;
  if ((st = state_get(e, &s)) != CUJIT_OK) return st;
  pthread_mutex_lock(&s->lock);
  st = reduce_kernels(s, dev, a->dtype, &ks);
  if (st == CUJIT_OK) st = run_reduction(s, dev, ks, op, a, b, count, stream, raw);
  pthread_mutex_unlock(&s->lock);
  if (st == CUJIT_OK) store_result(a->dtype, raw, result, room);
  return st;
}

cujit_status cujit_reduce(cujit_buffer *buffer, cujit_reduce_op op, size_t count,
                          cujit_scalar *result, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!buffer || !result)
    return cj_fail(buffer ? buffer->device->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_reduce needs a buffer and a result pointer");
  int red = op == CUJIT_REDUCE_SUM   ? RED_SUM
            : op == CUJIT_REDUCE_MIN ? RED_MIN
            : op == CUJIT_REDUCE_MAX ? RED_MAX
                                     : -1;
  if (red < 0)
    return cj_fail(buffer->device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_reduce: unknown operation %d; use CUJIT_REDUCE_SUM, _MIN or _MAX",
                   (int)op);
  return reduce_common("cujit_reduce", red, buffer, NULL, count, result, stream);
}

cujit_status cujit_dot(cujit_buffer *a, cujit_buffer *b, size_t count, cujit_scalar *result,
                       cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!a || !b || !result)
    return cj_fail(a   ? a->device->engine
                   : b ? b->device->engine
                       : NULL,
                   CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_dot needs two buffers and a result pointer");
  return reduce_common("cujit_dot", RED_DOT, a, b, count, result, stream);
}

double cujit_scalar_to_double(const cujit_scalar *scalar) {
  if (!scalar) return 0.0;
  switch (scalar->dtype) {
  case CUJIT_I64:
    return (double)scalar->v.i;
  case CUJIT_U64:
    return (double)scalar->v.u;
  default:
    return scalar->v.f;
  }
}
