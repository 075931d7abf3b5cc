-- test_lua_graph_args.lua -- g:set_args and g:update from Lua in the orders test_lua_graph.lua
-- leaves: every kind of parameter replaced (char, short, unsigned char, long long, double, float,
-- pointers, int) with replays still queued; kernel nodes counted apart from copy nodes; an update
-- whose launches have another grid (set_args afterwards keeps the update's); an update to the
-- other specialisation of a generic kernel (then its dtypes are the ones set_args takes); dozens
-- of set_args, updates and replays in random order without a wait, each replay with the arguments
-- it was queued with; refusals (count, type, range, dtype, node) after an update, each with its
-- message, leaving the graph as it was. Each array is checked against the host's arithmetic (small
-- integers: exact in float). On a GPU when there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local N, BLOCK = 1000, 128
local BLOCKS = (N + BLOCK - 1) // BLOCK

local axpb = cuda.jit("axpb(T *x, T a, T b, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
]])
local mix = cuda.jit("mix(char c, double d, short s, long long l, float *p, unsigned char u, "
                     .. "float f, int *q, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    p[i] += (float)(c + s + u) + f + (float)d;
    q[i] += (int)(l >> 32) * 3 + (int)(l & 0xff) + n;
  }
]])

-- A kernel that keeps the device busy a while, so that the replays queued after it are still
-- waiting (not started) when the test changes the graph.
local busy = cuda.jit("busy(int *x, int n)", [[
  for (int k = 0; k < n; k++) x[0] += k & 1;
]])
local spin = cuda.zeros(1, "i32")
local function keep_busy() busy[{1, 1}](spin, 2000000) end

-- A device array of N values and its host mirror.
local function vec(dtype, start)
  local t = {}
  for i = 1, N do t[i] = start + (i - 1) % 17 end
  return {d = cuda.to_device(t, dtype), h = t}
end
local function host_axpb(v, a, b, upto)
  for i = 1, upto or N do v.h[i] = a * v.h[i] + b end
end
local function check(v, what)
  h.same(v.d:copy_to_host(), v.h, nil, what)
end

do -- every specialisation and kernel loaded before the captures (a capture cannot compile)
  axpb[{BLOCKS, BLOCK}](vec("f32", 0).d, 1, 0, N)
  axpb[{BLOCKS, BLOCK}](vec("f64", 0).d, 1, 0, N)
  mix[{BLOCKS, BLOCK}](0, 0, 0, 0, vec("f32", 0).d, 0, 0, vec("i32", 0).d, N)
  busy[{1, 1}](spin, 1)
  cuda.synchronize()
end

h.test("every kind of parameter replaced by set_args, replays still queued", function()
  local p0, q0, p1, q1 = vec("f32", 0), vec("i32", 0), vec("f32", 5), vec("i32", -5)
  -- c, d, s, l, p, u, f, q, n; l's high word and low byte both count
  local sets = {
    {-100, 1000.0, -3000, (7 << 32) | 0x1ff, p0, 255, 0.5, q0, N},
    {120, -999.0, 3000, (-2 << 32) | 0x05, p1, 1, -2.5, q1, N},
    {-1, 0.0, 1, (1 << 40) | 0x80, p0, 128, 0.25, q1, 7},
  }
  local function host_mix(a)
    local c, d, s, l, p, u, f, q, n = table.unpack(a)
    for i = 1, N do
      if i <= n then
        p.h[i] = h.f32(p.h[i] + ((c + s + u) + f + d))
        q.h[i] = q.h[i] + (l // (1 << 32)) * 3 + (l & 0xff) + n -- l >> 32 keeps the sign
      end
    end
  end
  local function args(a)
    local c, d, s, l, p, u, f, q, n = table.unpack(a)
    return c, d, s, l, p.d, u, f, q.d, n
  end
  local g = cuda.graph(function(s) mix[{BLOCKS, BLOCK, stream = s}](args(sets[1])) end)
  keep_busy()
  g:replay(30) -- no wait: still queued when set_args runs
  for _ = 1, 30 do host_mix(sets[1]) end
  g:set_args(1, args(sets[2]))
  g:replay(2)
  for _ = 1, 2 do host_mix(sets[2]) end
  g:set_args(1, args(sets[3]))
  g:launch()
  host_mix(sets[3])
  g:set_args(1, args(sets[1]))
  g:replay(3)
  for _ = 1, 3 do host_mix(sets[1]) end
  cuda.synchronize()
  check(p0, "p0: sets 1 and 3")
  check(q0, "q0: set 1")
  check(p1, "p1: set 2")
  check(q1, "q1: sets 2 and 3 (n = 7)")
end)

h.test("kernel nodes are counted apart from the copies between them", function()
  local x, y, z, tmp = vec("f32", 1), vec("f32", 2), vec("f32", 3), vec("f32", 0)
  local g = cuda.graph(function(s)
    tmp.d:copy_from(x.d, s)
    axpb[{BLOCKS, BLOCK, stream = s}](x.d, 2, 1, N)
    y.d:copy_from(x.d, s)
    axpb[{BLOCKS, BLOCK, stream = s}](y.d, -1, 0, N)
  end)
  h.eq(g:nodes().copy, 2, "copy nodes")
  h.eq(g:nodes().kernel, 2, "kernel nodes")
  g:set_args(2, z.d, 3, -1, N) -- the second kernel, not the second node (a copy)
  g:replay(2)
  cuda.synchronize()
  for _ = 1, 2 do
    for i = 1, N do tmp.h[i] = x.h[i] end
    host_axpb(x, 2, 1)
    for i = 1, N do y.h[i] = x.h[i] end
    host_axpb(z, 3, -1)
  end
  check(tmp, "tmp: the first copy")
  check(x, "x: kernel node 1 as captured")
  check(y, "y: the second copy, no longer scaled")
  check(z, "z: kernel node 2 after set_args")
  h.raises({"bad argument #1", "the graph has 2 kernel nodes (1 to 2)"},
           function() g:set_args(3, z.d, 1, 1, N) end)
  h.raises({"bad argument #1", "the graph has 2 kernel nodes (1 to 2)"},
           function() g:set_args(0, z.d, 1, 1, N) end)
  local copies = cuda.graph(function(s) tmp.d:copy_from(x.d, s) end)
  h.eq(copies:nodes().kernel, 0, "kernel nodes of a graph of one copy")
  h.raises({"bad argument #1", "the graph has no kernel nodes: its capture launched no kernel"},
           function() copies:set_args(1, z.d, 1, 1, N) end)
end)

h.test("an update brings its grid: set_args afterwards keeps it", function()
  local x, y, z, w = vec("f32", 1), vec("f32", 2), vec("f32", 3), vec("f32", 4)
  local small = cuda.graph(function(s) axpb[{1, BLOCK, stream = s}](x.d, 2, 0, N) end)
  local full = cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](y.d, 3, 0, N) end)
  small:launch()
  host_axpb(x, 2, 0, BLOCK) -- one block: the first 128 elements only
  small:update(full)
  small:launch()
  host_axpb(y, 3, 0)
  small:set_args(1, z.d, -1, 2, N) -- with the update's grid: every element
  small:replay(2)
  host_axpb(z, -1, 2)
  host_axpb(z, -1, 2)
  local back = cuda.graph(function(s) axpb[{1, BLOCK, stream = s}](w.d, 2, 2, N) end)
  full:update(back) -- and the other way: one block again, also after set_args
  full:set_args(1, x.d, 1, 5, N)
  full:launch()
  host_axpb(x, 1, 5, BLOCK)
  cuda.synchronize()
  check(x, "x: one block, then one block after the update back")
  check(y, "y: the update's grid")
  check(z, "z: set_args after the update")
  check(w, "w: named by the update, replaced by set_args before any replay")
end)

h.test("an update to the other specialisation: set_args then takes its dtypes", function()
  local x, d, e = vec("f32", 1), vec("f64", 2), vec("f64", 3)
  local g = cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](x.d, 2, 0, N) end)
  local g64 = cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](d.d, -1, 1, N) end)
  h.raises({"bad argument #2", "f64"}, function() g:set_args(1, e.d, 1, 1, N) end)
  g:update(g64)
  g:launch()
  host_axpb(d, -1, 1)
  g:set_args(1, e.d, 0.5, 3, N) -- now the f64 kernel: f64 buffers
  g:launch()
  host_axpb(e, 0.5, 3)
  h.raises({"bad argument #2", "'x'", "f32"}, function() g:set_args(1, x.d, 1, 1, N) end)
  g:launch()
  host_axpb(e, 0.5, 3)
  local back = cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](x.d, 2, 1, N) end)
  g:update(back)
  g:replay(2)
  host_axpb(x, 2, 1)
  host_axpb(x, 2, 1)
  h.raises({"bad argument #2", "f64"}, function() g:set_args(1, d.d, 1, 1, N) end)
  cuda.synchronize()
  check(x, "x: only after the update back")
  check(d, "d: the f64 capture's node")
  check(e, "e: set_args on the f64 node, twice")
end)

h.test("set_args, updates and replays in random order, nothing waited for", function()
  local bufs = {vec("f32", 1), vec("f32", 2), vec("f32", 3), vec("f32", 4)}
  local function step() return {bufs[math.random(#bufs)], math.random(0, 1) * 2 - 1,
                                math.random(-3, 3)} end
  local function capture(n0, n1)
    return cuda.graph(function(s)
      axpb[{BLOCKS, BLOCK, stream = s}](n0[1].d, n0[2], n0[3], N)
      axpb[{BLOCKS, BLOCK, stream = s}](n1[1].d, n1[2], n1[3], N)
    end)
  end
  local nodes = {step(), step()}
  local g = capture(nodes[1], nodes[2])
  local log = {}
  keep_busy()
  for round = 1, 60 do
    local what = math.random(4)
    if what == 1 then
      local i, st = math.random(2), step()
      g:set_args(i, st[1].d, st[2], st[3], N)
      nodes[i] = st
      log[#log + 1] = "set_args " .. i
    elseif what == 2 then
      local a, b = step(), step()
      local from = capture(a, b)
      g:update(from)
      if round % 2 == 0 then from:free() end -- a freed source changes nothing
      nodes = {a, b}
      log[#log + 1] = "update"
    else
      local times = what == 3 and 1 or math.random(2, 6)
      if times == 1 then g:launch() else g:replay(times) end
      for _ = 1, times do
        for i = 1, 2 do host_axpb(nodes[i][1], nodes[i][2], nodes[i][3]) end
      end
      log[#log + 1] = "replay " .. times
    end
  end
  g:replay(50) -- and many replays after the last change
  for _ = 1, 50 do
    for i = 1, 2 do host_axpb(nodes[i][1], nodes[i][2], nodes[i][3]) end
  end
  cuda.synchronize()
  for j, v in ipairs(bufs) do check(v, "buffer " .. j .. " after " .. table.concat(log, ", ")) end
end)

h.test("refusals after an update leave the graph as it was, each with its message", function()
  local x, y = vec("f32", 1), vec("f32", 2)
  local g = cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](x.d, 2, 0, N) end)
  g:update(cuda.graph(function(s) axpb[{BLOCKS, BLOCK, stream = s}](y.d, -1, 2, N) end))
  local f64 = cuda.zeros(N, "f64")
  local function set(...)
    local args = table.pack(...)
    return function() g:set_args(table.unpack(args, 1, args.n)) end
  end
  h.raises({"bad argument #1", "1 kernel node (1 to 1)"}, set(0, x.d, 1, 1, N))
  h.raises({"bad argument #1", "1 kernel node"}, set(2, x.d, 1, 1, N))
  h.raises("kernel 'axpb' takes 4 argument(s), got 3: axpb(float *x, float a, float b, int n)",
           set(1, x.d, 1, 1))
  h.raises("kernel 'axpb' takes 4 argument(s), got 5", set(1, x.d, 1, 1, N, 5))
  h.raises({"bad argument #3", "'a'", "number expected"}, set(1, x.d, "1", 1, N))
  h.raises({"bad argument #5", "'n'", "not an integer"}, set(1, x.d, 1, 1, 2.5))
  h.raises("bad argument #5 'n' to 'set_args' of kernel 'axpb' (1099511627776 does not fit",
           set(1, x.d, 1, 1, 1 << 40))
  h.raises({"bad argument #2", "'x'", "f64"}, set(1, f64, 1, 1, N))
  h.raises("host arrays or tables", set(1, {1, 2}, 1, 1, N))
  g:launch()
  host_axpb(y, -1, 2)
  cuda.synchronize()
  check(y, "y: the update's node, after the refusals")
  check(x, "x: only in refused calls")
  g:free()
  h.raises("graph has been freed", set(1, x.d, 1, 1, N))
end)

h.run()
