/*
** test_toolbox.c -- issue 16's C API on a device (a GPU, or the CPU device without one): buffer
** views in copies, fills and launches and their life after the viewed buffer is freed; managed
** memory through its host address (on the CPU device, given back to the heap when freed); mapped
** and registered host memory; a program's globals with the dtype and shape of their declarations,
** and only its own variables; cooperative launches (as many blocks as fit at once: on the CPU
** device one per worker) and IPC handles (refused on the CPU device; parsed on both).
*/
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "gpu.h"
#include "heap.h"

TestSuite(toolbox, .init = cj_fixture_open, .fini = cj_fixture_close);

#define OK(call) cr_assert_eq((call), CUJIT_OK, "%s", cujit_errmsg(engine))

static int on_cpu(void) {
  cujit_device *dev;
  char arch[16];
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_arch(dev, arch, sizeof arch));
  return strcmp(arch, "cpu") == 0;
}

static cujit_kernel *define(const char *sig, const char *body) {
  cujit_kernel *k;
  OK(cujit_kernel_define(engine, sig, body, NULL, NULL, &k));
  return k;
}

Test(toolbox, views_copy_fill_and_launch_into_their_part_of_the_buffer) {
  CJ_NEED_DEVICE(engine);
  float host[64];
  for (int i = 0; i < 64; i++) host[i] = (float)i;
  cujit_buffer *b = cj_test_upload(host, sizeof host, CUJIT_F32), *v = NULL, *vv = NULL;
  OK(cujit_buffer_view(b, 10 * sizeof(float), 20 * sizeof(float), CUJIT_F32, &v));
  cr_assert_eq(cujit_buffer_size(v), 20 * sizeof(float));
  cr_assert_eq(cujit_buffer_devptr(v), cujit_buffer_devptr(b) + 10 * sizeof(float));
  OK(cujit_memset(v, 0, 0, 2 * sizeof(float), NULL));
  cujit_kernel *k = define("add1(float *y, int n)", "int i = threadIdx.x; if (i < n) y[i] += 1;");
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 32;
  cujit_arg args[] = {CUJIT_ARG_BUF(v), CUJIT_ARG_I(20)};
  OK(cujit_launch(k, &cfg, args, 2));
  float got[64];
  cj_test_download(got, b, sizeof got);
  for (int i = 0; i < 64; i++) {
    float want = i < 10 || i >= 30 ? (float)i : i < 12 ? 1.0f : (float)i + 1;
    cr_assert_eq(got[i], want, "element %d: %g, want %g", i, got[i], want);
  }
  OK(cujit_buffer_view(v, 4, 8, CUJIT_F32, &vv));
  cr_assert_eq(cujit_buffer_view(b, 60 * sizeof(float), 8 * sizeof(float), CUJIT_F32, &v),
               CUJIT_ERROR_INVALID_ARGUMENT, "a view past the end");
  cr_assert(strstr(cujit_errmsg(engine), "does not fit"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_memcpy_dtod(vv, 0, b, 10 * sizeof(float), 8, NULL),
               CUJIT_ERROR_INVALID_ARGUMENT, "overlapping views of one buffer are refused");
  cujit_buffer_free(b);
  cr_assert_eq(cujit_buffer_devptr(vv), 0, "a view of a freed buffer is lost");
  cr_assert_eq(cujit_memcpy_dtoh(got, vv, 0, 8, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "freed"), "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(vv), CUJIT_ARG_I(2)}, 2),
               CUJIT_ERROR_ARGUMENT);
  cujit_buffer_free(vv);
}

/* A buffer keeps every view made of it, not only the latest: freeing it loses them all, and a
** view freed before it leaves the others in place. */
Test(toolbox, every_view_of_a_freed_buffer_is_lost_not_only_the_latest) {
  CJ_NEED_DEVICE(engine);
  enum { VIEWS = 4 };
  int host[64] = {0};
  cujit_buffer *b = cj_test_upload(host, sizeof host, CUJIT_I32), *v[VIEWS];
  for (int i = 0; i < VIEWS; i++)
    OK(cujit_buffer_view(b, (size_t)i * 16 * sizeof(int), 16 * sizeof(int), CUJIT_I32, &v[i]));
  cujit_buffer_free(v[2]);                         /* out of the middle of the buffer's list */
  OK(cujit_memset(v[0], 0, 0, sizeof(int), NULL)); /* the others still work */
  OK(cujit_memset(v[3], 0, 0, sizeof(int), NULL));
  cujit_buffer_free(b);
  int x;
  for (int i = 0; i < VIEWS; i++) {
    if (i == 2) continue;
    cr_assert_eq(cujit_buffer_devptr(v[i]), 0, "view %d of a freed buffer still has an address", i);
    cr_assert_eq(cujit_memcpy_dtoh(&x, v[i], 0, sizeof x, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
                 "view %d of a freed buffer was read", i);
    cr_assert(strstr(cujit_errmsg(engine), "a view of memory that has been freed"), "view %d: %s",
              i, cujit_errmsg(engine));
    cujit_buffer_free(v[i]);
  }
}

Test(toolbox, managed_memory_is_written_by_the_host_and_the_device) {
  CJ_NEED_DEVICE(engine);
  enum { N = 1000 };
  cujit_buffer *m;
  OK(cujit_buffer_alloc_managed(engine, N * sizeof(int), CUJIT_I32, &m));
  int *p = cujit_buffer_host_ptr(m);
  cr_assert(p, "a managed buffer has a host address");
  for (int i = 0; i < N; i++) p[i] = i;
  OK(cujit_buffer_advise(m, CUJIT_ADVISE_PREFERRED_DEVICE));
  OK(cujit_buffer_prefetch(m, 0, NULL));
  cujit_kernel *k = define("twice(int *x, int n)",
                           "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2;");
  OK(cujit_launch_n(k, N, NULL, (cujit_arg[]){CUJIT_ARG_BUF(m), CUJIT_ARG_I(N)}, 2));
  cujit_device *dev;
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_synchronize(dev));
  for (int i = 0; i < N; i++) cr_assert_eq(p[i], 2 * i, "p[%d] = %d", i, p[i]);
  cujit_buffer *d = cj_test_upload(NULL, 16, CUJIT_I32);
  cr_assert_null(cujit_buffer_host_ptr(d), "device memory has no host address");
  cr_assert_eq(cujit_buffer_prefetch(d, 1, NULL), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "not managed memory"), "%s", cujit_errmsg(engine));
  cujit_buffer_free(d);
  cujit_buffer_free(m);
  if (on_cpu()) { /* its managed memory is the host's heap: a free gives it back at once */
    enum { BIG = 64 << 20 };
    size_t before = cj_test_heap_bytes();
    OK(cujit_buffer_alloc_managed(engine, BIG, CUJIT_DTYPE_NONE, &m));
    size_t held = cj_test_heap_bytes();
    cr_assert_geq(held, before + BIG, "the heap holds the managed buffer");
    cujit_buffer_free(m);
    cr_assert_leq(cj_test_heap_bytes(), held - BIG,
                  "freed, not held until the device's reset or close");
  }
}

Test(toolbox, mapped_and_registered_host_memory_is_used_by_kernels) {
  CJ_NEED_DEVICE(engine);
  enum { N = 256 };
  cujit_host_buffer *h, *r;
  cujit_buffer *view, *rview;
  OK(cujit_host_alloc(engine, N * sizeof(float), &h));
  OK(cujit_host_map(h, CUJIT_F32, &view));
  cr_assert_eq(cujit_buffer_host_ptr(view), cujit_host_ptr(h));
  float *own = aligned_alloc(4096, 4096); /* page-aligned, as older drivers required */
  OK(cujit_host_register(engine, own, N * sizeof(float), &r));
  OK(cujit_host_map(r, CUJIT_F32, &rview));
  cujit_kernel *k = define("iota(float *x, int n)",
                           "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = i;");
  OK(cujit_launch_n(k, N, NULL, (cujit_arg[]){CUJIT_ARG_BUF(view), CUJIT_ARG_I(N)}, 2));
  OK(cujit_launch_n(k, N, NULL, (cujit_arg[]){CUJIT_ARG_BUF(rview), CUJIT_ARG_I(N)}, 2));
  cujit_device *dev;
  OK(cujit_current_device(engine, &dev));
  OK(cujit_device_synchronize(dev));
  const float *mapped = cujit_host_ptr(h);
  for (int i = 0; i < N; i++) {
    cr_assert_eq(mapped[i], (float)i);
    cr_assert_eq(own[i], (float)i);
  }
  cujit_host_free(h);
  cr_assert_eq(cujit_buffer_devptr(view), 0, "the view is lost with its host buffer");
  cujit_buffer_free(view);
  cujit_buffer_free(rview);
  cujit_host_free(r); /* unregisters; the memory is ours */
  free(own);
}

/* Each name must be no global of the program (NOT_FOUND, the buffer left NULL). */
static void refuse_globals(cujit_program *p, const char *const *names) {
  for (; *names; names++) {
    cujit_buffer *none = NULL;
    cr_assert_eq(cujit_program_global(p, *names, &none, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND,
                 "'%s' is not a global of the program", *names);
    cr_assert_null(none);
  }
}

Test(toolbox, a_programs_globals_have_their_declared_dtype_and_shape) {
  CJ_NEED_DEVICE(engine);
  cujit_program *p;
  OK(cujit_program_compile(engine,
                           "__constant__ double coeffs[2][4];\n"
                           "__device__ unsigned short level;\n"
                           "extern \"C\" __global__ void use(double *y) {\n"
                           "  y[threadIdx.x] = coeffs[threadIdx.x / 4][threadIdx.x % 4] + level;\n"
                           "}\n",
                           "globals.cu", NULL, &p));
  cujit_buffer *g, *lv;
  cujit_dtype dtype;
  int ndim;
  size_t shape[3];
  OK(cujit_program_global(p, "coeffs", &g, &dtype, &ndim, shape));
  cr_assert_eq(dtype, CUJIT_F64);
  cr_assert_eq(ndim, 2);
  cr_assert(shape[0] == 2 && shape[1] == 4 && shape[2] == 1);
  cr_assert_eq(cujit_buffer_size(g), 64);
  OK(cujit_program_global(p, "level", &lv, &dtype, NULL, NULL));
  cr_assert_eq(dtype, CUJIT_U16);
  double c[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
  unsigned short level = 10;
  OK(cujit_memcpy_htod(g, 0, c, sizeof c, NULL));
  OK(cujit_memcpy_htod(lv, 0, &level, sizeof level, NULL));
  cujit_kernel *k;
  OK(cujit_program_kernel(p, "use", &k));
  cujit_buffer *out = cj_test_upload(NULL, sizeof y, CUJIT_F64);
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = 1, cfg.block[0] = 8;
  OK(cujit_launch(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(out)}, 1));
  cj_test_download(y, out, sizeof y);
  for (int i = 0; i < 8; i++) cr_assert_eq(y[i], c[i] + 10, "y[%d] = %g", i, y[i]);
  cujit_buffer *none = NULL;
  cr_assert_eq(cujit_program_global(p, "missing", &none, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "'missing'"), "%s", cujit_errmsg(engine));
  cr_assert(strstr(cujit_errmsg(engine), "name one as the source does ('taps', 'ns::taps')"),
            "the message says what to do: %s", cujit_errmsg(engine));
  /* Only the program's own variables: not its kernel (a function), not the linker's marks
  ** (__bss_start, _edata, _end: untyped symbols of every shared object, so of the CPU device's
  ** program), not a variable of the C or C++ library, which the CPU device's program links
  ** (_ZSt4cout is std::cout). */
  const char *not_globals[] = {
      "use",     "cjk_use", "cj_cpu_abi_version", "__bss_start", "_edata", "_end",
      "environ", "stdout",  "_ZSt4cout",          NULL};
  refuse_globals(p, not_globals);
  /* A second program, loaded after the first: not the first's variables either. */
  cujit_program *other;
  OK(cujit_program_compile(engine,
                           "__device__ int mine;\n"
                           "extern \"C\" __global__ void touch() { mine = 1; }\n",
                           "other.cu", NULL, &other));
  refuse_globals(other, (const char *[]){"coeffs", "level", "environ", "_ZSt4cout", NULL});
  OK(cujit_program_global(other, "mine", &none, &dtype, NULL, NULL));
  cr_assert_eq(dtype, CUJIT_I32);
  cujit_buffer_free(none);
  cujit_program_free(other);
  cujit_buffer_free(g);
  cujit_buffer_free(lv);
  cujit_buffer_free(out);
  cujit_kernel_free(k);
  cujit_program_free(p);
}

/* A GPU program's globals are the variables its PTX declares: a kernel's name, a name that
** only starts like a variable's, or one only mentioned in code is NOT_FOUND before the driver is
** asked (on the H200 cuLibraryGetGlobal did not answer NOT_FOUND for a kernel's name). Compiled
** for sm_90 with NVRTC, so it runs without a GPU: there the declared ones get past the filter and
** fail for want of a device (not NOT_FOUND); on a GPU they are found. */
Test(toolbox, a_gpu_programs_globals_are_the_variables_its_ptx_declares) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = "sm_90";
  cujit_program *p;
  cujit_status st =
      cujit_program_compile(engine,
                            "__constant__ float taps[9];\n"
                            "__device__ int counter = 3;\n"
                            "__device__ unsigned long long wide;\n"
                            "__device__ float helper(float x) { return x * taps[0]; }\n"
                            "extern \"C\" __global__ void use(float *y) {\n"
                            "  y[0] = helper(y[0]) + counter + wide;\n"
                            "}\n",
                            "ptx_globals.cu", &o, &p);
  if (st == CUJIT_ERROR_NO_NVRTC) cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
  OK(st);
  const char *absent[] = {"use",      "helper", "_Z6helperf", "tap",   "taps9",  "count",
                          "counterx", "ounter", "y",          "float", "global", NULL};
  refuse_globals(p, absent);
  cujit_buffer *none = NULL;
  cr_assert_eq(cujit_program_global(p, "use", &none, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND);
  cr_assert(strstr(cujit_errmsg(engine), "no __device__ or __constant__ variable 'use'"), "%s",
            cujit_errmsg(engine));
  cr_assert_eq(cujit_program_global(p, "", &none, NULL, NULL, NULL), CUJIT_ERROR_NOT_FOUND);
  const char *present[] = {"taps", "counter", "wide", NULL};
  for (const char *const *n = present; *n; n++) {
    cujit_buffer *g = NULL;
    st = cujit_program_global(p, *n, &g, NULL, NULL, NULL);
    cr_assert_neq(st, CUJIT_ERROR_NOT_FOUND, "'%s' is declared: %s", *n, cujit_errmsg(engine));
    if (st == CUJIT_OK) cujit_buffer_free(g); /* on an sm_90 GPU */
  }
  cujit_program_free(p);
}

Test(toolbox, cooperative_launches_run_as_many_blocks_as_fit_at_once) {
  CJ_NEED_DEVICE(engine);
  cujit_kernel *k = define("one(int *y)", "y[blockIdx.x] = 1;");
  cujit_buffer *y = cj_test_upload(NULL, 4 * sizeof(int), CUJIT_I32);
  unsigned long long fit = 0;
  OK(cujit_kernel_max_cooperative_blocks(k, 32, 0, &fit));
  /* The CPU device fits one block per worker (its "multiprocessors"): a block waiting at the grid
  ** barrier holds its worker. */
  if (on_cpu()) {
    cujit_device *dev;
    cujit_device_info info = CUJIT_DEVICE_INFO_INIT;
    OK(cujit_current_device(engine, &dev));
    OK(cujit_device_info_get(dev, &info));
    cr_assert_eq(fit, (unsigned long long)info.multiprocessors);
  }
  cr_assert(fit >= 1);
  unsigned blocks = fit < 4 ? (unsigned)fit : 4;
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = blocks, cfg.block[0] = 32;
  OK(cujit_launch_cooperative(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(y)}, 1));
  int got[4];
  cj_test_download(got, y, sizeof got);
  for (unsigned i = 0; i < blocks; i++) cr_assert_eq(got[i], 1);
  cfg.grid[0] = (unsigned)fit + 1;
  cr_assert_eq(cujit_launch_cooperative(k, &cfg, (cujit_arg[]){CUJIT_ARG_BUF(y)}, 1),
               CUJIT_ERROR_LAUNCH_CONFIG);
  cr_assert(strstr(cujit_errmsg(engine), "does not fit"), "%s", cujit_errmsg(engine));
  cujit_buffer_free(y);
  cujit_kernel_free(k);
}

Test(toolbox, ipc_handles_are_checked_and_refused_on_the_cpu_device) {
  CJ_NEED_DEVICE(engine);
  cujit_buffer *b = NULL;
  cr_assert_eq(cujit_buffer_ipc_open(engine, "cujit-ipc-mem:f32:16:zz", &b),
               CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "not a cujit IPC handle"), "%s", cujit_errmsg(engine));
  cujit_buffer *plain = cj_test_upload(NULL, 16, CUJIT_F32);
  char text[CUJIT_IPC_HANDLE_MAX];
  cr_assert_eq(cujit_buffer_ipc_handle(plain, text), CUJIT_ERROR_INVALID_ARGUMENT);
  cr_assert(strstr(cujit_errmsg(engine), "allocated shareable"), "%s", cujit_errmsg(engine));
  cujit_buffer_free(plain);
  cujit_status st = cujit_buffer_alloc_shareable(engine, 16, CUJIT_F32, &b);
  if (on_cpu()) {
    cr_assert_eq(st, CUJIT_ERROR_UNSUPPORTED);
    cr_assert(strstr(cujit_errmsg(engine), "IPC needs a GPU"), "%s", cujit_errmsg(engine));
    /* A well-formed handle (another process's GPU memory) is refused too, with no buffer made. */
    char handle[200] = "cujit-ipc-mem:f32:16:";
    memset(handle + strlen(handle), 'a', 128);
    b = (cujit_buffer *)1;
    cr_assert_eq(cujit_buffer_ipc_open(engine, handle, &b), CUJIT_ERROR_UNSUPPORTED);
    cr_assert(strstr(cujit_errmsg(engine), "IPC needs a GPU"), "%s", cujit_errmsg(engine));
    cr_assert_null(b);
    return;
  }
  OK(st);
  OK(cujit_buffer_ipc_handle(b, text));
  cr_assert(strncmp(text, "cujit-ipc-mem:f32:16:", 21) == 0, "%s", text);
  cujit_buffer_free(b); /* opening it needs another process: tests/lua/test_lua_managed.lua */
}
