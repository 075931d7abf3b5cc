-- test_lua_views.lua -- slices and views of device arrays (a:slice, a:cols) in launches, copies,
-- fills, reductions and elementwise kernels, their life after the array is freed; and a
-- program's globals (m:global, k:global) set from Lua and read by kernels. Runs on a GPU, or on
-- the CPU device without one.
local h = require "helper"
local cuda = require "cujit"
h.need_gpu(cuda)

local function range(n, f)
  local t = {}
  for i = 1, n do t[i] = f(i) end
  return t
end

h.test("a 1-D slice is a view: copies, launches and fills reach the array's elements", function()
  local n = 100 + math.random(0, 100)
  local first, last = 11 + math.random(0, 20), n - math.random(5, 30)
  local a = cuda.to_device(range(n, function(i) return i end), "f32")
  local v = a:slice(first, last)
  h.eq(v.size, last - first + 1, "size")
  h.eq(v.shape[1], last - first + 1, "shape")
  local got = v:copy_to_host()
  for i = 1, v.size do h.eq(got[i], first + i - 1, "element " .. i) end
  local inc = cuda.jit("inc(float *y, float by, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += by;
  ]])
  inc[{(v.size + 63) // 64, 64}](v, 1000, v.size)
  v:slice(1, 2):fill(-1)
  local all = a:copy_to_host()
  for i = 1, n do
    local want = i
    if i >= first and i <= last then want = want + 1000 end
    if i == first or i == first + 1 then want = -1 end
    h.eq(all[i], want, "a[" .. i .. "] after the launch and fill through views")
  end
  v:copy_from(range(v.size, function(i) return 2 * i end))
  h.eq(a:copy_to_host()[first + 2], 6, "copy_from writes through the view")
  h.eq(a:copy_to_host()[first - 1], first - 1, "and not before it")
end)

h.test("slices in reductions and elementwise kernels; negative bounds count from the end", function()
  local a = cuda.to_device(range(50, function(i) return i end), "f64")
  local v = a:slice(-10)
  h.eq(v.size, 10, "the last ten")
  h.eq(v:sum(), (41 + 50) * 10 / 2, "sum of 41..50")
  h.eq(a:slice(3, 7):max(), 7, "max of 3..7")
  local twice = cuda.elementwise("double x -> double y", "y = 2 * x")
  h.eq(twice(a:slice(1, 4)):sum(), 20, "elementwise over a slice")
  h.eq(a:slice(5, 9):dot(a:slice(1, 5)), 5 * 1 + 6 * 2 + 7 * 3 + 8 * 4 + 9 * 5, "dot of slices")
end)

h.test("row and column slices of a matrix", function()
  local rows, cols = 6, 5
  local m = cuda.to_device(range(rows * cols, function(i) return i end), "i32"):reshape(rows, cols)
  local r = m:slice(2, 3)
  h.eq(r.shape[1], 2, "rows")
  h.eq(r.shape[2], cols, "cols")
  h.eq(r:copy_to_host()[1], cols + 1, "row 2 starts at element cols + 1")
  local c = m:cols(2, 3)
  h.eq(tostring(c):match("strided") ~= nil, true, "columns are strided")
  local got = c:copy_to_host()
  for i = 1, rows do
    h.eq(got[2 * i - 1], (i - 1) * cols + 2, "row " .. i .. " col 2")
    h.eq(got[2 * i], (i - 1) * cols + 3, "row " .. i .. " col 3")
  end
  c:fill(0)
  local after = m:copy_to_host()
  for i = 1, rows do
    h.eq(after[(i - 1) * cols + 2], 0, "filled col 2")
    h.eq(after[(i - 1) * cols + 4], (i - 1) * cols + 4, "col 4 untouched")
  end
  c:copy_from(range(rows * 2, function(i) return -i end))
  h.eq(m:copy_to_host()[cols + 3], -4, "copy_from writes row 2 col 3")
  h.eq(m:cols(1, cols):slice(1).size, rows * cols, "every column is contiguous")
  h.raises({"contiguous", "copy"}, function() return c.devptr end)
  local k = cuda.jit("touch(int *y)", "y[0] = 1;")
  h.raises({"strided_view", "not contiguous"}, function() k[{1, 1}](c) end)
  h.raises({"strided_view", "not contiguous"}, function() return cuda.zeros(3):dot(c) end)
end)

h.test("freeing the array leaves its views lost, with a message; a view may outlive a middle view", function()
  local a = cuda.to_device(range(20, function(i) return i end), "f32")
  local mid = a:slice(5, 15)
  local inner = mid:slice(2, 3)
  mid:free()
  h.eq(inner:copy_to_host()[1], 6, "a view of a view views the array")
  a:free()
  h.raises({"freed"}, function() return inner:copy_to_host() end)
  local k = cuda.jit("touch1(float *y)", "y[0] = 1;")
  h.raises({"freed"}, function() k[{1, 1}](inner) end)
  h.raises({"outside"}, function() return cuda.zeros(4):slice(2, 9) end)
end)

h.test("a program's __constant__ and __device__ arrays by name, set from Lua", function()
  local m = cuda.source([[
    __constant__ float taps[3][3];
    __device__ int counter;
    __device__ unsigned long long wide[4];
    extern "C" __global__ void apply(float *out) {
      int i = threadIdx.x;
      out[i] = taps[i / 3][i % 3] * 2.0f;
      if (i == 0) counter += 5;
      if (i == 100) out[0] = (float)wide[0]; /* referenced: NVRTC keeps it */
    }
  ]])
  local taps = m:global("taps")
  h.eq(taps.dtype, "f32", "dtype from the declaration")
  h.eq(taps.ndim, 2, "ndim")
  h.eq(taps.shape[1], 3, "rows")
  h.eq(m:global("counter").dtype, "i32", "int is i32")
  h.eq(m:global("wide").dtype, "u64", "unsigned long long")
  h.eq(m:global("wide").size, 4, "four")
  local values = range(9, function(i) return i * 0.5 end)
  taps:copy_from(cuda.array(values, "f32"):reshape(3, 3))
  m:global("counter"):fill(10)
  local out = cuda.zeros(9)
  m.apply[{1, 9}](out)
  local got = out:copy_to_host()
  for i = 1, 9 do h.eq(got[i], values[i] * 2, "out[" .. i .. "]") end
  h.eq(m:global("counter"):copy_to_host()[1], 15, "the kernel's write is seen")
  h.eq(m:global("taps", "u8").size, 36, "an explicit dtype re-views the bytes")
  h.raises({"no __device__", "nothere"}, m.global, m, "nothere")
end)

h.test("a cuda.jit kernel's globals come from its preamble", function()
  local k = cuda.jit("scaleby(float *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= factor[i % 2];
  ]], {preamble = "__constant__ float factor[2];"})
  k:global("factor"):copy_from({3, 5})
  local y = cuda.full(4, 1)
  k[{1, 4}](y, 4)
  local got = y:copy_to_host()
  h.eq(got[1] + got[2] + got[3] + got[4], 16, "3 + 5 + 3 + 5")
end)

h.run()
