-- test_launch_attrs.lua -- launch attributes from Lua (issue 26): k[{grid, block, cluster = {x, y,
-- z}, pdl = true, priority = n}] on a GPU, or on the CPU device without one (a cluster's blocks
-- at once, one per worker: the clusters here have at most as many blocks as the device has
-- workers). A cluster reduction through distributed shared memory against a plain reduction and
-- the host, the same kernel launched without a cluster (clusters of one), a programmatic pair,
-- an attributed launch in a graph, and each refusal with its message.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)
local dev = cuda.device()
local on_cpu = dev.arch == "cpu"
local BLOCK = 128

-- The kernels' preamble: a block's values in shared memory summed into part[0], seen by all.
local tree_sum = [[
__device__ void tree_sum(unsigned *part) {
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
}
]]

-- Block 0 of each cluster adds the sums of its cluster's blocks, read from their shared memory.
local cluster_sum = cuda.jit("cluster_sum(const unsigned *x, unsigned *out, unsigned n)", [[
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ unsigned part[128];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0u;
  tree_sum(part);
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    unsigned total = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); r++) total += cluster.map_shared_rank(part, r)[0];
    out[blockIdx.x / cluster.dim_blocks().x] = total;
  }
  cluster.sync();
]], {preamble = "#include <cooperative_groups.h>\n" .. tree_sum})

-- One block per partial: `per` elements each.
local plain_sum = cuda.jit("plain_sum(const unsigned *x, unsigned *out, unsigned n, unsigned per)", [[
  __shared__ unsigned part[128];
  unsigned total = 0;
  for (unsigned j = threadIdx.x; j < per; j += blockDim.x) {
    unsigned i = blockIdx.x * per + j;
    total += i < n ? x[i] : 0u;
  }
  part[threadIdx.x] = total;
  tree_sum(part);
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
]], {preamble = tree_sum})

local n = 16 * BLOCK - 5
local xs = h.random_ints(n, 0, 1000)
local x = cuda.to_device(xs, "u32")
local cluster = math.min(4, on_cpu and dev.multiprocessors or 4)

local function sums_of(size)
  local t = {}
  for s = 1, (16 // size) do
    local v = 0
    for i = (s - 1) * size * BLOCK + 1, math.min(s * size * BLOCK, n) do v = v + xs[i] end
    t[s] = v
  end
  return t
end

local function host(a)
  local t, got = {}, a:copy_to_host()
  for i = 1, #got do t[i] = got[i] end
  return t
end

h.test("a cluster reduction through distributed shared memory agrees with a plain one", function()
  h.check(cluster >= 2, "the device runs clusters of at least 2 blocks")
  local sums = 16 // cluster
  local a, b = cuda.device_array(sums, "u32"), cuda.device_array(sums, "u32")
  cluster_sum[{16, BLOCK, cluster = {cluster, 1, 1}}](x, a, n)
  plain_sum[{sums, BLOCK}](x, b, n, cluster * BLOCK)
  local want = sums_of(cluster)
  h.same(host(b), want, nil, "plain reduction")
  h.same(host(a), host(b), nil, "cluster reduction")
end)

h.test("without a cluster each block is a cluster of one", function()
  local a = cuda.device_array(16, "u32")
  cluster_sum[{16, BLOCK, cluster = {cluster, 1, 1}}](x, a, n) -- a cached launcher first
  cluster_sum[{16, BLOCK}](x, a, n)                            -- then the same grid without
  h.same(host(a), sums_of(1), nil, "per-block sums")
  cluster_sum[{16, BLOCK, cluster = 1}](x, a, n)               -- a cluster of 1 block
  h.same(host(a), sums_of(1), nil, "clusters of one block")
end)

h.test("a programmatic pair: the second kernel waits for the first", function()
  local first = cuda.jit("first(unsigned *x, unsigned n)", [[
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 5u * i + 2u;
    cudaTriggerProgrammaticLaunchCompletion();
  ]])
  local second = cuda.jit("second(const unsigned *x, unsigned *y, unsigned n)", [[
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    if (i < n) y[i] = x[i] + 7u;
  ]])
  local m = 1 << 16
  local a, b = cuda.device_array(m, "u32"), cuda.device_array(m, "u32")
  local s = cuda.stream()
  local function pair(stream)
    first[{m // 256, 256, stream = stream}](a, m)
    second[{m // 256, 256, stream = stream, pdl = true, priority = -1}](a, b, m)
  end
  local function check(where)
    local got = b:copy_to_host()
    for i = 1, m do
      if got[i] ~= 5 * (i - 1) + 2 + 7 then
        h.eq(got[i], 5 * (i - 1) + 9, where .. ": y[" .. (i - 1) .. "]")
        return
      end
    end
  end
  -- a stream of its own, the default stream (nn.lua's nets launch there too), and a captured
  -- graph, whose programmatic edges replay as launched; a and b cleared between runs, so each
  -- run's result is its own
  for _ = 1, 3 do
    a:fill(0) b:fill(0)
    pair(s)
    s:synchronize()
    check("own stream")
    a:fill(0) b:fill(0)
    pair(nil)
    cuda.synchronize()
    check("default stream")
  end
  local g = cuda.graph(function(gs) pair(gs) end)
  for _ = 1, 3 do
    a:fill(0) b:fill(0)
    cuda.synchronize()
    g:replay(1)
    cuda.synchronize()
    check("graph")
  end
end)

h.test("an attributed launch in a graph replays as launched", function()
  local a = cuda.device_array(16 // 2, "u32")
  cluster_sum[{16, BLOCK, cluster = {2}}](x, a, n) -- loaded before the capture
  a:fill(0)
  local g = cuda.graph(function(s)
    cluster_sum[{16, BLOCK, cluster = {2}, stream = s}](x, a, n)
  end)
  g:replay(2)
  cuda.synchronize()
  h.same(host(a), sums_of(2), nil, "replayed cluster sums")
end)

h.test("bad attributes are refused, naming the key", function()
  local a = cuda.device_array(16, "u32")
  h.raises("cluster must be a positive integer or a table {x, y, z}, got string",
           function() cluster_sum[{16, BLOCK, cluster = "2"}](x, a, n) end)
  h.raises("cluster must be a positive integer, got 0",
           function() cluster_sum[{16, BLOCK, cluster = {2, 0}}](x, a, n) end)
  h.raises("pdl must be true or false", function() cluster_sum[{16, BLOCK, pdl = 1}](x, a, n) end)
  h.raises("priority must be an integer (lower is more urgent)",
           function() cluster_sum[{16, BLOCK, priority = 0.5}](x, a, n) end)
  h.raises("grid.x = 6 is not a multiple of cluster.x = 4",
           function() cluster_sum[{6, BLOCK, cluster = 4}](x, a, n) end)
  h.raises("a cluster of 4 x 4 x 2 = 32 blocks is over",
           function() cluster_sum[{{8, 4, 2}, BLOCK, cluster = {4, 4, 2}}](x, a, n) end)
  h.raises("a cooperative launch takes no launch attributes",
           function() cluster_sum[{2, BLOCK, cluster = 2, cooperative = true}](x, a, n) end)
  local big = dev.multiprocessors + 1 -- one block more than the CPU device's workers
  if on_cpu and big <= 16 then
    h.raises(string.format("a cluster of %d blocks cannot run on the CPU device, which runs a "
                           .. "cluster's blocks at once, one per worker, and has %d workers",
                           big, dev.multiprocessors),
             function() cluster_sum[{big, BLOCK, cluster = big}](x, a, n) end)
  end
end)

h.run()
