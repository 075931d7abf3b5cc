/*
** cpu_names.c -- what the CPU device's unit writer (cpu_source.c) maps and refuses, as tables:
** the identifiers it has no meaning for, what NVRTC refuses that the host would run, and the
** CUDA headers a program may include with the stand-in each gets or why it is refused.
*/
#include "cpu_names.h"

/* Identifiers the CPU device has no meaning for, and how a message names them. */
const cj_cpu_name cj_cpu_unsupported[] = {
    {"asm", "inline PTX (asm)", NULL},
    {"__asm__", "inline PTX (asm)", NULL},
    {"__asm", "inline PTX (asm)", NULL},
    {"tex1D", "textures (tex1D)", NULL},
    {"tex1Dfetch", "textures (tex1Dfetch)", NULL},
    {"tex2D", "textures (tex2D)", NULL},
    {"tex3D", "textures (tex3D)", NULL},
    {"tex2DLayered", "textures (tex2DLayered)", NULL},
    {"texCubemap", "textures (texCubemap)", NULL},
    {"cudaTextureObject_t", "textures (cudaTextureObject_t)", NULL},
    {"cudaSurfaceObject_t", "surfaces (cudaSurfaceObject_t)", NULL},
    {"surf2Dread", "surfaces (surf2Dread)", NULL},
    {"surf2Dwrite", "surfaces (surf2Dwrite)", NULL},
    {"nvcuda", "tensor-core fragments (nvcuda::wmma)", NULL},
    {"__shfl", "the pre-CUDA 9 __shfl (use __shfl_sync)", NULL},
    {"__shfl_up", "the pre-CUDA 9 __shfl_up (use __shfl_up_sync)", NULL},
    {"__shfl_down", "the pre-CUDA 9 __shfl_down (use __shfl_down_sync)", NULL},
    {"__shfl_xor", "the pre-CUDA 9 __shfl_xor (use __shfl_xor_sync)", NULL},
    {"__ballot", "the pre-CUDA 9 __ballot (use __ballot_sync)", NULL},
    {"__nv_bfloat162", "__nv_bfloat162 pairs", NULL},
    {"__pipeline_memcpy_async", "asynchronous copies (__pipeline_memcpy_async)", NULL},
    {"__cvta_generic_to_shared", "address-space conversions (__cvta_generic_to_shared)", NULL},
    {"cudaMalloc", "the device runtime (cudaMalloc)", NULL},
    {"cudaDeviceSynchronize", "the device runtime (cudaDeviceSynchronize)", NULL},
    {"cudaLaunchDevice", "dynamic parallelism (cudaLaunchDevice)", NULL},
};

/* What the host would run but a GPU does not: refused as NVRTC refuses it, so that code that
** runs on the CPU device runs on a GPU (NVRTC also refuses these in host functions: JIT mode has
** none). */
const cj_cpu_name cj_cpu_gpu_refuses[] = {
    {"throw", "exception handling (throw)", "device code does not support exception handling"},
    {"try", "exception handling (try)", "device code does not support exception handling"},
    {"catch", "exception handling (catch)", "device code does not support exception handling"},
};

/* CUDA headers a program may include: those the CPU device has a stand-in for ("" when it needs
** none), and those of libraries it lacks, refused with what they are. */
const cj_cpu_header cj_cpu_cuda_headers[] = {
    {"cuda_fp16.h", "cujit/half.h", NULL},
    {"cuda_bf16.h", "cujit/bf16.h", NULL},
    {"cuda_runtime.h", "cujit/cpu_runtime.h", NULL},
    {"cuda_runtime_api.h", "cujit/cpu_runtime.h", NULL},
    {"cuda_profiler_api.h", "cujit/cpu_runtime.h", NULL},
    {"driver_types.h", "cujit/cpu_runtime.h", NULL},
    {"cuda.h", "cujit/cpu_runtime.h", NULL},
    {"device_launch_parameters.h", "", NULL},
    {"vector_types.h", "", NULL},
    {"vector_functions.h", "", NULL},
    {"builtin_types.h", "", NULL},
    {"host_defines.h", "", NULL},
    {"device_functions.h", "", NULL},
    {"math_constants.h", "", NULL},
    {"cooperative_groups.h", "cujit/cpu_cg.h", NULL},
    {"cooperative_groups/reduce.h", "cujit/cpu_cg.h", NULL},
    {"cooperative_groups/memcpy_async.h", "cujit/cpu_cg.h", NULL},
    {"cooperative_groups/scan.h", "cujit/cpu_cg.h", NULL},
    {"cooperative_groups/", NULL,
     "cooperative groups' internals (<cooperative_groups/details/...>; include "
     "<cooperative_groups.h> and its reduce.h, scan.h or memcpy_async.h)"},
    {"mma.h", NULL, "tensor-core fragments (<mma.h>)"},
    {"curand_kernel.h", NULL,
     "cuRAND's device API (<curand_kernel.h>; <cujit/random.h> has Philox)"},
    {"cub/", NULL, "CUB"},
    {"cuda/", NULL, "libcu++ (<cuda/...>)"},
};

const size_t cj_cpu_unsupported_count = sizeof cj_cpu_unsupported / sizeof cj_cpu_unsupported[0];
const size_t cj_cpu_gpu_refuses_count = sizeof cj_cpu_gpu_refuses / sizeof cj_cpu_gpu_refuses[0];
const size_t cj_cpu_cuda_header_count = sizeof cj_cpu_cuda_headers / sizeof cj_cpu_cuda_headers[0];
