/*
** verify.h -- confirming a program's kernels against the PTX NVRTC made for it (the second half of
** the design in scan.h). Internal.
*/
#ifndef CUJIT_VERIFY_H
#define CUJIT_VERIFY_H

#include "scan.h"

/* After the compile: the kernels NVRTC built, confirmed against its PTX, copied out of `scan` into
** *kernels (malloc'd, source order, one per name; free each with cj_signature_free). A kernel
** read from the source but absent from the PTX (an inactive #if) is dropped; a given signature
** absent from it, a parameter count or size that differs, or no kernel left are errors. */
cujit_status cj_verify_ptx(cj_scan *scan, const char *ptx, cj_signature **kernels, size_t *count,
                           char *err, size_t err_len);

#endif
