-- test_std_headers.lua -- a .cu that includes the C and C++ standard headers, itself and through
-- its helper header (tests/stdhdr/springs.cu, inc/spring_helpers.h), compiles with NVRTC for
-- sm_90, where cujit stands in for the headers NVRTC lacks, and runs on the device (the GPU, or
-- the CPU device with the host's own headers) against the host's results; a host-only header
-- (<iostream>) compiles where only host code would use it, and fails naming it where device code
-- does.
local h = require "helper"
local cuda = require "cujit"

local file = h.here() .. "../stdhdr/springs.cu"
local opts = {include_dirs = {h.here() .. "../stdhdr/inc"}} -- its helper header
h.need_gpu(cuda)

local function mix32(x)
  x = x ~ (x >> 16)
  x = (x * 0x7feb352d) & 0xffffffff
  x = x ~ (x >> 15)
  x = (x * 0x846ca68b) & 0xffffffff
  return x ~ (x >> 16)
end

h.test("springs.cu compiles for sm_90 with the stand-in headers", function()
  h.need_nvrtc(cuda)
  local m = cuda.load(file, {arch = "sm_90", include_dirs = opts.include_dirs})
  h.eq(table.concat(m:kernels(), " "), "step facts", "its kernels")
end)

h.test("springs.cu runs: the headers' constants and functions, against the host", function()
  local m = cuda.load(file, opts)
  local f = cuda.device_array(10, "i64")
  m.facts[{1, 1}](f)
  local got = {}
  local fh = f:copy_to_host()
  for i = 1, 10 do got[i] = fh[i] end
  -- offsetof, CHAR_BIT, INT_MAX, FLT_EPSILON, sizeof(int64_t), numeric_limits<short>,
  -- EXIT_FAILURE + memset + abs, M_PI, INFINITY/NAN/HUGE_VALF, UINT8_MAX + INT16_MIN
  h.same(got, {4, 8, 2147483647, 1, 8, 32767, 8, 3141, 1, 255 - 32768}, nil, "facts")

  local n, dt = 1000, 0.01
  local x0, v0, force = h.random_floats(n, -4, 4), h.random_floats(n), h.random_floats(n, -2, 2)
  for i = 1, n do x0[i], v0[i], force[i] = h.f32(x0[i]), h.f32(v0[i]), h.f32(force[i]) end
  local x, v = cuda.to_device(x0, "f32"), cuda.to_device(v0, "f32")
  local fd = cuda.to_device(force, "f32")
  local tags, energy = cuda.device_array(n, "u32"), cuda.device_array(n, "f32")
  m.step[{(n + 127) // 128, 128}](x, v, fd, dt, n, tags, energy)
  local wx, wv, we, wt = {}, {}, {}, {}
  for i = 1, n do
    local a = force[i] - 0.5 * v0[i] - x0[i]
    local nv = v0[i] + a * dt
    local nx = x0[i] + nv * dt
    wx[i], wv[i] = nx, nv
    we[i] = 0.5 * nv * nv + 0.5 * nx * nx + math.sqrt(math.abs(nx)) * (math.pi / 4)
    local lo, hi = mix32(i - 1), mix32(i)
    if lo > hi then lo, hi = hi, lo end
    wt[i] = (lo ~ ((hi << 1) & 0xffffffff)) & 0x7fffffff
  end
  local function host(a)
    local t, hst = {}, a:copy_to_host()
    for i = 1, #hst do t[i] = hst[i] end
    return t
  end
  h.same(host(x), wx, 1e-5, "x")
  h.same(host(v), wv, 1e-5, "v")
  h.same(host(energy), we, 1e-5, "energy")
  h.same(host(tags), wt, nil, "tags (integer: exact)")
end)

h.test("a host-only header compiles, and fails where device code uses it, naming it", function()
  h.need_nvrtc(cuda)
  local src = '#include <stdio.h>\n#include <iostream>\n#include <vector>\n' ..
              'extern "C" __global__ void k(int *p) {\n  %s\n}\n'
  -- included for the file's host code, as a sample does: costs nothing
  h.eq(table.concat(cuda.source(src:format("*p = 1;"), {arch = "sm_90", name = "host.cu"}):kernels(), " "), "k")
  h.raises({"'host.cu' failed to compile", "<iostream> is a host-only header: std::cout",
            "#ifndef __CUDACC_RTC__", "at line 5 of host.cu"},
           cuda.source, src:format('std::cout << "x";'), {arch = "sm_90", name = "host.cu"})
  h.raises({"<vector> is a host-only header: std::vector", "at line 5 of host.cu"},
           cuda.source, src:format("std::vector<int> v;"), {arch = "sm_90", name = "host.cu"})
end)

h.run()
