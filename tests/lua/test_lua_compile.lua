-- test_lua_compile.lua -- defining kernels from Lua for an explicit sm_90 (NVRTC, no GPU needed):
-- cuda.jit, generic kernels, options, device functions, cuda.source / cuda.load, introspection
-- and compile errors that name the kernel and the line.
local h = require "helper"
local cuda = require "cujit"
h.need_nvrtc(cuda)

local SM90 = {arch = "sm_90"}
local SAXPY_SIG = "saxpy(float a, const float *x, float *y, int n)"
local SAXPY = [[
int i = blockIdx.x * blockDim.x + threadIdx.x;
if (i < n) y[i] = a * x[i] + y[i];
]]

h.test("cuda.jit compiles for sm_90 and describes the kernel", function()
  local k = cuda.jit(SAXPY_SIG, SAXPY, SM90)
  h.eq(k:name(), "saxpy", "name")
  h.eq(k:signature(), SAXPY_SIG, "signature")
  h.contains(k:source(), "a * x[i] + y[i]", "source holds the body")
  h.contains(k:ptx(), ".target sm_90", "ptx")
  h.contains(k:ptx(), ".entry saxpy", "ptx entry (extern \"C\")")
  local s = tostring(k)
  h.check(s:match("^cujit%.kernel saxpy%(float a, const float %*x, float %*y, int n%) sm_90 " ..
                  "(.-) [%d.]+ ms$"), "tostring: " .. s)
  local info = k:compile_info()
  h.eq(info.arch, "sm_90", "compile_info.arch")
  h.eq(type(info.from_cache), "boolean", "from_cache")
  h.check(info.milliseconds >= 0, "milliseconds")
  h.eq(type(k:log()), "string", "log")
end)

h.test("a second definition is a cache hit", function()
  local k = cuda.jit(SAXPY_SIG, SAXPY, SM90)
  h.eq(k:compile_info().from_cache, true, "from_cache")
  h.contains(tostring(k), "cache hit", "tostring")
end)

h.test("params describe the signature", function()
  local k = cuda.jit(SAXPY_SIG, SAXPY, SM90)
  local p = k:params()
  h.eq(#p, 4, "count")
  h.eq(p[1].name, "a"); h.eq(p[1].kind, "scalar"); h.eq(p[1].dtype, "f32")
  h.eq(p[2].name, "x"); h.eq(p[2].kind, "pointer"); h.eq(p[2].const, true); h.eq(p[2].dtype, "f32")
  h.eq(p[3].const, false, "y is not const")
  h.eq(p[4].dtype, "i32", "int n")
end)

h.test("generic kernels specialise per dtype", function()
  local axpy = cuda.jit("axpy(T a, const T *x, T *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  ]], SM90)
  h.contains(tostring(axpy), "generic in T", "tostring")
  h.same(axpy:type_vars(), {"T"}, nil, "type vars")
  h.eq(axpy:params()[2].type_var, "T", "param type var")
  h.raises("specialise it first", axpy.ptx, axpy)
  local f64 = axpy:specialize("f64")
  h.contains(f64:ptx(), ".f64", "f64 specialisation uses doubles")
  h.contains(f64:signature(), "double", "concrete signature")
  local f32 = axpy:specialize("f32")
  h.check(not f32:ptx():find("fma.rn.f64", 1, true), "f32 specialisation has no double fma")
  h.raises("give one dtype for each", axpy.specialize, axpy, "f32", "f64")
  h.raises("unknown dtype", axpy.specialize, axpy, "float128")
  h.raises("not generic", f32.specialize, f32, "f32")
  h.raises({"kernel 'axpy' is generic: specialise it first"}, axpy.suggest_block, axpy)
  -- a specialisation that does not compile is that compile's error; another one still does
  local rem = cuda.jit("rem2(T *x)", "x[0] = x[0] % 2;", SM90)
  h.raises({"kernel 'rem2' failed to compile", "integral or unscoped enum type"}, rem.specialize,
           rem, "f32")
  h.contains(rem:specialize("i32"):signature(), "int *x", "the integer one compiles")
end)

h.test("compile errors name the kernel and the line", function()
  local err = h.raises({"bad_kernel"}, cuda.jit, "bad_kernel(float *y, int n)", [[
    int i = threadIdx.x;
    y[i] = undefined_thing + 1;
  ]], SM90)
  h.check(err:find("bad_kernel(2)", 1, true) or err:find("line 2", 1, true),
          "the message points at line 2 of the body: " .. err)
  h.contains(err, "undefined_thing", "the compiler log")
end)

h.test("signature errors are reported", function()
  h.raises({}, cuda.jit, "broken(float a", "", SM90)
  h.raises("bad argument #1", cuda.jit, nil, "", SM90)
  h.raises("bad argument #2", cuda.jit, "k(int n)", nil, SM90)
end)

h.test("options are checked", function()
  h.raises({"unknown option 'fastmath'", "fast_math"}, cuda.jit, "k(int n)", "", {fastmath = true})
  h.raises("must be a boolean", cuda.jit, "k(int n)", "", {arch = "sm_90", fast_math = 1})
  h.raises("must be a string", cuda.jit, "k(int n)", "", {arch = 90})
  h.raises("must be a table of strings", cuda.jit, "k(int n)", "", {arch = "sm_90", flags = "-G"})
  h.raises("'flags'[2] must be a string", cuda.jit, "k(int n)", "", {arch = "sm_90", flags = {"-lineinfo", 3}})
  h.raises("options are named", cuda.jit, "k(int n)", "", {"sm_90"})
  h.raises("'name' is for cuda.source", cuda.jit, "k(int n)", "", {arch = "sm_90", name = "x"})
end)

h.test("signatures: a list of strings, for translation units only", function()
  local src = 'extern "C" __global__ void k(int n) {}'
  h.raises("option 'signatures' must be a table of strings", cuda.source, src,
           {arch = "sm_90", signatures = "k(int n)"})
  h.raises("option 'signatures'[2] must be a string, got number", cuda.source, src,
           {arch = "sm_90", signatures = {"k(int n)", 2}})
  h.raises({"option 'signatures' is for cuda.source and cuda.load", "has its signature already"},
           cuda.jit, "k(int n)", "return;", {arch = "sm_90", signatures = {"k(int n)"}})
  h.raises({"option 'signatures' is for cuda.source and cuda.load", "parameter list"},
           cuda.elementwise, "float x -> float y", "y = x", {arch = "sm_90", signatures = {"k()"}})
  -- Given for kernels the scanner can read too, they agree with it.
  local m = cuda.source(src, {arch = "sm_90", signatures = {"k(int n)"}})
  h.same(m:kernels(), {"k"}, nil, "kernels")
end)

h.test("defines, flags and fast_math reach the compiler", function()
  local body = [[
    #if !defined(SCALE) || !defined(ON) || !defined(LISTED) || LISTED != 7
    #error defines did not arrive
    #endif
    if (threadIdx.x == 0) y[0] = SCALE;
  ]]
  local k = cuda.jit("defs(float *y)", body, {arch = "sm_90", defines = {SCALE = 2.5, ON = true, "LISTED=7"},
                                             fast_math = true, line_info = true, flags = {"-DEXTRA=1"}})
  h.contains(k:ptx(), ".target sm_90", "compiled")
  h.raises("defines did not arrive", cuda.jit, "defs2(float *y)", body, {arch = "sm_90", defines = {ON = true}})
  -- NAME = false is not "defined": refused, as a table or a function value is, rather than defining it
  for _, bad in ipairs({false, {}, print}) do
    h.raises({"option 'defines' must hold strings", "(a string, number or true)"}, cuda.jit, "defs3(float *y)",
             "y[0] = 1;", {arch = "sm_90", defines = {OFF = bad}})
  end
end)

h.test("an option NVRTC refuses: the message names the Lua option, flags", function()
  local bogus = {arch = "sm_90", flags = {"--no-such-nvrtc-option"}}
  local err = h.raises({"NVRTC refused an option", "check flags, std and arch", "--no-such-nvrtc-option"},
                       cuda.jit, "bogus(int *x)", "x[0] = 1;", bogus)
  h.check(not err:find("extra_flags", 1, true), "no C field name in: " .. err)
  h.raises("check flags, std and arch", cuda.source, 'extern "C" __global__ void b(int *x) {}', bogus)
  h.raises("check flags, std and arch", cuda.elementwise, "int x -> int y", "y = x", bogus)
end)

h.test("device functions shared by kernels", function()
  local sq = cuda.device_function [[
    __device__ float sq(float x) { return x * x; }
  ]]
  h.eq(tostring(sq), "cujit.device_function sq", "tostring names the first function")
  local norm = cuda.device_function([[
    __device__ float norm2(float x, float y) { return sq(x) + sq(y); }
  ]], {uses = {sq}})
  local k1 = cuda.jit("n2(const float *x, float *y, int n)", [[
    int i = threadIdx.x;
    if (i < n) y[i] = norm2(x[i], 1.0f);
  ]], {arch = "sm_90", uses = {norm, sq}}) -- sq listed twice (directly and through norm): once in
  local k2 = cuda.jit("sq1(float *y)", "y[0] = sq(y[0]);", {arch = "sm_90", uses = {sq},
                                                             preamble = "#define UNUSED 1"})
  h.contains(k1:source(), "norm2", "k1 source")
  local _, count = k1:source():gsub("float sq%(", "")
  h.eq(count, 1, "sq defined once")
  h.contains(k2:source(), "#define UNUSED 1", "preamble kept")
  local bad = cuda.device_function("__device__ float oops(float x) { return nope; }")
  local err = h.raises("oops", cuda.jit, "k3(float *y)", "y[0] = oops(1);", {arch = "sm_90", uses = {bad}})
  h.contains(err, "nope", "log")
  h.raises("must be a cujit.device_function", cuda.jit, "k4(float *y)", "", {arch = "sm_90", uses = {"x"}})
  h.raises("unknown option", cuda.device_function, "__device__ int f(){return 1;}", {nme = "f"})
  -- the name its lines are compiled under: the one given, else its first __device__ function's,
  -- else "device_function"
  local named = cuda.device_function("__device__ float oops2(float x) { return nope2; }",
                                     {name = "mathlib.cuh"})
  h.contains(h.raises("nope2", cuda.jit, "k5(float *y)", "y[0] = oops2(1);",
                      {arch = "sm_90", uses = {named}}), "mathlib.cuh:1: error", "the name given")
  local first = cuda.device_function("__device__  float   first_fn (float x) { return nope3; }")
  h.contains(h.raises("nope3", cuda.jit, "k6(float *y)", "y[0] = first_fn(1);",
                      {arch = "sm_90", uses = {first}}), "first_fn:1: error", "the first function's name")
  local plain = cuda.device_function("static const int helper_count = nope4;")
  h.contains(h.raises("nope4", cuda.jit, "k7(float *y)", "y[0] = 1;",
                      {arch = "sm_90", uses = {plain}}), "device_function:1: error",
             "no function: the default")
  h.raises({"name may not hold quotes"}, cuda.device_function, "__device__ int g() { return 1; }",
           {name = 'a"b'})
  h.raises({"option 'name' must be a string"}, cuda.device_function,
           "__device__ int g() { return 1; }", {name = 5})
end)

local TWO_KERNELS = [[
extern "C" __global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= s;
}
extern "C" __global__ void shift(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += s;
}
]]

h.test("cuda.source gives each kernel by name", function()
  local m = cuda.source(TWO_KERNELS, {arch = "sm_90", name = "two.cu"})
  h.same(m:kernels(), {"scale", "shift"}, nil, "kernels")
  h.eq(m.scale:name(), "scale", "m.scale")
  h.eq(m["shift"]:signature(), "shift(float *y, float s, int n)", "m['shift']")
  h.eq(m.scale, m:kernel("scale"), "the same kernel object each time")
  h.contains(m:ptx(), ".entry shift", "program ptx")
  h.contains(tostring(m), "scale, shift", "tostring")
  h.raises({"no kernel 'scal'", "scale, shift"}, function() return m.scal end)
  local err = h.raises({"broken.cu"}, cuda.source, "extern \"C\" __global__ void b(int n) {\n  int x = ;\n}\n",
                       {arch = "sm_90", name = "broken.cu"})
  h.check(err:find("(2)", 1, true) or err:find("line 2", 1, true), "line 2: " .. err)
end)

h.test("cuda.load compiles a .cu file", function()
  local path = h.tmpname(".cu")
  local f = assert(io.open(path, "w"))
  f:write(TWO_KERNELS)
  f:close()
  local m = cuda.load(path, SM90)
  h.same(m:kernels(), {"scale", "shift"}, nil, "kernels")
  local helpers = cuda.device_function("__device__ float twice(float x) { return 2 * x; }")
  local m2 = cuda.load(path, {arch = "sm_90", uses = {helpers}})
  h.contains(m2.shift:source(), "twice", "uses prepended to the file")
  os.remove(path)
  h.raises({}, cuda.load, path, SM90)
end)

h.test("kernels are values: tostring after free, __close", function()
  local k = cuda.jit(SAXPY_SIG, SAXPY, SM90)
  do
    local k2 <close> = cuda.jit(SAXPY_SIG, SAXPY, SM90)
    h.eq(k2:name(), "saxpy")
  end
  k:free()
  h.eq(tostring(k), "cujit.kernel (freed)", "tostring")
  h.raises("freed", k.ptx, k)
  h.raises("freed", function() return k[{1, 32}] end)
  local g = cuda.jit("gfree(T *y)", "y[0] = 1;", SM90)
  local spec = g:specialize("f32")
  g:free()
  h.eq(tostring(spec), "cujit.kernel (freed)", "a specialisation goes with its generic kernel")
  h.raises("freed", spec.ptx, spec)
end)

h.run()
