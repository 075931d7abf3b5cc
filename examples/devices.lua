-- devices.lua -- what nvidia-smi and PyCUDA's device listing show: each GPU's name, compute
-- capability, memory free/total, multiprocessors, clocks, and the driver and NVRTC versions.
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local function version(v)
  return v and string.format("%d.%d", v // 1000, v % 1000 // 10) or "not found"
end

local v = cuda.version()
S.printf("cujit %s, Lua %s, CUDA driver %s, NVRTC %s", v.cujit, v.lua, version(v.driver),
         version(v.nvrtc))
S.check(v.nvrtc ~= nil, "NVRTC found (version %s)", version(v.nvrtc))

-- The one kernel: a probe that every GPU listed can run.
local t0 = S.clock()
local probe = cuda.jit("probe(int *out)", "out[0] = 42;", S.options())
S.printf("compiled a probe kernel in %.1f ms", (S.clock() - t0) * 1e3)

S.host_checks_done()

local devices, why = cuda.devices()
if S.on_cpu then -- no GPU: the CPU device is listed last and runs the probe
  local cpu = devices[#devices]
  S.check(cpu and cpu.arch == "cpu", "the CPU device is listed (%s)", cpu and cpu.name or "none")
  local out = cuda.device_array(1, "i32")
  probe[{1, 1}](out)
  S.check(out:copy_to_host()[1] == 42, "the CPU device runs a kernel")
  S.done()
  os.exit(0)
end
-- cuda.devices() lists the CPU device (arch "cpu") after the GPUs; this example is about GPUs.
if devices[#devices] and devices[#devices].arch == "cpu" then devices[#devices] = nil end
S.check(#devices >= 1, "the driver lists %d GPU(s)%s", #devices, why and (": " .. why) or "")
local current = cuda.device().ordinal
local MiB = 1 << 20
for _, d in ipairs(devices) do
  cuda.device(d.ordinal)
  local free, total = cuda.memory()
  S.printf("GPU %d: %s", d.ordinal, d.name)
  S.printf("  compute capability %s (%s), %d multiprocessors, warp %d, %d threads/block max",
           d.compute_capability, d.arch, d.multiprocessors, d.warp_size, d.max_threads_per_block)
  S.printf("  memory %d MiB free of %d MiB, bus %d bits at %d MHz; core clock %d MHz",
           free // MiB, total // MiB, d.memory_bus_width, d.memory_clock_khz // 1000,
           d.clock_khz // 1000)
  S.printf("  shared memory per block %d KiB (%d KiB opt-in); PCI bus %d",
           d.max_shared_per_block // 1024, d.max_shared_per_block_optin // 1024, d.pci_bus_id)
  S.check(free <= total and total == d.total_memory and d.multiprocessors > 0,
          "GPU %d: free <= total memory, SMs > 0", d.ordinal)
  local out = cuda.full(1, 0, "i32")
  probe[{1, 1}](out)
  S.check(out:totable()[1] == 42, "GPU %d runs a kernel", d.ordinal)
end
cuda.device(current)
S.done()
