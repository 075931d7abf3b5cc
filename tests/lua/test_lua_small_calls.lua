-- test_lua_small_calls.lua -- the binding's small calls that no test made (issue 28: the coverage
-- map showed them never executed, so a bug planted in them would pass the suite): how streams and
-- events print, alive and freed; cuda.trim() leaving live arrays alone; cuda.clear_cache()
-- emptying the cache so that the next compile is a miss; cuda.cache_dir() with the disk cache off;
-- cuda.to_device of a device array (a copy, its own dtype only) and of what is not an array; a
-- strided view's fields; a freed array's and a freed program's; integral floats past Lua's
-- integers stored into 64-bit host arrays; a device function's source; g:set_args with a bool and
-- with a struct's bytes. On a GPU when there is one, else on the CPU device.
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

h.test("a strided view's fields, a freed array's and a freed program's", function()
  local m = cuda.to_device({{1, 2, 3}, {4, 5, 6}}, "f32")
  local c = m:cols(2, 3)
  h.eq(c.dtype, "f32", "dtype")
  h.eq(c.size, 4, "size: rows times columns")
  h.eq(c.ndim, 2, "ndim")
  h.eq(c.contiguous, false, "contiguous")
  h.same(c.shape, {2, 3 - 2 + 1}, nil, "shape")
  local tail = ": kernels, reductions and elementwise kernels need contiguous memory; v:copy() "
               .. "makes a contiguous array"
  h.raises("a strided view (columns of a matrix) has no 'data'" .. tail,
           function() return c.data end)
  h.raises("a strided view (columns of a matrix) has no '1'" .. tail, function() return c[1] end)
  local a = cuda.zeros(4, "f32")
  h.eq(a.nothing_here, nil, "an unknown field of an array")
  a:free()
  h.eq(a.device, nil, "a freed array has no device")
  local p = cuda.source('extern "C" __global__ void gone(int *x) { x[0] = 1; }')
  h.eq(tostring(p):match("^cujit%.program"), "cujit.program", "a live program")
  p:free()
  h.eq(tostring(p), "cujit.program (freed)", "a freed program")
end)

h.test("integral floats past Lua's integers into 64-bit host arrays", function()
  local u = cuda.host_array(2, "u64")
  u[1] = 1.5e19 -- a float: no Lua integer holds it, a u64 does
  h.eq(u[1], 15000000000000000000 - 18446744073709551616 | 0, "1.5e19 read back (wrapped)")
  h.check(math.ult(9223372036854775807, u[1]), "it is above 2^63 - 1 as a u64")
  h.raises("cannot store into host array at index 2: value 1.844674407371e+19 out of range for "
           .. "u64 (0 to 18446744073709551615)", function() u[2] = 2 ^ 64 end)
  h.raises("out of range for u64", function() u[2] = -1.0 * 2 ^ 63 end)
  local i = cuda.host_array(2, "i64")
  h.raises("cannot store into host array at index 1: value 1e+19 out of range for i64 "
           .. "(-9223372036854775808 to 9223372036854775807)", function() i[1] = 1e19 end)
  h.raises("out of range for i64", function() i[1] = 2 ^ 63 end)
  i[2] = -2 ^ 63 -- the least i64, given as a float
  h.eq(i[2], math.mininteger, "-2^63")
end)

h.test("a device function gives its source back", function()
  local text = "__device__ int one_more(int v) { return v + 1; }"
  local d = cuda.device_function(text)
  h.eq(d:source(), text, "d:source()")
  h.eq(tostring(d), "cujit.device_function one_more", "tostring")
end)

h.test("g:set_args takes booleans and a struct's bytes as a launch does", function()
  local x = cuda.zeros(1, "i32")
  local k = cuda.jit("flagged(int *x, bool f, float v)", "x[0] = f ? (int)v : -1;")
  k[{1, 1}](x, false, 0) -- loaded before the capture
  local g = cuda.graph(function(s) k[{1, 1, stream = s}](x, true, 3) end)
  local function replay()
    g:launch()
    return x:totable()[1]
  end
  h.eq(replay(), 3, "as captured")
  g:set_args(1, x, false, 3)
  h.eq(replay(), -1, "false")
  g:set_args(1, x, true, 5)
  h.eq(replay(), 5, "true again")
  local p = cuda.source("struct pr { int a; int b; };\n"
                        .. 'extern "C" __global__ void packed(int *x, pr p) { x[0] = p.a * 10 + p.b; }')
  p.packed[{1, 1}](x, string.pack("<i4i4", 0, 0))
  local g2 = cuda.graph(function(s) p.packed[{1, 1, stream = s}](x, string.pack("<i4i4", 1, 2)) end)
  g2:launch()
  h.eq(x:totable()[1], 12, "the struct as captured")
  g2:set_args(1, x, string.pack("<i4i4", 3, 4))
  g2:launch()
  h.eq(x:totable()[1], 34, "the struct's new bytes")
  for _, bytes in ipairs({string.pack("<i4", 3), string.pack("<i4i4i4", 5, 6, 7), ""}) do
    h.raises({"bad argument #4", "('p': a string of its 8 bytes expected (see string.pack; a "
              .. "CUtensorMap takes a:tensor_map{...}), got a string of " .. #bytes .. " bytes)"},
             g2.set_args, g2, 1, x, bytes)
  end
  h.raises({"'p' to 'set_args' of kernel 'packed' (expects 8 raw bytes"}, g2.set_args, g2, 1, x, 12)
  -- a graph takes no host arrays or tables: their copies around a launch are not in the graph
  h.raises({"bad argument #3", "a number, boolean, string, tensor map or cujit.device_array "
            .. "expected for 'packed' (a graph takes no host arrays or tables), got table"},
           g2.set_args, g2, 1, {1}, string.pack("<i4i4", 0, 0))
  h.raises({"bad argument #3", "(a graph takes no host arrays or tables), got userdata"},
           g2.set_args, g2, 1, cuda.host_array(1, "i32"), string.pack("<i4i4", 0, 0))
  h.raises({"bad argument #3", "cujit.device_array expected for 'x', got string"},
           g2.set_args, g2, 1, "abcd", string.pack("<i4i4", 0, 0))
  g2:launch()
  h.eq(x:totable()[1], 34, "a refused set_args changes nothing")
end)

h.run()
