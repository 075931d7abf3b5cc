/*
** signature.h -- kernel signatures: "saxpy(float a, const float *x, float *y, int n)" parsed into
** typed parameters with sizes, alignments and offsets in the launch parameter buffer; type
** variables (T, U, T2) for generic kernels; and reading the signatures of the extern "C"
** __global__ kernels of a whole translation unit. Knows nothing of CUDA or NVRTC. Internal.
*/
#ifndef CUJIT_SIGNATURE_H
#define CUJIT_SIGNATURE_H

#include "cujit.h"

#include <stddef.h>

#define CJ_MAX_PARAMS 128
#define CJ_MAX_PARAM_BYTES 4096 /* the classic kernel parameter limit; bigger is refused */
#define CJ_MAX_TYPE_VARS 8

typedef struct cj_param {
  char *name;
  char *type; /* normalised C spelling: "const float *", "int", "T *" */
  cujit_param_kind kind;
  cujit_dtype dtype; /* scalar type or pointee type; NONE for void *, vector types, T */
  int is_const;      /* pointer to const */
  size_t size, align, offset;
  int type_var; /* index into type_vars, or -1 */
} cj_param;

typedef struct cj_signature {
  char *name;
  cj_param *params;
  size_t nparams;
  char *type_vars[CJ_MAX_TYPE_VARS];
  size_t ntype_vars;
  size_t param_bytes; /* total size of the parameter buffer, with padding */
  int specialized;    /* 1 in a cj_signature_specialize copy: bound[] holds the types */
  cujit_dtype bound[CJ_MAX_TYPE_VARS];
} cj_signature;

/* Parses a signature. On failure returns CUJIT_ERROR_SIGNATURE and writes into err a message that
** says where (column, the text with a caret line) and what is wrong. */
cujit_status cj_signature_parse(const char *text, cj_signature *out, char *err, size_t err_len);

/* A concrete copy of a generic signature with types[i] for type variable i. The copy keeps the
** names of the type variables (type_vars, ntype_vars) and each parameter's type_var (where it came
** from), sets specialized = 1 and bound[], and has every type resolved ("const float *"). */
cujit_status cj_signature_specialize(const cj_signature *generic, const cujit_dtype *types,
                                     size_t ntypes, cj_signature *out, char *err, size_t err_len);

void cj_signature_free(cj_signature *sig);

/* A deep copy; CUJIT_ERROR_OUT_OF_HOST_MEMORY when that fails. */
cujit_status cj_signature_copy(const cj_signature *sig, cj_signature *out);

/* 1 if the signature is generic and not yet specialised. */
int cj_signature_is_generic(const cj_signature *sig);

/* "saxpy(float a, const float *x, float *y, int n)"; malloc'd, NULL if out of memory. */
char *cj_signature_format(const cj_signature *sig);

/* Reads every extern "C" __global__ function of a translation unit (comments, strings and
** preprocessor lines skipped) into *out (an array of *count signatures, malloc'd; each to be
** freed with cj_signature_free, the array with free). Kernels whose parameters use types cujit
** cannot size are still listed, with kind SCALAR and dtype NONE and size 0: launching them is
** refused with a clear message. No kernel at all is CUJIT_ERROR_NOT_FOUND. */
cujit_status cj_signature_scan(const char *source, cj_signature **out, size_t *count, char *err,
                               size_t err_len);

#endif
