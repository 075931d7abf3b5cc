-- nn.lua -- the small neural-network module behind mlp.lua, its device side: the kernels (the
-- GEMMs of nn_gemm.lua, with bias/ReLU/ReLU-mask epilogues, split k and a row of ones that
-- gives bias gradients in the weight gradients' product; a fused softmax cross-entropy; one
-- update of every parameter, SGD with momentum or Adam on f32 master weights with loss scaling
-- and the learning-rate schedule), a multilayer perceptron built from them, and the upload of a
-- data set. A training step is 11 kernels (12 for f16). Every kernel is generic in its storage
-- type T (f16, bf16, f32 or f64) and accumulates in float (double for f64). A net's products run
-- on nn_gemm.lua's GEMM or, with gemm = "library", on cujit's own (cuda.gemm: on an H200 its
-- tensor-core path where the shapes fit), or with gemm = "tensor" only for the products its
-- tensor cores take ("auto": only those large enough to gain, and f16 and bf16 products below
-- that on nn_gemm.lua's tensor-core kernel). The host side (readers, epoch order, command line,
-- chart) is nn_host.lua.
-- Run as a script (`cujit nn.lua`, as ctest does) it only compiles its kernels for sm_90.
local cuda = require "cujit"
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local G = require "nn_gemm"

local M = {}

-- Blocks of b threads covering n, at most cap.
local function blocks(n, b, cap)
  return math.max(1, math.min((n + b - 1) // b, cap or 1 << 20))
end

-- Kernels -------------------------------------------------------------------------------------

-- The learning rate of step t (nn_host.lr_at, in f32): lr, times a linear warm-up over the first
-- `warmup` steps, times (cosine = 1) a cosine decay to 0 over the last `decay` of the run's
-- `total` steps (1 before them).
local RATE = [==[
__device__ __forceinline__ float rate_at(int step, float lr, int warmup, int total, int decay,
                                         int cosine) {
  const float t = (float)step, start = (float)(total - decay);
  float f = 1.0f;
  if (cosine && decay > 0 && t > start) f = 0.5f * (1.0f + cospif((t - start) / (float)decay));
  if (warmup > 0 && t < (float)warmup) f *= (t + 1.0f) / (float)warmup;
  return lr * f;
}
]==]

local KERNELS = {
  -- Bytes from a Lua table (copied to the device by the launch) into dst at offset.
  put_bytes = {"put_bytes(const unsigned char *src, unsigned char *dst, long long offset, int n)", [==[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[offset + i] = src[i];
]==]},
  -- Rows order[step * batch + b] of the u8 images (normalised: (p / 255 - mean) / std) and labels
  -- into x and y; step is read on the device, so a replayed graph takes the next batch by itself.
  -- With radius > 0 each image (width pixels a row) is moved by the shift code of its position,
  -- shifts[step * batch + b] (nn_host.shift_codes: dx = code % side - radius, dy = code / side
  -- - radius, side = 2 radius + 1): x[r, c] = image[r - dy, c - dx], background (pixel 0)
  -- where that is outside the image.
  gather = {"gather(const unsigned char *images, const unsigned char *labels, const int *order, "
            .. "const unsigned char *shifts, const int *state, T *x, int *y, int batch, "
            .. "int features, int width, int radius, float mean, float inv_std)", [==[
  typedef typename acc_of<T>::type Acc;
  const long long total = (long long)batch * features, first = (long long)state[0] * batch;
  const int side = 2 * radius + 1, height = features / width;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const int b = (int)(e / features), f = (int)(e % features);
    const int src = order[first + b];
    int from = f;
    if (radius > 0) {
      const int code = shifts[first + b];
      const int r = f / width - (code / side - radius), c = f % width - (code % side - radius);
      from = r >= 0 && r < height && c >= 0 && c < width ? r * width + c : -1;
    }
    const Acc p = from >= 0 ? Acc(images[(size_t)src * features + from]) : Acc(0);
    x[e] = T((p * Acc(1.0 / 255.0) - Acc(mean)) * Acc(inv_std));
    if (f == 0) y[b] = labels[src];
  }
]==]},
  -- Softmax cross-entropy over rows of logits, numerically stable (the row maximum is taken
  -- out before exp), fused with its gradient: dlogits = (softmax - onehot) * scale / rows, where
  -- scale is the loss scale amp[0]. A row to a group of G = lanes lanes (M.xent_lanes: the
  -- smallest power of two >= classes, at most 32; 1 where blocks are not whole warps): lane q
  -- takes classes q, q + G, ..., and the group's maximum (the first index of equals), and its sum
  -- of exponentials, are combined by shuffles, so a row's logits are read at once (a thread a row
  -- read its ten one after another: 6.3 us at batch 128, an H100). Each block's loss sum and count of right
  -- answers go to parts[2 b] and parts[2 b + 1] (M.XENT_BLOCKS blocks at most), and the last
  -- block to finish (counted in *done) adds them, block 0 first, into stats[2 * step] and
  -- stats[2 * step + 1]: a fixed order, so runs repeat exactly.
  xent = {"xent(const T *logits, const int *labels, T *dlogits, const float *amp, double *stats, "
          .. "const int *state, double *parts, int *done, int rows, int classes, int lanes, "
          .. "int want_grad)",
          [==[
  typedef typename acc_of<T>::type Acc;
  const Acc scale = want_grad ? Acc(amp[0]) / Acc(rows) : Acc(0);
  // Any power of two up to 32 gives the loss and gradient, up to the order of a row's sum (more
  // lanes than classes stand for class 0 again, fewer take several classes each); a group must lie
  // in one warp. Other values take one lane a row: slower, as right.
  const bool grouped =
    lanes > 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0 && blockDim.x % 32 == 0;
  const int G = grouped ? lanes : 1;
  const int q = threadIdx.x % G;
  const unsigned group = G == 32 ? 0xffffffffu : ((1u << G) - 1u) << (threadIdx.x % 32 - q);
  Acc loss = 0, right = 0;
  const int first = (int)((blockIdx.x * blockDim.x + threadIdx.x) / G);
  const int stride = (int)(gridDim.x * blockDim.x / G);
  for (int r = first; r < rows; r += stride) { // the same rows for every lane of a group
    const T *z = logits + (size_t)r * classes;
    int arg = q < classes ? q : 0; // a lane past the classes stands for class 0 again
    Acc top = widen(z[arg]);
    for (int c = q + G; c < classes; c += G) {
      const Acc v = widen(z[c]);
      if (v > top) top = v, arg = c;
    }
    for (int o = G / 2; o > 0; o /= 2) {
      const Acc t = __shfl_xor_sync(group, top, o, G);
      const int a = __shfl_xor_sync(group, arg, o, G);
      if (t > top || (t == top && a < arg)) top = t, arg = a;
    }
    Acc sum = 0;
    for (int c = q; c < classes; c += G) sum += exp(widen(z[c]) - top);
    for (int o = G / 2; o > 0; o /= 2) sum += __shfl_xor_sync(group, sum, o, G);
    const int y = labels[r];
    if (q == 0) {
      loss += log(sum) - (widen(z[y]) - top);
      right += arg == y ? Acc(1) : Acc(0);
    }
    if (want_grad)
      for (int c = q; c < classes; c += G)
        dlogits[(size_t)r * classes + c] =
          T((exp(widen(z[c]) - top) / sum - (c == y ? Acc(1) : Acc(0))) * scale);
  }
  loss = cujit::block_sum(loss);
  right = cujit::block_sum(right);
  if (threadIdx.x == 0) parts[2 * blockIdx.x] = loss, parts[2 * blockIdx.x + 1] = right;
  // The last block sums the blocks' parts: a thread a block, all loaded at once, then a block
  // sum, a fixed tree, so runs repeat exactly (one thread reading them in turn waited for each
  // load: the kernel took 9.7 us at batch 1024, 64 blocks, on an H100; 8.3 this way).
  if (last_block(done, gridDim.x)) {
    double l = 0, n = 0;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x)
      l += __ldcg(&parts[2 * b]), n += __ldcg(&parts[2 * b + 1]);
    l = cujit::block_sum(l);
    n = cujit::block_sum(n);
    if (threadIdx.x == 0) stats[2 * state[0]] = l, stats[2 * state[0] + 1] = n;
  }
]==]},
  -- db[c] = sum over rows of dz[r, c]: blocks of 32 columns x up to 32 row lanes, summed in shared
  -- memory.
  colsum = {"colsum(const T *dz, T *db, int rows, int cols)", [==[
  typedef typename acc_of<T>::type Acc;
  __shared__ Acc part[32][33]; // blockDim = {32, up to 32}: a row of lanes per column
  const int c = blockIdx.x * 32 + threadIdx.x;
  Acc s = 0;
  if (c < cols) {
    // Eight rows' loads issued before any is added, then added in row order (one load waited
    // for at a time: 8.3 us at batch 1024 on an H100; 3.9 this way).
    const int step = blockDim.y;
    int r = threadIdx.y;
    for (; r + 7 * step < rows; r += 8 * step) {
      Acc v[8];
#pragma unroll
      for (int j = 0; j < 8; j++) v[j] = widen(dz[(size_t)(r + j * step) * cols + c]);
#pragma unroll
      for (int j = 0; j < 8; j++) s += v[j];
    }
    for (; r < rows; r += step) s += widen(dz[(size_t)r * cols + c]);
  }
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    for (int k = 1; k < (int)blockDim.y; k++) s += part[k][threadIdx.x];
    db[c] = T(s);
  }
]==]},
  -- Sets *flag when any gradient is infinite or NaN (an overflow of the scaled f16 gradients).
  check_finite = {"check_finite(const T *g, int *flag, int n)", [==[
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (!isfinite(widen(g[i]))) *flag = 1;
]==]},
  -- The master weights rounded to T: a working copy.
  round_to = {"round_to(const float *master, T *w, int n)", [==[
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    w[i] = T(master[i]);
]==]},
  -- A whole step's update of every parameter at once (nn.net keeps them in one array each):
  -- the learning rate of step t = clock[0] (rate_at), then SGD with momentum and weight decay
  -- (PyTorch's: g += weight_decay p; v = momentum v + g; p -= lr v; m1 is v) or, with adam = 1,
  -- Adam (torch.optim.Adam, its weight decay added to the gradient, t + 1 steps taken) on the
  -- f32 master weights, the gradient unscaled by amp[0]; w gets the master rounded to T.
  -- Skipped when *flag says the gradients overflowed. The last block to finish (counted in
  -- *done) ends the step, once every block has read flag, clock and scale: rate[0] = the rate,
  -- the batch counter state[0] and (unless skipped) the step clock move on, and with dynamic
  -- loss scaling (amp = {scale, good steps, skipped steps}) the scale halves on an overflow and
  -- doubles after 1000 good steps; *flag is cleared.
  update = {"update(float *master, T *w, const T *grad, float *m1, float *m2, float *amp, "
            .. "int *flag, int *state, int *clock, float *rate, int *done, float lr, int warmup, "
            .. "int total, int decay, int cosine, float weight_decay, float momentum, "
            .. "float beta1, float beta2, float eps, int adam, int dynamic, int n)", [==[
  const int skip = *flag, t = clock[0];
  const float inv = 1.0f / amp[0], lr_t = rate_at(t, lr, warmup, total, decay, cosine);
  const int first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  if (!skip && adam) {
    const float c1 = 1.0f - powf(beta1, (float)(t + 1));
    const float c2 = sqrtf(1.0f - powf(beta2, (float)(t + 1)));
    for (int i = first; i < n; i += stride) {
      const float g = (float)widen(grad[i]) * inv + weight_decay * master[i];
      const float a = beta1 * m1[i] + (1.0f - beta1) * g;
      const float b = beta2 * m2[i] + (1.0f - beta2) * g * g;
      m1[i] = a, m2[i] = b;
      const float p = master[i] - (lr_t / c1) * a / (sqrtf(b) / c2 + eps);
      master[i] = p;
      w[i] = T(p);
    }
  } else if (!skip) {
    for (int i = first; i < n; i += stride) {
      const float v = momentum * m1[i] + (float)widen(grad[i]) * inv + weight_decay * master[i];
      m1[i] = v;
      const float p = master[i] - lr_t * v;
      master[i] = p;
      w[i] = T(p);
    }
  }
  if (last_block(done, gridDim.x) && threadIdx.x == 0) {
    rate[0] = lr_t;
    state[0] += 1;
    if (!skip) clock[0] += 1;
    if (dynamic) {
      if (skip) amp[0] *= 0.5f, amp[1] = 0.0f, amp[2] += 1.0f;
      else if ((amp[1] += 1.0f) >= 1000.0f) amp[0] *= 2.0f, amp[1] = 0.0f;
    }
    *flag = 0;
  }
]==]},
}

-- Compiles every kernel (options as cuda.jit takes them; arch = "sm_90" compiles without a GPU),
-- each body after G.ENTRY (a net's launches with pdl may start before the kernel before ends).
-- The generic ones are compiled for each dtype in `dtypes` now, so that none compiles in the
-- middle of a timed run. The tensor-core GEMM (gemm_mma) exists for a GPU of sm_80 or later only
-- (the CPU device runs no PTX, and mma.sync's bf16 needs sm_80) and compiles at its first use.
function M.kernels(options, dtypes)
  local k = {}
  local function with(extra)
    local o = {preamble = G.PREAMBLE .. RATE}
    for key, v in pairs(options or {}) do o[key] = v end
    for key, v in pairs(extra or {}) do o[key] = v end
    return o
  end
  for name, def in pairs(KERNELS) do k[name] = cuda.jit(def[1], G.ENTRY .. def[2], with()) end
  local arch = (options or {}).arch or cuda.device().arch
  local sm = tonumber(tostring(arch):match("^sm_(%d+)"))
  local function jit(signature, body, extra) return cuda.jit(signature, body, with(extra)) end
  for name, kernel in pairs(G.kernels(jit, sm ~= nil and sm >= 80)) do k[name] = kernel end
  for _, dt in ipairs(dtypes or {}) do
    for name, kernel in pairs(k) do -- gemm_mma compiles when first asked for (mma = true)
      if #kernel:type_vars() > 0 and name ~= "gemm_mma" then kernel:specialize(dt) end
    end
  end
  return k
end

M.TILES = G.TILES
M.work = G.work
M.mma_takes = G.mma_takes

-- The launch of C = op(A) op(B) with epilogue epi on stream s: nn_gemm.lua's M.gemm (o: bias,
-- mask, ones, sms, work, mma).
M.gemm = G.gemm

-- The same product through cujit's own GEMM, cuda.gemm (the epilogue bits as M.gemm's; bias and
-- mask are used only where their bit is set): on an H200 its tensor-core path (wgmma fed by TMA)
-- runs f16 and bf16 products whose shapes fit it, its SIMT kernel the rest, on every device.
function M.library_gemm(s, A, B, C, bias, mask, ta, tb, epi)
  cuda.gemm(A, B, C, {trans_a = ta == 1, trans_b = tb == 1, relu = epi & 2 ~= 0,
                      bias = epi & 1 ~= 0 and bias or nil,
                      relu_mask = epi & 4 ~= 0 and mask or nil, stream = s})
end

-- The model ------------------------------------------------------------------------------------

local Net = {}
Net.__index = Net

-- A multilayer perceptron: sizes = {784, 128, 128, 10}, dtype (f16, bf16, f32 or f64), batch,
-- optimizer ("sgd" with lr and momentum, or "adam" with lr), mean and std of the pixels (the
-- inputs are normalised by them), seed (He initialisation: N(0, 2 / fan_in) from cuda.random,
-- biases zero), loss_scale (f16: the starting scale, dynamic), max_steps (batches per epoch), sms
-- (for the tile choice), gemm ("nn", the default: this file's GEMM; "library": cuda.gemm; "tensor":
-- cuda.gemm for the products its tensor cores take, this file's SIMT GEMM for the rest; "mma":
-- this file's GEMM for every product, f16 and bf16 on its tensor-core kernel, gemm_mma, where
-- compiled; "auto": cuda.gemm's tensor cores for products of at least M.TENSOR_MIN_MACS
-- multiply-adds that they take, the rest as "mma"; Net:gemm_for). f16 and
-- bf16 nets keep f32 master weights and a working copy in their dtype; f16's gradients are
-- loss-scaled (bf16 has f32's range and needs no scale). The training recipe's parts, all off by
-- default: weight_decay (added
-- to the gradient, as PyTorch's optimisers do), schedule = "cosine" (the learning rate decays
-- to 0 by a cosine over the last decay_steps of total_steps, all of them by default; otherwise
-- constant), warmup (steps of linear warm-up), shift (the
-- augmentation's radius in pixels, the images `width` pixels a row, 28 by default; the moves
-- are the codes in the data's `shifts`, nn_host.shift_codes). grad: the array the gradients are
-- to live in (M.layout's size, the net's dtype; a data-parallel trainer's slice), else the net's.
-- pdl = true launches every kernel of a step with programmatic dependent launch (each may start
-- while the one before it ends; G.ENTRY): a GPU of sm_90 or newer (cujit refuses it on older
-- ones) or the CPU device (where it changes nothing).
-- Layer l's weights are stored fan_in x fan_out, so the forward pass is X * W.
function M.net(k, cfg)
  local self = setmetatable({k = k, sizes = cfg.sizes, dtype = cfg.dtype, batch = cfg.batch,
                             lr = cfg.lr, momentum = cfg.momentum, sms = cfg.sms,
                             optimizer = cfg.optimizer or "sgd", mean = cfg.mean or 0,
                             std = cfg.std or 1, weight_decay = cfg.weight_decay or 0,
                             schedule = cfg.schedule or "constant", warmup = cfg.warmup or 0,
                             total_steps = cfg.total_steps or 0, shift = cfg.shift or 0,
                             decay_steps = cfg.decay_steps or cfg.total_steps or 0,
                             width = cfg.width or 28, gemm = cfg.gemm or "nn",
                             pdl = cfg.pdl or nil}, Net)
  local gemms = {nn = true, library = true, tensor = true, auto = true, mma = true}
  if not gemms[self.gemm] then
    error("gemm " .. tostring(self.gemm) .. " is not nn, library, tensor, auto or mma", 2)
  end
  if cfg.pdl ~= nil and type(cfg.pdl) ~= "boolean" then
    error("pdl must be true or false, not " .. tostring(cfg.pdl), 2)
  end
  if self.schedule ~= "constant" and self.schedule ~= "cosine" then
    error("schedule " .. tostring(self.schedule) .. " is not constant or cosine", 2)
  end
  if self.shift > 0 and cfg.sizes[1] % self.width ~= 0 then
    error(string.format("shift: %d inputs are not rows of %d pixels (set width)", cfg.sizes[1],
                        self.width), 2)
  end
  local dt, f16 = cfg.dtype, cfg.dtype == "f16"
  local low = f16 or dt == "bf16" -- a working copy in dt beside the f32 master
  -- Every parameter lives in one array per role (master, working copy, gradient, the
  -- optimiser's m1 and m2) at its offset (M.layout): one kernel updates them all. A
  -- parameter's arrays are views of them. cfg.grad, when given, is the gradients' array (a
  -- data-parallel trainer's slice of its all-reduce buffer).
  local layout, total = M.layout(cfg.sizes)
  local master = cuda.zeros(total, dt == "f64" and "f64" or "f32")
  local flat = {master = master, w = low and cuda.device_array(total, dt) or master,
                grad = cfg.grad or cuda.zeros(total, dt), m1 = cuda.zeros(total, "f32"),
                m2 = self.optimizer == "adam" and cuda.zeros(total, "f32") or nil}
  if flat.grad.size ~= total or flat.grad.dtype ~= dt then
    error(string.format("grad: %d %s values given, the net has %d %s", flat.grad.size,
                        flat.grad.dtype, total, dt), 2)
  end
  local function view(a, p) return a:slice(p.offset + 1, p.offset + p.size):reshape(p.shape) end
  self.flat, self.layers = flat, {}
  for l = 1, #cfg.sizes - 1 do
    local L = {fin = cfg.sizes[l], fout = cfg.sizes[l + 1], params = {}}
    for _, p in ipairs(layout[l]) do
      local P = {name = p.name, master = view(master, p), w = view(flat.w, p),
                 grad = view(flat.grad, p), velocity = view(flat.m1, p),
                 m2 = flat.m2 and view(flat.m2, p) or nil}
      -- f64 nets are for gradient checks: their master is their weights, never updated
      if p.name == "W" then cuda.random.normal(P.master, cfg.seed + l, 0, math.sqrt(2 / L.fin)) end
      L.params[#L.params + 1] = P
    end
    self.layers[l] = L
  end
  if low then k.round_to[{blocks(total, 256, 1024), 256}](master, flat.w, total) end
  self.amp = cuda.to_device({f16 and (cfg.loss_scale or 1024) or 1, 0, 0}, "f32")
  self.flag = cuda.zeros(1, "i32")
  self.state = cuda.zeros(1, "i32") -- the batch within the epoch
  self.clock = cuda.zeros(1, "i32") -- steps taken (Adam's t, the schedule's)
  self.rate = cuda.zeros(1, "f32") -- the last step's learning rate (the update kernel's)
  self.stats = cuda.zeros(2 * math.max(cfg.max_steps or 1, 1), "f64")
  self.parts = cuda.zeros(2 * M.XENT_BLOCKS, "f64") -- the loss's sums per block
  self.xent_lanes = M.xent_lanes(self.layers[#self.layers].fout, M.XENT_BLOCK) -- its lanes a row
  -- blocks finished, the loss's and the update's (0 between launches): views made once, not per step
  local done = cuda.zeros(2, "i32")
  self.xent_done, self.update_done = done:slice(1, 1), done:slice(2, 2)
  self.ws = self:workspace(cfg.batch)
  -- split k's room: 8 splits of the largest product of a step, a counter per 32 x 32 tile
  local entries, tiles = 0, 0
  for l, L in ipairs(self.layers) do
    for _, mn in ipairs({{cfg.batch, L.fout}, {L.fin + 1, L.fout}, {cfg.batch, L.fin}}) do
      entries = math.max(entries, mn[1] * mn[2])
      tiles = math.max(tiles, ((mn[1] + 31) // 32) * ((mn[2] + 31) // 32))
    end
  end
  self.work = dt ~= "f64" and M.work(8 * entries, tiles) or nil
  return self
end

-- Where each parameter of a net of these layer sizes lives in the net's flat arrays: layout[l]
-- = {{name = "W", shape = {fan_in, fan_out}, offset, size}, {name = "b", ...}}, each offset a
-- multiple of 64 elements (so that every parameter starts 128-byte aligned); and the arrays' size.
function M.layout(sizes)
  local layout, total = {}, 0
  for l = 1, #sizes - 1 do
    layout[l] = {}
    for _, p in ipairs({{"W", {sizes[l], sizes[l + 1]}}, {"b", {sizes[l + 1]}}}) do
      local size = p[2][1] * (p[2][2] or 1)
      layout[l][#layout[l] + 1] = {name = p[1], shape = p[2], offset = total, size = size}
      total = total + (size + 63) // 64 * 64
    end
  end
  return layout, total
end

M.XENT_BLOCKS = 64 -- the loss kernel's blocks at most, of M.XENT_BLOCK threads
M.XENT_BLOCK = 128

-- The lanes of the loss kernel's group for a row of `classes` logits in blocks of `block` threads
-- (its `lanes` argument): the smallest power of two >= classes, at most 32; 1 unless the blocks
-- are whole warps (a group must lie in one warp).
function M.xent_lanes(classes, block)
  if block % 32 ~= 0 then return 1 end
  local g = 1
  while g < classes and g < 32 do g = g * 2 end
  return g
end

-- Activations and their gradients for `rows` rows.
function Net:workspace(rows)
  local ws = {rows = rows, x = cuda.zeros({rows, self.sizes[1]}, self.dtype),
              y = cuda.zeros(rows, "i32"), h = {}, dz = {}}
  for l = 1, #self.layers do
    ws.h[l] = cuda.zeros({rows, self.layers[l].fout}, self.dtype) -- after ReLU (logits for the last)
    ws.dz[l] = cuda.zeros({rows, self.layers[l].fout}, self.dtype)
  end
  return ws
end

-- The smallest product "auto" sends to cuda.gemm's tensor cores: their kernel's persistent
-- pipeline takes about 7 us to start whatever the size (an H200), and runs the MLP's first-layer
-- products at batch 1024 (about 2^26.6 multiply-adds) on 7-8 blocks of 128 x 128. On an H100 (6
-- Dec, bf16) this file's tensor-core kernel ran them faster, unsplit: X*W1 in 7.8 us in a graph
-- against cuda.gemm's 14.4 under ncu (about 1.5 us more than in a graph), X^T*dZ1 in 10.9 against
-- 14.0 plus 3.9 for the bias gradient's column sums. So none of the MLP's products goes there.
M.TENSOR_MIN_MACS = 1 << 28

-- The GEMM the net runs C = op(A) op(B) (m x n, inner size kk) on: "library" (cuda.gemm), "mma"
-- (this file's tensor-core kernel) or "nn" (this file's SIMT one). "tensor" and "auto" ask
-- cuda.gemm which kernel it would run (cuda.gemm_kernel) and take it only for its tensor cores:
-- its SIMT kernel has no split k, so the skinny products (the ten-wide last layer's) are faster
-- on this file's GEMM. "mma" and "auto" run this file's products of f16 and bf16 on its
-- tensor-core kernel where it is compiled (a GPU of sm_80 or later; elsewhere the SIMT one): on
-- an H100 it ran each of the MLP's products below M.TENSOR_MIN_MACS faster than the SIMT kernel
-- in f32 or bf16, except the first layer's at batch 128 (10.6 against 9.0 us), and the MLP's bf16
-- epochs at batch 128 in 1.79 ms against 1.92 on the SIMT kernel (6 Dec).
function Net:gemm_for(s, A, B, C, m, n, kk, ta, tb)
  if self.gemm == "library" then return "library" end
  local own = (self.gemm == "mma" or self.gemm == "auto") and G.mma_takes(self.k, C.dtype)
              and "mma" or "nn"
  if self.gemm == "nn" or self.gemm == "mma" then return own end
  if self.gemm == "auto" and m * n * kk < M.TENSOR_MIN_MACS then return own end
  local kernel = cuda.gemm_kernel(A, B, C, {trans_a = ta == 1, trans_b = tb == 1, stream = s})
  return kernel == "tensor" and "library" or own
end

-- C = op(A) op(B) with epilogue epi (bits as M.gemm's) on the net's GEMM (Net:gemm_for).
function Net:product(s, A, B, C, bias, mask, m, n, kk, ta, tb, epi)
  local gemm = self:gemm_for(s, A, B, C, m, n, kk, ta, tb)
  if gemm == "library" then
    M.library_gemm(s, A, B, C, bias, mask, ta, tb, epi)
  else
    M.gemm(self.k, s, A, B, C, m, n, kk, ta, tb, epi,
           {bias = bias, mask = mask, sms = self.sms, work = self.work, mma = gemm == "mma",
            pdl = self.pdl})
  end
end

-- Issues the forward pass of ws.x on stream s, then the loss (into stats at the device's step)
-- and, with want_grad, the loss gradient.
function Net:forward(ws, s, want_grad, stats, state)
  local k, n = self.k, #self.layers
  local input = ws.x
  for l = 1, n do
    local L = self.layers[l]
    self:product(s, input, L.params[1].w, ws.h[l], L.params[2].w, nil, ws.rows, L.fout, L.fin, 0,
                 0, l < n and 3 or 1)
    input = ws.h[l]
  end
  k.xent[{blocks(ws.rows * self.xent_lanes, M.XENT_BLOCK, M.XENT_BLOCKS), M.XENT_BLOCK, stream = s,
          pdl = self.pdl}](
    ws.h[n], ws.y, ws.dz[n], self.amp, stats or self.stats, state or self.state, self.parts,
    self.xent_done, ws.rows, self.layers[n].fout, self.xent_lanes, want_grad and 1 or 0)
end

-- Issues the backward pass (after forward with want_grad): every parameter's gradient. A layer's
-- weight and bias gradients come from one product, dW = X^T dZ with a row of ones appended to
-- X^T, whose output row is db = 1^T dZ (M.gemm's epilogue bit 8), unless cuda.gemm runs it.
function Net:backward(ws, s)
  local k = self.k
  for l = #self.layers, 1, -1 do
    local L = self.layers[l]
    local W, b = L.params[1], L.params[2]
    local input = l > 1 and ws.h[l - 1] or ws.x
    local gemm = self:gemm_for(s, input, ws.dz[l], W.grad, L.fin, L.fout, ws.rows, 1, 0)
    if gemm == "library" then
      M.library_gemm(s, input, ws.dz[l], W.grad, nil, nil, 1, 0, 0)
      -- 32 rows of lanes a block, each lane walking rows / 32 rows (with 8, ncu timed 16 us at
      -- batch 1024 on an H200; the step's time did not move measurably with 32)
      k.colsum[{grid = blocks(L.fout, 32), block = {32, 32}, stream = s, pdl = self.pdl}](
        ws.dz[l], b.grad, ws.rows, L.fout)
    else
      M.gemm(k, s, input, ws.dz[l], W.grad, L.fin, L.fout, ws.rows, 1, 0, 8,
             {ones = b.grad, sms = self.sms, work = self.work, mma = gemm == "mma",
              pdl = self.pdl})
    end
    if l > 1 then                                                         -- dZ' = dZ W^T . [H > 0]
      self:product(s, ws.dz[l], W.w, ws.dz[l - 1], nil, ws.h[l - 1], ws.rows, L.fin, L.fout, 0, 1,
                   4)
    end
  end
end

-- Issues the update of every parameter (for f16, after the overflow check of every gradient),
-- which ends the step (the batch counter, the step clock, the loss scale): two kernels for f16,
-- one otherwise.
function Net:update(s)
  local k, f = self.k, self.flat
  if self.dtype == "f64" then error("f64 nets are for gradient checks; train in f32 or f16", 2) end
  local n = f.master.size
  if self.dtype == "f16" then
    k.check_finite[{blocks(n, 256, 256), 256, stream = s, pdl = self.pdl}](f.grad, self.flag, n)
  end
  k.update[{blocks(n, 256, 1024), 256, stream = s, pdl = self.pdl}](
    f.master, f.w, f.grad, f.m1, f.m2 or f.m1, self.amp, self.flag, self.state, self.clock,
    self.rate, self.update_done, self.lr, self.warmup, self.total_steps, self.decay_steps,
    self.schedule == "cosine" and 1 or 0, self.weight_decay, self.momentum or 0, 0.9, 0.999,
    1e-8, self.optimizer == "adam" and 1 or 0, self.dtype == "f16" and 1 or 0, n)
end

-- One training step on the batch that data.order and the device's step counter name.
function Net:step(data, s)
  local ws = self.ws
  self.k.gather[{blocks(ws.rows * self.sizes[1], 256, 1024), 256, stream = s, pdl = self.pdl}](
    data.images, data.labels, data.order, data.shifts, self.state, ws.x, ws.y, ws.rows,
    self.sizes[1], self.width, self.shift, self.mean, 1 / self.std)
  self:forward(ws, s, true)
  self:backward(ws, s)
  self:update(s)
end

-- Loss and accuracy of the network on a whole data set (one batch of all its rows).
function Net:evaluate(data)
  local ws = self.eval_ws
  if not ws or ws.rows ~= data.n then
    ws = self:workspace(data.n)
    self.eval_ws = ws
    self.eval_stats, self.eval_state = cuda.zeros(2, "f64"), cuda.zeros(1, "i32")
  end
  self.k.gather[{blocks(data.n * self.sizes[1], 256, 1024), 256}](
    data.images, data.labels, data.order, data.shifts, self.eval_state, ws.x, ws.y, data.n,
    self.sizes[1], self.width, 0, self.mean, 1 / self.std)
  self:forward(ws, nil, false, self.eval_stats, self.eval_state)
  local st = self.eval_stats:copy_to_host()
  return st[1] / data.n, st[2] / data.n
end

-- The f32 master weights as nn_host.write_weights takes them: W1 (fan_in x fan_out), b1
-- (1 x fan_out), W2, b2, ... (call it before training for the initial weights).
function Net:weights()
  local tensors = {}
  for _, L in ipairs(self.layers) do
    for _, p in ipairs(L.params) do
      local host, values = p.master:copy_to_host(), {}
      for i = 1, p.master.size do values[i] = host[i] end -- flat, row-major
      tensors[#tensors + 1] = {rows = p.name == "W" and L.fin or 1, cols = L.fout, values = values}
    end
  end
  return tensors
end

M.Net = Net

-- Data on the device ---------------------------------------------------------------------------

-- A data set's bytes on the device (images and labels as u8 arrays), plus an i32 order array
-- and a u8 array of shift codes (zero: the augmentation's moves, per position of the order).
function M.upload(k, d)
  local function put(bytes)
    local dst = cuda.device_array(#bytes, "u8")
    local CHUNK = 1 << 16
    for at = 1, #bytes, CHUNK do
      local last = math.min(at + CHUNK - 1, #bytes)
      k.put_bytes[{blocks(last - at + 1, 256), 256}]({bytes:byte(at, last)}, dst, at - 1,
                                                     last - at + 1)
    end
    return dst
  end
  local order = {}
  for i = 1, d.n do order[i] = i - 1 end
  return {n = d.n, features = d.features, images = put(d.images), labels = put(d.labels),
          order = cuda.to_device(order, "i32"), shifts = cuda.zeros(d.n, "u8")}
end
-- Run as a script: compile the kernels for sm_90 in f64 (the gradient checks' type; mlp.lua's
-- compile-only run does f32 and f16).
if ... ~= "nn" then
  M.kernels({arch = "sm_90"}, {"f64"})
  print("nn.lua: kernels compiled for sm_90 (f64); the example is mlp.lua")
end

return M
