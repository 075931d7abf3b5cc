/*
** test_stub_attrs.c -- what the CUDA backend hands the driver for launch attributes (issue 26),
** against the stand-in driver (scripts/bench/stub_driver.c, which notes what cuLaunchKernelEx,
** cuFuncSetAttribute and cuOccupancyMaxActiveClusters are given: cujit_stub_seen;
** tests/CMakeLists.txt runs this program with it first on LD_LIBRARY_PATH, and nowhere else): the
** cluster, programmatic and priority attributes and their values; a launch without attributes
** still going to cuLaunchKernel; the cluster's occupancy asked once per shape; the non-portable
** cluster size allowed past 8 blocks; the opt-in past 48 KiB of dynamic shared memory made once
** per size; the refusals only the device decides (no cluster fits, a GPU below sm_90, a driver
** without cuLaunchKernelEx); and the arch-specific target (sm_90a) taken from an sm_90 device for
** a kernel using wgmma, setmaxnreg or the feature macros. Each case sets the stand-in's variables
** before cujit_open (every case runs in a process of its own).
*/
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

static cujit_engine *engine;
static cujit_kernel *kernel;
static cujit_buffer *out;

/* What the stand-in noted under `name` (cujit_stub_seen). */
static long seen(const char *name) {
  return cj_stub_seen("cujit_stub_seen", name);
}

/* The engine on the stand-in's device 0 with a kernel built for it (NVRTC, no GPU needed). */
static void open_with(const char *variable, const char *value) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  if (variable) setenv(variable, value, 1);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cj_stub_device(engine);
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  EXPECT_OK(
      cujit_kernel_define(engine, "fill(float *x)", "x[threadIdx.x] = 1.0f;", NULL, NULL, &kernel));
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_F32, &out));
}

static void close_engine(void) {
  cujit_buffer_free(out);
  cujit_kernel_free(kernel);
  cujit_close(engine);
  engine = NULL;
  unsetenv("CUJIT_STUB_CLUSTERS");
  unsetenv("CUJIT_STUB_CC");
  unsetenv("CUJIT_STUB_ABSENT");
  cj_scratch_remove();
}

static cujit_launch_config config(unsigned grid, unsigned cluster_x, unsigned cluster_y) {
  cujit_launch_config c = CUJIT_LAUNCH_CONFIG_INIT;
  c.grid[0] = grid, c.grid[1] = 2, c.block[0] = 128;
  c.cluster[0] = cluster_x, c.cluster[1] = cluster_y;
  return c;
}

static cujit_status launch(const cujit_launch_config *c) {
  cujit_arg args[] = {CUJIT_ARG_BUF(out)};
  return cujit_launch(kernel, c, args, 1);
}

TestSuite(stub_attrs, .fini = close_engine);

Test(stub_attrs, the_driver_gets_the_cluster_programmatic_and_priority_attributes) {
  open_with(NULL, NULL);
  cujit_launch_config c = config(8, 4, 2);
  c.programmatic = 1, c.priority = -2;
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuLaunchKernelEx"), 1);
  cr_expect_eq(seen("attrs"), 3);
  cr_expect_eq(seen("grid.x"), 8);
  cr_expect_eq(seen("cluster.x"), 4);
  cr_expect_eq(seen("cluster.y"), 2);
  cr_expect_eq(seen("cluster.z"), 1, "an unset axis is 1");
  cr_expect_eq(seen("programmatic"), 1);
  cr_expect_eq(seen("priority"), -2);
  c = config(6, 0, 0), c.priority = 3; /* the priority alone */
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuLaunchKernelEx"), 2);
  cr_expect_eq(seen("attrs"), 1);
  cr_expect_eq(seen("priority"), 3);
  cr_expect_eq(seen("cluster.x"), 0);
  long plain = seen("cuLaunchKernel");
  c = config(5, 0, 0); /* no attribute: the plain path, cuLaunchKernel */
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuLaunchKernel"), plain + 1);
  cr_expect_eq(seen("cuLaunchKernelEx"), 2);
  cr_expect_eq(seen("grid.x"), 5);
}

Test(stub_attrs, the_occupancy_of_a_cluster_is_asked_once_per_shape) {
  open_with(NULL, NULL);
  cujit_launch_config c = config(8, 2, 1);
  for (int i = 0; i < 3; i++) EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuOccupancyMaxActiveClusters"), 1);
  cr_expect_eq(seen("cuLaunchKernelEx"), 3);
  c = config(8, 4, 1); /* another cluster: asked again */
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuOccupancyMaxActiveClusters"), 2);
  cr_expect_eq(seen("non_portable"), 0, "8 blocks or fewer need no permission");
  c = config(16, 8, 2); /* 16 blocks: past the portable 8 */
  EXPECT_OK(launch(&c));
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("non_portable"), 1);
  cr_expect_eq(seen("cluster.x"), 8);
  EXPECT_OK(cujit_device_reset(cj_stub_device(engine))); /* the kernel's function made anew: */
  cujit_buffer_free(out);                                /* (the buffer was lost with it) */
  EXPECT_OK(cujit_buffer_alloc(engine, 4096, CUJIT_F32, &out));
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("non_portable"), 2, "the new function is allowed large clusters too");
  cr_expect_eq(seen("cuOccupancyMaxActiveClusters"), 4);
}

Test(stub_attrs, dynamic_shared_memory_past_48_kib_is_allowed_once_per_size) {
  open_with(NULL, NULL);
  cujit_launch_config c = config(4, 0, 0);
  c.shared_bytes = 48 * 1024;
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("max_dynamic_shared"), 0, "48 KiB needs no opt-in");
  c.shared_bytes = 64 * 1024;
  for (int i = 0; i < 3; i++) EXPECT_OK(launch(&c));
  cr_expect_eq(seen("max_dynamic_shared"), 1);
  cr_expect_eq(seen("max_dynamic_shared.value"), 64 * 1024);
  cr_expect_eq(seen("shared"), 64 * 1024);
  c.cluster[0] = 2, c.shared_bytes = 96 * 1024; /* with attributes too */
  EXPECT_OK(launch(&c));
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("max_dynamic_shared"), 2);
  cr_expect_eq(seen("max_dynamic_shared.value"), 96 * 1024);
  cr_expect_eq(seen("shared"), 96 * 1024);
  c.shared_bytes = 232448 + 1; /* past the stand-in's opt-in limit */
  EXPECT_FAIL(launch(&c), CUJIT_ERROR_LAUNCH_CONFIG,
              "232449 bytes of dynamic shared memory is over device 0's "
              "limit of 232448 bytes per block");
}

/* With the stand-in's occupancy answer `clusters` (CUJIT_STUB_CLUSTERS), a cluster of `size` blocks
** is refused as not fitting, after asking the device once, and nothing is launched. */
static void expect_no_cluster_fits(const char *clusters, unsigned size) {
  open_with("CUJIT_STUB_CLUSTERS", clusters);
  cujit_launch_config c = config(8, size, 1);
  char want[256];
  snprintf(want, sizeof want,
           "kernel 'fill': not one cluster of %u x 1 x 1 blocks of 128 threads with 0 bytes of "
           "dynamic shared memory fits on device 0 at once",
           size);
  EXPECT_FAIL(launch(&c), CUJIT_ERROR_LAUNCH_CONFIG, want);
  cr_expect_eq(seen("cuOccupancyMaxActiveClusters"), 1, "the device was asked once");
  cr_expect_eq(seen("cuLaunchKernelEx"), 0, "nothing launched");
}

Test(stub_attrs, no_cluster_that_fits_is_refused) {
  expect_no_cluster_fits("0", 2);
}

/* The occupancy query refusing the size itself (CUDA_ERROR_INVALID_CLUSTER_SIZE, its count left
** unwritten) means no cluster of that size fits: the same refusal, not a launch. */
Test(stub_attrs, a_cluster_size_the_device_does_not_take_is_refused) {
  expect_no_cluster_fits("-1", 4);
}

Test(stub_attrs, clusters_and_programmatic_launches_are_refused_below_sm_90) {
  open_with("CUJIT_STUB_CC", "8");
  cujit_launch_config c = config(8, 2, 1);
  EXPECT_FAIL(launch(&c), CUJIT_ERROR_UNSUPPORTED,
              "device 0 is sm_80: thread block clusters need sm_90 or "
              "newer (Hopper)");
  c = config(8, 0, 0), c.programmatic = 1;
  EXPECT_FAIL(launch(&c), CUJIT_ERROR_UNSUPPORTED,
              "device 0 is sm_80: programmatic dependent launches need "
              "sm_90 or newer");
  c = config(8, 0, 0), c.priority = -1; /* a priority is no Hopper feature */
  EXPECT_OK(launch(&c));
  cr_expect_eq(seen("cuLaunchKernelEx"), 1);
}

Test(stub_attrs, a_driver_without_cuLaunchKernelEx_refuses_the_attributes_only) {
  open_with("CUJIT_STUB_ABSENT", "cuLaunchKernelEx");
  cujit_launch_config c = config(8, 2, 1);
  EXPECT_FAIL(launch(&c), CUJIT_ERROR_UNSUPPORTED,
              "launch attributes (clusters, programmatic launches) "
              "needs the driver's cuLaunchKernelEx");
  c = config(8, 0, 0);
  EXPECT_OK(launch(&c));
}

/* --- the arch-specific target (sm_90a) taken for a kernel that needs it ------------------------
 */

/* The PTX of kernel `body` defined with no arch (the stand-in device's), or with `arch`. */
static char *ptx_of(const char *body, const char *arch) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  cujit_kernel *k = NULL;
  EXPECT_OK(cujit_kernel_define(engine, "use(float *x)", body, NULL, &o, &k));
  char *ptx = strdup(cujit_program_ptx(cujit_kernel_program(k), NULL));
  cujit_kernel_free(k);
  cr_assert_not_null(ptx);
  return ptx;
}

static void expect_target(const char *body, const char *target) {
  char *ptx = ptx_of(body, NULL);
  cr_expect(strstr(ptx, target), "the PTX of '%s' lacks '%s':\n%.300s", body, target, ptx);
  free(ptx);
}

static const char setmaxnreg[] = "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\");\n"
                                 "x[threadIdx.x] = 1.0f;\n";

Test(stub_attrs, a_kernel_using_arch_specific_instructions_is_compiled_for_sm_90a_there) {
  open_with(NULL, NULL); /* an sm_90 device */
  expect_target(setmaxnreg, ".target sm_90a\n");
  expect_target("asm volatile(\"wgmma.fence.sync.aligned;\");\nx[0] = 2.0f;\n", ".target sm_90a\n");
  /* a test of the feature macro takes the target that defines it: its branch is compiled */
  const char guarded[] = "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\nx[0] = 3.0f;\n"
                         "#else\nx[0] = 5.0f;\n#endif\n";
  char *ptx = ptx_of(guarded, NULL);
  cr_expect(strstr(ptx, ".target sm_90a\n"), "%.300s", ptx);
  /* 3.0f and 5.0f as NVVM writes them, a float constant or its bits stored as an integer */
  cr_expect(strstr(ptx, "0f40400000") || strstr(ptx, "1077936128"),
            "3.0f, the sm_90a branch, is stored:\n%s", ptx);
  cr_expect(!strstr(ptx, "0f40A00000") && !strstr(ptx, "1084227584"),
            "5.0f, the other branch, is not:\n%s", ptx);
  free(ptx);
  expect_target("x[threadIdx.x] = 1.0f;\n", ".target sm_90\n"); /* nothing specific: sm_90 */
  /* an arch given is compiled as given: setmaxnreg is refused for plain sm_90 */
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_kernel *k = NULL;
  EXPECT_FAIL(cujit_kernel_define(engine, "use(float *x)", setmaxnreg, NULL, &o, &k),
              CUJIT_ERROR_COMPILE, "not supported on .target 'sm_90'");
  cr_expect_null(k);
}

Test(stub_attrs, a_device_below_sm_90_gets_no_arch_specific_target) {
  open_with("CUJIT_STUB_CC", "8"); /* an sm_80 device: no sm_80a exists to take */
  cujit_kernel *k = NULL;
  EXPECT_FAIL(cujit_kernel_define(engine, "use(float *x)", setmaxnreg, NULL, NULL, &k),
              CUJIT_ERROR_COMPILE, "not supported on .target 'sm_80'");
  expect_target("x[threadIdx.x] = 1.0f;\n", ".target sm_80\n");
}
