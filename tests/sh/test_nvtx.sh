#!/usr/bin/env bash
# test_nvtx.sh -- NVTX ranges (engine/core/base/trace.c), seen by a profiler: a stand-in NVTX tool
# (tests/c/nvtx_recording.c, an injection library loaded through NVTX_INJECTION64_PATH as
# Nsight's is) logs every range and mark cujit gives it. A kernel defined twice and launched four
# times shows, in the domain "cujit": the program's range with its cache lookup and its compile
# (g++ on the CPU device, NVRTC against the stand-in driver), the second definition's memory hit, a
# later process's disk hit, the module's load, and each launch as a range named by the kernel's
# name; pushes and pops pair up. CUJIT_NVTX=0 or no silences it (NVTX is never called: the tool is
# not even loaded); a value not understood is a warning and the ranges stay; without a tool
# nothing changes; a tool that registers no strings still sees the launches by name. Also run on
# a GPU when there is one (CUJIT_REQUIRE_GPU=1: no GPU is a failure).
set -u
source "$(dirname "$0")/lib.sh"
BIN=${CUJIT_BINARY_DIR:?run through ctest}
TOOL="$BIN/tests/libnvtx_recording.so"
[ -e "$TOOL" ] || { echo "FAIL: the stand-in NVTX tool is not built ($TOOL)" >&2; exit 1; }
cd "$TMP" || exit 1
unset CUJIT_NVTX NVTX_INJECTION64_PATH CUJIT_TEST_NVTX_NO_REGISTER # the caller's, if any
cat >k.lua <<'LUA'
local cuda = require "cujit"
local src = "int i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) y[i] = a * x[i] + y[i];"
local k = cuda.jit("nvtx_saxpy(float a, const float *x, float *y, int n)", src)
local again = cuda.jit("nvtx_saxpy(float a, const float *x, float *y, int n)", src) -- the memo
local x, y = cuda.to_device({1, 2, 3}, "f32"), cuda.to_device({1, 1, 1}, "f32")
for _ = 1, 3 do k[{1, 32}](2.0, x, y, 3) end
again[{1, 32}](1.0, x, y, 3)
print(table.concat(y:copy_to_host(), " "))
LUA
RESULT="8.0 15.0 22.0"

# traced NAME [VAR=VALUE...]: runs k.lua with the tool and the variables given; $log holds what
# the tool recorded ("" when it was never loaded).
traced() {
  local name=$1
  shift
  rm -f log
  run env NVTX_INJECTION64_PATH="$TOOL" CUJIT_TEST_NVTX_LOG="$TMP/log" "$@" "$CUJIT" k.lua
  log=$(cat log 2>/dev/null)
  [ "$rc" = 0 ] || fail "$name: exit $rc: $err"
}
# balanced NAME: every pop ends a push of the same thread, none left open.
balanced() {
  if awk '/^push /{d++} /^pop /{if (--d < 0) bad=1} END{exit bad || d != 0}' <<<"$log"; then
    ok "$1: pushes and pops pair up"
  else
    fail "$1: pushes and pops do not pair up: $log"
  fi
}
# inside NAME OUTER INNER: a push or mark matching INNER comes while a push matching OUTER is open.
inside() {
  if awk -v o="$2" -v i="$3" '/^push /{d++; if ($0 ~ o) at = d} /^pop /{if (d-- == at) at = 0}
        $0 ~ i && at && !/^pop/ && !($0 ~ o) {found = 1} END{exit !found}' <<<"$log"; then
    ok "$1"
  else
    fail "$1: no /$3/ inside /$2/ in: $log"
  fi
}
count() { grep -cx -- "$1" <<<"$log"; }

# --- built without nvtx3 (CMake -DCUJIT_NVTX=OFF, or a toolkit without it): no ranges at all -------
echo "runs on: CPU device"
export CUJIT_CACHE_DIR="$TMP/cache-cpu"
if ! nm "$CUJIT" 2>/dev/null | grep -q 'nvtxGlobals_v3'; then
  echo "note: $CUJIT is built without NVTX (nvtx3 not found, or -DCUJIT_NVTX=OFF)"
  traced "built without NVTX" CUJIT_DEVICE=cpu
  same "built without NVTX: the kernel ran" "$out" "$RESULT"
  [ -e log ] && fail "built without NVTX, yet NVTX was called: $log" || ok "built without NVTX: no NVTX call"
  traced "built without NVTX, CUJIT_NVTX=maybe" CUJIT_DEVICE=cpu CUJIT_NVTX=maybe
  check "built without NVTX: CUJIT_NVTX=maybe is still refused, saying so" "$err" \
    "^cujit: warning: CUJIT_NVTX='maybe' is not understood: .*; the default \(on\) is used, and this build has no NVTX ranges$"
  finish
fi

traced "cold, CPU device" CUJIT_DEVICE=cpu
same "cold: the kernel ran" "$out" "$RESULT"
same "cold: the tool was loaded, then the domain made" "$(head -2 <<<"$log" | tr '\n' ' ')" \
  "init domain cujit "
balanced "cold"
inside "cold: the compile is inside the program's range" '^push cujit cujit: program nvtx_saxpy$' \
  '^push cujit cujit: compile nvtx_saxpy \(C\+\+ compiler, cpu\)$'
inside "cold: the cache lookup is inside the program's range" \
  '^push cujit cujit: program nvtx_saxpy$' '^push cujit cujit: cache lookup$'
inside "cold: the second definition is a memory hit" '^push cujit cujit: program nvtx_saxpy$' \
  '^mark cujit cujit: cache hit \(memory\)$'
same "cold: one compile" "$(count 'push cujit cujit: compile nvtx_saxpy (C++ compiler, cpu)')" 1
same "cold: no disk hit" "$(( $(count 'mark cujit cujit: cache hit (disk)') + $(count 'mark cujit cujit: cache hit (disk, direct)') ))" 0
same "cold: one load" "$(count 'push cujit cujit: load nvtx_saxpy')" 1
same "cold: four launches, each a range named by the kernel" "$(count 'push cujit nvtx_saxpy')" 4
check_not "cold: no warning" "$err" "warning"

traced "warm, CPU device" CUJIT_DEVICE=cpu
same "warm: the kernel ran" "$out" "$RESULT"
balanced "warm"
inside "warm: a new process finds it on disk" '^push cujit cujit: cache lookup$' \
  '^mark cujit cujit: cache hit \(disk(, direct)?\)$'
same "warm: no compile" "$(grep -c 'cujit: compile' <<<"$log")" 0
same "warm: four launches" "$(count 'push cujit nvtx_saxpy')" 4

for off in 0 no; do
  traced "CUJIT_NVTX=$off" CUJIT_DEVICE=cpu CUJIT_NVTX=$off
  same "CUJIT_NVTX=$off: the kernel ran" "$out" "$RESULT"
  if [ -e log ]; then fail "CUJIT_NVTX=$off: NVTX was called (the tool wrote: $log)"; else
    ok "CUJIT_NVTX=$off: NVTX never called, the tool never loaded"; fi
done
traced "CUJIT_NVTX=1" CUJIT_DEVICE=cpu CUJIT_NVTX=1
same "CUJIT_NVTX=1: four launches" "$(count 'push cujit nvtx_saxpy')" 4

traced "CUJIT_NVTX=maybe" CUJIT_DEVICE=cpu CUJIT_NVTX=maybe
same "CUJIT_NVTX=maybe: the kernel ran" "$out" "$RESULT"
check "CUJIT_NVTX=maybe: one warning naming the variable, the value and what it takes" "$err" \
  "^cujit: warning: CUJIT_NVTX='maybe' is not understood: it takes 1, on, yes or true \(on\), 0, off, no or false \(off\), or unset; NVTX ranges are on \(the default\)$"
same "CUJIT_NVTX=maybe: the ranges stay" "$(count 'push cujit nvtx_saxpy')" 4

traced "a tool without registered strings" CUJIT_DEVICE=cpu CUJIT_TEST_NVTX_NO_REGISTER=1
same "no registered strings: the launches still by name" "$(count 'push cujit nvtx_saxpy')" 4
balanced "no registered strings"

run env CUJIT_DEVICE=cpu "$CUJIT" k.lua
same "no tool: the kernel ran" "$out" "$RESULT"
check_not "no tool: nothing said" "$err" "."

# --- the CUDA backend, against the stand-in driver (scripts/bench/stub_driver.c) ------------------
stub="$BIN/scripts/bench/stubcuda"
if [ ! -e "$stub/libcuda.so.1" ]; then
  echo "note: the stand-in driver is not built ($stub): its part is not run"
else
  export CUJIT_CACHE_DIR="$TMP/cache-stub"
  traced "stand-in driver" env -u CUJIT_DEVICE LD_LIBRARY_PATH="$stub:${LD_LIBRARY_PATH:-}"
  balanced "stand-in driver"
  inside "stand-in driver: NVRTC's compile inside the program's range" \
    '^push cujit cujit: program nvtx_saxpy$' '^push cujit cujit: compile nvtx_saxpy \(NVRTC, sm_90\)$'
  same "stand-in driver: one module load" "$(count 'push cujit cujit: load nvtx_saxpy')" 1
  same "stand-in driver: four launches" "$(count 'push cujit nvtx_saxpy')" 4
fi

# --- a GPU ----------------------------------------------------------------------------------------
run env -u CUJIT_DEVICE "$CUJIT" -e 'local c = require "cujit"; print(c.has_gpu())'
if [ "$out" = true ]; then
  echo "runs on: GPU 0"
  export CUJIT_CACHE_DIR="$TMP/cache-gpu"
  traced "GPU" env -u CUJIT_DEVICE
  same "GPU: the kernel ran" "$out" "$RESULT"
  balanced "GPU"
  inside "GPU: NVRTC's compile inside the program's range" \
    '^push cujit cujit: program nvtx_saxpy$' '^push cujit cujit: compile nvtx_saxpy \(NVRTC, sm_'
  same "GPU: one module load" "$(count 'push cujit cujit: load nvtx_saxpy')" 1
  same "GPU: four launches" "$(count 'push cujit nvtx_saxpy')" 4
elif [ "${CUJIT_REQUIRE_GPU:-}" = 1 ]; then
  fail "CUJIT_REQUIRE_GPU=1 but no GPU ($out $err)"
else
  echo "note: no GPU here: the GPU part is not run"
fi

# --- built without nvtx3 (CMake -DCUJIT_NVTX=OFF, or a toolkit without it) -------------------------
if cc -std=c11 -Wall -Wextra -Wpedantic -Werror -DCUJIT_HAVE_NVTX=0 -D_POSIX_C_SOURCE=200809L \
  -I"$CUJIT_SOURCE_DIR/include" -I"$CUJIT_SOURCE_DIR/engine/core" -fsyntax-only \
  -isystem "${CUDA_HOME:-/usr/local/cuda}/include" "$CUJIT_SOURCE_DIR/engine/core/base/trace.c" 2>"$TMP/err"; then
  ok "trace.c builds without nvtx3"
else
  fail "trace.c does not build without nvtx3: $(cat "$TMP/err")"
fi
finish
