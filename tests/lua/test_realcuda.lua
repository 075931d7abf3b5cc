-- test_realcuda.lua -- real CUDA code goes through cuda.load unedited (tests/realcuda): C++
-- linkage, templates by name expression, typedef'd parameters, kernels in an included header,
-- optional pointers passed nil, <cooperative_groups.h> and <curand_kernel.h>. Each runs on the
-- GPU (on the CPU device without one, where its headers allow: cooperative groups do, through
-- cujit/cpu_cg.h) against the host's results; the headers the CPU device cannot host are refused
-- with a clear message there, and compile with NVRTC for sm_90 everywhere.
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

h.test("templated transpose: name expressions give the instantiations", function()
  local m = cuda.load(dir .. "transpose.cu", {
    name_expressions = {"transposeNoBankConflicts<float, 32, 8>",
                        "transposeNoBankConflicts<double, 16, 4>"}})
  local kf = m["transposeNoBankConflicts<float, 32, 8>"]
  local kd = m:kernel("transposeNoBankConflicts<double, 16, 4>")
  h.eq(kf:params()[1].type, "float *", "T put in for the template parameter")
  h.eq(kd:params()[2].type, "const double *", "the double instantiation")
  for _, case in ipairs {{kf, "f32", 32, 8}, {kd, "f64", 16, 4}} do
    local k, dtype, tile, rows = table.unpack(case)
    local w, ht = 45, 37
    local src = h.random_floats(w * ht)
    if dtype == "f32" then for i = 1, #src do src[i] = h.f32(src[i]) end end
    local a, b = cuda.to_device(src, dtype), cuda.device_array(w * ht, dtype)
    k[{{(w + tile - 1) // tile, (ht + tile - 1) // tile}, {tile, rows}}](b, a, w, ht)
    local got, want = host(b), {}
    for y = 0, ht - 1 do
      for x = 0, w - 1 do want[x * ht + y + 1] = src[y * w + x + 1] end
    end
    h.same(got, want, nil, dtype .. " transpose")
  end
  h.raises({"name_expressions"}, function() return m["transposeNoBankConflicts<int, 8, 8>"] end)
end)

h.test("histogram: C++ linkage, typedef'd parameters, a kernel in the included header", function()
  local m = cuda.load(dir .. "histogram.cu")
  local names = table.concat(m:kernels(), " ")
  h.contains(names, "histogram256Kernel", "kernel of the file")
  h.contains(names, "mergeHistogram256Kernel", "kernel of the header")
  local p = m.histogram256Kernel:params()
  h.eq(p[1].dtype, "u32", "uint * is a pointer to unsigned int")
  h.eq(p[2].dtype, "u8", "const uchar * is a pointer to unsigned char")
  local n, blocks = 10000, 8
  local data = h.random_ints(n, 0, 255)
  local d = cuda.to_device(data, "u8")
  local partial = cuda.device_array(blocks * 256, "u32")
  local hist = cuda.device_array(256, "u32")
  m.histogram256Kernel[{blocks, 128}](partial, d, n)
  m.mergeHistogram256Kernel[{2, 128}](hist, partial, blocks)
  local want = {}
  for i = 1, 256 do want[i] = 0 end
  for _, v in ipairs(data) do want[v + 1] = want[v + 1] + 1 end
  h.same(host(hist), want, nil, "histogram")
end)

h.test("scan: a static kernel, '= NULL' pointers take nil, nonnull = true refuses it elsewhere",
  function()
  local m = cuda.load(dir .. "scan.cu", {nonnull = true})
  h.check(m.scan_block:params()[3].nullable, "block_sums is declared = NULL")
  h.check(not m.scan_block:params()[2].nullable, "out is not, under nonnull = true")
  local n, block = 1000, 128
  local blocks = (n + block - 1) // block
  local src = h.random_ints(n, -4, 4)
  local a, out = cuda.to_device(src, "f32"), cuda.device_array(n, "f32")
  local sums, scanned = cuda.device_array(blocks, "f32"), cuda.device_array(blocks, "f32")
  m.scan_block[{blocks, block, shared = block * 4}](a, out, sums, n)
  m.scan_block[{1, block, shared = block * 4}](sums, scanned, nil, blocks)
  m.add_block_offsets[{blocks, block}](out, scanned, n)
  local want, acc = {}, 0
  for i = 1, n do acc = acc + src[i]; want[i] = acc end
  h.same(host(out), want, nil, "inclusive scan")
  h.raises({"out", "nonnull"}, function() m.scan_block[{1, 32, shared = 128}](a, nil, nil, 4) end)
end)

h.test("a struct by value: its bytes, sized from the PTX (from g++ on the CPU device)", function()
  local m = cuda.source([[
struct Affine { float scale, shift; };
__global__ void affine(Affine a, float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a.scale * x[i] + a.shift;
}
]])
  local x = cuda.to_device({1, 2, 3}, "f32")
  h.eq(m.affine:params()[1].size, 8, "Affine's size from the PTX (g++'s on the CPU device)")
  m.affine[{1, 32}](string.pack("ff", 2, 1), x, 3)
  h.same(host(x), {3, 5, 7}, nil, "affine")
end)

h.test("cooperative groups reduction", function()
  local opts = {name_expressions = {"reduce_cg<float, 256>"}}
  local m = cuda.load(dir .. "reduction_cg.cu", opts)
  local n, blocks = 100000, 64
  local src = h.random_ints(n, -8, 8)
  local a, part = cuda.to_device(src, "f32"), cuda.device_array(blocks, "f32")
  m["reduce_cg<float, 256>"][{blocks, 256}](a, part, n)
  local got, want = 0, 0
  for _, v in ipairs(host(part)) do got = got + v end
  for _, v in ipairs(src) do want = want + v end
  h.eq(got, want, "sum")
end)

h.test("cuRAND Monte Carlo", function()
  if on_cpu then
    h.raises({"curand_kernel.h", "not supported on the CPU device"}, cuda.load,
             dir .. "monte_carlo_pi.cu")
    return
  end
  local m = cuda.load(dir .. "monte_carlo_pi.cu")
  local hits = cuda.zeros(1, "u32")
  local threads, per = 256 * 64, 256
  m.count_inside[{64, 256}](1234, per, hits)
  -- Within five standard errors of pi (4 sqrt(p (1 - p) / n), p = pi / 4: 0.0040 for these 2^22
  -- points), not a fixed 1 %: that took an estimate 39 standard errors off, such as one whose
  -- count lost a warp's points.
  local n = threads * per
  local p = math.pi / 4
  local se = 4 * math.sqrt(p * (1 - p) / n)
  local estimate = 4 * host(hits)[1] / n
  h.check(math.abs(estimate - math.pi) <= 5 * se,
          string.format("pi from %d points is %.6f, more than 5 SE (%.6f) from %.6f", n, estimate,
                        5 * se, math.pi))
end)

h.test("both CUDA 13 headers compile with NVRTC (include/cccl on its path)", function()
  h.need_nvrtc(cuda)
  local m = cuda.load(dir .. "reduction_cg.cu",
                      {arch = "sm_90", name_expressions = {"reduce_cg<double, 128>"}})
  h.contains(m:ptx(), ".entry _Z9reduce_cgIdLj128EEvPKT_PS0_j", "the instantiation's lowered name")
  local r = cuda.load(dir .. "monte_carlo_pi.cu", {arch = "sm_90"})
  h.contains(r:ptx(), "count_inside", "the cuRAND kernel")
  h.eq(r:kernels()[1], "count_inside", "found by its C++ name")
end)

h.test("headers shared with host code: -default-device and __CUDACC_RTC__", function()
  h.need_nvrtc(cuda)
  local shared = "inline float sq(float x) { return x * x; }\n" ..
                 "#ifndef __CUDACC_RTC__\n#include <vector>\n" ..
                 "void reference(const std::vector<float> &x, float *out);\n#endif\n"
  local src = shared .. "__global__ void sqs(float *x) { x[0] = sq(x[0]); }\n"
  h.raises({"sq"}, cuda.source, src, {arch = "sm_90"})
  local m = cuda.source(src, {arch = "sm_90", flags = {"-default-device"}})
  h.eq(m:kernels()[1], "sqs", "the kernel beside the shared header")
end)

h.test("NVRTC's warnings are kept on a cache hit", function()
  h.need_nvrtc(cuda)
  local src = "__global__ void warns(int *x) { int unused_here; *x = 1; }\n"
  local first = cuda.source(src, {arch = "sm_90"})
  local again = cuda.source(src, {arch = "sm_90"})
  h.contains(tostring(again), "cache hit", "the second compile")
  h.contains(first:log(), "unused_here", "the log of the first compile")
  h.eq(again:log(), first:log(), "the log of the hit")
end)

h.run()
