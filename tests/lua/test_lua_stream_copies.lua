-- test_lua_stream_copies.lua -- what a copy queued on a stream reads from must outlive every
-- reference the script holds (issue 28). The source is protected twice: the copy stages pageable
-- memory (a Lua table's converted elements, a plain host array) when it is queued, as CUDA does
-- and the CPU device follows, and the binding keeps the source alive on the stream until the
-- stream is synchronized (for a pinned host array, which a GPU reads when it gets to the copy,
-- the second is what counts; cuMemFreeHost's own wait is a third). Either alone suffices, so
-- this test fails only when both are lost (checked by hand on the CPU device: without staging and
-- keep, 2 and 4088 of 4096 elements came out wrong). Each copy is queued behind a kernel that
-- keeps the stream busy for a while, the script drops its references and collects its garbage,
-- then allocates memory of the same size full of other values (where the freed source would be
-- reused); after the stream is synchronized the device array must hold the source's values. On
-- a GPU when there is one (pinned memory there), else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local N = 4096
local busy = h.busy_launcher(cuda)

-- Makes garbage where the dropped source was: new scratch memory of the same size, other values.
local function reuse_memory()
  for _ = 1, 8 do
    local t = {}
    for i = 1, N do t[i] = -1.0 end
    local other = cuda.to_device(t, "f32")
    other:free()
    local ha = cuda.host_array(N, "f32", {pinned = h.has_gpu(cuda)})
    ha:fill(-2.0)
    ha:free()
  end
end

local function check(d, what)
  local got = d:totable()
  local wrong = 0
  for i = 1, N do
    if got[i] ~= i * 0.5 then wrong = wrong + 1 end
  end
  h.eq(wrong, 0, what .. ": elements that are not the source's")
end

-- Queues a copy from the source make_source() returns behind the busy kernel, drops the source,
-- collects the garbage and reuses its memory, then checks what the copy wrote.
local function copy_after_the_source_is_dropped(make_source, what)
  local s = cuda.stream()
  local d = cuda.device_array(N, "f32")
  busy(s) -- still running when the garbage is made; correct code passes whatever the timing
  do
    d:copy_from(make_source(), s)
  end
  collectgarbage()
  collectgarbage()
  reuse_memory()
  s:synchronize()
  check(d, what)
end

h.test("a table copied on a stream is kept until the stream has copied it", function()
  copy_after_the_source_is_dropped(function()
    local t = {}
    for i = 1, N do t[i] = i * 0.5 end
    return t
  end, "the table's copy")
end)

h.test("a host array copied on a stream is kept until the stream has copied it", function()
  copy_after_the_source_is_dropped(function()
    local ha = cuda.host_array(N, "f32", {pinned = h.has_gpu(cuda)})
    for i = 1, N do ha[i] = i * 0.5 end
    return ha
  end, "the host array's copy")
end)

-- What a stream keeps alive for its pending copies it lets go of once it is synchronized, or once
-- a query finds it idle: until then the source stays, the script's references dropped; after that
-- it can be collected (a table of weak values watches it). Kept for ever, every source of a
-- long-lived stream's copies would stay in memory.
h.test("a stream lets go of a copy's source once synchronized, or once a query finds it idle",
       function()
  for _, finish in ipairs({"synchronize", "query"}) do
    local s = cuda.stream()
    local d = cuda.device_array(N, "f32")
    local watch = setmetatable({}, {__mode = "v"})
    do
      local ha = cuda.host_array(N, "f32")
      for i = 1, N do ha[i] = i * 0.5 end
      watch[1] = ha
      d:copy_from(ha, s)
    end
    collectgarbage()
    collectgarbage()
    h.check(watch[1] ~= nil, finish .. ": the stream keeps the source until it is done")
    if finish == "synchronize" then
      s:synchronize()
    else
      while not s:query() do end
    end
    collectgarbage()
    collectgarbage()
    h.check(watch[1] == nil, finish .. ": the stream lets go of the source once done")
    check(d, finish .. ": the copy")
    s:free()
  end
end)

-- The other direction, h:copy_from(device array): the host array gets the device's values; a
-- device array of another dtype or count, or one freed, is refused naming both.
h.test("a host array copies from a device array of its dtype and count", function()
  local d = cuda.to_device({1.5, 2.5, -3}, "f32")
  local ha = cuda.host_array(3, "f32")
  h.eq(ha:copy_from(d), ha, "copy_from returns the host array")
  h.same(ha:totable(), {1.5, 2.5, -3}, nil, "the device's values")
  h.raises("cannot copy f32[2] into f32[3] (same dtype and element count needed)", ha.copy_from, ha,
           cuda.to_device({1, 2}, "f32"))
  h.raises("cannot copy f32[3] into f64[3] (same dtype and element count needed)",
           cuda.host_array(3, "f64").copy_from, cuda.host_array(3, "f64"), d)
  local gone = cuda.device_array(3, "f32")
  gone:free()
  h.raises("device array has been freed", ha.copy_from, ha, gone)
  h.same(ha:totable(), {1.5, 2.5, -3}, nil, "a refused copy changes nothing")
end)

h.run()
