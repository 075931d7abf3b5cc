-- stub_tma.lua -- a:tensor_map from Lua against the stand-in driver (tests/CMakeLists.txt runs it as
-- lua.stub_tma with the stand-in first on LD_LIBRARY_PATH, and nowhere else; its name is not
-- test_*.lua so that the GPU run does not take it for a GPU test): what reaches
-- cuTensorMapEncodeTiled, read back from the map's 128 bytes (m:bytes()), in which the stand-in
-- writes what it was given: the magic "cjstubtm", the data type, the rank, the address, the
-- dimensions, the byte strides of dimensions 1 and on, the box and the element strides (12 bits a
-- dimension) and swizzle | interleave << 8 | L2 promotion << 16 | out-of-bounds fill << 24. A
-- GPU's map is opaque: only this shows the contiguous dimension going first, the strides in
-- bytes and each option as asked. Also the map's text, its array, and a kernel taking it.
local h = require "helper"
local cuda = require "cujit"

h.need_nvrtc(cuda)
h.need_stand_in(cuda, "stub_tma.lua")

-- The stand-in's record in a map's bytes.
local function record(m)
  local b = m:bytes()
  h.eq(#b, 128, "a CUtensorMap's bytes")
  local magic, pos = string.unpack("c8", b)
  local w = {}
  for i = 1, 15 do w[i], pos = string.unpack("<i8", b, pos) end
  return {magic = magic, type = w[1], rank = w[2], address = w[3], dims = {w[4], w[5], w[6], w[7], w[8]},
          strides = {w[9], w[10], w[11], w[12]}, box = w[13], element_strides = w[14],
          swizzle = w[15] & 255, interleave = (w[15] >> 8) & 255, l2 = (w[15] >> 16) & 255,
          oob = (w[15] >> 24) & 255}
end

h.test("a 2-D f32 map: the contiguous dimension first, strides in bytes, each option as asked", function()
  local a = cuda.device_array({300, 200}, "f32")
  local m = a:tensor_map{box = {16, 32}, swizzle = "128B", oob = "nan"}
  local r = record(m)
  h.eq(r.magic, "cjstubtm", "the stand-in's map")
  h.eq(r.type, 7, "CU_TENSOR_MAP_DATA_TYPE_FLOAT32")
  h.eq(r.rank, 2, "rank")
  h.eq(r.address, a:devptr(), "the array's address")
  h.eq(r.dims[1], 200, "dimension 0: the row, contiguous")
  h.eq(r.dims[2], 300, "dimension 1: the rows")
  h.eq(r.strides[1], 200 * 4, "the rows' stride in bytes")
  h.eq(r.box, 32 | (16 << 12), "the box, contiguous first")
  h.eq(r.element_strides, 1 | (1 << 12), "element strides of 1")
  h.eq(r.swizzle, 3, "CU_TENSOR_MAP_SWIZZLE_128B")
  h.eq(r.interleave, 0, "no interleave")
  h.eq(r.l2, 2, "CU_TENSOR_MAP_L2_PROMOTION_L2_128B")
  h.eq(r.oob, 1, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA")
  h.eq(tostring(m), "cujit.tensor_map (f32[300,200], box 16x32, swizzle 128B)", "its text")
  h.check(rawequal(m:array(), a), "the map's array is the array it was made from")
  local plain = record(a:tensor_map{box = {8, 8}})
  h.eq(plain.swizzle, 0, "swizzle none by default")
  h.eq(plain.oob, 0, "zero fill by default")
  h.eq(record(a:tensor_map{box = {8, 8}, swizzle = "32B"}).swizzle, 1, "CU_TENSOR_MAP_SWIZZLE_32B")
  h.eq(record(a:tensor_map{box = {8, 16}, swizzle = "64B"}).swizzle, 2, "CU_TENSOR_MAP_SWIZZLE_64B")
  h.eq(record(a:tensor_map{box = {8, 8}, oob = "zero"}).oob, 0, "oob = zero")
end)

h.test("3-D maps of other dtypes: every dimension reversed, each stride, each type", function()
  for _, case in ipairs({{"f16", 6, 2}, {"i32", 3, 4}, {"u8", 0, 1}, {"bf16", 9, 2}, {"f64", 8, 8},
                         {"i16", 1, 2}}) do
    local dtype, type, size = case[1], case[2], case[3]
    local a = cuda.device_array({4, 6, 64}, dtype)
    local r = record(a:tensor_map{box = {1, 2, 16}})
    h.eq(r.type, type, dtype .. ": the driver's data type")
    h.eq(r.rank, 3, dtype)
    h.same({r.dims[1], r.dims[2], r.dims[3]}, {64, 6, 4}, nil, dtype .. ": dimensions")
    h.same({r.strides[1], r.strides[2]}, {64 * size, 6 * 64 * size}, nil, dtype .. ": strides")
    h.eq(r.box, 16 | (2 << 12) | (1 << 24), dtype .. ": box")
    h.eq(r.swizzle, 0, dtype .. ": CU_TENSOR_MAP_SWIZZLE_NONE")
  end
end)

h.test("a kernel takes the map as a CUtensorMap and refuses it for another parameter", function()
  local p = cuda.source([[
#include <cujit/tma.h>
extern "C" __global__ void takes_map(const __grid_constant__ CUtensorMap m, int *out) { out[0] = 1; }
extern "C" __global__ void takes_int2(int2 v, int *out) { out[0] = v.x; }
]])
  local m = cuda.device_array({64, 64}, "f32"):tensor_map{box = {8, 8}}
  local out = cuda.device_array(1, "i32")
  p:kernel("takes_map")[{1, 1}](m, out) -- the stand-in runs nothing; the launch is accepted
  h.raises({"a string of its 8 bytes expected", "a CUtensorMap takes a:tensor_map",
            "got a tensor map (128 bytes)"},
           function() p:kernel("takes_int2")[{1, 1}](m, out) end)
  h.raises({"CUtensorMap"}, function() p:kernel("takes_map")[{1, 1}](out, out) end)
  -- a graph's node takes a map through g:set_args by the same rule
  local g = cuda.graph(function(s) p:kernel("takes_map")[{1, 1, stream = s}](m, out) end)
  g:set_args(1, m, out)
  h.raises({"bad argument #3", "'m': a string of its 128 bytes expected", "got a string of 4 bytes"},
           g.set_args, g, 1, "abcd", out)
  p:kernel("takes_int2")[{1, 1}](string.pack("<i4i4", 1, 2), out) -- loaded before the capture
  local g2 = cuda.graph(function(s) p:kernel("takes_int2")[{1, 1, stream = s}](string.pack("<i4i4", 1, 2), out) end)
  h.raises({"bad argument #3", "'v': a string of its 8 bytes expected", "got a tensor map (128 bytes)"},
           g2.set_args, g2, 1, m, out)
end)

h.run()
