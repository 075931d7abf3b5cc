// host.cpp -- a C++ host program of cujit, built by tests/sh/test_cxx.sh with g++ and clang++ at
// C++11, 14, 17 and 20 (-Wall -Wextra -Wpedantic -Werror) against libcujit: the public headers
// work unchanged from C++. It uses every CUJIT_* macro of include/cujit.h and cujit_lua.h (the
// test checks that, by name, against the headers), checks each one's value, checks that C and
// C++ lay the public structs out alike (layout.c, compiled as C, reports C's sizes and offsets),
// then compiles a kernel and launches it with every kind of argument on the GPU, or on the CPU
// device when there is none (CUJIT_REQUIRE_GPU=1: no GPU is a failure), and checks what reached
// the device. Prints "runs on: ..." then "ok: N checks"; exits 1 on the first failed check.
#include "cujit.h"
#include "cujit_lua.h" // a C++ program embedding Lua includes this one too

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" size_t cxx_test_c_layout(int which); // layout.c: C's figures, in the order below

static int checks = 0;
#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "FAIL: line %d: %s\n", __LINE__, #cond);                                \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)
#define CHECK(call)                                                                                \
  do {                                                                                             \
    checks++;                                                                                      \
    if ((call) != CUJIT_OK) {                                                                      \
      std::fprintf(stderr, "FAIL: line %d: %s: %s\n", __LINE__, #call, cujit_errmsg(e));           \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// The struct the kernel takes by value (CUJIT_ARG_RAW), as the kernel's preamble declares it.
struct pair {
  double a;
  int b;
};

static void check_layouts() {
  // Each figure as C++ sees it, in layout.c's order: C must see the same.
  const size_t cxx[] = {sizeof(cujit_device_info),
                        offsetof(cujit_device_info, pci_bus_id),
                        sizeof(cujit_compile_options),
                        offsetof(cujit_compile_options, nonnull_count),
                        sizeof(cujit_param_info),
                        offsetof(cujit_param_info, nullable),
                        sizeof(cujit_kernel_attributes),
                        sizeof(cujit_arg),
                        offsetof(cujit_arg, v),
                        sizeof(cujit_launch_config),
                        offsetof(cujit_launch_config, stream),
                        sizeof(cujit_cache_stats),
                        offsetof(cujit_cache_stats, disk_enabled),
                        sizeof(cujit_scalar),
                        sizeof(cujit_compile_option_info),
                        sizeof(cujit_status),
                        sizeof(cujit_dtype),
                        sizeof(cujit_tensor_map_desc),
                        offsetof(cujit_tensor_map_desc, oob_nan),
                        sizeof(cujit_tensor_map)};
  for (size_t i = 0; i < sizeof cxx / sizeof *cxx; i++) {
    if (cxx[i] != cxx_test_c_layout(static_cast<int>(i)))
      std::fprintf(stderr, "layout figure %zu: C++ %zu, C %zu\n", i, cxx[i],
                   cxx_test_c_layout(static_cast<int>(i)));
    EXPECT(cxx[i] == cxx_test_c_layout(static_cast<int>(i)));
  }
  // Past the last: layout.c's list is no longer than this one.
  EXPECT(cxx_test_c_layout(static_cast<int>(sizeof cxx / sizeof *cxx)) == 0);
}

static void check_constants() {
  EXPECT(std::strcmp(cujit_version(), CUJIT_VERSION_STRING) == 0);
  EXPECT(CUJIT_VERSION_NUMBER ==
         CUJIT_VERSION_MAJOR * 10000 + CUJIT_VERSION_MINOR * 100 + CUJIT_VERSION_PATCH);
  char ipc[CUJIT_IPC_HANDLE_MAX];
  char nccl_id[CUJIT_NCCL_ID_HEX];
  EXPECT(sizeof ipc == 192 && sizeof nccl_id == 257);
  EXPECT(CUJIT_DEVICE_CPU == -1);
  // The enums as C++ uses them: an int made back into each, a name for every value.
  for (int s = CUJIT_OK; s < CUJIT_STATUS_COUNT_; s++)
    EXPECT(cujit_status_string(static_cast<cujit_status>(s))[0] != '\0');
  for (int d = CUJIT_DTYPE_NONE; d < CUJIT_DTYPE_COUNT_; d++) {
    cujit_dtype dtype = static_cast<cujit_dtype>(d);
    EXPECT(cujit_dtype_from_name(cujit_dtype_name(dtype)) == dtype);
  }
  EXPECT(cujit_dtype_size(CUJIT_F64) == sizeof(double));
}

int main() {
  check_layouts();
  check_constants();

  cujit_engine *e = nullptr;
  if (cujit_open(&e) != CUJIT_OK) return 1;
  cujit_device *dev = nullptr;
  const char *gpu_required = std::getenv("CUJIT_REQUIRE_GPU");
  const bool found = cujit_current_device(e, &dev) == CUJIT_OK;
  if (found && cujit_device_ordinal(dev) != CUJIT_DEVICE_CPU) {
    std::printf("runs on: GPU %d\n", cujit_device_ordinal(dev));
  } else if (gpu_required && std::strcmp(gpu_required, "1") == 0) {
    std::fprintf(stderr, "FAIL: CUJIT_REQUIRE_GPU=1 but no GPU: %s\n", cujit_errmsg(e));
    return 1;
  } else if (found) {
    std::printf("runs on: CPU device (CUJIT_DEVICE=cpu)\n");
  } else {
    const char *why = cujit_errmsg(e);
    std::printf("runs on: CPU device (no GPU: %.*s)\n", static_cast<int>(std::strcspn(why, "\n")),
                why);
    CHECK(cujit_set_device(e, CUJIT_DEVICE_CPU));
    CHECK(cujit_current_device(e, &dev));
  }

  // Every *_INIT macro: its size, and every other field zero.
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  cujit_compile_options options = CUJIT_COMPILE_OPTIONS_INIT;
  cujit_kernel_attributes attrs = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cujit_cache_stats stats = CUJIT_CACHE_STATS_INIT;
  cujit_param_info param = CUJIT_PARAM_INFO_INIT;
  cujit_scalar sum = CUJIT_SCALAR_INIT;
  cujit_tensor_map_desc tmap = CUJIT_TENSOR_MAP_DESC_INIT;
  cujit_gemm_options gemm = CUJIT_GEMM_OPTIONS_INIT; // alpha 1: a zeroed one multiplies by 0
  EXPECT(CUJIT_DLPACK_MAX_DIMS == 8); // the shape room cujit_buffer_from_dlpack fills
  EXPECT(CUJIT_TENSOR_MAX_RANK == 5); // cuTensorMapEncodeTiled's most dimensions
  EXPECT(tmap.size == sizeof tmap && tmap.rank == 0 && !tmap.dims[4] && !tmap.box[0] &&
         tmap.swizzle == CUJIT_SWIZZLE_NONE && !tmap.oob_nan);
  EXPECT(sizeof(cujit_tensor_map) == 128); // the driver's CUtensorMap
  EXPECT(gemm.size == sizeof gemm && gemm.alpha == 1.0 && gemm.beta == 0.0 && !gemm.m &&
         !gemm.k && !gemm.trans_a && !gemm.trans_b && !gemm.bias && !gemm.relu && !gemm.relu_mask);
  EXPECT(info.size == sizeof info && info.ordinal == 0 && info.name[0] == 0 &&
         info.pci_bus_id == 0);
  EXPECT(options.size == sizeof options && !options.arch && !options.fast_math &&
         !options.defines && !options.nonnull && !options.nonnull_count);
  EXPECT(attrs.size == sizeof attrs && attrs.registers == 0 && attrs.binary_version == 0);
  EXPECT(cfg.size == sizeof cfg && !cfg.grid[0] && !cfg.block[2] && !cfg.shared_bytes &&
         !cfg.stream);
  EXPECT(stats.size == sizeof stats && !stats.memory_hits && !stats.disk_enabled);
  EXPECT(param.struct_size == sizeof param && !param.name && !param.size && !param.nullable);
  EXPECT(sum.size == sizeof sum && sum.dtype == CUJIT_DTYPE_NONE && sum.v.u == 0);
  CHECK(cujit_device_info_get(dev, &info));
  EXPECT(info.size == sizeof info && info.warp_size == 32);

  // A kernel of every kind of argument; options from the INIT macro, with a define.
  const char *defines[] = {"SCALE=2"};
  options.defines = defines;
  options.define_count = 1;
  cujit_program *prog = nullptr;
  CHECK(
      cujit_program_compile(e,
                            "struct Pair { double a; int b; };\n"
                            "extern \"C\" __global__ void store(long long i, unsigned long long u,"
                            "    double f, double *out, const double *raw, Pair p) {\n"
                            "  out[0] = (double)i; out[1] = (double)u; out[2] = f * SCALE;\n"
                            "  out[3] = raw[0]; out[4] = p.a; out[5] = p.b;\n"
                            "}\n",
                            "store.cu", &options, &prog));
  cujit_kernel *k = nullptr;
  CHECK(cujit_program_kernel(prog, "store", &k));
  cujit_program_free(prog); // the kernel keeps what it needs
  CHECK(cujit_kernel_attributes_get(k, &attrs));
  EXPECT(attrs.size == sizeof attrs && attrs.max_threads_per_block > 0);
  CHECK(cujit_kernel_param(k, 5, &param));
  EXPECT(param.kind == CUJIT_PARAM_SCALAR && param.size == sizeof(pair) &&
         std::strcmp(param.name, "p") == 0);

  cujit_buffer *out = nullptr, *in = nullptr;
  CHECK(cujit_buffer_alloc(e, 6 * sizeof(double), CUJIT_F64, &out));
  CHECK(cujit_buffer_alloc(e, sizeof(double), CUJIT_F64, &in));
  const double seven = 7.25;
  CHECK(cujit_memcpy_htod(in, 0, &seven, sizeof seven, nullptr));
  const pair p = {0.5, -3};

  // Every CUJIT_ARG_* macro: the cujit_arg it gives, then what the device received.
  cujit_arg args[] = {CUJIT_ARG_I(-7),
                      CUJIT_ARG_U(1u << 20),
                      CUJIT_ARG_F(2.5f),
                      CUJIT_ARG_BUF(out),
                      CUJIT_ARG_PTR(cujit_buffer_devptr(in)),
                      CUJIT_ARG_RAW(&p)};
  EXPECT(args[0].kind == CUJIT_ARG_INT && args[0].v.i == -7);
  EXPECT(args[1].kind == CUJIT_ARG_UINT && args[1].v.u == (1u << 20));
  EXPECT(args[2].kind == CUJIT_ARG_FLOAT && args[2].v.f == 2.5);
  EXPECT(args[3].kind == CUJIT_ARG_BUFFER && args[3].v.buffer == out);
  EXPECT(args[4].kind == CUJIT_ARG_DEVPTR && args[4].v.devptr == cujit_buffer_devptr(in) &&
         args[4].v.devptr != 0);
  EXPECT(args[5].kind == CUJIT_ARG_BYTES && args[5].v.bytes == &p);
  cfg.grid[0] = 1, cfg.block[0] = 1;
  CHECK(cujit_launch(k, &cfg, args, 6));
  double got[6] = {0, 0, 0, 0, 0, 0};
  CHECK(cujit_memcpy_dtoh(got, out, 0, sizeof got, nullptr));
  EXPECT(got[0] == -7 && got[1] == 1048576 && got[2] == 5.0 && got[3] == 7.25 && got[4] == 0.5 &&
         got[5] == -3);
  CHECK(cujit_reduce(out, CUJIT_REDUCE_SUM, 6, &sum, nullptr));
  EXPECT(sum.dtype == CUJIT_F64 && sum.v.f == -7 + 1048576 + 5.0 + 7.25 + 0.5 - 3);
  CHECK(cujit_cache_stats_get(e, &stats));
  EXPECT(stats.size == sizeof stats && stats.max_bytes > 0);

  // A refusal reads the same from C++: the message names what was wrong.
  cujit_arg wrong[] = {CUJIT_ARG_F(0.5),   CUJIT_ARG_U(1),    CUJIT_ARG_F(1),
                       CUJIT_ARG_BUF(out), CUJIT_ARG_BUF(in), CUJIT_ARG_RAW(&p)};
  EXPECT(cujit_launch(k, &cfg, wrong, 6) == CUJIT_ERROR_ARGUMENT);
  EXPECT(std::strstr(cujit_errmsg(e), "argument 1 'i' (long long)") != nullptr);

  cujit_buffer_free(in);
  cujit_buffer_free(out);
  cujit_kernel_free(k);
  cujit_close(e);
  std::printf("ok: %d checks\n", checks);
  return 0;
}
