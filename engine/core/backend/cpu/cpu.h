/*
** cpu.h -- the CPU device's queue records, shared by cpu_device.c (the device, its
** queue and its operations) and cpu_graph.c (stream capture and graphs, whose replays go
** through the same queue). Private to the backend layer.
*/
#ifndef CUJIT_BACKEND_CPU_H
#define CUJIT_BACKEND_CPU_H

#include "backend/backend.h"
#include "cpu_alloc.h"
#include "cpu_module.h"
#include "cpu_pool.h"

typedef struct cpu_event {
  uint64_t seq;  /* of the last record queued; 0 never recorded */
  double ms;     /* host time when that record was reached */
  int pending;   /* records queued, not yet run */
  int destroyed; /* freed by the last pending record */
  int captured;  /* last recorded on a capturing stream: no point of the device's work */
} cpu_event;

typedef struct cpu_stream {
  uint64_t last;               /* seq of the last work queued on it */
  struct cpu_capture *capture; /* while it captures a graph (cpu_graph.c) */
} cpu_stream;

/* OP_FREE gives `dst` back to the host's allocator, OP_UNLOAD unloads the module `dst`: queued
** behind the work that may use the memory or the code, and run even after a fault. */
enum op_kind { OP_COPY, OP_FILL, OP_LAUNCH, OP_RECORD, OP_GRAPH, OP_FREE, OP_UNLOAD };

typedef struct cpu_op {
  struct cpu_op *next;
  enum op_kind kind;
  uint64_t seq;
  void *dst;
  const void *src;
  size_t bytes;
  unsigned char value;
  cj_cpu_function *fn;
  cj_cpu_launch *launch; /* inside this allocation, with the copied parameters */
  cpu_event *event;
  struct cpu_plan *plan; /* OP_GRAPH: the replayed graph's nodes */
  size_t repeat;         /* OP_GRAPH: replays in a row, less one */
} cpu_op;

/* An instantiated graph's nodes (ops never queued themselves) in one allocation, with their
** launches and parameters; replays hold it by `pending`, and a replaced or destroyed one is
** freed by its last replay (cpu_graph.c). */
typedef struct cpu_plan {
  size_t count;
  int pending; /* replays queued, not yet run (under the device's lock) */
  int dropped; /* no longer the graph's: freed when pending reaches 0 */
  cpu_op *nodes;
} cpu_plan;

typedef struct cpu_dev {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  cpu_op *head, *tail;
  uint64_t submitted, completed; /* seq of the last op queued / finished */
  int stop, started;
  int waiting;         /* cj_cpu_wait_for calls in progress (tests look, to interrupt them all) */
  const char *running; /* the kernel the queue runs now, for messages; NULL when none */
  pthread_t thread;
  cj_cpu_pool *pool;
  int workers;
  int schedule;
  unsigned long long seed;
  cj_alloc_table allocs;
  cpu_op *spare; /* finished replay ops, kept for the next replays */
  int nspare;
} cpu_dev;

/* The shared memory a block may opt in to, as an H200 allows (228 KiB). */
#define MAX_SHARED_OPTIN (228 * 1024)

static inline cpu_dev *cpu_of(cujit_device *dev) {
  return (cpu_dev *)dev->impl;
}

/* A zeroed op of `kind` with `extra` bytes after it; NULL (recorded) when out of memory. */
cpu_op *cj_cpu_new_op(cujit_device *dev, enum op_kind kind, size_t extra);

/* --- cpu_queue.c --------------------------------------------------------------------- */

/* Waits until the queue has finished op `seq`; honours cujit_interrupt; then reports a fault. */
cujit_status cj_cpu_wait_for(cujit_device *dev, uint64_t seq, const char *what);
/* Waits for everything queued so far, with no interruption. */
void cj_cpu_drain(cpu_dev *c);
uint64_t cj_cpu_queued(cpu_dev *c);    /* the seq of the last op queued */
uint64_t cj_cpu_completed(cpu_dev *c); /* the seq of the last op finished */

/* Queues an OP_FREE or OP_UNLOAD of `what` behind the work queued so far and returns 1; 0 when
** the queue is idle (the caller does it now: no work can use it). Never fails: without memory
** for the op it waits for the queue and returns 0. */
int cj_cpu_queue_behind(cujit_device *dev, enum op_kind kind, void *what);

/* Drops the work queued and abandons the kernel running now (cj_cpu_pool_abandon), faulting the
** device with a message naming `by`; returns 1 once the queue is idle, 0 when the kernel did not
** leave within ABANDON_MS (its thread does not take the signal: the queue is then left alone). */
int cj_cpu_abandon(cujit_device *dev, const char *by);

/* Queues op behind everything queued before; `stream`, when given, remembers it. On a capturing
** stream the op is recorded into the graph instead. Takes the op, also on failure. */
cujit_status cj_cpu_enqueue(cujit_device *dev, cpu_op *op, void *stream);

/* cpu_program.c: programs, launches, globals and cooperative launches (the table's entries;
** backend.h says what each does). */
cujit_status cj_cpu_load(cujit_device *dev, const cj_image *image, void **module);
void cj_cpu_unload(cujit_device *dev, void *module);
cujit_status cj_cpu_get_function(cujit_device *dev, void *module, const char *name, void **fn);
cujit_status cj_cpu_launch_kernel(cujit_device *dev, void *fn, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes, void *stream,
                                  void **args);
cujit_status cj_cpu_suggest_block(cujit_device *dev, void *fn, int *block_size, int *min_grid);
cujit_status cj_cpu_allow_shared(cujit_device *dev, void *fn, unsigned bytes);
cujit_status cj_cpu_attributes(cujit_device *dev, void *fn, cujit_kernel_attributes *attrs);
int cj_cpu_param_info(cujit_device *dev, void *fn, size_t index, size_t *offset, size_t *size);
cujit_status cj_cpu_get_global(cujit_device *dev, void *module, const char *name, uint64_t *addr,
                               size_t *bytes);
cujit_status cj_cpu_coresident_blocks(cujit_device *dev, void *fn, unsigned threads,
                                      unsigned shared_bytes, unsigned long long *blocks);
cujit_status cj_cpu_launch_cooperative(cujit_device *dev, void *fn, const unsigned grid[3],
                                       const unsigned block[3], unsigned shared_bytes, void *stream,
                                       void **args);
cujit_status cj_cpu_check_attrs(cujit_device *dev, void *fn, const unsigned grid[3],
                                const unsigned block[3], unsigned shared_bytes,
                                const cj_launch_attrs *attrs, int *clusters);
cujit_status cj_cpu_launch_ex(cujit_device *dev, void *fn, const unsigned grid[3],
                              const unsigned block[3], unsigned shared_bytes, void *stream,
                              void **args, const cj_launch_attrs *attrs);

#endif
