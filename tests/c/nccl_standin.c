/*
** nccl_standin.c -- a stand-in NCCL for tests (CUJIT_NCCL=<this library>) that works over the
** stand-in driver's memory (scripts/bench/stub_driver.c: a pretend GPU's memory is host memory),
** so that cujit's communicators and collectives (engine/core/collective) run without NCCL or a GPU,
** over as many pretend GPUs as CUJIT_STUB_DEVICES gives. It exports every entry point cujit
** resolves; reports the version in $CJ_TEST_NCCL_VERSION (an NCCL_VERSION_CODE, 22703 for
** 2.27.3, when unset); makes unique ids; joins ranks (ncclCommInitAll: one clique of ndev ranks at
** once; ncclCommInitRank: the ranks of one id meet, each call waiting for the others, so threads of
** one process can be the ranks); and runs each collective with NCCL's definitions (sum, prod, max,
** min, avg; every dtype NCCL has, f16 and bf16 through float) once every rank of its clique has
** issued it, at once, in the thread of the last rank: it ignores streams, as the stand-in driver
** runs everything at once. A rank's n-th collective meets the other ranks' n-th; a mismatch (kind,
** count, dtype, op, root) is ncclInvalidUsage for the rank that finds it.
**
** For the error paths: CJ_TEST_NCCL_FAIL=<entry point> (ncclAllReduce, ncclGroupEnd, ...) makes
** that call return CJ_TEST_NCCL_FAIL_RESULT (default 3, ncclInternalError), for the local rank
** CJ_TEST_NCCL_FAIL_RANK only when set, and ncclGetLastError then says so. What it holds is
** counted: ncclStandinLiveComms() (communicators made and not destroyed or aborted),
** ncclStandinGroupDepth() (groups started and not ended) and ncclStandinPendingOps() (collectives
** some ranks issued and the others not: a real NCCL would wait for them forever).
** Built twice: nccl_standin_old (CJ_NCCL_STANDIN_OLD) lacks ncclReduceScatter, as an NCCL too old
** for cujit, and ncclGetLastError, as NCCL before 2.13.
*/
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SUCCESS = 0, SYSTEM_ERROR = 2, INTERNAL_ERROR = 3, INVALID_ARGUMENT = 4, INVALID_USAGE = 5 };
enum { I8, U8, I32, U32, I64, U64, F16, F32, F64, BF16 }; /* ncclDataType_t */
enum { SUM, PROD, MAX, MIN, AVG };                        /* ncclRedOp_t */
enum { ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER };

#define MAX_RANKS 16
#define MAX_PENDING 64 /* collectives issued by some ranks of a clique, not yet by all */

typedef struct unique_id {
  char internal[128];
} unique_id; /* ncclUniqueId, passed by value */

typedef struct op_t {
  int used, kind, dtype, op, root, arrived;
  unsigned long seq;
  size_t count;
  const void *send[MAX_RANKS];
  void *recv[MAX_RANKS];
} op_t;

typedef struct clique {
  struct clique *next;
  unique_id id;
  int nranks, joined, live;
  unsigned long issued[MAX_RANKS]; /* each rank's collectives so far */
  op_t pending[MAX_PENDING];
} clique;

typedef struct comm_t {
  clique *c;
  int rank;
} comm_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t joined = PTHREAD_COND_INITIALIZER;
static clique *cliques; /* those made by ncclCommInitRank, found by their id */
static int live_comms, group_depth;
/* Every communicator not destroyed: one whose device was reset is never destroyed (its context is
** gone), and stays reachable here rather than a leak to LeakSanitizer. */
static comm_t *live[256];
static char last_error[256];

int ncclStandinLiveComms(void);
int ncclStandinLiveComms(void) {
  pthread_mutex_lock(&lock);
  int n = live_comms;
  pthread_mutex_unlock(&lock);
  return n;
}

/* CJ_TEST_NCCL_FAIL names `call` (and CJ_TEST_NCCL_FAIL_RANK is unset or `rank`): its result. */
static int injected(const char *call, int rank) {
  const char *name = getenv("CJ_TEST_NCCL_FAIL");
  if (!name || strcmp(name, call) != 0) return SUCCESS;
  const char *r = getenv("CJ_TEST_NCCL_FAIL_RANK");
  if (r && *r && atoi(r) != rank) return SUCCESS;
  const char *v = getenv("CJ_TEST_NCCL_FAIL_RESULT");
  int result = v && *v ? atoi(v) : INTERNAL_ERROR;
  snprintf(last_error, sizeof last_error, "the stand-in NCCL was told to fail %s (rank %d)", call,
           rank);
  return result;
}

static int usage(const char *why) {
  snprintf(last_error, sizeof last_error, "%s", why);
  return INVALID_USAGE;
}

int ncclStandinGroupDepth(void);
int ncclStandinGroupDepth(void) {
  pthread_mutex_lock(&lock);
  int n = group_depth;
  pthread_mutex_unlock(&lock);
  return n;
}

/* Collectives that some ranks of a clique issued and the others never did (a real NCCL's would
** wait for the missing ranks forever), over the cliques of the communicators still live. */
int ncclStandinPendingOps(void);
int ncclStandinPendingOps(void) {
  pthread_mutex_lock(&lock);
  int n = 0;
  for (size_t i = 0; i < sizeof live / sizeof live[0]; i++) {
    if (!live[i]) continue;
    int first = 1; /* each clique once, at its first live communicator */
    for (size_t j = 0; j < i && first; j++) first = !live[j] || live[j]->c != live[i]->c;
    for (int k = 0; first && k < MAX_PENDING; k++) n += live[i]->c->pending[k].used;
  }
  pthread_mutex_unlock(&lock);
  return n;
}

int ncclGetVersion(int *version) {
  const char *v = getenv("CJ_TEST_NCCL_VERSION");
  *version = v && *v ? atoi(v) : 22703;
  return SUCCESS;
}

const char *ncclGetErrorString(int result) {
  switch (result) {
  case SUCCESS:
    return "no error";
  case INVALID_ARGUMENT:
    return "invalid argument (stand-in NCCL)";
  case INVALID_USAGE:
    return "invalid usage (stand-in NCCL)";
  default:
    return "internal error (stand-in NCCL)";
  }
}

#ifndef CJ_NCCL_STANDIN_OLD
const char *ncclGetLastError(void *comm) {
  (void)comm;
  return last_error;
}
#endif

int ncclGetUniqueId(unique_id *id) {
  static unsigned long made;
  int rc = injected("ncclGetUniqueId", 0);
  if (rc) return rc;
  pthread_mutex_lock(&lock);
  unsigned long n = ++made;
  pthread_mutex_unlock(&lock);
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  memset(id, 0, sizeof *id);
  snprintf(id->internal, sizeof id->internal, "stand-in %lu %ld.%09ld", n, (long)t.tv_sec,
           t.tv_nsec);
  return SUCCESS;
}

static comm_t *new_comm(clique *c, int rank) {
  comm_t *m = calloc(1, sizeof *m);
  if (m) m->c = c, m->rank = rank, c->live++, live_comms++;
  for (size_t i = 0; m && i < sizeof live / sizeof live[0]; i++)
    if (!live[i]) {
      live[i] = m;
      break;
    }
  return m;
}

/* The ranks of one id meet here: each waits (at most 30 s) for the rest. */
int ncclCommInitRank(void **comm, int nranks, unique_id id, int rank) {
  int rc = injected("ncclCommInitRank", rank);
  if (rc) return rc;
  if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) return INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  clique *c = cliques;
  while (c && memcmp(&c->id, &id, sizeof id) != 0) c = c->next;
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c) {
      pthread_mutex_unlock(&lock);
      return SYSTEM_ERROR;
    }
    c->id = id, c->nranks = nranks, c->next = cliques, cliques = c;
  }
  if (c->nranks != nranks || c->joined >= nranks) {
    pthread_mutex_unlock(&lock);
    return usage("ncclCommInitRank: the ranks of this id disagree on their number");
  }
  c->joined++;
  pthread_cond_broadcast(&joined);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 30;
  while (c->joined < c->nranks)
    if (pthread_cond_timedwait(&joined, &lock, &until) != 0) break;
  comm_t *m = c->joined == c->nranks ? new_comm(c, rank) : NULL;
  pthread_mutex_unlock(&lock);
  if (!m) return usage("ncclCommInitRank: not every rank came within 30 s");
  *comm = m;
  return SUCCESS;
}

int ncclCommInitAll(void **comms, int ndev, const int *devlist) {
  int rc = injected("ncclCommInitAll", 0);
  if (rc) return rc;
  if (ndev < 1 || ndev > MAX_RANKS) return INVALID_ARGUMENT;
  (void)devlist; /* the rank's device is the current one when cujit issues its calls */
  clique *c = calloc(1, sizeof *c);
  if (!c) return SYSTEM_ERROR;
  c->nranks = c->joined = ndev;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < ndev; i++) comms[i] = new_comm(c, i);
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}

static int drop(void *comm, const char *call) {
  comm_t *m = comm;
  int rc = injected(call, m ? m->rank : 0);
  if (rc) return rc;
  if (!m) return INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  clique *c = m->c;
  live_comms--;
  for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
    if (live[i] == m) live[i] = NULL;
  if (--c->live == 0 && c->joined == c->nranks) {
    for (clique **p = &cliques; *p; p = &(*p)->next)
      if (*p == c) {
        *p = c->next;
        break;
      }
    free(c);
  }
  pthread_mutex_unlock(&lock);
  free(m);
  return SUCCESS;
}

int ncclCommDestroy(void *comm) {
  return drop(comm, "ncclCommDestroy");
}

int ncclCommAbort(void *comm) {
  return drop(comm, "ncclCommAbort");
}

int ncclGroupStart(void) {
  int rc = injected("ncclGroupStart", 0);
  if (rc) return rc;
  pthread_mutex_lock(&lock);
  group_depth++;
  pthread_mutex_unlock(&lock);
  return SUCCESS;
}

int ncclGroupEnd(void) {
  pthread_mutex_lock(&lock);
  int depth = group_depth > 0 ? --group_depth : -1;
  pthread_mutex_unlock(&lock);
  if (depth < 0) return usage("ncclGroupEnd without ncclGroupStart");
  return injected("ncclGroupEnd", 0);
}

/* --- the collectives' arithmetic ---------------------------------------------------------------
 */

static size_t dtype_size(int dtype) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
  return dtype >= 0 && dtype <= BF16 ? sizes[dtype] : 0;
}

static float half_to_float(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0    ? (float)m / 16777216.0f
            : e == 31 ? (m ? NAN : INFINITY)
                      : (float)(1024 + m) / 1024.0f;
  for (; e > 15 && e < 31; e--) v *= 2;
  for (; e < 15 && e > 0; e++) v /= 2;
  return (h & 0x8000) ? -v : v;
}

static uint16_t float_to_half(float f) { /* round to nearest even, through the float's bits */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int e = (int)((x >> 23) & 255) - 127 + 15;
  uint32_t m = x & 0x7fffff;
  if (((x >> 23) & 255) == 255) return sign | 0x7c00 | (m ? 0x200 : 0);
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) { /* subnormal or zero */
    if (e < -10) return sign;
    m |= 0x800000;
    int shift = 14 - e;
    uint32_t half = m >> shift, rest = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return sign | (uint16_t)half;
  }
  uint32_t half = ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
  return sign | (uint16_t)half;
}

static float bf16_to_float(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Element i of `p` (of `dtype`) as a double or, for the 64-bit integers, exactly as such. */
typedef struct value {
  double d;
  int64_t i;
  uint64_t u;
} value;

static value load(const void *p, int dtype, size_t i) {
  value v = {0, 0, 0};
  switch (dtype) {
  case I8:
    v.i = ((const int8_t *)p)[i];
    break;
  case U8:
    v.u = ((const uint8_t *)p)[i];
    break;
  case I32:
    v.i = ((const int32_t *)p)[i];
    break;
  case U32:
    v.u = ((const uint32_t *)p)[i];
    break;
  case I64:
    v.i = ((const int64_t *)p)[i];
    break;
  case U64:
    v.u = ((const uint64_t *)p)[i];
    break;
  case F16:
    v.d = half_to_float(((const uint16_t *)p)[i]);
    break;
  case BF16:
    v.d = bf16_to_float(((const uint16_t *)p)[i]);
    break;
  case F32:
    v.d = ((const float *)p)[i];
    break;
  default:
    v.d = ((const double *)p)[i];
    break;
  }
  return v;
}

static void store(void *p, int dtype, size_t i, value v) {
  switch (dtype) {
  case I8:
    ((int8_t *)p)[i] = (int8_t)v.i;
    break;
  case U8:
    ((uint8_t *)p)[i] = (uint8_t)v.u;
    break;
  case I32:
    ((int32_t *)p)[i] = (int32_t)v.i;
    break;
  case U32:
    ((uint32_t *)p)[i] = (uint32_t)v.u;
    break;
  case I64:
    ((int64_t *)p)[i] = v.i;
    break;
  case U64:
    ((uint64_t *)p)[i] = v.u;
    break;
  case F16:
    ((uint16_t *)p)[i] = float_to_half((float)v.d);
    break;
  case BF16:
    ((uint16_t *)p)[i] = float_to_bf16((float)v.d);
    break;
  case F32:
    ((float *)p)[i] = (float)v.d;
    break;
  default:
    ((double *)p)[i] = v.d;
    break;
  }
}

static int is_signed(int dtype) {
  return dtype == I8 || dtype == I32 || dtype == I64;
}

static int is_unsigned(int dtype) {
  return dtype == U8 || dtype == U32 || dtype == U64;
}

/* a op b; integers wrap in their width (store narrows them), as NCCL's do. */
static value combine(value a, value b, int dtype, int op) {
  value r = a;
  if (is_signed(dtype)) {
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
    r.i = op == PROD  ? (int64_t)(x * y)
          : op == MAX ? (a.i > b.i ? a.i : b.i)
          : op == MIN ? (a.i < b.i ? a.i : b.i)
                      : (int64_t)(x + y);
  } else if (is_unsigned(dtype)) {
    r.u = op == PROD  ? a.u * b.u
          : op == MAX ? (a.u > b.u ? a.u : b.u)
          : op == MIN ? (a.u < b.u ? a.u : b.u)
                      : a.u + b.u;
  } else {
    r.d = op == PROD  ? a.d * b.d
          : op == MAX ? (a.d > b.d ? a.d : b.d)
          : op == MIN ? (a.d < b.d ? a.d : b.d)
                      : a.d + b.d;
  }
  return r;
}

/* The reduction over every rank of element `at` of their send buffers (avg: the sum divided). */
static value reduce_at(const op_t *o, int nranks, size_t at) {
  value r = load(o->send[0], o->dtype, at);
  for (int k = 1; k < nranks; k++) r = combine(r, load(o->send[k], o->dtype, at), o->dtype, o->op);
  if (o->op == AVG) {
    if (is_signed(o->dtype))
      r.i /= nranks;
    else if (is_unsigned(o->dtype))
      r.u /= (uint64_t)nranks;
    else
      r.d /= nranks;
  }
  return r;
}

/* Runs `o` once every rank gave its buffers; the results go through a copy, so that a receive
** buffer that is also a send buffer (in place) is read whole before it is written. */
static int run(const op_t *o, int nranks) {
  size_t es = dtype_size(o->dtype), n = o->count;
  size_t out_elems = o->kind == ALL_GATHER ? n * (size_t)nranks : n;
  unsigned char *tmp = malloc(out_elems * es * (size_t)nranks + 1);
  if (!tmp) return SYSTEM_ERROR;
  for (int r = 0; r < nranks; r++) {
    unsigned char *out = tmp + (size_t)r * out_elems * es;
    switch (o->kind) {
    case ALL_REDUCE:
    case REDUCE:
      for (size_t i = 0; i < n; i++) store(out, o->dtype, i, reduce_at(o, nranks, i));
      break;
    case BROADCAST:
      memcpy(out, o->send[o->root], n * es);
      break;
    case ALL_GATHER:
      for (int k = 0; k < nranks; k++) memcpy(out + (size_t)k * n * es, o->send[k], n * es);
      break;
    default: /* REDUCE_SCATTER: rank r's part, elements r*n .. r*n+n-1 of every send buffer */
      for (size_t i = 0; i < n; i++)
        store(out, o->dtype, i, reduce_at(o, nranks, (size_t)r * n + i));
    }
  }
  for (int r = 0; r < nranks; r++)
    if (o->kind != REDUCE || r == o->root)
      memcpy(o->recv[r], tmp + (size_t)r * out_elems * es, out_elems * es);
  free(tmp);
  return SUCCESS;
}

static int collective(const char *call, int kind, const void *send, void *recv, size_t count,
                      int dtype, int op, int root, void *comm) {
  comm_t *m = comm;
  int rc = injected(call, m ? m->rank : 0);
  if (rc) return rc;
  if (!m || !send || !recv || dtype_size(dtype) == 0 || op < SUM || op > AVG)
    return INVALID_ARGUMENT;
  clique *c = m->c;
  if ((kind == BROADCAST || kind == REDUCE) && (root < 0 || root >= c->nranks))
    return INVALID_ARGUMENT;
  pthread_mutex_lock(&lock);
  unsigned long seq = c->issued[m->rank]++;
  op_t *o = NULL, *free_slot = NULL;
  for (int i = 0; i < MAX_PENDING && !o; i++) {
    if (c->pending[i].used && c->pending[i].seq == seq) o = &c->pending[i];
    if (!c->pending[i].used && !free_slot) free_slot = &c->pending[i];
  }
  if (!o) {
    if (!free_slot) {
      pthread_mutex_unlock(&lock);
      return usage("more collectives waiting for their other ranks than the stand-in holds");
    }
    o = free_slot;
    memset(o, 0, sizeof *o);
    *o = (op_t){.used = 1,
                .kind = kind,
                .dtype = dtype,
                .op = op,
                .root = root,
                .seq = seq,
                .count = count};
  } else if (o->kind != kind || o->dtype != dtype || o->count != count ||
             ((kind == ALL_REDUCE || kind == REDUCE || kind == REDUCE_SCATTER) && o->op != op) ||
             ((kind == BROADCAST || kind == REDUCE) && o->root != root)) {
    pthread_mutex_unlock(&lock);
    return usage("the ranks issued different collectives (kind, count, dtype, op or root)");
  }
  o->send[m->rank] = send, o->recv[m->rank] = recv;
  if (++o->arrived == c->nranks) {
    rc = run(o, c->nranks);
    o->used = 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, void *comm,
                  void *stream) {
  (void)stream;
  return collective("ncclAllReduce", ALL_REDUCE, send, recv, count, dtype, op, 0, comm);
}

int ncclBroadcast(const void *send, void *recv, size_t count, int dtype, int root, void *comm,
                  void *stream) {
  (void)stream;
  return collective("ncclBroadcast", BROADCAST, send, recv, count, dtype, SUM, root, comm);
}

int ncclReduce(const void *send, void *recv, size_t count, int dtype, int op, int root, void *comm,
               void *stream) {
  (void)stream;
  return collective("ncclReduce", REDUCE, send, recv, count, dtype, op, root, comm);
}

int ncclAllGather(const void *send, void *recv, size_t count, int dtype, void *comm, void *stream) {
  (void)stream;
  return collective("ncclAllGather", ALL_GATHER, send, recv, count, dtype, SUM, 0, comm);
}

#ifndef CJ_NCCL_STANDIN_OLD
int ncclReduceScatter(const void *send, void *recv, size_t count, int dtype, int op, void *comm,
                      void *stream) {
  (void)stream;
  return collective("ncclReduceScatter", REDUCE_SCATTER, send, recv, count, dtype, op, 0, comm);
}
#endif
