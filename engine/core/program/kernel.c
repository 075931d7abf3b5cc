/*
** kernel.c -- kernel objects: defining them from a signature and a body, taking them from a
** program, specialising generic ones, finding a kernel's function on each device, and what they
** tell about themselves. Launching them is launch.c's.
*/
#include "kernel.h"
#include "base/structs.h"
#include "compile/options.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* --- making and freeing kernels --------------------------------------------------------------- */

static void kernel_destroy(cj_link *link);

static cujit_kernel *kernel_new(cujit_engine *engine) {
  cujit_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->engine = engine;
  pthread_mutex_init(&k->lock, NULL);
  return k;
}

/* A fault names the kernel launched last on its device: forget the name before it is freed. */
static void forget_last_launch(cujit_kernel *k) {
  cujit_engine *e = k->engine;
  for (int i = 0, n = cj_device_slots(e); i < n; i++) {
    cujit_device *dev = cj_device_in_slot(e, i);
    const char *name = k->sig.name;
    if (dev)
      __atomic_compare_exchange_n(&dev->last_kernel, &name, NULL, 0, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED);
  }
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
  pthread_mutex_destroy(&k->lock);
}

/* The one ending of every way to make a kernel: tracked and handed out, or freed on failure. */
static cujit_status kernel_finish(cujit_kernel *k, cujit_status st, cujit_kernel **out) {
  if (st == CUJIT_OK) {
    k->signature_text = cj_signature_format(&k->sig);
    if (!k->signature_text)
      st = cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  if (st != CUJIT_OK) {
    kernel_release_contents(k);
    free(k);
    return st;
  }
  if (!k->parent) cj_track(k->engine, &k->link, kernel_destroy);
  k->trace = cj_trace_name(k->sig.name);
  *out = k;
  return CUJIT_OK;
}

static void kernel_destroy(cj_link *link) {
  cujit_kernel *k = (cujit_kernel *)(void *)((char *)link - offsetof(cujit_kernel, link));
  kernel_release_contents(k);
  free(k);
}

void cujit_kernel_free(cujit_kernel *kernel) {
  CJ_KEEP_CALLER_CONTEXT;
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

/* The nonnull option applied to a defined kernel (its specialisations copy it), each name checked
** to be one of its pointer parameters. */
static int nonnull_named(cujit_kernel *k, const cujit_compile_options *o) {
  if (!o || !o->nonnull_count) return 1;
  for (size_t i = 0; i < o->nonnull_count; i++)
    if (!o->nonnull || !o->nonnull[i] || !cj_signature_has_pointer(&k->sig, o->nonnull[i])) {
      cj_fail(k->engine, CUJIT_ERROR_INVALID_ARGUMENT,
              "kernel '%s': the nonnull option names '%s', which is not one of its pointer "
              "parameters; name a pointer parameter, or \"*\" for all of them",
              k->sig.name, o->nonnull && o->nonnull[i] ? o->nonnull[i] : "(NULL)");
      return 0;
    }
  cj_signature_mark_nonnull(&k->sig, o->nonnull, o->nonnull_count);
  return 1;
}

cujit_status cujit_kernel_define(cujit_engine *engine, const char *signature, const char *body,
                                 const char *preamble, const cujit_compile_options *options,
                                 cujit_kernel **out) {
  CJ_KEEP_CALLER_CONTEXT;
  if (out) *out = NULL;
  if (!engine || !signature || !body || !out)
    return cj_fail(
        engine, CUJIT_ERROR_INVALID_ARGUMENT,
        "cujit_kernel_define needs an engine, a signature, a body and an output pointer");
  cujit_compile_options mine; /* the caller's layout made this library's (cujit.h) */
  cujit_status bad = options ? cj_struct_in(engine, "cujit_kernel_define", "cujit_compile_options",
                                            options, &mine, sizeof mine, CJ_COMPILE_OPTIONS_V1)
                             : CUJIT_OK;
  if (bad != CUJIT_OK) return bad;
  if (options) options = &mine;
  /* The options are copied for a generic kernel by the option table (options.h). */
  if (cj_options_check_lists(engine, options) != CUJIT_OK) return CUJIT_ERROR_INVALID_ARGUMENT;
  cujit_kernel *k = kernel_new(engine);
  if (!k) return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  char err[1024];
  cujit_status st = cj_signature_parse(signature, &k->sig, err, sizeof err);
  if (st != CUJIT_OK)
    st = cj_fail(engine, st, "%s", err);
  else if (!nonnull_named(k, options))
    st = CUJIT_ERROR_INVALID_ARGUMENT;
  else if (body_is_empty(body))
    st = cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "kernel '%s' has an empty body: give the statements it runs", k->sig.name);
  else if (k->sig.ntype_vars == 0)
    st = compile_concrete(k, body, preamble, options, NULL);
  else if (!(k->body = cj_strdup(body)) || (preamble && !(k->preamble = cj_strdup(preamble))) ||
           !cj_options_copy(options, &k->options, &k->options_storage))
    st = cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  return kernel_finish(k, st, out);
}

cujit_status cujit_program_kernel(cujit_program *program, const char *name, cujit_kernel **out) {
  CJ_KEEP_CALLER_CONTEXT;
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
  if (st == CUJIT_OK)
    cj_signature_mark_nonnull(&k->sig, (const char *const *)program->nonnull, program->nnonnull);
  return kernel_finish(k, st, out);
}

/* --- generic kernels -------------------------------------------------------------------------- */

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
  k->parent = generic; /* owned by the generic kernel, not tracked */
  if ((st = kernel_finish(k, st, &k)) != CUJIT_OK) return st;
  cj_spec *spec = &generic->specs[generic->nspecs++];
  memset(spec->types, 0, sizeof spec->types);
  memcpy(spec->types, types, n * sizeof *types);
  spec->kernel = k;
  *out = k;
  return CUJIT_OK;
}

static cujit_status specialize_locked(cujit_kernel *generic, const cujit_dtype *types,
                                      cujit_kernel **out) {
  pthread_mutex_lock(&generic->lock);
  cujit_kernel *k = find_spec(generic, types);
  cujit_status st = k ? CUJIT_OK : make_spec(generic, types, &k);
  pthread_mutex_unlock(&generic->lock);
  if (st == CUJIT_OK) *out = k;
  return st;
}

cujit_status cujit_kernel_specialize(cujit_kernel *kernel, const cujit_dtype *types, size_t count,
                                     cujit_kernel **out) {
  CJ_KEEP_CALLER_CONTEXT;
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
  return specialize_locked(g, types, k); /* a lookup under the lock, then a compile on a miss */
}

cujit_status cj_kernel_resolve_slow(cujit_kernel **k, const cujit_arg *args, size_t nargs) {
  const cujit_kernel *given = *k;
  if (nargs != given->sig.nparams)
    return cj_fail(given->engine, CUJIT_ERROR_ARGUMENT,
                   "kernel '%s' takes %zu argument(s), got %zu: %s", given->sig.name,
                   given->sig.nparams, nargs, given->signature_text);
  return given->program ? CUJIT_OK : resolve_generic(k, args, nargs);
}

/* --- a kernel on a device --------------------------------------------------------------------- */

/* Checks each parameter's size against the backend's view of the compiled kernel, where it has
** one: a size cujit read wrong would pass the wrong bytes. Offsets are not compared: a launch hands
** the driver a pointer to each argument (kernelParams), and the driver places them; its offsets
** also hold the ABI's padding, which cujit's buffer need not (on sm_90 a 64-byte-aligned first
** parameter, a CUtensorMap, sits at offset 48, the parameters' bank starting 16 bytes past a
** 64-byte boundary). */
static cujit_status check_layout(cujit_kernel *k, cujit_device *dev, void *fn) {
  for (size_t i = 0; i < k->sig.nparams; i++) {
    size_t offset = 0, size = 0;
    if (!dev->ops->param_info(dev, fn, i, &offset, &size)) return CUJIT_OK;
    const cj_param *p = &k->sig.params[i];
    if (p->size == 0) continue; /* a type cujit cannot size: refused at launch instead */
    if (size != p->size)
      return cj_fail(k->engine, CUJIT_ERROR_SIGNATURE,
                     "kernel '%s', parameter %zu '%s' (%s): cujit reads it as %zu bytes, but the "
                     "compiled kernel's is %zu bytes (at offset %zu); check the type",
                     k->sig.name, i + 1, p->name, p->type, p->size, size, offset);
  }
  return CUJIT_OK;
}

/* More than the classic 4096 bytes of parameters needs CUDA 12.1+ and a Volta or newer GPU (the
** CPU device takes what a GPU takes). Asked once per kernel and device, not at each launch. */
static cujit_status check_param_space(cujit_kernel *k, cujit_device *dev) {
  if (k->sig.param_bytes <= CJ_CLASSIC_PARAM_BYTES || strcmp(dev->ops->name, "cuda") != 0)
    return CUJIT_OK;
  cj_driver *drv = NULL;
  cujit_status st = cj_need_driver(k->engine, &drv);
  if (st != CUJIT_OK) return st;
  if (drv->version >= 12010 && dev->info.cc_major >= 7) return CUJIT_OK;
  return cj_fail(k->engine, CUJIT_ERROR_UNSUPPORTED,
                 "kernel '%s': its parameters take %zu bytes, but device %d (compute capability "
                 "%d.%d, driver %d.%d) takes at most %d; more (up to %d) needs CUDA 12.1 or newer "
                 "and a Volta or newer GPU: pass big data through a pointer",
                 k->sig.name, k->sig.param_bytes, dev->ordinal, dev->info.cc_major,
                 dev->info.cc_minor, drv->version / 1000, drv->version % 1000 / 10,
                 CJ_CLASSIC_PARAM_BYTES, CJ_MAX_PARAM_BYTES);
}

/* Under the kernel's lock: the per-device table made once, then the function found and
** published (see cj_kernel_on_device for the order of the stores). */
static cujit_status find_locked(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **out) {
  cj_kernel_on_device *all = k->on_device;
  if (!all) {
    all = calloc((size_t)cj_device_slots(k->engine), sizeof *all);
    if (!all) return cj_fail(k->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
    __atomic_store_n(&k->on_device, all, __ATOMIC_RELEASE);
  }
  cj_kernel_on_device *on = &all[cj_device_slot(dev)];
  unsigned generation = __atomic_load_n(&dev->generation, __ATOMIC_ACQUIRE);
  *out = on;
  if (__atomic_load_n(&on->fn, __ATOMIC_ACQUIRE) && on->generation == generation) return CUJIT_OK;
  void *module = NULL, *fn = NULL;
  cujit_status st = check_param_space(k, dev);
  if (st == CUJIT_OK) st = cj_program_module(k->program, dev, &module);
  if (st == CUJIT_OK) st = dev->ops->get_function(dev, module, cj_signature_symbol(&k->sig), &fn);
  if (st == CUJIT_OK) st = check_layout(k, dev, fn);
  if (st != CUJIT_OK) return st;
  __atomic_store_n(&on->fn, NULL, __ATOMIC_RELEASE);
  __atomic_store_n(&on->generation, generation, __ATOMIC_RELEASE);
  __atomic_store_n(&on->block_size, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&on->max_dynamic_shared, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&on->attrs_checked, 0ull, __ATOMIC_RELAXED); /* a new function: ask again */
  __atomic_store_n(&on->fn, fn, __ATOMIC_RELEASE);
  return CUJIT_OK;
}

cujit_status cj_kernel_find_on(cujit_kernel *k, cujit_device *dev, cj_kernel_on_device **out) {
  pthread_mutex_lock(&k->lock);
  cujit_status st = find_locked(k, dev, out);
  pthread_mutex_unlock(&k->lock);
  return st;
}

/* --- introspection ---------------------------------------------------------------------------- */

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
  CJ_KEEP_CALLER_CONTEXT;
  if (!kernel || !info)
    return cj_fail(kernel ? kernel->engine : NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_kernel_param needs a kernel and an output pointer");
  if (index >= kernel->sig.nparams)
    return cj_fail(kernel->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "kernel '%s' has %zu parameter(s); there is no parameter %zu", kernel->sig.name,
                   kernel->sig.nparams, index);
  size_t room;
  cujit_status st = cj_struct_room(kernel->engine, "cujit_kernel_param", "cujit_param_info", info,
                                   sizeof *info, CJ_PARAM_INFO_V1, &room);
  if (st != CUJIT_OK) return st;
  const cj_param *p = &kernel->sig.params[index];
  cujit_param_info all;
  memset(&all, 0, sizeof all); /* padding too: no stack bytes reach the caller */
  all.struct_size = sizeof all, all.name = p->name, all.type = p->type, all.kind = p->kind;
  all.dtype = p->dtype, all.is_const = p->is_const, all.size = p->size, all.align = p->align;
  all.offset = p->offset, all.type_var = p->type_var,
  all.nullable = p->kind == CUJIT_PARAM_POINTER && !p->nonnull;
  cj_struct_out(info, room, &all);
  return CUJIT_OK;
}

size_t cujit_kernel_type_var_count(const cujit_kernel *kernel) {
  return kernel ? kernel->sig.ntype_vars : 0;
}

const char *cujit_kernel_type_var(const cujit_kernel *kernel, size_t index) {
  return kernel && index < kernel->sig.ntype_vars ? kernel->sig.type_vars[index] : NULL;
}
