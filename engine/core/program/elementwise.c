/*
** elementwise.c -- the elementwise kernel builder: "scalar T a, T x, T y -> T z" and "z = a * x +
*y"
** become a signature + body kernel for cujit_kernel_define whose threads move 16 bytes per array
** per step when the arrays are aligned for it; and its launch, sized from the element count. The
** parameter list is read with the signature tokenizer and the one type-variable rule (lexicon.h).
*/
#include "elementwise.h"
#include "base/structs.h"
#include "lang/lexicon.h"
#include "library.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EW_MAX_PARAMS 64
#define EW_NAME_MAX 64
#define EW_TYPE_MAX 48
#define EW_BLOCKS_PER_SM 32 /* a grid-stride cap far above residency: waves stay small */

typedef struct ew_param {
  char name[EW_NAME_MAX];
  char type[EW_TYPE_MAX]; /* the C type, or the type variable */
  int scalar, output;
} ew_param;

typedef struct ew_spec {
  ew_param params[EW_MAX_PARAMS];
  int count;
  int uses_half; /* __half or a type variable appears: the kernel includes <cujit/half.h> */
  int uses_bf16; /* __nv_bfloat16 appears: it includes <cujit/bf16.h> (cujit::to_float) */
} ew_spec;

/* The whole of s is one C identifier, as the signature tokenizer reads it. */
static int is_identifier(const char *s) {
  size_t pos = 0, n = strlen(s);
  cj_token t = cj_next_token(s, &pos, n);
  return t.kind == CJ_TK_IDENT && t.pos == 0 && t.len == n;
}

static int is_type_var(const char *s) {
  return cj_is_type_var_name(s, strlen(s));
}

/* The C type of a spelling: C types and dtype names as cujit_dtype_from_name knows them, plus the
** everyday short forms. */
static const char *element_ctype(const char *t) {
  static const char *const alias[][2] = {{"unsigned", "unsigned int"},
                                         {"half", "__half"},
                                         {"bfloat16", "__nv_bfloat16"},
                                         {"nv_bfloat16", "__nv_bfloat16"},
                                         {"char", "signed char"},
                                         {"signed", "int"},
                                         {"unsigned long long int", "unsigned long long"},
                                         {"long long int", "long long"},
                                         {"short int", "short"}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcmp(t, alias[i][0]) == 0) t = alias[i][1];
  cujit_dtype d = cujit_dtype_from_name(t);
  return d == CUJIT_DTYPE_NONE ? NULL : cujit_dtype_ctype(d);
}

static cujit_status ew_error(cujit_engine *e, const char *params, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cujit_status ew_error(cujit_engine *e, const char *params, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return cj_fail(e, CUJIT_ERROR_SIGNATURE,
                 "elementwise parameters \"%s\": %s. Write inputs -> outputs, each as \"type "
                 "name\", e.g. \"scalar float a, float x, float y -> float z\"",
                 params, what);
}

/* Reads one "[scalar] type words name" item, params[from, to), into p. */
static cujit_status parse_item(cujit_engine *e, const char *params, size_t from, size_t to,
                               int output, ew_param *p) {
  cj_token first = {0}, last = {0}, t;
  size_t pos = from;
  int n = 0;
  while ((t = cj_next_token(params, &pos, to)).kind != CJ_TK_END) {
    if (t.kind != CJ_TK_IDENT)
      return ew_error(e, params,
                      "'%.*s' is not a type or a name (arrays are implied: write no '*' or "
                      "'[]'; mark by-value parameters `scalar`)",
                      (int)t.len, params + t.pos);
    if (n++ == 0) first = t;
    last = t;
  }
  if (n == 0) return ew_error(e, params, "a parameter is empty");
  p->scalar = cj_tok_is(params, first, "scalar");
  if (n - p->scalar < 2)
    return ew_error(e, params, "'%.*s' needs a type and a name", (int)last.len, params + last.pos);
  p->output = output;
  if (output && p->scalar)
    return ew_error(e, params, "output '%.*s' is marked scalar; outputs are arrays", (int)last.len,
                    params + last.pos);
  if (last.len >= EW_NAME_MAX)
    return ew_error(e, params, "the name '%.*s' is longer than %d characters", (int)last.len,
                    params + last.pos, EW_NAME_MAX - 1);
  snprintf(p->name, sizeof p->name, "%.*s", (int)last.len, params + last.pos);
  if (strcmp(p->name, "i") == 0 || strcmp(p->name, "n") == 0 || strncmp(p->name, "cj_", 3) == 0)
    return ew_error(e, params,
                    "'%s' is reserved (i is the element index, n the count, cj_ names are "
                    "cujit's)",
                    p->name);
  /* The type: the words between, one space apart. */
  cj_buf type = {0};
  pos = p->scalar ? first.pos + first.len : first.pos;
  while ((t = cj_next_token(params, &pos, last.pos)).kind != CJ_TK_END) {
    if (type.len) cj_buf_puts(&type, " ");
    cj_buf_add(&type, params + t.pos, t.len);
  }
  if (type.failed || !type.data) {
    cj_buf_free(&type);
    return cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  const char *ctype =
      n - p->scalar == 2 && is_type_var(type.data) ? type.data : element_ctype(type.data);
  cujit_status st = CUJIT_OK;
  if (!ctype)
    st = ew_error(e, params,
                  "'%s' is not an element type cujit knows (use float, double, __half, "
                  "__nv_bfloat16, int, "
                  "unsigned int, long long, ..., a dtype name such as f32, or a type variable "
                  "such as T)",
                  type.data);
  else if (strlen(ctype) >= sizeof p->type)
    st = ew_error(e, params, "the type variable '%s' is longer than %d characters", ctype,
                  (int)sizeof p->type - 1);
  else
    snprintf(p->type, sizeof p->type, "%s", ctype);
  cj_buf_free(&type);
  return st;
}

/* Parses "inputs -> outputs" into spec. */
static cujit_status ew_parse(cujit_engine *e, const char *params, ew_spec *spec) {
  const char *arrow = strstr(params, "->");
  if (!arrow) return ew_error(e, params, "there is no '->' between the inputs and the outputs");
  if (strstr(arrow + 2, "->")) return ew_error(e, params, "there is more than one '->'");
  memset(spec, 0, sizeof *spec);
  for (int side = 0; side < 2; side++) {
    const char *from = side ? arrow + 2 : params, *to = side ? params + strlen(params) : arrow;
    const char *p = from;
    while (p < to && isspace((unsigned char)*p)) p++;
    if (p == to) {
      if (side) return ew_error(e, params, "there are no outputs");
      continue; /* no inputs: fine, as in "-> float z" with "z = i" */
    }
    while (from <= to) {
      const char *comma = memchr(from, ',', (size_t)(to - from));
      const char *end = comma ? comma : to;
      if (spec->count == EW_MAX_PARAMS)
        return ew_error(e, params, "there are more than %d parameters", EW_MAX_PARAMS);
      cujit_status st = parse_item(e, params, (size_t)(from - params), (size_t)(end - params), side,
                                   &spec->params[spec->count]);
      if (st != CUJIT_OK) return st;
      spec->count++;
      from = end + 1;
    }
  }
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    for (int j = 0; j < i; j++)
      if (strcmp(spec->params[j].name, p->name) == 0)
        return ew_error(e, params, "the name '%s' is used twice", p->name);
    if (strcmp(p->type, "__half") == 0 || is_type_var(p->type)) spec->uses_half = 1;
    if (strcmp(p->type, "__nv_bfloat16") == 0) spec->uses_bf16 = 1;
  }
  return CUJIT_OK;
}

static void ew_signature(cj_buf *b, const ew_spec *spec, const char *name) {
  cj_buf_printf(b, "%s(", name);
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar)
      cj_buf_printf(b, "%s %s, ", p->type, p->name);
    else
      cj_buf_printf(b, "%s%s *__restrict__ %s, ", p->output ? "" : "const ", p->type, p->name);
  }
  cj_buf_puts(b, "long long n)");
}

/* Appends ", <prefix><i><suffix>" for every array parameter i, in order: the arguments of cj_op. */
static void ew_array_args(cj_buf *b, const ew_spec *spec, const char *prefix, const char *suffix) {
  for (int i = 0; i < spec->count; i++)
    if (!spec->params[i].scalar) cj_buf_printf(b, ", %s%d%s", prefix, i, suffix);
}

/* The step over whole packs: each array as cj_w elements in one vector access, the inputs loaded
** before any element is computed, the outputs stored after. */
static void ew_vector_loop(cj_buf *b, const ew_spec *spec) {
  cj_buf_puts(b, "if (cj_aligned) {\n"
                 "  const long long cj_packs = n / cj_w;\n"
                 "#pragma unroll 1\n"
                 "  for (long long cj_p = cj_first; cj_p < cj_packs; cj_p += cj_stride) {\n");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar) continue;
    if (p->output)
      cj_buf_printf(b, "    cj_ew_pack<%s, cj_w> cj_v%d = {};\n", p->type, i);
    else
      cj_buf_printf(b,
                    "    const cj_ew_pack<%s, cj_w> cj_v%d = "
                    "((const cj_ew_pack<%s, cj_w> *)%s)[cj_p];\n",
                    p->type, i, p->type, p->name);
  }
  cj_buf_puts(b, "#pragma unroll\n"
                 "    for (int cj_k = 0; cj_k < cj_w; cj_k++)\n"
                 "      cj_op(cj_p * cj_w + cj_k");
  ew_array_args(b, spec, "cj_v", ".v[cj_k]");
  cj_buf_puts(b, ");\n");
  for (int i = 0; i < spec->count; i++)
    if (spec->params[i].output)
      cj_buf_printf(b, "    ((cj_ew_pack<%s, cj_w> *)%s)[cj_p] = cj_v%d;\n", spec->params[i].type,
                    spec->params[i].name, i);
  cj_buf_puts(b, "  }\n  cj_done = cj_packs * cj_w;\n}\n");
}

/* One element at a time: the last n % cj_w elements, or all of them when an array is not aligned
** for packs. */
static void ew_scalar_loop(cj_buf *b, const ew_spec *spec) {
  cj_buf_puts(b, "for (long long cj_i = cj_done + cj_first; cj_i < n; cj_i += cj_stride) {\n");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (p->scalar) continue;
    if (p->output)
      cj_buf_printf(b, "  %s cj_s%d{};\n", p->type, i);
    else
      cj_buf_printf(b, "  const %s cj_s%d = %s[cj_i];\n", p->type, i, p->name);
  }
  cj_buf_puts(b, "  cj_op(cj_i");
  ew_array_args(b, spec, "cj_s", "");
  cj_buf_puts(b, ");\n");
  for (int i = 0; i < spec->count; i++)
    if (spec->params[i].output) cj_buf_printf(b, "  %s[cj_i] = cj_s%d;\n", spec->params[i].name, i);
  cj_buf_puts(b, "}\n");
}

/* The body: the user's expression first, so its lines are the body's lines 1.. in messages; then
** a grid-stride loop over packs of cj_w consecutive elements (16 bytes of the widest type: the
** vector loads and stores that reach the copy bandwidth) when every array is aligned for them,
** and a grid-stride loop over the elements left, one at a time. Scalars are captured by cj_op.
** Each element is read before it is written, by the same thread, so an output may alias an input
** (in place), __restrict__ notwithstanding: no other access touches that element. */
static void ew_body(cj_buf *b, const ew_spec *spec, const char *expr) {
  cj_buf_puts(b, "auto cj_op = [&](long long i");
  for (int i = 0; i < spec->count; i++) {
    const ew_param *p = &spec->params[i];
    if (!p->scalar) cj_buf_printf(b, ", %s%s &%s", p->output ? "" : "const ", p->type, p->name);
  }
  cj_buf_printf(b, ") { %s\n; };\n", expr);
  cj_buf_puts(b, "constexpr int cj_w = cj_ew_width<");
  for (int i = 0, first = 1; i < spec->count; i++)
    if (!spec->params[i].scalar)
      cj_buf_printf(b, "%s%s", first ? "" : ", ", spec->params[i].type), first = 0;
  cj_buf_puts(b, ">();\nconst bool cj_aligned = ");
  for (int i = 0, first = 1; i < spec->count; i++)
    if (!spec->params[i].scalar)
      cj_buf_printf(b, "%scj_ew_aligned<cj_w>(%s)", first ? "" : " && ", spec->params[i].name),
          first = 0;
  cj_buf_puts(b, ";\n"
                 "const long long cj_stride = (long long)gridDim.x * blockDim.x;\n"
                 "const long long cj_first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
                 "long long cj_done = 0;\n");
  ew_vector_loop(b, spec);
  ew_scalar_loop(b, spec);
}

/* What the generated kernel includes: its helpers, half.h when __half may appear, and bf16.h when
** __nv_bfloat16 is named. A type variable bound to __nv_bfloat16 needs no bf16.h: the unit has
** the toolkit's cuda_bf16.h (source.c), whose conversion to float serves cujit::to_float, and the
** toolkit's large bfloat16 header stays out of every other generic kernel. */
static const char *ew_preamble(const ew_spec *spec) {
#define CJ_EW_BASE "#define CJ_ELEMENTWISE 1\n#include <cujit/library_kernels.h>\n"
#define CJ_EW_HALF "#include <cujit/half.h>\n"
#define CJ_EW_BF16 "#include <cujit/bf16.h>\n"
  static const char *const preambles[2][2] = {
      {CJ_EW_BASE, CJ_EW_BASE CJ_EW_BF16},
      {CJ_EW_BASE CJ_EW_HALF, CJ_EW_BASE CJ_EW_HALF CJ_EW_BF16}};
  return preambles[spec->uses_half][spec->uses_bf16];
}

cujit_status cj_elementwise_text(cujit_engine *engine, const char *params, const char *expr,
                                 const char *name, cj_elementwise_kernel *out) {
  memset(out, 0, sizeof *out);
  if (!is_identifier(name) || strncmp(name, "cj_", 3) == 0)
    return cj_fail(engine, CUJIT_ERROR_SIGNATURE,
                   "elementwise kernel name \"%s\": use a C identifier not starting with cj_",
                   name);
  const char *e = expr;
  while (isspace((unsigned char)*e)) e++;
  if (!*e)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "elementwise kernel '%s': the expression is empty; write what each element "
                   "computes, e.g. \"z = a * x + y\"",
                   name);
  ew_spec *spec = malloc(sizeof *spec);
  if (!spec) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  cujit_status st = ew_parse(engine, params, spec);
  if (st == CUJIT_OK) {
    cj_buf sig = {0}, body = {0};
    ew_signature(&sig, spec, name);
    ew_body(&body, spec, expr);
    out->signature = sig.data, out->body = body.data, out->preamble = ew_preamble(spec);
    if (sig.failed || body.failed) {
      cj_elementwise_text_free(out);
      st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
  }
  free(spec);
  return st;
}

void cj_elementwise_text_free(cj_elementwise_kernel *text) {
  free(text->signature);
  free(text->body);
  memset(text, 0, sizeof *text);
}

cujit_status cujit_elementwise_define(cujit_engine *engine, const char *params, const char *expr,
                                      const char *name, const cujit_compile_options *options,
                                      cujit_kernel **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (out) *out = NULL;
  if (!engine || !params || !expr || !out)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_elementwise_define needs an engine, the parameters, the expression and "
                   "an output pointer");
  cujit_compile_options mine; /* the caller's layout made this library's (cujit.h) */
  cujit_status bad = options
                         ? cj_struct_in(engine, "cujit_elementwise_define", "cujit_compile_options",
                                        options, &mine, sizeof mine, CJ_COMPILE_OPTIONS_V1)
                         : CUJIT_OK;
  if (bad != CUJIT_OK) return bad;
  cj_elementwise_kernel text;
  cujit_status st = cj_elementwise_text(engine, params, expr, name ? name : "elementwise", &text);
  /* Its kernel reads or writes every array it takes: a null pointer there is always a mistake
  ** (any other kernel's pointer takes one unless the nonnull option says otherwise). */
  static const char *const every[] = {"*"};
  cujit_compile_options o = options ? mine : (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  o.nonnull = every, o.nonnull_count = 1;
  if (st == CUJIT_OK)
    st = cujit_kernel_define(engine, text.signature, text.body, text.preamble, &o, out);
  cj_elementwise_text_free(&text);
  return st;
}

/* Every array argument must hold n elements: the kernel trusts n. Also finds the widest element
** of the arrays, which sets how many elements a thread takes per step (0 when none is known). */
static cujit_status ew_check_sizes(cujit_kernel *k, size_t n, const cujit_arg *args, size_t nargs,
                                   size_t *widest) {
  *widest = 0;
  for (size_t i = 0; i < nargs; i++) {
    cujit_param_info info = CUJIT_PARAM_INFO_INIT;
    if (cujit_kernel_param(k, i, &info) != CUJIT_OK || info.kind != CUJIT_PARAM_POINTER) continue;
    const cujit_buffer *b = args[i].kind == CUJIT_ARG_BUFFER ? args[i].v.buffer : NULL;
    cujit_dtype d = info.dtype != CUJIT_DTYPE_NONE ? info.dtype : b ? b->dtype : CUJIT_DTYPE_NONE;
    size_t elem = cujit_dtype_size(d);
    if (elem > *widest) *widest = elem;
    if (b && elem && b->size / elem < n)
      return cj_fail(k->engine, CUJIT_ERROR_ARGUMENT,
                     "elementwise kernel '%s', argument %zu '%s': the buffer holds %zu elements "
                     "of %zu bytes, fewer than the %zu the launch covers",
                     cujit_kernel_name(k), i + 1, info.name, b->size / elem, elem, n);
  }
  return CUJIT_OK;
}

/* One thread per pack of 16 bytes of the widest element (as the kernel's cj_w), up to
** EW_BLOCKS_PER_SM blocks per SM: far more than fit at once, so that blocks finishing unevenly
** leave little idle at the end, while the grid-stride loop keeps the launch small for any n. */
static unsigned ew_grid(size_t n, size_t widest, const cujit_device *dev) {
  size_t per_thread = widest && widest < 16 ? 16 / widest : 4;
  uint64_t threads = (n + per_thread - 1) / per_thread;
  uint64_t blocks = (threads + CJ_LIBRARY_BLOCK - 1) / CJ_LIBRARY_BLOCK;
  uint64_t most =
      (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * EW_BLOCKS_PER_SM;
  if (blocks > most) blocks = most;
  return blocks ? (unsigned)blocks : 1u;
}

cujit_status cujit_elementwise_launch(cujit_kernel *kernel, size_t n, cujit_stream *stream,
                                      const cujit_arg *args, size_t nargs) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_elementwise_launch needs a kernel and the arguments");
  size_t np = cujit_kernel_param_count(kernel);
  cujit_param_info last = CUJIT_PARAM_INFO_INIT;
  if (np == 0 || cujit_kernel_param(kernel, np - 1, &last) != CUJIT_OK ||
      strcmp(last.name, "n") != 0 || last.dtype != CUJIT_I64 || last.kind != CUJIT_PARAM_SCALAR)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' is not an elementwise kernel (its last parameter is not "
                   "`long long n`); make it with cujit_elementwise_define",
                   cujit_kernel_name(kernel));
  if (nargs != np - 1)
    return cj_fail(kernel->engine, CUJIT_ERROR_ARGUMENT,
                   "elementwise kernel '%s' takes %zu argument(s) besides n, got %zu: %s",
                   cujit_kernel_name(kernel), np - 1, nargs, cujit_kernel_signature(kernel));
  if (n > (size_t)INT64_MAX)
    return cj_fail(kernel->engine, CUJIT_ERROR_ARGUMENT,
                   "elementwise kernel '%s': n = %zu is too large", cujit_kernel_name(kernel), n);
  size_t widest;
  cujit_status st = ew_check_sizes(kernel, n, args, nargs, &widest);
  if (st != CUJIT_OK || n == 0) return st;
  cujit_arg all[CJ_MAX_PARAMS];
  memcpy(all, args, nargs * sizeof *args);
  all[nargs] = CUJIT_ARG_I((int64_t)n);
  cujit_device *dev = stream ? stream->device : NULL;
  if (!dev && (st = cujit_current_device(kernel->engine, &dev)) != CUJIT_OK) return st;
  return cj_library_launch_1d(kernel, ew_grid(n, widest, dev), stream, all, nargs + 1);
}
