-- test_lua_managed.lua -- memory the host and the device share (managed arrays indexed from Lua,
-- prefetch and advice; mapped and registered host arrays), cooperative launches with a grid-wide
-- barrier checked against the multi-launch version, and sharing memory and an event with a
-- second cujit process. On the CPU device (no GPU here) managed and mapped memory are host
-- memory and run the same checks; cooperative launches run there too (one block per worker); IPC
-- is refused there, and what is checked then is the refusal's message (the GPU half of that test
-- says so when it is not run).
local h = require "helper"
local cuda = require "cujit"

-- The child process of the IPC test: opens the memory and event, waits, doubles, exits.
if arg[1] == "ipc-child" then
  cuda.device(tonumber(arg[4]))
  local a = cuda.ipc_open(arg[2])
  local ready = cuda.ipc_open_event(arg[3])
  ready:synchronize() -- the parent recorded it after filling the array
  local double = cuda.jit("double_it(int *x, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2;
  ]])
  double[{(a.size + 127) // 128, 128}](a, a.size)
  cuda.synchronize()
  a:free() -- closes the handle before the exporter may free the memory
  os.exit(0, true)
end

h.need_gpu(cuda)
local on_cpu = cuda.device().arch == "cpu"

local function gpu_only(what)
  print(string.format("  (GPU half of '%s' not run: the CPU device has no %s)", what, what))
end

local fill_index = cuda.jit("fill_index(float *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * i + 1.0f;
]])

h.test("a managed array: written by the host, by a kernel, read back in place", function()
  local n = 500 + math.random(0, 500)
  local m = cuda.managed_array(n, "f32")
  h.eq(m[1], 0, "zeroed")
  for i = 1, n do m[i] = -i end
  h.eq(m[n], -n, "the host's write")
  fill_index[{(n + 127) // 128, 128}](m, n)
  -- no synchronize: reading from Lua after a launch waits for the device first
  for i = 1, n do
    if m[i] ~= 2 * (i - 1) + 1 then error(string.format("m[%d] = %s", i, m[i])) end
  end
  h.eq(m:sum(), n * n, "a reduction reads it too")
  m:prefetch("device")
  m:advise("read_mostly")
  m:prefetch("host")
  cuda.synchronize()
  h.eq(m[3], 5, "still there after migrations")
  h.raises({"outside"}, function() return m[n + 1] end)
  h.raises({"cannot store", "number"}, function() m[1] = "x" end)
  local d = cuda.zeros(4)
  h.raises({"not managed"}, d.prefetch, d)
  h.raises({"managed_array"}, function() return d[1] end)
  local s = m:slice(2, 4)
  h.eq(s[1], 3, "a view of managed memory is indexed too")
  s:prefetch("host")
  -- the stream is the third argument, checked as every stream argument is
  local st = cuda.stream()
  h.eq(m:prefetch("device", st), m, "prefetch on a stream returns the array")
  st:synchronize()
  h.eq(m[3], 5, "still there after a prefetch on a stream")
  h.raises({"cujit.stream expected, got number"}, m.prefetch, m, "device", 42)
  st:free()
  h.raises({"stream has been freed"}, m.prefetch, m, "host", st)
end)

h.test("a mapped host array: a kernel writes host memory directly", function()
  local n = 300
  local host = cuda.host_array(n, "f32", {mapped = true})
  local view = host:mapped()
  fill_index[{(n + 127) // 128, 128}](view, n)
  cuda.synchronize()
  for i = 1, n do h.eq(host[i], 2 * (i - 1) + 1, "host[" .. i .. "]") end
  view:fill(7)
  h.eq(host[n], 7, "a fill through the view")
  local plain = cuda.host_array(n, "f32")
  h.raises({"pinned"}, plain.mapped, plain)
  cuda.register(plain)
  h.check(plain.pinned, "registered arrays read as pinned")
  fill_index[{(n + 127) // 128, 128}](plain:mapped(), n)
  cuda.synchronize()
  h.eq(plain[n], 2 * (n - 1) + 1, "a registered array mapped")
  h.raises({"already"}, cuda.register, plain)
  local v2 = host:mapped()
  host:free()
  h.raises({"freed"}, function() return v2:copy_to_host() end)
end)

local single = [[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void coop_sum(const float *x, float *partial, float *out, int n) {
  __shared__ float part[256];
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = part[0];
  cg::this_grid().sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float t = 0.0f;
    for (int b = 0; b < gridDim.x; b++) t += partial[b];
    out[0] = t;
  }
}
]]

h.test("a cooperative launch synchronises the grid (single-pass sum = multi-launch sum)", function()
  local cudadir = os.getenv("CUDA_HOME") or "/usr/local/cuda"
  local m = cuda.source(single, {include_dirs = {cudadir .. "/include", cudadir .. "/include/cccl"}})
  local fit = m.coop_sum:max_cooperative_blocks(256)
  h.check(fit >= 1, "at least one block fits")
  local n = 100000 + math.random(0, 100000)
  local x = cuda.random.uniform(cuda.device_array(n), 7)
  local grid = math.min(fit, 1024)
  local partial, out = cuda.zeros(grid), cuda.zeros(1)
  m.coop_sum[{grid, 256, cooperative = true}](x, partial, out, n)
  -- the multi-launch version: the same partial sums, then a second launch adds them
  local sum_partials = cuda.jit("sum_partials(const float *partial, float *out, int blocks)", [[
    float t = 0.0f;
    for (int b = 0; b < blocks; b++) t += partial[b];
    out[0] = t;
  ]])
  local out2 = cuda.zeros(1)
  sum_partials[{1, 1}](partial, out2, grid)
  h.eq(out:copy_to_host()[1], out2:copy_to_host()[1], "single pass = two launches")
  h.near(out:copy_to_host()[1], x:sum(), 1e-3 * n, "and the library's sum")
  h.raises({"does not fit", tostring(fit)},
           function() m.coop_sum[{fit + 1, 256, cooperative = true}](x, partial, out, n) end)
end)

h.test("IPC: another process opens the memory and an event, and doubles the array", function()
  if on_cpu then
    h.raises({"CPU device cannot share"}, cuda.shareable_array, 4, "i32")
    h.raises({"CPU device cannot share"}, cuda.shareable_event)
    h.raises({"not a cujit IPC handle"}, cuda.ipc_open, "hello")
    return gpu_only("IPC")
  end
  local n = 1000
  local a = cuda.shareable_array(n, "i32")
  a:copy_from(cuda.array((function() local t = {} for i = 1, n do t[i] = i end return t end)(), "i32"))
  local ready = cuda.shareable_event()
  ready:record()
  local handle, event_handle = a:ipc_handle(), ready:ipc_handle()
  h.contains(handle, "cujit-ipc-mem:i32:4000:", "the handle names dtype and size")
  local plain = cuda.zeros(4)
  h.raises({"allocated shareable"}, plain.ipc_handle, plain)
  local q = function(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
  local cmd = table.concat({q(arg[-1]), q(arg[0]), "ipc-child", q(handle), q(event_handle),
                            tostring(cuda.device().ordinal)}, " ")
  local ok, how, code = os.execute(cmd)
  h.check(ok, "the child process failed: " .. tostring(how) .. " " .. tostring(code))
  local got = a:copy_to_host()
  for i = 1, n do h.eq(got[i], 2 * i, "a[" .. i .. "] doubled by the other process") end
end)

h.run()
