/*
** test_oom.c -- out of memory is an error, never a crash: the N-th allocation the engine makes
** fails (the executable is linked with --wrap=malloc,calloc,realloc,aligned_alloc,
** tests/CMakeLists.txt), for
** every N until the call makes no more, and each call must then answer CUJIT_OK or
** CUJIT_ERROR_OUT_OF_HOST_MEMORY with a message, and free what it made (scripts/sanitize.sh sees a
** leak). Covers the source reader (scan.c), the PTX check (verify.c), the signature parser and
** the include resolver, whose answer must then be the same as with every allocation granted, a
** graph's instantiation on the CPU device (its plan is one aligned_alloc), and foreign memory's
** wrap, DLPack export and import (a refusal takes nothing: no release, no deleter), and a cache
** entry read back (a refusal leaves the entry empty: nothing half-made for the caller to leak; on
** disk, a refusal is a miss that says so and keeps the entry), cujit_gemm's kernels (made all
** or none: the next product works), and cujit_file_write (whole, or the file as it was).
*/
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cujit.h"
#include "cujit_dlpack.h"
#include "compile/cache.h"
#include "compile/includes.h"
#include "compile/scan.h"
#include "scratch.h"
#include "lang/signature.h"
#include "compile/verify.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t alignment, size_t n);

/* Allocations left before the failing one; -1: none fails. */
static long allocations_left = -1;
static int failed; /* an allocation was refused since the last arm() */

static int refuse(void) {
  if (allocations_left < 0) return 0;
  if (allocations_left-- > 0) return 0;
  failed = 1;
  errno = ENOMEM; /* as malloc says it */
  return 1;
}

void *__wrap_malloc(size_t n) {
  return refuse() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
  return refuse() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
  return refuse() ? NULL : __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t alignment, size_t n) {
  return refuse() ? NULL : __real_aligned_alloc(alignment, n);
}

static void arm(long n) {
  allocations_left = n, failed = 0;
}

static void disarm(void) {
  allocations_left = -1;
}

/* A source with typedefs, namespaces, a template, a declaration and its definition, two
** parameter lists of one name, comments, strings and a directive: most of the reader's paths. */
static const char *rich_src =
    "#define N 4 /* a directive */\n"
    "typedef unsigned int uint;\n"
    "using real = float;\n"
    "namespace ns { inline namespace v1 {\n"
    "template <class T, int M = 2> __global__ void tk(T *x) {}\n"
    "extern \"C\" __global__ void a(uint *u, real r);\n"
    "extern \"C\" __global__ void a(uint *u, real r) { const char *s = \"}\"; u[0] = s[0]; }\n"
    "} }\n"
    "#ifdef D\n"
    "extern \"C\" __global__ void b(double *x) {}\n"
    "#else\n"
    "extern \"C\" __global__ void b(float *x) {}\n"
    "#endif\n"
    "__global__ void cxx_kernel(int n) {}\n";

/* Runs `call` with the 0th, 1st, ... allocation refused until it completes without a refusal;
** each run must answer OK or out of memory, with a message for the latter. Returns the number of
** allocations the call makes. */
static long sweep(cujit_status (*call)(char *err, size_t len)) {
  for (long n = 0;; n++) {
    char err[1024] = "";
    arm(n);
    cujit_status st = call(err, sizeof err);
    int was_refused = failed;
    disarm();
    if (!was_refused) {
      cr_assert_eq(st, CUJIT_OK, "the call fails with no allocation refused: %s", err);
      return n;
    }
    cr_assert(st == CUJIT_OK || st == CUJIT_ERROR_OUT_OF_HOST_MEMORY,
              "allocation %ld refused: status %d: %s", n, st, err);
    if (st == CUJIT_ERROR_OUT_OF_HOST_MEMORY)
      cr_assert(strstr(err, "out of memory"), "allocation %ld refused: message '%s'", n, err);
  }
}

static cujit_status prepare(char *err, size_t len) {
  cj_scan scan;
  cujit_status st = cj_scan_prepare(rich_src, NULL, 0, &scan, err, len);
  cj_scan_free(&scan);
  return st;
}

static cujit_status prepare_given(char *err, size_t len) {
  const char *sigs[] = {"a(const float *x, int n)", "b(double2 v, __half h)"};
  cj_scan scan;
  cujit_status st = cj_scan_prepare(rich_src, sigs, 2, &scan, err, len);
  cj_scan_free(&scan);
  return st;
}

static cujit_status prepare_with_header(char *err, size_t len) {
  const char *headers[] = {"typedef unsigned short ushort;\n"
                           "extern \"C\" __global__ void h(ushort *x) {}\n"
                           "template <class T> __global__ void th(T *x) {}\n"};
  cj_scan scan;
  cujit_status st =
      cj_scan_prepare("extern \"C\" __global__ void k(ushort *x) {}\n", NULL, 0, &scan, err, len);
  if (st == CUJIT_OK) st = cj_scan_headers(&scan, headers, 1, err, len);
  cj_scan_free(&scan);
  return st;
}

static cujit_status scan_kernels(char *err, size_t len) {
  cj_signature *sigs = NULL;
  size_t n = 0;
  cujit_status st = cj_scan_kernels(rich_src, &sigs, &n, err, len);
  for (size_t i = 0; i < n; i++) cj_signature_free(&sigs[i]);
  free(sigs);
  return st;
}

static const char *ptx =
    ".visible .entry a(\n\t.param .u64 a_param_0,\n\t.param .f32 a_param_1\n)\n"
    "{\n}\n.visible .entry b(\n\t.param .u64 b_param_0\n)\n{\n}\n"
    ".global .u32 cj_variant_b_2;\n";

/* The check alone under the sweep: the scan is read with every allocation granted. */
static cujit_status verify(char *err, size_t len) {
  long left = allocations_left;
  disarm();
  cj_scan scan;
  cr_assert_eq(cj_scan_prepare(rich_src, NULL, 0, &scan, err, len), CUJIT_OK, "%s", err);
  arm(left);
  cj_signature *kernels = NULL;
  size_t n = 0;
  cujit_status st = cj_verify_ptx(&scan, ptx, &kernels, &n, err, len);
  if (st == CUJIT_OK) cr_assert_eq(n, 2, "%s", err);
  for (size_t i = 0; i < n; i++) cj_signature_free(&kernels[i]);
  free(kernels);
  cj_scan_free(&scan);
  return st;
}

static cujit_status parse(char *err, size_t len) {
  cj_signature sig;
  cujit_status st = cj_signature_parse(
      "scale(const float *__restrict__ x, T *y, int2 v, unsigned long long n)", &sig, err, len);
  if (st == CUJIT_OK) { /* complete, checked with every allocation granted */
    long left = allocations_left;
    disarm();
    cr_assert_eq(sig.nparams, 4);
    cr_assert_eq(sig.ntype_vars, 1);
    cr_assert_eq(sig.params[1].type_var, 0);
    cr_assert_str_eq(sig.params[1].type, "T *");
    allocations_left = left;
    cj_signature_free(&sig);
  }
  return st;
}

Test(oom, the_source_reader_answers_out_of_memory) {
  cr_assert_gt(sweep(prepare), 20);
  cr_assert_gt(sweep(prepare_given), 4);
  cr_assert_gt(sweep(prepare_with_header), 10);
  cr_assert_gt(sweep(scan_kernels), 20);
}

Test(oom, the_ptx_check_and_the_signature_parser_answer_out_of_memory) {
  cr_assert_gt(sweep(verify), 2);
  cr_assert_gt(sweep(parse), 4);
}

Test(oom, the_include_resolver_fails_whole_or_answers_the_same) {
  const char *dir = cj_scratch_make("oom");
  char inc_dir[600], iflag[700], name[700];
  snprintf(inc_dir, sizeof inc_dir, "%s/inc", dir);
  cr_assert_eq(mkdir(inc_dir, 0700), 0);
  cj_scratch_write("a.h", "#pragma once\n#include <b.h>\n#if __has_include(\"c.h\")\n#endif\n");
  cj_scratch_write("inc/b.h", "#include \"a.h\"\n#include <cujit/x.h>\n#define VALUE 1\n");
  cj_scratch_write("pre.h", "#define PRE 1\n");
  snprintf(iflag, sizeof iflag, "-I%s", inc_dir);
  snprintf(name, sizeof name, "%s/k.cu", dir);
  const char *flags[] = {"-I", dir, iflag, "--pre-include=pre.h"};
  const char *bnames[] = {"cujit/x.h"}, *bsrcs[] = {"#include <b.h>\n"};
  cj_include_request rq = {"#include \"a.h\"\n#include <nowhere.h>\n",
                           name,
                           flags,
                           4,
                           NULL,
                           bnames,
                           bsrcs,
                           1,
                           NULL,
                           NULL,
                           0,
                           1};
  cj_includes want, got;
  cr_assert_eq(cj_includes_resolve(&rq, &want), 1);
  cr_assert_eq(want.cacheable, 1, "%s", want.why);
  uint8_t key[16] = {1};
  char *want_manifest = cj_includes_manifest(&want, key);
  cr_assert_not_null(want_manifest);
  long n = 0;
  for (;; n++) {
    arm(n);
    int ok = cj_includes_resolve(&rq, &got);
    char *manifest = ok ? cj_includes_manifest(&got, key) : NULL;
    int was_refused = failed, complete = ok && manifest;
    disarm();
    if (ok) {
      cr_assert_eq(got.cacheable, 1, "allocation %ld refused: %s", n, got.why);
      cr_assert_str_eq(got.source, want.source, "allocation %ld refused", n);
      cr_assert_eq(got.header_count, want.header_count, "allocation %ld refused", n);
      for (size_t i = 0; i < want.header_count; i++)
        cr_assert_str_eq(got.header_sources[i], want.header_sources[i], "allocation %ld", n);
      cr_assert_eq(memcmp(got.digest, want.digest, sizeof want.digest), 0, "allocation %ld", n);
      if (manifest) cr_assert_str_eq(manifest, want_manifest, "allocation %ld refused", n);
      free(manifest);
      cj_includes_free(&got);
    }
    if (!was_refused) {
      cr_assert(complete, "the resolver fails with no allocation refused");
      break;
    }
  }
  cr_assert_gt(n, 20);
  free(want_manifest);
  cj_includes_free(&want);
  cj_scratch_remove();
}

/* The CPU device needs no compiler for a memset: the graph holds one, and each refused allocation
** of its instantiation must answer out of host memory, saying so, and leave it uninstantiated (a
** graph taken as instantiated without its plan would run nothing, or crash at its launch). */
Test(oom, a_graph_instantiated_on_the_cpu_device_fails_whole) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cujit_engine *engine;
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_eq(cujit_set_device(engine, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_stream *s;
  cujit_buffer *b;
  cr_assert_eq(cujit_stream_create(engine, &s), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_buffer_alloc(engine, 64, CUJIT_U8, &b), CUJIT_OK, "%s", cujit_errmsg(engine));
  cujit_graph *g;
  cr_assert_eq(cujit_capture_begin(s, CUJIT_CAPTURE_RELAXED), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_memset(b, 8, 7, 16, s), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_capture_end(s, &g), CUJIT_OK, "%s", cujit_errmsg(engine));
  long n = 0;
  for (;; n++) {
    arm(n);
    cujit_status st = cujit_graph_instantiate(g);
    int was_refused = failed;
    disarm();
    if (!was_refused) {
      cr_assert_eq(st, CUJIT_OK, "fails with no allocation refused: %s", cujit_errmsg(engine));
      break;
    }
    cr_assert_eq(st, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "allocation %ld refused: status %d", n, st);
    cr_assert(strstr(cujit_errmsg(engine), "out of host memory"), "allocation %ld refused: '%s'", n,
              cujit_errmsg(engine));
  }
  cr_assert_geq(n, 2, "the exec record and its plan");
  unsigned char h[64];
  cr_assert_eq(cujit_memset(b, 0, 0, sizeof h, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_graph_launch(g, s), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_stream_synchronize(s), CUJIT_OK, "%s", cujit_errmsg(engine));
  cr_assert_eq(cujit_memcpy_dtoh(h, b, 0, sizeof h, NULL), CUJIT_OK, "%s", cujit_errmsg(engine));
  for (size_t i = 0; i < sizeof h; i++)
    cr_expect_eq(h[i], i >= 8 && i < 24 ? 7 : 0, "byte %zu after the replay", i);
  cujit_graph_free(g);
  cujit_buffer_free(b);
  cujit_stream_free(s);
  cujit_close(engine);
  cj_scratch_remove();
}

/* --- foreign memory and DLPack (issue 24) ----------------------------------------------------- */

static int oom_releases, oom_deletes;
static void oom_release(void *user, uint64_t address) {
  (void)user, (void)address;
  oom_releases++;
}
static void oom_delete(DLManagedTensorVersioned *self) {
  (void)self;
  oom_deletes++;
}

/* Each refused allocation of a wrap, an export and an import answers out of host memory, saying
** so, and takes nothing: no release, no deleter, no tensor; once every allocation is granted each
** works, and its memory goes back once. */
Test(oom, wrapping_exporting_and_importing_fail_whole) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cujit_engine *engine;
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cr_assert_eq(cujit_set_device(engine, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(engine));
  static float host[16];
  int64_t shape[] = {4, 4};
  for (int what = 0; what < 3; what++) {
    cujit_buffer *made = NULL;
    if (what == 1)
      cr_assert_eq(cujit_buffer_alloc(engine, sizeof host, CUJIT_F32, &made), CUJIT_OK);
    DLManagedTensorVersioned producer;
    memset(&producer, 0, sizeof producer);
    producer.version.major = 1;
    producer.deleter = oom_delete;
    producer.dl_tensor.data = host;
    producer.dl_tensor.device.device_type = kDLCPU;
    producer.dl_tensor.ndim = 2;
    producer.dl_tensor.dtype.code = kDLFloat, producer.dl_tensor.dtype.bits = 32;
    producer.dl_tensor.dtype.lanes = 1;
    producer.dl_tensor.shape = shape;
    for (long n = 0;; n++) {
      cujit_buffer *b = NULL;
      void *tensor = NULL;
      oom_releases = oom_deletes = 0;
      arm(n);
      cujit_status st = what == 0   ? cujit_buffer_wrap(engine, (uint64_t)(uintptr_t)host,
                                                        sizeof host, CUJIT_F32, oom_release, NULL, &b)
                        : what == 1 ? cujit_buffer_to_dlpack(made, 2, shape, &tensor)
                                    : cujit_buffer_from_dlpack(engine, &producer, &b, NULL, NULL);
      int was_refused = failed;
      disarm();
      if (!was_refused) {
        cr_assert_eq(st, CUJIT_OK, "call %d fails with no allocation refused: %s", what,
                     cujit_errmsg(engine));
        if (tensor) ((DLManagedTensorVersioned *)tensor)->deleter(tensor);
        cujit_buffer_free(b);
        cr_assert_eq(oom_releases + oom_deletes, what == 1 ? 0 : 1, "call %d: given back once",
                     what);
        cr_assert_geq(n, 1, "call %d allocates", what);
        break;
      }
      cr_assert_eq(st, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "call %d, allocation %ld refused: status %d",
                   what, n, st);
      cr_assert(strstr(cujit_errmsg(engine), "out of host memory"),
                "call %d, allocation %ld refused: '%s'", what, n, cujit_errmsg(engine));
      cr_assert(b == NULL && tensor == NULL, "call %d, allocation %ld: a half-made result", what,
                n);
      cr_assert_eq(oom_releases + oom_deletes, 0, "call %d, allocation %ld: released a refusal",
                   what, n);
    }
    cujit_buffer_free(made);
  }
  cujit_close(engine);
  cj_scratch_remove();
}

/* An entry with each part (PTX, CUBIN, log, lowered names) parsed under every refusal: "out of
** memory" and an empty entry, or the entry whole. */
Test(oom, a_cache_entry_read_back_is_whole_or_empty) {
  cj_cache_key key = {{0}};
  memcpy(key.bytes, "fedcba9876543210", 16);
  unsigned char cubin[5] = {9, 8, 7, 6, 5};
  static const char names[] = "&k<int>\0_Z1kIiEvv\0";
  cj_cache_entry e = {.ptx = "// ptx\n",
                      .ptx_len = 7,
                      .cubin = cubin,
                      .cubin_len = sizeof cubin,
                      .log = "a warning",
                      .names = (char *)names,
                      .names_len = sizeof names - 1};
  size_t n;
  unsigned char *d = cj_cache_entry_encode(&key, &e, &n);
  cr_assert_not_null(d);
  for (long k = 0;; k++) {
    cj_cache_entry got;
    arm(k);
    const char *why = cj_cache_entry_parse(d, n, &key, &got);
    int was_refused = failed;
    disarm();
    if (!was_refused) {
      cr_assert_null(why, "%s", why);
      cr_assert(got.ptx_len == 7 && strcmp(got.ptx, "// ptx\n") == 0);
      cr_assert(got.cubin_len == sizeof cubin && memcmp(got.cubin, cubin, sizeof cubin) == 0);
      cr_assert_str_eq(got.log, "a warning");
      cr_assert_str_eq(cj_cache_entry_lowered(&got, "&k<int>"), "_Z1kIiEvv");
      cj_cache_entry_free(&got);
      cr_assert_geq(k, 4, "four parts, four allocations");
      break;
    }
    cr_assert_str_eq(why, "out of memory", "allocation %ld refused", k);
    cr_assert(!got.ptx && !got.cubin && !got.log && !got.names,
              "allocation %ld refused: parts left in the entry (%p %p %p %p)", k, (void *)got.ptx,
              got.cubin, (void *)got.log, (void *)got.names);
  }
  free(d);
}

/* --- a cache entry on disk read without memory ----------------------------------------------- */

static char oom_warning[2048];
static void keep_oom_warning(void *user, const char *message) {
  (void)user;
  snprintf(oom_warning, sizeof oom_warning, "%s", message);
}

/* A refused allocation says nothing about the entry on disk: every lookup under a refusal is a
** whole hit or a miss that warns "out of host memory", never "corrupt", and keeps the file; a
** lookup with memory then hits it. For an entry read whole and one read in two steps (over
** 1 MiB: cache.c's WHOLE_READ_BYTES). Each lookup is by a cache just opened, so it reads the
** disk. */
Test(oom, a_cache_entry_unread_for_want_of_memory_is_kept) {
  const char *dir = cj_scratch_make("oomcache");
  setenv("CUJIT_CACHE_DIR", dir, 1);
  cujit_engine *engine;
  cr_assert_eq(cujit_open(&engine), CUJIT_OK);
  cujit_set_warning_handler(engine, keep_oom_warning, NULL);
  size_t big = ((size_t)1 << 20) + 100;
  char *text = malloc(big + 1);
  cr_assert_not_null(text);
  memset(text, 'p', big);
  text[big] = '\0';
  for (int large = 0; large < 2; large++) {
    cj_cache_key key = {{(uint8_t)(7 + large)}};
    unsigned char cubin[3] = {1, 2, 3};
    cj_cache_entry e = {.ptx = large ? text : "// ptx\n",
                        .ptx_len = large ? big : 7,
                        .cubin = cubin,
                        .cubin_len = sizeof cubin,
                        .log = "a log"};
    cj_cache *c = cj_cache_open(engine);
    cr_assert_not_null(c);
    cj_cache_put(c, &key, &e);
    cj_cache_close(c);
    char path[1024];
    snprintf(path, sizeof path, "%s/%02x000000000000000000000000000000.cjc", dir, key.bytes[0]);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "the entry was written: %s", path);
    long k = 0, misses = 0;
    for (;; k++) {
      c = cj_cache_open(engine);
      cr_assert_not_null(c);
      cr_assert_str_eq(cj_cache_dir_path(c), dir); /* the disk set up before any refusal */
      cj_cache_entry got;
      oom_warning[0] = '\0';
      arm(k);
      int hit = cj_cache_get(c, &key, &got);
      int was_refused = failed;
      disarm();
      cj_cache_close(c);
      cr_assert_eq(stat(path, &st), 0,
                   "entry %d, allocation %ld refused: the entry is gone "
                   "(warning: '%s')",
                   large, k, oom_warning);
      cr_assert_null(strstr(oom_warning, "corrupt"), "entry %d, allocation %ld: '%s'", large, k,
                     oom_warning);
      if (hit) {
        cr_assert_eq(hit, 2, "from disk");
        cr_assert(got.ptx_len == e.ptx_len && memcmp(got.ptx, e.ptx, e.ptx_len) == 0);
        cr_assert(got.cubin_len == sizeof cubin && memcmp(got.cubin, cubin, sizeof cubin) == 0);
        cr_assert_str_eq(got.log, "a log");
        cj_cache_entry_free(&got);
      } else {
        misses++;
        cr_assert(was_refused, "entry %d: a miss with every allocation granted", large);
        cr_assert(!got.ptx && !got.cubin && !got.log, "entry %d, allocation %ld: a half entry",
                  large, k);
        cr_assert(strstr(oom_warning, "out of host memory") && strstr(oom_warning, "kept") &&
                      strstr(oom_warning, path),
                  "entry %d, allocation %ld refused: warning '%s'", large, k, oom_warning);
      }
      if (!was_refused) break;
    }
    cr_assert_geq(misses, 4, "entry %d: the read and the entry's three parts", large);
  }
  free(text);
  /* Memory only: an entry held there and not copied is kept as well, and the miss says so. */
  setenv("CUJIT_CACHE", "off", 1);
  cj_cache *c = cj_cache_open(engine);
  cr_assert_not_null(c);
  cr_assert_str_eq(cj_cache_dir_path(c), "", "the disk is off");
  cj_cache_key key = {{9}};
  cj_cache_entry e = {.ptx = "// held\n", .ptx_len = 8, .log = ""}, got;
  cj_cache_put(c, &key, &e);
  long k = 0;
  for (;; k++) {
    oom_warning[0] = '\0';
    arm(k);
    int hit = cj_cache_get(c, &key, &got);
    int was_refused = failed;
    disarm();
    if (!was_refused) {
      cr_assert_eq(hit, 1, "a memory hit once memory is granted");
      cr_assert_str_eq(got.ptx, "// held\n");
      cj_cache_entry_free(&got);
      break;
    }
    cr_assert_eq(hit, 0, "allocation %ld refused", k);
    cr_assert(strstr(oom_warning, "09000000000000000000000000000000 (held in memory) could not be "
                                  "read: out of host memory; the entry is kept"),
              "allocation %ld refused: warning '%s'", k, oom_warning);
  }
  cr_assert_geq(k, 2, "the PTX and the log");
  cj_cache_close(c);
  unsetenv("CUJIT_CACHE");
  cujit_close(engine);
  cj_scratch_remove();
}

/* cujit_open under each refused allocation: an engine, or CUJIT_ERROR_OUT_OF_HOST_MEMORY and
** *out NULL (never CUJIT_OK without an engine); the engine it gives works. */
/* A 2 x 3 by 3 x 2 product in f32: its operands and C (filled with -1) made on e's device. */
typedef struct small_product {
  cujit_buffer *a, *b, *c;
  cujit_gemm_options o;
} small_product;

static small_product small_product_make(cujit_engine *e) {
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {-1, -1, -1, -1};
  small_product p = {.o = CUJIT_GEMM_OPTIONS_INIT};
  p.o.m = 2, p.o.n = 2, p.o.k = 3;
  cr_assert_eq(cujit_buffer_alloc(e, sizeof a, CUJIT_F32, &p.a), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_buffer_alloc(e, sizeof b, CUJIT_F32, &p.b), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_buffer_alloc(e, sizeof c, CUJIT_F32, &p.c), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_htod(p.a, 0, a, sizeof a, NULL), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_htod(p.b, 0, b, sizeof b, NULL), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_htod(p.c, 0, c, sizeof c, NULL), CUJIT_OK, "%s", cujit_errmsg(e));
  return p;
}

/* The product computed again, every allocation granted, and C read back: the product's. */
static void small_product_check(cujit_engine *e, small_product *p, long n) {
  const float want[4] = {4, 5, 10, 11};
  float c[4];
  cr_assert_eq(cujit_gemm(p->a, p->b, p->c, &p->o, NULL), CUJIT_OK,
               "after allocation %ld refused: %s", n, cujit_errmsg(e));
  cr_assert_eq(cujit_memcpy_dtoh(c, p->c, 0, sizeof c, NULL), CUJIT_OK, "%s", cujit_errmsg(e));
  for (int i = 0; i < 4; i++)
    cr_assert_eq(c[i], want[i], "after allocation %ld refused: C[%d] is %g, want %g", n, i, c[i],
                 want[i]);
  cujit_buffer_free(p->a), cujit_buffer_free(p->b), cujit_buffer_free(p->c);
}

/* cujit_gemm's kernels are made all or none (gemm.c): each refused allocation of an engine's first
** product answers out of host memory, saying so, and the same engine's next product, every
** allocation granted, makes them again and is right. (A kernel kept from a set whose later kernel
** failed would pass for the whole set.) The disk cache is filled first, so that every try loads
** the compiled program instead of running the C++ compiler. Under AddressSanitizer every 16th
** allocation is refused: the whole walk (some 1700 tries) took over 10 minutes there. */
#ifdef __SANITIZE_ADDRESS__
#define GEMM_OOM_STRIDE 16
#else
#define GEMM_OOM_STRIDE 1
#endif
Test(oom, a_gemm_fails_whole_and_the_next_one_works) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  cujit_engine *e;
  cr_assert_eq(cujit_open(&e), CUJIT_OK);
  cr_assert_eq(cujit_set_device(e, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(e));
  small_product p = small_product_make(e);
  small_product_check(e, &p, -1);
  cujit_close(e);
  long n = 0;
  for (;; n += GEMM_OOM_STRIDE) {
    cr_assert_eq(cujit_open(&e), CUJIT_OK);
    cr_assert_eq(cujit_set_device(e, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(e));
    p = small_product_make(e);
    arm(n);
    cujit_status st = cujit_gemm(p.a, p.b, p.c, &p.o, NULL);
    int was_refused = failed;
    disarm();
    if (st != CUJIT_OK) {
      cr_assert_eq(st, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "allocation %ld refused: status %d (%s)", n,
                   st, cujit_errmsg(e));
      cr_assert(strstr(cujit_errmsg(e), "memory"), "allocation %ld refused: '%s'", n,
                cujit_errmsg(e)); /* its own words ("out of host memory", "free some memory") */
    }
    small_product_check(e, &p, n);
    cujit_close(e);
    if (!was_refused) break;
  }
  cr_assert_gt(n, 3, "the first product made %ld allocations", n);
}

Test(oom, an_engine_opens_whole_or_not_at_all) {
  setenv("CUJIT_CACHE_DIR", cj_scratch_make("cache"), 1);
  long n = 0;
  for (;; n++) {
    cujit_engine *e = (cujit_engine *)1;
    arm(n);
    cujit_status st = cujit_open(&e);
    int was_refused = failed;
    disarm();
    if (st == CUJIT_OK) {
      cr_assert_not_null(e, "allocation %ld refused: CUJIT_OK without an engine", n);
      cujit_buffer *b = NULL; /* it works: the CPU device allocates */
      cr_assert_eq(cujit_set_device(e, CUJIT_DEVICE_CPU), CUJIT_OK, "%s", cujit_errmsg(e));
      cr_assert_eq(cujit_buffer_alloc(e, 64, CUJIT_U8, &b), CUJIT_OK, "%s", cujit_errmsg(e));
      cujit_buffer_free(b);
      cujit_close(e);
    } else {
      cr_assert_eq(st, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "allocation %ld refused: status %d", n, st);
      cr_assert_null(e, "allocation %ld refused: an engine given with the failure", n);
    }
    if (!was_refused) break;
  }
  cr_assert_gt(n, 2, "cujit_open made %ld allocations", n);
}

/* `text` as the whole of file `path`. */
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  cr_assert_geq(fputs(text, f), 0);
  cr_assert_eq(fclose(f), 0);
}

/* The entries of directory `dir`, "." and ".." left out. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "%s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* cujit_file_write (a new file, and one replaced) under each allocation refused in turn: written
** whole, or refused saying why with what was there as it was, and no temporary file left beside. */
Test(oom, a_file_write_is_whole_or_leaves_the_file_as_it_was) {
  const char *dir = cj_scratch_make("files");
  char path[600], other[600];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  snprintf(other, sizeof other, "%s/new.txt", dir);
  write_text(path, "old");
  static const char data[] = "the new contents";
  long n = 0;
  for (;; n++) {
    remove(other);
    arm(n);
    cujit_status replaced = cujit_file_write(NULL, path, data, sizeof data - 1);
    cujit_status created = cujit_file_write(NULL, other, data, sizeof data - 1);
    int was_refused = failed;
    disarm();
    const char *files[] = {path, other};
    cujit_status got[] = {replaced, created};
    for (int i = 0; i < 2; i++) {
      char back[64] = "";
      FILE *r = fopen(files[i], "r");
      if (r) {
        back[fread(back, 1, sizeof back - 1, r)] = '\0';
        fclose(r);
      }
      if (got[i] == CUJIT_OK) {
        cr_assert_str_eq(back, data, "allocation %ld refused: %s not written whole", n, files[i]);
        continue;
      }
      cr_assert_eq(got[i], CUJIT_ERROR_IO, "allocation %ld refused: status %d", n, got[i]);
      if (i == 0)
        cr_assert_str_eq(back, "old", "allocation %ld refused: the file replaced is not as it was",
                         n);
      else
        cr_assert_null(r, "allocation %ld refused: the new file made anyway", n);
    }
    /* nothing but the two files (and no .out.txt.cujit-XXXXXX) in the directory */
    cr_assert_leq(entries(dir), 2, "allocation %ld refused: a temporary file left in %s", n, dir);
    if (!was_refused) break;
    write_text(path, "old"); /* the old contents again */
  }
  cr_assert_gt(n, 0, "cujit_file_write made no allocation");
}
