-- tma_copy.lua -- a matrix copied through shared memory by the Tensor Memory Accelerator (sm_90,
-- issue 26): tensor maps over the source and the destination (a:tensor_map), and one thread per
-- block that keeps four 32 x 64 tiles in flight: a TMA load into shared memory completes on a
-- barrier, a TMA store writes the tile out, and a stage is loaded again once its store has read
-- it. Checked element for element against the source (a mismatch count on the device and a
-- sample on the host); its bandwidth is printed beside the device-to-device copy's (bytes read
-- plus written, both timed with events).
--
-- The CPU device has no TMA, nor a GPU of compute capability below 9.0: there the example says so
-- and is skipped (exit 77; on a GPU under CUJIT_REQUIRE_GPU=1, a failure).
local cuda = require "cujit"
package.path = (arg[0]:match("^(.*)/") or ".") .. "/?.lua;" .. package.path -- find example_support
local S = require "example_support"

local STAGES, BOX_ROWS, BOX_COLS = 4, 32, 64

local prog = cuda.source(string.format([[
#include <cujit/tma.h>
#define STAGES %d
#define BOX_ROWS %d
#define BOX_COLS %d
extern "C" __global__ void tma_copy(const __grid_constant__ CUtensorMap src,
                                    const __grid_constant__ CUtensorMap dst, int tiles_x,
                                    int tiles) {
  __shared__ alignas(128) float buf[STAGES][BOX_ROWS][BOX_COLS];
  __shared__ unsigned long long bar[STAGES];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < STAGES; s++) cujit::mbarrier_init(&bar[s], 1);
  cujit::fence_barrier_init();
  int first = blockIdx.x, step = gridDim.x;
  int count = first < tiles ? (tiles - 1 - first) / step + 1 : 0;
  for (int k = 0; k < STAGES && k < count; k++) { /* the first tiles, one a stage */
    int t = first + k * step;
    cujit::mbarrier_expect_tx(&bar[k], sizeof buf[0]);
    cujit::tma_load_2d(buf[k], &src, t %% tiles_x * BOX_COLS, t / tiles_x * BOX_ROWS, &bar[k]);
  }
  for (int k = 0; k < count; k++) {
    int s = k %% STAGES, t = first + k * step;
    cujit::mbarrier_wait(&bar[s], (k / STAGES) & 1); /* the j-th use of a stage: parity j */
    cujit::tma_store_2d(&dst, t %% tiles_x * BOX_COLS, t / tiles_x * BOX_ROWS, buf[s]);
    cujit::bulk_commit();
    int r = k - 1 + STAGES; /* the next tile for the stage of tile k - 1 */
    if (k >= 1 && r < count) {
      cujit::bulk_wait_read<1>(); /* every store but tile k's has read its stage */
      int rs = r %% STAGES, rt = first + r * step;
      cujit::mbarrier_expect_tx(&bar[rs], sizeof buf[0]);
      cujit::tma_load_2d(buf[rs], &src, rt %% tiles_x * BOX_COLS, rt / tiles_x * BOX_ROWS, &bar[rs]);
    }
  }
  cujit::bulk_wait<0>();
}
extern "C" __global__ void mismatches(const float *a, const float *b, unsigned long long n,
                                      unsigned long long *count) {
  unsigned long long bad = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    bad += __float_as_uint(a[i]) != __float_as_uint(b[i]);
  if (bad) atomicAdd(count, bad);
}
]], STAGES, BOX_ROWS, BOX_COLS), S.options({name = "tma_copy.cu", arch = "sm_90"}))
S.host_checks_done()

local dev = cuda.device()
if S.on_cpu or dev.cc_major < 9 then
  S.skip_unsupported(string.format("%s has no Tensor Memory Accelerator (compute capability 9.0 "
                                   .. "GPUs have one)", dev.name))
end

local rows, cols = 1 << 13, 1 << 13 -- 256 MiB of f32
local n = rows * cols
local a = cuda.device_array({rows, cols}, "f32")
cuda.random.uniform(a, 7)
local b = cuda.device_array({rows, cols}, "f32")
b:fill(0)
local ma = a:tensor_map{box = {BOX_ROWS, BOX_COLS}}
local mb = b:tensor_map{box = {BOX_ROWS, BOX_COLS}}
local tiles_x, tiles = cols // BOX_COLS, (rows // BOX_ROWS) * (cols // BOX_COLS)
local grid = dev.multiprocessors * 6
local copy = prog:kernel("tma_copy")[{grid, 32}]
local reps = 20
local ms_tma = S.gpu_ms(function() copy(ma, mb, tiles_x, tiles) end, reps, nil, true)

local count = cuda.device_array(1, "u64")
count:fill(0)
prog:kernel("mismatches")[{dev.multiprocessors * 8, 256}](a, b, n, count)
S.check(count:copy_to_host()[1] == 0, "the TMA copy equals the source: 0 of %d elements differ", n)
local ha, hb = a:copy_to_host(), b:copy_to_host()
local sample_ok = true
for _ = 1, 10000 do
  local r, c = math.random(rows), math.random(cols)
  if ha:get(r, c) ~= hb:get(r, c) then sample_ok = false end
end
S.check(sample_ok, "10000 random elements read back on the host match")

local c2 = cuda.device_array({rows, cols}, "f32")
local ms_copy = S.gpu_ms(function() c2:copy_from(a) end, reps, nil, true)
local gbs = function(ms) return 2 * n * 4 / (ms * 1e-3) / 1e9 end
S.printf("TMA copy %.3f ms, %.0f GB/s; device-to-device copy %.3f ms, %.0f GB/s (%.0f %%)",
         ms_tma, gbs(ms_tma), ms_copy, gbs(ms_copy), 100 * ms_copy / ms_tma)
S.done()
