/*
** graph.c -- graphs: beginning and ending a stream capture (the launch path records each kernel
** launch into stream->capture), instantiating, replaying one or many times, replacing a kernel
** node's arguments through the launch path's checks and packing, whole-graph update from a new
** capture of the same shape, node counts and Graphviz output, over the backend's graph operations.
*/
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_OF(l) ((cujit_graph *)((char *)(l)-offsetof(cujit_graph, link)))

/* What a fault seen after a replay blames: a graph's kernels cannot be told apart by the driver. */
static const char graph_blame[] = "(a kernel node of a replayed cujit_graph)";

/* --- capture ---------------------------------------------------------------------------------- */

/* A live stream of a usable device, entered. */
static cujit_status enter_stream(cujit_stream *stream, const char *fn) {
  if (!stream)
    return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is NULL; the default stream cannot capture, make one "
                   "(cujit_stream_create)",
                   fn);
  cujit_status st = cj_check_alive(stream->device, stream->generation, "the stream");
  return st == CUJIT_OK ? cj_device_enter(stream->device) : st;
}

cujit_status cujit_capture_begin(cujit_stream *stream, cujit_capture_mode mode) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_capture_begin";
  cujit_status st = enter_stream(stream, fn);
  if (st != CUJIT_OK) return st;
  cujit_engine *engine = stream->device->engine;
  if ((unsigned)mode > CUJIT_CAPTURE_GLOBAL)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: mode %d is not a cujit_capture_mode (CUJIT_CAPTURE_RELAXED, "
                   "CUJIT_CAPTURE_THREAD_LOCAL or CUJIT_CAPTURE_GLOBAL)",
                   fn, (int)mode);
  if (stream->capture)
    return cj_fail(engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is already capturing a graph; end that capture first "
                   "(cujit_capture_end)",
                   fn);
  cj_capture *capture = calloc(1, sizeof *capture);
  if (!capture)
    return cj_fail(engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  st = stream->device->ops->capture_begin(stream->device, stream->handle, (int)mode);
  if (st != CUJIT_OK) {
    free(capture);
    return st;
  }
  __atomic_store_n(&stream->capture, capture, __ATOMIC_RELEASE); /* read by device waits */
  return CUJIT_OK;
}

static void graph_destroy(cj_link *link) {
  cujit_graph *g = GRAPH_OF(link);
  cujit_device *dev = g->device;
  /* A lost graph's driver objects went with the context, and a faulted context takes no call; the
  ** CPU device's are this process's memory, which neither a reset nor a fault frees: freed here. */
  if (dev->ops->host_addressed ||
      (cj_device_current(dev, g->generation) && cj_device_enter_quiet(dev))) {
    if (g->exec) dev->ops->exec_destroy(dev, g->exec);
    dev->ops->graph_destroy(dev, g->graph);
  }
  free(g->kernels);
  free(g);
}

/* The graph of a finished capture, tracked by the engine. Takes the capture's kernels. */
static cujit_status new_graph(cujit_stream *stream, void *handle, cj_capture *capture,
                              cujit_graph **out) {
  cujit_device *dev = stream->device;
  cujit_graph *g = calloc(1, sizeof *g);
  if (!g) {
    dev->ops->graph_destroy(dev, handle);
    return cj_fail(dev->engine, CUJIT_ERROR_OUT_OF_HOST_MEMORY,
                   "cujit_capture_end: out of host memory");
  }
  g->device = dev, g->generation = stream->generation, g->graph = handle;
  g->kernels = capture->kernels, g->nkernels = capture->count;
  capture->kernels = NULL;
  cujit_status st = dev->ops->graph_nodes(dev, handle, g->counts);
  if (st != CUJIT_OK) {
    graph_destroy(&g->link);
    return st;
  }
  cj_track(dev->engine, &g->link, graph_destroy);
  *out = g;
  return CUJIT_OK;
}

cujit_status cujit_capture_end(cujit_stream *stream, cujit_graph **out) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_capture_end";
  if (out) *out = NULL;
  if (!stream) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the stream is NULL", fn);
  cj_capture *capture = stream->capture;
  if (!capture)
    return cj_fail(stream->device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the stream is not capturing; begin with cujit_capture_begin", fn);
  /* Over whatever happens next, as the backend's capture is. */
  __atomic_store_n(&stream->capture, NULL, __ATOMIC_RELEASE);
  cujit_device *dev = stream->device;
  void *handle = NULL;
  cujit_status st = cj_device_enter(dev);
  if (st == CUJIT_OK) st = dev->ops->capture_end(dev, stream->handle, &handle);
  if (st == CUJIT_OK && !out) dev->ops->graph_destroy(dev, handle);
  if (st == CUJIT_OK && out) st = new_graph(stream, handle, capture, out);
  free(capture->kernels);
  free(capture);
  return st;
}

/* --- replay ----------------------------------------------------------------------------------- */

/* The graph's device, entered, for a replay on `stream` (NULL: the default stream). */
static cujit_status enter_graph(cujit_graph *g, const cujit_stream *stream, const char *fn) {
  if (!g) return cj_fail(NULL, CUJIT_ERROR_INVALID_ARGUMENT, "%s: the graph is NULL", fn);
  cujit_device *dev = g->device;
  char gd[64], sd[64];
  if (stream && stream->device != dev)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the graph was captured on %s but the stream is on %s; capture it again "
                   "on a stream of that device",
                   fn, cj_device_name_in(dev, dev->engine, gd, sizeof gd),
                   cj_device_name_in(stream->device, dev->engine, sd, sizeof sd));
  if (!cj_device_current(dev, g->generation))
    return cj_check_alive(dev, g->generation, "the graph");
  if (stream && stream->generation != g->generation)
    return cj_check_alive(dev, stream->generation, "the stream");
  return cj_device_enter(dev);
}

static cujit_status instantiate(cujit_graph *g) {
  return g->exec ? CUJIT_OK : g->device->ops->graph_instantiate(g->device, g->graph, &g->exec);
}

cujit_status cujit_graph_instantiate(cujit_graph *graph) {
  CJ_KEEP_CALLER_CONTEXT;
  cujit_status st = enter_graph(graph, NULL, "cujit_graph_instantiate");
  return st == CUJIT_OK ? instantiate(graph) : st;
}

cujit_status cujit_graph_replay(cujit_graph *graph, cujit_stream *stream, size_t times) {
  CJ_KEEP_CALLER_CONTEXT;
  cujit_status st = enter_graph(graph, stream, "cujit_graph_replay");
  if (st == CUJIT_OK) st = instantiate(graph);
  if (st != CUJIT_OK) return st;
  cujit_device *dev = graph->device;
  void *exec = graph->exec, *handle = cj_stream_queue(stream);
  __atomic_store_n(&dev->last_kernel, graph_blame, __ATOMIC_RELAXED);
  for (size_t i = 0; i < times && st == CUJIT_OK; i++)
    st = dev->ops->graph_launch(dev, exec, handle);
  cj_stream_queued(stream);
  return st;
}

cujit_status cujit_graph_launch(cujit_graph *graph, cujit_stream *stream) {
  CJ_KEEP_CALLER_CONTEXT;
  return cujit_graph_replay(graph, stream, 1);
}

/* --- changing a graph ------------------------------------------------------------------------- */

cujit_status cujit_graph_set_args(cujit_graph *graph, size_t index, const cujit_arg *args,
                                  size_t nargs) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_graph_set_args";
  cujit_status st = enter_graph(graph, NULL, fn);
  if (st != CUJIT_OK) return st;
  cujit_device *dev = graph->device;
  if (graph->nkernels == 0)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the graph has no kernel nodes: its capture launched no kernel", fn);
  if (index >= graph->nkernels)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the graph has %zu kernel node%s (counted from 0 in capture order), so "
                   "there is no node %zu",
                   fn, graph->nkernels, graph->nkernels == 1 ? "" : "s", index);
  if (nargs && !args)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT, "%s: args is NULL", fn);
  const cj_graph_kernel *node = &graph->kernels[index];
  cujit_kernel *k = node->kernel;
  _Alignas(16) unsigned char params[CJ_MAX_PARAM_BYTES];
  void *pointers[CJ_MAX_PARAMS];
  cj_kernel_on_device *on = NULL;
  if ((st = cj_kernel_resolve(&k, args, nargs)) != CUJIT_OK) return st;
  /* A node's kernel is the specialisation the capture launched, so resolving keeps it: buffers
  ** of other dtypes are refused by the pack, as a launch of it refuses them. */
  if ((st = cj_launch_pack(k, args, nargs, dev, params, pointers)) != CUJIT_OK) return st;
  /* Loaded since the capture; only a reset on another thread since enter_graph unloads it. */
  if (!(on = cj_kernel_ready(k, dev))) {
    st = cj_check_alive(dev, graph->generation, "the graph");
    return st != CUJIT_OK ? st
                          : cj_fail(dev->engine, CUJIT_ERROR_DEVICE_FAULT,
                                    "%s: kernel node %zu's kernel '%s' is no longer loaded on "
                                    "the device",
                                    fn, index, k->sig.name);
  }
  if ((st = instantiate(graph)) != CUJIT_OK) return st;
  return dev->ops->graph_set_kernel(dev, graph->exec, node->node, on->fn, node->grid, node->block,
                                    node->shared_bytes, pointers);
}

cujit_status cujit_graph_update(cujit_graph *graph, cujit_graph *from) {
  CJ_KEEP_CALLER_CONTEXT;
  static const char fn[] = "cujit_graph_update";
  cujit_status st = enter_graph(graph, NULL, fn);
  if (st != CUJIT_OK) return st;
  cujit_device *dev = graph->device;
  if (!from || from->device != dev || from->generation != graph->generation)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: `from` must be a graph captured on the same device (%d) since its last "
                   "reset",
                   fn, dev->ordinal);
  if (from->nkernels != graph->nkernels)
    return cj_fail(dev->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "%s: the new capture launched %zu kernels, the graph %zu; the shape must be the "
                   "same (instantiate the new graph instead)",
                   fn, from->nkernels, graph->nkernels);
  if ((st = instantiate(graph)) != CUJIT_OK) return st;
  if ((st = dev->ops->graph_update(dev, graph->exec, from->graph)) != CUJIT_OK) return st;
  /* Later argument replacements address the instantiated graph's own nodes, with the kernels
  ** and configurations the update gave them. */
  for (size_t i = 0; i < graph->nkernels; i++) {
    void *node = graph->kernels[i].node;
    graph->kernels[i] = from->kernels[i];
    graph->kernels[i].node = node;
  }
  return CUJIT_OK;
}

/* --- introspection and freeing ---------------------------------------------------------------- */

size_t cujit_graph_node_count(const cujit_graph *graph, cujit_graph_node_kind kind) {
  if (!graph || (unsigned)kind > CUJIT_GRAPH_NODE_KINDS) return 0;
  if (kind != CUJIT_GRAPH_NODE_KINDS) return graph->counts[kind];
  size_t all = 0;
  for (int i = 0; i < CUJIT_GRAPH_NODE_KINDS; i++) all += graph->counts[i];
  return all;
}

cujit_kernel *cujit_graph_kernel(const cujit_graph *graph, size_t index) {
  return graph && index < graph->nkernels ? graph->kernels[index].kernel : NULL;
}

cujit_device *cujit_graph_device(const cujit_graph *graph) {
  return graph ? graph->device : NULL;
}

cujit_status cujit_graph_dot(cujit_graph *graph, const char *path) {
  CJ_KEEP_CALLER_CONTEXT;
  cujit_status st = enter_graph(graph, NULL, "cujit_graph_dot");
  if (st != CUJIT_OK) return st;
  if (!path || !*path)
    return cj_fail(graph->device->engine, CUJIT_ERROR_INVALID_ARGUMENT,
                   "cujit_graph_dot: the path is empty; name the .dot file to write");
  return graph->device->ops->graph_dot(graph->device, graph->graph, path);
}

void cujit_graph_free(cujit_graph *graph) {
  CJ_KEEP_CALLER_CONTEXT;
  if (!graph) return;
  cj_untrack(graph->device->engine, &graph->link);
  graph_destroy(&graph->link);
}
