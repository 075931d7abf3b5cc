-- test_lua_strings.lua -- Lua strings reach the engine whole or not at all: C reads text up to its
-- first NUL byte, so a Lua string holding one would be cut there without a word (a body compiled
-- up to it, a signature with junk after it accepted, the second kernel of a source never seen).
-- Every string that reaches the engine is refused instead, naming the argument. Compiles for
-- sm_90 (NVRTC, no GPU needed).
local h = require "helper"
local cuda = require "cujit"
h.need_nvrtc(cuda)

local SM90 = {arch = "sm_90"}
local NUL = "holds a NUL byte"

-- Every refusal names the argument and where the NUL is.
local function refused(what, fn, ...)
  return h.raises({what, NUL}, fn, ...)
end

h.test("cuda.jit: the body, the signature", function()
  local err = refused("the body", cuda.jit, "k(int *p)", "*p = 1;\0 *p = 2;", SM90)
  h.contains(err, "bad argument #2 to 'cujit.jit'", "the argument's position")
  h.contains(err, "at byte 8 of 16", "where the NUL is")
  refused("the signature", cuda.jit, "k(int n)\0junk", "return;", SM90)
  -- Without the NUL both compile: the refusal is about the byte, not the text.
  cuda.jit("k(int *p)", "*p = 1; *p = 2;", SM90)
  cuda.jit("k(int n)", "return;", SM90)
end)

h.test("cuda.source and cuda.load", function()
  local two = 'extern "C" __global__ void a(int *p) { *p = 1; }\0' ..
              'extern "C" __global__ void b(int *p) { *p = 2; }'
  refused("the source", cuda.source, two, SM90)
  refused("the path", cuda.load, "kernels.cu\0.txt", SM90)
  local m = cuda.source((two:gsub("%z", "\n")), SM90)
  h.same(m:kernels(), {"a", "b"}, nil, "both kernels without the NUL")
  refused("the kernel name", m.kernel, m, "a\0b")
end)

h.test("a file read for cuda.load with a preamble", function()
  local path = h.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write('extern "C" __global__ void a(int *p) { *p = 1; }\0junk')
  f:close()
  local err = h.raises("holds NUL bytes: it is not a CUDA source file", cuda.load, path,
                       {arch = "sm_90", preamble = "#define ONE 1"})
  h.contains(err, path, "names the file")
  os.remove(path)
end)

h.test("compile options", function()
  local body = "*p = 1;"
  local function jit(opts) return cuda.jit("k(int *p)", body, opts) end
  refused("option 'arch'", jit, {arch = "sm_90\0x"})
  refused("option 'std'", jit, {arch = "sm_90", std = "c++17\0x"})
  refused("option 'preamble'", jit, {arch = "sm_90", preamble = "#define A 1\0#define B 2"})
  refused("option 'include_dirs'[1]", jit, {arch = "sm_90", include_dirs = {"/tmp\0/x"}})
  refused("option 'flags'[2]", jit, {arch = "sm_90", flags = {"-DA=1", "-DB=2\0x"}})
  refused("option 'defines'[2]", jit, {arch = "sm_90", defines = {"A", "B\0C"}})
  refused("a name in option 'defines'", jit, {arch = "sm_90", defines = {["A\0B"] = 1}})
  refused("a value in option 'defines'", jit, {arch = "sm_90", defines = {A = "1\0 2"}})
  refused("an option name", jit, {["arch\0"] = "sm_90"})
  refused("option 'name'", cuda.source, 'extern "C" __global__ void a() {}',
          {arch = "sm_90", name = "a.cu\0b"})
  refused("option 'signatures'[1]", cuda.source, 'extern "C" __global__ void a() {}',
          {arch = "sm_90", signatures = {"a()\0junk"}})
end)

h.test("device functions", function()
  refused("the code", cuda.device_function, "__device__ int one() { return 1; }\0junk")
  refused("option 'name'", cuda.device_function, "__device__ int one() { return 1; }",
          {name = "one\0x"})
end)

h.test("elementwise kernels", function()
  refused("the parameter list", cuda.elementwise, "float x\0 -> float y", "y = x", SM90)
  refused("the expression", cuda.elementwise, "float x -> float y", "y = x;\0 y = 2", SM90)
  refused("the kernel name", cuda.elementwise, "float x -> float y", "y = x", "copy\0x", SM90)
end)

h.test("dtypes and image paths", function()
  refused("the dtype", cuda.host_array, 4, "f32\0x")
  refused("the dtype", cuda.array, {1, 2}, "i32\0")
  refused("the path", cuda.image.read, "a.png\0.txt")
  refused("the path", cuda.image.write, "a.png\0.txt", cuda.host_array({1, 1}, "u8"))
end)

h.run()
