/*
** cuda_tma.c -- the CUDA backend's tensor maps (backend.h, tensor_map_encode): a checked
** description made into the driver's CUtensorMap by cuTensorMapEncodeTiled, an optional entry
** point (a driver without it refuses tensor maps, saying so).
*/
#include "cuda.h"

#include <string.h>

/* The driver's element type for a dtype: TMA moves bits, so signed integers of 1 and 2 bytes go
** as the unsigned ones of their size (no INT8 or INT16 type exists). */
static CUtensorMapDataType data_type(cujit_dtype dtype) {
  switch (dtype) {
  case CUJIT_F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case CUJIT_BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case CUJIT_F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case CUJIT_F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case CUJIT_I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case CUJIT_I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case CUJIT_U32:
    return CU_TENSOR_MAP_DATA_TYPE_UINT32;
  case CUJIT_U64:
    return CU_TENSOR_MAP_DATA_TYPE_UINT64;
  case CUJIT_I16:
  case CUJIT_U16:
    return CU_TENSOR_MAP_DATA_TYPE_UINT16;
  default:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* i8, u8 */
  }
}

cujit_status cj_cuda_tensor_map_encode(cujit_device *dev, uint64_t address, cujit_dtype dtype,
                                       const cujit_tensor_map_desc *desc, void *map) {
  CJ_CUDA_NEED(dev, cuTensorMapEncodeTiled, "tensor maps (cujit_tensor_map_encode)");
  static const CUtensorMapSwizzle swizzles[] = {
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
      CU_TENSOR_MAP_SWIZZLE_128B};
  cuuint64_t dims[CUJIT_TENSOR_MAX_RANK], strides[CUJIT_TENSOR_MAX_RANK];
  cuuint32_t box[CUJIT_TENSOR_MAX_RANK], element_strides[CUJIT_TENSOR_MAX_RANK];
  for (unsigned d = 0; d < desc->rank; d++) {
    dims[d] = desc->dims[d], box[d] = desc->box[d], element_strides[d] = 1;
    if (d) strides[d - 1] = desc->strides[d]; /* the driver's list starts at dimension 1 */
  }
  CUtensorMap m; /* 64-byte aligned, as the driver wants it; the caller's copy need not be */
  CUresult rc = DRV(dev)->cuTensorMapEncodeTiled(
      &m, data_type(dtype), desc->rank, (void *)(uintptr_t)address, dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[desc->swizzle],
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      desc->oob_nan ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                    : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc == CUDA_SUCCESS) memcpy(map, &m, sizeof m);
  return cj_cuda_check(dev, rc, "encoding a tensor map (cuTensorMapEncodeTiled)");
}
