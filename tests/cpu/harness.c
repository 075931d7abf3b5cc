/*
** harness.c -- the CPU-device test harness: translation unit, g++, dlopen, two worker threads.
** The compiler is $CUJIT_CXX or g++; the device headers come from $CUJIT_SOURCE_DIR/kernels_src
** (the source tree, as ctest sets it); objects go to $CUJIT_CPU_TMP or /tmp.
*/
#include "harness.h"

#include "compile/cpu_source.h"
#include "../../kernels_src/cujit/cpu_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WORKERS = 2 };

typedef struct worker_arg {
  struct cpu_module *m;
  int index;
} worker_arg;

struct cpu_module {
  void *so;
  worker_arg args[WORKERS];
  cj_cpu_worker workers[WORKERS];
  void (*release)(cj_cpu_worker *);
  /* the pool: each worker runs `entry(launch)` once per generation */
  pthread_t threads[WORKERS];
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  unsigned long generation;
  int running, quit;
  cj_cpu_entry_fn entry;
  cj_cpu_launch *launch;
};

static void *worker_main(void *p) {
  worker_arg *a = p;
  cpu_module *m = a->m;
  unsigned long seen = 0;
  pthread_mutex_lock(&m->lock);
  for (;;) {
    while (m->generation == seen && !m->quit) pthread_cond_wait(&m->go, &m->lock);
    if (m->quit) break;
    seen = m->generation;
    pthread_mutex_unlock(&m->lock);
    m->entry(m->launch, &m->workers[a->index]);
    pthread_mutex_lock(&m->lock);
    if (--m->running == 0) pthread_cond_signal(&m->done);
  }
  if (m->release) m->release(&m->workers[a->index]);
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

/* dlsym's object pointer as a function pointer, without the cast ISO C forbids. */
#define LOOKUP(fn, so, name)                                                                       \
  do {                                                                                             \
    void *sym_ = dlsym((so), (name));                                                              \
    memcpy(&(fn), &sym_, sizeof sym_);                                                             \
  } while (0)

static int run(const char *cmd, char *err, size_t err_len) {
  char full[4096];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t n = fread(err, 1, err_len - 1, p);
  err[n] = '\0';
  return pclose(p) == 0 ? 0 : -1;
}

int cpu_build(const char *source, const char *const *kernels, size_t nkernels, int check, char *so,
              size_t so_len, char *err, size_t err_len) {
  char *tu = cj_cpu_translation_unit(source, kernels, NULL, nkernels, check, err, err_len);
  if (!tu) return -1;
  const char *tmp = getenv("CUJIT_CPU_TMP") ? getenv("CUJIT_CPU_TMP") : "/tmp";
  const char *src = getenv("CUJIT_SOURCE_DIR") ? getenv("CUJIT_SOURCE_DIR") : ".";
  const char *cxx = getenv("CUJIT_CXX") ? getenv("CUJIT_CXX") : "g++";
  char cpp[512], cmd[2048];
  static int counter;
  snprintf(cpp, sizeof cpp, "%s/cujit_cpu_%d_%d.cpp", tmp, (int)getpid(), counter);
  snprintf(so, so_len, "%s/cujit_cpu_%d_%d.so", tmp, (int)getpid(), counter++);
  FILE *f = fopen(cpp, "w");
  if (!f || fputs(tu, f) < 0 || fclose(f) != 0) {
    snprintf(err, err_len, "cannot write %s", cpp);
    free(tu);
    return -1;
  }
  free(tu);
  snprintf(cmd, sizeof cmd,
           "%s -std=c++17 -O2 -g -shared -fPIC -Wall -Wno-unknown-pragmas -Werror=return-type %s "
           "-I%s/kernels_src %s -o %s",
           cxx,
           check ? "-fsanitize=address,undefined -fno-sanitize-recover=all -fstack-clash-protection"
                 : "",
           src, cpp, so);
  int rc = run(cmd, err, err_len);
  if (!getenv("CUJIT_CPU_KEEP")) unlink(cpp);
  return rc;
}

cpu_module *cpu_open(const char *so, char *err, size_t err_len) {
  cpu_module *m = calloc(1, sizeof *m);
  m->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!m->so) {
    snprintf(err, err_len, "dlopen: %s", dlerror());
    free(m);
    return NULL;
  }
  int (*version)(void);
  LOOKUP(version, m->so, "cj_cpu_abi_version");
  LOOKUP(m->release, m->so, "cj_cpu_worker_release");
  if (!version || version() != CJ_CPU_ABI_VERSION || !m->release) {
    snprintf(err, err_len, "the shared object lacks the CPU-device ABI");
    dlclose(m->so);
    free(m);
    return NULL;
  }
  pthread_mutex_init(&m->lock, NULL);
  pthread_cond_init(&m->go, NULL);
  pthread_cond_init(&m->done, NULL);
  for (int i = 0; i < WORKERS; i++) {
    m->workers[i].index = i;
    m->args[i] = (worker_arg){m, i};
    pthread_create(&m->threads[i], NULL, worker_main, &m->args[i]);
  }
  return m;
}

cpu_module *cpu_compile(const char *source, const char *const *kernels, size_t nkernels, int check,
                        char *err, size_t err_len) {
  char so[512];
  if (cpu_build(source, kernels, nkernels, check, so, sizeof so, err, err_len) != 0) return NULL;
  cpu_module *m = cpu_open(so, err, err_len);
  if (!getenv("CUJIT_CPU_KEEP")) unlink(so);
  return m;
}

int cpu_launch(cpu_module *m, const char *kernel, const cpu_launch_opts *o, void **args, char *err,
               size_t err_len) {
  char sym[300];
  snprintf(sym, sizeof sym, "cjk_%s", kernel);
  cj_cpu_entry_fn entry;
  LOOKUP(entry, m->so, sym);
  if (!entry) {
    snprintf(err, err_len, "no entry %s", sym);
    return -1;
  }
  cj_cpu_launch *l = calloc(1, sizeof *l);
  memcpy(l->grid, o->grid, sizeof l->grid);
  memcpy(l->block, o->block, sizeof l->block);
  l->shared_bytes = o->shared_bytes;
  l->args = args;
  l->kernel = kernel;
  l->schedule = o->schedule;
  l->schedule_seed = o->seed;
  l->total_blocks = (unsigned long long)o->grid[0] * o->grid[1] * o->grid[2];
  pthread_mutex_lock(&m->lock);
  m->entry = entry, m->launch = l, m->running = WORKERS, m->generation++;
  pthread_cond_broadcast(&m->go);
  while (m->running > 0) pthread_cond_wait(&m->done, &m->lock);
  pthread_mutex_unlock(&m->lock);
  int rc = 0;
  if (l->error_set) {
    snprintf(err, err_len, "%s", l->error);
    rc = -1;
  }
  free(l);
  return rc;
}

void cpu_unload(cpu_module *m) {
  if (!m) return;
  pthread_mutex_lock(&m->lock);
  m->quit = 1;
  pthread_cond_broadcast(&m->go);
  pthread_mutex_unlock(&m->lock);
  for (int i = 0; i < WORKERS; i++) pthread_join(m->threads[i], NULL);
  dlclose(m->so);
  free(m);
}

int cpu_where(cpu_module *m, int worker, char *buf, size_t len) {
  cj_cpu_where_fn where;
  LOOKUP(where, m->so, "cj_cpu_where");
  return where ? where(worker >= 0 && worker < WORKERS ? &m->workers[worker] : NULL, buf, len) : -1;
}
