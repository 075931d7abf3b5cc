-- test_lua_native.lua -- the application's streams and events from Lua (issue 24):
-- cuda.external_stream(address) and cuda.external_event(address), and s:handle() / e:handle(),
-- with their refusals. The CPU device has no native objects: every call refuses it, saying so
-- (always checked). On a GPU (when there is one): the per-thread default stream (handle 2, a
-- CUstream every context has) wrapped runs cujit's kernels in order; a cujit stream's handle
-- wrapped again is refused; an event's handle wrapped records and waits.
local h = require "helper"
local cuda = require "cujit"

h.need_nvrtc(cuda)
local gpu = cuda.has_gpu()
if gpu then print(string.format("runs on: GPU %d (%s)", cuda.device().ordinal, cuda.device().name))
else cuda.device("cpu") end

local fill = cuda.jit("fill_native(int *x, int v, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v + i;
]])

h.test("addresses that are not handles are refused before any device is asked", function()
  h.raises({"bad argument #1 to 'cujit.external_stream'", "the stream's address is 0",
            "the default stream is nil"}, cuda.external_stream, 0)
  h.raises({"the stream's address (an integer, as s:handle() gives) expected, got string"},
           cuda.external_stream, "0x2")
  h.raises({"the stream's address (an integer", "got number"}, cuda.external_stream, 2.5)
  h.raises({"the stream's address (an integer", "got no value"}, cuda.external_stream)
  h.raises({"bad argument #1 to 'cujit.external_event'", "the event's address is 0",
            "pass an event made by cuEventCreate"}, cuda.external_event, 0)
  h.raises({"the event's address (an integer"}, cuda.external_event, {})
end)

h.test("the CPU device has no native streams or events", function()
  local was = cuda.device()
  cuda.device("cpu")
  print("runs on: CPU device (the refusals)")
  h.raises({"cujit_stream_wrap: the CPU device has no native streams"},
           cuda.external_stream, 2)
  h.raises({"cujit_event_wrap: the CPU device has no native events"}, cuda.external_event, 2)
  local s, e = cuda.stream(), cuda.event()
  h.raises({"cujit_stream_handle: the CPU device has no native streams",
            "native handles exist on GPUs only"}, s.handle, s)
  h.raises({"cujit_event_handle: the CPU device has no native events"}, e.handle, e)
  s:free()
  h.raises("stream has been freed", s.handle, s)
  cuda.device(was.arch == "cpu" and "cpu" or was.ordinal)
end)

if gpu then
  h.test("the per-thread default stream, wrapped, runs cujit's work in order", function()
    local s = cuda.external_stream(2)
    h.eq(s:handle(), 2, "its handle is the one given")
    local n = 1 << 16
    local x = cuda.device_array(n, "i32")
    for round = 1, 3 do
      fill[{(n + 255) // 256, 256, stream = s}](x, round * 10, n)
    end
    s:synchronize()
    local got = x:totable()
    h.eq(got[1], 30, "the last fill wins: x[1]")
    h.eq(got[n], 30 + n - 1, "x[n]")
    s:free()
    -- freed, it is forgotten, not destroyed: wrapping it again works
    local again = cuda.external_stream(2)
    fill[{(n + 255) // 256, 256, stream = again}](x, 5, n)
    again:synchronize()
    h.eq(x:totable()[7], 11, "a launch on the stream wrapped again")
    again:free()
  end)

  h.test("a cujit stream's handle is cujit's already; an event's handle records", function()
    local s = cuda.stream()
    local handle = s:handle()
    h.check(math.type(handle) == "integer" and handle ~= 0, "a stream handle: " .. tostring(handle))
    h.raises({"cujit_stream_wrap: the stream is already a cujit stream on device"},
             cuda.external_stream, handle)
    local e = cuda.event()
    local wrapped = cuda.external_event(e:handle())
    h.eq(wrapped:handle(), e:handle(), "the same native event")
    local x = cuda.device_array(256, "i32")
    fill[{1, 256, stream = s}](x, 1, 256)
    wrapped:record(s)
    wrapped:synchronize()
    h.check(e:query(), "the native event, recorded through its wrapper, is done")
    wrapped:free()
    h.check(e:query(), "freeing the wrapper left the event alive")
    h.eq(x:totable()[256], 256, "the launch before the record ran")
    s:free()
  end)
end

h.run(not gpu and
      "no GPU: the wrapped streams and events ran nowhere (the refusals were checked)" or nil)
