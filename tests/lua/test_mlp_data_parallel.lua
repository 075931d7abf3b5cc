-- test_mlp_data_parallel.lua -- examples/mlp_data_parallel.lua's trainer (issue 14): the kernel
-- all-reduce (average_replicas) against a host mean; 2 and 4 replicas on one device (the
-- fallback, on the CPU device without a GPU) training like one replica with the same global
-- batch (every step's loss, the final weights) and staying bitwise identical; without the
-- all-reduce they part (so both checks can fail); on two GPUs the same with NCCL's all-reduce.
-- The NCCL part needs two GPUs, NCCL and NCCL_NVLS_ENABLE=0: without them the script ends as
-- skipped, with the reason, after the rest passed; under CUJIT_REQUIRE_GPUS=2 it fails instead.
local h = require "helper"
local cuda = require "cujit"
package.path = h.here() .. "../../examples/?.lua;" .. package.path
local dp = require "mlp_data_parallel"
local H = require "nn_host"
local nn = require "nn"

h.need_gpu(cuda)

-- Why the NCCL part cannot run here, or nil.
local function nccl_missing()
  local gpus = h.gpu_count(cuda)
  if gpus < 2 then return string.format("the NCCL part needs 2 GPUs, this machine has %d", gpus) end
  local ok, why = cuda.nccl.available()
  if not ok then return "no NCCL: " .. tostring(why) end
  if os.getenv("NCCL_NVLS_ENABLE") ~= "0" then
    return "NCCL_NVLS_ENABLE is not 0; set NCCL_NVLS_ENABLE=0 before a GPU run uses NCCL"
  end
end
local unchecked = nccl_missing()
if unchecked and h.required_gpus() >= 2 then
  io.stderr:write("FAIL: CUJIT_REQUIRE_GPUS=", h.required_gpus(), " but ", unchecked, "\n")
  os.exit(1)
end

local home = cuda.device().arch == "cpu" and "cpu" or cuda.device().ordinal
local k = dp.kernels({}, {"f32"})

h.test("average_replicas: every element becomes its column's mean, in every row", function()
  for _, replicas in ipairs({2, 3}) do
    local n = 1000 + math.random(0, 100)
    local xs = h.random_floats(replicas * n, -4, 4)
    local g = cuda.to_device(xs, "f32")
    k.average_replicas[{4, 256}](g, replicas, n) -- fewer threads than elements: the stride loop
    local got = g:copy_to_host()
    local stored = cuda.to_device(xs, "f32"):copy_to_host()
    for i = 1, n do
      local s = 0
      for r = 0, replicas - 1 do s = s + stored[r * n + i] end
      for r = 0, replicas - 1 do
        h.near(got[r * n + i], s / replicas, 1e-6, string.format("%d replicas, row %d [%d]",
                                                                 replicas, r + 1, i))
      end
    end
  end
end)

-- A small run: synthetic digits, a 784-32-32-10 net, 240 images, global batch 24, 2 epochs.
local train = H.synthetic_digits(240, 1, 7)
local pixels = H.pixel_stats(train)
local BATCH, EPOCHS = 24, 2

-- Trains replicas on `devices` (reduce: "nccl" with `comm`, "kernel", or "skip" to leave the
-- all-reduce out); returns every step's loss and the trainer.
local function train_on(devices, reduce, exec, comm)
  local t = dp.trainer(k, {devices = devices, reduce = reduce == "skip" and "kernel" or reduce,
                           comm = comm, train = train, batch = BATCH, steps = train.n // BATCH,
                           exec = exec, sizes = {train.features, 32, 32, 10}, dtype = "f32",
                           optimizer = "sgd", lr = 0.05, momentum = 0.9, seed = 3, sms = 132,
                           mean = pixels.mean, std = pixels.std})
  if reduce == "skip" then t.reduce = "skip" end -- the control: gradients never averaged
  local next_order = H.shuffler(11, train.n)
  local losses = {}
  for _ = 1, EPOCHS do
    local _, l = t:epoch(next_order())
    for _, v in ipairs(l) do losses[#losses + 1] = v end
  end
  return losses, t
end

local ref_losses, ref = train_on({home}, "kernel", "launch")
local ref_weights = ref:weights(1)

h.test("one replica trains bit for bit as nn.lua's Net:step (the flat gradient buffer is a "
       .. "layout, nothing else)", function()
  local net = nn.net(k, {sizes = {train.features, 32, 32, 10}, dtype = "f32", batch = BATCH,
                         optimizer = "sgd", lr = 0.05, momentum = 0.9, seed = 3, sms = 132,
                         max_steps = train.n // BATCH, mean = pixels.mean, std = pixels.std})
  local data = nn.upload(k, train)
  local next_order = H.shuffler(11, train.n)
  local losses = {}
  for _ = 1, EPOCHS do
    data.order:copy_from(next_order())
    net.state:fill(0)
    for _ = 1, train.n // BATCH do net:step(data, nil) end
    local st = net.stats:copy_to_host()
    for s = 1, train.n // BATCH do losses[#losses + 1] = st[2 * s - 1] / BATCH end
  end
  h.same(ref_losses, losses, nil, "every step's loss")
  local weights = {}
  for _, L in ipairs(net.layers) do
    for _, p in ipairs(L.params) do
      local w = p.master:copy_to_host()
      for i = 1, p.master.size do weights[#weights + 1] = w[i] end
    end
  end
  h.eq(#ref_weights, #weights, "the number of weights")
  for i = 1, #weights do
    if ref_weights[i] ~= weights[i] then h.eq(ref_weights[i], weights[i], "weight " .. i) end
  end
end)

-- The largest relative difference between two lists.
local function largest_difference(a, b)
  h.eq(#a, #b, "the lists' lengths")
  local worst = 0
  for i = 1, #a do
    local d = math.abs(a[i] - b[i]) / math.max(1, math.abs(b[i]))
    if not (d <= worst) then worst = d end -- a NaN counts as the largest difference
  end
  return worst
end

-- What every data-parallel run must show against the one-replica reference.
local function check_like_one_replica(what, losses, t)
  local d = largest_difference(losses, ref_losses)
  local w = largest_difference(t:weights(1), ref_weights)
  print(string.format("  %s: largest relative difference from one replica: loss %.3g, weights %.3g",
                      what, d, w))
  h.check(d <= 1e-5, string.format("%s: every step's loss is one replica's within 1e-5 "
                                   .. "(largest relative difference %.3g)", what, d))
  h.check(losses[#losses] < 0.5 * losses[1], what .. ": the loss falls")
  for r = 2, t.n do
    local i, a, b = t:first_difference(r)
    h.check(not i, string.format("%s: replica %d's weights are bitwise replica 1's (weight %s: "
                                 .. "%s vs %s)", what, r, tostring(i), tostring(a), tostring(b)))
  end
  h.check(w <= 1e-5, string.format("%s: the final weights are one replica's within 1e-5 "
                                   .. "(largest difference %.3g)", what, w))
end

h.test("2 replicas on one device, kernel all-reduce, graphs: one replica's training", function()
  local losses, t = train_on({home, home}, "kernel", "graph")
  check_like_one_replica("2 replicas", losses, t)
end)

h.test("4 replicas on one device, kernel all-reduce, launches: one replica's training", function()
  local losses, t = train_on({home, home, home, home}, "kernel", "launch")
  check_like_one_replica("4 replicas", losses, t)
end)

h.test("without the all-reduce the replicas part and the losses are not one replica's", function()
  local losses, t = train_on({home, home}, "skip", "launch")
  h.check(t:first_difference(2) ~= nil, "the replicas' weights differ")
  h.check(largest_difference(losses, ref_losses) > 1e-3, "the losses differ from one replica's")
end)

h.test("bad configurations are refused, saying what to change", function()
  local function cfg(extra)
    local c = {devices = {home, home}, reduce = "kernel", batch = BATCH, steps = 2, train = train}
    for key, v in pairs(extra) do c[key] = v end
    return c
  end
  h.raises("does not split into 5 equal shards; use a multiple of 5", dp.trainer, k,
           cfg({devices = {home, home, home, home, home}}))
  h.raises("11 steps of 24 rows need 264 training rows, the data set has 240", dp.trainer, k,
           cfg({steps = 11}))
  h.raises("reduce = sum: \"nccl\" or \"kernel\" expected for 2 replicas", dp.trainer, k,
           cfg({reduce = "sum"}))
  h.raises("needs cfg.comm, a communicator over the replicas' devices", dp.trainer, k,
           cfg({reduce = "nccl"}))
end)

if not unchecked then
  h.test("2 GPUs, NCCL all-reduce: one replica's training, the replicas bitwise identical",
         function()
    local comm = cuda.nccl.comm({0, 1})
    ref_losses, ref = train_on({0}, "nccl", "launch")
    ref_weights = ref:weights(1)
    for _, exec in ipairs({"launch", "graph"}) do
      local losses, t = train_on({0, 1}, "nccl", exec, comm)
      check_like_one_replica("NCCL, " .. exec, losses, t)
    end
    comm:free()
  end)
end

h.run(unchecked)
