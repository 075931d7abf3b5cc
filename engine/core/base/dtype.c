/*
** dtype.c -- the element types: each dtype's name ("f32"), its C type ("float") and size, and the
** dtype of a name or C type. Declared in cujit.h (cujit_dtype_*).
*/
#include "base.h"

#include <string.h>

static const struct {
  const char *name, *ctype;
  size_t size;
} dtypes[CUJIT_DTYPE_COUNT_] = {
    [CUJIT_DTYPE_NONE] = {"bytes", "unsigned char", 1},
    [CUJIT_F16] = {"f16", "__half", 2},
    [CUJIT_F32] = {"f32", "float", 4},
    [CUJIT_F64] = {"f64", "double", 8},
    [CUJIT_I8] = {"i8", "signed char", 1},
    [CUJIT_I16] = {"i16", "short", 2},
    [CUJIT_I32] = {"i32", "int", 4},
    [CUJIT_I64] = {"i64", "long long", 8},
    [CUJIT_U8] = {"u8", "unsigned char", 1},
    [CUJIT_U16] = {"u16", "unsigned short", 2},
    [CUJIT_U32] = {"u32", "unsigned int", 4},
    [CUJIT_U64] = {"u64", "unsigned long long", 8},
    [CUJIT_BF16] = {"bf16", "__nv_bfloat16", 2},
};

const char *cujit_dtype_name(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].name : "?";
}

const char *cujit_dtype_ctype(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].ctype : "?";
}

size_t cujit_dtype_size(cujit_dtype dtype) {
  return (unsigned)dtype < CUJIT_DTYPE_COUNT_ ? dtypes[dtype].size : 0;
}

cujit_dtype cujit_dtype_from_name(const char *name) {
  if (!name) return CUJIT_DTYPE_NONE;
  for (int i = 1; i < CUJIT_DTYPE_COUNT_; i++)
    if (strcmp(name, dtypes[i].name) == 0 || strcmp(name, dtypes[i].ctype) == 0)
      return (cujit_dtype)i;
  return CUJIT_DTYPE_NONE;
}
