-- reduce.lua -- sum, min, max and dot of 2^28 elements with the library's reductions
-- (a:sum(), a:min(), a:max(), a:dot(b)), with the bandwidth they reach. Checked two ways: on 2^20
-- random numbers against a Lua reference, and on 2^28 elements whose results are known exactly
-- (a pattern with a closed-form sum, a minimum planted at a random place, a maximum at the last
-- element). On the CPU device the big arrays are 2^24 elements, with the same checks.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

-- x = (i mod 1024) / 4 - 100: exact in float32, so sums in double are exact too; then the
-- planted extremes.
local pattern = cuda.elementwise("scalar long long lo_at, scalar long long hi_at -> float x", [[
  x = (float)(i % 1024) * 0.25f - 100.0f;
  if (i == lo_at) x = -1000.5f;
  if (i == hi_at) x = 1000.25f;
]], "pattern", S.options())
local ipattern = cuda.elementwise("-> int k", "k = (int)(i % 2001) - 1000", "ipattern",
                                  S.options())

-- Closed forms: sums over n elements of the periodic patterns.
local function pattern_sums(n, lo_at, hi_at)
  local s, q = 0, 0
  local full, rest = n // 1024, n % 1024
  for j = 0, 1023 do
    local v = j * 0.25 - 100
    local count = full + (j < rest and 1 or 0)
    s, q = s + count * v, q + count * v * v
  end
  for _, p in ipairs({{lo_at, -1000.5}, {hi_at, 1000.25}}) do
    local v = (p[1] % 1024) * 0.25 - 100
    s, q = s - v + p[2], q - v * v + p[2] * p[2]
  end
  return s, q
end

local function ipattern_sums(n)
  local s, q = 0, 0
  local full, rest = n // 2001, n % 2001
  for j = 0, 2000 do
    local count = full + (j < rest and 1 or 0)
    s, q = s + count * (j - 1000), q + count * (j - 1000) ^ 2
  end
  return s, math.tointeger(q)
end

do -- the closed forms against direct sums, on the host
  local n, lo_at, hi_at = 5000, 17, 4093
  local s, q = 0, 0
  for i = 0, n - 1 do
    local v = (i % 1024) * 0.25 - 100
    if i == lo_at then v = -1000.5 elseif i == hi_at then v = 1000.25 end
    s, q = s + v, q + v * v
  end
  local cs, cq = pattern_sums(n, lo_at, hi_at)
  S.check(cs == s and cq == q, "host: closed-form sum and dot of the pattern match a direct sum")
  local is, iq = 0, 0
  for i = 0, n - 1 do is, iq = is + (i % 2001) - 1000, iq + ((i % 2001) - 1000) ^ 2 end
  local ci, cq2 = ipattern_sums(n)
  S.check(ci == is and cq2 == iq, "host: closed-form integer sums match a direct sum")
end

S.host_checks_done()

local seed = S.seed()

-- 2^20 random numbers against Lua ------------------------------------------------------------
do
  local n = 1 << 20
  local x, y = cuda.random.normal(cuda.device_array(n), seed),
               cuda.random.uniform(cuda.device_array(n), seed + 1)
  local hx, hy = x:copy_to_host(), y:copy_to_host()
  local s, lo, hi, d, mag = 0.0, math.huge, -math.huge, 0.0, 0.0
  for i = 1, n do
    local a, b = hx[i], hy[i]
    s, d, mag = s + a, d + a * b, mag + math.abs(a)
    if a < lo then lo = a end
    if a > hi then hi = a end
  end
  S.check(math.abs(x:sum() - s) <= 1e-12 * mag, "sum of 2^20 normals: %.9g (Lua %.9g)", x:sum(), s)
  S.check(x:min() == lo and x:max() == hi, "min %.9g and max %.9g match Lua exactly", lo, hi)
  S.check(math.abs(x:dot(y) - d) <= 1e-12 * mag, "dot: %.9g (Lua %.9g)", x:dot(y), d)
end

-- 2^28 elements (2^24 on the CPU device): exact results and bandwidth ---------------------------
local LOG_N = S.on_cpu and 24 or 28
local n = 1 << LOG_N
-- the minimum at a random place, the maximum at the last element (the reductions' tail: a last
-- element dropped, or one read past the end, shows)
local lo_at, hi_at = math.random(0, n - 2), n - 1
local x = pattern(lo_at, hi_at, cuda.device_array(n))
local want_sum, want_dot = pattern_sums(n, lo_at, hi_at)
local GiB = 4 * n / 2 ^ 30

local function timed(name, fn, bytes)
  local result
  local ms = S.gpu_ms(function() result = fn() end, 5, nil, true)
  S.printf("%-4s of 2^%d f32: %8.3f ms, %6.4g GB/s (reading %.2f GiB)", name, LOG_N, ms,
           bytes / ms / 1e6, bytes / 2 ^ 30)
  return result
end

local s = timed("sum", function() return x:sum() end, 4 * n)
S.check(s == want_sum, "sum of 2^%d = %.17g, exactly the closed form", LOG_N, s)
local lo = timed("min", function() return x:min() end, 4 * n)
S.check(lo == -1000.5, "min found the value planted at %d", lo_at)
local hi = timed("max", function() return x:max() end, 4 * n)
S.check(hi == 1000.25, "max found the value planted at %d", hi_at)
local d = timed("dot", function() return x:dot(x) end, 8 * n)
S.check(d == want_dot, "dot(x, x) of 2^%d = %.17g, exactly the closed form", LOG_N, d)

x:free()
local k = ipattern(cuda.device_array(n, "i32"))
local want_isum, want_idot = ipattern_sums(n)
S.check(k:sum() == want_isum and math.type(k:sum()) == "integer",
        "i32 sum of 2^%d = %d, exact, a Lua integer", LOG_N, k:sum())
S.check(k:min() == -1000 and k:max() == 1000, "i32 min and max")
S.check(k:dot(k) == want_idot, "i32 dot of 2^%d = %d, exact", LOG_N, k:dot(k))
S.printf("(%.2f GiB per f32 array; the reductions read the input once)", GiB)
S.done()
