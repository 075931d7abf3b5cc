-- test_summary.lua -- the closing summary of scripts/test.sh: reads ctest's JUnit report and
-- says what ran where (on a GPU, on the CPU device, compile-only, with no device) and what
-- passed, failed and was skipped, with the reasons, counting the Criterion cases inside the C
-- test programs too (ctest sees a program whose cases all skipped as one passed test).
-- Criterion prints "[SKIP] suite::case: reason" per skipped case (at CRITERION_VERBOSITY_LEVEL=1)
-- and "Synthesis: Tested: N | Passing: N | Failing: N | Crashing: N", where Tested leaves the
-- skipped cases out. Where a test ran is what it said on its "runs on: GPU ..." or "runs on: CPU
-- device ..." lines (tests/lua/helper.lua, examples/example_support.lua, the C examples; a
-- Criterion case's line ends in "[suite::case]", tests/c/gpu.h); a test that says neither and
-- whose name says cpu is one of the CPU device's own suites; any other ran no kernel the
-- summary knows of ("no device named"). A test named *.compile only compiles, for sm_90.
--   lua5.4 scripts/test_summary.lua JUNIT_XML CTEST_STATUS [GPU_LINE]
-- GPU_LINE: what `cujit devices` said (its first line, or its error). Prints only; the exit
-- status of scripts/test.sh stays ctest's.
local junit, ctest_status, gpu_line = arg[1], arg[2] or "?", arg[3] or ""

local function unescape(s)
  return (s:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&apos;", "'")
    :gsub("&#(%d+);", function(n) return utf8.char(tonumber(n)) end):gsub("&amp;", "&"))
end

local f = io.open(junit, "r")
if not f then
  print("summary: no ctest report at " .. junit .. " (ctest exit status " .. ctest_status .. ")")
  return
end
local xml = f:read("a")
f:close()

-- Which device a skip reason is about: the reasons name what was missing.
local function device_of(reason)
  if reason:find("CPU device", 1, true) then return "CPU device" end
  if reason:find("GPU", 1, true) or reason:find("CUDA driver", 1, true) or
     reason:find("libcuda", 1, true) then
    return "GPU"
  end
  return "other"
end

local tests = {passed = 0, failed = 0, skipped = 0, n = 0, failures = {}}
-- Where the tests that ran did so: group -> {names}; and the Criterion cases per device.
local GROUPS = {"GPU", "CPU device", "compile-only", "no device named"}
local ran = {}
for _, g in ipairs(GROUPS) do ran[g] = {} end
local case_devices = {GPU = 0, ["CPU device"] = 0}
local cases = {programs = 0, tested = 0, passed = 0, failed = 0, crashed = 0, skipped = 0}
local skips = {} -- reason -> {device =, tests = {names}, cases = {suite -> count}, ncases =}
local order = {}

local function skip_entry(reason)
  local e = skips[reason]
  if not e then
    e = {device = device_of(reason), tests = {}, cases = {}, suites = {}, ncases = 0}
    skips[reason] = e
    order[#order + 1] = reason
  end
  return e
end

-- The reason a skipped test gave: its last line that mentions skipping.
local function test_skip_reason(out)
  local reason
  for line in out:gmatch("[^\n]+") do
    if line:lower():find("skip", 1, true) then reason = line end
  end
  reason = reason or out:match("([^\n]+)\n?$") or "no reason printed"
  return (reason:gsub("^%s*[Ss][Kk][Ii][Pp]:%s*", ""):gsub(";?%s*skipped%.?%s*$", ""))
end

for attrs, body in xml:gmatch("<testcase(.-)>(.-)</testcase>") do
  local name = unescape(attrs:match('name="(.-)"') or "?")
  local status = attrs:match('status="(.-)"') or "?"
  local out = unescape(body:match("<system%-out>(.-)</system%-out>") or "")
  tests.n = tests.n + 1
  if status ~= "notrun" then
    local devices, own = {}, false
    for device in out:gmatch("runs on: (%u[%w ]-) %f[(%[]") do
      device = device:match("^GPU") and "GPU" or device
      devices[device] = true
      own = own or device == "GPU" or device == "CPU device"
    end
    for device, case in out:gmatch("runs on: ([^\n]-) %[([%w_]+::[%w_]+)%]") do
      if case_devices[device] then case_devices[device] = case_devices[device] + 1 end
    end
    if name:match("%.compile$") then
      table.insert(ran["compile-only"], name)
    elseif not own and name:lower():find("cpu", 1, true) then
      table.insert(ran["CPU device"], name)
    elseif not own then
      table.insert(ran["no device named"], name)
    end
    for _, device in ipairs({"GPU", "CPU device"}) do
      if devices[device] then table.insert(ran[device], name) end
    end
  end
  if status == "run" then
    tests.passed = tests.passed + 1
  elseif status == "notrun" and body:find("<skipped", 1, true) then
    tests.skipped = tests.skipped + 1
    local e = skip_entry(test_skip_reason(out))
    e.tests[#e.tests + 1] = name
  else
    tests.failed = tests.failed + 1
    tests.failures[#tests.failures + 1] = name
  end
  local t, p, fl, c = out:match("Synthesis: Tested: (%d+) | Passing: (%d+) | Failing: (%d+) | Crashing: (%d+)")
  if t then
    cases.programs = cases.programs + 1
    cases.tested = cases.tested + t
    cases.passed = cases.passed + p
    cases.failed = cases.failed + fl
    cases.crashed = cases.crashed + c
  end
  for suite, reason in out:gmatch("%[SKIP%] ([%w_]+)::[%w_]+: ([^\n]*)") do
    cases.skipped = cases.skipped + 1
    local e = skip_entry(reason)
    e.ncases = e.ncases + 1
    if not e.cases[suite] then e.suites[#e.suites + 1] = suite end
    e.cases[suite] = (e.cases[suite] or 0) + 1
  end
end

local function plural(n, word)
  return n .. " " .. word .. (n == 1 and "" or "s")
end

print(string.format("== summary (ctest exit status %s) ==", ctest_status))
print(string.format("ctest:     %s: %d passed, %d failed, %d skipped", plural(tests.n, "test"),
                    tests.passed, tests.failed, tests.skipped))
print(string.format("Criterion: %s in %s: %d passed, %d failed, %d crashed, %d skipped",
                    plural(cases.tested + cases.skipped, "case"), plural(cases.programs, "program"),
                    cases.passed, cases.failed, cases.crashed, cases.skipped))
if #tests.failures > 0 then print("failed:    " .. table.concat(tests.failures, " ")) end

-- Where the tests that ran did so (a test with cases on both devices is in both lines).
local function wrapped(names)
  local indent = string.rep(" ", 19) -- under the counts
  local lines, line = {}, indent
  for _, n in ipairs(names) do
    if #line + #n + 1 > 100 and line:find("%S") then
      lines[#lines + 1], line = line, indent
    end
    line = line .. " " .. n
  end
  if line:find("%S") then lines[#lines + 1] = line end
  return table.concat(lines, "\n")
end
print("ran on:")
for _, g in ipairs(GROUPS) do
  local cases = case_devices[g] and case_devices[g] > 0
                and string.format(" (%s that said so)", plural(case_devices[g], "Criterion case"))
                or ""
  print(string.format("  %-17s %s%s", g .. ":", plural(#ran[g], "test"), cases))
  if #ran[g] > 0 then print(wrapped(ran[g])) end
end

-- One line per device: what was skipped for want of it, and why.
local by_device, devices = {}, {}
for _, reason in ipairs(order) do
  local e = skips[reason]
  if not by_device[e.device] then
    by_device[e.device] = {}
    devices[#devices + 1] = e.device
  end
  table.insert(by_device[e.device], reason)
end
if not by_device.GPU then
  print("GPU:       " .. (gpu_line ~= "" and gpu_line or "?") .. "; nothing skipped for want of it")
end
for _, device in ipairs(devices) do
  for _, reason in ipairs(by_device[device]) do
    local e = skips[reason]
    local label = device == "other" and "skipped" or device
    print(string.format("%-10s %s and %s skipped: %s", label .. ":", plural(#e.tests, "test"),
                        plural(e.ncases, "case"), reason))
    if #e.tests > 0 then print("             tests: " .. table.concat(e.tests, " ")) end
    if e.ncases > 0 then
      local parts = {}
      for _, suite in ipairs(e.suites) do parts[#parts + 1] = suite .. " " .. e.cases[suite] end
      print("             cases: " .. table.concat(parts, ", "))
    end
  end
end
