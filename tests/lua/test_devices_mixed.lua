-- test_devices_mixed.lua -- a GPU beside the CPU device in one engine (issue 14): copies between
-- them both ways (the CPU device's memory is host memory), and launches on either refusing the
-- other's arrays, naming the parameter and both devices. Needs one GPU; fails under
-- CUJIT_REQUIRE_GPUS=1 or more without one.
local T = require "helper"
local cuda = require "cujit"
T.need_gpus(cuda, 1)

local vadd = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
]])

T.test("copies between GPU 0 and the CPU device, both ways", function()
  local n = 100000 + math.random(0, 1000)
  local xs = T.random_floats(n)
  local g = cuda.to_device(xs, "f32", {device = 0})
  local c = g:copy_to("cpu")
  T.eq(c.device, -1, "the copy is on the CPU device")
  local g2 = c:copy_to(0)
  T.eq(g2.device, 0, "and back on GPU 0")
  local got, got_cpu = g2:copy_to_host(), c:copy_to_host()
  for i = 1, n, 101 do
    T.eq(got_cpu[i], T.f32(xs[i]), "on the CPU device [" .. i .. "]")
    T.eq(got[i], T.f32(xs[i]), "back on the GPU [" .. i .. "]")
  end
  local h = cuda.full(n, T.POISON, "f32", {device = 0})
  h:copy_from(c)
  T.eq(h:copy_to_host()[n], T.f32(xs[n]), "copy_from the CPU device, last element")
  cuda.device(0)
  local s = cuda.stream()
  local c2 = g:copy_to("cpu", s)
  s:synchronize()
  T.eq(c2:copy_to_host()[n], T.f32(xs[n]), "GPU to CPU device on the GPU's stream")
  cuda.device("cpu")
  local cs = cuda.stream()
  T.raises("pass a stream of device 0, or none", g.copy_to, g, "cpu", cs)
  cuda.device(0)
end)

T.test("a launch on either refuses the other's arrays", function()
  cuda.device(0)
  local a, b, c = cuda.zeros(8, "f32"), cuda.zeros(8, "f32"), cuda.zeros(8, "f32")
  local onc = cuda.zeros(8, "f32", {device = "cpu"})
  T.raises({"bad argument #2 'b' to 'vadd'", "lives on the CPU device but the launch is on device 0"},
           vadd[{1, 8}], a, onc, c, 8)
  cuda.device("cpu")
  -- A kernel runs on the kind of device it was compiled for (a GPU's PTX, the CPU device's shared
  -- object): the CPU device's half uses the same text compiled while it is current.
  local vadd_cpu = cuda.jit("vadd(const float *a, const float *b, float *c, int n)",
                            "int i = threadIdx.x; if (i < n) c[i] = a[i] + b[i];")
  T.raises({"bad argument #1 'a' to 'vadd'", "lives on device 0 but the launch is on the CPU device"},
           vadd_cpu[{1, 8}], a, onc, onc, 8)
  T.raises("the CPU device shares no memory with a GPU", cuda.enable_peer, "cpu", 0)
  cuda.device(0)
end)

T.run()
