-- test_library_gpu.lua -- the Lua library API on the GPU: statistics of cuda.random.uniform and
-- cuda.random.normal (mean, variance, a histogram against the distribution), reproducibility and
-- offsets; a:sum/min/max/dot against Lua references on random data of every dtype and of lengths
-- 1, 2, 3 and odd sizes; elementwise kernels against Lua references (scalars, generic types,
-- allocated outputs, several outputs, in place, streams) and their errors; images from device
-- arrays.
local T = require "helper"
local cuda = require "cujit"

T.need_gpu(cuda)

local POISON = T.POISON

-- Random numbers --------------------------------------------------------------------------------

-- Chi-square of a histogram of `values` (host array) in `bins` equal bins over [lo, hi) against
-- the probabilities cdf gives; values outside go to the end bins.
local function chi_square(values, bins, lo, hi, cdf)
  local counts = {}
  for b = 1, bins do counts[b] = 0 end
  local width = (hi - lo) / bins
  for i = 1, #values do
    local b = math.floor((values[i] - lo) / width) + 1
    b = math.min(math.max(b, 1), bins)
    counts[b] = counts[b] + 1
  end
  local chi, n = 0, #values
  for b = 1, bins do
    local p0 = b == 1 and 0 or cdf(lo + (b - 1) * width)
    local p1 = b == bins and 1 or cdf(lo + b * width)
    local expected = n * (p1 - p0)
    chi = chi + (counts[b] - expected) ^ 2 / expected
  end
  return chi
end

-- Above the 99.99% point of chi-square with 31 degrees of freedom (about 66): a correct generator
-- fails once in 10^4 runs.
local CHI_LIMIT = 70

local function moments(values)
  local s, q = 0, 0
  for i = 1, #values do
    local v = values[i]
    s, q = s + v, q + v * v
  end
  local mean = s / #values
  return mean, q / #values - mean * mean
end

local function normal_cdf(x) -- Numerical Recipes' erfc: ample for histogram bins
  local z = math.abs(x) / math.sqrt(2)
  local t = 1 / (1 + 0.5 * z)
  local r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
    + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
    + t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0 and 1 - 0.5 * r or 0.5 * r
end

T.test("uniform f32 and f64: range, mean, variance, histogram", function()
  local n = 1 << 20
  for _, dtype in ipairs({"f32", "f64"}) do
    local a = cuda.full(n, POISON, dtype)
    T.check(cuda.random.uniform(a, 1234) == a, "returns the array")
    local h = a:copy_to_host()
    for i = 1, n do
      if not (h[i] > 0 and h[i] <= 1) then error(dtype .. " element " .. i .. " = " .. h[i]) end
    end
    local mean, var = moments(h)
    -- five standard errors: sd of the mean sqrt(1/12/n), of the variance about sqrt(1/180/n)
    T.near(mean, 0.5, 5 * math.sqrt(1 / 12 / n), dtype .. " mean")
    T.near(var, 1 / 12, 5 * math.sqrt(1 / 180 / n), dtype .. " variance")
    local chi = chi_square(h, 32, 0, 1, function(x) return x end)
    T.check(chi < CHI_LIMIT, dtype .. " uniform histogram chi-square " .. chi)
    T.eq(a:min() > 0 and a:max() <= 1, true, dtype .. " min/max on the device")
  end
end)

T.test("normal f32 and f64 with mean and std: moments and histogram", function()
  local n = 1 << 20
  for _, dtype in ipairs({"f32", "f64"}) do
    local a = cuda.random.normal(cuda.full(n, POISON, dtype), 99, 3.0, 2.0)
    local h = a:copy_to_host()
    local mean, var = moments(h)
    T.near(mean, 3.0, 5 * 2 / math.sqrt(n), dtype .. " mean")
    T.near(var, 4.0, 5 * 4 * math.sqrt(2 / n), dtype .. " variance")
    local chi = chi_square(h, 32, 3 - 8, 3 + 8, function(x) return normal_cdf((x - 3) / 2) end)
    T.check(chi < CHI_LIMIT, dtype .. " normal histogram chi-square " .. chi)
    local z = cuda.random.normal(cuda.device_array(n, dtype), 99):copy_to_host()
    local m0, v0 = moments(z)
    T.near(m0, 0, 5 / math.sqrt(n), dtype .. " default mean 0")
    T.near(v0, 1, 5 * math.sqrt(2 / n), dtype .. " default std 1")
  end
end)

T.test("random fills are reproducible, and offsets continue a stream", function()
  local n, m = 1000, 37
  local a = cuda.random.uniform(cuda.device_array(n), 7):totable()
  local b = cuda.random.uniform(cuda.device_array(n), 7):totable()
  T.same(a, b, nil, "same seed")
  local c = cuda.random.uniform(cuda.device_array(n), 8):totable()
  local differ = 0
  for i = 1, n do if a[i] ~= c[i] then differ = differ + 1 end end
  T.check(differ > n - 5, "another seed gives other numbers")
  local tail = cuda.random.uniform(cuda.device_array(n - m), 7, m):totable() -- unaligned offset
  for i = 1, n - m do T.eq(tail[i], a[i + m], "offset element " .. i) end
  local na = cuda.random.normal(cuda.device_array(n, "f64"), 5, 1, 2):totable()
  local nt = cuda.random.normal(cuda.device_array(n - 4, "f64"), 5, 1, 2, 4):totable()
  for i = 1, n - 4 do T.eq(nt[i], na[i + 4], "normal offset element " .. i) end
  local neg = cuda.random.uniform(cuda.device_array(4), -1):totable() -- seed 2^64 - 1
  T.eq(#neg, 4, "negative seeds are taken as 64-bit")
  local s = cuda.stream()
  local on_stream = cuda.random.uniform(cuda.device_array(n), 7, 0, s)
  s:synchronize()
  T.same(on_stream:totable(), a, nil, "on a stream")
end)

T.test("random fill errors", function()
  T.raises({"f32 or f64 device array expected", "got i32"}, cuda.random.uniform,
           cuda.device_array(4, "i32"), 1)
  T.raises("seed must be an integer", cuda.random.uniform, cuda.device_array(4), 1.5)
  T.raises("seed must be an integer", cuda.random.normal, cuda.device_array(4), "x")
  T.raises("offset must be >= 0", cuda.random.uniform, cuda.device_array(4), 1, -3)
  T.raises("standard deviation must be >= 0", cuda.random.normal, cuda.device_array(4), 1, 0, -1)
  T.raises("mean must be a finite number", cuda.random.normal, cuda.device_array(4), 1, 0 / 0)
  T.raises("cujit.stream expected", cuda.random.uniform, cuda.device_array(4), 1, 0, {})
end)

-- Reductions ------------------------------------------------------------------------------------

-- Integer ranges small enough that no dot product wraps past 64 bits (sums are exact then).
local ranges = {
  i8 = {-128, 127}, i16 = {-32768, 32767}, i32 = {-2 ^ 20, 2 ^ 20}, u8 = {0, 255},
  u16 = {0, 65535}, u32 = {0, 2 ^ 21}, i64 = {-2 ^ 20, 2 ^ 20}, u64 = {0, 2 ^ 21},
}

local function random_values(dtype, n)
  local t = {}
  local r = ranges[dtype]
  for i = 1, n do
    if r then t[i] = math.random(math.tointeger(r[1]), math.tointeger(r[2]))
    elseif dtype == "f16" then t[i] = math.random(-2048, 2048) / 64 -- exact in half
    elseif dtype == "bf16" then t[i] = math.random(-256, 256) / 8 -- exact in bfloat16
    else t[i] = (math.random() - 0.5) * 1000 end
  end
  return t
end

T.test("sum, min, max, dot against Lua on random data of every dtype and size", function()
  local dtypes = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}
  for _, dtype in ipairs(dtypes) do
    for _, n in ipairs({1, 2, 3, 5, 31, 1000, 4099, 65543}) do
      local t, u = random_values(dtype, n), random_values(dtype, n)
      local h = cuda.array(t, dtype) -- values as the dtype stores them
      local a, b = h:to_device(), cuda.array(u, dtype):to_device()
      local hu = cuda.array(u, dtype)
      local s, lo, hi, d, mag = 0, math.huge, -math.huge, 0, 0
      for i = 1, n do
        local x = h[i]
        s, d, mag = s + x, d + x * hu[i], mag + math.abs(x * hu[i]) + math.abs(x)
        if x < lo then lo = x end
        if x > hi then hi = x end
      end
      local what = string.format("%s[%d]", dtype, n)
      if ranges[dtype] then
        T.eq(math.type(a:sum()), "integer", what .. " sum is an integer")
        T.eq(a:sum(), s, what .. " sum")
        T.eq(a:dot(b), d, what .. " dot")
      else
        T.eq(math.type(a:sum()), "float", what .. " sum is a float")
        -- both sum in double, in different orders
        T.check(math.abs(a:sum() - s) <= 1e-10 * mag, what .. " sum " .. a:sum() .. " vs " .. s)
        T.check(math.abs(a:dot(b) - d) <= 1e-10 * mag, what .. " dot " .. a:dot(b) .. " vs " .. d)
      end
      T.eq(a:min(), lo, what .. " min")
      T.eq(a:max(), hi, what .. " max")
    end
  end
end)

T.test("reductions of views, on streams, and their errors", function()
  local a = cuda.to_device({{1, 2, 3}, {4, 5, 6}}, "i32")
  T.eq(a:sum(), 21, "2-D sum")
  T.eq(a:reshape(6):max(), 6, "view max")
  local s = cuda.stream()
  T.eq(a:sum(s), 21, "sum on a stream")
  T.eq(a:dot(a, s), 91, "dot on a stream")
  T.raises("same dtype and size", a.dot, a, cuda.to_device({1, 2, 3, 4, 5, 6}, "f32"))
  T.raises("same dtype and size", a.dot, a, cuda.to_device({1, 2}, "i32"))
  T.raises("device_array expected", a.dot, a, {1, 2, 3, 4, 5, 6})
  T.raises("cujit.stream expected", a.sum, a, 5)
  local f = cuda.to_device({1, 0 / 0, 3}, "f64")
  local mx = f:max()
  T.check(mx ~= mx, "max propagates NaN")
  a:free()
  T.raises("freed", a.sum, a)
end)

-- Elementwise -------------------------------------------------------------------------------------

local f32 = T.f32

T.test("elementwise axpy with a scalar, against Lua", function()
  local axpy = cuda.elementwise("scalar float a, float x, float y -> float z", "z = a * x + y",
                                "axpy")
  for _, n in ipairs({1, 3, 1000, 100003}) do
    local xs, ys = T.random_floats(n), T.random_floats(n)
    local x, y, z = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32"), cuda.full(n, POISON)
    local r = axpy(2.5, x, y, z)
    T.check(r == z, "returns the output passed")
    local hz, hx, hy = z:copy_to_host(), x:copy_to_host(), y:copy_to_host()
    for i = 1, n do
      T.near(hz[i], f32(2.5 * hx[i] + hy[i]), 1e-6, "z[" .. i .. "]")
    end
    local z2 = axpy(-1, x, y) -- output allocated
    T.eq(z2.dtype, "f32", "allocated output dtype")
    T.eq(#z2, n, "allocated output size")
    local h2 = z2:copy_to_host()
    for i = 1, n do T.eq(h2[i], f32(hy[i] - hx[i]), "allocated z[" .. i .. "]") end
  end
end)

T.test("elementwise scalars: a Lua boolean passes as 0 or 1; bool is not an elementwise type", function()
  local pick = cuda.elementwise("scalar int flag, int x -> int y", "y = flag * 10 + x", "pick")
  T.same(pick(true, cuda.full(2, 1, "i32")):totable(), {11, 11}, nil, "true is 1")
  T.same(pick(false, cuda.full(2, 1, "i32")):totable(), {1, 1}, nil, "false is 0")
  T.raises("'bool' is not an element type", cuda.elementwise, "scalar bool b, int x -> int y", "y = b")
end)

T.test("generic elementwise over f64, i32 and u8, shapes kept", function()
  local scale = cuda.elementwise("scalar T a, T x -> T y", "y = a * x + (T)i", "scale")
  local xs = T.random_ints(12, -50, 50)
  local x = cuda.to_device(xs, "i32"):reshape(3, 4)
  local y = scale(3, x)
  T.eq(y.dtype, "i32", "generic output dtype")
  T.eq(table.concat(y.shape, "x"), "3x4", "output shape follows the first array")
  local hy = y:copy_to_host()
  for i = 1, 12 do T.eq(hy[i], 3 * xs[i] + (i - 1), "i32 y[" .. i .. "]") end
  local fx = T.random_floats(100)
  local fy = scale(0.5, cuda.to_device(fx, "f64")):totable()
  for i = 1, 100 do T.eq(fy[i], 0.5 * fx[i] + (i - 1), "f64 y[" .. i .. "]") end
  local uy = scale(2, cuda.to_device({1, 2, 200}, "u8")):totable()
  T.same(uy, {2, 5, (400 + 2) % 256}, nil, "u8 wraps as C does")
  -- The engine's check, in the words of a kernel launch's.
  T.raises("bad argument #1 'a' to elementwise 'scale' (1.5 is not an integer; round it first)",
           scale, 1.5, cuda.to_device({1, 2}, "i32"))
end)

T.test("several outputs, in place, no inputs, a stream", function()
  local sincos = cuda.elementwise("double x -> double s, double c", "s = sin(x); c = cos(x)",
                                  "sin_and_cos")
  local xs = T.random_floats(1000, -3, 3)
  local s, c = sincos(cuda.to_device(xs, "f64"))
  local hs, hc = s:copy_to_host(), c:copy_to_host()
  for i = 1, 1000 do
    T.near(hs[i], math.sin(xs[i]), 1e-14, "sin")
    T.near(hc[i], math.cos(xs[i]), 1e-14, "cos")
  end
  local double = cuda.elementwise("float x -> float y", "y = 2 * x", "twice")
  local x = cuda.to_device({1, 2, 3}, "f32")
  double(x, x) -- in place
  T.same(x:totable(), {2, 4, 6}, nil, "in place")
  local iota = cuda.elementwise("-> long long k", "k = i * n", "iota")
  local k = iota(cuda.full(5, -1, "i64"))
  T.same(k:totable(), {0, 5, 10, 15, 20}, nil, "i and n")
  local st = cuda.stream()
  local out = cuda.full(3, POISON)
  double(cuda.to_device({1, 2, 3}, "f32"), out, st)
  st:synchronize()
  T.same(out:totable(), {2, 4, 6}, nil, "on a stream")
  local allocated = double(cuda.to_device({5}, "f32"), st)
  st:synchronize()
  T.same(allocated:totable(), {10}, nil, "allocated, on a stream")
end)

T.test("elementwise call errors with arrays", function()
  local add = cuda.elementwise("float x, float y -> float z", "z = x + y", "add")
  local a, b = cuda.full(4, 1), cuda.full(5, 1)
  T.raises({"#2 'y'", "5 elements", "'x' has 4"}, add, a, b)
  T.raises({"#2 'y'", "f32 array expected, got f64"}, add, a, cuda.full(4, 1, "f64"))
  local gen = cuda.elementwise("T x, T y -> T z", "z = x + y", "gadd")
  T.raises({"#2 'y'", "f64 array, but its type variable is f32"}, gen, a, cuda.full(4, 1, "f64"))
  local fill = cuda.elementwise("scalar T v -> T z", "z = v", "fillv")
  T.raises("no array among the arguments", fill, 1)
  local freed = cuda.full(4, 1)
  freed:free()
  T.raises({"#1 'x'", "freed"}, add, freed, a)
  -- an output whose type variable no input sets cannot be allocated: pass it
  local widen = cuda.elementwise("T x -> U z", "z = (U)x", "widen")
  T.raises({"'z'", "missing: its type variable is not set by any input array; pass the output array"},
           widen, a)
  local z = cuda.full(4, 0, "f64")
  widen(a, z)
  T.same(z:totable(), {1, 1, 1, 1}, nil, "with the output given, U is its dtype")
end)

T.test("images from device arrays", function()
  local img = cuda.host_array({5, 7, 3}, "u8")
  for i = 1, #img do img[i] = math.random(0, 255) end
  local path = T.tmpname(".png")
  cuda.image.write(path, img:to_device())
  local back = cuda.image.read(path)
  os.remove(path)
  T.same(back:totable()[1][1], img:totable()[1][1], nil, "first pixel")
  local same = true
  for i = 1, #img do same = same and back[i] == img[i] end
  T.check(same, "device array written, read back equal")
end)

T.run()
