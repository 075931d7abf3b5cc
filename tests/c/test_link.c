/*
** test_link.c -- the `link` compile option (compile/link.c): a program that declares extern
** __device__ functions linked with the files defining them. The NVRTC + nvJitLink cases need no
** GPU (an explicit sm_90); the launches run on the GPU, or on the CPU device without one. Each
** case runs in its own process (Criterion's), so CUJIT_NVJITLINK set in one reaches that case's
** first link alone. This file defines dlopen, which the engine linked into it calls: a case may
** make it refuse every nvJitLink, noting the paths the engine tried.
*/
#define _GNU_SOURCE /* RTLD_NEXT */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "gpu.h"

TestSuite(link, .init = cj_fixture_open, .fini = cj_fixture_close);

static int refuse_nvjitlink; /* set by a case: no nvJitLink opens, each path tried is noted */
static char tried[16][600];
static int tried_count;

void *dlopen(const char *file, int mode) {
  if (refuse_nvjitlink && file && strstr(file, "nvJitLink")) {
    if (tried_count < 16) snprintf(tried[tried_count], sizeof tried[0], "%s", file);
    tried_count++;
    return NULL;
  }
  void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  cr_assert_not_null(real, "libc's dlopen: %s", dlerror());
  return real(file, mode);
}

static const char *program = "extern __device__ float twice_plus(float x);\n"
                             "extern \"C\" __global__ void apply(float *y, int n) {\n"
                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                             "  if (i < n) y[i] = twice_plus(y[i]);\n"
                             "}\n";

/* Writes `text` to <scratch>/src/NAME and returns its path (a static buffer per slot). */
static const char *write_file(const char *name, const void *text, size_t len) {
  static char paths[8][2048];
  static int slot;
  char *path = paths[slot++ % 8], dir[1024];
  snprintf(dir, sizeof dir, "%s/src", cj_scratch);
  mkdir(dir, 0700);
  snprintf(path, 2048, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "cannot write %s", path);
  cr_assert_eq(fwrite(text, 1, len, f), len);
  fclose(f);
  return path;
}

static const char *write_text(const char *name, const char *text) {
  return write_file(name, text, strlen(text));
}

static const char *lib_defining(float add) {
  static char text[256];
  snprintf(text, sizeof text, "__device__ float twice_plus(float x) { return 2.0f * x + %.1ff; }\n",
           add);
  return text;
}

static cujit_compile_options with_link(const char *arch, const char **files, size_t n) {
  cujit_compile_options o = CUJIT_COMPILE_OPTIONS_INIT;
  o.arch = arch;
  o.link = files, o.link_count = n;
  return o;
}

static void need_nvrtc(void) {
  int v;
  if (cujit_nvrtc_version(engine, &v) != CUJIT_OK)
    cr_skip_test("no NVRTC: %s", cujit_errmsg(engine));
}

/* Skips without nvJitLink; fails instead under CUJIT_REQUIRE_GPU=1, whose run must link. */
static void need_nvjitlink(void) {
  need_nvrtc();
  void *h = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libnvJitLink.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!h && cj_test_gpu_required())
    cr_assert_fail("CUJIT_REQUIRE_GPU=1 but no nvJitLink on the loader's path");
  if (!h) cr_skip_test("no nvJitLink on the loader's path (libnvJitLink.so.13/.12)");
  dlclose(h);
}

/* The warnings of the engine, joined. */
static char warnings[8192];
static void on_warning(void *user, const char *message) {
  (void)user;
  strncat(warnings, message, sizeof warnings - strlen(warnings) - 2);
  strcat(warnings, "\n");
}

static cujit_program *compile_ok(const char *source, const cujit_compile_options *o) {
  cujit_program *p = NULL;
  cr_assert_eq(cujit_program_compile(engine, source, "k.cu", o, &p), CUJIT_OK, "%s",
               cujit_errmsg(engine));
  return p;
}

static void expect_refused(const char *source, const cujit_compile_options *o, cujit_status want,
                           const char *needle) {
  cujit_program *p = NULL;
  cujit_status st = cujit_program_compile(engine, source, "k.cu", o, &p);
  cr_expect_eq(st, want, "status %d, want %d: %s", st, want, cujit_errmsg(engine));
  cr_expect(strstr(cujit_errmsg(engine), needle), "'%s' lacks '%s'", cujit_errmsg(engine), needle);
  if (st == CUJIT_OK) cujit_program_free(p);
}

/* Launches apply over y = 0..n-1 and checks y = 2i + add. */
static void launch_and_check(cujit_program *p, float add) {
  enum { N = 1000 };
  float h[N];
  for (int i = 0; i < N; i++) h[i] = (float)i;
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "apply", &k), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_buffer *y = cj_test_upload(h, sizeof h, CUJIT_F32);
  cujit_launch_config cfg = CUJIT_LAUNCH_CONFIG_INIT;
  cfg.grid[0] = (N + 127) / 128, cfg.block[0] = 128;
  cujit_arg args[] = {CUJIT_ARG_BUF(y), CUJIT_ARG_I(N)};
  cr_assert_eq(cujit_launch(k, &cfg, args, 2), CUJIT_OK, "%s", cujit_errmsg(engine));
  cj_test_download(h, y, sizeof h);
  for (int i = 0; i < N; i++)
    cr_assert_float_eq(h[i], 2.0f * (float)i + add, 1e-4f, "y[%d] = %g", i, (double)h[i]);
  cujit_buffer_free(y);
}

/* On the GPU (nvJitLink) or, without one, the CPU device (the file compiled with the program). */
Test(link, links_an_extern_device_function_and_runs) {
  CJ_NEED_DEVICE(engine);
  const char *files[] = {write_text("lib.cu", lib_defining(1.0f))};
  cujit_compile_options o = with_link(NULL, files, 1);
  cujit_program *p = compile_ok(program, &o);
  launch_and_check(p, 1.0f);
  cujit_program_free(p);
  /* Edited: the same program and options now give the new function. */
  write_text("lib.cu", lib_defining(5.0f));
  p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 0, "an edited link file was handed the old program");
  launch_and_check(p, 5.0f);
  cujit_program_free(p);
}

/* The kernel linked and the same code compiled whole agree, on the GPU. */
Test(link, linked_and_whole_agree_on_the_gpu) {
  CJ_NEED_GPU(engine);
  need_nvjitlink();
  warnings[0] = '\0';
  cujit_set_warning_handler(engine, on_warning, NULL);
  const char *files[] = {write_text("lib.cu", lib_defining(3.0f))};
  cujit_compile_options o = with_link(NULL, files, 1);
  cujit_program *p = compile_ok(program, &o);
  cr_expect_eq(warnings[0], '\0', "linked with a warning (not by nvJitLink?): %s", warnings);
  size_t len = 0;
  cr_expect_not_null(cujit_program_cubin(p, &len), "a linked program for sm_NN has a CUBIN");
  launch_and_check(p, 3.0f);
  cujit_program_free(p);
  char whole[1024];
  snprintf(whole, sizeof whole, "%s%s", lib_defining(3.0f), program);
  p = compile_ok(whole, NULL);
  launch_and_check(p, 3.0f);
  cujit_program_free(p);
}

/* With an explicit sm_90 (no GPU needed): the cache's answers follow the files' contents. */
Test(link, an_edited_link_file_recompiles) {
  need_nvjitlink();
  const char *files[] = {write_text("lib.cu", lib_defining(1.0f))};
  cujit_compile_options o = with_link("sm_90", files, 1);
  cujit_program *p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 0);
  size_t len;
  cr_expect_not_null(cujit_program_cubin(p, &len));
  const char *ptx = cujit_program_ptx(p, &len);
  cr_assert_not_null(ptx);
  cr_expect(strstr(ptx, ".entry apply"), "the linked PTX lacks the kernel:\n%s", ptx);
  cr_expect(strstr(ptx, "0f3F800000"), "the LTO-linked PTX lacks the inlined + 1.0:\n%s", ptx);
  cujit_program_free(p);
  p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 1, "the same program and file: a hit");
  cujit_program_free(p);
  write_text("lib.cu", lib_defining(4.0f));
  p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 0, "an edited link file was handed the old program");
  ptx = cujit_program_ptx(p, &len);
  cr_expect(strstr(ptx, "0f40800000"), "the new PTX lacks + 4.0:\n%s", ptx);
  cujit_program_free(p);
}

/* A program whose include cujit cannot resolve (a macro names it) is compiled without the cache:
** its key names it only, so the linked program is not cached either, and a header edit shows. */
Test(link, a_program_compiled_without_the_cache_is_not_linked_from_it) {
  need_nvjitlink();
  const char *files[] = {write_text("lib.cu", lib_defining(1.0f))};
  const char *hdr = write_text("add.h", "#define ADD 0.0f\n");
  char source[4096];
  snprintf(source, sizeof source, "#define HDR \"%s\"\n#include HDR\n%s", hdr,
           "extern __device__ float twice_plus(float x);\n"
           "extern \"C\" __global__ void apply(float *y) { y[0] = twice_plus(y[0]) + ADD; }\n");
  cujit_compile_options o = with_link("sm_90", files, 1);
  cujit_program_free(compile_ok(source, &o));
  write_text("add.h", "#define ADD 5.0f\n");
  cujit_program *p = compile_ok(source, &o);
  size_t len;
  cr_expect_eq(cujit_program_from_cache(p), 0, "a program compiled without the cache was cached");
  cr_expect(strstr(cujit_program_ptx(p, &len), "0f40A00000"), "the header's edit is not in:\n%s",
            cujit_program_ptx(p, &len));
  cujit_program_free(p);
}

/* The .cu file's LTO-IR entry (a cache entry like any CUBIN's) corrupted on disk: a new engine
** (an empty memory cache) detects it, says so, rebuilds it and links the right program. */
Test(link, a_corrupted_ltoir_entry_is_detected_and_rebuilt) {
  need_nvjitlink();
  const char *files[] = {write_text("lib.cu", lib_defining(2.0f))};
  cujit_compile_options o = with_link("sm_90", files, 1);
  cujit_program_free(compile_ok(program, &o));
  cujit_close(engine);
  /* Every entry holding LTO-IR (its magic, 0x7f4e43ed little-endian): the program's and lib.cu's.
   */
  static const unsigned char magic[] = {0xed, 0x43, 0x4e, 0x7f};
  DIR *d = opendir(cj_scratch);
  cr_assert_not_null(d);
  struct dirent *de;
  int spoiled = 0;
  while ((de = readdir(d)) != NULL) {
    if (!strstr(de->d_name, ".cjc")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", cj_scratch, de->d_name);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    for (size_t i = 0; i + 64 < n; i++)
      if (!memcmp(buf + i, magic, 4)) {
        buf[i + 40] ^= 0x5a; /* inside the LTO-IR, past its magic */
        fseek(f, (long)(i + 40), SEEK_SET);
        fwrite(buf + i + 40, 1, 1, f);
        spoiled++;
        break;
      }
    fclose(f);
  }
  closedir(d);
  cr_assert_geq(spoiled, 2, "found %d LTO-IR entries, want the program's and lib.cu's", spoiled);
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  warnings[0] = '\0';
  cujit_set_warning_handler(engine, on_warning, NULL);
  cujit_program *p = compile_ok(program, &o);
  cr_expect(strstr(warnings, "is corrupt"), "no warning of the corrupted entry: '%s'", warnings);
  size_t len;
  const char *ptx = cujit_program_ptx(p, &len);
  cr_expect(strstr(ptx, "0f40000000"), "the relinked PTX lacks + 2.0:\n%s", ptx);
  cujit_program_free(p);
  cujit_close(engine); /* rebuilt: a third engine finds every entry whole */
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  warnings[0] = '\0';
  cujit_set_warning_handler(engine, on_warning, NULL);
  p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 1);
  cr_expect_eq(warnings[0], '\0', "warned again: %s", warnings);
  cujit_program_free(p);
}

Test(link, an_undefined_symbol_is_named_with_the_files) {
  need_nvjitlink();
  const char *files[] = {write_text("other.cu", "__device__ float other(float x) { return x; }\n")};
  cujit_compile_options o = with_link("sm_90", files, 1);
  expect_refused(program, &o, CUJIT_ERROR_COMPILE,
                 "undefined symbol 'twice_plus(float)' (_Z10twice_plusf)");
  /* A name the message cannot spell as C++ (in a namespace): mangled, and said to be. */
  static const char *in_ns = "namespace ns { extern __device__ float twice_plus(float x); }\n"
                             "extern \"C\" __global__ void apply(float *y) {\n"
                             "  y[0] = ns::twice_plus(y[0]);\n"
                             "}\n";
  expect_refused(in_ns, &o, CUJIT_ERROR_COMPILE,
                 "undefined symbol '_ZN2ns10twice_plusEf' (a C++ name, mangled)");
  /* extern "C": the name as it is. */
  static const char *c_name = "extern \"C\" __device__ float twice_plus(float x);\n"
                              "extern \"C\" __global__ void apply(float *y) {\n"
                              "  y[0] = twice_plus(y[0]);\n"
                              "}\n";
  expect_refused(c_name, &o, CUJIT_ERROR_COMPILE, "undefined symbol 'twice_plus': no file");
  /* Pointers and const, read outside in. */
  static const char *ptrs = "extern __device__ float twice_plus(const float *const *p, int n);\n"
                            "extern \"C\" __global__ void apply(float *y) {\n"
                            "  y[0] = twice_plus(nullptr, 1);\n"
                            "}\n";
  expect_refused(ptrs, &o, CUJIT_ERROR_COMPILE,
                 "undefined symbol 'twice_plus(float const * const *, int)'");
  expect_refused(program, &o, CUJIT_ERROR_COMPILE, "linking 'k.cu' with ");
  expect_refused(program, &o, CUJIT_ERROR_COMPILE, "other.cu failed");
}

/* nvJitLink absent: .cu files are compiled with the program as one unit (a warning says so, once),
** anything else is refused saying nvJitLink is needed and why it is missing. */
Test(link, without_nvjitlink_cu_files_compile_as_one_unit) {
  need_nvrtc();
  setenv("CUJIT_NVJITLINK", "/nonexistent/libnvJitLink.so", 1);
  warnings[0] = '\0';
  cujit_set_warning_handler(engine, on_warning, NULL);
  const char *files[] = {write_text("lib.cu", lib_defining(6.0f))};
  cujit_compile_options o = with_link("sm_90", files, 1);
  cujit_program *p = compile_ok(program, &o);
  cr_expect(strstr(warnings, "CUJIT_NVJITLINK=/nonexistent/libnvJitLink.so could not be opened"),
            "warnings: '%s'", warnings);
  cr_expect(strstr(warnings, "compiled with each program as one unit"), "warnings: '%s'", warnings);
  size_t len;
  const char *ptx = cujit_program_ptx(p, &len);
  cr_expect(strstr(ptx, "0f40C00000"), "the PTX lacks + 6.0:\n%s", ptx);
  cujit_program_free(p);
  write_text("lib.cu", lib_defining(7.0f)); /* the fallback's key holds the file too */
  p = compile_ok(program, &o);
  cr_expect_eq(cujit_program_from_cache(p), 0);
  cr_expect(strstr(cujit_program_ptx(p, &len), "0f40E00000"), "the PTX lacks + 7.0");
  cujit_program_free(p);
  const char *ptx_files[] = {write_text("lib.ptx", "// no matter\n")};
  o = with_link("sm_90", ptx_files, 1);
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED, "link file '");
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED, "lib.ptx' (PTX) needs nvJitLink");
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED, "could not be opened");
}

/* Without CUJIT_NVJITLINK the engine looks for nvJitLink (once a process) by the loader's path,
** then under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda, each set one tried (the .13 then the .12),
** an unset or empty one skipped; found nowhere, the warning names where it looked and the files
** compile as one unit. */
static void look_for_nvjitlink(int cuda_path_empty) {
  need_nvrtc();
  unsetenv("CUJIT_NVJITLINK");
  setenv("CUDA_HOME", "/opt/cuda-home", 1);
  setenv("CUDA_PATH", cuda_path_empty ? "" : "/opt/cuda-path", 1);
  refuse_nvjitlink = 1, tried_count = 0;
  warnings[0] = '\0';
  cujit_set_warning_handler(engine, on_warning, NULL);
  const char *files[] = {write_text("lib.cu", lib_defining(5.0f))};
  cujit_compile_options o = with_link("sm_90", files, 1);
  cujit_program_free(compile_ok(program, &o));
  const char *want[] = {"libnvJitLink.so.13",
                        "libnvJitLink.so.12",
                        "/opt/cuda-home/lib64/libnvJitLink.so.13",
                        "/opt/cuda-home/lib64/libnvJitLink.so.12",
                        "/opt/cuda-path/lib64/libnvJitLink.so.13",
                        "/opt/cuda-path/lib64/libnvJitLink.so.12",
                        "/usr/local/cuda/lib64/libnvJitLink.so.13",
                        "/usr/local/cuda/lib64/libnvJitLink.so.12"};
  int n = 0;
  for (int i = 0; i < 8; i++) {
    if (cuda_path_empty && (i == 4 || i == 5)) continue;
    cr_assert(n < tried_count && strcmp(tried[n], want[i]) == 0, "path %d tried: '%s', want '%s'",
              n + 1, n < tried_count ? tried[n] : "(none)", want[i]);
    n++;
  }
  cr_assert_eq(tried_count, n, "%d paths tried, want %d", tried_count, n);
  cr_expect(strstr(warnings, "neither libnvJitLink.so.13 nor libnvJitLink.so.12 could be opened"),
            "warnings: '%s'", warnings);
  cr_expect(strstr(warnings, "compiled with each program as one unit"), "warnings: '%s'", warnings);
}

Test(link, nvjitlink_is_looked_for_in_each_place_in_turn) {
  look_for_nvjitlink(0);
}

Test(link, nvjitlink_is_not_looked_for_under_an_empty_cuda_path) {
  look_for_nvjitlink(1);
}

/* A library that is no nvJitLink (NVRTC's, say): refused naming what it lacks. */
Test(link, a_stand_in_without_the_entry_points_is_refused) {
  need_nvrtc();
  const char *stand_in = "libnvrtc.so.13";
  void *h = dlopen(stand_in, RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen(stand_in = "libnvrtc.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!h) cr_skip_test("neither libnvrtc.so.13 nor .12 on the loader's path");
  dlclose(h);
  setenv("CUJIT_NVJITLINK", stand_in, 1);
  const char *files[] = {write_text("lib.ptx", "// no matter\n")};
  cujit_compile_options o = with_link("sm_90", files, 1);
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED, "lacks nvJitLinkVersion");
}

/* Each kind of file: .ptx and .cubin made by cujit itself with -rdc=true are linked. */
Test(link, ptx_and_cubin_files_are_linked) {
  need_nvjitlink();
  char src[512];
  snprintf(src, sizeof src,
           "%sextern \"C\" __global__ void lib_k(float *y) { y[0] = twice_plus(y[0]); }\n",
           lib_defining(8.0f));
  const char *rdc[] = {"-rdc=true"};
  cujit_compile_options lo = CUJIT_COMPILE_OPTIONS_INIT;
  lo.arch = "sm_90", lo.extra_flags = rdc, lo.extra_flag_count = 1;
  cujit_program *lib = compile_ok(src, &lo);
  size_t ptx_len, cubin_len;
  const char *ptx = cujit_program_ptx(lib, &ptx_len);
  const void *cubin = cujit_program_cubin(lib, &cubin_len);
  const char *files[] = {write_file("lib.ptx", ptx, ptx_len),
                         write_file("lib.cubin", cubin, cubin_len)};
  for (size_t i = 0; i < 2; i++) {
    cujit_compile_options o = with_link("sm_90", files + i, 1);
    cujit_program *p = compile_ok(program, &o);
    size_t len;
    cr_expect_not_null(cujit_program_cubin(p, &len), "%s: no CUBIN", files[i]);
    cr_expect_eq(cujit_program_from_cache(p), 0);
    cujit_program_free(p);
    p = compile_ok(program, &o);
    cr_expect_eq(cujit_program_from_cache(p), 1, "%s: the same file again is a hit", files[i]);
    cujit_program_free(p);
  }
  /* A binary file rewritten (one byte of its text more): its contents are in the key. */
  char *edited = malloc(ptx_len + 2);
  cr_assert_not_null(edited);
  memcpy(edited, ptx, ptx_len);
  memcpy(edited + ptx_len, "\n", 2);
  write_file("lib.ptx", edited, ptx_len + 1);
  free(edited);
  cujit_compile_options again = with_link("sm_90", files, 1);
  cujit_program *q = compile_ok(program, &again);
  cr_expect_eq(cujit_program_from_cache(q), 0, "an edited .ptx file was handed the old program");
  cujit_program_free(q);
  /* PTX only (compute_90): .cu and .ltoir alone, since PTX cannot hold the others. */
  cujit_compile_options o = with_link("compute_90", files, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT, "arch 'compute_90' gives PTX only");
  cujit_program_free(lib); /* ptx and cubin were its */
  const char *cu[] = {write_text("lib.cu", lib_defining(8.0f))};
  o = with_link("compute_90", cu, 1);
  cujit_program *p = compile_ok(program, &o);
  size_t len;
  cr_expect_null(cujit_program_cubin(p, &len), "compute_90 gives no CUBIN");
  cr_expect(strstr(cujit_program_ptx(p, &len), "0f41000000"), "the PTX lacks + 8.0");
  cujit_program_free(p);
}

/* What is refused before anything compiles, each with its reason. */
Test(link, files_cujit_cannot_link_are_refused_with_the_reason) {
  need_nvrtc();
  const char *obj[] = {write_text("lib.o", "x")};
  cujit_compile_options o = with_link("sm_90", obj, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "is of no kind cujit links: name a .cu (CUDA C++ source), .ptx, .ltoir, .fatbin, "
                 ".cubin or .a file");
  const char *missing[] = {"/nonexistent/lib.cu"};
  o = with_link("sm_90", missing, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "link file '/nonexistent/lib.cu' cannot be read: No such file or directory");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/dir.cu", cj_scratch);
  mkdir(dir, 0700);
  const char *dirs[] = {dir};
  o = with_link("sm_90", dirs, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT, "dir.cu' is not a file");
  const char *empty[] = {""};
  o = with_link("sm_90", empty, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT, "link file 0 is NULL or empty");
  o = with_link("sm_90", NULL, 2);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT, "link_count is 2 but link is NULL");
  /* -dlto of the caller's own: LTO-IR, which no device loads. */
  const char *dlto[] = {"-dlto"};
  cujit_compile_options d = CUJIT_COMPILE_OPTIONS_INIT;
  d.arch = "sm_90", d.extra_flags = dlto, d.extra_flag_count = 1;
  expect_refused(program, &d, CUJIT_ERROR_INVALID_ARGUMENT,
                 "the extra flag -dlto makes LTO-IR, which no device loads");
  const char *empty_ptx[] = {write_text("empty.ptx", "")};
  o = with_link("sm_90", empty_ptx, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT, "empty.ptx' is empty");
  /* the unit's own lists given by count without their items */
  const char *lib[] = {write_text("lib.cu", lib_defining(3.0f))};
  o = with_link("sm_90", lib, 1);
  o.extra_flag_count = 2;
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "extra_flag_count is 2 but extra_flags is NULL");
  o = with_link("sm_90", lib, 1);
  o.include_dir_count = 3;
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "include_dir_count is 3 but include_dirs is NULL");
}

/* The CPU device compiles .cu files with g++ and refuses the binary kinds, saying why. */
Test(link, the_cpu_device_takes_cu_files_only) {
  if (cujit_set_device(engine, CUJIT_DEVICE_CPU) != CUJIT_OK)
    cr_skip_test("no CPU device: %s", cujit_errmsg(engine));
  cj_test_runs_on("CPU device");
  const char *files[] = {write_text("lib.cubin", "x")};
  cujit_compile_options o = with_link(NULL, files, 1);
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED, "link file '");
  expect_refused(program, &o, CUJIT_ERROR_UNSUPPORTED,
                 "lib.cubin' is a CUBIN, which the CPU device cannot link");
  const char *cu[] = {write_text("lib.cu", lib_defining(9.0f))};
  o = with_link(NULL, cu, 1);
  /* g++ is given the file's path in a #line: one it could not quote is refused */
  const char *quoted[] = {write_text("it\"s.cu", lib_defining(9.0f))};
  o = with_link(NULL, quoted, 1);
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "s.cu': cujit cannot name a file whose path holds a quote, a backslash or a "
                 "newline; rename it");
  o = with_link(NULL, cu, 1);
  o.include_dir_count = 1;
  expect_refused(program, &o, CUJIT_ERROR_INVALID_ARGUMENT,
                 "include_dir_count is 1 but include_dirs is NULL");
  o = with_link(NULL, cu, 1);
  cujit_program *p = compile_ok(program, &o);
  launch_and_check(p, 9.0f);
  cujit_program_free(p);
}
