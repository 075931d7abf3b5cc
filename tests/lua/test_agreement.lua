-- test_agreement.lua -- the same kernels on every device there is (cuda.devices(): the GPUs and
-- the CPU device) give the same results: integers and Philox bits bit for bit, floats within
-- rounding (the GPU's fast paths and fused multiply-adds differ from the host's in the last bits).
-- The set: elementwise arithmetic (integer and float), the library's reductions and random fills,
-- Philox blocks, a shared-memory block reduction with __syncthreads, warp shuffles and votes, and
-- a tiled matrix product. Every device's results are also checked against Lua's own, so a run
-- with one device still checks each kernel; agreement itself needs two devices: without a GPU the
-- script ends as skipped (exit 77), saying that agreement was not checked.
local T = require "helper"
local cuda = require "cujit"

T.need_gpu(cuda) -- without a GPU: the CPU device (or the skip under CUJIT_TEST_NO_CPU=1)

local SOURCE = [[
#include <cujit/random.h>

extern "C" __global__ void int_mix(const int *k, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned v = (unsigned)k[i] * 2654435761u;
    out[i] = (v ^ (v >> 13)) + (unsigned)__popc(v) * 7u + (unsigned)__clz(v | 1u);
  }
}

extern "C" __global__ void float_mix(const float *x, float a, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + sinf(x[i]) * expf(-x[i] * x[i]) + sqrtf(fabsf(x[i]));
}

extern "C" __global__ void philox(unsigned long long seed, unsigned *out, int blocks) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < blocks) {
    uint4 r = cujit::philox4x32_10(make_uint4((unsigned)b, 0u, 7u, 0u),
                                   make_uint2((unsigned)seed, (unsigned)(seed >> 32)));
    out[4 * b] = r.x, out[4 * b + 1] = r.y, out[4 * b + 2] = r.z, out[4 * b + 3] = r.w;
  }
}

// One sum per block of 256: a tree in shared memory, a __syncthreads per step.
extern "C" __global__ void block_sum(const int *x, long long *sums, int n) {
  __shared__ long long part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = part[0];
}

// Per warp: the sum by __shfl_down_sync, the lanes holding odd values by __ballot_sync, and each
// lane's value after a butterfly exchange (__shfl_xor_sync).
extern "C" __global__ void warp_ops(const int *x, int *sums, unsigned *ballots, int *swapped) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = x[i];
  int s = v;
  for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  unsigned odd = __ballot_sync(0xffffffffu, v & 1);
  swapped[i] = __shfl_xor_sync(0xffffffffu, v, 5);
  if ((threadIdx.x & 31) == 0) sums[i / 32] = s, ballots[i / 32] = odd;
}

// C = A B (M x K times K x N, row-major) through 16 x 16 tiles in shared memory.
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K) {
  __shared__ float As[16][16], Bs[16][16];
  int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += 16) {
    int ak = t + threadIdx.x, bk = t + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ak < K ? A[row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = col < N && bk < K ? B[bk * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < 16; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
]]

local N = 4096 + 77 -- not a multiple of a block or a warp
local M, K, P = 37, 53, 29 -- the matrix product's sizes, not multiples of a tile
local WARPS = N // 128 * 4 -- whole blocks of 4 warps: every lane takes part
local SEED = 20261130
local f32 = T.f32

-- The inputs, the same for every device.
local ints = T.random_ints(N, -100000, 100000)
local floats = T.random_floats(N, -3, 3)
local A, B = T.random_floats(M * K, -1, 1), T.random_floats(K * P, -1, 1)

-- Every result of the set on the current device, as Lua tables: {name = {values, kind}}, kind
-- "exact" (integers, Philox bits) or a relative tolerance for floats.
local function run_all()
  local m = cuda.source(SOURCE, {name = "agreement.cu"})
  local r = {}
  local k, x = cuda.to_device(ints, "i32"), cuda.to_device(floats, "f32")
  local blocks = (N + 255) // 256

  local u = cuda.zeros(N, "u32")
  m.int_mix[{blocks, 256}](k, u, N)
  r.int_mix = {u:copy_to_host():totable(), "exact"}

  local y = cuda.zeros(N, "f32")
  m.float_mix[{blocks, 256}](x, 1.5, y, N)
  r.float_mix = {y:copy_to_host():totable(), 1e-5}

  local bits = cuda.zeros(4 * 64, "u32")
  m.philox[{1, 64}](SEED, bits, 64)
  r.philox = {bits:copy_to_host():totable(), "exact"}

  local sums = cuda.zeros(blocks, "i64")
  m.block_sum[{blocks, 256}](k, sums, N)
  r.block_sum = {sums:copy_to_host():totable(), "exact"}

  local wsum, wballot, swapped = cuda.zeros(WARPS, "i32"), cuda.zeros(WARPS, "u32"),
                                 cuda.zeros(WARPS * 32, "i32")
  m.warp_ops[{WARPS // 4, 128}](k, wsum, wballot, swapped)
  r.warp_sum = {wsum:copy_to_host():totable(), "exact"}
  r.warp_ballot = {wballot:copy_to_host():totable(), "exact"}
  r.warp_xor = {swapped:copy_to_host():totable(), "exact"}

  local dA, dB, dC = cuda.to_device(A, "f32"), cuda.to_device(B, "f32"), cuda.zeros(M * P, "f32")
  m.matmul[{{(P + 15) // 16, (M + 15) // 16}, {16, 16}}](dA, dB, dC, M, P, K)
  -- A GPU fuses multiply-adds: each of the K steps may round differently, by up to an ulp of a
  -- sum of up to K products of size 1.
  r.matmul = {dC:copy_to_host():totable(), 2 * K * K * 2 ^ -24}

  -- The library: reductions (integer ones exact), random fills (uniform floats are made from the
  -- Philox bits exactly; normal ones go through log, sqrt and sincos).
  r.reductions_int = {{k:sum(), k:min(), k:max(), k:dot(k)}, "exact"}
  r.reductions_float = {{x:sum(), x:min(), x:max(), x:dot(x)}, 1e-10} -- in double, any order
  r.uniform = {cuda.random.uniform(cuda.device_array(N), SEED, 3):copy_to_host():totable(), "exact"}
  r.normal = {cuda.random.normal(cuda.device_array(N), SEED):copy_to_host():totable(), 1e-5}
  return r
end

-- Lua's results for the parts it can compute exactly or nearly (the random fills are compared
-- between devices only; <cujit/random.h>'s known answers are checked by tests/cpu).
local function reference()
  local r = {}
  local blocks = (N + 255) // 256
  r.int_mix, r.float_mix, r.block_sum = {}, {}, {}
  for i = 1, N do
    local v = (ints[i] & 0xFFFFFFFF) * 2654435761 & 0xFFFFFFFF
    local pop, lead = 0, 31 -- __clz(v | 1)
    for b = 0, 31 do if v >> b & 1 == 1 then pop, lead = pop + 1, 31 - b end end
    r.int_mix[i] = ((v ~ (v >> 13)) + pop * 7 + lead) & 0xFFFFFFFF
    local xi = floats[i]
    r.float_mix[i] = 1.5 * xi + math.sin(xi) * math.exp(-xi * xi) + math.sqrt(math.abs(xi))
  end
  for b = 1, blocks do
    local s = 0
    for i = (b - 1) * 256 + 1, math.min(b * 256, N) do s = s + ints[i] end
    r.block_sum[b] = s
  end
  r.warp_sum, r.warp_ballot, r.warp_xor = {}, {}, {}
  for w = 1, WARPS do
    local s, odd = 0, 0
    for lane = 0, 31 do
      local v = ints[(w - 1) * 32 + lane + 1]
      s, odd = s + v, odd | ((v & 1) << lane)
      r.warp_xor[(w - 1) * 32 + lane + 1] = ints[(w - 1) * 32 + (lane ~ 5) + 1]
    end
    r.warp_sum[w], r.warp_ballot[w] = s, odd
  end
  r.matmul = {}
  for i = 0, M - 1 do
    for j = 0, P - 1 do
      local s = 0
      for k = 0, K - 1 do s = s + f32(A[i * K + k + 1]) * f32(B[k * P + j + 1]) end
      r.matmul[i * P + j + 1] = s
    end
  end
  local isum, imin, imax, idot, fsum, fmin, fmax, fdot = 0, math.huge, -math.huge, 0, 0, math.huge,
                                                         -math.huge, 0
  for i = 1, N do
    local v, f = ints[i], f32(floats[i])
    isum, idot = isum + v, idot + v * v
    imin, imax = math.min(imin, v), math.max(imax, v)
    fsum, fdot = fsum + f, fdot + f * f
    fmin, fmax = math.min(fmin, f), math.max(fmax, f)
  end
  r.reductions_int = {isum, math.tointeger(imin), math.tointeger(imax), idot}
  r.reductions_float = {fsum, fmin, fmax, fdot}
  return r
end

-- The first difference between two lists of results, or nil: integers exactly (and of the same
-- Lua type), floats within `tol` relative to max(1, |b|).
local function difference(a, b, tol)
  if #a ~= #b then return string.format("%d values against %d", #a, #b) end
  for i = 1, #a do
    local x, y = a[i], b[i]
    local same
    if tol == "exact" then
      same = x == y and math.type(x) == math.type(y)
    else
      same = math.abs(x - y) <= tol * math.max(1, math.abs(y))
    end
    if not same then
      return string.format("element %d: %s against %s", i, tostring(x), tostring(y))
    end
  end
end

-- Runs the set on each device, in the order cuda.devices() lists them.
local devices = {}
for _, d in ipairs(cuda.devices()) do devices[#devices + 1] = d end
local results = {}
for _, d in ipairs(devices) do
  cuda.device(d.ordinal)
  print(d.arch == "cpu" and "runs on: CPU device (" .. d.name .. ")"
        or string.format("runs on: GPU %d (%s)", d.ordinal, d.name))
  results[#results + 1] = run_all()
end
local want = reference()

for i, d in ipairs(devices) do
  T.test(string.format("%s: each result against Lua's", d.name), function()
    for name, ref in pairs(want) do
      local got = results[i][name]
      -- The kernels' float arithmetic is float32, Lua's double: a float32 rounding per operation.
      local tol = got[2] == "exact" and "exact" or math.max(got[2], 1e-5)
      local diff = difference(got[1], ref, name:match("^reductions_float") and 1e-6 or tol)
      T.check(not diff, string.format("%s: %s", name, diff))
    end
  end)
end

for i = 2, #devices do
  T.test(string.format("%s agrees with %s", devices[i].name, devices[1].name), function()
    local names = {}
    for name in pairs(results[1]) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local a, b = results[i][name], results[1][name]
      local diff = difference(a[1], b[1], a[2])
      T.check(not diff, string.format("%s: %s", name, diff))
    end
  end)
end

T.run(#devices < 2 and "agreement between devices not checked: only " .. devices[1].name
      .. " is here (no GPU); each kernel was checked against Lua on it" or nil)
