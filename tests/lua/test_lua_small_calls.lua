-- test_lua_small_calls.lua -- the binding's small calls that no test made (issue 28: the coverage
-- map showed them never executed, so a bug planted in them would pass the suite): how streams and
-- events print, alive and freed; cuda.trim() leaving live arrays alone; cuda.clear_cache()
-- emptying the cache so that the next compile is a miss; cuda.cache_dir() with the disk cache off;
-- cuda.to_device of a device array (a copy, its own dtype only) and of what is not an array. On a
-- GPU when there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local on_cpu = cuda.device().ordinal == -1

h.test("streams and events print what they are, and when they are freed", function()
  local s, e = cuda.stream(), cuda.event()
  local where = on_cpu and "the CPU device" or ("device " .. cuda.device().ordinal)
  h.eq(tostring(s), "cujit.stream on " .. where, "a stream")
  h.eq(tostring(e), "cujit.event", "an event")
  s:free()
  e:free()
  h.eq(tostring(s), "cujit.stream (freed)", "a freed stream")
  h.eq(tostring(e), "cujit.event (freed)", "a freed event")
end)

h.test("cuda.trim() gives back what is unused and leaves live arrays as they were", function()
  local keep = cuda.to_device({1, 2, 3, 4}, "i32")
  for _ = 1, 4 do cuda.zeros(1 << 16, "f32"):free() end
  h.eq(select("#", cuda.trim()), 0, "cuda.trim() returns nothing")
  h.same(keep:totable(), {1, 2, 3, 4}, nil, "a live array after the trim")
  local again = cuda.zeros(1 << 16, "f32") -- allocating after a trim works
  h.eq(again:sum(), 0, "a new array after the trim")
end)

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs `code` in a new `cujit -e` with `env` before it, on this process's kind of device; its
-- output.
local function child(env, code)
  if on_cpu then env = env .. " CUJIT_DEVICE=cpu" end
  local p = assert(io.popen(env .. " " .. q(arg[-1]) .. " -e " .. q(code) .. " 2>&1"))
  local out = p:read("a")
  p:close()
  return out
end

-- In a process of its own with its own cache directory: the suite's cache is shared by tests
-- running at once, which a clear would pull from under them.
h.test("cuda.clear_cache() empties the cache: the same source compiles again", function()
  local dir = h.scratch() .. "/own-cache"
  local out = child("CUJIT_CACHE_DIR=" .. q(dir), [[
    local cuda = require "cujit"
    local src = 'extern "C" __global__ void cleared(int *x) { x[0] = 7; }'
    cuda.source(src)
    local before = cuda.cache_stats()
    print("before", before.entries)
    print("returns", select("#", cuda.clear_cache()))
    local after = cuda.cache_stats()
    print("after", after.entries)
    local p = cuda.source(src)
    local last = cuda.cache_stats()
    print("misses", last.misses - after.misses, "disk hits", last.disk_hits - after.disk_hits)
    local x = cuda.zeros(1, "i32")
    p.cleared[{1, 1}](x)
    print("ran", x:totable()[1])
  ]])
  h.contains(out, "returns\t0\n", "cuda.clear_cache() returns nothing")
  h.contains(out, "after\t0\n", "no entry after the clear")
  h.contains(out, "misses\t1\tdisk hits\t0\n", "the same source is a miss again, not found on disk")
  h.contains(out, "ran\t7\n", "the recompiled kernel runs")
  local entries = tonumber(out:match("before\t(%d+)"))
  h.check(entries and entries > 0, "an entry after the first compile: " .. out)
end)

h.test("cuda.cache_dir() says why when the disk cache is off", function()
  local dir = cuda.cache_dir()
  h.check(type(dir) == "string" and dir ~= "", "the suite's cache directory: " .. tostring(dir))
  local out = child("CUJIT_CACHE=off",
                    'local c = require "cujit"; print(select("#", c.cache_dir()), c.cache_dir())')
  h.eq(out, "2\tnil\tthe disk cache is off (CUJIT_CACHE=off, or no writable directory)\n",
       "CUJIT_CACHE=off")
end)

h.test("cuda.to_device of a device array copies it; of anything else it says what it takes", function()
  local a = cuda.to_device({{1, 2, 3}, {4, 5, 6}}, "f64")
  local b = cuda.to_device(a)
  h.same(b.shape, {2, 3}, nil, "the copy's shape")
  h.eq(b.dtype, "f64", "the copy's dtype")
  b:fill(0)
  h.same(a:totable()[1], {1, 2, 3}, nil, "the original is another array: row 1")
  h.same(a:totable()[2], {4, 5, 6}, nil, "row 2")
  h.same(b:totable()[2], {0, 0, 0}, nil, "the copy filled")
  h.same(cuda.to_device(a, "f64"):totable()[2], {4, 5, 6}, nil, "its own dtype named")
  h.raises({"bad argument #2", "(a device array is copied with its own dtype)"}, cuda.to_device,
           a, "f32")
  for _, v in ipairs({"abc", 5, true}) do
    h.raises({"bad argument #1", "(table, cujit.host_array or cujit.device_array expected, got "
              .. type(v) .. ")"}, cuda.to_device, v)
  end
  a:free()
  h.raises("freed", cuda.to_device, a)
end)

h.run()
