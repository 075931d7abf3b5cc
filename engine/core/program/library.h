/*
** library.h -- the host side of cujit's device library (random fills, reductions, dot products,
** and GEMM in gemm.c; their public functions are in cujit.h), and what the elementwise builder
*shares with it: the
** block size of every library kernel and the one-dimensional launch. Internal.
*/
#ifndef CUJIT_LIBRARY_H
#define CUJIT_LIBRARY_H

#include "kernel.h"

#define CJ_LIBRARY_BLOCK 256 /* threads per block of every library kernel */

/* The translation unit of a library program: 0, the reductions over element type d; 1, the
** random fills. Malloc'd; NULL when out of memory. The tests compile exactly this, with no GPU. */
char *cj_library_source(int program, cujit_dtype d);

/* The device the work of `fn` goes to (the stream's, or the current one), and a check that each
** of the `nbufs` buffers lives there, refusing one that does not with a message naming both. */
cujit_status cj_library_work_device(cujit_engine *e, const char *fn, cujit_stream *stream,
                                    cujit_buffer *const *bufs, size_t nbufs, cujit_device **out);

/* The translation unit of a GEMM program: A and B of dtype `in`, C of `out`, one kernel per
** epilogue. Malloc'd; NULL when out of memory. The tests compile exactly this, with no GPU. */
char *cj_gemm_source(cujit_dtype in, cujit_dtype out);
/* The tensor-core path's program (sm_90a) for tiles `width` (256 or 128) columns wide:
** cj_gemm_tc0..3, by operand layout. */
char *cj_gemm_tc_source(cujit_dtype in, cujit_dtype out, int width);

/* Launches k on `grid` blocks of CJ_LIBRARY_BLOCK threads. */
cujit_status cj_library_launch_1d(cujit_kernel *k, unsigned grid, cujit_stream *stream,
                                  const cujit_arg *args, size_t nargs);

#endif
