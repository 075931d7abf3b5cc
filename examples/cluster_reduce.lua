-- cluster_reduce.lua -- a sum in one launch through thread block clusters (sm_90, issue 26): the
-- blocks of a cluster run together, and block 0 of each cluster reads its siblings' partial sums
-- straight from their shared memory (distributed shared memory: cooperative_groups::this_cluster
-- and map_shared_rank), then adds the cluster's sum to the total. Checked against the classic
-- two-launch reduction (one block per partial, then one block over the partials) and the host's
-- sum, exactly (integers); both times are printed.
--   cujit cluster_reduce.lua            the check at 2^24 values
--   cujit cluster_reduce.lua --sweep    also both times from 2^10 to 2^28 values (every 4x), each
--                                       checked equal, and the crossover: the largest size where
--                                       one launch is still 5% faster than two
--
-- On the CPU device (no GPU) a cluster's blocks run at once, one per worker, so the cluster is at
-- most as large as the device has workers (docs/cpu.md, "Clusters").
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local BLOCK = 256
local USAGE = "usage: cujit cluster_reduce.lua [--sweep]"
local o = S.command_line("cluster_reduce.lua", function(args)
  local r = {sweep = false}
  for _, a in ipairs(args) do
    if a == "--sweep" then r.sweep = true else error("unknown option '" .. a .. "'", 0) end
  end
  return r
end, USAGE)

-- What the reductions share: the sum of a block's values in shared memory (the tree leaves it in
-- part[0]), and a block's sum of its grid-stride share of x through it.
local tree = [[
__device__ unsigned long long tree(unsigned long long *part) {
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  return part[0];
}
]]
local block_sum = tree .. [[
__device__ unsigned long long block_sum(const unsigned *x, unsigned long long n,
                                        unsigned long long *part) {
  unsigned long long s = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    s += x[i];
  part[threadIdx.x] = s;
  return tree(part);
}
]]

-- Block 0 of each cluster adds up the cluster's block sums, read from the siblings' shared
-- memory, into the total.
local cluster_sum = cuda.source("#include <cooperative_groups.h>\n" .. block_sum .. [[
namespace cg = cooperative_groups;
extern "C" __global__ void cluster_sum(const unsigned *x, unsigned long long *total,
                                       unsigned long long n) {
  __shared__ unsigned long long part[256];
  block_sum(x, n, part);
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync(); // every block's part[0] written before block 0 reads it
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    unsigned long long c = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); r++) c += *cluster.map_shared_rank(part, r);
    atomicAdd(total, c);
  }
  cluster.sync(); // no block leaves while block 0 may still read its shared memory
}
]], S.options({name = "cluster_sum.cu"})).cluster_sum

-- The two-launch reduction: one block per partial, then one block over the partials.
local partials = cuda.jit("partials(const unsigned *x, unsigned long long *out, "
                          .. "unsigned long long n)", [[
  __shared__ unsigned long long part[256];
  unsigned long long s = block_sum(x, n, part);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
]], S.options({preamble = block_sum}))
local finish = cuda.jit("finish(const unsigned long long *parts, unsigned long long *total, int m)", [[
  __shared__ unsigned long long part[256];
  unsigned long long s = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) s += parts[i];
  part[threadIdx.x] = s;
  s = tree(part);
  if (threadIdx.x == 0) total[0] = s;
]], S.options({preamble = tree}))
-- The sweep's values, made on the device: x[i] = i * 2654435761 mod 1000, as the host's below.
local fill = cuda.jit("fill(unsigned *x, unsigned long long n)", [[
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    x[i] = (unsigned)(((i + 1) * 2654435761ull) % 1000ull);
]], S.options())
S.host_checks_done()

local dev = cuda.device()
local n = S.on_cpu and (1 << 18) or (1 << 24)
local cluster = S.on_cpu and math.min(4, dev.multiprocessors) or 8
local grid = S.on_cpu and 4 * cluster or dev.multiprocessors * 2 // cluster * cluster
local values = {}
local want = 0
for i = 1, n do
  values[i] = (i * 2654435761) % 1000
  want = want + values[i]
end
local x = cuda.to_device(values, "u32")
local total, parts = cuda.zeros(1, "u64"), cuda.zeros(grid, "u64")
local reps = S.on_cpu and 3 or 50

-- Both reductions of the `count` values of xs, timed: ms and sum of one launch, then of two.
local function both(xs, count)
  local one = S.gpu_ms(function()
    total:fill(0)
    cluster_sum[{grid, BLOCK, cluster = cluster}](xs, total, count)
  end, reps, nil, true)
  local sum_one = total:copy_to_host()[1]
  local two = S.gpu_ms(function()
    partials[{grid, BLOCK}](xs, parts, count)
    finish[{1, BLOCK}](parts, total, grid)
  end, reps, nil, true)
  return one, sum_one, two, total:copy_to_host()[1]
end

local ms_cluster, got_cluster, ms_two, got_two = both(x, n)

S.check(got_two == want, "two launches (%d blocks, then one over their partials): %d, the host's "
        .. "sum, in %.3f ms", grid, got_two, ms_two)
S.check(got_cluster == got_two, "one launch of %d clusters of %d blocks through distributed shared "
        .. "memory: %d, the same, in %.3f ms (%.2fx the two launches' time)", grid // cluster,
        cluster, got_cluster, ms_cluster, ms_cluster / ms_two)
local ok, err = pcall(function() cluster_sum[{grid + 1, BLOCK, cluster = cluster}](x, total, n) end)
S.check(not ok and tostring(err):find("is not a multiple of cluster.x", 1, true),
        "a grid of %d blocks is refused before the driver: %s", grid + 1, tostring(err):sub(1, 100))

-- Both reductions by size: where the second launch's cost matters, one launch wins; at sizes
-- bound by memory they meet. The crossover is the largest size still 5% faster in one launch.
if o.sweep then
  local crossover = nil
  S.printf("%12s %12s %12s %8s", "values", "one (ms)", "two (ms)", "one/two")
  for log2 = 10, S.on_cpu and 18 or 28, 2 do
    local size = 1 << log2
    local xs = cuda.device_array(size, "u32")
    fill[{math.min(S.blocks(size, 256), 4096), 256}](xs, size)
    local one, sum_one, two, sum_two = both(xs, size)
    S.check(sum_two == sum_one, "2^%d values: one launch and two give the same sum", log2)
    S.printf("%12d %12.4f %12.4f %8.2f", size, one, two, one / two)
    if one / two <= 0.95 then crossover = log2 end
  end
  S.printf("crossover: one launch is 5%% faster than two up to %s values",
           crossover and string.format("2^%d", crossover) or "no size measured")
end
S.done()
