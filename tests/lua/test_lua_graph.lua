-- test_lua_graph.lua -- cuda.graph: the capture records instead of running, replays run the work
-- in order, g:set_args checks arguments as a launch does, g:update takes a capture of the same
-- shape, the graph keeps alive the kernels and arrays it uses, an error in the capture function
-- ends the capture and is raised again with its traceback (the garbage collector, stopped during
-- the capture, put back as it was), and what cannot be captured is
-- refused with the way out. The argument checks that need no device run first, everywhere; the
-- rest on a GPU, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.raises("function expected", cuda.graph, 42)
h.raises("invalid option 'sometimes'", cuda.graph, function() end, "sometimes")

h.need_gpu(cuda)
local ordinal = cuda.device().ordinal

local N = 1000
local axpb = cuda.jit("axpb(float *x, float a, float b, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
]])
local cfg_blocks = (N + 127) // 128

local function apply(t, steps)
  local out = {}
  for i = 1, #t do
    local v = h.f32(t[i])
    for _, s in ipairs(steps) do v = h.f32(h.f32(s[1] * v) + s[2]) end
    out[i] = v
  end
  return out
end

local function warm()
  local x = cuda.zeros(N, "f32")
  axpb[{cfg_blocks, 128}](x, 1, 0, N) -- loads the kernel on the device
  cuda.synchronize()
end
warm()

h.test("capture records, replays run in order", function()
  local xs = h.random_floats(N)
  local x = cuda.to_device(xs, "f32")
  local g = cuda.graph(function(s)
    axpb[{cfg_blocks, 128, stream = s}](x, 2, 1, N)
    axpb[{cfg_blocks, 128, stream = s}](x, 0.5, -1, N)
  end)
  h.eq(tostring(g), "cujit.graph: 2 kernel nodes on " ..
       (ordinal == -1 and "the CPU device" or "device " .. ordinal), "tostring")
  h.eq(g:nodes().kernel, 2, "kernel nodes")
  h.eq(g:nodes().total, 2, "all nodes")
  h.same(x:copy_to_host(), apply(xs, {}), nil, "nothing ran during the capture")
  g:replay(3)
  g:launch()
  cuda.synchronize()
  local steps = {}
  for _ = 1, 4 do steps[#steps + 1] = {2, 1}; steps[#steps + 1] = {0.5, -1} end
  h.same(x:copy_to_host(), apply(xs, steps), 1e-5, "after 4 replays")
  local path = h.tmpname()
  g:dot(path)
  local f = assert(io.open(path))
  h.contains(f:read("a"), "digraph", "Graphviz output")
  f:close()
  os.remove(path)
  g:free()
  h.eq(tostring(g), "cujit.graph (freed)", "tostring after free")
  h.raises("graph has been freed", g.launch, g)
end)

h.test("set_args: checked like a launch, used by later replays", function()
  local xs, ys = h.random_floats(N), h.random_floats(N)
  local x, y = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32")
  local g = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](x, 2, 0, N) end)
  -- Arguments counted as a user counts them in g:set_args(i, ...): i is #1.
  h.raises({"bad argument #5", "'n'", "not an integer"}, function() g:set_args(1, y, 3, 1, 2.5) end)
  local d = cuda.zeros(N, "f64")
  h.raises({"bad argument #2", "f64"}, function() g:set_args(1, d, 3, 1, N) end)
  h.raises({"bad argument #3", "number expected"}, function() g:set_args(1, y, "3", 1, N) end)
  h.raises({"bad argument #1", "1 kernel node"}, function() g:set_args(2, y, 3, 1, N) end)
  h.raises("host arrays or tables", function() g:set_args(1, {1, 2}, 3, 1, N) end)
  h.raises("4", function() g:set_args(1, y, 3, 1) end)
  g:set_args(1, y, 3, 1, N)
  g:replay(2)
  cuda.synchronize()
  h.same(y:copy_to_host(), apply(ys, {{3, 1}, {3, 1}}), 1e-5, "y after 2 replays")
  h.same(x:copy_to_host(), apply(xs, {}), nil, "x no longer used")
end)

h.test("update from a capture of the same shape", function()
  local xs, ys = h.random_floats(N), h.random_floats(N)
  local x, y = cuda.to_device(xs, "f32"), cuda.to_device(ys, "f32")
  local g = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](x, 2, 0, N) end)
  local g2 = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](y, -1, 4, N) end,
                        "thread_local")
  local g3 = cuda.graph(function(s)
    axpb[{cfg_blocks, 128, stream = s}](y, -1, 4, N)
    axpb[{cfg_blocks, 128, stream = s}](y, -1, 4, N)
  end, "global")
  h.raises("same", g.update, g, g3)
  g:update(g2)
  g2 = nil
  collectgarbage()
  g:launch()
  cuda.synchronize()
  h.same(y:copy_to_host(), apply(ys, {{-1, 4}}), 1e-5, "y after the updated replay")
  h.same(x:copy_to_host(), apply(xs, {}), nil, "x untouched")
end)

h.test("the graph keeps its kernels and arrays alive", function()
  local alive = setmetatable({}, {__mode = "v"})
  local out = cuda.zeros(N, "f32")
  local g
  do
    local k = cuda.jit("addto(const float *a, float *b, int n)", [[
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) b[i] += a[i];
    ]])
    local a = cuda.to_device(h.random_floats(N, 1, 2), "f32")
    k[{cfg_blocks, 128}](a, out, N) -- loads it
    cuda.synchronize()
    out:copy_from(cuda.zeros(N, "f32"))
    alive.a, alive.k = a, k
    g = cuda.graph(function(s) k[{cfg_blocks, 128, stream = s}](a, out, N) end)
  end
  collectgarbage()
  collectgarbage()
  h.check(alive.a and alive.k, "the graph holds them")
  local want = alive.a:copy_to_host()
  g:replay(2)
  cuda.synchronize()
  for i = 1, N do want[i] = h.f32(want[i] * 2) end
  h.same(out:copy_to_host(), want, 1e-6, "replays after a collection")
  g = nil
  collectgarbage()
  collectgarbage()
  h.check(alive.a == nil and alive.k == nil, "freed with the graph")
end)

h.test("an error in the capture function ends the capture and keeps its traceback", function()
  local x = cuda.zeros(N, "f32")
  local function inner() error("boom in the capture") end
  local err = h.raises({"boom in the capture", "stack traceback", "inner"}, cuda.graph,
                       function(s)
                         axpb[{cfg_blocks, 128, stream = s}](x, 1, 1, N)
                         inner()
                       end)
  h.check(#err > 0)
  -- the collector, stopped during the capture, is as it was before it, after a failure too
  h.check(collectgarbage("isrunning"), "the collector runs again after a capture that raised")
  collectgarbage("stop")
  h.check(not pcall(cuda.graph, function() error("again") end), "raised")
  h.check(not collectgarbage("isrunning"), "a collector stopped before the capture stays stopped")
  collectgarbage("restart")
  local g = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](x, 1, 1, N) end)
  h.check(collectgarbage("isrunning"), "the collector runs again after a capture")
  g:launch()
  cuda.synchronize()
  h.same(x:copy_to_host(), apply(cuda.zeros(N, "f32"):copy_to_host(), {{1, 1}}), nil,
         "the next capture works, and the failed one ran nothing")
end)

h.test("copies from pinned host arrays are recorded and read at each replay", function()
  local src = cuda.host_array(N, "f32", {pinned = true})
  local x, y = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
  local g = cuda.graph(function(s)
    x:copy_from(src, s)
    axpb[{cfg_blocks, 128, stream = s}](x, 2, 1, N)
    y:copy_from(x, s)
  end)
  local n = g:nodes()
  h.eq(n.copy, 2, "copy nodes")
  h.eq(n.kernel, 1, "kernel nodes")
  for round = 1, 3 do
    local xs = h.random_floats(N)
    for i = 1, N do src[i] = xs[i] end
    g:launch()
    cuda.synchronize()
    h.same(y:copy_to_host(), apply(xs, {{2, 1}}), 1e-6, "round " .. round)
  end
end)

h.test("what cannot be captured is refused with the way out", function()
  local x = cuda.to_device(h.random_floats(N), "f32")
  local fresh = cuda.jit("fresh(float *x)", "x[0] = 7;")
  x:sum() -- the reduction's kernels loaded
  h.raises("launch it once", cuda.graph, function(s) fresh[{1, 1, stream = s}](x) end)
  h.raises("returns its value to the host", cuda.graph, function(s) x:sum(s) end)
  h.raises("pass device arrays", cuda.graph,
           function(s) axpb[{cfg_blocks, 128, stream = s}]({1, 2, 3}, 1, 1, 3) end)
  h.raises("captures a graph", cuda.graph, function(s) s:synchronize() end)
  if cuda.device().arch == "cpu" then -- stricter than CUDA's driver, which records the copy
    h.raises("cujit_host_alloc", cuda.graph, function(s) x:copy_from(h.random_floats(N), s) end)
    local inner = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](x, 1, 1, N) end)
    h.raises("replay it before cujit_capture_begin or after cujit_capture_end, or capture its "
             .. "work again", cuda.graph, function(s) inner:launch(s) end)
    inner:free()
  end
  local g = cuda.graph(function(s) axpb[{cfg_blocks, 128, stream = s}](x, 1, 1, N) end)
  h.eq(g:nodes().kernel, 1, "captures work after the refusals")
end)

h.run()
