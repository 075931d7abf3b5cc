-- multi_gpu.lua -- the Monte Carlo price of a European call split over every GPU of the machine:
-- each device prices its own slice of the paths (the same paths a single device would: path
-- block b always draws Philox block b), its per-block partial sums are combined by an NCCL
-- all-reduce when NCCL is there (by the host otherwise), and the price is checked against
-- Black-Scholes and against the single-device price of the same paths. The scaling over one
-- device is printed. On the CPU device or one GPU it runs with what it has and says so.
--
--   cujit multi_gpu.lua                  one process, every GPU
--   cujit multi_gpu.lua --procs [N]      N processes (default: one per GPU), each one rank on one
--                                        device, meeting through a rendezvous file that rank 0
--                                        writes the NCCL unique id to: the path a multi-host run
--                                        takes (docs/scaling.md)
--   (internal) --rank R --ranks N --id-file PATH --seed S   one child of --procs
--
-- NCCL is used only when NCCL_NVLS_ENABLE=0 is in the environment (NVLink multicast stays off on
-- shared GPU machines; cujit never sets it). MULTI_GPU_PATHS overrides the number of paths.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local S0, STRIKE, RATE, SIGMA, T = 100.0, 105.0, 0.05, 0.2, 1.0
local BLOCK, GRID = 256, 1024

local european = cuda.jit([[european_slice(unsigned long long seed, long long first,
                                           long long blocks, float s0, float strike, float drift,
                                           float vol, double *sums, double *squares)]], [[
  double s = 0.0, q = 0.0;
  for (long long b : cujit::grid_stride(blocks)) { // four paths per Philox block
    float4 z = cujit::normal_float4(seed, (unsigned long long)(first + b));
    float zs[4] = {z.x, z.y, z.z, z.w};
    for (int k = 0; k < 4; k++) {
      double p = fmaxf(s0 * expf(drift + vol * zs[k]) - strike, 0.0f);
      s += p;
      q += p * p;
    }
  }
  s = cujit::block_sum(s);
  q = cujit::block_sum(q);
  if (cujit::block_rank() == 0) sums[blockIdx.x] = s, squares[blockIdx.x] = q;
]], S.options({preamble = "#include <cujit/random.h>\n#include <cujit/reduce.h>\n"}))

-- Black-Scholes (host) -------------------------------------------------------------------------

local black_scholes = S.black_scholes

-- The slice of `blocks` Philox blocks that part i (1-based) of n prices: [first, last).
local function slice(blocks, i, n)
  return (i - 1) * blocks // n, i * blocks // n
end

S.check(math.abs(black_scholes(100, 100, 0.05, 0.2, 1) - 10.450584) < 1e-5,
        "Black-Scholes(100, 100, 5%%, 20%%, 1y) = %.6f", black_scholes(100, 100, 0.05, 0.2, 1))
do
  local covered, last = 0, 0
  for i = 1, 3 do
    local a, b = slice(1001, i, 3)
    S.check(a == last, "slice %d of 3 starts where slice %d ended (%d)", i, i - 1, a)
    covered, last = covered + (b - a), b
  end
  S.check(covered == 1001 and last == 1001, "three slices cover 1001 blocks once")
end

-- Arguments ------------------------------------------------------------------------------------

local opts = {}
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--procs" then
      opts.procs = tonumber(arg[i + 1] or "") and math.tointeger(tonumber(arg[i + 1])) or 0
      if opts.procs > 0 then i = i + 1 end
    elseif a == "--rank" or a == "--ranks" or a == "--id-file" or a == "--seed" then
      opts[a:sub(3):gsub("-", "_")] = assert(arg[i + 1], a .. " needs a value")
      i = i + 1
    else
      error("unknown argument " .. a .. " (use --procs [N])")
    end
    i = i + 1
  end
end

S.host_checks_done()

-- What there is ---------------------------------------------------------------------------------

local gpus = 0
for _, d in ipairs(cuda.devices()) do
  if d.arch ~= "cpu" then gpus = gpus + 1 end
end
local devices = {}
if S.on_cpu then
  devices = {"cpu"}
else
  for d = 0, gpus - 1 do devices[#devices + 1] = d end
end
local nccl_ok, nccl_why = cuda.nccl.available()
if nccl_ok and os.getenv("NCCL_NVLS_ENABLE") ~= "0" then
  nccl_ok, nccl_why = false, "NCCL_NVLS_ENABLE is not 0 in the environment (set it to use NCCL)"
end
if S.on_cpu then nccl_ok, nccl_why = false, "the CPU device has no NCCL" end

local PATHS = math.tointeger(tonumber(os.getenv("MULTI_GPU_PATHS") or "")) or
              (S.on_cpu and 1 << 18 or 1 << 30)
local BLOCKS = PATHS // 4
local drift, vol = (RATE - SIGMA ^ 2 / 2) * T, SIGMA * math.sqrt(T)
local disc = math.exp(-RATE * T)
local exact = black_scholes(S0, STRIKE, RATE, SIGMA, T)

local function price(s, q, n)
  local mean = s / n
  local var = (q / n - mean * mean) * n / (n - 1)
  return disc * mean, disc * math.sqrt(var / n)
end

-- One slice on one device: launched, not waited for.
local function launch_slice(dev, bufs, first, last, seed)
  cuda.device(dev)
  european[{GRID, BLOCK}](seed, first, last - first, S0, STRIKE, drift, vol, bufs.sums,
                          bufs.squares)
end

local function new_bufs(dev)
  return {sums = cuda.device_array(GRID, "f64", {device = dev}),
          squares = cuda.device_array(GRID, "f64", {device = dev})}
end

-- The sums of a device's block sums, read on its device.
local function host_total(dev, bufs)
  cuda.device(dev)
  return bufs.sums:sum(), bufs.squares:sum()
end

-- Child of --procs: one rank, one device ------------------------------------------------------

if opts.rank then
  local rank, ranks = math.tointeger(tonumber(opts.rank)), math.tointeger(tonumber(opts.ranks))
  local seed = math.tointeger(tonumber(opts.seed))
  local dev = S.on_cpu and "cpu" or rank % gpus
  local bufs = new_bufs(dev)
  local first, last = slice(BLOCKS, rank + 1, ranks)
  launch_slice(dev, bufs, first, last, seed)
  cuda.synchronize(dev)
  local s, q = host_total(dev, bufs)
  print(string.format("partial %d %.17g %.17g %d", rank, s, q, (last - first) * 4))
  if nccl_ok and ranks <= gpus then -- NCCL takes one rank per GPU
    local id
    if rank == 0 then
      id = cuda.nccl.unique_id()
      cuda.nccl.write_id(opts.id_file, id)
    else
      id = cuda.nccl.read_id(opts.id_file, 120)
    end
    local comm = cuda.nccl.comm_rank{device = dev, ranks = ranks, rank = rank, id = id}
    comm:all_reduce(bufs.sums, "sum")
    comm:all_reduce(bufs.squares, "sum")
    local ts, tq = host_total(dev, bufs)
    print(string.format("nccl %d %.17g %.17g", rank, ts, tq))
    comm:free()
  end
  os.exit(0)
end

-- Parent of --procs ------------------------------------------------------------------------------

if opts.procs then
  local n = opts.procs > 0 and opts.procs or math.max(gpus, 1)
  if nccl_ok and n > gpus then
    nccl_ok, nccl_why = false, string.format("%d processes share %d GPUs; NCCL takes one rank "
                                             .. "per GPU", n, gpus)
  end
  local seed = S.seed()
  local id_file = os.tmpname()
  os.remove(id_file) -- rank 0 writes it whole (a rename); the others wait for it to appear
  S.printf("%d processes on %s; combined by %s", n,
           S.on_cpu and "the CPU device" or string.format("%d GPU%s", gpus, gpus == 1 and "" or "s"),
           nccl_ok and "NCCL all-reduce (and the host, to compare)" or
           "the host (" .. tostring(nccl_why):match("^[^;]*") .. ")")
  local children = {}
  for r = 0, n - 1 do
    local cmd = string.format("'%s' '%s' --rank %d --ranks %d --id-file '%s' --seed %d 2>&1",
                              arg[-1], arg[0], r, n, id_file, seed)
    children[r] = assert(io.popen(cmd, "r")) -- every child starts before any is read
  end
  local s, q, paths, nccl_totals = 0, 0, 0, {}
  for r = 0, n - 1 do
    local out = children[r]:read("a")
    local ok = children[r]:close()
    S.check(ok, "rank %d exited cleanly", r)
    local ps, pq, pn = out:match("partial " .. r .. " (%S+) (%S+) (%d+)")
    S.check(ps ~= nil, "rank %d reported its partial sums", r)
    s, q, paths = s + tonumber(ps), q + tonumber(pq), paths + math.tointeger(tonumber(pn))
    local ts, tq = out:match("nccl " .. r .. " (%S+) (%S+)")
    if ts then nccl_totals[#nccl_totals + 1] = {tonumber(ts), tonumber(tq)} end
  end
  os.remove(id_file)
  S.check(paths == PATHS, "the ranks priced %d paths together, all of them", paths)
  local value, se = price(s, q, PATHS)
  S.printf("European call, %d paths over %d processes: %.6f +- %.6f (SE); Black-Scholes %.6f",
           PATHS, n, value, se, exact)
  S.check_estimate(n .. " processes", value, "Black-Scholes", exact, se)
  if nccl_ok then
    S.check(#nccl_totals == n, "every rank got the NCCL all-reduce's totals")
    for r, t in ipairs(nccl_totals) do
      S.check(math.abs(t[1] - s) <= 1e-9 * math.abs(s),
              "rank %d: NCCL's sum %.10g is the host's %.10g", r - 1, t[1], s)
    end
  end
  S.done()
  os.exit(0)
end

-- One process, every device ----------------------------------------------------------------------

local seed = S.seed()
local nd = #devices
S.printf("%d paths on %s; partial sums combined by %s", PATHS,
         S.on_cpu and "the CPU device (no GPU)" or
         string.format("%d GPU%s%s", nd, nd == 1 and "" or "s",
                       nd == 1 and " (one device: no scaling to measure)" or ""),
         nccl_ok and "an NCCL all-reduce" or
         "the host (no NCCL: " .. tostring(nccl_why):match("^[^;]*") .. ")")

local bufs = {}
for i, d in ipairs(devices) do bufs[i] = new_bufs(d) end
local comm = nccl_ok and cuda.nccl.comm(devices) or nil

-- Prices PATHS paths over the first `n` devices; returns the sums and the wall milliseconds of
-- launches, waits and combining.
local function run(n)
  local t0 = S.clock()
  for i = 1, n do
    local first, last = slice(BLOCKS, i, n)
    launch_slice(devices[i], bufs[i], first, last, seed)
  end
  local s, q = 0, 0
  if comm and n == nd then
    local sums, squares = {}, {}
    for i = 1, n do sums[i], squares[i] = bufs[i].sums, bufs[i].squares end
    comm:all_reduce(sums, "sum")
    comm:all_reduce(squares, "sum")
    s, q = host_total(devices[1], bufs[1])
    for i = 2, n do cuda.synchronize(devices[i]) end
  else
    for i = 1, n do
      local ps, pq = host_total(devices[i], bufs[i])
      s, q = s + ps, q + pq
    end
  end
  return s, q, (S.clock() - t0) * 1e3
end

-- The median wall time of `reps` runs after one warm-up (which loads the kernel everywhere).
local function timed(n, reps)
  local s, q = run(n)
  local times = {}
  for r = 1, reps do
    local _, _, ms = run(n)
    times[r] = ms
  end
  table.sort(times)
  return s, q, times[(reps + 1) // 2]
end

local reps = S.on_cpu and 1 or 5
local s1, q1, ms1 = timed(1, reps)
local v1, se1 = price(s1, q1, PATHS)
S.printf("1 device:  %.6f +- %.6f, %.3f ms, %.3g paths/s", v1, se1, ms1, PATHS / ms1 * 1e3)
S.check_estimate("one device", v1, "Black-Scholes", exact, se1)
if nd > 1 then
  local sn, qn, msn = timed(nd, reps)
  local vn, sen = price(sn, qn, PATHS)
  S.printf("%d devices: %.6f +- %.6f, %.3f ms, %.3g paths/s: %.2fx one device (goal >= %.1fx)",
           nd, vn, sen, msn, PATHS / msn * 1e3, ms1 / msn, 0.95 * nd)
  S.check(math.abs(vn - v1) <= 1e-9 * math.abs(v1),
          "%d devices price the same paths as one: %.12f vs %.12f", nd, vn, v1)
  S.check_estimate(nd .. " devices", vn, "Black-Scholes", exact, sen)
end
if comm then comm:free() end
S.done()
