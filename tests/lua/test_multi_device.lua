-- test_multi_device.lua -- what of several devices and NCCL runs without a GPU (issue 14): arrays
-- placed by {device = d} and their owner, copies with a:copy_to, the option and device errors,
-- NCCL refusing the CPU device, the message when NCCL is absent, unique ids as text and the
-- rendezvous file. The GPU parts are test_multi_gpu.lua, test_devices_mixed.lua, test_nccl.lua.
local cuda = require "cujit"
local T = require "helper"

T.test("{device = 'cpu'} places arrays on the CPU device, whatever the current device", function()
  local a = cuda.device_array(4, "f32", {device = "cpu"})
  T.eq(a.device, -1, "device_array's device")
  T.eq(cuda.device_array(4, {device = -1}).device, -1, "device_array without a dtype")
  T.eq(cuda.zeros({2, 3}, "i32", {device = "cpu"}).device, -1, "zeros' device")
  local f = cuda.full(3, 7, "f64", {device = "cpu"})
  T.eq(f.device, -1, "full's device")
  T.same(f:totable(), {7, 7, 7}, nil, "full's values")
  local t = cuda.to_device({1, 2, 3}, "f32", {device = "cpu"})
  T.same(t:totable(), {1, 2, 3}, nil, "to_device's values")
  T.eq(t.device, -1, "to_device's device")
  T.eq(cuda.to_device(cuda.host_array({5, 6}, "i64"), {device = "cpu"}).device, -1,
       "to_device of a host array, the options in the dtype's place")
end)

T.test("{device = 'cpu'} places streams and events too", function()
  local s = cuda.stream{device = "cpu"}
  T.eq(tostring(s), "cujit.stream on the CPU device", "the stream's device (not 'device -1')")
  local e = cuda.event{device = -1}
  e:record(s)
  s:synchronize()
  T.raises("option 'device' is an ordinal", cuda.stream, {device = true})
end)

T.test("a:copy_to(device) makes a copy there with the same contents; b:copy_from(a) too", function()
  local a = cuda.to_device({1.5, -2, 3}, "f32", {device = "cpu"})
  local b = a:copy_to("cpu")
  T.eq(b.device, -1, "the copy's device")
  T.eq(b.dtype, "f32", "the copy's dtype")
  T.same(b:totable(), {1.5, -2, 3}, nil, "the copy's values")
  a:fill(9)
  T.same(b:totable(), {1.5, -2, 3}, nil, "the copy is its own memory")
  b:copy_from(a)
  T.same(b:totable(), {9, 9, 9}, nil, "copy_from")
end)

T.test("a device that does not exist, or a malformed one, is refused with what exists", function()
  local missing = T.gpu_count(cuda) + 3
  -- With a driver the message names what exists; without one, why there is no GPU.
  local _, no_gpu = cuda.devices()
  local why = no_gpu and no_gpu:match("^[^(]*") or ("device " .. missing .. " does not exist")
  T.raises(why, cuda.device_array, 4, "f32", {device = missing})
  T.raises("option 'device' is an ordinal", cuda.device_array, 4, "f32", {device = 1.5})
  T.raises("option 'device' is an ordinal", cuda.zeros, 4, {device = {}})
  T.raises(why, cuda.to_device, {1, 2}, "f32", {device = missing})
  T.raises("option 'device' is an ordinal", cuda.to_device, {1, 2}, "f32", {device = 1.5})
  T.raises("option 'device' is an ordinal", cuda.to_device, cuda.host_array(2), {device = true})
  local a = cuda.device_array(2, "f32", {device = "cpu"})
  T.raises(why, a.copy_to, a, missing)
  T.raises('an ordinal (0, 1, ...) or "cpu"', a.copy_to, a, "gpu")
  T.raises("cujit.stream expected", a.copy_to, a, "cpu", 5)
end)

T.test("peer access and NCCL refuse the CPU device, saying why", function()
  T.raises("NCCL runs on GPUs, not on the CPU device", cuda.nccl.comm, {"cpu"})
  T.raises("list of 1 to 64 device ordinals", cuda.nccl.comm, {})
  T.raises("NCCL runs on GPUs", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 1, id = string.rep("ab", 128)})
  if T.gpu_count(cuda) > 0 then
    T.raises("the CPU device shares no memory with a GPU", cuda.enable_peer, 0, "cpu")
  end
end)

T.test("comm_rank checks its table, the rank and the id before NCCL", function()
  T.raises("{device = d, ranks = n, rank = r, id = hex} expected", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2})
  T.raises("option 'device' is an ordinal", cuda.nccl.comm_rank, {ranks = 2, rank = 0, id = "0"})
  T.raises("rank must be in 0 .. ranks - 1", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 2, id = "00"})
  T.raises("a unique id is 256 hex digits, got 3 characters", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 0, id = "abc"})
  T.raises("has 'z' at position 5, which is not a hex digit", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 0, id = "0000z" .. string.rep("0", 251)})
  -- a digit's second character, and one far in: each named by itself and its place
  T.raises("has 'y' at position 6, which is not a hex digit", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 0, id = "00000y" .. string.rep("1", 250)})
  T.raises("has 'q' at position 200, which is not a hex digit", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 0, id = string.rep("a", 199) .. "q" .. string.rep("b", 56)})
  T.raises("more than one word", cuda.nccl.comm_rank,
           {device = "cpu", ranks = 2, rank = 0, id = string.rep("0", 256) .. " x"})
end)

T.test("the rendezvous file: written whole, read back, waited for, and checked", function()
  local path = T.tmpname(".id")
  local id = string.rep("0123456789abcdef", 16)
  cuda.nccl.write_id(path, id)
  T.eq(cuda.nccl.read_id(path, 1), id, "the id read back")
  local f = assert(io.open(path))
  T.eq(f:read("a"), id .. "\n", "the file holds the id and a newline")
  f:close()
  T.raises("did not appear within 0.05 s", cuda.nccl.read_id, T.tmpname(".id"), 0.05)
  local bad = T.tmpname(".id")
  f = assert(io.open(bad, "w"))
  f:write("not an id\n")
  f:close()
  T.raises({bad, "a unique id is 256 hex digits"}, cuda.nccl.read_id, bad, 1)
  T.raises("a unique id is 256 hex digits", cuda.nccl.write_id, T.tmpname(".id"), "12")
  T.raises("cannot write the unique id", cuda.nccl.write_id, T.scratch() .. "/no/such/dir/id", id)
end)

-- A child `cujit` with the environment `env` prepended, running `code`; its output.
local function child(env, code)
  local p = assert(io.popen(string.format("%s %s -e '%s' 2>&1", env, arg[-1], code)))
  local out = p:read("a")
  p:close()
  return out
end

T.test("without NCCL the message says what to install or set", function()
  local out = child("CUJIT_NCCL=/nonexistent/libnccl.so.2",
                    "local c = require \"cujit\"; print(c.nccl.available()); " ..
                    "print(pcall(c.nccl.unique_id))")
  T.contains(out, "false", "available()")
  T.contains(out, "NCCL could not be opened from CUJIT_NCCL=/nonexistent/libnccl.so.2",
             "the message names the path")
  T.contains(out, "cujit_nccl_unique_id:", "unique_id fails too, naming itself")
end)

if cuda.nccl.available() then
  T.test("with NCCL: a unique id is 256 hex digits and survives the file", function()
    local id = cuda.nccl.unique_id()
    T.eq(#id, 256, "the id's length")
    T.check(id:match("^%x+$"), "the id is hex: " .. id)
    T.check(cuda.nccl.unique_id() ~= id, "two ids differ")
    local path = T.tmpname(".id")
    cuda.nccl.write_id(path, id)
    T.eq(cuda.nccl.read_id(path), id, "read back")
  end)
else
  print("note: no NCCL here (" .. select(2, cuda.nccl.available()) .. "); the unique id test "
        .. "runs where NCCL is")
end

T.run()
