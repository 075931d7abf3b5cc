-- test_lua_pool.lua -- the memory pool and waits from Lua (issue 15): cuda.memory()'s third value
-- (what the pool holds) against cuda.allocated() (bytes in live arrays), cuda.trim(), arrays freed
-- while a queued kernel still reads them (the result stays right), and small reductions (one
-- launch) against Lua's own sums.
local T = require "helper"
local cuda = require "cujit"

T.need_gpu(cuda)

T.test("the pool keeps freed memory until cuda.trim", function()
  cuda.synchronize()
  local before = cuda.allocated()
  local a = cuda.device_array(16 * 1024 * 1024, "f32") -- 64 MiB
  T.eq(cuda.allocated(), before + 64 * 1024 * 1024, "allocated with a live array")
  a:free()
  T.eq(cuda.allocated(), before, "allocated after the free")
  local _, _, reserved = cuda.memory()
  if cuda.device().arch == "cpu" then -- no pool there: freed memory goes back at once
    T.eq(reserved, 0, "the CPU device keeps no pool")
    return
  end
  T.check(reserved >= 64 * 1024 * 1024, "the pool holds " .. reserved .. " bytes after a free")
  cuda.trim()
  local _, _, after = cuda.memory()
  T.check(after < reserved, "cuda.trim() left the pool at " .. after .. " of " .. reserved)
end)

T.test("an array freed while a kernel reads it", function()
  local slow = cuda.jit("slow_double(const float *x, float *y, int n, long long cycles)", [[
    long long start = clock64();
    while (clock64() - start < cycles) {}
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
  ]])
  local n = 4096
  local xs = T.random_floats(n, -100, 100)
  local x, y = cuda.to_device(xs, "f32"), cuda.zeros(n, "f32")
  -- The kernel runs on a stream; the scribbling goes to the default stream, which nothing but
  -- the pool's own ordering puts after the kernel.
  local s = cuda.stream()
  -- About 0.05 s of spinning: each thread's on a GPU, where they run at once; all of them
  -- together on the CPU device, which runs them one after another.
  local cycles = 100 * 1000 * 1000
  if cuda.device().arch == "cpu" then cycles = cycles // n end
  slow[{n // 256, 256, stream = s}](x, y, n, cycles)
  x:free()
  local junk = {}
  for j = 1, 4 do junk[j] = cuda.to_device(T.random_floats(n, 1000, 2000), "f32") end
  s:synchronize()
  local got = y:copy_to_host()
  for i = 1, n do T.eq(got[i], T.f32(2 * T.f32(xs[i])), "y[" .. i .. "]") end
end)

T.test("sums of small and large arrays", function()
  for _, n in ipairs({1, 7, 1000, 1024, 1025, 100000}) do
    local xs = T.random_ints(n, -50, 50)
    local want = 0
    for i = 1, n do want = want + xs[i] end
    T.eq(cuda.to_device(xs, "i32"):sum(), want, "sum of " .. n)
  end
end)

T.run()
