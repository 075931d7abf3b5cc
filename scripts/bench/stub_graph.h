/*
** stub_graph.h -- the stand-in driver's graph entry points (stub_graph.c), named in
** stub_driver.c's table, and the launch outside a capture they fall back on (stub_driver.c).
*/
#ifndef CJ_STUB_GRAPH_H
#define CJ_STUB_GRAPH_H

#include <cuda.h>

CUresult cj_stub_launch(void);
CUresult cj_stub_launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, CUstream s, void **params,
                               void **extra);
CUresult cj_stub_capture_begin(CUstream s, CUstreamCaptureMode mode);
CUresult cj_stub_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                              CUgraph *graph, const CUgraphNode **deps, size_t *ndeps);
/* A copy or fill on stream s: a node of `type` in the capture when s is capturing; out of
** memory when the capture has no room for it. */
CUresult cj_stub_capture_other(CUstream s, CUgraphNodeType type);
CUresult cj_stub_capture_end(CUstream s, CUgraph *graph);
CUresult cj_stub_graph_destroy(CUgraph graph);
CUresult cj_stub_graph_nodes(CUgraph graph, CUgraphNode *nodes, size_t *n);
CUresult cj_stub_node_type(CUgraphNode node, CUgraphNodeType *type);
CUresult cj_stub_instantiate(CUgraphExec *out, CUgraph graph, unsigned long long flags);
CUresult cj_stub_exec_destroy(CUgraphExec exec);
CUresult cj_stub_exec_set_kernel(CUgraphExec exec, CUgraphNode node,
                                 const CUDA_KERNEL_NODE_PARAMS_v2 *p);
CUresult cj_stub_exec_update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info);
CUresult cj_stub_graph_launch(CUgraphExec exec, CUstream s);

/* For tests (dlsym it from libcuda.so.1): what the last cuGraphLaunch ran at node `i` (capture
** order): its function, grid, block and the first 8 bytes of its first 4 parameters; 0, or -1
** past the graph's last node. */
int cujit_stub_graph_replayed(size_t i, void **func, unsigned grid[3], unsigned block[3],
                              unsigned long long param[4]);

#endif
