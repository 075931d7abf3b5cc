-- test_nccl.lua -- NCCL collectives through cujit over every GPU of the machine in one process
-- (issue 14): all_reduce with each operation, broadcast, reduce, all_gather and reduce_scatter,
-- in place and into other arrays, on default streams and on streams, checked against the host on
-- random integers (exact in f32 and f64); a one-rank communicator made through a unique id (the
-- per-process path); and the argument checks. Needs a GPU and NCCL (and NCCL_NVLS_ENABLE=0); runs
-- over two GPUs or more under CUJIT_REQUIRE_GPUS=2.
local T = require "helper"
local cuda = require "cujit"
local gpus = T.need_gpus(cuda, math.max(1, T.required_gpus()))
T.need_nccl(cuda)

local devices = {}
for d = 0, gpus - 1 do devices[#devices + 1] = d end
local comm = cuda.nccl.comm(devices)

-- One array per device of `values[d]` (a list), dtype `dtype`.
local function per_device(values, dtype)
  local arrays = {}
  for i, d in ipairs(devices) do arrays[i] = cuda.to_device(values[i], dtype, {device = d}) end
  return arrays
end

local function random_values(n, lo, hi)
  local v = {}
  for i = 1, #devices do v[i] = T.random_ints(n, lo, hi) end
  return v
end

local function wait_all()
  for _, d in ipairs(devices) do cuda.synchronize(d) end
end

local reduce_host = {
  sum = function(a, b) return a + b end,
  prod = function(a, b) return a * b end,
  min = math.min,
  max = math.max,
}

T.test("the communicator: ranks, local ranks, devices", function()
  T.eq(comm.ranks, gpus, "ranks")
  T.eq(comm["local"], gpus, "local ranks")
  T.same(comm:devices(), devices, nil, "devices")
  T.contains(tostring(comm), "cujit.nccl_comm of " .. gpus .. " ranks", "tostring")
end)

for _, op in ipairs({"sum", "prod", "min", "max", "avg"}) do
  T.test("all_reduce " .. op .. " in place, f64", function()
    local n = 1000 + math.random(0, 1000)
    local v = random_values(n, op == "prod" and -3 or -1000, op == "prod" and 3 or 1000)
    local arrays = per_device(v, "f64")
    comm:all_reduce(arrays, op)
    wait_all()
    for i = 1, #devices do
      local got = arrays[i]:copy_to_host()
      for k = 1, n do
        local want = v[1][k]
        for r = 2, #devices do
          want = op == "avg" and want + v[r][k] or reduce_host[op](want, v[r][k])
        end
        if op == "avg" then want = want / #devices end
        T.near(got[k], want, 1e-12, "rank " .. (i - 1) .. " [" .. k .. "]")
      end
    end
  end)
end

T.test("all_reduce into other arrays on streams leaves the inputs as they were", function()
  local n = 4096
  local v = random_values(n, -100, 100)
  local send, recv, streams = per_device(v, "i32"), {}, {}
  for i, d in ipairs(devices) do
    recv[i] = cuda.full(n, -1, "i32", {device = d})
    cuda.device(d)
    streams[i] = cuda.stream()
  end
  comm:all_reduce(send, "sum", recv, streams)
  for i = 1, #devices do streams[i]:synchronize() end
  for i = 1, #devices do
    local got, kept = recv[i]:copy_to_host(), send[i]:copy_to_host()
    for k = 1, n, 7 do
      local want = 0
      for r = 1, #devices do want = want + v[r][k] end
      T.eq(got[k], want, "sum[" .. k .. "]")
      T.eq(kept[k], v[i][k], "input kept [" .. k .. "]")
    end
  end
  cuda.device(0)
end)

T.test("broadcast from the last rank, reduce to rank 0", function()
  local n = 3000
  local v = random_values(n, -50, 50)
  local root = #devices - 1
  local arrays = per_device(v, "f32")
  comm:broadcast(arrays, root)
  wait_all()
  for i = 1, #devices do T.same(arrays[i]:totable(), v[root + 1], nil, "broadcast") end
  local arrays2 = per_device(v, "f32")
  local out = {}
  for i, d in ipairs(devices) do out[i] = cuda.full(n, 0, "f32", {device = d}) end
  comm:reduce(arrays2, "max", 0, out)
  wait_all()
  local got = out[1]:copy_to_host()
  for k = 1, n do
    local want = v[1][k]
    for r = 2, #devices do want = math.max(want, v[r][k]) end
    T.eq(got[k], want, "reduce max [" .. k .. "]")
  end
end)

T.test("all_gather and reduce_scatter", function()
  local n = 1024
  local v = random_values(n, -9, 9)
  local send, gathered = per_device(v, "f32"), {}
  for i, d in ipairs(devices) do gathered[i] = cuda.zeros(n * #devices, "f32", {device = d}) end
  comm:all_gather(send, gathered)
  wait_all()
  for i = 1, #devices do
    local got = gathered[i]:copy_to_host()
    for r = 1, #devices do
      for k = 1, n, 5 do T.eq(got[(r - 1) * n + k], v[r][k], "gathered rank " .. (r - 1)) end
    end
  end
  local big = random_values(n * #devices, -9, 9)
  local sends, outs = per_device(big, "f64"), {}
  for i, d in ipairs(devices) do outs[i] = cuda.zeros(n, "f64", {device = d}) end
  comm:reduce_scatter(sends, outs, "sum")
  wait_all()
  for i = 1, #devices do
    local got = outs[i]:copy_to_host()
    for k = 1, n, 3 do
      local want = 0
      for r = 1, #devices do want = want + big[r][(i - 1) * n + k] end
      T.eq(got[k], want, "reduce_scatter rank " .. (i - 1) .. " [" .. k .. "]")
    end
  end
end)

T.test("the checks before NCCL: one array per rank, on its device, one dtype NCCL has", function()
  local arrays = {}
  for i, d in ipairs(devices) do arrays[i] = cuda.zeros(16, "f32", {device = d}) end
  local extra = {table.unpack(arrays)}
  extra[#extra + 1] = arrays[1]
  T.raises("device arrays expected (one per local rank), got " .. #extra, comm.all_reduce, comm,
           extra, "sum")
  if #devices >= 2 then
    local swapped = {arrays[2], arrays[1], table.unpack(arrays, 3)}
    T.raises({"send buffer of local rank 0 lives on device 1, but that rank runs on device 0"},
             comm.all_reduce, comm, swapped, "sum")
  end
  local i16 = {}
  for i, d in ipairs(devices) do i16[i] = cuda.zeros(16, "i16", {device = d}) end
  T.raises("NCCL has no i16 elements", comm.all_reduce, comm, i16, "sum")
  T.raises("invalid option 'mean'", comm.all_reduce, comm, arrays, "mean")
  T.raises("root " .. #devices .. " is not a rank", comm.broadcast, comm, arrays, #devices)
  local short = {}
  for i, d in ipairs(devices) do short[i] = cuda.zeros(8, "f32", {device = d}) end
  T.raises("holds 8 elements, fewer than the 16", comm.all_reduce, comm, arrays, "sum", short)
  if #devices >= 2 then -- several local ranks: one array, or one stream, is not a list
    T.raises({"a list of " .. #devices .. " device arrays expected (one per local rank)"},
             comm.all_reduce, comm, arrays[1], "sum")
    T.raises({"a list of streams expected (one per local rank)"}, comm.all_reduce, comm, arrays,
             "sum", nil, cuda.stream({device = 0}))
    T.raises({"one stream per local rank expected"}, comm.all_reduce, comm, arrays, "sum", nil,
             {cuda.stream({device = 0})})
  end
  T.eq(comm.no_such_field, nil, "a field it does not have")
  T.eq(comm["local"], #devices, "every rank is local")
end)

T.test("one rank through a unique id: the per-process path, in one process", function()
  local id = cuda.nccl.unique_id()
  local path = T.tmpname(".id")
  cuda.nccl.write_id(path, id)
  local c1 = cuda.nccl.comm_rank{device = 0, ranks = 1, rank = 0, id = cuda.nccl.read_id(path)}
  T.eq(c1.ranks, 1, "ranks")
  T.eq(c1.rank, 0, "rank")
  local xs = T.random_ints(500, -10, 10)
  local a = cuda.to_device(xs, "f64", {device = 0})
  c1:all_reduce(a, "sum")
  cuda.synchronize(0)
  T.same(a:totable(), xs, nil, "a sum over one rank")
  c1:free()
  T.raises("has been freed", c1.all_reduce, c1, a, "sum")
  T.eq(tostring(c1), "cujit.nccl_comm (freed)", "a freed communicator says so")
  T.eq(c1.ranks, nil, "and has no ranks")
end)

T.run()
