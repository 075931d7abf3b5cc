/*
** test_launch_attrs.c -- launch attributes (issue 26) on a GPU, or on the CPU device without one:
** a cluster reduction through distributed shared memory (cooperative_groups::this_cluster and
** <cujit/cluster.h>) checked against a plain one-block-per-range reduction, a programmatic
** dependent pair whose second kernel waits with cudaGridDependencySynchronize(), an attributed
** launch captured into a graph and replayed, thousands of cluster barriers in a row replayed from
** a graph (a waiter once took the last block to arrive for one that returned), and every refusal
** with its message. The CPU device gets 8 workers (CUJIT_CPU_THREADS), so that clusters of up to 8
** blocks run there at once.
** What the CUDA backend hands the driver is checked against the stand-in driver
** (test_stub_attrs.c).
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "fixture.h"
#include "gpu.h"

static void open_with_workers(void) {
  setenv("CUJIT_CPU_THREADS", "8", 1); /* read when the CPU device is made */
  cj_fixture_open();
}

TestSuite(launch_attrs, .init = open_with_workers, .fini = cj_fixture_close);

#define OK(call) EXPECT_OK(call)

static void synchronize(void) {
  cujit_device *dev;
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_synchronize(dev));
}

enum { BLOCK = 128 };

/* The kernels' preamble: a block's values in shared memory summed into part[0], seen by all. */
#define TREE_SUM                                                                                   \
  "__device__ void tree_sum(unsigned *part) {\n"                                                   \
  "  __syncthreads();\n"                                                                           \
  "  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {\n"                                         \
  "    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"                         \
  "    __syncthreads();\n"                                                                         \
  "  }\n"                                                                                          \
  "}\n"
#define CG_PREAMBLE "#include <cooperative_groups.h>\n" TREE_SUM
#define LIB_PREAMBLE "#include <cujit/cluster.h>\n" TREE_SUM

/* Each block sums its BLOCK elements; block 0 of each cluster adds its siblings' sums, read from
** their shared memory. */
static const char cg_sum_body[] = "namespace cg = cooperative_groups;\n"
                                  "cg::cluster_group cluster = cg::this_cluster();\n"
                                  "__shared__ unsigned part[128];\n"
                                  "unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                  "part[threadIdx.x] = i < n ? x[i] : 0u;\n"
                                  "tree_sum(part);\n"
                                  "cluster.sync();\n"
                                  "if (cluster.block_rank() == 0 && threadIdx.x == 0) {\n"
                                  "  unsigned total = 0;\n"
                                  "  for (unsigned r = 0; r < cluster.num_blocks(); r++)\n"
                                  "    total += cluster.map_shared_rank(part, (int)r)[0];\n"
                                  "  out[blockIdx.x / cluster.dim_blocks().x] = total;\n"
                                  "}\n"
                                  "cluster.sync();\n";

/* The same through <cujit/cluster.h>, its dynamic shared memory this time. */
static const char lib_sum_body[] = "extern __shared__ unsigned part[];\n"
                                   "unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                   "part[threadIdx.x] = i < n ? x[i] : 0u;\n"
                                   "tree_sum(part);\n"
                                   "cujit::cluster_sync();\n"
                                   "if (cujit::cluster_rank() == 0 && threadIdx.x == 0) {\n"
                                   "  unsigned total = 0;\n"
                                   "  for (unsigned r = 0; r < cujit::cluster_blocks(); r++)\n"
                                   "    total += cujit::cluster_shared(part, r)[0];\n"
                                   "  out[blockIdx.x / cujit::cluster_blocks()] = total;\n"
                                   "}\n"
                                   "cujit::cluster_sync();\n";

/* The plain reduction: one block per partial, looping over its `per` elements. */
static const char plain_sum_body[] = "__shared__ unsigned part[128];\n"
                                     "unsigned total = 0;\n"
                                     "for (unsigned j = threadIdx.x; j < per; j += blockDim.x) {\n"
                                     "  unsigned i = blockIdx.x * per + j;\n"
                                     "  total += i < n ? x[i] : 0u;\n"
                                     "}\n"
                                     "part[threadIdx.x] = total;\n"
                                     "tree_sum(part);\n"
                                     "if (threadIdx.x == 0) out[blockIdx.x] = part[0];\n";

static cujit_kernel *define(const char *sig, const char *body, const char *preamble) {
  cujit_kernel *k;
  OK(cujit_kernel_define(engine, sig, body, preamble, NULL, &k));
  return k;
}

static cujit_launch_config config(unsigned grid, unsigned block, unsigned cluster) {
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = grid, c.block[0] = block, c.cluster[0] = cluster;
  return c;
}

/* Sums of `cluster` * BLOCK elements each, by the clustered kernel and by the plain one. */
static void check_cluster_sums(cujit_kernel *clustered, unsigned cluster, unsigned shared) {
  enum { N = 8 * 8 * BLOCK - 37 }; /* a ragged end: the last block is partly empty */
  static unsigned x[N];
  for (unsigned i = 0; i < N; i++) x[i] = (unsigned)(cj_test_rand64() % 1000u);
  unsigned blocks = (N + BLOCK - 1) / BLOCK, sums = blocks / cluster;
  cr_assert_eq(blocks % cluster, 0);
  cujit_buffer *in = cj_test_upload(x, sizeof x, CUJIT_U32);
  cujit_buffer *a = cj_test_upload(NULL, sums * 4, CUJIT_U32);
  cujit_buffer *b = cj_test_upload(NULL, sums * 4, CUJIT_U32);
  OK(cujit_memset(a, 0, 0xff, sums * 4, NULL));
  cujit_arg args[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(a), CUJIT_ARG_I(N)};
  cujit_launch_config c = config(blocks, BLOCK, cluster);
  c.shared_bytes = shared;
  OK(cujit_launch(clustered, &c, args, 3));
  cujit_kernel *plain = define("plain_sum(const unsigned *x, unsigned *out, unsigned n, "
                               "unsigned per)",
                               plain_sum_body, TREE_SUM);
  cujit_arg plain_args[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(b), CUJIT_ARG_I(N),
                            CUJIT_ARG_I(cluster * BLOCK)};
  cujit_launch_config p = config(sums, BLOCK, 0);
  OK(cujit_launch(plain, &p, plain_args, 4));
  unsigned got[64], want[64];
  cr_assert_leq(sums, 64);
  cj_test_download(got, a, sums * 4);
  cj_test_download(want, b, sums * 4);
  for (unsigned s = 0; s < sums; s++) {
    unsigned host = 0;
    for (unsigned i = s * cluster * BLOCK; i < (s + 1) * cluster * BLOCK && i < N; i++)
      host += x[i];
    cr_expect_eq(want[s], host, "plain sum %u: %u, host %u", s, want[s], host);
    cr_expect_eq(got[s], want[s], "cluster of %u, sum %u: %u, plain reduction %u", cluster, s,
                 got[s], want[s]);
  }
  cujit_buffer_free(in), cujit_buffer_free(a), cujit_buffer_free(b);
  cujit_kernel_free(plain);
}

Test(launch_attrs, cluster_reduction_through_distributed_shared_memory) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k =
      define("cg_sum(const unsigned *x, unsigned *out, unsigned n)", cg_sum_body, CG_PREAMBLE);
  for (unsigned cluster = 2; cluster <= 8; cluster *= 2) check_cluster_sums(k, cluster, 0);
  cujit_kernel_free(k);
}

Test(launch_attrs, cluster_reduction_through_the_device_library) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k =
      define("lib_sum(const unsigned *x, unsigned *out, unsigned n)", lib_sum_body, LIB_PREAMBLE);
  check_cluster_sums(k, 4, BLOCK * 4);
  cujit_kernel_free(k);
}

Test(launch_attrs, a_programmatic_pair_waits_for_its_first_kernel) {
  CJ_NEED_DEVICE(engine);
  enum { N = 1 << 16 };
  cujit_kernel *first = define("first(unsigned *x, unsigned n)",
                               "unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "if (i < n) x[i] = 3u * i + 1u;\n"
                               "cudaTriggerProgrammaticLaunchCompletion();\n",
                               NULL);
  cujit_kernel *second = define("second(const unsigned *x, unsigned *y, unsigned n)",
                                "unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                "cudaGridDependencySynchronize();\n"
                                "if (i < n) y[i] = x[i] * 2u;\n",
                                NULL);
  cujit_buffer *x = cj_test_upload(NULL, N * 4, CUJIT_U32),
               *y = cj_test_upload(NULL, N * 4, CUJIT_U32);
  cujit_stream *s;
  OK(cujit_stream_create(engine, &s));
  for (int round = 0; round < 3; round++) {
    OK(cujit_memset(y, 0, 0, N * 4, NULL));
    synchronize();
    cujit_launch_config c = config(N / 256, 256, 0);
    c.stream = s;
    cujit_arg a1[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_I(N)};
    OK(cujit_launch(first, &c, a1, 2));
    c.programmatic = 1, c.priority = -1;
    cujit_arg a2[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(y), CUJIT_ARG_I(N)};
    OK(cujit_launch(second, &c, a2, 3));
    OK(cujit_stream_synchronize(s));
    static unsigned got[N];
    cj_test_download(got, y, sizeof got);
    for (unsigned i = 0; i < N; i++)
      if (got[i] != (3u * i + 1u) * 2u)
        cr_assert_fail("round %d, y[%u] = %u, want %u", round, i, got[i], (3u * i + 1u) * 2u);
  }
  cujit_stream_free(s);
  cujit_buffer_free(x), cujit_buffer_free(y);
  cujit_kernel_free(first), cujit_kernel_free(second);
}

Test(launch_attrs, an_attributed_launch_is_captured_and_replayed) {
  CJ_NEED_DEVICE(engine);
  enum { N = 4 * BLOCK };
  cujit_kernel *k =
      define("cg_sum(const unsigned *x, unsigned *out, unsigned n)", cg_sum_body, CG_PREAMBLE);
  unsigned x[N], got[2] = {0, 0};
  for (unsigned i = 0; i < N; i++) x[i] = i;
  cujit_buffer *in = cj_test_upload(x, sizeof x, CUJIT_U32),
               *out = cj_test_upload(NULL, 8, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(in), CUJIT_ARG_BUF(out), CUJIT_ARG_I(N)};
  cujit_stream *s;
  OK(cujit_stream_create(engine, &s));
  cujit_launch_config c = config(4, BLOCK, 2);
  c.stream = s;
  OK(cujit_launch(k, &c, args, 3)); /* loaded before the capture */
  OK(cujit_stream_synchronize(s));
  OK(cujit_memset(out, 0, 0, 8, NULL));
  synchronize();
  cujit_graph *g;
  OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  OK(cujit_launch(k, &c, args, 3));
  OK(cujit_capture_end(s, &g));
  OK(cujit_graph_replay(g, s, 2));
  OK(cujit_stream_synchronize(s));
  cj_test_download(got, out, sizeof got);
  unsigned want0 = (2 * BLOCK - 1) * (2 * BLOCK) / 2,
           want1 = (4 * BLOCK - 1) * (4 * BLOCK) / 2 - want0;
  cr_expect_eq(got[0], want0, "cluster 0 of the replay: %u, want %u", got[0], want0);
  cr_expect_eq(got[1], want1, "cluster 1 of the replay: %u, want %u", got[1], want1);
  cujit_graph_free(g);
  cujit_stream_free(s);
  cujit_buffer_free(in), cujit_buffer_free(out);
  cujit_kernel_free(k);
}

/* Many cluster barriers in a row, replayed from a graph: each round, every block puts a value of
** the round in its shared memory, meets its sibling, adds the sibling's value and meets it again
** (so that the value is not overwritten while read). The CPU device's 8 workers on fewer cores
** are stopped at every point of the barrier, among them the moment between the last block's
** arrival and its release, which a waiting sibling once took for a block that had returned. */
Test(launch_attrs, many_cluster_barriers_meet_in_every_replay) {
  CJ_NEED_DEVICE(engine);
  enum { GRID = 8, ROUNDS = 3000, REPLAYS = 6 };
  cujit_kernel *k = define("meet_often(unsigned *out, unsigned rounds)",
                           "namespace cg = cooperative_groups;\n"
                           "cg::cluster_group cluster = cg::this_cluster();\n"
                           "__shared__ unsigned mine[1];\n"
                           "unsigned sum = 0, other = cluster.block_rank() ^ 1u;\n"
                           "for (unsigned r = 0; r < rounds; r++) {\n"
                           "  if (threadIdx.x == 0) mine[0] = r + blockIdx.x;\n"
                           "  cluster.sync();\n"
                           "  sum += *cluster.map_shared_rank(mine, (int)other);\n"
                           "  cluster.sync();\n"
                           "}\n"
                           "if (threadIdx.x == 0) out[blockIdx.x] = sum;\n",
                           "#include <cooperative_groups.h>\n");
  cujit_buffer *out = cj_test_upload(NULL, GRID * 4, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(out), CUJIT_ARG_I(ROUNDS)};
  cujit_stream *s;
  OK(cujit_stream_create(engine, &s));
  cujit_launch_config c = config(GRID, 32, 2);
  c.stream = s;
  OK(cujit_launch(k, &c, args, 2)); /* loads it, which a capture cannot */
  cujit_graph *g;
  OK(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED));
  OK(cujit_launch(k, &c, args, 2));
  OK(cujit_capture_end(s, &g));
  OK(cujit_graph_replay(g, s, REPLAYS));
  OK(cujit_stream_synchronize(s));
  unsigned got[GRID];
  cj_test_download(got, out, sizeof got);
  for (unsigned b = 0; b < GRID; b++) {
    unsigned want = ROUNDS * (ROUNDS - 1u) / 2u + ROUNDS * (b ^ 1u);
    cr_expect_eq(got[b], want, "block %u: %u, want %u", b, got[b], want);
  }
  cujit_graph_free(g);
  cujit_stream_free(s);
  cujit_buffer_free(out);
  cujit_kernel_free(k);
}

/* A kernel compiled with __cluster_dims__(2, 1, 1): each block writes the cluster's size, its
** rank and its sibling's block index, read from the sibling's shared memory. */
static cujit_kernel *cluster_dims_kernel(void) {
  static const char src[] =
      "#include <cooperative_groups.h>\n"
      "namespace cg = cooperative_groups;\n"
      "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) dims(unsigned *x) {\n"
      "  __shared__ unsigned mine[1];\n"
      "  cg::cluster_group c = cg::this_cluster();\n"
      "  if (threadIdx.x == 0) mine[0] = blockIdx.x;\n"
      "  c.sync();\n"
      "  if (threadIdx.x == 0)\n"
      "    x[blockIdx.x] = c.num_blocks() * 10000 + c.block_rank() * 1000 +\n"
      "                    *c.map_shared_rank(mine, (int)(c.block_rank() ^ 1u));\n"
      "  c.sync();\n"
      "}\n";
  cujit_program *p;
  cujit_kernel *k;
  OK(cujit_program_compile(engine, src, "dims.cu", NULL, &p));
  OK(cujit_program_kernel(p, "dims", &k));
  cujit_program_free(p);
  return k;
}

Test(launch_attrs, a_kernels_cluster_dims_are_honoured_by_a_plain_launch) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = cluster_dims_kernel();
  cujit_buffer *x = cj_test_upload(NULL, 64, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x)};
  cujit_launch_config c = config(4, 32, 0);
  OK(cujit_launch(k, &c, args, 1));
  unsigned got[4];
  cj_test_download(got, x, sizeof got);
  for (unsigned b = 0; b < 4; b++) {
    unsigned want = 2 * 10000 + (b % 2) * 1000 + (b ^ 1u);
    cr_expect_eq(got[b], want, "block %u: %u, want %u", b, got[b], want);
  }
  cujit_buffer_free(x);
  cujit_kernel_free(k);
}

/* Each refused launch: its status and the words of its message; nothing runs. */
static void expect_refused(cujit_kernel *k, const cujit_launch_config *c, int cooperative,
                           cujit_status want, const char *words) {
  cujit_buffer *x = cj_test_upload(NULL, 4096, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x), CUJIT_ARG_BUF(x), CUJIT_ARG_I(16)};
  cujit_status st =
      cooperative ? cujit_launch_cooperative(k, c, args, 3) : cujit_launch(k, c, args, 3);
  cr_expect_eq(st, want, "%s: got %s (%s)", words, cujit_status_string(st), cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), words), "message '%s' lacks '%s'", cujit_errmsg(engine),
            words);
  cujit_buffer_free(x);
}

Test(launch_attrs, refusals_name_the_value_and_the_limit) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k =
      define("cg_sum(const unsigned *x, unsigned *out, unsigned n)", cg_sum_body, CG_PREAMBLE);
  cujit_launch_config c = config(6, BLOCK, 4);
  expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG,
                 "grid.x = 6 is not a multiple of cluster.x = 4");
  c = config(2, BLOCK, 2), c.cluster[1] = 3;
  expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG,
                 "grid.y = 1 is not a multiple of cluster.y = 3");
  c = config(17, BLOCK, 17);
  expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG,
                 "cluster.x = 17; a cluster has 1 to 16 blocks on each axis");
  c = config(8, BLOCK, 8), c.grid[1] = 4, c.cluster[1] = 4;
  expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG, "a cluster of 8 x 4 x 1 = 32 blocks is over");
  c = config(4, BLOCK, 2);
  expect_refused(k, &c, 1, CUJIT_ERROR_UNSUPPORTED,
                 "a cooperative launch takes no launch attributes");
  c = config(4, BLOCK, 0), c.programmatic = 1;
  expect_refused(k, &c, 1, CUJIT_ERROR_UNSUPPORTED, "programmatic = 1");
  cujit_device *dev;
  cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_info_get(dev, &info));
  c = config(2, BLOCK, 2), c.shared_bytes = (unsigned)info.max_shared_per_block_optin + 1;
  char words[128];
  snprintf(words, sizeof words, "%u bytes of dynamic shared memory is over", c.shared_bytes);
  expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG, words);
  if (cj_test_on_cpu(engine)) { /* 8 workers: a cluster of 16 cannot run at once */
    c = config(16, BLOCK, 16);
    expect_refused(k, &c, 0, CUJIT_ERROR_LAUNCH_CONFIG,
                   "a cluster of 16 blocks cannot run on the CPU device, which runs a cluster's "
                   "blocks at once, one per worker, and has 8 workers");
  }
  cujit_kernel_free(k);
}

/* --- the GPU's code, compiled by NVRTC for sm_90 without a GPU ---------------------------------
 */

TestSuite(sm90_code, .init = cj_fixture_open, .fini = cj_fixture_close);

/* The PTX of `body` as a signature-and-body kernel for sm_90 (or sm_80), which must hold `want`. */
static void expect_ptx(const char *arch, const char *sig, const char *body, const char *preamble,
                       const char *want) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK) {
    if (cj_test_gpu_required()) cr_assert_fail("no NVRTC: %s", cujit_errmsg(engine));
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  }
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  cujit_kernel *k;
  OK(cujit_kernel_define(engine, sig, body, preamble, &o, &k));
  const char *ptx = cujit_program_ptx(cujit_kernel_program(k), NULL);
  cr_assert_not_null(ptx);
  cr_expect(strstr(ptx, want), "%s: the PTX of '%s' lacks '%s'", arch, sig, want);
  cujit_kernel_free(k);
}

Test(sm90_code, programmatic_launch_calls_are_griddepcontrol_on_sm_90) {
  const char body[] = "cudaGridDependencySynchronize();\n"
                      "x[threadIdx.x] += 1.0f;\n"
                      "cudaTriggerProgrammaticLaunchCompletion();\n";
  expect_ptx("sm_90", "pdl(float *x)", body, NULL, "griddepcontrol.wait");
  expect_ptx("sm_90", "pdl(float *x)", body, NULL, "griddepcontrol.launch_dependents");
  expect_ptx("sm_80", "pdl(float *x)", body, NULL, "add.f32"); /* nothing to wait for below */
}

Test(sm90_code, cluster_kernels_compile_for_sm_90) {
  expect_ptx("sm_90", "cg_sum(const unsigned *x, unsigned *out, unsigned n)", cg_sum_body,
             CG_PREAMBLE, "mapa");
  expect_ptx("sm_90", "lib_sum(const unsigned *x, unsigned *out, unsigned n)", lib_sum_body,
             LIB_PREAMBLE, "barrier.cluster.arrive");
  expect_ptx("sm_90", "lib_sum(const unsigned *x, unsigned *out, unsigned n)", lib_sum_body,
             LIB_PREAMBLE, "%cluster_ctarank");
  expect_ptx("sm_80", "lib_sum(const unsigned *x, unsigned *out, unsigned n)", lib_sum_body,
             LIB_PREAMBLE, "bar.sync"); /* a cluster of one: __syncthreads */
}

Test(sm90_code, sm_90a_is_a_target_of_its_own) {
  /* setmaxnreg exists only in the arch-specific sm_90a: refused for sm_90, so that the two are
  ** compiled, and cached, apart */
  const char body[] = "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\");\n"
                      "x[threadIdx.x] = 1.0f;\n";
  expect_ptx("sm_90a", "regs(float *x)", body, NULL, ".target sm_90a");
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_kernel *k = NULL;
  EXPECT_FAIL(cujit_kernel_define(engine, "regs(float *x)", body, NULL, &o, &k),
              CUJIT_ERROR_COMPILE, "not supported on .target 'sm_90'");
  expect_ptx("sm_90", "plain(float *x)", "x[threadIdx.x] = 1.0f;", NULL, ".target sm_90\n");
}

/* --- the CPU device's emulation: what it refuses, named (always on the CPU device) ----------- */

static void open_cpu(void) {
  open_with_workers();
  OK(cujit_set_device(engine, CUJIT_DEVICE_CPU));
}

TestSuite(cpu_clusters, .init = open_cpu, .fini = cj_fixture_close);

/* Launches `body` (a kernel of x) in 2 blocks of a cluster of 2 and expects the fault `words`. */
static void expect_fault(const char *body, const char *words) {
  cujit_kernel *k = define("bad(unsigned *x)", body, CG_PREAMBLE);
  cujit_buffer *x = cj_test_upload(NULL, 1024, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x)};
  cujit_launch_config c = config(2, 32, 2);
  OK(cujit_launch(k, &c, args, 1));
  cujit_device *dev;
  OK(cujit_current_device(engine, &dev));
  EXPECT_FAIL(cujit_device_synchronize(dev), CUJIT_ERROR_DEVICE_FAULT, words);
  cujit_buffer_free(x);
  cujit_kernel_free(k);
}

Test(cpu_clusters, a_block_that_returns_before_the_cluster_barrier_is_named) {
  expect_fault("namespace cg = cooperative_groups;\n"
               "if (cg::this_cluster().block_rank() == 1) return;\n"
               "cg::this_cluster().sync();\n",
               "waits at cluster_group::sync (line 3) for a block of its cluster that returned "
               "without reaching it");
}

Test(cpu_clusters, a_rank_outside_the_cluster_is_named) {
  expect_fault("namespace cg = cooperative_groups;\n"
               "__shared__ unsigned s[32];\n"
               "cg::this_cluster().sync();\n"
               "x[threadIdx.x] = *cg::this_cluster().map_shared_rank(s, 5);\n",
               "map_shared_rank(ptr, 5): the cluster has 2 blocks (ranks 0 to 1)");
}

Test(cpu_clusters, without_a_cluster_a_block_is_a_cluster_of_one) {
  cujit_kernel *k = define("one(unsigned *x)",
                           "namespace cg = cooperative_groups;\n"
                           "__shared__ unsigned s[1];\n"
                           "s[0] = blockIdx.x + 10;\n"
                           "cg::this_cluster().sync();\n"
                           "if (threadIdx.x == 0)\n"
                           "  x[blockIdx.x] = cg::this_cluster().num_blocks() * 1000 +\n"
                           "                  cg::this_cluster().block_rank() * 100 +\n"
                           "                  *cg::this_cluster().map_shared_rank(s, 0);\n",
                           CG_PREAMBLE);
  cujit_buffer *x = cj_test_upload(NULL, 12, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x)};
  cujit_launch_config c = config(3, 32, 0);
  OK(cujit_launch(k, &c, args, 1));
  unsigned got[3];
  cj_test_download(got, x, sizeof got);
  for (unsigned b = 0; b < 3; b++) cr_expect_eq(got[b], 1000 + b + 10, "block %u: %u", b, got[b]);
  cujit_buffer_free(x);
  cujit_kernel_free(k);
}

Test(cpu_clusters, cluster_dims_off_a_kernel_is_refused_saying_what_to_do) {
  cujit_program *p = NULL;
  EXPECT_FAIL(cujit_program_compile(engine,
                                    "__device__ void __cluster_dims__(2, 1, 1) helper() {}\n"
                                    "extern \"C\" __global__ void k(unsigned *x) { x[0] = 1; }\n",
                                    "cluster_dims.cu", NULL, &p),
              CUJIT_ERROR_COMPILE,
              "__cluster_dims__ is supported on the CPU device only on a kernel of the program");
  cujit_program_free(p);
}

Test(cpu_clusters, a_launch_must_match_the_kernels_cluster_dims) {
  cujit_kernel *k = cluster_dims_kernel();
  cujit_buffer *x = cj_test_upload(NULL, 64, CUJIT_U32);
  cujit_arg args[] = {CUJIT_ARG_BUF(x)};
  cujit_launch_config c = config(3, 32, 0);
  EXPECT_FAIL(cujit_launch(k, &c, args, 1), CUJIT_ERROR_LAUNCH_CONFIG,
              "kernel 'dims': grid.x = 3 is not a multiple of its __cluster_dims__ x = 2");
  c = config(4, 32, 4);
  EXPECT_FAIL(cujit_launch(k, &c, args, 1), CUJIT_ERROR_LAUNCH_CONFIG,
              "kernel 'dims' has __cluster_dims__(2, 1, 1) but is launched with cluster {4, 1, 1}");
  cujit_buffer_free(x);
  cujit_kernel_free(k);
}
