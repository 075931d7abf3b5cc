/*
** cujit/pdl.h -- programmatic dependent launch in device code (issue 26): the CUDA runtime's
** cudaGridDependencySynchronize() and cudaTriggerProgrammaticLaunchCompletion(), which NVRTC
** does not declare (the toolkit declares them only for nvcc). On sm_90 and newer they are the
** griddepcontrol instructions; below, and on the CPU device (whose prelude has them as no-ops:
** its stream order is serial), there is nothing to wait for and they do nothing. A kernel made
** from a signature and a body gets them through <cujit/prelude.h>; a whole source includes this
** header or <cujit/cluster.h>. With relocatable device code (-rdc, and -dlto for link=), NVRTC
** declares them itself (the device runtime's), and this header adds nothing.
*/
#pragma once

#if !defined(__CUJIT_CPU__) && !defined(CUJIT_PDL_DEFINED) && !defined(__CUDACC_RDC__)
#define CUJIT_PDL_DEFINED 1
/* Waits until the grids this one depends on have completed (or triggered), with their memory. */
static __device__ __forceinline__ void cudaGridDependencySynchronize(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* Lets the grid launched after this one (programmatic = 1) start before this one ends. */
static __device__ __forceinline__ void cudaTriggerProgrammaticLaunchCompletion(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
#endif
