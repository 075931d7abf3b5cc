/*
** kernels.h -- the CUDA C kernels the CPU-device tests run (tests/cpu/test_cpu_device.c), written
** as cujit hands them to a compiler: a #line naming each kernel's body, so that messages say
** "line N" of it. MAIN_SRC must work; ERROR_SRC holds the kernels whose failures are expected.
*/
#ifndef CUJIT_TEST_CPU_KERNELS_H
#define CUJIT_TEST_CPU_KERNELS_H

#define KERNEL(name, params, body)                                                                 \
  "#line 1 \"" name ":signature\"\nextern \"C\" __global__ void " name "(" params ") {\n"          \
  "#line 1 \"" name "\"\n" body "\n}\n"

static const char *const MAIN_KERNELS[] = {
    "vadd",     "matmul",  "tree_sum", "warp_sum", "shuffles", "votes",   "atomics",
    "dyn_rev",  "ns_rev",  "racy",     "idx3",     "philox",   "printer", "half",
    "sync_ops", "lib_sum", "cond_bar", "whereami", "wred"};
// clang-format off
static const char MAIN_SRC[] =
    "#include <cujit/prelude.h>\n#include <cujit/reduce.h>\n#include <cujit/random.h>\n"
    "#include <cujit/half.h>\n"
    /* what kernels written for the toolkit include: mapped, or standard headers after the prelude */
    "#include <cuda_runtime.h>\n#include <math_constants.h>\n#include <memory>\n#include <algorithm>\n"
    "__constant__ float pi_const = CUDART_PI_F;\n"
    "extern __shared__ int ns_buf[];\n" /* dynamic shared memory declared at namespace scope */
    KERNEL("vadd", "const float *a, const float *b, float *c, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) c[i] = a[i] + b[i];")
    /* C (m x n) = A (m x k) B (k x n), 16 x 16 tiles through shared memory. */
    KERNEL("matmul", "const float *A, const float *B, float *C, int m, int n, int k",
           "  __shared__ float As[16][16], Bs[16][16];\n"
           "  int tx = threadIdx.x, ty = threadIdx.y;\n"
           "  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;\n"
           "  float acc = 0;\n"
           "  for (int t = 0; t < (k + 15) / 16; t++) {\n"
           "    int ac = t * 16 + tx, br = t * 16 + ty;\n"
           "    As[ty][tx] = (row < m && ac < k) ? A[row * k + ac] : 0.0f;\n"
           "    Bs[ty][tx] = (br < k && col < n) ? B[br * n + col] : 0.0f;\n"
           "    __syncthreads();\n"
           "    for (int j = 0; j < 16; j++) acc += As[ty][j] * Bs[j][tx];\n"
           "    __syncthreads();\n"
           "  }\n"
           "  if (row < m && col < n) C[row * n + col] = acc;")
    /* One element per thread, a shared-memory tree with a barrier per step. */
    KERNEL("tree_sum", "const int *x, int *out, int n",
           "  __shared__ int s[256];\n"
           "  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
           "  s[t] = i < (unsigned)n ? x[i] : 0;\n"
           "  __syncthreads();\n"
           "  for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {\n"
           "    if (t < st) s[t] += s[t + st];\n"
           "    __syncthreads();\n"
           "  }\n"
           "  if (t == 0) out[blockIdx.x] = s[0];")
    /* Grid-stride accumulation, a warp-shuffle finish, one atomic per warp; and reduce.h's
    ** block_sum over whatever block shape the launch gives. */
    KERNEL("warp_sum", "const int *x, unsigned long long *out, long long *blocks, int n",
           "  long long v = 0;\n"
           "  for (long long i : cujit::grid_stride(n)) v += x[i];\n"
           "  long long b = cujit::block_sum(v);\n"
           "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
           "  if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)v);\n"
           "  if (threadIdx.x == 0) blocks[blockIdx.x] = b;")
    KERNEL("shuffles", "const int *x, int *out",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x, l = threadIdx.x & 31, v = x[i];\n"
           "  out[5 * i + 0] = __shfl_sync(0xffffffffu, v, (l * 7) % 32);\n"
           "  out[5 * i + 1] = __shfl_up_sync(0xffffffffu, v, 3);\n"
           "  out[5 * i + 2] = __shfl_down_sync(0xffffffffu, v, 5);\n"
           "  out[5 * i + 3] = __shfl_xor_sync(0xffffffffu, v, 9);\n"
           "  out[5 * i + 4] = __shfl_sync(0xffffffffu, v, 3, 16);")
    KERNEL("votes", "const int *x, unsigned *out",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  out[3 * i + 0] = __ballot_sync(0xffffffffu, x[i] & 1);\n"
           "  out[3 * i + 1] = __any_sync(0xffffffffu, x[i] % 61 == 0);\n"
           "  out[3 * i + 2] = __all_sync(0xffffffffu, x[i] % 29 != 0);\n"
           "  __syncwarp();")
    KERNEL(
           "atomics",
           "const int *x, int n, int *ci, unsigned long long *cu, float *cf, double *cd, "
           "int *mx, int *mn, unsigned *hist, unsigned *orv, int *xorv, double *dmx",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i >= n) return;\n"
           "  atomicAdd(ci, 1);\n"
           "  atomicSub(ci, 2);\n"
           "  atomicAdd(cu, (unsigned long long)x[i]);\n"
           "  atomicAdd(cf, 1.0f);\n"
           "  atomicAdd(cd, (double)x[i]);\n"
           "  atomicMax(mx, x[i]);\n"
           "  atomicMin(mn, x[i]);\n"
           "  atomicAdd(&hist[x[i] % 16], 1u);\n"
           "  atomicOr(orv, 1u << (x[i] % 32));\n"
           "  atomicXor(xorv, x[i]);\n"
           "  atomicMax(dmx, (double)x[i] * 0.5);")
    KERNEL("dyn_rev", "const float *x, float *y",
           "  extern __shared__ __align__(sizeof(float4)) float buf[];\n"
           "  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
           "  buf[t] = x[i];\n"
           "  __syncthreads();\n"
           "  y[i] = buf[blockDim.x - 1 - t];")
    KERNEL("ns_rev", "const int *x, int *y",
           "  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
           "  ns_buf[t] = x[i];\n"
           "  __syncthreads();\n"
           "  y[i] = ns_buf[blockDim.x - 1 - t];")
    /* Missing __syncthreads: each thread reads its neighbour's slot, which may not be written. */
    KERNEL("racy", "const int *x, int *y",
           "  __shared__ int s[128];\n"
           "  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
           "  s[t] = x[i];\n"
           "  y[i] = s[(t + 1) % blockDim.x];")
    KERNEL(
           "idx3", "int *out",
           "  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n"
           "  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
           "  unsigned i = b * blockDim.x * blockDim.y * blockDim.z + t;\n"
           "  out[i] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z + 1000 * blockIdx.x +\n"
           "           10000 * blockIdx.y + 100000 * blockIdx.z;\n"
           "  __syncthreads();\n"
           "  if (t == 0) out[i] += 0;")
    KERNEL("philox", "const unsigned *in, unsigned *out, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i >= n) return;\n"
           "  const unsigned *c = in + 6 * i;\n"
           "  uint4 r = cujit::philox4x32_10(make_uint4(c[0], c[1], c[2], c[3]),\n"
           "                                 make_uint2(c[4], c[5]));\n"
           "  out[4 * i] = r.x, out[4 * i + 1] = r.y;\n"
           "  out[4 * i + 2] = r.z, out[4 * i + 3] = r.w;")
    KERNEL("printer", "const int *x",
           "  if (threadIdx.x == 1) printf(\"block %d says %d\\n\", blockIdx.x, x[blockIdx.x]);")
    KERNEL("half", "const float *x, unsigned short *bits, float *back, int n",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i >= n) return;\n"
           "  __half h = __float2half(x[i]);\n"
           "  bits[i] = __half_as_ushort(h);\n"
           "  back[i] = __half2float(__hadd(h, __hmul(h, __float2half(0.5f))));")
    KERNEL("sync_ops", "const int *x, int *out",
           "  int p = x[blockIdx.x * blockDim.x + threadIdx.x] % 3 == 0;\n"
           "  int c = __syncthreads_count(p), a = __syncthreads_and(p);\n"
           "  int o = __syncthreads_or(p);\n"
           "  int a1 = __syncthreads_and(1), o0 = __syncthreads_or(0);\n"
           "  if (threadIdx.x == 7) {\n"
           "    out[5 * blockIdx.x] = c, out[5 * blockIdx.x + 1] = a;\n"
           "    out[5 * blockIdx.x + 2] = o, out[5 * blockIdx.x + 3] = a1, out[5 * "
           "blockIdx.x + 4] = o0;\n"
           "  }")
    /* reduce.h's block_min and block_sum over a block that is not a multiple of 32. */
    KERNEL("lib_sum", "const double *x, double *sums, double *mins",
           "  double v = x[blockIdx.x * blockDim.x + threadIdx.x];\n"
           "  double s = cujit::block_sum(v), m = cujit::block_min(v);\n"
           "  if (threadIdx.x == 0) sums[blockIdx.x] = s, mins[blockIdx.x] = m;")
    /* A barrier in some blocks only: plain blocks and fiber blocks follow each other on a worker.
     */
    KERNEL("cond_bar", "const int *x, int *y",
           "  __shared__ int s[128];\n"
           "  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
           "  if (blockIdx.x % 3 == 1) {\n"
           "    s[t] = x[i];\n"
           "    __syncthreads();\n"
           "    y[i] = s[blockDim.x - 1 - t];\n"
           "  } else {\n"
           "    y[i] = x[i] + 1;\n"
           "  }")
    /* sm_80's warp reductions and the match operations. */
    KERNEL("wred", "const int *x, int *out",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x, v = x[i], p;\n"
           "  out[8 * i + 0] = __reduce_add_sync(0xffffffffu, v);\n"
           "  out[8 * i + 1] = __reduce_min_sync(0xffffffffu, v);\n"
           "  out[8 * i + 2] = (int)__reduce_max_sync(0xffffffffu, (unsigned)v);\n"
           "  out[8 * i + 3] = (int)__reduce_xor_sync(0xffffffffu, (unsigned)v);\n"
           "  out[8 * i + 4] = (int)__match_any_sync(0xffffffffu, v & 3);\n"
           "  out[8 * i + 5] = (int)__match_all_sync(0xffffffffu, v & 3, &p);\n"
           "  out[8 * i + 6] = p;\n"
           "  out[8 * i + 7] = (int)__match_all_sync(0xffffffffu, 7, &p) + p;")
    /* What cj_cpu_where tells a fault handler on a worker thread. */
    KERNEL("whereami", "char *out",
           "  if (blockIdx.x == 2 && threadIdx.y == 1 && threadIdx.x == 5)\n"
           "    ::cj_cpu::where_now(::cj_cpu::me(), out, 64);");
// clang-format on

static const char *const ERROR_KERNELS[] = {
    "ret_early", "two_bars", "warp_ret", "plain_warp", "trapper", "fiber_trap", "asserter", "copy",
};
// clang-format off
static const char ERROR_SRC[] =
    "#include <cassert>\n"
    KERNEL("ret_early", "int *y",
           "  if (threadIdx.x == 5) return;\n"
           "  __syncthreads();\n"
           "  y[threadIdx.x] = 1;")
    KERNEL("two_bars", "int *y",
           "  if (threadIdx.x < 64)\n"
           "    __syncthreads();\n"
           "  else\n"
           "    __syncthreads();\n"
           "  y[threadIdx.x] = 1;")
    KERNEL("warp_ret", "int *y",
           "  int v = threadIdx.x;\n"
           "  if (threadIdx.x == 3) return;\n"
           "  v += __shfl_down_sync(0xffffffffu, v, 1);\n"
           "  y[threadIdx.x] = v;")
    KERNEL("plain_warp", "int *y",
           "  if (threadIdx.x == 0) return;\n"
           "  int v = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);\n"
           "  y[threadIdx.x] = v;")
    KERNEL("trapper", "int *y",
           "  if (blockIdx.x == 3 && threadIdx.x == 7) __trap();\n"
           "  y[blockIdx.x * blockDim.x + threadIdx.x] = 1;")
    KERNEL("fiber_trap", "int *y",
           "  __syncthreads();\n"
           "  if (threadIdx.x == 40) __trap();\n"
           "  __syncthreads();\n"
           "  y[threadIdx.x] = 1;")
    KERNEL("asserter", "const int *x, int *y",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  assert(x[i] >= 0);\n"
           "  y[i] = x[i];")
    KERNEL("copy", "const int *x, int *y",
           "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  __syncthreads();\n"
           "  y[i] = x[i];");
// clang-format on

/* Stack overflows, in a module of their own: on fresh workers each thread's stack is a known
** slot, none at the bottom of its group (where the guard page would end the process). */
static const char *const OVERFLOW_KERNELS[] = {"deep_plain", "deep_fiber"};
// clang-format off
static const char OVERFLOW_SRC[] =
    /* a local array larger than a thread's 128 KiB stack, written through; a do-while, which
    ** has no time-slice tick, so that deep_plain's thread overflows in the plain loop */
    "__device__ __noinline__ int deep(int n) {\n"
    "  volatile char buf[150 * 1024];\n"
    "  int i = (int)sizeof buf - 1;\n"
    "  do buf[i] = (char)(i + n); while (--i >= 0);\n"
    "  return buf[n];\n"
    "}\n"
    KERNEL("deep_plain", "int *y",
           "  if (blockIdx.x == 1 && threadIdx.x == 3) y[0] = deep(150);")
    KERNEL("deep_fiber", "int *y",
           "  __syncthreads();\n"
           "  if (threadIdx.x == 3) y[0] = deep(150);\n"
           "  __syncthreads();");
// clang-format on

#endif
