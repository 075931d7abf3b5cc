/*
** cpu_device.c -- the CPU device: cj_backend_cpu runs kernels compiled by the system C++
** compiler (cxx.c) on the host's cores. Device memory is host memory; every stream's work goes
** into one in-order queue per device, run by a queue thread, so launches and stream copies are
** asynchronous (a missing synchronize misbehaves as on a GPU) while the default stream stays
** ordered with every other stream, as CUDA's legacy stream is. Kernels are shared objects loaded
** from memory (cpu_module.c); a launch runs on the worker pool (cpu_pool.c), and a failure in a
** kernel faults the device as a GPU fault does, until a reset. The queue itself, its waits and
** the abandoning of a kernel that runs at a reset or at the close are in cpu_queue.c.
*/
#define _GNU_SOURCE /* sched_getaffinity */
#include "cpu.h"
#include "cpu_graph.h"
#include "base/env.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ALIGNMENT 256
#define CLOSE_WAIT_MS 2000 /* what cujit_close gives running work before abandoning it */

/* --- the device's state ------------------------------------------------------------------------
 */

/* --- devices ------------------------------------------------------------------------------------
 */

static cujit_status cpu_enter(cujit_device *dev) {
  return cj_device_faulted(dev) ? cj_device_refuse(dev) : CUJIT_OK;
}

static int cpu_enter_quiet(cujit_device *dev) {
  return dev && !cj_device_faulted(dev);
}

/* MemTotal and MemAvailable from /proc/meminfo, else the page counts. */
static void host_memory(size_t *free_bytes, size_t *total_bytes) {
  unsigned long long total = 0, avail = 0, kib;
  char line[256];
  FILE *f = fopen("/proc/meminfo", "r");
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemTotal: %llu kB", &kib) == 1) total = kib * 1024;
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) avail = kib * 1024;
  }
  if (f) fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  if (!total) total = (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)page;
  if (!avail) avail = (unsigned long long)sysconf(_SC_AVPHYS_PAGES) * (unsigned long long)page;
  *free_bytes = (size_t)avail, *total_bytes = (size_t)total;
}

static cujit_status cpu_mem_info(cujit_device *dev, size_t *free_bytes, size_t *total_bytes) {
  host_memory(free_bytes, total_bytes);
  return CUJIT_OK;
}

static cujit_status cpu_synchronize(cujit_device *dev) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  return cj_cpu_wait_for(dev, cj_cpu_queued(cpu_of(dev)), "cujit_device_synchronize");
}

/* The backend's part of a reset (device.c bumps the generation and clears the fault): as a GPU's
** reset, the kernel running now is abandoned and the queued work dropped, and every allocation
** freed. Loaded kernels stay. */
static cujit_status cpu_reset(cujit_device *dev) {
  cpu_dev *c = cpu_of(dev);
  if (!cj_cpu_abandon(dev, "cujit_device_reset"))
    return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_FAULT,
                   "cujit_device_reset: the CPU device's kernel did not stop when abandoned (its "
                   "threads do not take signal SIGRTMAX-2); the device stays faulted: restart the "
                   "program");
  pthread_mutex_lock(&c->lock);
  cj_alloc_free_all(&c->allocs);
  pthread_mutex_unlock(&c->lock);
  return CUJIT_OK;
}

/* At cujit_close, queued work gets CLOSE_WAIT_MS to finish; then, as a GPU's context is torn
** down at exit, the kernel still running is abandoned, with a warning. 0 when it would not stop:
** the device's threads and memory are then left as they are (the process may still exit). */
static int stop_queue(cujit_device *dev, cpu_dev *c) {
  double deadline = cj_now_ms() + CLOSE_WAIT_MS;
  pthread_mutex_lock(&c->lock);
  while (c->started && c->completed < c->submitted && cj_now_ms() < deadline) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 10 * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->done, &c->lock, &until);
  }
  int busy = c->started && c->completed < c->submitted;
  char what[300];
  snprintf(what, sizeof what, "%s%.200s%s", c->running ? "kernel '" : "its work",
           c->running ? c->running : "", c->running ? "'" : "");
  pthread_mutex_unlock(&c->lock);
  if (!busy) return 1;
  int stopped = cj_cpu_abandon(dev, "cujit_close");
  cj_warn(dev->engine,
          "cujit_close: the CPU device was still running %s %d s after the close; %s (as a GPU's "
          "work ends when its context is torn down at exit)",
          what, CLOSE_WAIT_MS / 1000,
          stopped ? "abandoned it and the work queued after it"
                  : "it did not stop when abandoned, and is left running");
  return stopped;
}

static void cpu_release(cujit_device *dev) {
  cpu_dev *c = cpu_of(dev);
  if (!c) return;
  if (!stop_queue(dev, c)) {
    dev->impl = NULL; /* its threads may still use all of it */
    return;
  }
  pthread_mutex_lock(&c->lock);
  c->stop = 1;
  pthread_cond_signal(&c->work);
  int started = c->started;
  pthread_mutex_unlock(&c->lock);
  if (started) pthread_join(c->thread, NULL); /* it finishes what is queued first */
  cj_cpu_pool_free(c->pool);
  cj_cpu_replay_spares_free(c);
  cj_alloc_free_all(&c->allocs);
  pthread_cond_destroy(&c->work);
  pthread_cond_destroy(&c->done);
  pthread_mutex_destroy(&c->lock);
  free(c);
  dev->impl = NULL;
}

/* --- memory ------------------------------------------------------------------------------------
 */

static cujit_status out_of_memory(cujit_device *dev, size_t bytes) {
  char asked[32], f[32], t[32];
  size_t free_bytes, total;
  host_memory(&free_bytes, &total);
  return cj_fail(dev->engine, CUJIT_ERROR_DEVICE_MEMORY,
                 "out of memory on the CPU device: asked for %s (%zu bytes), the host has %s "
                 "available of %s; free buffers you no longer need or allocate less",
                 cj_bytes_text(bytes, asked, sizeof asked), bytes,
                 cj_bytes_text(free_bytes, f, sizeof f), cj_bytes_text(total, t, sizeof t));
}

static cujit_status track(cujit_device *dev, size_t bytes, void **out) {
  cpu_dev *c = cpu_of(dev);
  if (bytes > SIZE_MAX - ALIGNMENT) return out_of_memory(dev, bytes);
  void *p = cj_alloc_block(ALIGNMENT, bytes);
  if (!p) return out_of_memory(dev, bytes);
  pthread_mutex_lock(&c->lock);
  int ok = cj_alloc_put(&c->allocs, (uint64_t)(uintptr_t)p, bytes);
  pthread_mutex_unlock(&c->lock);
  if (!ok) {
    free(p);
    return out_of_memory(dev, bytes);
  }
  *out = p;
  return CUJIT_OK;
}

/* 1 when p is memory this device gave out (buffers, host memory, streams and events) and a
** reset has not freed already; it is no longer recorded, and the caller frees it. */
static int take(cpu_dev *c, void *p) {
  pthread_mutex_lock(&c->lock);
  int mine = cj_alloc_take(&c->allocs, (uint64_t)(uintptr_t)p);
  pthread_mutex_unlock(&c->lock);
  return mine;
}

/* As a GPU's stream-ordered pool does, a free never waits: with work queued (which may still use
** the memory) the free is queued behind it, so the memory is reused only after that work; with
** the queue idle it is immediate. */
static void untrack(cujit_device *dev, void *p) {
  cpu_dev *c = cpu_of(dev);
  if (!c || !p || !take(c, p)) return;
  if (!cj_cpu_queue_behind(dev, OP_FREE, p)) free(p);
}

static cujit_status cpu_alloc(cujit_device *dev, size_t bytes, uint64_t *addr) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  void *p = NULL;
  cujit_status st = track(dev, bytes, &p);
  if (st == CUJIT_OK) *addr = (uint64_t)(uintptr_t)p;
  return st;
}

static void cpu_free(cujit_device *dev, uint64_t addr) {
  untrack(dev, (void *)(uintptr_t)addr);
}

static cujit_status cpu_host_alloc(cujit_device *dev, size_t bytes, void **ptr) {
  return cj_device_faulted(dev) ? cj_device_refuse(dev) : track(dev, bytes, ptr);
}

static void cpu_host_free(cujit_device *dev, void *ptr) {
  untrack(dev, ptr);
}

/* On the default stream: synchronous, after all work queued before. On a stream: queued; a
** host source is staged at once, so the caller may reuse it as CUDA lets it for pageable
** memory. */
static cujit_status cpu_copy(cujit_device *dev, cj_copy_kind kind, uint64_t dst, uint64_t src,
                             size_t bytes, void *stream) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  void *d = (void *)(uintptr_t)dst;
  const void *s = (const void *)(uintptr_t)src;
  if (!stream) {
    cujit_status st =
        cj_cpu_wait_for(dev, cj_cpu_queued(cpu_of(dev)), "a copy on the default stream");
    if (st == CUJIT_OK && bytes) memcpy(d, s, bytes);
    return st;
  }
  if (((cpu_stream *)stream)->capture) return cj_cpu_capture_copy(dev, kind, d, s, bytes, stream);
  int stage = kind == CJ_COPY_HTOD;
  cpu_op *op = cj_cpu_new_op(dev, OP_COPY, stage ? bytes : 0);
  if (!op) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  op->dst = d, op->bytes = bytes;
  if (stage) memcpy(op + 1, s, bytes);
  op->src = stage ? (const void *)(op + 1) : s;
  return cj_cpu_enqueue(dev, op, stream);
}

static cujit_status cpu_memset8(cujit_device *dev, uint64_t dst, unsigned char value, size_t bytes,
                                void *stream) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cpu_dev *c = cpu_of(dev);
  if (!stream && cj_cpu_queued(c) == cj_cpu_completed(c)) { /* nothing before it: done now */
    if (bytes) memset((void *)(uintptr_t)dst, value, bytes);
    return CUJIT_OK;
  }
  /* Else queued, also on the default stream: it returns at once, as the header says, and the one
  ** queue orders it before all later work on every stream. */
  cpu_op *op = cj_cpu_new_op(dev, OP_FILL, 0);
  if (!op) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  op->dst = (void *)(uintptr_t)dst, op->value = value, op->bytes = bytes;
  return cj_cpu_enqueue(dev, op, stream);
}

/* Device memory is host memory: managed memory is an ordinary allocation, prefetch and advice
** have nothing to do, mapping host memory gives its own address and registering is a no-op. */
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

/* --- streams and events ----------------------------------------------------------------------- */

/* A zeroed stream or event record, recorded with the memory: a reset frees it with the rest, as
** the layer above no longer destroys what a reset made lost. */
static cujit_status new_handle(cujit_device *dev, size_t size, void **out) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cujit_status st = track(dev, size, out);
  if (st == CUJIT_OK) memset(*out, 0, size);
  return st;
}

static cujit_status cpu_stream_create(cujit_device *dev, void **stream) {
  return new_handle(dev, sizeof(cpu_stream), stream);
}

/* Work already queued on it still runs, as on CUDA; the queue holds no pointer to the stream. */
static void cpu_stream_destroy(cujit_device *dev, void *stream) {
  if (!take(cpu_of(dev), stream)) return;
  cj_cpu_capture_free(((cpu_stream *)stream)->capture);
  free(stream);
}

/* The seq a stream's work ends at: the default stream is ordered after everything. */
static uint64_t stream_end(cujit_device *dev, void *stream) {
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock); /* enqueue writes `last` under it, from any thread */
  uint64_t seq = stream ? ((cpu_stream *)stream)->last : c->submitted;
  pthread_mutex_unlock(&c->lock);
  return seq;
}

static cujit_status done_by(cujit_device *dev, uint64_t seq) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock);
  int done = c->completed >= seq;
  pthread_mutex_unlock(&c->lock);
  return done ? CUJIT_OK : CUJIT_ERROR_NOT_READY;
}

static cujit_status cpu_stream_query(cujit_device *dev, void *stream) {
  return done_by(dev, stream_end(dev, stream));
}

static cujit_status cpu_stream_synchronize(cujit_device *dev, void *stream) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  return cj_cpu_wait_for(dev, stream_end(dev, stream), "cujit_stream_synchronize");
}

/* One queue runs every stream in the order work was queued, so the event's record, queued
** before this call, is always behind us: nothing to wait for. */
static cujit_status cpu_stream_wait_event(cujit_device *dev, void *stream, void *event) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  return cj_cpu_event_uncaptured(dev, event, "cujit_stream_wait_event");
}

static cujit_status cpu_event_create(cujit_device *dev, void **event) {
  return new_handle(dev, sizeof(cpu_event), event);
}

static void cpu_event_destroy(cujit_device *dev, void *event) {
  cpu_dev *c = cpu_of(dev);
  cpu_event *e = event;
  if (!e || !take(c, e)) return;
  pthread_mutex_lock(&c->lock);
  int pending = e->pending;
  e->destroyed = 1;
  pthread_mutex_unlock(&c->lock);
  if (!pending) free(e);
}

static cujit_status cpu_event_record(cujit_device *dev, void *event, void *stream) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cpu_op *op = cj_cpu_new_op(dev, OP_RECORD, 0);
  if (!op) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  op->event = event;
  return cj_cpu_enqueue(dev, op, stream);
}

static uint64_t event_seq(cujit_device *dev, cpu_event *e) {
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock);
  uint64_t seq = e->seq;
  pthread_mutex_unlock(&c->lock);
  return seq;
}

static cujit_status cpu_event_query(cujit_device *dev, void *event) {
  cujit_status st = cj_cpu_event_uncaptured(dev, event, "cujit_event_query");
  return st == CUJIT_OK ? done_by(dev, event_seq(dev, event)) : st;
}

static cujit_status cpu_event_synchronize(cujit_device *dev, void *event) {
  cujit_status st = cj_cpu_event_uncaptured(dev, event, "cujit_event_synchronize");
  if (st != CUJIT_OK || cj_device_faulted(dev)) return st != CUJIT_OK ? st : cj_device_refuse(dev);
  return cj_cpu_wait_for(dev, event_seq(dev, event), "cujit_event_synchronize");
}

static cujit_status cpu_event_elapsed(cujit_device *dev, void *start, void *end, float *ms) {
  cpu_event *a = start, *b = end;
  cujit_status st = cj_cpu_event_uncaptured(dev, a, "cujit_event_elapsed");
  if (st == CUJIT_OK) st = cj_cpu_event_uncaptured(dev, b, "cujit_event_elapsed");
  if (st == CUJIT_OK) st = done_by(dev, event_seq(dev, a));
  if (st == CUJIT_OK) st = done_by(dev, event_seq(dev, b));
  if (st == CUJIT_ERROR_NOT_READY)
    return cj_fail(dev->engine, CUJIT_ERROR_NOT_READY,
                   "cujit_event_elapsed: an event has not completed yet; call "
                   "cujit_event_synchronize on the end event first");
  if (st == CUJIT_OK) *ms = (float)(b->ms - a->ms);
  return st;
}
/* --- between processes: refused (there is no other process's device memory) ------------------- */

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

/* The CPU device's memory is host memory: an address the caller wrapped is its to vouch for (no
** allocator knows every host allocation). The one kind known to be wrong is a GPU's device
** memory, which a kernel here would fault on: where the driver is open (the device table, made
** before the CPU device, opened it), what it calls device memory, and not managed, is refused. */
static cujit_status cpu_pointer_check(cujit_device *dev, uint64_t addr, size_t bytes,
                                      const char *fn) {
  (void)bytes;
  cujit_engine *e = dev->engine;
  if (__atomic_load_n(&e->drv_state, __ATOMIC_ACQUIRE) != 1 || !e->drv.cuPointerGetAttributes)
    return CUJIT_OK;
  unsigned type = 0, managed = 0;
  int ordinal = -1;
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void *data[] = {&type, &managed, &ordinal};
  if (e->drv.cuPointerGetAttributes(3, which, data, (CUdeviceptr)addr) != CUDA_SUCCESS ||
      type != CU_MEMORYTYPE_DEVICE || managed)
    return CUJIT_OK;
  return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                 "%s: address 0x%llx is device memory of GPU %d, which the CPU device cannot "
                 "reach; wrap it on that GPU (cujit_buffer_wrap_on), or copy it to host memory",
                 fn, (unsigned long long)addr, ordinal);
}

const cj_backend cj_backend_cpu = {
    .name = "cpu",
    .host_addressed = 1,
    .enter = cpu_enter,
    .enter_quiet = cpu_enter_quiet,
    .mem_info = cpu_mem_info,
    .synchronize = cpu_synchronize,
    .reset = cpu_reset,
    .release = cpu_release,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .copy = cpu_copy,
    .memset8 = cpu_memset8,
    .managed_alloc = cpu_managed_alloc,
    .managed_free = cpu_managed_free,
    .prefetch = cpu_prefetch,
    .advise = cpu_advise,
    .host_map = cpu_host_map,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_query = cpu_stream_query,
    .stream_synchronize = cpu_stream_synchronize,
    .stream_wait_event = cpu_stream_wait_event,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_query = cpu_event_query,
    .event_synchronize = cpu_event_synchronize,
    .event_elapsed = cpu_event_elapsed,
    .load = cj_cpu_load,
    .unload = cj_cpu_unload,
    .get_function = cj_cpu_get_function,
    .launch = cj_cpu_launch_kernel,
    .suggest_block = cj_cpu_suggest_block,
    .allow_shared = cj_cpu_allow_shared,
    .attributes = cj_cpu_attributes,
    .param_info = cj_cpu_param_info,
    .get_global = cj_cpu_get_global,
    .coresident_blocks = cj_cpu_coresident_blocks,
    .launch_cooperative = cj_cpu_launch_cooperative,
    .check_attrs = cj_cpu_check_attrs,
    .launch_ex = cj_cpu_launch_ex,
    .pool_trim = cj_cpu_pool_trim,
    .pool_reserved = cj_cpu_pool_reserved,
    .capture_begin = cj_cpu_capture_begin,
    .capture_last_node = cj_cpu_capture_last_node,
    .capture_end = cj_cpu_capture_end,
    .graph_destroy = cj_cpu_graph_destroy,
    .graph_nodes = cj_cpu_graph_nodes,
    .graph_instantiate = cj_cpu_graph_instantiate,
    .exec_destroy = cj_cpu_exec_destroy,
    .graph_launch = cj_cpu_graph_launch,
    .graph_set_kernel = cj_cpu_graph_set_kernel,
    .graph_update = cj_cpu_graph_update,
    .graph_dot = cj_cpu_graph_dot,
    .shareable_alloc = cpu_shareable_alloc,
    .shareable_free = cpu_shareable_free,
    .ipc_export = cpu_ipc_export,
    .ipc_open = cpu_ipc_open,
    .ipc_close = cpu_ipc_close,
    .ipc_event_create = cpu_ipc_event_create,
    .ipc_event_export = cpu_ipc_event_export,
    .ipc_event_open = cpu_ipc_event_open,
    .pointer_check = cpu_pointer_check,
};

/* --- making the device -------------------------------------------------------------------------
 */

/* CUJIT_CPU_THREADS, else the cores this process may use; -1 with why for a bad value. */
static int worker_count(char *why, size_t len) {
  int n = cj_env_cpu_threads(why, len);
  if (n != 0) return n;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? (int)cores : 1;
}

cujit_status cj_cpu_device(cujit_engine *engine, cujit_device **device) {
  cujit_device *dev = calloc(1, sizeof *dev);
  cpu_dev *c = calloc(1, sizeof *c);
  if (!dev || !c) {
    free(dev);
    free(c);
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  }
  char why[512];
  int drawn = 0; /* a random order whose seed was not given: say it, so it can be had again */
  c->seed = (unsigned long long)time(NULL);
  if ((c->workers = worker_count(why, sizeof why)) < 0 ||
      (c->schedule = cj_env_cpu_schedule(&c->seed, &drawn, why, sizeof why)) < 0) {
    free(dev);
    free(c);
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s; fix or unset it to use the CPU device", why);
  }
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->work, NULL);
  pthread_cond_init(&c->done, NULL);
  if (drawn)
    cj_warn(engine,
            "CUJIT_CPU_SCHEDULE=random: the CPU device runs blocks and threads in the order of "
            "seed %llu; set CUJIT_CPU_SCHEDULE=random:%llu to have that order again",
            c->seed, c->seed);
  dev->engine = engine;
  dev->ops = &cj_backend_cpu;
  dev->impl = c;
  dev->ordinal = CUJIT_DEVICE_CPU;
  snprintf(dev->arch, sizeof dev->arch, "cpu");
  atomic_init(&dev->allocated, 0);
  cujit_device_info *info = &dev->info;
  info->ordinal = CUJIT_DEVICE_CPU;
  snprintf(info->name, sizeof info->name, "CPU (%d thread%s)", c->workers,
           c->workers == 1 ? "" : "s");
  info->multiprocessors = c->workers;
  size_t free_bytes;
  host_memory(&free_bytes, &info->total_memory);
  info->max_threads_per_block = 1024;
  info->max_block_dim[0] = info->max_block_dim[1] = 1024, info->max_block_dim[2] = 64;
  info->max_grid_dim[0] = 2147483647, info->max_grid_dim[1] = info->max_grid_dim[2] = 65535;
  info->max_shared_per_block = 48 * 1024;
  info->max_shared_per_block_optin = MAX_SHARED_OPTIN;
  info->warp_size = 32;
  info->pci_bus_id = -1;
  *device = dev;
  return CUJIT_OK;
}
