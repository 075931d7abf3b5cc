#!/usr/bin/env bash
# test_cpu_check_uninit.sh -- CUJIT_CPU_CHECK=1 cannot report a read of memory nothing wrote (g++
# has no MemorySanitizer: docs/cpu.md), but makes one show in the results: a new device buffer
# (engine/core/backend/cpu/cpu_alloc.c) and every block's dynamic shared memory (kernels_src/cujit/cpu_exec.h
# set_block) start as all-ones bytes, NaN as float and -1 as integers, not as zeros or as what the
# worker's last block left. Before, fresh buffers read as zeros past AddressSanitizer's 4 KiB
# malloc fill, and a block read the shared memory its predecessor wrote. Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/uninit.lua" <<'EOF'
local cuda = require "cujit"
local n = 100000 -- past AddressSanitizer's own fill of a block's first 4 KiB
local copy = cuda.jit("copy(const float *x, const int *a, float *y, int *b, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { y[i] = x[i] + 1.0f; b[i] = a[i]; }
]])
local x, a = cuda.device_array(n, "f32"), cuda.device_array(n, "i32")
local y, b = cuda.zeros(n, "f32"), cuda.zeros(n, "i32")
copy[{(n + 255) // 256, 256}](x, a, y, b, n)
local yt, bt, nan, minus = y:totable(), b:totable(), 0, 0
for i = 1, n do
  if yt[i] ~= yt[i] then nan = nan + 1 end
  if bt[i] == -1 then minus = minus + 1 end
end
print("unwritten float buffer reads NaN", nan, "of", n, "int buffer reads -1", minus, "of", n)
-- Each block reads its dynamic shared memory before writing it, then writes it.
local dyn = cuda.jit("dyn(int *o)", [[
  extern __shared__ int d[];
  o[blockIdx.x * blockDim.x + threadIdx.x] = d[threadIdx.x];
  d[threadIdx.x] = 7;
]])
local blocks = 64
local o = cuda.zeros(blocks * 32, "i32")
dyn[{blocks, 32, shared = 32 * 4}](o)
local ot, fresh = o:totable(), 0
for i = 1, blocks * 32 do if ot[i] == -1 then fresh = fresh + 1 end end
print("unwritten shared memory reads -1", fresh, "of", blocks * 32)
EOF
run "$CUJIT" "$TMP/uninit.lua"
check_rc "the script runs" 0
check "a new f32 and i32 buffer read NaN and -1 everywhere" "$out" \
  "^unwritten float buffer reads NaN	100000	of	100000	int buffer reads -1	100000	of	100000$"
check "every block's dynamic shared memory reads -1 before the block writes it" "$out" \
  "^unwritten shared memory reads -1	2048	of	2048$"
finish
