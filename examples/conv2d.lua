-- conv2d.lua -- 2-D convolution of a real image: read data/shapes.png, blur (5x5 Gaussian),
-- sharpen (3x3) and detect edges (Sobel magnitude) on the GPU, write each result as PNG to
-- examples/out (or $CUJIT_EXAMPLE_OUT), with a side-by-side montage, and check every output
-- against a host reference on crops that include the image's corners and edges.
--
-- The filter lives in __constant__ memory: each filter's kernel is compiled with the weights as
-- the initializer of a __constant__ array (one cached compile per filter). At the end, one kernel
-- takes a 3x3 filter set at run time in constant memory (m:global), timed against the same
-- kernel reading the taps through a pointer. The image tile with
-- its halo is staged in shared memory; pixels outside the image take the value of the nearest
-- edge pixel (clamp to edge). Like image libraries, this is correlation (the filter is not
-- flipped); the filters here are symmetric or used through the magnitude, so it does not matter.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local TILE = 16

local filters = {
  {name = "blur", size = 5, scale = 1 / 256,
   weights = {{1, 4, 6, 4, 1, 4, 16, 24, 16, 4, 6, 24, 36, 24, 6, 4, 16, 24, 16, 4, 1, 4, 6, 4, 1}}},
  {name = "sharpen", size = 3, scale = 1, weights = {{0, -1, 0, -1, 5, -1, 0, -1, 0}}},
  {name = "edges", size = 3, scale = 0.5, -- Sobel: the magnitude of (gx, gy)
   weights = {{-1, 0, 1, -2, 0, 2, -1, 0, 1}, {-1, -2, -1, 0, 0, 0, 1, 2, 1}}},
}

local function source(f)
  local values = {}
  for _, w in ipairs(f.weights) do
    for _, v in ipairs(w) do values[#values + 1] = string.format("%.9ef", v * f.scale) end
  end
  return string.format([[
#define KS %d
#define NF %d
#define TILE %d
#define R (KS / 2)
#define T (TILE + 2 * R)
__constant__ float weights[NF * KS * KS] = {%s};

extern "C" __global__ void conv_%s(const unsigned char *in, unsigned char *out, int h, int w,
                                   int c) {
  __shared__ float tile[T][T];
  const int ch = blockIdx.z, x0 = blockIdx.x * TILE - R, y0 = blockIdx.y * TILE - R;
  for (int l = threadIdx.y * TILE + threadIdx.x; l < T * T; l += TILE * TILE) {
    int y = min(max(y0 + l / T, 0), h - 1), x = min(max(x0 + l %% T, 0), w - 1);
    tile[l / T][l %% T] = in[((size_t)y * w + x) * c + ch];
  }
  __syncthreads();
  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x >= w || y >= h) return;
  float acc[NF];
  for (int f = 0; f < NF; f++) {
    acc[f] = 0.0f;
    for (int dy = 0; dy < KS; dy++)
      for (int dx = 0; dx < KS; dx++)
        acc[f] += weights[(f * KS + dy) * KS + dx] * tile[threadIdx.y + dy][threadIdx.x + dx];
  }
  float v = NF == 1 ? acc[0] : sqrtf(acc[0] * acc[0] + acc[1] * acc[1]);
  out[((size_t)y * w + x) * c + ch] = (unsigned char)__float2int_rn(fminf(fmaxf(v, 0.0f), 255.0f));
}
]], f.size, #f.weights, TILE, table.concat(values, ", "), f.name)
end

local t0 = S.clock()
for _, f in ipairs(filters) do
  f.kernel = cuda.source(source(f), S.options({name = f.name .. ".cu"}))["conv_" .. f.name]
end
-- Copies an image into a column of the montage.
local place = cuda.jit([[place(const unsigned char *src, unsigned char *dst, int h, int w, int c,
                               int dst_w, int x_offset)]], [[
  long long i = cujit::grid1();
  if (i >= (long long)h * w * c) return;
  long long y = i / ((long long)w * c), rest = i % ((long long)w * c);
  dst[(y * dst_w + x_offset) * c + rest] = src[i];
]], S.options())
-- A 3x3 filter set at run time (the end of the GPU runs).
local runtime = cuda.source(string.format([[
#define TILE %d
#define T (TILE + 2)
__constant__ float taps[3][3];
#define CONV3(W)                                                                               \
  __shared__ float tile[T][T];                                                                 \
  const int ch = blockIdx.z, x0 = blockIdx.x * TILE - 1, y0 = blockIdx.y * TILE - 1;           \
  for (int l = threadIdx.y * TILE + threadIdx.x; l < T * T; l += TILE * TILE) {                \
    int y = min(max(y0 + l / T, 0), h - 1), x = min(max(x0 + l %% T, 0), w - 1);               \
    tile[l / T][l %% T] = in[((size_t)y * w + x) * c + ch];                                    \
  }                                                                                            \
  __syncthreads();                                                                             \
  const int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;          \
  if (x >= w || y >= h) return;                                                                \
  float acc = 0.0f;                                                                            \
  for (int dy = 0; dy < 3; dy++)                                                               \
    for (int dx = 0; dx < 3; dx++) acc += W * tile[threadIdx.y + dy][threadIdx.x + dx];        \
  out[((size_t)y * w + x) * c + ch] = (unsigned char)__float2int_rn(fminf(fmaxf(acc, 0.0f), 255.0f));

extern "C" __global__ void conv3_constant(const unsigned char *in, unsigned char *out, int h,
                                          int w, int c) {
  CONV3(taps[dy][dx])
}
extern "C" __global__ void conv3_pointer(const float *__restrict__ weights,
                                         const unsigned char *in, unsigned char *out, int h,
                                         int w, int c) {
  CONV3(weights[dy * 3 + dx])
}
]], TILE), S.options({name = "conv3.cu"}))
S.printf("compiled %d kernels in %.1f ms", #filters + 3, (S.clock() - t0) * 1e3)

-- Host reference ------------------------------------------------------------------------------

-- Output pixel (x, y, ch) (0-based) of filter f on a host image {h, w, c}, in float64.
local function ref_pixel(img, h, w, c, f, x, y, ch)
  local R, acc = f.size // 2, {}
  for k, weights in ipairs(f.weights) do
    local s = 0.0
    for dy = 0, f.size - 1 do
      local yy = math.min(math.max(y + dy - R, 0), h - 1)
      for dx = 0, f.size - 1 do
        local xx = math.min(math.max(x + dx - R, 0), w - 1)
        s = s + weights[dy * f.size + dx + 1] * f.scale * img[(yy * w + xx) * c + ch + 1]
      end
    end
    acc[k] = s
  end
  local v = #acc == 1 and acc[1] or math.sqrt(acc[1] ^ 2 + acc[2] ^ 2)
  return math.min(math.max(v, 0), 255)
end

-- Compares out (host array) with the reference on a crop; returns the number of pixels that
-- differ by more than one level (float32 on the GPU against float64 here: a value at .5 may round
-- either way, nothing more), and the largest difference.
local function compare_crop(img, out, h, w, c, f, x0, y0, size)
  local bad, worst = 0, 0
  for y = y0, math.min(y0 + size, h) - 1 do
    for x = x0, math.min(x0 + size, w) - 1 do
      for ch = 0, c - 1 do
        local d = math.abs(out[(y * w + x) * c + ch + 1] - ref_pixel(img, h, w, c, f, x, y, ch))
        if d > 1 then bad = bad + 1 end
        if d > worst then worst = d end
      end
    end
  end
  return bad, worst
end

-- Host-side checks of the reference and of PNG input/output --------------------------------

local here = S.here()
local image_path = here .. "data/shapes.png"
local img = cuda.image.read(image_path)
local h, w, c = img.shape[1], img.shape[2], img.shape[3]
S.check(img.dtype == "u8" and (c == 1 or c == 3 or c == 4), "read %s: %dx%d, %d channels",
        image_path, w, h, c)
do
  local out = S.out_dir(here)
  cuda.image.write(out .. "/roundtrip.png", img)
  local back = cuda.image.read(out .. "/roundtrip.png")
  local same = #back == #img
  for i = 1, #img do same = same and back[i] == img[i] end
  S.check(same, "PNG write + read round trip is exact")
  -- On a flat image every filter gives the flat value (blur, sharpen: weights sum to 1) or 0
  -- (Sobel), at the corners too: clamp to edge adds no dark border.
  local flat = cuda.host_array({4, 4, 1}, "u8"):fill(77)
  for _, f in ipairs(filters) do
    local want = f.name == "edges" and 0 or 77
    local ok = true
    for y = 0, 3 do
      for x = 0, 3 do ok = ok and math.abs(ref_pixel(flat, 4, 4, 1, f, x, y, 0) - want) < 1e-9 end
    end
    S.check(ok, "host reference: %s of a flat image is %d everywhere", f.name, want)
  end
  -- A vertical step 0 | 100: Sobel gx = 4 * 100 at the step, times the scale 0.5.
  local step = cuda.host_array({3, 4, 1}, "u8")
  for y = 0, 2 do for x = 2, 3 do step[y * 4 + x + 1] = 100 end end
  S.check(math.abs(ref_pixel(step, 3, 4, 1, filters[3], 1, 1, 0) - 200) < 1e-9,
          "host reference: Sobel magnitude of a step of 100 is 200")
end

S.host_checks_done()

-- GPU runs ------------------------------------------------------------------------------------

local out_dir = S.out_dir(here)
local started = S.clock()
local d_in = img:to_device()
local montage = cuda.full({h, w * (#filters + 1), c}, 0, "u8")
local place_launch = place[{S.blocks(h * w * c, 256), 256}]
place_launch(d_in, montage, h, w, c, w * (#filters + 1), 0)
local panels = {d_in:copy_to_host()} -- what each column of the montage must hold
local crops = {{0, 0}, {w - 40, h - 40}, {w // 2 - 20, h // 2 - 20}, {0, h - 40}, {w - 40, 0}}
for k, f in ipairs(filters) do
  local d_out = cuda.full({h, w, c}, 0, "u8")
  local launch = f.kernel[{{S.blocks(w, TILE), S.blocks(h, TILE), c}, {TILE, TILE}}]
  local ms = S.gpu_ms(function() launch(d_in, d_out, h, w, c) end, 10, nil, true)
  local out = d_out:copy_to_host()
  local bad, worst = 0, 0
  for _, crop in ipairs(crops) do
    local b, d = compare_crop(img, out, h, w, c, f, crop[1], crop[2], 40)
    bad, worst = bad + b, math.max(worst, d)
  end
  S.check(bad == 0, "%s: %.3f ms on the GPU; 5 crops of 40x40 (corners, edges, centre) match "
          .. "the host within 1 level (largest difference %.2f)", f.name, ms, worst)
  local path = string.format("%s/shapes_%s.png", out_dir, f.name)
  cuda.image.write(path, d_out) -- straight from the device array
  place_launch(d_out, montage, h, w, c, w * (#filters + 1), k * w)
  panels[k + 1] = out
  print("wrote " .. path)
end
local m, mw, wrong = montage:copy_to_host(), w * (#filters + 1), 0
for k, p in ipairs(panels) do
  for y = 0, h - 1 do
    for i = 1, w * c do
      if m[(y * mw + (k - 1) * w) * c + i] ~= p[y * w * c + i] then wrong = wrong + 1 end
    end
  end
end
S.check(wrong == 0, "the montage holds the input and each filter's output side by side "
        .. "(%d values differ)", wrong)
cuda.image.write(out_dir .. "/shapes_montage.png", montage)
S.printf("wrote %s/shapes_montage.png (input | blur | sharpen | edges); %s part %.1f ms wall",
         out_dir, S.on_cpu and "CPU device" or "GPU", (S.clock() - started) * 1e3)

-- A filter set at run time: its 3x3 taps in __constant__ memory, written from Lua through the
-- program's global (m:global("taps"):copy_from(...)), against the same kernel reading them
-- through a pointer. Constant memory broadcasts one tap to a warp in one access; the pointer
-- version goes through the caches.
local sharpen = filters[2]
local taps = runtime:global("taps") -- f32 {3, 3}, from the declaration
S.check(taps.dtype == "f32" and taps.shape[1] == 3 and taps.shape[2] == 3,
        "the __constant__ taps are an f32 {3, 3} device array")
taps:copy_from(cuda.array(sharpen.weights[1], "f32"):reshape(3, 3))
local d_weights = cuda.to_device(sharpen.weights[1], "f32")
local grid = {{S.blocks(w, TILE), S.blocks(h, TILE), c}, {TILE, TILE}}
local out_constant, out_pointer = cuda.full({h, w, c}, 0, "u8"), cuda.full({h, w, c}, 0, "u8")
local by_constant = runtime.conv3_constant[grid]
local by_pointer = runtime.conv3_pointer[grid]
local ms_constant = S.gpu_ms(function() by_constant(d_in, out_constant, h, w, c) end, 20, nil, true)
local ms_pointer = S.gpu_ms(function() by_pointer(d_weights, d_in, out_pointer, h, w, c) end, 20,
                            nil, true)
local a, b = out_constant:copy_to_host(), out_pointer:copy_to_host()
local same = #a == #b
for i = 1, #a do same = same and a[i] == b[i] end
local bad = 0
for _, crop in ipairs(crops) do bad = bad + compare_crop(img, a, h, w, c, sharpen, crop[1], crop[2], 40) end
S.check(same and bad == 0, "sharpen with taps set at run time: constant memory %.3f ms, through a "
        .. "pointer %.3f ms; the outputs are identical and match the host", ms_constant, ms_pointer)
S.done()
