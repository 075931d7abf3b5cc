/*
** cpu_queue.c -- the CPU device's queue: one in-order list of ops for all of the device's
** streams, run by a thread of its own (launches on the worker pool, copies, fills, event records,
** graph replays, and the frees and unloads queued behind the work that may use their memory or
** code); the waits for it (interruptible by cujit_interrupt); and abandoning the kernel that runs
** when a reset or cujit_close cannot wait for it, as a GPU's reset or context teardown does.
*/
#include "cpu.h"
#include "cpu_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SLICE_NS 5000000 /* how often a wait looks for cujit_interrupt */
#define ABANDON_MS 2000       /* for an abandoned kernel's threads to leave it */

/* --- faults and waits --------------------------------------------------------------------------
 */

static void fault(cujit_device *dev, const char *what, const char *where) {
  cj_device_fault(dev,
                  "the CPU device faulted: %.1500s%s; it refuses further work until reset: call "
                  "cujit_device_reset (Lua: cuda.reset()), which loses the device's buffers, "
                  "streams and events (host data is untouched)",
                  what, where);
}

cujit_status cj_cpu_wait_for(cujit_device *dev, uint64_t seq, const char *what) {
  cpu_dev *c = cpu_of(dev);
  cujit_engine *engine = dev->engine;
  unsigned mark = cj_interrupt_mark(engine);
  pthread_mutex_lock(&c->lock);
  c->waiting++;
  while (c->completed < seq) {
    if (cj_interrupted(engine, mark)) {
      c->waiting--;
      pthread_mutex_unlock(&c->lock);
      return cj_fail(engine, CUJIT_ERROR_INTERRUPTED,
                     "%s was interrupted (cujit_interrupt); the work already queued on the CPU "
                     "device goes on running",
                     what);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += WAIT_SLICE_NS;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->done, &c->lock, &until);
  }
  c->waiting--;
  pthread_mutex_unlock(&c->lock);
  return cj_device_faulted(dev) ? cj_device_refuse(dev) : CUJIT_OK;
}

void cj_cpu_drain(cpu_dev *c) {
  pthread_mutex_lock(&c->lock);
  while (c->completed < c->submitted) pthread_cond_wait(&c->done, &c->lock);
  pthread_mutex_unlock(&c->lock);
}

uint64_t cj_cpu_completed(cpu_dev *c) {
  pthread_mutex_lock(&c->lock);
  uint64_t seq = c->completed;
  pthread_mutex_unlock(&c->lock);
  return seq;
}

uint64_t cj_cpu_queued(cpu_dev *c) {
  pthread_mutex_lock(&c->lock);
  uint64_t seq = c->submitted;
  pthread_mutex_unlock(&c->lock);
  return seq;
}

/* --- the queue ---------------------------------------------------------------------------------
 */

/* `where` follows the kernel's failure in the fault's message. A graph's launches run again:
** their block counter starts over. */
static void run_launch(cujit_device *dev, cpu_dev *c, cpu_op *op, uint64_t seq, const char *where) {
  cj_cpu_launch *launch = op->launch;
  const cj_cpu_function *fn = op->fn;
  launch->schedule = c->schedule;
  launch->schedule_seed = c->seed + seq;
  launch->next_block = 0, launch->error_set = 0;
  launch->groups = NULL, launch->ngroups = 0;
  if (launch->cluster_size > 1) { /* the groups of workers that run clusters (cpu_abi.h) */
    unsigned long long workers = (unsigned long long)cj_cpu_pool_size(c->pool);
    launch->ngroups =
        (launch->total_blocks < workers ? launch->total_blocks : workers) / launch->cluster_size;
    launch->groups = calloc(launch->ngroups ? launch->ngroups : 1, sizeof *launch->groups);
    if (!launch->groups) {
      fault(dev, "out of host memory for the cluster groups of a launch", where);
      return;
    }
  }
  cj_cpu_job job = {fn->entry, launch, fn->module->workers, fn->module->release, fn->module->where};
  cj_cpu_pool_run(c->pool, &job);
  free(launch->groups);
  launch->groups = NULL;
  if (__atomic_load_n(&launch->error_set, __ATOMIC_ACQUIRE)) fault(dev, launch->error, where);
}

static void run_op(cujit_device *dev, cpu_dev *c, cpu_op *op);

/* A graph's replays: its nodes in order, each as it ran when queued alone, until a fault. */
static void run_graph(cujit_device *dev, cpu_dev *c, const cpu_op *op) {
  const cpu_plan *plan = op->plan;
  for (size_t r = 0; r <= op->repeat; r++)
    for (size_t i = 0; i < plan->count && !cj_device_faulted(dev); i++) {
      cpu_op *node = &plan->nodes[i];
      if (node->kind == OP_LAUNCH)
        run_launch(dev, c, node, op->seq + r, " (in a kernel node of a replayed cujit_graph)");
      else
        run_op(dev, c, node);
    }
}

static void run_op(cujit_device *dev, cpu_dev *c, cpu_op *op) {
  switch (op->kind) {
  case OP_COPY:
    memcpy(op->dst, op->src, op->bytes);
    break;
  case OP_FILL:
    memset(op->dst, op->value, op->bytes);
    break;
  case OP_LAUNCH:
    run_launch(dev, c, op, op->seq, "");
    break;
  case OP_RECORD:
    op->event->ms = cj_now_ms();
    break;
  case OP_GRAPH:
    run_graph(dev, c, op);
    break;
  case OP_FREE:
  case OP_UNLOAD:
    break; /* queue_main runs them, faulted or not */
  }
}

/* Frees the op; an event whose last record this was, and which was destroyed, goes too. A
** replay's op goes back to the graph's side (cpu_graph.c). */
static void finish_op(cpu_dev *c, cpu_op *op) {
  if (op->kind == OP_RECORD && --op->event->pending == 0 && op->event->destroyed) free(op->event);
  c->completed = op->seq;
  if (op->kind == OP_GRAPH)
    cj_cpu_replay_done(c, op);
  else
    free(op);
}

static void *queue_main(void *p) {
  cujit_device *dev = p;
  cpu_dev *c = cpu_of(dev);
  cj_cpu_thread_begin();
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (!c->head && !c->stop) pthread_cond_wait(&c->work, &c->lock);
    if (!c->head) break;
    cpu_op *op = c->head;
    c->head = op->next;
    if (!c->head) c->tail = NULL;
    c->running = op->kind == OP_LAUNCH ? op->launch->kernel : NULL;
    pthread_mutex_unlock(&c->lock);
    if (op->kind == OP_FREE)
      free(op->dst);
    else if (op->kind == OP_UNLOAD)
      cj_cpu_module_free(op->dst);
    else if (!cj_device_faulted(dev))
      run_op(dev, c, op); /* after a fault, queued work is dropped */
    pthread_mutex_lock(&c->lock);
    c->running = NULL;
    finish_op(c, op);
    pthread_cond_broadcast(&c->done);
  }
  pthread_mutex_unlock(&c->lock);
  cj_cpu_thread_end();
  return NULL;
}

/* An op with `extra` bytes after it (staged data, the launch and its parameters). */
cpu_op *cj_cpu_new_op(cujit_device *dev, enum op_kind kind, size_t extra) {
  cpu_op *op = calloc(1, sizeof *op + extra);
  if (!op)
    cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
            "out of host memory queueing work on the CPU device");
  else
    op->kind = kind;
  return op;
}

/* Puts op at the end of the queue and wakes the queue thread; the caller holds c->lock. */
static void append(cpu_dev *c, cpu_op *op) {
  if (c->tail)
    c->tail->next = op;
  else
    c->head = op;
  c->tail = op;
  pthread_cond_signal(&c->work);
}

/* The queue thread and pool start with the first op. */
cujit_status cj_cpu_enqueue(cujit_device *dev, cpu_op *op, void *stream) {
  if (stream && ((cpu_stream *)stream)->capture) return cj_cpu_capture_op(dev, op, stream);
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock);
  if (!c->started) {
    c->pool = cj_cpu_pool_new(c->workers);
    if (!c->pool || pthread_create(&c->thread, NULL, queue_main, dev) != 0) {
      cj_cpu_pool_free(c->pool);
      c->pool = NULL;
      pthread_mutex_unlock(&c->lock);
      free(op);
      return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "the CPU device could not start its threads; free some memory or lower "
                     "CUJIT_CPU_THREADS");
    }
    c->started = 1;
  }
  op->seq = ++c->submitted;
  if (stream) ((cpu_stream *)stream)->last = op->seq;
  if (op->kind == OP_RECORD) {
    op->event->seq = op->seq, op->event->pending++;
    __atomic_store_n(&op->event->captured, 0, __ATOMIC_RELEASE); /* a point of the work again */
  }
  append(c, op);
  pthread_mutex_unlock(&c->lock);
  return CUJIT_OK;
}

/* --- frees behind the work, and abandoning it --------------------------------------------------
 */

int cj_cpu_queue_behind(cujit_device *dev, enum op_kind kind, void *what) {
  cpu_dev *c = cpu_of(dev);
  cpu_op *op = calloc(1, sizeof *op); /* not cj_cpu_new_op: a release records no error */
  pthread_mutex_lock(&c->lock);
  int busy = c->completed < c->submitted;
  if (busy && op) {
    op->kind = kind, op->dst = what, op->seq = ++c->submitted;
    append(c, op);
  }
  pthread_mutex_unlock(&c->lock);
  if (busy && op) return 1;
  free(op);
  if (busy) cj_cpu_drain(c);
  return 0;
}

/* As cj_device_fault, without recording an error for the calling thread: a reset that abandons
** work succeeds. The first fault's message stays. */
static void fault_quietly(cujit_device *dev, const char *msg) {
  cujit_engine *engine = dev->engine;
  pthread_mutex_lock(&engine->lock);
  if (dev->fault == CUJIT_OK) {
    snprintf(dev->fault_msg, sizeof dev->fault_msg, "%s", msg);
    __atomic_store_n(&dev->fault, CUJIT_ERROR_DEVICE_FAULT, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&engine->lock);
}

int cj_cpu_abandon(cujit_device *dev, const char *by) {
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock);
  int busy = c->completed < c->submitted;
  char msg[512];
  snprintf(msg, sizeof msg,
           "the CPU device faulted: %s abandoned %s%s%s and the work queued after it; it refuses "
           "further work until reset: call cujit_device_reset (Lua: cuda.reset())",
           by, c->running ? "kernel '" : "the work it ran", c->running ? c->running : "",
           c->running ? "'" : "");
  pthread_mutex_unlock(&c->lock);
  if (!busy) return 1;
  fault_quietly(dev, msg); /* the queue drops what it has not started */
  double deadline = cj_now_ms() + ABANDON_MS;
  pthread_mutex_lock(&c->lock);
  while (c->completed < c->submitted && cj_now_ms() < deadline) {
    if (c->pool) cj_cpu_pool_abandon(c->pool); /* again: cheap, and sure (idle threads ignore it) */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 10 * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->done, &c->lock, &until);
  }
  int idle = c->completed >= c->submitted;
  pthread_mutex_unlock(&c->lock);
  if (idle && c->pool) cj_cpu_pool_resume(c->pool);
  return idle;
}
