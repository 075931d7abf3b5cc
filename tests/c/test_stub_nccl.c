/*
** test_stub_nccl.c -- cujit's NCCL communicators and collectives (engine/core/collective/nccl.c)
** over three pretend GPUs: the stand-in driver (CUJIT_STUB_DEVICES=3; tests/CMakeLists.txt puts
** it first on LD_LIBRARY_PATH) and the stand-in NCCL (tests/c/nccl_standin.c, CUJIT_NCCL set here
** before NCCL is first opened), which runs each collective over the pretend GPUs' memory, host
** memory, once every rank issued it. What a one-GPU machine cannot reach: ranks of another
** process (cujit_nccl_comm_init_rank from threads, one rank each, a root that is not a local
** rank), every dtype NCCL has through cujit, the checks of buffers and streams against each
** rank's device, and what cujit says when NCCL fails: the failing local rank and ncclGetLastError's
** words, each failing call by its name, argument errors told from the rest; communicators given
** back at their free and at the engine's close, and not touched on a device that was reset; a
** rank's device faulted stopping a collective before any rank's call reaches NCCL (a collective
** some ranks issued and the others never will is one a real NCCL waits on forever).
*/
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cujit.h"
#include "expect.h"
#include "scratch.h"
#include "stub.h"

enum { RANKS = 3 };

static cujit_engine *engine;
static cujit_device *gpu[RANKS];

static void open_engine(void) {
  setenv("CUJIT_STUB_DEVICES", "3", 1);
  setenv("CUJIT_NCCL", CJ_TEST_NCCL_STANDIN, 1);
  gpu[0] = cj_stub_open(&engine);
  for (int i = 1; i < RANKS; i++) EXPECT_OK(cujit_device_get(engine, i, &gpu[i]));
}

static void close_engine(void) {
  cujit_close(engine);
  engine = NULL;
  unsetenv("CJ_TEST_NCCL_FAIL");
  unsetenv("CJ_TEST_NCCL_FAIL_RANK");
  unsetenv("CJ_TEST_NCCL_FAIL_RESULT");
  cj_scratch_remove();
}

TestSuite(stub_nccl, .init = open_engine, .fini = close_engine);

/* A counter the stand-in NCCL (tests/c/nccl_standin.c, loaded by cujit) exports. */
static int (*standin_counter(const char *name))(void) {
  void *lib = dlopen(CJ_TEST_NCCL_STANDIN, RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the stand-in NCCL is not loaded");
  int (*counter)(void) = (int (*)(void))dlsym(lib, name);
  dlclose(lib);
  cr_assert_not_null(counter, "the stand-in NCCL exports no %s", name);
  return counter;
}

/* The stand-in NCCL's communicators not yet destroyed. */
static int live_comms(void) {
  return standin_counter("ncclStandinLiveComms")();
}

static cujit_nccl_comm *comm_all(void) {
  int ordinals[RANKS] = {0, 1, 2};
  cujit_nccl_comm *comm = NULL;
  EXPECT_OK(cujit_nccl_comm_init_all(engine, ordinals, RANKS, &comm));
  return comm;
}

/* One buffer of `n` `dtype` elements a rank, element i of rank r holding value(r, i). */
static void per_rank(cujit_buffer **b, size_t n, cujit_dtype dtype, double (*value)(int, size_t)) {
  size_t es = cujit_dtype_size(dtype);
  unsigned char *host = malloc(n * es);
  for (int r = 0; r < RANKS; r++) {
    for (size_t i = 0; value && i < n; i++) {
      double v = value(r, i);
      switch (dtype) {
      case CUJIT_I8:
        ((int8_t *)host)[i] = (int8_t)v;
        break;
      case CUJIT_U8:
        ((uint8_t *)host)[i] = (uint8_t)v;
        break;
      case CUJIT_I32:
        ((int32_t *)host)[i] = (int32_t)v;
        break;
      case CUJIT_U32:
        ((uint32_t *)host)[i] = (uint32_t)v;
        break;
      case CUJIT_I64:
        ((int64_t *)host)[i] = (int64_t)v;
        break;
      case CUJIT_U64:
        ((uint64_t *)host)[i] = (uint64_t)v;
        break;
      case CUJIT_F32:
        ((float *)host)[i] = (float)v;
        break;
      case CUJIT_F64:
        ((double *)host)[i] = v;
        break;
      default:
        cr_assert_fail("no host form for %s here", cujit_dtype_name(dtype));
      }
    }
    if (!value) memset(host, 0, n * es);
    EXPECT_OK(cujit_buffer_alloc_on(gpu[r], n * es, dtype, &b[r]));
    EXPECT_OK(cujit_memcpy_htod(b[r], 0, host, n * es, NULL));
  }
  free(host);
}

static void free_all(cujit_buffer **b) {
  for (int r = 0; r < RANKS; r++) cujit_buffer_free(b[r]), b[r] = NULL;
}

static double rank_plus_index(int r, size_t i) {
  return (double)(r * 10 + (int)(i % 7));
}

/* Element i of `b` as a double. */
static double read_at(cujit_buffer *b, size_t i) {
  size_t es = cujit_dtype_size(cujit_buffer_dtype(b));
  unsigned char raw[8] = {0};
  EXPECT_OK(cujit_memcpy_dtoh(raw, b, i * es, es, NULL));
  switch (cujit_buffer_dtype(b)) {
  case CUJIT_I8:
    return *(int8_t *)raw;
  case CUJIT_U8:
    return *(uint8_t *)raw;
  case CUJIT_I32:
    return *(int32_t *)raw;
  case CUJIT_U32:
    return *(uint32_t *)raw;
  case CUJIT_I64:
    return (double)*(int64_t *)raw;
  case CUJIT_U64:
    return (double)*(uint64_t *)raw;
  case CUJIT_F32:
    return *(float *)raw;
  default:
    return *(double *)raw;
  }
}

/* Each dtype NCCL has reaches NCCL as itself: a sum over three ranks, read back in that dtype
** (an 8-bit sum wraps as NCCL's does: 3 x 100 in u8 is 44). */
Test(stub_nccl, every_dtype_reaches_nccl_as_itself) {
  static const cujit_dtype dtypes[] = {CUJIT_I8,  CUJIT_U8,  CUJIT_I32, CUJIT_U32,
                                       CUJIT_I64, CUJIT_U64, CUJIT_F32, CUJIT_F64};
  cujit_nccl_comm *comm = comm_all();
  for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
    cujit_buffer *b[RANKS];
    per_rank(b, 9, dtypes[d], rank_plus_index);
    EXPECT_OK(cujit_nccl_all_reduce(comm, b, NULL, 9, CUJIT_NCCL_SUM, NULL));
    for (int r = 0; r < RANKS; r++)
      for (size_t i = 0; i < 9; i++)
        cr_expect_eq(read_at(b[r], i), 30.0 + 3.0 * (double)(i % 7), "%s rank %d [%zu]",
                     cujit_dtype_name(dtypes[d]), r, i);
    free_all(b);
  }
  cujit_buffer *u8[RANKS];
  per_rank(u8, 4, CUJIT_U8, NULL);
  for (int r = 0; r < RANKS; r++) EXPECT_OK(cujit_memset(u8[r], 0, 100, 4, NULL));
  EXPECT_OK(cujit_nccl_all_reduce(comm, u8, NULL, 4, CUJIT_NCCL_SUM, NULL));
  cr_expect_eq(read_at(u8[2], 3), 44.0, "300 in u8 wraps to 44");
  free_all(u8);
  cujit_nccl_comm_free(comm);
}

/* Each operation by its definition, into other buffers, the inputs kept. */
Test(stub_nccl, each_operation_by_its_definition) {
  static const struct {
    cujit_nccl_op op;
    double want; /* over ranks of 2, 5 and 11 */
  } ops[] = {{CUJIT_NCCL_SUM, 18},
             {CUJIT_NCCL_PROD, 110},
             {CUJIT_NCCL_MIN, 2},
             {CUJIT_NCCL_MAX, 11},
             {CUJIT_NCCL_AVG, 6}};
  cujit_nccl_comm *comm = comm_all();
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    cujit_buffer *send[RANKS], *recv[RANKS];
    per_rank(send, 5, CUJIT_F64, NULL);
    per_rank(recv, 5, CUJIT_F64, NULL);
    static const double values[RANKS] = {2, 5, 11};
    for (int r = 0; r < RANKS; r++)
      for (size_t i = 0; i < 5; i++)
        EXPECT_OK(cujit_memcpy_htod(send[r], i * 8, &values[r], 8, NULL));
    EXPECT_OK(cujit_nccl_all_reduce(comm, send, recv, 5, ops[k].op, NULL));
    for (int r = 0; r < RANKS; r++) {
      cr_expect_eq(read_at(recv[r], 4), ops[k].want, "op %d rank %d", (int)ops[k].op, r);
      cr_expect_eq(read_at(send[r], 4), values[r], "op %d: rank %d's input kept", (int)ops[k].op,
                   r);
    }
    free_all(send), free_all(recv);
  }
  cujit_nccl_comm_free(comm);
}

/* broadcast and reduce with each root; all_gather in rank order; reduce_scatter's parts. */
Test(stub_nccl, roots_and_the_parts_of_each_rank) {
  cujit_nccl_comm *comm = comm_all();
  for (int root = 0; root < RANKS; root++) {
    cujit_buffer *b[RANKS], *out[RANKS];
    per_rank(b, 6, CUJIT_I32, rank_plus_index);
    per_rank(out, 6, CUJIT_I32, NULL);
    EXPECT_OK(cujit_nccl_reduce(comm, b, out, 6, CUJIT_NCCL_MAX, root, NULL));
    for (int r = 0; r < RANKS; r++)
      cr_expect_eq(read_at(out[r], 5), r == root ? 25.0 : 0.0, "reduce to %d: rank %d", root, r);
    EXPECT_OK(cujit_nccl_broadcast(comm, b, NULL, 6, root, NULL));
    for (int r = 0; r < RANKS; r++)
      cr_expect_eq(read_at(b[r], 5), rank_plus_index(root, 5), "broadcast from %d: rank %d", root,
                   r);
    free_all(b), free_all(out);
  }
  cujit_buffer *send[RANKS], *gathered[RANKS];
  per_rank(send, 4, CUJIT_I64, rank_plus_index);
  per_rank(gathered, 4 * RANKS, CUJIT_I64, NULL);
  EXPECT_OK(cujit_nccl_all_gather(comm, send, gathered, 4, NULL));
  for (int r = 0; r < RANKS; r++)
    for (int k = 0; k < RANKS; k++)
      cr_expect_eq(read_at(gathered[r], (size_t)k * 4 + 3), rank_plus_index(k, 3),
                   "rank %d's copy of rank %d's part", r, k);
  free_all(send), free_all(gathered);
  cujit_buffer *whole[RANKS], *part[RANKS];
  per_rank(whole, 2 * RANKS, CUJIT_F32, rank_plus_index);
  per_rank(part, 2, CUJIT_F32, NULL);
  EXPECT_OK(cujit_nccl_reduce_scatter(comm, whole, part, 2, CUJIT_NCCL_SUM, NULL));
  for (int r = 0; r < RANKS; r++) /* rank r: elements 2r and 2r+1 summed over the ranks */
    cr_expect_eq(read_at(part[r], 1), 30.0 + 3.0 * (double)((2 * r + 1) % 7), "part of rank %d", r);
  free_all(whole), free_all(part);
  cujit_nccl_comm_free(comm);
}

/* Ranks of other processes: one thread a rank, each with its own communicator of one local rank
** made from one unique id; a root that is no local rank of a communicator is still one of its
** ranks. */
typedef struct rank_work {
  int rank;
  const char *id;
  pthread_barrier_t *meet;
  cujit_status made, reduced, bcast;
  double sum, from_root;
  int ranks, first;
} rank_work;

static void *one_rank(void *arg) {
  rank_work *w = arg;
  cujit_nccl_comm *comm = NULL;
  w->made = cujit_nccl_comm_init_rank(gpu[w->rank], RANKS, w->rank, w->id, &comm);
  if (w->made != CUJIT_OK) return NULL;
  w->ranks = cujit_nccl_comm_ranks(comm);
  w->first = cujit_nccl_comm_rank(comm, 0);
  cujit_buffer *b = NULL;
  cujit_buffer_alloc_on(gpu[w->rank], 8, CUJIT_F64, &b);
  double v = 1.0 + w->rank;
  cujit_memcpy_htod(b, 0, &v, 8, NULL);
  w->reduced = cujit_nccl_all_reduce(comm, &b, NULL, 1, CUJIT_NCCL_SUM, NULL);
  pthread_barrier_wait(w->meet); /* the last rank's call ran it */
  cujit_memcpy_dtoh(&w->sum, b, 0, 8, NULL);
  pthread_barrier_wait(w->meet);
  v = 100.0 + w->rank;
  cujit_memcpy_htod(b, 0, &v, 8, NULL);
  w->bcast = cujit_nccl_broadcast(comm, &b, NULL, 1, 2, NULL);
  pthread_barrier_wait(w->meet);
  cujit_memcpy_dtoh(&w->from_root, b, 0, 8, NULL);
  cujit_buffer_free(b);
  cujit_nccl_comm_free(comm);
  return NULL;
}

Test(stub_nccl, ranks_of_other_processes_meet_through_a_unique_id) {
  char id[CUJIT_NCCL_ID_HEX];
  EXPECT_OK(cujit_nccl_unique_id(engine, id));
  pthread_barrier_t meet;
  pthread_barrier_init(&meet, NULL, RANKS);
  rank_work w[RANKS];
  pthread_t t[RANKS];
  for (int r = 0; r < RANKS; r++) {
    w[r] = (rank_work){.rank = r, .id = id, .meet = &meet};
    cr_assert_eq(pthread_create(&t[r], NULL, one_rank, &w[r]), 0);
  }
  for (int r = 0; r < RANKS; r++) pthread_join(t[r], NULL);
  pthread_barrier_destroy(&meet);
  for (int r = 0; r < RANKS; r++) {
    cr_expect_eq(w[r].made, CUJIT_OK, "rank %d: made", r);
    cr_expect_eq(w[r].ranks, RANKS, "rank %d: ranks", r);
    cr_expect_eq(w[r].first, r, "rank %d: its own rank as local rank 0", r);
    cr_expect_eq(w[r].reduced, CUJIT_OK);
    cr_expect_eq(w[r].sum, 6.0, "rank %d's sum", r);
    cr_expect_eq(w[r].bcast, CUJIT_OK, "rank %d: root 2 is a rank, though not a local one", r);
    cr_expect_eq(w[r].from_root, 102.0, "rank %d got rank 2's value", r);
  }
  cr_expect_eq(live_comms(), 0, "every communicator destroyed at its free");
}

/* The checks before NCCL, for what only several devices can get wrong. */
Test(stub_nccl, buffers_and_streams_are_checked_against_each_ranks_device) {
  cujit_nccl_comm *comm = comm_all();
  cr_expect_eq(cujit_nccl_comm_ranks(comm), RANKS);
  cr_expect_eq(cujit_nccl_comm_local(comm), RANKS);
  for (int r = 0; r < RANKS; r++) {
    cr_expect_eq(cujit_nccl_comm_device(comm, r), gpu[r], "local rank %d's device", r);
    cr_expect_eq(cujit_nccl_comm_rank(comm, r), r);
  }
  cr_expect_null(cujit_nccl_comm_device(comm, RANKS));
  cr_expect_eq(cujit_nccl_comm_rank(comm, RANKS), -1);
  cr_expect_eq(cujit_nccl_comm_rank(comm, -1), -1);
  cujit_buffer *b[RANKS], *small[RANKS], *ints[RANKS];
  per_rank(b, 8, CUJIT_F32, rank_plus_index);
  per_rank(small, 7, CUJIT_F32, NULL);
  per_rank(ints, 8, CUJIT_I32, NULL);
  cujit_buffer *swapped[RANKS] = {b[0], b[2], b[1]};
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, swapped, NULL, 8, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the send buffer of local rank 1 lives on device 2, but that rank runs on device 1");
  cujit_buffer *mixed_recv[RANKS] = {ints[0], b[1], b[2]};
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, mixed_recv, 8, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the receive buffer of local rank 0 holds i32 but rank 0's send buffer f32");
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, small, 8, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the receive buffer of local rank 0 holds 7 elements, fewer than the 8");
  EXPECT_FAIL(cujit_nccl_all_gather(comm, b, b, 3, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "holds 8 elements, fewer than the 9 this collective needs");
  EXPECT_FAIL(cujit_nccl_reduce_scatter(comm, b, small, 3, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the send buffer of local rank 0 holds 8 elements, fewer than the 9");
  EXPECT_FAIL(cujit_nccl_reduce_scatter(comm, b, NULL, 2, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT, "recv is NULL");
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, NULL, 0, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT, "a count of 0 elements");
  EXPECT_FAIL(cujit_nccl_reduce(comm, b, NULL, 8, CUJIT_NCCL_SUM, RANKS, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT, "root 3 is not a rank of this communicator (0..2)");
  EXPECT_FAIL(cujit_nccl_broadcast(comm, b, NULL, 8, -1, NULL), CUJIT_ERROR_INVALID_ARGUMENT,
              "root -1 is not a rank");
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, NULL, 8, (cujit_nccl_op)5, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT, "5 is not a cujit_nccl_op");
  /* every collective that reduces checks its operation, before NCCL sees it */
  EXPECT_FAIL(cujit_nccl_reduce(comm, b, NULL, 8, (cujit_nccl_op)-1, 0, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "cujit_nccl_reduce: -1 is not a cujit_nccl_op; use CUJIT_NCCL_SUM, _PROD, _MIN, "
              "_MAX or _AVG");
  cujit_buffer *quarter[RANKS];
  per_rank(quarter, 2, CUJIT_F32, NULL);
  EXPECT_FAIL(cujit_nccl_reduce_scatter(comm, b, quarter, 2, (cujit_nccl_op)9, NULL),
              CUJIT_ERROR_INVALID_ARGUMENT, "cujit_nccl_reduce_scatter: 9 is not a cujit_nccl_op");
  for (int r = 0; r < RANKS; r++) cujit_buffer_free(quarter[r]);
  cujit_stream *s[RANKS];
  for (int r = 0; r < RANKS; r++) EXPECT_OK(cujit_stream_create_on(gpu[r], &s[r]));
  cujit_stream *wrong[RANKS] = {s[0], s[1], s[0]};
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, NULL, 8, CUJIT_NCCL_SUM, wrong),
              CUJIT_ERROR_INVALID_ARGUMENT,
              "the stream of local rank 2 is on device 0, the rank on device 2");
  EXPECT_OK(cujit_nccl_all_reduce(comm, b, NULL, 8, CUJIT_NCCL_SUM, s));
  cr_expect_eq(read_at(b[1], 2), 36.0, "the sum on streams");
  for (int r = 0; r < RANKS; r++) cujit_stream_free(s[r]);
  free_all(b), free_all(small), free_all(ints);
  cujit_nccl_comm_free(comm);
}

/* The stand-in NCCL's groups still open (ncclGroupStart without its ncclGroupEnd). */
static int open_groups(void) {
  return standin_counter("ncclStandinGroupDepth")();
}

/* Collectives some ranks issued and the others not (a real NCCL would wait for them forever). */
static int pending_ops(void) {
  return standin_counter("ncclStandinPendingOps")();
}

/* `call` of NCCL fails with `result` (for local rank `rank` only when >= 0) under a collective on a
** new communicator of three ranks: the status and message cujit gives, and the group closed. */
static void fail_nccl(const char *call, int rank, int result, cujit_status want, const char *part,
                      cujit_status (*run)(cujit_nccl_comm *, cujit_buffer **)) {
  cujit_nccl_comm *comm = comm_all();
  cujit_buffer *b[RANKS];
  per_rank(b, 4, CUJIT_F32, rank_plus_index);
  char text[16];
  setenv("CJ_TEST_NCCL_FAIL", call, 1);
  snprintf(text, sizeof text, "%d", rank);
  if (rank >= 0)
    setenv("CJ_TEST_NCCL_FAIL_RANK", text, 1);
  else
    unsetenv("CJ_TEST_NCCL_FAIL_RANK");
  snprintf(text, sizeof text, "%d", result);
  setenv("CJ_TEST_NCCL_FAIL_RESULT", text, 1);
  EXPECT_FAIL(run(comm, b), want, part);
  unsetenv("CJ_TEST_NCCL_FAIL");
  cr_expect_eq(open_groups(), 0, "%s failed: the group was left open", call);
  free_all(b);
  cujit_nccl_comm_free(comm); /* out of step now, as a real one after a failure */
}

static cujit_status all_reduce(cujit_nccl_comm *comm, cujit_buffer **b) {
  return cujit_nccl_all_reduce(comm, b, NULL, 4, CUJIT_NCCL_SUM, NULL);
}

static cujit_status broadcast(cujit_nccl_comm *comm, cujit_buffer **b) {
  return cujit_nccl_broadcast(comm, b, NULL, 4, 0, NULL);
}

/* What NCCL's failures become: which call, which local rank, NCCL's own words; an argument error
** told from the rest. */
Test(stub_nccl, a_failing_nccl_call_is_named_with_its_rank_and_nccls_words) {
  fail_nccl("ncclAllReduce", 1, 4 /* ncclInvalidArgument */, CUJIT_ERROR_INVALID_ARGUMENT,
            "cujit_nccl_all_reduce (NCCL, local rank 1) failed: invalid argument (stand-in NCCL): "
            "the stand-in NCCL was told to fail ncclAllReduce (rank 1) (NCCL_DEBUG=WARN",
            all_reduce);
  fail_nccl("ncclAllReduce", 2, 5 /* ncclInvalidUsage */, CUJIT_ERROR_INVALID_ARGUMENT,
            "cujit_nccl_all_reduce (NCCL, local rank 2) failed: invalid usage", all_reduce);
  fail_nccl("ncclAllReduce", 0, 3 /* ncclInternalError: not the caller's argument */,
            CUJIT_ERROR_DRIVER, "(NCCL, local rank 0) failed: internal error", all_reduce);
  fail_nccl("ncclBroadcast", 2, 2 /* ncclSystemError */, CUJIT_ERROR_DRIVER,
            "cujit_nccl_broadcast (NCCL, local rank 2) failed", broadcast);
  fail_nccl("ncclGroupEnd", -1, 3, CUJIT_ERROR_DRIVER,
            "cujit_nccl_broadcast (ncclGroupEnd) failed: internal error (stand-in NCCL): the "
            "stand-in NCCL was told to fail ncclGroupEnd",
            broadcast);
  fail_nccl("ncclGroupStart", -1, 3, CUJIT_ERROR_DRIVER, "ncclGroupStart failed", all_reduce);
  setenv("CJ_TEST_NCCL_FAIL", "ncclGetUniqueId", 1);
  char id[CUJIT_NCCL_ID_HEX];
  memset(id, 'x', sizeof id);
  EXPECT_FAIL(cujit_nccl_unique_id(engine, id), CUJIT_ERROR_DRIVER, "ncclGetUniqueId failed");
  cr_expect_str_eq(id, "", "a failed unique id leaves an empty string, not a stale one");
  setenv("CJ_TEST_NCCL_FAIL", "ncclCommInitAll", 1);
  int ordinals[2] = {2, 0};
  cujit_nccl_comm *other = NULL;
  EXPECT_FAIL(cujit_nccl_comm_init_all(engine, ordinals, 2, &other), CUJIT_ERROR_DRIVER,
              "ncclCommInitAll failed");
  cr_expect_null(other);
  setenv("CJ_TEST_NCCL_FAIL", "ncclCommInitRank", 1);
  unsetenv("CJ_TEST_NCCL_FAIL_RANK");
  unsetenv("CJ_TEST_NCCL_FAIL_RESULT");
  EXPECT_OK(cujit_nccl_unique_id(engine, id));
  EXPECT_FAIL(cujit_nccl_comm_init_rank(gpu[1], 1, 0, id, &other), CUJIT_ERROR_DRIVER,
              "ncclCommInitRank failed: internal error");
  cr_expect_null(other);
  unsetenv("CJ_TEST_NCCL_FAIL");
  cr_expect_eq(live_comms(), 0, "a failed communicator keeps nothing");
  cujit_nccl_comm *comm = comm_all(); /* and NCCL works again */
  cujit_buffer *b[RANKS];
  per_rank(b, 4, CUJIT_F32, rank_plus_index);
  EXPECT_OK(cujit_nccl_all_reduce(comm, b, NULL, 4, CUJIT_NCCL_SUM, NULL));
  cr_expect_eq(read_at(b[0], 1), 33.0);
  free_all(b);
  cujit_nccl_comm_free(comm);
  cr_expect_eq(live_comms(), 0);
}

/* A communicator's ranks are given back at its free or at the engine's close; a rank whose
** device was reset is not touched (its context is gone), and the communicator refuses work. */
Test(stub_nccl, communicators_are_given_back_and_a_reset_rank_is_left_alone) {
  cujit_nccl_comm *comm = comm_all();
  cujit_nccl_comm *kept = comm_all();
  cr_expect_eq(live_comms(), 2 * RANKS);
  cujit_nccl_comm_free(comm);
  cr_expect_eq(live_comms(), RANKS, "the freed one's ranks destroyed");
  cujit_buffer *b[RANKS];
  per_rank(b, 4, CUJIT_F32, rank_plus_index);
  free_all(b);
  EXPECT_OK(cujit_device_reset(gpu[1]));
  per_rank(b, 4, CUJIT_F32, rank_plus_index);
  EXPECT_FAIL(cujit_nccl_all_reduce(kept, b, NULL, 4, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_BUFFER_LOST,
              "the NCCL communicator was made on device 1 before the device was reset");
  free_all(b);
  cujit_close(engine);
  engine = NULL;
  cr_expect_eq(live_comms(), 1, "ranks 0 and 2 destroyed at the close; rank 1's device was reset");
}

/* A rank's device faulted (the stand-in driver fails its stream queries with
** CUDA_ERROR_ILLEGAL_ADDRESS, so the first wait on device 1 faults it): a collective is refused
** before NCCL's group opens, naming the fault, for a group missing that rank's call would wait for
** it forever; no rank's call reaches NCCL. */
static void open_failing_waits(void) {
  setenv("CUJIT_STUB_FAIL", "cuStreamQuery", 1);
  setenv("CUJIT_STUB_FAIL_CODE", "700", 1);
  open_engine();
}

static void close_failing_waits(void) {
  close_engine();
  unsetenv("CUJIT_STUB_FAIL");
  unsetenv("CUJIT_STUB_FAIL_CODE");
}

Test(stub_nccl_fault, a_rank_on_a_faulted_device_stops_the_collective_before_nccl,
     .init = open_failing_waits, .fini = close_failing_waits) {
  cujit_nccl_comm *comm = comm_all();
  cujit_buffer *b[RANKS]; /* not written: an upload would wait, and fault, every device */
  for (int r = 0; r < RANKS; r++)
    EXPECT_OK(cujit_buffer_alloc_on(gpu[r], 4 * sizeof(float), CUJIT_F32, &b[r]));
  cr_assert_eq(cujit_device_synchronize(gpu[1]), CUJIT_ERROR_DEVICE_FAULT, "%s",
               cujit_errmsg(engine));
  cr_assert_eq(cujit_device_status(gpu[0]), CUJIT_OK, "device 0 is not faulted");
  EXPECT_FAIL(cujit_nccl_all_reduce(comm, b, NULL, 4, CUJIT_NCCL_SUM, NULL),
              CUJIT_ERROR_DEVICE_FAULT, "device 1");
  cr_expect_eq(open_groups(), 0, "no group left open");
  cr_expect_eq(pending_ops(), 0, "ranks 0 and 2 issued a collective rank 1 never will");
  EXPECT_FAIL(cujit_nccl_broadcast(comm, b, NULL, 4, 0, NULL), CUJIT_ERROR_DEVICE_FAULT,
              "device 1");
  cr_expect_eq(open_groups(), 0);
  cr_expect_eq(pending_ops(), 0);
  free_all(b);
  cujit_nccl_comm_free(comm);
}
