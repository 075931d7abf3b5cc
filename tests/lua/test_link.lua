-- test_link.lua -- Lua's `link = {...}` option (docs/cuda-code.md, "Linking device code"), on the
-- GPU (nvJitLink) or, without one, the CPU device: cuda.jit and cuda.source with an extern device
-- function defined in a linked .cu file, a generic kernel specialised later with it, an edited
-- file compiled again, and the refusals Lua shows.
local h = require "helper"
local cuda = require "cujit"
h.need_gpu(cuda)

local dir = h.scratch()
local function write(name, text)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end
local function lib(add)
  return string.format("__device__ float twice_plus(float x) { return 2.0f * x + %d.0f; }\n", add)
end
local decl = "extern __device__ float twice_plus(float x);"
local body = [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice_plus(y[i]);
]]

local function check_run(kernel, add, dtype)
  local n = 300
  local xs = h.random_floats(n, -4, 4)
  local y = cuda.to_device(xs, dtype or "f32")
  kernel[{(n + 127) // 128, 128}](y, n)
  local got = y:copy_to_host()
  for i = 1, n do
    local want = 2 * h.f32(xs[i]) + add
    h.near(got[i], want, 1e-4, string.format("y[%d]", i))
  end
end

h.test("cuda.jit links a .cu file and runs", function()
  local path = write("lib1.cu", lib(1))
  local k = cuda.jit("apply(float *y, int n)", body, {preamble = decl, link = {path}})
  check_run(k, 1)
end)

h.test("cuda.source links a .cu file and runs", function()
  local path = write("lib2.cu", lib(2))
  local m = cuda.source(decl .. '\nextern "C" __global__ void apply(float *y, int n) {\n' .. body ..
                        "}\n", {link = {path}, name = "apply.cu"})
  check_run(m.apply, 2)
end)

h.test("a generic kernel specialised later links the file too", function()
  local path = write("lib3.cu", lib(3))
  local k = cuda.jit("apply(T *y, int n)", [[
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (T)twice_plus((float)y[i]);
  ]], {preamble = decl, link = {path}})
  check_run(k, 3, "f32")
  check_run(k, 3, "f64")
end)

h.test("an edited file is compiled again", function()
  local path = write("lib4.cu", lib(4))
  local k = cuda.jit("apply(float *y, int n)", body, {preamble = decl, link = {path}})
  check_run(k, 4)
  write("lib4.cu", lib(9))
  local k2 = cuda.jit("apply(float *y, int n)", body, {preamble = decl, link = {path}})
  check_run(k2, 9)
  h.check(not tostring(k2):find("cache hit"), "an edited file was handed the old kernel: " ..
          tostring(k2))
end)

h.test("refusals name the file and why", function()
  h.raises({"link file 'nowhere.cu' cannot be read"}, cuda.jit, "apply(float *y, int n)", body,
           {preamble = decl, link = {"nowhere.cu"}})
  h.raises({"lib.o' is of no kind cujit links"}, cuda.jit, "apply(float *y, int n)", body,
           {preamble = decl, link = {write("lib.o", "x")}})
  h.raises({"the extra flag -dlto makes LTO-IR"}, cuda.jit, "apply(float *y, int n)", body,
           {preamble = decl, flags = {"-dlto"}, arch = "sm_90"})
  if cuda.device().arch == "cpu" then
    h.raises({"which the CPU device cannot link"}, cuda.jit, "apply(float *y, int n)", body,
             {preamble = decl, link = {write("lib.ptx", "// x\n")}})
  end
end)

h.run()
