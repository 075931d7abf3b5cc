-- test_lua_module.lua -- the module loads without a GPU, has its parts, reports versions and
-- devices, and refuses GPU work with a clear message when there is no GPU.
local h = require "helper"
local cuda = require "cujit"

h.test("require returns the same module table", function()
  h.eq(type(cuda), "table", "module type")
  h.eq(require "cujit", cuda, "second require")
  h.eq(cuda._VERSION, cuda.version().cujit, "_VERSION")
end)

h.test("the module has its functions", function()
  for _, name in ipairs {"jit", "source", "load", "device_function", "device_array", "zeros",
                         "full", "to_device", "to_device_async", "host_array", "array", "stream",
                         "event", "elapsed", "synchronize", "devices", "device", "has_gpu",
                         "memory", "allocated", "version", "reset", "status", "cache_stats",
                         "cache_dir", "clear_cache"} do
    h.eq(type(cuda[name]), "function", "cuda." .. name)
  end
end)

h.test("version table", function()
  local v = cuda.version()
  h.check(v.cujit:match("^%d+%.%d+%.%d+$"), "cujit version is x.y.z: " .. v.cujit)
  h.eq(v.lua, "5.4", "lua version")
  if v.nvrtc then h.check(math.type(v.nvrtc) == "integer" and v.nvrtc >= 12000, "nvrtc version") end
  if v.driver then h.check(math.type(v.driver) == "integer" and v.driver >= 12000, "driver version") end
end)

h.test("has_gpu and devices agree", function()
  local ok, why = cuda.has_gpu()
  local list, reason = cuda.devices()
  h.eq(type(list), "table", "devices()")
  local cpu = list[#list]
  h.eq(cpu.arch, "cpu", "the CPU device is listed last")
  h.eq(cpu.ordinal, -1, "the CPU device's ordinal")
  h.check(cpu.name:match("^CPU %(%d+ threads?%)$"), "CPU device name " .. tostring(cpu.name))
  h.check(cpu.total_memory > 0 and cpu.multiprocessors > 0, "CPU device info filled in")
  if ok then
    h.check(#list >= 2, "a GPU but no GPU listed")
    local d = list[1]
    h.eq(d.ordinal, 0, "first ordinal")
    h.check(d.arch:match("^sm_%d+$"), "arch " .. tostring(d.arch))
    h.check(d.total_memory > 0 and d.multiprocessors > 0, "device info filled in")
    h.eq(#d.max_block_dim, 3, "max_block_dim")
  else
    h.eq(type(why), "string", "has_gpu reason")
    h.check(why:find("CUJIT_DEVICE=cpu", 1, true), "the reason says how to use the CPU device")
    h.eq(#list, 1, "only the CPU device without a GPU")
    h.eq(type(reason), "string", "devices() reason")
  end
end)

h.test("without a GPU, GPU calls fail with the reason", function()
  if h.has_gpu(cuda) then return end
  local _, why = cuda.has_gpu()
  local err = h.raises({}, cuda.device_array, 16, "f32")
  h.check(err:find("driver", 1, true) or err:find("GPU", 1, true) or err:find("device", 1, true),
          "message names the missing driver/GPU: " .. err)
  h.raises({}, cuda.stream)
  h.raises({}, cuda.synchronize)
  h.raises({}, cuda.memory)
  h.check(#why > 10, "reason is a sentence")
end)

h.test("cache functions", function()
  local s = cuda.cache_stats()
  for _, k in ipairs {"memory_hits", "disk_hits", "misses", "entries", "bytes", "max_bytes",
                      "pch_created", "pch_used"} do
    h.eq(math.type(s[k]), "integer", "cache_stats." .. k)
  end
  h.eq(type(s.disk_enabled), "boolean", "disk_enabled")
  local dir, why = cuda.cache_dir()
  if s.disk_enabled then h.eq(type(dir), "string", "cache_dir") else h.eq(type(why), "string", "why") end
end)

h.test("metatables follow Lua's conventions", function()
  local reg = debug.getregistry()
  for _, name in ipairs {"cujit.kernel", "cujit.device_array", "cujit.host_array", "cujit.stream",
                         "cujit.event", "cujit.program", "cujit.launcher"} do
    h.eq(type(reg[name]), "table", "registry metatable " .. name)
    h.eq(reg[name].__name, name, "__name of " .. name)
  end
  for _, name in ipairs {"cujit.kernel", "cujit.device_array", "cujit.host_array", "cujit.stream",
                         "cujit.event", "cujit.program"} do
    h.eq(type(reg[name].__gc), "function", name .. " __gc")
    h.eq(type(reg[name].__close), "function", name .. " __close")
    h.eq(type(reg[name].__tostring), "function", name .. " __tostring")
  end
end)

h.test("dtype and shape misuse is an argument error", function()
  h.raises({"unknown dtype 'f33'", "f16, bf16, f32"}, cuda.host_array, 4, "f33")
  h.raises("positive integer", cuda.host_array, 0)
  h.raises("positive integer", cuda.host_array, -3)
  h.raises("positive integer", cuda.host_array, 2.5)
  h.raises("dimension 2", cuda.host_array, {2, 0})
  h.raises("1 to 3 dimensions", cuda.host_array, {2, 2, 2, 2})
  h.raises("1 to 3 dimensions", cuda.host_array, {})
  h.raises("shape", cuda.host_array, "x")
  -- checked before any device work, so the same messages come without a GPU
  h.raises("unknown dtype", cuda.device_array, 4, "float32x")
  h.raises("dimension 1", cuda.zeros, {0})
  h.raises("dtype expected", cuda.to_device, {1, 2, 3})
  h.raises("out of range for u8", cuda.full, 4, 256, "u8")
end)

-- Last: it makes the CPU device current.
h.test("has_gpu does not count the CPU device", function()
  local ok = cuda.has_gpu()
  local gpu_current, d = pcall(cuda.device) -- fails without a GPU: no device chosen yet
  cuda.device("cpu")
  h.eq(cuda.has_gpu(), ok, "has_gpu with the CPU device current")
  if gpu_current and d.ordinal ~= -1 then cuda.device(d.ordinal) end
end)

h.run()
