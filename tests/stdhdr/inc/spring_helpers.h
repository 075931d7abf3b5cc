// spring_helpers.h -- the project's helper header, shared by its host program and its kernels:
// it brings the C and C++ headers the host side wants, and a hash both sides use. Found through
// include_dirs, as a sample's common/inc is.
#ifndef SPRING_HELPERS_H
#define SPRING_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#define STEP_BLOCK 256

// Integer hash of an index (a murmur-style finalizer): exact on every device.
__host__ __device__ inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x7feb352dU;
  h ^= h >> 15;
  h *= 0x846ca68bU;
  h ^= h >> 16;
  return h;
}

#endif
