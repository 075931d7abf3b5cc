/*
** cpu_program.c -- the CPU device's programs and launches (backend.h): loading a program's shared
** object (cpu_module.c) and finding its kernels, launches queued to the pool's workers,
** occupancy, shared memory and attributes, a program's globals (the shared object's symbols:
** dlsym, sized by dladdr1; static and namespaced ones from its full symbol table), cooperative
** launches (one block per worker: a worker runs its blocks one after another, so then all run at
** once and meet at the grid-wide barrier) and launch attributes (clusters: a group of workers a
** cluster, cpu_abi.h).
*/
#define _GNU_SOURCE /* dladdr1 */
#include "cpu.h"
#include "backend/backend.h"
#include "cpu_module.h"
#include "lang/elf_symbols.h"
#include "base/env.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* --- programs (cpu_module.c) ------------------------------------------------------------------ */

cujit_status cj_cpu_load(cujit_device *dev, const cj_image *image, void **module) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cj_cpu_module *m = NULL;
  cujit_status st = cj_cpu_module_load(dev->engine, image, cpu_of(dev)->workers, &m);
  *module = m;
  return st;
}

/* Queued behind the launches that may still need its code, as a free is: never waits. */
void cj_cpu_unload(cujit_device *dev, void *module) {
  if (module && !cj_cpu_queue_behind(dev, OP_UNLOAD, module)) cj_cpu_module_free(module);
}

cujit_status cj_cpu_get_function(cujit_device *dev, void *module, const char *name, void **fn) {
  cj_cpu_function *f = NULL;
  cujit_status st = cj_cpu_module_function(dev->engine, module, name, &f);
  *fn = f;
  return st;
}

/* Queued with a copy of the arguments: the caller's parameter buffer is gone when it runs. */
/* cooperative: its blocks, no more than the workers (launch.c checked), run at once, so that
** this_grid().sync() can be met. */
static cujit_status enqueue_launch(cujit_device *dev, void *fn, const unsigned grid[3],
                                   const unsigned block[3], unsigned shared_bytes, void *stream,
                                   void **args, int cooperative, const unsigned cluster[3]) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cj_cpu_function *f = fn;
  for (size_t i = 0; i < f->nparams; i++)
    if (f->sizes[i] == 0)
      return cj_fail(dev->engine, CUJIT_ERROR_ARGUMENT,
                     "kernel '%s': parameter %zu has a type cujit cannot size, so the CPU device "
                     "cannot copy it; use scalar, pointer or vector types",
                     f->name, i + 1);
  size_t pointers = (f->nparams * sizeof(void *) + 15) / 16 * 16;
  size_t launch_bytes = (sizeof(cj_cpu_launch) + 15) / 16 * 16;
  cpu_op *op = cj_cpu_new_op(dev, OP_LAUNCH, 16 + launch_bytes + pointers + f->param_bytes);
  if (!op) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  unsigned char *base = (unsigned char *)(((uintptr_t)(op + 1) + 15) / 16 * 16);
  cj_cpu_launch *launch = (cj_cpu_launch *)base;
  void **ptrs = (void **)(base + launch_bytes);
  unsigned char *params = base + launch_bytes + pointers;
  for (size_t i = 0; i < f->nparams; i++) {
    memcpy(params + f->offsets[i], args[i], f->sizes[i]);
    ptrs[i] = params + f->offsets[i];
  }
  for (int d = 0; d < 3; d++) launch->grid[d] = grid[d], launch->block[d] = block[d];
  launch->shared_bytes = shared_bytes;
  launch->args = ptrs;
  launch->kernel = f->name;
  launch->total_blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  launch->cooperative = cooperative;
  launch->cluster_size = 1;
  for (int d = 0; d < 3; d++) {
    launch->cluster[d] = cluster ? cluster[d] : 1;
    launch->cluster_size *= launch->cluster[d];
  }
  op->fn = f, op->launch = launch;
  return cj_cpu_enqueue(dev, op, stream);
}

/* The cluster of a launch of f: the launch's (attrs), else the kernel's __cluster_dims__, which
** a launch must then match, as on a GPU; NULL for none. Refusals name the values. */
static cujit_status launch_cluster(cujit_device *dev, const cj_cpu_function *f,
                                   const unsigned grid[3], const cj_launch_attrs *attrs,
                                   const unsigned **cluster) {
  static const char axis[3] = {'x', 'y', 'z'};
  *cluster = attrs && attrs->cluster[0] ? attrs->cluster : NULL;
  if (!f->cluster[0]) return CUJIT_OK;
  unsigned size = f->cluster[0] * f->cluster[1] * f->cluster[2];
  for (int d = 0; d < 3; d++) {
    if (*cluster && (*cluster)[d] != f->cluster[d])
      return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s' has __cluster_dims__(%u, %u, %u) but is launched with cluster "
                     "{%u, %u, %u}; launch it without a cluster, or with its own",
                     f->name, f->cluster[0], f->cluster[1], f->cluster[2], (*cluster)[0],
                     (*cluster)[1], (*cluster)[2]);
    if (grid[d] % f->cluster[d])
      return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                     "kernel '%s': grid.%c = %u is not a multiple of its __cluster_dims__ %c = %u",
                     f->name, axis[d], grid[d], axis[d], f->cluster[d]);
  }
  cj_launch_attrs own = {{f->cluster[0], f->cluster[1], f->cluster[2]}, 0, 0};
  int fit = 0;
  cujit_status st = size > 16 ? cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                                        "kernel '%s': __cluster_dims__ of %u blocks is over the "
                                        "limit of 16 blocks per cluster",
                                        f->name, size)
                              : cj_cpu_check_attrs(dev, (void *)f, grid, grid, 0, &own, &fit);
  *cluster = f->cluster;
  return st;
}

cujit_status cj_cpu_launch_kernel(cujit_device *dev, void *fn, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes, void *stream,
                                  void **args) {
  const unsigned *cluster;
  cujit_status st = launch_cluster(dev, fn, grid, NULL, &cluster);
  return st != CUJIT_OK
             ? st
             : enqueue_launch(dev, fn, grid, block, shared_bytes, stream, args, 0, cluster);
}

cujit_status cj_cpu_suggest_block(cujit_device *dev, void *fn, int *block_size, int *min_grid) {
  *block_size = 256;
  *min_grid = cpu_of(dev)->workers;
  return CUJIT_OK;
}

cujit_status cj_cpu_allow_shared(cujit_device *dev, void *fn, unsigned bytes) {
  if (bytes <= MAX_SHARED_OPTIN) return CUJIT_OK;
  return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                 "kernel '%s' asks for %u bytes of dynamic shared memory; the CPU device allows "
                 "at most %d per block, as an sm_90 GPU does",
                 ((cj_cpu_function *)fn)->name, bytes, MAX_SHARED_OPTIN);
}

cujit_status cj_cpu_attributes(cujit_device *dev, void *fn, cujit_kernel_attributes *attrs) {
  memset(attrs, 0, sizeof *attrs);
  attrs->max_threads_per_block = 1024;
  return CUJIT_OK;
}

/* The layout comes from the signatures cujit scanned, not from the compiled code: nothing to
** check it against. */
int cj_cpu_param_info(cujit_device *dev, void *fn, size_t index, size_t *offset, size_t *size) {
  return 0;
}

/* A variable dlsym cannot see: a static one or one in a namespace (a local or mangled symbol,
** only in the full symbol table), read from the image the module was loaded from (its memfd).
** How many variables the name fits (more than one: the name is ambiguous); NULL when none. */
static void *image_variable(cj_cpu_module *m, const char *name, size_t *bytes, int *count) {
  struct stat st;
  struct link_map *map = NULL;
  *count = 0;
  if (fstat(m->fd, &st) != 0 || st.st_size <= 0 || dlinfo(m->handle, RTLD_DI_LINKMAP, &map) != 0)
    return NULL;
  void *image = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, m->fd, 0);
  if (image == MAP_FAILED) return NULL;
  unsigned long long value = 0, size = 0;
  *count = cj_elf_variable(image, (size_t)st.st_size, name, &value, &size);
  munmap(image, (size_t)st.st_size);
  if (*count < 1) return NULL;
  *bytes = (size_t)size;
  return (void *)(uintptr_t)(map->l_addr + value);
}

/* A variable at file scope keeps its plain name in C++ (variables are not mangled there). dlsym
** also searches the libraries the program links (environ, stdout of the C library): a symbol
** found is the program's only when it lies in the program's own object. */
cujit_status cj_cpu_get_global(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                               size_t *bytes) {
  cj_cpu_module *m = module;
  /* The program's own code is in namespace __cj (cpu_source.c): its variables are mangled there;
  ** extern "C" ones and those of headers it includes keep their plain names. */
  char mangled[300];
  void *p = NULL;
  if (snprintf(mangled, sizeof mangled, "_ZN4__cj%zu%sE", strlen(name), name) < (int)sizeof mangled)
    p = dlsym(m->handle, mangled);
  if (!p) p = dlsym(m->handle, name);
  int count = 0;
  void *hidden = p ? NULL : image_variable(m, name, bytes, &count);
  if (count > 1)
    return cj_fail(dev->engine, CUJIT_ERROR_NOT_FOUND,
                   "the name '%s' fits %d variables of the program (in anonymous namespaces or "
                   "static ones of its headers): qualify it with its namespace",
                   name, count);
  if (hidden && *bytes) {
    *addr = (uint64_t)(uintptr_t)hidden;
    return CUJIT_OK;
  }
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  struct link_map *own = NULL, *found = NULL;
  if (!p || dlinfo(m->handle, RTLD_DI_LINKMAP, &own) != 0 ||
      !dladdr1(p, &info, (void **)&found, RTLD_DL_LINKMAP) || found != own ||
      !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
      ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
    return cj_fail(dev->engine, CUJIT_ERROR_NOT_FOUND,
                   "the program has no __device__ or __constant__ variable '%s'; name one as the "
                   "source does ('taps', 'ns::taps')",
                   name);
  *addr = (uint64_t)(uintptr_t)p;
  *bytes = sym->st_size;
  return CUJIT_OK;
}

/* One block per worker: a worker runs a block to its end before it takes another, so a block
** waiting at the grid barrier holds its worker (launch.c refuses a larger grid, saying this).
** Any block the device runs fits a worker whole, whatever its size: its threads are the worker's
** fibers (up to max_threads_per_block) and its dynamic shared memory the worker's buffer (up to
** the opt-in limit, cj_cpu_allow_shared). A block past either limit runs nowhere: 0 blocks, as a
** GPU's occupancy answers, and a launch of it is refused by those limits (launch.c). */
cujit_status cj_cpu_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                      unsigned shared_bytes, unsigned long long *blocks) {
  (void)fn;
  const cujit_device_info *info = &dev->info;
  int runs = threads >= 1 && threads <= (unsigned)info->max_threads_per_block &&
             shared_bytes <= (unsigned)info->max_shared_per_block_optin;
  *blocks = runs ? (unsigned long long)info->multiprocessors : 0; /* the workers */
  return CUJIT_OK;
}

cujit_status cj_cpu_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                       const unsigned block[3], unsigned shared_bytes, void *stream,
                                       void **args) {
  return enqueue_launch(dev, fn, grid, block, shared_bytes, stream, args, 1, NULL);
}

/* --- launch attributes (issue 26) ------------------------------------------------------------- */

/* A cluster's blocks run at once, one per worker (a worker runs a block to its end), so a cluster
** may have no more blocks than there are workers; the groups of workers are the clusters that
** run at once. Programmatic launches and priorities need nothing: the queue runs one kernel at a
** time, in order. */
cujit_status cj_cpu_check_attrs(cujit_device *dev, void *fn, const unsigned grid[3],
                                const unsigned block[3], unsigned shared_bytes,
                                const cj_launch_attrs *attrs, int *clusters) {
  (void)grid, (void)block, (void)shared_bytes;
  unsigned size = attrs->cluster[0] * attrs->cluster[1] * attrs->cluster[2];
  int workers = dev->info.multiprocessors;
  *clusters = size ? workers / (int)size : 1;
  if (size <= (unsigned)workers) return CUJIT_OK;
  return cj_fail(dev->engine, CUJIT_ERROR_LAUNCH_CONFIG,
                 "kernel '%s': a cluster of %u blocks cannot run on the CPU device, which runs a "
                 "cluster's blocks at once, one per worker, and has %d workers; use clusters of "
                 "at most %d blocks (or more workers: CUJIT_CPU_THREADS)",
                 ((cj_cpu_function *)fn)->name, size, workers, workers);
}

cujit_status cj_cpu_launch_ex(cujit_device *dev, void *fn, const unsigned grid[3],
                              const unsigned block[3], unsigned shared_bytes, void *stream,
                              void **args, const cj_launch_attrs *attrs) {
  const unsigned *cluster;
  cujit_status st = launch_cluster(dev, fn, grid, attrs, &cluster);
  return st != CUJIT_OK
             ? st
             : enqueue_launch(dev, fn, grid, block, shared_bytes, stream, args, 0, cluster);
}
