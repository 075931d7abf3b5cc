#!/usr/bin/env bash
# test_cli_cpu_check.sh -- `cujit script.lua` under CUJIT_CPU_CHECK=1 (engine/cli/main.c): the
# command restarts itself with AddressSanitizer's runtime preloaded, so a checked kernel loads
# from a script: an out-of-bounds store is reported with the kernel, the line of its body, the
# block and the thread, and the command exits non-zero; a clean script runs to its end, with
# LD_PRELOAD put back as it was for what it starts. Already restarted (the loop guard), the
# command does not restart again: the checked kernel's load says what to do. Which values of
# CUJIT_CPU_CHECK restart (1, on, yes, true in any case) and which do not. A compiler without
# the runtime is named. Needs g++ (the CPU device's compiler) and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
# UBSan's halt_on_error (the sanitizer suite's) would end the process before cujit's line.
export CUJIT_DEVICE=cpu UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED
# The sanitizer build (scripts/sanitize.sh) has the runtime from the start: it never restarts.
asan_build=$(nm -D "$CUJIT" 2>/dev/null | grep -w __asan_init)

cat >"$TMP/oob.lua" <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("oob(int *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = 1;
]])
local y = cuda.zeros(1024, "i32") -- 4096 bytes: y[1024] is the first byte past the buffer
k[{5, 256}](y, 1024)
cuda.synchronize()
print("not reached")
EOF
cat >"$TMP/clean.lua" <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("inc(int *y, int n)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += i;
]])
local y = cuda.zeros(1000, "i32")
k[{4, 256}](y, 1000)
local t = y:totable()
print("sum", t[1] + t[2] + t[1000], "preload", tostring(os.getenv("LD_PRELOAD")),
      "restarted", tostring(os.getenv("CUJIT_CPU_CHECK_RESTARTED")))
EOF

CUJIT_CPU_CHECK=1 run "$CUJIT" "$TMP/oob.lua"
check "the sanitizer names the overflow" "$err" "AddressSanitizer: heap-buffer-overflow"
# (an extern "C" kernel is __cj_k_<name> in the CPU device's object: cpu_source.c)
check "the report's first frame is the kernel's body, line 2" "$err" "in __cj_k_oob .*oob:2"
check "cujit names the kernel, block, thread and line" "$err" \
  "cujit: the report above is from kernel 'oob': block \(4,0,0\) thread \(0,0,0\), line 2 of its body"
check_not "the script stops there" "$out" "not reached"
[ "$rc" -ne 0 ] && ok "exits non-zero ($rc)" || fail "exit status 0 after an out-of-bounds store"

unset LD_PRELOAD
CUJIT_CPU_CHECK=1 run "$CUJIT" "$TMP/clean.lua"
check_rc "a clean checked script" 0
check "its kernel ran" "$out" "^sum	1000	"
check "LD_PRELOAD is put back (unset) for what the script starts" "$out" "preload	nil	"
check "the restart's mark is gone" "$out" "restarted	nil$"

if [ -n "$asan_build" ]; then
  ok "the sanitizer build has the runtime from the start: no restart to guard or to fail"
  finish
fi
# A C++ exception in a checked kernel is the kernel's fault, not the sanitizer's CHECK failure on
# __cxa_throw (the restart preloads the C++ library after the runtime).
cat >"$TMP/throw.lua" <<'EOF'
local cuda = require "cujit"
local k = cuda.jit("thr(float *o, int n)", [[ std::vector<float> v(4); o[0] = v.at(n); ]],
                   {preamble = "#include <vector>"})
local o = cuda.zeros(1, "f32")
print(pcall(function() k[{1, 1}](o, 10); cuda.synchronize() end))
print("after pcall")
EOF
CUJIT_CPU_CHECK=1 run "$CUJIT" "$TMP/throw.lua"
check_rc "a checked kernel that throws" 0
check "its exception is a device fault" "$out" \
  "^false	.*kernel 'thr'.*threw a C\+\+ exception: vector::_M_range_check"
check "the script goes on" "$out" "^after pcall$"

CUJIT_CPU_CHECK=1 CUJIT_CPU_CHECK_RESTARTED= run "$CUJIT" "$TMP/oob.lua"
check "already restarted: no second restart, the load says what to do" "$err" \
  "LD_PRELOAD=\\$\(g\+\+ -print-file-name=libasan.so\)"
[ "$rc" -ne 0 ] && ok "and exits non-zero ($rc)" || fail "exit status 0 without the runtime"

# Which values restart (the library's reading of a switch: 1, on, yes, true in any case), seen by
# the restart's mark on ASAN_OPTIONS; any other value does not (the first CPU compile refuses it).
if [ -z "${ASAN_OPTIONS:-}" ]; then
  for value in 1 on ON Yes true TRUE 0 off no maybe ""; do
    CUJIT_CPU_CHECK=$value run "$CUJIT" -e 'print(os.getenv("ASAN_OPTIONS"))'
    case $value in 1 | on | ON | Yes | true | TRUE) want=detect_leaks=0 ;; *) want=nil ;; esac
    same "CUJIT_CPU_CHECK='$value': $([ $want = nil ] && echo "no restart" || echo "restarted")" "$out" "$want"
  done
fi

CUJIT_CPU_CHECK=1 CUJIT_CXX=false run "$CUJIT" -e 'print("ran")'
check "a compiler without the runtime is named" "$err" \
  "the C\+\+ compiler \(false\) has no AddressSanitizer runtime"
check "and the command runs on" "$out" "^ran$"
finish
