-- nn.lua -- the small neural-network module behind mlp.lua, its device side: the kernels (one
-- tiled GEMM for A*B, A^T*B and A*B^T with bias/ReLU/ReLU-mask epilogues and split k, a fused
-- softmax cross-entropy, column sums for bias gradients, SGD with momentum or Adam on f32 master
-- weights, loss scaling), a multilayer perceptron built from them, and the upload of a data set.
-- Every kernel is generic in its storage type T (f16, bf16, f32 or f64) and accumulates in float
-- (double for f64). A net's products run on this file's GEMM or, with gemm = "library", on cujit's
-- own (cuda.gemm: on an H200 its tensor-core path where the shapes fit), or with gemm = "tensor"
-- only for the products its tensor cores take ("auto": only those large enough to gain). The host side (readers, epoch order, command line, chart) is nn_host.lua.
-- Run as a script (`cujit nn.lua`, as ctest does) it only compiles its kernels for sm_90.
local cuda = require "cujit"

local M = {}

-- Blocks of b threads covering n, at most cap.
local function blocks(n, b, cap)
  return math.max(1, math.min((n + b - 1) // b, cap or 1 << 20))
end

-- Kernels -------------------------------------------------------------------------------------

local PREAMBLE = [==[
#include <cujit/bf16.h>
#include <cujit/half.h>
#include <cujit/reduce.h>
template <class T> struct acc_of { typedef float type; };
template <> struct acc_of<double> { typedef double type; };
// Storage -> accumulator (f16, bf16 and f32 widen to float, f64 stays double).
template <class T> __device__ __forceinline__ typename acc_of<T>::type widen(T x) {
  return (typename acc_of<T>::type)cujit::to_float(x);
}
// The GEMM's epilogue on entry (r, c) of C: bit 1 adds bias[c], bit 2 applies ReLU, bit 4 keeps
// the entry only where mask[r, c] > 0.
template <class T, class Acc>
__device__ __forceinline__ T epilogue(Acc v, const T *bias, const T *mask, int r, int c, int N,
                                      int epi) {
  if (epi & 1) v += widen(bias[c]);
  if (epi & 2) v = v > Acc(0) ? v : Acc(0);
  if ((epi & 4) && !(widen(mask[(size_t)r * N + c]) > Acc(0))) v = 0;
  return T(v);
}
]==]

-- The GEMM: C[M,N] = op(A)[M,K] * op(B)[K,N], op = transpose when ta/tb is 1 (A stored K x M,
-- B stored N x K), everything row-major. Epilogue bits: 1 adds bias[col], 2 applies ReLU, 4 keeps
-- only entries where mask[row, col] > 0 (the ReLU backward). A block computes a BM x BN tile of C,
-- each thread TM x TN entries in groups of up to 4 adjacent rows/columns (so shared-memory reads
-- vectorise and do not conflict); tiles of A and B go through registers into a double-buffered
-- shared memory, the next one loading while the current one is multiplied. Out-of-range loads read
-- zeros, so any M, N, K works.
local GEMM_CORE = [==[
template <int ta, int tb, class T>
__device__ __forceinline__ void gemm_tile(const T *A, const T *B, T *C, const T *bias, const T *mask,
                                          int M, int N, int K, int epi, float *partial,
                                          int splits,
                                          typename acc_of<T>::type (&As)[2][BK][BM + 4],
                                          typename acc_of<T>::type (&Bs)[2][BK][BN + 4]) {
  typedef typename acc_of<T>::type Acc;
  constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY;
  constexpr int GM = TM < 4 ? TM : 4, GN = TN < 4 ? TN : 4;
  constexpr int LA = BM * BK / NT, LB = BN * BK / NT;
  static_assert(LA * NT == BM * BK && LB * NT == BN * BK, "tile loads must divide evenly");
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  Acc acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0;
  // The next tile waits in registers as loaded (T) and is widened when stored: widened at the
  // load, a conversion would wait for each load in turn (8 global latencies a step, one after
  // another: bf16 products ran 30-65 % longer than f32 ones on an H200), where raw values let
  // every load of the step be in flight at once, behind the step's FMAs.
  T ra[LA], rb[LB];
  auto load = [&](int k0) {
#pragma unroll
    for (int l = 0; l < LA; l++) {
      const int e = tid + l * NT;
      const int m = ta ? e % BM : e / BK, k = ta ? e / BM : e % BK;
      const int gm = row0 + m, gk = k0 + k;
      ra[l] = (gm < M && gk < K) ? A[ta ? (size_t)gk * M + gm : (size_t)gm * K + gk]
                                 : cujit::from_float<T>(0.0f);
    }
#pragma unroll
    for (int l = 0; l < LB; l++) {
      const int e = tid + l * NT;
      const int n = tb ? e / BK : e % BN, k = tb ? e % BK : e / BN;
      const int gn = col0 + n, gk = k0 + k;
      rb[l] = (gn < N && gk < K) ? B[tb ? (size_t)gn * K + gk : (size_t)gk * N + gn]
                                 : cujit::from_float<T>(0.0f);
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int l = 0; l < LA; l++) {
      const int e = tid + l * NT;
      As[buf][ta ? e / BM : e % BK][ta ? e % BM : e / BK] = widen(ra[l]);
    }
#pragma unroll
    for (int l = 0; l < LB; l++) {
      const int e = tid + l * NT;
      Bs[buf][tb ? e % BK : e / BN][tb ? e / BK : e % BN] = widen(rb[l]);
    }
  };
  // Split k (splits > 1): block z sums k in [kb, ke), a whole number of BK steps, into partial.
  const int chunk = ((K + splits - 1) / splits + BK - 1) / BK * BK;
  const int kb = blockIdx.z * chunk, ke = min(K, kb + chunk);
  load(kb);
  store(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = kb; k0 < ke; k0 += BK) {
    const bool more = k0 + BK < ke;
    if (more) load(k0 + BK);
#pragma unroll UNROLL
    for (int k = 0; k < BK; k++) {
      Acc a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i++) a[i] = As[buf][k][(i / GM) * (BM / (TM / GM)) + ty * GM + i % GM];
#pragma unroll
      for (int j = 0; j < TN; j++) b[j] = Bs[buf][k][(j / GN) * (BN / (TN / GN)) + tx * GN + j % GN];
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] += a[i] * b[j];
    }
    if (more) store(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }
#pragma unroll
  for (int i = 0; i < TM; i++) {
    const int r = row0 + (i / GM) * (BM / (TM / GM)) + ty * GM + i % GM;
    if (r >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; j++) {
      const int c = col0 + (j / GN) * (BN / (TN / GN)) + tx * GN + j % GN;
      if (c >= N) continue;
      if (splits > 1) partial[((size_t)blockIdx.z * M + r) * N + c] = (float)acc[i][j];
      else C[(size_t)r * N + c] = epilogue(acc[i][j], bias, mask, r, c, N, epi);
    }
  }
}
]==]

-- The transposes are template arguments (each of the four cases gets its own simple addressing;
-- as run-time branches they cost the large tile 50 more registers).
local GEMM_BODY = [==[
  typedef typename acc_of<T>::type Acc;
  __shared__ __align__(16) Acc As[2][BK][BM + 4]; // A's tile, transposed (k-major)
  __shared__ __align__(16) Acc Bs[2][BK][BN + 4];
  if (ta) {
    if (tb) gemm_tile<1, 1>(A, B, C, bias, mask, M, N, K, epi, partial, splits, As, Bs);
    else gemm_tile<1, 0>(A, B, C, bias, mask, M, N, K, epi, partial, splits, As, Bs);
  } else {
    if (tb) gemm_tile<0, 1>(A, B, C, bias, mask, M, N, K, epi, partial, splits, As, Bs);
    else gemm_tile<0, 0>(A, B, C, bias, mask, M, N, K, epi, partial, splits, As, Bs);
  }
]==]

local GEMM_SIGNATURE = "%s(const T *A, const T *B, T *C, const T *bias, const T *mask, int M, "
                       .. "int N, int K, int ta, int tb, int epi, float *partial, int splits)"

-- The two tile shapes: 128 x 128 (8 x 8 per thread) for large products, 32 x 32 (2 x 2 per
-- thread) for the MLP's small ones, where a large tile would leave most of the GPU idle. The
-- large one keeps its k loop rolled and 128 registers (ptxas: no spills), so two blocks fit on
-- an SM; unrolled, ptxas hoists the shared loads of all 8 steps into 167 registers (one block).
-- UNROLL and the tile sizes reach the kernel as -D macros.
M.TILES = {
  large = {BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, UNROLL = 1, registers = 128},
  small = {BM = 32, BN = 32, BK = 32, TM = 2, TN = 2, UNROLL = 8},
}

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
  -- scale is the loss scale amp[0]. One block; the loss sum and the count of right answers go to
  -- stats[2 * step] and stats[2 * step + 1] in a fixed order (no atomics: runs repeat exactly).
  xent = {"xent(const T *logits, const int *labels, T *dlogits, const float *amp, double *stats, "
          .. "const int *state, int rows, int classes, int want_grad)", [==[
  typedef typename acc_of<T>::type Acc;
  const Acc scale = want_grad ? Acc(amp[0]) / Acc(rows) : Acc(0);
  Acc loss = 0, right = 0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const T *z = logits + (size_t)r * classes;
    Acc top = widen(z[0]);
    int arg = 0;
    for (int c = 1; c < classes; c++) {
      const Acc v = widen(z[c]);
      if (v > top) top = v, arg = c;
    }
    Acc sum = 0;
    for (int c = 0; c < classes; c++) sum += exp(widen(z[c]) - top);
    const int y = labels[r];
    loss += log(sum) - (widen(z[y]) - top);
    right += arg == y ? Acc(1) : Acc(0);
    if (want_grad)
      for (int c = 0; c < classes; c++)
        dlogits[(size_t)r * classes + c] =
          T((exp(widen(z[c]) - top) / sum - (c == y ? Acc(1) : Acc(0))) * scale);
  }
  loss = cujit::block_sum(loss);
  right = cujit::block_sum(right);
  if (threadIdx.x == 0) stats[2 * state[0]] = loss, stats[2 * state[0] + 1] = right;
]==]},
  -- db[c] = sum over rows of dz[r, c]: blocks of 32 columns x 8 row lanes, summed in shared memory.
  colsum = {"colsum(const T *dz, T *db, int rows, int cols)", [==[
  typedef typename acc_of<T>::type Acc;
  __shared__ Acc part[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  Acc s = 0;
  if (c < cols)
    for (int r = threadIdx.y; r < rows; r += 8) s += widen(dz[(size_t)r * cols + c]);
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    for (int k = 1; k < 8; k++) s += part[k][threadIdx.x];
    db[c] = T(s);
  }
]==]},
  -- The end of a split-k GEMM: C = epilogue(sum of the splits' partial products), in a fixed
  -- order (no atomics: runs repeat exactly).
  splitk_reduce = {"splitk_reduce(const float *partial, T *C, const T *bias, const T *mask, "
                   .. "int M, int N, int splits, int epi)", [==[
  const long long total = (long long)M * N;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    float v = 0.0f;
    for (int z = 0; z < splits; z++) v += partial[z * total + i];
    C[i] = epilogue(v, bias, mask, (int)(i / N), (int)(i % N), N, epi);
  }
]==]},
  -- Sets *flag when any gradient is infinite or NaN (an overflow of the scaled f16 gradients).
  check_finite = {"check_finite(const T *g, int *flag, int n)", [==[
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (!isfinite(widen(g[i]))) *flag = 1;
]==]},
  -- The step's learning rate into rate[0] (nn_host.lr_at, in f32): lr, times a linear warm-up
  -- over the first `warmup` steps, times (cosine = 1) a cosine decay to 0 over the last `decay`
  -- of the run's `total` steps (1 before them); t = clock[0], the steps taken.
  schedule = {"schedule(const int *clock, float *rate, float lr, int warmup, int total, "
              .. "int decay, int cosine)", [==[
  const float t = (float)clock[0], start = (float)(total - decay);
  float f = 1.0f;
  if (cosine && decay > 0 && t > start) f = 0.5f * (1.0f + cospif((t - start) / (float)decay));
  if (warmup > 0 && t < (float)warmup) f *= (t + 1.0f) / (float)warmup;
  rate[0] = lr * f;
]==]},
  -- SGD with momentum and weight decay (PyTorch's: g += weight_decay p; v = momentum v + g;
  -- p -= lr v) on the f32 master weights, the gradient unscaled by amp[0], lr = rate[0]; w gets
  -- the master rounded to T (w may be master itself). Skipped when *flag says the gradients
  -- overflowed.
  sgd = {"sgd(float *master, T *w, const T *grad, float *velocity, const float *amp, "
         .. "const int *flag, const float *rate, float weight_decay, float momentum, int n)", [==[
  if (*flag) return;
  const float inv = 1.0f / amp[0], lr = rate[0];
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float v = momentum * velocity[i] + (float)widen(grad[i]) * inv + weight_decay * master[i];
    velocity[i] = v;
    const float p = master[i] - lr * v;
    master[i] = p;
    w[i] = T(p);
  }
]==]},
  -- Adam (PyTorch's torch.optim.Adam, its weight decay added to the gradient), t = clock[0] + 1
  -- steps taken; otherwise as sgd.
  adam = {"adam(float *master, T *w, const T *grad, float *m1, float *m2, const float *amp, "
          .. "const int *flag, const int *clock, const float *rate, float weight_decay, "
          .. "float beta1, float beta2, float eps, int n)", [==[
  if (*flag) return;
  const float inv = 1.0f / amp[0], t = (float)(clock[0] + 1), lr = rate[0];
  const float c1 = 1.0f - powf(beta1, t), c2 = sqrtf(1.0f - powf(beta2, t));
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float g = (float)widen(grad[i]) * inv + weight_decay * master[i];
    const float a = beta1 * m1[i] + (1.0f - beta1) * g, b = beta2 * m2[i] + (1.0f - beta2) * g * g;
    m1[i] = a, m2[i] = b;
    const float p = master[i] - (lr / c1) * a / (sqrtf(b) / c2 + eps);
    master[i] = p;
    w[i] = T(p);
  }
]==]},
  -- The end of a step: the batch counter and the step clock move on; with dynamic loss scaling
  -- the scale halves on an overflow and doubles after 1000 good steps (amp = {scale, good steps,
  -- skipped steps}). A skipped step does not count for Adam's clock.
  advance = {"advance(float *amp, int *flag, int *state, int *clock, int dynamic)", [==[
  state[0] += 1;
  if (!*flag) clock[0] += 1;
  if (dynamic) {
    if (*flag) amp[0] *= 0.5f, amp[1] = 0.0f, amp[2] += 1.0f;
    else if ((amp[1] += 1.0f) >= 1000.0f) amp[0] *= 2.0f, amp[1] = 0.0f;
  }
  *flag = 0;
]==]},
}

-- Compiles every kernel (options as cuda.jit takes them; arch = "sm_90" compiles without a GPU).
-- The generic ones are compiled for each dtype in `dtypes` now, so that none compiles in the
-- middle of a timed run.
function M.kernels(options, dtypes)
  local k = {}
  local function with(extra)
    local o = {preamble = PREAMBLE}
    for key, v in pairs(options or {}) do o[key] = v end
    for key, v in pairs(extra or {}) do o[key] = v end
    return o
  end
  for name, def in pairs(KERNELS) do k[name] = cuda.jit(def[1], def[2], with()) end
  for size, t in pairs(M.TILES) do
    local defines = {} -- a sorted list, so the cache key is the same from run to run
    for name, v in pairs(t) do
      if name:match("^%u+$") then defines[#defines + 1] = name .. "=" .. v end
    end
    table.sort(defines)
    k["gemm_" .. size] = cuda.jit(string.format(GEMM_SIGNATURE, "gemm_" .. size), GEMM_BODY,
                                  with({defines = defines, preamble = PREAMBLE .. GEMM_CORE,
                                        flags = t.registers and {"-maxrregcount=" .. t.registers}}))
  end
  for _, dt in ipairs(dtypes or {}) do
    for _, kernel in pairs(k) do
      if #kernel:type_vars() > 0 then kernel:specialize(dt) end
    end
  end
  return k
end

-- The launch of C = op(A) op(B) (+ epilogue) on `stream`, with the tile shape that fills the GPU:
-- large tiles once there are at least `sms` of them. With small tiles that still leave SMs idle
-- and a long k (the first layer's 784, weight gradients at batch 1024), k is split over up to 8
-- blocks (each of 4 or more BK steps) when `partial` (an f32 array) has room for the partial
-- products, and a final kernel sums them with the epilogue: a long k loop of few
-- blocks is bound by the latency of its loads, not by arithmetic.
function M.gemm(k, s, A, B, C, bias, mask, m, n, kk, ta, tb, epi, sms, partial)
  sms = sms or 132
  local t = M.TILES.large
  local size = "large"
  if ((m + t.BM - 1) // t.BM) * ((n + t.BN - 1) // t.BN) < sms then
    t, size = M.TILES.small, "small"
  end
  local gx, gy = (n + t.BN - 1) // t.BN, (m + t.BM - 1) // t.BM
  local splits = 1
  if partial and size == "small" and C.dtype ~= "f64" then
    local steps = (kk + t.BK - 1) // t.BK
    splits = math.max(1, math.min(8, (2 * sms) // (gx * gy), steps // 4, partial.size // (m * n)))
    local chunk = ((kk + splits - 1) // splits + t.BK - 1) // t.BK * t.BK
    splits = (kk + chunk - 1) // chunk -- no split left without work
  end
  k.no_partial = k.no_partial or cuda.zeros(1, "f32")
  local threads = (t.BM // t.TM) * (t.BN // t.TN)
  k["gemm_" .. size][{grid = {gx, gy, splits}, block = threads, stream = s}](
    A, B, C, bias, mask, m, n, kk, ta, tb, epi, partial or k.no_partial, splits)
  if splits > 1 then
    k.splitk_reduce[{blocks(m * n, 256, 1024), 256, stream = s}](partial, C, bias, mask, m, n,
                                                                  splits, epi)
  end
end

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
-- cuda.gemm for the products its tensor cores take, this file's GEMM for the rest; "auto": the
-- same, but only for products of at least M.TENSOR_MIN_MACS multiply-adds). f16 and
-- bf16 nets keep f32 master weights and a working copy in their dtype; f16's gradients are
-- loss-scaled (bf16 has f32's range and needs no scale). The training recipe's parts, all off by
-- default: weight_decay (added
-- to the gradient, as PyTorch's optimisers do), schedule = "cosine" (the learning rate decays
-- to 0 by a cosine over the last decay_steps of total_steps, all of them by default; otherwise
-- constant), warmup (steps of linear warm-up), shift (the
-- augmentation's radius in pixels, the images `width` pixels a row, 28 by default; the moves
-- are the codes in the data's `shifts`, nn_host.shift_codes).
-- Layer l's weights are stored fan_in x fan_out, so the forward pass is X * W.
function M.net(k, cfg)
  local self = setmetatable({k = k, sizes = cfg.sizes, dtype = cfg.dtype, batch = cfg.batch,
                             lr = cfg.lr, momentum = cfg.momentum, sms = cfg.sms,
                             optimizer = cfg.optimizer or "sgd", mean = cfg.mean or 0,
                             std = cfg.std or 1, weight_decay = cfg.weight_decay or 0,
                             schedule = cfg.schedule or "constant", warmup = cfg.warmup or 0,
                             total_steps = cfg.total_steps or 0, shift = cfg.shift or 0,
                             decay_steps = cfg.decay_steps or cfg.total_steps or 0,
                             width = cfg.width or 28, gemm = cfg.gemm or "nn"}, Net)
  local gemms = {nn = true, library = true, tensor = true, auto = true}
  if not gemms[self.gemm] then
    error("gemm " .. tostring(self.gemm) .. " is not nn, library, tensor or auto", 2)
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
  self.layers = {}
  for l = 1, #cfg.sizes - 1 do
    local fin, fout = cfg.sizes[l], cfg.sizes[l + 1]
    local L = {fin = fin, fout = fout, params = {}}
    for _, p in ipairs({{"W", {fin, fout}}, {"b", fout}}) do
      -- f64 nets are for gradient checks: their master is their weights, never updated
      local master = cuda.zeros(p[2], dt == "f64" and "f64" or "f32")
      if p[1] == "W" then
        cuda.random.normal(master, cfg.seed + l, 0, math.sqrt(2 / fin))
      end
      local w = master
      if low then -- the working copy, rounded from the master
        w = cuda.device_array(p[2], dt)
        k.sgd[{blocks(master.size, 256), 256}](master, w, cuda.zeros(p[2], dt),
                                              cuda.zeros(p[2], "f32"),
                                              cuda.to_device({1, 0, 0}, "f32"),
                                              cuda.zeros(1, "i32"), cuda.zeros(1, "f32"), 0, 0,
                                              master.size)
      end
      L.params[#L.params + 1] = {name = p[1], master = master, w = w,
                                 grad = cuda.zeros(p[2], dt), velocity = cuda.zeros(p[2], "f32"),
                                 m2 = self.optimizer == "adam" and cuda.zeros(p[2], "f32") or nil}
    end
    self.layers[l] = L
  end
  self.amp = cuda.to_device({f16 and (cfg.loss_scale or 1024) or 1, 0, 0}, "f32")
  self.flag = cuda.zeros(1, "i32")
  self.state = cuda.zeros(1, "i32") -- the batch within the epoch
  self.clock = cuda.zeros(1, "i32") -- steps taken (Adam's t, the schedule's)
  self.rate = cuda.zeros(1, "f32") -- this step's learning rate (the schedule kernel's)
  self.stats = cuda.zeros(2 * math.max(cfg.max_steps or 1, 1), "f64")
  self.dummy = cuda.zeros(1, dt)
  self.ws = self:workspace(cfg.batch)
  -- room for 8 splits of the largest product of a step (f64 nets never split)
  local largest = 0
  for l, L in ipairs(self.layers) do
    largest = math.max(largest, cfg.batch * L.fout, L.fin * L.fout, l > 1 and cfg.batch * L.fin or 0)
  end
  self.partial = dt ~= "f64" and cuda.zeros(8 * largest, "f32") or nil
  return self
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

-- The smallest product "auto" sends to the tensor cores: their kernel's persistent pipeline
-- takes about 7 us to start whatever the size (an H200), in which this file's split-k kernel
-- finishes products of fewer multiply-adds (the MLP's at batch 128, and its 128 x 128 layer's at
-- 1024: 1024 x 128 x 128 is 2^24), while its first layer's products at batch 1024 (about 2^26.6)
-- take half the time there.
M.TENSOR_MIN_MACS = 1 << 25

-- The GEMM the net runs C = op(A) op(B) (m x n, inner size kk) on: "library" (cuda.gemm) or "nn"
-- (this file's). "tensor" and "auto" ask cuda.gemm which kernel it would run (cuda.gemm_kernel)
-- and take it only for its tensor cores: its SIMT kernel has no split k, so the skinny products
-- (the ten-wide last layer's) are faster on this file's GEMM.
function Net:gemm_for(s, A, B, C, m, n, kk, ta, tb)
  if self.gemm == "library" then return "library" end
  if self.gemm == "nn" or self.gemm == "auto" and m * n * kk < M.TENSOR_MIN_MACS then return "nn" end
  local kernel = cuda.gemm_kernel(A, B, C, {trans_a = ta == 1, trans_b = tb == 1, stream = s})
  return kernel == "tensor" and "library" or "nn"
end

-- C = op(A) op(B) with epilogue epi (M.gemm's arguments) on the net's GEMM (Net:gemm_for).
function Net:product(s, A, B, C, bias, mask, m, n, kk, ta, tb, epi)
  if self:gemm_for(s, A, B, C, m, n, kk, ta, tb) == "library" then
    M.library_gemm(s, A, B, C, bias, mask, ta, tb, epi)
  else
    M.gemm(self.k, s, A, B, C, bias, mask, m, n, kk, ta, tb, epi, self.sms, self.partial)
  end
end

-- Issues the forward pass of ws.x on stream s, then the loss (into stats at the device's step)
-- and, with want_grad, the loss gradient.
function Net:forward(ws, s, want_grad, stats, state)
  local k, n = self.k, #self.layers
  local input = ws.x
  for l = 1, n do
    local L = self.layers[l]
    self:product(s, input, L.params[1].w, ws.h[l], L.params[2].w, self.dummy, ws.rows, L.fout,
                 L.fin, 0, 0, l < n and 3 or 1)
    input = ws.h[l]
  end
  k.xent[{1, 256, stream = s}](ws.h[n], ws.y, ws.dz[n], self.amp, stats or self.stats,
                               state or self.state, ws.rows, self.layers[n].fout,
                               want_grad and 1 or 0)
end

-- Issues the backward pass (after forward with want_grad): every parameter's gradient.
function Net:backward(ws, s)
  local k = self.k
  for l = #self.layers, 1, -1 do
    local L = self.layers[l]
    local input = l > 1 and ws.h[l - 1] or ws.x
    self:product(s, input, ws.dz[l], L.params[1].grad, self.dummy, self.dummy, L.fin, L.fout,
                 ws.rows, 1, 0, 0)                                        -- dW = X^T dZ
    k.colsum[{grid = blocks(L.fout, 32), block = {32, 8}, stream = s}](ws.dz[l], L.params[2].grad,
                                                                       ws.rows, L.fout) -- db
    if l > 1 then                                                         -- dZ' = dZ W^T . [H > 0]
      self:product(s, ws.dz[l], L.params[1].w, ws.dz[l - 1], self.dummy, ws.h[l - 1], ws.rows,
                   L.fin, L.fout, 0, 1, 4)
    end
  end
end

-- Issues the update of every parameter (and, for f16, the overflow check first), then the end of
-- the step (the batch counter, the loss scale).
function Net:update(s)
  local k = self.k
  if self.dtype == "f64" then error("f64 nets are for gradient checks; train in f32 or f16", 2) end
  for _, L in ipairs(self.layers) do
    for _, p in ipairs(L.params) do
      local n = p.grad.size
      if self.dtype == "f16" then
        k.check_finite[{blocks(n, 256, 256), 256, stream = s}](p.grad, self.flag, n)
      end
    end
  end
  k.schedule[{1, 1, stream = s}](self.clock, self.rate, self.lr, self.warmup, self.total_steps,
                                 self.decay_steps, self.schedule == "cosine" and 1 or 0)
  for _, L in ipairs(self.layers) do
    for _, p in ipairs(L.params) do
      local n = p.grad.size
      if self.optimizer == "adam" then
        k.adam[{blocks(n, 256, 1024), 256, stream = s}](p.master, p.w, p.grad, p.velocity, p.m2,
                                                        self.amp, self.flag, self.clock, self.rate,
                                                        self.weight_decay, 0.9, 0.999, 1e-8, n)
      else
        k.sgd[{blocks(n, 256, 1024), 256, stream = s}](p.master, p.w, p.grad, p.velocity, self.amp,
                                                       self.flag, self.rate, self.weight_decay,
                                                       self.momentum, n)
      end
    end
  end
  k.advance[{1, 1, stream = s}](self.amp, self.flag, self.state, self.clock,
                                self.dtype == "f16" and 1 or 0)
end

-- One training step on the batch that data.order and the device's step counter name.
function Net:step(data, s)
  local ws = self.ws
  self.k.gather[{blocks(ws.rows * self.sizes[1], 256, 1024), 256, stream = s}](
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
