/*
** nccl.c -- NCCL communicators and collectives over cujit's devices, buffers and streams: one
** communicator over several devices of this process (ncclCommInitAll) or one rank per process
** (ncclCommInitRank with a unique id), and all_reduce, broadcast, reduce, all_gather and
** reduce_scatter, each issued for every local rank inside one NCCL group. Every argument is
** checked (each buffer on its rank's device, one dtype NCCL knows, sizes) before NCCL sees it.
** cujit never sets NCCL's environment: NCCL_NVLS_ENABLE and the rest stay as the caller left them.
*/
#include "nccl.h"

#include <stdio.h>
#include <stdlib.h>

struct cujit_nccl_comm {
  cj_link link;
  cujit_engine *engine;
  const cj_nccl *lib;
  int nranks;             /* in the whole communicator */
  int nlocal;             /* ranks of this process */
  int first_rank;         /* the rank of local rank 0 */
  cujit_device **devices; /* nlocal: each local rank's device */
  unsigned *generations;  /* nlocal: each device's generation when the rank was made */
  cj_nccl_comm_t *comms;  /* nlocal */
};

#define COMM_OF(l) ((cujit_nccl_comm *)((char *)(l)-offsetof(cujit_nccl_comm, link)))

const cj_nccl *cj_nccl_need(cujit_engine *engine, const char *fn) {
  char why[1024];
  const cj_nccl *lib = cj_nccl_open(why, sizeof why);
  if (!lib) cj_fail(engine, CUJIT_ERROR_UNSUPPORTED, "%s: %s", fn, why);
  return lib;
}

cujit_status cj_nccl_fail(cujit_engine *engine, const cj_nccl *lib, cj_nccl_comm_t comm,
                          cj_nccl_result rc, const char *what) {
  const char *last = comm && lib->GetLastError ? lib->GetLastError(comm) : NULL;
  cujit_status st = rc == 4 || rc == 5 /* ncclInvalidArgument, ncclInvalidUsage */
                        ? CUJIT_ERROR_INVALID_ARGUMENT
                        : CUJIT_ERROR_DRIVER;
  return cj_fail(engine, st, "%s failed: %s%s%s (NCCL_DEBUG=WARN in the environment says more)",
                 what, lib->GetErrorString(rc), last && *last ? ": " : "", last ? last : "");
}

cujit_status cujit_nccl_version(cujit_engine *engine, int *version) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!engine)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "cujit_nccl_version: engine is NULL");
  if (!version)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_nccl_version: version is NULL; pass an int to fill");
  *version = 0;
  const cj_nccl *lib = cj_nccl_need(engine, "cujit_nccl_version");
  if (!lib) return CUJIT_ERROR_UNSUPPORTED;
  *version = lib->version;
  return CUJIT_OK;
}

/* --- communicators ---------------------------------------------------------------------------- */

static void comm_destroy(cj_link *link) {
  cujit_nccl_comm *c = COMM_OF(link);
  for (int i = 0; i < c->nlocal; i++) {
    cujit_device *dev = c->devices[i];
    /* A reset dropped what the rank had on its device; a faulted device cannot finish anything. */
    if (c->comms[i] && cj_device_current(dev, c->generations[i]) && cj_device_enter_quiet(dev))
      c->lib->CommDestroy(c->comms[i]);
  }
  free(c);
}

/* One block: the record, then its three arrays. */
static cujit_nccl_comm *comm_new(cujit_engine *engine, const cj_nccl *lib, int nlocal) {
  size_t size =
      sizeof(cujit_nccl_comm) +
      (size_t)nlocal * (sizeof(cujit_device *) + sizeof(cj_nccl_comm_t) + sizeof(unsigned));
  cujit_nccl_comm *c = calloc(1, size);
  if (!c) {
    cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for an NCCL communicator");
    return NULL;
  }
  c->engine = engine;
  c->lib = lib;
  c->nlocal = nlocal;
  c->devices = (cujit_device **)(c + 1);
  c->comms = (cj_nccl_comm_t *)(c->devices + nlocal);
  c->generations = (unsigned *)(c->comms + nlocal);
  return c;
}

/* The device of ordinal `ordinal`, entered: a GPU (NCCL runs on nothing else). */
static cujit_status rank_device(cujit_engine *engine, const char *fn, int ordinal,
                                cujit_device **out) {
  if (ordinal == CUJIT_DEVICE_CPU)
    return cj_fail(engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s: NCCL runs on GPUs, not on the CPU device; on the CPU device combine "
                   "partial results on the host",
                   fn);
  cujit_status st = cujit_device_get(engine, ordinal, out);
  return st == CUJIT_OK ? cj_device_enter(*out) : st;
}

static void comm_publish(cujit_nccl_comm *c, cujit_nccl_comm **out) {
  for (int i = 0; i < c->nlocal; i++)
    c->generations[i] = __atomic_load_n(&c->devices[i]->generation, __ATOMIC_ACQUIRE);
  cj_track(c->engine, &c->link, comm_destroy);
  *out = c;
}

cujit_status cujit_nccl_comm_init_all(cujit_engine *engine, const int *ordinals, int count,
                                      cujit_nccl_comm **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_nccl_comm_init_all";
  cujit_status st = cj_check_new(engine, out, fn, "cujit_nccl_comm");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if (!ordinals || count <= 0)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: no devices; pass the ordinals of the GPUs to join (at least one)", fn);
  for (int i = 0; i < count; i++)
    for (int j = 0; j < i; j++)
      if (ordinals[i] == ordinals[j])
        return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                       "%s: device %d is listed twice; list each device once", fn, ordinals[i]);
  const cj_nccl *lib = cj_nccl_need(engine, fn);
  if (!lib) return CUJIT_ERROR_UNSUPPORTED;
  cujit_nccl_comm *c = comm_new(engine, lib, count);
  if (!c) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  for (int i = 0; i < count && st == CUJIT_OK; i++)
    st = rank_device(engine, fn, ordinals[i], &c->devices[i]);
  if (st == CUJIT_OK) {
    cj_nccl_result rc = lib->CommInitAll(c->comms, count, ordinals);
    /* On failure what comms[] holds is never read: the record is freed below, nothing destroyed. */
    if (rc != CJ_NCCL_SUCCESS) st = cj_nccl_fail(engine, lib, NULL, rc, "ncclCommInitAll");
    /* It may leave another device's context current: enter the engine's current GPU again
    ** (quietly: its failure is not this call's). */
    int current = __atomic_load_n(&engine->current_device, __ATOMIC_RELAXED);
    if (current >= 0 && current < engine->device_count)
      cj_device_enter_quiet(&engine->devices[current]);
  }
  if (st != CUJIT_OK) {
    free(c);
    return st;
  }
  c->nranks = count;
  comm_publish(c, out);
  return CUJIT_OK;
}

cujit_status cujit_nccl_comm_init_rank(cujit_device *device, int nranks, int rank,
                                       const char *id_hex, cujit_nccl_comm **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_nccl_comm_init_rank";
  if (!device) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: device is NULL", fn);
  cujit_engine *engine = device->engine;
  cujit_status st = cj_check_new(engine, out, fn, "cujit_nccl_comm");
  if (st != CUJIT_OK) return st;
  *out = NULL;
  if (nranks <= 0 || rank < 0 || rank >= nranks)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: rank %d of %d ranks; ranks run from 0 to nranks - 1", fn, rank, nranks);
  cj_nccl_id id;
  if ((st = cj_nccl_id_parse(engine, fn, id_hex, &id)) != CUJIT_OK) return st;
  cujit_device *dev = NULL;
  if ((st = rank_device(engine, fn, device->ordinal, &dev)) != CUJIT_OK) return st;
  const cj_nccl *lib = cj_nccl_need(engine, fn);
  if (!lib) return CUJIT_ERROR_UNSUPPORTED;
  cujit_nccl_comm *c = comm_new(engine, lib, 1);
  if (!c) return CUJIT_ERROR_OUT_OF_HOST_MEMORY;
  c->devices[0] = dev;
  /* Blocks until all nranks processes have called it with the same id. */
  cj_nccl_result rc = lib->CommInitRank(&c->comms[0], nranks, id, rank);
  if (rc != CJ_NCCL_SUCCESS) {
    free(c);
    return cj_nccl_fail(engine, lib, NULL, rc, "ncclCommInitRank");
  }
  c->nranks = nranks;
  c->first_rank = rank;
  comm_publish(c, out);
  return CUJIT_OK;
}

void cujit_nccl_comm_free(cujit_nccl_comm *comm) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!comm) return;
  cj_untrack(comm->engine, &comm->link);
  comm_destroy(&comm->link);
}

int cujit_nccl_comm_ranks(const cujit_nccl_comm *comm) {
  return comm ? comm->nranks : 0;
}

int cujit_nccl_comm_local(const cujit_nccl_comm *comm) {
  return comm ? comm->nlocal : 0;
}

int cujit_nccl_comm_rank(const cujit_nccl_comm *comm, int local) {
  return comm && local >= 0 && local < comm->nlocal ? comm->first_rank + local : -1;
}

cujit_device *cujit_nccl_comm_device(const cujit_nccl_comm *comm, int local) {
  return comm && local >= 0 && local < comm->nlocal ? comm->devices[local] : NULL;
}

/* --- collectives ------------------------------------------------------------------------------ */

typedef enum collective_kind {
  ALL_REDUCE,
  BROADCAST,
  REDUCE,
  ALL_GATHER,
  REDUCE_SCATTER
} collective_kind;

static const char *const collective_names[] = {"cujit_nccl_all_reduce", "cujit_nccl_broadcast",
                                               "cujit_nccl_reduce", "cujit_nccl_all_gather",
                                               "cujit_nccl_reduce_scatter"};

typedef struct collective {
  collective_kind kind;
  cujit_buffer *const *send;
  cujit_buffer *const *recv; /* NULL: in place, into send */
  size_t count;              /* elements: per rank's send (all_gather), recv (reduce_scatter) */
  cujit_nccl_op op;
  int root;
  cujit_stream *const *streams; /* NULL: every rank's default stream */
} collective;

static int nccl_dtype(cujit_dtype dtype) {
  switch (dtype) {
  case CUJIT_I8:
    return CJ_NCCL_INT8;
  case CUJIT_U8:
    return CJ_NCCL_UINT8;
  case CUJIT_I32:
    return CJ_NCCL_INT32;
  case CUJIT_U32:
    return CJ_NCCL_UINT32;
  case CUJIT_I64:
    return CJ_NCCL_INT64;
  case CUJIT_U64:
    return CJ_NCCL_UINT64;
  case CUJIT_F16:
    return CJ_NCCL_FLOAT16;
  case CUJIT_BF16:
    return CJ_NCCL_BFLOAT16;
  case CUJIT_F32:
    return CJ_NCCL_FLOAT32;
  case CUJIT_F64:
    return CJ_NCCL_FLOAT64;
  default:
    return -1;
  }
}

static int nccl_op(cujit_nccl_op op) {
  static const int ops[] = {CJ_NCCL_SUM, CJ_NCCL_PROD, CJ_NCCL_MIN, CJ_NCCL_MAX, CJ_NCCL_AVG};
  return (unsigned)op < sizeof ops / sizeof ops[0] ? ops[op] : -1;
}

/* The buffer `b` of local rank i, for `role` ("send", "receive"), must live on the rank's device,
** be current, hold `dtype` and at least `elems` elements. */
static cujit_status check_rank_buffer(const cujit_nccl_comm *c, const char *fn, int i,
                                      const char *role, const cujit_buffer *b, cujit_dtype dtype,
                                      size_t elems) {
  cujit_engine *e = c->engine;
  char have[32], want[32];
  if (!b)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the %s buffer of local rank %d is NULL",
                   fn, role, i);
  if (b->device != c->devices[i])
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s buffer of local rank %d lives on %s, but that rank runs on %s; "
                   "pass one buffer per rank, on the rank's device, in the order the devices were "
                   "given",
                   fn, role, i, cj_device_name(b->device, have, sizeof have),
                   cj_device_name(c->devices[i], want, sizeof want));
  if (!cj_device_current(b->device, b->generation))
    return cj_check_alive(b->device, b->generation, "a buffer passed to NCCL");
  if (b->dtype != dtype)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s buffer of local rank %d holds %s but rank 0's send buffer %s; "
                   "every buffer of a collective holds one dtype",
                   fn, role, i, cujit_dtype_name(b->dtype), cujit_dtype_name(dtype));
  size_t elem = cujit_dtype_size(dtype);
  if (b->size / elem < elems)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the %s buffer of local rank %d holds %zu elements, fewer than the %zu "
                   "this collective needs",
                   fn, role, i, b->size / elem, elems);
  return CUJIT_OK;
}

/* Every check, before NCCL sees anything. */
static cujit_status check_collective(const cujit_nccl_comm *c, const char *fn, const collective *k,
                                     int *dtype) {
  cujit_engine *e = c->engine;
  if (!k->send)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: send is NULL; pass one buffer per local rank (%d)", fn, c->nlocal);
  if (!k->send[0])
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the send buffer of local rank 0 is NULL",
                   fn);
  cujit_dtype dt = k->send[0]->dtype;
  if ((*dtype = nccl_dtype(dt)) < 0)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: NCCL has no %s elements; use i8, u8, i32, u32, i64, u64, f16, f32 or f64",
                   fn, cujit_dtype_name(dt));
  if ((k->kind == ALL_REDUCE || k->kind == REDUCE || k->kind == REDUCE_SCATTER) &&
      nccl_op(k->op) < 0)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: %d is not a cujit_nccl_op; use CUJIT_NCCL_SUM, _PROD, _MIN, _MAX or _AVG",
                   fn, (int)k->op);
  if ((k->kind == BROADCAST || k->kind == REDUCE) && (k->root < 0 || k->root >= c->nranks))
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: root %d is not a rank of this communicator (0..%d)", fn, k->root,
                   c->nranks - 1);
  if ((k->kind == ALL_GATHER || k->kind == REDUCE_SCATTER) && !k->recv)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: recv is NULL; this collective writes a buffer of a different size than it "
                   "reads, so pass the receive buffers",
                   fn);
  if (k->count == 0)
    return cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT, "%s: a count of 0 elements", fn);
  size_t ranks = (size_t)c->nranks;
  size_t send_elems = k->kind == REDUCE_SCATTER ? k->count * ranks : k->count;
  size_t recv_elems = k->kind == ALL_GATHER ? k->count * ranks : k->count;
  for (int i = 0; i < c->nlocal; i++) {
    cujit_status st = check_rank_buffer(c, fn, i, "send", k->send[i], dt, send_elems);
    if (st == CUJIT_OK && k->recv)
      st = check_rank_buffer(c, fn, i, "receive", k->recv[i], dt, recv_elems);
    cujit_stream *s = k->streams ? k->streams[i] : NULL;
    if (st == CUJIT_OK && s && s->device != c->devices[i])
      st = cj_fail(e, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream of local rank %d is on device %d, the rank on device %d; pass "
                   "a stream of the rank's device, or NULL",
                   fn, i, s->device->ordinal, c->devices[i]->ordinal);
    if (st == CUJIT_OK && s) st = cj_check_alive(s->device, s->generation, "the stream");
    if (st == CUJIT_OK && !cj_device_current(c->devices[i], c->generations[i]))
      st = cj_check_alive(c->devices[i], c->generations[i], "the NCCL communicator");
    if (st != CUJIT_OK) return st;
  }
  return CUJIT_OK;
}

static cj_nccl_result issue(const cujit_nccl_comm *c, const collective *k, int i, int dtype) {
  const cj_nccl *n = c->lib;
  const void *send = (const void *)(uintptr_t)k->send[i]->ptr;
  void *recv = (void *)(uintptr_t)(k->recv ? k->recv[i]->ptr : k->send[i]->ptr);
  cj_nccl_stream s = k->streams ? cj_stream_queue(k->streams[i]) : NULL;
  cj_nccl_comm_t comm = c->comms[i];
  switch (k->kind) {
  case ALL_REDUCE:
    return n->AllReduce(send, recv, k->count, dtype, nccl_op(k->op), comm, s);
  case BROADCAST:
    return n->Broadcast(send, recv, k->count, dtype, k->root, comm, s);
  case REDUCE:
    return n->Reduce(send, recv, k->count, dtype, nccl_op(k->op), k->root, comm, s);
  case ALL_GATHER:
    return n->AllGather(send, recv, k->count, dtype, comm, s);
  default:
    return n->ReduceScatter(send, recv, k->count, dtype, nccl_op(k->op), comm, s);
  }
}

/* Issues the collective for every local rank, each with its device entered, in one group: NCCL
** needs every local rank's call before any can progress, and a group lets one thread give them. */
static cujit_status run_collective(cujit_nccl_comm *c, const collective *k) {
  const char *fn = collective_names[k->kind];
  if (!c) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
  int dtype = -1;
  cujit_status st = check_collective(c, fn, k, &dtype);
  if (st != CUJIT_OK) return st;
  /* Every device usable before the group opens: a group missing one rank's call would wait for
  ** it forever. */
  for (int i = 0; i < c->nlocal && st == CUJIT_OK; i++) st = cj_device_enter(c->devices[i]);
  if (st != CUJIT_OK) return st;
  const cj_nccl *n = c->lib;
  cj_nccl_result rc = n->GroupStart();
  if (rc != CJ_NCCL_SUCCESS) return cj_nccl_fail(c->engine, n, NULL, rc, "ncclGroupStart");
  int failed_rank = -1;
  for (int i = 0; i < c->nlocal && st == CUJIT_OK && rc == CJ_NCCL_SUCCESS; i++) {
    if ((st = cj_device_enter(c->devices[i])) == CUJIT_OK) rc = issue(c, k, i, dtype);
    if (rc != CJ_NCCL_SUCCESS) failed_rank = i;
  }
  cj_nccl_result end = n->GroupEnd(); /* always, to close the group */
  for (int i = 0; k->streams && i < c->nlocal; i++) cj_stream_queued(k->streams[i]);
  if (st != CUJIT_OK) return st;
  char what[96];
  if (rc != CJ_NCCL_SUCCESS) {
    snprintf(what, sizeof what, "%s (NCCL, local rank %d)", fn, failed_rank);
    return cj_nccl_fail(c->engine, n, c->comms[failed_rank], rc, what);
  }
  if (end != CJ_NCCL_SUCCESS) {
    snprintf(what, sizeof what, "%s (ncclGroupEnd)", fn);
    return cj_nccl_fail(c->engine, n, c->comms[0], end, what);
  }
  return CUJIT_OK;
}

cujit_status cujit_nccl_all_reduce(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                   cujit_buffer *const *recv, size_t count, cujit_nccl_op op,
                                   cujit_stream *const *streams) {
  CJ_KEEP_CALLER_CONTEXT;
  return run_collective(comm, &(collective){ALL_REDUCE, send, recv, count, op, 0, streams});
}

cujit_status cujit_nccl_broadcast(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                  cujit_buffer *const *recv, size_t count, int root,
                                  cujit_stream *const *streams) {
  CJ_KEEP_CALLER_CONTEXT;
  return run_collective(comm,
                        &(collective){BROADCAST, send, recv, count, CUJIT_NCCL_SUM, root, streams});
}

cujit_status cujit_nccl_reduce(cujit_nccl_comm *comm, cujit_buffer *const *send,
                               cujit_buffer *const *recv, size_t count, cujit_nccl_op op, int root,
                               cujit_stream *const *streams) {
  CJ_KEEP_CALLER_CONTEXT;
  return run_collective(comm, &(collective){REDUCE, send, recv, count, op, root, streams});
}

cujit_status cujit_nccl_all_gather(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                   cujit_buffer *const *recv, size_t send_count,
                                   cujit_stream *const *streams) {
  CJ_KEEP_CALLER_CONTEXT;
  return run_collective(
      comm, &(collective){ALL_GATHER, send, recv, send_count, CUJIT_NCCL_SUM, 0, streams});
}

cujit_status cujit_nccl_reduce_scatter(cujit_nccl_comm *comm, cujit_buffer *const *send,
                                       cujit_buffer *const *recv, size_t recv_count,
                                       cujit_nccl_op op, cujit_stream *const *streams) {
  CJ_KEEP_CALLER_CONTEXT;
  return run_collective(comm,
                        &(collective){REDUCE_SCATTER, send, recv, recv_count, op, 0, streams});
}
