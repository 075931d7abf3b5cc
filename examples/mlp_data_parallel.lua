-- mlp_data_parallel.lua -- mlp.lua's network trained data-parallel: one replica of the model per
-- GPU, each global batch split into equal shards (one per replica), every replica computing the
-- gradients of its shard, the gradients averaged over the replicas by an NCCL all-reduce, and
-- every replica applying the same update, so that the replicas stay identical. Prints loss,
-- accuracy and time per epoch, the scaling against one GPU with the same global batch, and checks
-- that the replicas' weights are bitwise identical and that the loss curve is one GPU's.
--
--   cujit mlp_data_parallel.lua                  every GPU, MNIST 5k (synthetic digits when
--                                                examples/data has none), global batch 256
--   cujit mlp_data_parallel.lua --gpus 2 --data synthetic --train-limit 32768 --batch 4096
--         --hidden 2048 --lr 0.02 --epochs 5     steps large enough to hide the all-reduce
--   cujit mlp_data_parallel.lua --reduce kernel  the fallback below, even with NCCL
--
-- The all-reduce: every replica's gradients live in ONE flat buffer (each parameter's gradient
-- is a view of its slice, so the backward pass writes there directly and nothing is copied), and
-- a step makes one comm:all_reduce(flat buffers, "avg"), which cujit issues for the local ranks
-- in one NCCL group. One collective over the 118k gradients instead of one per parameter (six,
-- three of them 10 to 128 elements, each paying NCCL's latency) is what real data-parallel
-- trainers do with their gradient buckets (PyTorch's DDP, Horovod's fusion buffer); the MLP is
-- small enough for one bucket, so there is no overlap of the all-reduce with the backward pass.
--
-- The fallback, where NCCL cannot be used (no NCCL, NCCL_NVLS_ENABLE not 0, one GPU, the CPU
-- device): N replicas on ONE device, their flat gradient buffers the rows of one N x P array, and
-- a cujit kernel (average_replicas) writing each element's mean over the rows back to every row.
-- The output names it; its times are not a scaling figure (the replicas share a device).
-- NCCL is used only when NCCL_NVLS_ENABLE=0 is in the environment (NVLink multicast stays off on
-- shared GPU machines; cujit never sets it).
--
-- Used as a module (require "mlp_data_parallel", as tests/lua/test_mlp_data_parallel.lua does)
-- it returns the trainer without running anything.
local cuda = require "cujit"
package.path = (arg and arg[0] and arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path
local nn = require "nn"
local H = require "nn_host"

local M = {}

local function blocks(n, b, cap)
  return math.max(1, math.min((n + b - 1) // b, cap or 1 << 20))
end

-- The fallback all-reduce: g holds `replicas` rows of n gradients (T = f32 or f16); every
-- element becomes the mean of its column, summed in float in row order, in every row.
local AVERAGE = {"average_replicas(T *g, int replicas, long long n)", [==[
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float s = 0.0f;
    for (int r = 0; r < replicas; r++) s += cujit::to_float(g[r * n + i]);
    const T mean = T(s / (float)replicas);
    for (int r = 0; r < replicas; r++) g[r * n + i] = mean;
  }
]==]}

-- nn.lua's kernels plus average_replicas, compiled for every dtype in `dtypes`.
function M.kernels(options, dtypes)
  local k = nn.kernels(options, dtypes)
  local o = {preamble = "#include <cujit/half.h>\n"}
  for key, v in pairs(options or {}) do o[key] = v end
  k.average_replicas = cuda.jit(AVERAGE[1], AVERAGE[2], o)
  for _, dt in ipairs(dtypes or {}) do k.average_replicas:specialize(dt) end
  return k
end

-- The shards of one epoch: replica r (1-based) of n takes rows (r - 1) * b + 1 .. r * b of each
-- global batch of n * b rows of `perm` (a 0-based permutation). Returns n lists of steps * b.
function M.shards(perm, n, b, steps)
  local out = {}
  for r = 1, n do
    local o = {}
    for s = 0, steps - 1 do
      local from = s * n * b + (r - 1) * b
      for i = 1, b do o[s * b + i] = perm[from + i] end
    end
    out[r] = o
  end
  return out
end

-- The trainer ----------------------------------------------------------------------------------

local Trainer = {}
Trainer.__index = Trainer

-- cfg: devices (one per replica: distinct GPUs with reduce = "nccl", one device repeated with
-- "kernel"), reduce ("nccl" or "kernel"; ignored for one replica), comm (for "nccl": a
-- communicator over exactly those devices), train (a host data set, nn_host.lua's), batch (the
-- global batch, a multiple of the replicas), steps (per epoch), exec ("graph" or "launch"),
-- and for nn.net: sizes, dtype, optimizer, lr, momentum, seed, sms, mean, std.
function M.trainer(k, cfg)
  local n = #cfg.devices
  if n < 1 then error("no devices for the replicas", 2) end
  if cfg.batch % n ~= 0 then
    error(string.format("the global batch %d does not split into %d equal shards; use a multiple "
                        .. "of %d", cfg.batch, n, n), 2)
  end
  local b = cfg.batch // n
  local self = setmetatable({k = k, n = n, shard = b, batch = cfg.batch, steps = cfg.steps,
                             exec = cfg.exec or "launch", reduce = n > 1 and cfg.reduce or "none",
                             comm = cfg.comm, replicas = {}, dtype = cfg.dtype}, Trainer)
  if cfg.steps * cfg.batch > cfg.train.n then
    error(string.format("%d steps of %d rows need %d training rows, the data set has %d",
                        cfg.steps, cfg.batch, cfg.steps * cfg.batch, cfg.train.n), 2)
  end
  if n > 1 and self.reduce ~= "nccl" and self.reduce ~= "kernel" then
    error(string.format("reduce = %s: \"nccl\" or \"kernel\" expected for %d replicas",
                        tostring(self.reduce), n), 2)
  end
  if self.reduce == "nccl" then
    local listed = cfg.comm and cfg.comm:devices() or {}
    local same = #listed == n
    for r = 1, n do same = same and listed[r] == cfg.devices[r] end
    if not same then
      error("reduce = \"nccl\" needs cfg.comm, a communicator over the replicas' devices in "
            .. "their order", 2)
    end
  end
  if self.reduce == "kernel" then
    for _, d in ipairs(cfg.devices) do
      if d ~= cfg.devices[1] then
        error("the kernel all-reduce needs every replica on one device", 2)
      end
    end
  end
  local uploads, streams = {}, {}
  local grads = self:gradient_buffers(cfg)
  for r, d in ipairs(cfg.devices) do
    cuda.device(d) -- the net's arrays, the upload's launches and evaluate() go to d
    local net = nn.net(k, {sizes = cfg.sizes, dtype = cfg.dtype, batch = b,
                           optimizer = cfg.optimizer, lr = cfg.lr, momentum = cfg.momentum,
                           seed = cfg.seed, max_steps = cfg.steps, sms = cfg.sms,
                           mean = cfg.mean, std = cfg.std, grad = grads[r]})
    uploads[d] = uploads[d] or nn.upload(k, cfg.train) -- replicas of one device share the data
    -- one stream per device: with "kernel" the average then follows every replica's backward
    streams[d] = streams[d] or cuda.stream{device = d}
    self.replicas[r] = {device = d, net = net, stream = streams[d],
                        data = {images = uploads[d].images, labels = uploads[d].labels,
                                shifts = uploads[d].shifts, -- zero: no augmentation here
                                order = cuda.zeros(cfg.steps * b, "i32", {device = d})}}
  end
  self:sync()
  -- Every replica starts from replica 1's weights (what DDP's constructor broadcasts): the same
  -- seed gives the same weights anyway, but this way they are identical by construction.
  local first = self.replicas[1].net
  for r = 2, n do
    local net = self.replicas[r].net
    for l, L in ipairs(net.layers) do
      for i, p in ipairs(L.params) do
        local src = first.layers[l].params[i]
        p.master:copy_from(src.master)
        if p.w ~= p.master then p.w:copy_from(src.w) end
      end
    end
  end
  self:sync()
  return self
end

-- Every replica's flat gradient array (its net's, nn.layout's order): with the kernel
-- all-reduce, the rows of one replicas x P array on the device (self.stacked), else one array on
-- each replica's device.
function Trainer:gradient_buffers(cfg)
  local _, total = nn.layout(cfg.sizes)
  self.params = total
  local stacked = self.reduce == "kernel"
                  and cuda.zeros(self.n * total, self.dtype, {device = cfg.devices[1]})
  local grads = {}
  for r, d in ipairs(cfg.devices) do
    grads[r] = stacked and stacked:slice((r - 1) * total + 1, r * total)
               or cuda.zeros(total, self.dtype, {device = d})
  end
  self.stacked = stacked
  return grads
end

-- Waits for every device of the replicas.
function Trainer:sync()
  local seen = {}
  for _, rep in ipairs(self.replicas) do
    if not seen[rep.device] then
      seen[rep.device] = true
      cuda.synchronize(rep.device)
    end
  end
end

-- A replica's gradients for its shard of the batch its step counter names, on stream s.
local function compute(rep, s)
  local net, ws = rep.net, rep.net.ws
  net.k.gather[{blocks(ws.rows * net.sizes[1], 256, 1024), 256, stream = s}](
    rep.data.images, rep.data.labels, rep.data.order, rep.data.shifts, net.state, ws.x, ws.y,
    ws.rows, net.sizes[1], net.width, net.shift, net.mean, 1 / net.std)
  net:forward(ws, s, true)
  net:backward(ws, s)
end

-- The average of every replica's flat gradients, in every replica.
function Trainer:all_reduce()
  if self.reduce == "nccl" then
    local flats, streams = {}, {}
    for r, rep in ipairs(self.replicas) do flats[r], streams[r] = rep.net.flat.grad, rep.stream end
    self.comm:all_reduce(flats, "avg", nil, streams)
  elseif self.reduce == "kernel" then
    local s = self.replicas[1].stream -- every replica's: they share the device and its stream
    self.k.average_replicas[{blocks(self.params, 256, 1024), 256, stream = s}](self.stacked, self.n,
                                                                              self.params)
  end
end

-- With exec = "graph": each replica's compute and update captured once (after one step by
-- launches has loaded every kernel on its device), replayed around the all-reduce.
function Trainer:capture()
  for _, rep in ipairs(self.replicas) do
    cuda.device(rep.device)
    rep.compute_graph = cuda.graph(function(s) compute(rep, s) end)
    rep.update_graph = cuda.graph(function(s) rep.net:update(s) end)
  end
end

-- One training step of every replica.
function Trainer:step()
  for _, rep in ipairs(self.replicas) do
    if rep.compute_graph then rep.compute_graph:launch(rep.stream) else compute(rep, rep.stream) end
  end
  self:all_reduce()
  for _, rep in ipairs(self.replicas) do
    if rep.update_graph then rep.update_graph:launch(rep.stream) else rep.net:update(rep.stream) end
  end
end

-- One epoch over the global order `perm` (a 0-based permutation of the training rows): returns
-- the wall milliseconds, and the loss of every step's global batch and the epoch's accuracy.
function Trainer:epoch(perm)
  local shards = M.shards(perm, self.n, self.shard, self.steps)
  for r, rep in ipairs(self.replicas) do
    cuda.device(rep.device)
    rep.data.order:copy_from(shards[r])
    rep.net.state:fill(0)
  end
  self:sync()
  local t0 = cuda.clock()
  local first = 1
  if self.exec == "graph" and not self.replicas[1].compute_graph then
    self:step()
    self:sync()
    self:capture()
    first = 2
  end
  for _ = first, self.steps do self:step() end
  self:sync()
  local ms = (cuda.clock() - t0) * 1e3
  local losses, right = {}, 0
  for r, rep in ipairs(self.replicas) do
    local st = rep.net.stats:copy_to_host()
    for s = 1, self.steps do
      losses[s] = (r == 1 and 0 or losses[s]) + st[2 * s - 1]
      right = right + st[2 * s]
    end
  end
  for s = 1, self.steps do losses[s] = losses[s] / self.batch end
  return ms, losses, right / (self.steps * self.batch)
end

-- Loss and accuracy of replica r (default 1) on a data set uploaded to its device.
function Trainer:evaluate(data, r)
  local rep = self.replicas[r or 1]
  cuda.device(rep.device)
  return rep.net:evaluate(data)
end

-- Every master weight of replica r, in parameter order, as one Lua list.
function Trainer:weights(r)
  local out = {}
  for _, L in ipairs(self.replicas[r].net.layers) do
    for _, p in ipairs(L.params) do
      local h = p.master:copy_to_host()
      for i = 1, p.master.size do out[#out + 1] = h[i] end
    end
  end
  return out
end

-- The first weight where replicas 1 and r differ (its index, both values), or nil when every
-- weight is bitwise the same.
function Trainer:first_difference(r)
  local a, b = self:weights(1), self:weights(r)
  for i = 1, #a do
    if a[i] ~= b[i] then return i, a[i], b[i] end
  end
end

M.Trainer = Trainer

if ... == "mlp_data_parallel" then return M end

-- The example ----------------------------------------------------------------------------------

local S = require "example_support"
local here = S.here()
local info = not S.compile_only and cuda.device() or {}

local SPEC = {
  data = "mnist5k", data_dir = here .. "../data", epochs = 10, batch = 256, gpus = 0,
  hidden = 128, precision = "f32", exec = "graph", reduce = "auto", optimizer = "sgd", lr = 0,
  momentum = 0.9, seed = 1, train_limit = 0, check = false, quiet = false,
}
local USAGE = [==[
usage: cujit mlp_data_parallel.lua [--gpus N (default: every GPU)] [--reduce auto|nccl|kernel]
         [--data mnist5k|fashion|synthetic|DIR] [--data-dir DIR] [--epochs N] [--batch N (global)]
         [--hidden N] [--precision f32|f16] [--exec graph|launch] [--optimizer sgd|adam]
         [--lr X] [--momentum X] [--seed N] [--train-limit N] [--check] [--quiet]]==]

local function options(argv)
  local o = H.parse_args(argv, SPEC)
  for _, name in ipairs({"epochs", "batch", "hidden"}) do
    local v = o[name]
    if v ~= math.floor(v) or v < 1 then
      error(string.format("--%s: %s is not a positive integer", name, tostring(v)), 0)
    end
  end
  if o.gpus ~= math.floor(o.gpus) or o.gpus < 0 then error("--gpus: not a count of GPUs", 0) end
  local function one_of(name, list)
    for _, v in ipairs(list) do if o[name] == v then return end end
    error(string.format("--%s: %s is not one of %s", name, o[name], table.concat(list, ", ")), 0)
  end
  one_of("precision", {"f32", "f16"})
  one_of("exec", {"graph", "launch"})
  one_of("reduce", {"auto", "nccl", "kernel"})
  one_of("optimizer", {"sgd", "adam"})
  if o.lr == 0 then o.lr = o.optimizer == "sgd" and 0.05 or 0.001 end
  if o.lr <= 0 or o.momentum < 0 or o.momentum >= 1 then
    error("--lr must be > 0 and --momentum in [0, 1)", 0)
  end
  o.epochs, o.batch, o.hidden, o.gpus = math.tointeger(o.epochs), math.tointeger(o.batch),
                                        math.tointeger(o.hidden), math.tointeger(o.gpus)
  return o
end

-- Host checks (these also run in compile-only mode) --------------------------------------------

do
  local perm = {}
  for i = 1, 24 do perm[i] = (i * 7) % 24 end -- a permutation of 0..23
  local sh = M.shards(perm, 3, 2, 4) -- 3 replicas x 2 rows, 4 steps of 6
  local seen, ok = {}, true
  for s = 0, 3 do
    for r = 1, 3 do
      for i = 1, 2 do
        local v = sh[r][s * 2 + i]
        ok = ok and v == perm[s * 6 + (r - 1) * 2 + i]
        seen[v] = true
      end
    end
  end
  S.check(ok and #sh[1] == 8, "the shards of each global batch are its consecutive slices")
  local count = 0
  for _ in pairs(seen) do count = count + 1 end
  S.check(count == 24, "the shards of an epoch cover every row once")
  local good, err = pcall(options, {"--precision", "f8"})
  S.check(not good and err:find("f8 is not one of", 1, true),
          "arguments: a bad precision is refused")
end

local o = S.command_line("mlp_data_parallel.lua", options, USAGE)
local default_run = #(arg or {}) == 0
if default_run and S.on_cpu then -- two cores: 1,000 images, two epochs, shards of 10
  o.train_limit, o.epochs, o.batch, o.optimizer, o.lr = 1000, 2, 20, "adam", 0.001
end

local k = M.kernels(S.options(), S.compile_only and {"f32", "f16"} or {o.precision})
S.host_checks_done()

-- The devices and the all-reduce ---------------------------------------------------------------

local gpus = 0
for _, d in ipairs(cuda.devices()) do
  if d.arch ~= "cpu" then gpus = gpus + 1 end
end
local replicas = o.gpus > 0 and o.gpus or math.max(gpus, 2)
if o.batch % replicas ~= 0 then
  io.stderr:write(string.format("mlp_data_parallel.lua: the global batch %d does not split into %d "
                                .. "equal shards; pass --batch as a multiple of %d\n", o.batch,
                                replicas, replicas))
  os.exit(2)
end
local nccl_ok, why = cuda.nccl.available()
if S.on_cpu then
  nccl_ok, why = false, "the CPU device has no NCCL"
elseif nccl_ok and os.getenv("NCCL_NVLS_ENABLE") ~= "0" then
  nccl_ok, why = false, "NCCL_NVLS_ENABLE is not 0 in the environment (set it to use NCCL)"
elseif nccl_ok and replicas > gpus then
  nccl_ok, why = false, string.format("%d replicas on %d GPU%s: NCCL takes one rank per GPU",
                                      replicas, gpus, gpus == 1 and "" or "s")
elseif nccl_ok and replicas < 2 then
  nccl_ok, why = false, "one replica has nothing to all-reduce"
end
why = tostring(why):match("^[^\n;]*")
if o.reduce == "nccl" and not nccl_ok then
  io.stderr:write("mlp_data_parallel.lua: --reduce nccl, but NCCL cannot be used: ", why, "\n")
  os.exit(1)
end
local reduce = (o.reduce == "kernel" or not nccl_ok) and "kernel" or "nccl"
local home = S.on_cpu and "cpu" or info.ordinal
local devices = {}
for r = 1, replicas do devices[r] = reduce == "nccl" and r - 1 or home end
local where = S.on_cpu and "the CPU device" or "GPU " .. tostring(home)
if reduce == "nccl" then
  S.printf("%d replicas on GPUs 0..%d; gradients all-reduced by NCCL (one avg all-reduce of a "
           .. "flat buffer per step)", replicas, replicas - 1)
else
  S.printf("FALLBACK: %d replica%s on %s; gradients averaged by a cujit kernel "
           .. "(average_replicas), not NCCL: %s", replicas, replicas == 1 and "" or "s", where,
           o.reduce == "kernel" and "--reduce kernel" or why)
end

-- The data (as mlp.lua reads it; synthetic digits when the default data is not there) ----------

local function data_set()
  local absent
  if o.data == "mnist5k" then
    local path = o.data_dir .. "/mnist_5k.csv.gz"
    local f = io.open(path, "rb")
    if f then
      f:close()
      local train, test = H.parse_mnist_csv(H.read_file(path), path)
      return train, test, {mean = 0.1307, std = 0.3081}
    end
    absent = path
  elseif o.data ~= "synthetic" then
    local dir = o.data == "fashion" and o.data_dir .. "/fashion-mnist" or o.data
    local function file(base)
      for _, p in ipairs({dir .. "/" .. base .. ".gz", dir .. "/" .. base}) do
        local f = io.open(p, "rb")
        if f then f:close() return p end
      end
      absent = dir .. "/" .. base
    end
    local ti, tl = file("train-images-idx3-ubyte"), file("train-labels-idx1-ubyte")
    local vi, vl = file("t10k-images-idx3-ubyte"), file("t10k-labels-idx1-ubyte")
    if not absent then
      return H.idx_dataset(ti, tl), H.idx_dataset(vi, vl),
             o.data == "fashion" and {mean = 0.2860, std = 0.3530} or {mean = 0.1307, std = 0.3081}
    end
  end
  if absent and not default_run then
    print(string.format("fetch the data once with scripts/fetch_mnist.sh, or use --data synthetic"
                        .. "\nskip: no data (%s not found)", absent))
    os.exit(77)
  end
  if absent then
    print("data not found: " .. absent .. "; the default run trains on synthetic digits")
  end
  o.data = "synthetic"
  local train, test = H.synthetic_digits(o.train_limit > 0 and o.train_limit or 4000, 1000, o.seed)
  return train, test, H.pixel_stats(train)
end

local train, test, pixels = data_set()
if o.train_limit > 0 then train = H.take(train, o.train_limit) end
local steps = train.n // o.batch
if steps < 1 then
  io.stderr:write(string.format("mlp_data_parallel.lua: the global batch %d is larger than the %d "
                                .. "training images\n", o.batch, train.n))
  os.exit(2)
end
S.printf("%s: %d training and %d test images; global batch %d = %d shards of %d; %d steps an "
         .. "epoch; %s, %s, %s, lr %g", o.data, train.n, test.n, o.batch, replicas,
         o.batch // replicas, steps, o.precision, o.exec, o.optimizer, o.lr)

-- Training -------------------------------------------------------------------------------------

local comm = reduce == "nccl" and cuda.nccl.comm(devices) or nil
local sizes = {train.features, o.hidden, o.hidden, 10}

-- Trains on `devs` for every epoch; returns per epoch {loss, train_acc, test_acc, ms}, the loss
-- of every step, and the trainer.
local function run(label, devs)
  local t = M.trainer(k, {devices = devs, reduce = reduce, comm = #devs > 1 and comm or nil,
                          train = train, batch = o.batch, steps = steps, exec = o.exec,
                          sizes = sizes, dtype = o.precision, optimizer = o.optimizer,
                          lr = o.lr, momentum = o.momentum, seed = o.seed,
                          sms = info.multiprocessors or 132, mean = pixels.mean, std = pixels.std})
  cuda.device(devs[1])
  local dtest = nn.upload(k, test)
  local next_order = H.shuffler(o.seed, train.n) -- both runs see the same batches
  local r = {loss = {}, train_acc = {}, test_acc = {}, ms = {}, steps = {}}
  S.printf("%s:", label)
  for e = 1, o.epochs do
    local ms, losses, acc = t:epoch(next_order())
    local sum = 0
    for _, l in ipairs(losses) do
      sum = sum + l
      r.steps[#r.steps + 1] = l
    end
    r.loss[e], r.train_acc[e], r.ms[e] = sum / #losses, acc, ms
    local _, test_acc = t:evaluate(dtest)
    r.test_acc[e] = test_acc
    if not o.quiet then
      S.printf("  epoch %2d  loss %.5f  train %6.2f%%  test %6.2f%%  %9.2f ms", e, r.loss[e],
               100 * acc, 100 * test_acc, ms)
    end
  end
  return r, t
end

local one = run(string.format("one replica, batch %d on %s", o.batch,
                              S.on_cpu and "the CPU device" or "GPU " .. tostring(devices[1])),
                {devices[1]})
local many, trainer = run(string.format("%d replicas (%s), shards of %d", replicas,
                                        reduce == "nccl" and "NCCL" or "FALLBACK kernel average",
                                        o.batch // replicas), devices)

local ms1, msn = S.typical_ms(one.ms), S.typical_ms(many.ms)
local speedup = ms1 / msn
if reduce == "nccl" then
  S.printf("scaling: one GPU %.2f ms an epoch, %d GPUs %.2f ms: %.2fx (ideal %dx)", ms1, replicas,
           msn, speedup, replicas)
else
  S.printf("time: one replica %.2f ms an epoch, %d replicas %.2f ms (FALLBACK: the replicas share "
           .. "%s, so this is not a scaling figure)", ms1, replicas, msn, where)
end

-- Checks ---------------------------------------------------------------------------------------

-- The tolerance on the loss of every step against one replica's: the shards' gradients are
-- summed in another order (per shard, then averaged) than the whole batch's, so the curves
-- part by rounding, which training then carries along; f16 rounds each gradient to 11 bits.
local TOLERANCE = o.precision == "f32" and 1e-3 or 2e-2
local worst, at = 0, 0
for i, l in ipairs(one.steps) do
  local d = math.abs(many.steps[i] - l) / math.max(1, math.abs(l))
  if not (d <= worst) then worst, at = d, i end -- a NaN loss counts as the largest difference
end
local identical = true
for r = 2, replicas do
  local i, a, b = trainer:first_difference(r)
  identical = identical and not i
  S.check(not i, "replica %d's weights are bitwise replica 1's%s", r,
          i and string.format(" (weight %d: %.9g vs %.9g)", i, a, b) or "")
end
S.check(worst <= TOLERANCE, "the loss of every step (%d) is one replica's with the same global "
        .. "batch within %g (relative, absolute below 1; largest difference %.3g, step %d)",
        #one.steps, TOLERANCE, worst, at)
S.check(many.loss[o.epochs] < many.steps[1], "the loss falls (first step %.4f, last epoch %.4f)",
        many.steps[1], many.loss[o.epochs])
print(string.format("RESULT data=%s replicas=%d reduce=%s precision=%s exec=%s batch=%d hidden=%d "
                    .. "epochs=%d train_n=%d test_acc=%.4f loss=%.5f epoch_ms=%.3f one_ms=%.3f "
                    .. "speedup=%.3f max_rel_loss_diff=%.3g identical=%d", o.data, replicas,
                    reduce, o.precision, o.exec, o.batch, o.hidden, o.epochs, train.n,
                    many.test_acc[o.epochs], many.loss[o.epochs], msn, ms1, speedup, worst,
                    identical and 1 or 0))
if comm then comm:free() end
S.done()
