/*
** cpu_graph.c -- the CPU device's stream capture and graphs, and its memory-pool answers
** (no pool: nothing to trim, nothing reserved). A capturing stream keeps the ops it is given
** (launches with their copied parameters, copies, fills) in a list instead of queueing them, by
** the rules of CUDA's driver: a copy between the device and pageable host memory is refused and
** invalidates the capture, and an event recorded there marks no point of the device's work.
** Instantiating lays the nodes out once in one allocation (a plan: launches, configurations and
** parameters packed), and a replay queues one op naming the plan, which the queue thread runs
** node by node: nothing is packed or allocated per replay (a finished replay's op is kept for the
** next, and back-to-back replays of a plan share one). Replacing a node's arguments or updating
** from a new capture writes the plan in place, or a copy of it while replays queued earlier
** still need the old one.
*/
#include "cpu_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPARE 64 /* finished replay ops kept per device */

/* A capture in progress, and after capture_end the graph: the recorded ops in order. */
typedef struct cpu_capture {
  cpu_op **ops;
  size_t count, capacity;
  const char *invalidated_by; /* the refused call that invalidated the capture, or NULL */
} cpu_capture;

/* An instantiated graph: the plan replays use now. */
typedef struct cpu_exec {
  cpu_plan *plan;
} cpu_exec;

static cpu_capture *capture_of(void *stream) {
  return stream ? ((cpu_stream *)stream)->capture : NULL;
}

cujit_status cj_cpu_pool_trim(cujit_device *dev) {
  (void)dev;
  return CUJIT_OK;
}

cujit_status cj_cpu_pool_reserved(cujit_device *dev, size_t *bytes) {
  (void)dev;
  *bytes = 0;
  return CUJIT_OK;
}

/* --- capture ---------------------------------------------------------------------------------- */

cujit_status cj_cpu_capture_begin(cujit_device *dev, void *stream, int mode) {
  (void)mode; /* one queue, run by its own thread: no call of another thread can join it */
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cpu_capture *capture = calloc(1, sizeof *capture);
  if (!capture)
    return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cujit_capture_begin: out of host memory");
  ((cpu_stream *)stream)->capture = capture;
  return CUJIT_OK;
}

static cujit_status invalidated(cujit_device *dev, const cpu_capture *capture, const char *what) {
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s failed on the CPU device: the graph capture was invalidated by an earlier "
                 "call that cannot be captured (%s); the capture is over: end it "
                 "(cujit_capture_end) and capture again without that call",
                 what, capture->invalidated_by);
}

static const char *op_name(enum op_kind kind) {
  switch (kind) {
  case OP_COPY:
    return "a copy";
  case OP_FILL:
    return "a fill (cujit_memset)";
  case OP_LAUNCH:
    return "a kernel launch";
  case OP_RECORD:
    return "cujit_event_record";
  default:
    return "a graph replay";
  }
}

static cujit_status append(cujit_device *dev, cpu_capture *capture, cpu_op *op) {
  if (capture->count == capture->capacity) {
    size_t capacity = capture->capacity ? 2 * capture->capacity : 16;
    cpu_op **more = realloc(capture->ops, capacity * sizeof *more);
    if (!more) {
      const char *what = op_name(op->kind);
      free(op);
      return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                     "out of host memory recording %s into a graph", what);
    }
    capture->ops = more, capture->capacity = capacity;
  }
  capture->ops[capture->count++] = op;
  return CUJIT_OK;
}

/* An op issued on a capturing stream (through cj_cpu_enqueue): recorded, not queued. */
cujit_status cj_cpu_capture_op(cujit_device *dev, cpu_op *op, void *stream) {
  cpu_capture *capture = capture_of(stream);
  cujit_status st = CUJIT_OK;
  if (capture->invalidated_by)
    st = invalidated(dev, capture, op_name(op->kind));
  else if (op->kind == OP_GRAPH)
    st = cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "a graph replay cannot be captured into another graph on the CPU device; "
                 "replay it before cujit_capture_begin or after cujit_capture_end, or capture its "
                 "work again into this graph");
  else if (op->kind == OP_RECORD) /* as the driver does: a point of the capture, no node */
    __atomic_store_n(&op->event->captured, 1, __ATOMIC_RELEASE);
  else
    return append(dev, capture, op);
  free(op);
  return st;
}

/* 1 when [p, p + bytes) lies in memory this device gave out: a buffer, or pinned host memory. */
static int device_or_pinned(cpu_dev *c, const void *p, size_t bytes) {
  uint64_t a = (uint64_t)(uintptr_t)p;
  int found = 0;
  pthread_mutex_lock(&c->lock);
  for (size_t i = 0; i < c->allocs.cap && !found; i++) {
    const cj_alloc_slot *s = &c->allocs.slots[i];
    found =
        s->addr > 1 && a >= s->addr && a - s->addr <= s->size && bytes <= s->size - (a - s->addr);
  }
  pthread_mutex_unlock(&c->lock);
  return found;
}

/* A copy issued on a capturing stream. Pageable host memory is refused, as the driver refuses
** it: a replay reads and writes its memory later, when the caller may have reused it. */
cujit_status cj_cpu_capture_copy(cujit_device *dev, cj_copy_kind kind, void *dst, const void *src,
                                 size_t bytes, void *stream) {
  cpu_capture *capture = capture_of(stream);
  const char *fn = kind == CJ_COPY_HTOD ? "cujit_memcpy_htod" : "cujit_memcpy_dtoh";
  if (capture->invalidated_by) return invalidated(dev, capture, fn);
  const void *host = kind == CJ_COPY_HTOD ? src : dst;
  if (kind != CJ_COPY_DTOD && !device_or_pinned(cpu_of(dev), host, bytes)) {
    capture->invalidated_by = kind == CJ_COPY_HTOD ? "cujit_memcpy_htod from pageable host memory"
                                                   : "cujit_memcpy_dtoh into pageable host memory";
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: a copy between the device and pageable host memory cannot run while a "
                   "stream of the CPU device captures a graph (CUDA's driver refuses it too): a "
                   "replay would use that memory long after the call; copy into pinned memory "
                   "(cujit_host_alloc), or copy before cujit_capture_begin or after "
                   "cujit_capture_end. The capture is now invalid: end it",
                   fn);
  }
  cpu_op *op = cj_cpu_new_op(dev, OP_COPY, 0);
  if (!op) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  op->dst = dst, op->src = src, op->bytes = bytes;
  return append(dev, capture, op);
}

/* The last op recorded is the launch just issued; its handle is its place, from 1. */
cujit_status cj_cpu_capture_last_node(cujit_device *dev, void *stream, void **node) {
  (void)dev;
  *node = (void *)(uintptr_t)capture_of(stream)->count;
  return CUJIT_OK;
}

void cj_cpu_capture_free(void *capture) {
  cpu_capture *g = capture;
  if (!g) return;
  for (size_t i = 0; i < g->count; i++) free(g->ops[i]);
  free(g->ops);
  free(g);
}

cujit_status cj_cpu_capture_end(cujit_device *dev, void *stream, void **graph) {
  cpu_capture *capture = capture_of(stream);
  ((cpu_stream *)stream)->capture = NULL;
  *graph = NULL;
  if (capture->invalidated_by) {
    cujit_status st = invalidated(dev, capture, "cujit_capture_end");
    cj_cpu_capture_free(capture);
    return st;
  }
  *graph = capture;
  return CUJIT_OK;
}

void cj_cpu_graph_destroy(cujit_device *dev, void *graph) {
  (void)dev;
  cj_cpu_capture_free(graph);
}

static int node_kind(enum op_kind kind) {
  switch (kind) {
  case OP_LAUNCH:
    return CUJIT_GRAPH_NODE_KERNEL;
  case OP_COPY:
    return CUJIT_GRAPH_NODE_COPY;
  case OP_FILL:
    return CUJIT_GRAPH_NODE_MEMSET;
  default:
    return CUJIT_GRAPH_NODE_OTHER;
  }
}

cujit_status cj_cpu_graph_nodes(cujit_device *dev, void *graph, size_t *counts) {
  (void)dev;
  const cpu_capture *g = graph;
  for (size_t i = 0; i < g->count; i++) counts[node_kind(g->ops[i]->kind)]++;
  return CUJIT_OK;
}

/* --- plans ------------------------------------------------------------------------------------ */

static size_t round16(size_t n) {
  return (n + 15) / 16 * 16;
}

/* A launch node's room in a plan: its launch record, argument pointers and parameters. */
static size_t launch_room(const cj_cpu_function *f) {
  return round16(sizeof(cj_cpu_launch)) + round16(f->nparams * sizeof(void *)) +
         round16(f->param_bytes);
}

/* Copies node `from` to `to`; a launch's record and parameters go to the room at *at. */
static void copy_node(cpu_op *to, const cpu_op *from, unsigned char **at) {
  *to = *from;
  to->next = NULL;
  if (from->kind != OP_LAUNCH) return;
  const cj_cpu_function *f = from->fn;
  cj_cpu_launch *launch = (cj_cpu_launch *)*at;
  void **pointers = (void **)(*at + round16(sizeof *launch));
  unsigned char *params = (unsigned char *)pointers + round16(f->nparams * sizeof(void *));
  memcpy(launch, from->launch, offsetof(cj_cpu_launch, error)); /* the message is not needed */
  for (size_t i = 0; i < f->nparams; i++) {
    memcpy(params + f->offsets[i], from->launch->args[i], f->sizes[i]);
    pointers[i] = params + f->offsets[i];
  }
  launch->args = pointers;
  launch->error_set = 0;
  to->launch = launch;
  *at += launch_room(f);
}

/* A plan of `count` nodes, from[i] (or nodes[i] when from is NULL), in one allocation. */
static cpu_plan *plan_new(cujit_device *dev, cpu_op *const *from, const cpu_op *nodes,
                          size_t count) {
#define NODE(i) (from ? from[i] : &nodes[i])
  size_t head = round16(sizeof(cpu_plan)), size = head + round16(count * sizeof(cpu_op));
  for (size_t i = 0; i < count; i++)
    if (NODE(i)->kind == OP_LAUNCH) size += launch_room(NODE(i)->fn);
  cpu_plan *plan = aligned_alloc(16, size);
  if (!plan) {
    cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
            "out of host memory instantiating a graph of %zu nodes", count);
    return NULL;
  }
  plan->count = count, plan->pending = 0, plan->dropped = 0;
  plan->nodes = (cpu_op *)((unsigned char *)plan + head);
  unsigned char *at = (unsigned char *)plan->nodes + round16(count * sizeof(cpu_op));
  for (size_t i = 0; i < count; i++) copy_node(&plan->nodes[i], NODE(i), &at);
  return plan;
#undef NODE
}

/* The plan is no longer the graph's: freed now, or by the last replay queued with it. */
static void plan_drop(cpu_dev *c, cpu_plan *plan) {
  pthread_mutex_lock(&c->lock);
  plan->dropped = 1;
  int unused = plan->pending == 0;
  pthread_mutex_unlock(&c->lock);
  if (unused) free(plan);
}

static void exec_use(cpu_dev *c, cpu_exec *exec, cpu_plan *plan) {
  plan_drop(c, exec->plan);
  exec->plan = plan;
}

/* The exec's plan, made safe to write: a copy while replays queued earlier use it. */
static cujit_status writable_plan(cujit_device *dev, cpu_exec *exec) {
  cpu_dev *c = cpu_of(dev);
  pthread_mutex_lock(&c->lock);
  int busy = exec->plan->pending > 0;
  pthread_mutex_unlock(&c->lock);
  if (!busy) return CUJIT_OK;
  cpu_plan *copy = plan_new(dev, NULL, exec->plan->nodes, exec->plan->count);
  if (!copy) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  exec_use(c, exec, copy);
  return CUJIT_OK;
}

cujit_status cj_cpu_graph_instantiate(cujit_device *dev, void *graph, void **exec) {
  const cpu_capture *g = graph;
  *exec = NULL;
  cpu_exec *e = malloc(sizeof *e);
  if (e) e->plan = plan_new(dev, g->ops, NULL, g->count);
  if (e && e->plan) {
    *exec = e;
    return CUJIT_OK;
  }
  free(e);
  return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                 "cujit_graph_instantiate: out of host memory for a graph of %zu nodes", g->count);
}

void cj_cpu_exec_destroy(cujit_device *dev, void *exec) {
  cpu_exec *e = exec;
  if (!e) return;
  plan_drop(cpu_of(dev), e->plan);
  free(e);
}

/* --- replay ----------------------------------------------------------------------------------- */

cujit_status cj_cpu_graph_launch(cujit_device *dev, void *exec, void *stream) {
  if (cj_device_faulted(dev)) return cj_device_refuse(dev);
  cpu_dev *c = cpu_of(dev);
  cpu_plan *plan = ((cpu_exec *)exec)->plan;
  cpu_op *op = NULL;
  if (!capture_of(stream)) {
    pthread_mutex_lock(&c->lock);
    cpu_op *tail = c->tail; /* queued, not started: it can run this replay too */
    if (tail && tail->kind == OP_GRAPH && tail->plan == plan) {
      tail->repeat++;
      if (stream) ((cpu_stream *)stream)->last = tail->seq;
      pthread_mutex_unlock(&c->lock);
      return CUJIT_OK;
    }
    if ((op = c->spare)) c->spare = op->next, c->nspare--;
    plan->pending++;
    pthread_mutex_unlock(&c->lock);
    if (!op && !(op = cj_cpu_new_op(dev, OP_GRAPH, 0))) {
      pthread_mutex_lock(&c->lock);
      plan->pending--;
      pthread_mutex_unlock(&c->lock);
      return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
    }
  } else if (!(op = cj_cpu_new_op(dev, OP_GRAPH, 0))) { /* refused by the capture */
    return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  }
  memset(op, 0, sizeof *op);
  op->kind = OP_GRAPH, op->plan = plan;
  cujit_status st = cj_cpu_enqueue(dev, op, stream);
  if (st != CUJIT_OK && !capture_of(stream)) {
    pthread_mutex_lock(&c->lock);
    plan->pending--;
    pthread_mutex_unlock(&c->lock);
  }
  return st;
}

/* From the queue thread, under the device's lock, when a replay op has run (or was dropped). */
void cj_cpu_replay_done(cpu_dev *c, cpu_op *op) {
  cpu_plan *plan = op->plan;
  if (--plan->pending == 0 && plan->dropped) free(plan);
  if (c->nspare >= MAX_SPARE) {
    free(op);
    return;
  }
  op->next = c->spare;
  c->spare = op;
  c->nspare++;
}

void cj_cpu_replay_spares_free(cpu_dev *c) {
  while (c->spare) {
    cpu_op *op = c->spare;
    c->spare = op->next;
    free(op);
  }
  c->nspare = 0;
}

/* --- changing a graph ------------------------------------------------------------------------- */

cujit_status cj_cpu_graph_set_kernel(cujit_device *dev, void *exec, void *node, void *fn,
                                     const unsigned grid[3], const unsigned block[3],
                                     unsigned shared_bytes, void **args) {
  cpu_exec *e = exec;
  size_t index = (size_t)(uintptr_t)node - 1;
  const cj_cpu_function *f = fn;
  if (index >= e->plan->count || e->plan->nodes[index].kind != OP_LAUNCH ||
      e->plan->nodes[index].fn != f)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_graph_set_args: the graph's node %zu does not launch kernel '%s'; "
                   "capture the graph again",
                   index, f->name);
  cujit_status st = writable_plan(dev, e);
  if (st != CUJIT_OK) return st;
  cj_cpu_launch *launch = e->plan->nodes[index].launch;
  for (size_t i = 0; i < f->nparams; i++) memcpy(launch->args[i], args[i], f->sizes[i]);
  for (int d = 0; d < 3; d++) launch->grid[d] = grid[d], launch->block[d] = block[d];
  launch->shared_bytes = shared_bytes;
  launch->total_blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
  return CUJIT_OK;
}

cujit_status cj_cpu_graph_update(cujit_device *dev, void *exec, void *graph) {
  cpu_exec *e = exec;
  const cpu_capture *g = graph;
  const char *differs = NULL;
  if (g->count != e->plan->count) differs = "the topology differs (other nodes or edges)";
  for (size_t i = 0; i < g->count && !differs; i++)
    if (g->ops[i]->kind != e->plan->nodes[i].kind)
      differs = "a node is of another kind (a kernel where a copy was, ...)";
  if (differs)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_graph_update: the new capture is not of the same shape: %s; "
                   "instantiate the new graph instead (cujit_graph_instantiate)",
                   differs);
  cpu_plan *plan = plan_new(dev, g->ops, NULL, g->count);
  if (!plan) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  exec_use(cpu_of(dev), e, plan);
  return CUJIT_OK;
}

/* --- events and Graphviz ---------------------------------------------------------------------- */

cujit_status cj_cpu_event_uncaptured(cujit_device *dev, void *event, const char *fn) {
  if (!__atomic_load_n(&((cpu_event *)event)->captured, __ATOMIC_ACQUIRE)) return CUJIT_OK;
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s: the event was last recorded on a stream capturing a graph, where a record "
                 "marks a point of the capture, not of the device's work (as CUDA's driver has "
                 "it); record it again outside a capture to wait for it or order other streams "
                 "after it",
                 fn);
}

cujit_status cj_cpu_graph_dot(cujit_device *dev, void *graph, const char *path) {
  const cpu_capture *g = graph;
  FILE *f = fopen(path, "w");
  if (!f)
    return cj_fail(dev->engine, CUJIT_ERROR_IO,
                   "cujit_graph_dot: could not write '%s'; check that its directory exists and "
                   "is writable",
                   path);
  cj_fsize limit; /* past ulimit -f: the error below, not SIGXFSZ */
  cj_fsize_guard(&limit);
  fprintf(f, "digraph cujit_cpu_graph {\n  node [shape=box];\n");
  for (size_t i = 0; i < g->count; i++) {
    const cpu_op *op = g->ops[i];
    const cj_cpu_launch *l = op->launch;
    if (op->kind == OP_LAUNCH)
      fprintf(f,
              "  n%zu [label=\"%zu: kernel %s\\ngrid (%u,%u,%u) block (%u,%u,%u) shared %u\"];\n",
              i, i, op->fn->name, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
              l->block[2], l->shared_bytes);
    else if (op->kind == OP_FILL)
      fprintf(f, "  n%zu [label=\"%zu: memset %zu bytes to 0x%02x\"];\n", i, i, op->bytes,
              op->value);
    else
      fprintf(f, "  n%zu [label=\"%zu: copy %zu bytes\"];\n", i, i, op->bytes);
    if (i > 0) fprintf(f, "  n%zu -> n%zu;\n", i - 1, i);
  }
  fprintf(f, "}\n");
  int closed = fclose(f) == 0;
  cj_fsize_release(&limit);
  if (!closed)
    return cj_fail(dev->engine, CUJIT_ERROR_IO, "cujit_graph_dot: could not finish writing '%s'",
                   path);
  return CUJIT_OK;
}
