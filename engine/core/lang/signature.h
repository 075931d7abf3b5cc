/*
** signature.h -- kernel signatures: "saxpy(float a, const float *x, float *y, int n)" parsed into
** typed parameters with sizes, alignments and offsets in the launch parameter buffer; type
** variables (T, U, T2) for generic kernels; signatures written back as text. Knows nothing of CUDA
** or NVRTC. Internal.
*/
#ifndef CUJIT_SIGNATURE_H
#define CUJIT_SIGNATURE_H

#include "cujit.h"

#include <stddef.h>
#include <string.h>

#define CJ_MAX_PARAMS 128
/* Kernel parameters: 32764 bytes under CUDA 12.1+ on Volta and newer (and on the CPU device);
** 4096 before, which the launch checks on each GPU (kernel.c). Bigger is refused. */
#define CJ_MAX_PARAM_BYTES 32764
#define CJ_CLASSIC_PARAM_BYTES 4096
#define CJ_MAX_TYPE_VARS 8

typedef struct cj_param {
  char *name;
  char *type; /* normalised C spelling: "const float *", "int", "T *" */
  cujit_param_kind kind;
  cujit_dtype dtype; /* scalar type or pointee type; NONE for void *, vector types, T */
  int is_const;      /* pointer to const */
  size_t size, align, offset;
  int type_var; /* index into type_vars, or -1 */
  int nullable; /* a pointer declared with a default of NULL, nullptr or 0 */
  int nonnull; /* a pointer the nonnull option names: refuses a null pointer (any other takes it) */
  int boolean; /* a bool scalar: a u8 that takes 0 or 1 only */
} cj_param;

typedef struct cj_signature {
  char *name;   /* as the user names it: "scale", "ns::k", "scale<float>" */
  char *symbol; /* the compiled code's name for it (NVRTC's lowered name), or NULL: `name` */
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
** from), sets specialized = 1 and bound[], and has every type resolved ("const float *"). A
** failure, out of memory included, is said in err. */
cujit_status cj_signature_specialize(const cj_signature *generic, const cujit_dtype *types,
                                     size_t ntypes, cj_signature *out, char *err, size_t err_len);

void cj_signature_free(cj_signature *sig);

/* A deep copy; CUJIT_ERROR_OUT_OF_HOST_MEMORY when that fails. */
cujit_status cj_signature_copy(const cj_signature *sig, cj_signature *out);

/* 1 if the signature is generic and not yet specialised. */
int cj_signature_is_generic(const cj_signature *sig);

/* "saxpy(float a, const float *x, float *y, int n)"; malloc'd, NULL if out of memory. */
char *cj_signature_format(const cj_signature *sig);

/* The same text appended to b (no format string: the translation unit writes one per kernel). */
struct cj_buf;
void cj_signature_write(struct cj_buf *b, const cj_signature *sig);

/* signature_store.c: signatures as text with no NUL, every field kept (cj_signatures_store
** appends it to b), and read back (a malloc'd array of *count, freed with cj_signature_free each;
** CUJIT_ERROR_INVALID_ARGUMENT for text that is not exactly such a store, any field out of its
** range included; CUJIT_ERROR_OUT_OF_HOST_MEMORY). */
void cj_signatures_store(struct cj_buf *b, const cj_signature *sigs, size_t count);
cujit_status cj_signatures_load(const char *text, size_t len, cj_signature **out, size_t *count);

/* As cj_signature_parse, for a kernel read from a translation unit: a parameter whose type cujit
** cannot read is kept opaque (kind SCALAR, dtype NONE, size 0; launching it is refused) instead of
** being an error, and type variables are not recognised (a T there is the program's own type).
** Past the limits (CJ_MAX_PARAMS, CJ_MAX_PARAM_BYTES) it fails with a message, as the strict
** parser does. */
cujit_status cj_signature_parse_lenient(const char *text, cj_signature *out, char *err,
                                        size_t err_len);

/* The nonnull option applied: "*" marks every pointer parameter not declared "= NULL", a name the
** pointer parameter of that name (declared "= NULL" or not). */
static inline void cj_signature_mark_nonnull(cj_signature *sig, const char *const *names,
                                             size_t n) {
  for (size_t i = 0; i < sig->nparams; i++) {
    cj_param *p = &sig->params[i];
    for (size_t k = 0; k < n && p->kind == CUJIT_PARAM_POINTER; k++)
      if (strcmp(names[k], "*") == 0 ? !p->nullable : strcmp(names[k], p->name) == 0)
        p->nonnull = 1;
  }
}

/* 1 if `name` is "*" or the name of one of sig's pointer parameters. */
static inline int cj_signature_has_pointer(const cj_signature *sig, const char *name) {
  if (strcmp(name, "*") == 0) return 1;
  for (size_t i = 0; i < sig->nparams; i++)
    if (sig->params[i].kind == CUJIT_PARAM_POINTER && strcmp(sig->params[i].name, name) == 0)
      return 1;
  return 0;
}

/* The name the backend looks the kernel up by: its lowered name, else its name. */
static inline const char *cj_signature_symbol(const cj_signature *sig) {
  return sig->symbol ? sig->symbol : sig->name;
}

#endif
