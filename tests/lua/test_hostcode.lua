-- test_hostcode.lua -- whole CUDA files, host code and all (tests/realcuda/*_whole.cu): cujit
-- elides main, the host functions, their launches, host globals, classes and templates
-- (docs/cuda-code.md, "Host code"), and keeps the device code, the struct and the
-- __host__ __device__ function both sides share, and a host constant the kernels use. Each file
-- is loaded with cuda.load as it is and its kernels run (on the GPU, or on the CPU device without
-- one) against the host; each compiles with NVRTC for sm_90 too, which needs no GPU.
local h = require "helper"
local cuda = require "cujit"

local dir = h.here() .. "../realcuda/"
h.need_gpu(cuda)
local on_cpu = cuda.device().arch == "cpu"

local function host(a)
  local t, hst = {}, a:copy_to_host()
  for i = 1, #hst do t[i] = hst[i] end
  return t
end

local function clampf(x, lo, hi) return x < lo and lo or (x > hi and hi or x) end

h.test("a whole file: its kernels run, the host code is gone", function()
  local m = cuda.load(dir .. "saxpy_whole.cu")
  local names = " " .. table.concat(m:kernels(), " ") .. " "
  h.contains(names, " saxpy_clamped ", "the extern \"C\" kernel")
  h.contains(names, " square_all ", "the C++-linkage kernel")
  h.check(not names:find("main"), "main is no kernel: " .. names)
  local n = 5000
  local x = h.random_floats(n, -80, 80)
  local y = h.random_floats(n, -30, 30)
  for i = 1, n do x[i], y[i] = h.f32(x[i]), h.f32(y[i]) end
  local dx, dy = cuda.to_device(x, "f32"), cuda.to_device(y, "f32")
  local coeffs = cuda.to_device({1.5, -2}, "f32") -- struct Coeffs {a, b}
  local blocks = (n + 127) // 128                 -- the kernel's index uses BLOCK (128)
  m.saxpy_clamped[{blocks, 128}](dy, dx, coeffs, n)
  m.square_all[{7, 64}](dy, n)
  local want = {}
  for i = 1, n do
    local v = clampf(h.f32(h.f32(h.f32(1.5 * x[i]) - 2) + y[i]), -100, 100)
    want[i] = h.f32(v * v)
  end
  h.same(host(dy), want, 1e-5, "clamp(a*x + b + y)^2, through Coeffs::apply and clampf")
end)

h.test("a kernel a macro writes, given by signatures, in the same whole file", function()
  local m = cuda.load(dir .. "saxpy_whole.cu", {
    signatures = {"fill_f32(float *x, float v, int n)", "fill_i32(int *x, int v, int n)"}})
  local a, b = cuda.device_array(300, "f32"), cuda.device_array(300, "i32")
  m.fill_f32[{3, 128}](a, 2.5, 300)
  m.fill_i32[{3, 128}](b, -7, 300)
  local wa, wb = {}, {}
  for i = 1, 300 do wa[i], wb[i] = 2.5, -7 end
  h.same(host(a), wa, nil, "fill_f32")
  h.same(host(b), wb, nil, "fill_i32")
end)

h.test("NVRTC compiles the whole file for sm_90", function()
  h.need_nvrtc(cuda)
  local m = cuda.load(dir .. "saxpy_whole.cu", {arch = "sm_90", name_expressions = {"square_all"}})
  h.contains(m:ptx(), ".entry saxpy_clamped", "the kernel")
  h.contains(m:ptx(), "square_all", "the C++ kernel")
  h.check(not m:ptx():find("host_max"), "no host template instantiated")
end)

-- The weights of stencil_helpers.h's stencil_weight, and the kernel's sum in its order.
local function stencil(x, scale)
  local out, n = {}, #x
  for i = 1, n do
    local sum = 0.0
    for k = -3, 3 do
      local v = (i + k >= 1 and i + k <= n) and x[i + k] or 0.0
      sum = h.f32(sum + h.f32(h.f32(1 / (1 + math.abs(k))) * v))
    end
    out[i] = h.f32(scale * sum)
  end
  return out
end

h.test("a whole file with host headers and a helper header", function()
  local ok, m = pcall(cuda.load, dir .. "stencil_whole.cu")
  if not on_cpu and not ok and tostring(m):find("cannot open source file", 1, true) then
    -- NEEDS THE HOST HEADERS UNDER NVRTC (<stdio.h>, <stdlib.h>, <time.h>, <vector>,
    -- <cuda_runtime.h>): cujit's stand-in headers (issue 22, part 1) make this pass on a GPU;
    -- until they cover each one, NVRTC cannot open them.
    print("note: stencil_whole.cu on the GPU waits for the stand-in headers: " .. tostring(m))
    return
  end
  assert(ok, m)
  local n = 1000
  local x = h.random_floats(n, 0, 10)
  for i = 1, n do x[i] = h.f32(x[i]) end
  local dx, dy = cuda.to_device(x, "f32"), cuda.device_array(n, "f32")
  local scale_bits = string.unpack("<i4", string.pack("<f", 0.5))
  local params = cuda.to_device({n, scale_bits}, "i32") -- struct StencilParams {n, scale}
  m.stencil_1d[{(n + 127) // 128, 128}](dx, dy, params)
  h.same(host(dy), stencil(x, 0.5), 1e-5, "the stencil, against the host's")
end)

h.test("NVRTC: the whole file with host headers, for sm_90", function()
  h.need_nvrtc(cuda)
  -- NEEDS THE HOST HEADERS UNDER NVRTC (issue 22, part 1): skipped, saying which, until the
  -- stand-in headers cover them; then the helper header's host code must be elided to compile.
  for _, hdr in ipairs {"stdio.h", "stdlib.h", "time.h", "vector", "cuda_runtime.h"} do
    local src = "#include <" .. hdr .. ">\n__global__ void k() {}\n"
    if not pcall(cuda.source, src, {arch = "sm_90"}) then
      print("note: skipped until NVRTC finds <" .. hdr .. "> (cujit's stand-ins, issue 22, part 1)")
      return
    end
  end
  local m = cuda.load(dir .. "stencil_whole.cu", {arch = "sm_90"})
  h.contains(m:ptx(), "stencil_1d", "the kernel")
end)

h.test("a compile error still names the user's file and line", function()
  local path = h.tmpname(".cu")
  local f = assert(io.open(path, "w"))
  f:write([[
#include <cstdlib>
static int parse(const char *s) { return atoi(s); }
int main(int argc, char **argv) { return parse(argv[1]); }
__global__ void broken(float *x) {
  x[0] = undeclared_here;
}
]])
  f:close()
  local ok, err = pcall(cuda.load, path)
  h.check(not ok, "the kernel does not compile")
  h.contains(err, ":5: error", "line 5 of the file, as written")
  h.contains(err, "undeclared_here", "the compiler's message")
end)

-- A header's kernel template and a host wrapper of the same name (fence_sum.cuh): the wrapper is
-- host code, as is isPow2 that only it calls. Before, the wrapper stayed for the kernel's name:
-- NVRTC said "host functions are not allowed in JIT mode", the CPU device refused its <<<...>>>.
local fence_names = {"fenceSum<256, true>", "fenceSum<128, false>"}
local function fence_sum(x, bs, blocks)
  local n, part = #x, {}
  for b = 0, blocks - 1 do
    local s = {}
    for tid = 0, bs - 1 do
      local sum, i = 0.0, b * bs * 2 + tid
      while i < n do
        sum = h.f32(sum + x[i + 1])
        if i + bs < n then sum = h.f32(sum + x[i + bs + 1]) end
        i = i + bs * 2 * blocks
      end
      s[tid] = sum
    end
    local st = bs // 2
    while st > 0 do
      for tid = 0, st - 1 do s[tid] = h.f32(s[tid] + s[tid + st]) end
      st = st // 2
    end
    part[b + 1] = s[0]
  end
  return part
end

h.test("a kernel template and a host wrapper of its name: the wrapper goes", function()
  local m = cuda.load(dir .. "fence_sum_whole.cu", {name_expressions = fence_names})
  for _, c in ipairs {{256, true, 4096}, {128, false, 3001}} do
    local bs, n, blocks = c[1], c[3], 5
    local x = {}
    for i = 1, n do x[i] = (i * 7919) % 13 end -- small integers: every order sums exactly
    local dx, part = cuda.to_device(x, "f32"), cuda.device_array(blocks, "f32")
    m[("fenceSum<%d, %s>"):format(bs, tostring(c[2]))][{blocks, bs}](dx, part, n)
    h.same(host(part), fence_sum(x, bs, blocks), nil, "the block sums of " .. n)
  end
end)

h.test("NVRTC: a kernel template and a host wrapper of its name, for sm_90", function()
  h.need_nvrtc(cuda)
  local ok, m = pcall(cuda.load, dir .. "fence_sum_whole.cu",
                      {arch = "sm_90", name_expressions = fence_names})
  if not ok and tostring(m):find("cannot open source file", 1, true) then
    print("note: fence_sum_whole.cu for sm_90 waits for the stand-in headers: " .. tostring(m))
    return
  end
  assert(ok, m)
  h.contains(m:ptx(), ".entry", "the kernels")
  h.check(not m:ptx():find("isPow2"), "the host helper is gone")
end)

-- The main file declares the types its kernel header's kernel takes (blend_whole.cu, then
-- #include "blend_kernels.cuh"): they stay, the host-only struct goes. Before, the main file was
-- elided before its headers were read, and BlendParams, BlendMode and real_t were gone.
local function blend_check(m)
  local n, x, y = 777, h.random_floats(777, -4, 4), h.random_floats(777, -4, 4)
  for i = 1, n do x[i], y[i] = h.f32(x[i]), h.f32(y[i]) end
  local da, db, out = cuda.to_device(x, "f32"), cuda.to_device(y, "f32"), cuda.device_array(n, "f32")
  for mode = 0, 1 do -- struct BlendParams {int n; BlendMode mode; float wa, wb;}: 16 bytes
    m.blend[{(n + 127) // 128, 128}](string.pack("<i4i4ff", n, mode, 0.25, -1.5), da, db, out)
    local want = {}
    for i = 1, n do
      local a, b = h.f32(0.25 * x[i]), h.f32(-1.5 * y[i])
      want[i] = mode == 0 and h.f32(a + b) or h.f32(a * b)
    end
    h.same(host(out), want, 1e-6, "blend mode " .. mode)
  end
end

h.test("types the main file declares for its header's kernel stay", function()
  local m = cuda.load(dir .. "blend_whole.cu")
  blend_check(m)
end)

h.test("NVRTC: types the main file declares for its header's kernel, for sm_90", function()
  h.need_nvrtc(cuda)
  local m = cuda.load(dir .. "blend_whole.cu", {arch = "sm_90"})
  h.contains(m:ptx(), "blend", "the kernel")
end)

h.run()
