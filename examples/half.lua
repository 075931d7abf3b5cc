-- half.lua -- half precision: a matrix-vector product y = A x with A and x stored as __half
-- (half the memory traffic of float) and the products accumulated in float, against the same
-- product in float32 and a float64 host reference on sampled rows. Also shown: accumulating in
-- half instead, which loses far more.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local ROWS, COLS = 8192, 4096
if S.on_cpu then ROWS, COLS = 2048, 2048 end -- an eighth of the work: seconds, not tens

-- One warp per row: lanes stride the columns, then a warp sum. `step` adds term j to acc.
local function matvec(name, elem, acc_type, step)
  return cuda.jit(string.format("%s(const %s *A, const %s *x, float *y, int rows, int cols)", name,
                                elem, elem), string.format([[
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x %% 32;
  if (row >= rows) return;
  %s acc = cujit::from_float<%s>(0.0f);
  for (int j = lane; j < cols; j += 32) {
    const size_t at = (size_t)row * cols + j;
    %s;
  }
  float total = cujit::warp_sum(cujit::to_float(acc));
  if (lane == 0) y[row] = total;
]], acc_type, acc_type, step), S.options({
    preamble = "#include <cujit/half.h>\n#include <cujit/reduce.h>\n"}))
end

local mv_half = matvec("matvec_half", "__half", "float",
                       "acc += __half2float(A[at]) * __half2float(x[j])")
local mv_half_acc = matvec("matvec_half_acc", "__half", "__half",
                           "acc = __float2half(__half2float(acc) + "
                           .. "__half2float(__float2half(__half2float(A[at]) * __half2float(x[j]))))")
local mv_float = matvec("matvec_float", "float", "float", "acc += A[at] * x[j]")
local to_half = cuda.elementwise("float a -> __half h", "h = __float2half(a)", "to_half",
                                 S.options())

-- IEEE half rounding on the host (round to nearest even), to check the device's conversions.
local function half(v)
  if v ~= v or v == 0 then return v end
  local m, e = math.frexp(math.abs(v)) -- |v| = m 2^e, m in [0.5, 1)
  local step = 2.0 ^ (math.max(e, -13) - 11) -- 11 significant bits; subnormals below 2^-14
  local q = math.abs(v) / step
  local r = math.floor(q)
  if q - r > 0.5 or (q - r == 0.5 and r % 2 == 1) then r = r + 1 end
  local out = r * step
  if out > 65504 then out = math.huge end
  return v < 0 and -out or out
end

S.check(half(1 / 3) == 0.333251953125 and half(65504) == 65504 and half(1 + 2 ^ -11) == 1
        and half(1 + 3 * 2 ^ -11) == 1 + 2 ^ -9 and half(2 ^ -24) == 2 ^ -24,
        "host: half rounding of 1/3, 65504, ties to even, the smallest subnormal")
do -- the binding's own f16 host arrays must round the same way
  local values = {1 / 3, -2.71828, 1000.7, 6e-5, 1e-7, 0.1}
  local h = cuda.array(values, "f16")
  local same = true
  for i, v in ipairs(values) do same = same and h[i] == half(v) end
  S.check(same, "host: f16 host arrays round as IEEE half")
end

S.host_checks_done()

local seed = S.seed()
local A32 = cuda.random.normal(cuda.device_array({ROWS, COLS}), seed)
local x32 = cuda.random.normal(cuda.device_array(COLS), seed + 1)
local A16, x16 = to_half(A32), to_half(x32)
S.check(A16.dtype == "f16" and A16.nbytes * 2 == A32.nbytes, "A as f16: %d MiB instead of %d",
        A16.nbytes >> 20, A32.nbytes >> 20)

local grid = S.blocks(ROWS * 32, 256)
local y_half, y_half_acc, y_float = cuda.full(ROWS, -12345.5), cuda.full(ROWS, -12345.5),
                                    cuda.full(ROWS, -12345.5)
local t_half = S.gpu_ms(function() mv_half[{grid, 256}](A16, x16, y_half, ROWS, COLS) end, 10, nil,
                        true)
local t_half_acc = S.gpu_ms(function()
  mv_half_acc[{grid, 256}](A16, x16, y_half_acc, ROWS, COLS)
end, 10, nil, true)
local t_float = S.gpu_ms(function() mv_float[{grid, 256}](A32, x32, y_float, ROWS, COLS) end, 10,
                         nil, true)

-- Errors on sampled rows against float64 of the float32 inputs, scaled by sum |a x|.
local hA, hx = A32:copy_to_host(), x32:copy_to_host()
local yh, yha, yf = y_half:copy_to_host(), y_half_acc:copy_to_host(), y_float:copy_to_host()
local worst = {half = 0, half_acc = 0, float = 0}
local half_inputs_ok = true
for _ = 1, 200 do
  local r = math.random(1, ROWS)
  local s, mag, sh = 0.0, 0.0, 0.0
  for j = 1, COLS do
    local a, b = hA[(r - 1) * COLS + j], hx[j]
    s, mag, sh = s + a * b, mag + math.abs(a * b), sh + half(a) * half(b)
  end
  for name, y in pairs({half = yh, half_acc = yha, float = yf}) do
    worst[name] = math.max(worst[name], math.abs(y[r] - s) / mag)
  end
  -- with float accumulation, the half kernel computes the product of the rounded inputs closely
  half_inputs_ok = half_inputs_ok and math.abs(yh[r] - sh) <= 1e-5 * mag
end
S.printf("matvec %dx%d: float %.3f ms, half (float accumulation) %.3f ms, half accumulation "
         .. "%.3f ms", ROWS, COLS, t_float, t_half, t_half_acc)
S.printf("relative error (|y - y64| / sum|a x|, worst of 200 rows): float %.2e, half %.2e, "
         .. "half accumulation %.2e", worst.float, worst.half, worst.half_acc)
S.check(worst.float <= 1e-5, "float32: relative error %.2e <= 1e-5", worst.float)
S.check(worst.half <= 2 * 2 ^ -11, "half inputs, float accumulation: relative error %.2e <= 2 x "
        .. "2^-11 (input rounding)", worst.half)
S.check(half_inputs_ok, "half kernel = float64 product of the half-rounded inputs within 1e-5")
S.check(worst.half_acc > worst.half, "accumulating in half is worse (%.2e > %.2e)",
        worst.half_acc, worst.half)
S.done()
