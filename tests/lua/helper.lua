-- helper.lua -- what the Lua tests share: a small test runner, checks that say what differed,
-- expected-error checks, random inputs, and the one gate for GPU tests: need_gpu skips (exit
-- 77) with the reason when there is no GPU, and fails instead under CUJIT_REQUIRE_GPU=1, so a
-- GPU run cannot pass by skipping.
local M = {}

local SKIP = 77

-- The test script's scratch directory (M.scratch), removed when the script ends.
local scratch

local function remove_scratch()
  if scratch then os.execute("rm -rf '" .. scratch .. "'") end
  scratch = nil
end

local function skip(why)
  print("SKIP: " .. why)
  remove_scratch()
  os.exit(SKIP)
end

-- A scratch directory of this script, under $TMPDIR (ctest points it at the build tree's
-- test-tmp; /tmp without it), made on first use and removed by M.run (or a skip) at the end, so
-- two build trees testing at once never meet and /tmp is left as it was.
function M.scratch()
  if not scratch then
    local base = os.getenv("TMPDIR") or "/tmp"
    local p = assert(io.popen("mktemp -d '" .. base .. "/cujit-lua-XXXXXX'"))
    scratch = p:read("l")
    p:close()
    assert(scratch and scratch ~= "", "cannot make a scratch directory under " .. base)
  end
  return scratch
end

-- A fresh path in the scratch directory (no file is made there), ending in `suffix`.
local names = 0
function M.tmpname(suffix)
  names = names + 1
  return string.format("%s/f%d%s", M.scratch(), names, suffix or "")
end

local function required(var)
  return os.getenv(var) == "1"
end

-- Skips the whole script without a GPU (fails under CUJIT_REQUIRE_GPU=1).
-- For what only a GPU has (the driver's memory pool, its faults): skips the script on the CPU
-- device with the reason (fails under CUJIT_REQUIRE_GPU=1, where there is a GPU anyway).
function M.need_real_gpu(cuda, what)
  M.need_gpu(cuda)
  if cuda.device().arch == "cpu" then skip("the CPU device has no " .. what) end
end

-- need_gpu says where the script runs, on a line "runs on: DEVICE (...)" that
-- scripts/test_summary.lua counts.
function M.need_gpu(cuda)
  local ok, why = cuda.has_gpu()
  if ok then
    local d = cuda.device()
    print(d.arch == "cpu" and "runs on: CPU device (" .. d.name .. ")"
          or string.format("runs on: GPU %d (%s)", d.ordinal, d.name))
    return
  end
  if required("CUJIT_REQUIRE_GPU") then
    io.stderr:write("FAIL: CUJIT_REQUIRE_GPU=1 but there is no GPU: ", tostring(why), "\n")
    os.exit(1)
  end
  -- No GPU: run on the CPU device (docs/cpu.md) unless CUJIT_TEST_NO_CPU=1 asks for the skip.
  if required("CUJIT_TEST_NO_CPU") then skip("no GPU: " .. tostring(why)) end
  cuda.device("cpu")
  print("runs on: CPU device (no GPU: " .. tostring(why):match("^[^\n]*") .. ")")
end

-- A launcher that keeps a stream busy, for tests of what happens while work is still queued:
-- busy(stream [, scale]) starts one thread on a loop the compiler cannot drop, about a second on
-- the CPU device and less on a GPU, `scale` times that. Call after need_gpu (it compiles for the
-- current device).
function M.busy_launcher(cuda)
  local k = cuda.jit("busy(unsigned *out, long long rounds)", [[
  unsigned x = 1u;
  for (long long r = 0; r < rounds; r++) x = x * 1664525u + 1013904223u;
  out[0] = x;
]])
  local sink = cuda.device_array(1, "u32")
  local rounds = cuda.device().arch == "cpu" and 100000000 or 600000000
  return function(stream, scale)
    k[{1, 1, stream = stream}](sink, rounds * (scale or 1))
  end
end

-- The GPUs the driver sees (0 without a driver).
function M.gpu_count(cuda)
  local n = 0
  for _, d in ipairs(cuda.devices()) do
    if d.arch ~= "cpu" then n = n + 1 end
  end
  return n
end

-- The GPUs a run requires: CUJIT_REQUIRE_GPUS=N (the two-GPU machine sets 2), or 1 under
-- CUJIT_REQUIRE_GPU=1, else 0.
function M.required_gpus()
  local n = tonumber(os.getenv("CUJIT_REQUIRE_GPUS") or "")
  if n then return n end
  return required("CUJIT_REQUIRE_GPU") and 1 or 0
end

-- For a script run only against the stand-in driver (tests/CMakeLists.txt puts it first on
-- LD_LIBRARY_PATH for that test alone): fails unless the first `gpus` (default 1) GPUs are the
-- stand-in's, whose names begin "stub ".
function M.need_stand_in(cuda, script, gpus)
  gpus = gpus or 1
  local devices = cuda.devices()
  local ok = M.gpu_count(cuda) >= gpus
  for i = 1, gpus do ok = ok and tostring(devices[i].name):find("^stub ") ~= nil end
  if not ok then
    io.stderr:write("FAIL: ", script, " runs against the stand-in driver's ", gpus,
                    " GPU(s) only; the first device is ", tostring(devices[1].name), "\n")
    os.exit(1)
  end
end

-- For what needs `n` GPUs (several devices): skips the script with the reason when there are
-- fewer, and fails instead when CUJIT_REQUIRE_GPUS asks for at least n. Returns the count.
function M.need_gpus(cuda, n)
  local have = M.gpu_count(cuda)
  if have >= n then return have end
  local why = string.format("needs %d GPUs, this machine has %d", n, have)
  if M.required_gpus() >= n then
    io.stderr:write("FAIL: CUJIT_REQUIRE_GPUS=", M.required_gpus(), " but the test ", why, "\n")
    os.exit(1)
  end
  skip(why)
end

-- NCCL for a GPU test: skips without it (fails when GPUs are required), and refuses to touch it
-- unless NCCL_NVLS_ENABLE=0 is in the environment (NVLink multicast must stay off on the shared
-- GPU machines; cujit never sets it).
function M.need_nccl(cuda)
  local ok, why = cuda.nccl.available()
  local failing = M.required_gpus() >= 1
  if not ok then
    if failing then
      io.stderr:write("FAIL: GPUs are required but NCCL is not there: ", tostring(why), "\n")
      os.exit(1)
    end
    skip("no NCCL: " .. tostring(why))
  end
  if os.getenv("NCCL_NVLS_ENABLE") ~= "0" then
    local msg = "NCCL_NVLS_ENABLE is not 0; set NCCL_NVLS_ENABLE=0 before a GPU run uses NCCL"
    if failing then
      io.stderr:write("FAIL: ", msg, "\n")
      os.exit(1)
    end
    skip(msg)
  end
end

function M.has_gpu(cuda)
  return (cuda.has_gpu())
end

-- Skips without NVRTC (fails when a GPU run requires everything).
function M.need_nvrtc(cuda)
  if cuda.version().nvrtc then return end
  if required("CUJIT_REQUIRE_GPU") or required("CUJIT_REQUIRE_NVRTC") then
    io.stderr:write("FAIL: NVRTC is required but could not be opened\n")
    os.exit(1)
  end
  skip("no NVRTC (libnvrtc.so.13/.12 not found; set CUJIT_NVRTC)")
end

-- Runner -------------------------------------------------------------------------------------

local tests, failures = {}, 0

-- Registers a test; M.run() runs them in order, each in its own pcall.
function M.test(name, fn)
  tests[#tests + 1] = {name = name, fn = fn}
end

-- `unchecked` (optional): why a part of the script's checks cannot run here. When everything
-- else passed, the script then ends as skipped (exit 77) with that reason, so that it shows.
function M.run(unchecked)
  for _, t in ipairs(tests) do
    local ok, err = xpcall(t.fn, debug.traceback)
    if ok then
      print("ok   " .. t.name)
    else
      failures = failures + 1
      print("FAIL " .. t.name .. "\n" .. tostring(err))
    end
  end
  print(string.format("%d tests, %d failed", #tests, failures))
  if failures == 0 and unchecked then skip(unchecked) end
  remove_scratch()
  os.exit(failures == 0 and 0 or 1, true) -- closing the state runs every finalizer too
end

-- Checks ---------------------------------------------------------------------------------------

local function fail(msg, level)
  error(msg, (level or 1) + 2)
end

function M.check(cond, msg)
  if not cond then fail(msg or "check failed") end
  return cond
end

function M.eq(got, want, what)
  if got ~= want then
    fail(string.format("%s: got %s, want %s", what or "value", tostring(got), tostring(want)))
  end
end

-- |got - want| <= tol * max(1, |want|)
function M.near(got, want, tol, what)
  if type(got) ~= "number" or math.abs(got - want) > tol * math.max(1, math.abs(want)) then
    fail(string.format("%s: got %s, want %s (tolerance %g)", what or "value", tostring(got),
                       tostring(want), tol))
  end
end

-- Compares two sequences element by element (exact, or within tol).
function M.same(got, want, tol, what)
  M.eq(#got, #want, (what or "array") .. " length")
  for i = 1, #want do
    local g, w = got[i], want[i]
    if tol then
      if math.abs(g - w) > tol * math.max(1, math.abs(w)) then
        fail(string.format("%s[%d]: got %s, want %s", what or "array", i, tostring(g), tostring(w)))
      end
    elseif g ~= w then
      fail(string.format("%s[%d]: got %s, want %s", what or "array", i, tostring(g), tostring(w)))
    end
  end
end

function M.contains(text, part, what)
  if type(text) ~= "string" or not text:find(part, 1, true) then
    fail(string.format("%s: %q does not contain %q", what or "text", tostring(text), part))
  end
end

-- Calls fn(...) expecting an error whose message contains every string in `parts` (one string
-- or a list). Returns the message.
function M.raises(parts, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then fail("expected an error containing " .. tostring(type(parts) == "table" and parts[1] or parts)) end
  err = tostring(err)
  if type(parts) == "string" then parts = {parts} end
  for _, p in ipairs(parts) do
    if not err:find(p, 1, true) then
      fail(string.format("error %q does not contain %q", err, p))
    end
  end
  return err
end

-- Random inputs ----------------------------------------------------------------------------------

local seed = tonumber(os.getenv("CUJIT_TEST_SEED") or "") or os.time()
math.randomseed(seed)
print("seed " .. seed .. " (set CUJIT_TEST_SEED to repeat)")

-- n random floats in [lo, hi) (default [-1, 1)), never all zeros.
function M.random_floats(n, lo, hi)
  lo, hi = lo or -1, hi or 1
  local t = {}
  for i = 1, n do t[i] = lo + (hi - lo) * math.random() end
  return t
end

function M.random_ints(n, lo, hi)
  local t = {}
  for i = 1, n do t[i] = math.random(lo, hi) end
  return t
end

-- Rounds to the nearest float32, as the device stores it.
function M.f32(x)
  return (string.unpack("f", string.pack("f", x)))
end

-- A poison value for outputs, so elements a kernel failed to write show up.
M.POISON = -12345.5

-- The directory of this script, for data files next to it.
function M.here()
  local src = debug.getinfo(2, "S").source
  return src:match("^@(.*/)") or "./"
end

return M
