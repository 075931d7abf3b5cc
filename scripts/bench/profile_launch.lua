-- profile_launch.lua -- cujit's own host work on the Lua launch path, measured without a GPU
-- against the stand-in driver (stub_driver.c), where launches cost next to nothing, so what is
-- left is the binding's and the engine's part. Per launch (ns): the raw launcher from the same Lua
-- loop (benchclock), a kept launcher l(...), the inline form k[{g, b}](...). With `first`: cujit's
-- part of a warm-cache first launch (cuda.jit + first launch + wait, ms), as case `warm` times it.
--   LD_LIBRARY_PATH=BUILD/scripts/bench/stubcuda LUA_CPATH='BUILD/scripts/bench/lua/?.so;;' \
--     BUILD/cujit scripts/bench/profile_launch.lua [launches | first]
-- Under valgrind --tool=callgrind the same run gives instructions per function.
local cuda = require "cujit"
local clock = require "benchclock"

local N = math.tointeger(tonumber(arg[1] or "")) or 200000
if arg[1] == "first" then -- run twice: the first run fills the disk cache
  local src = "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i];"
  local n = 1 << 20
  local buf = cuda.device_array(n, "f32")
  cuda.synchronize()
  local t0 = clock.now()
  local v = cuda.jit("vadd(const float *a, const float *b, float *c, int n)", src)
  v[{ n // 256, 256 }](buf, buf, buf, n)
  cuda.synchronize()
  print(string.format("first launch from a warm disk cache: %.4f ms", (clock.now() - t0) * 1e3))
  return
end
local k = cuda.jit("e4(const float *x, float *y, int n, float a)", "if (n < 0) y[0] = a;")
local b = cuda.device_array(1024, "f32")
local p = b:devptr()
local raw = clock.raw_launcher(k:ptx(), "e4", 1, 32, "ppif", p, p, 1, 0.5)
local kept = k[{ 1, 32 }]
local forms = {
  { "raw launcher from Lua", function() for _ = 1, N do raw(p, p, 1, 0.5) end end },
  { "kept launcher l(...)", function() for _ = 1, N do kept(b, b, 1, 0.5) end end },
  { "inline k[{g, b}](...)", function() for _ = 1, N do k[{ 1, 32 }](b, b, 1, 0.5) end end },
}
for _, f in ipairs(forms) do
  f[2]() -- warm
  local best = math.huge
  for _ = 1, 3 do
    local t0 = clock.now()
    f[2]()
    best = math.min(best, (clock.now() - t0) / N * 1e9)
  end
  print(string.format("%-24s %8.1f ns per launch (best of 3 x %d)", f[1], best, N))
end

