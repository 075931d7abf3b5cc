/*
** test_profilers.c -- line info and resources through the C API, with NVRTC and no GPU:
** CUJIT_LINEINFO set between two defines of the same kernel in one engine gives the second one
** line info (the memo key and the cache keys see the variable) and unset gives the first back; a
** value not understood refuses the compile, naming it; the kept body exists while the engine is
** open; cujit_kernel_resources_get reads ptxas's report and refuses what it cannot read, each
** refusal saying what to do, and reads it again when the same compile runs in another engine
** (NVRTC's own cache, on a GPU machine, must not hand back a binary without it);
** cujit_kernel_attributes' spills are -1 on the CPU device; without a
** profiler NVTX ranges stay off (nothing registered, nothing recorded: tests/sh/test_nvtx.sh has
** them with one).
*/
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/trace.h"
#include "fixture.h"

static void setup(void) {
  unsetenv("CUJIT_CACHE");
  unsetenv("CUJIT_LINEINFO");
  unsetenv("CUJIT_DEVICE");
  cj_fixture_open();
}

static void teardown(void) {
  unsetenv("CUJIT_LINEINFO");
  cj_fixture_close();
}

TestSuite(profilers, .init = setup, .fini = teardown, .timeout = 300);

static const char sig[] = "lk(float *x, int n)";
static const char body[] = "int i = threadIdx.x;\n"
                           "if (i < n)\n"
                           "  x[i] = 2.0f * x[i];\n";

/* The PTX of kernel k's program. */
static const char *ptx_of(cujit_kernel *k) {
  return cujit_program_ptx(cujit_kernel_program(k), NULL);
}

/* The path of the .file entry that names the kept body (".../lk.cu"), in `out`; 0 when none. */
static int body_file(const char *ptx, char *out, size_t len) {
  for (const char *p = strstr(ptx, ".file"); p; p = strstr(p + 1, ".file")) {
    const char *q = strchr(p, '"'), *e = q ? strchr(q + 1, '"') : NULL;
    if (e && e - q > 6 && memcmp(e - 6, "/lk.cu", 6) == 0) {
      snprintf(out, len, "%.*s", (int)(e - q - 1), q + 1);
      return 1;
    }
  }
  return 0;
}

Test(profilers, lineinfo_variable_enters_the_keys_within_one_engine) {
  cujit_kernel *plain, *lined, *again;
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, &sm90, &plain), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cr_assert_null(strstr(ptx_of(plain), ".file"), "no line info asked: no .file");
  setenv("CUJIT_LINEINFO", "on", 1);
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, &sm90, &lined), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  char path[4096];
  cr_assert(body_file(ptx_of(lined), path, sizeof path),
            "CUJIT_LINEINFO=on: the same kernel again has line info naming lk.cu:\n%s",
            ptx_of(lined));
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "the kept body %s exists", path);
  cr_assert(strstr(ptx_of(lined), ".loc") != NULL);
  unsetenv("CUJIT_LINEINFO");
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, &sm90, &again), CUJIT_OK);
  cr_assert_null(strstr(ptx_of(again), ".file"), "unset again: the program without line info");
}

Test(profilers, lineinfo_value_not_understood_refuses_the_compile) {
  setenv("CUJIT_LINEINFO", "2", 1);
  cujit_kernel *k = NULL;
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, &sm90, &k),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert_null(k);
  cr_assert(strstr(cujit_errmsg(engine), "CUJIT_LINEINFO='2' is not understood: it takes 1, on, "
                                         "yes or true (on), 0, off, no or false (off), or unset; "
                                         "it turns line_info on for every compile") != NULL,
            "%s", cujit_errmsg(engine));
}

Test(profilers, resources_from_the_report) {
  const char *flags[] = {"--ptxas-options=-v"};
  cujit_compile_options o = sm90;
  o.extra_flags = flags, o.extra_flag_count = 1;
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, "bounded(float *x)",
                                   "__shared__ float s[64];\n"
                                   "s[threadIdx.x & 63] = x[threadIdx.x];\n__syncthreads();\n"
                                   "x[threadIdx.x] = s[(threadIdx.x + 1) & 63];\n",
                                   NULL, &o, &k),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cr_assert_eq(cujit_kernel_resources_get(k, &a), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_gt(a.registers, 0);
  cr_assert_eq(a.static_shared_bytes, 256, "64 floats of static shared memory: %d",
               a.static_shared_bytes);
  cr_assert_eq(a.spill_store_bytes, 0);
  cr_assert_eq(a.spill_load_bytes, 0);
  cr_assert_eq(a.local_bytes, 0);
  cr_assert_eq(a.max_threads_per_block, 1024);
  cr_assert_eq(a.binary_version, 90);
  cr_assert_gt(a.ptx_version, 0);
  cr_assert_eq(a.const_bytes, -1, "not reported");
}

/* The report again from a second engine with no disk cache: the same compile once more. On a GPU
** machine NVRTC 12.9+ keeps the CUBIN in the driver's compute cache (~/.nv/ComputeCache) and hands
** it back without running ptxas, so without its report, unless cujit says --no-cache when the
** report is asked for. Without a driver NVRTC keeps nothing, and both compiles run ptxas. */
Test(profilers, resources_again_when_nvrtc_has_the_binary) {
  const char *flags[] = {"-Xptxas=-O3", "-Xptxas=-v"};
  cujit_compile_options o = sm90;
  o.extra_flags = flags, o.extra_flag_count = 2;
  static const char again_sig[] = "again(float *x)";
  static const char again_body[] = "__shared__ float s[32];\n"
                                   "s[threadIdx.x & 31] = x[threadIdx.x];\n__syncthreads();\n"
                                   "x[threadIdx.x] = s[(threadIdx.x + 3) & 31];\n";
  for (int round = 0; round < 2; round++) {
    cujit_engine *other;
    setenv("CUJIT_CACHE", "off", 1);
    cr_assert_eq(cujit_open(&other), CUJIT_OK);
    unsetenv("CUJIT_CACHE");
    cujit_kernel *k;
    cr_assert_eq(cujit_kernel_define(other, again_sig, again_body, NULL, &o, &k), CUJIT_OK, "%s",
                 cujit_errmsg(other));
    cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
    cr_expect_eq(cujit_kernel_resources_get(k, &a), CUJIT_OK, "compile %d: %s", round + 1,
                 cujit_errmsg(other));
    cr_expect_eq(a.static_shared_bytes, 128, "compile %d: 32 floats of static shared memory: %d",
                 round + 1, a.static_shared_bytes);
    cujit_close(other);
  }
}

Test(profilers, resources_refusals_say_what_to_do) {
  cujit_kernel *k, *generic;
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, &sm90, &k), CUJIT_OK);
  cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cr_assert_eq(cujit_kernel_resources_get(k, &a), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "kernel 'lk': its compile made no resource report") &&
                strstr(cujit_errmsg(engine), "--ptxas-options=-v"),
            "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_define(engine, "gen(T *x)", "x[0] = 1;", NULL, &sm90, &generic),
               CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_resources_get(generic, &a), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "is generic: specialise it first"), "%s",
            cujit_errmsg(engine));
  cujit_kernel_attributes unsized = {0};
  cr_assert_eq(cujit_kernel_resources_get(k, &unsized), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "CUJIT_KERNEL_ATTRIBUTES_INIT"), "%s",
            cujit_errmsg(engine));
  cr_assert_eq(cujit_kernel_resources_get(NULL, &a), CUJIT_ERROR_INVALID_ARGUMENT);
}

Test(profilers, cpu_device_has_no_spills) {
  cr_assert_eq(cujit_set_device(engine, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_kernel *k;
  cr_assert_eq(cujit_kernel_define(engine, sig, body, NULL, NULL, &k), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  cujit_kernel_attributes a = CUJIT_KERNEL_ATTRIBUTES_INIT;
  cr_assert_eq(cujit_kernel_attributes_get(k, &a), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(a.spill_store_bytes, -1);
  cr_assert_eq(a.spill_load_bytes, -1);
  cr_assert_eq(cujit_kernel_resources_get(k, &a), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "compiled for the CPU device"), "%s",
            cujit_errmsg(engine));
}

/* No injection library (what a profiler sets): NVTX answered nothing at the engine's opening, so
** ranges are off and a kernel's name is not registered (the launch path's NULL). */
Test(profilers, without_a_profiler_nothing_is_traced) {
  if (getenv("NVTX_INJECTION64_PATH"))
    cr_skip_test("a profiler is attached (NVTX_INJECTION64_PATH=%s)",
                 getenv("NVTX_INJECTION64_PATH"));
  cr_assert_eq(cj_trace_on, 0, "ranges recorded with no profiler");
  cr_assert_null(cj_trace_name("lk"), "a name registered with no profiler");
}
