-- test_lua_messages.lua -- what cujit says from Lua on the CPU device is true (issue 23,
-- ../shared/repro/14): slice errors keep values past 2^32, overlapping views are placed within
-- their array, a view of a freed array says so, launch limits and tostring name the CPU device,
-- a kernel's arch is "cpu", cuda.allocated() counts the bytes asked for, atomicAdd on __half is
-- refused in cujit's words at the user's line, an error object raised inside cuda.graph comes back
-- as that object, cuda.has_gpu() gives no advice to switch to the device already current, and
-- cuda.status() answers false and why when there is no device at all.
local h = require "helper"
local cuda = require "cujit"

-- Before any device is current: with no GPU, cuda.status() is false and the reason, no error.
h.test("cuda.status() with no device to be had is false and why", function()
  if h.has_gpu(cuda) then return end
  local ok, st, why = pcall(cuda.status)
  h.check(ok, "cuda.status() raised: " .. tostring(st))
  h.eq(st, false, "status")
  h.check(type(why) == "string" and why ~= "", "a reason: " .. tostring(why))
end)

h.test("cuda.has_gpu() does not tell a user on the CPU device to switch to it", function()
  if h.has_gpu(cuda) then return end
  local _, before = cuda.has_gpu()
  h.contains(before, 'cuda.device("cpu")', "off the CPU device, it says how to get there")
  cuda.device("cpu")
  local ok, why = cuda.has_gpu()
  h.eq(ok, false, "no GPU")
  h.contains(why, "kernels run on the CPU device, the current device", "says where kernels run")
  h.check(not why:find("CUJIT_DEVICE=cpu", 1, true), "no advice to set CUJIT_DEVICE: " .. why)
  h.check(not why:find("No GPU to run on", 1, true), "no advice to switch: " .. why)
end)

-- The tests below run on the CPU device (the tests run in order, after the two above).
local function test(name, fn)
  h.test(name, function()
    cuda.device("cpu")
    fn()
  end)
end

test("a slice error keeps values past 2^32", function()
  local a = cuda.zeros(100, "f32")
  h.raises({"slice 4294967297..4294967301 is outside 1..100"}, a.slice, a, 4294967297, 4294967301)
  h.raises({"slice 1..4294967296 is outside 1..100"}, a.slice, a, 1, 4294967296)
  h.raises({"slice -9007199254740991..2 is outside"}, a.slice, a, -9007199254740991, 2)
end)

test("overlapping views are placed within their array", function()
  local a = cuda.zeros(100, "f32")
  h.raises({"views of one array and overlap: bytes [16, 48) and [0, 32) of that array"},
           function() a:slice(1, 8):copy_from(a:slice(5, 12)) end)
  a:slice(1, 4):copy_from(a:slice(5, 8)) -- apart: copies
end)

test("a view of a freed array says so, not that its device was reset", function()
  local a = cuda.zeros(100, "f32")
  local v = a:slice(1, 2)
  local vv = v:slice(1, 1)
  h.eq(tostring(v), "cujit.device_array f32[2] on the CPU device", "alive")
  a:free()
  h.eq(tostring(v), "cujit.device_array f32[2] (a view of an array that was freed)", "the view")
  h.eq(tostring(vv), "cujit.device_array f32[1] (a view of an array that was freed)", "its view")
  h.eq(tostring(a), "cujit.device_array f32[100] (freed)", "the array")
end)

test("launch limits and tostring name the CPU device, never 'device -1'", function()
  local k = cuda.jit("lim(float *o)", "o[0] = 1;")
  local o = cuda.zeros(1)
  k[{1, 1}](o) -- loaded, for the capture below
  h.raises({"grid.y = 70000 is over the CPU device's limit of 65535"},
           function() k[{grid = {1, 70000}, block = {1}}](o) end)
  h.raises({"block.x = 2048 is over the CPU device's limit of 1024"},
           function() k[{grid = {1}, block = {2048}}](o) end)
  h.raises({"a block of 2048 threads is over the CPU device's limit of 1024"},
           function() k[{grid = {1}, block = {32, 64}}](o) end)
  local ok, err = pcall(function() k[{grid = {1, 70000}, block = {1}}](o) end)
  h.check(not ok and not tostring(err):find("device -1", 1, true), tostring(err))
  h.eq(tostring(cuda.stream()), "cujit.stream on the CPU device", "a stream")
  local g = cuda.graph(function(s) k[{1, 1, stream = s}](o) end)
  h.eq(tostring(g), "cujit.graph: 1 kernel node on the CPU device", "a graph")
end)

test("a CPU kernel's arch is cpu", function()
  local k = cuda.jit("arch_probe(float *o)", "o[0] = 2;")
  h.eq(k:compile_info().arch, "cpu", "compile_info().arch")
  h.contains(tostring(k), "arch_probe(float *o) cpu ", "tostring(k)")
  h.check(not tostring(k):find("  ", 1, true), "no empty arch in: " .. tostring(k))
end)

test("cuda.allocated() counts the bytes asked for", function()
  collectgarbage()
  local before = cuda.allocated()
  local keep = {}
  for i = 1, 100 do keep[i] = cuda.zeros(1, "f32") end
  h.eq(cuda.allocated() - before, 400, "100 one-float arrays")
  keep[101] = cuda.zeros(3, "f64")
  h.eq(cuda.allocated() - before, 424, "and three doubles")
  keep[102] = keep[101]:slice(1, 2)
  h.eq(cuda.allocated() - before, 424, "a view takes nothing")
  for i = 1, 101 do keep[i]:free() end
  h.eq(cuda.allocated(), before, "freed")
end)

test("atomicAdd on __half is refused in cujit's words, at the user's line", function()
  for _, call in ipairs {"atomicAdd(o, __float2half(1.0f));", "atomicAdd_block(o, o[1]);",
                         "atomicAdd_system(o, o[1]);"} do
    h.raises({"kernel 'ah' failed to compile: line 2 of its body",
              "atomicAdd on this type (__half, __half2, __nv_bfloat16",
              "is not supported on the CPU device"},
             cuda.jit, "ah(__half *o)", "int unused = 0; (void)unused;\n" .. call,
             {preamble = "#include <cuda_fp16.h>"})
  end
  local ok, err = pcall(cuda.jit, "ah(__half *o)", "atomicAdd(o, __float2half(1.0f));",
                        {preamble = "#include <cuda_fp16.h>"})
  h.check(not ok and not tostring(err):match("^[^\n]*no matching function"), tostring(err))
  h.check(not tostring(err):match("^[^\n]*cujit%-cxx%-"), "no scratch path in the headline")
  -- __nv_bfloat16 the same, its type coming from the signature (cuda_bf16.h: cujit/bf16.h here)
  h.raises({"kernel 'ab' failed to compile: line 1 of its body",
            "atomicAdd on this type (__half, __half2, __nv_bfloat16",
            "is not supported on the CPU device"},
           cuda.jit, "ab(__nv_bfloat16 *o)", "atomicAdd(o, __float2bfloat16(1.0f));")
  -- atomicAdd on float and int still compile and run
  local k = cuda.jit("fa(float *f, int *i)", "atomicAdd(f, 1.5f); atomicAdd(i, 2);")
  local f, i = cuda.zeros(1, "f32"), cuda.zeros(1, "i32")
  k[{2, 4}](f, i)
  h.eq(f:totable()[1], 12, "float adds")
  h.eq(i:totable()[1], 16, "int adds")
end)

test("an error object raised inside cuda.graph comes back as that object", function()
  local obj = {code = 7}
  local ok, err = pcall(cuda.graph, function() error(obj) end)
  h.eq(ok, false, "fails")
  h.check(rawequal(err, obj), "the same table, got " .. tostring(err))
  ok, err = pcall(cuda.graph, function() error(42) end)
  h.check(not ok and err == 42, "a number stays that number: " .. tostring(err))
  ok, err = pcall(cuda.graph, function() error("plain words") end)
  h.check(not ok and type(err) == "string", "a message stays a message")
  h.contains(err, "plain words", "its text")
  h.contains(err, "stack traceback", "with the traceback to where it arose")
  -- and the capture is over: a graph can be made after
  local k = cuda.jit("g_after(int *x)", "x[0] = 5;")
  local x = cuda.zeros(1, "i32")
  k[{1, 1}](x) -- loaded before the capture, as captures need
  cuda.graph(function(s) k[{1, 1, stream = s}](x) end):launch()
  cuda.synchronize()
  h.eq(x:totable()[1], 5, "a later capture works")
end)

h.run()
