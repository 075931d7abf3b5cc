-- mlp.lua -- trains the 784-128-128-10 multilayer perceptron of the GPU tutorials on real digits,
-- with cujit kernels only (examples/nn.lua): a tiled GEMM with bias+ReLU fused into its epilogue,
-- a fused softmax cross-entropy, bias gradients by column sums, SGD with momentum (or Adam);
-- optionally in mixed precision (f16 or bf16 weights and activations, f32 accumulation and
-- master weights, f16 with a dynamic loss scale), whose products run on tensor cores on a GPU:
-- the large ones on cujit's own GEMM (cuda.gemm) where its tensor cores take them (an H200), the
-- rest on nn.lua's mma.sync kernel (--gemm-kernel says which GEMM). The training recipe
-- (docs/examples.md says why): inputs
-- standardised, SGD with momentum 0.9 and weight decay 5e-4, a learning rate of
-- 0.1 x (batch / 128)^(1/3) warmed up linearly over the first epoch, held, and decayed to 0 by a
-- cosine over the last 40 % of the run, every training image moved by a random shift of up to
-- 1 pixel each way (the same moves as the PyTorch twin's), the last batch of an epoch filled up
-- with the epoch's first images. The training step is issued either as plain launches per batch
-- or captured once as a CUDA graph and replayed (the batch counter lives on the device, so one
-- replay call runs a whole epoch). Prints loss and train/test accuracy per epoch, one RESULT
-- line per run, and writes a PNG chart of the curves.
--
--   cujit mlp.lua                           MNIST 5k (4,000 train / 1,000 test), 20 epochs,
--                                           f32, f16 and bf16, graph and launches, checked
--   cujit mlp.lua --data fashion --epochs 10 --batch 128,1024 --precision f32,bf16
--   cujit mlp.lua --data /path/to/idx/dir   original MNIST IDX files (train-images-idx3-ubyte...)
--   cujit mlp.lua --gemm                    the GEMMs' TFLOP/s at 4096^3 (--gemm-size) and the
--                                           MLP's shapes, per precision, nn.lua's and cuda.gemm
--   cujit mlp.lua --data synthetic          made-up digits (ten noisy prototypes, nn_host.lua):
--                                           no files needed
-- The data is fetched once by scripts/fetch_mnist.sh (never at run time). On the CPU device the
-- default run is small (1,000 images, one epoch) and, when the data is not there (CI), trains on
-- the synthetic digits instead, so that the whole example still runs; on a GPU missing data is
-- a skip (exit 77) naming the command that fetches it.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"
local nn = require "nn"
local H = require "nn_host"

local here = S.here()

-- On the CPU device (no GPU, or CUJIT_DEVICE=cpu) the default run is small: 1,000 images, one
-- epoch.
local info = not S.compile_only and cuda.device() or {}
local on_cpu = S.on_cpu

local SPEC = {
  data = "mnist5k", data_dir = here .. "../data", epochs = 20, batch = {128},
  precision = {"f32", "f16", "bf16"}, exec = {"graph", "launch"}, optimizer = "sgd", lr = 0,
  momentum = 0.9, weight_decay = 5e-4, schedule = "cosine", decay = 0.4, warmup = 1, shift = 1,
  seed = 1, train_limit = 0, chart = "", init_out = "", gemm = false, gemm_size = 4096,
  gemm_reps = 0, check = false, quiet = false, gemm_kernel = "auto", pdl = "off",
}
local USAGE = [==[
usage: cujit mlp.lua [--data mnist5k|fashion|synthetic|DIR] [--data-dir DIR] [--epochs N]
         [--batch N[,N...]] [--precision f32,f16,bf16] [--exec graph,launch] [--optimizer sgd|adam]
         [--lr X (default 0.1 x (batch/128)^(1/3) for sgd, 0.01 x (batch/1024)^(1/2) for adam)]
         [--momentum X (sgd)] [--weight-decay X] [--schedule cosine|constant]
         [--decay SHARE (the cosine's share of the run, at its end; 1 = all)] [--warmup EPOCHS]
         [--shift PIXELS] [--seed N] [--train-limit N] [--chart FILE.png] [--init-out FILE] [--gemm]
         [--gemm-size N (the square GEMM, default 4096)]
         [--gemm-reps N (timed calls of each product: default 200, 10 past 2^30 multiply-adds)]
         [--check] [--quiet]
         [--gemm-kernel auto|nn|library|tensor|mma (auto: for f16 and bf16 cuda.gemm's tensor
          cores for large products, nn.lua's mma.sync kernel for the rest; nn for f32;
          mma: nn.lua's GEMM, f16 and bf16 on its mma.sync kernel)]
         [--pdl on|off (a step's kernels launched with programmatic dependent launch, each
          starting while the one before it ends: a GPU of sm_90 or newer; default off)]
  --init-out writes the initial weights for scripts/bench/mlp_torch.py --init]==]

-- Options, checked: every value in range, every list entry known.
local function options(argv)
  local o = H.parse_args(argv, SPEC)
  local function positive_int(name, v)
    if v ~= math.floor(v) or v < 1 then error(string.format("--%s: %s is not a positive integer",
                                                            name, tostring(v)), 0) end
  end
  positive_int("epochs", o.epochs)
  for _, b in ipairs(o.batch) do positive_int("batch", tonumber(b) or 0) end
  for _, p in ipairs(o.precision) do
    if p ~= "f32" and p ~= "f16" and p ~= "bf16" then
      error("--precision: " .. p .. " is not f32, f16 or bf16", 0)
    end
  end
  for _, e in ipairs(o.exec) do
    if e ~= "graph" and e ~= "launch" then error("--exec: " .. e .. " is not graph or launch", 0) end
  end
  if o.optimizer ~= "sgd" and o.optimizer ~= "adam" then
    error("--optimizer: " .. o.optimizer .. " is not sgd or adam", 0)
  end
  if o.lr < 0 or o.momentum < 0 or o.momentum >= 1 then -- lr 0: the recipe's for the batch
    error("--lr must be > 0 and --momentum in [0, 1)", 0)
  end
  if o.weight_decay < 0 or o.warmup < 0 then error("--weight-decay and --warmup must be >= 0", 0) end
  if not (o.decay > 0 and o.decay <= 1) then error("--decay must be in (0, 1]", 0) end
  if o.schedule ~= "cosine" and o.schedule ~= "constant" then
    error("--schedule: " .. o.schedule .. " is not cosine or constant", 0)
  end
  if o.shift ~= math.floor(o.shift) or o.shift < 0 or o.shift > 7 then
    error("--shift: " .. tostring(o.shift) .. " is not a whole number of pixels 0..7", 0)
  end
  if o.train_limit < 0 then error("--train-limit must be >= 0", 0) end
  positive_int("gemm-size", o.gemm_size)
  if o.gemm_reps ~= 0 then positive_int("gemm-reps", o.gemm_reps) end -- 0: by the product's size
  local kernels = {auto = true, nn = true, library = true, tensor = true, mma = true}
  if not kernels[o.gemm_kernel] then
    error("--gemm-kernel: " .. o.gemm_kernel .. " is not auto, nn, library, tensor or mma", 0)
  end
  if o.pdl ~= "on" and o.pdl ~= "off" then
    error("--pdl: " .. tostring(o.pdl) .. " is not on or off", 0)
  end
  return o
end

-- The data set's files, and the command that fetches them when they are missing.
local FETCH = "scripts/fetch_mnist.sh"
local function data_files(o)
  if o.data == "synthetic" then return {} end
  if o.data == "mnist5k" then
    return {csv = o.data_dir .. "/mnist_5k.csv.gz"}
  end
  local dir = o.data == "fashion" and o.data_dir .. "/fashion-mnist" or o.data
  local files = {}
  for key, base in pairs({train_images = "train-images-idx3-ubyte", train_labels =
                          "train-labels-idx1-ubyte", test_images = "t10k-images-idx3-ubyte",
                          test_labels = "t10k-labels-idx1-ubyte"}) do
    local path = dir .. "/" .. base
    local f = io.open(path .. ".gz", "rb")
    if f then f:close() path = path .. ".gz" end
    files[key] = path
  end
  return files
end

local function missing(files)
  for _, path in pairs(files) do
    local f = io.open(path, "rb")
    if not f then return path end
    f:close()
  end
end

-- Host checks (these also run in compile-only mode) --------------------------------------------

do
  local o = options({"--batch", "32,64", "--precision=f16", "--epochs", "3", "--gemm"})
  S.check(o.batch[2] == 64 and o.precision[1] == "f16" and o.epochs == 3 and o.gemm
          and o.exec[1] == "graph", "arguments: lists, --name=value, flags, defaults")
  local ok, err = pcall(options, {"--precision", "f8"})
  S.check(not ok and err:find("f8 is not f32, f16 or bf16", 1, true),
          "arguments: a bad precision is refused")
  ok, err = pcall(options, {"--gemm-kernel", "cublas"})
  S.check(not ok and err:find("cublas is not auto, nn, library, tensor or mma", 1, true),
          "arguments: an unknown GEMM is refused")
  ok, err = pcall(options, {"--gemm-reps", "0.5"})
  S.check(not ok and err:find("--gemm-reps: 0.5 is not a positive integer", 1, true),
          "arguments: a fractional --gemm-reps is refused")
  ok, err = pcall(options, {"--pdl", "auto"})
  S.check(not ok and err:find("--pdl: auto is not on or off", 1, true),
          "arguments: an unknown --pdl is refused")
  ok, err = pcall(options, {"--schedule", "step"})
  S.check(not ok and err:find("step is not cosine or constant", 1, true),
          "arguments: an unknown schedule is refused")
  local refused = { -- each option out of its range, on either side of it
    {{"--schedule", "bogus"}, "bogus is not cosine or constant"},
    {{"--decay", "0"}, "--decay must be in (0, 1]"}, {{"--decay", "1.5"}, "--decay must be in"},
    {{"--shift", "8"}, "is not a whole number of pixels 0..7"},
    {{"--shift", "1.5"}, "1.5 is not a whole number"}, {{"--shift", "-1"}, "0..7"},
    {{"--momentum", "1"}, "--momentum in [0, 1)"}, {{"--lr", "-0.1"}, "--lr must be > 0"},
    {{"--weight-decay", "-1"}, "must be >= 0"}, {{"--warmup", "-1"}, "must be >= 0"},
    {{"--train-limit", "-1"}, "--train-limit must be >= 0"},
    {{"--optimizer", "sgdm"}, "sgdm is not sgd or adam"},
  }
  local all = true
  for _, case in ipairs(refused) do
    ok, err = pcall(options, case[1])
    if ok or not tostring(err):find(case[2], 1, true) then
      all = false
      print(string.format("  %s %s: %s", case[1][1], case[1][2], ok and "taken" or tostring(err)))
    end
  end
  local taken = pcall(options, {"--schedule", "cosine", "--decay", "1", "--shift", "7",
                                "--momentum", "0"})
        and pcall(options, {"--schedule", "constant", "--shift", "0", "--warmup", "0"})
  S.check(all and taken, "arguments: each option out of its range refused, its edges taken")
  local perm = H.shuffler(1, 10)()
  local seen = {}
  for _, v in ipairs(perm) do seen[v] = true end
  S.check(#perm == 10 and #seen == 9 and seen[0], "the epoch order is a permutation")
end

local o = S.command_line("mlp.lua", options, USAGE)
if #(arg or {}) == 0 and on_cpu then
  -- Adam learns faster than SGD from 100 steps (numpy's version of this run: 78-84 % on three
  -- initialisations, against 60-80 % for SGD). Both executions, as on the GPU: the CPU device's
  -- graph replays must give the launches' losses bit for bit, and only the first draws a chart.
  o.train_limit, o.epochs, o.batch, o.precision = 1000, 1, {10}, {"f32"}
  o.exec = {"graph", "launch"}
  o.optimizer, o.lr, o.schedule, o.warmup, o.shift, o.weight_decay = "adam", 0.001, "constant",
                                                                     0, 0, 0
end
local default_run = #(arg or {}) == 0

local sms = info.multiprocessors or 132
local dtypes = {}
for _, p in ipairs(o.precision) do dtypes[#dtypes + 1] = p end
local k = nn.kernels(S.options(), S.compile_only and {"f32", "f16", "bf16"} or dtypes)

-- The GEMM a precision's products run on: --gemm-kernel, or (auto) for f16 and bf16 cujit's own
-- where its tensor cores take the product and it is large enough to gain (nn.lua's "auto":
-- nn.TENSOR_MIN_MACS, more than any of this MLP's products up to batch 2048), nn.lua's
-- tensor-core kernel for the rest (its split k suits the MLP's skinny and small products, which
-- cuda.gemm runs on CUDA cores without one, or on tensor cores that take longer to start than
-- they save), and nn.lua's SIMT kernel for f32.
local function gemm_kernel(precision)
  if o.gemm_kernel ~= "auto" then return o.gemm_kernel end
  return precision == "f32" and "nn" or "auto"
end

-- Whether a step's kernels are launched with programmatic dependent launch (--pdl; cujit
-- refuses it on a GPU older than sm_90, and on the CPU device it changes nothing). Off by default:
-- on an H100 (6 Dec) it made the nets on the SIMT GEMM 11-25 % slower, and the f16 and bf16 nets
-- on the mma kernel 2-4 % faster at batch 128 in one run and 3-7 % slower in the next (with the
-- ten-wide layer's products faster), 0-3 % faster at batch 1024: no dependable gain.
local function pdl() return o.pdl == "on" end
S.host_checks_done()

-- The GEMM benchmark ---------------------------------------------------------------------------

local function gemm_bench()
  local shapes = {{o.gemm_size, o.gemm_size, o.gemm_size, 0, 0, "A*B"}}
  for _, b in ipairs(o.batch) do -- the MLP's first layer, forward and backward
    shapes[#shapes + 1] = {b, 128, 784, 0, 0, "X*W1"}
    shapes[#shapes + 1] = {784, 128, b, 1, 0, "X^T*dZ1"}
    shapes[#shapes + 1] = {b, 784, 128, 0, 1, "dZ1*W1^T"}
    shapes[#shapes + 1] = {b, 128, 128, 0, 0, "H1*W2"}
  end
  local convert = cuda.jit("convert(const float *x, T *y, int n)", [[
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
      y[i] = T(x[i]);
  ]], {preamble = "#include <cujit/bf16.h>\n#include <cujit/half.h>\n"})
  local function cast(x, dt) -- x (f32) rounded to dt
    if dt == "f32" then return x end
    local y = cuda.device_array(x.shape, dt)
    convert[{math.min((x.size + 255) // 256, 4096), 256}](x, y, x.size)
    return y
  end
  -- The rounding unit of each storage type (C is stored in the inputs' dtype).
  local unit = {f32 = 2 ^ -24, f16 = 2 ^ -11, bf16 = 2 ^ -8}
  -- C = op(A) op(B) checked at 121 entries (the corners, the middle rows and columns, and eight
  -- rows and columns spread by primes) against the host's product in double of the same stored
  -- inputs. Bound: 2^-16 of the sum of |a b| (f32 accumulation over up to 8192 terms; a wrong
  -- product, a transpose missed, is off by the size of the sum itself) plus two rounding units of
  -- the dtype C is stored in. Every product the bench times is checked, so a figure stands for the
  -- product its row names.
  local function check_product(A, B, C, m, n, kk, ta, tb, dt, what, kernel)
    local a, b, c = A:copy_to_host(), B:copy_to_host(), C:copy_to_host()
    local rows, cols = {1, m // 2 + 1, m}, {1, n // 2 + 1, n}
    for i = 1, 8 do
      rows[#rows + 1], cols[#cols + 1] = 1 + (i * 7919) % m, 1 + (i * 104729) % n
    end
    local worst, first_bad = 0, nil
    for _, r in ipairs(rows) do
      for _, col in ipairs(cols) do
        local sum, mag = 0.0, 0.0
        for p = 1, kk do
          local x = ta == 1 and a[(p - 1) * m + r] or a[(r - 1) * kk + p]
          local y = tb == 1 and b[(col - 1) * kk + p] or b[(p - 1) * n + col]
          sum, mag = sum + x * y, mag + math.abs(x * y)
        end
        local bound = 2 ^ -16 * mag + 2 * unit[dt] * math.abs(sum) + 1e-30
        local err = math.abs(c[(r - 1) * n + col] - sum) / bound
        if not (err <= 1) and not first_bad then
          first_bad = string.format("; C[%d][%d] = %.6g, the host's %.6g", r, col,
                                    c[(r - 1) * n + col], sum)
        end
        worst = (err ~= err or err > worst) and err or worst -- a NaN stays
      end
    end
    a:free(); b:free(); c:free()
    S.check(worst <= 1, "GEMM %s %s %s: C at %d entries within the bound of the host's product "
            .. "(the worst at %.2f of it%s)", dt, kernel, what, #rows * #cols, worst,
            first_bad or "")
  end
  -- each precision on nn.lua's GEMM and on cuda.gemm (the f32 rows first, as before)
  for _, dt in ipairs(o.precision) do
    local kernels = {"nn", "library"} -- and nn.lua's tensor-core kernel where it takes dt
    if nn.mma_takes(k, dt) then table.insert(kernels, 2, "mma") end
    for _, kernel in ipairs(kernels) do
      for _, sh in ipairs(shapes) do
        local m, n, kk, ta, tb, what = table.unpack(sh)
        local A32 = cuda.random.normal(cuda.device_array(ta == 1 and {kk, m} or {m, kk}), 1)
        local B32 = cuda.random.normal(cuda.device_array(tb == 1 and {n, kk} or {kk, n}), 2)
        local A, B = cast(A32, dt), cast(B32, dt)
        local C = cuda.device_array({m, n}, dt)
        local work = nn.work(8 * m * n, ((m + 32) // 32) * ((n + 31) // 32)) -- split k where the MLP would
        local reps = o.gemm_reps > 0 and o.gemm_reps or m * n * kk > 1e9 and 10 or 200
        local in_graph = math.min(20, reps)
        local function call(s)
          if kernel ~= "library" then
            nn.gemm(k, s, A, B, C, m, n, kk, ta, tb, 0, {sms = sms, work = work,
                                                          mma = kernel == "mma"})
          else
            nn.library_gemm(s, A, B, C, nil, nil, ta, tb, 0)
          end
        end
        local ms = S.gpu_ms(call, reps, nil, true)
        -- the same product 20 times in a graph, as a training step replays it: the GPU's own
        -- time, where launching from Lua may take longer than a small product runs
        local graph = cuda.graph(function(s) for _ = 1, in_graph do call(s) end end)
        local graph_ms = S.gpu_ms(function() graph:replay(1) end, math.max(1, reps // in_graph),
                                  nil, true) / in_graph
        graph:free()
        S.printf("GEMM %-4s %-7s %-9s %5dx%5dx%5d  %8.4f ms  %7.2f TFLOP/s  in a graph %8.4f ms "
                 .. "%7.2f TFLOP/s", dt, kernel, what, m, n, kk, ms, 2 * m * n * kk / ms / 1e9,
                 graph_ms, 2 * m * n * kk / graph_ms / 1e9)
        print(string.format("GEMMRESULT op=%s m=%d n=%d k=%d ms=%.5f tflops=%.3f dtype=%s "
                            .. "kernel=%s graph_ms=%.5f ta=%d tb=%d", what, m, n, kk, ms,
                            2 * m * n * kk / ms / 1e9, dt, kernel, graph_ms, ta, tb))
        check_product(A, B, C, m, n, kk, ta, tb, dt, what, kernel)
      end
    end
  end
end

if o.gemm then
  gemm_bench()
  S.done()
  return
end

-- The data -------------------------------------------------------------------------------------

local files = data_files(o)
local absent = missing(files)
if absent and default_run and on_cpu then
  print(string.format("data not found: %s; on the CPU device the default run trains on synthetic "
                      .. "digits instead (fetch the real ones with %s)", absent, FETCH))
  o.data, files, absent = "synthetic", {}, nil
end
if absent then
  -- The "skip:" line is the reason scripts/test.sh's summary shows.
  print(string.format("fetch the data once with:  %s   (from the repository root; it writes %s)\n"
                      .. "or point --data at a directory of MNIST IDX files\n"
                      .. "skip: no MNIST data (%s not found)", FETCH, o.data_dir, absent))
  os.exit(77)
end

local t_load = S.clock()
local train, test
if o.data == "synthetic" then -- as many images as MNIST 5k
  train, test = H.synthetic_digits(o.train_limit > 0 and o.train_limit or 4000, 1000, o.seed)
elseif files.csv then
  train, test = H.parse_mnist_csv(H.read_file(files.csv), files.csv)
else
  train = H.idx_dataset(files.train_images, files.train_labels)
  test = H.idx_dataset(files.test_images, files.test_labels)
end
if o.train_limit > 0 then train = H.take(train, o.train_limit) end
local dtrain, dtest = nn.upload(k, train), nn.upload(k, test)
-- The pixel statistics of each training set (the usual constants; scripts/bench/mlp_torch.py
-- uses the same), by which the inputs are normalised.
local pixels = o.data == "fashion" and {mean = 0.2860, std = 0.3530}
               or o.data == "synthetic" and H.pixel_stats(train) or {mean = 0.1307, std = 0.3081}
S.printf("%s: %d training and %d test images of %d pixels, loaded in %.2f s", o.data, train.n,
         test.n, train.features, S.clock() - t_load)

-- Training -------------------------------------------------------------------------------------

-- The learning rate of a run: --lr, or the recipe's for its batch.
local function lr_for(batch)
  return o.lr > 0 and o.lr or H.default_lr(o.optimizer, batch)
end
local init_written = false

-- One run: returns {losses, train_acc, test_acc, epoch_ms} per epoch.
local function train_run(precision, exec, batch)
  if batch > train.n then error(string.format("batch %d is larger than the %d training images",
                                              batch, train.n), 0) end
  -- every image every epoch: the last batch is filled up with the epoch's first images
  local steps = (train.n + batch - 1) // batch
  local positions = steps * batch
  dtrain.order, dtrain.shifts = cuda.zeros(positions, "i32"), cuda.zeros(positions, "u8")
  local net = nn.net(k, {sizes = {train.features, 128, 128, 10}, dtype = precision, batch = batch,
                         optimizer = o.optimizer, lr = lr_for(batch), momentum = o.momentum,
                         seed = o.seed, max_steps = steps, sms = sms, mean = pixels.mean,
                         std = pixels.std, weight_decay = o.weight_decay, schedule = o.schedule,
                         warmup = math.floor(o.warmup * steps + 0.5),
                         total_steps = steps * o.epochs, shift = o.shift,
                         decay_steps = math.floor(o.decay * steps * o.epochs + 0.5),
                         gemm = gemm_kernel(precision), pdl = pdl()})
  if o.init_out ~= "" and not init_written then -- every run starts from these (the same seed)
    H.write_weights(o.init_out, net:weights())
    init_written = true
    S.printf("  initial weights written to %s (for mlp_torch.py --init)", o.init_out)
  end
  local next_order = H.shuffler(o.seed, train.n)
  local next_shifts = H.shift_codes(o.seed, positions, o.shift)
  local graph
  local r = {loss = {}, train_acc = {}, test_acc = {}, epoch_ms = {}, first_loss = nil}
  for epoch = 1, o.epochs do
    dtrain.order:copy_from(H.fill_order(next_order(), positions))
    dtrain.shifts:copy_from(next_shifts())
    net.state:fill(0)
    cuda.synchronize()
    local t0 = S.clock()
    if exec == "launch" then
      for _ = 1, steps do net:step(dtrain, nil) end
    else
      local replays = steps
      if not graph then -- the first step loads every kernel (a capture cannot), then capture
        net:step(dtrain, nil)
        graph = cuda.graph(function(s) net:step(dtrain, s) end)
        replays = steps - 1
      end
      if replays > 0 then graph:replay(replays) end
    end
    cuda.synchronize()
    r.epoch_ms[epoch] = (S.clock() - t0) * 1e3
    local st = net.stats:copy_to_host()
    local loss, right = 0, 0
    for i = 1, steps do loss, right = loss + st[2 * i - 1], right + st[2 * i] end
    r.first_loss = r.first_loss or st[1] / batch
    r.last_loss = st[2 * steps - 1] / batch
    r.loss[epoch], r.train_acc[epoch] = loss / (steps * batch), right / (steps * batch)
    r.test_loss, r.test_acc[epoch] = net:evaluate(dtest)
    if not o.quiet then
      S.printf("  epoch %2d  loss %.4f  train %6.2f%%  test %6.2f%%  %8.2f ms", epoch, r.loss[epoch],
               100 * r.train_acc[epoch], 100 * r.test_acc[epoch], r.epoch_ms[epoch])
    end
  end
  local amp = net.amp:copy_to_host()
  r.skipped, r.scale = amp[3], amp[1]
  return r
end

-- The median epoch time, leaving out the first epoch (kernel loading, the capture) when there
-- are others.
local function typical_ms(t)
  local v = {}
  for i = (#t > 1 and 2 or 1), #t do v[#v + 1] = t[i] end
  table.sort(v)
  return v[(#v + 1) // 2]
end

local results = {}
local charts = 0 -- drawn: one a precision and batch, from the first execution's run
for _, batch in ipairs(o.batch) do
  for _, precision in ipairs(o.precision) do
    for _, exec in ipairs(o.exec) do
      S.printf("%s, %s, %s, batch %d, %d epochs, %s, lr %g (%s over the last %g of the run, "
               .. "warm-up %g epochs), momentum %g, weight decay %g, shifts up to %d px:", o.data,
               precision, exec, batch, o.epochs, o.optimizer, lr_for(batch), o.schedule, o.decay,
               o.warmup, o.momentum, o.weight_decay, o.shift)
      local r = train_run(precision, exec, batch)
      results[#results + 1] = {precision = precision, exec = exec, batch = batch, r = r}
      local ms = typical_ms(r.epoch_ms)
      print(string.format("RESULT data=%s precision=%s exec=%s batch=%d epochs=%d train_n=%d "
                          .. "optimizer=%s lr=%g test_acc=%.4f train_acc=%.4f loss=%.5f "
                          .. "epoch_ms=%.3f step_us=%.2f skipped=%d gemm=%s pdl=%s", o.data,
                          precision,
                          exec, batch, o.epochs, train.n, o.optimizer, lr_for(batch),
                          r.test_acc[o.epochs], r.train_acc[o.epochs], r.loss[o.epochs], ms,
                          ms * 1e3 / ((train.n + batch - 1) // batch), r.skipped,
                          gemm_kernel(precision), pdl() and "on" or "off"))
      if exec == o.exec[1] then
        local loss = {}
        local top = math.max(table.unpack(r.loss))
        for i, v in ipairs(r.loss) do loss[i] = v / top end
        local path = o.chart ~= "" and o.chart
                     or string.format("%s/mlp_%s_%s_b%d.png", S.out_dir(here), o.data:gsub("[^%w]",
                                      "_"), precision, batch)
        H.chart(path, {{values = loss, color = {200, 40, 40}},
                        {values = r.train_acc, color = {40, 90, 220}},
                        {values = r.test_acc, color = {30, 160, 60}}})
        S.printf("  chart: %s (red: loss / its maximum, blue: train accuracy, green: test "
                 .. "accuracy; grid every 10%%)", path)
        charts = charts + 1
      end
    end
  end
end

-- Checks ---------------------------------------------------------------------------------------

local function find(precision, exec, batch)
  for _, x in ipairs(results) do
    if x.precision == precision and x.exec == exec and x.batch == batch then return x.r end
  end
end

if default_run or o.check then
  S.check(charts == #o.batch * #o.precision, "one chart a precision and batch: %d", charts)
  for _, x in ipairs(results) do
    local r, tag = x.r, string.format("%s %s batch %d", x.precision, x.exec, x.batch)
    S.check(r.last_loss < r.first_loss, "%s: the loss falls (first batch %.3f, last %.3f)", tag,
            r.first_loss, r.last_loss)
    local floor = on_cpu and 0.80 or 0.90
    S.check(r.test_acc[o.epochs] > floor, "%s: test accuracy %.2f%% > %.0f%%", tag,
            100 * r.test_acc[o.epochs], 100 * floor)
  end
  for _, batch in ipairs(o.batch) do
    for _, precision in ipairs(o.precision) do
      for _, exec in ipairs(o.exec) do -- every run asked for is there to compare
        S.check(find(precision, exec, batch), "%s %s batch %d: a result to check", precision, exec,
                batch)
      end
      local g, l = find(precision, "graph", batch), find(precision, "launch", batch)
      if g and l then -- the same kernels in the same order: the same numbers, bit for bit
        local same = true
        for i = 1, o.epochs do same = same and g.loss[i] == l.loss[i] end
        S.check(same, "%s batch %d: graph replays and launches give identical losses", precision,
                batch)
      end
    end
    local full = find("f32", o.exec[1], batch)
    for _, low in ipairs({"f16", "bf16"}) do
      local half = find(low, o.exec[1], batch)
      if full and half then
        local gap = math.abs(full.test_acc[o.epochs] - half.test_acc[o.epochs])
        S.check(gap <= 0.02, "batch %d: %s test accuracy within 2 points of f32 (%.2f points)",
                batch, low, 100 * gap)
      end
    end
  end
end
S.done()
