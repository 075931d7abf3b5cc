/*
** cujit/float_conv.h -- cujit::to_float and cujit::from_float<T> for float and double: the generic
** part that cujit/half.h (__half) and cujit/bf16.h (__nv_bfloat16) each add their type's overloads
** to, so that a kernel generic in its storage type converts any of them the same way.
*/
#pragma once

namespace cujit {
__device__ __forceinline__ float to_float(float f) {
  return f;
}
__device__ __forceinline__ double to_float(double d) {
  return d;
}
template <class T> __device__ __forceinline__ T from_float(float f) {
  return (T)f;
}
} // namespace cujit
