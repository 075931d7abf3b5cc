/*
** cpu_source.c -- the CPU device's translation unit: cujit's kernel source (what NVRTC gets)
** rewritten for the system C++ compiler. One pass over the source, aware of comments, literals
** and #line, that refuses what the host cannot run (textures, inline PTX, ...) with the kernel and
** line that use it (and what NVRTC refuses: exception handling), turns `extern __shared__` arrays
** into views of the block's dynamic shared memory, maps CUDA's headers onto cujit's, and starts
** every loop body of a function with a tick of the executor's time slices (cpu_exec.h); the
** source goes into namespace __cj, away from the names of the prelude's system headers; then one
** exported entry per kernel.
*/
#include "cpu_source.h"
#include "cpu_entries.h"
#include "cpu_names.h"
#include "base/base.h"
#include "lang/lexicon.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scan {
  const char *s;
  size_t i, n;
  cj_buf out;
  char file[256]; /* where #line says we are */
  long line;
  unsigned depth;         /* brace depth */
  unsigned long function; /* bit d set: brace at depth d opened a function body (or within) */
  unsigned long outer; /* bit d set: brace at depth d opened a namespace or an extern "C" block */
  const char *const *kernels;
  const int *cxx;         /* cxx[k]: kernel k has C++ linkage (NULL: none has) */
  unsigned char *defined; /* defined[k]: extern "C" kernel k's definition is __cj_k_<name> */
  size_t nkernels;
  char *err;
  size_t err_len;
  /* Conditional blocks: bit d of `cpu_test` set when the #if at nesting d tests __CUJIT_CPU__,
  ** bit d of `off` when its current branch is not compiled for the CPU device. Nothing is
  ** refused in such a branch: portable code keeps its GPU-only parts under #ifndef __CUJIT_CPU__.
  */
  unsigned nesting;
  unsigned long cpu_test, off;
  int failed;     /* a directive was refused (err holds why) */
  size_t tick_at; /* the `)` closing a loop's header, to be followed by a tick; 0: none */
  /* The user's headers (NULL: none known, their #includes left to g++), rewritten as the source
  ** is; `header`: this scan is one of them, whose code stays where it is included (no namespace
  ** of its own, no kernel renamed), `level` how deep. */
  cj_cpu_headers *headers;
  unsigned char *state; /* state[h]: 1 header h is being rewritten, 2 it is done */
  char **cluster;       /* cluster[k]: the text of kernel k's __cluster_dims__ arguments, or NULL */
  int header;
  unsigned level;
} scan;

/* What goes around a loop: a counter of its iterations in a variable of its own (a register,
** where a counter in memory would chain each iteration to the last through a store), and a tick
** before the body. A `switch` holds the variable because it takes no `else`: an `else` of the
** user's after the loop stays bound as it was, as it does after the tick's `else`. No newline,
** so lines stay as they were. */
static const char loop_slice[] =
    "switch (unsigned cj_slice = ::cj_cpu::slice_iterations) default: ";
static const char loop_tick[] = " if (::cj_cpu::tick(cj_slice)) {} else ";

static int ident_start(int c) {
  return isalpha(c) || c == '_';
}
static int ident_char(int c) {
  return isalnum(c) || c == '_';
}

/* Copies s[i, j) to the output, counting lines. */
static void emit_to(scan *sc, size_t j) {
  for (size_t k = sc->i; k < j; k++)
    if (sc->s[k] == '\n') sc->line++;
  cj_buf_add(&sc->out, sc->s + sc->i, j - sc->i);
  sc->i = j;
}

/* Whether the name at p (len characters) is a definition: "void name(". */
static int defines(const char *s, const char *p, size_t len) {
  const char *q = p + len, *v = p;
  while (*q == ' ' || *q == '\t') q++;
  while (v > s && isspace((unsigned char)v[-1])) v--;
  return *q == '(' && v - s >= 4 && strncmp(v - 4, "void", 4) == 0 &&
         (v - s == 4 || !ident_char((unsigned char)v[-5]));
}

/* The kernel defined last before offset `at`, else the first kernel. */
static const char *kernel_at(const scan *sc, size_t at) {
  const char *best = sc->nkernels ? sc->kernels[0] : "?";
  size_t best_pos = 0;
  for (size_t k = 0; k < sc->nkernels; k++) {
    size_t len = strlen(sc->kernels[k]);
    for (const char *p = strstr(sc->s, sc->kernels[k]); p && (size_t)(p - sc->s) < at;
         p = strstr(p + 1, sc->kernels[k]))
      if ((size_t)(p - sc->s) >= best_pos && defines(sc->s, p, len))
        best = sc->kernels[k], best_pos = (size_t)(p - sc->s);
  }
  return best;
}

static void refuse_because(scan *sc, size_t at, const char *what, const char *why) {
  const char *k = kernel_at(sc, at);
  long line = sc->line;
  for (size_t j = sc->i; j < at; j++)
    if (sc->s[j] == '\n') line++;
  char where[320];
  size_t kl = strlen(k);
  if (strcmp(sc->file, k) == 0)
    snprintf(where, sizeof where, "line %ld of its body", line);
  else if (strncmp(sc->file, k, kl) == 0 && strcmp(sc->file + kl, ":preamble") == 0)
    snprintf(where, sizeof where, "line %ld of its preamble", line);
  else
    snprintf(where, sizeof where, "%s:%ld", sc->file, line);
  snprintf(sc->err, sc->err_len, "kernel '%s' uses %s (%s), %s", k, what, where, why);
}
static void refuse(scan *sc, size_t at, const char *what) {
  refuse_because(sc, at, what, "which is not supported on the CPU device");
}

/* Follows #if/#ifdef/#ifndef/#elif/#else/#endif for the branches that test __CUJIT_CPU__. */
static void conditional(scan *sc, const char *d, const char *end) {
  const char *mention = strstr(d, "__CUJIT_CPU__");
  int tests = mention && mention < end;
  unsigned long bit = sc->nesting < 8 * sizeof sc->off ? 1ul << sc->nesting : 0;
  if (strncmp(d, "ifdef", 5) == 0 || strncmp(d, "ifndef", 6) == 0 || strncmp(d, "if", 2) == 0) {
    unsigned long next = bit << 1;
    if (!next) return;
    sc->nesting++;
    /* compiled for the CPU unless it says "not": #ifndef, !defined(...) */
    int negated = strncmp(d, "ifndef", 6) == 0 || (tests && strstr(d, "!") && strstr(d, "!") < end);
    sc->cpu_test = tests ? sc->cpu_test | next : sc->cpu_test & ~next;
    sc->off = tests && negated ? sc->off | next : sc->off & ~next;
  } else if (strncmp(d, "else", 4) == 0 || strncmp(d, "elif", 4) == 0) {
    if (sc->cpu_test & bit) sc->off ^= bit;
  } else if (strncmp(d, "endif", 5) == 0 && sc->nesting > 0) {
    sc->cpu_test &= ~bit, sc->off &= ~bit;
    sc->nesting--;
  }
}

static void include(scan *sc, const char *d, size_t end);

/* A preprocessor line at sc->i (the '#'): tracks #line and conditionals, maps CUDA's headers. The
** user's code lives in namespace __cj (cj_cpu_translation_unit), headers included at file scope
** outside it, as the prelude's are. */
static void directive(scan *sc) {
  size_t end = sc->i;
  while (end < sc->n && sc->s[end] != '\n') {
    if (sc->s[end] == '\\' && end + 1 < sc->n && sc->s[end + 1] == '\n') end++;
    end++;
  }
  const char *d = sc->s + sc->i + 1;
  while (*d == ' ' || *d == '\t') d++;
  long line;
  char file[256];
  if (sscanf(d, "line %ld \"%255[^\"]\"", &line, file) == 2) {
    emit_to(sc, end);
    snprintf(sc->file, sizeof sc->file, "%s", file);
    sc->line = line - 1; /* the directive's own newline comes next */
    return;
  }
  conditional(sc, d, sc->s + end);
  if (strncmp(d, "include", 7) == 0 && sc->depth == 0 && !sc->header) { /* at file scope */
    cj_buf_puts(&sc->out, "}\n");
    include(sc, d, end);
    if (!sc->failed)
      cj_buf_printf(&sc->out, "\nnamespace __cj { %s\n#line %ld \"%s\"", cj_cpu_cuda_api,
                    sc->line + 1, sc->file);
    return;
  }
  if (strncmp(d, "include", 7) == 0) {
    include(sc, d, end);
    return;
  }
  emit_to(sc, end);
}

static int rewrite(scan *sc);

/* The user's header h (headers->names[h]) rewritten as the source is, once, into
** headers->rewritten[h]: its CUDA headers mapped or refused and its `extern __shared__` arrays
** rewritten at any depth. A header being rewritten (an include cycle, which its guard stops) is
** only named again. A header refused becomes an #error with the reason: the preprocessor may
** never reach its #include (#if __CUDA_ARCH__ >= 900), and then nothing is refused. 0: out of
** memory, or nested too deep. */
static int rewrite_header(scan *parent, size_t h) {
  if (parent->state[h]) return 1;
  if (parent->level >= 200) {
    snprintf(parent->err, parent->err_len,
             "'%s' is included more than 200 headers deep (an include cycle without a guard?)",
             parent->headers->names[h]);
    return 0;
  }
  parent->state[h] = 1;
  const char *text = parent->headers->sources[h];
  scan sc = {.s = text,
             .n = strlen(text),
             .line = 1,
             .kernels = parent->kernels,
             .cxx = parent->cxx,
             .defined = parent->defined,
             .nkernels = parent->nkernels,
             .err = parent->err,
             .err_len = parent->err_len,
             .headers = parent->headers,
             .state = parent->state,
             .header = 1,
             .level = parent->level + 1};
  snprintf(sc.file, sizeof sc.file, "%s", parent->headers->names[h]);
  cj_buf_printf(&sc.out, "#line 1 \"%s\"\n", sc.file);
  if (!rewrite(&sc)) { /* refused: said where it is included, if its #include is compiled */
    cj_buf_free(&sc.out);
    cj_buf_printf(&sc.out, "#line %ld \"%s\"\n#error \"", sc.line, sc.file);
    for (const char *c = parent->err; *c; c++)
      cj_buf_printf(&sc.out, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
    cj_buf_puts(&sc.out, "\"\n");
    parent->err[0] = '\0';
  }
  if (sc.out.failed) {
    cj_buf_free(&sc.out);
    snprintf(parent->err, parent->err_len, "out of host memory");
    return 0;
  }
  parent->headers->rewritten[h] = sc.out.data;
  parent->state[h] = 2;
  return 1;
}

/* Whether a header found on the include path is the system's (an include directory such as
** /usr/include given to cujit): left to g++ unchanged, not rewritten as the user's. */
static int system_header(const char *path) {
  static const char *const dirs[] = {"/usr/include/", "/usr/lib/", "/usr/local/include/"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
    if (strncmp(path, dirs[i], strlen(dirs[i])) == 0) return 1;
  return 0;
}

/* An #include at sc->i, ending at `end`: CUDA's headers mapped to cujit's, or refused, whether
** named as written or by the real path the include resolver put in its place; the user's own
** headers rewritten (rewrite_header) and included from the scratch directory as
** <__cj_h/N.h>; anything else (system headers, a name made by a macro) left to g++. */
static void include(scan *sc, const char *d, size_t end) {
  const char *open = d + 7, *stop = NULL, *line_end = sc->s + end;
  while (open < line_end && (*open == ' ' || *open == '\t')) open++;
  char close = *open == '<' ? '>' : *open == '"' ? '"' : 0;
  if (close) stop = memchr(open + 1, close, (size_t)(line_end - open - 1));
  char spec[1024];
  if (!stop || (size_t)(stop - open) >= sizeof spec) {
    emit_to(sc, end);
    return;
  }
  snprintf(spec, sizeof spec, "%.*s", (int)(stop - open - 1), open + 1);
  const char *name = spec;
  size_t h = SIZE_MAX;
  for (size_t k = 0; sc->headers && spec[0] == '/' && k < sc->headers->count; k++)
    if (strcmp(sc->headers->names[k], spec) == 0) h = k;
  if (h != SIZE_MAX && sc->headers->toolkit_names[h]) name = sc->headers->toolkit_names[h];
  for (size_t k = 0; (h == SIZE_MAX || name != spec) && k < cj_cpu_cuda_header_count; k++) {
    if (strncmp(name, cj_cpu_cuda_headers[k].header, strlen(cj_cpu_cuda_headers[k].header)) != 0)
      continue;
    if (cj_cpu_cuda_headers[k].refused) {
      if (sc->off) break;
      refuse(sc, sc->i, cj_cpu_cuda_headers[k].refused);
      sc->failed = 1;
      return;
    }
    if (*cj_cpu_cuda_headers[k].stand_in)
      cj_buf_printf(&sc->out, "#include <%s>", cj_cpu_cuda_headers[k].stand_in);
    sc->i = end;
    return;
  }
  if (h != SIZE_MAX && name != spec) { /* another of the toolkit's: by its name, as before */
    cj_buf_printf(&sc->out, "#include <%s>", name);
    sc->i = end;
  } else if (h != SIZE_MAX && system_header(spec)) {
    emit_to(sc, end); /* a system header on the include path: g++'s, as it is */
  } else if (h != SIZE_MAX) {
    if (!rewrite_header(sc, h)) {
      sc->failed = 1;
      return;
    }
    cj_buf_printf(&sc->out, "#include <__cj_h/%zu.h>", h);
    sc->i = end;
  } else {
    emit_to(sc, end);
  }
}

/* `extern` at sc->i, `after_extern` past it: a declaration `extern ... __shared__ ... T name[];`
** (__shared__ anywhere among the specifiers, __align__ or alignas too, T any type, a template's
** parameter among them) becomes, inside a function, a reference to the block's dynamic shared
** memory; elsewhere a macro for the same (the #line after it keeps lines right). 0: not one. */
static int extern_shared(scan *sc, size_t after_extern) {
  size_t semi = after_extern, shared = SIZE_MAX;
  while (semi < sc->n && sc->s[semi] != ';' && sc->s[semi] != '{' && sc->s[semi] != '}' &&
         sc->s[semi] != '"' && sc->s[semi] != '=') {
    if (shared == SIZE_MAX && strncmp(sc->s + semi, "__shared__", 10) == 0 &&
        !ident_char((unsigned char)sc->s[semi - 1]) && !ident_char((unsigned char)sc->s[semi + 10]))
      shared = semi;
    semi++;
  }
  if (shared == SIZE_MAX || semi >= sc->n || sc->s[semi] != ';') return 0;
  size_t after_shared = after_extern;
  size_t close = semi;
  while (close > after_shared && isspace((unsigned char)sc->s[close - 1])) close--;
  if (close < 2 || sc->s[close - 1] != ']') return 0;
  size_t open = close - 1;
  while (open > after_shared && isspace((unsigned char)sc->s[open - 1])) open--;
  if (sc->s[open - 1] != '[') return 0;
  size_t name_end = open - 1;
  while (name_end > after_shared && isspace((unsigned char)sc->s[name_end - 1])) name_end--;
  size_t name_start = name_end;
  while (name_start > after_shared && ident_char((unsigned char)sc->s[name_start - 1]))
    name_start--;
  if (name_start == name_end) return 0;
  /* The element type: the text between extern and the name, without __shared__ and
  ** __align__(...). */
  cj_buf type = {0};
  for (size_t k = after_shared; k < name_start; k++) {
    if (k == shared) {
      k += 9;
      continue;
    }
    if (strncmp(sc->s + k, "__align__", 9) == 0 || strncmp(sc->s + k, "alignas", 7) == 0) {
      int parens = 0; /* to the ')' that closes it: __align__(sizeof(float4)) */
      for (; k < name_start; k++) {
        parens += (sc->s[k] == '(') - (sc->s[k] == ')');
        if (sc->s[k] == ')' && parens == 0) break;
      }
      continue;
    }
    /* One line: at file scope the type goes into a #define, which a newline would end. */
    if (isspace((unsigned char)sc->s[k]))
      cj_buf_add(&type, " ", type.len && type.data[type.len - 1] != ' ');
    else
      cj_buf_add(&type, sc->s + k, 1);
  }
  int name_len = (int)(name_end - name_start);
  const char *name = sc->s + name_start;
  long newlines = 0;
  for (size_t k = sc->i; k <= semi; k++) newlines += sc->s[k] == '\n';
  /* The lines after the declaration keep their numbers: in a function its newlines follow the
  ** statement that replaces it; at file scope a #line says where the text goes on. */
  if (sc->function >> sc->depth & 1ul) {
    cj_buf_printf(&sc->out, "%s (&%.*s)[] = *(%s(*)[])::cj_cpu::dyn_shared();",
                  type.data ? type.data : "", name_len, name, type.data ? type.data : "");
    for (long k = 0; k < newlines; k++) cj_buf_puts(&sc->out, "\n");
  } else {
    cj_buf_printf(
        &sc->out,
        "\n#undef %.*s\n#define %.*s (*(%s(*)[])::cj_cpu::dyn_shared())\n#line %ld \"%s\"\n",
        name_len, name, name_len, name, type.data ? type.data : "", sc->line + newlines, sc->file);
  }
  sc->line += newlines;
  cj_buf_free(&type);
  sc->i = semi + 1;
  return 1;
}

/* The end of the string or character literal, or comment, that starts at s[i], or i. */
static size_t skip_literal(const char *s, size_t i, size_t n) {
  char c = s[i], c1 = i + 1 < n ? s[i + 1] : 0;
  size_t j = i + 1;
  if (c == '/' && c1 == '/') {
    while (j < n && s[j] != '\n') j++;
  } else if (c == '/' && c1 == '*') {
    const char *e = strstr(s + i + 2, "*/");
    j = e ? (size_t)(e - s) + 2 : n;
  } else if (c == '"' || c == '\'') {
    while (j < n && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
    j = j < n ? j + 1 : n;
  } else {
    return i;
  }
  return j;
}

/* `for` or `while` ends at `after` inside a function: note the `)` that closes its header and
** return 1, unless a `;` follows it (the end of a do-while, or an empty loop) or a loop's header
** is open already. */
static int note_loop(scan *sc, size_t after, int is_while) {
  if (sc->tick_at || !(sc->function >> sc->depth & 1ul)) return 0;
  size_t k = after;
  while (k < sc->n && isspace((unsigned char)sc->s[k])) k++;
  if (k >= sc->n || sc->s[k] != '(') return 0;
  int parens = 0;
  for (; k < sc->n; k++) {
    size_t lit = skip_literal(sc->s, k, sc->n);
    if (lit != k) {
      k = lit - 1;
      continue;
    }
    if (sc->s[k] == '#' || sc->s[k] == '{' || sc->s[k] == '}' || (sc->s[k] == ';' && !parens))
      return 0; /* a directive, a brace or a stray `;`: leave it as written */
    parens += (sc->s[k] == '(') - (sc->s[k] == ')');
    if (parens == 0) break;
  }
  if (k >= sc->n) return 0;
  size_t next = k + 1;
  while (next < sc->n && isspace((unsigned char)sc->s[next])) next++;
  if (is_while && next < sc->n && sc->s[next] == ';') return 0;
  sc->tick_at = k;
  return 1;
}

/* Whether the brace at sc->i opens a function body: the last thing before it is `)`, or a
** trailing `const`/`noexcept`/`override`, or we are already inside one. */
static int opens_function(const scan *sc) {
  if (sc->function >> sc->depth & 1ul) return 1;
  size_t k = sc->i;
  while (k > 0 && isspace((unsigned char)sc->s[k - 1])) k--;
  if (k > 0 && sc->s[k - 1] == ')') return 1;
  static const char *const tails[] = {"const", "noexcept", "override", "final"};
  for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
    size_t l = strlen(tails[t]);
    if (k >= l && strncmp(sc->s + k - l, tails[t], l) == 0) return 1;
  }
  return 0;
}

/* Whether the brace at sc->i opens a namespace (`namespace`, `namespace a::b`, `inline
** namespace x`) or a linkage block (`extern "C" {`, cujit's own checks among them): a kernel
** declared inside one is still at namespace scope. */
static int opens_namespace(const scan *sc) {
  size_t k = sc->i;
  while (k > 0 && isspace((unsigned char)sc->s[k - 1])) k--;
  if (k >= 3 && sc->s[k - 1] == '"') { /* extern "C" or "C++" */
    size_t q = k - 1;
    while (q > 0 && sc->s[q - 1] != '"') q--;
    if (q == 0) return 0;
    k = q - 1;
    while (k > 0 && isspace((unsigned char)sc->s[k - 1])) k--;
    return k >= 6 && strncmp(sc->s + k - 6, "extern", 6) == 0;
  }
  while (k > 0 && (ident_char((unsigned char)sc->s[k - 1]) || sc->s[k - 1] == ':' ||
                   isspace((unsigned char)sc->s[k - 1]))) {
    if (k >= 9 && strncmp(sc->s + k - 9, "namespace", 9) == 0 &&
        (k == 9 || !ident_char((unsigned char)sc->s[k - 10])))
      return 1;
    k--;
  }
  return 0;
}

/* Whether the parameter list opening at s[at] ('(') is followed by a body: a definition. */
static int has_body(const scan *sc, size_t at) {
  int parens = 0;
  for (size_t k = at; k < sc->n; k++) {
    if (sc->s[k] == '(') parens++;
    if (sc->s[k] == ')' && --parens == 0) {
      k++;
      while (k < sc->n && (isspace((unsigned char)sc->s[k]) || ident_char((unsigned char)sc->s[k])))
        k++; /* const, noexcept, ... */
      return k < sc->n && sc->s[k] == '{';
    }
    if (sc->s[k] == ';' || sc->s[k] == '{') return 0;
  }
  return 0;
}

/* The extern "C" kernel whose declarator is the identifier s[i, j), or SIZE_MAX; *definition: it
** is followed by a body. An extern "C" kernel is one C function of its name, the same as a C
** library function of that name in any namespace (sync, remove, ...), so its declarations and
** definition at namespace scope (in namespaces and extern "C" blocks) get the reserved name
** __cj_k_<name>: the identifier follows a word or a `)` (`void k(`, `__launch_bounds__(256) k(`)
** and comes before `(`. Nothing else changes: not `v.k(...)`, not `k(` in a function or a class,
** not a header's. A kernel a macro writes keeps its plain name (the entry then names that). */
static size_t declared_kernel(const scan *sc, size_t i, size_t j, int *definition) {
  unsigned long levels = sc->depth ? (2ul << sc->depth) - 2 : 0; /* bits 1..depth */
  if ((sc->outer & levels) != levels) return SIZE_MAX;           /* in a function or a class */
  size_t after = j, before = i;
  while (after < sc->n && isspace((unsigned char)sc->s[after])) after++;
  if (after >= sc->n || sc->s[after] != '(') return SIZE_MAX;
  while (before > 0 && isspace((unsigned char)sc->s[before - 1])) before--;
  if (before == 0 || !(ident_char((unsigned char)sc->s[before - 1]) || sc->s[before - 1] == ')'))
    return SIZE_MAX;
  for (size_t k = 0; k < sc->nkernels; k++)
    if (strlen(sc->kernels[k]) == j - i && memcmp(sc->s + i, sc->kernels[k], j - i) == 0 &&
        cj_cpu_c_kernel(sc->kernels[k], sc->cxx, k)) {
      *definition = has_body(sc, after);
      return k;
    }
  return SIZE_MAX;
}

/* Whether the `__device__` ending at s[j] begins a variable at namespace scope: its declarator
** meets '=', '[', '{' or ';' before any '('. The host writes such a variable behind the compiler's
** back (cujit_program_global), so it is marked "used": a static one that no kernel writes is not
** folded to its initial value and removed (for __constant__, cpu_prelude.h does the same). */
static int device_variable(const scan *sc, size_t j) {
  unsigned long levels = sc->depth ? (2ul << sc->depth) - 2 : 0;
  if ((sc->outer & levels) != levels) return 0; /* in a function or a class */
  for (size_t k = j; k < sc->n; k++) {
    char c = sc->s[k];
    if (c == '(') return 0;
    if (c == '=' || c == '[' || c == '{' || c == ';') return 1;
  }
  return 0;
}

/* `__cluster_dims__` ending at s[j]: followed by `(args)` and the name of a kernel of the unit,
** the arguments are kept for the kernel's entry (cj_cpu_write_entries exports them, the launch
** takes them: issue 26) and the attribute leaves the text, its lines kept. 0 when not so (a
** template's, whose arguments may name its parameters): the prelude's macro then refuses it. */
static int cluster_dims(scan *sc, size_t j) {
  size_t open = j, close, name, end;
  while (open < sc->n && isspace((unsigned char)sc->s[open])) open++;
  if (open >= sc->n || sc->s[open] != '(') return 0;
  int depth = 0;
  for (close = open; close < sc->n; close++)
    if (sc->s[close] == '(')
      depth++;
    else if (sc->s[close] == ')' && --depth == 0)
      break;
  for (name = close + 1; name < sc->n && isspace((unsigned char)sc->s[name]); name++) {
  }
  for (end = name; end < sc->n && ident_char((unsigned char)sc->s[end]); end++) {
  }
  for (size_t k = 0; close < sc->n && end > name && k < sc->nkernels; k++) {
    if (strlen(sc->kernels[k]) != end - name || memcmp(sc->s + name, sc->kernels[k], end - name))
      continue;
    char *args = malloc(close - open);
    if (!args) return 0;
    memcpy(args, sc->s + open + 1, close - open - 1);
    args[close - open - 1] = '\0';
    free(sc->cluster[k]);
    sc->cluster[k] = args;
    for (; sc->i <= close; sc->i++)
      if (sc->s[sc->i] == '\n') cj_buf_puts(&sc->out, "\n"), sc->line++;
    return 1;
  }
  return 0;
}

/* The rewritten source into sc->out; 0 with sc->err set when something is not supported. */
static int rewrite(scan *sc) {
  int line_start = 1;
  while (sc->i < sc->n) {
    size_t i = sc->i;
    char c = sc->s[i], c1 = i + 1 < sc->n ? sc->s[i + 1] : 0;
    if (c == '#' && line_start) {
      directive(sc);
      if (sc->failed) return 0;
      continue;
    }
    if (c == '\n')
      line_start = 1;
    else if (!isspace((unsigned char)c))
      line_start = 0;
    size_t j = skip_literal(sc->s, i, sc->n); /* past a comment or literal: copied as it is */
    if (j == i) j = i + 1;
    if (c == '{') {
      int fn = opens_function(sc), outer = !fn && opens_namespace(sc);
      if (sc->depth + 1 < 8 * sizeof sc->function) {
        sc->depth++;
        sc->function = fn ? sc->function | 1ul << sc->depth : sc->function & ~(1ul << sc->depth);
        sc->outer = outer ? sc->outer | 1ul << sc->depth : sc->outer & ~(1ul << sc->depth);
      }
    } else if (c == '}') {
      if (sc->depth > 0) sc->depth--;
    } else if (ident_start((unsigned char)c) &&
               (i == 0 || !ident_char((unsigned char)sc->s[i - 1]))) {
      while (j < sc->n && ident_char((unsigned char)sc->s[j])) j++;
      size_t len = j - i;
      /* A header's host helpers call the runtime (helper_cuda.h): not refused there. */
      for (size_t k = 0; !sc->off && k < cj_cpu_unsupported_count; k++)
        if (strlen(cj_cpu_unsupported[k].name) == len &&
            !(sc->header && strstr(cj_cpu_unsupported[k].what, "device runtime")) &&
            memcmp(sc->s + i, cj_cpu_unsupported[k].name, len) == 0) {
          refuse(sc, i, cj_cpu_unsupported[k].what);
          return 0;
        }
      for (size_t k = 0; !sc->off && !sc->header && k < cj_cpu_gpu_refuses_count; k++)
        if (strlen(cj_cpu_gpu_refuses[k].name) == len &&
            memcmp(sc->s + i, cj_cpu_gpu_refuses[k].name, len) == 0) {
          char why[160];
          snprintf(why, sizeof why, "which a GPU refuses (NVRTC: \"%s\")",
                   cj_cpu_gpu_refuses[k].why);
          refuse_because(sc, i, cj_cpu_gpu_refuses[k].what, why);
          return 0;
        }
      if ((len == 3 && memcmp(sc->s + i, "for", 3) == 0) ||
          (len == 5 && memcmp(sc->s + i, "while", 5) == 0)) {
        if (note_loop(sc, j, len == 5)) cj_buf_puts(&sc->out, loop_slice);
      }
      if (len == 16 && memcmp(sc->s + i, "__cluster_dims__", 16) == 0 && !sc->off && !sc->header &&
          cluster_dims(sc, j))
        continue;
      int definition = 0;
      size_t kernel = sc->header ? SIZE_MAX : declared_kernel(sc, i, j, &definition);
      if (kernel != SIZE_MAX) {
        cj_buf_puts(&sc->out, "__cj_k_");
        if (definition) sc->defined[kernel] = 1;
      }
      if (len == 10 && memcmp(sc->s + i, "__device__", 10) == 0 && device_variable(sc, j)) {
        emit_to(sc, j);
        cj_buf_puts(&sc->out, " __attribute__((used))");
        continue;
      }
      if (len == 6 && memcmp(sc->s + i, "extern", 6) == 0 && extern_shared(sc, j)) continue;
    } else if (c == '<' && c1 == '<' && i + 2 < sc->n && sc->s[i + 2] == '<' && !sc->off) {
      refuse(sc, i, "kernel launches from the device (<<<...>>>)");
      return 0;
    }
    emit_to(sc, j);
    if (sc->tick_at && sc->i > sc->tick_at) {
      if (i == sc->tick_at) cj_buf_puts(&sc->out, loop_tick);
      sc->tick_at = 0;
    }
  }
  return 1;
}

static void free_cluster_dims(char **cluster, size_t nkernels) {
  for (size_t k = 0; cluster && k < nkernels; k++) free(cluster[k]);
  free(cluster);
}

char *cj_cpu_translation_unit(const char *source, const char *const *kernel_names, const int *cxx,
                              size_t nkernels, int check, char *err, size_t err_len) {
  return cj_cpu_translation_unit_with(source, kernel_names, cxx, nkernels, check, NULL, err,
                                      err_len);
}

char *cj_cpu_translation_unit_with(const char *source, const char *const *kernel_names,
                                   const int *cxx, size_t nkernels, int check,
                                   cj_cpu_headers *headers, char *err, size_t err_len) {
  static char dummy[1];
  if (!err || err_len == 0) err = dummy, err_len = sizeof dummy;
  err[0] = '\0';
  if (!source || (nkernels && !kernel_names)) {
    snprintf(err, err_len, "no source or no kernel names given for the CPU device");
    return NULL;
  }
  char entry[320]; /* cjk_<the name as an identifier>: "scale<float>" and "ns::k" too */
  for (size_t k = 0; k < nkernels; k++)
    if (!kernel_names[k] || !cj_entry_identifier(kernel_names[k], entry, sizeof entry)) {
      snprintf(err, err_len, "'%s' is not a kernel name cujit can export",
               kernel_names[k] ? kernel_names[k] : "(null)");
      return NULL;
    }
  scan sc = {.s = source,
             .n = strlen(source),
             .line = 1,
             .kernels = kernel_names,
             .cxx = cxx,
             .nkernels = nkernels,
             .err = err,
             .err_len = err_len,
             .headers = headers};
  snprintf(sc.file, sizeof sc.file, "<source>");
  if (check) cj_buf_puts(&sc.out, "#define CJ_CPU_CHECK 1\n");
  cj_buf_puts(&sc.out, "#include <cujit/cpu_prelude.h>\n");
  /* The user's code goes into namespace __cj, so that its names do not meet those the prelude's
  ** system headers declare (sync, index, time, ...: NVRTC declares none of them); the directive
  ** lets `::name` and the headers it includes find them as they would at file scope. An extern "C"
  ** kernel's declarators get a reserved name (declared_kernel). */
  cj_buf_printf(&sc.out, "namespace __cj { %s}\nusing namespace ::__cj;\n", cj_cpu_cuda_api);
  cj_buf_puts(&sc.out, "namespace __cj {\n#line 1 \"<source>\"\n");
  sc.defined = calloc(nkernels ? nkernels : 1, 1);
  sc.cluster = calloc(nkernels ? nkernels : 1, sizeof *sc.cluster);
  if (headers) {
    sc.state = calloc(headers->count ? headers->count : 1, 1);
    for (size_t h = 0; h < headers->count; h++) headers->rewritten[h] = NULL;
  }
  if (!sc.defined || !sc.cluster || (headers && !sc.state) || !rewrite(&sc)) {
    if (!sc.defined || !sc.cluster || (headers && !sc.state))
      snprintf(err, err_len, "out of host memory");
    free_cluster_dims(sc.cluster, nkernels);
    free(sc.defined);
    free(sc.state);
    for (size_t h = 0; headers && h < headers->count; h++) {
      free(headers->rewritten[h]);
      headers->rewritten[h] = NULL;
    }
    cj_buf_free(&sc.out);
    return NULL;
  }
  cj_buf_puts(&sc.out, "\n}\n");
  cj_cpu_write_entries(&sc.out, kernel_names, cxx, sc.defined, sc.cluster, nkernels);
  free_cluster_dims(sc.cluster, nkernels);
  free(sc.defined);
  free(sc.state);
  if (sc.out.failed) {
    cj_buf_free(&sc.out);
    snprintf(err, err_len, "out of host memory");
    return NULL;
  }
  return sc.out.data;
}
