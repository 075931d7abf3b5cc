-- test_lua_launch_args.lua -- every argument and configuration error of a launch, found before
-- anything reaches the GPU (so this runs without one): counts, scalar conversions by the
-- signature, ranges, wrong array dtypes, tables for generic parameters, bad launch tables.
local h = require "helper"
local cuda = require "cujit"
h.need_nvrtc(cuda)

local SM90 = {arch = "sm_90"}
local saxpy = cuda.jit("saxpy(float a, const float *x, float *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
]], SM90)
local ints = cuda.jit("ints(signed char a, unsigned int b, long long c, unsigned long long d, int *out)",
                      "out[0] = a + b + c + d;", SM90)
local generic = cuda.jit("gaxpy(T a, const T *x, T *y, int n)", "y[0] = a * x[0];", SM90)
local x = cuda.array({1, 2, 3}, "f32")
local y = cuda.array({1, 2, 3}, "f32")
local out = cuda.host_array(1, "i32")
local L = saxpy[{1, 32}]
local gpu = h.has_gpu(cuda)

-- Without a GPU a correct launch fails only at the device, with the message that says there is
-- none (any other error, such as a wrong argument check, fails the test); with one, it works.
local function no_device(err)
  err = tostring(err)
  return err:find("^no CUDA driver: ") or err:find("^no CUDA device: ")
      or err:find("this machine has no GPU", 1, true)
end
local function launch_ok(f, ...)
  local ok, err = pcall(f, ...)
  if gpu then h.check(ok, "launch should work: " .. tostring(err))
  else h.check(not ok and no_device(err), "should fail only for want of a GPU: " .. tostring(err)) end
end

h.test("argument count", function()
  h.raises({"wrong number of arguments to 'saxpy'", "expected 4, got 3",
            "saxpy(float a, const float *x, float *y, int n)"}, L, 2.0, x, y)
  h.raises("expected 4, got 5", L, 2.0, x, y, 3, 4)
  h.raises("expected 4, got 0", L)
end)

h.test("scalars convert by the signature, not by Lua's subtype", function()
  -- The engine checks range and exactness (one rule for C and Lua, kernels and elementwise); the
  -- binding puts its message in Lua's words.
  h.raises("bad argument #4 'n' to 'saxpy' (3.5 is not an integer; round it first)", L, 2.0, x, y, 3.5)
  h.raises({"bad argument #4 'n' to 'saxpy'", "nan is not an integer"}, L, 2.0, x, y, 0 / 0)
  h.raises("bad argument #4 'n' to 'saxpy' (2147483648 does not fit (range -2147483648..2147483647))",
           L, 2.0, x, y, 2 ^ 31)
  h.raises({"bad argument #4 'n' to 'saxpy'", "-9223372036854775808 does not fit"}, L, 2.0, x, y,
           math.mininteger)
  h.raises("bad argument #1 'a' to 'saxpy' (number expected, got string)", L, "2", x, y, 3)
  h.raises("bad argument #1 'a' to 'saxpy' (number expected, got nil)", L, nil, x, y, 3)
  h.raises({"bad argument #1 'a'", "out of range for f32"}, L, 1e39, x, y, 3)
  launch_ok(L, 2, x, y, 3.0) -- an integer for float, 3.0 for int: both fine
end)

h.test("float limits: one rule for scalars and host arrays", function()
  -- A value rounds to the nearest of the parameter's type; only one that would become infinity
  -- is refused, as for an element of a host array of that dtype (test_lua_host_array.lua).
  local hk = cuda.jit("hk(__half v, float f, int *out)", "out[0] = 1;", SM90)[{1, 1}]
  local FLT_MAX = (2 - 2 ^ -23) * 2 ^ 127
  launch_ok(hk, 65504, FLT_MAX, out) -- the largest values
  launch_ok(hk, -65504, -FLT_MAX, out)
  launch_ok(hk, 65510, 1, out) -- stored as 65504, as a[1] = 65510 on an f16 host array
  launch_ok(hk, 65519.99, FLT_MAX + 2 ^ 102, out)
  launch_ok(hk, math.huge, -math.huge, out)
  h.raises({"bad argument #1 'v' to 'hk'", "65520 is out of range for f16 (it would become infinity"},
           hk, 65520, 1, out)
  h.raises({"bad argument #1 'v'", "out of range for f16"}, hk, -65520.5, 1, out)
  h.raises({"bad argument #2 'f' to 'hk'", "out of range for f32 (it would become infinity"},
           hk, 1, FLT_MAX + 2 ^ 103, out)
  local a = cuda.host_array(1, "f16")
  a[1] = 65510
  h.eq(a[1], 65504, "the host array side of the same rule")
  -- bf16: float's range, 8 bits of precision
  local bk = cuda.jit("bk(__nv_bfloat16 v, int *out)", "out[0] = 1;", SM90)[{1, 1}]
  local BF16_MAX = 2 ^ 128 - 2 ^ 120
  launch_ok(bk, BF16_MAX, out)
  launch_ok(bk, 65520, out) -- no limit for bf16
  launch_ok(bk, BF16_MAX + 2 ^ 118, out)
  launch_ok(bk, 0 / 0, out)
  h.raises({"bad argument #1 'v' to 'bk'", "is out of range for bf16 (it would become infinity; " ..
            "the largest is 3.38953139e+38)"}, bk, BF16_MAX + 2 ^ 119, out)
  h.raises({"bad argument #1 'v'", "out of range for bf16"}, bk, -1e39, out)
end)

h.test("integer parameter ranges", function()
  local I = ints[{1, 1}]
  h.raises("bad argument #1 'a' to 'ints' (128 does not fit (range -128..127))", I, 128, 0, 0, 0, out)
  h.raises({"#2 'b'", "-1 does not fit (range 0..4294967295)"}, I, 0, -1, 0, 0, out)
  h.raises({"#2 'b'", "does not fit (range 0..4294967295)"}, I, 0, 2 ^ 32, 0, 0, out)
  h.raises({"#4 'd'", "-1 does not fit (range 0..18446744073709551615)"}, I, 0, 0, 0, -1, out)
  h.raises({"#3 'c'", "does not fit (range -9223372036854775808..9223372036854775807)"}, I, 0, 0, 2 ^ 63, 0, out)
  h.raises({"#3 'c'", "0.5 is not an integer"}, I, 0, 0, 0.5, 0, out)
  launch_ok(I, -128, 4294967295, math.mininteger, 2 ^ 63, out)
end)

h.test("pointer parameters take arrays only", function()
  h.raises({"bad argument #2 'x' to 'saxpy'", "cujit.device_array expected", "got number"}, L, 2, 5, y, 3)
  h.raises({"bad argument #3 'y'", "got string"}, L, 2, x, "y", 3)
  -- nil is a null pointer, which any pointer takes (the kernel's to check) unless the nonnull
  -- option names it; saxpy does not check, so only the refusal is tried here
  local strict = cuda.jit("saxpy(float a, const float *x, float *y, int n)", "y[0] = x[0];",
                          {arch = "sm_90", nonnull = true})
  h.check(saxpy:params()[2].nullable, "x takes nil without the option")
  h.raises({"bad argument #2 'x'", "nonnull"}, strict[{1, 32}], 2, nil, y, 3)
  h.raises({"bad argument #2 'x'", "got FILE*"}, L, 2, io.stdout, y, 3)
end)

h.test("host arrays of the wrong dtype are refused before any copy", function()
  local xd = cuda.array({1, 2, 3}, "f64")
  h.raises("bad argument #2 'x' to 'saxpy' (f32 array expected, got f64 host array)", L, 2, xd, y, 3)
  h.raises("bad argument #3 'y' to 'saxpy' (f32 array expected, got i32 host array)", L, 2, x,
           cuda.array({1}, "i32"), 1)
end)

h.test("Lua tables for pointer parameters", function()
  h.raises({"bad argument #2 'x'", "element [2]: number expected, got string"}, L, 2, {1, "a"}, y, 2)
  h.raises({"bad argument #2 'x'", "flat table"}, L, 2, {{1, 2}}, y, 2)
  h.raises({"bad argument #2 'x'", "empty table"}, L, 2, {}, y, 2)
  h.raises({"bad argument #2 'x' to 'gaxpy'", "no element type"}, generic[{1, 1}], 2, {1, 2}, y, 2)
  launch_ok(L, 2, {1, 2, 3}, y, 3)
end)

h.test("generic scalars must be numbers", function()
  h.raises({"bad argument #1 'a' to 'gaxpy'", "number expected, got table"}, generic[{1, 1}], {}, x, y, 3)
end)

h.test("launch configuration tables", function()
  local function cfg(c) return function() return saxpy[c] end end
  h.raises({"bad launch configuration for 'saxpy'", "the block size is missing"}, cfg {1})
  h.raises("the grid size is missing", cfg {block = 32})
  h.raises("grid must be a positive integer, got 0", cfg {0, 32})
  h.raises("grid must be a positive integer, got 2.5", cfg {2.5, 32})
  h.raises("block must be a positive integer, got -1", cfg {1, -1})
  h.raises("grid must be a positive integer or a table {x, y, z}, got string", cfg {"1", 32})
  h.raises("grid must have 1 to 3 dimensions, got 4", cfg {{1, 1, 1, 1}, 32})
  h.raises("block must have 1 to 3 dimensions, got 0", cfg {1, {}})
  h.raises("unknown entry 'blocks'", cfg {grid = 1, blocks = 32})
  h.raises("unknown entry '3'", cfg {1, 32, 0})
  h.raises("the grid is given twice", cfg {1, 32, grid = 2})
  h.raises("shared must be a byte count", cfg {1, 32, shared = -1})
  h.raises("shared must be a byte count", cfg {1, 32, shared = 1.5})
  h.raises("stream must be a cujit.stream, got number", cfg {1, 32, stream = 0})
  h.raises("a kernel is indexed by a launch configuration", function() return saxpy[1] end)
  h.eq(saxpy.nosuchmethod, nil, "unknown method")
end)

h.test("launchers are cached per configuration", function()
  local a = saxpy[{4, 64}]
  h.eq(saxpy[{4, 64}], a, "same contents give the same launcher")
  h.eq(saxpy[{grid = {4}, block = {64, 1, 1}}], a, "equivalent spellings too")
  local b = saxpy[{8, 64}]
  h.check(b ~= a, "a different grid gives a different launcher")
  h.contains(tostring(a), "grid {4,1,1} block {64,1,1}", "tostring of the first keeps its config")
  h.contains(tostring(b), "grid {8,1,1}", "tostring")
  h.contains(tostring(saxpy[{{2, 3}, {16, 16}, shared = 1024}]), "grid {2,3,1} block {16,16,1} shared 1024", "2-D")
  h.raises("element count must be a positive integer", saxpy.forall, saxpy, 0)
  h.raises("element count must be a positive integer", saxpy.forall, saxpy, 2.5)
  h.eq(saxpy:forall(100), saxpy:forall(100), "forall launchers are cached")
  h.contains(tostring(saxpy:forall(100)), "forall(100)", "forall tostring")
  h.raises("wrong number of arguments", saxpy:forall(3), 1, x)
end)

h.test("a configuration table changed between launches is read again", function()
  local cfg = {4, 64}
  local a = saxpy[cfg]
  cfg[1] = 8
  local b = saxpy[cfg]
  h.check(b ~= a, "a new grid gives a new launcher")
  h.contains(tostring(b), "grid {8,1,1} block {64,1,1}", "the new grid is the one launched")
  cfg.sharde = 16 -- a misspelt key after launches that took the quick path
  h.raises("unknown entry 'sharde'", function() return saxpy[cfg] end)
  cfg.sharde, cfg.shared = nil, 16
  h.contains(tostring(saxpy[cfg]), "grid {8,1,1} block {64,1,1} shared 16", "shared added")
  cfg.shared, cfg[3] = nil, 1
  h.raises("unknown entry '3'", function() return saxpy[cfg] end)
  cfg[3] = nil
  h.eq(saxpy[cfg], saxpy[{8, 64}], "back to two entries, the cached launcher again")
end)

h.test("the launch metamethods check what they are called on", function()
  h.raises("cujit.launcher expected", getmetatable(L).__call, x, 2.0, x, y, 3)
  h.raises("cujit.launcher expected", getmetatable(L).__call, {}, 2.0, x, y, 3)
  h.raises("cujit.kernel expected, got cujit.host_array", getmetatable(saxpy).__index, x, {1, 32})
  h.raises("cujit.kernel expected, got table", getmetatable(saxpy).__index, {}, {1, 32})
end)

h.test("bool parameters take true, false, 0 and 1", function()
  local B = cuda.jit("flag(bool b, int *out)", "out[0] = b ? 7 : 3;", SM90)[{1, 1}]
  -- Any other byte would be an invalid bool on the device.
  h.raises("bad argument #1 'b' to 'flag' (true or false expected (or 0 or 1), got 255)", B, 255, out)
  h.raises("got 2", B, 2, out)
  h.raises("got 0.5", B, 0.5, out)
  h.raises("got -1", B, -1, out)
  h.raises("got string", B, "true", out)
  h.raises("got nil", B, nil, out)
  for _, v in ipairs({true, false, 0, 1, 1.0}) do launch_ok(B, v, out) end
end)

h.test("forall counts must fit the thread index", function()
  h.raises({"element count 2147483648 is over 2147483647",
            "grid-stride loop"}, saxpy.forall, saxpy, 2 ^ 31)
  h.raises("element count 9223372036854775807 is over", saxpy.forall, saxpy, math.maxinteger)
  h.contains(tostring(saxpy:forall(2 ^ 31 - 1)), "forall(2147483647)", "the largest count")
end)

h.test("a struct parameter takes its bytes", function()
  local k = cuda.jit("vec(float2 v, float *out)", "out[0] = v.x + v.y;", SM90)
  h.raises({"bad argument #1 'v' to 'vec'", "a string of its 8 bytes"}, k[{1, 1}], 1.0, out)
  h.raises("a string of its 8 bytes", k[{1, 1}], "abc", out)
end)

h.run()
