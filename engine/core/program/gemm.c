/*
** gemm.c -- cujit_gemm: checks a matrix product's operands, picks the kernel that runs it and
** launches it. The kernels are cujit::gemm_simt of kernels_src/cujit/gemm.h.
**
** Two paths: cujit::gemm_simt (kernels_src/cujit/gemm.h) on every device, and on an sm_90 GPU
** cujit::gemm_tc (gemm_tc.h: wgmma fed by TMA, for f16 inputs) when the shapes and alignment let
** TMA read the operands (gemm_path says which; CUJIT_GEMM=simt or tensor forces one). A program
** holds the kernels of one (path, input dtype, output dtype): SIMT's one per epilogue and tile, the
** tensor path's one per pair of operand layouts, so the first call for a pair compiles once (then
** the cache has it) and every later call only launches. The programs' kernels are kept per engine
** in this file's slot (cj_slot_get), per kind of device and per path, as library.c keeps its own.
*/
#include "launch.h"
#include "library.h"
#include "base/env.h"
#include "base/structs.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_TILE 64           /* cujit::gemm_tile_m and _n: the default C tile of one block */
#define GEMM_TILE_WIDE 128     /* cujit::gemm_tile_wide: 4 times the work per block */
#define GEMM_THREADS 256       /* cujit::gemm_threads */
#define GEMM_GRID_Y_MAX 65535u /* more row tiles are looped over by the blocks (gemm.h) */
#define GEMM_EPILOGUES 8       /* every subset of cujit::gemm_bias, gemm_relu, gemm_relu_mask */
#define GEMM_SIMT_KERNELS (2 * GEMM_EPILOGUES) /* each epilogue with tiles 64 and 128 */

#define GEMM_TC_TILE_M 128 /* cujit::gemm_tc_tile_m, _k and _threads */
#define GEMM_TC_TILE_K 64
#define GEMM_TC_THREADS 384
#define GEMM_TC_LAYOUTS 4 /* A plain or transposed, times B */
#define GEMM_TC_CLUSTER 1 /* blocks per cluster, sharing B's boxes (gemm_tc.h) */

/* SIMT, and the tensor kernels with tiles 256 and 128 columns wide (BN): a program each. */
enum gemm_path { GEMM_SIMT, GEMM_TC, GEMM_TC128, GEMM_PATHS };
static const int path_kernels[GEMM_PATHS] = {GEMM_SIMT_KERNELS, GEMM_TC_LAYOUTS, GEMM_TC_LAYOUTS};
static const int tc_width[GEMM_PATHS] = {0, 256, 128};
/* What the capture's refusal calls each path's kernel: a call outside the capture loads one path's
** kernels only, and a product of another size may run on another path. */
static const char *const path_title[GEMM_PATHS] = {"SIMT", "tensor-core (tiles 256 wide)",
                                                   "tensor-core (tiles 128 wide)"};
/* cujit::gemm_tc_shape<BN>::smem_bytes: 4 stages of 48 KiB (BN 256), 6 of 32 KiB (BN 128) */
static const unsigned tc_smem[GEMM_PATHS] = {0, 4 * (16384 + 32768) + 4 * 16 + 1024,
                                             6 * (16384 + 16384) + 6 * 16 + 1024};

/* The dtype pairs: the element type of A and B, and of C (f32, or the inputs'). */
enum { PAIR_F32_F32, PAIR_F16_F16, PAIR_F16_F32, PAIR_BF16_BF16, PAIR_BF16_F32, PAIR_COUNT };
static const cujit_dtype pair_in[PAIR_COUNT] = {CUJIT_F32, CUJIT_F16, CUJIT_F16, CUJIT_BF16,
                                                CUJIT_BF16};
static const cujit_dtype pair_out[PAIR_COUNT] = {CUJIT_F32, CUJIT_F16, CUJIT_F32, CUJIT_BF16,
                                                 CUJIT_F32};

#define GEMM_PARAMS                                                                                \
  "const void *a, const void *b, void *c, const void *bias, const void *mask, int m, int n, "      \
  "int k, int trans_a, int trans_b, float alpha, float beta"

typedef struct gemm_state {
  cujit_engine *engine;
  pthread_mutex_t lock; /* guards the table while a program is compiled into it */
  /* [0] GPUs (PTX loads on any of them), [1] the CPU device (a shared object), as in library.c */
  cujit_kernel *kernels[2][GEMM_PATHS][PAIR_COUNT][GEMM_SIMT_KERNELS]; /* path_kernels[path] used */
} gemm_state;

static void state_init(void *state, cujit_engine *e) {
  gemm_state *s = state;
  s->engine = e;
  pthread_mutex_init(&s->lock, NULL);
}

static void state_destroy(void *state) {
  gemm_state *s = state;
  pthread_mutex_destroy(&s->lock);
}

static const char state_tag = 'G'; /* its address names this file's slot of an engine */

/* The name of kernel i of a path's program, as the source defines it and the lookup asks for it:
** cj_gemm_e<epilogue> (SIMT, tiles of 64), cj_gemm_w<epilogue> (SIMT, tiles of 128),
** cj_gemm_tc<layout> (tensor cores). */
static void kernel_name(int tc, int i, char *buf, size_t size) {
  if (tc)
    snprintf(buf, size, "cj_gemm_tc%d", i);
  else
    snprintf(buf, size, "cj_gemm_%c%d", i < GEMM_EPILOGUES ? 'e' : 'w', i % GEMM_EPILOGUES);
}

char *cj_gemm_source(cujit_dtype in, cujit_dtype out) {
  cj_buf src = {0};
  cj_buf_printf(&src, "#include <cujit/gemm.h>\ntypedef %s cj_gemm_in;\ntypedef %s cj_gemm_out;\n",
                cujit_dtype_ctype(in), cujit_dtype_ctype(out));
  /* cj_gemm_e<epilogue> on tiles of 64, cj_gemm_w<epilogue> on tiles of 128; the wide ones are
  ** held to 128 registers so that two blocks share a multiprocessor (one block's barrier then
  ** leaves the other's FMAs running), the narrow ones (run where blocks are few, so each should
  ** start at once) to 85 for three: unbounded they take about 120, room for two (sm_90) */
  for (int i = 0; i < GEMM_SIMT_KERNELS; i++) {
    const int wide = i >= GEMM_EPILOGUES, epi = i % GEMM_EPILOGUES;
    char name[32];
    kernel_name(0, i, name, sizeof name);
    cj_buf_printf(&src,
                  "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(" GEMM_PARAMS ") {\n"
                  "  cujit::gemm_simt<cj_gemm_in, cj_gemm_out, %d, %d>((const cj_gemm_in *)a, "
                  "(const cj_gemm_in *)b, (cj_gemm_out *)c, (const cj_gemm_out *)bias, "
                  "(const cj_gemm_out *)mask, m, n, k, trans_a, trans_b, alpha, beta);\n}\n",
                  GEMM_THREADS, wide ? 2 : 3, name, epi, wide ? GEMM_TILE_WIDE : GEMM_TILE);
  }
  if (src.failed) cj_buf_free(&src);
  return src.data;
}

char *cj_gemm_tc_source(cujit_dtype in, cujit_dtype out, int width) {
  cj_buf src = {0};
  cj_buf_printf(&src,
                "#include <cujit/gemm_tc.h>\ntypedef %s cj_gemm_in;\ntypedef %s cj_gemm_out;\n",
                cujit_dtype_ctype(in), cujit_dtype_ctype(out));
  for (int layout = 0; layout < GEMM_TC_LAYOUTS; layout++) {
    char name[32];
    kernel_name(1, layout, name, sizeof name);
    cj_buf_printf(
        &src,
        "extern \"C\" __global__ void __launch_bounds__(%d, 1) %s("
        "const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap "
        "map_b, void *c, const void *bias, const void *mask, int m, int n, int k, "
        "int epilogue, float alpha, float beta) {\n"
        "  cujit::gemm_tc<cj_gemm_in, cj_gemm_out, %d, %d, %d, %d>(&map_a, &map_b, "
        "(cj_gemm_out *)c, (const cj_gemm_out *)bias, (const cj_gemm_out *)mask, m, n, k, "
        "epilogue, alpha, beta);\n}\n",
        GEMM_TC_THREADS, name, layout >> 1, layout & 1, GEMM_TC_CLUSTER, width);
  }
  if (src.failed) cj_buf_free(&src);
  return src.data;
}

/* The kernels of one pair on one kind of device, compiled on first use: all or none. */
static cujit_status gemm_kernels(gemm_state *s, const cujit_device *dev, int path, int pair,
                                 cujit_kernel ***out) {
  cujit_engine *e = s->engine;
  cujit_kernel **ks = s->kernels[dev->ordinal == CUJIT_DEVICE_CPU][path][pair];
  cujit_status st = CUJIT_OK;
  pthread_mutex_lock(&s->lock);
  if (!ks[0]) {
    const int tc = tc_width[path] != 0;
    char *src = tc ? cj_gemm_tc_source(pair_in[pair], pair_out[pair], tc_width[path])
                   : cj_gemm_source(pair_in[pair], pair_out[pair]);
    char what[64], arch[sizeof dev->arch + 1];
    cujit_program *prog = NULL;
    cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
    /* the device the work runs on, whichever is current; wgmma needs its arch-specific target */
    snprintf(arch, sizeof arch, "%s%s", dev->arch, tc ? "a" : "");
    options.arch = arch;
    snprintf(what, sizeof what, "cujit gemm %s%.0d %s->%s", tc ? "tensor" : "simt", tc_width[path],
             cujit_dtype_name(pair_in[pair]), cujit_dtype_name(pair_out[pair]));
    st = src ? cujit_program_compile(e, src, what, &options, &prog)
             : cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    free(src);
    int got = 0;
    while (st == CUJIT_OK && got < path_kernels[path]) {
      char name[32];
      kernel_name(tc, got, name, sizeof name);
      if ((st = cujit_program_kernel(prog, name, &ks[got])) == CUJIT_OK) got++;
    }
    if (st != CUJIT_OK)
      while (got > 0) cujit_kernel_free(ks[--got]), ks[got] = NULL;
    if (prog) cujit_program_free(prog);
  }
  pthread_mutex_unlock(&s->lock);
  *out = ks;
  return st;
}

/* --- checks -------------------------------------------------------------------------------------
 */

typedef struct operand {
  const char *name; /* as the messages and the options call it */
  cujit_buffer *buf;
  uint64_t elements; /* what its shape needs */
  const char *shape; /* that shape, for the message */
} operand;

static cujit_status check_size(cujit_engine *e, const char *what, int64_t v) {
  if (v < 1 || v > INT_MAX)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm: %s is %lld; it must be between 1 and %d", what, (long long)v,
                   INT_MAX);
  return CUJIT_OK;
}

static cujit_status check_shape(cujit_engine *e, const cujit_gemm_options *o) {
  cujit_status st;
  if ((st = check_size(e, "m (the rows of op(A) and C)", o->m)) != CUJIT_OK ||
      (st = check_size(e, "n (the columns of op(B) and C)", o->n)) != CUJIT_OK ||
      (st = check_size(e, "k (the columns of op(A), the rows of op(B))", o->k)) != CUJIT_OK)
    return st;
  if (!isfinite(o->alpha) || !isfinite(o->beta))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm: alpha %g and beta %g must both be finite", o->alpha, o->beta);
  return CUJIT_OK;
}

/* A and B of one float dtype, C (and the bias and mask) of f32 or that dtype. */
static cujit_status check_dtypes(cujit_engine *e, const operand *ops, size_t nops, int *pair) {
  cujit_dtype in = ops[0].buf->dtype, out = ops[2].buf->dtype;
  if (in != CUJIT_F32 && in != CUJIT_F16 && in != CUJIT_BF16)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm: a holds %s; gemm takes f32, f16 or bf16 inputs",
                   cujit_dtype_name(in));
  if (ops[1].buf->dtype != in)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm: a holds %s but b holds %s; they must match", cujit_dtype_name(in),
                   cujit_dtype_name(ops[1].buf->dtype));
  if (out != CUJIT_F32 && out != in)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm: c holds %s; with %s inputs it must hold %s%s",
                   cujit_dtype_name(out), cujit_dtype_name(in), in == CUJIT_F32 ? "" : "f32 or ",
                   cujit_dtype_name(in));
  for (size_t i = 3; i < nops; i++)
    if (ops[i].buf->dtype != out)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "cujit_gemm: %s holds %s; it must hold c's dtype, %s", ops[i].name,
                     cujit_dtype_name(ops[i].buf->dtype), cujit_dtype_name(out));
  *pair = in == CUJIT_F32   ? PAIR_F32_F32
          : in == CUJIT_F16 ? (out == CUJIT_F16 ? PAIR_F16_F16 : PAIR_F16_F32)
                            : (out == CUJIT_BF16 ? PAIR_BF16_BF16 : PAIR_BF16_F32);
  return CUJIT_OK;
}

static cujit_status check_lengths(cujit_engine *e, const cujit_gemm_options *o, const operand *ops,
                                  size_t nops) {
  for (size_t i = 0; i < nops; i++) {
    uint64_t have = ops[i].buf->size / cujit_dtype_size(ops[i].buf->dtype);
    if (have < ops[i].elements)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "cujit_gemm: %s holds %llu elements but needs %llu (%s with m %lld, n %lld, "
                     "k %lld)",
                     ops[i].name, (unsigned long long)have, (unsigned long long)ops[i].elements,
                     ops[i].shape, (long long)o->m, (long long)o->n, (long long)o->k);
  }
  return CUJIT_OK;
}

/* C is written while the others are read, by other blocks: no byte may be shared. */
static cujit_status check_overlap(cujit_engine *e, const operand *ops, size_t nops) {
  uint64_t c0 = cujit_buffer_devptr(ops[2].buf), c1 = c0 + ops[2].buf->size;
  for (size_t i = 0; i < nops; i++) {
    uint64_t p0 = cujit_buffer_devptr(ops[i].buf), p1 = p0 + ops[i].buf->size;
    if (i != 2 && p0 < c1 && c0 < p1)
      return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                     "cujit_gemm: c shares memory with %s, which the kernel reads while it "
                     "writes c; give c a buffer of its own",
                     ops[i].name);
  }
  return CUJIT_OK;
}

/* Every buffer on the work's device, naming the operand that is not. */
static cujit_status check_devices(cujit_engine *e, cujit_stream *stream, const operand *ops,
                                  size_t nops, cujit_device **dev) {
  for (size_t i = 0; i < nops; i++) {
    char fn[40];
    snprintf(fn, sizeof fn, "cujit_gemm (%s)", ops[i].name);
    cujit_status st = cj_library_work_device(e, fn, stream, &ops[i].buf, 1, dev);
    if (st != CUJIT_OK) return st;
  }
  return CUJIT_OK;
}

/* --- the call -----------------------------------------------------------------------------------
 */

/* Every epilogue's kernel of the pair made ready on the device (one module: the first load is the
** cost, the rest find their functions), so that a later capture may record any of them. */
static cujit_status load_all(cujit_kernel **ks, int path, cujit_device *dev) {
  for (int i = 0; i < path_kernels[path]; i++) {
    cj_kernel_on_device *on;
    cujit_status st;
    if (!cj_kernel_ready(ks[i], dev) && (st = cj_kernel_find_on(ks[i], dev, &on)) != CUJIT_OK)
      return st;
  }
  return CUJIT_OK;
}

/* Compiling or loading cannot be recorded into a graph (launch.c refuses a kernel not loaded yet,
** naming it): a capture takes the kernels an earlier call on the device made ready, and is told
** so in cujit_gemm's terms when there are none, without compiling. */
static cujit_status check_capturable(gemm_state *s, cujit_device *dev, int path, int pair,
                                     int which) {
  cujit_kernel **ks = s->kernels[dev->ordinal == CUJIT_DEVICE_CPU][path][pair];
  pthread_mutex_lock(&s->lock);
  int ready = ks[which] && cj_kernel_ready(ks[which], dev);
  pthread_mutex_unlock(&s->lock);
  char name[64];
  if (!ready)
    return cj_fail(s->engine, CUJIT_ERROR_UNSUPPORTED,
                   "cujit_gemm: its %s kernel for %s inputs into %s is not loaded on %s yet, and "
                   "compiling or loading cannot be captured into a graph; call cujit_gemm once "
                   "with these dtypes %son that device before cujit_capture_begin",
                   path_title[path], cujit_dtype_name(pair_in[pair]),
                   cujit_dtype_name(pair_out[pair]),
                   cj_device_name_in(dev, s->engine, name, sizeof name),
                   path == GEMM_SIMT ? "" : "and a product of this size ");
  return CUJIT_OK;
}

/* How many tiles of `high` rows by `wide` columns cover C (m x n): what each path's choice and grid
** count. */
static uint64_t tiles_of(const cujit_gemm_options *o, uint64_t high, uint64_t wide) {
  return (((uint64_t)o->m + high - 1) / high) * (((uint64_t)o->n + wide - 1) / wide);
}

/* Whether tiles of 128 suit this product: they still make a block for each multiprocessor (else
** tiles of 64, four times as many, keep more of them busy: 1024 x 128 x 784 makes 8 of 128). */
static int simt_wide(const cujit_device *dev, const cujit_gemm_options *o) {
  return tiles_of(o, GEMM_TILE_WIDE, GEMM_TILE_WIDE) >= (uint64_t)dev->info.multiprocessors;
}

static cujit_status launch_simt(cujit_kernel *k, int wide, const cujit_gemm_options *o,
                                const operand *ops, cujit_stream *stream) {
  const uint64_t tile = wide ? GEMM_TILE_WIDE : GEMM_TILE;
  uint64_t row_tiles = ((uint64_t)o->m + tile - 1) / tile;
  cujit_launch_config c = {
      .size = sizeof(cujit_launch_config),
      .grid = {(unsigned)(((uint64_t)o->n + tile - 1) / tile),
               (unsigned)(row_tiles < GEMM_GRID_Y_MAX ? row_tiles : GEMM_GRID_Y_MAX), 1},
      .block = {GEMM_THREADS, 1, 1},
      .stream = stream};
  cujit_arg args[] = {CUJIT_ARG_BUF(ops[0].buf),
                      CUJIT_ARG_BUF(ops[1].buf),
                      CUJIT_ARG_BUF(ops[2].buf),
                      CUJIT_ARG_BUF(o->bias),
                      CUJIT_ARG_BUF(o->relu_mask),
                      CUJIT_ARG_I(o->m),
                      CUJIT_ARG_I(o->n),
                      CUJIT_ARG_I(o->k),
                      CUJIT_ARG_I(o->trans_a != 0),
                      CUJIT_ARG_I(o->trans_b != 0),
                      CUJIT_ARG_F(o->alpha),
                      CUJIT_ARG_F(o->beta)};
  return cujit_launch(k, &c, args, sizeof args / sizeof *args);
}

/* --- the tensor-core path ----------------------------------------------------------------------
 */

/* Why the tensor path cannot run this product, or NULL when it can: an sm_90 GPU (wgmma is
** sm_90a's alone), f16 or bf16 inputs, operands TMA can read (16-byte aligned addresses, rows of
** whole 16 bytes: a multiple of 8 elements along the contiguous dimension), at least one box of
** each (m >= 128, n >= 128, k >= 64), and a grid of tiles that fits an int. */
static const char *tc_unfit(const cujit_device *dev, const cujit_gemm_options *o,
                            const operand *ops, int pair) {
  if (dev->ordinal == CUJIT_DEVICE_CPU || dev->info.cc_major != 9 || dev->info.cc_minor != 0)
    return "it runs on sm_90 GPUs only (wgmma)";
  if (pair_in[pair] == CUJIT_F32) return "it takes f16 or bf16 inputs only";
  if (o->m < GEMM_TC_TILE_M || o->n < 128 || o->k < GEMM_TC_TILE_K)
    return "it needs m >= 128, n >= 128 and k >= 64";
  int64_t a_row = o->trans_a ? o->m : o->k, b_row = o->trans_b ? o->k : o->n;
  if (a_row % 8 || b_row % 8)
    return "the contiguous dimension of a and of b (k, m when a is transposed, n when b is not) "
           "must be a multiple of 8";
  if (cujit_buffer_devptr(ops[0].buf) % 16 || cujit_buffer_devptr(ops[1].buf) % 16)
    return "a and b must start on 16-byte boundaries";
  if (tiles_of(o, GEMM_TC_TILE_M, 128) > INT_MAX) return "m and n make more than 2^31 - 1 tiles";
  return NULL;
}

/* Whether tiles 256 wide suit this product: n reaches 256 and they still make a tile for each
** multiprocessor (else tiles of 128 give more blocks work). */
static int tc_wide(const cujit_device *dev, const cujit_gemm_options *o) {
  return o->n >= 256 && tiles_of(o, GEMM_TC_TILE_M, 256) >= (uint64_t)dev->info.multiprocessors;
}

/* The path that runs this product: the tensor path where it fits, or as CUJIT_GEMM says (auto,
** simt, tensor; tensor refused with the reason where it does not fit). */
static cujit_status gemm_path(cujit_engine *e, const cujit_device *dev, const cujit_gemm_options *o,
                              const operand *ops, int pair, int *path) {
  static const char *const words[] = {"auto", "simt", "tensor", NULL};
  char why[256];
  int want = 0;
  if (cj_env_word("CUJIT_GEMM", words, &want, why, sizeof why) == CJ_ENV_BAD)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_gemm: %s", why);
  const char *unfit = want == 1 ? "" : tc_unfit(dev, o, ops, pair);
  if (want == 2 && unfit)
    return cj_fail(e, CUJIT_ERROR_UNSUPPORTED,
                   "cujit_gemm: CUJIT_GEMM=tensor, but the tensor-core path cannot run this "
                   "product: %s (unset CUJIT_GEMM to fall back to the SIMT path)",
                   unfit);
  *path = unfit ? GEMM_SIMT : tc_wide(dev, o) ? GEMM_TC : GEMM_TC128;
  return CUJIT_OK;
}

/* The tensor kernel of these layouts: a transposed A is M-major, a plain B N-major. */
static int tc_layout(const cujit_gemm_options *o) {
  return (o->trans_a ? 2 : 0) | (o->trans_b ? 0 : 1);
}

/* A's or B's tensor map as gemm_tc.h describes it: K-major, one box of the tile's rows (128 of A,
** 256 of B) by 64 along k, or MN-major, boxes of 64 by 64; 128-byte swizzle either way. */
static cujit_status tc_map(const operand *op, int mn_major, uint64_t outer, uint64_t k,
                           unsigned k_major_rows, cujit_tensor_map *map) {
  cujit_tensor_map_desc d = CUJIT_TENSOR_MAP_DESC_INIT;
  d.rank = 2, d.swizzle = CUJIT_SWIZZLE_128B;
  d.dims[0] = mn_major ? outer : k, d.dims[1] = mn_major ? k : outer;
  d.strides[1] = d.dims[0] * cujit_dtype_size(op->buf->dtype);
  d.box[0] = GEMM_TC_TILE_K, d.box[1] = mn_major ? 64 : k_major_rows;
  return cujit_tensor_map_encode(op->buf, &d, map);
}

static cujit_status launch_tc(cujit_kernel *kernel, int path, const cujit_gemm_options *o,
                              const operand *ops, int epilogue, cujit_stream *stream) {
  const uint64_t width = (uint64_t)tc_width[path];
  cujit_tensor_map map_a, map_b;
  cujit_status st;
  if ((st = tc_map(&ops[0], o->trans_a != 0, (uint64_t)o->m, (uint64_t)o->k, GEMM_TC_TILE_M,
                   &map_a)) != CUJIT_OK ||
      (st = tc_map(&ops[1], o->trans_b == 0, (uint64_t)o->n, (uint64_t)o->k,
                   (unsigned)width / GEMM_TC_CLUSTER, &map_b)) != CUJIT_OK)
    return st;
  const uint64_t high = GEMM_TC_CLUSTER * GEMM_TC_TILE_M; /* a cluster's tile */
  uint64_t tiles = tiles_of(o, high, width);
  /* persistent clusters (gemm_tc.h): as many as the multiprocessors hold, each looping over tiles
   */
  uint64_t clusters = (uint64_t)ops[0].buf->device->info.multiprocessors / GEMM_TC_CLUSTER;
  if (clusters == 0 || clusters > tiles) clusters = tiles;
  cujit_launch_config c = {.size = sizeof(cujit_launch_config),
                           .grid = {(unsigned)(clusters * GEMM_TC_CLUSTER), 1, 1},
                           .block = {GEMM_TC_THREADS, 1, 1},
                           .shared_bytes = tc_smem[path],
                           .stream = stream,
                           .cluster = {GEMM_TC_CLUSTER, 1, 1}};
  cujit_arg args[] = {
      CUJIT_ARG_RAW(map_a.opaque), CUJIT_ARG_RAW(map_b.opaque), CUJIT_ARG_BUF(ops[2].buf),
      CUJIT_ARG_BUF(o->bias),      CUJIT_ARG_BUF(o->relu_mask), CUJIT_ARG_I(o->m),
      CUJIT_ARG_I(o->n),           CUJIT_ARG_I(o->k),           CUJIT_ARG_I(epilogue),
      CUJIT_ARG_F(o->alpha),       CUJIT_ARG_F(o->beta)};
  return cujit_launch(kernel, &c, args, sizeof args / sizeof *args);
}

/* A product checked and its kernel chosen: what cujit_gemm and cujit_gemm_kernel_for share. */
typedef struct gemm_plan {
  cujit_engine *engine;
  cujit_gemm_options o; /* the caller's, copied at this header's size */
  operand ops[5];       /* a, b, c, then the bias and the mask where given */
  size_t nops;
  cujit_device *dev; /* where the work runs */
  int pair, path;
} gemm_plan;

/* Every check of cujit_gemm's contract, in its order and with its messages, then the path. */
static cujit_status gemm_plan_make(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c,
                                   const cujit_gemm_options *opts, cujit_stream *stream,
                                   gemm_plan *p) {
  cujit_engine *e = a ? a->device->engine : b ? b->device->engine : c ? c->device->engine : NULL;
  p->engine = e;
  if (!a || !b || !c)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm needs buffers a, b and c (%s is NULL)",
                   !a   ? "a"
                   : !b ? "b"
                        : "c");
  cujit_gemm_options *o = &p->o;
  cujit_status st;
  if (!opts)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_gemm needs options giving m, n and k (CUJIT_GEMM_OPTIONS_INIT)");
  if ((st = cj_struct_in(e, "cujit_gemm", "cujit_gemm_options", opts, o, sizeof *o,
                         CJ_GEMM_OPTIONS_V1)) != CUJIT_OK ||
      (st = check_shape(e, o)) != CUJIT_OK)
    return st;
  uint64_t m = (uint64_t)o->m, n = (uint64_t)o->n, k = (uint64_t)o->k;
  p->ops[0] = (operand){"a", a, m * k, o->trans_a ? "k x m" : "m x k"};
  p->ops[1] = (operand){"b", b, k * n, o->trans_b ? "n x k" : "k x n"};
  p->ops[2] = (operand){"c", c, m * n, "m x n"};
  p->nops = 3;
  if (o->bias) p->ops[p->nops++] = (operand){"bias", o->bias, n, "n"};
  if (o->relu_mask) p->ops[p->nops++] = (operand){"relu_mask", o->relu_mask, m * n, "m x n"};
  p->dev = NULL;
  if ((st = check_dtypes(e, p->ops, p->nops, &p->pair)) != CUJIT_OK ||
      (st = check_lengths(e, o, p->ops, p->nops)) != CUJIT_OK ||
      (st = check_overlap(e, p->ops, p->nops)) != CUJIT_OK ||
      (st = check_devices(e, stream, p->ops, p->nops, &p->dev)) != CUJIT_OK)
    return st;
  p->path = GEMM_SIMT;
  return gemm_path(e, p->dev, o, p->ops, p->pair, &p->path);
}

cujit_status cujit_gemm_kernel_for(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c,
                                   const cujit_gemm_options *opts, cujit_stream *stream,
                                   cujit_gemm_kernel *kernel) {
  CJ_KEEP_CALLER_CONTEXT;
  gemm_plan p;
  cujit_status st = gemm_plan_make(a, b, c, opts, stream, &p);
  if (st == CUJIT_OK && !kernel)
    st = cj_fail(p.engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_gemm_kernel_for needs somewhere to put the answer (kernel is NULL)");
  if (st == CUJIT_OK)
    *kernel = tc_width[p.path] ? CUJIT_GEMM_KERNEL_TENSOR : CUJIT_GEMM_KERNEL_SIMT;
  return st;
}

cujit_status cujit_gemm(cujit_buffer *a, cujit_buffer *b, cujit_buffer *c,
                        const cujit_gemm_options *opts, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  gemm_plan p;
  cujit_status st;
  if ((st = gemm_plan_make(a, b, c, opts, stream, &p)) != CUJIT_OK) return st;
  cujit_engine *e = p.engine;
  const cujit_gemm_options *o = &p.o;
  cujit_device *dev = p.dev;
  const int path = p.path;
  gemm_state *s = cj_slot_get(e, &state_tag, sizeof *s, state_init, state_destroy);
  if (!s) return cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  cujit_kernel **ks = NULL;
  int epilogue = (o->bias ? 1 : 0) | (o->relu ? 2 : 0) | (o->relu_mask ? 4 : 0);
  const int wide = !tc_width[path] && simt_wide(dev, o);
  int which = tc_width[path] ? tc_layout(o) : epilogue + (wide ? GEMM_EPILOGUES : 0);
  if (cujit_stream_capturing(stream)) {
    if ((st = check_capturable(s, dev, path, p.pair, which)) != CUJIT_OK) return st;
    ks = s->kernels[dev->ordinal == CUJIT_DEVICE_CPU][path][p.pair];
  } else if ((st = gemm_kernels(s, dev, path, p.pair, &ks)) != CUJIT_OK ||
             (st = load_all(ks, path, dev)) != CUJIT_OK) {
    return st;
  }
  return tc_width[path] ? launch_tc(ks[which], path, o, p.ops, epilogue, stream)
                        : launch_simt(ks[which], wide, o, p.ops, stream);
}
