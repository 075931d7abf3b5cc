-- matmul.lua -- C = A B for float32 matrices of any size (row-major): a naive kernel and a
-- shared-memory tiled one (64x64 tiles of C, 4x4 outputs per thread), checked against a float64
-- host reference by relative error, with GFLOP/s for each. `cujit matmul.lua --big` also times
-- 4096^3 and 8192^3 (timing only).
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local naive = cuda.jit("matmul_naive(const float *A, const float *B, float *C, int M, int N, int K)", [[
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; k++) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
]], S.options())

-- 256 threads compute a 64x64 tile of C; thread (tx, ty) owns rows ty + 16 i and columns
-- tx + 16 j (i, j < 4), so stores coalesce and shared-memory reads do not conflict. Tiles past
-- the edges of A and B are filled with zeros, so any M, N, K works.
local tiled = cuda.jit("matmul_tiled(const float *A, const float *B, float *C, int M, int N, int K)", [[
  constexpr int BM = 64, BN = 64, BK = 16;
  __shared__ float As[BK][BM + 4]; // A's tile, transposed
  __shared__ float Bs[BK][BN];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int l = t; l < BM * BK; l += 256) {
      int m = l / BK, k = l % BK, r = row0 + m, kk = k0 + k;
      As[k][m] = (r < M && kk < K) ? A[(size_t)r * K + kk] : 0.0f;
    }
    for (int l = t; l < BK * BN; l += 256) {
      int k = l / BN, c = l % BN, kk = k0 + k, cc = col0 + c;
      Bs[k][c] = (kk < K && cc < N) ? B[(size_t)kk * N + cc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; k++) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[k][ty + 16 * i], b[i] = Bs[k][tx + 16 * i];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
    }
]], S.options())

local absdiff = cuda.elementwise("float x, float y -> float d", "d = fabsf(x - y)", "absdiff",
                                 S.options())

-- Host reference ------------------------------------------------------------------------------

-- Entry (i, j) of A B in float64 (1-based, row-major flat arrays), and the sum of |terms| that
-- scales its rounding error.
local function ref_entry(A, B, N, K, i, j)
  local s, mag = 0.0, 0.0
  local arow, bcol = (i - 1) * K, j
  for k = 1, K do
    local t = A[arow + k] * B[(k - 1) * N + bcol]
    s, mag = s + t, mag + math.abs(t)
  end
  return s, mag
end

-- The largest relative error |C - ref| / sum|terms| over `samples` entries (all entries when
-- samples is nil): the corners and edges of every tile are in any random sample of a few
-- thousand, and the first/last rows and columns are always checked.
local function max_rel_error(A, B, C, M, N, K, samples)
  local worst = 0
  local function check(i, j)
    local s, mag = ref_entry(A, B, N, K, i, j)
    local e = math.abs(C[(i - 1) * N + j] - s) / math.max(mag, 1e-30)
    if e > worst then worst = e end
  end
  if not samples then
    for i = 1, M do for j = 1, N do check(i, j) end end
    return worst
  end
  for _, i in ipairs({1, M}) do for j = 1, N, math.max(1, N // 64) do check(i, j) end end
  for _, j in ipairs({1, N}) do for i = 1, M, math.max(1, M // 64) do check(i, j) end end
  check(M, N)
  for _ = 1, samples do check(math.random(1, M), math.random(1, N)) end
  return worst
end

-- Float32 accumulation over K terms: a few units of 2^-24 times sqrt(K) is typical; K 2^-24 is
-- the worst case. Allow the worst case.
local function tolerance(K)
  return math.max(K, 16) * 2 ^ -24
end

-- Host-side checks of the reference itself, on tiny sizes: it finds a right product right and a
-- wrong one wrong.
do
  local A = {1, 2, 3, 4, 5, 6}          -- 2x3
  local B = {1, 0, 2, 0, 1, 3, 1, 1, 0} -- 3x3
  local C = {4, 5, 8, 10, 11, 23}       -- A B, by hand
  S.check(max_rel_error(A, B, C, 2, 3, 3) == 0, "host reference: 2x3 * 3x3 exact")
  C[5] = 11.01
  S.check(max_rel_error(A, B, C, 2, 3, 3) > tolerance(3), "host reference: a wrong entry is caught")
  -- the tolerance is float32's: an entry off by 1e-5 (ten times its worst case over 3 terms) fails
  C[5] = 11 * (1 + 1e-5)
  S.check(max_rel_error(A, B, C, 2, 3, 3) > tolerance(3), "host reference: an entry off by 1e-5 "
          .. "is caught (the tolerance %.2e is float32's)", tolerance(3))
  S.check(max_rel_error(A, B, C, 2, 3, 3, 200) > tolerance(3), "host reference: sampled check "
          .. "covers the edges")
end

S.host_checks_done()

-- GPU runs ------------------------------------------------------------------------------------

local seed = S.seed()

local function launch_naive(A, B, C, M, N, K)
  naive[{{S.blocks(N, 16), S.blocks(M, 16)}, {16, 16}}](A, B, C, M, N, K)
end

local function launch_tiled(A, B, C, M, N, K)
  tiled[{{S.blocks(N, 64), S.blocks(M, 64)}, 256}](A, B, C, M, N, K)
end

local function gflops(M, N, K, ms)
  return 2 * M * N * K / ms / 1e6
end

-- Normal entries: both signs, so cancellations are exercised.
local function random_matrix(rows, cols, s)
  return cuda.random.normal(cuda.device_array({rows, cols}), s)
end

local function run(M, N, K, check)
  local A, B = random_matrix(M, K, seed), random_matrix(K, N, seed + 1)
  local C1, C2 = cuda.full({M, N}, -12345.5), cuda.full({M, N}, -12345.5)
  local reps = check and 3 or 2
  local ms1 = S.gpu_ms(function() launch_naive(A, B, C1, M, N, K) end, reps, nil, true)
  local ms2 = S.gpu_ms(function() launch_tiled(A, B, C2, M, N, K) end, reps, nil, true)
  S.printf("%dx%d * %dx%d: naive %.3f ms, %.0f GFLOP/s; tiled %.3f ms, %.0f GFLOP/s", M, K, K, N,
           ms1, gflops(M, N, K, ms1), ms2, gflops(M, N, K, ms2))
  if not check then return end
  local hA, hB = A:copy_to_host(), B:copy_to_host()
  local tol = tolerance(K)
  for name, C in pairs({naive = C1, tiled = C2}) do
    local err = max_rel_error(hA, hB, C:copy_to_host(), M, N, K, 3000)
    S.check(err <= tol, "%s %dx%dx%d: max relative error %.2e <= %.2e (3000+ sampled entries)",
            name, M, N, K, err, tol)
  end
  -- Both sum in float32 in different orders; entries are at most about 0.8 K in size.
  local diff, bound = absdiff(C1, C2):max(), 2 * tol * K
  S.check(diff <= bound, "naive and tiled agree on all %d entries (max |diff| %.2e <= %.2e)",
          M * N, diff, bound)
end

-- Small odd sizes, checked on every entry: every edge case of the tiles at once.
for _, size in ipairs({{1, 1, 1}, {17, 3, 65}, {65, 129, 31}}) do
  local M, N, K = size[1], size[2], size[3]
  local A, B = random_matrix(M, K, seed + M), random_matrix(K, N, seed + N)
  local C = cuda.full({M, N}, -12345.5)
  launch_tiled(A, B, C, M, N, K)
  local err = max_rel_error(A:copy_to_host(), B:copy_to_host(), C:copy_to_host(), M, N, K)
  S.check(err <= tolerance(K), "tiled %dx%dx%d, every entry: max relative error %.2e", M, N, K, err)
end

-- On the CPU device (about 1 GFLOP/s here) the same checks at an eighth of the work and less.
if S.on_cpu then
  run(300, 434, 277, true) -- not multiples of the tile
  run(512, 512, 512, true)
else
  run(1000, 1234, 777, true) -- not multiples of the tile
  run(2048, 2048, 2048, true)
end
if arg and arg[1] == "--big" then
  run(4096, 4096, 4096, false)
  run(8192, 8192, 8192, false)
end
S.done()
