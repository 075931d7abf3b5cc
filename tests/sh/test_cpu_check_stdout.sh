#!/usr/bin/env bash
# test_cpu_check_stdout.sh -- when a CUJIT_CPU_CHECK=1 report ends the process, what the script
# and its kernels printed before it still reaches stdout, also when stdout is a file or a pipe
# (fully buffered): the check build flushes stdout before the sanitizer's _exit
# (kernels_src/cujit/cpu_check.h). Before, a kernel's printf and the script's own print were lost
# with the buffer. Both ends: an AddressSanitizer report and a UBSan one. Needs g++ and its libasan.
. "$(dirname "$0")/lib.sh"
command -v g++ >/dev/null || { echo "skip: g++ is needed (the CPU device's compiler)"; exit 77; }
# UBSan's halt_on_error (the sanitizer suite's) would end the process before cujit's line.
export CUJIT_DEVICE=cpu CUJIT_CPU_CHECK=1 UBSAN_OPTIONS=print_stacktrace=1 CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_CPU_CHECK_RESTARTED

cat >"$TMP/printed.lua" <<'EOF'
local cuda = require "cujit"
print("the script before the launch")
local k = cuda.jit("printed(int *y, int n, int ub)", [[
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 3) printf("kernel thread %d\n", i);
  if (ub && i == 40) y[0] = n * 3000000;
  if (!ub && i == n) y[i] = 1;
]])
local y = cuda.zeros(100, "i32")
k[{1, 128}](y, arg[1] == "ubsan" and 1000 or 100, arg[1] == "ubsan" and 1 or 0)
cuda.synchronize()
print("not reached")
EOF
for which in asan ubsan; do
  "$CUJIT" "$TMP/printed.lua" $which >"$TMP/out.txt" 2>"$TMP/err.txt"
  rc=$? out=$(cat "$TMP/out.txt") err=$(cat "$TMP/err.txt")
  [ "$rc" -ne 0 ] && ok "$which: exits non-zero ($rc)" || fail "$which: exit status 0"
  check "$which: the report is there" "$err" "the report above is from kernel 'printed'"
  check "$which: the script's print before the launch reached the file" "$out" \
    "^the script before the launch$"
  for t in 0 1 2; do
    check "$which: thread $t's printf reached the file" "$out" "^kernel thread $t$"
  done
  check_not "$which: nothing after the report" "$out" "not reached"
done
finish
