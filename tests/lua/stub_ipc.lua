-- stub_ipc.lua -- sharing memory and events between processes from Lua (a:ipc_handle,
-- cuda.ipc_open with and without a shape, ev:ipc_handle, cuda.ipc_open_event) against the
-- stand-in driver (tests/CMakeLists.txt runs it as lua.stub_ipc with the stand-in first on
-- LD_LIBRARY_PATH, and nowhere else; not test_*.lua, so the GPU run does not take it for a GPU
-- test). The stand-in's handle is its magic ("cjstubmm", "cjstubev"), the exporting process's id
-- (4 bytes, little-endian) and the address; a handle of this very process is refused as the driver
-- refuses it, and one naming another process (forged here: the stand-in's memory is this
-- process's) opens. On a GPU, lua.test_lua_managed shares memory with a real second process.
local h = require "helper"
local cuda = require "cujit"

h.need_stand_in(cuda, "stub_ipc.lua")

local function my_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = tonumber(f:read("l"):match("^(%d+)"))
  f:close()
  return pid
end

-- The handle's 64 bytes, from its text "cujit-ipc-mem:DTYPE:SIZE:HEX" (or "cujit-ipc-event:HEX").
local function bytes_of(text)
  local hex = text:match(":(%x+)$")
  h.eq(#hex, 128, "64 bytes of handle, in hex: " .. text)
  return (hex:gsub("%x%x", function(x) return string.char(tonumber(x, 16)) end))
end

-- The same handle as another process would hold it: the process id one more.
local function from_another_process(text)
  local head, hex = text:match("^(.*:)(%x+)$")
  local b = bytes_of(text)
  local pid = string.unpack("<I4", b, 9)
  b = b:sub(1, 8) .. string.pack("<I4", pid + 1) .. b:sub(13)
  return head .. (b:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

h.test("memory: the handle's text, refused in this process, opened as another's", function()
  local values = {}
  for i = 1, 12 do values[i] = i * 1.5 - 4 end
  local a = cuda.shareable_array(12, "f32")
  a:copy_from(cuda.array(values, "f32"))
  local text = a:ipc_handle()
  h.contains(text, "cujit-ipc-mem:f32:48:", "dtype and size in the text")
  local b = bytes_of(text)
  h.eq(b:sub(1, 8), "cjstubmm", "the stand-in's magic")
  h.eq(string.unpack("<I4", b, 9), my_pid(), "the exporting process: this one")
  h.raises({"the driver refused the handle", "another process only"}, cuda.ipc_open, text)

  local other = from_another_process(text)
  local o = cuda.ipc_open(other)
  h.eq(o.size, 12, "the elements the text gives")
  h.eq(o.dtype, "f32", "its dtype")
  local got = o:copy_to_host()
  for i = 1, 12 do h.eq(got[i], values[i], "opened[" .. i .. "]") end
  h.raises({"allocated shareable"}, o.ipc_handle, o)
  o:free()
  got = a:copy_to_host()
  h.eq(got[12], values[12], "the exporter's memory outlives the opened array's free")

  local grid = cuda.ipc_open(other, {3, 4})
  h.eq(grid.ndim, 2, "a shape given")
  h.eq(grid.shape[1], 3, "rows")
  h.eq(grid.shape[2], 4, "columns")
  h.eq(grid:copy_to_host()[5], values[5], "the same bytes in the shape")
  grid:free()
  h.raises({"cuda.ipc_open: the shape given holds 25 elements, the memory 12"}, cuda.ipc_open, other,
           {5, 5})
  local raw = cuda.ipc_open((other:gsub("^cujit%-ipc%-mem:f32:48:", "cujit-ipc-mem:bytes:8:")))
  h.eq(raw.dtype, "u8", "no dtype: bytes")
  h.eq(raw.size, 8, "the size the text gives, not the exporter's")
  raw:free()
  h.raises({"not a cujit IPC handle"}, cuda.ipc_open, "cujit-ipc-mem:f32:48:zz")
end)

h.test("events: the handle's text, refused in this process, opened as another's", function()
  local ev = cuda.shareable_event()
  ev:record()
  local text = ev:ipc_handle()
  h.contains(text, "cujit-ipc-event:", "an event's handle")
  local b = bytes_of(text)
  h.eq(b:sub(1, 8), "cjstubev", "the stand-in's magic")
  h.eq(string.unpack("<I4", b, 9), my_pid(), "the exporting process: this one")
  h.raises({"the driver refused the handle"}, cuda.ipc_open_event, text)
  local opened = cuda.ipc_open_event(from_another_process(text))
  opened:synchronize()
  local ordinary = cuda.event()
  h.raises({"only an event made shareable can be exported", "cuda.shareable_event()"},
           ordinary.ipc_handle, ordinary)
  h.raises({"only an event made shareable"}, opened.ipc_handle, opened)
  -- a shareable event, made or opened, has no timing: refused, saying what to time with
  ordinary:record()
  h.raises({"the end event is shareable between processes", "cuda.event()"}, ordinary.elapsed,
           ordinary, ev)
  h.raises({"the start event is shareable between processes"}, cuda.elapsed, opened, ordinary)
end)

h.run()
