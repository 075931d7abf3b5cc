/* <limits.h> for NVRTC (cujit stand-in). libcu++ under NVRTC defines CHAR_BIT, INT_MAX and the
** rest as the device sizes them (long is 64 bits); MB_LEN_MAX is added. */
#ifndef CUJIT_STD_LIMITS_H
#define CUJIT_STD_LIMITS_H
#include <cuda/std/climits>
#ifndef MB_LEN_MAX
#define MB_LEN_MAX 16
#endif
#endif
