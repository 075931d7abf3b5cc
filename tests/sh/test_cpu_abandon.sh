#!/usr/bin/env bash
# test_cpu_abandon.sh -- a CPU-device kernel that never ends does not keep the process alive
# (shared/repro/04): the script ends, cujit_close gives the kernel its 2 s, then abandons it with
# a warning and the command exits 0, also with SIGINT ignored (a background job, CI) and with
# work queued behind the kernel; cuda.reset() abandons such a kernel at once and the device then
# runs new kernels correctly. Needs g++ (the CPU device's compiler).
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu CUJIT_CACHE_DIR="$TMP/cache"

cat >"$TMP/never.lua" <<'EOF2'
local cuda = require "cujit"
local k = cuda.jit("spin(int *flag)", [[ while (((volatile int *)flag)[0] == 0) { } ]])
local flag = cuda.zeros(1, "i32")
k[{1, 1}](flag)
if arg[1] == "queued" then
  k[{4, 64}](flag) -- dropped with it
  local more = cuda.zeros(1000, "f32")
end
print("launched; the script ends now")
EOF2
# 60 s: far above the 2 s the close waits, so only a hang reaches it (timeout's status 124).
run timeout 60 "$CUJIT" "$TMP/never.lua" </dev/null
check_rc "the process ends after its script, a kernel still running" 0
check "the script ran" "$out" "^launched; the script ends now$"
check "the warning names the kernel and what was done" "$err" \
  "cujit: warning: cujit_close: the CPU device was still running kernel 'spin' 2 s after the close; abandoned it and the work queued after it"
run timeout 60 "$CUJIT" "$TMP/never.lua" queued </dev/null
check_rc "with work queued behind the kernel" 0
check "one warning" "$(grep -c abandoned <<<"$err")" "^1$"
run bash -c "trap '' INT; exec timeout 60 \"\$0\" \"\$1\" </dev/null" "$CUJIT" "$TMP/never.lua"
check_rc "SIGINT ignored, as in a background job" 0

cat >"$TMP/reset.lua" <<'EOF2'
local cuda = require "cujit"
local spin = cuda.jit("spin(int *flag)", [[ while (((volatile int *)flag)[0] == 0) { } ]])
local flag = cuda.zeros(1, "i32")
spin[{2, 32}](flag)
cuda.reset() -- abandons it, as a GPU reset would
local k = cuda.jit("twice(const float *x, float *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i];
]])
local n = 1000
local x = cuda.to_device((function() local t = {} for i = 1, n do t[i] = i end return t end)(), "f32")
local y = cuda.zeros(n, "f32")
k[{(n + 127) // 128, 128}](x, y, n)
local got = y:totable()
for i = 1, n do assert(got[i] == 2 * i, "y[" .. i .. "] = " .. tostring(got[i])) end

local flag2 = cuda.to_device({1}, "i32")
spin[{1, 1}](flag2)
cuda.synchronize()
print("after the reset: " .. n .. " values right")
EOF2
run timeout 60 "$CUJIT" "$TMP/reset.lua" </dev/null
check_rc "cuda.reset() abandons the kernel, and the device works after it" 0
check "the new kernel's results" "$out" "^after the reset: 1000 values right$"
check_not "nothing left to abandon at the close" "$err" "abandoned"
finish
