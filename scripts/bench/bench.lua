-- bench.lua -- cujit from Lua, run by the `cujit` command: launch host time, round trip, cold and
-- warm first launch, the bandwidth kernels, graph replays, and the latency and small-operation
-- cases of issue 15 (as latency.c measures them from C), on the same kernels/*.cu as every
-- other system and with the same method (see README.md). Prints CSV rows like the C programs; anything that fails
-- becomes a "missing" row with the error as the reason. The launch case measures, in this process
-- and interleaved batch by batch with cujit's launches, two floors made by benchclock from the
-- same kernel's PTX: raw cuLaunchKernel called from the same Lua loop (raw_lua_same), and the same
-- launch in a C loop (raw_c_in_lua), which the Lua goal is judged against.
--   cujit bench.lua --cases LIST --kernels DIR [--reps N --launches N --batch N --roundtrips N
--                   --sizes MIN:MAX:STEP --quick --short]
-- benchclock (built in scripts/bench) must be on package.cpath: os.clock() is CPU time.

local SYS = "cujit_lua"

local function clean(s) return (tostring(s):gsub("[,\r\n\t]", " "):sub(1, 300)) end
local RAW_LUA, RAW_C = "raw_lua_same", "raw_c_in_lua" -- the floors of the launch case
local function row(case, variant, n, value, unit, system)
  io.write(string.format("%s,%s,%s,%d,%.6g,%s,ok,\n", case, system or SYS, variant, n, value, unit))
  io.flush()
end
local function missing(case, variant, n, why, system)
  io.write(string.format("%s,%s,%s,%d,,,missing,%s\n", case, system or SYS, variant, n, clean(why)))
  io.flush()
end

local function options(argv)
  local o = { cases = "all", kernels = "scripts/bench/kernels", reps = 7, launches = 20000,
              batch = 256, roundtrips = 2000, sizes = { 20, 28, 1 } }
  local i = 1
  while i <= #argv do
    local a, v = argv[i], argv[i + 1]
    if a == "--quick" then o.reps, o.launches, o.roundtrips, o.sizes[3] = 5, 5000, 500, 4
    elseif a == "--short" then
      o.reps, o.launches, o.batch, o.roundtrips, o.sizes = 1, 10, 10, 10, { 10, 10, 1 }
      o.short = true
    elseif a == "--sizes" and v then
      local lo, hi, step = v:match("^(%d+):(%d+):?(%d*)$")
      if not lo then error("--sizes expects MIN:MAX[:STEP], got '" .. v .. "'") end
      o.sizes = { tonumber(lo), tonumber(hi), tonumber(step) or 1 }
      i = i + 1
    elseif (a == "--cases" or a == "--kernels") and v then o[a:sub(3)] = v; i = i + 1
    elseif (a == "--reps" or a == "--launches" or a == "--batch" or a == "--roundtrips") and v then
      o[a:sub(3)] = math.tointeger(tonumber(v)) or error(a .. " expects an integer, got '" .. v .. "'")
      i = i + 1
    else error("bench.lua: unexpected argument '" .. tostring(a) .. "'") end
    i = i + 1
  end
  o.batch = math.min(o.batch, o.launches)
  return o
end

local o = options(arg)
local function wants(case)
  for c in o.cases:gmatch("[^,]+") do if c == "all" or c == case then return true end end
  return false
end

local function read(name)
  local f = assert(io.open(o.kernels .. "/" .. name, "r"))
  local text = f:read("a")
  f:close()
  return text
end

local ok_clock, clock = pcall(require, "benchclock")
local ok_cuda, cuda = pcall(require, "cujit")

-- A kernel of a .cu file: through a whole-source form of the binding when it has one, else
-- cuda.jit(signature, body) with the kernel's own signature and body cut from the file.
local function kernel_of(src, name, options)
  for _, form in ipairs { "source", "compile", "module", "program" } do
    if type(cuda[form]) == "function" then
      local m = cuda[form](src, options)
      local ok, k = pcall(function() return m[name] end)
      if ok and k then return k end
      if type(m.kernel) == "function" then return m:kernel(name) end
    end
  end
  local sig, body = src:match('extern "C" __global__ void (' .. name .. '%b())%s*(%b{})')
  if not sig then error("kernel " .. name .. " not found in its .cu file") end
  return cuda.jit((sig:gsub("%s+", " ")), body:sub(2, -2))
end

local function median(v)
  table.sort(v)
  local n = #v
  return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
end

-- The launch case's rows come with its two floors: those are missing too when it is.
local function missing_all(case, variants, n, why)
  for _, v in ipairs(variants) do
    missing(case, v, n, why)
    if case == "launch" then
      missing(case, v, n, why, RAW_LUA); missing(case, v, n, why, RAW_C)
    end
  end
end

local function guarded(case, variants, n, body)
  if not wants(case) then return end
  local ok, err = pcall(body)
  if not ok then missing_all(case, variants, n, err) end
end

-- Launches written as a Lua user writes them, the configuration table included, so that what
-- the binding does per call (and the garbage it makes) is part of the figure, as Numba's
-- k[grid, block](...) is part of its own. Each comes with the same launch made raw: the kernel's
-- PTX loaded by the driver in cujit's context, the same arguments prepared once. The binding has no
-- k:cubin(), and the driver's JIT of that PTX for this GPU gives the same class of machine code
-- as the CUBIN cujit launches; an empty kernel's launch cost does not depend on it. `batch(n)` is
-- the loop a user writes, the launch inline in its body, as the raw launcher's loop is timed (a
-- Lua function called per launch would add a call the raw side does not pay).
local function launchers(src, buf)
  local k1, k4, k12 = kernel_of(src, "empty1"), kernel_of(src, "empty4"), kernel_of(src, "empty12")
  local p = buf:devptr()
  return {
    [1] = { k = k1, launch = function() k1[{ 1, 32 }](1) end,
            batch = function(n) for _ = 1, n do k1[{ 1, 32 }](1) end end,
            pattern = "i", args = { 1 } },
    [4] = { k = k4, launch = function() k4[{ 1, 32 }](buf, buf, 1, 0.5) end,
            batch = function(n) for _ = 1, n do k4[{ 1, 32 }](buf, buf, 1, 0.5) end end,
            pattern = "ppif", args = { p, p, 1, 0.5 } },
    [12] = { k = k12,
             launch = function() k12[{ 1, 32 }](buf, buf, buf, buf, 1, 2, 3, 4, 0.0, 0.5, 1.0, 1.5) end,
             batch = function(n)
               for _ = 1, n do k12[{ 1, 32 }](buf, buf, buf, buf, 1, 2, 3, 4, 0.0, 0.5, 1.0, 1.5) end
             end,
             pattern = "ppppiiiiffff", args = { p, p, p, p, 1, 2, 3, 4, 0.0, 0.5, 1.0, 1.5 } },
  }
end

-- The raw launcher of one kernel, or nil and why. cujit must have launched first: the launcher
-- takes the context that is current then.
local function raw_launcher(l, name)
  if type(clock.raw_launcher) ~= "function" then
    return nil, "this benchclock.so has no raw_launcher (rebuild: ninja cujit_bench)"
  end
  l.launch(); cuda.synchronize()
  local ok, r = pcall(clock.raw_launcher, l.k:ptx(), name, 1, 32, l.pattern, table.unpack(l.args))
  if ok then return r end
  return nil, r
end

-- One repetition's batches, each timed alone and followed by a synchronisation (untimed): per
-- batch, one of cujit from Lua, one of the raw launcher from Lua, one of the raw launcher in a C
-- loop, in an order that rotates from batch to batch. Returns the three times spent.
local function interleaved(batch, raw, batches)
  local spent = { 0, 0, 0 }
  local sides = raw and 3 or 1
  for b = 1, batches do
    for turn = 0, sides - 1 do
      local side = (b + turn) % sides + 1
      if side == 3 then
        spent[3] = spent[3] + clock.raw_c_loop(raw, o.batch)
      else
        local t0 = clock.now()
        if side == 1 then batch(o.batch)
        else for _ = 1, o.batch do raw() end end
        spent[side] = spent[side] + (clock.now() - t0)
      end
      cuda.synchronize()
    end
  end
  return spent
end

local function time_launches(l, name, variant)
  local raw, why = raw_launcher(l, name)
  local per = { {}, {}, {} }
  local batches = o.launches // o.batch
  for r = 0, o.reps do -- r == 0: warm-up
    local spent = interleaved(l.batch, raw, batches)
    if r > 0 then
      for s = 1, 3 do per[s][#per[s] + 1] = spent[s] / (batches * o.batch) * 1e6 end
    end
  end
  row("launch", variant, o.launches, median(per[1]), "us")
  for _, floor in ipairs { { 2, RAW_LUA }, { 3, RAW_C } } do
    if raw then row("launch", variant, o.launches, median(per[floor[1]]), "us", floor[2])
    else missing("launch", variant, o.launches, why, floor[2]) end
  end
  if raw then raw:free() end
end

local function launch_case()
  local buf = cuda.device_array(1 << 20, "f32")
  local all = launchers(read("empty.cu"), buf)
  for _, count in ipairs { 1, 4, 12 } do
    local launch = all[count].launch
    if wants("launch") then time_launches(all[count], "empty" .. count, "args" .. count) end
    if count == 4 and wants("roundtrip") then
      local per = {}
      for r = 0, o.reps do
        local t0 = clock.now()
        for _ = 1, o.roundtrips do launch(); cuda.synchronize() end
        if r > 0 then per[#per + 1] = (clock.now() - t0) / o.roundtrips * 1e6 end
      end
      row("roundtrip", "args4", o.roundtrips, median(per), "us")
    end
  end
end

local function first_launch(case)
  local src, n = read("vadd.cu"), 1 << 20
  local buf = cuda.device_array(n, "f32")
  cuda.synchronize()
  -- cold: NVRTC's in-memory cache off where it has the option (12.9+), as NVRTC alone's row
  local nvrtc = (cuda.version() or {}).nvrtc or 0
  local options = case == "cold" and nvrtc >= 12090 and { flags = { "-no-cache" } } or nil
  local t0 = clock.now()
  local k = kernel_of(src, "vadd", options)
  k[{ n // 256, 256 }](buf, buf, buf, n)
  cuda.synchronize()
  row(case, "vadd", n, (clock.now() - t0) * 1e3, "ms")
end

local function bandwidth_case()
  local top = 1 << o.sizes[2]
  local x, y, z = cuda.device_array(top, "f32"), cuda.device_array(top, "f32"),
      cuda.device_array(top, "f32")
  x:fill(1.0); y:fill(2.0)
  local one, vec = read("vadd.cu") .. read("saxpy.cu"), read("vec4.cu")
  local k = { vadd = kernel_of(one, "vadd"), saxpy = kernel_of(one, "saxpy"),
              vadd4 = kernel_of(vec, "vadd4"), saxpy4 = kernel_of(vec, "saxpy4") }
  local start, stop = cuda.event(), cuda.event()
  for e = o.sizes[1], o.sizes[2], o.sizes[3] do
    local n = 1 << e
    local g1, g4 = (n + 255) // 256, (n // 4 + 255) // 256
    local runs = {
      vadd = function() k.vadd[{ g1, 256 }](x, y, z, n) end,
      saxpy = function() k.saxpy[{ g1, 256 }](2.0, x, z, n) end,
      vadd4 = function() k.vadd4[{ g4, 256 }](x, y, z, n // 4) end,
      saxpy4 = function() k.saxpy4[{ g4, 256 }](2.0, x, z, n // 4) end,
    }
    for _, variant in ipairs { "vadd", "saxpy", "vadd4", "saxpy4" } do
      local times = {}
      for r = 0, o.reps * 3 do
        start:record(); runs[variant](); stop:record(); stop:synchronize()
        if r > 0 then times[#times + 1] = cuda.elapsed(start, stop) end
      end
      row("bandwidth", variant, n, 12.0 * n / (median(times) * 1e-3) / 1e9, "GB/s")
    end
  end
end

-- The memory case (issue 16): the read kernel over 2^(largest size, at most 26) floats held in
-- device memory, managed memory prefetched to the device, managed memory left on the host (each
-- repetition first moves it back, so the kernel's page faults migrate it), and mapped pinned host
-- memory read over the bus; GB/s of floats read.
local function memory_case()
  local n = 1 << math.min(o.sizes[2], 26)
  local k = kernel_of(read("read.cu"), "readall")
  local out = cuda.zeros(1)
  local device, managed = cuda.zeros(n), cuda.managed_array(n, "f32")
  local host = cuda.host_array(n, "f32", { mapped = true })
  local mapped = host:mapped()
  local grid = 4 * cuda.device().multiprocessors
  local start, stop = cuda.event(), cuda.event()
  local function run(a) k[{ grid, 256 }](a, out, n // 4, -1.0) end
  local variants = {
    { "device", function() run(device) end },
    { "managed_prefetched", function() run(managed) end, function() managed:prefetch("device") end },
    { "managed", function() run(managed) end, function() managed:prefetch("host") end },
    { "mapped", function() run(mapped) end },
  }
  for _, v in ipairs(variants) do
    local times = {}
    for r = 0, o.reps do
      if v[3] then v[3](); cuda.synchronize() end
      start:record(); v[2](); stop:record(); stop:synchronize()
      if r > 0 then times[#times + 1] = cuda.elapsed(start, stop) end
    end
    row("memory", v[1], n, 4.0 * n / (median(times) * 1e-3) / 1e9, "GB/s")
  end
end

-- The graph case: graphs of 1 .. 1000 empty4 launches captured by cuda.graph, replayed by
-- g:launch() in a Lua loop (what a user writes), in batches of at most o.batch nodes with only the
-- replays timed; and what capturing and instantiating cost.
local GRAPH_SIZES = { 1, 10, 100, 1000 }
local function graph_sizes() return o.launches < 100 and { 1, 10 } or GRAPH_SIZES end

local function time_replays(g, s, n)
  local per_batch = math.max(1, o.batch // n)
  local replays = math.max(per_batch, o.launches // n)
  local per = {}
  for r = 0, o.reps do
    local spent, done = 0, 0
    while done < replays do
      local t0 = clock.now()
      for _ = 1, per_batch do g:launch(s) end
      spent = spent + (clock.now() - t0)
      s:synchronize()
      done = done + per_batch
    end
    if r > 0 then per[#per + 1] = spent / (done * n) * 1e6 end
  end
  return median(per)
end

local function graph_case()
  local buf = cuda.device_array(1 << 20, "f32")
  local k4 = kernel_of(read("empty.cu"), "empty4")
  k4[{ 1, 32 }](buf, buf, 1, 0.5) -- loads it: a capture cannot
  cuda.synchronize()
  local s = cuda.stream()
  for _, n in ipairs(graph_sizes()) do
    local t0 = clock.now()
    local g = cuda.graph(function(cs)
      for _ = 1, n do k4[{ 1, 32, stream = cs }](buf, buf, 1, 0.5) end
    end)
    local t1 = clock.now()
    g:instantiate()
    local t2 = clock.now()
    row("graph", "nodes" .. n, n, time_replays(g, s, n), "us")
    row("graph_setup", "capture" .. n, n, (t1 - t0) * 1e6, "us")
    row("graph_setup", "instantiate" .. n, n, (t2 - t1) * 1e6, "us")
    g:free()
  end
end

-- The step of examples/graphs.lua (five small kernels, 20 steps a graph) on 4096 cells, as
-- launches and as graph replays: microseconds per step, end to end (waited for).
local function graph_step_case()
  local N, STEPS, REPLAYS = 4096, 20, o.launches < 100 and 2 or 50
  local source = cuda.jit("source(float *u, int cell, float amount)", "u[cell] += amount;")
  local diffuse = cuda.jit("diffuse(const float *u, float *v, int n, float alpha)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v[i] = (i == 0 || i == n - 1) ? u[i] : u[i] + alpha * (u[i - 1] - 2.0f * u[i] + u[i + 1]);
  ]])
  local ends = cuda.jit("ends(float *u, int n)", "u[0] = 0.0f; u[n - 1] = 0.0f;")
  local u, v, s = cuda.zeros(N, "f32"), cuda.zeros(N, "f32"), cuda.stream()
  local blocks = (N + 255) // 256
  local function step(st)
    source[{ 1, 1, stream = st }](u, N // 4, 1.0)
    source[{ 1, 1, stream = st }](u, N - 1 - N // 4, 1.0)
    diffuse[{ blocks, 256, stream = st }](u, v, N, 0.25)
    diffuse[{ blocks, 256, stream = st }](v, u, N, 0.25)
    ends[{ 1, 1, stream = st }](u, N)
  end
  step(s); s:synchronize()
  local g = cuda.graph(function(cs) for _ = 1, STEPS do step(cs) end end)
  g:replay(1, s); s:synchronize()
  local per = { {}, {} }
  for r = 0, o.reps do
    local t0 = clock.now()
    for _ = 1, REPLAYS * STEPS do step(s) end
    s:synchronize()
    local t1 = clock.now()
    g:replay(REPLAYS, s)
    s:synchronize()
    local t2 = clock.now()
    if r > 0 then
      per[1][#per[1] + 1] = (t1 - t0) / (REPLAYS * STEPS) * 1e6
      per[2][#per[2] + 1] = (t2 - t1) / (REPLAYS * STEPS) * 1e6
    end
  end
  row("graph_step", "launches", REPLAYS * STEPS, median(per[1]), "us")
  row("graph_step", "graph", REPLAYS * STEPS, median(per[2]), "us")
end

-- Issue 15's cases, as latency.c measures them from C: a spin kernel of each length launched and
-- waited for (cuda.synchronize, stream:synchronize, event:synchronize), median us; the process's
-- CPU time (os.clock) during a wait for a one-second kernel, % of the wall time.
local LENGTHS = { 0, 5, 20, 50, 200, 1000, 10000 }
local function latency_case()
  local src = read("spin.cu")
  local spin, s, e = kernel_of(src, "spin"), cuda.stream(), cuda.event()
  local waits = {
    device = function(ns) spin[{ 1, 1 }](ns); cuda.synchronize() end,
    stream = function(ns) spin[{ 1, 1, stream = s }](ns); s:synchronize() end,
    event = function(ns) spin[{ 1, 1 }](ns); e:record():synchronize() end,
  }
  for _, kind in ipairs { "stream", "device", "event" } do
    local wait = waits[kind]
    for _, us in ipairs(LENGTHS) do
      local count = math.max(o.short and 1 or 5, math.min(o.roundtrips, 2000,
        us > 0 and 400000 // us or 2000))
      for _ = 1, 3 do wait(us * 1000) end
      local times = {}
      for i = 1, count do
        local t0 = clock.now()
        wait(us * 1000)
        times[i] = (clock.now() - t0) * 1e6
      end
      row("latency", "rt" .. us .. "_" .. kind, count, median(times), "us")
    end
  end
  local c0, t0 = os.clock(), clock.now()
  waits.stream(o.short and 10000000 or 1000000000)
  row("latency", "cpu_wait1s", 1, 100 * (os.clock() - c0) / (clock.now() - t0), "%")
end

-- Small operations as a Lua user writes them, each the median us of many.
local function small_case()
  local n1k, n1m = 1024, 1 << 20
  local a1k, a1m = cuda.zeros(n1k, "f32"), cuda.zeros(n1m, "f32")
  local h = cuda.host_array(n1k, "f32")
  local t = {}
  for i = 1, n1k do t[i] = i * 0.5 end
  local twice = kernel_of(read("spin.cu"), "twice")
  local ops = {
    { "alloc_free", function() cuda.device_array(n1k, "f32"):free() end },
    { "zeros", function() cuda.zeros(n1k, "f32"):free() end },
    { "sum1k", function() return a1k:sum() end },
    { "sum1m", function() return a1m:sum() end },
    { "dtoh1k", function() a1k:copy_to_host(h) end },
    { "htod1k", function() a1k:copy_from(h) end },
    { "table1k", function() cuda.to_device(t, "f32"):free() end },
    { "ew1k", function() twice[{ n1k // 256, 256 }](a1k, n1k); cuda.synchronize() end },
  }
  local count = math.min(o.roundtrips, 2000)
  for _, op in ipairs(ops) do
    local fn, times = op[2], {}
    for _ = 1, 3 do fn() end
    for i = 1, count do
      local t0 = clock.now()
      fn()
      times[i] = (clock.now() - t0) * 1e6
    end
    row("small", op[1], count, median(times), "us")
  end
end

local all = {
  { "launch", { "args1", "args4", "args12" }, o.launches },
  { "roundtrip", { "args4" }, o.roundtrips },
  { "cold", { "vadd" }, 1 << 20 }, { "warm", { "vadd" }, 1 << 20 },
  { "bandwidth", { "vadd", "saxpy", "vadd4", "saxpy4" }, 1 << o.sizes[2] },
  { "graph", { "nodes1", "nodes10", "nodes100", "nodes1000" }, 0 },
  { "latency", { "(all)" }, 0 }, { "small", { "(all)" }, 0 },
  { "memory", { "device", "managed_prefetched", "managed", "mapped" }, 1 << math.min(o.sizes[2], 26) },
}
local why = not ok_cuda and ("require 'cujit' failed (run bench.lua with the cujit command): "
      .. tostring(cuda))
    or not ok_clock and ("benchclock is not on package.cpath (" .. tostring(clock) .. ")")
    or (type(cuda.has_gpu) == "function" and not cuda.has_gpu() and "no GPU")
if why then
  for _, c in ipairs(all) do
    if wants(c[1]) then missing_all(c[1], c[2], c[3], why) end
  end
  return
end
guarded("launch", all[1][2], o.launches, launch_case)
if not wants("launch") then guarded("roundtrip", all[2][2], o.roundtrips, launch_case) end
guarded("cold", { "vadd" }, 1 << 20, function() first_launch("cold") end)
guarded("warm", { "vadd" }, 1 << 20, function() first_launch("warm") end)
guarded("bandwidth", all[5][2], 1 << o.sizes[2], bandwidth_case)
guarded("graph", all[6][2], 0, graph_case)
if wants("graph") then
  local ok, err = pcall(graph_step_case)
  if not ok then
    missing("graph_step", "launches", 0, err); missing("graph_step", "graph", 0, err)
  end
end
guarded("latency", { "(all)" }, 0, latency_case)
guarded("small", { "(all)" }, 0, small_case)
guarded("memory", all[9][2], all[9][3], memory_case)
