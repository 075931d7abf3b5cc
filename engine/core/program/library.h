/*
** library.h -- the host side of cujit's device library (random fills, reductions, dot products;
** their public functions are in cujit.h), and what the elementwise builder shares with it: the
** block size of every library kernel and the one-dimensional launch. Internal.
*/
#ifndef CUJIT_LIBRARY_H
#define CUJIT_LIBRARY_H

#include "kernel.h"

#define CJ_LIBRARY_BLOCK 256 /* threads per block of every library kernel */

/* The translation unit of a library program: 0, the reductions over element type d; 1, the
** random fills. Malloc'd; NULL when out of memory. The tests compile exactly this, with no GPU. */
char *cj_library_source(int program, cujit_dtype d);

/* Launches k on `grid` blocks of CJ_LIBRARY_BLOCK threads. */
cujit_status cj_library_launch_1d(cujit_kernel *k, unsigned grid, cujit_stream *stream,
                                  const cujit_arg *args, size_t nargs);

#endif
