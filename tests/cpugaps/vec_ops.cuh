// vec_ops.cuh -- helper_math-style float3 operators over CUDA's vector types.
#pragma once
#include <vector_types.h>
#include <vector_functions.h>

inline __host__ __device__ float3 operator+(float3 a, float3 b) {
  return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
}
inline __host__ __device__ float3 operator*(float s, float3 a) {
  return make_float3(s * a.x, s * a.y, s * a.z);
}
inline __host__ __device__ float dot(float3 a, float3 b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline __host__ __device__ float4 make_point4(float3 p, float w) {
  return make_float4(p.x, p.y, p.z, w);
}
