/*
** test_tensor_map.c -- cujit_tensor_map_encode (issue 26): every refusal with its message, checked
** on a device with TMA (the stand-in driver's sm_90, as c.test_tensor_map.stub_driver, or a real
** GPU), the CPU
** device refused, and a driver without the entry point (the stand-in told so); on a GPU of compute
*capability 9.0, a kernel copying 32 x 32 tiles through
** <cujit/tma.h> with the map (no swizzle and 128B), a box reaching past the tensor's edge read as
** zeros and stores dropped past it, checked element by element.
*/
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "fixture.h"

TestSuite(tensor_map, .init = cj_fixture_open, .fini = cj_fixture_close, .timeout = 300);

static int on_stub(void) {
  void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return libcuda && dlsym(libcuda, "cujit_stub_live_allocations") != NULL;
}

/* The current device: a GPU of compute capability 9.0 or more (the stand-in's included), else
** the test is skipped with the reason (failed under CUJIT_REQUIRE_GPU=1). */
static cujit_device *need_tma_gpu(void) {
  cujit_device *dev;
  if (cujit_current_device(engine, &dev) != CUJIT_OK) {
    const char *why = cujit_errmsg(engine);
    if (getenv("CUJIT_REQUIRE_GPU") && !strcmp(getenv("CUJIT_REQUIRE_GPU"), "1"))
      cr_assert_fail("CUJIT_REQUIRE_GPU=1 but there is no GPU: %s", why);
    cr_skip_test("no GPU: %s", why);
  }
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  cr_assert_eq(cujit_device_info_get(dev, &info), CUJIT_OK);
  if (info.cc_major < 9)
    cr_skip_test("compute capability %d.%d: no TMA", info.cc_major, info.cc_minor);
  return dev;
}

/* A rows x cols f32 matrix, with a map of 32 x 32 boxes over it. */
static cujit_tensor_map_desc matrix(uint64_t rows, uint64_t cols) {
  cujit_tensor_map_desc d = CUJIT_TENSOR_MAP_DESC_INIT;
  d.rank = 2, d.dims[0] = cols, d.dims[1] = rows;
  d.box[0] = 32, d.box[1] = 32;
  return d;
}

static void expect_refused(cujit_buffer *b, const cujit_tensor_map_desc *d, cujit_status want,
                           const char *part1, const char *part2) {
  cujit_tensor_map m;
  cujit_status st = cujit_tensor_map_encode(b, d, &m);
  const char *msg = cujit_errmsg(engine);
  cr_assert_eq(st, want, "status %d (want %d): %s", st, want, msg);
  cr_assert(strstr(msg, "cujit_tensor_map_encode: ") && strstr(msg, part1) &&
                (!part2 || strstr(msg, part2)),
            "the message lacks '%s' / '%s': %s", part1, part2 ? part2 : "", msg);
}

Test(tensor_map, every_rule_refused_with_its_message) {
  need_tma_gpu();
  cujit_buffer *b = cj_test_upload(NULL, 64 * 64 * 4, CUJIT_F32);
  cujit_tensor_map m;
  cujit_tensor_map_desc d = matrix(64, 64);
  cr_assert_eq(cujit_tensor_map_encode(NULL, &d, &m), CUJIT_ERROR_INVALID_ARGUMENT);
  expect_refused(b, NULL, CUJIT_ERROR_INVALID_ARGUMENT, "desc is NULL", NULL);
  cr_assert_eq(cujit_tensor_map_encode(b, &d, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cujit_tensor_map_desc unsized = d;
  unsized.size = 0;
  expect_refused(b, &unsized, CUJIT_ERROR_INVALID_ARGUMENT, "CUJIT_TENSOR_MAP_DESC_INIT", NULL);
  d.rank = 0;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "rank 0", "1 to 5 dimensions");
  d.rank = 6;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "rank 6", NULL);
  d = matrix(64, 64), d.dims[1] = 0;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "dims[1] is 0", "1 to 2^32");
  d = matrix(64, 64), d.strides[1] = 250; /* not a multiple of 16 */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "strides[1] is 250 bytes", "multiple of 16");
  d = matrix(64, 64), d.strides[1] = 128; /* less than a row's 256 bytes */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "strides[1] is 128 bytes",
                 "at least the 256 bytes");
  d = matrix(64, 64), d.box[1] = 0;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "box[1] is 0", "1 to 256");
  d = matrix(64, 64), d.box[0] = 257;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "box[0] is 257", NULL);
  d = matrix(64, 64), d.box[1] = 65; /* more than the dimension */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "box[1] is 65", "at most its dimension (64)");
  d = matrix(64, 64), d.box[0] = 6; /* 24 bytes */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "box row of 6 elements is 24 bytes",
                 "multiple of 16");
  d = matrix(64, 64), d.swizzle = CUJIT_SWIZZLE_64B; /* 32 floats: 128 bytes > 64 */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "is 128 bytes", "at most the swizzle's 64");
  d = matrix(64, 64), d.swizzle = (cujit_tensor_swizzle)7;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "swizzle 7", NULL);
  d = matrix(64, 64), d.offset = 8;
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "not a multiple of 16 (offset 8", NULL);
  d = matrix(65, 64); /* one row too many: 16640 bytes of a 16384-byte buffer */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "spans 16640 bytes from offset 0",
                 "past the buffer's 16384 bytes");
  d = matrix(64, 64), d.offset = 16; /* the same, shifted by 16 bytes */
  expect_refused(b, &d, CUJIT_ERROR_INVALID_ARGUMENT, "spans 16384 bytes from offset 16", NULL);
  cujit_buffer *ints = cj_test_upload(NULL, 64 * 64 * 4, CUJIT_I32);
  d = matrix(64, 64), d.oob_nan = 1;
  expect_refused(ints, &d, CUJIT_ERROR_INVALID_ARGUMENT, "oob_nan", "float dtype");
  cujit_buffer *bytes = cj_test_upload(NULL, 64 * 64 * 4, CUJIT_DTYPE_NONE);
  d = matrix(64, 64);
  expect_refused(bytes, &d, CUJIT_ERROR_INVALID_ARGUMENT, "untyped bytes", "typed view");
  /* a packed stride (0) is the row's bytes: the exact fit is accepted by the checks */
  d = matrix(64, 64);
  cr_assert_eq(cujit_tensor_map_encode(b, &d, &m), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer_free(b), cujit_buffer_free(ints), cujit_buffer_free(bytes);
}

/* On the stand-in, whose cuTensorMapEncodeTiled writes what it was given into the map
** (scripts/bench/stub_memory.h): the driver gets each dtype's element type, the dimensions, its
** strides from dimension 1 on, the box, the swizzle, the address with the offset, and NaN fill
** only when asked. A real GPU's map is opaque: checked there by the copies below. */
Test(tensor_map, the_driver_gets_what_the_description_says) {
  need_tma_gpu();
  if (!on_stub()) cr_skip_test("reads the stand-in driver's own map layout");
  static const struct {
    cujit_dtype dtype;
    CUtensorMapDataType type;
  } types[] = {
      {CUJIT_F16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16}, {CUJIT_BF16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
      {CUJIT_F32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, {CUJIT_F64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
      {CUJIT_I32, CU_TENSOR_MAP_DATA_TYPE_INT32},   {CUJIT_I64, CU_TENSOR_MAP_DATA_TYPE_INT64},
      {CUJIT_U32, CU_TENSOR_MAP_DATA_TYPE_UINT32},  {CUJIT_U64, CU_TENSOR_MAP_DATA_TYPE_UINT64},
      {CUJIT_I16, CU_TENSOR_MAP_DATA_TYPE_UINT16},  {CUJIT_U16, CU_TENSOR_MAP_DATA_TYPE_UINT16},
      {CUJIT_I8, CU_TENSOR_MAP_DATA_TYPE_UINT8},    {CUJIT_U8, CU_TENSOR_MAP_DATA_TYPE_UINT8}};
  cujit_tensor_map m;
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    cujit_buffer *b = cj_test_upload(NULL, 64 * 64 * 8, types[i].dtype);
    cujit_tensor_map_desc d = matrix(64, 64);
    cr_assert_eq(cujit_tensor_map_encode(b, &d, &m), CUJIT_OK, "%s", cujit_errmsg(engine));
    cr_assert_eq(memcmp(&m.opaque[0], "cjstubtm", 8), 0, "the stand-in's encode ran");
    cr_expect_eq(m.opaque[1], (uint64_t)types[i].type, "%s's element type",
                 cujit_dtype_name(types[i].dtype));
    cr_expect_eq(m.opaque[2], 2);
    cr_expect_eq(m.opaque[3], cujit_buffer_devptr(b));
    cr_expect_eq(m.opaque[4], 64);
    cr_expect_eq(m.opaque[5], 64);
    cr_expect_eq(m.opaque[9], 64 * cujit_dtype_size(types[i].dtype), "a packed row's bytes");
    cr_expect_eq(m.opaque[13], 32 | 32 << 12, "the box");
    cr_expect_eq(m.opaque[14], 1 | 1 << 12, "element strides of 1");
    cr_expect_eq(m.opaque[15], (uint64_t)CU_TENSOR_MAP_SWIZZLE_NONE |
                                   (uint64_t)CU_TENSOR_MAP_INTERLEAVE_NONE << 8 |
                                   (uint64_t)CU_TENSOR_MAP_L2_PROMOTION_L2_128B << 16 |
                                   (uint64_t)CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE << 24);
    cujit_buffer_free(b);
  }
  /* three dimensions with strides of their own and an offset */
  cujit_buffer *b = cj_test_upload(NULL, 4 * 2048 + 64, CUJIT_F32);
  cujit_tensor_map_desc d = CUJIT_TENSOR_MAP_DESC_INIT;
  d.rank = 3, d.dims[0] = 16, d.dims[1] = 8, d.dims[2] = 4;
  d.strides[1] = 128, d.strides[2] = 2048, d.offset = 32;
  d.box[0] = 8, d.box[1] = 4, d.box[2] = 2, d.oob_nan = 1;
  cr_assert_eq(cujit_tensor_map_encode(b, &d, &m), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_expect_eq(m.opaque[2], 3);
  cr_expect_eq(m.opaque[3], cujit_buffer_devptr(b) + 32, "the address past the offset");
  cr_expect_eq(m.opaque[4], 16);
  cr_expect_eq(m.opaque[5], 8);
  cr_expect_eq(m.opaque[6], 4);
  cr_expect_eq(m.opaque[9], 128, "the driver's first stride is dimension 1's");
  cr_expect_eq(m.opaque[10], 2048);
  cr_expect_eq(m.opaque[11], 0, "no stride past the last dimension");
  cr_expect_eq(m.opaque[13], 8 | 4 << 12 | 2 << 24);
  cr_expect_eq(m.opaque[15] >> 24, (uint64_t)CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
  /* each swizzle, with a box row that fits it */
  static const struct {
    cujit_tensor_swizzle swizzle;
    CUtensorMapSwizzle driver;
    unsigned row;
  } swizzles[] = {{CUJIT_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_32B, 8},
                  {CUJIT_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_64B, 16},
                  {CUJIT_SWIZZLE_128B, CU_TENSOR_MAP_SWIZZLE_128B, 32}};
  for (size_t i = 0; i < 3; i++) {
    d = matrix(32, 64), d.swizzle = swizzles[i].swizzle, d.box[0] = swizzles[i].row;
    cr_assert_eq(cujit_tensor_map_encode(b, &d, &m), CUJIT_OK, "%s", cujit_errmsg(engine));
    cr_expect_eq(m.opaque[15] & 255, (uint64_t)swizzles[i].driver, "swizzle %d",
                 swizzles[i].swizzle);
  }
  cujit_buffer_free(b);
}

/* On the stand-in, told to lack the entry point: the feature refused, the engine usable. */
Test(tensor_map, a_driver_without_the_entry_point_refuses_tensor_maps) {
  cujit_close(engine); /* its driver not opened yet: the next engine's reads the variable */
  setenv("CUJIT_STUB_ABSENT", "cuTensorMapEncodeTiled", 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  need_tma_gpu(); /* the driver opened: on_stub can tell */
  unsetenv("CUJIT_STUB_ABSENT");
  if (!on_stub()) cr_skip_test("the stand-in driver lacks an entry point when told: it runs there");
  cujit_buffer *b = cj_test_upload(NULL, 64 * 64 * 4, CUJIT_F32);
  cujit_tensor_map_desc d = matrix(64, 64);
  cujit_tensor_map m;
  cr_assert_eq(cujit_tensor_map_encode(b, &d, &m), CUJIT_ERROR_UNSUPPORTED);
  cr_assert(strstr(cujit_errmsg(engine), "tensor maps (cujit_tensor_map_encode) needs the "
                                         "driver's cuTensorMapEncodeTiled") &&
                strstr(cujit_errmsg(engine), "update the NVIDIA driver"),
            "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_memset(b, 0, 1, 16, NULL), CUJIT_OK, "the engine stays usable: %s",
               cujit_errmsg(engine));
  cujit_buffer_free(b);
}

Test(tensor_map, the_cpu_device_has_none) {
  cr_assert_eq(cujit_set_device(engine, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer *b = cj_test_upload(NULL, 64 * 64 * 4, CUJIT_F32);
  cujit_tensor_map_desc d = matrix(64, 64);
  expect_refused(b, &d, CUJIT_ERROR_UNSUPPORTED, "the CPU device has no Tensor Memory Accelerator",
                 "ordinary loads");
  cujit_buffer_free(b);
}

static const char tile_add[] =
    "#include <cujit/tma.h>\n"
    "template <int ALIGN>\n"
    "__device__ void add_tiles(const CUtensorMap *in, const CUtensorMap *out, float add) {\n"
    "  __shared__ alignas(ALIGN) float tile[32][32];\n"
    "  __shared__ unsigned long long bar;\n"
    "  int x = blockIdx.x * 32, y = blockIdx.y * 32;\n"
    "  if (threadIdx.x == 0) { cujit::mbarrier_init(&bar, 1); cujit::fence_barrier_init(); }\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    cujit::mbarrier_expect_tx(&bar, sizeof tile);\n"
    "    cujit::tma_load_2d(tile, in, x, y, &bar);\n"
    "  }\n"
    "  cujit::mbarrier_wait(&bar, 0);\n"
    "  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x) tile[i / 32][i % 32] += add;\n"
    "  cujit::fence_proxy_async();\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    cujit::tma_store_2d(out, x, y, tile);\n"
    "    cujit::bulk_commit();\n"
    "    cujit::bulk_wait<0>();\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void plain(const __grid_constant__ CUtensorMap in,\n"
    "                                  const __grid_constant__ CUtensorMap out, float add) {\n"
    "  add_tiles<128>(&in, &out, add);\n"
    "}\n"
    "extern \"C\" __global__ void swizzled(const __grid_constant__ CUtensorMap in,\n"
    "                                     const __grid_constant__ CUtensorMap out, float add) {\n"
    "  add_tiles<1024>(&in, &out, add);\n"
    "}\n";

/* rows x cols through kernel `name` with maps of `swizzle`: every element in + 0.5, the rows and
** columns past the last whole tile included (the box there reaches past the tensor). */
static void tiles_through(const char *name, cujit_tensor_swizzle swizzle, unsigned rows,
                          unsigned cols) {
  size_t n = (size_t)rows * cols;
  float *host = malloc(n * sizeof *host), *back = malloc(n * sizeof *back);
  for (size_t i = 0; i < n; i++) host[i] = (float)(i % 1000) - 300.0f;
  cujit_buffer *in = cj_test_upload(host, n * 4, CUJIT_F32);
  cujit_buffer *out = cj_test_upload(NULL, n * 4, CUJIT_F32);
  cr_assert_eq(cujit_memset(out, 0, 0, n * 4, NULL), CUJIT_OK);
  cujit_tensor_map_desc d = matrix(rows, cols);
  d.swizzle = swizzle;
  cujit_tensor_map min, mout;
  cr_assert_eq(cujit_tensor_map_encode(in, &d, &min), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_tensor_map_encode(out, &d, &mout), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_program *p;
  cujit_kernel *k;
  cr_assert_eq(cujit_program_compile(engine, tile_add, "tile_add.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel(p, name, &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = (cols + 31) / 32, c.grid[1] = (rows + 31) / 32, c.block[0] = 128;
  cujit_arg args[] = {CUJIT_ARG_RAW(min.opaque), CUJIT_ARG_RAW(mout.opaque), CUJIT_ARG_F(0.5)};
  cr_assert_eq(cujit_launch(k, &c, args, 3), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(back, out, n * 4);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(back[i], host[i] + 0.5f, "%s: element %zu (row %zu, col %zu): %g, want %g", name,
                 i, i / cols, i % cols, back[i], host[i] + 0.5f);
  cujit_kernel_free(k);
  cujit_program_free(p);
  cujit_buffer_free(in), cujit_buffer_free(out);
  free(host), free(back);
}

/* A bf16 map (CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) with oob_nan: one 32 x 32 box at (x, y), widened
** to float; a box reaching past the tensor reads NaN there, which only a float element type has. */
static const char bf16_box[] =
    "#include <cujit/tma.h>\n"
    "#include <cuda_bf16.h>\n"
    "extern \"C\" __global__ void bf16_box(const __grid_constant__ CUtensorMap in, float *out,\n"
    "                                     int x, int y) {\n"
    "  __shared__ alignas(128) __nv_bfloat16 tile[32][32];\n"
    "  __shared__ unsigned long long bar;\n"
    "  if (threadIdx.x == 0) { cujit::mbarrier_init(&bar, 1); cujit::fence_barrier_init(); }\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x == 0) {\n"
    "    cujit::mbarrier_expect_tx(&bar, sizeof tile);\n"
    "    cujit::tma_load_2d(tile, &in, x, y, &bar);\n"
    "  }\n"
    "  cujit::mbarrier_wait(&bar, 0);\n"
    "  for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x)\n"
    "    out[i] = __bfloat162float(tile[i / 32][i % 32]);\n"
    "}\n";

Test(tensor_map, a_bf16_map_reads_bfloat16_and_nan_past_the_edge_on_a_gpu) {
  need_tma_gpu();
  if (on_stub()) cr_skip_test("the stand-in driver runs no kernel: this case runs on a GPU");
  enum { ROWS = 40, COLS = 48 }; /* a row is 96 bytes: a multiple of 16 */
  uint16_t host[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; i++) { /* (i mod 512) - 256: exact in bfloat16 */
    float f = (float)(i % 512 - 256);
    uint32_t u;
    memcpy(&u, &f, 4);
    host[i] = (uint16_t)(u >> 16);
  }
  cujit_buffer *in = cj_test_upload(host, sizeof host, CUJIT_BF16);
  cujit_buffer *out = cj_test_upload(NULL, 32 * 32 * 4, CUJIT_F32);
  cujit_tensor_map_desc d = matrix(ROWS, COLS);
  d.oob_nan = 1;
  cujit_tensor_map m;
  cr_assert_eq(cujit_tensor_map_encode(in, &d, &m), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_program *p;
  cujit_kernel *k;
  cr_assert_eq(cujit_program_compile(engine, bf16_box, "bf16_box.cu", NULL, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_program_kernel(p, "bf16_box", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = 1, c.block[0] = 128;
  const int x = 32, y = 32; /* 16 columns and 8 rows inside, the rest past the edge */
  cujit_arg args[] = {CUJIT_ARG_RAW(m.opaque), CUJIT_ARG_BUF(out), CUJIT_ARG_I(x), CUJIT_ARG_I(y)};
  cr_assert_eq(cujit_launch(k, &c, args, 4), CUJIT_OK, "%s", cujit_errmsg(engine));
  float back[32 * 32];
  cj_test_download(back, out, sizeof back);
  for (int r = 0; r < 32; r++)
    for (int col = 0; col < 32; col++) {
      float got = back[r * 32 + col];
      if (y + r < ROWS && x + col < COLS) {
        float want = (float)(((y + r) * COLS + x + col) % 512 - 256);
        cr_assert_eq(got, want, "row %d col %d: %g, want %g", y + r, x + col, got, want);
      } else {
        cr_assert(isnan(got), "row %d col %d, past the edge: %g, want NaN", y + r, x + col, got);
      }
    }
  cujit_kernel_free(k);
  cujit_program_free(p);
  cujit_buffer_free(in), cujit_buffer_free(out);
}

Test(tensor_map, tiles_copied_through_the_map_on_a_gpu) {
  need_tma_gpu();
  if (on_stub()) cr_skip_test("the stand-in driver runs no kernel: this case runs on a GPU");
  tiles_through("plain", CUJIT_SWIZZLE_NONE, 256, 256);
  tiles_through("plain", CUJIT_SWIZZLE_NONE, 1000, 1004); /* edges: boxes past the tensor */
  tiles_through("swizzled", CUJIT_SWIZZLE_128B, 200, 96);
}
