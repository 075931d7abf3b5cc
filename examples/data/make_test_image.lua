-- make_test_image.lua -- draws examples/data/shapes.png, the test image the repository ships for
-- conv2d.lua: 256x256 RGB with gradients, filled and outlined shapes, thin lines, a checkerboard
-- and block letters, so that blurring, sharpening and edge detection all have something to show.
-- Run from examples/data:  cujit make_test_image.lua  (no GPU needed).
local cuda = require "cujit"

local W, H = 256, 256
local img = cuda.host_array({H, W, 3}, "u8")

local function put(x, y, r, g, b)
  if x < 0 or y < 0 or x >= W or y >= H then return end
  local i = (y * W + x) * 3
  img[i + 1], img[i + 2], img[i + 3] = r, g, b
end

-- Background: a diagonal colour gradient.
for y = 0, H - 1 do
  for x = 0, W - 1 do
    put(x, y, x * 255 // (W - 1), y * 255 // (H - 1), (x + y) * 255 // (W + H - 2) // 2 + 64)
  end
end

local function disc(cx, cy, radius, r, g, b)
  for y = cy - radius, cy + radius do
    for x = cx - radius, cx + radius do
      if (x - cx) ^ 2 + (y - cy) ^ 2 <= radius * radius then put(x, y, r, g, b) end
    end
  end
end

local function ring(cx, cy, radius, width, r, g, b)
  for y = cy - radius, cy + radius do
    for x = cx - radius, cx + radius do
      local d = math.sqrt((x - cx) ^ 2 + (y - cy) ^ 2)
      if d <= radius and d >= radius - width then put(x, y, r, g, b) end
    end
  end
end

local function rect(x0, y0, x1, y1, r, g, b)
  for y = y0, y1 do for x = x0, x1 do put(x, y, r, g, b) end end
end

local function triangle(x0, y0, size, r, g, b) -- right-angled, hypotenuse from top-right
  for y = 0, size do for x = 0, y do put(x0 + x, y0 + y, r, g, b) end end
end

local function line(x0, y0, x1, y1, r, g, b)
  local n = math.max(math.abs(x1 - x0), math.abs(y1 - y0))
  for k = 0, n do
    put(x0 + (x1 - x0) * k // n, y0 + (y1 - y0) * k // n, r, g, b)
  end
end

disc(64, 64, 40, 230, 40, 40)
ring(64, 64, 30, 4, 255, 255, 255)
rect(140, 24, 232, 100, 30, 60, 200)
rect(156, 40, 216, 84, 250, 220, 40)
triangle(24, 140, 80, 20, 160, 60)
for k = 0, 7 do line(130, 130 + k * 12, 250, 250 - k * 12, 255 - k * 30, k * 30, 255) end

-- A checkerboard of 4-pixel squares: fine detail for the blur to erase.
for y = 200, 247 do
  for x = 8, 71 do
    local on = ((x // 4) + (y // 4)) % 2 == 0
    put(x, y, on and 255 or 0, on and 255 or 0, on and 255 or 0)
  end
end

-- Block letters from a 5x7 font, scaled 3x: "CUJIT".
local font = {
  C = {"01111", "10000", "10000", "10000", "10000", "10000", "01111"},
  U = {"10001", "10001", "10001", "10001", "10001", "10001", "01110"},
  J = {"00111", "00010", "00010", "00010", "00010", "10010", "01100"},
  I = {"11111", "00100", "00100", "00100", "00100", "00100", "11111"},
  T = {"11111", "00100", "00100", "00100", "00100", "00100", "00100"},
}
local x0 = 100
for ch in ("CUJIT"):gmatch(".") do
  for row, bits in ipairs(font[ch]) do
    for col = 1, 5 do
      if bits:sub(col, col) == "1" then
        rect(x0 + (col - 1) * 3, 104 + (row - 1) * 3, x0 + col * 3 - 1, 104 + row * 3 - 1, 0, 0, 0)
      end
    end
  end
  x0 = x0 + 19
end

local path = arg and arg[1] or "shapes.png"
cuda.image.write(path, img)
local back = cuda.image.read(path)
for i = 1, #img do
  if back[i] ~= img[i] then error("read back differs at element " .. i) end
end
print("wrote " .. path)
