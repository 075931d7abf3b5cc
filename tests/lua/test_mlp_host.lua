-- test_mlp_host.lua -- examples/nn_host.lua, the host side of the MLP example, needing no GPU: the
-- IDX reader, the MNIST CSV reader and its per-class split, gunzipping, the command-line parser,
-- the epoch order and the augmentation's shift codes (the same as scripts/bench/mlp_torch.py's),
-- the learning-rate schedule, the initial weights' file and the PNG chart.
local h = require "helper"
local cuda = require "cujit"
package.path = h.here() .. "../../examples/?.lua;" .. package.path
local H = require "nn_host"

local function idx(dims, data, dtype)
  local head = string.pack(">I2BB", 0, dtype or 8, #dims)
  for _, d in ipairs(dims) do head = head .. string.pack(">I4", d) end
  return head .. data
end

local function tmpname(suffix)
  return h.tmpname(suffix) -- in the test's scratch directory, removed at the end (os.tmpname: /tmp)
end

h.test("IDX: dims and data of a good file", function()
  local dims, data = H.parse_idx(idx({2, 2, 3}, "abcdefghijkl"))
  h.same(dims, {2, 2, 3}, nil, "dims")
  h.eq(data, "abcdefghijkl", "data")
end)

h.test("IDX: every malformed header is an error saying what is wrong", function()
  h.raises({"f.idx", "not an IDX file"}, H.parse_idx, "\1\0\8\1" .. string.pack(">I4", 1) .. "x", "f.idx")
  h.raises("only u8 (0x08) is read", H.parse_idx, idx({1}, "xxxx", 0x0D))
  h.raises("truncated header", H.parse_idx, string.pack(">I2BB", 0, 8, 3) .. "\0\0\0\1")
  h.raises("too short", H.parse_idx, "\0\0")
  h.raises("header says 6 bytes of data, the file holds 5", H.parse_idx, idx({2, 3}, "12345"))
  h.raises("header says 6 bytes of data, the file holds 7", H.parse_idx, idx({2, 3}, "1234567"))
end)

h.test("IDX data sets: gzipped files, labels checked, sizes matched", function()
  local img, lab = tmpname("-images"), tmpname("-labels")
  local function write(path, bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
  end
  write(img, idx({3, 2, 2}, string.rep("\7", 12)))
  write(lab, idx({3}, "\0\9\4"))
  assert(os.execute("gzip -f '" .. img .. "'"))
  local d = H.idx_dataset(img .. ".gz", lab)
  h.eq(d.n, 3, "n")
  h.eq(d.features, 4, "features")
  h.eq(d.images, string.rep("\7", 12), "images through gzip")
  h.eq(d.labels, "\0\9\4", "labels")
  write(lab, idx({3}, "\0\10\4"))
  h.raises("label 10 of item 2 is not a class 0..9", H.idx_dataset, img .. ".gz", lab)
  write(lab, idx({2}, "\0\1"))
  h.raises("do not match (3 images, 2 labels)", H.idx_dataset, img .. ".gz", lab)
  h.raises("cannot open", H.read_file, img .. ".missing")
  os.remove(img .. ".gz")
  os.remove(lab)
end)

h.test("CSV: per-class split, classes interleaved, bad lines refused", function()
  -- 3-pixel images; class 1 has 4 images, class 0 has 2: half of each trains
  local csv = "1,1,1,1\n2,2,2,1\n3,3,3,0\n4,4,4,1\n5,5,5,0\n6,6,6,1\n"
  local train, test = H.parse_mnist_csv(csv, "t.csv", 0.5)
  h.eq(train.n, 3, "train n")
  h.eq(test.n, 3, "test n")
  h.eq(train.features, 3, "features")
  -- train: class 1 -> rows 1, 2; class 0 -> row 3; interleaved: 1st of class 0, 1st of class 1,
  -- 2nd of class 1
  h.eq(train.labels, "\0\1\1", "train labels")
  h.eq(train.images, "\3\3\3\1\1\1\2\2\2", "train images")
  h.eq(test.labels, "\0\1\1", "test labels")
  h.eq(test.images, "\5\5\5\4\4\4\6\6\6", "test images")
  h.raises("t.csv line 2: \"256\" is not a value 0..255", H.parse_mnist_csv, "1,2,0\n256,1,0\n", "t.csv")
  h.raises("line 1: label 12 is not 0..9", H.parse_mnist_csv, "1,2,12\n", "t.csv")
  h.raises("line 2: 1 pixels where line 1 has 2", H.parse_mnist_csv, "1,2,0\n1,0\n", "t.csv")
  h.raises("no data", H.parse_mnist_csv, "", "t.csv")
  local first = H.take(train, 2)
  h.eq(first.labels, "\0\1", "take: labels")
  h.eq(first.images, "\3\3\3\1\1\1", "take: images")
end)

h.test("arguments: values, lists, flags and every kind of mistake", function()
  local spec = {epochs = 20, batch = {128}, data = "mnist5k", gemm = false}
  local o = H.parse_args({"--epochs=3", "--batch", "32,64", "--gemm", "--data", "fashion"}, spec)
  h.eq(o.epochs, 3, "epochs")
  h.same(o.batch, {32, 64}, nil, "batch list")
  h.eq(o.gemm, true, "flag")
  h.eq(o.data, "fashion", "string")
  h.eq(H.parse_args({}, spec).epochs, 20, "default")
  h.raises("unknown option --epoch", H.parse_args, {"--epoch", "3"}, spec)
  h.raises("--epochs needs a value", H.parse_args, {"--epochs"}, spec)
  h.raises('--epochs: "x" is not a number', H.parse_args, {"--epochs", "x"}, spec)
  h.raises("--gemm takes no value", H.parse_args, {"--gemm=1"}, spec)
  h.raises('argument 1 ("epochs") is not an option --name', H.parse_args, {"epochs"}, spec)
  h.raises("--batch: empty list", H.parse_args, {"--batch", ","}, spec)
  -- each is the whole message a user sees, with no position in nn_host.lua before it
  for _, case in ipairs({{{"--epoch", "3"}, "unknown option --epoch"},
                         {{"--epochs"}, "--epochs needs a value"},
                         {{"--gemm=1"}, "--gemm takes no value"},
                         {{"epochs"}, 'argument 1 ("epochs") is not an option --name'},
                         {{"--epochs", "x"}, '--epochs: "x" is not a number'}}) do
    local ok, err = pcall(H.parse_args, case[1], spec)
    h.check(not ok, case[2] .. ": refused")
    h.eq(err, case[2], "the message alone")
  end
end)

h.test("epoch order: permutations, reproducible, the same as the PyTorch twin's", function()
  local a, b = H.shuffler(1, 20), H.shuffler(1, 20)
  local first = {table.unpack(a())}
  h.same(b(), first, nil, "same seed, same first epoch")
  local second = a()
  local seen = {}
  for _, v in ipairs(second) do seen[v] = (seen[v] or 0) + 1 end
  for v = 0, 19 do h.eq(seen[v], 1, "count of " .. v) end
  local differs = false
  for i = 1, 20 do differs = differs or second[i] ~= first[i] end
  h.check(differs, "the second epoch has another order")
  -- printed by scripts/bench/mlp_torch.py's shuffler(1, 20), second epoch (its own splitmix64)
  h.same({table.unpack(second, 1, 10)}, {4, 7, 10, 8, 17, 13, 19, 0, 12, 11}, nil,
         "second epoch against Python's")
end)

h.test("shift codes: in range, every move drawn, reproducible, the same as the PyTorch twin's", function()
  local a = H.shift_codes(1, 12, 1)
  local first = {table.unpack(a())}
  h.same(H.shift_codes(1, 12, 1)(), first, nil, "same seed, same first epoch")
  local second = a()
  -- printed by scripts/bench/mlp_torch.py's shift_codes(1, 12, 1), second epoch
  h.same(second, {6, 5, 8, 3, 5, 5, 8, 2, 4, 3, 5, 1}, nil, "second epoch against Python's")
  h.same(H.shift_codes(3, 6, 2)(), {21, 15, 18, 21, 2, 9}, nil, "radius 2 against Python's")
  local seen, many = {}, H.shift_codes(5, 900, 1)()
  for _, c in ipairs(many) do seen[c] = (seen[c] or 0) + 1 end
  for c = 0, 8 do
    h.check((seen[c] or 0) > 60, string.format("move %d drawn %d times of 900", c, seen[c] or 0))
  end
  h.eq(seen[9], nil, "no code past 8 at radius 1")
  h.same(H.shift_codes(1, 4, 0)(), {0, 0, 0, 0}, nil, "radius 0: no moves")
  h.raises("shift radius 8 is not an integer 0..7", H.shift_codes, 1, 4, 8)
end)

h.test("learning rate: warm-up, held, cosine decay to 0, constant, the recipe's per batch", function()
  local lr, total = 0.2, 60
  h.near(H.lr_at(0, lr, 4, total, "cosine"), lr / 4 * 1, 1e-15, "first warm-up step: lr / 4")
  h.near(H.lr_at(3, lr, 4, total, "cosine"), lr * 0.5 * (1 + math.cos(math.pi * 3 / 60)), 1e-15,
         "the last warm-up step is the cosine's")
  h.near(H.lr_at(30, lr, 0, total, "cosine"), lr / 2, 1e-15, "half way: lr / 2")
  h.near(H.lr_at(5, lr, 3, total, "cosine"), 0.19659258262890683, 1e-15, "Python's lr_at(5, ...)")
  local last = H.lr_at(total - 1, lr, 4, total, "cosine")
  h.check(last > 0 and last < lr * 1e-3, string.format("the last step's lr %g is near 0", last))
  for t = 4, total - 1 do
    h.check(H.lr_at(t, lr, 4, total, "cosine") < H.lr_at(t - 1, lr, 4, total, "cosine"),
            "decreasing after the warm-up, step " .. t)
  end
  -- held, then the cosine over the last 32 of 80 steps (Python's lr_at(t, 0.2, 4, 80, "cosine", 32))
  h.eq(H.lr_at(2, lr, 4, 80, "cosine", 32), lr * 3 / 4, "warming up, before the decay")
  h.eq(H.lr_at(47, lr, 4, 80, "cosine", 32), lr, "held until the decay starts")
  h.eq(H.lr_at(48, lr, 4, 80, "cosine", 32), lr, "the decay's first step: its cosine is 1")
  h.near(H.lr_at(49, lr, 4, 80, "cosine", 32), 0.1995184726672197, 1e-15, "Python's, step 49")
  h.near(H.lr_at(60, lr, 4, 80, "cosine", 32), 0.138268343236509, 1e-15, "Python's, step 60")
  h.near(H.lr_at(79, lr, 4, 80, "cosine", 32), 0.00048152733278031826, 1e-15, "Python's, step 79")
  h.eq(H.lr_at(30, lr, 0, total, "cosine", total), H.lr_at(30, lr, 0, total, "cosine"),
       "decay over the whole run: the plain cosine")
  h.eq(H.lr_at(17, lr, 0, total, "constant"), lr, "constant")
  h.eq(H.lr_at(1, lr, 4, total, "constant"), lr / 2, "constant, warming up")
  h.near(H.default_lr("sgd", 128), 0.1, 1e-15, "SGD at batch 128")
  h.near(H.default_lr("sgd", 1024), 0.2, 1e-15, "SGD at batch 1024")
  h.near(H.default_lr("adam", 1024), 0.01, 1e-15, "Adam at batch 1024")
  h.near(H.default_lr("adam", 128), 0.0035355339059327377, 1e-15, "Adam at batch 128: / sqrt(8)")
end)

h.test("epoch order filled to whole batches: the permutation, then its first images", function()
  local perm = {4, 0, 3, 1, 2}
  h.same(H.fill_order(perm, 5), perm, nil, "a whole number of batches: the permutation")
  h.same(H.fill_order(perm, 8), {4, 0, 3, 1, 2, 4, 0, 3}, nil, "the last batch filled up")
  h.same(H.fill_order(perm, 12), {4, 0, 3, 1, 2, 4, 0, 3, 1, 2, 4, 0}, nil, "more than twice")
  h.same(perm, {4, 0, 3, 1, 2}, nil, "the permutation itself is left as it was")
end)

h.test("weights file: f32 round trip, every malformed file refused", function()
  local path = tmpname(".bin")
  local W = {0.1, -2.5, 3e-8, 1 / 3, 7, -0}
  H.write_weights(path, {{rows = 2, cols = 3, values = W}, {rows = 1, cols = 3, values = {0, 0, 1}}})
  local t = H.read_weights(path)
  h.eq(#t, 2, "tensors")
  h.eq(t[1].rows, 2, "rows")
  h.eq(t[1].cols, 3, "cols")
  for i, v in ipairs(W) do h.eq(t[1].values[i], h.f32(v), "value " .. i .. " as f32") end
  h.same(t[2].values, {0, 0, 1}, nil, "second tensor")
  local bytes = H.read_file(path)
  local function corrupt(b)
    local f = assert(io.open(path, "wb"))
    f:write(b)
    f:close()
  end
  corrupt(bytes:sub(1, -2))
  h.raises("truncated", H.read_weights, path)
  corrupt(bytes .. "x")
  h.raises("bytes after the last tensor", H.read_weights, path)
  corrupt("x" .. bytes)
  h.raises("not a cujit-mlp-weights file", H.read_weights, path)
  h.raises("tensor 1: 2 values for 1 x 3", H.write_weights, path, {{rows = 1, cols = 3,
                                                                    values = {1, 2}}})
  os.remove(path)
end)

h.test("chart: a PNG with the series drawn in their colours on white", function()
  local path = tmpname(".png")
  H.chart(path, {{values = {0, 1}, color = {200, 40, 40}}}, 100, 60)
  local img = cuda.image.read(path)
  os.remove(path)
  h.same(img.shape, {60, 100, 3}, nil, "shape")
  local function pixel(x, y) -- 1-based
    local at = ((y - 1) * 100 + (x - 1)) * 3
    return img[at + 1], img[at + 2], img[at + 3]
  end
  h.same({pixel(3, 3)}, {255, 255, 255}, nil, "background")
  h.same({pixel(21, 40)}, {200, 40, 40}, nil, "the first point (x = 20 px, value 0)")
  h.same({pixel(80, 20)}, {200, 40, 40}, nil, "the last point (value 1)")
end)

h.run()
