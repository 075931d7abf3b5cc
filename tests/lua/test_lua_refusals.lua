-- test_lua_refusals.lua -- bounds and refusals of the binding that no other test reached, each
-- with its whole message: slices ending at -1 (the last element, also from a negative first and
-- on the rows and columns of a matrix) against the elements they must hold, bounds one past
-- either end, and copies between arrays of another dtype but the same element count (device to
-- device, to and from host arrays), which must be refused rather than copy the bytes; the arrays
-- are left as they were; launch configurations one past each of the device's limits (block and
-- grid axes, threads per block, dynamic shared memory) refused naming the limit, and the limits
-- themselves accepted. On a GPU when there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local function range(n, f)
  local t = {}
  for i = 1, n do t[i] = f and f(i) or i end
  return t
end

h.test("slices ending at -1 hold up to the last element", function()
  local n = 10 + math.random(0, 20)
  local a = cuda.to_device(range(n, function(i) return 3 * i end), "i32")
  local function want(first, last)
    return range(last - first + 1, function(i) return 3 * (first + i - 1) end)
  end
  h.same(a:slice(1, -1):totable(), want(1, n), nil, "slice(1, -1): everything")
  h.same(a:slice(3, -1):totable(), want(3, n), nil, "slice(3, -1)")
  h.same(a:slice(-1):totable(), {3 * n}, nil, "slice(-1): the last")
  h.same(a:slice(-1, -1):totable(), {3 * n}, nil, "slice(-1, -1)")
  h.same(a:slice(-4, -1):totable(), want(n - 3, n), nil, "slice(-4, -1)")
  h.same(a:slice(-n, -1):totable(), want(1, n), nil, "slice(-n, -1): everything")
  h.same(a:slice(2, -2):totable(), want(2, n - 1), nil, "slice(2, -2)")
  h.same(a:slice(n, -1):totable(), {3 * n}, nil, "slice(n, -1)")
  h.eq(a:slice(2, -1):sum(), 3 * (n * (n + 1) // 2 - 1), "sum of slice(2, -1)")
  a:slice(-2, -1):fill(-5)
  local all = a:totable()
  h.eq(all[n - 2], 3 * (n - 2), "fill of slice(-2, -1) stops before n - 2")
  h.eq(all[n - 1], -5, "fill of slice(-2, -1): n - 1")
  h.eq(all[n], -5, "fill of slice(-2, -1): n")
  local m = cuda.to_device({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}}, "f32")
  h.same(m:slice(3, -1):totable()[1], {7, 8, 9}, nil, "rows 3..-1, first row")
  h.eq(#m:slice(3, -1):totable(), 2, "rows 3..-1: two rows")
  h.same(m:slice(-1):totable()[1], {10, 11, 12}, nil, "the last row")
  local c = m:cols(2, -1):totable()
  h.same({c[1][1], c[1][2], c[4][1], c[4][2]}, {2, 3, 11, 12}, nil, "columns 2..-1")
  h.same(m:cols(-1):totable()[3], {9}, nil, "the last column")
end)

h.test("bounds one past either end are refused, saying so", function()
  local n = 10
  local a = cuda.zeros(n, "f32")
  local function refused(first, last)
    local shown = string.format("slice %d..%d is outside 1..%d or empty: give first <= last within "
                                .. "the dimension (negative counts from the end)", first, last or n, n)
    h.raises(shown, a.slice, a, first, last)
  end
  refused(0)
  refused(-11, -1)
  refused(1, 0)
  refused(2, -10)
  refused(5, 11)
  refused(6, 5)
  refused(-1, -2)
  h.raises("outside 1..4", function() return cuda.zeros({4, 3}):slice(2, 5) end)
  h.raises("outside 1..3", function() return cuda.zeros({4, 3}):cols(-4, -1) end)
  h.raises("number has no integer representation", a.slice, a, 1.5)
end)

h.test("copies between dtypes of the same element count are refused", function()
  local n = 8
  local f = cuda.to_device(range(n), "f32")
  local i = cuda.to_device(range(n, function(k) return -k end), "i32")
  local u = cuda.to_device(range(n), "u32")
  local d = cuda.to_device(range(n // 2), "f64") -- as many bytes as f
  local function refused(msg, fn, ...)
    h.raises("cannot copy " .. msg .. " (same dtype and element count needed)", fn, ...)
  end
  refused("i32[8] into f32[8]", f.copy_from, f, i)
  refused("f32[8] into i32[8]", i.copy_from, i, f)
  refused("u32[8] into i32[8]", i.copy_from, i, u)
  refused("f64[4] into f32[8]", f.copy_from, f, d)
  refused("f32[8] into i32[8]", f.copy_to_host, f, cuda.host_array(n, "i32"))
  refused("f32[8] into f16[8]", f.copy_to_host, f, cuda.host_array(n, "f16"))
  -- (copy_from a host array converts its elements: documented, not refused)
  local g = cuda.zeros(n, "f32")
  g:copy_from(i:copy_to_host())
  h.same(g:totable(), range(n, function(k) return -k end), nil, "copy_from an i32 host array")
  h.same(f:totable(), range(n), nil, "f is as it was")
  h.same(i:totable(), range(n, function(k) return -k end), nil, "i is as it was")
  -- the same dtype and count, another shape: copied
  local m = cuda.zeros({2, 4}, "f32")
  m:copy_from(f)
  h.same(m:totable()[2], {5, 6, 7, 8}, nil, "f32[8] into f32[2][4]")
end)

h.test("launches one past each of the device's limits are refused, naming it", function()
  local dev = cuda.device()
  local name = dev.arch == "cpu" and "the CPU device" or ("device " .. dev.ordinal)
  local k = cuda.jit("mark(int *x)", [[
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    atomicAdd(&x[0], 1);
    if (t == 0) atomicAdd(&x[1], 1);
  ]])
  local x = cuda.zeros(2, "i32")
  local bd, gd = dev.max_block_dim, dev.max_grid_dim
  local function refused(cfg, msg)
    h.raises("kernel 'mark': " .. msg, function() k[cfg](x) end)
  end
  refused({1, bd[1] + 1}, string.format("block.x = %d is over %s's limit of %d", bd[1] + 1, name, bd[1]))
  refused({1, {1, bd[2] + 1, 1}}, string.format("block.y = %d is over %s's limit of %d", bd[2] + 1, name, bd[2]))
  refused({1, {1, 1, bd[3] + 1}}, string.format("block.z = %d is over %s's limit of %d", bd[3] + 1, name, bd[3]))
  refused({{1, gd[2] + 1, 1}, 1}, string.format("grid.y = %d is over %s's limit of %d", gd[2] + 1, name, gd[2]))
  refused({{1, 1, gd[3] + 1}, 1}, string.format("grid.z = %d is over %s's limit of %d", gd[3] + 1, name, gd[3]))
  local t = dev.max_threads_per_block
  refused({1, {t // 2, 2, 2}}, string.format("a block of %d threads is over %s's limit of %d", 2 * t, name, t))
  local sh = dev.max_shared_per_block_optin
  refused({1, 32, shared = sh + 1}, string.format(
    "%d bytes of dynamic shared memory is over %s's limit of %d bytes per block", sh + 1, name, sh))
  h.eq(x:totable()[1], 0, "no refused launch ran")
  -- at the limits: accepted, and every thread runs
  k[{1, t}](x)
  k[{2, {1, 1, bd[3]}}](x)
  k[{{1, 3, 2}, {t // 4, 2, 2}}](x)
  h.same(x:totable(), {t + 2 * bd[3] + 6 * t, 1 + 2 + 6}, nil, "threads and blocks that ran")
end)

h.run()
