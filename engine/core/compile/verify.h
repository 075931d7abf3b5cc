/*
** verify.h -- confirming a program's kernels against the PTX NVRTC made for it, or against the
** shared object g++ made for the CPU device (the second half of the design in scan.h). Internal.
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

/* The same for the CPU device, against the shared object g++ made (`object`, len bytes): a kernel
** is kept when the object defines it (an inactive #if leaves only a weak reference), a variant
** when it defines its marker. Parameters are not compared there: g++ compiled the redeclarations
** with the types cujit read, so a mismatch was already a compile error. */
cujit_status cj_verify_object(cj_scan *scan, const unsigned char *object, size_t len,
                              cj_signature **kernels, size_t *count, char *err, size_t err_len);

#endif
