/* <cuda_profiler_api.h> for NVRTC (cujit stand-in, taken before the toolkit's: that one declares
** only __host__ functions, which NVRTC refuses even as declarations). Device code gets the
** runtime's types; cudaProfilerStart/Stop belong to host code, which the GPU compile never has. */
#ifndef CUJIT_STD_CUDA_PROFILER_API_H
#define CUJIT_STD_CUDA_PROFILER_API_H
#include <cuda_runtime_api.h>
#endif
