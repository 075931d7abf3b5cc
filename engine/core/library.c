/*
** library.c -- the host side of cujit's device library: random fills, reductions and dot products
** (running the kernels of kernels_src/cujit/library_kernels.h), and the elementwise kernel
** builder (generating a signature + body kernel for cujit_kernel_define).
**
** Library kernels are compiled once per engine and element type and kept in a small per-engine
** record, the engine's slot for this file (cj_slot_get). Defining them again on every call would
** find their programs loaded already (program.c keeps a map of them), but would still make kernel
** objects and find their functions each time. cujit_close frees the record; the
** kernels and buffers it points to are live objects of their own and are freed by cujit_close
** before it.
*/
#include "launch.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The translation unit of a library program (defined below). */
char *cj_library_source(int program, cujit_dtype d);

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

#define LIB_BLOCK 256         /* threads per block of every library kernel */
#define LIB_BLOCKS_PER_SM 8   /* 2048 threads: a full SM on sm_80 and later */
#define LIB_MAX_PARTIALS 4096 /* stage-1 blocks of a reduction, at most */
#define LIB_SCRATCH_BYTES ((LIB_MAX_PARTIALS + 1) * 8) /* the partials, then the result */

typedef struct lib_state {
  cujit_engine *engine;
  pthread_mutex_t lock; /* guards what follows, and is held through a whole reduction */
  cujit_kernel *reduce[CUJIT_DTYPE_COUNT_][RED_COUNT];
  cujit_kernel *fill[2];  /* f32, f64 */
  cujit_buffer **scratch; /* per device ordinal */
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
}

static const char state_tag = 'L'; /* its address names this file's slot of an engine */

static cujit_status state_get(cujit_engine *e, lib_state **out) {
  *out = cj_slot_get(e, &state_tag, sizeof **out, state_init, state_destroy);
  return *out ? CUJIT_OK : CUJIT_ERROR_OUT_OF_HOST_MEMORY;
}

/* Compiles a library program and takes the named kernels from it; all or none. */
static cujit_status build_kernels(cujit_engine *e, const char *source, const char *what,
                                  const lib_kernel_text *texts, size_t count, cujit_kernel **out) {
  cujit_program *prog;
  cujit_status st = cujit_program_compile(e, source, what, NULL, &prog);
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

/* The device the work goes to, and a check that every buffer lives there. */
static cujit_status work_device(cujit_engine *e, const char *fn, cujit_stream *stream,
                                cujit_buffer *const *bufs, size_t nbufs, cujit_device **out) {
  cujit_device *dev = stream ? stream->device : NULL;
  cujit_status st;
  if (!dev && (st = cujit_current_device(e, &dev)) != CUJIT_OK) return st;
  for (size_t i = 0; i < nbufs; i++)
    if (bufs[i]->device != dev)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "%s: the buffer lives on device %d but the work would run on device %d; "
                     "pass a stream of device %d or make it current (cujit_set_device)",
                     fn, bufs[i]->device->ordinal, dev->ordinal, bufs[i]->device->ordinal);
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
  uint64_t blocks = (units + LIB_BLOCK - 1) / LIB_BLOCK;
  uint64_t most =
      (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * LIB_BLOCKS_PER_SM;
  if (blocks > most) blocks = most;
  if (blocks > cap) blocks = cap;
  return blocks ? (unsigned)blocks : 1u;
}

static cujit_status launch_1d(cujit_kernel *k, unsigned grid, cujit_stream *stream,
                              const cujit_arg *args, size_t nargs) {
  cujit_launch_config c = {sizeof(cujit_launch_config), {grid, 1, 1}, {LIB_BLOCK, 1, 1}, 0, stream};
  return cujit_launch(k, &c, args, nargs);
}

/* --- random fills -------------------------------------------------------------------------------
 */

static cujit_status fill_kernel(lib_state *s, cujit_dtype dtype, cujit_kernel **out) {
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&s->lock);
  if (!s->fill[0]) {
    char *src = cj_library_source(1, CUJIT_F32);
    st = src ? build_kernels(s->engine, src, "cujit random", fill_texts, 2, s->fill)
             : cj_fail(s->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(src);
  }
  *out = s->fill[dtype == CUJIT_F64];
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
  if ((st = work_device(e, fn, stream, &buf, 1, &dev)) != CUJIT_OK) return st;
  if ((st = state_get(e, &s)) != CUJIT_OK) return st;
  if ((st = fill_kernel(s, buf->dtype, &k)) != CUJIT_OK) return st;
  unsigned per_block = buf->dtype == CUJIT_F32 ? 4 : 2; /* elements per Philox block */
  uint64_t blocks = (offset + n - 1) / per_block - offset / per_block + 1;
  cujit_arg args[] = {CUJIT_ARG_BUF(buf),  CUJIT_ARG_U(n),      CUJIT_ARG_U(seed),
                      CUJIT_ARG_U(offset), CUJIT_ARG_I(normal), CUJIT_ARG_F(mean),
                      CUJIT_ARG_F(std)};
  return launch_1d(k, grid_for(blocks, dev, UINT32_MAX / 2), stream, args, 7);
}

cujit_status cujit_random_uniform(cujit_buffer *buffer, uint64_t seed, uint64_t offset,
                                  cujit_stream *stream) {
  return random_fill("cujit_random_uniform", buffer, seed, offset, 0, 0.0, 1.0, stream);
}

cujit_status cujit_random_normal(cujit_buffer *buffer, uint64_t seed, uint64_t offset, double mean,
                                 double std, cujit_stream *stream) {
  return random_fill("cujit_random_normal", buffer, seed, offset, 1, mean, std, stream);
}

/* --- reductions ---------------------------------------------------------------------------------
 */

static int is_float(cujit_dtype d) {
  return d == CUJIT_F16 || d == CUJIT_F32 || d == CUJIT_F64;
}
static int is_signed(cujit_dtype d) {
  return d == CUJIT_I8 || d == CUJIT_I16 || d == CUJIT_I32 || d == CUJIT_I64;
}

/* The type min and max work in: shuffles have no 8- or 16-bit forms, and half goes through
** float. */
static const char *minmax_type(cujit_dtype d) {
  switch (d) {
  case CUJIT_F16:
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

/* The translation unit of a library program: 0, the reductions over element type d; 1, the
** random fills. Malloc'd; NULL when out of memory. Not static so that the tests can compile
** exactly what the library compiles, on a machine with no GPU. */
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
  cj_buf_puts(&src, "#include <cujit/library_kernels.h>\n");
  for (size_t i = 0; i < count; i++)
    cj_buf_printf(&src, "extern \"C\" __global__ void %s(%s) { %s_body(%s); }\n", texts[i].name,
                  texts[i].params, texts[i].name, texts[i].args);
  if (src.failed) cj_buf_free(&src);
  return src.data;
}

static cujit_status reduce_kernels(lib_state *s, cujit_dtype d, cujit_kernel ***out) {
  cujit_status st = CUJIT_OK;
  if (!s->reduce[d][0]) {
    char *src = cj_library_source(0, d), what[64];
    snprintf(what, sizeof what, "cujit reduce %s", cujit_dtype_name(d));
    st = src ? build_kernels(s->engine, src, what, reduce_texts, RED_COUNT, s->reduce[d])
             : cj_fail(s->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(src);
  }
  *out = s->reduce[d];
  return st;
}

static cujit_status scratch_buffer(lib_state *s, cujit_device *dev, cujit_buffer **out) {
  cujit_engine *e = s->engine;
  int at = cj_device_slot(dev);
  if (at >= s->nscratch) {
    cujit_buffer **grown = realloc(s->scratch, (size_t)(at + 1) * sizeof *grown);
    if (!grown) return cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    for (int i = s->nscratch; i <= at; i++) grown[i] = NULL;
    s->scratch = grown, s->nscratch = at + 1;
  }
  cujit_buffer **slot = &s->scratch[at];
  if (*slot && (*slot)->generation != dev->generation) { /* lost in a reset */
    cujit_buffer_free(*slot);
    *slot = NULL;
  }
  if (!*slot) {
    cujit_device *current;
    cujit_status st = cujit_current_device(e, &current);
    if (st != CUJIT_OK) return st;
    if (current != dev)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "reductions on device %d need it to be the current device the first time "
                     "(cujit_set_device)",
                     dev->ordinal);
    if ((st = cujit_buffer_alloc(e, LIB_SCRATCH_BYTES, CUJIT_DTYPE_NONE, slot)) != CUJIT_OK)
      return st;
  }
  *out = *slot;
  return CUJIT_OK;
}

/* Stage 1 over the input(s), stage 2 over the partials, then the 8-byte result to the host. */
static cujit_status run_reduction(lib_state *s, cujit_device *dev, cujit_kernel **ks, int op,
                                  cujit_buffer *a, cujit_buffer *b, uint64_t count,
                                  cujit_stream *stream, void *result8) {
  cujit_buffer *scratch = NULL;
  cujit_status st = scratch_buffer(s, dev, &scratch);
  if (st != CUJIT_OK) return st;
  uint64_t partials = cujit_buffer_devptr(scratch), outp = partials + 8 * LIB_MAX_PARTIALS;
  uint64_t vectors =
      (count + 16 / cujit_dtype_size(a->dtype) - 1) / (16 / cujit_dtype_size(a->dtype));
  unsigned grid = grid_for(vectors, dev, LIB_MAX_PARTIALS);
  cujit_arg dev_partials = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = partials};
  cujit_arg dev_out = {.kind = CUJIT_ARG_DEVPTR, .v.devptr = outp};
  if (op == RED_DOT) {
    cujit_arg args[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_BUF(b), CUJIT_ARG_U(count), dev_partials};
    st = launch_1d(ks[RED_DOT], grid, stream, args, 4);
  } else {
    cujit_arg args[] = {CUJIT_ARG_BUF(a), CUJIT_ARG_U(count), dev_partials};
    st = launch_1d(ks[op], grid, stream, args, 3);
  }
  if (st != CUJIT_OK) return st;
  int final = op == RED_MIN ? RED_MIN_FINAL : op == RED_MAX ? RED_MAX_FINAL : RED_SUM_FINAL;
  cujit_arg fargs[] = {dev_partials, CUJIT_ARG_U(grid), dev_out};
  if ((st = launch_1d(ks[final], 1, stream, fargs, 3)) != CUJIT_OK) return st;
  if ((st = cujit_memcpy_dtoh(result8, scratch, 8 * LIB_MAX_PARTIALS, 8, stream)) != CUJIT_OK)
    return st;
  return stream ? cujit_stream_synchronize(stream) : CUJIT_OK;
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

static void store_result(cujit_dtype d, const unsigned char *raw, cujit_scalar *result) {
  result->dtype = result_dtype(d);
  if (result->dtype == CUJIT_F64)
    memcpy(&result->v.f, raw, 8);
  else if (result->dtype == CUJIT_I64)
    memcpy(&result->v.i, raw, 8);
  else
    memcpy(&result->v.u, raw, 8);
}

static cujit_status reduce_common(const char *fn, int op, cujit_buffer *a, cujit_buffer *b,
                                  size_t count, cujit_scalar *result, cujit_stream *stream) {
  cujit_engine *e = a->device->engine;
  cujit_status st;
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
    store_result(a->dtype, raw, result); /* all-zero bytes are 0 in every result type */
    return CUJIT_OK;
  }
  cujit_buffer *bufs[2] = {a, b};
  cujit_device *dev = NULL;
  lib_state *s = NULL;
  cujit_kernel **ks = NULL;
  if ((st = work_device(e, fn, stream, bufs, b ? 2 : 1, &dev)) != CUJIT_OK) return st;
  if ((st = state_get(e, &s)) != CUJIT_OK) return st;
  pthread_mutex_lock(&s->lock);
  st = reduce_kernels(s, a->dtype, &ks);
  if (st == CUJIT_OK) st = run_reduction(s, dev, ks, op, a, b, count, stream, raw);
  pthread_mutex_unlock(&s->lock);
  if (st == CUJIT_OK) store_result(a->dtype, raw, result);
  return st;
}

cujit_status cujit_reduce(cujit_buffer *buffer, cujit_reduce_op op, size_t count,
                          cujit_scalar *result, cujit_stream *stream) {
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

/* --- the elementwise builder --------------------------------------------------------------------
 */

#define EW_MAX_PARAMS 64
#define EW_NAME_MAX 64
#define EW_TYPE_MAX 48
#define EW_BLOCKS_PER_SM 32 /* a grid-stride cap far above residency: waves stay small */

typedef struct ew_param {
  char name[EW_NAME_MAX];
  char type[EW_TYPE_MAX]; /* the C type, or the type variable */
  int scalar, output;
} ew_param;

typedef struct ew_spec {
  ew_param params[EW_MAX_PARAMS];
  int count;
  int uses_half; /* __half or a type variable appears: the kernel includes <cujit/half.h> */
} ew_spec;

static int is_ident(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
  return 1;
}

static int is_type_var(const char *s) {
  if (!isupper((unsigned char)s[0])) return 0;
  for (s++; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

/* The C type of a spelling: C types and dtype names as cujit_dtype_from_name knows them, plus the
** everyday short forms. */
static const char *element_ctype(const char *t) {
  static const char *const alias[][2] = {{"unsigned", "unsigned int"},
                                         {"half", "__half"},
                                         {"char", "signed char"},
                                         {"signed", "int"},
                                         {"unsigned long long int", "unsigned long long"},
                                         {"long long int", "long long"},
                                         {"short int", "short"}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcmp(t, alias[i][0]) == 0) t = alias[i][1];
  cujit_dtype d = cujit_dtype_from_name(t);
  return d == CUJIT_DTYPE_NONE ? NULL : cujit_dtype_ctype(d);
}

static cujit_status ew_error(cujit_engine *e, const char *params, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cujit_status ew_error(cujit_engine *e, const char *params, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return cj_fail(e, CUJIT_ERROR_SIGNATURE,
                 "elementwise parameters \"%s\": %s. Write inputs -> outputs, each as \"type "
                 "name\", e.g. \"scalar float a, float x, float y -> float z\"",
                 params, what);
}

/* Splits one "[scalar] type words name" item (already trimmed, NUL-terminated) into p. */
static cujit_status parse_item(cujit_engine *e, const char *params, char *item, int output,
                               ew_param *p) {
  char *words[16];
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(item, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
    if (n == 16) return ew_error(e, params, "'%s...' has too many words", words[0]);
    words[n++] = t;
  }
  int first = 0;
  if (n > 0 && strcmp(words[0], "scalar") == 0) p->scalar = 1, first = 1;
  if (n == 0) return ew_error(e, params, "a parameter is empty");
  for (int i = 0; i < n; i++)
    if (!is_ident(words[i]))
      return ew_error(e, params,
                      "'%s' is not a type or a name (arrays are implied: write no '*' or "
                      "'[]'; mark by-value parameters `scalar`)",
                      words[i]);
  if (n - first < 2) return ew_error(e, params, "'%s' needs a type and a name", words[n - 1]);
  p->output = output;
  if (output && p->scalar)
    return ew_error(e, params, "output '%s' is marked scalar; outputs are arrays", words[n - 1]);
  const char *name = words[n - 1];
  if (strlen(name) >= EW_NAME_MAX) return ew_error(e, params, "the name '%s' is too long", name);
  if (strcmp(name, "i") == 0 || strcmp(name, "n") == 0 || strncmp(name, "cj_", 3) == 0)
    return ew_error(e, params,
                    "'%s' is reserved (i is the element index, n the count, cj_ names are "
                    "cujit's)",
                    name);
  strcpy(p->name, name);
  char type[EW_TYPE_MAX * 2] = "";
  for (int i = first; i < n - 1; i++) {
    if (strlen(type) + strlen(words[i]) + 2 > EW_TYPE_MAX)
      return ew_error(e, params, "the type of '%s' is too long", name);
    if (i > first) strcat(type, " ");
    strcat(type, words[i]);
  }
  const char *ctype = n - first == 2 && is_type_var(type) ? type : element_ctype(type);
  if (!ctype)
    return ew_error(e, params,
                    "'%s' is not an element type cujit knows (use float, double, __half, int, "
                    "unsigned int, long long, ..., a dtype name such as f32, or a type variable "
                    "such as T)",
                    type);
  snprintf(p->type, sizeof p->type, "%s", ctype);
  return CUJIT_OK;
}

/* Parses "inputs -> outputs" into spec. */
static cujit_status ew_parse(cujit_engine *e, const char *params, ew_spec *spec) {
  const char *arrow = strstr(params, "->");
  if (!arrow) return ew_error(e, params, "there is no '->' between the inputs and the outputs");
  if (strstr(arrow + 2, "->")) return ew_error(e, params, "there is more than one '->'");
  memset(spec, 0, sizeof *spec);
  for (int side = 0; side < 2; side++) {
    const char *from = side ? arrow + 2 : params, *to = side ? params + strlen(params) : arrow;
    const char *p = from;
    while (p < to && isspace((unsigned char)*p)) p++;
    if (p == to) {
      if (side) return ew_error(e, params, "there are no outputs");
      continue; /* no inputs: fine, as in "-> float z" with "z = i" */
    }
    while (from <= to) {
      const char *comma = memchr(from, ',', (size_t)(to - from));
      const char *end = comma ? comma : to;
      char item[256];
      if ((size_t)(end - from) >= sizeof item)
        return ew_error(e, params, "a parameter is too long");
      memcpy(item, from, (size_t)(end - from));
      item[end - from] = '\0';
      if (spec->count == EW_MAX_PARAMS)
        return ew_error(e, params, "there are more than %d parameters", EW_MAX_PARAMS);
      cujit_status st = parse_item(e, params, item, side, &spec->params[spec->count]);
      if (st != CUJIT_OK) return st;
      spec->count++;
      from = end + 1;
    }
  }
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    for (int j = 0; j < i; j++)
      if (strcmp(spec->params[j].name, p->name) == 0)
        return ew_error(e, params, "the name '%s' is used twice", p->name);
    if (strcmp(p->type, "__half") == 0 || is_type_var(p->type)) spec->uses_half = 1;
  }
  return CUJIT_OK;
}

static void ew_signature(cj_buf *b, const ew_spec *spec, const char *name) {
  cj_buf_printf(b, "%s(", name);
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar)
      cj_buf_printf(b, "%s %s, ", p->type, p->name);
    else
      cj_buf_printf(b, "%s%s *__restrict__ %s, ", p->output ? "" : "const ", p->type, p->name);
  }
  cj_buf_puts(b, "long long n)");
}

/* Appends ", <prefix><i><suffix>" for every array parameter i, in order: the arguments of cj_op. */
static void ew_array_args(cj_buf *b, const ew_spec *spec, const char *prefix, const char *suffix) {
  for (int i = 0; i < spec->count; i++)
    if (!spec->params[i].scalar) cj_buf_printf(b, ", %s%d%s", prefix, i, suffix);
}

/* The step over whole packs: each array as cj_w elements in one vector access, the inputs loaded
** before any element is computed, the outputs stored after. */
static void ew_vector_loop(cj_buf *b, const ew_spec *spec) {
  cj_buf_puts(b, "if (cj_aligned) {\n"
                 "  const long long cj_packs = n / cj_w;\n"
                 "#pragma unroll 1\n"
                 "  for (long long cj_p = cj_first; cj_p < cj_packs; cj_p += cj_stride) {\n");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar) continue;
    if (p->output)
      cj_buf_printf(b, "    cj_ew_pack<%s, cj_w> cj_v%d = {};\n", p->type, i);
    else
      cj_buf_printf(b,
                    "    const cj_ew_pack<%s, cj_w> cj_v%d = "
                    "((const cj_ew_pack<%s, cj_w> *)%s)[cj_p];\n",
                    p->type, i, p->type, p->name);
  }
  cj_buf_puts(b, "#pragma unroll\n"
                 "    for (int cj_k = 0; cj_k < cj_w; cj_k++)\n"
                 "      cj_op(cj_p * cj_w + cj_k");
  ew_array_args(b, spec, "cj_v", ".v[cj_k]");
  cj_buf_puts(b, ");\n");
  for (int i = 0; i < spec->count; i++)
    if (spec->params[i].output)
      cj_buf_printf(b, "    ((cj_ew_pack<%s, cj_w> *)%s)[cj_p] = cj_v%d;\n", spec->params[i].type,
                    spec->params[i].name, i);
  cj_buf_puts(b, "  }\n  cj_done = cj_packs * cj_w;\n}\n");
}

/* One element at a time: the last n % cj_w elements, or all of them when an array is not aligned
** for packs. */
static void ew_scalar_loop(cj_buf *b, const ew_spec *spec) {
  cj_buf_puts(b, "for (long long cj_i = cj_done + cj_first; cj_i < n; cj_i += cj_stride) {\n");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar) continue;
    if (p->output)
      cj_buf_printf(b, "  %s cj_s%d{};\n", p->type, i);
    else
      cj_buf_printf(b, "  const %s cj_s%d = %s[cj_i];\n", p->type, i, p->name);
  }
  cj_buf_puts(b, "  cj_op(cj_i");
  ew_array_args(b, spec, "cj_s", "");
  cj_buf_puts(b, ");\n");
  for (int i = 0; i < spec->count; i++)
    if (spec->params[i].output) cj_buf_printf(b, "  %s[cj_i] = cj_s%d;\n", spec->params[i].name, i);
  cj_buf_puts(b, "}\n");
}

/* The body: the user's expression first, so its lines are the body's lines 1.. in messages; then
** a grid-stride loop over packs of cj_w consecutive elements (16 bytes of the widest type: the
** vector loads and stores that reach the copy bandwidth) when every array is aligned for them,
** and a grid-stride loop over the elements left, one at a time. Scalars are captured by cj_op.
** Each element is read before it is written, by the same thread, so an output may alias an input
** (in place), __restrict__ notwithstanding: no other access touches that element. */
static void ew_body(cj_buf *b, const ew_spec *spec, const char *expr) {
  cj_buf_puts(b, "auto cj_op = [&](long long i");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (!p->scalar) cj_buf_printf(b, ", %s%s &%s", p->output ? "" : "const ", p->type, p->name);
  }
  cj_buf_printf(b, ") { %s\n; };\n", expr);
  cj_buf_puts(b, "constexpr int cj_w = cj_ew_width<");
  for (int i = 0, first = 1; i < spec->count; i++)
    if (!spec->params[i].scalar)
      cj_buf_printf(b, "%s%s", first ? "" : ", ", spec->params[i].type), first = 0;
  cj_buf_puts(b, ">();\nconst bool cj_aligned = ");
  for (int i = 0, first = 1; i < spec->count; i++)
    if (!spec->params[i].scalar)
      cj_buf_printf(b, "%scj_ew_aligned<cj_w>(%s)", first ? "" : " && ", spec->params[i].name),
          first = 0;
  cj_buf_puts(b, ";\n"
                 "const long long cj_stride = (long long)gridDim.x * blockDim.x;\n"
                 "const long long cj_first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "long long cj_done = 0;\n");
  ew_vector_loop(b, spec);
  ew_scalar_loop(b, spec);
}

/* What the generated kernel includes: its helpers, and half.h when __half may appear. */
static const char *ew_preamble(const ew_spec *spec) {
  return spec->uses_half ? "#define CJ_ELEMENTWISE 1\n#include <cujit/library_kernels.h>\n"
                           "#include <cujit/half.h>\n"
                         : "#define CJ_ELEMENTWISE 1\n#include <cujit/library_kernels.h>\n";
}

cujit_status cujit_elementwise_define(cujit_engine *engine, const char *params, const char *expr,
                                      const char *name, const cujit_compile_options *options,
                                      cujit_kernel **out) {
  if (out) *out = NULL;
  if (!engine || !params || !expr || !out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_elementwise_define needs an engine, the parameters, the expression and "
                   "an output pointer");
  if (!name) name = "elementwise";
  if (!is_ident(name) || strncmp(name, "cj_", 3) == 0)
    return cj_fail(engine, CUJIT_ERROR_SIGNATURE,
                   "elementwise kernel name \"%s\": use a C identifier not starting with cj_",
                   name);
  const char *e = expr;
  while (isspace((unsigned char)*e)) e++;
  if (!*e)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "elementwise kernel '%s': the expression is empty; write what each element "
                   "computes, e.g. \"z = a * x + y\"",
                   name);
  ew_spec *spec = malloc(sizeof *spec);
  if (!spec) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  cujit_status st = ew_parse(engine, params, spec);
  if (st == CUJIT_OK) {
    cj_buf sig = {0}, body = {0};
    ew_signature(&sig, spec, name);
    ew_body(&body, spec, expr);
    if (sig.failed || body.failed)
      st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    else
      st = cujit_kernel_define(engine, sig.data, body.data, ew_preamble(spec), options, out);
    cj_buf_free(&sig);
    cj_buf_free(&body);
  }
  free(spec);
  return st;
}

/* Every array argument must hold n elements: the kernel trusts n. Also finds the widest element
** of the arrays, which sets how many elements a thread takes per step (0 when none is known). */
static cujit_status ew_check_sizes(cujit_kernel *k, size_t n, const cujit_arg *args, size_t nargs,
                                   size_t *widest) {
  *widest = 0;
  for (size_t i = 0; i < nargs; i++) {
    cujit_param_info info;
    if (cujit_kernel_param(k, i, &info) != CUJIT_OK || info.kind != CUJIT_PARAM_POINTER) continue;
    const cujit_buffer *b = args[i].kind == CUJIT_ARG_BUFFER ? args[i].v.buffer : NULL;
    cujit_dtype d = info.dtype != CUJIT_DTYPE_NONE ? info.dtype : b ? b->dtype : CUJIT_DTYPE_NONE;
    size_t elem = cujit_dtype_size(d);
    if (elem > *widest) *widest = elem;
    if (b && elem && b->size / elem < n)
      return cj_fail(k->engine, CUJIT_ERROR_ARGUMENT,
                     "elementwise kernel '%s', argument %zu '%s': the buffer holds %zu elements "
                     "of %zu bytes, fewer than the %zu the launch covers",
                     cujit_kernel_name(k), i + 1, info.name, b->size / elem, elem, n);
  }
  return CUJIT_OK;
}

/* One thread per pack of 16 bytes of the widest element (as the kernel's cj_w), up to
** EW_BLOCKS_PER_SM blocks per SM: far more than fit at once, so that blocks finishing unevenly
** leave little idle at the end, while the grid-stride loop keeps the launch small for any n. */
static unsigned ew_grid(size_t n, size_t widest, const cujit_device *dev) {
  size_t per_thread = widest && widest < 16 ? 16 / widest : 4;
  uint64_t threads = (n + per_thread - 1) / per_thread;
  uint64_t blocks = (threads + LIB_BLOCK - 1) / LIB_BLOCK;
  uint64_t most =
      (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * EW_BLOCKS_PER_SM;
  if (blocks > most) blocks = most;
  return blocks ? (unsigned)blocks : 1u;
}

cujit_status cujit_elementwise_launch(cujit_kernel *kernel, size_t n, cujit_stream *stream,
                                      const cujit_arg *args, size_t nargs) {
  if (!kernel || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_elementwise_launch needs a kernel and the arguments");
  size_t np = cujit_kernel_param_count(kernel);
  cujit_param_info last;
  if (np == 0 || cujit_kernel_param(kernel, np - 1, &last) != CUJIT_OK ||
      strcmp(last.name, "n") != 0 || last.dtype != CUJIT_I64 || last.kind != CUJIT_PARAM_SCALAR)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' is not an elementwise kernel (its last parameter is not "
                   "`long long n`); make it with cujit_elementwise_define",
                   cujit_kernel_name(kernel));
  if (nargs != np - 1)
    return cj_fail(kernel->engine, CUJIT_ERROR_ARGUMENT,
                   "elementwise kernel '%s' takes %zu argument(s) besides n, got %zu: %s",
                   cujit_kernel_name(kernel), np - 1, nargs, cujit_kernel_signature(kernel));
  if (n > (size_t)INT64_MAX)
    return cj_fail(kernel->engine, CUJIT_ERROR_ARGUMENT,
                   "elementwise kernel '%s': n = %zu is too large", cujit_kernel_name(kernel), n);
  size_t widest;
  cujit_status st = ew_check_sizes(kernel, n, args, nargs, &widest);
  if (st != CUJIT_OK || n == 0) return st;
  cujit_arg all[CJ_MAX_PARAMS];
  memcpy(all, args, nargs * sizeof *args);
  all[nargs] = CUJIT_ARG_I((int64_t)n);
  cujit_device *dev = stream ? stream->device : NULL;
  if (!dev && (st = cujit_current_device(kernel->engine, &dev)) != CUJIT_OK) return st;
  return launch_1d(kernel, ew_grid(n, widest, dev), stream, all, nargs + 1);
}
