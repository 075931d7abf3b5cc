/*
** verify.c -- the compiled side of confirming a program's kernels (scan.h): finds each kernel's
** .entry and its .param list in the PTX NVRTC made (or its symbol in the shared object g++ made for
** the CPU device), keeps the kernels and the variants the program holds, and checks their
** parameter counts and sizes against the signatures cujit launches them with.
** The kernels handed out are copies: the scan keeps its own until cj_scan_free.
*/
#include "base/base.h"
#include "lang/elf_symbols.h"
#include "lang/lexicon.h"
#include "verify.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text between the parentheses of `.entry NAME(...)`, or NULL when the PTX has no such entry.
 */
static const char *find_entry(const char *ptx, const char *name, size_t *len) {
  size_t nl = strlen(name);
  for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
    const char *s = p + 6;
    if (!isspace((unsigned char)*s)) continue;
    while (isspace((unsigned char)*s)) s++;
    if (strncmp(s, name, nl) != 0) continue;
    s += nl;
    while (isspace((unsigned char)*s)) s++;
    if (*s != '(') continue;
    const char *close = strchr(s, ')');
    if (!close) return NULL;
    *len = (size_t)(close - s - 1);
    return s + 1;
  }
  return NULL;
}

/* The bytes of one ".param [.align N] .TYPE name[COUNT]": the width of .TYPE (.u32, .b8, .f64,
** ...) times COUNT; 0 when it cannot be read. */
static size_t param_bytes(const char *s, size_t n) {
  size_t width = 0, count = 1;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '.' && i + 2 < n && strchr("usbf", s[i + 1]) && isdigit((unsigned char)s[i + 2]) &&
        !width) {
      width = (size_t)strtoul(s + i + 2, NULL, 10) / 8;
    } else if (s[i] == '[') {
      count = (size_t)strtoul(s + i + 1, NULL, 10);
    }
  }
  return width * count;
}

/* The alignment a ".param .align N ..." states, else the width of its type. */
static size_t param_align(const char *s, size_t n, size_t bytes) {
  const char *a = NULL;
  for (size_t i = 0; i + 6 < n && !a; i++)
    if (memcmp(s + i, ".align", 6) == 0) a = s + i + 6;
  size_t align = a ? (size_t)strtoul(a, NULL, 10) : 0;
  if (!align)
    for (size_t i = 0; i + 2 < n && !align; i++)
      if (s[i] == '.' && strchr("usbf", s[i + 1]) && isdigit((unsigned char)s[i + 2]))
        align = (size_t)strtoul(s + i + 2, NULL, 10) / 8;
  return align && align <= bytes ? align : 1;
}

/* A parameter whose type cujit cannot read (a struct, a typedef it did not see) takes the size
** and alignment NVRTC gave it: it is then passed as that many bytes (CUJIT_ARG_BYTES, a Lua
** string). The offsets are laid out again. */
static void fill_sizes(cj_signature *sig, const char *params, size_t len) {
  size_t count = 0, off = 0;
  for (const char *p = params, *end = params + len; p < end && count < sig->nparams; count++) {
    const char *at = strstr(p, ".param");
    if (!at || at >= end) break;
    const char *next = memchr(at, ',', (size_t)(end - at));
    if (!next) next = end;
    cj_param *pr = &sig->params[count];
    size_t bytes = param_bytes(at + 6, (size_t)(next - at - 6));
    if (pr->size == 0 && pr->kind == CUJIT_PARAM_SCALAR && bytes)
      pr->size = bytes, pr->align = param_align(at + 6, (size_t)(next - at - 6), bytes);
    off = (off + pr->align - 1) / pr->align * pr->align;
    pr->offset = off;
    off += pr->size;
    p = next;
  }
  sig->param_bytes = off;
}

/* The CPU device's object has no .param list, but each entry exports its parameters' sizes and
** alignments as g++ laid them out (cjp_<entry>: the count, the sizes and a 0, the alignments and
** a 0, as 64-bit words; cpu_sync.h's layout): a parameter cujit could not size (a struct passed
** by value) takes them, as on a GPU it takes the PTX's, so the same bytes are passed to both. The
** offsets are laid out again. Without the symbol it stays unsized (refused at launch). */
static cujit_status fill_from_object(const unsigned char *object, size_t object_len,
                                     cj_signature *sig, char *err, size_t err_len) {
  int unsized = 0;
  for (size_t i = 0; i < sig->nparams; i++)
    unsized |= sig->params[i].size == 0 && sig->params[i].kind == CUJIT_PARAM_SCALAR;
  char entry[320], symbol[330];
  if (!unsized || !cj_entry_identifier(sig->name, entry, sizeof entry)) return CUJIT_OK;
  snprintf(symbol, sizeof symbol, "cjp_%s", entry);
  size_t bytes = 0;
  const unsigned char *d = cj_elf_data(object, object_len, symbol, &bytes);
  uint64_t count = 0;
  if (!d || bytes < 8) return CUJIT_OK;
  memcpy(&count, d, 8);
  if (count != sig->nparams || bytes != 8 * (2 * count + 3)) {
    char *text = cj_signature_format(sig);
    snprintf(err, err_len,
             "kernel '%s' has %zu parameter(s) as cujit read it (%s) but %llu as compiled; give "
             "its signature in the signatures option",
             sig->name, sig->nparams, text ? text : sig->name, (unsigned long long)count);
    free(text);
    return CUJIT_ERROR_SIGNATURE;
  }
  size_t off = 0;
  for (size_t i = 0; i < sig->nparams; i++) {
    uint64_t size, align;
    memcpy(&size, d + 8 * (1 + i), 8);
    memcpy(&align, d + 8 * (2 + count + i), 8);
    cj_param *pr = &sig->params[i];
    /* Any size g++ gave, however large: one past the parameter space is then refused with the
    ** GPU's limit, as NVRTC refuses it, not left unsized (1 << 40 only keeps the sums exact). */
    if (pr->size == 0 && pr->kind == CUJIT_PARAM_SCALAR && size && align &&
        size < ((uint64_t)1 << 40) && (align & (align - 1)) == 0)
      pr->size = (size_t)size, pr->align = (size_t)align;
    if (pr->align == 0) pr->align = 1;
    off = (off + pr->align - 1) / pr->align * pr->align;
    pr->offset = off;
    off += pr->size;
  }
  sig->param_bytes = off;
  return CUJIT_OK;
}

/* Compares the .param list of a kernel's entry with its signature. */
static cujit_status check_params(const cj_signature *sig, const char *params, size_t len, char *err,
                                 size_t err_len) {
  size_t count = 0;
  for (const char *p = params, *end = params + len; p < end;) {
    const char *at = strstr(p, ".param");
    if (!at || at >= end) break;
    const char *next = memchr(at, ',', (size_t)(end - at));
    if (!next) next = end;
    size_t bytes = param_bytes(at + 6, (size_t)(next - at - 6));
    if (count < sig->nparams && sig->params[count].size && bytes &&
        bytes != sig->params[count].size) {
      const cj_param *pr = &sig->params[count];
      snprintf(err, err_len,
               "kernel '%s': parameter %zu '%s' (%s) takes %zu bytes as cujit read it, but %zu "
               "in the compiled kernel; give the kernel's signature in the signatures option",
               sig->name, count + 1, pr->name, pr->type, pr->size, bytes);
      return CUJIT_ERROR_SIGNATURE;
    }
    count++;
    p = next;
  }
  if (count != sig->nparams) {
    char *text = cj_signature_format(sig);
    snprintf(err, err_len,
             "kernel '%s' has %zu parameter(s) as cujit read it (%s) but %zu as compiled; give "
             "its signature in the signatures option",
             sig->name, sig->nparams, text ? text : sig->name, count);
    free(text);
    return CUJIT_ERROR_SIGNATURE;
  }
  return CUJIT_OK;
}

/* The names of the extern "C" kernels the PTX has (C++ names, mangled "_Z...", are left out), as
** "a, b"; 0 when it has none. */
static int entry_names(const char *ptx, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (const char *p = strstr(ptx, ".entry"); p && used + 1 < len; p = strstr(p + 6, ".entry")) {
    const char *s = p + 6, *e;
    while (*s == ' ' || *s == '\t') s++;
    for (e = s; isalnum((unsigned char)*e) || *e == '_' || *e == '$'; e++) continue;
    if (e == s || strncmp(s, "_Z", 2) == 0) continue;
    int n = snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "", (int)(e - s), s);
    used = n > 0 && used + (size_t)n < len ? used + (size_t)n : len - 1;
  }
  return used > 0;
}

/* What was compiled: NVRTC's PTX, or the CPU device's shared object. */
typedef struct compiled {
  const char *ptx;
  const unsigned char *object;
  size_t object_len;
} compiled;

/* Whether the program holds the marker of this variant (scan.c writes it after the definition). */
static int has_marker(const compiled *c, const cj_scan_kernel *k) {
  char mark[300];
  int n = snprintf(mark, sizeof mark, "%scj_variant_%s_%d%s", c->ptx ? " " : "", k->sig.name,
                   k->variant, c->ptx ? ";" : "");
  if (n <= 0 || (size_t)n >= sizeof mark) return 0;
  return c->ptx ? strstr(c->ptx, mark) != NULL
                : cj_elf_defines(c->object, c->object_len, mark) == 1;
}

/* The kernel's .param list in the PTX (*len bytes), or NULL when the program does not define it.
** The CPU device's object has no parameter list to read (g++ checked the redeclarations): an
** empty one stands for a kernel it defines. A C++-linkage kernel's symbol there is mangled by g++
** and is taken as defined (its name expression made g++ instantiate it). */
static const char *compiled_entry(const compiled *c, const cj_scan_kernel *k, size_t *len) {
  if (c->ptx) return find_entry(c->ptx, cj_signature_symbol(&k->sig), len);
  *len = 0;
  char symbol[300]; /* cpu_source.c gives an extern "C" kernel's declarators this name */
  snprintf(symbol, sizeof symbol, "__cj_k_%s", k->sig.name);
  return k->cxx || cj_elf_defines(c->object, c->object_len, symbol) == 1 ||
                 cj_elf_defines(c->object, c->object_len, k->sig.name) == 1 /* a macro wrote it */
             ? ""
             : NULL;
}

/* Of the kernels read under this name, the one NVRTC compiled; NULL when none is in the PTX.
** Several parameter lists and no marker (a definition cujit did not read) is an error. */
static cujit_status pick(const cj_scan *scan, size_t i, const compiled *c, size_t *chosen,
                         char *err, size_t err_len) {
  const cj_scan_kernel *k = &scan->kernels[i];
  *chosen = SIZE_MAX;
  if (k->variant == 0) {
    *chosen = i;
    return CUJIT_OK;
  }
  int lists = 0;
  for (size_t j = 0; j < scan->count; j++)
    if (strcmp(scan->kernels[j].sig.name, k->sig.name) == 0) {
      lists++;
      if (has_marker(c, &scan->kernels[j])) *chosen = j;
    }
  size_t len;
  if (*chosen == SIZE_MAX && compiled_entry(c, k, &len)) {
    snprintf(err, err_len,
             "kernel '%s' has %d parameter lists in the source and the one compiled is none of "
             "the definitions cujit read; give its signature in the signatures option",
             k->sig.name, lists);
    return CUJIT_ERROR_SIGNATURE;
  }
  return CUJIT_OK;
}

static int listed(const cj_signature *out, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(out[i].name, name) == 0) return 1;
  return 0;
}

/* A GPU gives a kernel at most 48 KiB of static __shared__ memory, and ptxas refuses more. The
** CPU device's static shared variables are thread_locals of the object (cpu_prelude.h): those of
** an extern "C" kernel's body are named after it (_ZZ<n>__cj_k_<name>E...), those at file scope
** in the program's namespace (_ZN4__cj...) are counted for a program's only kernel. Not counted:
** those of the functions a kernel calls, and for a C++ kernel its own. */
enum { GPU_STATIC_SHARED = 48 * 1024 };
static cujit_status static_shared(const compiled *c, const cj_signature *k, size_t n, char *err,
                                  size_t err_len) {
  long long file_scope = n == 1 ? cj_elf_tls_bytes(c->object, c->object_len, "_ZN4__cj") : 0;
  for (size_t i = 0; i < n; i++) {
    char prefix[300];
    snprintf(prefix, sizeof prefix, "_ZZ%zu__cj_k_%sE", strlen(k[i].name) + 7, k[i].name);
    long long bytes = cj_elf_tls_bytes(c->object, c->object_len, prefix);
    if (bytes < 0) return CUJIT_OK; /* no full symbol table: nothing to count */
    if (bytes == 0) {               /* a kernel a macro wrote keeps its plain name */
      snprintf(prefix, sizeof prefix, "_ZZ%zu%sE", strlen(k[i].name), k[i].name);
      long long plain = cj_elf_tls_bytes(c->object, c->object_len, prefix);
      if (plain > 0) bytes = plain;
    }
    bytes += file_scope > 0 ? file_scope : 0;
    if (bytes > GPU_STATIC_SHARED) {
      snprintf(
          err, err_len,
          "kernel '%s' uses too much shared data for a GPU: %lld bytes of static __shared__ "
          "memory, of at most %d (ptxas: \"Entry function '%s' uses too much shared data "
          "(0x%llx bytes, 0x%x max)\"); use dynamic shared memory (extern __shared__, its size "
          "given at launch) for the large arrays",
          k[i].name, bytes, GPU_STATIC_SHARED, k[i].name, (unsigned long long)bytes,
          GPU_STATIC_SHARED);
      return CUJIT_ERROR_COMPILE;
    }
  }
  return CUJIT_OK;
}

static cujit_status verify(cj_scan *scan, const compiled *c, cj_signature **kernels, size_t *count,
                           char *err, size_t err_len) {
  *kernels = NULL, *count = 0;
  if (err && err_len) err[0] = '\0';
  cj_signature *out = scan->count ? calloc(scan->count, sizeof *out) : NULL;
  if (scan->count && !out) {
    snprintf(err, err_len, "out of memory reading the kernels of the program");
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  size_t n = 0;
  cujit_status st = CUJIT_OK;
  for (size_t i = 0; i < scan->count && st == CUJIT_OK; i++) {
    cj_scan_kernel *k = &scan->kernels[i];
    size_t chosen, len;
    if (listed(out, n, k->sig.name)) continue;
    if ((st = pick(scan, i, c, &chosen, err, err_len)) != CUJIT_OK) break;
    const char *params =
        chosen == SIZE_MAX ? NULL : compiled_entry(c, &scan->kernels[chosen], &len);
    if (!params && scan->given) {
      snprintf(err, err_len,
               "kernel '%s', given in the signatures option, is not in the compiled program: "
               "check its name, that it is extern \"C\" __global__, and the preprocessor "
               "conditions around it",
               k->sig.name);
      st = CUJIT_ERROR_NOT_FOUND;
    }
    if (!params || st != CUJIT_OK) continue; /* not compiled: an inactive #if, or none chosen */
    k = &scan->kernels[chosen];
    if (c->ptx && (st = check_params(&k->sig, params, len, err, err_len)) != CUJIT_OK) break;
    if (cj_signature_copy(&k->sig, &out[n]) != CUJIT_OK) {
      snprintf(err, err_len, "out of memory reading the kernels of the program");
      st = CUJIT_ERROR_OUT_OF_HOST_MEMORY;
      break;
    }
    if (c->ptx) fill_sizes(&out[n], params, len);
    n++;
    if (c->object &&
        (st = fill_from_object(c->object, c->object_len, &out[n - 1], err, err_len)) != CUJIT_OK)
      break;
  }
  if (st == CUJIT_OK && c->object) st = static_shared(c, out, n, err, err_len);
  if (st == CUJIT_OK && n == 0) {
    char unread[512];
    if (c->ptx && entry_names(c->ptx, unread, sizeof unread))
      snprintf(err, err_len,
               "the program compiles kernel(s) %s, which cujit could not read from the source "
               "(does a macro write them?): give their signatures in the signatures option",
               unread);
    else if (scan->count)
      snprintf(err, err_len,
               "none of the kernels read from the source (%s%s) is in the compiled program: they "
               "are all inside inactive preprocessor conditions",
               scan->kernels[0].sig.name, scan->count > 1 ? ", ..." : "");
    else
      cj_scan_none_message(scan->templates, scan->mangled, scan->macros, err, err_len);
    st = CUJIT_ERROR_NOT_FOUND;
  }
  if (st != CUJIT_OK) {
    for (size_t i = 0; i < n; i++) cj_signature_free(&out[i]);
    free(out);
    return st;
  }
  *kernels = out, *count = n;
  return CUJIT_OK;
}

cujit_status cj_verify_ptx(cj_scan *scan, const char *ptx, cj_signature **kernels, size_t *count,
                           char *err, size_t err_len) {
  compiled c = {.ptx = ptx ? ptx : ""};
  return verify(scan, &c, kernels, count, err, err_len);
}

cujit_status cj_verify_object(cj_scan *scan, const unsigned char *object, size_t len,
                              cj_signature **kernels, size_t *count, char *err, size_t err_len) {
  if (cj_elf_defines(object, len, "cj_cpu_abi_version") != 1) {
    *kernels = NULL, *count = 0;
    snprintf(err, err_len,
             "the CPU device's compiled program is not a shared object cujit made; clear the "
             "cache (cujit cache clear) and compile again");
    return CUJIT_ERROR_COMPILE;
  }
  compiled c = {.object = object, .object_len = len};
  return verify(scan, &c, kernels, count, err, err_len);
}
