-- test_lua_compile_all.lua -- many programs compiled at once from Lua for an explicit sm_90
-- (NVRTC, no GPU needed): cuda.compile_all (programs in the order given, options and device
-- functions for all, an error listing every source that failed by its place, a repeat taken from
-- the cache) and k:specialize_all (a generic kernel's type lists ahead of the first launch), and
-- their refusals with their messages.
local h = require "helper"
local cuda = require "cujit"
h.need_nvrtc(cuda)

local SM90 = {arch = "sm_90"}
local A = 'extern "C" __global__ void a(int *x) { *x = 1; }\n'
local B = 'extern "C" __global__ void b(float *x, float v) { *x = v; }\n'
local BAD = 'extern "C" __global__ void c(int *x) {\n  *x = ;\n}\n'

h.test("compile_all returns the programs in the order given", function()
  local ps = cuda.compile_all({A, B}, SM90)
  h.eq(#ps, 2, "count")
  h.eq(ps[1]:kernels()[1], "a", "first program's kernel")
  h.eq(ps[2].b:signature(), "b(float *x, float v)", "second program's kernel")
  h.contains(ps[1]:ptx(), ".entry a(", "ptx of a")
  h.contains(ps[2]:ptx(), ".target sm_90", "the options reach every source")
end)

h.test("compile_all of an empty list is an empty list", function()
  local ps = cuda.compile_all({}, SM90)
  h.eq(type(ps), "table")
  h.eq(#ps, 0)
end)

h.test("a repeat in one call is compiled once, then a hit", function()
  -- new text each run: the test cache directory outlives the run
  local C = string.format('extern "C" __global__ void rep(int *x) { *x = %d; }\n', math.random(1 << 30))
  local ps = cuda.compile_all({C, C}, SM90)
  h.eq(ps[1].rep:compile_info().from_cache, false, "the first is compiled")
  h.eq(ps[2].rep:compile_info().from_cache, true, "the repeat is the first's")
end)

h.test("every failing source is named by its place, with its message", function()
  local err = h.raises({"cuda.compile_all: 2 of 4 sources failed:", "\n[2] ", "\n[4] ",
                        "<source>:2: error"},
                       cuda.compile_all, {A, BAD, B, "garbage("}, SM90)
  h.check(not err:find("[1]", 1, true), "a good source is not listed: " .. err)
  h.check(not err:find("[3]", 1, true), "a good source is not listed: " .. err)
end)

h.test("device functions (uses) and a preamble go to every source", function()
  local sq = cuda.device_function("__device__ float sq(float v) { return v * v; }")
  local S1 = 'extern "C" __global__ void s1(float *x) { *x = sq(*x); }\n'
  local S2 = 'extern "C" __global__ void s2(float *x) { *x = sq(2.0f) + K; }\n'
  local ps = cuda.compile_all({S1, S2}, {arch = "sm_90", uses = {sq}, preamble = "#define K 1"})
  h.contains(ps[1]:ptx(), ".entry s1(", "s1")
  h.contains(ps[2]:ptx(), ".entry s2(", "s2")
  h.raises({"cuda.compile_all: 1 of 1 sources failed:", "[1] ", "\"nope\" is undefined"},
           cuda.compile_all, {'extern "C" __global__ void t(float *x) { *x = nope; }\n'},
           {arch = "sm_90", uses = {sq}})
end)

h.test("compile_all refuses what is no list of sources", function()
  h.raises({"bad argument #1 to", "compile_all' (table expected, got string)"},
           cuda.compile_all, A)
  h.raises({"bad argument #1 to", "item [2] is a number, not a source string"},
           cuda.compile_all, {A, 42}, SM90)
  h.raises({"item [1] is a table, not a source string"}, cuda.compile_all, {{A}}, SM90)
  h.raises({"item [2] holds a NUL byte"}, cuda.compile_all, {A, "x\0y"}, SM90)
  h.raises({"option 'name' is for cuda.source and cuda.load",
            "cuda.compile_all names each source by its place in the list"},
           cuda.compile_all, {A}, {arch = "sm_90", name = "x.cu"})
  h.raises({"option 'signatures' is for cuda.source and cuda.load"},
           cuda.compile_all, {A}, {arch = "sm_90", signatures = {"a(int *x)"}})
  h.raises({"unknown option"}, cuda.compile_all, {A}, {arch = "sm_90", fastmath = true})
end)

local AXPY_SIG = "axpy(T a, const T *x, T *y, int n)"
local AXPY = "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];"

h.test("specialize_all specialises a generic kernel for each dtype", function()
  local k = cuda.jit(AXPY_SIG, AXPY, SM90)
  local ks = k:specialize_all{"f32", "f64", "i32"}
  h.eq(#ks, 3, "count")
  h.eq(ks[1]:signature(), "axpy(float a, const float *x, float *y, int n)")
  h.eq(ks[2]:signature(), "axpy(double a, const double *x, double *y, int n)")
  h.eq(ks[3]:signature(), "axpy(int a, const int *x, int *y, int n)")
  local again = k:specialize("f64")
  h.eq(again:ptx(), ks[2]:ptx(), "the same specialisation afterwards")
  h.eq(again:compile_info().from_cache, true, "kept: not compiled again")
  h.eq(#k:specialize_all{}, 0, "an empty list")
end)

h.test("specialize_all takes lists for several type variables", function()
  local k = cuda.jit("cvt(const T *x, U *y)", "y[0] = (U)x[0];", SM90)
  local ks = k:specialize_all{{"f32", "i32"}, {"f64", "f16"}}
  h.eq(ks[1]:signature(), "cvt(const float *x, int *y)")
  h.eq(ks[2]:signature(), "cvt(const double *x, __half *y)")
  h.raises({"bad argument #1 to 'specialize_all'",
            "item [1] is a string: give a list of 2 dtype names for 'cvt'"},
           function() return k:specialize_all{"f32"} end)
  h.raises({"item [2] is a table: give a list of 2 dtype names"},
           k.specialize_all, k, {{"f32", "i32"}, {"f32"}})
  h.raises({"item [1]: 'f33' is not a dtype (use one of f16, bf16, f32"},
           k.specialize_all, k, {{"f32", "f33"}})
end)

h.test("specialize_all refusals and failures name the item", function()
  local k = cuda.jit("mod2(T a, T *y)", "y[0] = a % 2;", SM90)
  h.raises({"bad argument #1 to 'specialize_all'", "table expected, got string"},
           function() return k:specialize_all("f32") end)
  h.raises({"item [2] is a number: give a dtype name for 'mod2'"}, k.specialize_all, k, {"i32", 3})
  h.raises({"item [1]: 'real' is not a dtype"}, k.specialize_all, k, {"real"})
  h.raises({"item [1]: boolean is not a dtype"}, k.specialize_all, k, {{true}})
  local err = h.raises({"k:specialize_all: 1 of 3 type lists failed:", "\n[2] ", "mod2"},
                       k.specialize_all, k, {"i32", "f32", "i64"})
  h.check(not err:find("[1]", 1, true) and not err:find("[3]", 1, true), err)
  local c = cuda.jit("plain(int *y)", "y[0] = 1;", SM90)
  h.raises({"'plain' is not generic"}, c.specialize_all, c, {"f32"})
end)

h.run()
