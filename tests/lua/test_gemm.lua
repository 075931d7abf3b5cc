-- test_gemm.lua -- cuda.gemm: products against a Lua reference for shapes on and off the 64 x 64
-- x 16 tile, every transpose, every epilogue (bias, relu, relu_mask), alpha and beta, f32, f16 and
-- bf16 inputs with f32 and f16 / bf16 outputs, a stream; and every argument error, with its message. Runs on
-- a GPU, or on the CPU device without one (need_gpu falls back to it).
local T = require "helper"
local cuda = require "cujit"

T.need_gpu(cuda)

-- A rows x cols device array of random values in [-1, 1] (a quarter exactly 0 when `zeros`), and
-- its values as stored (f16 rounds them), read back: what the reference computes with.
local function random_matrix(rows, cols, dtype, zeros)
  local t = {}
  for i = 1, rows do
    local row = {}
    for j = 1, cols do
      row[j] = (zeros and math.random(4) == 1) and 0 or 2 * math.random() - 1
    end
    t[i] = row
  end
  local a = cuda.to_device(t, dtype)
  return a, a:totable()
end

-- The bound of each element, as in tests/c/test_gemm.c: an f32 sum of k products is off by at
-- most (k + 3) * 2^-24 times the sum of the terms' magnitudes (doubled for fmaf's reorderings);
-- an f16 result adds its rounding, 2^-11 of the value, and 2^-25 for values that underflow.
local function check(case)
  local m, n, k = case.m, case.n, case.k
  local a, at = random_matrix(case.trans_a and k or m, case.trans_a and m or k, case.dtype)
  local b, bt = random_matrix(case.trans_b and n or k, case.trans_b and k or n, case.dtype)
  local out = case.out or case.dtype
  local c, ct = random_matrix(m, n, out)
  local bias, biast = random_matrix(1, n, out)
  bias = bias:reshape(n)
  local mask, maskt = random_matrix(m, n, out, true)
  local opts = {trans_a = case.trans_a, trans_b = case.trans_b, alpha = case.alpha,
                beta = case.beta, relu = case.relu, bias = case.bias and bias or nil,
                relu_mask = case.mask and mask or nil, stream = case.stream}
  T.check(cuda.gemm(a, b, c, opts) == c, "cuda.gemm returns c")
  if case.stream then case.stream:synchronize() end
  local got = c:totable()
  local alpha, beta = case.alpha or 1, case.beta or 0
  for i = 1, m do
    for j = 1, n do
      local sum, mag = 0, 0
      for p = 1, k do
        local x = case.trans_a and at[p][i] or at[i][p]
        local y = case.trans_b and bt[j][p] or bt[p][j]
        sum, mag = sum + x * y, mag + math.abs(x * y)
      end
      local v = alpha * sum + beta * ct[i][j]
      mag = math.abs(alpha) * mag + math.abs(beta * ct[i][j])
      if case.bias then v, mag = v + biast[1][j], mag + math.abs(biast[1][j]) end
      if case.relu and v < 0 then v = 0 end
      if case.mask and not (maskt[i][j] > 0) then v = 0 end
      local bound = 2 * (k + 3) * 2 ^ -24 * mag
      if out == "f16" then bound = bound + 2 ^ -11 * math.abs(v) + 2 ^ -25 end
      if out == "bf16" then bound = bound + 2 ^ -8 * math.abs(v) + 2 ^ -133 end
      if not (math.abs(got[i][j] - v) <= bound) then
        error(string.format("%s->%s %dx%dx%d trans %s %s: c[%d][%d] is %.9g, want %.9g (bound %.3g)",
                            case.dtype, out, m, n, k, tostring(case.trans_a),
                            tostring(case.trans_b), i, j, got[i][j], v, bound), 2)
      end
    end
  end
end

T.test("shapes on and off the tile, every transpose, f32", function()
  for _, s in ipairs{{1, 1, 1}, {17, 33, 65}, {64, 64, 16}, {65, 63, 17}, {2, 130, 3}} do
    for tr = 0, 3 do
      check{m = s[1], n = s[2], k = s[3], dtype = "f32", trans_a = tr & 1 == 1,
            trans_b = tr & 2 == 2}
    end
  end
end)

T.test("every epilogue with alpha and beta, for f32, f16, f16 -> f32, bf16 and bf16 -> f32", function()
  for _, pair in ipairs{{"f32", "f32"}, {"f16", "f16"}, {"f16", "f32"}, {"bf16", "bf16"},
                        {"bf16", "f32"}} do
    for epi = 0, 7 do
      check{m = 19, n = 40, k = 21, dtype = pair[1], out = pair[2], trans_a = epi & 1 == 1,
            bias = epi & 1 == 1, relu = epi & 2 == 2, mask = epi & 4 == 4, alpha = 0.75,
            beta = epi > 0 and -1.25 or nil}
    end
  end
end)

T.test("on a stream", function()
  local s <close> = cuda.stream()
  check{m = 9, n = 5, k = 7, dtype = "f32", stream = s, alpha = 2}
end)

T.test("argument errors say what is wrong", function()
  local a, b, c = cuda.zeros({2, 3}), cuda.zeros({3, 4}), cuda.zeros({2, 4})
  T.raises("a must be a 2-D array (m x k), got 1-D", cuda.gemm, cuda.zeros(6), b, c)
  T.raises("b must be a 2-D array (n x k), got 1-D", cuda.gemm, a, cuda.zeros(12), c,
           {trans_b = true})
  T.raises("op(a) is 2 x 3 but op(b) is 4 x 3: the inner sizes differ", cuda.gemm, a, b, c,
           {trans_b = true})
  T.raises("op(a) is 3 x 2 but op(b) is 3 x 4: the inner sizes differ", cuda.gemm, a, b, c,
           {trans_a = true})
  T.raises("c is 2 x 4 but op(a) op(b) is 2 x 3", cuda.gemm, a, cuda.zeros({3, 3}), c)
  T.raises("unknown option 'transpose' (known: trans_a, trans_b, alpha, beta, bias, relu, "
           .. "relu_mask, stream)", cuda.gemm, a, b, c, {transpose = true})
  T.raises("trans_a must be true or false, got number", cuda.gemm, a, b, c, {trans_a = 0})
  T.raises("relu must be true or false, got string", cuda.gemm, a, b, c, {relu = "yes"})
  T.raises("alpha must be a number, got string", cuda.gemm, a, b, c, {alpha = "2"})
  T.raises("bias must be a device array, got table", cuda.gemm, a, b, c, {bias = {1, 2, 3, 4}})
  T.raises("bias has 3 elements; it needs one per column of c (4)", cuda.gemm, a, b, c,
           {bias = cuda.zeros(3)})
  T.raises("relu_mask must have c's shape, 2 x 4", cuda.gemm, a, b, c,
           {relu_mask = cuda.zeros(8)})
  T.raises("stream must be a cujit.stream, got number", cuda.gemm, a, b, c, {stream = 1})
  local freed = cuda.zeros(4)
  freed:free()
  T.raises("bias: the device array has been freed", cuda.gemm, a, b, c, {bias = freed})
  -- what cujit_gemm itself refuses, with its message
  T.raises("cujit_gemm: a holds i32; gemm takes f32, f16 or bf16 inputs", cuda.gemm,
           cuda.zeros({2, 3}, "i32"), b, c)
  T.raises("cujit_gemm: a holds f32 but b holds f16; they must match", cuda.gemm, a,
           cuda.zeros({3, 4}, "f16"), c)
  T.raises("cujit_gemm: bias holds f16; it must hold c's dtype, f32", cuda.gemm, a, b, c,
           {bias = cuda.zeros(4, "f16")})
  T.raises("cujit_gemm: alpha inf and beta 0 must both be finite", cuda.gemm, a, b, c,
           {alpha = math.huge})
  local sq = cuda.zeros({2, 2})
  T.raises("cujit_gemm: c shares memory with a, which the kernel reads while it writes c", cuda.gemm,
           sq, cuda.zeros({2, 2}), sq)
end)

T.test("cuda.gemm_kernel names the kernel cuda.gemm would run, and refuses what it refuses",
       function()
  local sm90 = cuda.device().arch == "sm_90"
  local tensor = sm90 and "tensor" or "simt"
  local function kernel(dtype, m, n, k, ta, tb, out)
    local a = cuda.zeros(ta and {k, m} or {m, k}, dtype)
    local b = cuda.zeros(tb and {n, k} or {k, n}, dtype)
    return cuda.gemm_kernel(a, b, cuda.zeros({m, n}, out or "f32"), {trans_a = ta, trans_b = tb})
  end
  T.eq(kernel("bf16", 128, 128, 64), tensor, "the smallest product the tensor cores take")
  T.eq(kernel("f16", 1024, 128, 784, true, false, "f16"), tensor, "X^T dZ of an MLP's first layer")
  T.eq(kernel("f32", 128, 128, 64), "simt", "f32 inputs")
  T.eq(kernel("bf16", 127, 128, 64), "simt", "m below 128")
  T.eq(kernel("bf16", 128, 120, 64), "simt", "n below 128")
  T.eq(kernel("bf16", 128, 128, 56), "simt", "k below 64")
  T.eq(kernel("bf16", 128, 128, 68), "simt", "a's rows (k) not a multiple of 8")
  T.eq(kernel("bf16", 128, 132, 64), "simt", "b's rows (n) not a multiple of 8")
  T.eq(kernel("bf16", 128, 132, 64, false, true), tensor, "b transposed: its rows are k long")
  T.eq(kernel("bf16", 132, 128, 64, true, false), "simt", "a transposed: its rows are m long")
  T.eq(kernel("bf16", 1024, 128, 784, false, false, "f32"), tensor, "into f32")
  local a, b, c = cuda.zeros({2, 3}), cuda.zeros({3, 4}), cuda.zeros({2, 4})
  T.raises("op(a) is 2 x 3 but op(b) is 4 x 3: the inner sizes differ", cuda.gemm_kernel, a, b, c,
           {trans_b = true})
  T.raises("unknown option 'transpose'", cuda.gemm_kernel, a, b, c, {transpose = true})
  T.raises("cujit_gemm: a holds f32 but b holds f16; they must match", cuda.gemm_kernel, a,
           cuda.zeros({3, 4}, "f16"), c)
  T.raises("cujit_gemm: alpha inf and beta 0 must both be finite", cuda.gemm_kernel, a, b, c,
           {alpha = math.huge})
end)

T.run()
