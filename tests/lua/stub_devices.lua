-- stub_devices.lua -- the Lua binding over two pretend GPUs (the stand-in driver with
-- CUJIT_STUB_DEVICES=2; tests/CMakeLists.txt runs it as lua.stub_devices, and nowhere else):
-- cuda.has_gpu says yes; a launch taking an array of the other GPU is refused, naming both devices
-- and cuda.enable_peer, which then lets it through (the stand-in runs no kernel: what is checked
-- is what cujit answers); cuda.enable_peer's refusals come back as Lua errors with their reasons;
-- a stream's and an event's native address; cujit's own stream not wrapped a second time; what an
-- array and a graph of a GPU print.
-- Two real GPUs: lua.test_multi_gpu.
local h = require "helper"
local cuda = require "cujit"

h.need_nvrtc(cuda)
h.need_stand_in(cuda, "stub_devices.lua", 2)

h.test("has_gpu with the stand-in's devices", function()
  local yes, why = cuda.has_gpu()
  h.eq(yes, true, "a GPU: " .. tostring(why))
  h.eq(why, nil, "no reason given with a yes")
end)

h.test("an array of the other GPU: refused, then taken after enable_peer", function()
  cuda.device(0)
  local poke = cuda.jit("poke(int *x)", "x[0] = 1;")
  local there = cuda.device_array(4, "i32", {device = 1})
  h.raises({"the buffer lives on device 1 but the launch is on device 0", "cuda.enable_peer"},
           function() poke[{1, 1}](there) end)
  cuda.enable_peer(0, 1)
  poke[{1, 1}](there)
  cuda.synchronize()
  cuda.device(1)
  local back = cuda.device_array(4, "i32", {device = 0})
  h.raises({"the buffer lives on device 0 but the launch is on device 1"},
           function() poke[{1, 1}](back) end) -- access is one way
  h.raises({"device 1 and its peer are the same device"}, cuda.enable_peer, 1, 1)
  h.raises({"the CPU device shares no memory with a GPU"}, cuda.enable_peer, 0, "cpu")
  h.raises({"bad argument"}, cuda.enable_peer, 0)
end)

h.test("native handles: a stream's and an event's address; cujit's own stream not wrapped again", function()
  local s = cuda.stream({device = 1})
  local address = s:handle()
  h.check(math.type(address) == "integer" and address ~= 0, "a stream's address: " .. tostring(address))
  h.raises({"cujit_stream_wrap: the stream is already a cujit stream on device 1"},
           cuda.external_stream, address, {device = 1})
  h.raises({"the stream is already a cujit stream on device 1"}, cuda.external_stream, address)
  local e = cuda.event()
  local native = e:handle()
  h.check(math.type(native) == "integer" and native ~= 0, "an event's address")
  h.raises({"the stream's address (an integer, as s:handle() gives) expected, got string"},
           cuda.external_stream, tostring(address))
  h.raises({"the stream's address is 0"}, cuda.external_stream, 0)
  h.raises({"the event's address is 0", "cuEventCreate"}, cuda.external_event, 0)
  s:free()
end)

h.test("what an array and a graph of a GPU say they are", function()
  cuda.device(1)
  local poke = cuda.jit("poke(int *x)", "x[0] = 1;")
  local a = cuda.device_array(4, "i32")
  h.eq(tostring(a), "cujit.device_array i32[4] on device 1", "an array on device 1")
  poke[{1, 1}](a) -- loaded on device 1 before a capture
  local one = cuda.graph(function(s) poke[{1, 1, stream = s}](a) end)
  h.eq(tostring(one), "cujit.graph: 1 kernel node on device 1", "one node")
  local two = cuda.graph(function(s)
    poke[{1, 1, stream = s}](a)
    poke[{1, 1, stream = s}](a)
  end)
  h.eq(tostring(two), "cujit.graph: 2 kernel nodes on device 1", "two nodes")
  cuda.device(0)
end)

h.run()
