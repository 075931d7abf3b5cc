/*
** stub_graph.c -- the stand-in driver's graphs (see stub_driver.c): a stream capture records each
** kernel launch as a node (its function, grid, block and the first 8 bytes of each of its first
** STUB_PARAMS parameters), an instantiated graph keeps its own copy of those node parameters
** addressed by the captured graph's node handles, as the real driver's is, and
** cuGraphExecKernelNodeSetParams refuses a node of another graph (CUDA_ERROR_INVALID_VALUE), as
** the real driver does. A copy or fill on the capturing stream is a node of its type too
** (cuGraphNodeGetType tells it), but is done at once, not at replay: no kernel of a replay runs
** here either, and a test reads its bytes after the capture. cujit_stub_graph_replayed(node,
** ...) (dlsym it) tells what the last cuGraphLaunch would have run at a node: tests of the CUDA
** backend's graph bookkeeping (tests/c/test_graph_stub.c). CUJIT_STUB_UPDATE_RESULT=N makes
** cuGraphExecUpdate fail with that CUgraphExecUpdateResult. Kernels still do not run. One capture
** at a time.
*/
#include "stub_graph.h"
#include "stub_attrs.h" /* cj_stub_env_int */

#include <stdlib.h>
#include <string.h>

#define STUB_NODES 64
#define STUB_PARAMS 4

typedef struct stub_node {
  struct stub_graph *owner;
  CUgraphNodeType type; /* a kernel, or a copy or fill captured (done at once: see below) */
  CUfunction func;
  unsigned grid[3], block[3];
  unsigned long long param[STUB_PARAMS];
} stub_node;

typedef struct stub_graph {
  stub_node *nodes[STUB_NODES]; /* the nodes' handles: each is its own allocation */
  size_t count;
} stub_graph;

/* An instantiated graph: its own parameters, node i of `graph`'s at i. */
typedef struct stub_exec {
  const stub_graph *graph;
  stub_node params[STUB_NODES];
} stub_exec;

static CUstream capturing;  /* the stream capturing now, or NULL */
static stub_graph *capture; /* what it recorded */
static stub_node replayed[STUB_NODES];
static size_t replayed_count;

/* The first 8 bytes of each of the first STUB_PARAMS parameters, up to the NULL that ends cujit's
** list (cj_launch_pack): the stand-in reads no kernel image, so it cannot know the count, and
** entries past it are not the caller's. Eight bytes of a smaller parameter stay inside cujit's
** one buffer of every parameter. */
static void read_params(stub_node *n, void **params) {
  for (int i = 0; params && i < STUB_PARAMS && params[i]; i++)
    memcpy(&n->param[i], params[i], sizeof n->param[i]);
}

CUresult cj_stub_capture_begin(CUstream s, CUstreamCaptureMode mode) {
  (void)mode;
  if (capturing) return CUDA_ERROR_ILLEGAL_STATE;
  capture = calloc(1, sizeof *capture);
  if (!capture) return CUDA_ERROR_OUT_OF_MEMORY;
  capturing = s;
  return CUDA_SUCCESS;
}

/* A new node of `type` at the end of the capture, or NULL when the capture is full or out of
** memory (the launch or copy that made it is then refused as out of memory). */
static stub_node *add_node(CUgraphNodeType type) {
  stub_node *n = capture->count < STUB_NODES ? calloc(1, sizeof *n) : NULL;
  if (!n) return NULL;
  *n = (stub_node){.owner = capture, .type = type};
  capture->nodes[capture->count++] = n;
  return n;
}

CUresult cj_stub_launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                               void **extra) {
  (void)shared, (void)extra;
  if (!capturing || s != capturing) return cj_stub_launch();
  stub_node *n = add_node(CU_GRAPH_NODE_TYPE_KERNEL);
  if (!n) return CUDA_ERROR_OUT_OF_MEMORY;
  n->func = f;
  n->grid[0] = gx, n->grid[1] = gy, n->grid[2] = gz;
  n->block[0] = bx, n->block[1] = by, n->block[2] = bz;
  read_params(n, params);
  return CUDA_SUCCESS;
}

CUresult cj_stub_capture_other(CUstream s, CUgraphNodeType type) {
  if (!capturing || s != capturing) return CUDA_SUCCESS;
  return add_node(type) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cj_stub_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                              CUgraph *graph, const CUgraphNode **deps, size_t *ndeps) {
  int active = capturing && s == capturing;
  if (status) *status = active ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (id) *id = 1;
  if (graph) *graph = active ? (CUgraph)capture : NULL;
  if (ndeps) *ndeps = active && capture->count ? 1 : 0;
  if (deps)
    *deps =
        active && capture->count ? (const CUgraphNode *)&capture->nodes[capture->count - 1] : NULL;
  return CUDA_SUCCESS;
}

CUresult cj_stub_capture_end(CUstream s, CUgraph *graph) {
  if (!capturing || s != capturing) return CUDA_ERROR_ILLEGAL_STATE;
  *graph = (CUgraph)capture;
  capturing = NULL, capture = NULL;
  return CUDA_SUCCESS;
}

CUresult cj_stub_graph_destroy(CUgraph graph) {
  stub_graph *g = (stub_graph *)graph;
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < g->count; i++) free(g->nodes[i]);
  free(g);
  return CUDA_SUCCESS;
}

CUresult cj_stub_graph_nodes(CUgraph graph, CUgraphNode *nodes, size_t *n) {
  const stub_graph *g = (const stub_graph *)graph;
  if (nodes)
    for (size_t i = 0; i < *n && i < g->count; i++) nodes[i] = (CUgraphNode)g->nodes[i];
  *n = g->count;
  return CUDA_SUCCESS;
}

CUresult cj_stub_node_type(CUgraphNode node, CUgraphNodeType *type) {
  *type = ((const stub_node *)node)->type;
  return CUDA_SUCCESS;
}

CUresult cj_stub_instantiate(CUgraphExec *out, CUgraph graph, unsigned long long flags) {
  (void)flags;
  const stub_graph *g = (const stub_graph *)graph;
  stub_exec *e = calloc(1, sizeof *e);
  if (!e) return CUDA_ERROR_OUT_OF_MEMORY;
  e->graph = g;
  for (size_t i = 0; i < g->count; i++) e->params[i] = *g->nodes[i];
  *out = (CUgraphExec)e;
  return CUDA_SUCCESS;
}

CUresult cj_stub_exec_destroy(CUgraphExec exec) {
  free(exec);
  return CUDA_SUCCESS;
}

/* The node's place in the graph the exec was instantiated from; -1 for a node of another graph. */
static int place(const stub_exec *e, CUgraphNode node) {
  for (size_t i = 0; i < e->graph->count; i++)
    if ((CUgraphNode)e->graph->nodes[i] == node) return (int)i;
  return -1;
}

CUresult cj_stub_exec_set_kernel(CUgraphExec exec, CUgraphNode node,
                                 const CUDA_KERNEL_NODE_PARAMS_v2 *p) {
  stub_exec *e = (stub_exec *)exec;
  int i = place(e, node);
  if (i < 0) return CUDA_ERROR_INVALID_VALUE; /* the real driver's answer too */
  stub_node *n = &e->params[i];
  n->func = p->func;
  n->grid[0] = p->gridDimX, n->grid[1] = p->gridDimY, n->grid[2] = p->gridDimZ;
  n->block[0] = p->blockDimX, n->block[1] = p->blockDimY, n->block[2] = p->blockDimZ;
  read_params(n, p->kernelParams);
  return CUDA_SUCCESS;
}

CUresult cj_stub_exec_update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info) {
  stub_exec *e = (stub_exec *)exec;
  const stub_graph *g = (const stub_graph *)graph;
  /* CUJIT_STUB_UPDATE_RESULT=N: the update fails with that CUgraphExecUpdateResult */
  int forced = cj_stub_env_int("CUJIT_STUB_UPDATE_RESULT", 0);
  if (forced) {
    if (info) info->result = (CUgraphExecUpdateResult)forced;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  if (g->count != e->graph->count) {
    if (info) info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  }
  for (size_t i = 0; i < g->count; i++) { /* the exec keeps addressing its own nodes */
    e->params[i] = *g->nodes[i];
    e->params[i].owner = e->graph->nodes[i]->owner;
  }
  if (info) info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult cj_stub_graph_launch(CUgraphExec exec, CUstream s) {
  (void)s;
  const stub_exec *e = (const stub_exec *)exec;
  replayed_count = e->graph->count;
  memcpy(replayed, e->params, replayed_count * sizeof *replayed);
  return cj_stub_launch();
}

int cujit_stub_graph_replayed(size_t i, void **func, unsigned grid[3], unsigned block[3],
                              unsigned long long param[4]) {
  if (i >= replayed_count) return -1;
  *func = replayed[i].func;
  memcpy(grid, replayed[i].grid, sizeof replayed[i].grid);
  memcpy(block, replayed[i].block, sizeof replayed[i].block);
  memcpy(param, replayed[i].param, sizeof replayed[i].param);
  return 0;
}
