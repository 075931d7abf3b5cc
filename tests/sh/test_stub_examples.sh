# test_stub_examples.sh -- the examples' GPU-only paths up to their first kernel, against the
# stand-in driver (scripts/bench/stub_driver.c, which runs no kernel), where no GPU is needed.
# examples/devices.lua over two pretend GPUs lists each with the stand-in's attributes and passes
# each check made before its probe kernel. An example on a GPU that lacks what it needs, the
# stand-in made a compute capability 8 GPU (CUJIT_STUB_CC=8): examples/tma_copy.lua (the Tensor Memory Accelerator is sm_90's) says why and is skipped
# (exit 77), and under CUJIT_REQUIRE_GPU=1, as the suite runs on the GPU machine, the same skip is
# a failure (exit 1) naming the reason; on a compute capability 9 or 10 GPU it does not skip (it goes
# past the check to the GPU work, which the stand-in cannot run). So a skip on the GPU machine
# can never pass for a success.
# Run by ctest as: bash test_stub_examples.sh /path/to/cujit.
set -u
source "$(dirname "$0")/lib.sh"
need_stand_in
need_nvrtc
examples=$(cd "$(dirname "$0")/../../examples" && pwd)
export CUJIT_CACHE_DIR="$TMP/cache"
unset CUJIT_DEVICE CUJIT_EXAMPLE_COMPILE_ONLY CUJIT_EXAMPLE_CHECKS CUJIT_REQUIRE_GPU
cd "$examples" || exit 1
# devices.lua: the listing of each pretend GPU (CUJIT_STUB_MEMORY sets its memory) and its check,
# then the first kernel, which the stand-in does not run: that check, and only it, fails.
run env CUJIT_STUB_DEVICES=2 CUJIT_STUB_MEMORY=$((3 << 30)) "$CUJIT" devices.lua
check_rc "devices: the probe kernel's check fails on the stand-in" 1
check "devices: runs on GPU 0" "$out" '^runs on: GPU 0 \(stub sm_90'
check "devices: both GPUs listed" "$out" '^ok   the driver lists 2 GPU\(s\)$'
check "devices: GPU 0's attributes" "$out" \
  '^  compute capability 9\.0 \(sm_90\), [0-9]+ multiprocessors, warp 32, 1024 threads/block max$'
check "devices: GPU 0's memory" "$out" '^  memory 3072 MiB free of 3072 MiB'
check "devices: GPU 0's name" "$out" '^GPU 0: stub sm_90'
check "devices: GPU 0's shared memory" "$out" \
  '^  shared memory per block 48 KiB \(227 KiB opt-in\); PCI bus [0-9]+$'
check "devices: GPU 0's memory check" "$out" '^ok   GPU 0: free <= total memory, SMs > 0$'
check "devices: the kernel's check is the one failing" "$err" \
  'devices\.lua:[0-9]+: check failed: GPU 0 runs a kernel'
check_not "devices: no other check failed" "$err" 'check failed: (GPU 0: free|the driver|NVRTC)'
# One pretend GPU: one listed, and it is enough.
run env CUJIT_STUB_DEVICES=1 "$CUJIT" devices.lua
check "devices, one GPU: listed" "$out" '^ok   the driver lists 1 GPU\(s\)$'
check "devices, one GPU: the kernel's check is the one failing" "$err" 'check failed: GPU 0 runs a kernel'

WHY='stub .* has no Tensor Memory Accelerator \(compute capability 9\.0 GPUs have one\)'

run env CUJIT_STUB_CC=8 "$CUJIT" tma_copy.lua
check_rc "sm_80: skipped" 77
check "sm_80: runs on the GPU" "$out" '^runs on: GPU 0 \(stub '
check "sm_80: says why" "$out" "$WHY; skipped$"

run env CUJIT_STUB_CC=8 CUJIT_REQUIRE_GPU=1 "$CUJIT" tma_copy.lua
check_rc "sm_80 under CUJIT_REQUIRE_GPU=1: a failure" 1
check "sm_80 under CUJIT_REQUIRE_GPU=1: says why" "$err" \
  "^FAIL: CUJIT_REQUIRE_GPU=1 but the GPU cannot run this example: $WHY$"
check_not "sm_80 under CUJIT_REQUIRE_GPU=1: not called a skip" "$out" 'skipped'

# Compute capability 9 and 10 (a newer GPU has the TMA too): past the check, into the work the
# stand-in cannot do (it runs no kernel), so neither a skip nor a success.
for cc in 9 10; do
  run env CUJIT_STUB_CC=$cc CUJIT_REQUIRE_GPU=1 "$CUJIT" tma_copy.lua
  check_not "sm_${cc}0: not skipped" "$out$err" 'Tensor Memory Accelerator|skipped'
  if [ "$rc" -eq 77 ] || [ "$rc" -eq 0 ]; then
    fail "sm_${cc}0 on the stand-in: exit $rc"
  else
    ok "sm_${cc}0: exit $rc (the stand-in runs no kernel)"
  fi
done
finish
