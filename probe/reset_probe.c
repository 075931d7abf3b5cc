/* Probe (not part of the build): which sequence recovers a device after an illegal address? */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
  ".visible .entry poke() {\n .reg .b64 %rd<2>;\n .reg .b32 %r<2>;\n mov.u64 %rd1, 16;\n"
  " mov.u32 %r1, 1;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
#define P(x) do { CUresult r_ = (x); const char *n_ = "?"; cuGetErrorName(r_, &n_); printf("  %-55s -> %s\n", #x, n_); } while (0)
int main(int argc, char **argv) {
  int v = atoi(argv[1]);
  CUdevice d; CUcontext c, c2; CUlibrary lib; CUkernel k; CUfunction f; CUdeviceptr p;
  cuInit(0); cuDeviceGet(&d, 0);
  P(cuDevicePrimaryCtxRetain(&c, d)); P(cuCtxSetCurrent(c));
  P(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
  P(cuLibraryGetKernel(&k, lib, "poke")); P(cuKernelGetFunction(&f, k));
  P(cuLaunchKernel(f, 1,1,1, 1,1,1, 0, 0, NULL, NULL)); P(cuCtxSynchronize());
  switch (v) {
  case 1: P(cuDevicePrimaryCtxReset(d)); P(cuDevicePrimaryCtxRelease(d)); break;
  case 2: P(cuCtxSetCurrent(NULL)); P(cuDevicePrimaryCtxReset(d)); P(cuDevicePrimaryCtxRelease(d)); break;
  case 3: P(cuCtxSetCurrent(NULL)); P(cuDevicePrimaryCtxRelease(d)); P(cuDevicePrimaryCtxReset(d)); break;
  case 4: P(cuLibraryUnload(lib)); P(cuCtxSetCurrent(NULL)); P(cuDevicePrimaryCtxRelease(d)); P(cuDevicePrimaryCtxReset(d)); break;
  case 5: P(cuDevicePrimaryCtxReset(d)); break;
  }
  P(cuDevicePrimaryCtxRetain(&c2, d)); printf("  same handle: %d\n", c2 == c);
  P(cuCtxSetCurrent(c2)); P(cuMemAlloc(&p, 1024)); P(cuMemsetD8(p, 1, 1024)); P(cuCtxSynchronize());
  P(cuKernelGetFunction(&f, k));
  return 0;
}
