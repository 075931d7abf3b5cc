/*
** backend_cpu_toolbox.c -- the CPU device's operations of issue 16's toolbox (backend_toolbox.h).
** Its device memory is host memory, so managed memory is an ordinary allocation, prefetch and
** advice have nothing to do, mapping host memory gives its own address and registering is a
** no-op; a program's globals are the shared object's symbols (dlsym, sized by dladdr1; static and
** namespaced ones from its full symbol table, which dlsym does not read). The
** executor runs a worker's blocks one after another, so a grid-wide barrier could never be met:
** cooperative launches are refused, and so is IPC (there is no other process's device memory).
*/
#define _GNU_SOURCE /* dladdr1 */
#include "backend/backend_toolbox.h"
#include "lang/symbols.h"
#include "cpu_module.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

static cujit_status cpu_managed_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  return dev->ops->alloc(dev, bytes, addr);
}

static void cpu_managed_free(cujit_device *dev, uint64_t addr) {
  dev->ops->free(dev, addr);
}

static cujit_status cpu_prefetch(cujit_device *dev, uint64_t addr, size_t bytes, int to_host,
                                 void *stream) {
  (void)dev, (void)addr, (void)bytes, (void)to_host, (void)stream;
  return CUJIT_OK;
}

static cujit_status cpu_advise(cujit_device *dev, uint64_t addr, size_t bytes, cj_advice advice) {
  (void)dev, (void)addr, (void)bytes, (void)advice;
  return CUJIT_OK;
}

static cujit_status cpu_host_map(cujit_device *dev, void *host, uint64_t *addr) {
  (void)dev;
  *addr = (uint64_t)(uintptr_t)host;
  return CUJIT_OK;
}

static cujit_status cpu_host_register(cujit_device *dev, void *host, size_t bytes) {
  (void)dev, (void)host, (void)bytes;
  return CUJIT_OK;
}

static void cpu_host_unregister(cujit_device *dev, void *host) {
  (void)dev, (void)host;
}

/* A variable at file scope keeps its plain name in C++ (variables are not mangled there). dlsym
** also searches the libraries the program links (environ, stdout of the C library): a symbol
** found is the program's only when it lies in the program's own object. */
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

static cujit_status cpu_get_global(cujit_device *dev, void *module, const char *name,
                                   uint64_t *addr, size_t *bytes) {
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

static cujit_status cpu_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                          unsigned shared_bytes, unsigned long long *blocks) {
  (void)fn, (void)threads, (void)shared_bytes, (void)blocks;
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device cannot make a cooperative launch: its workers run their blocks "
                 "one after another, so a grid-wide barrier (this_grid().sync()) would never be "
                 "met; run cooperative kernels on a GPU, or split the kernel at the barrier into "
                 "launches");
}

static cujit_status cpu_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                           const unsigned block[3], unsigned shared_bytes,
                                           void *stream, void **args) {
  (void)grid, (void)block, (void)stream, (void)args;
  unsigned long long blocks;
  return cpu_coresident_blocks(dev, fn, 0, shared_bytes, &blocks);
}

static cujit_status refuse_ipc(cujit_device *dev) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "the CPU device cannot share memory or events with another process (IPC needs "
                 "a GPU); share data through files or pipes, or run on a GPU");
}

static cujit_status cpu_shareable_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  (void)bytes, (void)addr;
  return refuse_ipc(dev);
}

static void cpu_shareable_free(cujit_device *dev, uint64_t addr) {
  (void)dev, (void)addr;
}

static cujit_status cpu_ipc_export(cujit_device *dev, uint64_t addr, unsigned char *handle) {
  (void)addr, (void)handle;
  return refuse_ipc(dev);
}

static cujit_status cpu_ipc_open(cujit_device *dev, const unsigned char *handle, uint64_t *addr) {
  (void)handle, (void)addr;
  return refuse_ipc(dev);
}

static void cpu_ipc_close(cujit_device *dev, uint64_t addr) {
  (void)dev, (void)addr;
}

static cujit_status cpu_ipc_event_create(cujit_device *dev, void **event) {
  (void)event;
  return refuse_ipc(dev);
}

static cujit_status cpu_ipc_event_export(cujit_device *dev, void *event, unsigned char *handle) {
  (void)event, (void)handle;
  return refuse_ipc(dev);
}

static cujit_status cpu_ipc_event_open(cujit_device *dev, const unsigned char *handle,
                                       void **event) {
  (void)handle, (void)event;
  return refuse_ipc(dev);
}

const cj_backend_toolbox cj_cpu_toolbox = {
    .managed_alloc = cpu_managed_alloc,
    .managed_free = cpu_managed_free,
    .prefetch = cpu_prefetch,
    .advise = cpu_advise,
    .host_map = cpu_host_map,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .get_global = cpu_get_global,
    .coresident_blocks = cpu_coresident_blocks,
    .launch_cooperative = cpu_launch_cooperative,
    .shareable_alloc = cpu_shareable_alloc,
    .shareable_free = cpu_shareable_free,
    .ipc_export = cpu_ipc_export,
    .ipc_open = cpu_ipc_open,
    .ipc_close = cpu_ipc_close,
    .ipc_event_create = cpu_ipc_event_create,
    .ipc_event_export = cpu_ipc_event_export,
    .ipc_event_open = cpu_ipc_event_open,
};
