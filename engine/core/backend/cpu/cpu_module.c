/*
** cpu_module.c -- the CPU device's programs: a shared object loaded from memory (memfd_create, then
** dlopen of /proc/self/fd/N, so nothing is written to disk), its ABI version checked, and the
** parameter layout of each kernel kept beside its entry, so that a queued launch can copy its
** arguments.
*/
#define _GNU_SOURCE /* memfd_create, memmem */
#include "cpu_module.h"
#include "lang/lexicon.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void cj_cpu_module_free(cj_cpu_module *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nfunctions; i++) {
    free(m->functions[i].name);
    free(m->functions[i].offsets);
    free(m->functions[i].sizes);
  }
  free(m->functions);
  if (m->workers && m->release)
    for (int i = 0; i < m->nworkers; i++) m->release(&m->workers[i]);
  free(m->workers);
  if (m->handle) dlclose(m->handle);
  if (m->fd >= 0) {
    /* glibc finds loaded objects by name first: while an object named /proc/self/fd/N stays
    ** loaded (C++ unique symbols make it NODELETE), fd N must not name another one. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
    void *still = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (still)
      dlclose(still);
    else
      close(m->fd);
  }
  free(m);
}

/* The parameter layout of each kernel, from the signatures scanned out of the program and sized
** from the object (verify.c: a generic kernel's specialisation and a struct by value included):
** the queue copies the arguments of a launch, since the caller's buffer is gone when the kernel
** runs. A parameter left unsized is refused at launch (cpu_program.c). */
static int copy_layouts(cj_cpu_module *m, const cj_image *image) {
  m->functions = calloc(image->nkernels ? image->nkernels : 1, sizeof *m->functions);
  if (!m->functions) return 0;
  m->nfunctions = image->nkernels;
  for (size_t i = 0; i < image->nkernels; i++) {
    const cj_signature *sig = &image->kernels[i];
    cj_cpu_function *f = &m->functions[i];
    f->module = m;
    f->name = cj_strdup(sig->name);
    f->nparams = sig->nparams;
    f->param_bytes = sig->param_bytes;
    f->offsets = calloc(sig->nparams + 1, sizeof *f->offsets);
    f->sizes = calloc(sig->nparams + 1, sizeof *f->sizes);
    for (size_t p = 0; f->offsets && f->sizes && p < sig->nparams; p++)
      f->offsets[p] = sig->params[p].offset, f->sizes[p] = sig->params[p].size;
    if (!f->name || !f->offsets || !f->sizes) return 0;
  }
  return 1;
}

/* A checked build needs AddressSanitizer's runtime loaded first, or dlopen would end the
** process ("ASan runtime does not come first"). */
static int needs_missing_asan(const void *image, size_t len) {
  return memmem(image, len, "libasan.so", 10) && !dlsym(RTLD_DEFAULT, "__asan_init");
}

static cujit_status load_failed(cujit_engine *engine, const cj_image *p, const char *why) {
  return cj_fail(engine, CUJIT_ERROR_DRIVER,
                 "loading '%s' on the CPU device failed: %s; clear the cache (cujit cache "
                 "clear) if the entry may be damaged",
                 p->name, why);
}

cujit_status cj_cpu_module_load(cujit_engine *engine, const cj_image *image, int workers,
                                cj_cpu_module **module) {
  if (strcmp(image->arch, "cpu") != 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "'%s' was compiled for %s, not for the CPU device: compile it while the CPU "
                   "device is current, or with arch \"cpu\"",
                   image->name, image->arch);
  if (!image->binary || image->binary_len < 4 || memcmp(image->binary, "\177ELF", 4) != 0)
    return load_failed(engine, image, "the program holds no shared object");
  if (needs_missing_asan(image->binary, image->binary_len))
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "'%s' was built with CUJIT_CPU_CHECK=1 (AddressSanitizer), whose runtime must "
                   "be loaded before the program starts: run it with LD_PRELOAD=$(g++ "
                   "-print-file-name=libasan.so) (the cujit command does this itself)",
                   image->name);
  cj_cpu_module *m = calloc(1, sizeof *m);
  if (m) m->fd = -1;
  if (!m || !copy_layouts(m, image) ||
      !(m->workers = calloc((size_t)workers, sizeof *m->workers))) {
    cj_cpu_module_free(m);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  m->nworkers = workers;
  for (int i = 0; i < workers; i++) m->workers[i].index = i;
  int fd = m->fd = memfd_create("cujit-kernels", MFD_CLOEXEC);
  size_t written = 0;
  int write_err = 0;
  cj_fsize limit; /* a memfd counts against ulimit -f too: EFBIG, not SIGXFSZ */
  cj_fsize_guard(&limit);
  while (fd >= 0 && written < image->binary_len) {
    ssize_t n = write(fd, (const char *)image->binary + written, image->binary_len - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) write_err = errno;
    if (n <= 0) break;
    written += (size_t)n;
  }
  cj_fsize_release(&limit);
  char path[64], why[1024];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  snprintf(why, sizeof why, "%s",
           fd < 0 ? strerror(errno)
           : write_err == EFBIG
               ? "File too large to write into memory (a memfd counts against the file size "
                 "limit, ulimit -f: raise it)"
           : write_err ? strerror(write_err)
                       : "the shared object was not written");
  if (fd >= 0 && written == image->binary_len) {
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) snprintf(why, sizeof why, "%s", dlerror());
  }
  int (*version)(void) = NULL;
  if (m->handle) {
    *(void **)&version = dlsym(m->handle, "cj_cpu_abi_version");
    *(void **)&m->release = dlsym(m->handle, "cj_cpu_worker_release");
    *(void **)&m->where = dlsym(m->handle, "cj_cpu_where"); /* optional */
    if (!version || !m->release || version() != CJ_CPU_ABI_VERSION)
      snprintf(why, sizeof why,
               "it was built for another version of the CPU device's ABI (it says %d, this "
               "library needs %d)",
               version ? version() : -1, CJ_CPU_ABI_VERSION);
  }
  if (!m->handle || !version || !m->release || version() != CJ_CPU_ABI_VERSION) {
    m->release = NULL;
    cj_cpu_module_free(m);
    return load_failed(engine, image, why);
  }
  *module = m;
  return CUJIT_OK;
}

cujit_status cj_cpu_module_function(cujit_engine *engine, cj_cpu_module *m, const char *name,
                                    cj_cpu_function **fn) {
  for (size_t i = 0; i < m->nfunctions; i++) {
    cj_cpu_function *f = &m->functions[i];
    if (strcmp(f->name, name) != 0) continue;
    char symbol[330], entry[320];
    cj_entry_identifier(name, entry, sizeof entry);
    snprintf(symbol, sizeof symbol, "cjk_%s", entry);
    if (!f->entry) {
      *(void **)&f->entry = dlsym(m->handle, symbol);
      snprintf(symbol, sizeof symbol, "cjc_%s", entry); /* its __cluster_dims__, if any */
      const unsigned *dims = dlsym(m->handle, symbol);
      for (int d = 0; d < 3; d++) f->cluster[d] = dims ? (dims[d] ? dims[d] : 1) : 0;
    }
    if (!f->entry) break;
    *fn = f;
    return CUJIT_OK;
  }
  return cj_fail(engine, CUJIT_ERROR_NOT_FOUND,
                 "kernel '%s' is not in the program loaded on the CPU device (no entry cjk_%s); "
                 "check the name and that it is declared extern \"C\" __global__",
                 name, name);
}
