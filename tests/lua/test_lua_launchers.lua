-- test_lua_launchers.lua -- launchers, which the binding caches per kernel and configuration
-- (llaunch.c), used on several streams (issue 28): a configuration given with another stream,
-- or none, must launch there and not on the stream of the launcher cached before it. Seen
-- through a capture: a launch on the capturing stream is recorded and does not run, a launch on
-- any other stream runs now; so a launch that went to the wrong stream changes what has run.
-- k[{grid, block, stream = s}], k:forall(n, s) and kept launcher objects called in turn, each
-- stream's results and their order checked. Also random fills of slices (elements just outside
-- untouched). On a GPU when there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local N = 37
-- x = 2 x + v: launches in another order give other numbers.
local step = cuda.jit("step(float *x, float v, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 2.0f * x[i] + v;
]])

local function all(a, want, what)
  local t = a:totable()
  for i = 1, N do h.eq(t[i], want, string.format("%s [%d]", what, i)) end
end

-- Launches through `launch(stream)` on the capturing stream and on `other` (a stream, or nil for
-- the default one), in both orders: the capture's array is untouched until the graph runs, the
-- other's is written at once.
local function check_capture_and_other(what, launch, other)
  for _, captured_first in ipairs({true, false}) do
    local x, y = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
    launch(nil)(x, 0, N) -- loaded before the capture (a capture cannot load a kernel)
    local g = cuda.graph(function(s)
      if captured_first then
        launch(s)(x, 1, N)
        launch(other)(y, 3, N)
      else
        launch(other)(y, 3, N)
        launch(s)(x, 1, N)
      end
    end)
    if other then other:synchronize() else cuda.synchronize() end
    local order = captured_first and "capture first" or "other first"
    all(y, 3, what .. ", " .. order .. ": the other stream's launch ran at once")
    all(x, 0, what .. ", " .. order .. ": the capturing stream's launch did not run")
    g:launch()
    cuda.synchronize()
    all(x, 1, what .. ", " .. order .. ": the graph ran the captured launch")
    all(y, 3, what .. ", " .. order .. ": the graph did not run the other stream's launch")
  end
end

h.test("a configuration on another stream does not reuse the cached launcher", function()
  local s2 = cuda.stream()
  check_capture_and_other("k[{...}] with another stream",
                          function(s) return step[{2, 32, stream = s}] end, s2)
  check_capture_and_other("k[{...}] without a stream",
                          function(s) return step[{2, 32, stream = s}] end, nil)
  check_capture_and_other("k:forall(n, s)", function(s) return step:forall(N, s) end, s2)
  check_capture_and_other("k:forall(n) without a stream",
                          function(s) return step:forall(N, s) end, nil)
end)

h.test("kept launchers called in turn run on their own streams, in order", function()
  local s1, s2 = cuda.stream(), cuda.stream()
  local l1, l2 = step[{2, 32, stream = s1}], step[{2, 32, stream = s2}]
  local f1, f2 = step:forall(N, s1), step:forall(N, s2)
  local x, y = cuda.zeros(N, "f32"), cuda.zeros(N, "f32")
  -- x: ((0 * 2 + 1) * 2 + 3) * 2 + 5 = 15; y: ((0 * 2 + 5) * 2 + 3) * 2 + 1 = 27
  l1(x, 1, N); l2(y, 5, N)
  f1(x, 3, N); f2(y, 3, N)
  l1(x, 5, N); l2(y, 1, N)
  s1:synchronize(); s2:synchronize()
  all(x, 15, "stream 1's three launches in order")
  all(y, 27, "stream 2's three launches in order")
  -- The same launcher object again after the other stream's: still its own stream.
  local g = cuda.graph(function(s)
    local lc = step[{2, 32, stream = s}]
    lc(x, 0, N)
    l2(y, 0, N) -- runs now, on s2
    lc(x, 0, N)
  end)
  s2:synchronize()
  all(y, 54, "the kept launcher of stream 2 during another stream's capture")
  all(x, 15, "nothing of the capture ran")
  g:launch(); cuda.synchronize()
  all(x, 60, "the graph's two captured launches")
end)

h.test("random fills of slices write the slice only", function()
  for _, dtype in ipairs({"f32", "f64"}) do
    for first = 1, 6 do
      for _, len in ipairs({1, 2, 3, 4, 5, 8, 9}) do
        local last = first + len - 1
        local a = cuda.full(24, -7, dtype)
        cuda.random.uniform(a:slice(first, last), 99, 2)
        local own = cuda.random.uniform(cuda.zeros(len, dtype), 99, 2):totable()
        local t = a:totable()
        local what = string.format("%s uniform of slice(%d, %d)", dtype, first, last)
        for i = 1, 24 do
          if i < first or i > last then
            h.eq(t[i], -7, what .. ": element " .. i .. " outside")
          else
            h.eq(t[i], own[i - first + 1], what .. ": element " .. i)
          end
        end
      end
    end
  end
end)

h.run()
