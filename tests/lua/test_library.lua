-- test_library.lua -- the Lua library API without a GPU: what the module offers, argument errors
-- of cuda.random, cuda.elementwise (compiled for sm_90) and elementwise calls, cuda.clock, and
-- PNG images: round trips, and files of every kind libpng may meet (palette, transparency, 16-bit,
-- low-bit grey, grey + alpha), made here by a small PNG encoder of our own, plus broken files.
local T = require "helper"
local cuda = require "cujit"

T.need_nvrtc(cuda)

local SM90 = {arch = "sm_90"}
local tmp = T.scratch()

-- A minimal PNG encoder: stored (uncompressed) deflate blocks, CRC-32 and Adler-32 by hand ----

local crc_table = {}
for n = 0, 255 do
  local c = n
  for _ = 1, 8 do c = (c & 1 == 1) and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  crc_table[n] = c
end

local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end

local function adler32(s)
  local a, b = 1, 0
  for i = 1, #s do
    a = (a + s:byte(i)) % 65521
    b = (b + a) % 65521
  end
  return (b << 16) | a
end

local function zlib_stored(data)
  local parts = {"\x78\x01"}
  local pos = 1
  repeat
    local block = data:sub(pos, pos + 65534)
    pos = pos + #block
    local final = pos > #data and 1 or 0
    parts[#parts + 1] = string.pack("<BI2I2", final, #block, (~#block) & 0xFFFF) .. block
  until pos > #data
  parts[#parts + 1] = string.pack(">I4", adler32(data))
  return table.concat(parts)
end

local function chunk(kind, data)
  return string.pack(">I4", #data) .. kind .. data .. string.pack(">I4", crc32(kind .. data))
end

-- rows: a list of byte strings (already packed at the bit depth), without filter bytes.
local function png_bytes(w, h, depth, color, rows, extra)
  local raw = {}
  for y = 1, h do raw[y] = "\0" .. rows[y] end
  return "\x89PNG\r\n\x1a\n" .. chunk("IHDR", string.pack(">I4I4BBBBB", w, h, depth, color, 0, 0, 0))
      .. (extra or "") .. chunk("IDAT", zlib_stored(table.concat(raw))) .. chunk("IEND", "")
end

local function write_file(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
  return path
end

local function pixels(img)
  local t = {}
  for i = 1, #img do t[i] = img[i] end
  return t
end

-- The module --------------------------------------------------------------------------------------

T.test("the library functions are there", function()
  T.eq(type(cuda.random.uniform), "function", "cuda.random.uniform")
  T.eq(type(cuda.random.normal), "function", "cuda.random.normal")
  T.eq(type(cuda.elementwise), "function", "cuda.elementwise")
  T.eq(type(cuda.image.read), "function", "cuda.image.read")
  T.eq(type(cuda.image.write), "function", "cuda.image.write")
  local index = debug.getregistry()["cujit.device_array"].__index
  local methods = type(index) == "table" and index or select(2, debug.getupvalue(index, 1))
  for _, m in ipairs({"sum", "min", "max", "dot"}) do
    T.eq(type(methods[m]), "function", "device array method " .. m)
  end
end)

T.test("cuda.clock is a monotonic wall clock", function()
  local t0 = cuda.clock()
  local c0 = os.clock()
  while os.clock() - c0 < 0.02 do end -- 20 ms of CPU time take at least 20 ms of wall time
  local t1 = cuda.clock()
  T.check(math.type(t0) == "float" and t1 - t0 >= 0.019, "elapsed " .. (t1 - t0))
end)

T.test("cuda.random argument errors", function()
  T.raises("device_array expected", cuda.random.uniform, 1, 2)
  T.raises("device_array expected", cuda.random.normal, cuda.host_array(4), 2)
  T.raises("device_array expected", cuda.random.uniform)
end)

-- Elementwise: definitions compile for sm_90; calls check their arguments ---------------------

T.test("cuda.elementwise compiles and describes itself", function()
  local axpy = cuda.elementwise("scalar float a, float x, float y -> float z", "z = a * x + y",
                                "axpy", SM90)
  T.eq(axpy:name(), "axpy", "name")
  T.contains(axpy:signature(), "axpy(float a, const float", "signature")
  T.contains(axpy:signature(), "long long n)", "signature")
  T.contains(tostring(axpy), "cujit.elementwise axpy(", "tostring")
  T.contains(axpy:source(), "a * x + y", "source")
  local dflt = cuda.elementwise("T x -> T y", "y = x + x", SM90) -- options as the 3rd argument
  T.eq(dflt:name(), "elementwise", "default name")
  local named = cuda.elementwise("double x -> double y", "y = X * x",
                                 {arch = "sm_90", name = "scale", defines = {"X=3"},
                                  fast_math = true})
  T.eq(named:name(), "scale", "name from the options")
  axpy:free()
  T.contains(tostring(axpy), "freed", "tostring after free")
  T.raises("freed", axpy.signature, axpy)
end)

T.test("cuda.elementwise definition errors", function()
  T.raises("'->'", cuda.elementwise, "float x, float y", "y = x", "f", SM90)
  T.raises("reserved", cuda.elementwise, "float i -> float y", "y = i", "f", SM90)
  T.raises("is not an element type", cuda.elementwise, "floot x -> float y", "y = x", "f", SM90)
  T.raises({"failed to compile", "f"}, cuda.elementwise, "float x -> float y", "y = x +", "f", SM90)
  T.raises("unknown option 'fastmath'", cuda.elementwise, "float x -> float y", "y = x", "f",
           {arch = "sm_90", fastmath = true})
  T.raises("option 'fast_math' must be a boolean", cuda.elementwise, "float x -> float y", "y = x",
           "f", {arch = "sm_90", fast_math = 1})
  T.raises("option 'defines' must hold strings", cuda.elementwise, "float x -> float y", "y = x",
           "f", {arch = "sm_90", defines = {{}}})
  T.raises("takes no preamble", cuda.elementwise, "float x -> float y", "y = x", "f",
           {arch = "sm_90", preamble = "#define K 2"})
  T.raises("kernel name (a string) or options table expected, got number", cuda.elementwise,
           "float x -> float y", "y = x", 42)
  T.raises("string expected", cuda.elementwise, "float x -> float y")
end)

T.test("elementwise call errors found before any GPU work", function()
  local axpy = cuda.elementwise("scalar float a, float x, float y -> float z", "z = a * x + y",
                                "axpy", SM90)
  T.raises({"takes 4 arguments, or 3 without the outputs", "got 1"}, axpy, 1)
  T.raises({"takes 4 arguments", "got 5"}, axpy, 1, 2, 3, 4, 5)
  T.raises({"#2 'x'", "device array expected", "got number"}, axpy, 2.0, 1, 2)
  T.raises({"#1 'a'", "number expected", "got string"}, axpy, "two", 1, 2)
  T.raises({"#2 'x'", "got table"}, axpy, 2.0, {1, 2}, 3)
  local iota = cuda.elementwise("-> long long z", "z = i", "iota", SM90)
  T.raises("no array among the arguments", iota)
end)

-- PNG images -------------------------------------------------------------------------------------

local function random_image(shape)
  local img = cuda.host_array(shape, "u8")
  for i = 1, #img do img[i] = math.random(0, 255) end
  return img
end

T.test("PNG round trips: grey, grey + alpha, RGB, RGBA, odd sizes", function()
  for _, shape in ipairs({{1, 1, 1}, {7, 5, 3}, {33, 17, 4}, {4, 9, 2}, {3, 2}, {64, 48, 3}}) do
    local img = random_image(shape)
    local path = tmp .. "/round.png"
    cuda.image.write(path, img)
    local back = cuda.image.read(path)
    local c = shape[3] or 1
    if c == 2 then
      -- grey + alpha comes back as RGBA: the grey in r, g and b
      T.eq(table.concat(back.shape, "x"), shape[1] .. "x" .. shape[2] .. "x4", "shape")
      for p = 0, shape[1] * shape[2] - 1 do
        for k = 1, 3 do T.eq(back[p * 4 + k], img[p * 2 + 1], "grey") end
        T.eq(back[p * 4 + 4], img[p * 2 + 2], "alpha")
      end
    else
      T.eq(table.concat(back.shape, "x"), shape[1] .. "x" .. shape[2] .. "x" .. c, "shape")
      T.eq(back.dtype, "u8", "dtype")
      T.same(pixels(back), pixels(img), nil, "pixels")
    end
  end
end)

T.test("PNG kinds libpng converts: palette, tRNS, 16-bit, low-bit grey, grey + alpha", function()
  -- palette of 3 colours, 2x2 pixels indices {0,1},{2,1}
  local plte = chunk("PLTE", "\255\0\0" .. "\0\255\0" .. "\0\0\255")
  local p = write_file(tmp .. "/palette.png", png_bytes(2, 2, 8, 3, {"\0\1", "\2\1"}, plte))
  local img = cuda.image.read(p)
  T.eq(table.concat(img.shape, "x"), "2x2x3", "palette shape")
  T.same(pixels(img), {255, 0, 0, 0, 255, 0, 0, 0, 255, 0, 255, 0}, nil, "palette pixels")
  -- the same with transparency for entry 1: RGBA
  p = write_file(tmp .. "/trns.png", png_bytes(2, 2, 8, 3, {"\0\1", "\2\1"},
                                               plte .. chunk("tRNS", "\255\128")))
  img = cuda.image.read(p)
  T.eq(table.concat(img.shape, "x"), "2x2x4", "palette + tRNS shape")
  T.same(pixels(img), {255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 255, 0, 255, 0, 128}, nil,
         "palette + tRNS pixels")
  -- 16-bit RGB: the high byte of each sample is kept
  local row = string.pack(">I2I2I2I2I2I2", 0x1234, 0xFFFF, 0x0001, 0x8000, 0x7FFF, 0xABCD)
  img = cuda.image.read(write_file(tmp .. "/rgb16.png", png_bytes(2, 1, 16, 2, {row})))
  T.eq(table.concat(img.shape, "x"), "1x2x3", "16-bit shape")
  T.same(pixels(img), {0x12, 0xFF, 0x00, 0x80, 0x7F, 0xAB}, nil, "16-bit pixels")
  -- 16-bit grey
  img = cuda.image.read(write_file(tmp .. "/grey16.png",
                                   png_bytes(3, 1, 16, 0, {string.pack(">I2I2I2", 0, 0x4321, 0xFF00)})))
  T.same(pixels(img), {0, 0x43, 0xFF}, nil, "16-bit grey")
  -- 1-bit and 4-bit grey expand to 0..255
  img = cuda.image.read(write_file(tmp .. "/grey1.png", png_bytes(8, 1, 1, 0, {"\xA5"})))
  T.eq(table.concat(img.shape, "x"), "1x8x1", "1-bit shape")
  T.same(pixels(img), {255, 0, 255, 0, 0, 255, 0, 255}, nil, "1-bit grey")
  img = cuda.image.read(write_file(tmp .. "/grey4.png", png_bytes(3, 1, 4, 0, {"\x0F\x80"})))
  T.same(pixels(img), {0, 255, 136}, nil, "4-bit grey")
  -- 8-bit grey + alpha becomes RGBA
  img = cuda.image.read(write_file(tmp .. "/ga.png", png_bytes(1, 2, 8, 4, {"\10\20", "\30\40"})))
  T.eq(table.concat(img.shape, "x"), "2x1x4", "grey + alpha shape")
  T.same(pixels(img), {10, 10, 10, 20, 30, 30, 30, 40}, nil, "grey + alpha pixels")
  -- the hand-made encoder agrees with libpng on a plain RGB file
  img = cuda.image.read(write_file(tmp .. "/rgb8.png", png_bytes(2, 1, 8, 2, {"\1\2\3\4\5\6"})))
  T.same(pixels(img), {1, 2, 3, 4, 5, 6}, nil, "8-bit RGB")
  -- an ancillary chunk whose CRC is wrong is libpng's warning, not an error: the pixels read
  local comment = chunk("tEXt", "Comment\0made by hand")
  local spoilt = comment:sub(1, -5) .. "\0\0\0\0"
  img = cuda.image.read(write_file(tmp .. "/comment-crc.png",
                                   png_bytes(2, 1, 8, 2, {"\1\2\3\4\5\6"}, spoilt)))
  T.same(pixels(img), {1, 2, 3, 4, 5, 6}, nil, "the pixels past a comment with a wrong CRC")
end)

T.test("PNG read errors: missing, not a PNG, truncated, corrupt", function()
  T.raises({"cannot open image", "nope.png", "No such file"}, cuda.image.read, tmp .. "/nope.png")
  local text = write_file(tmp .. "/text.png", "hello, this is not an image at all")
  T.raises({"is not a PNG file", "text.png"}, cuda.image.read, text)
  T.raises("is not a PNG file", cuda.image.read, write_file(tmp .. "/empty.png", ""))
  local good = png_bytes(4, 4, 8, 2, {string.rep("\7", 12), string.rep("\7", 12),
                                      string.rep("\7", 12), string.rep("\7", 12)})
  T.raises("truncated.png", cuda.image.read, write_file(tmp .. "/truncated.png", good:sub(1, 60)))
  local bad_crc = good:sub(1, 29) .. "\0\0\0\0" .. good:sub(34) -- IHDR's CRC zeroed
  T.raises("crc.png", cuda.image.read, write_file(tmp .. "/crc.png", bad_crc))
  T.raises("string expected", cuda.image.read, nil)
end)

T.test("PNG write errors: dtype, shape, channels, unwritable path", function()
  T.raises({"u8 array expected", "got f32"}, cuda.image.write, tmp .. "/x.png",
           cuda.host_array({2, 2}, "f32"))
  T.raises({"image shape", "1 dimension"}, cuda.image.write, tmp .. "/x.png",
           cuda.host_array(4, "u8"))
  T.raises("more than 4 channels", cuda.image.write, tmp .. "/x.png",
           cuda.host_array({2, 2, 5}, "u8"))
  T.raises({"cuda.image.write: cannot write", "No such file"}, cuda.image.write,
           tmp .. "/no/such/dir/x.png", cuda.host_array({2, 2}, "u8"))
  T.raises("u8 host or device array expected", cuda.image.write, tmp .. "/x.png", {1, 2, 3})
  local h = cuda.host_array({2, 2}, "u8")
  h:free()
  T.raises("freed", cuda.image.write, tmp .. "/x.png", h)
end)

T.test("the example image is a 256x256 RGB PNG", function()
  local dir = os.getenv("CUJIT_SOURCE_DIR") or (T.here() .. "../..")
  local img = cuda.image.read(dir .. "/examples/data/shapes.png")
  T.eq(table.concat(img.shape, "x"), "256x256x3", "shape")
end)

T.test("clean up the temporary directory", function()
  T.check(os.execute("rm -rf '" .. tmp .. "'"), "rm -rf " .. tmp)
end)

T.run()
