-- test_lua_cpu.lua -- the CPU device from Lua, with no GPU needed: selected by cuda.device("cpu"),
-- described with arch "cpu", and running kernels whose results are checked against Lua's.
local h = require "helper"
local cuda = require "cujit"

local f32 = h.f32

h.test("cuda.device('cpu') selects and describes the CPU device", function()
  local d = cuda.device("cpu")
  h.eq(d.arch, "cpu", "arch")
  h.eq(d.ordinal, -1, "ordinal")
  h.eq(cuda.device().arch, "cpu", "it stays current")
  h.eq(cuda.device(-1).name, d.name, "-1 names it too")
  local free, total = cuda.memory()
  h.check(free > 0 and free <= total and total == d.total_memory, "memory figures")
  h.raises({"cpu"}, cuda.device, "gpu")
end)

h.test("a kernel runs on the CPU device, results as in Lua", function()
  cuda.device("cpu")
  local k = cuda.jit("axpb(float a, const float *x, float *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + 1.0f;
  ]])
  local n = 1000 + math.random(0, 1000)
  local xs = h.random_floats(n)
  local a = math.random() + 0.5
  local x, y = cuda.to_device(xs, "f32"), cuda.full(n, h.POISON, "f32")
  local before = cuda.allocated()
  h.check(before >= 8 * n, "allocated() counts the arrays")
  k[{(n + 127) // 128, 128}](a, x, y, n)
  local got = y:copy_to_host()
  for i = 1, n do
    local want = f32(f32(f32(a) * f32(xs[i])) + 1)
    if got[i] ~= want then error(string.format("y[%d] = %s, want %s", i, got[i], want)) end
  end
end)

h.run()
