-- test_lua_dlpack.lua -- memory of other libraries and DLPack from Lua (issue 24): cuda.wrap over
-- an address (here another array's, as a library would hand one over) with its owner kept alive
-- by the array, a:to_dlpack and cuda.from_dlpack sharing the memory with the array's shape (a
-- reshape's too) and outliving the exporting array's free, cuda.dlpack_delete, and each refusal
-- with its message, also an export given where a bool goes (named by its type). On a GPU or,
-- without one, on the CPU device (where addresses are host memory).
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local scale = cuda.jit("scale(float *y, float by, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= by;
]])

local function iota(n)
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

h.test("cuda.wrap: an array over another's memory, used by kernels, its owner kept", function()
  local n = 64
  local a = cuda.to_device(iota(n), "f32")
  local addr = a:devptr()
  local owner_seen = setmetatable({a}, {__mode = "v"}) -- weak: only the wrap keeps it
  local w = cuda.wrap(addr, n, "f32", {owner = a})
  a = nil
  collectgarbage()
  collectgarbage()
  h.check(owner_seen[1] ~= nil, "the owner was collected while the wrapped array lives")
  h.eq(w:devptr(), addr, "the wrapped array is the memory given")
  h.eq(w.size, n, "size")
  h.eq(w.dtype, "f32", "dtype")
  scale[{1, 64}](w, 2, n)
  local got = owner_seen[1]:copy_to_host()
  h.eq(got[n], 2 * n, "a kernel through the wrap wrote the owner's memory")
  h.eq(w:sum(), n * (n + 1), "a reduction reads it")
  local m = cuda.wrap(addr, {4, 16}, "f32",
                      {owner = owner_seen[1], device = cuda.device().ordinal})
  h.eq(#m.shape, 2, "a shape table")
  h.eq(m.shape[1], 4, "rows")
  w:free()
  m:free()
  w, m = nil, nil
  collectgarbage()
  collectgarbage()
  h.check(owner_seen[1] == nil, "the owner stays alive after the arrays are gone")
end)

h.test("cuda.wrap refuses a bad address, size or dtype, saying so", function()
  local a = cuda.zeros(16, "f64")
  h.raises({"cujit_buffer_wrap: the address is 0"}, cuda.wrap, 0, 4, "f32")
  h.raises({"the address must be an integer address or a light userdata, not string"}, cuda.wrap,
           "0x10", 4, "f32")
  h.raises({"not aligned to f64 elements (8 bytes)"}, cuda.wrap, a:devptr() + 4, 2, "f64")
  h.raises({"f128"}, cuda.wrap, a:devptr(), 2, "f128")
  h.raises({"table expected"}, cuda.wrap, a:devptr(), 2, "f64", 5)
end)

h.test("a:to_dlpack and cuda.from_dlpack share the memory, with the shape", function()
  local a = cuda.to_device(iota(24), "f32"):reshape(2, 3, 4)
  local t = a:to_dlpack()
  h.eq(type(t), "userdata", "a light userdata")
  local b = cuda.from_dlpack(t)
  h.eq(b:devptr(), a:devptr(), "same address: no copy")
  h.eq(b.dtype, "f32", "dtype")
  h.eq(b.ndim, 3, "ndim")
  h.eq(b.shape[1] * 100 + b.shape[2] * 10 + b.shape[3], 234, "shape 2x3x4")
  scale[{1, 32}](b, -1, 24)
  h.eq(a:copy_to_host()[24], -24, "the exporter sees the importer's writes")
  a = nil
  collectgarbage() -- the exporting array (and its base) go; the tensor holds the memory
  collectgarbage()
  h.eq(b:copy_to_host()[7], -7, "still readable through the import")
  b:free() -- the export's deleter runs; the memory goes now
  -- An integer address works as well as the light userdata; a 1-D export is 1-D.
  local c = cuda.full(5, 3, "i32")
  local p = c:to_dlpack()
  local d = cuda.from_dlpack(math.tointeger(tonumber(string.format("%p", p))))
  h.eq(d.ndim, 1, "1-D")
  h.eq(d.size, 5, "size")
  h.eq(d:sum(), 15, "values")
  -- bf16 crosses as DLPack's bfloat (code 4, 16 bits) and comes back as bf16
  local e = cuda.to_device({{1.5, -2}, {1 + 2 ^ -8, 2 ^ 100}}, "bf16")
  local f = cuda.from_dlpack(e:to_dlpack())
  h.eq(f.dtype, "bf16", "bf16 back")
  h.eq(f.ndim, 2, "2-D")
  h.eq(f.nbytes, 8, "two bytes an element")
  local rows = f:totable()
  h.same(rows[2], {1.0, 2 ^ 100}, nil, "the same elements, rounded when stored")
end)

h.test("cuda.dlpack_delete gives back an export nobody took; refusals name the problem", function()
  local a = cuda.zeros(8, "u8")
  cuda.dlpack_delete(a:to_dlpack())
  a:free()
  h.raises({"device array has been freed"}, a.to_dlpack, a)
  h.raises({"the DLPack tensor must be an integer address or a light userdata, not nil"},
           cuda.from_dlpack, nil)
  h.raises({"the DLPack tensor is NULL"}, cuda.from_dlpack, 0)
  h.raises({"the DLPack tensor is NULL"}, cuda.dlpack_delete, 0)
end)

h.test("an export given to a kernel for a bool is named by its type, without its address", function()
  local flag = cuda.jit("flag(bool b, int *out)", "out[0] = b ? 7 : 3;")
  local out = cuda.zeros(1, "i32")
  local t = out:to_dlpack()
  -- ")" right after the type: no "userdata: 0x..." (luaL_tolstring's form for a number).
  h.raises("bad argument #1 'b' to 'flag' (true or false expected (or 0 or 1), got userdata)",
           flag[{1, 1}], t, out)
  cuda.dlpack_delete(t)
end)

h.run()
