/*
** link.c -- device code linked at run time (link.h): the link files checked and read, the program
** and each .cu file compiled to LTO-IR through compile.c's own unit compile (so cached, keyed and
** checked like any CUBIN), the linked program looked up under a key over all of them, and on a miss
** nvJitLink run in two stages (LTO-IR to PTX, then the PTX and the binary files to a CUBIN); or, on
** the CPU device and without nvJitLink, the .cu files compiled with the program as one unit.
*/
#include "link.h"
#include "base/files.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* --- the inputs ------------------------------------------------------------------------------- */

enum { IN_CU, IN_PTX, IN_LTOIR, IN_FATBIN, IN_CUBIN, IN_LIB };

static const struct kind {
  const char *ext, *what;
  nvJitLinkInputType type;
} kinds[] = {
    {".cu", "CUDA C++ source", NVJITLINK_INPUT_LTOIR},
    {".ptx", "PTX", NVJITLINK_INPUT_PTX},
    {".ltoir", "LTO-IR", NVJITLINK_INPUT_LTOIR},
    {".fatbin", "a fat binary", NVJITLINK_INPUT_FATBIN},
    {".cubin", "a CUBIN", NVJITLINK_INPUT_CUBIN},
    {".a", "a library of device code", NVJITLINK_INPUT_LIBRARY},
};
#define KIND_COUNT (sizeof kinds / sizeof *kinds)

/* Binary link files are read whole; larger than this is no device library. */
#define LINK_FILE_MAX ((size_t)1 << 30)

typedef struct input {
  const char *given;
  char path[PATH_MAX];
  int kind;
  unsigned char *data; /* a binary file's bytes (owned), or a .cu file's LTO-IR (cu's) */
  size_t len;
  cj_cache_key key; /* of the contents: a hash of a binary file, a .cu file's unit key */
  cj_compiled cu;   /* a .cu file's compile */
} input;

static int is_dlto(const char *flag) {
  return flag && (!strcmp(flag, "-dlto") || !strcmp(flag, "--dlink-time-opt") ||
                  !strcmp(flag, "-dlink-time-opt"));
}

int cj_link_wanted(const cujit_compile_options *options) {
  if (!options) return 0;
  if (options->link_count > 0) return 1;
  for (size_t i = 0; options->extra_flags && i < options->extra_flag_count; i++)
    if (is_dlto(options->extra_flags[i])) return 1; /* refused by cj_link_compile */
  return 0;
}

static int kind_of(const char *path) {
  size_t n = strlen(path);
  for (size_t k = 0; k < KIND_COUNT; k++) {
    size_t e = strlen(kinds[k].ext);
    if (n > e && strcmp(path + n - e, kinds[k].ext) == 0) return (int)k;
  }
  return -1;
}

static cujit_status read_binary(cujit_engine *engine, input *in) {
  FILE *f = fopen(in->path, "rb");
  if (!f)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file '%s' cannot be read: %s",
                   in->given, strerror(errno));
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  cujit_status st = CUJIT_OK;
  if (size <= 0 || (size_t)size >= LINK_FILE_MAX)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file '%s' %s", in->given,
                 size == 0 ? "is empty" : "cannot be read whole (too large, or not a file)");
  else if (!(in->data = calloc((size_t)size + 1, 1))) /* a NUL after: nvJitLink reads PTX's */
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  else if (fseek(f, 0, SEEK_SET) != 0 || fread(in->data, 1, (size_t)size, f) != (size_t)size)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file '%s' cannot be read: %s",
                 in->given, strerror(errno));
  fclose(f);
  if (st != CUJIT_OK) return st;
  in->len = (size_t)size;
  cj_key_builder *kb = cj_key_begin();
  cj_key_add_str(kb, "cujit link input");
  cj_key_add_str(kb, kinds[in->kind].ext);
  cj_key_add(kb, in->data, in->len);
  in->key = cj_key_end(kb);
  return CUJIT_OK;
}

/* Each link file named, of a kind cujit links, a file that exists (a binary one read). */
static cujit_status read_inputs(cujit_engine *engine, const cujit_compile_options *options, int cpu,
                                input *ins) {
  if (!options->link)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link_count is %zu but link is NULL",
                   options->link_count);
  for (size_t i = 0; i < options->link_count; i++) {
    input *in = &ins[i];
    struct stat sb;
    in->given = options->link[i];
    if (!in->given || !*in->given)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file %zu is NULL or empty", i);
    if ((in->kind = kind_of(in->given)) < 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "link file '%s' is of no kind cujit links: name a .cu (CUDA C++ source), "
                     ".ptx, .ltoir, .fatbin, .cubin or .a file (the binary kinds as nvcc -rdc=true "
                     "or -dlto writes them)",
                     in->given);
    if (!realpath(in->given, in->path) || stat(in->path, &sb) != 0)
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file '%s' cannot be read: %s",
                     in->given, strerror(errno));
    if (!S_ISREG(sb.st_mode))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT, "link file '%s' is not a file",
                     in->given);
    if (cpu && in->kind != IN_CU)
      return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                     "link file '%s' is %s, which the CPU device cannot link: it runs device code "
                     "that g++ compiles from source; link the .cu source instead",
                     in->given, kinds[in->kind].what);
    if (in->kind == IN_CU && strpbrk(in->path, "\"\\\n"))
      return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "link file '%s': cujit cannot name a file whose path holds a quote, a "
                     "backslash or a newline; rename it",
                     in->given);
    if (in->kind != IN_CU) {
      cujit_status st = read_binary(engine, in);
      if (st != CUJIT_OK) return st;
    }
  }
  return CUJIT_OK;
}

static void free_inputs(input *ins, size_t n) {
  for (size_t i = 0; ins && i < n; i++) {
    if (ins[i].kind == IN_CU)
      cj_cache_entry_free(&ins[i].cu.entry);
    else
      free(ins[i].data);
  }
  free(ins);
}

/* The options of a unit: the caller's without the link files, plus -dlto when `lto`. *flags is
** the extra flags' new array (the caller frees it). */
static cujit_status unit_options(cujit_engine *engine, const cujit_compile_options *options,
                                 int lto, cujit_compile_options *o, const char ***flags) {
  *o = *options;
  o->link = NULL, o->link_count = 0;
  *flags = NULL;
  if (!lto) return CUJIT_OK;
  if (o->extra_flag_count && !o->extra_flags)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "extra_flag_count is %zu but extra_flags is NULL", o->extra_flag_count);
  if (!(*flags = malloc((o->extra_flag_count + 1) * sizeof **flags)))
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  for (size_t i = 0; i < o->extra_flag_count; i++) (*flags)[i] = o->extra_flags[i];
  (*flags)[o->extra_flag_count] = "-dlto";
  o->extra_flags = *flags, o->extra_flag_count++;
  return CUJIT_OK;
}

/* --- one unit --------------------------------------------------------------------------------- */

/* The .cu files compiled with the program as one unit: each one's text after the program's, from
** a #line naming it (so messages name it), its directory joining the include directories (for its
** quoted includes). In the text, not #include'd: the CPU device puts the program in a namespace
** and headers outside it, where the program's extern declarations would not find them. */
static cujit_status compile_as_one(cujit_engine *engine, const cj_scan *scan, const char *name,
                                   const cujit_compile_options *options, const char *arch,
                                   cj_unit_compile unit, const input *ins, size_t n,
                                   cj_compiled *out) {
  cujit_compile_options o;
  const char **flags, **dirs = NULL;
  cj_buf text = {0};
  cujit_status st = unit_options(engine, options, 0, &o, &flags);
  if (st == CUJIT_OK && o.include_dir_count && !o.include_dirs)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "include_dir_count is %zu but include_dirs is NULL", o.include_dir_count);
  if (st == CUJIT_OK && !(dirs = calloc(o.include_dir_count + n, sizeof *dirs)))
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  for (size_t i = 0; st == CUJIT_OK && i < o.include_dir_count; i++) dirs[i] = o.include_dirs[i];
  cj_buf_puts(&text, scan->text);
  for (size_t i = 0; st == CUJIT_OK && i < n; i++) {
    char *t = NULL, *dir = cj_strdup(ins[i].path);
    st = dir ? cj_file_read(engine, ins[i].path, LINK_FILE_MAX, &t)
             : cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    if (st == CUJIT_OK) {
      cj_buf_printf(&text, "\n#line 1 \"%s\"\n%s\n", ins[i].path, t);
      *strrchr(dir, '/') = '\0'; /* realpath's: absolute */
      dirs[o.include_dir_count + i] = *dir ? dir : "/";
      if (!*dir) free(dir), dir = NULL;
    } else
      free(dir);
    free(t);
  }
  if (st == CUJIT_OK && text.failed)
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (st == CUJIT_OK) {
    cj_scan one = *scan;
    one.text = text.data;
    o.include_dirs = dirs, o.include_dir_count += n;
    st = unit(engine, &one, name, &o, arch, out);
    o.include_dir_count -= n;
  }
  out->pure = 0;
  for (size_t i = 0; dirs && i < n; i++)
    if (dirs[o.include_dir_count + i] && strcmp(dirs[o.include_dir_count + i], "/") != 0)
      free((char *)dirs[o.include_dir_count + i]);
  free(dirs);
  cj_buf_free(&text);
  return st;
}

/* --- nvJitLink -------------------------------------------------------------------------------- */

/* One per process, opened at the first link that misses the cache (20-35 ms: a hit must not). */
static cj_nvjitlink linker;
static char linker_why[1024];
static int linker_ok;
static pthread_once_t linker_once = PTHREAD_ONCE_INIT;
static atomic_int fallback_warned;

static void open_linker(void) {
  linker_ok = cj_nvjitlink_open(&linker, linker_why, sizeof linker_why);
}

/* nvJitLinkResult's values in the order nvJitLink.h numbers them (by number: a CUDA 12 header
** names fewer of them). */
static const char *link_result(nvJitLinkResult r) {
  static const char *const what[] = {"success",
                                     "an option it does not know",
                                     "no -arch",
                                     "an input it cannot read",
                                     "the PTX did not compile",
                                     "the LTO-IR did not compile",
                                     "an internal error",
                                     "its thread pool failed",
                                     "an input of no kind it knows",
                                     "the finalizer failed",
                                     "a null input",
                                     "options that do not go together",
                                     "an input of another type than declared",
                                     "an input for another arch",
                                     "an input newer than nvJitLink",
                                     "no fat binary",
                                     "an arch it does not know",
                                     "an arch it does not support",
                                     "LTO-IR given without -lto"};
  return (unsigned)r < sizeof what / sizeof *what ? what[r] : "an error it does not name";
}

static char *link_log(cj_nvjitlink *lk, nvJitLinkHandle h, int error) {
  size_t n = 0;
  if ((error ? lk->nvJitLinkGetErrorLogSize(h, &n) : lk->nvJitLinkGetInfoLogSize(h, &n)) !=
      NVJITLINK_SUCCESS)
    n = 0;
  char *log = calloc(n + 1, 1);
  if (log && n && (error ? lk->nvJitLinkGetErrorLog(h, log) : lk->nvJitLinkGetInfoLog(h, log)))
    log[0] = '\0';
  return log;
}

/* The symbol a link log says nothing defines, into sym; 0 when it names none. ptxas says
** "Unresolved extern function 'f'" (or variable), nvlink "Undefined reference to 'f'". */
static int undefined_symbol(const char *log, char *sym, size_t len) {
  static const char *const marks[] = {"Unresolved extern function '",
                                      "Unresolved extern variable '", "Undefined reference to '",
                                      "undefined reference to '"};
  for (size_t i = 0; log && i < sizeof marks / sizeof *marks; i++) {
    const char *at = strstr(log, marks[i]);
    if (!at) continue;
    at += strlen(marks[i]);
    const char *end = strchr(at, '\'');
    if (!end) continue;
    snprintf(sym, len, "%.*s", (int)(end - at), at);
    return 1;
  }
  return 0;
}

/* The C++ declaration a mangled name stands for, when it is a plain function outside any namespace
** whose parameters are built-in types, pointers and const (_Z10twice_plusf: twice_plus(float));
** else 0, and the message gives the mangled name alone. */
static int demangled(const char *sym, char *out, size_t len) {
  static const char codes[] = "vbcahstijlmxyfd";
  static const char *const names[] = {"void",
                                      "bool",
                                      "char",
                                      "signed char",
                                      "unsigned char",
                                      "short",
                                      "unsigned short",
                                      "int",
                                      "unsigned int",
                                      "long",
                                      "unsigned long",
                                      "long long",
                                      "unsigned long long",
                                      "float",
                                      "double"};
  char *end;
  if (strncmp(sym, "_Z", 2) != 0 || sym[2] < '1' || sym[2] > '9') return 0;
  long n = strtol(sym + 2, &end, 10);
  if (n <= 0 || (long)strlen(end) < n) return 0;
  cj_buf b = {0};
  cj_buf_printf(&b, "%.*s(", (int)n, end);
  const char *p = end + n;
  for (int first = 1; *p; first = 0) {
    char suffix[64] = "";
    for (; *p == 'P' || *p == 'K'; p++) /* read outside in: PKf is const float * */
      memmove(suffix + (*p == 'P' ? 2 : 6), suffix, strlen(suffix) + 1),
          memcpy(suffix, *p == 'P' ? " *" : " const", *p == 'P' ? 2 : 6);
    const char *c = *p ? strchr(codes, *p) : NULL;
    if (!c || strlen(suffix) > 48) {
      cj_buf_free(&b);
      return 0;
    }
    if (!(*p == 'v' && first && !p[1] && !suffix[0]))
      cj_buf_printf(&b, "%s%s%s", first ? "" : ", ", names[c - codes], suffix);
    p++;
  }
  cj_buf_puts(&b, ")");
  int ok = !b.failed && b.len < len;
  if (ok) memcpy(out, b.data, b.len + 1);
  cj_buf_free(&b);
  return ok;
}

static cujit_status link_failed(cujit_engine *engine, nvJitLinkHandle h, nvJitLinkResult r,
                                const char *name, const input *ins, size_t n) {
  char *log = link_log(&linker, h, 1), sym[512], decl[512], named[1100];
  cj_buf files = {0};
  for (size_t i = 0; i < n; i++) cj_buf_printf(&files, "%s%s", i ? ", " : "", ins[i].given);
  cujit_status st;
  if (undefined_symbol(log, sym, sizeof sym)) {
    if (demangled(sym, decl, sizeof decl))
      snprintf(named, sizeof named, "'%s' (%s)", decl, sym);
    else
      snprintf(named, sizeof named, "'%s'%s", sym,
               strncmp(sym, "_Z", 2) == 0 ? " (a C++ name, mangled)" : "");
    st = cj_fail(engine, CUJIT_ERROR_COMPILE,
                 "linking '%s' with %s failed: undefined symbol %s: no file defines it. Define "
                 "it in a link file with the same signature as the extern declaration (or "
                 "extern \"C\" on both sides), or add the file that does to link. nvJitLink's "
                 "log:\n%s",
                 name, files.data ? files.data : "", named, log ? log : "");
  } else
    st = cj_fail(engine, CUJIT_ERROR_COMPILE, "linking '%s' with %s failed (nvJitLink: %s):\n%s",
                 name, files.data ? files.data : "", link_result(r), log ? log : "");
  free(log);
  cj_buf_free(&files);
  return st;
}

/* Adds `log` (nvJitLink's info log, when it has one) to the entry's log. */
static void add_info(cj_cache_entry *e, nvJitLinkHandle h) {
  char *info = link_log(&linker, h, 0);
  if (info && *info) {
    cj_buf b = {0};
    cj_buf_puts(&b, e->log ? e->log : "");
    cj_buf_puts(&b, info);
    if (!b.failed) free(e->log), e->log = b.data;
  }
  free(info);
}

/* What of the program's options nvJitLink must be told again: the LTO-IR carries the code, but the
** choices of code generation (fast math's flush to zero and approximate division, line and debug
** info, a register cap, ptxas's options such as -v for `cujit compile -v`) are made at the link.
** The options reach the key through the program's own (its NVRTC list). */
static void link_flags(const cujit_compile_options *op, const char *arch, cj_option_list *l) {
  cj_option_list_add(l, "-arch=", arch);
  if (cj_options_switch_on(op, offsetof(cujit_compile_options, fast_math))) {
    static const char *const fast[] = {"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"};
    for (size_t i = 0; i < 4; i++) cj_option_list_add(l, fast[i], NULL);
  }
  if (cj_options_switch_on(op, offsetof(cujit_compile_options, line_info)))
    cj_option_list_add(l, "-lineinfo", NULL);
  if (op->debug) cj_option_list_add(l, "-g", NULL);
  static const char *const maxreg[] = {"-maxrregcount=", "--maxrregcount="};
  static const char *const ptxas[] = {"--ptxas-options=", "-Xptxas="};
  for (size_t i = 0; op->extra_flags && i < op->extra_flag_count; i++) {
    const char *f = op->extra_flags[i];
    for (size_t k = 0; f && k < 2; k++) {
      if (!strncmp(f, maxreg[k], strlen(maxreg[k])))
        cj_option_list_add(l, "-maxrregcount=", f + strlen(maxreg[k]));
      if (!strncmp(f, ptxas[k], strlen(ptxas[k])))
        cj_option_list_add(l, "-Xptxas=", f + strlen(ptxas[k]));
    }
  }
  /* ptxas's report asked: never a binary from nvJitLink's cache (12.9+), which has none */
  if (linker.version >= CJ_NO_CACHE_VERSION &&
      cj_options_ptxas_verbose(op->extra_flags, op->extra_flag_count))
    cj_option_list_add(l, "-no-cache", NULL);
}

static int stage_one(int kind) {
  return kind == IN_CU || kind == IN_LTOIR;
}

/* One nvJitLink run over `first` (the program's LTO-IR, or stage 1's PTX) and the inputs of this
** stage; its output (PTX, or a CUBIN) in *out / *len, malloc'd with a NUL after it. */
static cujit_status link_stage(cujit_engine *engine, const char *name, cj_option_list *l, int stage,
                               nvJitLinkInputType first_type, const void *first, size_t first_len,
                               const input *ins, size_t n, cj_cache_entry *e, char **out,
                               size_t *len) {
  nvJitLinkHandle h;
  if (l->failed) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  nvJitLinkResult r = linker.nvJitLinkCreate(&h, (uint32_t)l->n, (const char **)l->v);
  if (r != NVJITLINK_SUCCESS)
    return cj_fail(engine, CUJIT_ERROR_COMPILE,
                   "nvJitLink (%s) refused the link options of '%s': %s", linker.path, name,
                   link_result(r));
  r = linker.nvJitLinkAddData(h, first_type, first, first_len, name);
  for (size_t i = 0; i < n && r == NVJITLINK_SUCCESS; i++)
    if (stage_one(ins[i].kind) == (stage == 1))
      r = linker.nvJitLinkAddData(h, kinds[ins[i].kind].type, ins[i].data, ins[i].len,
                                  ins[i].given);
  if (r == NVJITLINK_SUCCESS) r = linker.nvJitLinkComplete(h);
  *len = 0;
  if (r == NVJITLINK_SUCCESS)
    r = stage == 1 ? linker.nvJitLinkGetLinkedPtxSize(h, len)
                   : linker.nvJitLinkGetLinkedCubinSize(h, len);
  if (r == NVJITLINK_SUCCESS && !(*out = calloc(*len + 1, 1))) {
    linker.nvJitLinkDestroy(&h);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  if (r == NVJITLINK_SUCCESS)
    r = stage == 1 ? linker.nvJitLinkGetLinkedPtx(h, *out)
                   : linker.nvJitLinkGetLinkedCubin(h, *out);
  cujit_status st = CUJIT_OK;
  if (r != NVJITLINK_SUCCESS)
    st = link_failed(engine, h, r, name, ins, n);
  else
    add_info(e, h);
  linker.nvJitLinkDestroy(&h);
  return st;
}

/* Stage 1: the program and every LTO-IR input, optimised together (calls inlined across files),
** to PTX, which the program layer checks the kernels against. Stage 2 (an sm_NN arch): that PTX
** and the binary inputs to the CUBIN, with -lto when a fat binary or library may hold LTO-IR. */
static cujit_status run_link(cujit_engine *engine, const char *name,
                             const cujit_compile_options *op, const cj_compiled *prog,
                             const input *ins, size_t n, cj_cache_entry *e) {
  int lto2 = 0;
  cj_option_list l = {0};
  link_flags(op, prog->arch, &l);
  cj_option_list_add(&l, "-lto", NULL);
  cj_option_list_add(&l, "-ptx", NULL);
  size_t len;
  cujit_status st = link_stage(engine, name, &l, 1, NVJITLINK_INPUT_LTOIR, prog->entry.cubin,
                               prog->entry.cubin_len, ins, n, e, &e->ptx, &len);
  cj_option_list_free(&l);
  if (st != CUJIT_OK) return st;
  e->ptx_len = strlen(e->ptx);
  if (strncmp(prog->arch, "sm_", 3) != 0) return CUJIT_OK; /* compute_NN: PTX only */
  link_flags(op, prog->arch, &l);
  for (size_t i = 0; i < n; i++) lto2 |= ins[i].kind == IN_FATBIN || ins[i].kind == IN_LIB;
  char *cubin = NULL;
  st = link_stage(engine, name, &l, 2, NVJITLINK_INPUT_PTX, e->ptx, e->ptx_len, ins, n, e, &cubin,
                  &len);
  if (st != CUJIT_OK && lto2) { /* a fat binary or library holding LTO-IR: it needs -lto, which
                                ** one holding none refuses (no module to optimise) */
    free(cubin), cubin = NULL;
    cj_option_list_add(&l, "-lto", NULL);
    st = link_stage(engine, name, &l, 2, NVJITLINK_INPUT_PTX, e->ptx, e->ptx_len, ins, n, e, &cubin,
                    &len);
  }
  cj_option_list_free(&l);
  e->cubin = cubin, e->cubin_len = len;
  return st;
}

/* --- the linked program ----------------------------------------------------------------------- */

/* The key of the linked program: the program's unit key (its LTO-IR's), the arch, and each
** input's kind and contents key, in order (the order nvJitLink resolves symbols in). */
static cj_cache_key linked_key(const cj_compiled *prog, const input *ins, size_t n) {
  cj_key_builder *kb = cj_key_begin();
  uint32_t schema = CJ_CACHE_SCHEMA;
  cj_key_add_str(kb, "cujit linked program");
  cj_key_add(kb, &schema, sizeof schema);
  cj_key_add(kb, prog->key.bytes, sizeof prog->key.bytes);
  cj_key_add_str(kb, prog->arch);
  cj_key_add_str(kb, "stage 1: -lto -ptx; stage 2: PTX and binaries to CUBIN");
  cj_key_add(kb, &n, sizeof n);
  for (size_t i = 0; i < n; i++) {
    cj_key_add_str(kb, kinds[ins[i].kind].ext);
    cj_key_add(kb, ins[i].key.bytes, sizeof ins[i].key.bytes);
  }
  return cj_key_end(kb);
}

/* The entry of `key`, unless NVRTC is open and of another version than the one that built it. */
static int lookup(cujit_engine *engine, const cj_cache_key *key, cj_cache_entry *e) {
  if (!cj_cache_get(engine->cache, key, e)) return 0;
  cj_nvrtc *nv = cj_nvrtc_if_open(engine);
  if (nv && e->nvrtc_version != nv->version) {
    cj_cache_entry_free(e);
    return 0;
  }
  return 1;
}

/* Each .cu link file compiled to LTO-IR as a unit of its own, by its full name (its quoted
** includes are its directory's), with the program's options but those of the program's unit. */
static cujit_status compile_inputs(cujit_engine *engine, const cujit_compile_options *o,
                                   const char *arch, cj_unit_compile unit, input *ins, size_t n) {
  cujit_compile_options lo = *o;
  lo.signatures = NULL, lo.signature_count = 0;
  lo.name_expressions = NULL, lo.name_expression_count = 0;
  lo.nonnull = NULL, lo.nonnull_count = 0;
  for (size_t i = 0; i < n; i++) {
    if (ins[i].kind != IN_CU) continue;
    char *text = NULL;
    cujit_status st = cj_file_read(engine, ins[i].path, LINK_FILE_MAX, &text);
    if (st != CUJIT_OK) return st;
    cj_scan s = {0};
    s.text = text;
    st = unit(engine, &s, ins[i].path, &lo, arch, &ins[i].cu);
    free(text);
    if (st != CUJIT_OK) return st;
    ins[i].data = ins[i].cu.entry.cubin, ins[i].len = ins[i].cu.entry.cubin_len;
    ins[i].key = ins[i].cu.key;
  }
  return CUJIT_OK;
}

static cujit_status compile_linked(cujit_engine *engine, const cj_scan *scan, const char *name,
                                   const cujit_compile_options *options, const char *arch,
                                   cj_unit_compile unit, input *ins, size_t n, cj_compiled *out) {
  cujit_compile_options o;
  const char **flags;
  cj_compiled prog;
  memset(&prog, 0, sizeof prog);
  cujit_status st = unit_options(engine, options, 1, &o, &flags);
  if (st == CUJIT_OK) st = unit(engine, scan, name, &o, arch, &prog);
  if (st == CUJIT_OK) st = compile_inputs(engine, &o, prog.arch, unit, ins, n);
  free(flags);
  if (st != CUJIT_OK) {
    cj_cache_entry_free(&prog.entry);
    return st;
  }
  /* A unit compiled without the cache (includes it could not resolve) has a key that only names
  ** it: the linked program is then not cached either. */
  int cacheable = prog.keyed;
  for (size_t i = 0; i < n; i++) cacheable &= ins[i].kind != IN_CU || ins[i].cu.keyed;
  cj_cache_key key = linked_key(&prog, ins, n);
  cj_cache_entry *e = &out->entry;
  int hit = cacheable && lookup(engine, &key, e);
  if (!hit) {
    pthread_once(&linker_once, open_linker);
    if (!linker_ok) {
      int all_cu = 1;
      for (size_t i = 0; i < n; i++) all_cu &= ins[i].kind == IN_CU;
      cj_cache_entry_free(&prog.entry);
      if (!all_cu) {
        size_t i = 0;
        while (ins[i].kind == IN_CU) i++;
        return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                       "link file '%s' (%s) needs nvJitLink to be linked, and %s", ins[i].given,
                       kinds[ins[i].kind].what, linker_why);
      }
      if (!atomic_exchange(&fallback_warned, 1))
        cj_warn(engine,
                "%s. The link files (.cu only) are compiled with each program as one unit "
                "instead: a full compile, every time any of it changes",
                linker_why);
      return compile_as_one(engine, scan, name, options, arch, unit, ins, n, out);
    }
    st = run_link(engine, name, options, &prog, ins, n, e);
    if (st == CUJIT_OK) {
      char *log = prog.entry.log; /* NVRTC's warnings first, then nvJitLink's */
      if (e->log) {
        cj_buf b = {0};
        cj_buf_puts(&b, log ? log : "");
        cj_buf_puts(&b, e->log);
        free(e->log);
        e->log = b.data;
      } else
        e->log = log, prog.entry.log = NULL;
      if (!e->log) e->log = cj_strdup("");
      e->names = prog.entry.names, e->names_len = prog.entry.names_len;
      prog.entry.names = NULL, prog.entry.names_len = 0;
      e->nvrtc_version = prog.entry.nvrtc_version;
      if (!e->log) st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    }
    if (st == CUJIT_OK && cacheable) cj_cache_put(engine->cache, &key, e);
  }
  out->key = key;
  out->from_cache = hit;
  out->pure = 0;
  out->keyed = cacheable;
  snprintf(out->arch, sizeof out->arch, "%s", prog.arch);
  cj_cache_entry_free(&prog.entry);
  if (st != CUJIT_OK) cj_cache_entry_free(e);
  return st;
}

cujit_status cj_link_compile(cujit_engine *engine, const cj_scan *scan, const char *name,
                             const cujit_compile_options *options, const char *arch,
                             cj_compiled *out) {
  cj_unit_compile unit = cj_compiler_for(arch)->compile;
  int cpu = strcmp(arch, "cpu") == 0;
  size_t n = options->link_count;
  if (n == 0 && cpu) /* a -dlto flag alone: g++'s line leaves NVRTC's flags out, with a note */
    return unit(engine, scan, name, options, arch, out);
  if (n == 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "'%s': the extra flag -dlto makes LTO-IR, which no device loads; to link device "
                   "code at run time name its files in the link option (cujit then compiles the "
                   "program to LTO-IR itself)",
                   name);
  input *ins = calloc(n, sizeof *ins);
  if (!ins) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  cujit_status st = read_inputs(engine, options, cpu, ins);
  int ltoir_only = 1;
  for (size_t i = 0; st == CUJIT_OK && i < n; i++) ltoir_only &= stage_one(ins[i].kind);
  if (st == CUJIT_OK && strncmp(arch, "compute_", 8) == 0 && !ltoir_only)
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "arch '%s' gives PTX only, which cujit links from .cu and .ltoir files alone; "
                 "compile for an sm_NN arch to link .ptx, .fatbin, .cubin or .a files",
                 arch);
  if (st == CUJIT_OK)
    st = cpu ? compile_as_one(engine, scan, name, options, arch, unit, ins, n, out)
             : compile_linked(engine, scan, name, options, arch, unit, ins, n, out);
  free_inputs(ins, n);
  return st;
}

/* --- NVRTC's LTO-IR --------------------------------------------------------------------------- */

int cj_link_lto_list(const cj_option_list *o) {
  for (size_t i = 0; i < o->n; i++)
    if (is_dlto(o->v[i])) return 1;
  return 0;
}

cujit_status cj_link_ltoir(cujit_engine *engine, cj_nvrtc *nv, nvrtcProgram prog,
                           cj_cache_entry *e) {
  if (!nv->nvrtcGetLTOIRSize || !nv->nvrtcGetLTOIR)
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s has no nvrtcGetLTOIR: linking device code (link, -dlto) needs NVRTC 12.0 "
                   "or newer",
                   nv->path);
  size_t n = 0;
  nvrtcResult r = nv->nvrtcGetLTOIRSize(prog, &n);
  if (r != NVRTC_SUCCESS || n == 0)
    return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC made no LTO-IR (%s)",
                   r != NVRTC_SUCCESS ? nv->nvrtcGetErrorString(r) : "empty");
  if (!(e->cubin = malloc(n)) || !(e->ptx = cj_strdup("")))
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if ((r = nv->nvrtcGetLTOIR(prog, e->cubin)) != NVRTC_SUCCESS)
    return cj_fail(engine, CUJIT_ERROR_COMPILE, "NVRTC failed in nvrtcGetLTOIR: %s",
                   nv->nvrtcGetErrorString(r));
  e->cubin_len = n, e->ptx_len = 0;
  return CUJIT_OK;
}
