-- graphs.lua -- a time-stepping solver whose step is many small kernels, replayed as a CUDA graph.
--   1-D heat equation by explicit finite differences on 4096 cells: each step adds heat at two
--   sources (one kernel each), diffuses (two stencil kernels, ping-pong) and holds the ends at
--   zero. A kernel covers the rod in a few microseconds of GPU time, so launched one by one the
--   host (about 4 us a launch) sets the pace; captured once into a graph of 20 steps (100 kernel
--   nodes) and replayed, the driver queues the whole batch in one call per replay.
-- The same steps run both ways on separate arrays: the results must be identical, bit for bit
-- (the same kernels in the same order), the heat must spread symmetrically about the sources'
-- midpoint, and all of what the sources put in must stay in the rod. Both timings are printed.
-- Then the graph's first source node gets a new amount through g:set_args (checked as a launch
-- is), and the replay must match launches with that amount.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local N, BLOCK = 4096, 256
local ALPHA = 0.25 -- diffusion number; the explicit scheme is stable up to 0.5
local STEPS_PER_GRAPH, REPLAYS = 20, 50
local LEFT, RIGHT = N // 4, N - 1 - N // 4 -- 0-based cells, symmetric about the middle

local source = cuda.jit("source(float *u, int cell, float amount)", "u[cell] += amount;",
                        S.options())
local diffuse = cuda.jit("diffuse(const float *u, float *v, int n, float alpha)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  v[i] = (i == 0 || i == n - 1) ? u[i] : u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
]], S.options())
local ends = cuda.jit("ends(float *u, int n)", "u[0] = 0.0f; u[n - 1] = 0.0f;", S.options())

S.check(ALPHA <= 0.5, "the explicit scheme is stable (alpha %.2f <= 0.5)", ALPHA)
S.host_checks_done()

local blocks = S.blocks(N, BLOCK)

-- One step of the solver on (u, v), issued on `stream`: five kernels.
local function step(u, v, stream, amount)
  source[{1, 1, stream = stream}](u, LEFT, amount)
  source[{1, 1, stream = stream}](u, RIGHT, amount)
  diffuse[{blocks, BLOCK, stream = stream}](u, v, N, ALPHA)
  diffuse[{blocks, BLOCK, stream = stream}](v, u, N, ALPHA)
  ends[{1, 1, stream = stream}](u, N)
end

local s = cuda.stream()
local function solve_by_launches(amount, replays)
  local u, v = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
  for _ = 1, replays * STEPS_PER_GRAPH do step(u, v, s, amount) end
  s:synchronize()
  return u, v
end

-- Warm up: load every kernel on the device (a capture cannot load one) and time the launches.
solve_by_launches(1.0, 1)
local t0 = S.clock()
local ref = solve_by_launches(1.0, REPLAYS)
local launch_ms = (S.clock() - t0) * 1e3

-- The graph: 20 steps captured once (the arrays it uses are kept alive by it).
local u, v = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
t0 = S.clock()
local g = cuda.graph(function(cs)
  for _ = 1, STEPS_PER_GRAPH do step(u, v, cs, 1.0) end
end)
g:instantiate()
local capture_ms = (S.clock() - t0) * 1e3
print(g)
S.check(g:nodes().kernel == 5 * STEPS_PER_GRAPH, "the graph has %d kernel nodes",
        5 * STEPS_PER_GRAPH)
g:replay(1, s) -- a warm-up replay, then a fresh start
s:synchronize()
u:copy_from(cuda.zeros(N, "f32"))
t0 = S.clock()
g:replay(REPLAYS, s)
s:synchronize()
local graph_ms = (S.clock() - t0) * 1e3

local got, want = u:copy_to_host(), ref:copy_to_host()
local differ, total = 0, 0.0
for i = 1, N do
  if got[i] ~= want[i] then differ = differ + 1 end
  total = total + got[i]
end
S.check(differ == 0, "graph replays match the launches bit for bit (%d cells differ)", differ)
local asym = 0.0
for i = 1, N do asym = math.max(asym, math.abs(got[i] - got[N + 1 - i])) end
S.check(asym <= 1e-3 * math.max(1.0, got[LEFT + 1]),
        "the heat is symmetric about the middle (largest difference %.3g)", asym)
local put_in = 2.0 * REPLAYS * STEPS_PER_GRAPH
-- The heat spreads some 30 cells in these steps, the ends are 1024 away: none is lost there.
S.check(math.abs(total - put_in) <= 1e-4 * put_in,
        "the rod holds %.1f units of heat, the %.0f put in (none reaches the ends)", total, put_in)

-- New arguments for one node: the first source of the first step now adds 3 units.
local ok, err = pcall(g.set_args, g, 1, u, LEFT, "three")
S.check(not ok and tostring(err):find("bad argument", 1, true) ~= nil,
        "a wrong argument type is refused as a launch refuses it")
g:set_args(1, u, LEFT, 3.0)
u:copy_from(cuda.zeros(N, "f32"))
v:copy_from(cuda.zeros(N, "f32"))
g:replay(1, s)
s:synchronize()
local once = u:copy_to_host()
local lu, lv = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
source[{1, 1, stream = s}](lu, LEFT, 3.0)
source[{1, 1, stream = s}](lu, RIGHT, 1.0)
diffuse[{blocks, BLOCK, stream = s}](lu, lv, N, ALPHA)
diffuse[{blocks, BLOCK, stream = s}](lv, lu, N, ALPHA)
ends[{1, 1, stream = s}](lu, N)
for _ = 2, STEPS_PER_GRAPH do step(lu, lv, s, 1.0) end
s:synchronize()
local expect = lu:copy_to_host()
differ = 0
for i = 1, N do if once[i] ~= expect[i] then differ = differ + 1 end end
S.check(differ == 0, "after g:set_args the replay matches launches with the new amount")

local kernels = REPLAYS * STEPS_PER_GRAPH * 5
S.printf("%d steps, %d kernels: launches %.2f ms (%.2f us a kernel), graph replays %.2f ms "
         .. "(%.2f us a kernel): %.1fx", REPLAYS * STEPS_PER_GRAPH, kernels, launch_ms,
         launch_ms * 1e3 / kernels, graph_ms, graph_ms * 1e3 / kernels, launch_ms / graph_ms)
S.printf("capture and instantiation of %d kernel nodes: %.2f ms", 5 * STEPS_PER_GRAPH, capture_ms)
S.done()
