-- example_support.lua -- what the examples share: the run protocol, compile options, timing,
-- checks and reporting.
--
-- Protocol (ctest runs every example twice, from examples/):
--   CUJIT_EXAMPLE_COMPILE_ONLY=1  compile every kernel for sm_90 (no GPU needed), run the
--                                 host-side checks, exit 0;
--   otherwise                     run in full on the GPU, every check an assertion; without a GPU
--                                 print "no GPU: <reason>; skipped" and exit 77, or exit 1 when
--                                 CUJIT_REQUIRE_GPU=1; a GPU without a feature the example
--                                 needs skips too (M.skip_unsupported), and fails under
--                                 CUJIT_REQUIRE_GPU=1.
local cuda = require "cujit"

local M = {}

M.compile_only = os.getenv("CUJIT_EXAMPLE_COMPILE_ONLY") == "1"

local started = cuda.clock()
local checks = 0

local function summary()
  print(string.format("%d checks passed in %.2f s", checks, cuda.clock() - started))
end

-- Under ctest, CUJIT_EXAMPLE_CHECKS names a list (tests/example_checks.lua) of how many checks
-- each example makes as ctest runs it, by script and arguments ("cluster_reduce --sweep"), in each
-- mode it runs in there: compile (CUJIT_EXAMPLE_COMPILE_ONLY=1) and cpu (the CPU device). A run
-- that ends with another count fails: a check removed, or one that no longer runs, would
-- otherwise go unseen, since an example's test only sees checks that fail. Runs on a GPU are not
-- counted (what runs there depends on the GPUs present), nor runs without the variable.
local function count_checked(mode)
  local path = os.getenv("CUJIT_EXAMPLE_CHECKS")
  if not path or path == "" or not mode then return end
  local name = tostring(arg and arg[0] or "?"):match("([^/]+)%.lua$") or tostring(arg and arg[0])
  local key = table.concat({name, table.unpack(arg or {})}, " ")
  local listed = dofile(path)[key]
  local want = listed and listed[mode]
  if want == nil then
    error(string.format("%s (%s): %d checks passed, and %s lists no count for it: add it there",
                        key, mode, checks, path), 0)
  end
  if want ~= checks then
    error(string.format("%s (%s): %d checks passed, %s lists %d: a check was removed or added, or "
                        .. "no longer runs (change the list with the example)", key, mode, checks,
                        path, want), 0)
  end
end

-- Compile options for the example's kernels: an explicit sm_90 in compile-only mode (there may
-- be no GPU to ask), the current GPU's otherwise; `extra` entries are added.
function M.options(extra)
  local o = {}
  if M.compile_only then o.arch = "sm_90" end
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- A full run needs a GPU: without one it ends here, before any kernel is compiled for a default
-- arch (exit 77, or 1 under CUJIT_REQUIRE_GPU=1).
if not M.compile_only then
  local ok, why = cuda.has_gpu()
  if not ok then
    if os.getenv("CUJIT_REQUIRE_GPU") == "1" then
      io.stderr:write("FAIL: CUJIT_REQUIRE_GPU=1 but there is no GPU: ", tostring(why), "\n")
      os.exit(1)
    end
    -- No GPU: the example runs for real on the CPU device (docs/cpu.md), at the smaller sizes
    -- each example chooses through M.on_cpu; CUJIT_EXAMPLE_NO_CPU=1 keeps the old skip.
    if os.getenv("CUJIT_EXAMPLE_NO_CPU") == "1" then
      print("no GPU: " .. tostring(why) .. "; skipped")
      os.exit(77)
    end
    cuda.device("cpu")
    M.on_cpu = true
    print("runs on: CPU device (no GPU: " .. tostring(why):match("^[^\n]*") .. ")")
  end
end
-- The "runs on:" line (scripts/test_summary.lua counts them) when the device was not chosen above.
if not M.compile_only and not M.on_cpu then
  local d = cuda.device()
  M.on_cpu = d.arch == "cpu"
  print(M.on_cpu and "runs on: CPU device (" .. d.name .. ")"
        or string.format("runs on: GPU %d (%s)", d.ordinal, d.name))
end

-- Call after compiling the kernels and the host-side checks: a compile-only run ends here
-- (exit 0); a full run goes on to the GPU work.
-- The example's options read by parse(args) (which raises on a bad one), from the command line;
-- a bad option ends the run with its message and the usage (exit 2), before anything is done.
function M.command_line(name, parse, usage)
  local parsed, o = pcall(parse, arg or {})
  if not parsed then
    io.stderr:write(name, ": ", tostring(o), "\n", usage, "\n")
    os.exit(2)
  end
  return o
end

function M.host_checks_done()
  if not M.compile_only then return end
  count_checked("compile")
  print(string.format("compile-only: kernels compiled for sm_90, %d host checks passed in %.2f s; " ..
                      "nothing ran on a device (unset CUJIT_EXAMPLE_COMPILE_ONLY for that)",
                      checks, cuda.clock() - started))
  os.exit(0)
end

-- The end of a full run: how many checks passed, and the wall time of the whole script.
function M.done()
  count_checked(M.on_cpu and "cpu" or nil)
  summary()
end

-- The device lacks what the example needs (`why` says what): the example is skipped (exit 77).
-- On a GPU under CUJIT_REQUIRE_GPU=1 the skip is a failure instead (exit 1): that is how the suite
-- runs on the GPU machine, a compute capability 9.0 GPU, which has everything the examples use, so
-- a skip there means the example took its GPU for another.
function M.skip_unsupported(why)
  if not M.on_cpu and os.getenv("CUJIT_REQUIRE_GPU") == "1" then
    io.stderr:write("FAIL: CUJIT_REQUIRE_GPU=1 but the GPU cannot run this example: ", why, "\n")
    os.exit(1)
  end
  print(why .. "; skipped")
  os.exit(77)
end

-- An assertion that says what it checked: prints "ok   msg", or raises "check failed: msg"
-- (so the script exits non-zero).
function M.check(cond, msg, ...)
  msg = select("#", ...) > 0 and string.format(msg, ...) or msg
  if not cond then error("check failed: " .. msg, 2) end
  checks = checks + 1
  print("ok   " .. msg)
  return cond
end

-- A Monte Carlo estimate against its exact value, within five standard errors. Examples draw a
-- fresh seed on every run, so the bound sets how often a correct kernel fails by chance: at three
-- SE that is 1 run in 370 per check (CI met it), at five 1 in 1.7 million. A wrong kernel (a bad
-- normal, a lost path, a biased payoff) still lands tens of SE away.
M.SE_BOUND = 5
function M.check_estimate(what, value, exact_name, exact, se)
  return M.check(math.abs(value - exact) <= M.SE_BOUND * se, "%s: |MC - %s| = %.6f <= %d SE = %.6f",
                 what, exact_name, math.abs(value - exact), M.SE_BOUND, M.SE_BOUND * se)
end

function M.printf(fmt, ...)
  print(string.format(fmt, ...))
end

-- Seconds of wall-clock time (os.clock would be CPU time).
M.clock = cuda.clock

-- Wall-clock milliseconds of fn(...).
function M.wall_ms(fn, ...)
  local t0 = cuda.clock()
  fn(...)
  return (cuda.clock() - t0) * 1e3
end

-- GPU milliseconds per call of fn(), measured with events around `reps` calls (default 1) on
-- `stream` (default: the default stream), after one warm-up call when warm is true. Never 0: a
-- time of 0 is below the events' resolution (about half a microsecond on a GPU), and bytes over
-- it would print as an infinite bandwidth, so twice as many calls are timed until the events
-- see them (an error after 2^16 calls: fn queues no work on the stream).
function M.gpu_ms(fn, reps, stream, warm)
  reps = reps or 1
  if warm then fn() end
  local e0, e1 = cuda.event(), cuda.event()
  local ms
  repeat
    e0:record(stream)
    for _ = 1, reps do fn() end
    e1:record(stream)
    e1:synchronize()
    ms = e0:elapsed(e1) / reps
    reps = ms > 0 and reps or reps * 2
  until ms > 0 or reps > 1 << 16
  e0:free()
  e1:free()
  if not (ms > 0) then error("gpu_ms: the events measured no time over 2^16 calls", 2) end
  return ms
end

-- The typical time of a list of repeated runs (epochs): the median, leaving out the first run
-- (kernel loading, graph capture) when there are others.
function M.typical_ms(times)
  local v = {}
  for i = (#times > 1 and 2 or 1), #times do v[#v + 1] = times[i] end
  table.sort(v)
  return v[(#v + 1) // 2]
end

-- Number of blocks of `block` threads covering n.
function M.blocks(n, block)
  return (n + block - 1) // block
end

-- The float32 nearest to x, as the device stores it.
function M.f32(x)
  return (string.unpack("f", string.pack("f", x)))
end

-- The seed of this run's random inputs: CUJIT_EXAMPLE_SEED, else the time (printed, to repeat).
function M.seed()
  local s = tonumber(os.getenv("CUJIT_EXAMPLE_SEED") or "") or os.time()
  print("seed " .. s .. " (set CUJIT_EXAMPLE_SEED to repeat)")
  math.randomseed(s)
  return s
end

-- The directory of the calling script (for examples/data), and an output directory
-- (CUJIT_EXAMPLE_OUT, else examples/out), made if missing.
function M.here()
  local src = debug.getinfo(2, "S").source
  return src:match("^@(.*/)") or "./"
end

function M.out_dir(here)
  local dir = os.getenv("CUJIT_EXAMPLE_OUT") or (here .. "out")
  local ok = os.execute(string.format("mkdir -p '%s'", dir:gsub("'", "'\\''")))
  if not ok then error("cannot make the output directory " .. dir) end
  return dir
end

-- Closed forms for the Monte Carlo examples (host) ----------------------------------------------

-- The standard normal CDF, through erfc (Numerical Recipes' erfcc: fractional error < 1.2e-7).
local function erfc(x)
  local z = math.abs(x)
  local t = 1 / (1 + 0.5 * z)
  local r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
    + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
    + t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0 and r or 2 - r
end

function M.normal_cdf(x)
  return 0.5 * erfc(-x / math.sqrt(2))
end

-- Black-Scholes price of a European call.
function M.black_scholes(s0, k, r, sigma, t)
  local d1 = (math.log(s0 / k) + (r + sigma * sigma / 2) * t) / (sigma * math.sqrt(t))
  local d2 = d1 - sigma * math.sqrt(t)
  return s0 * M.normal_cdf(d1) - k * math.exp(-r * t) * M.normal_cdf(d2)
end

-- The mean and standard deviation of the payoff max(e^X - k, 0), undiscounted, where X is normal
-- with mean mu and variance v: E[e^(nX); X > log k] = e^(n mu + n^2 v / 2) N((mu + n v - log k) /
-- sqrt v). A Monte Carlo check bounds its estimate by this exact standard error, not by the one
-- the kernel's own sums of squares give, which a wrong kernel gets wrong too.
function M.lognormal_call_moments(mu, v, k)
  local sd, lk = math.sqrt(v), math.log(k)
  local function part(n)
    return math.exp(n * mu + n * n * v / 2) * M.normal_cdf((mu + n * v - lk) / sd)
  end
  local m1 = part(1) - k * part(0)
  local m2 = part(2) - 2 * k * part(1) + k * k * part(0)
  return m1, math.sqrt(m2 - m1 * m1)
end

return M
