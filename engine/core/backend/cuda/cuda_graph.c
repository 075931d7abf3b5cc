/*
** cuda_graph.c -- the CUDA backend's stream capture and graphs: beginning and ending a
** capture (cuStreamBeginCapture_v2 / cuStreamEndCapture), the node each captured launch became
** (cuStreamGetCaptureInfo), instantiating and replaying (cuGraphInstantiateWithFlags,
** cuGraphLaunch), replacing a kernel node's arguments (cuGraphExecKernelNodeSetParams_v2),
** whole-graph update (cuGraphExecUpdate_v2), node kinds and Graphviz (cuGraphDebugDotPrint), and
** the messages for calls the driver refuses while a stream captures.
*/
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>

int cj_cuda_is_capture_error(CUresult rc) {
  return (rc >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
          rc <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
}

cujit_status cj_cuda_capture_error(cujit_device *dev, CUresult rc, const char *what) {
  const char *name = NULL;
  cj_driver *drv = cj_cuda_driver(dev);
  if (drv->cuGetErrorName) drv->cuGetErrorName(rc, &name);
  if (rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "%s failed on device %d: the graph capture was invalidated by an earlier call "
                   "that cannot be captured (%s); the capture is over: end it "
                   "(cujit_capture_end) and capture again without that call",
                   what, dev->ordinal, name ? name : "?");
  return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                 "%s cannot run while a stream of device %d captures a graph (%s): a wait for "
                 "the device (synchronize, query, a copy to pageable host memory that must "
                 "complete, a reduction returning its value) cannot be recorded; do it before "
                 "cujit_capture_begin or after cujit_capture_end, copy into pinned memory "
                 "(cujit_host_alloc), or use another stream. The capture is now invalid: end it",
                 what, dev->ordinal, name ? name : "?");
}

cujit_status cj_cuda_capture_begin(cujit_device *dev, void *stream, int mode) {
  static const CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_RELAXED,
                                              CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                              CU_STREAM_CAPTURE_MODE_GLOBAL};
  CUresult rc = cj_cuda_driver(dev)->cuStreamBeginCapture((CUstream)stream, modes[mode]);
  if (rc == CUDA_SUCCESS) cj_cuda_stream_capturing(dev, stream, 1);
  return cj_cuda_check(dev, rc, "cujit_capture_begin (cuStreamBeginCapture)");
}

/* After a launch on a capturing stream that nothing else joined, the stream's one dependency is
** the node that launch became. */
cujit_status cj_cuda_capture_last_node(cujit_device *dev, void *stream, void **node) {
  CUstreamCaptureStatus status;
  cuuint64_t id;
  CUgraph graph;
  const CUgraphNode *deps = NULL;
  size_t ndeps = 0;
  CUresult rc = cj_cuda_driver(dev)->cuStreamGetCaptureInfo((CUstream)stream, &status, &id, &graph,
                                                            &deps, &ndeps);
  if (rc != CUDA_SUCCESS)
    return cj_cuda_check(dev, rc, "reading the capture (cuStreamGetCaptureInfo)");
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || ndeps != 1)
    return cj_fail(dev->engine, CUJIT_ERROR_UNSUPPORTED,
                   "a kernel launched into a graph on device %d has %zu predecessors in the "
                   "capture, not the one cujit expects; capture on one stream, without events "
                   "joining other streams",
                   dev->ordinal, ndeps);
  *node = deps[0];
  return CUJIT_OK;
}

cujit_status cj_cuda_capture_end(cujit_device *dev, void *stream, void **graph) {
  CUgraph g = NULL;
  CUresult rc = cj_cuda_driver(dev)->cuStreamEndCapture((CUstream)stream, &g);
  cj_cuda_stream_capturing(dev, stream, 0);
  *graph = g;
  return cj_cuda_check(dev, rc, "cujit_capture_end (cuStreamEndCapture)");
}

void cj_cuda_graph_destroy(cujit_device *dev, void *graph) {
  cj_cuda_driver(dev)->cuGraphDestroy((CUgraph)graph);
}

static int node_kind(CUgraphNodeType type) {
  switch (type) {
  case CU_GRAPH_NODE_TYPE_KERNEL:
    return CUJIT_GRAPH_NODE_KERNEL;
  case CU_GRAPH_NODE_TYPE_MEMCPY:
    return CUJIT_GRAPH_NODE_COPY;
  case CU_GRAPH_NODE_TYPE_MEMSET:
    return CUJIT_GRAPH_NODE_MEMSET;
  default:
    return CUJIT_GRAPH_NODE_OTHER;
  }
}

cujit_status cj_cuda_graph_nodes(cujit_device *dev, void *graph, size_t *counts) {
  cj_driver *drv = cj_cuda_driver(dev);
  size_t n = 0;
  CUresult rc = drv->cuGraphGetNodes((CUgraph)graph, NULL, &n);
  if (rc != CUDA_SUCCESS || n == 0) return cj_cuda_check(dev, rc, "cuGraphGetNodes");
  CUgraphNode *nodes = malloc(n * sizeof *nodes);
  if (!nodes)
    return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "out of host memory listing the %zu nodes of a graph", n);
  rc = drv->cuGraphGetNodes((CUgraph)graph, nodes, &n);
  for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
    CUgraphNodeType type;
    rc = drv->cuGraphNodeGetType(nodes[i], &type);
    if (rc == CUDA_SUCCESS) counts[node_kind(type)]++;
  }
  free(nodes);
  return cj_cuda_check(dev, rc, "reading a graph's nodes (cuGraphGetNodes)");
}

cujit_status cj_cuda_graph_instantiate(cujit_device *dev, void *graph, void **exec) {
  CUgraphExec e = NULL;
  CUresult rc = cj_cuda_driver(dev)->cuGraphInstantiateWithFlags(&e, (CUgraph)graph, 0);
  *exec = e;
  return cj_cuda_check(dev, rc, "cujit_graph_instantiate (cuGraphInstantiateWithFlags)");
}

void cj_cuda_exec_destroy(cujit_device *dev, void *exec) {
  cj_cuda_driver(dev)->cuGraphExecDestroy((CUgraphExec)exec);
}

cujit_status cj_cuda_graph_launch(cujit_device *dev, void *exec, void *stream) {
  CUresult rc = cj_cuda_driver(dev)->cuGraphLaunch((CUgraphExec)exec, (CUstream)stream);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  char what[96];
  snprintf(what, sizeof what, "a graph replay on device %d (cuGraphLaunch)", dev->ordinal);
  return cj_cuda_check(dev, rc, what);
}

cujit_status cj_cuda_graph_set_kernel(cujit_device *dev, void *exec, void *node, void *fn,
                                      const unsigned grid[3], const unsigned block[3],
                                      unsigned shared_bytes, void **args) {
  CUDA_KERNEL_NODE_PARAMS_v2 p = {.func = (CUfunction)fn,
                                  .gridDimX = grid[0],
                                  .gridDimY = grid[1],
                                  .gridDimZ = grid[2],
                                  .blockDimX = block[0],
                                  .blockDimY = block[1],
                                  .blockDimZ = block[2],
                                  .sharedMemBytes = shared_bytes,
                                  .kernelParams = args};
  CUresult rc =
      cj_cuda_driver(dev)->cuGraphExecKernelNodeSetParams((CUgraphExec)exec, (CUgraphNode)node, &p);
  return cj_cuda_check(dev, rc, "cujit_graph_set_args (cuGraphExecKernelNodeSetParams)");
}

static const char *update_failure(CUgraphExecUpdateResult result) {
  switch (result) {
  case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
    return "the topology differs (other nodes or edges)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
    return "a node is of another kind (a kernel where a copy was, ...)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
  case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
    return "a kernel node launches another kernel";
  case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
    return "a copy or fill changed in a way the driver cannot update (its memory or direction)";
  case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
    return "a node's attributes changed";
  default:
    return "the driver cannot update this graph in place";
  }
}

cujit_status cj_cuda_graph_update(cujit_device *dev, void *exec, void *graph) {
  CUgraphExecUpdateResultInfo info = {0};
  CUresult rc = cj_cuda_driver(dev)->cuGraphExecUpdate((CUgraphExec)exec, (CUgraph)graph, &info);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
    return cj_cuda_check(dev, rc, "cujit_graph_update (cuGraphExecUpdate)");
  return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                 "cujit_graph_update: the new capture is not of the same shape: %s; "
                 "instantiate the new graph instead (cujit_graph_instantiate)",
                 update_failure(info.result));
}

cujit_status cj_cuda_graph_dot(cujit_device *dev, void *graph, const char *path) {
  CUresult rc = cj_cuda_driver(dev)->cuGraphDebugDotPrint((CUgraph)graph, path, 0);
  if (rc == CUDA_SUCCESS) return CUJIT_OK;
  if (rc == CUDA_ERROR_OPERATING_SYSTEM || rc == CUDA_ERROR_INVALID_VALUE)
    return cj_fail(dev->engine, CUJIT_ERROR_IO,
                   "cujit_graph_dot: could not write '%s'; check that its directory exists and "
                   "is writable",
                   path);
  return cj_cuda_check(dev, rc, "cujit_graph_dot (cuGraphDebugDotPrint)");
}
