-- profile_launch.lua -- cujit's own host work on the Lua launch path, measured without a GPU
-- against the stand-in driver (stub_driver.c), where launches cost next to nothing, so what is
-- left is the binding's and the engine's part. Per launch (ns): the raw launcher from the same Lua
-- loop (benchclock), a kept launcher l(...), the inline form k[{g, b}](...). With `first`: cujit's
-- part of a warm-cache first launch (cuda.source + first launch + wait, ms), as case `warm` times
-- it, step by step, then the same for a second kernel in the same process (the first pays the
-- process's first pass through the code as well).
--   LD_LIBRARY_PATH=BUILD/scripts/bench/stubcuda LUA_CPATH='BUILD/scripts/bench/lua/?.so;;' \
--     BUILD/cujit scripts/bench/profile_launch.lua [launches | first]
-- Under valgrind --tool=callgrind the same run gives instructions per function.
local cuda = require "cujit"
local clock = require "benchclock"

local N = math.tointeger(tonumber(arg[1] or "")) or 200000
if arg[1] == "first" then -- run twice: the first run fills the disk cache
  -- As bench.lua's warm case: the kernel's source through cuda.source, then each step timed.
  local src = 'extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n'
      .. "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i];\n}\n"
  local n = 1 << 20
  local buf = cuda.device_array(n, "f32")
  cuda.synchronize()
  local t = { clock.now() }
  local m = cuda.source(src); t[2] = clock.now()
  local v = m.vadd; t[3] = clock.now()
  local launch = v[{ n // 256, 256 }]; t[4] = clock.now()
  launch(buf, buf, buf, n); t[5] = clock.now()
  cuda.synchronize(); t[6] = clock.now()
  local steps = {}
  for i, name in ipairs { "cuda.source", "m.vadd", "k[cfg]", "the launch", "the wait" } do
    steps[i] = string.format("%s %.4f", name, (t[i + 1] - t[i]) * 1e3)
  end
  print(string.format("first launch from a warm disk cache: %.4f ms (%s ms; %s)", (t[6] - t[1]) * 1e3,
                      table.concat(steps, ", "), m.vadd:compile_info().from_cache and "a cache hit"
                      or "compiled: run it again"))
  -- The same steps for another kernel of the same shape in the same process: what is left of
  -- the first one's time beyond this is the process's first pass through that code (cold caches,
  -- page faults), not work each kernel repeats.
  local src2 = src:gsub("vadd", "vadd_again")
  local u = { clock.now() }
  local m2 = cuda.source(src2); u[2] = clock.now()
  m2.vadd_again[{ n // 256, 256 }](buf, buf, buf, n); u[3] = clock.now()
  cuda.synchronize(); u[4] = clock.now()
  print(string.format("a second kernel, same process: %.4f ms (cuda.source %.4f, the launch %.4f, "
                      .. "the wait %.4f ms; %s)", (u[4] - u[1]) * 1e3, (u[2] - u[1]) * 1e3,
                      (u[3] - u[2]) * 1e3, (u[4] - u[3]) * 1e3,
                      m2.vadd_again:compile_info().from_cache and "a cache hit"
                      or "compiled: run it again"))
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

