-- cooperative.lua -- a one-kernel iterative solver: Jacobi sweeps for u'' = f on a 1-D grid
-- (fixed ends), every sweep separated by a grid-wide barrier (cooperative_groups::this_grid()
-- .sync()) inside ONE cooperative launch, checked against the multi-launch version (one launch
-- per sweep, the launch boundary being the barrier): the results must be identical, bit for bit,
-- and both timings are printed. The grid is sized by k:max_cooperative_blocks, the most blocks
-- the device holds at once (a cooperative launch asks for all of them at the same time).
--
-- On the CPU device a cooperative launch holds one block per worker (a worker runs a block to its
-- end before it takes another), so the grid is small there and the sweeps loop over the data.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local BLOCK = 256
local cudadir = os.getenv("CUDA_HOME") or "/usr/local/cuda"
-- CUDA 13 keeps libcu++ (which cooperative_groups.h includes) under include/cccl.
local include_dirs = {cudadir .. "/include", cudadir .. "/include/cccl"}

local sweep = [[
// One Jacobi sweep: v[i] = (u[i-1] + u[i+1] - h2 f[i]) / 2, the ends fixed.
__device__ void sweep(const float *u, float *v, const float *f, float h2, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v[i] = (i == 0 || i == n - 1) ? u[i] : 0.5f * (u[i - 1] + u[i + 1] - h2 * f[i]);
}
]]
local step = cuda.source(sweep .. [[
extern "C" __global__ void jacobi_step(const float *u, float *v, const float *f, float h2, int n) {
  sweep(u, v, f, h2, n);
}
]], S.options({name = "jacobi_step.cu"})).jacobi_step

-- The cooperative kernel: the toolkit's cooperative_groups.h on a GPU, cujit's own on the CPU device.
local all = cuda.source("#include <cooperative_groups.h>\n" .. sweep .. [[
extern "C" __global__ void jacobi_all(float *u, float *v, const float *f, float h2, int n,
                                      int sweeps) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  for (int k = 0; k < sweeps; k++) {
    sweep(u, v, f, h2, n);
    grid.sync(); // every v[i] written before any block reads it as u
    float *t = u;
    u = v, v = t;
  }
}
]], S.options({name = "jacobi_all.cu", include_dirs = include_dirs})).jacobi_all
S.host_checks_done()

local n = S.on_cpu and 4096 or (1 << 20)
local sweeps = S.on_cpu and 40 or 1000 -- even: the result ends in u
local h2 = (1 / (n - 1)) ^ 2
local f = cuda.full(n, 1, "f32")
local start = {}
for i = 1, n do start[i] = (i * 7919 % 1000) / 500 - 1 end -- rough: sweeps smooth it

local function residual(u) -- max |u[i-1] - 2u[i] + u[i+1] - h2 f[i]|, on the host
  local x, worst = u:copy_to_host(), 0
  for i = 2, n - 1 do worst = math.max(worst, math.abs(x[i - 1] - 2 * x[i] + x[i + 1] - h2)) end
  return worst
end

-- Multi-launch: one launch per sweep; the launch boundary is the barrier. (suggest_block loads the
-- kernel on the device first, so the timing holds launches only.)
step:suggest_block()
local u1, v1 = cuda.to_device(start, "f32"), cuda.zeros(n)
local grid = S.blocks(n, BLOCK)
local ms_multi = S.gpu_ms(function()
  for _ = 1, sweeps do
    step[{grid, BLOCK}](u1, v1, f, h2, n)
    u1, v1 = v1, u1
  end
end)
local before, after = residual(cuda.to_device(start, "f32")), residual(u1)
S.check(after < before, "multi-launch: %d sweeps of %d points in %.3f ms (%.1f us a sweep); the "
        .. "residual fell from %.3g to %.3g", sweeps, n, ms_multi, ms_multi * 1e3 / sweeps, before,
        after)

local fit = all:max_cooperative_blocks(BLOCK)
local coop_grid = math.min(fit, grid)
local u2, v2 = cuda.to_device(start, "f32"), cuda.zeros(n)
local ms_coop = S.gpu_ms(function()
  all[{coop_grid, BLOCK, cooperative = true}](u2, v2, f, h2, n, sweeps)
end)
local a, b = u1:copy_to_host(), u2:copy_to_host()
local same = true
for i = 1, n do same = same and a[i] == b[i] end
S.check(same, "one cooperative launch of %d blocks (%d fit at once): %d sweeps in %.3f ms (%.1f us "
        .. "a sweep), identical to the %d launches (%.3f ms)", coop_grid, fit, sweeps, ms_coop,
        ms_coop * 1e3 / sweeps, sweeps, ms_multi)
local ok, err = pcall(function()
  all[{fit + 1, BLOCK, cooperative = true}](u2, v2, f, h2, n, 2)
end)
S.check(not ok and tostring(err):find("does not fit", 1, true),
        "a grid of %d blocks is refused before the driver: %s", fit + 1, tostring(err):sub(1, 90))
S.done()
