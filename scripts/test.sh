#!/usr/bin/env bash
# test.sh -- run the whole test suite (after scripts/setup.sh built ./build), then a summary of
# what ran where (on a GPU, on the CPU device, compile-only, with no device), what passed and
# failed, and what was skipped and why, Criterion cases included (scripts/test_summary.lua).
# Without a GPU the GPU tests run on the CPU device; CUJIT_REQUIRE_GPU=1 makes them fail instead. The exit status is ctest's: the summary
# only prints, and its own failure is reported, never counted.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake --build build -j"$(nproc)" || exit
# Criterion prints a line per case at verbosity 1, "[SKIP] suite::case: reason" among them.
export CRITERION_VERBOSITY_LEVEL=${CRITERION_VERBOSITY_LEVEL:-1}
junit="$PWD/build/Testing/junit.xml"
rm -f "$junit"
status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" --output-junit "$junit" \
  --test-output-size-passed 1048576 --test-output-size-failed 1048576 "$@" || status=$?
gpu=$(./build/cujit devices 2>&1 | head -1)
lua=$(command -v lua5.4 || echo ./build/cujit)
"$lua" scripts/test_summary.lua "$junit" "$status" "$gpu" ||
  echo "test.sh: the summary failed (see above); the suite's verdict is ctest's exit status $status"
exit "$status"
