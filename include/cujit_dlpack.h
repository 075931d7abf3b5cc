/*
** cujit_dlpack.h -- the DLPack 1.x exchange ABI as cujit uses it (cujit_buffer_to_dlpack and
** cujit_buffer_from_dlpack in cujit.h): the project's own definition of the structs' documented
** layout, so that a C program needs no other header to hand tensors between cujit and PyTorch,
** CuPy, JAX, Numba or cuda.core.
**
** Living with the official dlpack.h: include that one first and this header takes its
** definitions (DLPACK_MAJOR_VERSION is defined; a major other than 1 is an error). Included
** first, this header defines the names and DLPACK_DLPACK_H_, the official header's include guard,
** so a later #include <dlpack/dlpack.h> adds nothing and redefines nothing: a program that needs
** names this header lacks (newer device types or flags) includes the official header first.
** The layout is checked at compile time either way (64-bit targets).
*/
#ifndef CUJIT_DLPACK_H
#define CUJIT_DLPACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_MAJOR_VERSION
#define DLPACK_DLPACK_H_ /* the official header's guard: it must not define these twice */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 0
#ifndef DLPACK_EXTERN_C
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#endif
#ifndef DLPACK_DLL
#define DLPACK_DLL
#endif

/* The ABI version a tensor was made for; a reader accepts the majors it knows. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* Where the memory is (the values are fixed by the ABI). */
typedef enum {
  kDLCPU = 1,
  kDLCUDA = 2,     /* device memory of CUDA device device_id */
  kDLCUDAHost = 3, /* pinned host memory (cudaMallocHost) */
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13, /* managed (unified) memory */
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id; /* the ordinal of the device of that type (0 for the host) */
} DLDevice;

/* The kind of number an element is. */
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
} DLDataTypeCode;

/* An element: `lanes` values of `bits` bits each, of kind `code` (a DLDataTypeCode). */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/* A view of memory: element (i0, i1, ...) is at data + byte_offset + sum(ik * strides[k]) *
** element size; strides NULL means compact row-major (1.x). */
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} DLTensor;

/* A tensor with its owner's handle: the holder calls deleter(self) exactly once when done. */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void *manager_ctx; /* the producer's own record */
  void (*deleter)(struct DLManagedTensorVersioned *self);
  uint64_t flags; /* DLPACK_FLAG_BITMASK_* */
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0) /* the consumer must not write */
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1) /* the producer made a copy for it */
#endif

#if DLPACK_MAJOR_VERSION != 1
#error "cujit_dlpack.h: cujit reads and writes DLPack 1.x tensors; this dlpack.h is another major"
#endif

/* The layout every DLPack 1.x producer and consumer shares (LP64). */
#if (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || defined(__cplusplus)
#if UINTPTR_MAX == UINT64_MAX
#ifdef __cplusplus
#define CUJIT_DLPACK_ASSERT_(c, m) static_assert(c, m)
#else
#define CUJIT_DLPACK_ASSERT_(c, m) _Static_assert(c, m)
#endif
CUJIT_DLPACK_ASSERT_(sizeof(DLDevice) == 8, "DLDevice is 8 bytes");
CUJIT_DLPACK_ASSERT_(sizeof(DLDataType) == 4, "DLDataType is 4 bytes");
CUJIT_DLPACK_ASSERT_(sizeof(DLTensor) == 48, "DLTensor is 48 bytes");
CUJIT_DLPACK_ASSERT_(sizeof(DLManagedTensorVersioned) == 80,
                     "DLManagedTensorVersioned is 80 bytes");
CUJIT_DLPACK_ASSERT_(offsetof(DLTensor, ndim) == 16, "DLTensor.ndim at 16");
CUJIT_DLPACK_ASSERT_(offsetof(DLTensor, dtype) == 20, "DLTensor.dtype at 20");
CUJIT_DLPACK_ASSERT_(offsetof(DLTensor, shape) == 24, "DLTensor.shape at 24");
CUJIT_DLPACK_ASSERT_(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset at 40");
CUJIT_DLPACK_ASSERT_(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx at 8");
CUJIT_DLPACK_ASSERT_(offsetof(DLManagedTensorVersioned, deleter) == 16, "deleter at 16");
CUJIT_DLPACK_ASSERT_(offsetof(DLManagedTensorVersioned, flags) == 24, "flags at 24");
CUJIT_DLPACK_ASSERT_(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor at 32");
#undef CUJIT_DLPACK_ASSERT_
#endif
#endif

#ifdef __cplusplus
}
#endif

#endif
