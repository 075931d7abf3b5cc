-- nn_gemm.lua -- the GEMMs of examples/nn.lua, device side and launch: C = op(A) op(B) with the
-- MLP's epilogues (bias, ReLU, the ReLU backward's mask), an optional row of ones appended to
-- op(A) whose output row is op(B)'s column sums (a layer's bias gradient, taken in the same pass
-- as its weight gradient), and split k finished inside the kernel (the last block of a tile to
-- arrive sums the splits' partial products, in a fixed order: runs repeat exactly). Two kernels:
-- a SIMT one (every dtype and device, two tile shapes) and, for f16 and bf16 on a GPU, one on
-- the tensor cores through mma.sync. Also the preamble every nn.lua kernel starts with.
local cuda = require "cujit"

local M = {}

-- The device-side basics of every kernel of nn.lua.
M.PREAMBLE = [==[
#include <cujit/bf16.h>
#include <cujit/half.h>
#include <cujit/reduce.h>
template <class T> struct acc_of { typedef float type; };
template <> struct acc_of<double> { typedef double type; };
// Storage -> accumulator (f16, bf16 and f32 widen to float, f64 stays double).
template <class T> __device__ __forceinline__ typename acc_of<T>::type widen(T x) {
  return (typename acc_of<T>::type)cujit::to_float(x);
}
// The GEMM's epilogue on entry (r, c) of C: bit 1 adds bias[c], bit 2 applies ReLU, bit 4 keeps
// the entry only where mask[r, c] > 0.
template <class T, class Acc>
__device__ __forceinline__ T epilogue(Acc v, const T *bias, const T *mask, int r, int c, int N,
                                      int epi) {
  if (epi & 1) v += widen(bias[c]);
  if (epi & 2) v = v > Acc(0) ? v : Acc(0);
  if ((epi & 4) && !(widen(mask[(size_t)r * N + c]) > Acc(0))) v = 0;
  return T(v);
}
// Whether this block is the last of `blocks` to get here, counted in *done (after its threads'
// writes, made visible to the last); the last one sets *done back to 0 for the next launch.
// Every thread of the block calls it.
__device__ __forceinline__ bool last_block(int *done, int blocks) {
  __shared__ int last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x + threadIdx.y == 0) {
    last = atomicAdd(done, 1) == blocks - 1;
    if (last) *done = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}
]==]

-- What both GEMM kernels share: op(A)'s entry as loaded (with epi bit 8, row M is all ones),
-- where an output entry goes, and the end of a split-k tile.
local GEMM_COMMON = [==[
// Entry (m, k) of op(A), M x K, stored K x M when ta: zero outside, one on row M with epi & 8.
// Zero is T{} (all bits clear in every dtype), not from_float(0.0f): for f16 and bf16 that is a
// conversion (inline assembly the compiler does not fold), which put a branch around each
// load of a tile (with it, the MLP's bf16 epochs at batch 128 took 4 % longer on an H100). Only
// the row of ones converts, in the one block that holds it.
template <int ta, class T>
__device__ __forceinline__ T a_at(const T *A, int m, int k, int M, int K, int epi) {
  if (m < M && k < K) return A[ta ? (size_t)k * M + m : (size_t)m * K + k];
  if (m == M && k < K && (epi & 8)) return cujit::from_float<T>(1.0f);
  return T{};
}
// Entry (k, n) of op(B), K x N, stored N x K when tb; zero outside.
template <int tb, class T>
__device__ __forceinline__ T b_at(const T *B, int k, int n, int K, int N) {
  if (k >= K || n >= N) return T{};
  return B[tb ? (size_t)n * K + k : (size_t)k * N + n];
}
// Entry (r, c) of the product, finished: through the epilogue into C, or (row M with epi & 8,
// the column sums of op(B)) as it is into ones.
template <class T, class Acc>
__device__ __forceinline__ void put(Acc v, T *C, const T *bias, const T *mask, T *ones, int r,
                                    int c, int M, int N, int epi) {
  if (c >= N) return;
  if (r < M) C[(size_t)r * N + c] = epilogue(v, bias, mask, r, c, N, epi);
  else if (r == M && (epi & 8)) ones[c] = T(v);
}
// Split k: after a block has written its partial products (rows < Mx = M + the ones row) of its
// BM x BN tile, the last block of the tile to arrive sums every split's, z = 0, 1, ... in turn
// (the order, not the arrival, fixes the result), puts them, and sets the tile's counter back
// to 0 for the next launch.
template <class T>
__device__ void finish_split(const float *partial, int *counters, T *C, const T *bias,
                             const T *mask, T *ones, int M, int N, int epi, int splits, int tile_m,
                             int tile_n) {
  const int Mx = M + ((epi & 8) ? 1 : 0);
  if (!last_block(&counters[blockIdx.y * gridDim.x + blockIdx.x], splits)) return;
  const long long plane = (long long)Mx * N;
  for (int e = threadIdx.x; e < tile_m * tile_n; e += blockDim.x) {
    const int r = blockIdx.y * tile_m + e / tile_n, c = blockIdx.x * tile_n + e % tile_n;
    if (r >= Mx || c >= N) continue;
    float v = 0.0f;
    for (int z = 0; z < splits; z++) v += __ldcg(&partial[z * plane + (long long)r * N + c]);
    put(v, C, bias, mask, ones, r, c, M, N, epi);
  }
}
]==]

-- The SIMT GEMM: a block computes a BM x BN tile of C, each thread TM x TN entries in groups of
-- up to 4 adjacent rows/columns (so shared-memory reads vectorise and do not conflict); tiles of
-- A and B go through registers into a double-buffered shared memory, the next one loading while
-- the current one is multiplied. Out-of-range loads read zeros, so any M, N, K works.
local SIMT_CORE = [==[
template <int ta, int tb, class T>
__device__ __forceinline__ void gemm_tile(const T *A, const T *B, T *C, const T *bias,
                                          const T *mask, T *ones, int M, int N, int K, int epi,
                                          float *partial, int *counters, int splits,
                                          typename acc_of<T>::type (&As)[2][BK][BM + 4],
                                          typename acc_of<T>::type (&Bs)[2][BK][BN + 4]) {
  typedef typename acc_of<T>::type Acc;
  constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY;
  constexpr int GM = TM < 4 ? TM : 4, GN = TN < 4 ? TN : 4;
  constexpr int LA = BM * BK / NT, LB = BN * BK / NT;
  static_assert(LA * NT == BM * BK && LB * NT == BN * BK && LA % 2 == 0 && LB % 2 == 0,
                "tile loads must divide evenly, in pairs");
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  Acc acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0;
  // The next tile waits in registers as loaded and is widened when stored: widened at the
  // load, a conversion would wait for each load in turn (8 global latencies a step, one after
  // another: bf16 products ran 30-65 % longer than f32 ones on an H200), where raw values let
  // every load of the step be in flight at once, behind the step's FMAs. A thread's elements go
  // in pairs (2p, 2p + 1), adjacent in memory (BM, BN and BK are even, and so is a tile's start):
  // one load of both where the operand's rows have an even length and it is aligned to a pair
  // (all of the MLP's), else one at a time, for the edges and the ones row. A pair waits as raw
  // bits and is split into its elements only when stored: two 2-byte elements split at the load
  // wait for it there (bf16 products took 10-20 % longer than with one load an element, H100).
  struct alignas(2 * sizeof(T)) pair_t { unsigned bits[sizeof(T) / 2]; };
  const bool va = (ta ? M : K) % 2 == 0 && (size_t)A % sizeof(pair_t) == 0;
  const bool vb = (tb ? K : N) % 2 == 0 && (size_t)B % sizeof(pair_t) == 0;
  auto pack = [](T lo, T hi) {
    pair_t p;
    memcpy(&p, &lo, sizeof(T));
    memcpy(reinterpret_cast<char *>(&p) + sizeof(T), &hi, sizeof(T));
    return p;
  };
  auto element = [](const pair_t &p, int h) {
    T x;
    memcpy(&x, reinterpret_cast<const char *>(&p) + h * sizeof(T), sizeof(T));
    return x;
  };
  pair_t ra[LA / 2], rb[LB / 2];
  auto load = [&](int k0) {
#pragma unroll
    for (int l = 0; l < LA / 2; l++) {
      const int e = 2 * (tid + l * NT);
      const int m = row0 + (ta ? e % BM : e / BK), k = k0 + (ta ? e / BM : e % BK);
      ra[l] = va && m < M && k < K
                ? *reinterpret_cast<const pair_t *>(A + (ta ? (size_t)k * M + m : (size_t)m * K + k))
                : pack(a_at<ta>(A, m, k, M, K, epi), a_at<ta>(A, m + ta, k + 1 - ta, M, K, epi));
    }
#pragma unroll
    for (int l = 0; l < LB / 2; l++) {
      const int e = 2 * (tid + l * NT);
      const int k = k0 + (tb ? e % BK : e / BN), n = col0 + (tb ? e / BK : e % BN);
      rb[l] = vb && k < K && n < N
                ? *reinterpret_cast<const pair_t *>(B + (tb ? (size_t)n * K + k : (size_t)k * N + n))
                : pack(b_at<tb>(B, k, n, K, N), b_at<tb>(B, k + tb, n + 1 - tb, K, N));
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int l = 0; l < LA; l++) {
      const int e = 2 * (tid + l / 2 * NT) + l % 2;
      As[buf][ta ? e / BM : e % BK][ta ? e % BM : e / BK] = widen(element(ra[l / 2], l % 2));
    }
#pragma unroll
    for (int l = 0; l < LB; l++) {
      const int e = 2 * (tid + l / 2 * NT) + l % 2;
      Bs[buf][tb ? e % BK : e / BN][tb ? e / BK : e % BN] = widen(element(rb[l / 2], l % 2));
    }
  };
  // Split k (splits > 1): block z sums k in [kb, ke), a whole number of BK steps, into partial.
  const int chunk = ((K + splits - 1) / splits + BK - 1) / BK * BK;
  const int kb = blockIdx.z * chunk, ke = min(K, kb + chunk);
  load(kb);
  store(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = kb; k0 < ke; k0 += BK) {
    const bool more = k0 + BK < ke;
    if (more) load(k0 + BK);
#pragma unroll UNROLL
    for (int k = 0; k < BK; k++) {
      Acc a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i++) a[i] = As[buf][k][(i / GM) * (BM / (TM / GM)) + ty * GM + i % GM];
#pragma unroll
      for (int j = 0; j < TN; j++) b[j] = Bs[buf][k][(j / GN) * (BN / (TN / GN)) + tx * GN + j % GN];
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
    }
    if (more) store(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }
  const int Mx = M + ((epi & 8) ? 1 : 0);
#pragma unroll
  for (int i = 0; i < TM; i++) {
    const int r = row0 + (i / GM) * (BM / (TM / GM)) + ty * GM + i % GM;
#pragma unroll
    for (int j = 0; j < TN; j++) {
      const int c = col0 + (j / GN) * (BN / (TN / GN)) + tx * GN + j % GN;
      if (splits == 1) put(acc[i][j], C, bias, mask, ones, r, c, M, N, epi);
      else if (r < Mx && c < N) partial[((size_t)blockIdx.z * Mx + r) * N + c] = (float)acc[i][j];
    }
  }
  if (splits > 1) finish_split(partial, counters, C, bias, mask, ones, M, N, epi, splits, BM, BN);
}
]==]

-- The first statements of every kernel of nn.lua and of this file. Launched with programmatic
-- dependent launch (pdl = true: M.gemm's o.pdl, nn.lua's nets with pdl) a kernel may start while
-- the kernel before it on the stream still runs: it waits for that one to end (and for its
-- memory) before it reads or writes anything, then lets the kernel after it start at once, so
-- that kernel's launch overlaps this one's run instead of following it. (The driver launches the
-- next kernel only once every block of this one has said so or ended, so its waiting blocks never
-- keep this one's from the SMs.) Without pdl, on older GPUs and on the CPU device both do nothing.
M.ENTRY = "  cudaGridDependencySynchronize();\n  cudaTriggerProgrammaticLaunchCompletion();\n"

-- A kernel's body: M.ENTRY, its shared tiles, then its tile function for the launch's
-- transposes, which are template arguments (each of the four cases gets its own simple
-- addressing; as run-time branches they cost the large SIMT tile 50 more registers).
local function dispatch(shared, tile)
  local call = tile .. "<%d, %d>(A, B, C, bias, mask, ones, M, N, K, epi, partial, counters, "
               .. "splits, As, Bs);"
  return M.ENTRY .. shared .. string.format([==[
  if (ta) {
    if (tb) %s
    else %s
  } else {
    if (tb) %s
    else %s
  }
]==], call:format(1, 1), call:format(1, 0), call:format(0, 1), call:format(0, 0))
end

local SIMT_BODY = dispatch([==[
  typedef typename acc_of<T>::type Acc;
  __shared__ __align__(16) Acc As[2][BK][BM + 4]; // A's tile, transposed (k-major)
  __shared__ __align__(16) Acc Bs[2][BK][BN + 4];
]==], "gemm_tile")

-- The tensor-core GEMM (f16 and bf16, f32 accumulation): a BM x BN tile a block of KS k slices
-- of WM x WN warps, each warp (BM / WM) x (BN / WN) of the tile as m16n8k16 tiles of mma.sync,
-- over every KS-th step of k; the slices' sums are added at the end. Shared memory (dynamic)
-- holds the operands' tiles as they are stored (k or m/n contiguous), read into fragments by
-- ldmatrix (transposing where the operand is not k contiguous). Loads and split k as the SIMT
-- kernel's. On an H100 (bf16, in a graph, batch 1024) the slices and ldmatrix took the first
-- layer's X*W1 from 8.4 to 6.0 us and X^T*dZ1 from 12.2 to 7.3: one slice storing its tiles
-- transposed (eight 2-byte stores a chunk) ran them as slowly with 4, 8 or 16 slices as with 2.
-- Of 1, 2, 4 and 8 slices of 32 or 64 of k, 4 of 64 were fastest on the long products (2 of 64
-- within 0.4 us, 0.2 faster on the short ones). The tile is 32 x 32 of four warps a slice
-- (M.TILES.mma): with 64 x 64 tiles the MLP's small products had a quarter of the blocks, one
-- warp a scheduler waiting on every load, and 280 KB of unrolled epilogue code (32 stores a
-- thread, four transposes) fetched from L2 as they ran, 2-4x slower than the SIMT kernel (ncu,
-- an H200); a warp's 16 x 16 stores 8. Of the 32 x 32 tiles measured on an H100 (6 Dec, one
-- slice: 64 or 32 of k a step, 2 x 2, 1 x 2 or 2 x 1 warps; 16 x 32, 32 x 64 and 64 x 32), 64 of
-- k with 2 x 2 warps ran every MLP product fastest: its k = 128 products in 3.1-3.5 us in a graph
-- against 4.6-5.1 for the SIMT kernel's f32 and 3.9-4.2 for 32 of k.
local MMA_CORE = [==[
template <class T> struct mma_kind;
template <> struct mma_kind<__half> { static constexpr bool bf16 = false; };
template <> struct mma_kind<__nv_bfloat16> { static constexpr bool bf16 = true; };
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  if (mma_kind<T>::bf16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
constexpr int MNT = 32 * WM * WN; // a k slice's threads (the block has KS slices)
constexpr int IT = BM / WM / 16, JT = BN / WN / 8; // a warp's m16 and n8 tiles
constexpr int QA = BM * BK / 8 / MNT, QB = BN * BK / 8 / MNT; // a thread's 16-byte loads a step
static_assert(IT >= 1 && JT % 2 == 0 && IT * 16 * WM == BM && JT * 8 * WN == BN && BK % 16 == 0,
              "warps must tile the block's tile in m16n8k16 pieces, n8 tiles in pairs");
static_assert(QA >= 1 && QB >= 1 && QA * MNT * 8 == BM * BK && QB * MNT * 8 == BN * BK,
              "16-byte loads must divide the tiles evenly");
// Elements pos..pos + 7 (pos a multiple of 8) of line `line` of X, stored `len` elements a
// line: zeros past `lines` or `len`; with ones = 1 the line just past the last reads ones, with
// ones = 2 the position just past the last does (op(A)'s row of ones, A stored k-major or
// m-major). With `whole` (len a multiple of 8, X 16-byte aligned) one 16-byte load; otherwise
// (the ten-wide layer's operands) eight 2-byte ones, each checked, all issued before any is used.
template <class T>
__device__ __forceinline__ uint4 chunk8(const T *X, int line, int pos, int lines, int len, int ones,
                                        bool whole) {
  const unsigned short one = mma_kind<T>::bf16 ? 0x3F80 : 0x3C00;
  if (whole) {
    if (line < lines && pos < len) return *reinterpret_cast<const uint4 *>(X + (size_t)line * len + pos);
    uint4 v = make_uint4(0, 0, 0, 0);
    if (ones == 1 && line == lines && pos < len) {
      const unsigned two = one | (unsigned)one << 16;
      v = make_uint4(two, two, two, two);
    }
    if (ones == 2 && pos == len && line < lines) v.x = one;
    return v;
  }
  unsigned short h[8];
  const unsigned short *row = reinterpret_cast<const unsigned short *>(X) + (size_t)line * len;
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int p = pos + i;
    const bool in = line < lines && p < len;
    h[i] = in ? row[p]
              : (ones == 1 && line == lines && p < len) || (ones == 2 && p == len && line < lines)
                ? one : (unsigned short)0;
  }
  return make_uint4(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16,
                    h[4] | (unsigned)h[5] << 16, h[6] | (unsigned)h[7] << 16);
}
// A tile of R lines (m or n) by BK of k in shared memory, laid out as its operand is stored:
// k contiguous (R lines of BK) or m or n contiguous (BK lines of R), lines padded by MPAD
// elements (the eight 16-byte rows an ldmatrix reads fall in distinct banks). Either way a chunk
// of 8 loaded elements is one 16-byte store: chunk e is at e % (BK / 8) * 8 of line e / (BK / 8),
// or at e % (R / 8) * 8 of line e / (R / 8). (Transposed on the way in, eight 2-byte stores a
// chunk, 4-way bank conflicts, bound the long-k products: X^T*dZ1 at batch 1024 took 11 us
// however its k was spread over a block's warps, an H100.) tile_elems: either layout's room.
__host__ __device__ constexpr int tile_elems(int R) {
  return R * (BK + MPAD) > BK * (R + MPAD) ? R * (BK + MPAD) : BK * (R + MPAD);
}
template <int R, bool kc, class T>
__device__ __forceinline__ void put8(T *S, uint4 q, int e) {
  T *at = kc ? S + e / (BK / 8) * (BK + MPAD) + e % (BK / 8) * 8
             : S + e / (R / 8) * (R + MPAD) + e % (R / 8) * 8;
  *reinterpret_cast<uint4 *>(at) = q;
}
// Four 8 x 8 matrices of 2-byte elements from shared memory, lane l giving the address of row l
// % 8 of matrix l / 8; transposed with trans. Lane l gets row l / 4, elements 2 (l % 4) and 2 (l %
// 4) + 1, of each matrix (of its transpose with trans): an mma.sync fragment register each.
template <bool trans>
__device__ __forceinline__ void ldsm4(unsigned (&r)[4], const void *row) {
  const unsigned at = (unsigned)__cvta_generic_to_shared(row);
  if (trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at));
}
template <int ta, int tb, class T>
__device__ __forceinline__ void mma_tile(const T *A, const T *B, T *C, const T *bias,
                                         const T *mask, T *ones, int M, int N, int K, int epi,
                                         float *partial, int *counters, int splits,
                                         T *Ass, T *Bss) {
  // The block's KS slices of MNT threads each take every KS-th step of k (slice s steps s, s +
  // KS, ...: together KS adjacent steps at a time), each in its own shared memory, and add their
  // sums at the end, slice 1, 2, ... into slice 0's: a fixed order.
  const int slice = threadIdx.x / MNT, tid = threadIdx.x % MNT;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int wm = warp / WN * (BM / WM), wn = warp % WN * (BN / WN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  constexpr int TA = tile_elems(BM), TB = tile_elems(BN);
  T *As = Ass + slice * 2 * TA, *Bs = Bss + slice * 2 * TB; // the slice's two of each
  float acc[IT][JT][4] = {};
  // A step's tiles load as chunks of 8 elements along the operand's contiguous extent into
  // registers (the next step's while this one multiplies), and are stored to shared memory after
  // it. Where that extent is a multiple of 8 (and the operand 16-byte aligned) a chunk is one
  // 16-byte load (eight 2-byte ones, each with its own bounds check, were most of the kernel's
  // instructions); elsewhere (the ten-wide layer's operands) eight 2-byte loads, all in flight
  // at once: loaded element by element straight into shared memory, one load waited for after
  // another, those products took 6-7.5 us against 5 for their 128-wide neighbours (ncu, an
  // H100, batch 128).
  const bool va = (ta ? M : K) % 8 == 0 && (size_t)A % 16 == 0;
  const bool vb = (tb ? K : N) % 8 == 0 && (size_t)B % 16 == 0;
  uint4 qa[QA], qb[QB];
  auto load = [&](int k0) {
#pragma unroll
    for (int l = 0; l < QA; l++) {
      const int e = tid + l * MNT;
      qa[l] = ta ? chunk8(A, k0 + e / (BM / 8), row0 + e % (BM / 8) * 8, K, M, 2, va)
                 : chunk8(A, row0 + e / (BK / 8), k0 + e % (BK / 8) * 8, M, K, (epi & 8) ? 1 : 0,
                          va);
    }
#pragma unroll
    for (int l = 0; l < QB; l++) {
      const int e = tid + l * MNT;
      qb[l] = tb ? chunk8(B, col0 + e / (BK / 8), k0 + e % (BK / 8) * 8, N, K, 0, vb)
                 : chunk8(B, k0 + e / (BN / 8), col0 + e % (BN / 8) * 8, K, N, 0, vb);
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int l = 0; l < QA; l++) put8<BM, !ta>(As + buf * TA, qa[l], tid + l * MNT);
#pragma unroll
    for (int l = 0; l < QB; l++) put8<BN, tb == 1>(Bs + buf * TB, qb[l], tid + l * MNT);
  };
  const int q8 = lane / 8, r8 = lane % 8; // the ldmatrix row this lane addresses
  const int chunk = ((K + splits - 1) / splits + BK - 1) / BK * BK;
  const int kb = blockIdx.z * chunk, ke = min(K, kb + chunk);
  // Every slice goes round the loop as often as the first (one barrier for the block); a slice
  // whose step lies past the split's end loads and multiplies nothing.
  const int rounds = ((ke - kb + BK - 1) / BK + KS - 1) / KS;
  int k0 = kb + slice * BK;
  if (k0 < ke) {
    load(k0);
    store(0);
  }
  __syncthreads();
  int buf = 0;
  for (int round = 0; round < rounds; round++, k0 += KS * BK) {
    const bool more = k0 + KS * BK < ke;
    if (more) load(k0 + KS * BK);
    if (k0 < ke) // a live step
#pragma unroll
      for (int ks = 0; ks < BK; ks += 16) {
        // a[i]: rows g, g + 8 by k 2t, 2t + 8 of m16 tile i; b[j], b[j + 1]: n8 tiles j and j + 1
        unsigned a[IT][4], b[JT][2];
        const T *SA = As + buf * TA, *SB = Bs + buf * TB;
#pragma unroll
        for (int i = 0; i < IT; i++) {
          const int r = wm + i * 16 + q8 % 2 * 8, kk = ks + q8 / 2 * 8;
          if (ta) ldsm4<true>(a[i], SA + (kk + r8) * (BM + MPAD) + r);
          else ldsm4<false>(a[i], SA + (r + r8) * (BK + MPAD) + kk);
        }
#pragma unroll
        for (int j = 0; j < JT; j += 2) {
          const int n = wn + j * 8 + q8 / 2 * 8, kk = ks + q8 % 2 * 8;
          unsigned f[4];
          if (tb) ldsm4<false>(f, SB + (n + r8) * (BK + MPAD) + kk);
          else ldsm4<true>(f, SB + (kk + r8) * (BN + MPAD) + n);
          b[j][0] = f[0], b[j][1] = f[1], b[j + 1][0] = f[2], b[j + 1][1] = f[3];
        }
#pragma unroll
        for (int i = 0; i < IT; i++)
#pragma unroll
          for (int j = 0; j < JT; j++) mma16816<T>(acc[i][j], a[i], b[j][0], b[j][1]);
      }
    if (more) store(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }
  if (KS > 1) { // slices 1.. leave their sums in the (no longer read) shared memory for slice 0
    static_assert((KS - 1) * BM * BN * sizeof(float) <= KS * 2 * TA * sizeof(T),
                  "room for the slices' sums");
    float *sums = reinterpret_cast<float *>(Ass);
    constexpr int PER = IT * JT * 4; // a thread's sums, stored a lane apart
#pragma unroll
    for (int e = 0; e < PER; e++)
      if (slice > 0) sums[((slice - 1) * PER + e) * MNT + tid] = (&acc[0][0][0])[e];
    __syncthreads();
    if (slice == 0)
      for (int s = 0; s < KS - 1; s++) {
#pragma unroll
        for (int e = 0; e < PER; e++) (&acc[0][0][0])[e] += sums[(s * PER + e) * MNT + tid];
      }
  }
  // acc[i][j]: rows g and g + 8 of m16 tile i, columns 2t and 2t + 1 of n8 tile j
  const int Mx = M + ((epi & 8) ? 1 : 0);
  if (slice == 0) {
#pragma unroll
    for (int i = 0; i < IT; i++)
#pragma unroll
      for (int j = 0; j < JT; j++)
#pragma unroll
        for (int q = 0; q < 4; q++) {
          const int r = row0 + wm + i * 16 + g + (q / 2) * 8;
          const int c = col0 + wn + j * 8 + 2 * t + q % 2;
          if (splits == 1) put(acc[i][j][q], C, bias, mask, ones, r, c, M, N, epi);
          else if (r < Mx && c < N) partial[((size_t)blockIdx.z * Mx + r) * N + c] = acc[i][j][q];
        }
  }
  if (splits > 1) finish_split(partial, counters, C, bias, mask, ones, M, N, epi, splits, BM, BN);
}
]==]

local MMA_BODY = dispatch([==[
  // Each k slice's two tiles of op(A), then each one's two of op(B) (tile_elems each), in dynamic
  // shared memory (M.mma_shared bytes: it may pass the 48 KiB of static arrays)
  extern __shared__ __align__(16) unsigned char mma_shared[];
  T *As = reinterpret_cast<T *>(mma_shared), *Bs = As + KS * 2 * tile_elems(BM);
]==], "mma_tile")

local SIGNATURE = "%s(const T *A, const T *B, T *C, const T *bias, const T *mask, T *ones, int M, "
                  .. "int N, int K, int ta, int tb, int epi, float *partial, int *counters, "
                  .. "int splits)"

-- The SIMT kernel's two tile shapes: 128 x 128 (8 x 8 per thread) for large products, 32 x 32
-- (2 x 2 per thread) for the MLP's small ones, where a large tile would leave most of the GPU
-- idle. The large one keeps its k loop rolled and 128 registers (ptxas: no spills), so two
-- blocks fit on an SM; unrolled, ptxas hoists the shared loads of all 8 steps into 167 registers
-- (one block). The tensor-core kernel's tile: 32 x 32 of 2 x 2 warps, 64 of k a step, 4 k slices
-- (512 threads, 80 KiB of shared memory: M.mma_shared), lines padded by MPAD elements. The
-- upper-case entries reach the kernels as -D macros.
M.TILES = {
  large = {BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, UNROLL = 1, registers = 128},
  small = {BM = 32, BN = 32, BK = 32, TM = 2, TN = 2, UNROLL = 8},
  mma = {BM = 32, BN = 32, BK = 64, WM = 2, WN = 2, KS = 4, MPAD = 8},
}

-- A tile's -D macros, sorted (so that the cache key is the same from run to run).
local function tile_defines(t)
  local defines = {}
  for name, v in pairs(t) do
    if name:match("^%u+$") then defines[#defines + 1] = name .. "=" .. v end
  end
  table.sort(defines)
  return defines
end

-- The GEMM kernels: gemm_large, gemm_small and (with tensor_cores) gemm_mma, compiled by `jit`
-- (a function of signature, body and extra options, as cuda.jit takes them).
function M.kernels(jit, tensor_cores)
  local k = {}
  for _, size in ipairs({"large", "small"}) do
    local t = M.TILES[size]
    k["gemm_" .. size] = jit(string.format(SIGNATURE, "gemm_" .. size), SIMT_BODY,
                             {defines = tile_defines(t),
                              preamble = M.PREAMBLE .. GEMM_COMMON .. SIMT_CORE,
                              flags = t.registers and {"-maxrregcount=" .. t.registers}})
  end
  if tensor_cores then
    k.gemm_mma = jit(string.format(SIGNATURE, "gemm_mma"), MMA_BODY,
                     {defines = tile_defines(M.TILES.mma),
                      preamble = M.PREAMBLE .. GEMM_COMMON .. MMA_CORE})
  end
  return k
end

-- The dynamic shared memory of the tensor-core kernel with tile t (M.TILES.mma), bytes: a pair of
-- tiles of op(A) and of op(B) for each of its KS slices, 2-byte elements, rows padded by MPAD.
function M.mma_shared(t)
  local function tile(r) return math.max(r * (t.BK + t.MPAD), t.BK * (r + t.MPAD)) end -- tile_elems
  return t.KS * 2 * (tile(t.BM) + tile(t.BN)) * 2
end

-- A block's threads for tile t: KS k slices of WM x WN warps (the tensor-core kernel), or one
-- thread a TM x TN piece of the tile (the SIMT kernels).
function M.threads(t)
  return t.WM and 32 * t.WM * t.WN * t.KS or (t.BM // t.TM) * (t.BN // t.TN)
end

-- The least steps of k (of M.TILES.mma.BK) a product on the tensor-core kernel needs to be split.
M.MMA_SPLIT_STEPS = 16

-- The work space of split k: room for the partial products of `values` entries (8 splits of the
-- largest product) and one counter per tile, all zero.
function M.work(values, tiles)
  return {partial = cuda.zeros(values, "f32"), counters = cuda.zeros(tiles, "i32")}
end

-- A one-element array of dtype dt standing for an argument a launch does not use (k's, kept).
local function dummy(k, dt)
  k.dummies = k.dummies or {}
  k.dummies[dt] = k.dummies[dt] or cuda.zeros(1, dt)
  return k.dummies[dt]
end

-- Whether the tensor-core kernel takes products stored in dtype: f16 and bf16, where it is
-- compiled (k.gemm_mma: a GPU of sm_80 or later).
function M.mma_takes(k, dtype)
  return k.gemm_mma ~= nil and (dtype == "f16" or dtype == "bf16")
end

-- The launch of C = op(A) op(B) (m x n, inner size kk) with epilogue bits epi on stream s (bits 1
-- bias, 2 ReLU, 4 mask as the preamble's epilogue; 8 appends a row of ones to op(A), whose
-- output row, the column sums of op(B), goes to o.ones). o: bias, mask, ones (arrays of C's
-- dtype where their bit is set), sms (132 by default: the tile choice), work (M.work: split k
-- allowed), mma (f16 and bf16 on the tensor-core kernel, where k.gemm_mma is compiled: nn.lua's
-- nets ask for it in their "mma" and "auto" modes), pdl (launched with programmatic dependent
-- launch, M.ENTRY: an sm_90 GPU or the CPU device). Otherwise large SIMT tiles once there are
-- at least `sms` of them. When the tiles still leave SMs idle and k is long (the first layer's 784,
-- weight gradients at batch 1024), k is split over up to 8 blocks (each of 128 or more of k)
-- when the work space has room: a long k loop of few blocks is bound by the latency of its
-- loads, not by arithmetic (on the tensor-core kernel only loops of M.MMA_SPLIT_STEPS steps or
-- more, at least four ways). Returns the kernel's tile ("large", "small" or "mma") and the
-- number of splits. One work space serves one stream: its counters are in use while a split
-- product runs.
function M.gemm(k, s, A, B, C, m, n, kk, ta, tb, epi, o)
  o = o or {}
  local sms, dt = o.sms or 132, C.dtype
  local mx = m + (epi & 8 ~= 0 and 1 or 0)
  local size
  if o.mma and M.mma_takes(k, dt) then
    size = "mma"
  else
    local large = M.TILES.large
    size = ((mx + large.BM - 1) // large.BM) * ((n + large.BN - 1) // large.BN) < sms and "small"
           or "large"
  end
  local t = M.TILES[size]
  local gx, gy = (n + t.BN - 1) // t.BN, (mx + t.BM - 1) // t.BM
  local splits, work = 1, o.work
  if work and size ~= "large" and dt ~= "f64" and work.counters.size >= gx * gy then
    local steps = (kk + t.BK - 1) // t.BK
    -- two SIMT blocks an SM; one of the tensor-core kernel's (KS slices of warps), in powers of
    -- two (an H100, bf16, in a graph: the 128-wide layer's weight gradient at batch 1024, 20
    -- tiles, in 5.7 us split four ways against 7.9 eight ways; the ten-wide one's, 5 tiles, 5.0
    -- eight ways against 5.3 four ways)
    local most = (2 * sms) // (gx * gy)
    if size == "mma" then
      most = 1
      while most * 2 * gx * gy <= sms do most = most * 2 end
    end
    splits = math.max(1, math.min(8, most, steps * t.BK // 128, work.partial.size // (mx * n)))
    local chunk = ((kk + splits - 1) // splits + t.BK - 1) // t.BK * t.BK
    splits = (kk + chunk - 1) // chunk -- no split left without work
    -- The tensor-core kernel's split end (partials written, the tile's last block summing them)
    -- costs more than short k loops gain (an H100, bf16, in a graph: the first layer's X*W1, 13
    -- steps of k, in 6.0 us unsplit against 10.4 split two ways at batch 1024; its X^T*dZ1 at
    -- 1024, 16 steps, 100 tiles, 7.3 against 11.5 split two ways); split at least four ways,
    -- long loops pay (the 128- and ten-wide layers' weight gradients at 1024, 16 steps, 20 and 5
    -- tiles: 5.7 and 5.0 us split four and eight ways against 6.7 and 7.1 unsplit).
    if size == "mma" and (steps < M.MMA_SPLIT_STEPS or splits < 4) then splits = 1 end
  end
  local threads = M.threads(t)
  local partial = splits > 1 and work.partial or dummy(k, "f32")
  local counters = splits > 1 and work.counters or dummy(k, "i32")
  local none = dummy(k, dt)
  k["gemm_" .. size][{grid = {gx, gy, splits}, block = threads, stream = s, pdl = o.pdl or nil,
                      shared = size == "mma" and M.mma_shared(t) or nil}](
    A, B, C, o.bias or none, o.mask or none, o.ones or none, m, n, kk, ta, tb, epi, partial,
    counters, splits)
  return size, splits
end

-- Run as a script (`cujit nn_gemm.lua`, as ctest does): compile the kernels for sm_90, the
-- tensor-core one in f16 and bf16, the SIMT ones in f32 (the example is mlp.lua).
if ... ~= "nn_gemm" then
  local k = M.kernels(function(signature, body, extra)
    extra.arch = "sm_90"
    return cuda.jit(signature, body, extra)
  end, true)
  for name, kernel in pairs(k) do
    for _, dt in ipairs(name == "gemm_mma" and {"f16", "bf16"} or {"f32"}) do kernel:specialize(dt) end
  end
  print("nn_gemm.lua: GEMM kernels compiled for sm_90 (mma in f16 and bf16); the example is mlp.lua")
end

return M
