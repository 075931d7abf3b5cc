/*
** kernel.c -- kernels: defining them from a signature and a body, taking them from a program,
** specialising generic ones, loading them onto devices, checking and packing arguments, and the
** launch path itself, which does no allocation, hashing or string work.
*/
#include "kernel.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- compile options, deep-copied so a generic kernel can specialise later ----------------------
 */

static size_t strings_size(const char *const *v, size_t n) {
  size_t total = n * sizeof(char *);
  for (size_t i = 0; i < n; i++) total += strlen(v[i]) + 1;
  return total;
}

static const char *const *copy_strings(const char *const *v, size_t n, char **cursor) {
  if (n == 0) return NULL;
  char **out = (char **)(void *)*cursor;
  char *text = *cursor + n * sizeof(char *);
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(v[i]) + 1;
    memcpy(text, v[i], len);
    out[i] = text;
    text += len;
  }
  *cursor = text;
  return (const char *const *)out;
}

/* One allocation holds every string of the copy: pointer arrays first, so they stay aligned. */
static int options_copy(const cujit_compile_options *src, cujit_compile_options *dst,
                        void **storage) {
  *dst = (cujit_compile_options)CUJIT_COMPILE_OPTIONS_INIT;
  *storage = NULL;
  if (!src) return 1;
  *dst = *src;
  dst->signatures = NULL, dst->signature_count = 0; /* a defined kernel has its own signature */
  size_t scalars = (src->arch ? strlen(src->arch) + 1 : 0) + (src->std ? strlen(src->std) + 1 : 0);
  size_t lists = strings_size(src->defines, src->define_count) +
                 strings_size(src->include_dirs, src->include_dir_count) +
                 strings_size(src->extra_flags, src->extra_flag_count);
  char *mem = malloc(lists + scalars + 1);
  if (!mem) return 0;
  char *cursor = mem;
  dst->defines = copy_strings(src->defines, src->define_count, &cursor);
  dst->include_dirs = copy_strings(src->include_dirs, src->include_dir_count, &cursor);
  dst->extra_flags = copy_strings(src->extra_flags, src->extra_flag_count, &cursor);
  if (src->arch) dst->arch = strcpy(cursor, src->arch), cursor += strlen(src->arch) + 1;
  if (src->std) dst->std = strcpy(cursor, src->std);
  *storage = mem;
  return 1;
}

static int options_valid(cujit_engine *engine, const cujit_compile_options *o) {
  if (!o) return 1;
  if ((o->define_count && !o->defines) || (o->include_dir_count && !o->include_dirs) ||
      (o->extra_flag_count && !o->extra_flags)) {
    cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
            "compile options: a list has a count but a NULL array");
    return 0;
  }
  const char *const *lists[3] = {o->defines, o->include_dirs, o->extra_flags};
  size_t counts[3] = {o->define_count, o->include_dir_count, o->extra_flag_count};
  for (int l = 0; l < 3; l++)
    for (size_t i = 0; i < counts[l]; i++)
      if (!lists[l][i]) {
        cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                "compile options: entry %zu of the %s is NULL", i,
                l == 0   ? "defines"
                : l == 1 ? "include directories"
                         : "extra flags");
        return 0;
      }
  return 1;
}

/* --- making and freeing kernels -----------------------------------------------------------------
 */

static void kernel_destroy(cj_link *link);

static cujit_kernel *kernel_new(cujit_engine *engine) {
  cujit_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->engine = engine;
  pthread_mutex_init(&k->spec_lock, NULL);
  return k;
}

/* A fault names the kernel launched last on its device: forget the name before it is freed. */
static void forget_last_launch(cujit_kernel *k) {
  cujit_engine *e = k->engine;
  for (int i = 0; e->devices && i < e->device_count; i++)
    if (e->devices[i].last_kernel == k->sig.name) e->devices[i].last_kernel = NULL;
}

static void kernel_release_contents(cujit_kernel *k) {
  forget_last_launch(k);
  for (size_t i = 0; i < k->nspecs; i++) {
    kernel_release_contents(k->specs[i].kernel);
    free(k->specs[i].kernel);
  }
  free(k->specs);
  if (k->program) cj_program_release(k->program);
  cj_signature_free(&k->sig);
  free(k->signature_text);
  free(k->on_device);
  free(k->body);
  free(k->preamble);
  free(k->options_storage);
  pthread_mutex_destroy(&k->spec_lock);
}

static void kernel_destroy(cj_link *link) {
  cujit_kernel *k = (cujit_kernel *)(void *)((char *)link - offsetof(cujit_kernel, link));
  kernel_release_contents(k);
  free(k);
}

void cujit_kernel_free(cujit_kernel *kernel) {
  if (!kernel || kernel->parent) return; /* specialisations belong to their generic kernel */
  cj_untrack(kernel->engine, &kernel->link);
  kernel_destroy(&kernel->link);
}

/* Takes the kernel called sig->name from a built program, checking the program defines it. */
static cujit_status attach_program(cujit_kernel *k, cujit_program *program) {
  for (size_t i = 0; i < program->nkernels; i++)
    if (strcmp(program->kernels[i].name, k->sig.name) == 0) {
      cj_program_retain(program);
      k->program = program;
      return CUJIT_OK;
    }
  return cj_fail(k->engine, CUJIT_ERROR_NOT_FOUND,
                 "kernel '%s': the compiled source defines no extern \"C\" __global__ function of "
                 "that name",
                 k->sig.name);
}

static int body_is_empty(const char *body) {
  for (; *body; body++)
    if (*body != ' ' && *body != '\t' && *body != '\n' && *body != '\r') return 0;
  return 1;
}

/* Compiles a concrete kernel of a signature + body (types bound when it specialises a generic). */
static cujit_status compile_concrete(cujit_kernel *k, const char *body, const char *preamble,
                                     const cujit_compile_options *options,
                                     const char *const *type_values) {
  char *source = cj_source_for_kernel(&k->sig, body, preamble, type_values);
  if (!source) return cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  cujit_program *program = NULL;
  cujit_status st = cj_program_build(k->engine, source, k->sig.name, options, &program);
  free(source);
  if (st != CUJIT_OK) return st;
  st = attach_program(k, program);
  cj_program_release(program);
  return st;
}

static cujit_status finish_kernel(cujit_kernel *k) {
  k->signature_text = cj_signature_format(&k->sig);
  if (!k->signature_text)
    return cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  return CUJIT_OK;
}

cujit_status cujit_kernel_define(cujit_engine *engine, const char *signature, const char *body,
                                 const char *preamble, const cujit_compile_options *options,
                                 cujit_kernel **out) {
  if (out) *out = NULL;
  if (!engine || !signature || !body || !out)
    return cj_fail(
        engine, CUJIT_ERROR_INVALID_ARGUMENT,
        "cujit_kernel_define needs an engine, a signature, a body and an output pointer");
  if (!options_valid(engine, options)) return CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_kernel *k = kernel_new(engine);
  if (!k) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char err[1024];
  cujit_status st = cj_signature_parse(signature, &k->sig, err, sizeof err);
  if (st != CUJIT_OK)
    st = cj_fail(engine, st, "%s", err);
  else if (body_is_empty(body))
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel '%s' has an empty body: give the statements it runs", k->sig.name);
  else if (k->sig.ntype_vars == 0)
    st = compile_concrete(k, body, preamble, options, NULL);
  else if (!(k->body = cj_strdup(body)) || (preamble && !(k->preamble = cj_strdup(preamble))) ||
           !options_copy(options, &k->options, &k->options_storage))
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (st == CUJIT_OK) st = finish_kernel(k);
  if (st != CUJIT_OK) {
    kernel_release_contents(k);
    free(k);
    return st;
  }
  cj_track(engine, &k->link, kernel_destroy);
  *out = k;
  return CUJIT_OK;
}

cujit_status cujit_program_kernel(cujit_program *program, const char *name, cujit_kernel **out) {
  if (out) *out = NULL;
  if (!program || !name || !out)
    return cj_fail(program ? program->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_program_kernel needs a program, a name and an output pointer");
  cujit_engine *engine = program->engine;
  const cj_signature *found = NULL;
  for (size_t i = 0; i < program->nkernels && !found; i++)
    if (strcmp(program->kernels[i].name, name) == 0) found = &program->kernels[i];
  if (!found) {
    cj_buf names = {0};
    for (size_t i = 0; i < program->nkernels; i++)
      cj_buf_printf(&names, "%s'%s'", i ? ", " : "", program->kernels[i].name);
    cj_fail(engine, CUJIT_ERROR_NOT_FOUND, "%s defines no kernel '%s'; its kernels are: %s",
            program->name, name, names.data ? names.data : "(none)");
    cj_buf_free(&names);
    return CUJIT_ERROR_NOT_FOUND;
  }
  cujit_kernel *k = kernel_new(engine);
  if (!k) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char err[1024];
  cujit_status st = cj_signature_specialize(found, NULL, 0, &k->sig, err, sizeof err);
  if (st != CUJIT_OK) st = cj_fail(engine, st, "%s", err);
  if (st == CUJIT_OK) st = attach_program(k, program);
  if (st == CUJIT_OK) st = finish_kernel(k);
  if (st != CUJIT_OK) {
    kernel_release_contents(k);
    free(k);
    return st;
  }
  cj_track(engine, &k->link, kernel_destroy);
  *out = k;
  return CUJIT_OK;
}

/* --- generic kernels ----------------------------------------------------------------------------
 */

static cujit_kernel *find_spec(cujit_kernel *generic, const cujit_dtype *types) {
  size_t n = generic->sig.ntype_vars;
  for (size_t i = 0; i < generic->nspecs; i++)
    if (memcmp(generic->specs[i].types, types, n * sizeof *types) == 0)
      return generic->specs[i].kernel;
  return NULL;
}

static cujit_status make_spec(cujit_kernel *generic, const cujit_dtype *types, cujit_kernel **out) {
  cujit_engine *engine = generic->engine;
  size_t n = generic->sig.ntype_vars;
  const char *values[CJ_MAX_TYPE_VARS];
  for (size_t i = 0; i < n; i++) values[i] = cujit_dtype_ctype(types[i]);
  cj_spec *grown = realloc(generic->specs, (generic->nspecs + 1) * sizeof *grown);
  if (!grown) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  generic->specs = grown;
  cujit_kernel *k = kernel_new(engine);
  if (!k) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char err[1024];
  cujit_status st = cj_signature_specialize(&generic->sig, types, n, &k->sig, err, sizeof err);
  if (st != CUJIT_OK) st = cj_fail(engine, st, "%s", err);
  /* The generic signature goes to codegen so type variables stay names bound by typedefs. */
  if (st == CUJIT_OK) {
    char *source = cj_source_for_kernel(&generic->sig, generic->body, generic->preamble, values);
    cujit_program *program = NULL;
    st = source ? cj_program_build(engine, source, generic->sig.name, &generic->options, &program)
                : cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    free(source);
    if (st == CUJIT_OK) st = attach_program(k, program);
    if (program) cj_program_release(program);
  }
  if (st == CUJIT_OK) st = finish_kernel(k);
  if (st != CUJIT_OK) {
    kernel_release_contents(k);
    free(k);
    return st;
  }
  k->parent = generic;
  cj_spec *spec = &generic->specs[generic->nspecs++];
  memset(spec->types, 0, sizeof spec->types);
  memcpy(spec->types, types, n * sizeof *types);
  spec->kernel = k;
  *out = k;
  return CUJIT_OK;
}

static cujit_status specialize_locked(cujit_kernel *generic, const cujit_dtype *types,
                                      cujit_kernel **out) {
  pthread_mutex_lock(&generic->spec_lock);
  cujit_kernel *k = find_spec(generic, types);
  cujit_status st = k ? CUJIT_OK : make_spec(generic, types, &k);
  pthread_mutex_unlock(&generic->spec_lock);
  *out = k;
  return st;
}

cujit_status cujit_kernel_specialize(cujit_kernel *kernel, const cujit_dtype *types, size_t count,
                                     cujit_kernel **out) {
  if (out) *out = NULL;
  if (!kernel || !out || (count && !types))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_specialize needs a kernel, the types and an output pointer");
  if (kernel->program)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' (%s) is not generic: it has no type variables left to bind",
                   kernel->sig.name, kernel->signature_text);
  if (count != kernel->sig.ntype_vars)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' has %zu type variable(s) but %zu type(s) were given",
                   kernel->sig.name, kernel->sig.ntype_vars, count);
  for (size_t i = 0; i < count; i++)
    if (types[i] <= CUJIT_DTYPE_NONE || types[i] >= CUJIT_DTYPE_COUNT_)
      return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                     "kernel '%s': type %zu for %s is not a concrete dtype", kernel->sig.name, i,
                     kernel->sig.type_vars[i]);
  return specialize_locked(kernel, types, out);
}

/* Binds type variables from the element types of the buffers passed. */
static cujit_status infer_types(cujit_kernel *g, const cujit_arg *args, size_t nargs,
                                cujit_dtype *types) {
  size_t n = g->sig.ntype_vars;
  for (size_t t = 0; t < n; t++) types[t] = CUJIT_DTYPE_NONE;
  for (size_t i = 0; i < g->sig.nparams && i < nargs; i++) {
    const cj_param *p = &g->sig.params[i];
    if (p->type_var < 0 || p->kind != CUJIT_PARAM_POINTER || args[i].kind != CUJIT_ARG_BUFFER ||
        !args[i].v.buffer)
      continue;
    cujit_dtype d = args[i].v.buffer->dtype;
    cujit_dtype *bound = &types[p->type_var];
    if (d == CUJIT_DTYPE_NONE) continue;
    if (*bound != CUJIT_DTYPE_NONE && *bound != d)
      return cj_fail(g->engine, CUJIT_ERROR_ARGUMENT,
                     "kernel '%s', argument %zu '%s': %s is already %s from an earlier argument, "
                     "but this buffer holds %s",
                     g->sig.name, i + 1, p->name, g->sig.type_vars[p->type_var],
                     cujit_dtype_name(*bound), cujit_dtype_name(d));
    *bound = d;
  }
  for (size_t t = 0; t < n; t++)
    if (types[t] == CUJIT_DTYPE_NONE)
      return cj_fail(g->engine, CUJIT_ERROR_ARGUMENT,
                     "kernel '%s': cannot tell what %s is: no typed buffer is passed for a %s "
                     "pointer parameter; pass one, or specialise explicitly "
                     "(cujit_kernel_specialize)",
                     g->sig.name, g->sig.type_vars[t], g->sig.type_vars[t]);
  return CUJIT_OK;
}

static cujit_status resolve_generic(cujit_kernel **k, const cujit_arg *args, size_t nargs) {
  cujit_kernel *g = *k;
  cujit_dtype types[CJ_MAX_TYPE_VARS];
  cujit_status st = infer_types(g, args, nargs, types);
  if (st != CUJIT_OK) return st;
  /* Unlocked read first: specs only grow, and the common case is a hit. */
  cujit_kernel *spec = NULL;
  pthread_mutex_lock(&g->spec_lock);
  spec = find_spec(g, types);
  pthread_mutex_unlock(&g->spec_lock);
  if (!spec && (st = specialize_locked(g, types, &spec)) != CUJIT_OK) return st;
  *k = spec;
  return CUJIT_OK;
}

/* --- loading onto a device ----------------------------------------------------------------------
 */

static void unload_library(cujit_program *program) {
  cujit_engine *e = program->engine;
  if (e->drv_state == 1 && program->library) e->drv.cuLibraryUnload((CUlibrary)program->library);
  program->library = NULL;
}

static cujit_status load_library(cujit_program *program, cujit_device *dev) {
  if (program->library) return CUJIT_OK;
  cujit_engine *e = program->engine;
  pthread_mutex_lock(&program->load_lock);
  cujit_status st = CUJIT_OK;
  if (!program->library) {
    const void *image = program->cubin ? program->cubin : (const void *)program->ptx;
    CUlibrary lib = NULL;
    CUresult rc = e->drv.cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
    if (rc == CUDA_SUCCESS) {
      cj_program_unload_hook = unload_library;
      program->library = lib;
    } else {
      char what[300];
      snprintf(what, sizeof what, "loading the code of %s (%s) onto device %d", program->name,
               program->arch, dev->ordinal);
      st = cj_check(dev, rc, what);
    }
  }
  pthread_mutex_unlock(&program->load_lock);
  return st;
}

/* Checks the parameter layout against the driver's view of the compiled kernel, where it has one.
 */
static cujit_status check_layout(cujit_kernel *k, CUfunction fn) {
  cj_driver *drv = &k->engine->drv;
  if (!drv->cuFuncGetParamInfo) return CUJIT_OK;
  for (size_t i = 0; i < k->sig.nparams; i++) {
    size_t offset = 0, size = 0;
    if (drv->cuFuncGetParamInfo(fn, i, &offset, &size) != CUDA_SUCCESS) return CUJIT_OK;
    const cj_param *p = &k->sig.params[i];
    if (p->size == 0) continue; /* a type cujit cannot size: refused at launch instead */
    if (offset != p->offset || size != p->size)
      return cj_fail(k->engine, CUJIT_ERROR_SIGNATURE,
                     "kernel '%s', parameter %zu '%s' (%s): cujit lays it out at offset %zu, size "
                     "%zu, but the compiled kernel has offset %zu, size %zu; check the type",
                     k->sig.name, i + 1, p->name, p->type, p->offset, p->size, offset, size);
  }
  return CUJIT_OK;
}

static cujit_status load_on_device(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **out) {
  cujit_engine *e = k->engine;
  cujit_status st = load_library(k->program, dev);
  if (st != CUJIT_OK) return st;
  pthread_mutex_lock(&k->program->load_lock);
  if (!k->on_device) k->on_device = calloc((size_t)e->device_count, sizeof *k->on_device);
  cj_kernel_on_device *on = k->on_device ? &k->on_device[dev->ordinal] : NULL;
  CUresult rc = CUDA_SUCCESS;
  if (!on)
    st = cj_fail(e, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  else if (!k->handle)
    rc = e->drv.cuLibraryGetKernel(&k->handle, (CUlibrary)k->program->library, k->sig.name);
  CUfunction fn = NULL;
  if (st == CUJIT_OK && rc == CUDA_SUCCESS) rc = e->drv.cuKernelGetFunction(&fn, k->handle);
  if (st == CUJIT_OK && rc != CUDA_SUCCESS) {
    char what[300];
    snprintf(what, sizeof what, "loading kernel '%s' on device %d", k->sig.name, dev->ordinal);
    st = cj_check(dev, rc, what);
  }
  if (st == CUJIT_OK) st = check_layout(k, fn);
  if (st == CUJIT_OK) {
    memset(on, 0, sizeof *on);
    on->fn = fn;
    on->generation = dev->generation;
  }
  pthread_mutex_unlock(&k->program->load_lock);
  *out = on;
  return st;
}

/* The kernel's state on `dev`, loading it there first if needed. */
static inline cujit_status on_device(cujit_kernel *k, cujit_device *dev,
                                     cj_kernel_on_device **out) {
  if (k->on_device) {
    cj_kernel_on_device *on = &k->on_device[dev->ordinal];
    if (on->fn && on->generation == dev->generation) {
      *out = on;
      return CUJIT_OK;
    }
  }
  return load_on_device(k, dev, out);
}

/* The device a launch goes to: the stream's, else the engine's current one. */
static inline cujit_status launch_device(cujit_engine *e, cujit_stream *stream,
                                         cujit_device **dev) {
  if (stream) {
    *dev = stream->device;
    if (stream->generation != stream->device->generation)
      return cj_check_alive(stream->device, stream->generation, "the stream");
  } else {
    cujit_status st = cj_current_device(e, dev);
    if (st != CUJIT_OK) return st;
  }
  return cj_device_enter(*dev);
}

/* --- arguments ----------------------------------------------------------------------------------
 */

static const char *arg_kind_name(cujit_arg_kind kind) {
  switch (kind) {
  case CUJIT_ARG_INT:
    return "an integer";
  case CUJIT_ARG_UINT:
    return "an unsigned integer";
  case CUJIT_ARG_FLOAT:
    return "a float";
  case CUJIT_ARG_BUFFER:
    return "a buffer";
  case CUJIT_ARG_DEVPTR:
    return "a device pointer";
  case CUJIT_ARG_BYTES:
    return "raw bytes";
  }
  return "an unknown kind of argument";
}

static cujit_status arg_error(const cujit_kernel *k, size_t i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cujit_status arg_error(const cujit_kernel *k, size_t i, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  const cj_param *p = &k->sig.params[i];
  return cj_fail(k->engine, CUJIT_ERROR_ARGUMENT, "kernel '%s', argument %zu '%s' (%s): %s",
                 k->sig.name, i + 1, p->name, p->type, detail);
}

static int int_range(cujit_dtype d, int64_t *lo, uint64_t *hi) {
  switch (d) {
  case CUJIT_I8:
    *lo = INT8_MIN, *hi = INT8_MAX;
    return 1;
  case CUJIT_I16:
    *lo = INT16_MIN, *hi = INT16_MAX;
    return 1;
  case CUJIT_I32:
    *lo = INT32_MIN, *hi = INT32_MAX;
    return 1;
  case CUJIT_I64:
    *lo = INT64_MIN, *hi = INT64_MAX;
    return 1;
  case CUJIT_U8:
    *lo = 0, *hi = UINT8_MAX;
    return 1;
  case CUJIT_U16:
    *lo = 0, *hi = UINT16_MAX;
    return 1;
  case CUJIT_U32:
    *lo = 0, *hi = UINT32_MAX;
    return 1;
  case CUJIT_U64:
    *lo = 0, *hi = UINT64_MAX;
    return 1;
  default:
    return 0;
  }
}

static void store_int(void *dst, cujit_dtype d, uint64_t bits) {
  switch (cujit_dtype_size(d)) {
  case 1:
    *(uint8_t *)dst = (uint8_t)bits;
    break;
  case 2:
    *(uint16_t *)dst = (uint16_t)bits;
    break;
  case 4:
    *(uint32_t *)dst = (uint32_t)bits;
    break;
  default:
    *(uint64_t *)dst = bits;
    break;
  }
}

/* Integer parameters: the value must fit, and a float must be an exact integer. */
static cujit_status pack_int(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst) {
  cujit_dtype d = k->sig.params[i].dtype;
  int64_t lo = 0;
  uint64_t hi = 0;
  if (!int_range(d, &lo, &hi)) return arg_error(k, i, "cujit cannot pass this scalar type");
  switch (a->kind) {
  case CUJIT_ARG_INT:
    if (a->v.i < lo || (a->v.i > 0 && (uint64_t)a->v.i > hi))
      return arg_error(k, i, "%lld does not fit (range %lld..%llu)", (long long)a->v.i,
                       (long long)lo, (unsigned long long)hi);
    store_int(dst, d, (uint64_t)a->v.i);
    return CUJIT_OK;
  case CUJIT_ARG_UINT:
    if (a->v.u > hi)
      return arg_error(k, i, "%llu does not fit (range %lld..%llu)", (unsigned long long)a->v.u,
                       (long long)lo, (unsigned long long)hi);
    store_int(dst, d, a->v.u);
    return CUJIT_OK;
  case CUJIT_ARG_FLOAT: {
    double f = a->v.f;
    if (!isfinite(f) || f != floor(f))
      return arg_error(k, i, "%.17g is not an integer; round it first", f);
    if (f < (double)lo || f >= 18446744073709551616.0 || (f >= 0 && (uint64_t)f > hi))
      return arg_error(k, i, "%.17g does not fit (range %lld..%llu)", f, (long long)lo,
                       (unsigned long long)hi);
    store_int(dst, d, f < 0 ? (uint64_t)(int64_t)f : (uint64_t)f);
    return CUJIT_OK;
  }
  default:
    return arg_error(k, i, "expects a number, got %s", arg_kind_name(a->kind));
  }
}

/* IEEE binary16 from a double, rounding to nearest even. */
static uint16_t half_bits(double v) {
  float f = (float)v;
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e), half = mant >> shift, rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) half++;
  return (uint16_t)half;
}

static cujit_status pack_float(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst) {
  double f;
  switch (a->kind) {
  case CUJIT_ARG_FLOAT:
    f = a->v.f;
    break;
  case CUJIT_ARG_INT:
    f = (double)a->v.i;
    break;
  case CUJIT_ARG_UINT:
    f = (double)a->v.u;
    break;
  default:
    return arg_error(k, i, "expects a number, got %s", arg_kind_name(a->kind));
  }
  cujit_dtype d = k->sig.params[i].dtype;
  double limit = d == CUJIT_F32 ? FLT_MAX : 65504.0;
  if (d != CUJIT_F64 && isfinite(f) && fabs(f) > limit)
    return arg_error(k, i, "%.17g is out of range for %s (largest %g)", f, cujit_dtype_name(d),
                     limit);
  if (d == CUJIT_F64)
    memcpy(dst, &f, sizeof f);
  else if (d == CUJIT_F32) {
    float v = (float)f;
    memcpy(dst, &v, sizeof v);
  } else {
    uint16_t h = half_bits(f);
    memcpy(dst, &h, sizeof h);
  }
  return CUJIT_OK;
}

static cujit_status pack_pointer(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst,
                                 const cujit_device *dev) {
  const cj_param *p = &k->sig.params[i];
  uint64_t addr;
  if (a->kind == CUJIT_ARG_DEVPTR)
    addr = a->v.devptr;
  else if (a->kind != CUJIT_ARG_BUFFER)
    return arg_error(k, i, "expects a device buffer, got %s", arg_kind_name(a->kind));
  else if (!a->v.buffer)
    return arg_error(k, i, "the buffer is NULL");
  else {
    const cujit_buffer *b = a->v.buffer;
    /* With no device (none could be had), the launch fails for that reason right after. */
    if (dev && b->device != dev)
      return arg_error(k, i, "the buffer lives on device %d but the launch is on device %d",
                       b->device->ordinal, dev->ordinal);
    if (dev && b->generation != dev->generation)
      return arg_error(k, i, "the buffer was lost when device %d was reset; make a new one",
                       dev->ordinal);
    if (p->dtype != CUJIT_DTYPE_NONE && b->dtype != CUJIT_DTYPE_NONE && b->dtype != p->dtype)
      return arg_error(k, i, "the buffer holds %s but the parameter points to %s",
                       cujit_dtype_name(b->dtype), cujit_dtype_name(p->dtype));
    addr = b->ptr;
  }
  memcpy(dst, &addr, sizeof addr);
  return CUJIT_OK;
}

static cujit_status pack_one(const cujit_kernel *k, size_t i, const cujit_arg *a, void *dst,
                             const cujit_device *dev) {
  const cj_param *p = &k->sig.params[i];
  if (p->kind == CUJIT_PARAM_POINTER) return pack_pointer(k, i, a, dst, dev);
  if (p->size == 0)
    return arg_error(k, i,
                     "cujit cannot size this type; use a type from the signature guide "
                     "(docs/ARCHITECTURE.md) or pass the struct's fields separately");
  if (p->dtype == CUJIT_DTYPE_NONE || a->kind == CUJIT_ARG_BYTES) {
    if (a->kind != CUJIT_ARG_BYTES || !a->v.bytes)
      return arg_error(k, i, "expects %zu raw bytes (CUJIT_ARG_BYTES), got %s", p->size,
                       arg_kind_name(a->kind));
    memcpy(dst, a->v.bytes, p->size);
    return CUJIT_OK;
  }
  if (p->dtype == CUJIT_F16 || p->dtype == CUJIT_F32 || p->dtype == CUJIT_F64)
    return pack_float(k, i, a, dst);
  return pack_int(k, i, a, dst);
}

/* --- launching ----------------------------------------------------------------------------------
 */

static cujit_status check_config(const cujit_kernel *k, const cujit_device *dev,
                                 const cujit_launch_config *c, unsigned grid[3],
                                 unsigned block[3]) {
  const cujit_device_info *info = &dev->info;
  static const char axis[3] = {'x', 'y', 'z'};
  unsigned threads = 1;
  for (int d = 0; d < 3; d++) {
    grid[d] = (d > 0 && c->grid[d] == 0) ? 1 : c->grid[d];
    block[d] = (d > 0 && c->block[d] == 0) ? 1 : c->block[d];
    if (grid[d] == 0 || block[d] == 0)
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': %s.%c is 0; every launch needs at least one block of one thread",
                     k->sig.name, grid[d] == 0 ? "grid" : "block", axis[d]);
    if (grid[d] > (unsigned)info->max_grid_dim[d] || block[d] > (unsigned)info->max_block_dim[d])
      return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': %s.%c = %u is over device %d's limit of %d", k->sig.name,
                     grid[d] > (unsigned)info->max_grid_dim[d] ? "grid" : "block", axis[d],
                     grid[d] > (unsigned)info->max_grid_dim[d] ? grid[d] : block[d], dev->ordinal,
                     grid[d] > (unsigned)info->max_grid_dim[d] ? info->max_grid_dim[d]
                                                               : info->max_block_dim[d]);
    threads *= block[d];
  }
  if (threads > (unsigned)info->max_threads_per_block)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': a block of %u threads is over device %d's limit of %d",
                   k->sig.name, threads, dev->ordinal, info->max_threads_per_block);
  if (c->shared_bytes > (unsigned)info->max_shared_per_block_optin)
    return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': %u bytes of dynamic shared memory is over device %d's limit of "
                   "%d bytes per block",
                   k->sig.name, c->shared_bytes, dev->ordinal, info->max_shared_per_block_optin);
  return CUJIT_OK;
}

/* Shared memory beyond the default 48 KiB needs an opt-in, once per kernel and size. */
static cujit_status allow_shared(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                 unsigned bytes) {
  if (bytes <= (unsigned)dev->info.max_shared_per_block ||
      bytes <= (unsigned)on->max_dynamic_shared)
    return CUJIT_OK;
  CUresult rc = k->engine->drv.cuFuncSetAttribute(
      on->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (rc != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof what, "allowing kernel '%s' %u bytes of dynamic shared memory",
             k->sig.name, bytes);
    return cj_check(dev, rc, what);
  }
  on->max_dynamic_shared = (int)bytes;
  return CUJIT_OK;
}

static cujit_status launch_error(cujit_kernel *k, cujit_device *dev, CUresult rc) {
  int resources = rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  char what[300];
  snprintf(what, sizeof what, "launch of kernel '%s' on device %d%s", k->sig.name, dev->ordinal,
           resources ? " (the block needs more registers than the device has for that many "
                       "threads: try a smaller block)"
                     : "");
  cujit_status st = cj_check(dev, rc, what);
  if (!resources) return st;
  char msg[CJ_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", cujit_errmsg(k->engine));
  return cj_fail(k->engine, CUJIT_ERROR_LAUNCH_CONFIG, "%s", msg);
}

/* The concrete kernel for these arguments: the count checked, a generic one specialised. */
static cujit_status resolve(cujit_kernel **k, const cujit_arg *args, size_t nargs) {
  const cujit_kernel *given = *k;
  if (nargs != given->sig.nparams)
    return cj_fail(given->engine, CUJIT_ERROR_ARGUMENT,
                   "kernel '%s' takes %zu argument(s), got %zu: %s", given->sig.name,
                   given->sig.nparams, nargs, given->signature_text);
  return given->program ? CUJIT_OK : resolve_generic(k, args, nargs);
}

/* Packs the arguments at the offsets of the signature; dev NULL skips the device checks. */
static cujit_status pack_args(const cujit_kernel *k, const cujit_arg *args, size_t nargs,
                              const cujit_device *dev, unsigned char *params, void **pointers) {
  for (size_t i = 0; i < nargs; i++) {
    void *dst = params + k->sig.params[i].offset;
    cujit_status st = pack_one(k, i, &args[i], dst, dev);
    if (st != CUJIT_OK) return st;
    pointers[i] = dst;
  }
  return CUJIT_OK;
}

/* The device of the launch, with the kernel loaded there. When no device can be had, the
** arguments are checked first, so a mistake in them is reported as such even with no GPU. */
static cujit_status place(cujit_kernel *k, cujit_stream *stream, const cujit_arg *args,
                          size_t nargs, cujit_device **dev, cj_kernel_on_device **on) {
  cujit_status st = launch_device(k->engine, stream, dev);
  if (st != CUJIT_OK) {
    _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
    void *pointers[CJ_MAX_PARAMS];
    cujit_status args_st = pack_args(k, args, nargs, NULL, params, pointers);
    return args_st != CUJIT_OK ? args_st : st;
  }
  return on_device(k, *dev, on);
}

/* The launch itself, once the kernel is concrete and loaded on `dev`. */
static cujit_status launch_placed(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on,
                                  const cujit_launch_config *config, const cujit_arg *args,
                                  size_t nargs) {
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  unsigned grid[3], block[3];
  cujit_status st = pack_args(k, args, nargs, dev, params, pointers);
  if (st == CUJIT_OK) st = check_config(k, dev, config, grid, block);
  if (st == CUJIT_OK) st = allow_shared(k, dev, on, config->shared_bytes);
  if (st != CUJIT_OK) return st;
  dev->last_kernel = k->sig.name;
  CUresult rc = k->engine->drv.cuLaunchKernel(on->fn, grid[0], grid[1], grid[2], block[0], block[1],
                                              block[2], config->shared_bytes,
                                              cj_stream_handle(config->stream), pointers, NULL);
  return rc == CUDA_SUCCESS ? CUJIT_OK : launch_error(k, dev, rc);
}

cujit_status cujit_launch(cujit_kernel *kernel, const cujit_launch_config *config,
                          const cujit_arg *args, size_t nargs) {
  if (!kernel || !config || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_launch needs a kernel, a launch configuration and the arguments");
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = resolve(&kernel, args, nargs);
  if (st == CUJIT_OK) st = place(kernel, config->stream, args, nargs, &dev, &on);
  return st == CUJIT_OK ? launch_placed(kernel, dev, on, config, args, nargs) : st;
}

/* The occupancy API's block size for the kernel on `dev`, asked once. */
static cujit_status suggest(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device *on) {
  if (on->block_size) return CUJIT_OK;
  int min_grid = 0, block = 0;
  CUresult rc =
      k->engine->drv.cuOccupancyMaxPotentialBlockSize(&min_grid, &block, on->fn, NULL, 0, 0);
  if (rc != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof what, "the occupancy query for kernel '%s'", k->sig.name);
    return cj_check(dev, rc, what);
  }
  on->min_grid = min_grid;
  on->block_size = block > 0 ? block : 256;
  return CUJIT_OK;
}

cujit_status cujit_launch_n(cujit_kernel *kernel, size_t n, cujit_stream *stream,
                            const cujit_arg *args, size_t nargs) {
  if (!kernel || (nargs && !args))
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_launch_n needs a kernel and the arguments");
  cujit_status st = resolve(&kernel, args, nargs);
  if (st != CUJIT_OK || n == 0) return st; /* nothing to cover is no error, as an empty loop */
  cujit_device *dev;
  cj_kernel_on_device *on;
  if ((st = place(kernel, stream, args, nargs, &dev, &on)) != CUJIT_OK) return st;
  if ((st = suggest(kernel, dev, on)) != CUJIT_OK) return st;
  size_t blocks = (n + (size_t)on->block_size - 1) / (size_t)on->block_size;
  if (blocks > (size_t)dev->info.max_grid_dim[0])
    return cj_fail(kernel->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                   "kernel '%s': %zu elements need %zu blocks of %d, over device %d's grid limit "
                   "of %d; use a grid-stride loop and an explicit grid",
                   kernel->sig.name, n, blocks, on->block_size, dev->ordinal,
                   dev->info.max_grid_dim[0]);
  cujit_launch_config c = {{(unsigned)blocks, 1, 1}, {(unsigned)on->block_size, 1, 1}, 0, stream};
  return launch_placed(kernel, dev, on, &c, args, nargs);
}

/* A concrete kernel loaded on the current device, for the queries that need one there. */
static cujit_status loaded_on_current(cujit_kernel *k, cujit_device **dev,
                                      cj_kernel_on_device **on) {
  if (!k->program)
    return cj_fail(k->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' is generic: specialise it first (cujit_kernel_specialize)",
                   k->sig.name);
  cujit_status st = launch_device(k->engine, NULL, dev);
  return st == CUJIT_OK ? on_device(k, *dev, on) : st;
}

cujit_status cujit_kernel_suggest_block(cujit_kernel *kernel, int *block_size, int *min_grid) {
  if (!kernel || !block_size)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_suggest_block needs a kernel and an output pointer");
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = loaded_on_current(kernel, &dev, &on);
  if (st == CUJIT_OK) st = suggest(kernel, dev, on);
  if (st != CUJIT_OK) return st;
  *block_size = on->block_size;
  if (min_grid) *min_grid = on->min_grid;
  return CUJIT_OK;
}

/* --- introspection ------------------------------------------------------------------------------
 */

const char *cujit_kernel_name(const cujit_kernel *kernel) {
  return kernel ? kernel->sig.name : "";
}

const char *cujit_kernel_signature(const cujit_kernel *kernel) {
  return kernel && kernel->signature_text ? kernel->signature_text : "";
}

const char *cujit_kernel_source(const cujit_kernel *kernel) {
  return kernel && kernel->program ? kernel->program->source : "";
}

const cujit_program *cujit_kernel_program(const cujit_kernel *kernel) {
  return kernel ? kernel->program : NULL;
}

int cujit_kernel_is_generic(const cujit_kernel *kernel) {
  return kernel && !kernel->program; /* only generic kernels are kept without a program */
}

size_t cujit_kernel_param_count(const cujit_kernel *kernel) {
  return kernel ? kernel->sig.nparams : 0;
}

cujit_status cujit_kernel_param(const cujit_kernel *kernel, size_t index, cujit_param_info *info) {
  if (!kernel || !info)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_param needs a kernel and an output pointer");
  if (index >= kernel->sig.nparams)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' has %zu parameter(s); there is no parameter %zu", kernel->sig.name,
                   kernel->sig.nparams, index);
  const cj_param *p = &kernel->sig.params[index];
  *info = (cujit_param_info){p->name, p->type,  p->kind,   p->dtype,   p->is_const,
                             p->size, p->align, p->offset, p->type_var};
  return CUJIT_OK;
}

size_t cujit_kernel_type_var_count(const cujit_kernel *kernel) {
  return kernel ? kernel->sig.ntype_vars : 0;
}

const char *cujit_kernel_type_var(const cujit_kernel *kernel, size_t index) {
  return kernel && index < kernel->sig.ntype_vars ? kernel->sig.type_vars[index] : NULL;
}

cujit_status cujit_kernel_attributes_get(cujit_kernel *kernel, cujit_kernel_attributes *attrs) {
  if (!kernel || !attrs)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_attributes_get needs a kernel and an output pointer");
  cujit_device *dev;
  cj_kernel_on_device *on;
  cujit_status st = loaded_on_current(kernel, &dev, &on);
  if (st != CUJIT_OK) return st;
  static const CUfunction_attribute which[] = {CU_FUNC_ATTRIBUTE_NUM_REGS,
                                               CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
                                               CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                               CU_FUNC_ATTRIBUTE_PTX_VERSION,
                                               CU_FUNC_ATTRIBUTE_BINARY_VERSION};
  int *fields[] = {&attrs->registers,     &attrs->static_shared_bytes,   &attrs->const_bytes,
                   &attrs->local_bytes,   &attrs->max_threads_per_block, &attrs->ptx_version,
                   &attrs->binary_version};
  for (size_t i = 0; i < sizeof which / sizeof *which; i++) {
    CUresult rc = kernel->engine->drv.cuFuncGetAttribute(fields[i], which[i], on->fn);
    if (rc != CUDA_SUCCESS) return cj_check(dev, rc, "reading kernel attributes");
  }
  return CUJIT_OK;
}
