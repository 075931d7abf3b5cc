/* <stdint.h> for NVRTC (cujit stand-in). libcu++ under NVRTC defines the fixed-width types at
** global scope (int64_t is long long there) with their limits and INTn_C macros: taking them from
** it keeps one definition when both headers are included. */
#ifndef CUJIT_STD_STDINT_H
#define CUJIT_STD_STDINT_H
#include <cuda/std/cstdint>
#endif
