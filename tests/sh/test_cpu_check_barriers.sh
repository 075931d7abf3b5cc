#!/usr/bin/env bash
# test_cpu_check_barriers.sh -- CUJIT_CPU_CHECK=1 tells barriers apart by the way they are
# reached, not by their line (kernels_src/cujit/cpu_sync.h barrier_site): divergent branches that
# reach two __syncthreads on one line, one macro used twice, one helper function called from two
# places, or one recursive helper at two depths fault the launch ("reached another way"), as
# CUDA calls each of them undefined; before, only two lines were told apart. Kernels that are
# right are not reported and give their results, under every schedule: a helper that syncs in a
# loop called by every thread from one place, a helper called twice in a row, a macro in a loop,
# recursion to one depth, cujit::block_sum, a barrier after a loop long enough to yield its time
# slice. Without the check build barriers are told apart by line only (docs/cpu.md). Needs g++ and
# its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/barriers.lua" <<'EOF'
local cuda = require "cujit"
local preamble = [[
#include <cujit/reduce.h>
#define SYNC __syncthreads()
__device__ void bar() { __syncthreads(); }
__device__ int rec(int d) { if (d == 0) { __syncthreads(); return 1; } return 1 + rec(d - 1); }
__device__ void steps(int *s) { for (int k = 0; k < 4; k++) { s[threadIdx.x] += k; __syncthreads(); } }
]]
local divergent = {
  same_line = "int t = threadIdx.x; if (t & 1) { __syncthreads(); o[t] = 1; } else { __syncthreads(); o[t] = 2; }",
  helper = "int t = threadIdx.x; if (t & 1) { bar(); o[t] = 1; } else { bar(); o[t] = 2; }",
  macro = "int t = threadIdx.x;\nif (t & 1) { SYNC; } else { SYNC; }\no[t] = 4;",
  recursion = "int t = threadIdx.x; o[t] = rec(t & 1);",
  helper_warps = "int t = threadIdx.x; if (t < 32) bar(); else bar(); o[t] = 1;",
}
local right = { -- body, what o[t] must be
  helper_loop = {"__shared__ int s[64]; int t = threadIdx.x; s[t] = t; __syncthreads(); steps(s); o[t] = s[(t + 1) % 64];",
                 function(t) return (t + 1) % 64 + 6 end},
  helper_twice = "__shared__ int s[64]; int t = threadIdx.x; s[t] = t; bar(); int a = s[63 - t]; bar(); s[t] = a; bar(); o[t] = s[(t + 1) % 64];",
  macro_loop = "__shared__ int s[64]; int t = threadIdx.x; s[t] = 0; SYNC; for (int k = 0; k < 3; k++) { if (t == k) s[0] += 10; SYNC; } o[t] = s[0];",
  recursion = "int t = threadIdx.x; o[t] = rec(3) + t;",
  block_sum = "int t = threadIdx.x, v = cujit::block_sum(t), w = cujit::block_sum(2 * t); o[t] = t == 0 ? v + w : t;",
  long_loop = "__shared__ int s[64]; int t = threadIdx.x; int acc = 0; for (int k = 0; k < 500; k++) acc += k & t; s[t] = acc; bar(); o[t] = s[63 - t];",
}
right.helper_twice = {right.helper_twice, function(t) return 63 - (t + 1) % 64 end}
right.macro_loop = {right.macro_loop, function() return 30 end}
right.recursion = {right.recursion, function(t) return 4 + t end}
right.block_sum = {right.block_sum, function(t) return t == 0 and 3 * 2016 or t end}
right.long_loop = {right.long_loop, function(t)
  local acc = 0; for k = 0, 499 do acc = acc + (k & (63 - t)) end; return acc end}
local function names(t) local n = {} for k in pairs(t) do n[#n + 1] = k end table.sort(n) return n end
local o = cuda.zeros(64, "i32")
for _, name in ipairs(names(divergent)) do
  local k = cuda.jit("d_" .. name .. "(int *o)", divergent[name], {preamble = preamble})
  local ok, err = pcall(function() k[{1, 64}](o); cuda.synchronize() end)
  print("divergent", name, ok and "not reported" or err:match("kernel '[^\n]*divergent barriers%)") or err)
  if not ok then cuda.reset(); o = cuda.zeros(64, "i32") end
end
for _, name in ipairs(names(right)) do
  local k = cuda.jit("r_" .. name .. "(int *o)", right[name][1], {preamble = preamble})
  local ok, err = pcall(function() k[{1, 64}](o); cuda.synchronize() end)
  local wrong = 0
  if ok then
    local t = o:totable()
    for i = 0, 63 do if t[i + 1] ~= right[name][2](i) then wrong = wrong + 1 end end
  end
  print("right", name, ok and ("wrong " .. wrong) or err)
  if not ok then cuda.reset(); o = cuda.zeros(64, "i32") end
end
EOF

for schedule in forward reverse random:7; do
  CUJIT_CPU_CHECK=1 CUJIT_CPU_SCHEDULE=$schedule run "$CUJIT" "$TMP/barriers.lua"
  check_rc "checked, $schedule: the script runs" 0
  for name in same_line helper macro recursion helper_warps; do
    check "checked, $schedule: divergent $name is reported" "$out" \
      "^divergent	$name	kernel 'd_$name': block \(0,0,0\) thread \([0-9]+,0,0\): waits at __syncthreads \((line [0-9]+|line [0-9]+ of its preamble)\) while thread \([0-9]+,0,0\) waits at __syncthreads \(line [0-9]+( of its preamble)?\), reached another way"
  done
  for name in helper_loop helper_twice macro_loop recursion block_sum long_loop; do
    check "checked, $schedule: right $name runs and gives its results" "$out" "^right	$name	wrong 0$"
  done
done
# Two lines are told apart without the check build too, and say nothing of another way.
cat >"$TMP/lines.lua" <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("lines(int *o)", "int t = threadIdx.x;\nif (t & 1) { __syncthreads(); }\nelse { __syncthreads(); }\no[t] = 1;")
local o = cuda.zeros(64, "i32")
local ok, err = pcall(function() k[{1, 64}](o); cuda.synchronize() end)
print(ok and "not reported" or err:match("kernel '[^;]*"))
EOF
for check in 0 1; do
  CUJIT_CPU_CHECK=$check run "$CUJIT" "$TMP/lines.lua"
  check "CUJIT_CPU_CHECK=$check: two lines are two barriers" "$out" \
    "^kernel 'lines': block \(0,0,0\) thread \(1,0,0\): waits at __syncthreads \(line 2\) while thread \(0,0,0\) waits at __syncthreads \(line 3\)$"
done
finish
