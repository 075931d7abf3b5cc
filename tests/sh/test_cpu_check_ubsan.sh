#!/usr/bin/env bash
# test_cpu_check_ubsan.sh -- UBSan's reports under CUJIT_CPU_CHECK=1, through the library's own
# compile flags (engine/core/compile/cxx.c), not the CPU test harness's: each stops the process with a
# non-zero status, right after the report, followed by cujit's line naming the kernel, block,
# thread and line of its body (kernels_src/cujit/cpu_check.h). Before, the flags lacked
# -fno-sanitize-recover=all: the report was printed, the kernel ran on and the script ended with
# status 0. The cases: an index out of bounds of a static __shared__ array (which AddressSanitizer
# does not see: shared memory is thread_local), of a __device__ array, a signed overflow, a shift
# by 32, __builtin_ctz(0). Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
# UBSan's halt_on_error (the sanitizer suite's) would end the process before cujit's line.
export CUJIT_DEVICE=cpu CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/ub.lua" <<'EOF'
local cuda = require "cujit"
local bodies = {
  shared = [[
  __shared__ float s[32];
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  o[threadIdx.x] = s[threadIdx.x % 32] + n;]],
  device = [[
  int i = threadIdx.x;
  table[i] = n;
  o[i] = 1;]],
  overflow = [[
  int i = threadIdx.x;
  int v = i == 20 ? n * 3000000 : i;
  o[i] = v;]],
  shift = [[
  int i = threadIdx.x;
  o[i] = 1 << (n + i - 20);]],
  builtin = [[
  int i = threadIdx.x;
  o[i] = __builtin_ctz((unsigned)(i - 20));]],
}
local which = arg[1]
local k = cuda.jit("ub_" .. which .. "(int *o, int n)", bodies[which],
                   {preamble = "__device__ int table[32];"})
local o = cuda.zeros(64, "i32")
k[{1, 33}](o, which == "overflow" and 1000 or which == "shift" and 32 or 0)
cuda.synchronize()
print("not reached")
EOF

while read -r which line thread text; do
  run "$CUJIT" "$TMP/ub.lua" "$which"
  check "$which: UBSan's report" "$err" "ub_$which:$line:[0-9]+: runtime error: $text"
  check "$which: cujit names the kernel, block, thread and line" "$err" \
    "cujit: the report above is from kernel 'ub_$which': block \(0,0,0\) thread \($thread,0,0\), line $line of its body"
  check_not "$which: the script stops there" "$out" "not reached"
  [ "$rc" -ne 0 ] && ok "$which: exits non-zero ($rc)" || fail "$which: exit status 0"
done <<'EOF'
shared 2 32 index 32 out of bounds for type 'float \[32\]'
device 2 32 index 32 out of bounds for type 'int \[32\]'
overflow 2 20 signed integer overflow: 1000 \* 3000000
shift 2 20 shift exponent 32 is too large
builtin 2 20 passing zero to ctz\(\), which is not a valid argument
EOF
finish
