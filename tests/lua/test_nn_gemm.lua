-- test_nn_gemm.lua -- examples/nn_gemm.lua's GEMMs on the device, as examples/nn.lua runs them:
-- the four products (A*B, A^T*B, A*B^T, A^T*B^T) with each epilogue and the ones row, on every
-- kernel (the SIMT tiles in f64, f32 and bf16; on a GPU of sm_80 or later the tensor-core kernel
-- in f16 and bf16), odd and misaligned sizes, split k where nn.gemm takes it and its partials
-- summed in a fixed order for any number of splits; and nn.library_gemm (cuda.gemm) against the
-- same host reference. The MLP built on them: test_mlp.lua.
local h = require "helper"
local cuda = require "cujit"
package.path = h.here() .. "../../examples/?.lua;" .. package.path
local nn = require "nn"
local G = require "nn_gemm"

h.need_gpu(cuda)

local k = nn.kernels({}, {"f64", "f32", "f16", "bf16"})

local function dev(t, dtype)
  return cuda.to_device(t, dtype)
end

-- Op(X) entry (i, j) (1-based) of a row-major rows x cols matrix stored transposed when t = 1.
local function at(X, t, i, j, rows, cols)
  if t == 1 then return X[(j - 1) * rows + i] end
  return X[(i - 1) * cols + j]
end

-- Checks C (a flat table, row-major) against op(A) op(B) with epilogue epi computed here from the
-- operands as stored (Ah, Bh, bias bh, mask mh: flat tables). Each element may be off by the
-- accumulation's bound, 2 (k + 1) unit sum |terms|, plus `round` times its size (C's own rounding
-- to a narrower dtype); `what` names the case in the error.
local function check_product(got, Ah, Bh, bh, mh, m, n, kk, ta, tb, epi, unit, round, what)
  for i = 1, m do
    for j = 1, n do
      local s, mag = 0, 0
      for l = 1, kk do
        local t = at(Ah, ta, i, l, m, kk) * at(Bh, tb, l, j, kk, n)
        s, mag = s + t, mag + math.abs(t)
      end
      if epi & 1 ~= 0 then s, mag = s + bh[j], mag + math.abs(bh[j]) end
      if epi & 2 ~= 0 and s < 0 then s = 0 end
      if epi & 4 ~= 0 and not (mh[(i - 1) * n + j] > 0) then s = 0 end
      local g = got[(i - 1) * n + j]
      if math.abs(g - s) > 2 * (kk + 1) * unit * mag + round * math.abs(s) + 1e-300 then
        error(string.format("%s %dx%dx%d ta=%d tb=%d epi=%d: C[%d,%d] = %.17g, want %.17g", what,
                            m, n, kk, ta, tb, epi, i, j, g, s))
      end
    end
  end
end

-- The kernels nn.gemm can take, {dtype, tile, options}: the SIMT tiles in f64 and f32 (the `sms`
-- that makes it pick each), the SIMT kernel in bf16, and on a GPU of sm_80 or later the
-- tensor-core kernel (mma = true) in f16 and bf16.
local GEMM_KERNELS = {{"f64", "large", {sms = 1}}, {"f64", "small", {sms = 1 << 30}},
                      {"f32", "large", {sms = 1}}, {"f32", "small", {sms = 1 << 30}},
                      {"bf16", "small", {sms = 1 << 30}}}
if k.gemm_mma then
  GEMM_KERNELS[#GEMM_KERNELS + 1] = {"f16", "mma", {mma = true}}
  GEMM_KERNELS[#GEMM_KERNELS + 1] = {"bf16", "mma", {mma = true}}
end
-- C's own rounding to its dtype, relative (f32's and f64's are inside the accumulation's bound)
local ROUND = {f64 = 0, f32 = 0, f16 = 2 ^ -11, bf16 = 2 ^ -8}

h.test("GEMM: the four products, the epilogues and the ones row, every kernel, odd sizes, split k",
       function()
  -- {m, n, k, split, misaligned}: with split, nn.gemm gets a work space and must split k (not
  -- the large tile); sizes that are multiples of 8 take the tensor-core kernel's 16-byte loads,
  -- even sizes the SIMT kernel's loads of two elements, unless A and B start an element past
  -- 16 bytes (misaligned: on a GPU a pair's load there faults)
  for _, kernel in ipairs(GEMM_KERNELS) do
    local dt, tile, opts = kernel[1], kernel[2], kernel[3]
    for _, shape in ipairs({{37, 45, 70}, {130, 129, 17}, {37, 45, 300, true}, {64, 40, 96},
                            {72, 24, 264, true}, {64, 40, 96, false, true}, {12, 16, 1030, true}}) do
      local m, n, kk = shape[1], shape[2], shape[3]
      local function dev_operand(values) -- A or B on the device, a view one element in when misaligned
        if not shape[5] then return dev(values, dt) end
        local padded = {0}
        for i, v in ipairs(values) do padded[i + 1] = v end
        return dev(padded, dt):slice(2)
      end
      -- (the tensor-core kernel splits only k loops of nn_gemm.MMA_SPLIT_STEPS steps or more)
      local long = kk >= G.MMA_SPLIT_STEPS * G.TILES.mma.BK
      local split = (shape[4] and tile ~= "large" and dt ~= "f64" and (tile ~= "mma" or long)) == true
      for _, op in ipairs({{0, 0}, {1, 0}, {0, 1}, {1, 1}}) do
        for _, epi in ipairs({0, 3, 5, 8, 13}) do
          local ta, tb = op[1], op[2]
          local A, B = h.random_floats(m * kk), h.random_floats(kk * n)
          local bias, mask = h.random_floats(n), h.random_floats(m * n)
          local C, ones = cuda.full({m, n}, h.POISON, dt), cuda.full(n, h.POISON, dt)
          local work = shape[4] and nn.work(8 * (m + 1) * n, 64) or nil
          local o = {bias = dev(bias, dt), mask = dev(mask, dt), ones = ones, sms = opts.sms,
                     mma = opts.mma, work = work}
          local what = string.format("%s %s", dt, tile)
          local size, splits = nn.gemm(k, nil, dev_operand(A), dev_operand(B), C, m, n, kk, ta, tb, epi, o)
          h.eq(size, tile, what .. ": the kernel taken")
          h.check((splits > 1) == split, string.format("%s: %d splits for %dx%dx%d", what, splits,
                                                       m, n, kk))
          local got = C:copy_to_host()
          local Ah, Bh = dev(A, dt):totable(), dev(B, dt):totable() -- as stored
          local bh, mh = dev(bias, dt):totable(), dev(mask, dt):totable()
          local unit = dt == "f64" and 2 ^ -52 or 2 ^ -23
          check_product(got, Ah, Bh, bh, mh, m, n, kk, ta, tb, epi, unit, ROUND[dt], what)
          local sums = ones:copy_to_host()
          for j = 1, n do -- row m of the product, the column sums of op(B); untouched without bit 8
            local s, mag = 0, 0
            for l = 1, kk do
              local t = at(Bh, tb, l, j, kk, n)
              s, mag = s + t, mag + math.abs(t)
            end
            local want = epi & 8 ~= 0 and s or h.POISON
            if math.abs(sums[j] - want) > 2 * (kk + 1) * unit * mag + ROUND[dt] * math.abs(want) then
              error(string.format("%s %dx%dx%d ta=%d tb=%d epi=%d: ones[%d] = %.17g, want %.17g",
                                  what, m, n, kk, ta, tb, epi, j, sums[j], want))
            end
          end
          if split then
            local c = work.counters:copy_to_host()
            for i = 1, #c do h.eq(c[i], 0, what .. ": tile counters back to 0") end
            -- the splits are summed in a fixed order: the same product again, the same bits
            local again = cuda.full({m, n}, h.POISON, dt)
            nn.gemm(k, nil, dev_operand(A), dev_operand(B), again, m, n, kk, ta, tb, epi, o)
            h.same(again:copy_to_host(), got, nil, what .. ": split k repeats exactly")
          end
        end
      end
    end
  end
end)

-- x rounded to f32, as the device's float arithmetic rounds each step (a sum of two floats
-- computed in double and rounded once is the float sum).
local function f32(x)
  return (string.unpack("f", string.pack("f", x)))
end

h.test("split k: each entry is its splits' partials added z = 0, 1, ... in turn, any number of "
       .. "splits (past the eight nn.gemm takes), the ones row and the bias included", function()
  local m, n, kk, epi = 45, 37, 700, 9 -- bias and the ones row; 2 x 2 tiles of 32
  local kernels = {{"f32", "small"}}
  if k.gemm_mma then kernels[#kernels + 1], kernels[#kernels + 2] = {"bf16", "mma"}, {"f16", "mma"} end
  for _, kernel in ipairs(kernels) do
    local dt, size = kernel[1], kernel[2]
    local t = nn.TILES[size]
    local gx, gy = (n + t.BN - 1) // t.BN, (m + 1 + t.BM - 1) // t.BM
    local threads = G.threads(t)
    for _, splits in ipairs({2, 8, 9, 11}) do
      local what = string.format("%s %s, %d splits", dt, size, splits)
      local A, B, bias = dev(h.random_floats(m * kk), dt), dev(h.random_floats(kk * n), dt),
                         dev(h.random_floats(n), dt)
      local C, ones = cuda.full({m, n}, h.POISON, dt), cuda.full(n, h.POISON, dt)
      local partial, counters = cuda.full(splits * (m + 1) * n, h.POISON, "f32"), cuda.zeros(gx * gy, "i32")
      k["gemm_" .. size][{grid = {gx, gy, splits}, block = threads,
                          shared = size == "mma" and G.mma_shared(t) or nil}](
        A, B, C, bias, cuda.zeros(1, dt), ones, m, n, kk, 0, 0, epi, partial, counters, splits)
      local p, bh = partial:copy_to_host(), bias:totable()
      local want, want_ones = {}, {}
      for r = 0, m do
        for c = 0, n - 1 do
          local v = 0.0
          for z = 0, splits - 1 do v = f32(v + p[z * (m + 1) * n + r * n + c + 1]) end
          if r < m then want[r * n + c + 1] = f32(v + bh[c + 1]) else want_ones[c + 1] = v end
        end
      end
      h.same(C:copy_to_host(), dev(want, dt):copy_to_host(), nil, what .. ": C")
      h.same(ones:copy_to_host(), dev(want_ones, dt):copy_to_host(), nil, what .. ": the ones row")
      h.same(counters:copy_to_host(), cuda.zeros(gx * gy, "i32"):copy_to_host(), nil,
             what .. ": tile counters back to 0")
    end
  end
end)

h.test("split k on the tensor-core kernel: one block an SM at most, in powers of two, at least "
       .. "four ways, only loops of nn_gemm.MMA_SPLIT_STEPS steps or more; its block and shared "
       .. "memory", function()
  -- The launch nn.gemm makes, caught by a stand-in for the kernel (so this runs on every device):
  -- {grid, block, shared} of the last launch.
  local caught
  local stand_in = setmetatable({}, {__index = function(_, cfg)
    return function() caught = cfg end
  end})
  local kk = {gemm_mma = stand_in}
  local t = G.TILES.mma
  local long = G.MMA_SPLIT_STEPS * t.BK -- the shortest k that may split
  -- {m, n, k, epi, sms, splits wanted}; epi 8 adds the ones row (m + 1 rows of tiles)
  for _, c in ipairs({{128, 128, long, 8, 132, 4},      -- 5 x 4 tiles: four fit 132 SMs, not eight
                      {128, 128, long, 8, 80, 4},       -- 20 x 4 = 80: exactly
                      {128, 128, long, 8, 79, 1},       -- two ways fit; fewer than four: none
                      {128, 10, long, 8, 132, 8},       -- 5 tiles: eight, the most
                      {128, 10, long - t.BK, 8, 132, 1}, -- a step short
                      {127, 10, 2 * long, 0, 132, 8},   -- 4 tiles
                      {127, 10, 2 * long, 0, 31, 4},    -- 4 tiles x 4 <= 31 < 4 x 8
                      {784, 128, long, 8, 132, 1}}) do  -- 100 tiles: one each
    local m, n, k_, epi, sms, want = table.unpack(c)
    local A, B, C = cuda.zeros({m, k_}, "bf16"), cuda.zeros({k_, n}, "bf16"), cuda.zeros({m, n}, "bf16")
    local mx = m + (epi & 8 ~= 0 and 1 or 0)
    local gx, gy = (n + t.BN - 1) // t.BN, (mx + t.BM - 1) // t.BM
    local work = nn.work(8 * mx * n, gx * gy)
    local what = string.format("%dx%dx%d epi %d on %d SMs", m, n, k_, epi, sms)
    local size, splits = nn.gemm(kk, nil, A, B, C, m, n, k_, 0, 0, epi,
                                 {ones = cuda.zeros(n, "bf16"), sms = sms, work = work, mma = true})
    h.eq(size, "mma", what .. ": the kernel")
    h.eq(splits, want, what .. ": splits")
    h.same(caught.grid, {gx, gy, want}, nil, what .. ": the grid")
    h.eq(caught.block, 32 * t.WM * t.WN * t.KS, what .. ": KS slices of WM x WN warps")
    h.eq(caught.shared, G.mma_shared(t), what .. ": shared memory")
    -- without a work space nothing splits
    nn.gemm(kk, nil, A, B, C, m, n, k_, 0, 0, epi, {ones = cuda.zeros(n, "bf16"), sms = sms, mma = true})
    h.same(caught.grid, {gx, gy, 1}, nil, what .. ": no work space, no split")
  end
  -- two tiles of op(A) and two of op(B) for each slice, either layout's room (lines of k padded
  -- by MPAD, or lines of m or n padded by MPAD), 2-byte elements
  local tile = {BM = 32, BN = 32, BK = 64, KS = 4, MPAD = 8}
  h.eq(G.mma_shared(tile), 4 * 2 * (2 * 64 * 40) * 2, "m/n lines the larger: 64 x (32 + 8)")
  tile.BK = 16
  h.eq(G.mma_shared(tile), 4 * 2 * (2 * 32 * 24) * 2, "k lines the larger: 32 x (16 + 8)")
  tile.BM, tile.BK, tile.KS = 64, 32, 3
  h.eq(G.mma_shared(tile), 3 * 2 * (64 * 40 + 32 * 40) * 2, "op(A) and op(B) each their own")
end)

h.test("library GEMM (cuda.gemm): the four products and the epilogues as nn.gemm's, f32 and bf16",
       function()
  -- {m, n, k}: the last fits the tensor-core path of an H200 (m, n >= 128, k >= 64, rows of whole
  -- 16 bytes in every layout), the others only the SIMT kernel
  for _, dt in ipairs({"f32", "bf16"}) do
    for _, shape in ipairs({{37, 45, 70}, {130, 129, 17}, {256, 136, 72}}) do
      local m, n, kk = shape[1], shape[2], shape[3]
      for _, op in ipairs({{0, 0}, {1, 0}, {0, 1}, {1, 1}}) do
        for _, epi in ipairs({0, 3, 5}) do
          local ta, tb = op[1], op[2]
          local A, B = dev(h.random_floats(m * kk), dt), dev(h.random_floats(kk * n), dt)
          A, B = A:reshape(ta == 1 and {kk, m} or {m, kk}), B:reshape(tb == 1 and {n, kk} or {kk, n})
          local bias, mask = dev(h.random_floats(n), dt), dev(h.random_floats(m * n), dt)
          mask = mask:reshape(m, n)
          local C = cuda.full({m, n}, h.POISON, dt)
          nn.library_gemm(nil, A, B, C, bias, mask, ta, tb, epi)
          local got = C:copy_to_host()
          local Ah, Bh = A:copy_to_host(), B:copy_to_host() -- as stored (rounded to dt)
          local bh, mh = bias:copy_to_host(), mask:copy_to_host()
          -- C's own rounding to bf16, relative; f32's is inside the accumulation's bound
          check_product(got, Ah, Bh, bh, mh, m, n, kk, ta, tb, epi, 2 ^ -23,
                        dt == "bf16" and 2 ^ -8 or 0, dt .. " library")
        end
      end
    end
  end
end)

h.run()
