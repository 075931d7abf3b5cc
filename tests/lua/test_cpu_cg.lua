-- test_cpu_cg.lua -- cooperative groups (tests/realcuda/cg_groups.cu) on the GPU, or on the CPU
-- device without one (kernels_src/cujit/cpu_cg.h): each kernel against a host reference on random
-- signed, unsigned and float inputs, floating-point sums bit for bit in the order the GPU's
-- cg::reduce and shuffle trees take; the grid-wide barrier under a cooperative launch (on the CPU
-- device too, one block per worker; refused there without one, or when a block returns before
-- it); the same file compiled for sm_90 by NVRTC; and what the CPU device refuses, named.
local h = require "helper"
local cuda = require "cujit"

local f32 = h.f32
local file = h.here() .. "../realcuda/cg_groups.cu"
h.need_gpu(cuda)
local on_cpu = cuda.device().arch == "cpu"

local names = {"block_reduce<float, 256>", "block_reduce<int, 256>", "block_reduce<unsigned, 256>",
               "tile_reduce<16, float>", "tile_reduce<8, int>", "tile_reduce<4, unsigned>",
               "tile_reduce<16, unsigned>", "tile_votes<32>", "tile_votes<8>"}
local m = cuda.load(file, {name_expressions = names})

local function host(a)
  local t, got = {}, a:copy_to_host()
  for i = 1, #got do t[i] = got[i] end
  return t
end
local function u32(x) return x & 0xffffffff end
local function i32(x)
  x = x & 0xffffffff
  return x >= 0x80000000 and x - 0x100000000 or x
end
-- The sum in each type's arithmetic: float32 rounding, or 32-bit wrap-around.
local adders = {
  f32 = function(a, b) return f32(a + b) end,
  i32 = function(a, b) return i32(a + b) end,
  u32 = function(a, b) return u32(a + b) end,
}
local function inputs(n, dtype)
  if dtype == "f32" then
    local t = h.random_floats(n, -100, 100)
    for i = 1, n do t[i] = f32(t[i]) end
    return t
  elseif dtype == "i32" then
    return h.random_ints(n, -(1 << 22), 1 << 22) -- no signed overflow (undefined in CUDA C++)
  end
  return h.random_ints(n, 0, 0xffffffff)
end

-- A tile's butterfly (cg::reduce): lane r takes op(own, lane r ^ m's) for m = N/2, ..., 1.
local function butterfly(v, op)
  local n = #v
  local m = n // 2
  while m > 0 do
    local w = {}
    for r = 0, n - 1 do w[r + 1] = op(v[r + 1], v[(r ~ m) + 1]) end
    v, m = w, m // 2
  end
  return v
end

h.test("block reduce: tiled_partition<32>, shfl_down, block.sync, cg::reduce", function()
  for _, case in ipairs {{"float", "f32"}, {"int", "i32"}, {"unsigned", "u32"}} do
    local ctype, dtype = case[1], case[2]
    local add = adders[dtype]
    local n, blocks = 256 * 5 - 37, 5
    local src = inputs(n, dtype)
    local part = cuda.device_array(blocks, dtype)
    m["block_reduce<" .. ctype .. ", 256>"][{blocks, 256}](cuda.to_device(src, dtype), part, n)
    local want = {}
    for b = 0, blocks - 1 do
      local warp_sums = {}
      for w = 0, 7 do
        local v = {}
        for l = 0, 31 do v[l + 1] = src[b * 256 + w * 32 + l + 1] or 0 end
        local o = 16
        while o > 0 do -- shfl_down: past the warp's end a lane reads its own value
          local nv = {}
          for l = 0, 31 do nv[l + 1] = add(v[l + 1], v[(l + o <= 31 and l + o or l) + 1]) end
          v, o = nv, o // 2
        end
        warp_sums[w + 1] = v[1]
      end
      local s = {}
      for l = 1, 32 do s[l] = warp_sums[l] or 0 end
      want[b + 1] = butterfly(s, add)[1]
    end
    h.same(host(part), want, nil, ctype .. " block sums")
  end
end)

h.test("cg::reduce with plus, less, greater on tiles of 16, 8 and 4", function()
  for _, case in ipairs {{16, "float", "f32"}, {8, "int", "i32"}, {4, "unsigned", "u32"},
                         {16, "unsigned", "u32"}} do
    local size, ctype, dtype = case[1], case[2], case[3]
    local n = 128 * 3
    local src = inputs(n, dtype)
    local out = cuda.device_array(3 * n // size, dtype)
    m["tile_reduce<" .. size .. ", " .. ctype .. ">"][{3, 128}](cuda.to_device(src, dtype), out, n)
    local want = {}
    for t = 0, n // size - 1 do
      local v = {}
      for r = 1, size do v[r] = src[t * size + r] end
      local lo, hi = v[1], v[1]
      for r = 2, size do lo, hi = math.min(lo, v[r]), math.max(hi, v[r]) end
      want[3 * t + 1], want[3 * t + 2], want[3 * t + 3] = butterfly(v, adders[dtype])[1], lo, hi
    end
    h.same(host(out), want, nil, string.format("tiles of %d %s", size, ctype))
  end
  local src = inputs(64, "u32")
  local out = cuda.device_array(24, "u32")
  m.tile_bits[{2, 32}](cuda.to_device(src, "u32"), out)
  local want = {}
  for t = 0, 7 do
    local a, o, x = 0xffffffff, 0, 0
    for r = 1, 8 do
      local v = src[8 * t + r]
      a, o, x = a & v, o | v, x ~ v
    end
    want[3 * t + 1], want[3 * t + 2], want[3 * t + 3] = a, o, x
  end
  h.same(host(out), want, nil, "bit_and, bit_or, bit_xor")
end)

h.test("tile ballot, any, all, match_any and shuffles over the data", function()
  for _, size in ipairs {32, 8} do
    local n = 128
    local src = h.random_ints(n, -9, 9)
    for t = 0, n // size - 1, 3 do -- some tiles all above, some all below the threshold
      for r = 1, size do src[t * size + r] = (t % 2 == 0) and 5 + r % 3 or -5 - r % 3 end
    end
    local out = cuda.device_array(7 * n, "u32")
    m["tile_votes<" .. size .. ">"][{2, 64}](cuda.to_device(src, "i32"), 0, out)
    local want = {}
    for i = 0, n - 1 do
      local base, r = i - i % size, i % size
      local ballot, match = 0, 0
      for q = 0, size - 1 do
        local v = src[base + q + 1]
        if v > 0 then ballot = ballot | (1 << q) end
        if v & 3 == src[i + 1] & 3 then match = match | (1 << q) end
      end
      local full = size == 32 and 0xffffffff or (1 << size) - 1
      local o = 7 * i
      want[o + 1], want[o + 2], want[o + 3] = ballot, ballot ~= 0 and 1 or 0, ballot == full and 1 or 0
      want[o + 4] = match
      want[o + 5] = u32(src[base + size])
      want[o + 6] = u32(src[base + (r > 0 and r - 1 or r) + 1])
      want[o + 7] = u32(src[base + (r ~ 1) + 1])
    end
    h.same(host(out), want, nil, "tile of " .. size)
  end
end)

h.test("labeled_partition and binary_partition with data-dependent labels", function()
  local n = 128
  local label, value = h.random_ints(n, 0, 3), h.random_ints(n, -50, 50)
  for i = 9, 16 do value[i] = 7 + i end -- a tile of 8 all one sign: one group
  local out = cuda.device_array(10 * n, "i32")
  m.partitions[{2, 64}](cuda.to_device(label, "i32"), cuda.to_device(value, "i32"), out)
  local want = {}
  for i = 0, n - 1 do
    local o, base = 10 * i, i - i % 32
    local rank, size, sum, leaders, lead = 0, 0, 0, {}, nil
    for q = base, base + 31 do
      if not leaders[label[q + 1]] then leaders[label[q + 1]] = q end
      if label[q + 1] == label[i + 1] then
        size, sum = size + 1, sum + value[q + 1]
        if q < i then rank = rank + 1 end
      end
    end
    lead = leaders[label[i + 1]]
    local meta, count = 0, 0
    for _, q in pairs(leaders) do
      count = count + 1
      if q < lead then meta = meta + 1 end
    end
    want[o + 1], want[o + 2], want[o + 3], want[o + 4], want[o + 5] = rank, size, meta, count, sum
    local b8, neg = i - i % 8, value[i + 1] < 0
    local nneg = 0
    for q = b8, b8 + 7 do if value[q + 1] < 0 then nneg = nneg + 1 end end
    local whole = nneg == 0 or nneg == 8
    local r8, s8, mx = 0, 0, nil
    for q = b8, b8 + 7 do
      if whole or (value[q + 1] < 0) == neg then
        s8 = s8 + 1
        mx = mx and math.max(mx, value[q + 1]) or value[q + 1]
        if q < i then r8 = r8 + 1 end
      end
    end
    want[o + 6], want[o + 7] = r8, s8
    want[o + 8], want[o + 9] = whole and 0 or (neg and 1 or 0), whole and 1 or 2
    want[o + 10] = mx
  end
  h.same(host(out), want, nil, "partitions")
end)

h.test("coalesced_threads inside a branch: ranks, shfl, ballot, a float sum in the GPU's order",
       function()
  local n = 128
  local key, x = h.random_ints(n, -20, 20), h.random_floats(n, -10, 10)
  for i = 1, n do x[i] = f32(x[i]) end
  for i = 33, 64 do key[i] = 1 + 3 * (i % 5) end -- a warp where every lane takes the branch
  local out, sums = cuda.device_array(4 * n, "i32"), cuda.device_array(n, "f32")
  m.coalesced_branch[{2, 64}](cuda.to_device(key, "i32"), cuda.to_device(x, "f32"), out, sums)
  local want, want_sums = {}, {}
  for w = 0, n // 32 - 1 do
    local lanes = {}
    for l = 0, 31 do
      if key[32 * w + l + 1] % 3 ~= 0 then lanes[#lanes + 1] = 32 * w + l end
    end
    local v = {}
    for r, i in ipairs(lanes) do v[r] = x[i + 1] end
    local total
    if #lanes == 32 then
      total = butterfly(v, adders.f32)[1]
    elseif #lanes > 0 then -- an inclusive scan over the ranks, then the last rank's value
      local i = 1
      while i < #lanes do
        local nv = {}
        for r = 1, #lanes do nv[r] = r > i and f32(v[r] + v[r - i]) or v[r] end
        v, i = nv, i * 2
      end
      total = v[#lanes]
    end
    local ballot = 0
    for r, i in ipairs(lanes) do if key[i + 1] > 0 then ballot = ballot | (1 << (r - 1)) end end
    for l = 0, 31 do
      local i = 32 * w + l
      want[4 * i + 1], want[4 * i + 2], want[4 * i + 3], want[4 * i + 4] = -1, -1, -1, -1
      want_sums[i + 1] = -1
    end
    for r, i in ipairs(lanes) do
      want[4 * i + 1], want[4 * i + 2], want[4 * i + 3] = r - 1, #lanes, key[lanes[1] + 1]
      want[4 * i + 4] = i32(ballot)
      want_sums[i + 1] = total
    end
  end
  h.same(host(out), want, nil, "coalesced group")
  h.same(host(sums), want_sums, nil, "coalesced float sums")
end)

h.test("inclusive_scan over tiles, exclusive_scan over a coalesced group", function()
  local n = 128
  local x, key = h.random_floats(n, -10, 10), h.random_ints(n, -99, 99)
  for i = 1, n do x[i] = f32(x[i]) end
  local incl, excl, emax = cuda.device_array(n, "f32"), cuda.device_array(n, "i32"),
                           cuda.device_array(n, "i32")
  m.scans[{2, 64}](cuda.to_device(x, "f32"), cuda.to_device(key, "i32"), incl, excl, emax)
  local want_incl, want_excl, want_max = {}, {}, {}
  for t = 0, n // 16 - 1 do -- rank r adds rank r - i's for i = 1, 2, 4, 8
    local v = {}
    for r = 1, 16 do v[r] = x[16 * t + r] end
    for _, i in ipairs {1, 2, 4, 8} do
      local nv = {}
      for r = 1, 16 do nv[r] = r > i and f32(v[r] + v[r - i]) or v[r] end
      v = nv
    end
    for r = 1, 16 do want_incl[16 * t + r] = v[r] end
  end
  for w = 0, n // 32 - 1 do
    local sum, max = 0, nil
    for i = 32 * w + 1, 32 * w + 32 do
      want_excl[i], want_max[i] = -1, -1
      if key[i] & 1 == 1 then
        want_excl[i], want_max[i] = sum, max or 0 -- rank 0's exclusive maximum: int{}
        sum, max = sum + key[i], max and math.max(max, key[i]) or key[i]
      end
    end
  end
  h.same(host(incl), want_incl, nil, "inclusive float scan")
  h.same(host(excl), want_excl, nil, "exclusive sum")
  h.same(host(emax), want_max, nil, "exclusive maximum")
end)

h.test("tiled_partition(block, n) at run time", function()
  for _, size in ipairs {8, 4, 32} do
    local n = 128
    local src = h.random_ints(n, -1000, 1000)
    local out = cuda.device_array(3 * n, "i32")
    m.runtime_tiles[{2, 64}](cuda.to_device(src, "i32"), out, size)
    local want = {}
    for i = 0, n - 1 do
      local r = i % size
      want[3 * i + 1] = src[i - r + (r + 1) % size + 1]
      want[3 * i + 2], want[3 * i + 3] = r, size
    end
    h.same(host(out), want, nil, "tiles of " .. size)
  end
end)

h.test("memcpy_async into shared memory, then wait", function()
  local src = inputs(512, "u32")
  local out = cuda.device_array(512, "u32")
  m.staged_copy[{2, 256}](cuda.to_device(src, "u32"), out)
  local want = {}
  for b = 0, 1 do
    for t = 0, 255 do
      local w, l = t // 32, t % 32
      want[b * 256 + t + 1] = src[b * 256 + 255 - t + 1] ~ src[b * 256 + 32 * w + 31 - l + 1]
    end
  end
  h.same(host(out), want, nil, "staged copy")
end)

h.test("this_grid: ranks anywhere, grid.sync() under a cooperative launch", function()
  local ranks = cuda.device_array(3 * 96, "u32")
  m.grid_ranks[{3, 32}](ranks)
  local want = {}
  for r = 0, 95 do want[3 * r + 1], want[3 * r + 2], want[3 * r + 3] = r // 32, 96, 3 end
  h.same(host(ranks), want, nil, "grid ranks")
  local n = 5000
  local src = h.random_ints(n, -1000, 1000)
  local total, sum = cuda.zeros(1, "i32"), 0
  for _, v in ipairs(src) do sum = sum + v end
  local x = cuda.to_device(src, "i32")
  -- As many blocks as are co-resident (on the CPU device, one per worker), at most 16.
  local fit = m.grid_sum:max_cooperative_blocks(64)
  h.check(fit >= 1, "a block fits")
  local k = m.grid_sum
  if on_cpu then -- one block per worker of any block the device runs; none of one it cannot run
    local d = cuda.device()
    h.eq(fit, d.multiprocessors, "one block of 64 threads per worker")
    h.eq(k:max_cooperative_blocks(d.max_threads_per_block, d.max_shared_per_block_optin), fit,
         "the largest block the CPU device runs")
    h.eq(k:max_cooperative_blocks(d.max_threads_per_block + 1), 0, "a block of too many threads")
    h.eq(k:max_cooperative_blocks(64, d.max_shared_per_block_optin + 1), 0,
         "a block of too much shared memory")
  end
  h.raises("bad argument #1 to 'max_cooperative_blocks' (a block of 1 to 1048576 threads)",
           function() return k:max_cooperative_blocks((1 << 20) + 1) end)
  h.raises("(a block of 1 to 1048576 threads)", k.max_cooperative_blocks, k, 0)
  h.raises("(a byte count from 0 to 2^30)", k.max_cooperative_blocks, k, 64, (1 << 30) + 1)
  h.raises("(a byte count from 0 to 2^30)", k.max_cooperative_blocks, k, 64, -1)
  local blocks = math.min(fit, 16)
  local partial = cuda.device_array(blocks, "i32")
  m.grid_sum[{blocks, 64, cooperative = true}](x, partial, total, n)
  h.eq(host(total)[1], sum, "grid sum over " .. blocks .. " blocks")
  h.raises({"does not fit", tostring(fit)},
           function() m.grid_sum[{fit + 1, 64, cooperative = true}](x, partial, total, n) end)
  if not on_cpu then return end -- a GPU does not check the two cases below: it may hang
  -- Without a cooperative launch the barrier would never be met: refused when reached.
  h.raises({"grid_sum", "grid_group::sync() needs a cooperative launch"}, function()
    m.grid_sum[{blocks, 64}](x, partial, total, n)
    cuda.synchronize()
  end)
  cuda.reset()
  if blocks < 2 then return end
  local early = cuda.source([[
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void early(int *x) {
  if (blockIdx.x == 1) return;
  cg::this_grid().sync();
  x[blockIdx.x] = 1;
}
]]).early
  h.raises({"early", "grid_group::sync (<source>:5)", "returned without reaching it"}, function()
    early[{2, 32, cooperative = true}](cuda.zeros(2, "i32"))
    cuda.synchronize()
  end)
  cuda.reset()
end)

h.test("the same file compiles for sm_90 with NVRTC", function()
  h.need_nvrtc(cuda)
  local all = {table.unpack(names)}
  local g = cuda.load(file, {arch = "sm_90", name_expressions = all})
  local ptx = g:ptx()
  for _, k in ipairs {"scans", "tile_bits", "partitions", "coalesced_branch", "runtime_tiles", "grid_sum",
                      "staged_copy", "block_reduce", "tile_votes"} do
    h.contains(ptx, k, "the kernel " .. k)
  end
end)

h.test("what the CPU device refuses is named", function()
  if not on_cpu then return end
  h.raises({"cooperative_groups/details/", "not supported on the CPU device"}, cuda.source,
           "#include <cooperative_groups/details/info.h>\n__global__ void k(int *x) {}\n")
  local head = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
  h.raises({"cluster_group::barrier_arrive (split cluster barriers) is not supported on the CPU "
            .. "device"}, cuda.source,
           head .. "__global__ void k(int *x) { cg::this_cluster().barrier_arrive(); }\n")
  h.raises({"tiles of more than a warp are not supported on the CPU device"}, cuda.source,
           head .. "__global__ void k(int *x) {\n" ..
           "  auto t = cg::tiled_partition<64>(cg::this_thread_block()); x[0] = t.size(); }\n")
  local k = cuda.source(head .. "__global__ void k(int *x, unsigned n) {\n" ..
                        "  x[0] = cg::tiled_partition(cg::this_thread_block(), n).size(); }\n")
  h.raises({"tiled_partition(parent, n): n must be 1, 2, 4, 8, 16 or 32", "<source>:4"}, function()
    k.k[{1, 32}](cuda.zeros(1, "i32"), 3)
    cuda.synchronize()
  end)
  cuda.reset()
end)

h.run()
