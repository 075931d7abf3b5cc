-- test_tma.lua -- tensor maps from Lua (issue 26): a:tensor_map{box, swizzle, oob} and its
-- refusals (the argument's own, always; the engine's, where a device has TMA), the CPU device
-- refused, a map keeping its array alive; on a GPU of compute capability 9.0, tiles copied
-- through the map by a kernel of <cujit/tma.h> (+0.5 each), with boxes past the edges, without
-- swizzle and with 128B, checked element by element, and a 1-D bulk copy.
local h = require "helper"
local cuda = require "cujit"

h.need_nvrtc(cuda)
local gpu = cuda.has_gpu() and cuda.device().arch ~= "cpu"
local tma = gpu and cuda.device().cc_major >= 9
if gpu then print(string.format("runs on: GPU %d (%s)", cuda.device().ordinal, cuda.device().name)) end

h.test("the CPU device has no TMA: the map and the header refused, saying so", function()
  local was = gpu and cuda.device().ordinal
  cuda.device("cpu")
  print("runs on: CPU device (the refusals)")
  local a = cuda.device_array({64, 64}, "f32")
  h.raises({"cujit_tensor_map_encode: the CPU device has no Tensor Memory Accelerator",
            "ordinary loads"}, a.tensor_map, a, {box = {32, 32}})
  h.raises({"<cujit/tma.h>: the Tensor Memory Accelerator is a unit of compute capability 9.0",
            "the CPU device has none"}, cuda.source, "#include <cujit/tma.h>\n" ..
            "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n")
  a:free()
  if was then cuda.device(was) end
end)

h.test("the arguments of a:tensor_map refused before any device is asked", function()
  local was = gpu and cuda.device().ordinal
  cuda.device("cpu")
  local a = cuda.device_array({64, 64}, "f32")
  h.raises({"a:tensor_map: box = {...} expected", "2 dimensions", "got nil"}, a.tensor_map, a, {})
  h.raises({"a:tensor_map: box has 1 sizes for an array of 2 dimensions"}, a.tensor_map, a,
           {box = {32}})
  h.raises({"a:tensor_map: box[2] must be an integer from 1 to 256, got 0"}, a.tensor_map, a,
           {box = {32, 0}})
  h.raises({"box[1] must be an integer from 1 to 256, got 257"}, a.tensor_map, a, {box = {257, 1}})
  h.raises({"box[1] must be an integer from 1 to 256, got 1.5"}, a.tensor_map, a, {box = {1.5, 4}})
  h.raises({"a:tensor_map: swizzle must be one of none, 32B, 64B, 128B; got 256B"}, a.tensor_map,
           a, {box = {32, 32}, swizzle = "256B"})
  h.raises({"a:tensor_map: oob must be one of zero, nan; got inf"}, a.tensor_map, a,
           {box = {32, 32}, oob = "inf"})
  h.raises({"table expected"}, a.tensor_map, a, 32)
  a:free()
  if was then cuda.device(was) end
end)

local add = cuda.source([[
#include <cujit/tma.h>
template <int ALIGN>
__device__ void add_tiles(const CUtensorMap *in, const CUtensorMap *out, float add) {
  __shared__ alignas(ALIGN) float tile[16][32];
  __shared__ unsigned long long bar;
  int x = blockIdx.x * 32, y = blockIdx.y * 16;
  if (threadIdx.x == 0) { cujit::mbarrier_init(&bar, 1); cujit::fence_barrier_init(); }
  __syncthreads();
  if (threadIdx.x == 0) {
    cujit::mbarrier_expect_tx(&bar, sizeof tile);
    cujit::tma_load_2d(tile, in, x, y, &bar);
  }
  cujit::mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x) tile[i / 32][i % 32] += add;
  cujit::fence_proxy_async();
  __syncthreads();
  if (threadIdx.x == 0) {
    cujit::tma_store_2d(out, x, y, tile);
    cujit::bulk_commit();
    cujit::bulk_wait<0>();
  }
}
extern "C" __global__ void plain_tiles(const __grid_constant__ CUtensorMap in,
                                       const __grid_constant__ CUtensorMap out, float add) {
  add_tiles<128>(&in, &out, add);
}
extern "C" __global__ void swizzled_tiles(const __grid_constant__ CUtensorMap in,
                                          const __grid_constant__ CUtensorMap out, float add) {
  add_tiles<1024>(&in, &out, add);
}
extern "C" __global__ void bulk_copy(const float *in, float *out, int chunk) {
  __shared__ alignas(128) float buf[1024];
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    cujit::mbarrier_init(&bar, 1);
    cujit::fence_barrier_init();
    cujit::mbarrier_expect_tx(&bar, chunk * 4);
    cujit::bulk_load(buf, in + (size_t)blockIdx.x * chunk, chunk * 4, &bar);
    cujit::mbarrier_wait(&bar, 0);
    cujit::bulk_store(out + (size_t)blockIdx.x * chunk, buf, chunk * 4);
    cujit::bulk_commit();
    cujit::bulk_wait<0>();
  }
}
]], tma and {} or {arch = "sm_90"}) -- compiled for sm_90 everywhere: the header is checked

h.test("tiles through a map: every element, boxes past the edges, no swizzle and 128B", function()
  if not tma then return end
  for _, case in ipairs({{"plain_tiles", "none", 300, 200}, {"plain_tiles", "none", 1024, 1024},
                         {"swizzled_tiles", "128B", 97, 64}}) do
    local name, swizzle, rows, cols = case[1], case[2], case[3], case[4]
    local host = {}
    for i = 1, rows * cols do host[i] = (i % 977) - 300.25 end
    local a = cuda.to_device(host, "f32"):reshape(rows, cols)
    local b = cuda.device_array({rows, cols}, "f32")
    b:fill(0)
    local min = a:tensor_map{box = {16, 32}, swizzle = swizzle}
    local mout = b:tensor_map{box = {16, 32}, swizzle = swizzle}
    h.contains(tostring(min), "cujit.tensor_map (f32[" .. rows .. "," .. cols .. "], box 16x32, swizzle " .. swizzle .. ")")
    add:kernel(name)[{{(cols + 31) // 32, (rows + 15) // 16}, 128}](min, mout, 0.5)
    local got = b:totable()
    for r = 1, rows do
      for c = 1, cols do
        local i = (r - 1) * cols + c
        if got[r][c] ~= h.f32(host[i]) + 0.5 then
          error(string.format("%s: [%d][%d] = %s, want %s", name, r, c, got[r][c], h.f32(host[i]) + 0.5))
        end
      end
    end
  end
end)

h.test("a map keeps its array alive and is refused for a parameter of another size", function()
  if not tma then return end
  local m = cuda.device_array({64, 64}, "f32"):tensor_map{box = {8, 8}}
  collectgarbage()
  h.eq(m:array().shape[1], 64, "the array behind the map")
  h.eq(#m:bytes(), 128, "a CUtensorMap's bytes")
  local k = cuda.jit("takes_struct(int2 v, int *out)", "out[0] = v.x + v.y;")
  h.raises({"a string of its 8 bytes expected", "a CUtensorMap takes a:tensor_map",
            "got a tensor map (128 bytes)"}, function()
    k[{1, 1}](m, cuda.device_array(1, "i32"))
  end)
end)

h.test("a graph's kernel node takes new maps through g:set_args, checked as a launch's", function()
  if not tma then return end
  local rows, cols = 64, 64
  local function array(v)
    local a = cuda.device_array({rows, cols}, "f32")
    a:fill(v)
    return a
  end
  local a, b, c = array(1), array(0), array(10)
  local k = add:kernel("plain_tiles")
  local grid = {cols // 32, rows // 16}
  local ma, mb, mc = a:tensor_map{box = {16, 32}}, b:tensor_map{box = {16, 32}}, c:tensor_map{box = {16, 32}}
  k[{grid, 128}](ma, mb, 0) -- loaded before the capture
  local g = cuda.graph(function(s) k[{grid, 128, stream = s}](ma, mb, 0.5) end)
  g:launch()
  cuda.synchronize()
  h.eq(b:totable()[rows][cols], 1.5, "as captured: a + 0.5 into b")
  g:set_args(1, mc, mb, 0.25) -- another array behind the first map
  g:launch()
  cuda.synchronize()
  local got = b:totable()
  for r = 1, rows do
    for col = 1, cols do
      if got[r][col] ~= 10.25 then error(string.format("b[%d][%d] = %s, want 10.25", r, col, got[r][col])) end
    end
  end
  h.raises({"bad argument #3", "'in': a string of its 128 bytes expected", "got a string of 8 bytes"},
           g.set_args, g, 1, string.pack("<i4i4", 1, 2), mb, 0.25)
  h.raises({"bad argument #4", "expected for 'plain_tiles'", "got table"}, g.set_args, g, 1, mc, {}, 0.25)
end)

h.test("a 1-D bulk copy through shared memory", function()
  if not tma then return end
  local n, chunk = 1 << 16, 1024
  local src = cuda.to_device(h.random_floats(n, -1, 1), "f32")
  local dst = cuda.device_array(n, "f32")
  add:kernel("bulk_copy")[{n // chunk, 32}](src, dst, chunk)
  h.same(dst:copy_to_host(), src:copy_to_host(), 0, "the copy")
end)

h.run(not tma and (gpu and "the GPU has no TMA (compute capability below 9.0)" or
                   "no GPU: the TMA kernels run on a GPU of compute capability 9.0"))
