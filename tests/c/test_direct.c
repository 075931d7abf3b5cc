/*
** test_direct.c -- the cache's direct entries (program.c): a build that read no file is kept under
** its direct key alone and answered in a new process by its text as given, with the kernels kept
** in the entry's record equal, field by field, to those read from the source and confirmed
** against the PTX; a build that reads a header never is (an edited header misses); another option
** misses; a damaged direct entry is the cache's usual warning and a compile; a record whose
** kernels do not read is the whole way, silently; the store of signatures refuses what it did
** not write. NVRTC for sm_90, no GPU.
*/
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_fixture.h"
#include "base/base.h"
#include "compile/cache.h"
#include "compile/compile.h"
#include "lang/signature.h"
#include "program/program.h"

TestSuite(direct, .init = cj_cache_setup, .fini = cj_cache_teardown, .timeout = 300);

/* Every parameter kind the reader handles: scalars of each width, bool, const and writable
** pointers, a pointer that takes NULL, void *, a struct and a vector type by value; a C++ kernel
** in a namespace; a template instantiated by name expression. */
static const char *const kinds_src =
    "struct Params { float scale; int n; double bias; };\n"
    "extern \"C\" __global__ void scalars(char c, unsigned char uc, short s, unsigned short us,\n"
    "    int i, unsigned u, long long ll, unsigned long long ull, float f, double d, bool b,\n"
    "    const float *in, float *out, int *maybe = NULL, void *raw = nullptr) {\n"
    "  if (b && maybe) out[i] = in[u] * f + (float)d + c + uc + s + us + ll + ull; }\n"
    "extern \"C\" __global__ void by_value(Params p, float4 v, const double *__restrict__ x,\n"
    "    double *y) { y[p.n] = x[0] * p.scale + p.bias + v.x; }\n"
    "namespace ns { __global__ void inner(int *x, int n) { x[n] = n; } }\n"
    "template <typename T> __global__ void scale(T *x, T a, int n) { x[n] *= a; }\n";

/* The same without default arguments, which the CPU device's unit does not take yet (it
** redeclares each kernel with them: g++ refuses a default given twice). */
static const char *const kinds_src_cpu =
    "struct Params { float scale; int n; double bias; };\n"
    "extern \"C\" __global__ void scalars(char c, unsigned char uc, short s, unsigned short us,\n"
    "    int i, unsigned u, long long ll, unsigned long long ull, float f, double d, bool b,\n"
    "    const float *in, float *out, int *maybe, void *raw) {\n"
    "  if (b && maybe) out[i] = in[u] * f + (float)d + c + uc + s + us + ll + ull; }\n"
    "extern \"C\" __global__ void by_value(Params p, float4 v, const double *__restrict__ x,\n"
    "    double *y) { y[p.n] = x[0] * p.scale + p.bias + v.x; }\n"
    "namespace ns { __global__ void inner(int *x, int n) { x[n] = n; } }\n"
    "template <typename T> __global__ void scale(T *x, T a, int n) { x[n] *= a; }\n";

static const char *const kinds_exprs[] = {"scale<float>", "scale<int>"};

static cujit_compile_options kinds_options(void) {
  cujit_compile_options o = sm90;
  o.name_expressions = kinds_exprs, o.name_expression_count = 2;
  return o;
}

static void same_signature(const cj_signature *a, const cj_signature *b) {
  cr_assert_str_eq(a->name, b->name);
  cr_assert_eq(!a->symbol, !b->symbol, "%s: symbol", a->name);
  if (a->symbol) cr_assert_str_eq(a->symbol, b->symbol);
  cr_assert_eq(a->nparams, b->nparams, "%s", a->name);
  cr_assert_eq(a->ntype_vars, b->ntype_vars, "%s", a->name);
  for (size_t t = 0; t < a->ntype_vars; t++) cr_assert_str_eq(a->type_vars[t], b->type_vars[t]);
  cr_assert_eq(a->param_bytes, b->param_bytes, "%s", a->name);
  cr_assert_eq(a->specialized, b->specialized, "%s", a->name);
  cr_assert_eq(memcmp(a->bound, b->bound, sizeof a->bound), 0, "%s", a->name);
  for (size_t i = 0; i < a->nparams; i++) {
    const cj_param *p = &a->params[i], *q = &b->params[i];
    cr_assert_str_eq(p->name, q->name, "%s", a->name);
    cr_assert_str_eq(p->type, q->type, "%s.%s", a->name, p->name);
    cr_assert(p->kind == q->kind && p->dtype == q->dtype && p->is_const == q->is_const &&
                  p->size == q->size && p->align == q->align && p->offset == q->offset &&
                  p->type_var == q->type_var && p->nullable == q->nullable &&
                  p->nonnull == q->nonnull && p->boolean == q->boolean,
              "%s.%s differs", a->name, p->name);
  }
}

/* The path of the one file of `suffix` in the cache directory whose bytes hold `marker` (NULL:
** any); a record and a manifest are both .cjm files. */
static void only_file(const char *suffix, const char *marker, char *path, size_t len) {
  char full[1024];
  int found = 0;
  DIR *d = opendir(cache_dir);
  cr_assert(d, "%s", cache_dir);
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (!strstr(de->d_name, suffix)) continue;
    snprintf(full, sizeof full, "%s/%s", cache_dir, de->d_name);
    static char bytes[1 << 16];
    FILE *f = fopen(full, "rb");
    size_t got = f ? fread(bytes, 1, sizeof bytes, f) : 0;
    if (f) fclose(f);
    if (!marker || memmem(bytes, got, marker, strlen(marker)))
      found++, snprintf(path, len, "%s", full);
  }
  closedir(d);
  cr_assert_eq(found, 1, "one %s file on disk%s%s", suffix, marker ? " holding " : "",
               marker ? marker : "");
}

static void flip_last_byte(const char *path) {
  int fd = open(path, O_RDWR);
  cr_assert_geq(fd, 0);
  off_t end = lseek(fd, -1, SEEK_END);
  unsigned char c;
  cr_assert_eq(pread(fd, &c, 1, end), 1);
  c ^= 0x5a;
  cr_assert_eq(pwrite(fd, &c, 1, end), 1);
  close(fd);
}

/* Builds kinds_src for `arch` in one engine, then in a new one, which its direct entry answers
** with the kernels the first read and confirmed. */
static void same_kernels_from_the_entry(const char *arch) {
  cujit_engine *e = open_engine();
  if (strcmp(arch, "cpu") != 0) need_nvrtc(e);
  cujit_compile_options o = kinds_options();
  o.arch = arch;
  const char *src = strcmp(arch, "cpu") == 0 ? kinds_src_cpu : kinds_src;
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, "kinds.cu", &o, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(p->nkernels, 5);
  size_t n = p->nkernels;
  cj_signature read[8];
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(cj_signature_copy(&p->kernels[i], &read[i]), CUJIT_OK);
  cujit_program_free(p);
  cujit_close(e);

  e = open_engine(); /* a new engine: no memo, no map */
  cr_assert_eq(cujit_program_compile(e, src, "kinds.cu", &o, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(atomic_load(&e->direct_hits), 1, "answered by the direct record");
  cr_assert_eq(cujit_program_from_cache(p), 1);
  cr_assert_eq(p->nkernels, n);
  for (size_t i = 0; i < n; i++) same_signature(&read[i], &p->kernels[i]);
  cujit_kernel *k;
  cr_assert_eq(cujit_program_kernel(p, "scale<float>", &k), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_kernel_free(k);
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cujit_program_free(p);
  cujit_close(e);
  for (size_t i = 0; i < n; i++) cj_signature_free(&read[i]);
}

Test(direct, kernels_from_the_record_are_those_read_from_the_source) {
  same_kernels_from_the_entry("sm_90");
}

/* The CPU device confirms kernels against its shared object's symbols: the record keeps those. */
Test(direct, kernels_from_the_record_are_those_of_the_cpu_object) {
  same_kernels_from_the_entry("cpu");
}

/* A generic kernel's specialisation (its program built from the typedefs cujit writes) reads its
** kernels from the entry as the first engine read them. */
Test(direct, a_generic_kernels_specialisation_keeps_its_kernels) {
  const cujit_dtype f64 = CUJIT_F64;
  cj_signature read;
  for (int round = 0; round < 2; round++) {
    cujit_engine *e = open_engine();
    need_nvrtc(e);
    cujit_kernel *g, *k;
    cr_assert_eq(cujit_kernel_define(e, "axpy(T a, const T *x, T *y, int n)",
                                     "int i = threadIdx.x; if (i < n) y[i] += a * x[i];", NULL,
                                     &sm90, &g),
                 CUJIT_OK, "%s", cujit_errmsg(e));
    cr_assert_eq(cujit_kernel_specialize(g, &f64, 1, &k), CUJIT_OK, "%s", cujit_errmsg(e));
    const cujit_program *p = cujit_kernel_program(k);
    cr_assert_eq(p->nkernels, 1);
    if (round == 0) {
      cr_assert_eq(cj_signature_copy(&p->kernels[0], &read), CUJIT_OK);
    } else {
      cr_assert_geq(atomic_load(&e->direct_hits), 1, "answered by its direct entry");
      same_signature(&read, &p->kernels[0]);
    }
    cujit_kernel_free(g);
    cujit_close(e);
  }
  cj_signature_free(&read);
}

Test(direct, a_header_edit_after_a_hit_misses) {
  char dir[400], header[480], src[600];
  snprintf(dir, sizeof dir, "%s/inc", tmpdir);
  cr_assert_eq(mkdir(dir, 0700), 0);
  snprintf(header, sizeof header, "%s/value.cuh", dir);
  FILE *f = fopen(header, "w");
  fputs("#define VALUE 1234567\n", f);
  fclose(f);
  snprintf(src, sizeof src,
           "#include \"%s\"\nextern \"C\" __global__ void h(int *x) { x[0] = VALUE; }\n", header);
  for (int round = 0; round < 2; round++) { /* a miss, then a hit through the manifest */
    cujit_engine *e = open_engine();
    need_nvrtc(e);
    cujit_program *p = compile_ok(e, src);
    cr_assert_eq(cujit_program_from_cache(p), round);
    cr_assert_eq(atomic_load(&e->direct_hits), 0, "a build that read a file has no record");
    cujit_program_free(p);
    cujit_close(e);
  }
  f = fopen(header, "w"); /* another size: no mtime resolution needed */
  fputs("#define VALUE 7654321 /* edited */\n", f);
  fclose(f);
  cujit_engine *e = open_engine();
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0, "the edited header is a miss");
  cr_assert_eq(atomic_load(&e->direct_hits), 0);
  cr_assert(strstr(cujit_program_ptx(p, NULL), "7654321"), "the edited value is compiled");
  cujit_program_free(p);
  cujit_close(e);
}

Test(direct, another_option_misses) {
  const char *src = "extern \"C\" __global__ void opt(int *x) { x[0] = VAL; }\n";
  const char *one[] = {"-DVAL=1111111"}, *two[] = {"-DVAL=2222222"};
  cujit_compile_options a = sm90, b = sm90;
  a.extra_flags = one, a.extra_flag_count = 1;
  b.extra_flags = two, b.extra_flag_count = 1;
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_program *p;
  cr_assert_eq(cujit_program_compile(e, src, NULL, &a, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  cujit_program_free(p);
  cujit_close(e);

  e = open_engine();
  cr_assert_eq(cujit_program_compile(e, src, NULL, &b, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(cujit_program_from_cache(p), 0, "another option is a miss");
  cr_assert_eq(atomic_load(&e->direct_hits), 0);
  cr_assert(strstr(cujit_program_ptx(p, NULL), "2222222"));
  cujit_program_free(p);
  cujit_close(e);

  e = open_engine(); /* each keeps its own record */
  cr_assert_eq(cujit_program_compile(e, src, NULL, &a, &p), CUJIT_OK, "%s", cujit_errmsg(e));
  cr_assert_eq(atomic_load(&e->direct_hits), 1);
  cr_assert(strstr(cujit_program_ptx(p, NULL), "1111111"));
  cujit_program_free(p);
  cujit_close(e);
}

/* A new engine's build of `src` (for sm_90) is answered by its direct entry. */
static void answered_directly(const char *src) {
  cujit_engine *e = open_engine();
  cujit_program_free(compile_ok(e, src));
  cr_assert_eq(atomic_load(&e->direct_hits), 1, "answered by the direct entry");
  cujit_close(e);
}

Test(direct, a_damaged_direct_entry_is_the_usual_warning_and_compiled_again) {
  const char *src = kernel_src("fragile", 5);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_program *p = compile_ok(e, src);
  char *ptx = strdup(cujit_program_ptx(p, NULL));
  cujit_program_free(p);
  cujit_close(e);
  char path[1024];
  only_file(".cjc", NULL, path, sizeof path); /* kept under its direct key alone */
  only_file(".cjc", "cujit direct 1", path, sizeof path);
  flip_last_byte(path);

  e = open_engine();
  p = compile_ok(e, src);
  cr_assert_eq(cujit_program_from_cache(p), 0, "compiled again");
  cr_assert_eq(atomic_load(&e->direct_hits), 0, "no record answers past damage");
  cr_assert_str_eq(cujit_program_ptx(p, NULL), ptx);
  cr_assert_eq(cujit_program_kernel_count(p), 1);
  cr_assert_eq(nwarnings, 1, "one warning");
  cr_assert(strstr(warnings[0], path), "names the file: %s", warnings[0]);
  cr_assert(strstr(warnings[0], "is corrupt (checksum mismatch); removed, recompiling"), "%s",
            warnings[0]);
  cujit_program_free(p);
  cujit_close(e);

  answered_directly(src); /* the whole way kept it again */
  cr_assert_eq(nwarnings, 1);
  free(ptx);
}

Test(direct, a_record_whose_kernels_do_not_read_goes_the_whole_way) {
  const char *src = kernel_src("unread", 7);
  cujit_engine *e = open_engine();
  need_nvrtc(e);
  cujit_program_free(compile_ok(e, src));
  cj_cache_key memo, direct;
  cr_assert(cj_compile_memo_key(e, src, "<source>", &sm90, "sm_90", &memo));
  direct = cj_compile_direct_key(&memo);
  cj_cache_entry entry;
  cr_assert(cj_cache_get(e->cache, &direct, &entry), "the direct entry");
  char *record = (char *)cj_cache_entry_lowered(&entry, "cujit direct 1");
  cr_assert(record && strstr(record, "cujit kernels 1 "), "the record: %s", record ? record : "-");
  strstr(record, "cujit kernels 1 ")[7] = 'X'; /* stored again whole: its checksum holds */
  cj_cache_put(e->cache, &direct, &entry);
  cj_cache_entry_free(&entry);
  cujit_close(e);

  e = open_engine();
  cujit_program *p = compile_ok(e, src);
  cr_assert_eq(atomic_load(&e->direct_hits), 0);
  cr_assert_eq(cujit_program_from_cache(p), 0, "the whole way, which compiles");
  cr_assert_str_eq(cujit_program_kernel_name(p, 0), "unread");
  cr_assert_eq(nwarnings, 0, "%s", warnings[0]);
  cujit_program_free(p);
  cujit_close(e);

  answered_directly(src); /* and kept a good record */
}

Test(direct, the_store_reads_back_only_what_it_wrote) {
  cj_signature sig;
  char err[256];
  cr_assert_eq(
      cj_signature_parse("k(const float *x, float *y, int n, double a)", &sig, err, sizeof err),
      CUJIT_OK, "%s", err);
  cj_buf b = {0};
  cj_signatures_store(&b, &sig, 1);
  cr_assert(!b.failed);
  cj_signature *back;
  size_t n;
  cr_assert_eq(cj_signatures_load(b.data, b.len, &back, &n), CUJIT_OK);
  cr_assert_eq(n, 1);
  same_signature(&sig, &back[0]);
  cj_signature_free(&back[0]);
  free(back);
  /* every dtype, the last (bf16) included, comes back as it went */
  cj_signature all, *every;
  cr_assert_eq(cj_signature_parse("k(__half *f16, float *f32, double *f64, signed char *i8, "
                                  "short *i16, int *i32, long long *i64, unsigned char *u8, "
                                  "unsigned short *u16, unsigned *u32, unsigned long long *u64, "
                                  "__nv_bfloat16 *bf16)",
                                  &all, err, sizeof err),
               CUJIT_OK, "%s", err);
  cr_assert_eq(all.nparams, CUJIT_DTYPE_COUNT_ - 1);
  for (size_t i = 0; i < all.nparams; i++)
    cr_assert_eq(all.params[i].dtype, (cujit_dtype)(i + 1), "%s", all.params[i].name);
  cj_buf ball = {0};
  cj_signatures_store(&ball, &all, 1);
  cr_assert_eq(cj_signatures_load(ball.data, ball.len, &every, &n), CUJIT_OK, "%.*s", (int)ball.len,
               ball.data);
  cr_assert_eq(n, 1);
  same_signature(&all, &every[0]);
  cj_signature_free(&every[0]);
  free(every);
  cj_signature_free(&all);
  cj_buf_free(&ball);
  /* cut short anywhere, or one byte more: refused */
  for (size_t cut = 0; cut < b.len; cut++)
    cr_assert_eq(cj_signatures_load(b.data, cut, &back, &n), CUJIT_ERROR_INVALID_ARGUMENT,
                 "cut at %zu", cut);
  cj_buf_puts(&b, "0 ");
  cr_assert_eq(cj_signatures_load(b.data, b.len, &back, &n), CUJIT_ERROR_INVALID_ARGUMENT);
  /* a kind past the last: the first parameter's (a pointer, 1) made 7 */
  char *kind = strstr(b.data, "1:x13:const float *1 ");
  cr_assert(kind, "%s", b.data);
  kind[19] = '7';
  b.len -= 2; /* without the "0 " */
  cr_assert_eq(cj_signatures_load(b.data, b.len, &back, &n), CUJIT_ERROR_INVALID_ARGUMENT);
  cj_buf_free(&b);
  cj_signature_free(&sig);
}
