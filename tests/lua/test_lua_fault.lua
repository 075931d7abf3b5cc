-- test_lua_fault.lua -- a faulting kernel does not end the session: the error names the kernel,
-- later work is refused with a message saying how to recover, and cuda.reset() either recovers
-- (arrays made before are reported lost; new arrays and old kernels work again) or, on drivers
-- that keep the fault for the life of the process, says plainly that the program must restart.
-- Each fault runs in a child process, since on such drivers one fault is the process's last.
local h = require "helper"
local cuda = require "cujit"
h.need_gpu(cuda)

local scenario = arg and arg[1]
if not scenario then
  for _, name in ipairs({ "poke", "past_end", "host" }) do
    h.test("scenario " .. name .. " in its own process", function()
      local function q(x) return "'" .. x:gsub("'", "'\\''") .. "'" end
      local cmd = q(arg[-1]) .. " " .. q(arg[0]) .. " " .. name
      local ok, how, code = os.execute(cmd)
      h.check(ok, name .. ": the child failed (" .. tostring(how) .. " " .. tostring(code) .. ")")
    end)
  end
  h.run()
  return
end

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
  local reset_ok, reset_err = pcall(cuda.reset)
  if not reset_ok then
    h.contains(reset_err, "restart the program", "an unrecoverable fault says so")
    h.contains(reset_err, name, "and still names the kernel")
    h.eq((cuda.status()), false, "the device stays refused")
    h.raises({}, cuda.device_array, 16)
    before:free() -- freeing is still fine
    return "unrecoverable"
  end
  h.eq((cuda.status()), true, "status after reset")
  h.contains(tostring(before), "lost", "arrays from before the reset are lost")
  h.raises({}, before.copy_to_host, before)
  before:free() -- freeing a lost array is fine
  check_vadd()
end

h.test("sanity before any fault", check_vadd)

local scenarios = {}
scenarios.poke = function()
  fault_and_recover("poke", function() poke[{1, 1}](0) end)
end

scenarios.past_end = function()
  local tiny = cuda.zeros(1, "f32")
  fault_and_recover("past_end", function() past_end[{1, 1}](tiny) end)
end

scenarios.host = function()
  local host = cuda.array({1, 2, 3}, "f32")
  local ok = pcall(function()
    poke[{1, 1}](0)
    cuda.synchronize()
  end)
  h.check(not ok, "faulted")
  h.same(host:totable(), {1, 2, 3}, nil, "host data")
  if pcall(cuda.reset) then check_vadd() end
  h.same(host:totable(), {1, 2, 3}, nil, "host data after the reset")
end

h.test(scenario, assert(scenarios[scenario], "unknown scenario " .. scenario))
h.run()
