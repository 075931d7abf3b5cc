/*
** test_cpu_cg.c -- cooperative groups through the C API, on a GPU or on the CPU device without
** one (kernels_src/cujit/cpu_cg.h): a warp-aggregated counter (coalesced_threads in a branch, the
** leader's atomicAdd, shfl of its result) and a labeled_partition histogram with cg::reduce, both
** against a host reference on random data; a double sum over tiles of 16 bit for bit in the
** GPU's butterfly order; the same source compiled for sm_90 by NVRTC; and, on the CPU device,
** max_cooperative_blocks against what its cooperative launch takes, at the boundary.
*/
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"
#include "gpu.h"

TestSuite(cpu_cg, .init = cj_fixture_open, .fini = cj_fixture_close);

#define OK(call) cr_assert_eq((call), CUJIT_OK, "%s", cujit_errmsg(engine))

static const char *src =
    "#include <cooperative_groups.h>\n"
    "#include <cooperative_groups/reduce.h>\n"
    "namespace cg = cooperative_groups;\n"
    "\n"
    "// One atomic per group of threads that take the branch: the leader adds the group's size,\n"
    "// every member gets its own slot after the leader's old value.\n"
    "__device__ int take_slot(int *counter) {\n"
    "  cg::coalesced_group active = cg::coalesced_threads();\n"
    "  int base = 0;\n"
    "  if (active.thread_rank() == 0) base = atomicAdd(counter, (int)active.size());\n"
    "  return active.shfl(base, 0) + (int)active.thread_rank();\n"
    "}\n"
    "extern \"C\" __global__ void keep_positive(const int *in, int *out, int *slot_of,\n"
    "                                           int *counter, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  slot_of[i] = -1;\n"
    "  if (in[i] > 0) {\n"
    "    int s = take_slot(counter);\n"
    "    out[s] = in[i];\n"
    "    slot_of[i] = s;\n"
    "  }\n"
    "}\n"
    "\n"
    "// A histogram of 8 bins: the threads of a warp with the same bin add their weights first.\n"
    "extern \"C\" __global__ void histogram8(const unsigned *bin, const unsigned *weight,\n"
    "                                        unsigned *hist) {\n"
    "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, b = bin[i] % 8u;\n"
    "  cg::coalesced_group same = cg::labeled_partition(warp, b);\n"
    "  unsigned total = cg::reduce(same, weight[i], cg::plus<unsigned>());\n"
    "  if (same.thread_rank() == 0) atomicAdd(&hist[b], total);\n"
    "}\n"
    "\n"
    "extern \"C\" __global__ void tile_sums(const double *x, double *sums) {\n"
    "  auto tile = cg::tiled_partition<16>(cg::this_thread_block());\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  double s = cg::reduce(tile, x[i], cg::plus<double>());\n"
    "  if (tile.thread_rank() == 0) sums[i / 16] = s;\n"
    "}\n";

static cujit_kernel *kernel(cujit_program *p, const char *name) {
  cujit_kernel *k;
  OK(cujit_program_kernel(p, name, &k));
  return k;
}

static unsigned next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(*s >> 33);
}

Test(cpu_cg, warp_aggregated_counter_and_partitioned_histogram) {
  CJ_NEED_DEVICE(engine);
  cujit_program *p;
  OK(cujit_program_compile(engine, src, "cg.cu", NULL, &p));
  uint64_t seed = (uint64_t)time(NULL);
  cr_log_info("seed %llu", (unsigned long long)seed);
  enum { n = 1000 };
  int in[n], positives = 0;
  for (int i = 0; i < n; i++) {
    in[i] = (int)(next(&seed) % 201) - 100;
    positives += in[i] > 0;
  }
  int zero = 0;
  cujit_buffer *din = cj_test_upload(in, sizeof in, CUJIT_I32);
  cujit_buffer *dout = cj_test_upload(in, sizeof in, CUJIT_I32);
  cujit_buffer *dslot = cj_test_upload(in, sizeof in, CUJIT_I32);
  cujit_buffer *dcount = cj_test_upload(&zero, sizeof zero, CUJIT_I32);
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (n + 127) / 128, cfg.block[0] = 128;
  cujit_arg args[] = {CUJIT_ARG_BUF(din), CUJIT_ARG_BUF(dout), CUJIT_ARG_BUF(dslot),
                      CUJIT_ARG_BUF(dcount), CUJIT_ARG_I(n)};
  OK(cujit_launch(kernel(p, "keep_positive"), &cfg, args, 5));
  int out[n], slot[n], count;
  cj_test_download(out, dout, sizeof out);
  cj_test_download(slot, dslot, sizeof slot);
  cj_test_download(&count, dcount, sizeof count);
  cr_assert_eq(count, positives, "every positive value took one slot");
  /* Each positive value has a slot of its own holding it; within a warp, slots follow the lanes. */
  char used[n] = {0};
  int prev = -1; /* the last lane of this warp that took a slot */
  for (int i = 0; i < n; i++) {
    if (i % 32 == 0) prev = -1;
    if (in[i] <= 0) {
      cr_assert_eq(slot[i], -1, "element %d", i);
      continue;
    }
    cr_assert(slot[i] >= 0 && slot[i] < count && !used[slot[i]], "slot of %d: %d", i, slot[i]);
    used[slot[i]] = 1;
    cr_assert_eq(out[slot[i]], in[i], "element %d", i);
    if (prev >= 0) cr_assert_eq(slot[i], slot[prev] + 1, "lanes %d and %d of one warp", prev, i);
    prev = i;
  }

  unsigned bin[256], weight[256], want[8] = {0}, hist[8] = {0};
  for (int i = 0; i < 256; i++) {
    bin[i] = next(&seed), weight[i] = next(&seed);
    want[bin[i] % 8] += weight[i];
  }
  cujit_buffer *dbin = cj_test_upload(bin, sizeof bin, CUJIT_U32);
  cujit_buffer *dw = cj_test_upload(weight, sizeof weight, CUJIT_U32);
  cujit_buffer *dh = cj_test_upload(hist, sizeof hist, CUJIT_U32);
  cfg.grid[0] = 4, cfg.block[0] = 64;
  cujit_arg hargs[] = {CUJIT_ARG_BUF(dbin), CUJIT_ARG_BUF(dw), CUJIT_ARG_BUF(dh)};
  OK(cujit_launch(kernel(p, "histogram8"), &cfg, hargs, 3));
  cj_test_download(hist, dh, sizeof hist);
  for (int b = 0; b < 8; b++)
    cr_assert_eq(hist[b], want[b], "bin %d: %u, want %u", b, hist[b], want[b]);

  double x[128], sums[8];
  for (int i = 0; i < 128; i++) x[i] = (double)next(&seed) / 4096.0 - 1e5 + 1.0 / (i + 3);
  cujit_buffer *dx = cj_test_upload(x, sizeof x, CUJIT_F64);
  cujit_buffer *ds = cj_test_upload(sums, sizeof sums, CUJIT_F64);
  cfg.grid[0] = 2;
  cujit_arg targs[] = {CUJIT_ARG_BUF(dx), CUJIT_ARG_BUF(ds)};
  OK(cujit_launch(kernel(p, "tile_sums"), &cfg, targs, 2));
  cj_test_download(sums, ds, sizeof sums);
  for (int t = 0; t < 8; t++) {
    double v[16]; /* the butterfly: lane r adds lane r ^ m's for m = 8, 4, 2, 1 */
    memcpy(v, x + 16 * t, sizeof v);
    for (int m = 8; m > 0; m /= 2) {
      double w[16];
      for (int r = 0; r < 16; r++) w[r] = v[r] + v[r ^ m];
      memcpy(v, w, sizeof v);
    }
    cr_assert_eq(sums[t], v[0], "tile %d: %.17g, want %.17g", t, sums[t], v[0]);
  }
  cujit_program_free(p);
}

Test(cpu_cg, the_source_compiles_for_sm_90) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_program *p;
  OK(cujit_program_compile(engine, src, "cg.cu", &o, &p));
  cr_assert_eq(cujit_program_kernel_count(p), 3);
  size_t len;
  const char *ptx = cujit_program_ptx(p, &len);
  cr_assert(ptx && strstr(ptx, ".entry histogram8"), "PTX lacks histogram8");
  cujit_program_free(p);
}

/* The CPU device's max_cooperative_blocks is exactly what its cooperative launch takes: one block
** per worker for any block it runs (1 to 1024 threads, up to the opt-in shared memory limit), so
** the largest grid it answers runs, with every block at the grid barrier at once, and one block
** more is refused saying how many fit; a block past the thread or shared memory limit fits 0
** times, and its launch is refused by that limit, naming it. */
Test(cpu_cg, max_cooperative_blocks_is_what_a_cpu_cooperative_launch_takes) {
  OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
  cujit_device *dev;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_info_get(dev, &info));
  unsigned long long workers = (unsigned long long)info.multiprocessors;
  unsigned max_threads = (unsigned)info.max_threads_per_block;
  unsigned max_shared = (unsigned)info.max_shared_per_block_optin;
  cujit_kernel *k;
  OK(cujit_kernel_define(
      engine, "meet(int *x)",
      "if (threadIdx.x + threadIdx.y == 0) x[blockIdx.x] = (int)(blockDim.x * blockDim.y);\n"
      "cooperative_groups::this_grid().sync();\n"
      "if (blockIdx.x == 0 && threadIdx.x + threadIdx.y == 0) {\n"
      "  int s = 0;\n"
      "  for (unsigned b = 0; b < gridDim.x; b++) s += x[b];\n"
      "  x[gridDim.x] = s;\n"
      "}",
      "#include <cooperative_groups.h>\n", NULL, &k));
  int host[64];
  cr_assert_lt(workers + 2, sizeof host / sizeof host[0], "a buffer for every block");
  cujit_buffer *x = cj_test_upload(NULL, sizeof host, CUJIT_I32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x)};
  const struct {
    unsigned threads, shared;
  } cases[] = {{1, 0},
               {max_threads, 0},
               {64, max_shared},
               {32 * (max_threads / 32 + 1), 0},
               {64, max_shared + 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    unsigned threads = cases[c].threads, shared = cases[c].shared;
    unsigned long long fit = 99;
    OK(cujit_kernel_max_cooperative_blocks(k, threads, shared, &fit));
    int runs = threads <= max_threads && shared <= max_shared;
    cr_assert_eq(fit, runs ? workers : 0, "%u threads, %u bytes: %llu blocks", threads, shared,
                 fit);
    cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
    /* 32 x n: past the block's limit of threads with each dimension within its own */
    cfg.block[0] = threads % 32 ? threads : 32, cfg.block[1] = threads % 32 ? 1 : threads / 32;
    cfg.shared_bytes = shared;
    if (runs) {
      cfg.grid[0] = (unsigned)fit;
      OK(cujit_launch_cooperative(k, &cfg, args, 1));
      cj_test_download(host, x, sizeof host);
      cr_assert_eq(host[fit], (int)(fit * threads), "%llu blocks of %u threads met", fit, threads);
    }
    cfg.grid[0] = (unsigned)fit + 1;
    cr_assert_eq(cujit_launch_cooperative(k, &cfg, args, 1), CUJIT_ERROR_LAUNCH_CONFIG,
                 "%llu blocks of %u threads, %u bytes", fit + 1, threads, shared);
    char want[256];
    if (runs)
      snprintf(want, sizeof want,
               "kernel 'meet': a cooperative launch of %llu blocks of %u threads does not fit "
               "on the CPU device at once: at most %llu such blocks are co-resident (one block "
               "per worker x %llu workers",
               fit + 1, threads, fit, workers);
    else if (threads > max_threads)
      snprintf(want, sizeof want,
               "kernel 'meet': a block of %u threads is over the CPU device's limit of %u", threads,
               max_threads);
    else
      snprintf(want, sizeof want,
               "kernel 'meet': %u bytes of dynamic shared memory is over the CPU device's limit "
               "of %u bytes per block",
               shared, max_shared);
    cr_assert(strstr(cujit_errmsg(engine), want), "wanted '%s' in: %s", want, cujit_errmsg(engine));
  }
  cujit_buffer_free(x);
}
