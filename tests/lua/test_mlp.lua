-- test_mlp.lua -- examples/nn.lua's kernels on the device (its GEMMs: test_nn_gemm.lua): the softmax
-- cross-entropy against a Lua reference, extreme logits included; column sums; every layer's
-- gradient against central finite differences in f64; the optimisers against their formulas;
-- the learning-rate schedule against nn_host's; the gather's shifts against a host reference;
-- then training: 200 steps on a fixed seed reach a stated loss, graph replays match launches bit
-- for bit, and the f16 and bf16 paths, on nn.lua's GEMM and on cuda.gemm (library_gemm, checked
-- in test_nn_gemm.lua), end within a stated tolerance of the f32 one.
local h = require "helper"
local cuda = require "cujit"
package.path = h.here() .. "../../examples/?.lua;" .. package.path
local nn = require "nn"
local H = require "nn_host"

h.need_gpu(cuda)

local k = nn.kernels({}, {"f64", "f32", "f16", "bf16"})
local TILE_SMS = {large = 1, small = 1 << 30} -- the `sms` that makes nn.gemm pick each tile

local function dev(t, dtype)
  return cuda.to_device(t, dtype)
end

-- The softmax cross-entropy of one row in double, the stable way: loss, gradient (unscaled),
-- and the arg max (first of equals, 0-based).
local function xent_ref(z, y)
  local top, arg = z[1], 0
  for c = 2, #z do if z[c] > top then top, arg = z[c], c - 1 end end
  local s = 0
  for c = 1, #z do s = s + math.exp(z[c] - top) end
  local g = {}
  for c = 1, #z do g[c] = math.exp(z[c] - top) / s - (c - 1 == y and 1 or 0) end
  return math.log(s) - (z[y + 1] - top), g, arg
end

h.test("softmax cross-entropy: loss, gradient, right answers, extreme logits", function()
  local rows = {
    {0.3, -1.2, 2.5, 0.0, 1.1}, -- ordinary
    {1e4, -1e4, 0, 5, 3},      -- exp(1e4) overflows unless the maximum is taken out
    {-1e30, 1e30, 0, 0, 0},    -- and with the label on the smallest: a loss of 2e30
    {7, 7, 7, 7, 7},           -- ties: log 5, the first index wins
    {-50, -60, -70, -55, -52}, -- all very negative
    {h.random_floats(5)[1], 3, -3, 0.5, 0.25},
  }
  local labels = {2, 0, 0, 3, 1, 4}
  for _, dt in ipairs({"f64", "f32"}) do
    local flat = {}
    for _, r in ipairs(rows) do for _, v in ipairs(r) do flat[#flat + 1] = v end end
    local logits = dev(flat, dt)
    local zh = logits:copy_to_host() -- the logits as stored
    local dlogits = cuda.full({#rows, 5}, h.POISON, dt)
    local stats, state = cuda.zeros(2, "f64"), cuda.zeros(1, "i32")
    local scale = 4 -- the loss scale multiplies the gradient only
    local parts, done = cuda.zeros(2, "f64"), cuda.zeros(1, "i32")
    k.xent[{1, 256}](logits, dev(labels, "i32"), dlogits, dev({scale, 0, 0}, "f32"), stats, state,
                     parts, done, #rows, 5, nn.xent_lanes(5, 256), 1)
    local st, g = stats:copy_to_host(), dlogits:copy_to_host()
    local loss, right = 0, 0
    local tol = dt == "f64" and 1e-12 or 2e-6
    for r = 1, #rows do
      local z = {}
      for c = 1, 5 do z[c] = zh[(r - 1) * 5 + c] end
      local l, grad, arg = xent_ref(z, labels[r])
      loss, right = loss + l, right + (arg == labels[r] and 1 or 0)
      for c = 1, 5 do
        h.near(g[(r - 1) * 5 + c], grad[c] * scale / #rows, tol,
               string.format("%s dlogits[%d,%d]", dt, r, c))
      end
    end
    h.near(st[1], loss, tol, dt .. " loss sum")
    h.check(math.abs(st[1]) < math.huge, dt .. ": the loss is finite")
    h.eq(st[2], right, dt .. " right answers")
    -- without want_grad the gradient is left alone
    dlogits:fill(h.POISON)
    k.xent[{1, 256}](logits, dev(labels, "i32"), dlogits, dev({1, 0, 0}, "f32"), stats, state,
                     parts, done, #rows, 5, nn.xent_lanes(5, 256), 0)
    h.eq(dlogits:max(), h.POISON, dt .. ": no gradient written without want_grad")
  end
end)

-- The kernel gives a row to a group of `lanes` lanes (nn.xent_lanes: up to 32, a power of two;
-- one lane a row in blocks that are not whole warps): every width nn.xent_lanes gives and every
-- other power of two (more lanes than classes, fewer), widths it must not take as groups (3, 64,
-- 0, or any in blocks of 100 threads), classes past 32, rows not filling the last group, and the
-- maximum tied between lanes (the first index must win).
h.test("softmax cross-entropy: every group width, more classes than lanes, ties across lanes",
       function()
  h.eq(nn.xent_lanes(1, 128), 1, "lanes for 1 class")
  h.eq(nn.xent_lanes(10, 128), 16, "lanes for 10 classes")
  h.eq(nn.xent_lanes(32, 128), 32, "lanes for 32 classes")
  h.eq(nn.xent_lanes(45, 96), 32, "lanes for 45 classes")
  h.eq(nn.xent_lanes(10, 100), 1, "one lane a row in blocks that are not whole warps")
  h.eq(nn.xent_lanes(10, 16), 1, "nor in blocks of half a warp")
  for _, classes in ipairs({1, 2, 5, 10, 17, 32, 33, 45}) do
    for _, shape in ipairs({{128, nn.xent_lanes(classes, 128)}, {96, nn.xent_lanes(classes, 96)},
                            {100, nn.xent_lanes(classes, 100)}, {128, 1}, {128, 2}, {128, 32},
                            {128, 4}, {96, 3}, {128, 64}, {128, 0}, {100, 16}}) do
      local block, lanes = shape[1], shape[2]
      local rows = 37
      local z, labels = h.random_floats(rows * classes), {}
      for r = 1, rows do
        labels[r] = (r * 7) % classes
        if classes >= 4 then -- the row's maximum at two classes in different lanes
          local hi, at, tie = 50 + r, (r % 3), classes - 1 - (r % 2)
          z[(r - 1) * classes + at + 1], z[(r - 1) * classes + tie + 1] = hi, hi
          if r % 4 == 0 then labels[r] = at end -- right answers too
        end
      end
      local logits = dev(z, "f32")
      local zh = logits:copy_to_host()
      local dlogits = cuda.full({rows, classes}, h.POISON, "f32")
      local stats, state = cuda.zeros(2, "f64"), cuda.zeros(1, "i32")
      local grid = 3
      local parts, done = cuda.zeros(2 * grid, "f64"), cuda.zeros(1, "i32")
      k.xent[{grid, block}](logits, dev(labels, "i32"), dlogits, dev({2, 0, 0}, "f32"), stats,
                            state, parts, done, rows, classes, lanes, 1)
      local st, g = stats:copy_to_host(), dlogits:copy_to_host()
      local loss, right = 0, 0
      local what = string.format("%d classes, blocks of %d, %d lanes", classes, block, lanes)
      for r = 1, rows do
        local row = {}
        for c = 1, classes do row[c] = zh[(r - 1) * classes + c] end
        local l, grad, arg = xent_ref(row, labels[r])
        loss, right = loss + l, right + (arg == labels[r] and 1 or 0)
        for c = 1, classes do
          local got, want = g[(r - 1) * classes + c], grad[c] * 2 / rows
          if math.abs(got - want) > 2e-6 then
            h.near(got, want, 2e-6, string.format("%s: dlogits[%d,%d]", what, r, c))
          end
        end
      end
      h.near(st[1], loss, 1e-4, what .. ": loss sum")
      h.eq(st[2], right, what .. ": right answers (the first of tied maxima)")
      h.eq(done:copy_to_host()[1], 0, what .. ": the block counter back to 0")
    end
  end
end)

h.test("softmax cross-entropy over many blocks: their sums added once, at the step's place",
       function()
  local rows, classes = 2000, 10 -- 200 blocks of 8 rows a pass: every block has rows
  local z, labels = h.random_floats(rows * classes), {}
  for r = 1, rows do labels[r] = (r * 7) % classes end
  for _, grid in ipairs({1, 3, 8, 200}) do
    local logits = dev(z, "f32")
    local zh = logits:copy_to_host()
    local stats = cuda.full(6, -1, "f64")
    local state, done = dev({1}, "i32"), cuda.zeros(1, "i32")
    local parts = cuda.full(2 * grid, h.POISON, "f64")
    k.xent[{grid, 128}](logits, dev(labels, "i32"), cuda.zeros({rows, classes}, "f32"),
                        dev({1, 0, 0}, "f32"), stats, state, parts, done, rows, classes,
                        nn.xent_lanes(classes, 128), 1)
    local loss, right = 0, 0
    for r = 1, rows do
      local row = {}
      for c = 1, classes do row[c] = zh[(r - 1) * classes + c] end
      local l, _, arg = xent_ref(row, labels[r])
      loss, right = loss + l, right + (arg == labels[r] and 1 or 0)
    end
    local st = stats:copy_to_host()
    local what = grid .. " blocks"
    h.near(st[3], loss, 1e-5, what .. ": loss sum at step 1")
    h.eq(st[4], right, what .. ": right answers at step 1")
    h.same({st[1], st[2], st[5], st[6]}, {-1, -1, -1, -1}, nil, what .. ": other steps untouched")
    h.eq(done:copy_to_host()[1], 0, what .. ": the block counter back to 0")
  end
end)

h.test("column sums (bias gradients): rows and columns past the block's lanes, 1 to 32 rows of "
       .. "lanes", function()
  local rows, cols = 300, 45
  local x = h.random_floats(rows * cols)
  for _, lanes in ipairs({8, 32, 5, 1}) do -- nn.lua's launch takes 32
    local db = cuda.full(cols, h.POISON, "f64")
    k.colsum[{grid = 2, block = {32, lanes}}](dev(x, "f64"), db, rows, cols)
    local got = db:copy_to_host()
    for c = 1, cols do
      local s = 0
      for r = 1, rows do s = s + x[(r - 1) * cols + c] end
      h.near(got[c], s, 1e-12, lanes .. " rows of lanes: db[" .. c .. "]")
    end
  end
end)

-- A small f64 net with random parameters (biases too, so no pre-activation sits at 0) and a
-- random batch.
local function random_net(sms)
  local net = nn.net(k, {sizes = {7, 6, 5, 4}, dtype = "f64", batch = 5, seed = 3, max_steps = 1,
                         sms = sms, lr = 0, momentum = 0})
  for _, L in ipairs(net.layers) do
    for _, p in ipairs(L.params) do p.w:copy_from(h.random_floats(p.w.size)) end
  end
  net.ws.x:copy_from(h.random_floats(5 * 7))
  net.ws.y:copy_from({0, 3, 1, 2, 3})
  return net
end

h.test("gradients of every layer against central differences (f64, both tiles)", function()
  for tile, sms in pairs(TILE_SMS) do
    local net = random_net(sms)
    local ws = net.ws
    net:forward(ws, nil, true)
    net:backward(ws, nil)
    local function loss()
      net:forward(ws, nil, false)
      return net.stats:copy_to_host()[1] / ws.rows
    end
    local eps = 1e-6
    for l, L in ipairs(net.layers) do
      for _, p in ipairs(L.params) do
        local g, w = p.grad:copy_to_host(), p.w:copy_to_host()
        for i = 1, #w do
          local orig = w[i]
          w[i] = orig + eps
          p.w:copy_from(w)
          local up = loss()
          w[i] = orig - eps
          p.w:copy_from(w)
          local down = loss()
          w[i] = orig
          p.w:copy_from(w)
          h.near(g[i], (up - down) / (2 * eps), 1e-6,
                 string.format("%s tile: d loss / d %s%d[%d]", tile, p.name, l, i))
        end
      end
    end
  end
end)

h.test("f64 nets refuse to train (their master is their weights)", function()
  h.raises("f64 nets are for gradient checks", function() random_net(1):update(nil) end)
end)

-- One launch of the update kernel (f16 working copy and gradients) over the parameters o.w0 with
-- gradients o.g0, m1 = o.v0 and m2 = o.m2 on o.grid blocks; o also sets flag, state, clock, amp
-- (default {2, 0, 0}: the gradients are scaled by 2), lr, warmup, total, decay, cosine, wd,
-- momentum, adam, dynamic. Returns every array as the kernel left it, as host tables.
local function run_update(o)
  local n = #o.w0
  local a = {master = dev(o.w0, "f32"), w = cuda.zeros(n, "f16"), grad = dev(o.g0, "f16"),
             m1 = dev(o.v0, "f32"), m2 = dev(o.m2 or o.v0, "f32"), amp = dev(o.amp or {2, 0, 0}, "f32"),
             flag = dev({o.flag or 0}, "i32"), state = dev({o.state or 5}, "i32"),
             clock = dev({o.clock or 0}, "i32"), rate = cuda.full(1, -1, "f32"),
             done = cuda.zeros(1, "i32")}
  k.update[{o.grid or 1, 256}](a.master, a.w, a.grad, a.m1, a.m2, a.amp, a.flag, a.state, a.clock,
                               a.rate, a.done, o.lr, o.warmup or 0, o.total or 0, o.decay or 0,
                               o.cosine or 0, o.wd or 0, o.momentum or 0, 0.9, 0.999, 1e-8,
                               o.adam or 0, o.dynamic or 0, n)
  local r = {}
  for name, arr in pairs(a) do r[name] = arr:copy_to_host() end
  return r
end

h.test("the update: SGD and Adam with weight decay against their formulas, on every block",
       function()
  for _, n in ipairs({5, 3000}) do -- 3000 on 4 blocks of 256: each thread takes three
    local wd = 0.03
    local w0, g0, v0, m20 = h.random_floats(n), h.random_floats(n), h.random_floats(n), {}
    for i = 1, n do m20[i] = 0.125 * (i % 5 + 1) end
    local gh = dev(g0, "f16"):copy_to_host() -- the f16 gradients as stored; the loss scale is 2
    local r = run_update({w0 = w0, g0 = g0, v0 = v0, lr = 0.1, momentum = 0.9, wd = wd,
                          grid = n > 256 and 4 or 1})
    for i = 1, n do
      local vi = 0.9 * h.f32(v0[i]) + gh[i] / 2 + wd * h.f32(w0[i])
      h.near(r.m1[i], vi, 1e-6, "sgd velocity " .. i)
      h.near(r.master[i], h.f32(w0[i]) - 0.1 * vi, 1e-6, "sgd weight " .. i)
      h.near(r.w[i], r.master[i], 1e-3, "sgd f16 copy " .. i)
    end
    h.near(r.rate[1], 0.1, 1e-7, "the step's rate")
    r = run_update({w0 = w0, g0 = g0, v0 = v0, m2 = m20, lr = 0.01, adam = 1, clock = 4, wd = wd,
                    grid = n > 256 and 4 or 1}) -- 4 steps taken before: t = 5
    for i = 1, n do
      local g = gh[i] / 2 + wd * h.f32(w0[i])
      local a, b = 0.9 * h.f32(v0[i]) + 0.1 * g, 0.999 * m20[i] + 0.001 * g * g
      h.near(r.m1[i], a, 1e-6, "adam m " .. i)
      h.near(r.m2[i], b, 1e-6, "adam v " .. i)
      local step = 0.01 / (1 - 0.9 ^ 5) * a / (math.sqrt(b) / math.sqrt(1 - 0.999 ^ 5) + 1e-8)
      h.near(r.master[i], h.f32(w0[i]) - step, 1e-5, "adam weight " .. i)
    end
    h.eq(r.clock[1], 5, "Adam's clock moves on once")
  end
end)

h.test("the update ends the step once: counters, an overflow skips it, the dynamic loss scale",
       function()
  local w0, g0, v0 = h.random_floats(1000), h.random_floats(1000), h.random_floats(1000)
  local function run(flag, amp, dynamic)
    return run_update({w0 = w0, g0 = g0, v0 = v0, lr = 0.1, momentum = 0.9, flag = flag,
                       amp = amp, dynamic = dynamic, state = 5, clock = 7, grid = 4})
  end
  local r = run(0, {2, 5, 0}, 0)
  h.eq(r.state[1], 6, "the batch counter moves on by one, whatever the blocks")
  h.eq(r.clock[1], 8, "the step clock moves on by one")
  h.eq(r.done[1], 0, "the block counter back to 0")
  h.same(r.amp, {2, 5, 0}, nil, "a static scale is left alone")
  r = run(1, {2, 5, 0}, 1)
  for i = 1, 1000 do h.eq(r.master[i], h.f32(w0[i]), "a skipped step leaves weight " .. i) end
  h.same(r.m1, dev(v0, "f32"):copy_to_host(), nil, "a skipped step leaves the velocity")
  h.eq(r.state[1], 6, "a skipped step still moves the batch on")
  h.eq(r.clock[1], 7, "a skipped step is not counted")
  h.eq(r.flag[1], 0, "the overflow flag is cleared")
  h.same(r.amp, {1, 0, 1}, nil, "an overflow halves the scale, counts a skip")
  h.same(run(0, {2, 5, 0}, 1).amp, {2, 6, 0}, nil, "a good step is counted")
  h.same(run(0, {2, 999, 0}, 1).amp, {4, 0, 0}, nil, "the 1000th good step doubles the scale")
end)

h.test("the learning-rate schedule (the update's rate) against nn_host.lua's lr_at: warm-up, held, cosine",
       function()
  for _, case in ipairs({{0.2, 6, 60, "cosine", 60}, {0.1, 0, 620, "cosine", 620},
                         {0.2, 4, 80, "cosine", 32}, {0.1, 32, 640, "cosine", 256},
                         {0.05, 4, 100, "constant", 100}, {0.3, 0, 0, "cosine", 0}}) do
    local lr, warmup, total, schedule, decay = table.unpack(case)
    for _, t in ipairs({0, 1, 3, 5, 6, 7, 30, 47, 48, 49, 59, 61, 79, 310, 383, 384, 385, 619}) do
      local r = run_update({w0 = {0}, g0 = {0}, v0 = {0}, lr = lr, warmup = warmup, total = total,
                            decay = decay, cosine = schedule == "cosine" and 1 or 0, clock = t})
      h.near(r.rate[1], H.lr_at(t, lr, warmup, total, schedule, decay), 1e-6,
             string.format("lr at step %d (lr %g, warm-up %d, %d steps, %s over the last %d)", t,
                           lr, warmup, total, schedule, decay))
    end
  end
end)

h.test("gather: normalised rows in the epoch's order, moved by their shift codes", function()
  -- 3 images of 5 x 4 pixels (width 4), pixel values distinct and non-zero
  local width, height, n, radius = 4, 5, 3, 1
  local features = width * height
  local bytes = {}
  for i = 1, n * features do bytes[i] = 10 + i end
  local data = nn.upload(k, {n = n, features = features, images = string.char(table.unpack(bytes)),
                             labels = "\1\2\3"})
  data.order:copy_from({2, 0, 1})
  local codes = {0, 8, 5} -- (dx, dy) = (-1, -1), (1, 1), (1, 0)
  data.shifts:copy_from(codes)
  local x, y = cuda.full({n, features}, h.POISON, "f64"), cuda.zeros(n, "i32")
  local mean, std = 0.25, 0.5
  for _, r in ipairs({radius, 0}) do
    k.gather[{2, 32}](data.images, data.labels, data.order, data.shifts, cuda.zeros(1, "i32"), x, y,
                      n, features, width, r, mean, 1 / std)
    local got = x:copy_to_host()
    for b = 1, n do
      local src = ({2, 0, 1})[b]
      local side = 2 * r + 1
      local code = r > 0 and codes[b] or 0
      local dx, dy = code % side - r, code // side - r
      for f = 0, features - 1 do
        local row, col = f // width - dy, f % width - dx
        local p = 0
        if row >= 0 and row < height and col >= 0 and col < width then
          p = bytes[src * features + row * width + col + 1]
        end
        h.near(got[(b - 1) * features + f + 1], (p / 255 - mean) / std, 1e-12,
               string.format("radius %d, row %d, pixel %d", r, b, f))
      end
    end
    h.same(y:copy_to_host(), {3, 1, 2}, nil, "labels in the order")
  end
end)

-- Training on a made-up, separable set: 640 items of 64 pixels, class c = (i - 1) % 10 lighting
-- the pixels f with f % 10 == c over uniform noise (a fixed LCG), 32 a batch, 20 batches an
-- epoch, 10 epochs = 200 steps.
local function synthetic(n)
  n = n or 640
  local x, bytes, labels = 12345, {}, {}
  for i = 1, n do
    local c = (i - 1) % 10
    labels[i] = string.char(c)
    local row = {}
    for f = 0, 63 do
      x = x * 6364136223846793005 + 1442695040888963407
      row[f + 1] = (x >> 33) % 76 + (f % 10 == c and 180 or 0)
    end
    bytes[i] = string.char(table.unpack(row))
  end
  return nn.upload(k, {n = n, features = 64, images = table.concat(bytes),
                       labels = table.concat(labels)})
end
local data = synthetic()

h.test("evaluate: each data set on its own rows, a smaller set after a larger one and back",
       function()
  local function fresh()
    return nn.net(k, {sizes = {64, 32, 32, 10}, dtype = "f32", batch = 32, seed = 11})
  end
  local small = synthetic(100) -- the first 100 items of data
  local net = fresh()
  local big_loss, big_acc = net:evaluate(data)
  local small_loss, small_acc = net:evaluate(small)
  local alone_loss, alone_acc = fresh():evaluate(small)
  h.eq(small_loss, alone_loss, "the small set's loss after the large set, as on its own")
  h.eq(small_acc, alone_acc, "its accuracy")
  local again_loss, again_acc = net:evaluate(data)
  h.eq(again_loss, big_loss, "the large set's loss again")
  h.eq(again_acc, big_acc, "its accuracy")
end)

-- Trains 200 steps; exec "launch" or "graph" (first step launched, then captured and replayed).
-- Returns the last epoch's mean loss, the net, and the accuracy on the whole set.
local function train(dtype, exec, optimizer, lr, gemm, pdl)
  local net = nn.net(k, {sizes = {64, 32, 32, 10}, dtype = dtype, batch = 32, seed = 11,
                         max_steps = 20, optimizer = optimizer, lr = lr, momentum = 0.9,
                         gemm = gemm, pdl = pdl})
  local next_order = H.shuffler(7, 640)
  local graph
  for _ = 1, 10 do
    data.order:copy_from(next_order())
    net.state:fill(0)
    if exec == "launch" then
      for _ = 1, 20 do net:step(data, nil) end
    else
      local replays = 20
      if not graph then
        net:step(data, nil)
        graph = cuda.graph(function(s) net:step(data, s) end)
        replays = 19
      end
      graph:replay(replays)
    end
  end
  local st = net.stats:copy_to_host()
  local loss = 0
  for i = 1, 20 do loss = loss + st[2 * i - 1] end
  local ordered = {}
  for i = 1, 640 do ordered[i] = i - 1 end
  data.order:copy_from(ordered)
  local _, acc = net:evaluate(data)
  return loss / 640, net, acc
end

h.test("200 steps of SGD (f32) reach a loss below 0.02; graph replays match launches exactly", function()
  local loss, net, acc = train("f32", "launch", "sgd", 0.05)
  h.check(loss < 0.02, string.format("last epoch's loss %.4g < 0.02", loss))
  h.eq(acc, 1, "accuracy on the training set")
  local gloss, gnet = train("f32", "graph", "sgd", 0.05)
  h.eq(gloss, loss, "loss: graph against launches")
  for l, L in ipairs(net.layers) do
    for j, p in ipairs(L.params) do
      h.same(gnet.layers[l].params[j].w:copy_to_host(), p.w:copy_to_host(), nil,
             string.format("layer %d %s: graph against launches", l, p.name))
    end
  end
end)

h.test("200 steps of Adam (f32, lr 0.003) reach a loss below 0.05", function()
  local loss = train("f32", "launch", "adam", 0.003)
  h.check(loss < 0.05, string.format("last epoch's loss %.4g < 0.05", loss))
end)

h.test("f16 (loss-scaled) ends within 0.02 of f32's loss, no step skipped, all right", function()
  local l32 = train("f32", "launch", "sgd", 0.05)
  local l16, net16, acc16 = train("f16", "graph", "sgd", 0.05)
  h.check(math.abs(l16 - l32) <= 0.02, string.format("f16 loss %.4g, f32 loss %.4g", l16, l32))
  h.eq(acc16, 1, "f16 accuracy on the training set")
  h.eq(net16.amp:copy_to_host()[3], 0, "skipped f16 steps")
end)

h.test("bf16 (no loss scale) ends within 0.02 of f32's loss on every GEMM, all right", function()
  local l32 = train("f32", "launch", "sgd", 0.05)
  for _, gemm in ipairs({"nn", "library", "tensor", "auto"}) do
    local l, net, acc = train("bf16", gemm == "nn" and "launch" or "graph", "sgd", 0.05, gemm)
    h.check(math.abs(l - l32) <= 0.02, string.format("bf16 (%s) loss %.4g, f32 loss %.4g", gemm,
                                                     l, l32))
    h.eq(acc, 1, "bf16 accuracy on the training set (" .. gemm .. ")")
    h.same(net.amp:copy_to_host(), {1, 0, 0}, nil, "bf16: scale 1, no step counted or skipped")
    h.eq(net.layers[1].params[1].w.dtype, "bf16", "the working copy's dtype")
  end
end)

-- Each launch's configuration is seen by a stand-in for every kernel of k that passes the launch
-- on (watching: per kernel, the launches with pdl, without, and with another value).
local function watching(fn)
  local seen, real = {}, {}
  for name, kernel in pairs(k) do
    if name ~= "dummies" then -- nn_gemm.lua's stand-in arguments, not a kernel
      real[name] = kernel
      k[name] = setmetatable({}, {__index = function(_, config)
        local n = seen[name] or {pdl = 0, plain = 0, other = 0}
        seen[name] = n
        local key = config.pdl == true and "pdl" or config.pdl == nil and "plain" or "other"
        n[key] = n[key] + 1
        return kernel[config]
      end})
    end
  end
  local ok, loss, net = pcall(fn)
  for name, kernel in pairs(real) do k[name] = kernel end
  if not ok then error(loss, 0) end
  return seen, loss, net
end

-- "mma": nn.lua's products of f16 and bf16 on its tensor-core kernel where it is compiled (a GPU
-- of sm_80 or later), counted by watching; where it is not (the CPU device), the SIMT kernel's.
-- "auto" takes it too for products below nn.TENSOR_MIN_MACS (all of this net's); "nn" and
-- "tensor" never do.
h.test("mma: f16 and bf16 nets run on the tensor-core kernel and end within 0.02 of f32's loss",
       function()
  local function launches(fn) -- of gemm_mma while fn runs
    local n = watching(fn).gemm_mma
    return n and n.pdl + n.plain + n.other or 0
  end
  -- 200 steps of 3 forward, 3 weight-gradient and 2 input-gradient products, and the final
  -- evaluation's 3: every one on the tensor-core kernel where it is compiled
  local every = k.gemm_mma and 200 * 8 + 3 or 0
  local l32 = train("f32", "launch", "sgd", 0.05)
  for _, dt in ipairs({"bf16", "f16"}) do
    for _, mode in ipairs({"nn", "tensor"}) do
      h.eq(launches(function() train(dt, "launch", "sgd", 0.05, mode) end), 0,
           dt .. ": " .. mode .. " never takes nn.lua's tensor-core kernel")
    end
    h.eq(launches(function() train(dt, "launch", "sgd", 0.05, "auto") end), every,
         dt .. ": auto takes it for every product below nn.TENSOR_MIN_MACS")
    local l, net, acc
    h.eq(launches(function() l, net, acc = train(dt, "launch", "sgd", 0.05, "mma") end), every,
         dt .. ": every product on the tensor-core kernel")
    h.check(math.abs(l - l32) <= 0.02, string.format("%s (mma) loss %.4g, f32 loss %.4g", dt, l,
                                                     l32))
    h.eq(acc, 1, dt .. " (mma) accuracy on the training set")
    h.eq(net.amp:copy_to_host()[3], 0, dt .. " (mma): skipped steps")
  end
  h.eq(launches(function() train("f32", "launch", "sgd", 0.05, "mma") end), 0,
       "f32 (mma): the SIMT kernel, the tensor-core one takes no f32")
end)

-- pdl = true: every kernel of a step launched with programmatic dependent launch (nn_gemm.lua's
-- ENTRY makes each wait for the kernel before it, which lets it start at once), seen by watching.
-- On a GPU of sm_90 the kernels really overlap, so a kernel that touched memory before its wait
-- would show here as a difference from the same training without pdl, which must end on exactly
-- the same weights (the kernels' sums are in fixed orders), as launches and as graph replays.
h.test("pdl: every launch of a step carries it, and training ends exactly where it does without",
       function()
  local d = cuda.device()
  if d.arch ~= "cpu" and d.cc_major < 9 then
    h.raises("sm_90", train, "f16", "launch", "sgd", 0.05, "auto", true)
    return
  end
  h.raises("pdl must be true or false, not on", nn.net, k,
           {sizes = {4, 2}, dtype = "f32", batch = 1, seed = 1, pdl = "on"})
  for _, exec in ipairs({"launch", "graph"}) do
    local plain, l0, net0 = watching(function() return train("f16", exec, "sgd", 0.05, "auto") end)
    local seen, l1, net1 = watching(function()
      return train("f16", exec, "sgd", 0.05, "auto", true)
    end)
    for name, n in pairs(plain) do
      h.eq(n.pdl + n.other, 0, exec .. ": without pdl no launch of " .. name .. " names it")
    end
    -- f16: the overflow check runs too; the GEMMs are nn.lua's (gemm_mma on a GPU)
    for _, name in ipairs({"gather", "xent", "check_finite", "update"}) do
      h.check(seen[name] and seen[name].pdl > 0, exec .. ": " .. name .. " launched with pdl")
    end
    h.check((seen.gemm_small or seen.gemm_mma or {pdl = 0}).pdl > 0, exec .. ": GEMMs with pdl")
    for name, n in pairs(seen) do
      -- only the net's set-up (round_to) and the evaluation's gather are not a step's launches
      local outside = ({round_to = 1, gather = 1})[name] or 0
      h.eq(n.plain, outside, exec .. ": " .. name .. "'s launches without pdl")
      h.eq(n.other, 0, exec .. ": " .. name .. ": pdl is true or absent")
    end
    h.eq(l1, l0, exec .. ": the loss with pdl and without")
    for l, L in ipairs(net0.layers) do
      for j, p in ipairs(L.params) do
        h.same(net1.layers[l].params[j].master:copy_to_host(), p.master:copy_to_host(), nil,
               string.format("%s: layer %d %s with pdl and without", exec, l, p.name))
      end
    end
  end
end)

h.test("f16 on cuda.gemm ends within 0.02 of f32's loss; graph replays match launches", function()
  local l32 = train("f32", "launch", "sgd", 0.05)
  local l16, net16 = train("f16", "launch", "sgd", 0.05, "library")
  h.check(math.abs(l16 - l32) <= 0.02, string.format("f16 loss %.4g, f32 loss %.4g", l16, l32))
  h.eq(net16.amp:copy_to_host()[3], 0, "skipped f16 steps")
  local g16, gnet = train("f16", "graph", "sgd", 0.05, "library")
  h.eq(g16, l16, "loss: graph against launches")
  h.same(gnet.layers[1].params[1].w:copy_to_host(), net16.layers[1].params[1].w:copy_to_host(),
         nil, "layer 1 W: graph against launches")
end)

h.test("parameters live in flat arrays at aligned offsets; a given gradient array is used, or refused",
       function()
  local layout, total = nn.layout({7, 6, 5})
  h.eq(#layout, 2, "two layers")
  local at = 0
  for l, shape in ipairs({{7, 6}, {6, 5}}) do
    local W, b = layout[l][1], layout[l][2]
    h.check(W.name == "W" and b.name == "b", "W, then b")
    h.eq(W.size, shape[1] * shape[2], "W's size")
    h.eq(b.size, shape[2], "b's size")
    h.eq(W.offset, at, "W follows the parameter before, at a multiple of 64")
    h.eq(b.offset, W.offset + 64, "b at the next multiple of 64")
    at = b.offset + 64
  end
  h.eq(total, at, "the arrays' size")
  local grad = cuda.zeros(total, "f32")
  local net = nn.net(k, {sizes = {7, 6, 5}, dtype = "f32", batch = 2, seed = 1, grad = grad})
  local b2 = net.layers[2].params[2].grad
  b2:fill(3)
  local flat = grad:copy_to_host()
  h.eq(flat[layout[2][2].offset + 1], 3, "a parameter's gradient is a view of the given array")
  h.eq(flat[layout[2][2].offset], 0, "and only of its place")
  h.raises({"grad: 5 f32 values given, the net has " .. total .. " f32"}, nn.net, k,
           {sizes = {7, 6, 5}, dtype = "f32", batch = 2, seed = 1, grad = cuda.zeros(5, "f32")})
  h.raises({"grad: " .. total .. " f64 values given, the net has " .. total .. " f32"}, nn.net, k,
           {sizes = {7, 6, 5}, dtype = "f32", batch = 2, seed = 1, grad = cuda.zeros(total, "f64")})
end)

h.test("a net's gemm is nn, library, tensor, auto or mma", function()
  h.raises({"gemm cublas is not nn, library, tensor, auto or mma"}, nn.net, k,
           {sizes = {4, 2}, dtype = "f32", batch = 1, gemm = "cublas"})
end)

-- Which GEMM each mode takes for a product: "auto" as "tensor" (cuda.gemm where its tensor cores
-- take the product), but only from nn.TENSOR_MIN_MACS multiply-adds, and nn.lua's tensor-core
-- kernel for the rest, as "mma", where it is compiled (else nn.lua's SIMT one). The shapes are
-- the MLP's first layer's at batch 128 (2^23.6: below) and 1024 (2^26.6: above), in bf16, which
-- an sm_90 GPU's tensor path takes; elsewhere cuda.gemm_kernel says "simt" and every mode but
-- "library" keeps nn.lua's. f32 products never go to nn.lua's tensor-core kernel.
h.test("auto sends a product to the tensor cores only when it is large enough", function()
  local function arrays(m, n, kk)
    return cuda.device_array({m, kk}, "bf16"), cuda.device_array({kk, n}, "bf16"),
           cuda.device_array({m, n}, "bf16")
  end
  h.check(1024 * 128 * 784 < nn.TENSOR_MIN_MACS and 4096 * 128 * 784 >= nn.TENSOR_MIN_MACS,
          "the threshold lies between the two shapes")
  local dev_info = cuda.device()
  local sm90 = dev_info.arch ~= "cpu" and dev_info.cc_major == 9
  for _, shape in ipairs({{1024, 128, 784}, {4096, 128, 784}}) do
    local m, n, kk = shape[1], shape[2], shape[3]
    local A, B, C = arrays(m, n, kk)
    local tensor = cuda.gemm_kernel(A, B, C) == "tensor"
    if sm90 then h.check(tensor, string.format("sm_90 takes %dx%dx%d on tensor cores", m, n, kk)) end
    local big = m * n * kk >= nn.TENSOR_MIN_MACS
    local own = k.gemm_mma and "mma" or "nn" -- nn.lua's bf16 products in "mma" and "auto"
    local want = {nn = "nn", library = "library", tensor = tensor and "library" or "nn",
                  auto = tensor and big and "library" or own, mma = own}
    for mode, expected in pairs(want) do
      local net = nn.net(k, {sizes = {4, 2}, dtype = "bf16", batch = 1, seed = 1, gemm = mode})
      h.eq(net:gemm_for(nil, A, B, C, m, n, kk, 0, 0), expected,
           string.format("%s for %dx%dx%d", mode, m, n, kk))
    end
    local A32, B32, C32 = cuda.device_array({m, kk}), cuda.device_array({kk, n}),
                          cuda.device_array({m, n})
    for _, mode in ipairs({"mma", "auto", "nn"}) do
      local net = nn.net(k, {sizes = {4, 2}, dtype = "f32", batch = 1, seed = 1, gemm = mode})
      h.eq(net:gemm_for(nil, A32, B32, C32, m, n, kk, 0, 0), "nn",
           string.format("%s for %dx%dx%d in f32", mode, m, n, kk))
    end
    if sm90 then
      local net = nn.net(k, {sizes = {4, 2}, dtype = "bf16", batch = 1, seed = 1, gemm = "auto"})
      h.eq(net:gemm_for(nil, A, B, C, m, n, kk, 0, 0), big and "library" or "mma",
           string.format("auto on sm_90 for %dx%dx%d", m, n, kk))
    end
  end
end)

h.run()
