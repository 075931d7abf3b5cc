#!/usr/bin/env bash
# test_cpu_check_stack.sh -- under CUJIT_CPU_CHECK=1 a thread that overflows its stack is the one
# named, and no other thread's locals are touched (kernels_src/cujit/cpu_fiber.h own_guard): every
# stack has a guard page of its own and large frames are probed page by page
# (-fstack-clash-protection, engine/core/compile/cxx.c), so the overflowing thread faults in its own guard
# page, whose range the fault names, before it writes anywhere else, whether its frame is written
# densely or sparsely (one byte every 4093 used to jump over the canary into other threads' stacks)
# and whether it runs as a fiber (after a barrier) or in the runner's loop. A frame that fits
# runs, probes and all, and the device works again after cuda.reset(). Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
export CUJIT_DEVICE=cpu CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/stack.lua" <<'EOF'
local cuda = require "cujit"
local preamble = [[
template <int N> __device__ __noinline__ int frame(int bytes, int step) {
  volatile char pad[N];
  for (int i = N - bytes; i < N; i += step) pad[i] = 0x55;
  return pad[N - bytes];
}
__device__ int big(int bytes, int step) {
  return bytes > 400000 ? frame<1048576>(bytes, step) : frame<400000>(bytes, step);
}]]
-- Each thread fills locals with its id; thread 5 calls big(), writing `bytes` of a 1 MiB frame, or
-- of a 400000-byte one (the check build's stacks are 512 KiB); every thread then counts its locals
-- that changed.
local bodies = {
  fiber = [[
  volatile int keep[512];
  for (int j = 0; j < 512; j++) keep[j] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 5) o[100] = big(bytes, step);
  __syncthreads();
  int bad = 0;
  for (int j = 0; j < 512; j++) bad += keep[j] != (int)threadIdx.x;
  o[threadIdx.x] = bad;]],
  runner = [[
  volatile int keep[512];
  for (int j = 0; j < 512; j++) keep[j] = threadIdx.x;
  if (threadIdx.x == 5) o[100] = big(bytes, step);
  int bad = 0;
  for (int j = 0; j < 512; j++) bad += keep[j] != (int)threadIdx.x;
  o[threadIdx.x] = bad;]],
}
local kernels = {}
for name, body in pairs(bodies) do
  kernels[name] = cuda.jit("st_" .. name .. "(int *o, int bytes, int step)", body, {preamble = preamble})
end
local function run(name, bytes, step)
  local o = cuda.zeros(128, "i32")
  local ok, err = pcall(function() kernels[name][{1, 64}](o, bytes, step); cuda.synchronize() end)
  if not ok then cuda.reset() return err:match("kernel '[^\n]*") or err end
  local t, bad = o:totable(), 0
  for i = 1, 64 do bad = bad + (t[i] ~= 0 and 1 or 0) end
  return "ran, threads with changed locals " .. bad .. ", big " .. t[101]
end
for _, name in ipairs {"fiber", "runner"} do
  for _, c in ipairs {{1048576, 4093}, {1048576, 257}, {600000, 1}, {400000, 4093}} do
    print(name, c[1], c[2], run(name, c[1], c[2]))
  end
end
EOF
run "$CUJIT" "$TMP/stack.lua"
check_rc "the script runs" 0
for name in fiber runner; do
  for c in "1048576 4093" "1048576 257" "600000 1"; do
    set -- $c
    line=$(grep -P "^$name\t$1\t$2\t" <<<"$out")
    what="$name, $1 bytes every $2"
    check "$what: thread (5,0,0) crashes in its guard page" "$line" \
      "kernel 'st_$name' crashed on the CPU device in block \(0,0,0\) thread \(5,0,0\) \(an address in 0x[0-9a-f]+-0x[0-9a-f]+ is its stack overflowing\) with SIGSEGV"
    lo=$(sed -n 's/.*an address in 0x\([0-9a-f]*\)-0x\([0-9a-f]*\) is.*/\1/p' <<<"$line")
    hi=$(sed -n 's/.*an address in 0x\([0-9a-f]*\)-0x\([0-9a-f]*\) is.*/\2/p' <<<"$line")
    at=$(sed -n 's/.*(address 0x\([0-9a-f]*\)).*/\1/p' <<<"$line")
    if [ -n "$at" ] && [ -n "$lo" ] && ((16#$at >= 16#$lo && 16#$at <= 16#$hi)); then
      ok "$what: the fault's address is in that guard page"
    else
      fail "$what: address [$at] not in [$lo, $hi]: $line"
    fi
    check "$what: the message says what it is" "$line" "under CUJIT_CPU_CHECK=1 that is a stack overflow"
  done
  check "$name: a 400000-byte frame fits, no thread's locals change" "$out" \
    "^$name	400000	4093	ran, threads with changed locals 0, big 85$"
done
# Without the check build the canary at the bottom of each stack is all there is: a frame that
# jumps over its own canary can hit the next stack's, whose thread is then named; the message says
# that it may be another thread's overflow, and how to find which (before, it named the victim
# alone).
CUJIT_CPU_CHECK=0 run "$CUJIT" "$TMP/stack.lua"
check_rc "without the check build, the script runs" 0
check "a thread named for a canary hit says it may be another's overflow" "$out" \
  "its stack overflowed: more than 128 KiB of local variables and calls \(each CUDA thread's stack on the CPU device\), or another thread's stack overflowed into it; CUJIT_CPU_CHECK=1 names the thread that overflowed"
finish
