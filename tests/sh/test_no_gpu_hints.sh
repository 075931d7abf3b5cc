# test_no_gpu_hints.sh -- without a GPU, each action's message says why and gives the way on that
# applies to what was attempted: running (arrays, streams, waits, `cujit devices`, :time) points
# to the CPU device; compiling without an arch points to an explicit arch (and, from Lua, to the
# CPU device too); no message offers an explicit arch where it would not help.
# Run by ctest as: bash test_no_gpu_hints.sh /path/to/cujit. Skips (77) on a machine with a GPU.
set -u
source "$(dirname "$0")/lib.sh"
export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_DEVICE
if "$CUJIT" devices >/dev/null 2>&1; then
  echo "skip: this machine has a GPU; the messages checked here are those given without one"
  exit 77
fi
cd "$TMP" || exit 1
CPU_HINT='CUJIT_DEVICE=cpu.*cuda\.device\("cpu"\)'
ARCH_HINT='explicit arch such as sm_90|--arch'

# --- the command's tools ---------------------------------------------------------------------------
run "$CUJIT" devices
check_rc "cujit devices" 1
check "devices: why" "$err" '^cujit devices: no CUDA (driver|device)'
check "devices: the CPU device" "$(tr '\n' ' ' <<<"$err")" "$CPU_HINT"
check "devices: compiling needs no GPU" "$err" "cujit compile --arch sm_90' needs no GPU"
run env CUJIT_DEVICE=cpu "$CUJIT" devices
check "devices, with the CPU device chosen: says it is in use" "$err" "kernels run on the CPU device, as CUJIT_DEVICE=cpu asks"
check_not "devices, with the CPU device chosen: no advice to choose it" "$err" "without a GPU, kernels run on the CPU device: CUJIT_DEVICE=cpu"
run "$CUJIT" --version
check_not "--version: the driver line offers no arch" "$(grep '^driver' <<<"$out")" 'arch'
printf 'extern "C" __global__ void k(int *x) { x[0] = 1; }\n' >k.cu
run "$CUJIT" compile k.cu
check_rc "compile without --arch" 1
check "compile: pass --arch" "$err" 'pass the target explicitly with --arch'
check_not "compile: no CPU device hint (it writes PTX or CUBIN)" "$err" 'CUJIT_DEVICE|CPU device'

# --- Lua: what runs points to the CPU device, and only there ------------------------------------------
for call in 'cuda.device_array(4)' 'cuda.stream()' 'cuda.synchronize()' 'cuda.event()' \
  'cuda.memory()' 'cuda.zeros(4, "i32")'; do
  run "$CUJIT" -e "local cuda = require 'cujit'; local ok, e = pcall(function() return $call end)
    assert(not ok, 'no error'); io.stderr:write(e)"
  check "$call: why" "$err" 'no CUDA (driver|device)'
  check "$call: the CPU device" "$(tr '\n' ' ' <<<"$err")" "$CPU_HINT"
  check_not "$call: no arch hint" "$err" "$ARCH_HINT"
done
run "$CUJIT" -e "local ok, why = require('cujit').has_gpu(); assert(ok == false); io.stderr:write(why)"
check "has_gpu(): the CPU device" "$(tr '\n' ' ' <<<"$err")" "$CPU_HINT"
check_not "has_gpu(): no arch hint" "$err" "$ARCH_HINT"
run "$CUJIT" -e "local cuda = require 'cujit'
  local ok, e = pcall(cuda.jit, 'k(int *x)', 'x[0] = 1;'); assert(not ok); io.stderr:write(e)"
check "cuda.jit without arch: an explicit arch" "$err" 'no GPU to take the arch from .*pass an explicit arch such as sm_90 to compile without one'
check "cuda.jit without arch: or the CPU device" "$(tr '\n' ' ' <<<"$err")" "$CPU_HINT"

# --- the REPL's :time -------------------------------------------------------------------------------
run "$CUJIT" -i <<<':time on'
check "the REPL's :time on: wall time only, why" "$out" '^\(wall time only, no device to time with events: no CUDA'
check ":time on: the CPU device" "$out" "$CPU_HINT"
check_not ":time on: no arch hint" "$out" "$ARCH_HINT"
run env CUJIT_DEVICE=cpu "$CUJIT" -i <<<$':time on\nx = require("cujit").zeros(4)'
check ":time on the CPU device: its time, so named" "$err" '^time: wall [0-9.]+ ms, CPU device [0-9.]+ ms$'
check_not ":time on the CPU device: not called GPU time" "$err" 'GPU'
finish
