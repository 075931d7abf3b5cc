-- numba_sim.lua -- cujit's side of cpu_vs_numba_sim.sh: the four kernels of numba_sim.py, on the
-- CPU device (CUJIT_DEVICE=cpu), at the same sizes. Prints one line per kernel:
--   <kernel> <elements> <seconds per launch, best of the repetitions> <check>
-- Each launch is followed by a synchronize; the compile is not timed (done before).
local cuda = require "cujit"
local N = tonumber(arg[1]) or 4096 -- elements (vadd, bsum, wsum); conv: a sqrt(N) x sqrt(N) image
local reps = tonumber(arg[2]) or 20
local side = math.floor(math.sqrt(N) + 0.5)

local vadd = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
]])
local conv = cuda.jit("conv(const float *in, const float *f, float *out, int h, int w)", [[
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float acc = 0.0f;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++) {
      int yy = min(max(y + dy, 0), h - 1), xx = min(max(x + dx, 0), w - 1);
      acc += f[(dy + 1) * 3 + dx + 1] * in[yy * w + xx];
    }
  out[y * w + x] = acc;
]])
local bsum = cuda.jit("bsum(const float *x, float *out)", [[
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 256 + t];
  __syncthreads();
  for (unsigned st = 128; st > 0; st >>= 1) {
    if (t < st) s[t] += s[t + st];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
]])
local wsum = cuda.jit("wsum(const float *x, float *out)", [[
  float v = x[blockIdx.x * 256 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) out[blockIdx.x * 8 + threadIdx.x / 32] = v;
]])

local function best(fn)
  fn()
  cuda.synchronize()
  local b = math.huge
  for _ = 1, reps do
    local t0 = cuda.clock()
    fn()
    cuda.synchronize()
    b = math.min(b, cuda.clock() - t0)
  end
  return b
end

local ones = cuda.full(N, 1.0)
local c = cuda.device_array(N)
local t = best(function() vadd[{(N + 255) // 256, 256}](ones, ones, c, N) end)
print(string.format("vadd %d %.9f %s", N, t, c:copy_to_host()[N] == 2 and "ok" or "WRONG"))

local img = cuda.full(side * side, 1.0)
local filt = cuda.full(9, 1.0 / 9)
local out = cuda.device_array(side * side)
t = best(function() conv[{{(side + 15) // 16, (side + 15) // 16}, {16, 16}}](img, filt, out, side, side) end)
print(string.format("conv %d %.9f %s", side * side, t,
                    math.abs(out:copy_to_host()[side * side] - 1) < 1e-5 and "ok" or "WRONG"))

local sums = cuda.device_array(N // 256)
t = best(function() bsum[{N // 256, 256}](ones, sums) end)
print(string.format("bsum %d %.9f %s", N, t, sums:copy_to_host()[1] == 256 and "ok" or "WRONG"))

local wsums = cuda.device_array(N // 32)
t = best(function() wsum[{N // 256, 256}](ones, wsums) end)
print(string.format("wsum %d %.9f %s", N, t, wsums:copy_to_host()[1] == 32 and "ok" or "WRONG"))
