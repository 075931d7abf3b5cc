/*
** cpu_names.h -- the CPU device's tables of names and headers (cpu_names.c), read by its unit
** writer (cpu_source.c). Internal.
*/
#ifndef CUJIT_CPU_NAMES_H
#define CUJIT_CPU_NAMES_H

#include <stddef.h>

/* An identifier and how a message names it (why: NVRTC's own words, for what a GPU refuses). */
typedef struct cj_cpu_name {
  const char *name, *what, *why;
} cj_cpu_name;

/* A CUDA header: the stand-in it gets ("" when it needs none), or why it is refused. */
typedef struct cj_cpu_header {
  const char *header, *stand_in, *refused;
} cj_cpu_header;

extern const cj_cpu_name cj_cpu_unsupported[]; /* what the CPU device has no meaning for */
extern const size_t cj_cpu_unsupported_count;
extern const cj_cpu_name cj_cpu_gpu_refuses[]; /* what the host would run but NVRTC refuses */
extern const size_t cj_cpu_gpu_refuses_count;
extern const cj_cpu_header cj_cpu_cuda_headers[]; /* by name, or a prefix ending in '/' */
extern const size_t cj_cpu_cuda_header_count;

#endif
