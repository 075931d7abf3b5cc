-- test_nccl_procs.lua -- the multi-process Monte Carlo of examples/multi_gpu.lua (--procs): one
-- cujit process per GPU (two on the CPU device without a GPU), meeting through the rendezvous
-- file that rank 0 writes the NCCL unique id to, each pricing its slice; the parent checks the
-- combined price against Black-Scholes and, with NCCL, that every rank's all-reduce agrees with
-- the host's sum. Under CUJIT_REQUIRE_GPUS=N it needs N GPUs and NCCL.
local T = require "helper"
local cuda = require "cujit"

local required = T.required_gpus()
local gpus = T.gpu_count(cuda)
if required > 0 then
  T.need_gpus(cuda, required)
  T.need_nccl(cuda)
end
local procs = gpus > 0 and gpus or 2 -- NCCL takes one rank per GPU
local example = T.here() .. "../../examples/multi_gpu.lua"

T.test("multi_gpu.lua --procs " .. procs .. " prices one option over " .. procs .. " processes",
       function()
  local env = gpus == 0 and "MULTI_GPU_PATHS=65536 " or ""
  local p = assert(io.popen(string.format("%s'%s' '%s' --procs %d 2>&1", env, arg[-1], example,
                                          procs)))
  local out = p:read("a")
  local ok = p:close()
  T.check(ok, "the example failed:\n" .. out)
  T.contains(out, procs .. " processes on", "the plan")
  for r = 0, procs - 1 do T.contains(out, "ok   rank " .. r .. " reported its partial sums") end
  T.contains(out, "|MC - Black-Scholes|", "the price check")
  if required > 0 then
    T.contains(out, "combined by NCCL all-reduce", "NCCL was used")
    for r = 0, procs - 1 do
      T.contains(out, "rank " .. r .. ": NCCL's sum", "rank " .. r .. "'s all-reduce")
    end
  end
end)

T.run()
