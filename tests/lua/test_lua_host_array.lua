-- test_lua_host_array.lua -- typed host arrays (no GPU needed): creation, 1-based indexing with
-- dtype conversion and range checks (indices outside 1..#a too), f16 and bf16 rounding, shapes,
-- iteration, tostring, copies.
local h = require "helper"
local cuda = require "cujit"

h.test("host_array is zeroed, typed and sized", function()
  local a = cuda.host_array(5, "i32")
  h.eq(#a, 5, "#a")
  h.eq(a.size, 5, "size")
  h.eq(a.dtype, "i32", "dtype")
  h.eq(a.ndim, 1, "ndim")
  h.eq(a.nbytes, 20, "nbytes")
  h.eq(a.pinned, false, "pinned")
  for i = 1, 5 do h.eq(a[i], 0, "a[" .. i .. "]") end
  h.eq(cuda.host_array(3).dtype, "f32", "default dtype")
end)

h.test("indices outside 1..#a: nil to read, an error naming them to write", function()
  local a = cuda.host_array(3, "i32")
  a[1], a[3] = 5, 7 -- the first and the last are in
  h.eq(a[1], 5, "a[1]")
  h.eq(a[3], 7, "a[3]")
  h.eq(a[0], nil, "a[0] reads as nil, as a table's")
  h.eq(a[4], nil, "a[4] reads as nil")
  h.raises({"index 0 out of range for a host array of 3 elements (1 to 3)"},
           function() a[0] = 1 end)
  h.raises({"index 4 out of range for a host array of 3 elements (1 to 3)"},
           function() a[4] = 1 end)
  h.raises({"index 2.5 out of range for a host array of 3 elements"}, function() a[2.5] = 1 end)
  h.raises({"cannot set field 'size' of a host array"}, function() a.size = 1 end)
  h.eq(a[2], 0, "nothing written by the refused stores")
  h.raises({"cujit.host_array expected, got number"}, cuda.to_device_async, 5)
  h.raises({"cujit.host_array expected, got table"}, a.copy_from, {}, a)
end)

h.test("elements round-trip with their dtype", function()
  local cases = {
    {"i8", -128, 127}, {"i16", -32768, 32767}, {"i32", -2147483648, 2147483647},
    {"i64", math.mininteger, math.maxinteger}, {"u8", 0, 255}, {"u16", 0, 65535},
    {"u32", 0, 4294967295}, {"u64", 0, math.maxinteger},
  }
  for _, c in ipairs(cases) do
    local a = cuda.host_array(2, c[1])
    a[1], a[2] = c[2], c[3]
    h.eq(a[1], c[2], c[1] .. " min")
    h.eq(a[2], c[3], c[1] .. " max")
    h.eq(math.type(a[1]), "integer", c[1] .. " elements are integers")
  end
  local f = cuda.host_array(3, "f64")
  local xs = h.random_floats(3, -1e6, 1e6)
  for i = 1, 3 do f[i] = xs[i] end
  h.same({f[1], f[2], f[3]}, xs, nil, "f64 exact")
  local g = cuda.host_array(3, "f32")
  for i = 1, 3 do g[i] = xs[i] end
  h.same({g[1], g[2], g[3]}, {h.f32(xs[1]), h.f32(xs[2]), h.f32(xs[3])}, nil, "f32 rounding")
end)

h.test("integers accept exact floats and refuse others", function()
  local a = cuda.host_array(2, "i32")
  a[1] = 3.0
  h.eq(a[1], 3, "3.0 stored as 3")
  h.eq(math.type(a[1]), "integer", "stored as integer")
  h.raises("no integer representation", function() a[1] = 3.5 end)
  h.raises("no integer representation", function() a[1] = 0 / 0 end)
  h.raises("no integer representation", function() a[1] = math.huge end)
  h.raises({"value 2147483648 out of range for i32", "-2147483648 to 2147483647"},
           function() a[1] = 2147483648 end)
  h.raises("out of range for u8", function() local b = cuda.host_array(1, "u8"); b[1] = -1 end)
  h.raises("out of range for u8", function() local b = cuda.host_array(1, "u8"); b[1] = 256 end)
  h.raises("out of range for i8", function() local b = cuda.host_array(1, "i8"); b[1] = 128.0 end)
  h.raises("out of range for u64", function() local b = cuda.host_array(1, "u64"); b[1] = -1 end)
  h.raises("number expected, got string", function() a[1] = "7" end)
  h.raises("number expected, got boolean", function() a[1] = true end)
  h.raises("number expected, got nil", function() a[2] = nil end)
  h.eq(a[1], 3, "failed stores leave the element alone")
end)

h.test("u64 above maxinteger wraps as Lua's unsigned convention", function()
  local a = cuda.host_array(1, "u64")
  a[1] = 2.0 ^ 63
  h.eq(a[1], math.mininteger, "2^63 reads back as math.mininteger")
  h.check(math.ult(math.maxinteger, a[1]), "unsigned order kept")
end)

h.test("floats: overflow is an error, inf and nan pass", function()
  local a = cuda.host_array(3, "f32")
  h.raises("out of range for f32", function() a[1] = 1e39 end)
  local FLT_MAX = (2 - 2 ^ -23) * 2 ^ 127
  a[1] = FLT_MAX
  h.eq(a[1], FLT_MAX, "the largest float")
  a[1] = -FLT_MAX
  h.eq(a[1], -FLT_MAX, "the largest float, negative")
  a[1] = FLT_MAX + 2 ^ 102
  h.eq(a[1], FLT_MAX, "under half an ulp past FLT_MAX rounds to it")
  h.raises("out of range for f32", function() a[1] = FLT_MAX + 2 ^ 103 end)
  h.raises("out of range for f32", function() a[1] = -(FLT_MAX + 2 ^ 103) end)
  a[1], a[2], a[3] = math.huge, -math.huge, 0 / 0
  h.eq(a[1], math.huge, "inf")
  h.eq(a[2], -math.huge, "-inf")
  h.check(a[3] ~= a[3], "nan")
  local d = cuda.host_array(1, "f64")
  d[1] = 1e300
  h.eq(d[1], 1e300, "f64 keeps large values")
end)

-- Stores random values of exponent lo..hi through stored(x) and checks each came back as a nearest
-- value of a float type of `bits` mantissa bits whose smallest normal exponent is `emin`.
local function check_nearest(stored, name, lo, hi, emin, bits)
  for _ = 1, 200 do
    local x = (math.random() * 2 - 1) * 2 ^ math.random(lo, hi)
    local e = math.floor(math.log(math.abs(x), 2))
    local ulp = 2 ^ (math.max(e, emin) - bits)
    local got = stored(x)
    h.check(math.abs(got - x) <= ulp / 2, string.format("%s(%.17g) = %.17g is not the nearest", name, x, got))
  end
end

h.test("f16 rounds to nearest even", function()
  local a = cuda.host_array(1, "f16")
  local function stored(x) a[1] = x; return a[1] end
  h.eq(stored(1.0), 1.0, "1")
  h.eq(stored(0.1), 0.0999755859375, "0.1")
  h.eq(stored(65504), 65504, "largest half")
  h.eq(stored(65519), 65504, "just below the overflow point")
  h.eq(stored(65510), 65504, "65510 rounds to the largest half (as a __half argument does)")
  h.eq(stored(-65519.99), -65504, "negative, just below the overflow point")
  h.raises("out of range for f16", stored, 65520)
  h.raises("out of range for f16", stored, -65520)
  h.eq(stored(1 + 2 ^ -11), 1.0, "tie rounds to even (down)")
  h.eq(stored(1 + 3 * 2 ^ -11), 1 + 2 ^ -9, "tie rounds to even (up)")
  h.eq(stored(2 ^ -24), 2 ^ -24, "smallest subnormal")
  h.eq(stored(2 ^ -25), 0.0, "half the smallest subnormal ties to zero")
  h.eq(stored(3 * 2 ^ -26), 2 ^ -24, "above the tie rounds up")
  h.eq(stored(2 ^ -14 - 2 ^ -25), 2 ^ -14, "rounds up into the normals")
  h.eq(stored(-2.5), -2.5, "negative")
  h.eq(stored(math.huge), math.huge, "inf")
  local nan = stored(0 / 0)
  h.check(nan ~= nan, "nan")
  check_nearest(stored, "f16", -20, 15, -14, 10) -- against a reference rounding on random values
end)

h.test("bf16 rounds to nearest even", function()
  local a = cuda.host_array(1, "bf16")
  local function stored(x) a[1] = x; return a[1] end
  local BF16_MAX = 2 ^ 128 - 2 ^ 120
  h.eq(a.dtype, "bf16", "dtype")
  h.eq(a.nbytes, 2, "two bytes an element")
  h.eq(stored(1.0), 1.0, "1")
  h.eq(stored(0.1), 0.10009765625, "0.1")
  h.eq(stored(1 + 2 ^ -8), 1.0, "tie rounds to even (down)")
  h.eq(stored(1 + 3 * 2 ^ -8), 1 + 2 ^ -6, "tie rounds to even (up)")
  h.eq(stored(1 + 2 ^ -8 + 2 ^ -30), 1 + 2 ^ -7, "just past a tie rounds up")
  h.eq(stored(65504), 65536, "half's largest rounds up in bf16")
  h.eq(stored(65520), 65536, "and half's overflow point is no limit here")
  h.eq(stored(BF16_MAX), BF16_MAX, "largest bf16, 3.3895e38")
  h.eq(stored(-BF16_MAX), -BF16_MAX, "its negative")
  h.eq(stored(BF16_MAX + 2 ^ 118), BF16_MAX, "under half an ulp past the largest rounds to it")
  h.raises("out of range for bf16", stored, BF16_MAX + 2 ^ 119)
  h.raises("out of range for bf16", stored, -(BF16_MAX + 2 ^ 119))
  h.raises({"value 1e+39 out of range for bf16 (it would become infinity)"}, stored, 1e39)
  h.eq(stored(2 ^ -126), 2 ^ -126, "smallest normal")
  h.eq(stored(2 ^ -133), 2 ^ -133, "smallest subnormal")
  h.eq(stored(2 ^ -134), 0.0, "half the smallest subnormal ties to zero")
  h.eq(stored(3 * 2 ^ -134), 2 ^ -132, "a subnormal tie from odd rounds up")
  h.eq(stored(2 ^ -126 - 2 ^ -134), 2 ^ -126, "rounds up into the normals")
  h.eq(1 / stored(-0.0), -math.huge, "-0 keeps its sign")
  h.eq(stored(math.huge), math.huge, "inf")
  h.eq(stored(-math.huge), -math.huge, "-inf")
  local nan = stored(0 / 0)
  h.check(nan ~= nan, "nan")
  -- the bits, through a u16 view of the same bytes
  local b = cuda.array({1 + 2 ^ -8, -2, BF16_MAX, 2 ^ -133, math.huge}, "bf16")
  local bits = {}
  for i = 1, #b do bits[i] = string.unpack("<I2", string.pack("<f", b[i]), 3) end
  h.same(bits, {0x3f80, 0xc000, 0x7f7f, 0x0001, 0x7f80}, nil, "bf16 is float's upper half")
  check_nearest(stored, "bf16", -130, 120, -126, 7)
  -- to and from tables, nested
  local m = cuda.array({{1.5, -3}, {2 ^ 100, 1 / 3}}, "bf16")
  local rows = m:totable()
  h.same(rows[1], {1.5, -3}, nil, "totable, row 1")
  h.same(rows[2], {2 ^ 100, 0.333984375}, nil, "totable, row 2 rounded")
end)

h.test("reads outside 1..#a are nil, writes are errors", function()
  local a = cuda.array({10, 20, 30}, "i16")
  h.eq(a[0], nil, "a[0]")
  h.eq(a[4], nil, "a[4]")
  h.eq(a[-1], nil, "a[-1]")
  h.eq(a[2.0], 20, "a[2.0]")
  h.eq(a[1.5], nil, "a[1.5]")
  h.eq(a.nosuchfield, nil, "unknown field")
  h.raises({"index 4 out of range", "1 to 3"}, function() a[4] = 1 end)
  h.raises("index 0 out of range", function() a[0] = 1 end)
  h.raises("cannot set field 'x'", function() a.x = 1 end)
end)

h.test("iteration: ipairs, pairs and numeric for", function()
  local src = h.random_ints(7, -1000, 1000)
  local a = cuda.array(src, "i32")
  local seen = {}
  for i, v in ipairs(a) do seen[i] = v end
  h.same(seen, src, nil, "ipairs")
  seen = {}
  for i, v in pairs(a) do seen[i] = v end
  h.same(seen, src, nil, "pairs")
  local sum, want = 0, 0
  for i = 1, #a do sum = sum + a[i]; want = want + src[i] end
  h.eq(sum, want, "sum")
  h.same(a:totable(), src, nil, "totable")
  local next_of, state = pairs(a)
  h.eq(next_of(state, -1), nil, "the iterator gives nothing before the first element")
  h.eq(next_of(state, #a), nil, "nor past the last")
  h.eq(select(2, next_of(state, 0)), src[1], "from 0, the first")
end)

h.test("a view of a view keeps the memory alive", function()
  local a = cuda.array({1, 2, 3, 4, 5, 6}, "f64")
  local v = a:reshape(2, 3):reshape(3, 2)
  a = nil
  collectgarbage()
  collectgarbage()
  local others = {}
  for i = 1, 50 do others[i] = cuda.array({-1, -1, -1, -1, -1, -1}, "f64") end
  h.same(v.shape, {3, 2}, nil, "the shape")
  h.eq(v:get(3, 2), 6, "the last element")
  h.eq(v:get(1, 1), 1, "the first element")
  h.eq(#others, 50)
end)

h.test("2-D and 3-D arrays from nested tables", function()
  local a = cuda.array({{1, 2, 3}, {4, 5, 6}}, "f64")
  h.eq(a.ndim, 2, "ndim")
  h.same(a.shape, {2, 3}, nil, "shape")
  h.eq(#a, 6, "#a counts every element")
  h.eq(a[4], 4, "row-major flat index")
  h.eq(a:get(2, 1), 4, "get(2,1)")
  h.eq(a:get(1, 3), 3, "get(1,3)")
  a:set(2, 3, 60)
  h.eq(a[6], 60, "set(2,3)")
  h.raises("index 3 out of range for dimension 1", a.get, a, 3, 1)
  h.raises("2 indices expected", a.get, a, 1)
  local t = a:totable()
  h.same(t[1], {1, 2, 3}, nil, "totable row 1")
  h.same(t[2], {4, 5, 60}, nil, "totable row 2")
  local c = cuda.array({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}, "u8")
  h.same(c.shape, {2, 2, 2}, nil, "3-D shape")
  h.eq(c:get(2, 1, 2), 6, "3-D get")
end)

h.test("bad tables are refused naming the element", function()
  h.raises("empty table", cuda.array, {}, "f32")
  h.raises({"element [3]", "number expected, got string"}, cuda.array, {1, 2, "x"}, "f32")
  h.raises({"element [2]", "number expected, got nil"}, cuda.array, {1, nil, 3}, "f32")
  h.raises({"element [2]", "ragged"}, cuda.array, {{1, 2}, {3}}, "f32")
  h.raises({"element [2]", "row of 3 elements where 2 were expected (ragged rows)"}, cuda.array,
           {{1, 2}, {3, 4, 5}}, "f32") -- the mirror: a longer row
  h.raises({"element [2][2]", "row of 2 elements where 1 were expected"}, cuda.array, {{{1}, {2}}, {{3}, {4, 5}}}, "f32")
  h.raises({"element [2][1]", "ragged"}, cuda.array, {{{1}, {2}}, {{3, 4}, {5}}}, "f32")
  h.raises({"element [3]", "ragged"}, cuda.array, {{1}, {2}, {3, 4}}, "f32")
  h.raises({"element [2]", "row (a table) expected"}, cuda.array, {{1, 2}, 3}, "f32")
  h.raises({"element [1][1]", "number expected, got string"}, cuda.array, {{"a", 1}}, "f32")
  h.raises({"element [1][1][1]", "number expected, got boolean"}, cuda.array, {{{true}}}, "f32")
  h.raises({"element [1][2]", "out of range for u8"}, cuda.array, {{1, 300}}, "u8")
  h.raises("nest at most 3", cuda.array, {{{{1}}}}, "f32")
  h.raises("dtype expected", cuda.array, {1, 2})
  h.raises("unknown option 'pinnned'", cuda.array, {1}, "f32", {pinnned = true})
end)

h.test("tostring, reshape, fill, copy_from, free", function()
  local a = cuda.array({1.5, 2, 3}, "f32")
  h.eq(tostring(a), "cujit.host_array f32[3] {1.5, 2.0, 3.0}", "tostring")
  local big = cuda.host_array({4, 5}, "i32")
  h.eq(tostring(big), "cujit.host_array i32[4,5] {0, 0, 0, 0, 0, 0, 0, 0, ...}", "long tostring")
  local v = big:reshape(2, 10)
  h.same(v.shape, {2, 10}, nil, "reshape shape")
  v[11] = 42
  h.eq(big[11], 42, "a view shares memory")
  h.eq(big:reshape{20}:reshape(5, 4)[11], 42, "view of a view")
  h.raises("cannot reshape 20 elements", big.reshape, big, 3, 7)
  big:fill(-7)
  h.eq(v[20], -7, "fill")
  local b = cuda.host_array(3, "f64"):copy_from(a)
  h.same(b:totable(), {1.5, 2, 3}, nil, "copy_from converts dtypes")
  b:copy_from({7, 8, 9})
  h.same(b:totable(), {7, 8, 9}, nil, "copy_from a table")
  local cube = cuda.host_array({2, 2, 2}, "i32"):copy_from({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
  for i = 1, 8 do h.eq(cube[i], i, "copy_from a 3-D table, element " .. i) end
  h.raises("table has 2 elements", b.copy_from, b, {1, 2})
  h.raises("out of range for u8", cuda.host_array(3, "u8").copy_from, cuda.host_array(3, "u8"),
           cuda.array({1, -2, 3}, "i32"))
  b:free()
  h.eq(tostring(b), "cujit.host_array f64[3] (freed)", "tostring after free")
  h.raises("freed", function() return b:totable() end)
  b:free() -- twice is fine
  do
    local c <close> = cuda.host_array(2)
    c[1] = 1
  end
end)

h.test("pinned host arrays need the driver", function()
  if h.has_gpu(cuda) then
    local p = cuda.host_array(8, "f32", {pinned = true})
    h.eq(p.pinned, true, "pinned")
    p[8] = 3
    h.eq(p[8], 3, "pinned element")
    h.contains(tostring(p), "pinned", "tostring")
    p:free()
  else
    h.raises({}, cuda.host_array, 8, "f32", {pinned = true})
  end
  local q = cuda.host_array(8, "f32", {pinned = false})
  h.eq(q.pinned, false, "pinned = false is a plain host array")
  h.eq(#q, 8)
  h.raises("unknown option 'pinnned' (known: pinned, mapped)", cuda.host_array, 8, "f32",
           {pinned = false, pinnned = true})
end)

h.run()
