-- test_lua_fault.lua -- a faulting kernel does not end the session: the error names the kernel,
-- later work is refused with a message saying how to recover, cuda.reset() recovers, arrays
-- made before are reported lost, and new arrays and old kernels work again.
local h = require "helper"
local cuda = require "cujit"
h.need_gpu(cuda)

local poke = cuda.jit("poke(unsigned long long addr)", "*(volatile int *)addr = 1;")
local past_end = cuda.jit("past_end(float *tiny)", "tiny[1ull << 40] = 1.0f;")
local vadd = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
]])

local function check_vadd()
  local n = 1000
  local xs, ys = h.random_floats(n), h.random_floats(n)
  local c = cuda.full(n, h.POISON, "f32")
  vadd[{(n + 127) // 128, 128}](cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32"), c, n)
  local got = c:copy_to_host()
  for i = 1, n do h.eq(got[i], h.f32(h.f32(xs[i]) + h.f32(ys[i])), "c[" .. i .. "]") end
end

-- Runs the faulting launch and everything that must follow from it.
local function fault_and_recover(name, launch)
  local before = cuda.to_device({1, 2, 3}, "f32")
  local ok, err = pcall(function()
    launch()
    cuda.synchronize()
  end)
  h.check(not ok, name .. ": the fault is reported")
  h.contains(err, name, "the error names the kernel")
  local good, why = cuda.status()
  h.eq(good, false, "the device is marked faulted")
  h.contains(why, "reset", "the message says how to recover")
  local refused = h.raises({}, cuda.device_array, 16)
  h.contains(refused, "reset", "later work is refused with the way out")
  cuda.reset()
  h.eq((cuda.status()), true, "status after reset")
  h.contains(tostring(before), "lost", "arrays from before the reset are lost")
  h.raises({}, before.copy_to_host, before)
  before:free() -- freeing a lost array is fine
  check_vadd()
end

h.test("sanity before any fault", check_vadd)

h.test("a write to address 0", function()
  fault_and_recover("poke", function() poke[{1, 1}](0) end)
end)

h.test("a write far past the end of a tiny array", function()
  local tiny = cuda.zeros(1, "f32")
  fault_and_recover("past_end", function() past_end[{1, 1}](tiny) end)
end)

h.test("host arrays survive a fault untouched", function()
  local host = cuda.array({1, 2, 3}, "f32")
  local ok = pcall(function()
    poke[{1, 1}](0)
    cuda.synchronize()
  end)
  h.check(not ok, "faulted")
  h.same(host:totable(), {1, 2, 3}, nil, "host data")
  cuda.reset()
  check_vadd()
end)

h.run()
