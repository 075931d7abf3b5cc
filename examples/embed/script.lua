-- script.lua -- the Lua side of examples/embed: the host program (embed.c) shares its engine and
-- hands over `data`, a device array it allocated in C. This script defines a kernel, launches it
-- on that array, and returns the constants it used so the program can check the result.
local cuda = require "cujit" -- the program's module: same engine as the C side

local opts = data == nil and {arch = "sm_90"} or nil -- compile-only run: for the H200's arch
local affine = cuda.jit("affine(float *y, float scale, float shift, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale * y[i] + shift;
]], opts)
print(affine)

if data == nil then return end
print("Lua got " .. tostring(data) .. " from C")
local scale, shift = 3.0, 0.25
affine:forall(#data)(data, scale, shift, #data)
return scale, shift
