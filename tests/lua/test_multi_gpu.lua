-- test_multi_gpu.lua -- two GPUs in one process (issue 14): arrays, streams and launches on each
-- device, a launch refusing an array of the other device (naming the parameter and both), peer
-- access letting it, and copies between the GPUs both ways (with and without a stream), checked
-- on random data. Skips with one GPU; fails under CUJIT_REQUIRE_GPUS=2.
local T = require "helper"
local cuda = require "cujit"
T.need_gpus(cuda, 2)

local vadd = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
]])

local function blocks(n, b) return (n + b - 1) // b end

T.test("arrays, kernels and streams on each device; the current device follows cuda.device",
       function()
  for d = 0, 1 do
    cuda.device(d)
    T.eq(cuda.device().ordinal, d, "the current device")
    local n = 1000 + math.random(0, 1000)
    local xs, ys = T.random_floats(n), T.random_floats(n)
    local a, b = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32", {device = d})
    local c = cuda.full(n, T.POISON, "f32")
    T.eq(a.device, d, "to_device on the current device")
    T.eq(c.device, d, "full on the current device")
    local s = cuda.stream()
    vadd[{blocks(n, 128), 128, stream = s}](a, b, c, n)
    s:synchronize()
    local got = c:copy_to_host()
    for i = 1, n do
      T.eq(got[i], T.f32(T.f32(xs[i]) + T.f32(ys[i])), "device " .. d .. " c[" .. i .. "]")
    end
  end
  cuda.device(0)
end)

T.test("a launch refuses an array of the other device, naming the parameter and both devices",
       function()
  cuda.device(0)
  local a, b = cuda.zeros(64, "f32"), cuda.zeros(64, "f32")
  local c1 = cuda.zeros(64, "f32", {device = 1})
  T.raises({"bad argument #3 'c' to 'vadd'", "lives on device 1 but the launch is on device 0",
            "cuda.enable_peer"}, vadd[{1, 64}], a, b, c1, 64)
  cuda.device(1)
  T.raises({"bad argument #1 'a' to 'vadd'", "lives on device 0 but the launch is on device 1"},
           vadd[{1, 64}], a, b, c1, 64)
  cuda.device(0)
end)

T.test("copies between the GPUs, both ways, with and without a stream", function()
  local n = (1 << 20) + math.random(0, 1000)
  local xs = T.random_floats(n)
  local a0 = cuda.to_device(xs, "f32", {device = 0})
  local a1 = a0:copy_to(1)
  T.eq(a1.device, 1, "copy_to(1)'s device")
  local back = cuda.full(n, T.POISON, "f32", {device = 0})
  back:copy_from(a1)
  local got = back:copy_to_host()
  for i = 1, n, 997 do T.eq(got[i], T.f32(xs[i]), "round trip [" .. i .. "]") end
  T.eq(got[n], T.f32(xs[n]), "round trip, last element")
  local s1 = cuda.stream{device = 1} -- while device 0 is current
  T.contains(tostring(s1), "on device 1", "the stream's device")
  local a2 = a0:copy_to(1, s1)
  s1:synchronize()
  local got2 = a2:copy_to_host()
  for i = 1, n, 991 do T.eq(got2[i], T.f32(xs[i]), "copy on a stream [" .. i .. "]") end
  local s0 = cuda.stream() -- device 0: a stream of the source works as well
  local a3 = cuda.full(n, T.POISON, "f32", {device = 1})
  a3:copy_from(a0, s0)
  s0:synchronize()
  local got3 = a3:copy_to_host()
  for i = 1, n, 983 do
    T.eq(got3[i], T.f32(xs[i]), "copy_from on the source's stream [" .. i .. "]")
  end
  T.raises("pass a stream of either device", a0.copy_to, a0, "cpu", s1)
end)

T.test("peer access lets a launch on device 0 write an array of device 1", function()
  local ok, why = pcall(cuda.enable_peer, 0, 1)
  if not ok then
    T.contains(why, "cannot access device 1's memory directly", "the refusal says why")
    print("note: no peer access between the GPUs: " .. why)
    return
  end
  cuda.device(0)
  local n = 4096
  local xs, ys = T.random_floats(n), T.random_floats(n)
  local a, b = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32")
  local c1 = cuda.full(n, T.POISON, "f32", {device = 1})
  vadd[{blocks(n, 256), 256}](a, b, c1, n)
  cuda.synchronize(0)
  local got = c1:copy_to_host()
  for i = 1, n do T.eq(got[i], T.f32(T.f32(xs[i]) + T.f32(ys[i])), "c1[" .. i .. "]") end
end)

T.run()
